"""CappedToolset in a real pydantic-ai agent, driven by pydantic-ai's own FunctionModel."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai adapter's tests need pydantic-ai")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

import tool_output_cap as toc
from conftest import note_of
from tool_output_cap.pydantic_ai import CappedToolset


def run_glob(toolset_of, result):
    """Runs an agent whose model calls `glob` once, then answers; gives the text of the tool
    return that the model was sent on its second call."""
    seen = []

    def model(messages, info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("glob", {"pattern": "*"})])
        seen.extend(part.model_response_str() for part in returns)
        return ModelResponse(parts=[TextPart("There are many files.")])

    def glob(pattern: str):
        """Lists the files matching `pattern`."""
        return result

    agent = Agent(FunctionModel(model), toolsets=[toolset_of(FunctionToolset([glob]))])
    answer = agent.run_sync("list every file")
    assert answer.output == "There are many files."
    [text] = seen
    return text


def test_the_tool_return_the_model_saw_is_capped(listing):
    limits = toc.Limits(per_tool={"glob": {"max_tokens": 3000, "hint": "use a narrower pattern"}})
    seen = run_glob(lambda tools: CappedToolset(tools, limits), listing)
    assert toc.count(seen) <= 3000
    assert seen.endswith("refine your query: use a narrower pattern")
    assert listing.startswith(seen[: seen.rindex("\n")])


def test_without_the_toolset_the_return_is_whole(listing):
    assert run_glob(lambda tools: tools, listing) == listing


def test_a_structured_return_is_capped_to_json_of_the_same_shape(listing):
    files = [{"path": path, "size": len(path)} for path in listing.splitlines()]
    whole = run_glob(lambda tools: tools, files)
    assert json.loads(whole) == files
    seen = run_glob(lambda tools: CappedToolset(tools, toc.Limits(default_max_tokens=500)), files)
    assert toc.count(seen) <= 500
    kept = json.loads(seen)
    assert 0 < len(kept) < len(files)
    assert kept[:-1] == files[: len(kept) - 1]
    last = kept[-1]
    assert last["size"] == files[len(kept) - 1]["size"]
    assert 0 < note_of(last["path"]) < toc.count(whole)


def test_a_structured_return_of_one_long_string_keeps_its_other_fields(listing):
    result = {"pattern": "*", "matches": listing}
    seen = run_glob(lambda tools: CappedToolset(tools, toc.Limits(default_max_tokens=500)), result)
    assert toc.count(seen) <= 500
    kept = json.loads(seen)
    assert kept["pattern"] == "*"
    text = kept["matches"]
    note_of(text)
    assert listing.startswith(text[: text.rindex("\n")])


def test_a_return_within_its_limit_is_unchanged():
    files = [{"path": "src/lib.rs"}]
    seen = run_glob(lambda tools: CappedToolset(tools, toc.Limits()), files)
    assert json.loads(seen) == files


def test_a_tool_return_has_its_return_value_capped(listing):
    from pydantic_ai.messages import ToolReturn

    result = ToolReturn(return_value=listing, metadata={"pattern": "*"})
    seen = run_glob(lambda tools: CappedToolset(tools, toc.Limits(default_max_tokens=200)), result)
    assert toc.count(seen) <= 200
    note_of(seen)


def test_a_per_tool_name_that_matches_no_tool_is_one_warning(listing):
    import warnings

    from conftest import unmatched_warnings

    limits = toc.Limits(per_tool={"Glob": 300, "glob": 400})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seen = run_glob(lambda tools: CappedToolset(tools, limits), listing)
    assert unmatched_warnings(caught) == [
        "tool_output_cap: per_tool names 'Glob', which is none of the tools glob, so its limit "
        "never applies (names are case-sensitive)"
    ]
    assert toc.count(seen) <= 400


def test_a_structure_no_cut_fits_is_sent_as_text_within_its_limit():
    from conftest import no_fit_shapes

    limits = toc.Limits(default_max_tokens=100)
    for shape, value in no_fit_shapes().items():
        seen = run_glob(lambda tools: CappedToolset(tools, limits), value)
        assert toc.count(seen) <= 100, shape
        note_of(seen)


def run_screenshot(toolset_of, result):
    """Runs an agent whose model calls `screenshot` once, then answers; gives the content of the
    tool return the model was sent."""
    seen = []

    def model(messages, info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("screenshot", {})])
        seen.extend(part.content for part in returns)
        return ModelResponse(parts=[TextPart("The pages are open.")])

    def screenshot():
        """Takes a screenshot of each open page."""
        return result

    agent = Agent(FunctionModel(model), toolsets=[toolset_of(FunctionToolset([screenshot]))])
    assert agent.run_sync("open the pages").output == "The pages are open."
    [content] = seen
    return content


def test_binary_images_are_priced_with_the_text_and_the_last_give_way(screenshots):
    from pydantic_ai.messages import BinaryContent

    from conftest import anthropic_tokens, media_note_of, png_size

    images = [BinaryContent(shot, media_type="image/png") for shot in screenshots]
    content = run_screenshot(lambda tools: CappedToolset(tools, toc.Limits()), ["ten pages:", *images])
    assert content[0] == "ten pages:"
    kept = content[1:-1]
    assert 0 < len(kept) < len(images)
    assert all(isinstance(image, BinaryContent) and image.media_type == "image/png" for image in kept)
    priced = sum(anthropic_tokens(*png_size(image.data)) for image in kept)
    assert toc.count("ten pages:") + priced + toc.count(content[-1]) <= 5000
    note = media_note_of(content[-1])
    assert int(note.group(3)) == len(images)
    # Without the toolset, every image reaches the model.
    whole = run_screenshot(lambda tools: tools, ["ten pages:", *images])
    assert [image.data for image in whole[1:]] == list(screenshots)


def test_one_binary_image_within_the_limit_is_unchanged(screenshots):
    from pydantic_ai.messages import BinaryContent

    image = BinaryContent(screenshots[0], media_type="image/png")
    content = run_screenshot(lambda tools: CappedToolset(tools, toc.Limits()), image)
    assert content == image
