"""The adapters' check of `per_tool` names against the tools they wrap."""

from __future__ import annotations

import warnings
from typing import Iterable

from ._native import Limits


def warn_of_unmatched_tools(limits: Limits, tools: Iterable[str]) -> None:
    """Warns once for each `per_tool` name of `limits` that is none of `tools`: its limit never
    applies. Names are the tools' own, as the model calls them, and case-sensitive."""
    names = sorted(set(tools))
    for name in limits.unmatched_tools(names):
        warnings.warn(
            f"tool_output_cap: per_tool names {name!r}, which is none of the tools "
            f"{', '.join(names) or '(none)'}, so its limit never applies (names are case-sensitive)",
            UserWarning,
            stacklevel=3,
        )
