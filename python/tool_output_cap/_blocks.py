"""The adapters' cap of one result's parts as content blocks: text and media together."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ._native import Limits, Truncation


def cap_parts(
    limits: Limits,
    tool: str,
    parts: Sequence[Any],
    block_of: Callable[[Any], Any],
    part_of: Callable[[Optional[Any], Any], Any],
    error: bool = False,
) -> Optional[tuple[list[Any], Truncation]]:
    """`parts`, one result of `tool`, capped together by `Limits.cap_blocks`: each written as a
    block by `block_of`, and each block that comes back read by `part_of(part, block)`, `part`
    the one it came from (`None` for the note that media gave way); a block that came back as
    it went is its part itself. `None` when they fit."""
    blocks = [block_of(part) for part in parts]
    capped = limits.cap_blocks(tool, blocks, error)
    if capped is None:
        return None
    kept = [
        parts[source]
        if source is not None and block == blocks[source]
        else part_of(None if source is None else parts[source], block)
        for source, block in zip(capped.sources, capped.blocks)
    ]
    return kept, capped.truncation
