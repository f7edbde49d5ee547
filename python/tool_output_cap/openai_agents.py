"""OpenAI Agents function tools whose outputs are capped before the model reads them.

>>> from agents import function_tool
>>> from tool_output_cap import Limits
>>> from tool_output_cap.openai_agents import cap_tools
>>> @function_tool
... def glob(pattern: str) -> str:
...     return "src/lib.rs"
>>> [capped] = cap_tools([glob], Limits(per_tool={"glob": 3000}))
>>> capped.name
'glob'
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from typing import Any, Iterable, Optional

import pydantic
from agents import FunctionTool
from agents.items import ItemHelpers
from agents.tool import ToolOutputText, ValidToolOutputPydanticModelsTypeAdapter

from ._blocks import cap_parts
from ._names import warn_of_unmatched_tools
from ._native import Limits

__all__ = ["cap_tools"]

_JSON = pydantic.TypeAdapter(Any)


def cap_tools(tools: Iterable[Any], limits: Limits) -> list[Any]:
    """`tools`, each `FunctionTool` wrapped so that its output is capped to the limit of its name.

    A string output is capped as it is, and a `ToolOutputText` has its text capped. Any other
    value over the limit is capped to JSON of the same shape (`Limits.cap_json`): its longest
    string cut and ending with the note, or its largest lists shortened. A tool with an
    `output_json_schema` gets that value back, which the SDK checks against the schema and sends
    as JSON (left whole, with a warning, when no cut of its shape fits: the schema demands it);
    any other tool gets the capped JSON text, in place of the `str` of the value that the SDK
    would send (that JSON capped as text when no cut of its shape fits). A value that is not
    JSON is capped as its `str`.

    An output of images and files (`ToolOutputImage`, `ToolOutputFileContent`, their dicts, or a
    list of them with `ToolOutputText`) is capped as content blocks (`Limits.cap_blocks`): its
    text and its files within the one limit, images priced by the limits' `image_tokens` (set it
    to `"openai"` for OpenAI's models; an image by `file_id` or URL at the most its rule
    charges), files by the crate's estimate. Images are scaled down, or the last give way, and
    the output becomes a list that ends with a `ToolOutputText` note. Tools that are not
    `FunctionTool`s are returned as they are.

    Warns once for each `per_tool` name of `limits` that is none of the tools' names.
    """
    tools = list(tools)
    warn_of_unmatched_tools(limits, (getattr(tool, "name", "") for tool in tools))
    return [
        dataclasses.replace(tool, on_invoke_tool=_capping(tool, limits))
        if isinstance(tool, FunctionTool)
        else tool
        for tool in tools
    ]


def _capping(tool: FunctionTool, limits: Limits) -> Any:
    invoke = tool.on_invoke_tool
    name = tool.name
    structured = tool.output_json_schema is not None

    async def on_invoke_tool(ctx: Any, arguments: str) -> Any:
        return _cap(limits, name, await invoke(ctx, arguments), structured)

    return on_invoke_tool


def _cap(limits: Limits, name: str, output: Any, structured: bool) -> Any:
    if isinstance(output, str) and not structured:
        return limits.cap(name, output).text
    if isinstance(output, ToolOutputText):
        return output.model_copy(update={"text": limits.cap(name, output.text).text})
    if ItemHelpers._convert_tool_output_as_structured(output) is not None:
        parts = list(output) if isinstance(output, (list, tuple)) else [output]
        capped = cap_parts(limits, name, parts, _block_of, _part_of)
        return output if capped is None else capped[0]
    if structured:
        return _cap_schema_value(limits, name, output)
    # What the SDK sends: the `str` of the value; over the limit, its JSON is capped instead.
    sent = limits.cap(name, str(output))
    if sent.truncation is None:
        return output
    text = _json_of(output)
    return sent.text if text is None else limits.cap_json(name, text).text


def _block_of(part: Any) -> Any:
    """A part of an output of images and files as the block the SDK reads it as."""
    model = ItemHelpers._maybe_get_output_as_structured_function_output(part)
    return model.model_dump(exclude_none=True)


def _part_of(part: Any, block: Any) -> Any:
    """A block that came back as a part: a dict for a dict, else the SDK's model of it (the
    note a `ToolOutputText`)."""
    if isinstance(part, dict):
        return block
    return ValidToolOutputPydanticModelsTypeAdapter.validate_python(block)


def _cap_schema_value(limits: Limits, name: str, output: Any) -> Any:
    """`output` of a tool with an output schema, capped as the JSON the SDK sends, and given
    back as the value of that JSON."""
    text = _json_of(output)
    if text is None:
        return output
    try:
        capped = limits.cap_json(name, text)
    except ValueError:
        # A string that is not JSON, which the SDK refuses for a schema itself.
        return output
    if capped.truncation is None:
        return output
    if capped.is_json:
        return json.loads(capped.text)
    warnings.warn(
        f"tool_output_cap: the output of {name!r} is over its limit, and no cut of a string "
        "or a list keeps it within it and of its output_json_schema's shape; left whole",
        stacklevel=2,
    )
    return output


def _json_of(output: Any) -> Optional[str]:
    """`output` as the compact JSON the SDK writes for a tool with an output schema; `None` for a
    value that is not JSON."""
    if isinstance(output, str):
        return output
    try:
        value = _JSON.dump_python(output, mode="json")
    except (TypeError, ValueError, pydantic.PydanticSerializationError):
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
