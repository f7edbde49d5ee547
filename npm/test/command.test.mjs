// The command from npm: the `tool-output-cap` the package installs is the crate's own, run in the
// addon, with every subcommand; `mcp` in front of MCP's filesystem server with the SDK's client;
// SIGTERM ending it and its server; and `npx` on the packed tarball ($TOOL_OUTPUT_CAP_TARBALL).

import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { count } from "tool-output-cap";

const bin = path.resolve("node_modules/.bin/tool-output-cap");
const server = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const NOTE = /\ntruncated: \d+ tokens dropped, refine your query$/;
const listing = execFileSync("sh", ["-c", "find /usr -type f | head -c 125000"], { maxBuffer: 1 << 26 }).toString();
const command = (args, input) => spawnSync(bin, args, { input, encoding: "utf8", maxBuffer: 1 << 26 });

test("--version, cap, count and run", () => {
  const version = command(["--version"]);
  assert.equal(version.status, 0);
  assert.equal(version.stdout.trim(), "tool-output-cap 0.1.0");
  assert.equal(Number(command(["count"], listing).stdout), count(listing));
  const capped = command(["cap", "--max-tokens", "3000"], listing);
  assert.equal(capped.status, 0);
  assert.ok(count(capped.stdout.trimEnd()) <= 3000);
  assert.match(capped.stdout.trimEnd(), NOTE);
  const run = command(["run", "--max-tokens", "2000", "--", "sh", "-c", "find /usr -type f | head -c 125000; exit 3"]);
  assert.equal(run.status, 3, "run exits with the command's code");
  assert.ok(count(run.stdout.trimEnd()) <= 2000);
  const bad = command(["cap", "--keep", "middle"], "x");
  assert.equal(bad.status, 2, "a bad flag is a usage error, as the binary's");
  assert.match(bad.stderr, /middle/);
});

test("mcp in front of the filesystem server, with the SDK's client", async () => {
  const client = new Client({ name: "tool-output-cap-npm", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: bin, args: ["mcp", "--", process.execPath, server, "/usr/share"], stderr: "inherit" }));
  try {
    await client.listTools();
    const result = await client.callTool({ name: "search_files", arguments: { path: "/usr/share", pattern: "**/*" } }, undefined, { timeout: 600_000 });
    const text = result.content.map((block) => block.text).join("\n");
    assert.ok(count(text) <= 5000, `${count(text)} tokens`);
    assert.match(text, NOTE);
  } finally {
    await client.close();
  }
});

test("SIGTERM ends the proxy and its server within 4 s", async () => {
  const proxy = spawn(bin, ["mcp", "--", process.execPath, server, "/usr/share"], { stdio: ["pipe", "pipe", "inherit"] });
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "npm", version: "1" } } };
  const exited = new Promise((resolve) => proxy.on("exit", (...args) => resolve(args)));
  try {
    proxy.stdin.write(`${JSON.stringify(initialize)}\n`);
    await new Promise((resolve) => proxy.stdout.once("data", resolve));
    const children = () => spawnSync("pgrep", ["-P", String(proxy.pid)], { encoding: "utf8" }).stdout.trim();
    assert.notEqual(children(), "", "the server runs under the proxy");
    const started = performance.now();
    proxy.kill("SIGTERM");
    const [code, signal] = await exited;
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 4000, `${elapsed.toFixed(0)} ms`);
    assert.ok(code !== null || signal !== null);
    assert.equal(spawnSync("pgrep", ["-f", `${server} /usr/share`]).status, 1, "no server outlives the proxy");
  } finally {
    // A failed check leaves nothing running: the proxy, and with it its server.
    if (proxy.exitCode === null && proxy.signalCode === null) {
      proxy.kill("SIGKILL");
      await exited;
    }
  }
});

test("npx on the packed tarball", (t) => {
  const tarball = process.env.TOOL_OUTPUT_CAP_TARBALL;
  if (!tarball) return t.skip("TOOL_OUTPUT_CAP_TARBALL is not set (.ci/run sets it to the packed tarball)");
  const npx = spawnSync("npx", ["-y", `file:${tarball}`, "--version"], { encoding: "utf8" });
  assert.equal(npx.status, 0, npx.stderr);
  assert.equal(npx.stdout.trim(), "tool-output-cap 0.1.0");
  const capped = spawnSync("npx", ["-y", `file:${tarball}`, "cap", "--max-tokens", "1000"], { input: listing, encoding: "utf8", maxBuffer: 1 << 26 });
  assert.ok(count(capped.stdout.trimEnd()) <= 1000);
});
