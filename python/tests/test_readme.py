"""The READMEs' Python snippets, run as written against the frameworks' own test models, with
their per-tool limits visibly applied."""

from __future__ import annotations

import base64
import json
import types
import re
from pathlib import Path

import pytest

import tool_output_cap as toc
from conftest import note_of

ROOT = Path(__file__).resolve().parents[2]


def block(readme: str, heading: str, language: str, index: int = 0) -> str:
    """The `index`th ```language block after `heading` in `readme`."""
    text = (ROOT / readme).read_text()
    after = text[text.index(heading) :]
    return re.findall(rf"```{language}\n(.*?)```", after, re.S)[index]


@pytest.fixture
def manifest(tmp_path, monkeypatch):
    """The root README's agent.toml, in the folder the snippet runs in."""
    (tmp_path / "agent.toml").write_text(block("README.md", "## A Rust agent", "toml"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "agent.toml"


def test_the_root_readmes_langchain_snippet_caps_glob_to_its_limit_and_hint(manifest, listing):
    pytest.importorskip("langchain", reason="the snippet needs langchain")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    call = {"name": "Glob", "args": {"pattern": "*"}, "id": "call_1"}
    model = Model(messages=iter([AIMessage(content="", tool_calls=[call]), AIMessage(content="done")]))

    @tool("Glob")
    def glob_tool(pattern: str) -> str:
        """Lists the files matching `pattern`."""
        return listing

    @tool("Bash")
    def bash_tool(command: str) -> str:
        """Runs `command`."""
        return ""

    names = {"model": model, "Glob": glob_tool, "Bash": bash_tool}
    exec(block("README.md", "## A Python agent", "python"), names)
    state = names["agent"].invoke({"messages": [{"role": "user", "content": "list every file"}]})
    [result] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert toc.count(result.content) <= 3000
    assert result.content.endswith("refine your query: use a narrower pattern, e.g. src/**/*.rs")
    note_of(result.content)


def test_the_python_readmes_api_snippet_runs_with_its_limits(manifest, listing):
    log = "".join(f"compiling crate_{i}\n" for i in range(3000)) + "error: linking failed"
    names = {
        "text": listing,
        "log": log,
        "block1": listing,
        "block2": listing,
        "json_text": '{"files": [%s]}' % ",".join(f'"{line}"' for line in listing.splitlines()),
        "body": {"messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Grep", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": listing}]},
        ]},
        "response": types.SimpleNamespace(headers={"anthropic-ratelimit-input-tokens-limit": "30000"}),
        "text_block": {"type": "text", "text": listing},
        # A PNG header of 1568 x 1000: 1640 tokens at Anthropic's price.
        "image_block": {"type": "image", "mimeType": "image/png", "data": base64.b64encode(
            b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR" + (1568).to_bytes(4, "big") + (1000).to_bytes(4, "big") + b"\x08\x06\0\0\0"
        ).decode()},
    }
    exec(block("python/README.md", "## The API", "python"), names)
    shot = names["shot"]
    assert shot.sources == [0, 1] and shot.blocks[1] == names["image_block"]
    assert shot.truncation.kept_tokens <= 5000
    assert names["rate_limit"].limit == 30000
    limits = names["limits"]
    assert limits.cap("Grep", listing).truncation.max_tokens == 3000
    sent = json.loads(limits.cap_request("anthropic", names["body"]))
    assert limits.count(sent["messages"][1]["content"][0]["content"]) <= 3000
    bash = limits.cap("Bash", log, error=True)
    assert bash.truncation.keep == "tail" and bash.text.endswith("refine your query: grep the log")
    assert limits.cap("Glob", listing).truncation.max_tokens == 5000


def test_the_python_readmes_adapters_snippet_builds_each_agent_with_no_warning(listing, recwarn):
    for framework in ("langchain", "pydantic_ai", "agents"):
        pytest.importorskip(framework, reason=f"the snippet needs {framework}")
    from agents import function_tool
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.tools import tool
    from pydantic_ai.models.test import TestModel

    def grep(pattern: str) -> str:
        """Searches for `pattern`."""
        return listing

    def bash(command: str) -> str:
        """Runs `command`."""
        return ""

    names = {
        "limits": toc.Limits(per_tool={"grep": 3000, "bash": {"max_tokens": 6000, "keep": "tail"}}),
        "chat_model": GenericFakeChatModel(messages=iter([])),
        "langchain_tools": [tool(grep), tool(bash)],
        "model": TestModel(),
        "functions": [grep, bash],
        "function_tools": [function_tool(grep), function_tool(bash)],
    }
    langchain, pydantic_ai, openai_agents = block("python/README.md", "## The adapters", "python").split("\n\n")
    for paragraph in (langchain, openai_agents, pydantic_ai):
        exec(paragraph, names)
    assert not [w for w in recwarn if "tool_output_cap" in str(w.message)]

    # pydantic-ai's TestModel calls each tool once: grep's listing comes back within its limit.
    from pydantic_ai.messages import ToolReturnPart

    messages = names["agent"].run_sync("search").all_messages()
    [seen] = [p.model_response_str() for m in messages for p in m.parts
              if isinstance(p, ToolReturnPart) and p.tool_name == "grep"]
    assert toc.count(listing) > 3000 >= toc.count(seen)
    note_of(seen)
