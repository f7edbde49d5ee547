// A fake model API on 127.0.0.1 for the host end-to-end tests: it speaks Anthropic's Messages
// API (Claude Code), OpenAI's Responses API (Codex) and Gemini's generateContent (gemini-cli),
// each streamed as the host asks. Its first answer in a conversation calls the one offered tool
// whose name ends with `tool`, with `args`; once the conversation holds that tool's result, it
// answers with a final text. Every request is kept, so a test reads exactly what the model would.

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
function anthropic(body, res, { tool, args }) {
  const results = (body.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  const answered = results.some((block) => block.type === "tool_result");
  const name = (body.tools ?? []).map((t) => t.name).find((n) => n?.endsWith(tool));
  const usage = { input_tokens: 10, output_tokens: 1 };
  const block =
    !answered && name
      ? { type: "tool_use", id: "toolu_e2e_1", name, input: {} }
      : { type: "text", text: "" };
  const delta =
    block.type === "tool_use"
      ? { type: "input_json_delta", partial_json: JSON.stringify(args) }
      : { type: "text_delta", text: "done" };
  const stop = block.type === "tool_use" ? "tool_use" : "end_turn";
  if (!body.stream) {
    const content = block.type === "tool_use" ? [{ ...block, input: args }] : [{ type: "text", text: "done" }];
    return json(res, { id: "msg_e2e", type: "message", role: "assistant", model: body.model, content, stop_reason: stop, stop_sequence: null, usage });
  }
  sse(res, [
    ["message_start", { type: "message_start", message: { id: "msg_e2e", type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: block }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

// OpenAI Responses: a function_call, or a message once a function_call_output came back.
function responses(body, res, { tool, args }) {
  const answered = (body.input ?? []).some((item) => item.type === "function_call_output");
  const offered = (body.tools ?? []).flatMap((t) => (t.type === "namespace" ? (t.tools ?? []).map((inner) => ({ ...inner, namespace: t.name })) : [t]));
  const found = offered.find((t) => t.name?.endsWith(tool));
  const item =
    !answered && found
      ? { type: "function_call", id: "fc_e2e_1", call_id: "call_e2e_1", name: found.name, ...(found.namespace ? { namespace: found.namespace } : {}), arguments: JSON.stringify(args), status: "completed" }
      : { type: "message", id: "msg_e2e_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done", annotations: [] }] };
  const response = { id: "resp_e2e", object: "response", status: "completed", output: [item], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } };
  sse(res, [
    ["response.created", { type: "response.created", response: { id: "resp_e2e", object: "response", status: "in_progress", output: [] } }],
    ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", { type: "response.completed", response }],
  ]);
}

// Gemini generateContent: a functionCall, or a text once a functionResponse came back.
function gemini(body, res, { tool, args }, stream) {
  const parts = (body.contents ?? []).flatMap((c) => c.parts ?? []);
  const answered = parts.some((part) => part.functionResponse);
  const name = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name).find((n) => n?.endsWith(tool));
  const part = !answered && name ? { functionCall: { name, args } } : { text: "done" };
  const chunk = { candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: "fake" };
  if (stream) return sse(res, [[null, chunk]]);
  json(res, chunk);
}

/** Starts the fake model. Resolves to { url, requests, close }. */
export function startFakeModel(call) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      let body = {};
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        body = { unparsed: text };
      }
      const path = req.url.split("?")[0];
      requests.push({ method: req.method, path, body });
      if (path.endsWith("/messages/count_tokens")) return json(res, { input_tokens: 1000 });
      if (path.endsWith("/messages")) return anthropic(body, res, call);
      if (path.endsWith("/responses")) return responses(body, res, call);
      if (path.includes(":streamGenerateContent")) return gemini(body, res, call, true);
      if (path.includes(":generateContent")) return gemini(body, res, call, false);
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
        close: () => new Promise((done) => server.close(done)),
      }),
    ),
  );
}
