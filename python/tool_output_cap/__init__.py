"""Caps every LLM tool output to an exact token budget, as the ``tool-output-cap`` crate does.

>>> import tool_output_cap as toc
>>> listing = "".join(f"src/module_{i}/file_{i}.py\\n" for i in range(20000))
>>> capped = toc.cap(listing, max_tokens=5000)
>>> capped.text.endswith("tokens dropped, refine your query")
True
>>> capped.truncation.kept_tokens + capped.truncation.dropped_tokens == toc.count(listing)
True

The adapters are in ``tool_output_cap.langchain``, ``tool_output_cap.pydantic_ai`` and
``tool_output_cap.openai_agents``, and the LiteLLM proxy's guardrail in
``tool_output_cap.litellm``; each imports its framework only when it is imported.
"""

from ._native import (
    Capped,
    CappedBlocks,
    CappedJson,
    CappedRequest,
    Limits,
    ManifestError,
    RateLimit,
    RequestCut,
    Truncation,
    api_for_path,
    cap,
    count,
    manifest_path,
)

__all__ = [
    "Capped",
    "CappedBlocks",
    "CappedJson",
    "CappedRequest",
    "Limits",
    "ManifestError",
    "RateLimit",
    "RequestCut",
    "Truncation",
    "api_for_path",
    "cap",
    "count",
    "manifest_path",
]
