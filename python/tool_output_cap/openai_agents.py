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
import warnings
from typing import Any, Iterable

from agents import FunctionTool
from agents.items import ItemHelpers
from agents.tool import ToolOutputText

from ._native import Limits

__all__ = ["cap_tools"]


def cap_tools(tools: Iterable[Any], limits: Limits) -> list[Any]:
    """`tools`, each `FunctionTool` wrapped so that its output is capped to the limit of its name.

    A string output is capped as it is, a `ToolOutputText` has its text capped, and any other
    value is capped as the text the model would be sent (`str` of it) when that is over.
    Images and files are left as they are. Tools that are not `FunctionTool`s are returned as
    they are. A tool with an `output_json_schema` is returned as it is, with a warning: a cut
    JSON object would fail its schema.
    """
    capped = []
    for tool in tools:
        if not isinstance(tool, FunctionTool):
            capped.append(tool)
        elif tool.output_json_schema is not None:
            warnings.warn(
                f"tool_output_cap: {tool.name!r} has an output_json_schema, so its output is not "
                "capped (a cut JSON object would fail the schema)",
                stacklevel=2,
            )
            capped.append(tool)
        else:
            capped.append(dataclasses.replace(tool, on_invoke_tool=_capping(tool, limits)))
    return capped


def _capping(tool: FunctionTool, limits: Limits) -> Any:
    invoke = tool.on_invoke_tool
    name = tool.name

    async def on_invoke_tool(ctx: Any, arguments: str) -> Any:
        return _cap(limits, name, await invoke(ctx, arguments))

    return on_invoke_tool


def _cap(limits: Limits, name: str, output: Any) -> Any:
    if isinstance(output, str):
        return limits.cap(name, output).text
    if isinstance(output, ToolOutputText):
        return output.model_copy(update={"text": limits.cap(name, output.text).text})
    if ItemHelpers._convert_tool_output_as_structured(output) is not None:
        return output
    capped = limits.cap(name, str(output))
    return output if capped.truncation is None else capped.text
