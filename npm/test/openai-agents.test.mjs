// The OpenAI Agents JS adapter in the real `@openai/agents` (pinned), with a Model of the test's
// own and tracing off: a tool returns the 125 KB listing, and the function call result the model
// gets on its next call is within its limit and ends with the note.

import assert from "node:assert/strict";
import { execSync } from "node:child_process";
import { test } from "node:test";

import { Agent, run, setTracingDisabled, tool, Usage } from "@openai/agents";
import { count, Limits } from "tool-output-cap";
import { capTools } from "tool-output-cap/openai-agents";
import { mediaNote, NO_FIT, pngSize, screenshots } from "./shapes.mjs";

setTracingDisabled(true);
const NOTE = /truncated: \d+ tokens dropped, refine your query(: .*)?$/;
const listing = execSync("find /usr -type f | head -c 125000", { maxBuffer: 1 << 26 }).toString();

/** A model that calls `name` once, then answers; it keeps each request's input. */
function model(name) {
  const inputs = [];
  return {
    inputs,
    async getResponse(request) {
      inputs.push(request.input);
      const output = inputs.length === 1
        ? [{ type: "function_call", callId: "call_1", name, arguments: "{}", status: "completed" }]
        : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }];
      return { usage: new Usage(), output, responseId: `resp_${inputs.length}` };
    },
    async *getStreamedResponse() {
      throw new Error("not streamed");
    },
  };
}

async function runWith(tools, name) {
  const fake = model(name);
  await run(new Agent({ name: "files", instructions: "List files.", model: fake, tools }), "List the files.");
  const result = fake.inputs[1].find((item) => item.type === "function_call_result");
  return result.output;
}

const parameters = { type: "object", properties: {}, required: [], additionalProperties: false };

test("a function tool's output reaches the model capped", async () => {
  const glob = tool({ name: "glob", description: "list files", parameters, strict: true, execute: async () => listing });
  const output = await runWith(capTools([glob], new Limits({ perTool: { glob: 3000 } })), "glob");
  const text = typeof output === "string" ? output : output.text;
  assert.ok(count(text) <= 3000, `${count(text)} tokens`);
  assert.match(text, NOTE);
  const whole = await runWith([glob], "glob");
  assert.equal(typeof whole === "string" ? whole : whole.text, listing);
});

test("a JSON value is capped to JSON of the same shape", async () => {
  const files = listing.split("\n");
  const search = tool({ name: "search", description: "search", parameters, strict: true, execute: async () => ({ files, total: files.length }) });
  const output = await runWith(capTools([search]), "search");
  const text = typeof output === "string" ? output : output.text;
  const value = JSON.parse(text);
  assert.ok(value.files.length < files.length && value.total === files.length);
  assert.ok(count(text) <= 5000);
});

test("a structure no cut fits reaches the model as text within its limit", async () => {
  const limits = new Limits({ defaultMaxTokens: 100 });
  for (const [shape, value] of Object.entries(NO_FIT)) {
    const stats = tool({ name: "stats", description: "stats", parameters, strict: true, execute: async () => value });
    const output = await runWith(capTools([stats], limits), "stats");
    const text = typeof output === "string" ? output : output.text;
    assert.ok(count(text) <= 100, `${shape}: ${count(text)} tokens`);
    assert.match(text, NOTE, shape);
  }
});

/**
 * OpenAI's published price of an image for its tile models: within 2048 x 2048, then the short
 * side down to 768; 85, and 170 for each 512-px tile (platform.openai.com, "Images and vision").
 */
function openaiTileTokens([width, height]) {
  let scale = Math.min(1, 2048 / Math.max(width, height));
  let [w, h] = [Math.floor(width * scale), Math.floor(height * scale)];
  scale = Math.min(1, 768 / Math.min(w, h));
  [w, h] = [Math.floor(w * scale), Math.floor(h * scale)];
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

test("screenshots are priced with the text, and the last give way", async (t) => {
  const shots = screenshots();
  if (!shots) return t.skip("no screenshots");
  const images = shots.map((shot) => ({ type: "image", image: { data: new Uint8Array(shot), mediaType: "image/png" }, detail: "high" }));
  const shoot = tool({ name: "shoot", description: "screenshots", parameters, strict: true, execute: async () => [{ type: "text", text: "ten pages:" }, ...images] });
  const output = await runWith(capTools([shoot], new Limits({ imageTokens: "openai" })), "shoot");
  assert.ok(Array.isArray(output), JSON.stringify(output).slice(0, 200));
  const [text, ...rest] = output;
  assert.equal(text.text, "ten pages:");
  const note = rest.pop();
  assert.ok(rest.length > 0 && rest.length < 10, `${rest.length} kept`);
  const priced = rest.reduce((sum, image) => {
    const url = typeof image.image === "string" ? image.image : image.image.url ?? image.image;
    return sum + openaiTileTokens(pngSize(Buffer.from(String(url).split(",")[1], "base64")));
  }, 0);
  assert.ok(count("ten pages:") + priced + count(note.text) <= 5000, `${priced} tokens of images`);
  assert.equal(mediaNote(note.text)[2], 10);
});
