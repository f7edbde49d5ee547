// A remote MCP server through `tool-output-cap mcp --url URL`, the stdio bridge, and through
// `tool-output-cap mcp --listen ADDRESS --url URL`, the reverse proxy: the official
// `@modelcontextprotocol/server-everything` in its Streamable HTTP mode, at the version pinned
// in package.json, driven through each by the official TypeScript SDK client and by the Python
// SDK's (`remote_client.py`), and by Claude Code (its `mcp add` lines of cli/README.md, against
// the fake model API), and compared with the TypeScript client connected to the server
// directly. The `echo` of a 500 KB listing comes back within the limit with the note; every
// other tool's result and the tool list are as they are without the proxy.
//
//   node cli/tests/e2e/remote.mjs PARTS BINARY [PYTHON]
//
// PARTS is the folder where .ci/run installed the packages, BINARY the built tool-output-cap,
// PYTHON an interpreter with the `mcp` package (.ci/run's venv); without it, the Python client
// is skipped, with a line saying so.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { startFakeModel } from "./fake_model.mjs";
import { bin, claudeEnv, freePort, runHost } from "./host_setup.mjs";

const [parts, binary] = process.argv.slice(2, 4).map((arg) => path.resolve(arg));
const python = process.argv[4];
const require = createRequire(path.join(parts, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const here = path.dirname(fileURLToPath(import.meta.url));
const count = (text) => Number(execFileSync(binary, ["count"], { input: text, maxBuffer: 1 << 30 }));
const NOTE = /\ntruncated: \d+ tokens dropped, refine your query$/;

const listing = execFileSync("sh", ["-c", "find /usr -type f | head -c 500000"], { maxBuffer: 1 << 26 }).toString();
// Each tool whose result is the same every call, with its arguments.
const calls = [
  ["echo", { message: listing }],
  ["echo", { message: "hello" }],
  ["get-sum", { a: 2, b: 3 }],
  ["get-tiny-image", {}],
  ["get-structured-content", { location: "New York" }],
  ["get-annotated-message", { messageType: "error", includeImage: true }],
];

const scratch = mkdtempSync(path.join(tmpdir(), "tool-output-cap-remote-"));
const port = await freePort();
const url = `http://127.0.0.1:${port}/mcp`;
const server = spawn(process.execPath, [require.resolve("@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"], {
  cwd: scratch,
  env: { ...process.env, PORT: String(port) },
  stdio: ["ignore", "ignore", "pipe"],
});
process.on("exit", () => {
  server.kill("SIGKILL");
  rmSync(scratch, { recursive: true, force: true });
});
await new Promise((resolve, reject) => {
  server.stderr.on("data", (data) => String(data).includes("listening") && resolve());
  server.on("exit", (code) => reject(new Error(`the server exited: ${code}`)));
});

/** The tool names and the results of `calls`, through `transport`. */
async function session(transport) {
  const client = new Client({ name: "tool-output-cap-e2e", version: "1.0.0" });
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    const results = [];
    for (const [name, args] of calls) results.push(await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 }));
    return { tools, results };
  } finally {
    await client.close();
  }
}

/** Checks what came `through` the bridge against what came `direct`: the listing capped, the rest the same. */
function compare(who, through, direct) {
  assert.deepEqual(through.tools, direct.tools, `${who}: the same tools`);
  const [capped, ...rest] = through.results;
  const text = capped.content[0].text;
  assert.ok(count(text) <= 5000, `${who}: ${count(text)} tokens`);
  assert.match(text, NOTE, `${who}: the note`);
  assert.ok(direct.results[0].content[0].text.length > 400_000, "direct, the whole listing");
  rest.forEach((result, i) => assert.deepEqual(result, direct.results[i + 1], `${who}: ${calls[i + 1][0]} as it is`));
  return `${who}: the 500 KB echo ${count(text)} tokens with the note; ${rest.length} other results and ${through.tools.length} tools as they are directly`;
}

/** The Python SDK client's tools and results of `calls`, connected by `how` (a URL, or "stdio"). */
function pythonSession(how) {
  const printed = execFileSync(python, [path.join(here, "remote_client.py"), binary, url, how], { input: JSON.stringify(calls), encoding: "utf8", maxBuffer: 1 << 26 });
  return JSON.parse(printed);
}

