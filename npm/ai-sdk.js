// The Vercel AI SDK (v6 and later): each tool's output capped where the SDK turns it into what
// the model reads, its `toModelOutput({ toolCallId, input, output })`. A tool's own
// `toModelOutput` (MCP tools from `@ai-sdk/mcp` have one) runs first, and what it gives is
// capped. A thrown error keeps its tail, and what the model reads of it, `Error: ` included, is
// within the limit. A JSON output that no cut of its shape fits is sent as text, capped. The
// SDK itself is not imported.
"use strict";

const { Limits } = require("./index.js");
const { warnOfUnmatchedTools } = require("./names.js");
const { base64Of, capParts } = require("./parts.js");

/** `tools` (the object `generateText` and `streamText` take), each tool's output capped to its limit. */
function capTools(tools, limits = new Limits()) {
  warnOfUnmatchedTools(limits, Object.keys(tools));
  return Object.fromEntries(Object.entries(tools).map(([name, tool]) => [name, capTool(name, tool, limits)]));
}

function capTool(name, tool, limits) {
  const own = tool.toModelOutput;
  const execute = tool.execute;
  return {
    ...tool,
    ...(execute && {
      async execute(...args) {
        try {
          return await execute.apply(tool, args);
        } catch (error) {
          // The SDK writes it as `error.toString()`: `Name: message`.
          if (error instanceof Error) {
            const prefix = errorPrefix(error);
            error.message = limits.cap(name, error.message, { error: true, prefix }).text;
          }
          throw error;
        }
      },
    }),
    async toModelOutput(options) {
      const output = own ? await own.call(tool, options) : asModelOutput(options.output);
      return capModelOutput(limits, name, output);
    },
  };
}

/** What `Error.prototype.toString` writes before an error's message. */
function errorPrefix(error) {
  const name = error.name === undefined ? "Error" : String(error.name);
  return name === "" ? "" : `${name}: `;
}

/** The SDK's own default: a string as text, anything else as JSON. */
function asModelOutput(output) {
  if (typeof output === "string") return { type: "text", value: output };
  const json = JSON.stringify(output);
  return { type: "json", value: json === undefined ? null : JSON.parse(json) };
}

function capModelOutput(limits, name, output) {
  const error = output?.type === "error-text" || output?.type === "error-json";
  switch (output?.type) {
    case "text":
    case "error-text": {
      const capped = limits.cap(name, output.value, { error });
      return capped.truncation ? { ...output, value: capped.text } : output;
    }
    case "json":
    case "error-json": {
      const capped = limits.capJson(name, output.value, { error });
      if (!capped.truncation) return output;
      // No cut of its shape fits: its JSON, capped as text, as text.
      if (!capped.isJson) return { ...output, type: error ? "error-text" : "text", value: capped.text };
      return { ...output, value: JSON.parse(capped.text) };
    }
    case "content": {
      // Its parts capped together, as the MCP proxy caps a result's blocks: its text as one
      // text, its images and files within the same limit.
      const capped = capParts(limits, name, output.value, blockOf, partOf);
      return capped ? { ...output, value: capped.parts } : output;
    }
    default:
      return output;
  }
}

/**
 * A part of a `content` output as a block the crate prices: a `file` part with its bytes as
 * the `image-data` or `file-data` part it amounts to, a URL or a file id as an image or file
 * whose bytes are not there.
 */
function blockOf(part) {
  switch (part?.type) {
    case "file": {
      const data = part.data?.type === "data" ? base64Of(part.data.data) : undefined;
      const image = String(part.mediaType ?? "").startsWith("image/");
      if (data === undefined) return { type: image ? "image" : "file" };
      return { type: image ? "image-data" : "file-data", data, mediaType: part.mediaType };
    }
    case "image-url":
    case "image-file-id":
    case "image-file-reference":
      return { type: "image", url: part.url ?? "" };
    case "file-url":
    case "file-id":
    case "file-reference":
      return { type: "file", url: part.url ?? "" };
    default:
      return part;
  }
}

/** A block that came back as a part: a `file` part with its bytes scaled down; any other as it came back. */
function partOf(part, block) {
  if (part?.type === "file") return { ...part, data: { type: "data", data: block.data } };
  return block;
}

module.exports = { capTools };
