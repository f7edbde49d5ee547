// OpenAI Agents JS: function tools whose outputs are capped before the model reads them, by
// wrapping each tool's `invoke`. The SDK itself is not imported.
"use strict";

const { Limits } = require("./index.js");
const { warnOfUnmatchedTools } = require("./names.js");
const { base64Of, capParts } = require("./parts.js");

/**
 * `tools`, each function tool's output capped to the limit of its name: a string as text, a
 * `{ type: "text" }` output's text, and any other JSON value over the limit as JSON of the same
 * shape: its capped JSON text in place of the value (when no cut of its shape fits, that JSON
 * capped as text), or, for a tool with an `outputSchema`, the capped value itself (left whole,
 * with a warning, when no cut of its shape fits: the schema demands the shape).
 *
 * An output of images and files (`{ type: "image" }`, `{ type: "file" }`, or an array of them
 * with `{ type: "text" }`) is capped as content blocks (`Limits.capBlocks`): its text and its
 * files within the one limit, images priced by the limits' `imageTokens` (set it to `"openai"`
 * for OpenAI's models; an image by URL or file id at the most its rule charges), files by the
 * crate's estimate. Images are scaled down, or the last give way, and the output becomes an
 * array that ends with a text note. Tools that are not function tools stay as they are.
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
  const parts = Array.isArray(output) ? output : [output];
  if (parts.length > 0 && parts.every(isOutputPart) && parts.some((part) => part.type !== "text")) {
    const capped = capParts(limits, name, parts, blockOf, (part, block) => block);
    return capped ? capped.parts : output;
  }
  if (output?.type === "text" && typeof output.text === "string") {
    const capped = limits.cap(name, output.text);
    return capped.truncation ? { ...output, text: capped.text } : output;
  }
  if (output === null || typeof output !== "object") return output;
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

/** A part of an output the SDK sends as content: text, an image or a file. */
const isOutputPart = (part) => ["text", "image", "file"].includes(part?.type);

/**
 * A part of an output as a block the crate prices: an image's or a file's bytes, when they
 * are bytes, as base64 (an image's in a `data:` URL).
 */
function blockOf(part) {
  const { image, file } = part;
  if (part.type === "image" && image?.data !== undefined && typeof image.data !== "string") {
    return { ...part, image: `data:${image.mediaType ?? "image/png"};base64,${base64Of(image.data)}` };
  }
  if (part.type === "file" && typeof file === "object" && file?.data !== undefined) {
    return { type: "file", data: base64Of(file.data), mediaType: file.mediaType, filename: file.filename };
  }
  if (part.type === "file" && typeof file === "string") return { type: "file", file_data: file };
  return part;
}

module.exports = { capTools };
