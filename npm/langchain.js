// LangChain.js 1.x: an agent middleware that caps each tool's result before the model reads it,
// with the limit of the tool the model called. `langchain` is imported when this module is.
"use strict";

const { createMiddleware } = require("langchain");
const { ToolMessage } = require("@langchain/core/messages");
const { Limits } = require("./index.js");
const { warnOfUnmatchedTools } = require("./names.js");

/**
 * `createMiddleware` with `wrapToolCall`: each `ToolMessage` (a `Command`'s too) capped with the
 * limit of `request.toolCall.name`. A string content is capped; a list of blocks has its text
 * (strings and `{ type: "text" }` blocks) capped as one text joined by newlines, blocks wholly
 * past the cut removed and other blocks kept. A `status: "error"` message keeps its tail, and so
 * does the message of an error the tool throws.
 */
function toolOutputCapMiddleware(limits = new Limits()) {
  let checked = false;
  return createMiddleware({
    name: "ToolOutputCapMiddleware",
    wrapModelCall: async (request, handler) => {
      if (!checked) {
        checked = true; // once, when the model is first called with its tools
        warnOfUnmatchedTools(limits, (request.tools ?? []).map((tool) => tool.name ?? ""));
      }
      return handler(request);
    },
    wrapToolCall: async (request, handler) => {
      const name = request.toolCall.name;
      try {
        return capResult(limits, name, await handler(request));
      } catch (error) {
        // A tool's error that the agent raises: its message keeps its tail.
        if (error instanceof Error) error.message = limits.cap(name, error.message, { error: true }).text;
        throw error;
      }
    },
  });
}

function capResult(limits, name, result) {
  if (ToolMessage.isInstance(result)) return capMessage(limits, name, result);
  // A LangGraph `Command`, without importing LangGraph: its class is the one it came with.
  if (result?.lg_name === "Command" && Array.isArray(result.update?.messages)) {
    const messages = result.update.messages.map((m) => (ToolMessage.isInstance(m) ? capMessage(limits, name, m) : m));
    return new result.constructor({ goto: result.goto, graph: result.graph, resume: result.resume, update: { ...result.update, messages } });
  }
  return result;
}

function capMessage(limits, name, message) {
  const options = { error: message.status === "error" };
  const { content } = message;
  if (typeof content === "string") {
    const capped = limits.cap(name, content, options);
    return capped.truncation ? withContent(message, capped.text) : message;
  }
  if (!Array.isArray(content)) return message;
  const text = (block) => (typeof block === "string" ? block : block?.type === "text" ? block.text : null);
  const texts = content.filter((block) => text(block) !== null);
  const capped = limits.capTexts(name, texts.map(text), options);
  if (!capped) return message;
  const kept = new Map(texts.map((block, i) => [block, capped.texts[i]]));
  const blocks = content.flatMap((block) => {
    if (!kept.has(block)) return [block];
    const value = kept.get(block);
    if (value === null) return [];
    return [typeof block === "string" ? value : { ...block, text: value }];
  });
  return withContent(message, blocks);
}

function withContent(message, content) {
  const { tool_call_id, name, id, status, artifact, additional_kwargs, response_metadata } = message;
  return new ToolMessage({ content, tool_call_id, name, id, status, artifact, additional_kwargs, response_metadata });
}

module.exports = { toolOutputCapMiddleware };
