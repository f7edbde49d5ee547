// LangChain.js 1.x: an agent middleware that caps each tool's result before the model reads it,
// with the limit of the tool the model called. `langchain` is imported when this module is.
"use strict";

const { createMiddleware, MiddlewareError, ToolInvocationError } = require("langchain");
const { ToolMessage } = require("@langchain/core/messages");
const { Limits } = require("./index.js");
const { warnOfUnmatchedTools } = require("./names.js");
const { capParts } = require("./parts.js");

/**
 * `createMiddleware` with `wrapToolCall`: each `ToolMessage` (a `Command`'s too) capped with the
 * limit of `request.toolCall.name`. A string content is capped; a list of blocks is capped as
 * the MCP proxy caps a result's blocks (`Limits.capBlocks`): its text (strings and `text`
 * blocks) as one text joined by newlines, blocks wholly past the cut removed; its images
 * (`image` blocks with `data` or a `url`, `image_url` blocks) priced by the limits'
 * `imageTokens`, with its files and audio within the same limit: scaled down in place, or the
 * last giving way, with a block that says so. A `status: "error"` message keeps its tail.
 *
 * An error the tool throws is thrown on with its message capped, keeping its tail, and marked as
 * LangChain's recoverable tool error (the brand `ToolInvocationError.isInstance` reads; its
 * class and fields stay). So an error middleware outside this one (`toolErrorMiddleware`) gets
 * it to write its own way, its message within the limit; and without one, `createAgent` hands
 * that message to the model, as it hands a tool's error without middleware, and the run goes
 * on. A thrown value that is no `Error` becomes the error `ToolMessage` `createAgent` would
 * write, capped. Interrupts, an aborted run and errors of other middleware are thrown on as
 * they are.
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
        const tools = toolErrorOf(error, request);
        if (tools === undefined || (tools instanceof Error && capError(limits, name, tools))) throw error;
        result = new ToolMessage({ content: `${error}\n Please fix your mistakes.`, tool_call_id: request.toolCall.id, name, status: "error" });
      }
      return capResult(limits, name, result);
    },
  });
}

/**
 * The error the tool threw, when `error` is one (it is, or wraps, a `ToolInvocationError`);
 * `undefined` for an error thrown on as it is: an interrupt, an aborted run, another
 * middleware's error.
 */
function toolErrorOf(error, request) {
  // LangGraph's interrupts and commands to a parent graph (`isGraphBubbleUp`).
  if (error?.is_bubble_up === true) return undefined;
  if (request.runtime?.signal?.aborted) return undefined;
  let root = error;
  while (MiddlewareError.isInstance(root)) root = root.cause;
  if (root !== error && !ToolInvocationError.isInstance(root)) return undefined;
  return root;
}

/**
 * `error`'s message capped to the limit of `name`, keeping its tail, and `error` marked as
 * LangChain's recoverable tool error; false when its message cannot be written.
 */
function capError(limits, name, error) {
  try {
    error.message = limits.cap(name, String(error.message), { error: true }).text;
    error["~brand"] ??= "ToolInvocationError";
    return ToolInvocationError.isInstance(error);
  } catch {
    return false;
  }
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
  const capped = capParts(limits, name, content, blockOf, partOf, options);
  return capped ? withContent(message, capped.parts) : message;
}

/** A part of a `ToolMessage`'s content as a block: a string as a `text` block. */
const blockOf = (part) => (typeof part === "string" ? { type: "text", text: part } : part);

/** A block that came back as the part it came from: a string for a string. */
const partOf = (part, block) => (typeof part === "string" ? block.text : block);

function withContent(message, content) {
  const { tool_call_id, name, id, status, artifact, additional_kwargs, response_metadata } = message;
  return new ToolMessage({ content, tool_call_id, name, id, status, artifact, additional_kwargs, response_metadata });
}

module.exports = { toolOutputCapMiddleware };
