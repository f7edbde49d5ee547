// LangChain.js 1.x: an agent middleware that caps each tool's result before the model reads it,
// with the limit of the tool the model called. `langchain` is imported when this module is.
"use strict";

const { createMiddleware, MiddlewareError, ToolInvocationError } = require("langchain");
const { ToolMessage } = require("@langchain/core/messages");
const { Limits } = require("./index.js");
const { warnOfUnmatchedTools } = require("./names.js");

/**
 * `createMiddleware` with `wrapToolCall`: each `ToolMessage` (a `Command`'s too) capped with the
 * limit of `request.toolCall.name`. A string content is capped; a list of blocks has its text
 * (strings and `{ type: "text" }` blocks) capped as one text joined by newlines, blocks wholly
 * past the cut removed and other blocks kept. A `status: "error"` message keeps its tail.
 *
 * An error the tool throws becomes the error `ToolMessage` that `createAgent` writes for it
 * without middleware (LangChain treats an error out of a middleware as fatal), capped, keeping
 * its tail: the model reads it and the run goes on. Interrupts, an aborted run and errors of
 * other middleware are thrown on, as they would be without this one.
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
      let result;
      try {
        result = await handler(request);
      } catch (error) {
        const content = toolErrorContent(error, request);
        if (content === undefined) throw error;
        result = new ToolMessage({ content, tool_call_id: request.toolCall.id, name, status: "error" });
      }
      return capResult(limits, name, result);
    },
  });
}

/**
 * What `createAgent`'s default error handling writes for `error`, a tool's: `undefined` for an
 * error it throws on (an interrupt, an aborted run, another middleware's error).
 */
function toolErrorContent(error, request) {
  // LangGraph's interrupts and commands to a parent graph (`isGraphBubbleUp`).
  if (error?.is_bubble_up === true) return undefined;
  if (request.runtime?.signal?.aborted) return undefined;
  let root = error;
  while (MiddlewareError.isInstance(root)) root = root.cause;
  if (ToolInvocationError.isInstance(root)) return root.message;
  if (root !== error) return undefined;
  return `${error}\n Please fix your mistakes.`;
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
