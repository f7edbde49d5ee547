// A fake model API on 127.0.0.1 for the host end-to-end tests: it speaks Anthropic's Messages
// API (Claude Code), OpenAI's Responses API (Codex) and Gemini's generateContent (gemini-cli),
// each streamed as the host asks, and OpenAI's Chat Completions, not streamed. It makes the calls it is given in turn: while a conversation
// holds fewer tool results than calls, it calls the next, the one offered tool whose name ends
// with `tool`, with `args`; then it answers with a final text. Every request is kept, its body
// parsed and as the bytes that came, so a test reads exactly what the model would.
//
// With `limit`, it also enforces an input-token limit as a provider's per-minute limit does:
// the request that first calls a tool sets the baseline, and a later request of more than
// `limit` tokens over it gets the API's own 429, "request too large for the per-minute limit".
// Tokens are counted with o200k_base, by `count` (the text of every string in the request).
// With `report`, every answer after the baseline also reports the limit, `baseline + limit`, in
// the provider's header (Anthropic's `anthropic-ratelimit-input-tokens-limit`, OpenAI's
// `x-ratelimit-limit-tokens`; Gemini has none), and the tool definitions' strings are counted
// too, as a provider counts them.

import http from "node:http";

const sse = (res, events) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events) {
    if (event) res.write(`event: ${event}\n`);
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
};

const json = (res, body) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

