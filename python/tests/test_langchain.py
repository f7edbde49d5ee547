"""ToolOutputCapMiddleware in a real LangChain agent, driven by LangChain's own fake chat model."""

from __future__ import annotations

import asyncio
import base64

import pytest

pytest.importorskip("langchain", reason="the LangChain adapter's tests need langchain")

from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallRequest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

import tool_output_cap as toc
from conftest import note_of
from tool_output_cap.langchain import ToolOutputCapMiddleware


class ToolCallingFakeModel(GenericFakeChatModel):
    """LangChain's fake chat model, which has no `bind_tools` of its own."""

    def bind_tools(self, tools, **kwargs):
        return self


def glob_agent(listing, middleware):
    @tool("Glob")
    def glob(pattern: str) -> str:
        """Lists the files matching `pattern`."""
        return listing

    model = ToolCallingFakeModel(
        messages=iter(
            [
                AIMessage(
                    content="",
                    tool_calls=[{"name": "Glob", "args": {"pattern": "*"}, "id": "call_1"}],
                ),
                AIMessage(content="There are many files."),
            ]
        )
    )
    return create_agent(model, tools=[glob], middleware=middleware)


def tool_message(state) -> ToolMessage:
    [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    return message


def test_the_glob_result_in_the_final_state_is_capped(listing):
    assert toc.count(listing) > 20_000
    agent = glob_agent(listing, [ToolOutputCapMiddleware(toc.Limits())])
    state = agent.invoke({"messages": [{"role": "user", "content": "list every file"}]})
    message = tool_message(state)
    assert toc.count(message.content) <= 5000
    assert note_of(message.content) == toc.count(listing) - toc.cap(listing).truncation.kept_tokens
    assert listing.startswith(message.content[: message.content.rindex("\n")])
    assert state["messages"][-1].content == "There are many files."


def test_without_the_middleware_the_result_is_whole(listing):
    state = glob_agent(listing, []).invoke({"messages": [{"role": "user", "content": "list"}]})
    assert tool_message(state).content == listing


def test_the_async_agent_caps_with_the_tools_own_limit(listing):
    limits = toc.Limits(per_tool={"Glob": {"max_tokens": 300, "hint": "use a narrower pattern"}})
    agent = glob_agent(listing, [ToolOutputCapMiddleware(limits)])
    state = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "list"}]}))
    message = tool_message(state)
    assert toc.count(message.content) <= 300
    assert message.content.endswith("refine your query: use a narrower pattern")


def call(tool_name: str) -> ToolCallRequest:
    return ToolCallRequest(
        tool_call={"name": tool_name, "args": {}, "id": "call_1"}, tool=None, state={}, runtime=None
    )


def test_text_blocks_are_capped_together_and_other_blocks_stay(listing):
    half = len(listing) // 2
    image = {"type": "image", "url": "https://example.com/a.png"}
    blocks = [{"type": "text", "text": listing[:half]}, image, listing[half:]]
    message = ToolMessage(content=blocks, tool_call_id="call_1", name="Glob")
    middleware = ToolOutputCapMiddleware(toc.Limits(default_max_tokens=400))
    capped = middleware.wrap_tool_call(call("Glob"), lambda request: message)
    first, second = capped.content
    assert second == image  # the text after the cut is gone, the image stays
    assert first["type"] == "text" and listing.startswith(first["text"].rsplit("\n", 1)[0])
    assert toc.count(first["text"]) <= 400
    note_of(first["text"])


def test_an_error_result_keeps_its_tail(listing):
    log = listing + "error: the build failed"
    message = ToolMessage(content=log, tool_call_id="call_1", name="Bash", status="error")
    middleware = ToolOutputCapMiddleware(toc.Limits(default_max_tokens=200))
    capped = middleware.wrap_tool_call(call("Bash"), lambda request: message)
    assert capped.status == "error"
    assert capped.content.rsplit("\n", 1)[0].endswith("error: the build failed")
    assert toc.count(capped.content) <= 200


def test_a_result_within_its_limit_is_the_same_message():
    message = ToolMessage(content="src/lib.rs", tool_call_id="call_1", name="Glob")
    middleware = ToolOutputCapMiddleware()
    assert middleware.wrap_tool_call(call("Glob"), lambda request: message) is message


def test_a_per_tool_name_that_matches_no_tool_is_one_warning(listing):
    import warnings

    from conftest import unmatched_warnings

    limits = toc.Limits(per_tool={"glob": 300, "Glob": 400, "Grpe": 500})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = glob_agent(listing, [ToolOutputCapMiddleware(limits)])
        state = agent.invoke({"messages": [{"role": "user", "content": "list"}]})
    said = unmatched_warnings(caught)
    assert len(said) == 2, said
    assert "'Grpe'" in said[0] + said[1] and "'glob'" in said[0] + said[1]
    assert toc.count(tool_message(state).content) <= 400


def screenshot_agent(blocks, middleware):
    @tool("screenshot", response_format="content")
    def screenshot() -> list:
        """Takes a screenshot of each open page."""
        return blocks

    model = ToolCallingFakeModel(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[{"name": "screenshot", "args": {}, "id": "call_1"}]),
                AIMessage(content="The pages are open."),
            ]
        )
    )
    return create_agent(model, tools=[screenshot], middleware=middleware)


def test_screenshots_are_priced_with_the_text_and_the_last_give_way(screenshots):
    from conftest import anthropic_tokens, media_note_of, png_size

    images = [{"type": "image", "base64": base64.b64encode(shot).decode(), "mime_type": "image/png"} for shot in screenshots]
    blocks = [{"type": "text", "text": "ten pages:"}, *images]
    agent = screenshot_agent(blocks, [ToolOutputCapMiddleware(toc.Limits())])
    state = agent.invoke({"messages": [{"role": "user", "content": "open the pages"}]})
    content = tool_message(state).content
    assert content[0] == blocks[0]
    kept = content[1:-1]
    assert 0 < len(kept) < len(images)
    priced = 0
    for block in kept:
        assert block["type"] == "image" and block["mime_type"] == "image/png"
        priced += anthropic_tokens(*png_size(base64.b64decode(block["base64"])))
    assert toc.count("ten pages:") + priced + toc.count(content[-1]["text"]) <= 5000
    note = media_note_of(content[-1]["text"])
    assert (int(note.group(2)), int(note.group(3))) == (len(images) - len(kept), len(images))
    before = sum(anthropic_tokens(*png_size(shot)) for shot in screenshots)
    assert int(note.group(1)) == before - priced


def test_an_image_within_the_limit_is_the_same_message(screenshots):
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(screenshots[0]).decode()}}
    message = ToolMessage(content=["the page:", image], tool_call_id="call_1", name="screenshot")
    middleware = ToolOutputCapMiddleware()
    assert middleware.wrap_tool_call(call("screenshot"), lambda request: message) is message
