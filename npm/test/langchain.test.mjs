// The LangChain.js middleware in the real `langchain` (pinned): `createAgent` with a chat model
// of the test's own on LangChain's BaseChatModel (LangChain.js's fake chat models answer with
// the same message every call, so none calls a tool once and then stops). A tool returns the
// 125 KB listing, and the ToolMessage the model gets on its next call is within its limit and
// ends with the note; an error keeps its tail, and text blocks are capped together.

import assert from "node:assert/strict";
import { execSync } from "node:child_process";
import { test } from "node:test";

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent, toolErrorMiddleware } from "langchain";
import { count, Limits } from "tool-output-cap";
import { toolOutputCapMiddleware } from "tool-output-cap/langchain";
import { anthropicTokens, mediaNote, pngSize, screenshots } from "./shapes.mjs";

const NOTE = /truncated: \d+ tokens dropped, refine your query(: .*)?$/;
const listing = execSync("find /usr -type f | head -c 125000", { maxBuffer: 1 << 26 }).toString();

/** Calls `name` once, then answers; keeps the ToolMessages it was sent. */
class OneCallModel extends BaseChatModel {
  constructor(name) {
    super({});
    this.name = name;
    this.seen = [];
  }
  _llmType() {
    return "one-call";
  }
  bindTools() {
    return this;
  }
  async _generate(messages) {
    const results = messages.filter((m) => ToolMessage.isInstance(m));
    this.seen.push(results);
    const message = results.length
      ? new AIMessage("done")
      : new AIMessage({ content: "", tool_calls: [{ name: this.name, args: {}, id: "call_1", type: "tool_call" }] });
    return { generations: [{ text: "", message }] };
  }
}

async function run(tools, name, middleware) {
  const model = new OneCallModel(name);
  const agent = createAgent({ model, tools, middleware });
  await agent.invoke({ messages: [{ role: "user", content: "List the files." }] });
  return model.seen.at(-1)[0];
}

test("a tool's result reaches the model capped", async () => {
  const glob = tool(async () => listing, { name: "glob", description: "list files" });
  const message = await run([glob], "glob", [toolOutputCapMiddleware(new Limits({ perTool: { glob: 3000 } }))]);
  assert.ok(count(message.content) <= 3000, `${count(message.content)} tokens`);
  assert.match(message.content, NOTE);
  const whole = await run([glob], "glob", []);
  assert.equal(whole.content, listing);
});

test("an error keeps its tail, and text blocks are capped together", async () => {
  const log = `${listing}\nerror: the last line says what failed`;
  const failed = tool(async (_, config) => new ToolMessage({ content: log, status: "error", tool_call_id: config.toolCall.id }), { name: "build", description: "build" });
  const error = await run([failed], "build", [toolOutputCapMiddleware()]);
  assert.equal(error.status, "error");
  assert.ok(count(error.content) <= 5000);
  assert.ok(error.content.replace(NOTE, "").endsWith("error: the last line says what failed\n"));
  // An error the tool throws: without middleware the agent hands it to the model and goes on;
  // with this one alone too, its message capped, keeping its tail.
  const thrown = tool(async () => { throw new Error(log); }, { name: "build", description: "build" });
  const raw = await run([thrown], "build", []);
  assert.equal(raw.status, "error");
  assert.ok(raw.content.startsWith("Error: ") && count(raw.content) > 5000);
  const capped = await run([thrown], "build", [toolOutputCapMiddleware()]);
  assert.equal(capped.status, "error");
  assert.ok(count(capped.content) <= 5000, `${count(capped.content)} tokens`);
  assert.match(capped.content, NOTE);
  assert.ok(log.endsWith(capped.content.replace(NOTE, "").replace(/\n$/, "")));
  const blocks = tool(async () => [{ type: "text", text: listing }, { type: "text", text: listing }], { name: "read", description: "read" });
  const read = await run([blocks], "read", [toolOutputCapMiddleware()]);
  assert.ok(Array.isArray(read.content) && read.content.length === 1);
  assert.ok(count(read.content[0].text) <= 5000);
  assert.match(read.content[0].text, NOTE);
});

test("the user's error middleware keeps its formatting in either order", async () => {
  const log = `${listing}\nerror: the last line says what failed`;
  const thrown = tool(async () => { throw new TypeError(log); }, { name: "build", description: "build" });
  const seen = [];
  const onError = (error) => {
    seen.push(error);
    return error instanceof TypeError ? error.message : undefined;
  };
  for (const order of ["error middleware outside", "error middleware inside"]) {
    seen.length = 0;
    const errors = toolErrorMiddleware({ onError });
    const cap = toolOutputCapMiddleware();
    const middleware = order === "error middleware outside" ? [errors, cap] : [cap, errors];
    const message = await run([thrown], "build", middleware);
    // onError saw the tool's own TypeError, and wrote the message the model read.
    assert.equal(seen.length, 1, order);
    assert.ok(seen[0] instanceof TypeError, order);
    assert.equal(message.status, "error", order);
    assert.ok(count(message.content) <= 5000, `${order}: ${count(message.content)} tokens`);
    assert.match(message.content, NOTE, order);
    assert.ok(log.endsWith(message.content.replace(NOTE, "").replace(/\n$/, "")), order);
    if (order === "error middleware outside") assert.equal(message.content, seen[0].message, "it sees the capped message");
  }
});

test("screenshots are priced with the text, and the last give way", async (t) => {
  const shots = screenshots();
  if (!shots) return t.skip("no screenshots");
  const images = shots.map((shot) => ({ type: "image", data: shot.toString("base64"), mimeType: "image/png" }));
  const shoot = tool(async () => [{ type: "text", text: "ten pages:" }, ...images], { name: "shoot", description: "screenshots" });
  const message = await run([shoot], "shoot", [toolOutputCapMiddleware()]);
  const content = message.content;
  assert.ok(Array.isArray(content), JSON.stringify(content).slice(0, 200));
  const note = content.at(-1);
  const kept = content.slice(1, -1);
  assert.ok(kept.length > 0 && kept.length < 10, `${kept.length} kept`);
  const priced = kept.reduce((sum, image) => sum + anthropicTokens(pngSize(Buffer.from(image.data, "base64"))), 0);
  assert.ok(count("ten pages:") + priced + count(note.text) <= 5000, `${priced} tokens of images`);
  const before = shots.reduce((sum, bytes) => sum + anthropicTokens(pngSize(bytes)), 0);
  assert.deepEqual(mediaNote(note.text), [before - priced, 10 - kept.length, 10]);
});
