"""The LiteLLM guardrail's hook, called as LiteLLM's proxy calls it, with the real LiteLLM
installed: each route's call type, the limits' sources, and what it leaves alone. The proxy
itself, run as a process with the README's config, is tested by cli/tests/e2e/litellm.mjs."""

from __future__ import annotations

import asyncio
import copy
import logging
import os
from types import SimpleNamespace

import pytest

# LiteLLM fetches its model cost map when imported, unless told to use its own copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("litellm", reason="the LiteLLM guardrail's tests need litellm[proxy]")

import tool_output_cap as toc
from conftest import note_of
from tool_output_cap.litellm import GuardrailConfigError, ToolOutputCapGuardrail

GLOB = {"per_tool": {"Glob": {"max_tokens": 3000, "hint": "use a narrower pattern"}}}


def guardrail(**params):
    return ToolOutputCapGuardrail(
        guardrail_name="tool-output-cap", event_hook="pre_call", default_on=True, **params
    )


def hook(guard, data, call_type, route=None):
    key = SimpleNamespace(request_route=route)
    return asyncio.run(guard.async_pre_call_hook(key, None, data, call_type))


def anthropic(result):
    return {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Glob", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}]},
        ],
        # What LiteLLM adds to the body: not JSON, and left alone.
        "litellm_logging_obj": object(),
        "metadata": {"user_api_key": "hashed"},
    }


def test_each_routes_call_type_is_capped_by_its_apis_rules(listing):
    guard = guardrail(tool_output=GLOB)
    limits = guard.limits
    chat = {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "Glob", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": listing},
    ]}
    responses = {"input": [
        {"type": "function_call", "call_id": "c", "name": "Glob", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": listing},
    ]}
    gemini = {"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": "Glob", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "Glob", "response": {"output": listing}}}]},
    ]}
    results = {
        "anthropic_messages": lambda d: d["messages"][1]["content"][0]["content"],
        "acompletion": lambda d: d["messages"][1]["content"],
        "aresponses": lambda d: d["input"][1]["output"],
        "agenerate_content": lambda d: d["contents"][1]["parts"][0]["functionResponse"]["response"]["output"],
    }
    bodies = {"anthropic_messages": anthropic(listing), "acompletion": chat, "aresponses": responses, "agenerate_content": gemini}
    for call_type, body in bodies.items():
        extra = body.get("litellm_logging_obj")
        data = hook(guard, body, call_type)
        text = results[call_type](data)
        assert limits.count(text) <= 3000, call_type
        assert text.endswith("refine your query: use a narrower pattern"), call_type
        assert data.get("litellm_logging_obj") is extra
    # The pass-through route's API is its path's.
    data = hook(guard, anthropic(listing), "pass_through_endpoint", "/anthropic/v1/messages")
    assert note_of(results["anthropic_messages"](data))


def test_what_it_leaves_as_it_came(listing, caplog):
    guard = guardrail(tool_output=GLOB)
    cases = [
        (anthropic(listing), "aembedding", None),                      # a route without tool results
        (anthropic(listing), "pass_through_endpoint", "/vertex_ai/x"),  # a pass-through of no known API
        ({"messages": "not a list"}, "anthropic_messages", None),
        ({"input": "just text"}, "aresponses", None),
        (anthropic({"unexpected": listing}), "anthropic_messages", None),
        (anthropic("short"), "anthropic_messages", None),
    ]
    for body, call_type, route in cases:
        before = copy.copy(body)
        data = hook(guard, body, call_type, route)
        assert data is body and data == before, (call_type, route)
    # A history that is not JSON: a warning without the body, and the request as it came.
    body = anthropic("secret " + listing)
    body["messages"].append({"role": "user", "content": [object()]})
    messages = body["messages"]
    with caplog.at_level(logging.WARNING, logger="LiteLLM Proxy"):
        assert hook(guard, body, "anthropic_messages")["messages"] is messages
    assert "tool-output-cap: an anthropic request went on uncapped" in caplog.text
    assert "secret" not in caplog.text


def test_it_logs_each_cut_with_its_figures(listing, caplog):
    guard = guardrail(tool_output=GLOB)
    tokens = guard.limits.count(listing)
    with caplog.at_level(logging.INFO, logger="LiteLLM Proxy"):
        hook(guard, anthropic(listing), "anthropic_messages")
        hook(guard, anthropic(listing), "anthropic_messages")
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("tool-output-cap")]
    cut = toc.Limits(**GLOB).cap("Glob", listing).truncation
    expected = (f"tool-output-cap: cut a result of Glob from {tokens} to {cut.kept_tokens} tokens "
                f"({cut.dropped_tokens} dropped, limit 3000)")
    assert lines == [expected, expected + ", as cut before"]


