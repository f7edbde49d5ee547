// End to end in real hosts: Claude Code, Codex and gemini-cli, each set up with its own
// `mcp add` line from cli/README.md (the proxy in front of the official filesystem server), each
// pointed at the fake model API of fake_model.mjs on 127.0.0.1. The fake model calls
// `search_files` with `**/*` over a large folder; the request that comes back holds what the
// host shows the model of the result, which must be within the limit and end with the note.
//
//   node cli/tests/e2e/hosts.mjs PARTS PROXY DIR [MAX_TOKENS]
//
// PARTS is the folder where .ci/run installed the hosts and the server, PROXY the built binary,
// DIR a large folder, MAX_TOKENS the proxy's limit (5000, the default, when omitted). With
// $TOOL_OUTPUT_CAP_COMMAND (a JSON list, as `["npx", "-y", "file:TARBALL"]`), the hosts run
// that command where the line says `tool-output-cap`, and with $TOOL_OUTPUT_CAP_HOSTS (names
// joined by commas) only those hosts. The server runs as `node .../server-filesystem/dist/index.js DIR` where the
// README says `npx -y @modelcontextprotocol/server-filesystem DIR`: the same package, without a
// download. A host that is not installed is skipped, with a line saying so.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { responsesTools, startFakeModel } from "./fake_model.mjs";
import { bin as installed, claudeEnv, codexEnv, geminiEnv, runHost } from "./host_setup.mjs";

