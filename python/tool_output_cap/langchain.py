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

from ._names import warn_of_unmatched_tools
from ._native import Limits

__all__ = ["ToolOutputCapMiddleware"]


class ToolOutputCapMiddleware(AgentMiddleware):
    """Caps each `ToolMessage`'s content to the limit of the tool's name in `limits`.

    A string content is capped as it is. A list of content blocks has its text (its strings and
    its `{"type": "text"}` blocks) capped as one text joined by newlines, as the MCP proxy caps a
    result's text blocks: blocks wholly past the cut are removed, and other blocks stay. An
    error result (`status="error"`) keeps its tail. A `Command` has the `ToolMessage`s of its
    `update` capped.

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
        at = [i for i, block in enumerate(content) if _text_of(block) is not None]
        kept, truncation = self.limits.cap_texts(tool, [_text_of(content[i]) for i in at], error)
        if truncation is None:
            return message
        blocks = list(content)
        for i, text in zip(at, kept):
            block = content[i]
            blocks[i] = text if isinstance(block, str) or text is None else {**block, "text": text}
        removed = {i for i, text in zip(at, kept) if text is None}
        blocks = [block for i, block in enumerate(blocks) if i not in removed]
        return message.model_copy(update={"content": blocks})


def _name_of(tool: Any) -> str:
    """The name of a tool the agent gives the model: a `BaseTool`, or a dict in a provider's
    format."""
    if isinstance(tool, dict):
        return tool.get("name") or tool.get("function", {}).get("name", "")
    return getattr(tool, "name", "")


def _text_of(block: Any) -> Optional[str]:
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return block["text"]
    return None