// Anthropic Messages: a tool_use, or a text once a tool_result came back.
function anthropic(body, res, calls) {
  const blocks = (body.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  const done = blocks.filter((block) => block.type === "tool_result").length;
  const { tool, args } = calls[done] ?? {};
  const name = tool && (body.tools ?? []).map((t) => t.name).find((n) => n?.endsWith(tool));
  const usage = { input_tokens: 10, output_tokens: 1 };
  const block = name
    ? { type: "tool_use", id: `toolu_e2e_${done + 1}`, name, input: {} }
    : { type: "text", text: "" };
  const delta =
    block.type === "tool_use"
      ? { type: "input_json_delta", partial_json: JSON.stringify(args) }
      : { type: "text_delta", text: "done" };
  const stop = block.type === "tool_use" ? "tool_use" : "end_turn";
  // One id per message: Claude Code joins the blocks of messages that share an id into one.
  const id = `msg_e2e_${done + 1}`;
  if (!body.stream) {
    const content = block.type === "tool_use" ? [{ ...block, input: args }] : [{ type: "text", text: "done" }];
    return json(res, { id, type: "message", role: "assistant", model: body.model, content, stop_reason: stop, stop_sequence: null, usage });
  }
  sse(res, [
    ["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: block }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

/** The tools a Responses request offers, a namespace's each with its `namespace`. */
export const responsesTools = (body) =>
  (body.tools ?? []).flatMap((t) => (t.type === "namespace" ? (t.tools ?? []).map((inner) => ({ ...inner, namespace: t.name })) : [t]));

// OpenAI Responses: a function_call, or a message once a function_call_output came back.
function responses(body, res, calls) {
  const done = (body.input ?? []).filter((item) => item.type === "function_call_output").length;
  const { tool, args } = calls[done] ?? {};
  const offered = responsesTools(body);
  const found = tool && offered.find((t) => t.name?.endsWith(tool));
  const item = found
    ? { type: "function_call", id: `fc_e2e_${done + 1}`, call_id: `call_e2e_${done + 1}`, name: found.name, ...(found.namespace ? { namespace: found.namespace } : {}), arguments: JSON.stringify(args), status: "completed" }
    : { type: "message", id: "msg_e2e_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done", annotations: [] }] };
  const response = { id: "resp_e2e", object: "response", created_at: 0, model: body.model, status: "completed", output: [item], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } };
  if (!body.stream) return json(res, response);
  sse(res, [
    ["response.created", { type: "response.created", response: { id: "resp_e2e", object: "response", status: "in_progress", output: [] } }],
    ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", { type: "response.completed", response }],
  ]);
}

// OpenAI Chat Completions: a tool call, or a message once a tool message came back.
function chat(body, res, calls) {
  const done = (body.messages ?? []).filter((m) => m.role === "tool").length;
  const { tool, args } = calls[done] ?? {};
  const name = tool && (body.tools ?? []).map((t) => t.function?.name).find((n) => n?.endsWith(tool));
  const message = name
    ? { role: "assistant", content: null, tool_calls: [{ id: `call_e2e_${done + 1}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] }
    : { role: "assistant", content: "done" };
  const choice = { index: 0, message, finish_reason: name ? "tool_calls" : "stop" };
  json(res, { id: "chatcmpl_e2e", object: "chat.completion", created: 0, model: body.model, choices: [choice], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
}

// Gemini generateContent: a functionCall, or a text once a functionResponse came back.
function gemini(body, res, calls, stream) {
  const parts = (body.contents ?? []).flatMap((c) => c.parts ?? []);
  const done = parts.filter((part) => part.functionResponse).length;
  const { tool, args } = calls[done] ?? {};
  const name = tool && (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name).find((n) => n?.endsWith(tool));
  const part = name ? { functionCall: { name, args } } : { text: "done" };
  const chunk = { candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: "fake" };
  if (stream) return sse(res, [[null, chunk]]);
  json(res, chunk);
}

// Each API's 429 for a request over the per-minute limit.
const tooLarge = (path, tokens) => {
  const message = `request too large for the per-minute limit: ${tokens} input tokens`;
  if (path.endsWith("/messages")) return { type: "error", error: { type: "rate_limit_error", message } };
  if (path.endsWith("/responses")) return { error: { message, type: "tokens", param: null, code: "rate_limit_exceeded" } };
  return { error: { code: 429, message, status: "RESOURCE_EXHAUSTED" } };
};

/** The text of every string in `value`, joined by newlines. */
const strings = (value) =>
  typeof value === "string" ? value : value && typeof value === "object" ? Object.values(value).map(strings).filter(Boolean).join("\n") : "";

/** How many tool results `body` holds, in any of the four APIs. */
const results = (body) =>
  (body.messages ?? []).filter((m) => m.role === "tool").length +
  (body.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === "tool_result").length +
  (Array.isArray(body.input) ? body.input : []).filter((item) => item.type === "function_call_output").length +
  (body.contents ?? []).flatMap((c) => c.parts ?? []).filter((part) => part.functionResponse).length;

/**
 * Starts the fake model: `calls` is a call ({ tool, args }) or a list of them; `limit`, with
 * `count` (text => tokens), the input-token limit over the baseline. Resolves to { url, requests,
 * limited, close }: `requests` holds each request ({ method, path, body, text }) with its
 * `tokens` when counted, `limited` each request refused.
 */
export function startFakeModel(calls, { limit, count, report = false } = {}) {
  calls = Array.isArray(calls) ? calls : [calls];
  const requests = [];
  const limited = [];
  let baseline;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      // Decoded once whole: a character may be split between chunks.
      const text = Buffer.concat(chunks).toString();
      let body = {};
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        body = { unparsed: text };
      }
      const path = req.url.split("?")[0];
      const request = { method: req.method, path, body, text };
      requests.push(request);
      const inference = /\/messages$|\/responses$|:(stream)?[gG]enerateContent$/.test(path);
      if (limit && inference && (body.tools ?? []).length) {
        const tools = report ? { tools: body.tools } : {};
        request.tokens = count(strings({ system: body.system, messages: body.messages, input: body.input, instructions: body.instructions, contents: body.contents, systemInstruction: body.systemInstruction, ...tools }));
        if (results(body) === 0 && baseline === undefined) baseline = request.tokens;
        if (report && baseline !== undefined) {
          if (path.endsWith("/messages")) res.setHeader("anthropic-ratelimit-input-tokens-limit", baseline + limit);
          if (path.endsWith("/responses")) res.setHeader("x-ratelimit-limit-tokens", baseline + limit);
        }
        if (baseline !== undefined && request.tokens > baseline + limit) {
          limited.push(request);
          res.writeHead(429, { "content-type": "application/json" });
          return res.end(JSON.stringify(tooLarge(path, request.tokens)));
        }
      }
      if (path.endsWith("/messages/count_tokens")) return json(res, { input_tokens: 1000 });
      if (path.endsWith("/messages")) return anthropic(body, res, calls);
      if (path.endsWith("/responses")) return responses(body, res, calls);
      if (path.endsWith("/chat/completions")) return chat(body, res, calls);
      if (path.includes(":streamGenerateContent")) return gemini(body, res, calls, true);
      if (path.includes(":generateContent")) return gemini(body, res, calls, false);
      if (path.includes(":countTokens")) return json(res, { totalTokens: 1000 });
      if (path.endsWith("/models")) return json(res, { data: [], models: [] });
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no such endpoint: ${path}` } }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        requests,
        limited,
        baseline: () => baseline,
        close: () => new Promise((done) => server.close(done)),
      }),
    ),
  );
}
