"""A pydantic-ai toolset that caps every tool's return value before the model reads it.

>>> from pydantic_ai import Agent
>>> from pydantic_ai.toolsets import FunctionToolset
>>> from tool_output_cap import Limits
>>> from tool_output_cap.pydantic_ai import CappedToolset
>>> tools = CappedToolset(FunctionToolset([]), Limits(per_tool={"glob": 3000}))
>>> # agent = Agent(model, toolsets=[tools])
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ToolReturn, ToolReturnPart
from pydantic_ai.toolsets import WrapperToolset

from ._names import warn_of_unmatched_tools
from ._native import Limits

__all__ = ["CappedToolset"]


@dataclass
class CappedToolset(WrapperToolset):
    """Caps the return value of each tool of `wrapped` to the limit of its name in `limits`.

    A string is capped as it is. Any other value is capped as the JSON the model would be sent
    (`ToolReturnPart.model_response_str`), to JSON of the same shape (`Limits.cap_json`): its
    longest string cut and ending with the note, or its largest lists shortened. It is replaced
    by that value, which pydantic-ai sends as that JSON; when no cut of its shape fits, by its
    JSON capped as text. A `ToolReturn` has its `return_value`
    capped. A value with files (images, documents) is left as it is: files are not text.

    Warns once, when the agent first lists the tools, for each `per_tool` name of `limits` that
    is none of their names.
    """

    limits: Limits = field(default_factory=Limits)
    _checked: bool = field(default=False, init=False, repr=False)

    async def get_tools(self, ctx: Any) -> dict[str, Any]:
        tools = await super().get_tools(ctx)
        if not self._checked:
            # Once, when the agent first lists the tools.
            self._checked = True
            warn_of_unmatched_tools(self.limits, tools)
        return tools

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        value = await super().call_tool(name, tool_args, ctx, tool)
        if isinstance(value, ToolReturn):
            return dataclasses.replace(value, return_value=self._cap(name, value.return_value))
        return self._cap(name, value)

    def _cap(self, name: str, value: Any) -> Any:
        if value is None:
            return value
        if isinstance(value, str):
            return self.limits.cap(name, value).text
        part = ToolReturnPart(tool_name=name, content=value)
        if part.files:
            return value
        capped = self.limits.cap_json(name, part.model_response_str())
        if capped.truncation is None:
            return value
        # When no cut of its shape fits, its JSON capped as text, which pydantic-ai sends as it is.
        return json.loads(capped.text) if capped.is_json else capped.text
