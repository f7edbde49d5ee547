// The AI SDK adapter in the real `ai` (pinned), with its own MockLanguageModelV3: a tool returns
// the 125 KB listing, and the tool result the model gets on its next call is within its limit
// and ends with the note; a tool's own toModelOutput, JSON, text parts and errors too, and the
// tools of a real MCP server through @ai-sdk/mcp.

import assert from "node:assert/strict";
import { execSync } from "node:child_process";
import { test } from "node:test";

import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport as StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { createRequire } from "node:module";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { count, Limits } from "tool-output-cap";
import { capTools } from "tool-output-cap/ai-sdk";
import { anthropicTokens, mediaNote, NO_FIT, pngSize, screenshots } from "./shapes.mjs";

const NOTE = /truncated: \d+ tokens dropped, refine your query(: .*)?$/;
const listing = execSync("find /usr -type f | head -c 125000", { maxBuffer: 1 << 26 }).toString();
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** Runs `tools` with a model that calls `name` once, then answers; the tool result it got. */
async function run(tools, name) {
  const model = new MockLanguageModelV3({
    doGenerate: [
      { content: [{ type: "tool-call", toolCallId: "call-1", toolName: name, input: "{}" }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
      { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
    ],
  });
  await generateText({ model, tools, prompt: "List the files.", stopWhen: stepCountIs(3) });
  const prompt = model.doGenerateCalls[1].prompt;
  return prompt.flatMap((message) => (message.role === "tool" ? message.content : [])).find((part) => part.type === "tool-result").output;
}

const schema = jsonSchema({ type: "object", properties: {} });

test("a tool's text output reaches the model capped", async () => {
  const tools = capTools({ glob: tool({ inputSchema: schema, execute: async () => listing }) }, new Limits({ perTool: { glob: 3000 } }));
  const output = await run(tools, "glob");
  assert.equal(output.type, "text");
  assert.ok(count(output.value) <= 3000, `${count(output.value)} tokens`);
  assert.match(output.value, NOTE);
  // Without the adapter, the whole listing.
  const whole = await run({ glob: tool({ inputSchema: schema, execute: async () => listing }) }, "glob");
  assert.equal(whole.value, listing);
});

test("JSON stays JSON of the same shape, and a tool's own toModelOutput runs first", async () => {
  const files = listing.split("\n");
  const json = await run(capTools({ search: tool({ inputSchema: schema, execute: async () => ({ files, total: files.length }) }) }), "search");
  assert.equal(json.type, "json");
  assert.ok(Array.isArray(json.value.files) && json.value.files.length < files.length && json.value.total === files.length);
  assert.ok(count(JSON.stringify(json.value)) <= 5000);
  // As an MCP tool of @ai-sdk/mcp gives its result: content parts, an image among them.
  const image = { type: "image-data", data: "iVBORw0KGgo=", mediaType: "image/png" };
  const mcp = tool({
    inputSchema: schema,
    execute: async () => listing,
    toModelOutput: ({ output }) => ({ type: "content", value: [{ type: "text", text: output }, image, { type: "text", text: output }] }),
  });
  const content = await run(capTools({ read: mcp }), "read");
  assert.equal(content.type, "content");
  // The second text part wholly cut, the image kept (the SDK gives it as file data).
  assert.equal(content.value.length, 2);
  assert.equal(content.value[0].type, "text");
  assert.notEqual(content.value[1].type, "text");
  assert.ok(count(content.value[0].text) <= 5000);
  assert.match(content.value[0].text, NOTE);
});

test("a thrown error keeps its tail", async () => {
  const log = `${listing}\nerror: the last line says what failed`;
  const tools = capTools({ build: tool({ inputSchema: schema, execute: async () => { throw new Error(log); } }) });
  const output = await run(tools, "build");
  assert.equal(output.type, "error-text");
  assert.ok(count(output.value) <= 5000);
  assert.match(output.value, NOTE);
  assert.ok(output.value.replace(NOTE, "").endsWith("error: the last line says what failed\n"));
});

test("what the model reads of a thrown error, `Error: ` included, is within the limit", async () => {
  // Dense text: about one token for every two characters.
  const dense = Array.from({ length: 40_000 }, (_, i) => ((i * 7919) % 65_521).toString(36)).join("");
  for (const maxTokens of [1000, 5000]) {
    const tools = capTools({ build: tool({ inputSchema: schema, execute: async () => { throw new Error(dense); } }) }, new Limits({ defaultMaxTokens: maxTokens }));
    const output = await run(tools, "build");
    assert.equal(output.type, "error-text");
    assert.ok(output.value.startsWith("Error: "), output.value.slice(0, 20));
    assert.ok(count(output.value) <= maxTokens, `${count(output.value)} tokens under ${maxTokens}`);
    assert.match(output.value, NOTE);
  }
});

test("a structure no cut fits reaches the model as text within its limit", async () => {
  const limits = new Limits({ defaultMaxTokens: 100 });
  for (const [shape, value] of Object.entries(NO_FIT)) {
    const output = await run(capTools({ stats: tool({ inputSchema: schema, execute: async () => value }) }, limits), "stats");
    assert.equal(output.type, "text", shape);
    assert.ok(count(output.value) <= 100, `${shape}: ${count(output.value)} tokens`);
    assert.match(output.value, NOTE, shape);
    assert.ok(JSON.stringify(value).startsWith(output.value.replace(NOTE, "").trimEnd()), shape);
  }
});

test("an MCP server's tools through @ai-sdk/mcp", async () => {
  const server = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
  const client = await createMCPClient({ transport: new StdioMCPTransport({ command: process.execPath, args: [server, "/usr/share"] }) });
  try {
    const tools = await client.tools();
    const search = tools.search_files;
    const model = new MockLanguageModelV3({
      doGenerate: [
        { content: [{ type: "tool-call", toolCallId: "call-1", toolName: "search_files", input: JSON.stringify({ path: "/usr/share", pattern: "**/*" }) }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
        { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
      ],
    });
    await generateText({ model, tools: capTools({ search_files: search }), prompt: "List the files.", stopWhen: stepCountIs(3) });
    const output = model.doGenerateCalls[1].prompt.flatMap((m) => (m.role === "tool" ? m.content : [])).find((p) => p.type === "tool-result").output;
    const text = output.type === "content" ? output.value.filter((p) => p.type === "text").map((p) => p.text).join("\n") : typeof output.value === "string" ? output.value : JSON.stringify(output.value);
    assert.ok(count(text) <= 5000, `${output.type}: ${count(text)} tokens`);
    assert.match(text.replace(/"\}$/, ""), NOTE);
  } finally {
    await client.close();
  }
});

test("screenshots are priced with the text, and the last give way", async (t) => {
  const shots = screenshots();
  if (!shots) return t.skip("no screenshots");
  // As a browser tool gives them: image-data parts, and one as a file part of bytes.
  const parts = [{ type: "text", text: "ten pages:" }, { type: "file", data: { type: "data", data: new Uint8Array(shots[0]) }, mediaType: "image/png" }];
  parts.push(...shots.slice(1).map((shot) => ({ type: "image-data", data: shot.toString("base64"), mediaType: "image/png" })));
  const shoot = tool({ inputSchema: schema, execute: async () => "ten pages", toModelOutput: () => ({ type: "content", value: parts }) });
  const content = await run(capTools({ shoot }), "shoot");
  assert.equal(content.type, "content");
  const [text, ...rest] = content.value;
  assert.equal(text.text, "ten pages:");
  const note = rest.pop();
  const kept = rest.map((part) => Buffer.from(part.type === "file" ? part.data.data : part.data, "base64"));
  assert.ok(kept.length > 0 && kept.length < 10, `${kept.length} kept`);
  const priced = kept.reduce((sum, bytes) => sum + anthropicTokens(pngSize(bytes)), 0);
  assert.ok(count("ten pages:") + priced + count(note.text) <= 5000, `${priced} tokens of images`);
  const before = shots.reduce((sum, bytes) => sum + anthropicTokens(pngSize(bytes)), 0);
  assert.deepEqual(mediaNote(note.text), [before - priced, 10 - kept.length, 10]);
});
