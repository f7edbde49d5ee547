"""A LiteLLM proxy guardrail that caps the tool results of every request before the model reads
them: the crate's request cap (`Limits.cap_request`) on the proxy's parsed body.

In the proxy's ``config.yaml``::

    guardrails:
      - guardrail_name: tool-output-cap
        litellm_params:
          guardrail: tool_output_cap.litellm.ToolOutputCapGuardrail
          mode: pre_call
          default_on: true

or, as a callback, ``litellm_settings: {callbacks: tool_output_cap.litellm.proxy_handler}``.

The limits are the manifest's ``[worker.tool_output]``: the one the ``tool-output-cap`` command
reads (``$TOOL_OUTPUT_CAP_MANIFEST``, else ``~/.config/tool-output-cap/manifest.toml``), or
built-in defaults without one. A guardrail's ``litellm_params`` may name its own:

- ``tool_output_manifest``: the path of a manifest;
- ``tool_output``: the section itself, with the keys of ``Limits``
  (``default_max_tokens``, ``per_tool``, ``max_tokens_per_turn``, ``max_tokens_per_request``,
  ``rate_limit_share``, ...).

With ``rate_limit_share``, the guardrail learns each model's per-minute input-token limit from
the provider's headers that LiteLLM passes back on each answer (``llm_provider-`` and the
provider's own name: Anthropic's ``anthropic-ratelimit-input-tokens-limit``, OpenAI's
``x-ratelimit-limit-tokens``), one limit for each model name a client asks for, and from then
on keeps each request's tool results within that share of it, as the gateway does. Each
replica and each worker learns it on its own first answer: nothing is shared, and none is
needed. It learns in LiteLLM's logging callbacks, so ``mode: pre_call`` is all it needs.

Limits it cannot read stop the proxy at start, with the key named: LiteLLM would otherwise skip
the guardrail and start without it ("proxy is starting WITHOUT this guardrail"), and every
request would go uncapped with one line in its log. For a cap that an organisation relies on,
a proxy that does not start is the safer failure.

>>> guardrail = ToolOutputCapGuardrail(
...     guardrail_name="tool-output-cap", event_hook="pre_call", default_on=True,
...     tool_output={"per_tool": {"Glob": 3000}})
>>> guardrail.limits.max_tokens_for("Glob")
3000
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Mapping, Optional

from litellm._logging import verbose_proxy_logger
from litellm.integrations.custom_guardrail import CustomGuardrail

from ._native import Limits, ManifestError, RateLimit, api_for_path, manifest_path

__all__ = ["ToolOutputCapGuardrail", "GuardrailConfigError", "proxy_handler"]


class GuardrailConfigError(RuntimeError):
    """The guardrail's limits cannot be read: the message names the key. Not a ``ValueError``,
    which LiteLLM would log and start without the guardrail."""

# The API of each of LiteLLM's call types whose requests carry tool results. A pass-through
# request's API is its route's.
_API_OF_CALL_TYPE = {
    "anthropic_messages": "anthropic",
    "aanthropic_messages": "anthropic",
    "completion": "openai-chat",
    "acompletion": "openai-chat",
    "responses": "openai-responses",
    "aresponses": "openai-responses",
    "generate_content": "gemini",
    "agenerate_content": "gemini",
    "generate_content_stream": "gemini",
    "agenerate_content_stream": "gemini",
}

# The one field of each API's body that holds the history: the tool results and the calls they
# answer. Only it is read and replaced, so what LiteLLM adds to the body is left alone.
_HISTORY_OF_API = {
    "anthropic": "messages",
    "openai-chat": "messages",
    "openai-responses": "input",
    "gemini": "contents",
}


class ToolOutputCapGuardrail(CustomGuardrail):
    """Caps each tool result of a request on LiteLLM's Anthropic Messages, Chat Completions,
    Responses and Gemini routes, and their pass-through routes, to the limit of the tool whose
    call it answers. Every other request, and a body it cannot read, goes on as it came; it
    logs, through LiteLLM's proxy logger, each result it cut (at INFO) and each body it could
    not read (at WARNING, without the body)."""

    def __init__(
        self,
        tool_output_manifest: Optional[str] = None,
        tool_output: Optional[Mapping[str, Any]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        try:
            self.limits = _limits(tool_output_manifest, tool_output)
        except ManifestError as error:
            raise GuardrailConfigError(f"tool-output-cap: {error}") from error
        # The per-minute limit of each model name, learned from its answers.
        self._rate_limits: dict[str, RateLimit] = {}

    async def async_pre_call_hook(
        self,
        user_api_key_dict: Any,
        cache: Any,
        data: dict,
        call_type: str,
    ) -> dict:
        api = _API_OF_CALL_TYPE.get(call_type)
        if api is None and call_type == "pass_through_endpoint":
            api = api_for_path(getattr(user_api_key_dict, "request_route", None) or "")
        history = _HISTORY_OF_API.get(api) if api else None
        if history is None or not isinstance(data.get(history), list):
            return data
        rate_limit = self._rate_limits.get(str(data.get("model")))
        try:
            # The crate releases the GIL while it counts: the proxy's loop goes on meanwhile.
            capped = await asyncio.to_thread(self._cap, api, history, data[history], rate_limit)
        except (TypeError, ValueError) as error:
            verbose_proxy_logger.warning(
                "tool-output-cap: an %s request went on uncapped: %s", api, error
            )
            return data
        if capped is not None:
            data[history] = capped
        return data

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        self._learn(kwargs)

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
        # A 429 reports the limit too.
        self._learn(kwargs)

    def _learn(self, kwargs: Mapping[str, Any]) -> None:
        """Learns the per-minute limit that the provider's headers of an answer report, for the
        model the client asked for."""
        payload = kwargs.get("standard_logging_object") or {}
        hidden = payload.get("hidden_params") or {}
        headers = hidden.get("additional_headers") or {}
        model = payload.get("model_group") or kwargs.get("model")
        if not headers or model is None:
            return
        rate_limit = self._rate_limits.setdefault(str(model), RateLimit())
        before = rate_limit.limit
        limit = rate_limit.learn(headers)
        if limit is not None and limit != before:
            verbose_proxy_logger.info(
                "tool-output-cap: %s reports a per-minute input-token limit of %d (worker %d)",
                model,
                limit,
                os.getpid(),
            )

    def _cap(
        self, api: str, history: str, items: list, rate_limit: Optional[RateLimit]
    ) -> Optional[list]:
        capped = self.limits.cap_request_with_cuts(api, {history: items}, rate_limit)
        for cut in capped.cuts:
            figures = cut.truncation
            verbose_proxy_logger.info(
                "tool-output-cap: cut a%s result of %s from %d to %d tokens "
                "(%d dropped, limit %d)%s",
                "n error" if cut.error else "",
                cut.tool or "a tool whose call is not in the request",
                figures.original_tokens,
                figures.kept_tokens,
                figures.dropped_tokens,
                figures.max_tokens,
                ", as cut before" if cut.cached else "",
            )
        if capped.body is None:
            return None
        return json.loads(capped.body)[history]


def _limits(
    manifest: Optional[str], section: Optional[Mapping[str, Any]]
) -> Limits:
    """The limits `litellm_params` give, else those of the command's manifest."""
    if manifest is not None and section is not None:
        raise ManifestError(
            "litellm_params: tool_output_manifest and tool_output both give the limits; "
            "give one of them"
        )
    if section is not None:
        if not isinstance(section, Mapping):
            raise ManifestError(
                f"litellm_params: tool_output must be a mapping of [worker.tool_output]'s keys, "
                f"not {type(section).__name__}"
            )
        try:
            return Limits(**section)
        except TypeError as error:
            raise ManifestError(f"litellm_params: tool_output: {error}") from None
    manifest = manifest if manifest is not None else manifest_path()
    return Limits.from_manifest(manifest) if manifest is not None else Limits()


def __getattr__(name: str) -> Any:
    # `proxy_handler` is made when LiteLLM first asks for it, so that importing the guardrail
    # alone does not read the command's manifest.
    if name == "proxy_handler":
        handler = ToolOutputCapGuardrail(
            guardrail_name="tool-output-cap", event_hook="pre_call", default_on=True
        )
        globals()["proxy_handler"] = handler
        return handler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
