// Images from real parts, priced and capped: Claude Code reading screenshots with its own Read
// tool through `tool-output-cap gateway`; the official filesystem server's read_media_file, and
// Playwright MCP's and Chrome DevTools MCP's screenshots of a page in the system's Chromium,
// through `tool-output-cap mcp`, driven by the MCP SDK client. Under a limit of 1000 tokens, each
// image the model gets is a PNG that opens, priced from its header at Anthropic's rule within
// the limit with the text, and the note says what was scaled; the same history is the same
// bytes on the next turn.
//
//   node cli/tests/e2e/images.mjs PARTS BINARY
//
// PARTS is the folder where .ci/run installed the hosts and servers, BINARY the built
// tool-output-cap. A part that is not installed (Claude Code, Chromium) is skipped, with a line
// saying so.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

import { startFakeModel } from "./fake_model.mjs";
import { bin, claudeEnv, runHost } from "./host_setup.mjs";
import { anthropicTokens, imageSize, openPng } from "./pictures.mjs";

const [parts, binary] = process.argv.slice(2, 4).map((arg) => path.resolve(arg));
const require = createRequire(path.join(parts, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const LIMIT = 1000;
const CHROMIUM = "/usr/bin/chromium";
// The note that media gave way or were scaled: `(3 of 10 images; 7 scaled to 1024 px)`, `(1 image scaled to 1024 px)`.
const NOTE = /^truncated: \d+ tokens dropped \((?:\d+ of \d+ images)?(?:; )?(?:(\d+) (?:images? )?scaled to (\d+) px)?\), refine your query$/;
const count = (text) => Number(execFileSync(binary, ["count"], { input: text }));

/** The screenshots of the Rust toolchain's docs of 1280 px wide or more: over the limit whole, within it at 1024 px. */
function screenshots() {
  const folder = path.join(execFileSync("rustc", ["--print", "sysroot"], { encoding: "utf8" }).trim(), "share/doc/rust/html");
  const files = existsSync(folder) ? readdirSync(folder, { recursive: true }).filter((name) => name.endsWith(".png")).sort() : [];
  return files
    .map((name) => path.join(folder, name))
    .filter((file) => {
      const bytes = readFileSync(file);
      return bytes.toString("latin1", 1, 4) === "PNG" && imageSize(bytes)[0] >= 1280;
    });
}

/**
 * What a list of blocks (MCP's, or Anthropic's) costs: its images at Anthropic's price, each
 * read from its header, and its text blocks, each counted on its own as a provider counts them;
 * and the note, if there is one.
 */
function priced(blocks) {
  let tokens = 0;
  const texts = [];
  const sizes = [];
  for (const block of blocks) {
    const data = block.data ?? block.source?.data;
    if (block.type === "image") {
      const bytes = Buffer.from(data, "base64");
      openPng(bytes);
      sizes.push(imageSize(bytes));
      tokens += anthropicTokens(sizes.at(-1));
    } else if (block.type === "text") texts.push(block.text);
  }
  const note = texts.map((text) => NOTE.exec(text)).find(Boolean);
  return { tokens: texts.reduce((sum, text) => sum + count(text), tokens), sizes, note };
}

let [passed, failed] = [0, 0];
async function check(name, body) {
  try {
    const said = await body();
    if (said?.skipped) console.log(`skipped ${name}: ${said.skipped}`);
    else {
      console.log(`${name}: ${said}`);
      passed += 1;
    }
  } catch (error) {
    console.log(`${name}: FAILED: ${error.stack}`);
    failed += 1;
  }
}

const shots = screenshots();

await check("Claude Code reads screenshots through the gateway", async () => {
  if (!existsSync(bin(parts, "claude"))) return { skipped: `${bin(parts, "claude")} is not installed (.ci/run installs it)` };
  if (shots.length < 2) return { skipped: "fewer than two screenshots of 1280 px wide or more in rustc's docs" };
  const home = mkdtempSync(path.join(tmpdir(), "tool-output-cap-images-"));
  try {
    const files = shots.slice(0, 2).map((file, i) => {
      copyFileSync(file, path.join(home, `page-${i}.png`));
      return path.join(home, `page-${i}.png`);
    });
    const calls = files.map((file_path) => ({ tool: "Read", args: { file_path } }));
    const args = ["-p", "Look at the pages.", "--allowedTools", "Read", "--output-format", "json", "--no-session-persistence"];
    const results = async (line) => {
      const model = await startFakeModel(calls);
      try {
        const run = await runHost(line[0], [...line.slice(1), ...args], { env: claudeEnv(home, model.url), cwd: home });
        assert.equal(run.status, 0, run.stderr.slice(-2000));
        return model.requests.filter((r) => r.path.endsWith("/messages")).map((r) =>
          r.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === "tool_result"));
      } finally {
        await model.close();
      }
    };
    const direct = (await results([bin(parts, "claude")])).at(-1);
    const images = direct.map((result) => priced(result.content));
    assert.ok(images.every((image) => image.sizes.length === 1 && image.tokens > LIMIT), `direct, an image over ${LIMIT} tokens in each result`);
    const through = await results([binary, "gateway", "--max-tokens", String(LIMIT), "--", bin(parts, "claude")]);
    const [first, last] = [through.find((results) => results.length === 1), through.at(-1)];
    const capped = last.map((result) => priced(result.content));
    for (const image of capped) {
      assert.ok(image.tokens <= LIMIT, `${image.tokens} tokens reached the model`);
      assert.deepEqual(image.note?.slice(1, 3), ["1", "1024"], "scaled to 1024 px, and the note says so");
      assert.equal(Math.max(...image.sizes[0]), 1024);
    }
    const same = JSON.stringify(last[0].content) === JSON.stringify(first[0].content);
    assert.ok(same, `the next turn sends the first result as the same bytes: ${Object.keys(first[0])} then ${Object.keys(last[0])}`);
    return `${images.map((i) => i.tokens).join(" and ")} tokens of images direct; through the gateway ${capped.map((i) => i.tokens).join(" and ")}, each scaled to 1024 px, the same bytes on the next turn`;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

// The servers' folder: Playwright MCP writes each screenshot there too.
const scratch = mkdtempSync(path.join(tmpdir(), "tool-output-cap-images-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

/** A client of `command` through `tool-output-cap mcp --max-tokens LIMIT`. */
async function proxied(command, args) {
  const client = new Client({ name: "tool-output-cap-e2e", version: "1.0.0" });
  const line = ["mcp", "--max-tokens", String(LIMIT), "--", command, ...args];
  const transport = new StdioClientTransport({ command: binary, args: line, cwd: scratch, stderr: "ignore" });
  await client.connect(transport);
  return client;
}

/** Checks a capped MCP result of images: within the limit, each image decoding, the note saying what was scaled. */
function cappedImages(result, what) {
  const image = priced(result.content);
  assert.ok(image.sizes.length >= 1, `${what}: an image stays`);
  assert.ok(image.tokens <= LIMIT, `${what}: ${image.tokens} tokens reached the model`);
  assert.ok(image.note, `${what}: the note: ${JSON.stringify(result.content.filter((b) => b.type === "text"))}`);
  return `${image.sizes.map((s) => s.join("x")).join(", ")}, ${image.tokens} tokens with the note`;
}

await check("the filesystem server's read_media_file through the MCP proxy", async () => {
  if (shots.length < 1) return { skipped: "no screenshot of 1280 px wide or more in rustc's docs" };
  const server = path.join(parts, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
  const folder = path.dirname(shots[0]);
  const client = await proxied(process.execPath, [server, folder]);
  try {
    const call = () => client.callTool({ name: "read_media_file", arguments: { path: shots[0] } });
    const [once, again] = [await call(), await call()];
    assert.deepEqual(once, again, "the same file, the same bytes");
    const whole = anthropicTokens(imageSize(readFileSync(shots[0])));
    return `${path.basename(shots[0])}, ${whole} tokens whole: ${cappedImages(once, "read_media_file")}`;
  } finally {
    await client.close();
  }
});

const call = (client, name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });

/** The browser servers, each with how it takes a screenshot of a page. */
const browsers = [
  {
    name: "Playwright MCP",
    script: "node_modules/@playwright/mcp/cli.js",
    args: ["--headless", "--browser", "chromium", "--executable-path", CHROMIUM, "--no-sandbox", "--isolated", "--viewport-size", "1600,1000"],
    async shoot(client, url) {
      await call(client, "browser_navigate", { url });
      return call(client, "browser_take_screenshot", { type: "png" });
    },
  },
  {
    name: "Chrome DevTools MCP",
    script: "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js",
    args: ["--headless", "--isolated", "--executablePath", CHROMIUM, "--viewport", "1600x1000", "--chromeArg=--no-sandbox", "--no-usage-statistics", "--no-performance-crux"],
    async shoot(client, url) {
      const pages = await call(client, "list_pages", {});
      const pageId = Number(/(\d+): .*\[selected\]/.exec(pages.content[0].text)[1]);
      await call(client, "navigate_page", { pageId, type: "url", url });
      return call(client, "take_screenshot", { pageId, format: "png" });
    },
  },
];
// A page of text, as a data URL: the browsers load it with no server.
const page = `data:text/html,${encodeURIComponent(`<h1>tool-output-cap</h1>${"<p>A line of the page's text, legible at 1024 px.</p>".repeat(40)}`)}`;
for (const browser of browsers) {
  await check(`${browser.name}'s screenshots through the MCP proxy`, async () => {
    if (!existsSync(CHROMIUM)) return { skipped: `${CHROMIUM} is not installed (.ci/run installs Debian's chromium)` };
    const client = await proxied(process.execPath, [path.join(parts, browser.script), ...browser.args]);
    try {
      return cappedImages(await browser.shoot(client, page), browser.name);
    } finally {
      await client.close();
    }
  });
}

console.log(`images: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