/** Checks the Python SDK client's `through` against `direct`: the listing capped, the rest the same. */
function comparePython(who, through, direct) {
  assert.deepEqual(through.tools, direct.tools, `${who}: the same tools`);
  const text = through.results[0].content[0].text;
  assert.ok(count(text) <= 5000 && NOTE.test(text), `${who}: ${count(text)} tokens`);
  // The Python SDK writes a result with its own defaults: its content compared.
  through.results.slice(1).forEach((result, i) => {
    assert.deepEqual(result.content, direct.results[i + 1].content, `${who}: ${calls[i + 1][0]} as it is`);
  });
  return `${who}: the 500 KB echo ${count(text)} tokens with the note; the same ${through.tools.length} tools and results`;
}

/** What Claude Code shows the model of an `echo` of the listing from the server `name`, set up with `add`. */
async function claudeEcho(add) {
  const home = mkdtempSync(path.join(tmpdir(), "tool-output-cap-remote-host-"));
  const model = await startFakeModel({ tool: "__echo", args: { message: listing } });
  try {
    const env = { ...claudeEnv(home, model.url), MCP_CONNECTION_NONBLOCKING: "0", MCP_CONNECT_TIMEOUT_MS: "60000" };
    execFileSync(bin(parts, "claude"), ["mcp", "add", ...add], { env, cwd: home });
    const run = await runHost(bin(parts, "claude"), ["-p", "Echo the files.", "--allowedTools", "mcp__everything__*", "--output-format", "json", "--no-session-persistence"], { env, cwd: home });
    assert.equal(run.status, 0, run.stderr.slice(-2000));
    const result = model.requests
      .flatMap((request) => request.body.messages ?? [])
      .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
      .find((block) => block.type === "tool_result");
    assert.ok(result, "Claude Code sent the model a tool_result");
    const text = typeof result.content === "string" ? result.content : result.content.map((block) => block.text ?? "").join("\n");
    assert.ok(count(text) <= 5000 && NOTE.test(text.replace(/"\}$/, "")), `${count(text)} tokens`);
    return count(text);
  } finally {
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const direct = await session(new StreamableHTTPClientTransport(new URL(url)));
const bridged = await session(new StdioClientTransport({ command: binary, args: ["mcp", "--url", url], stderr: "inherit" }));
console.log(compare("the bridge, the TypeScript SDK client", bridged, direct));

// The reverse proxy, on a port of its own: the server's own path there.
const listen = `127.0.0.1:${await freePort()}`;
const proxy = spawn(binary, ["mcp", "--listen", listen, "--url", url], { stdio: ["ignore", "ignore", "pipe"] });
process.on("exit", () => proxy.kill("SIGKILL"));
await new Promise((resolve) => proxy.stderr.on("data", (data) => String(data).includes("stands for") && resolve()));
const proxied = `http://${listen}/mcp`;
console.log(compare("the reverse proxy, the TypeScript SDK client", await session(new StreamableHTTPClientTransport(new URL(proxied))), direct));

if (python) {
  console.log(comparePython("the bridge, the Python SDK client", pythonSession("stdio"), direct));
  console.log(comparePython("the reverse proxy, the Python SDK client", pythonSession(proxied), direct));
} else {
  console.log("skipped the Python SDK client: no interpreter given (.ci/run passes its venv's)");
}

if (existsSync(bin(parts, "claude"))) {
  const stdio = await claudeEcho(["everything", "--", binary, "mcp", "--url", url]);
  console.log(`Claude Code, the bridge as a stdio server: the model got ${stdio} tokens of the echo, with the note`);
  const http = await claudeEcho(["--transport", "http", "everything", proxied]);
  console.log(`Claude Code, --transport http to the reverse proxy: the model got ${http} tokens of the echo, with the note`);
} else {
  console.log(`skipped Claude Code: ${bin(parts, "claude")} is not installed (.ci/run installs it)`);
}
// Both ended, and waited for: the server's stderr, a pipe, would keep this script running.
for (const child of [proxy, server].filter((child) => child.exitCode === null && child.signalCode === null)) {
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}
