"""A LangChain v1 agent middleware that caps every tool result before the model reads it.

>>> from langchain.agents import create_agent
>>> from tool_output_cap import Limits
>>> from tool_output_cap.langchain import ToolOutputCapMiddleware
>>> cap = ToolOutputCapMiddleware(Limits(per_tool={"Glob": 3000}))
>>> # agent = create_agent(model, tools=[glob, grep], middleware=[cap])
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from ._blocks import cap_parts
from ._names import warn_of_unmatched_tools
from ._native import Limits

__all__ = ["ToolOutputCapMiddleware"]


class ToolOutputCapMiddleware(AgentMiddleware):
    """Caps each `ToolMessage`'s content to the limit of the tool's name in `limits`.

    A string content is capped as it is. A list of content blocks is capped as the MCP proxy
    caps a result's blocks (`Limits.cap_blocks`): its text (its strings, and the text of its
    `text` and `text-plain` blocks) as one text joined by newlines, blocks wholly past the cut
    removed; its images (`image` blocks with `base64`, `data` or a `url`, and `image_url` blocks)
    priced by the limits' `image_tokens`, and with its files and audio within the same limit:
    images scaled down in place, or the last giving way, with a block that says so. An error
    result (`status="error"`) keeps its tail. A `Command` has the `ToolMessage`s of its `update`
    capped.

    Warns once, when the model is first called, for each `per_tool` name of `limits` that is
    none of the agent's tools' names.
    """

    def __init__(self, limits: Optional[Limits] = None) -> None:
        super().__init__()
        self.limits = limits if limits is not None else Limits()
        self._checked = False

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        self._check(request)
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        self._check(request)
        return await handler(request)

    def _check(self, request: ModelRequest) -> None:
        # Once, when the model is first called with the agent's tools.
        if not self._checked:
            self._checked = True
            warn_of_unmatched_tools(self.limits, map(_name_of, request.tools))

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        return self._cap(request.tool_call["name"], handler(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        return self._cap(request.tool_call["name"], await handler(request))

    def _cap(self, tool: str, result: Any) -> Any:
        if isinstance(result, ToolMessage):
            return self._cap_message(tool, result)
        if isinstance(result, Command) and isinstance(result.update, dict):
            messages = result.update.get("messages")
            if isinstance(messages, list):
                capped = [
                    self._cap_message(m.name or tool, m) if isinstance(m, ToolMessage) else m
                    for m in messages
                ]
                return Command(
                    graph=result.graph,
                    update={**result.update, "messages": capped},
                    resume=result.resume,
                    goto=result.goto,
                )
        return result

    def _cap_message(self, tool: str, message: ToolMessage) -> ToolMessage:
        error = message.status == "error"
        content = message.content
        if isinstance(content, str):
            capped = self.limits.cap(tool, content, error)
            if capped.truncation is None:
                return message
            return message.model_copy(update={"content": capped.text})
        capped = cap_parts(self.limits, tool, content, _block_of, _part_of, error)
        if capped is None:
            return message
        return message.model_copy(update={"content": capped[0]})


def _name_of(tool: Any) -> str:
    """The name of a tool the agent gives the model: a `BaseTool`, or a dict in a provider's
    format."""
    if isinstance(tool, dict):
        return tool.get("name") or tool.get("function", {}).get("name", "")
    return getattr(tool, "name", "")


def _block_of(part: Any) -> Any:
    """A part of a `ToolMessage`'s content as a block: a string as a `text` block."""
    return {"type": "text", "text": part} if isinstance(part, str) else part


def _part_of(part: Any, block: Any) -> Any:
    """A block that came back as the part it came from: a string for a string."""
    return block["text"] if isinstance(part, str) else block