def test_its_limits_come_from_params_or_the_commands_manifest(tmp_path, monkeypatch):
    manifest = tmp_path / "agent.toml"
    manifest.write_text("[worker.tool_output]\ndefault_max_tokens = 4000\n\n[worker.tool_output.per_tool]\nGlob = 3000\n")
    monkeypatch.setenv("TOOL_OUTPUT_CAP_MANIFEST", str(manifest))
    assert guardrail().limits.max_tokens_for("Glob") == 3000
    assert guardrail().limits.max_tokens_for("Bash") == 4000
    assert guardrail(tool_output={"default_max_tokens": 2000}).limits.max_tokens_for("Glob") == 2000
    other = tmp_path / "other.toml"
    other.write_text("[worker.tool_output]\ndefault_max_tokens = 1000\n")
    assert guardrail(tool_output_manifest=str(other)).limits.max_tokens_for("Glob") == 1000
    monkeypatch.delenv("TOOL_OUTPUT_CAP_MANIFEST")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "none"))
    assert guardrail().limits.max_tokens_for("Glob") == 5000
    # LiteLLM passes a guardrail's every param: the ones it does not know stay LiteLLM's.
    assert guardrail(mask_request_content=False, presidio_language="en").limits.max_tokens_for("x") == 5000


def test_bad_limits_stop_the_proxy_at_start_saying_where(tmp_path):
    bad = tmp_path / "agent.toml"
    bad.write_text("[worker.tool_output]\ndefault_max_tokens = 10\n")
    with pytest.raises(GuardrailConfigError, match=r"agent\.toml:2:22: .*default_max_tokens"):
        guardrail(tool_output_manifest=str(bad))
    with pytest.raises(GuardrailConfigError, match="both give the limits"):
        guardrail(tool_output_manifest=str(bad), tool_output={})
    with pytest.raises(GuardrailConfigError, match="tool_output: .*'rate_limit_shares'") as error:
        guardrail(tool_output={"rate_limit_shares": 0.5})
    with pytest.raises(GuardrailConfigError, match="must be a mapping"):
        guardrail(tool_output=3000)
    # Not a ValueError nor a TypeError, which LiteLLM logs and starts without the guardrail.
    assert not isinstance(error.value, (ValueError, TypeError))
    assert isinstance(error.value.__cause__, toc.ManifestError)


def logged(model, headers):
    """The kwargs of LiteLLM's logging callbacks for an answer of `model` with `headers`."""
    return {"model": model, "standard_logging_object": {
        "model_group": model, "hidden_params": {"additional_headers": headers}}}


def test_it_learns_each_models_limit_from_litellms_headers_and_caps_within_its_share(listing, caplog):
    guard = guardrail(tool_output={"rate_limit_share": 0.5})
    body = anthropic(listing)
    body["messages"] = [body["messages"][0], body["messages"][1]] * 6
    for turn in range(6):
        body["messages"][2 * turn] = {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{turn}", "name": "Glob", "input": {}}]}
        body["messages"][2 * turn + 1] = {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{turn}", "content": listing}]}
    results = lambda data: [m["content"][0]["content"] for m in data["messages"][1::2]]
    tokens = lambda data: sum(guard.limits.count(result) for result in results(data))
    # Before any answer: each result within its tool's limit alone, 6 x 5000.
    assert tokens(hook(guard, copy.deepcopy(body), "anthropic_messages")) > 15_000
    with caplog.at_level(logging.INFO, logger="LiteLLM Proxy"):
        # Another model's limit, and an answer with no limit, teach it nothing for this one.
        asyncio.run(guard.async_log_success_event(
            logged("gpt-e2e", {"llm_provider-x-ratelimit-limit-tokens": "90000"}), None, None, None))
        asyncio.run(guard.async_log_success_event(logged("claude-sonnet-4-5", {}), None, None, None))
        assert tokens(hook(guard, copy.deepcopy(body), "anthropic_messages")) > 15_000
        # A 429's headers report it as well.
        asyncio.run(guard.async_log_failure_event(logged("claude-sonnet-4-5", {
            "llm_provider-anthropic-ratelimit-input-tokens-limit": "30000"}), None, None, None))
    assert "claude-sonnet-4-5 reports a per-minute input-token limit of 30000" in caplog.text
    capped = hook(guard, copy.deepcopy(body), "anthropic_messages")
    assert tokens(capped) <= 15_000
    assert results(capped)[0].startswith("truncated: all ")


def test_proxy_handler_is_one_guardrail_made_when_asked(tmp_path, monkeypatch):
    import tool_output_cap.litellm as module

    monkeypatch.setenv("TOOL_OUTPUT_CAP_MANIFEST", str(tmp_path / "missing.toml"))
    monkeypatch.delitem(module.__dict__, "proxy_handler", raising=False)
    with pytest.raises(GuardrailConfigError, match="missing.toml"):
        module.proxy_handler
    monkeypatch.delenv("TOOL_OUTPUT_CAP_MANIFEST")
    handler = module.proxy_handler
    assert isinstance(handler, ToolOutputCapGuardrail) and module.proxy_handler is handler
    from litellm.types.guardrails import GuardrailEventHooks

    assert handler.should_run_guardrail({}, GuardrailEventHooks.pre_call)
