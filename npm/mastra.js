// Mastra: an output processor that caps each tool's result on `processToolResult`, after the tool
// ran and before the result enters the message list and the next model call. Mastra itself is
// not imported.
"use strict";

const { Limits } = require("./index.js");
const { capParts } = require("./parts.js");

/**
 * Caps each tool's result to the limit of its name: a string as text; an MCP tool's result (an
 * object with a `content` array of blocks) by its blocks, as the MCP proxy caps it: its text as
 * one text, its images and files within the same limit (`Limits.capBlocks`); any other JSON
 * value as JSON of the same shape, or, when no cut of its shape fits, as its JSON capped as
 * text. Mastra calls `processToolResult` only for a tool that returned, so a thrown error is
 * left to Mastra.
 */
class ToolOutputCapProcessor {
  constructor(limits = new Limits()) {
    this.id = "tool-output-cap";
    this.name = "ToolOutputCapProcessor";
    this.limits = limits;
  }

  processToolResult({ messageList, toolName, toolCallId, args, result }) {
    const capped = capResult(this.limits, toolName, result);
    if (capped === result) return undefined;
    messageList.updateToolInvocation({
      type: "tool-invocation",
      toolInvocation: { state: "result", toolCallId, toolName, args, result: capped },
    });
    return messageList;
  }
}

function capResult(limits, name, result) {
  if (typeof result === "string") {
    const capped = limits.cap(name, result);
    return capped.truncation ? capped.text : result;
  }
  if (result === null || typeof result !== "object") return result;
  if (Array.isArray(result.content)) {
    const options = { error: result.isError === true };
    const blocks = capParts(limits, name, result.content, (block) => block, (part, block) => block, options);
    return blocks ? { ...result, content: blocks.parts } : result;
  }
  const capped = limits.capJson(name, result);
  if (!capped.truncation) return result;
  return capped.isJson ? JSON.parse(capped.text) : capped.text;
}

module.exports = { ToolOutputCapProcessor };
