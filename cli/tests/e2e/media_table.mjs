// What reached the model, before and after, of each tool result that carries more than text
// blocks: through the real `tool-output-cap mcp` (the MCP SDK client, a server of the SDK) and
// `tool-output-cap gateway` (in front of fake_model.mjs, which records what it got), and what
// `check --request` says. Each result is priced as its provider prices it: text with
// o200k_base (`tool-output-cap count`), images from their header (pictures.mjs). Prints the
// table, and fails when anything after is over its limit.
//
//   node cli/tests/e2e/media_table.mjs PARTS BINARY

import assert from "node:assert/strict";
import { execFileSync, execSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { startFakeModel } from "./fake_model.mjs";
import { anthropicTokens, imageSize, openaiTileTokens, openPng, pagePng } from "./pictures.mjs";

const [parts, binary] = process.argv.slice(2, 4).map((arg) => path.resolve(arg));
const require = createRequire(path.join(parts, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const here = path.dirname(fileURLToPath(import.meta.url));
// Each text counted once: a history sent again holds the same texts.
const counted = new Map();
const count = (text) => {
  if (!counted.has(text)) counted.set(text, Number(execFileSync(binary, ["count"], { input: text, maxBuffer: 1 << 30 })));
  return counted.get(text);
};
const NOTE = /truncated: \d+ tokens dropped/;

const scratch = mkdtempSync(path.join(tmpdir(), "tool-output-cap-media-table-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));
const listing = execSync("find /usr -type f | head -c 758000", { maxBuffer: 1 << 26 }).toString();
const listingFile = path.join(scratch, "listing.txt");
writeFileSync(listingFile, listing);
// Screenshots of 1280 x 800, each of its own bytes.
const shots = Array.from({ length: 24 }, (_, i) => pagePng(1280, 800, i + 1));
const shotFiles = shots.slice(0, 10).map((png, i) => {
  const file = path.join(scratch, `page-${i}.png`);
  writeFileSync(file, png);
  return file;
});
const b64 = (png) => png.toString("base64");

/**
 * What a tool result costs, as each API holds it: its strings of text (those of documents, search
 * results and resources among them), and its images at `price`, each opened as a PNG. Whether a
 * note is among its texts.
 */
function priced(content, price = anthropicTokens) {
  const texts = [];
  let images = 0;
  const walk = (value) => {
    if (typeof value === "string") return texts.push(value);
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== "object") return;
    const data = value.type === "image" ? (value.data ?? value.source?.data) : value.type === "input_image" ? value.image_url?.split(",")[1] : undefined;
    if (data !== undefined) {
      const bytes = Buffer.from(data, "base64");
      openPng(bytes);
      images += price(imageSize(bytes));
      return;
    }
    // The fields that carry a block's text (a search result's `source` is its URL).
    for (const [key, inner] of Object.entries(value)) {
      if (["text", "data", "content", "output", "resource"].includes(key) || (key === "source" && typeof inner === "object")) walk(inner);
    }
  };
  walk(content);
  return { tokens: texts.reduce((sum, text) => sum + count(text), images), noted: texts.some((text) => NOTE.test(text)) };
}

/** The result of `tool` of the media server, direct and through `tool-output-cap mcp`. */
async function mcpResult(tool, proxied) {
  const server = [path.join(here, "media_server.mjs"), parts, listingFile, ...shotFiles];
  const [command, args] = proxied ? [binary, ["mcp", "--", process.execPath, ...server]] : [process.execPath, server];
  const client = new Client({ name: "tool-output-cap-e2e", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
  try {
    return (await client.callTool({ name: tool, arguments: {} }, undefined, { timeout: 300_000 })).content;
  } finally {
    await client.close();
  }
}

/** A gateway in front of a fake model, with `flags`: `send(path, body)` gives the body the model got. */
async function gateway(flags = []) {
  const model = await startFakeModel([]);
  const child = spawn(binary, ["gateway", "--upstream", model.url, "--listen", "127.0.0.1:0", ...flags], { stdio: ["ignore", "ignore", "pipe"] });
  let said = "";
  const url = await new Promise((resolve) =>
    child.stderr.on("data", (data) => {
      said += data;
      resolve(String(data).match(/http:\/\/127\.0\.0\.1:\d+/)?.[0]);
    }),
  );
  return {
    said: () => said,
    async send(route, body) {
      const answer = await fetch(`${url}${route}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "sk-e2e", authorization: "Bearer sk-e2e" }, body: JSON.stringify(body) });
      assert.equal(answer.status, 200, await answer.text());
      return model.requests.at(-1).body;
    },
    async close() {
      child.kill("SIGTERM");
      await model.close();
    },
  };
}

/** An Anthropic request whose one result, of `tool`, is `content`. */
const anthropic = (tool, content) => ({
  model: "claude-sonnet-4-5",
  max_tokens: 100,
  messages: [
    { role: "user", content: "Go on." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: tool, input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content }] },
  ],
});
const anthropicResult = (body) => body.messages[2].content[0].content;
const image = (png) => ({ type: "image", source: { type: "base64", media_type: "image/png", data: b64(png) } });

const rows = [];
const row = (what, where, before, after, limit) => {
  assert.ok(after.tokens <= limit, `${what}: ${after.tokens} tokens reached the model, over ${limit}`);
  assert.ok(after.noted, `${what}: the note`);
  rows.push(`| ${what} | ${where} | ${before.tokens.toLocaleString("en")} | ${after.tokens.toLocaleString("en")}, with the note |`);
};

row("an MCP embedded `resource` with `text` (a 758 KB listing)", "`mcp`", priced(await mcpResult("read_listing", false)), priced(await mcpResult("read_listing", true)), 5000);
row("ten 1280x800 PNG screenshots in one result", "`mcp`", priced(await mcpResult("screenshots", false)), priced(await mcpResult("screenshots", true)), 5000);

const plain = await gateway();
try {
  const cases = [
    ["an Anthropic `document` with a text source, in a `tool_result`", "Read", [{ type: "document", source: { type: "text", media_type: "text/plain", data: listing } }]],
    ["an Anthropic `search_result`", "search", [{ type: "search_result", source: "https://example.com/files", title: "files", content: [{ type: "text", text: listing }] }]],
    ["ten 1280x800 PNG screenshots in one result", "screenshot", shots.slice(0, 10).map(image)],
  ];
  for (const [what, tool, content] of cases) {
    const body = anthropic(tool, content);
    row(what, "`gateway`", priced(anthropicResult(body)), priced(anthropicResult(await plain.send("/v1/messages", body))), 5000);
  }
  // The same request through a gateway started anew, with none of the first one's cuts: the
  // same bytes, so that the provider's prompt cache keeps hitting.
  const again = await gateway();
  try {
    const body = anthropic("screenshot", shots.slice(0, 10).map(image));
    const [first, second] = [await plain.send("/v1/messages", body), await again.send("/v1/messages", body)];
    assert.equal(JSON.stringify(second), JSON.stringify(first), "a gateway started anew sends the same bytes");
  } finally {
    await again.close();
  }
  const inputImages = shots.slice(0, 8).map((png) => ({ type: "input_image", detail: "high", image_url: `data:image/png;base64,${b64(png)}` }));
  const responses = { model: "gpt-4o", input: [
    { type: "function_call", call_id: "call_1", name: "screenshot", arguments: "{}" },
    { type: "function_call_output", call_id: "call_1", output: inputImages },
  ] };
  const sent = await plain.send("/v1/responses", responses);
  row("eight screenshots as Responses `input_image`", "`gateway`", priced(inputImages, openaiTileTokens), priced(sent.input[1].output, openaiTileTokens), 5000);
} finally {
  await plain.close();
}

// A screenshot every turn for 24 turns, the uncut history sent again each turn.
const budget = await gateway(["--max-tokens-per-request", "12000"]);
try {
  const messages = [{ role: "user", content: "Check the pages." }];
  let [before, after, steps, previous] = [0, 0, 0, null];
  for (let turn = 0; turn < 24; turn++) {
    messages.push({ role: "assistant", content: [{ type: "tool_use", id: `toolu_${turn}`, name: "screenshot", input: {} }] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${turn}`, content: [{ type: "text", text: `page ${turn}` }, image(shots[turn])] }] });
    const body = { model: "claude-sonnet-4-5", max_tokens: 100, messages };
    const results = (b) => b.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((block) => block.type === "tool_result");
    const sent = await budget.send("/v1/messages", body).catch((error) => {
      throw new Error(`turn ${turn}: ${error.cause?.code ?? error.message}; the gateway said: ${budget.said().slice(-3000)}`);
    });
    const tokens = results(sent).reduce((sum, result) => sum + priced(result.content).tokens, 0);
    assert.ok(tokens <= 12_000, `turn ${turn}: ${tokens} tokens of tool results`);
    // The history the model got last turn is the start of this turn's, but at a step.
    const sentMessages = sent.messages.map((m) => JSON.stringify(m));
    if (previous && previous.some((m, i) => m !== sentMessages[i])) steps += 1;
    previous = sentMessages;
    [before, after] = [results(body).reduce((sum, result) => sum + priced(result.content).tokens, 0), tokens];
  }
  assert.ok(steps <= 8, `the history's start moved on ${steps} of 24 turns`);
  rows.push(`| a screenshot every turn for 24 turns, \`--max-tokens-per-request 12000\` | \`gateway\` | ${before.toLocaleString("en")} in the last request | ${after.toLocaleString("en")}; the start of the history moved on ${steps} of 23 turns |`);
} finally {
  await budget.close();
}

// What `check --request` says of a request of ten screenshots.
const recorded = path.join(scratch, "request.json");
writeFileSync(recorded, JSON.stringify(anthropic("screenshot", shots.slice(0, 10).map(image))));
const said = execFileSync(binary, ["check", "--request", recorded], { encoding: "utf8" });
assert.match(said, /image/, said);

console.log("| what the tool returned | through | before: tokens that reached the model | after |");
console.log("| --- | --- | --- | --- |");
console.log(rows.join("\n"));
console.log(`\ncheck --request on ten screenshots:\n${said}`);
