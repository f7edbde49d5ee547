"""cap_tools in a real OpenAI Agents run, driven by a Model of the test's own, tracing off."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

pytest.importorskip("agents", reason="the OpenAI Agents adapter's tests need openai-agents")

from agents import Agent, Runner, Usage, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from pydantic import BaseModel
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

import tool_output_cap as toc
from conftest import note_of
from tool_output_cap.openai_agents import cap_tools

set_tracing_disabled(True)


class GlobThenAnswer(Model):
    """Calls `glob` once, then answers; keeps the function call outputs it was given."""

    def __init__(self):
        self.outputs = []

    async def get_response(self, system_instructions, input, *args, **kwargs):
        outputs = [
            item["output"]
            for item in (input if isinstance(input, list) else [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        if not outputs:
            call = ResponseFunctionToolCall(
                type="function_call", name="glob", call_id="call_1", arguments=json.dumps({"pattern": "*"})
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        self.outputs.extend(outputs)
        text = ResponseOutputText(type="output_text", text="There are many files.", annotations=[])
        message = ResponseOutputMessage(
            id="msg_1", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("these tests do not stream")


def run(tools, result):
    model = GlobThenAnswer()
    agent = Agent(name="files", model=model, tools=tools)
    answer = asyncio.run(Runner.run(agent, "list every file"))
    assert answer.final_output == "There are many files."
    [output] = model.outputs
    return output


def glob_returning(result):
    @function_tool
    def glob(pattern: str):
        """Lists the files matching `pattern`."""
        return result

    return glob


def test_the_function_call_output_the_model_got_is_capped(listing):
    limits = toc.Limits(per_tool={"glob": 2000})
    output = run(cap_tools([glob_returning(listing)], limits), listing)
    assert toc.count(output) <= 2000
    assert note_of(output) == toc.count(listing) - toc.cap(listing, 2000).truncation.kept_tokens
    assert listing.startswith(output[: output.rindex("\n")])


def test_without_cap_tools_the_output_is_whole(listing):
    assert run([glob_returning(listing)], listing) == listing


def test_a_value_is_capped_to_json_of_the_same_shape(listing):
    files = [{"path": path, "size": len(path)} for path in listing.splitlines()]
    output = run(cap_tools([glob_returning(files)], toc.Limits(default_max_tokens=300)), files)
    assert toc.count(output) <= 300
    kept = json.loads(output)
    assert 0 < len(kept) < len(files)
    assert kept[:-1] == files[: len(kept) - 1]
    assert kept[-1]["size"] == files[len(kept) - 1]["size"]
    note_of(kept[-1]["path"])


def test_an_output_within_its_limit_is_unchanged():
    limits = toc.Limits()
    assert run(cap_tools([glob_returning("src/lib.rs")], limits), None) == "src/lib.rs"


class Listing(BaseModel):
    root: str
    files: list[str]


def test_a_tool_with_an_output_schema_gets_a_capped_value_that_fits_the_schema(listing):
    files = listing.splitlines()

    @function_tool(output_type=Listing)
    def glob(pattern: str) -> Listing:
        """Lists the files matching `pattern`."""
        return Listing(root="/usr", files=files)

    assert glob.output_json_schema is not None
    output = run(cap_tools([glob], toc.Limits(default_max_tokens=400)), None)
    assert toc.count(output) <= 400
    kept = Listing.model_validate_json(output)
    assert kept.root == "/usr"
    assert 0 < len(kept.files) < len(files)
    assert kept.files[:-1] == files[: len(kept.files) - 1]
    note_of(kept.files[-1])


def test_a_per_tool_name_that_matches_no_tool_is_one_warning(listing):
    import warnings

    from conftest import unmatched_warnings

    limits = toc.Limits(per_tool={"Glob": 300, "glob": 400})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tools = cap_tools([glob_returning(listing)], limits)
        output = run(tools, listing)
    [said] = unmatched_warnings(caught)
    assert "'Glob'" in said and "glob" in said
    assert toc.count(output) <= 400


def test_a_structure_no_cut_fits_is_sent_as_text_within_its_limit():
    from conftest import no_fit_shapes

    limits = toc.Limits(default_max_tokens=100)
    for shape, value in no_fit_shapes().items():
        output = run(cap_tools([glob_returning(value)], limits), value)
        assert toc.count(output) <= 100, shape
        note_of(output)


def test_images_are_priced_with_the_text_and_the_last_give_way(screenshots):
    from agents.tool import ToolOutputImage, ToolOutputText

    from conftest import media_note_of, png_size

    images = [
        ToolOutputImage(image_url="data:image/png;base64," + base64.b64encode(shot).decode(), detail="high")
        for shot in screenshots
    ]
    result = [ToolOutputText(text="ten pages:"), *images]
    limits = toc.Limits(image_tokens="openai")
    output = run(cap_tools([glob_returning(result)], limits), result)
    assert output[0] == {"type": "input_text", "text": "ten pages:"}
    kept = output[1:-1]
    assert 0 < len(kept) < len(images)
    priced = 0
    for image in kept:
        assert image["type"] == "input_image" and image["detail"] == "high"
        data = base64.b64decode(image["image_url"].removeprefix("data:image/png;base64,"))
        priced += openai_tile_tokens(*png_size(data))
    assert output[-1]["type"] == "input_text"
    assert toc.count("ten pages:") + priced + toc.count(output[-1]["text"]) <= 5000
    assert int(media_note_of(output[-1]["text"]).group(3)) == len(images)


def openai_tile_tokens(width: int, height: int) -> int:
    """OpenAI's published price of an image for its tile models: within 2048 x 2048, then the
    short side down to 768; 85 and 170 for each 512-px tile (platform.openai.com, "Images and
    vision")."""
    scale = min(1.0, 2048 / max(width, height))
    width, height = int(width * scale), int(height * scale)
    scale = min(1.0, 768 / min(width, height))
    width, height = int(width * scale), int(height * scale)
    return 85 + 170 * -(-width // 512) * -(-height // 512)
