// OpenAI Agents JS: function tools whose outputs are capped before the model reads them, by
// wrapping each tool's `invoke`. The SDK itself is not imported.
"use strict";

const { Limits } = require("./index.js");
const { warnOfUnmatchedTools } = require("./names.js");

/**
 * `tools`, each function tool's output capped to the limit of its name: a string as text, a
 * `{ type: "text" }` output's text, and any other JSON value over the limit as JSON of the same
 * shape: its capped JSON text in place of the value (when no cut of its shape fits, that JSON
 * capped as text), or, for a tool with an `outputSchema`, the capped value itself (left whole,
 * with a warning, when no cut of its shape fits: the schema demands the shape). Images and files,
 * and tools that are not function tools, stay as they are.
 */
function capTools(tools, limits = new Limits()) {
  warnOfUnmatchedTools(limits, tools.map((tool) => tool.name ?? ""));
  return tools.map((tool) => (tool?.type === "function" ? capTool(tool, limits) : tool));
}

function capTool(tool, limits) {
  const { name, invoke, outputSchema } = tool;
  return {
    ...tool,
    async invoke(...args) {
      return capOutput(limits, name, await invoke.apply(tool, args), outputSchema !== undefined);
    },
  };
}

function capOutput(limits, name, output, structured) {
  if (typeof output === "string" && !structured) return limits.cap(name, output).text;
  if (output?.type === "text" && typeof output.text === "string") {
    const capped = limits.cap(name, output.text);
    return capped.truncation ? { ...output, text: capped.text } : output;
  }
  if (output === null || typeof output !== "object" || ["image", "file"].includes(output.type)) return output;
  const capped = limits.capJson(name, output);
  if (!capped.truncation) return output;
  if (!structured) return capped.text;
  if (capped.isJson) return JSON.parse(capped.text);
  process.emitWarning(
    `tool_output_cap: the output of ${JSON.stringify(name)} is over its limit, and no cut of a ` +
      "string or a list keeps it within it and of its outputSchema's shape; left whole",
    { code: "TOOL_OUTPUT_CAP_NO_CUT_FITS" },
  );
  return output;
}

module.exports = { capTools };
