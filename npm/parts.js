// The adapters' cap of one result's parts as content blocks: text and media together.
"use strict";

/**
 * `parts`, one result of `toolName`, capped together by `limits.capBlocks`: each written as a
 * block by `blockOf`, and each block that comes back read by `partOf(part, block)`, `part` the
 * one it came from (`null` for the note that media gave way); a block that came back as it went
 * is its part itself. `{ parts, truncation }`, or null when they fit.
 */
function capParts(limits, toolName, parts, blockOf, partOf, options) {
  const blocks = parts.map(blockOf);
  const capped = limits.capBlocks(toolName, blocks, options);
  if (!capped) return null;
  const kept = capped.blocks.map((block, i) => {
    const source = capped.sources[i];
    if (source === null) return partOf(null, block);
    const same = JSON.stringify(block) === JSON.stringify(blocks[source]);
    return same ? parts[source] : partOf(parts[source], block);
  });
  return { parts: kept, truncation: capped.truncation };
}

/** Bytes, or a base64 string, as base64. */
function base64Of(data) {
  return typeof data === "string" ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
}

module.exports = { capParts, base64Of };
