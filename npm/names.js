// The adapters' check of `perTool` names against the tools they wrap.
"use strict";

/**
 * Warns once for each `perTool` name of `limits` that is none of `tools`: its limit never
 * applies. Names are the tools' own, as the model calls them, and case-sensitive.
 */
function warnOfUnmatchedTools(limits, tools) {
  const names = [...new Set(tools)].sort();
  for (const name of limits.unmatchedTools(names)) {
    process.emitWarning(
      `tool_output_cap: perTool names ${JSON.stringify(name)}, which is none of the tools ` +
        `${names.join(", ") || "(none)"}, so its limit never applies (names are case-sensitive)`,
      { code: "TOOL_OUTPUT_CAP_UNMATCHED_TOOL" },
    );
  }
}

module.exports = { warnOfUnmatchedTools };
