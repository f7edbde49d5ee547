// A remote MCP server through `tool-output-cap mcp --url URL`: the official
// `@modelcontextprotocol/server-everything` in its Streamable HTTP mode, at the version pinned
// in package.json, driven through the bridge by the official TypeScript SDK client and by the
// Python SDK's (`remote_client.py`), each over stdio, and compared with the TypeScript client
// connected to the server directly. The `echo` of a 500 KB listing comes back within the limit
// with the note; every other tool's result and the tool list are as they are without the bridge.
//
//   node cli/tests/e2e/remote.mjs PARTS BINARY [PYTHON]
//
// PARTS is the folder where .ci/run installed the packages, BINARY the built tool-output-cap,
// PYTHON an interpreter with the `mcp` package (.ci/run's venv); without it, the Python client
// is skipped, with a line saying so.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { freePort } from "./host_setup.mjs";

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
  return `${who}: the 500 KB echo ${count(text)} tokens with the note; ${rest.length} other results and ${through.tools.length} tools as they are without the bridge`;
}

const direct = await session(new StreamableHTTPClientTransport(new URL(url)));
const bridged = await session(new StdioClientTransport({ command: binary, args: ["mcp", "--url", url], stderr: "inherit" }));
console.log(compare("the TypeScript SDK client", bridged, direct));
if (python) {
  const printed = execFileSync(python, [path.join(here, "remote_client.py"), binary, url], { input: JSON.stringify(calls), encoding: "utf8", maxBuffer: 1 << 26 });
  const fromPython = JSON.parse(printed);
  assert.deepEqual(fromPython.tools, direct.tools, "the Python SDK client: the same tools");
  const text = fromPython.results[0].content[0].text;
  assert.ok(count(text) <= 5000 && NOTE.test(text), `the Python SDK client: ${count(text)} tokens`);
  // The Python SDK writes a result with its own defaults: its content compared.
  fromPython.results.slice(1).forEach((result, i) => {
    assert.deepEqual(result.content, direct.results[i + 1].content, `the Python SDK client: ${calls[i + 1][0]} as it is`);
  });
  console.log(`the Python SDK client: the 500 KB echo ${count(text)} tokens with the note; the same ${fromPython.tools.length} tools`);
} else {
  console.log("skipped the Python SDK client: no interpreter given (.ci/run passes its venv's)");
}
