// End to end: the official MCP TypeScript SDK client, through `tool-output-cap mcp`, in front of
// the official filesystem server (`@modelcontextprotocol/server-filesystem`) and of a server made
// with the SDK that returns thousands of records (`records_server.mjs`).
//
//   node cli/tests/e2e/mcp_filesystem.mjs PARTS PROXY DIR
//
// PARTS is the folder where .ci/run installed both packages, PROXY the built binary, DIR a large
// folder to search. The client validates every result against the tool's outputSchema, so a
// capped structuredContent that no longer matched it would throw here.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

const [parts, proxy, bigDir] = process.argv.slice(2).map((arg) => path.resolve(arg));
const require = createRequire(path.join(parts, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const server = path.join(parts, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const LIMIT = 5000;
const NOTE = /\ntruncated: \d+ tokens dropped, refine your query$/;

const tokens = (text) => Number(execFileSync(proxy, ["count"], { input: text, maxBuffer: 1 << 30 }));

async function connect(command, args) {
  const client = new Client({ name: "tool-output-cap-e2e", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  await client.listTools(); // caches each tool's outputSchema, against which callTool validates
  return client;
}

const direct = (dirs) => connect(process.execPath, [server, ...dirs]);
const proxied = (dirs) => connect(proxy, ["mcp", "--", process.execPath, server, ...dirs]);
const search = (client, dir) =>
  client.callTool({ name: "search_files", arguments: { path: dir, pattern: "**/*" } }, undefined, {
    timeout: 600_000,
  });

// A small call's result is identical with and without the proxy.
const small = mkdtempSync(path.join(tmpdir(), "tool-output-cap-e2e-"));
mkdirSync(path.join(small, "src"));
writeFileSync(path.join(small, "src", "main.rs"), "fn main() {}\n");
writeFileSync(path.join(small, "README.md"), "# e2e\n");
for (const call of [
  (client) => search(client, small),
  (client) => client.callTool({ name: "read_text_file", arguments: { path: path.join(small, "README.md") } }),
  (client) => client.callTool({ name: "list_allowed_directories", arguments: {} }),
]) {
  const [a, b] = [await direct([small]), await proxied([small])];
  assert.deepEqual(await call(b), await call(a));
  await Promise.all([a.close(), b.close()]);
}
rmSync(small, { recursive: true });

// A large search, before and after.
const before = await direct([bigDir]);
const whole = await search(before, bigDir);
await before.close();
const wholeText = whole.content[0].text;
const wholeTokens = tokens(wholeText);
assert.ok(wholeTokens > LIMIT, `the search over ${bigDir} must be over ${LIMIT} tokens`);

const client = await proxied([bigDir]);
const result = await search(client, bigDir); // throws if structuredContent fails its schema
await client.close();
const text = result.content[0].text;
const structured = JSON.stringify(result.structuredContent);
const [textTokens, structuredTokens] = [tokens(text), tokens(structured)];
assert.ok(textTokens <= LIMIT, `text: ${textTokens} tokens`);
assert.ok(structuredTokens <= LIMIT, `structuredContent: ${structuredTokens} tokens`);
assert.match(text, NOTE);
assert.match(result.structuredContent.content, NOTE);
assert.ok(wholeText.startsWith(text.slice(0, text.lastIndexOf("\n"))));
const figures = result._meta["tool-output-cap/truncation"];
assert.equal(figures.content.original_tokens, wholeTokens);

// A structure of 5,000 small records under a strict outputSchema: records are dropped, the one
// next to those kept is cut if any of it fits, and the note ends the structure's last string.
const recordsServer = path.join(path.dirname(new URL(import.meta.url).pathname), "records_server.mjs");
const recordsClient = await connect(proxy, ["mcp", "--", process.execPath, recordsServer, parts]);
const records = await recordsClient.callTool({ name: "list_records", arguments: {} }); // throws if invalid
await recordsClient.close();
const recordsTokens = tokens(JSON.stringify(records.structuredContent));
assert.ok(recordsTokens <= LIMIT, `records: ${recordsTokens} tokens`);
const kept = records.structuredContent.records;
assert.ok(kept.length > 0 && kept.length < 5000, `${kept.length} records kept`);
// Every record is whole but the last kept, which may be cut to fill what the others leave: its
// path shortened, its fields all there, so the strict schema still holds.
const record = (i) => ({ path: `/usr/share/doc/package-${i}/copyright`, size: i * 7 });
kept.slice(0, -1).forEach((kept, i) => assert.deepEqual(kept, record(i)));
const last = kept[kept.length - 1];
assert.equal(last.size, record(kept.length - 1).size);
assert.ok(record(kept.length - 1).path.startsWith(last.path), JSON.stringify(last));
assert.match(records.structuredContent.root, /^\/usr\/share\/doc\ntruncated: \d+ tokens dropped, refine your query$/);
assert.ok(tokens(records.content[0].text) <= LIMIT);

// `check` lists the real server's tools with the limit each gets.
const checked = execFileSync(proxy, ["check", "--max-tokens", "3000", "--", process.execPath, server, bigDir], {
  encoding: "utf8",
});
const serverLine = checked.match(/^server: (\d+) tools \(MCP (.+)\)$/m);
assert.ok(serverLine && Number(serverLine[1]) > 5, checked);
assert.match(checked, /^search_files +3000 +head +default$/m);
assert.match(checked, /^read_text_file +3000 +head +default$/m);

console.log(`check: ${serverLine[1]} tools, MCP ${serverLine[2]}`);
console.log(
  `list_records: ${kept.length} of 5000 records kept, ${recordsTokens} tokens of structuredContent`,
);
console.log(
  `search_files **/* over ${bigDir}: ${wholeText.length} bytes, ${wholeTokens} tokens direct; ` +
    `through the proxy ${textTokens} tokens of text and ${structuredTokens} of structuredContent`,
);
console.log("e2e: 7 passed, 0 failed");
