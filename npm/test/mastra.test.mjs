// The Mastra processor in the real `@mastra/core` (pinned), with Mastra's own test model
// (MastraLanguageModelV2Mock): a tool returns the 125 KB listing, and the tool result the model
// gets on its next call is within its limit and ends with the note.

import assert from "node:assert/strict";
import { execSync } from "node:child_process";
import { test } from "node:test";

import { Agent } from "@mastra/core/agent";
import { MastraLanguageModelV2Mock } from "@mastra/core/test-utils/llm-mock";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import { count, Limits } from "tool-output-cap";
import { ToolOutputCapProcessor } from "tool-output-cap/mastra";
import { anthropicTokens, mediaNote, NO_FIT, pngSize, screenshots } from "./shapes.mjs";

const NOTE = /truncated: \d+ tokens dropped, refine your query(: .*)?$/;
const listing = execSync("find /usr -type f | head -c 125000", { maxBuffer: 1 << 26 }).toString();
const usage = { inputTokens: 10, outputTokens: 1, totalTokens: 11 };

/** Runs an agent whose model calls `name` once, then answers; the tool output it got. */
async function run(tool, outputProcessors) {
  const answers = [
    { content: [{ type: "tool-call", toolCallId: "call-1", toolName: tool.id, input: "{}" }], finishReason: "tool-calls" },
    { content: [{ type: "text", text: "done" }], finishReason: "stop" },
  ];
  const model = new MastraLanguageModelV2Mock({ doGenerate: async () => ({ ...(answers.shift() ?? answers.at(-1)), usage, warnings: [] }) });
  const agent = new Agent({ id: "files", name: "files", instructions: "List files.", model, tools: { [tool.id]: tool }, outputProcessors });
  await agent.generate("List the files.", { maxSteps: 3 });
  const prompt = model.doGenerateCalls[1].prompt;
  return prompt.flatMap((message) => (message.role === "tool" ? message.content : [])).find((part) => part.type === "tool-result").output;
}

test("a tool's result reaches the model capped", async () => {
  const glob = createTool({ id: "glob", description: "list files", inputSchema: z.object({}), execute: async () => listing });
  const output = await run(glob, [new ToolOutputCapProcessor(new Limits({ perTool: { glob: 3000 } }))]);
  const text = typeof output.value === "string" ? output.value : JSON.stringify(output.value);
  assert.ok(count(text) <= 3000, `${count(text)} tokens`);
  assert.match(text, NOTE);
  const whole = await run(glob, []);
  assert.ok(count(typeof whole.value === "string" ? whole.value : JSON.stringify(whole.value)) > 40_000);
});

test("a JSON result is capped to JSON of the same shape", async () => {
  const files = listing.split("\n");
  const search = createTool({ id: "search", description: "search", inputSchema: z.object({}), execute: async () => ({ files, total: files.length }) });
  const output = await run(search, [new ToolOutputCapProcessor()]);
  assert.equal(output.type, "json");
  assert.ok(output.value.files.length < files.length && output.value.total === files.length);
  assert.ok(count(JSON.stringify(output.value)) <= 5000);
});

test("a structure no cut fits reaches the model as text within its limit", async () => {
  const processor = new ToolOutputCapProcessor(new Limits({ defaultMaxTokens: 100 }));
  for (const [shape, value] of Object.entries(NO_FIT)) {
    const stats = createTool({ id: "stats", description: "stats", inputSchema: z.object({}), execute: async () => value });
    const output = await run(stats, [processor]);
    const text = typeof output.value === "string" ? output.value : JSON.stringify(output.value);
    assert.ok(count(text) <= 100, `${shape}: ${output.type}, ${count(text)} tokens`);
    assert.match(text, NOTE, shape);
  }
});

test("an MCP tool's screenshots are priced with its text, and the last give way", async (t) => {
  const shots = screenshots();
  if (!shots) return t.skip("no screenshots");
  // As Mastra's MCP client gives a server's result: its content blocks.
  const images = shots.map((shot) => ({ type: "image", data: shot.toString("base64"), mimeType: "image/png" }));
  const result = { content: [{ type: "text", text: "ten pages:" }, ...images] };
  const shoot = createTool({ id: "shoot", description: "screenshots", inputSchema: z.object({}), execute: async () => result });
  const output = await run(shoot, [new ToolOutputCapProcessor()]);
  // Mastra hands the model an MCP result as content parts: its images as image-data.
  assert.equal(output.type, "content", JSON.stringify(output).slice(0, 200));
  const content = output.value;
  const note = content.at(-1);
  const kept = content.slice(1, -1);
  assert.ok(kept.length > 0 && kept.length < 10, `${kept.length} kept`);
  assert.ok(kept.every((part) => part.type === "image-data"));
  const priced = kept.reduce((sum, image) => sum + anthropicTokens(pngSize(Buffer.from(image.data, "base64"))), 0);
  assert.ok(count("ten pages:") + priced + count(note.text) <= 5000, `${priced} tokens of images`);
  assert.equal(mediaNote(note.text)[2], 10);
});