const [parts, proxy, bigDir] = process.argv.slice(2, 5).map((arg) => path.resolve(arg));
const LIMIT = Number(process.argv[5] ?? 5000);
const server = path.join(parts, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const bin = (name) => installed(parts, name);
const NOTE = /truncated: \d+ tokens dropped, refine your query$/;
const limitFlags = process.argv[5] ? ["--max-tokens", String(LIMIT)] : [];
const command = process.env.TOOL_OUTPUT_CAP_COMMAND ? JSON.parse(process.env.TOOL_OUTPUT_CAP_COMMAND) : [proxy];
const only = process.env.TOOL_OUTPUT_CAP_HOSTS?.split(",");
const serverLine = [...command, "mcp", ...limitFlags, "--", process.execPath, server, bigDir];

const tokens = (text) => Number(execFileSync(proxy, ["count"], { input: text, maxBuffer: 1 << 30 }));

const hosts = {
  // Claude Code shows the model the compact JSON of structuredContent, as a tool_result. In
  // print mode it is told to wait for its MCP servers, up to a minute (cli/README.md says why).
  async "Claude Code"(home, model) {
    const env = { ...claudeEnv(home, model.url), MCP_CONNECTION_NONBLOCKING: "0", MCP_CONNECT_TIMEOUT_MS: "60000" };
    // The filesystem server gets Claude Code's folder as its root: run it in the folder listed.
    execFileSync(bin("claude"), ["mcp", "add", "filesystem", "--", ...serverLine], { env, cwd: bigDir });
    const run = await runHost(bin("claude"), ["-p", "List every file.", "--allowedTools", "mcp__filesystem__*", "--output-format", "json", "--no-session-persistence"], { env, cwd: bigDir });
    assert.equal(run.status, 0, run.stderr);
    const blocks = model.requests
      .filter((request) => request.path.endsWith("/messages"))
      .flatMap((request) => request.body.messages ?? [])
      .flatMap((message) => (Array.isArray(message.content) ? message.content : []));
    const result = blocks.find((block) => block.type === "tool_result");
    const offered = model.requests.flatMap((request) => (request.body.tools ?? []).map((tool) => tool.name));
    assert.ok(result, `Claude Code sent the model a tool_result; it offered ${offered.filter((name) => name?.startsWith("mcp__")).join(", ") || "no MCP tool (the server was not started in time)"}`);
    const content = result.content;
    return typeof content === "string" ? content : content.map((block) => block.text ?? "").join("\n");
  },

  // Codex shows the model structuredContent as function_call_output, after a line of its own,
  // and cuts it again to about 12 KB, keeping both ends. It waits for an MCP server to start up
  // to the server's `startup_timeout_sec`, 10 s by default, then goes on without it, silently in
  // `codex exec`; the test gives it a minute, as cli/README.md says to on a loaded machine.
  async Codex(home, model) {
    const env = codexEnv(home, model.url);
    execFileSync(bin("codex"), ["mcp", "add", "filesystem", "--", ...serverLine], { env, cwd: bigDir, stdio: "ignore" });
    const args = ["exec", "-c", "mcp_servers.filesystem.startup_timeout_sec=60", "--skip-git-repo-check", "--json", "List every file."];
    const run = await runHost(bin("codex"), args, { env, cwd: bigDir });
    assert.equal(run.status, 0, run.stderr);
    const requests = model.requests.filter((request) => request.path.endsWith("/responses"));
    const output = requests.flatMap((request) => request.body.input ?? []).find((item) => item.type === "function_call_output");
    const search = requests.flatMap((request) => responsesTools(request.body).map((tool) => tool.name)).filter((name) => name?.endsWith("search_files"));
    assert.ok(output, `Codex sent the model a function_call_output; it offered ${search.join(", ") || "no search_files (the server was not started in time)"}`);
    const text = typeof output.output === "string" ? output.output : JSON.stringify(output.output);
    return text.replace(/^Wall time: [^\n]*\nOutput:\n/, "");
  },

  // gemini-cli shows the model the content text in <untrusted_context>, as a functionResponse.
  // It drops the `--` of the line; it runs MCP servers only in a trusted folder.
  async "gemini-cli"(home, model) {
    const env = geminiEnv(home, model.url, bigDir);
    execFileSync(bin("gemini"), ["mcp", "add", "--scope", "user", "filesystem", ...serverLine], { env, cwd: bigDir, stdio: "ignore" });
    const run = await runHost(bin("gemini"), ["-p", "List every file.", "--yolo", "--output-format", "json", "-m", "gemini-e2e"], { env, cwd: bigDir });
    assert.equal(run.status, 0, run.stderr);
    const response = model.requests
      .filter((request) => request.path.includes("enerateContent"))
      .flatMap((request) => request.body.contents ?? [])
      .flatMap((content) => content.parts ?? [])
      .find((part) => part.functionResponse);
    assert.ok(response, "gemini-cli sent the model a functionResponse");
    const output = response.functionResponse.response.output;
    return output.replace(/^<untrusted_context>\n/, "").replace(/\n<\/untrusted_context>$/, "");
  },
};

let [passed, failed] = [0, 0];
for (const [name, drive] of Object.entries(hosts)) {
  if (only && !only.includes(name)) continue;
  const binary = { "Claude Code": "claude", Codex: "codex", "gemini-cli": "gemini" }[name];
  if (!existsSync(bin(binary))) {
    console.log(`skipped ${name}: ${bin(binary)} is not installed (.ci/run installs it)`);
    continue;
  }
  const home = mkdtempSync(path.join(tmpdir(), "tool-output-cap-host-"));
  const model = await startFakeModel({ tool: "search_files", args: { path: bigDir, pattern: "**/*" } });
  try {
    const seen = await drive(home, model);
    // What the proxy gave: a structuredContent's JSON ends with its string's note and `"}`.
    const payload = seen.replace(/"\}$/, "");
    const seenTokens = tokens(seen);
    assert.match(payload, NOTE, `${name}: the model's tool result ends with the note`);
    assert.ok(seenTokens <= LIMIT, `${name}: ${seenTokens} tokens`);
    console.log(`${name}${only ? ` (${command.join(" ")})` : ""}: the model got ${seenTokens} tokens (${seen.length} characters), ending with "${payload.match(NOTE)[0]}"`);
    passed += 1;
  } catch (error) {
    console.log(`${name}: FAILED: ${error.stack}`);
    failed += 1;
  } finally {
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
}
console.log(`hosts: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
