"""A pydantic-ai toolset that caps every tool's return value before the model reads it.

>>> from pydantic_ai import Agent
>>> from pydantic_ai.toolsets import FunctionToolset
>>> from tool_output_cap import Limits
>>> from tool_output_cap.pydantic_ai import CappedToolset
>>> tools = CappedToolset(FunctionToolset([]), Limits(per_tool={"glob": 3000}))
>>> # agent = Agent(model, toolsets=[tools])
"""

from __future__ import annotations

import base64
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic_ai.messages import (
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ToolReturn,
    ToolReturnPart,
    is_multi_modal_content,
)
from pydantic_ai.toolsets import WrapperToolset

from ._blocks import cap_parts
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
    JSON capped as text. A `ToolReturn` has its `return_value` capped.

    A value with files (`BinaryContent`, `ImageUrl`, `DocumentUrl`, or a list holding them) is
    capped as content blocks (`Limits.cap_blocks`): its text and its files within the one limit,
    images priced by the limits' `image_tokens` (an `ImageUrl` at the most its rule charges, a
    `DocumentUrl` as a PDF of a hundred pages), PDFs and audio by the crate's estimate. Images are
    scaled down, or the last give way, and the value becomes a list that ends with the note.
    Audio and video by URL have no size to count, and are left as they are.

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
            parts = value if isinstance(value, list) else [value]
            capped = cap_parts(self.limits, name, parts, _block_of(name), _part_of)
            return value if capped is None else capped[0]
        capped = self.limits.cap_json(name, part.model_response_str())
        if capped.truncation is None:
            return value
        # When no cut of its shape fits, its JSON capped as text, which pydantic-ai sends as it is.
        return json.loads(capped.text) if capped.is_json else capped.text


def _block_of(name: str) -> Callable[[Any], Any]:
    """A part of a value of the tool `name` as a content block: a file as its kind of block, a
    string as text, any other value as the text pydantic-ai sends for it."""

    def block_of(part: Any) -> Any:
        if isinstance(part, str):
            return {"type": "text", "text": part}
        if isinstance(part, BinaryContent):
            kind = part.media_type.split("/")[0]
            data = base64.b64encode(part.data).decode()
            if kind in ("image", "audio"):
                return {"type": kind, "data": data, "mimeType": part.media_type}
            return {"type": "file", "base64": data, "mime_type": part.media_type}
        if isinstance(part, ImageUrl):
            return {"type": "image", "url": part.url}
        if isinstance(part, DocumentUrl):
            return {"type": "file", "url": part.url}
        if is_multi_modal_content(part):
            return {"type": part.kind}
        text = ToolReturnPart(tool_name=name, content=part).model_response_str()
        return {"type": "text", "text": text}

    return block_of


def _part_of(part: Any, block: Any) -> Any:
    """A block that came back as a part: a file with its bytes scaled down; any other as its
    text."""
    if isinstance(part, BinaryContent):
        return dataclasses.replace(part, data=base64.b64decode(block["data"]))
    return block["text"]
