// What the host end-to-end tests share: running a host to its end, and setting up each host
// (Claude Code, Codex, gemini-cli) in a home of its own, pointed at a model API.

import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";

/** A free loopback port. */
export const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** The installed binary `name` of the hosts in PARTS. */
export const bin = (parts, name) => path.join(parts, "node_modules/.bin", name);

/** Runs a host to its end (five minutes at most): its exit code and output. */
export function runHost(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let [stdout, stderr] = ["", ""];
    child.stdout.on("data", (data) => (stdout += data));
    child.stderr.on("data", (data) => (stderr += data));
    const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

// Each host's temporary files (Claude Code's `claude-UID` folders, gemini-cli's error reports)
// go in its home, which its test removes, not in the machine's temporary folder.

/** Claude Code's environment in `home`, its model API at `url`, with no retries. */
export const claudeEnv = (home, url) => ({
  ...process.env,
  HOME: home,
  TMPDIR: home,
  ANTHROPIC_BASE_URL: url,
  ANTHROPIC_API_KEY: "sk-e2e",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  CLAUDE_CODE_MAX_RETRIES: "0",
  DISABLE_TELEMETRY: "1",
  DISABLE_AUTOUPDATER: "1",
});

/**
 * Codex's environment in `home`. With `url`, a model provider `fake` at `url`/v1 with no
 * retries; without it, the default provider, and the OpenAI variables of `openai`. `settings`
 * are more lines of its config.toml.
 */
export function codexEnv(home, url, openai = {}, settings = []) {
  const provider = url
    ? ['model_provider = "fake"', "", "[model_providers.fake]", 'name = "fake"', `base_url = "${url}/v1"`, 'env_key = "FAKE_API_KEY"', 'wire_api = "responses"', "request_max_retries = 0", "stream_max_retries = 0"]
    : [];
  // Not one of Codex's own models, so MCP tools are called directly.
  writeFileSync(path.join(home, "config.toml"), ['model = "e2e-model"', 'approval_policy = "never"', ...settings, ...provider, ""].join("\n"));
  return { ...process.env, HOME: home, TMPDIR: home, CODEX_HOME: home, FAKE_API_KEY: "sk-e2e", ...openai };
}

/** gemini-cli's environment in `home`, with an API key, its model API at `url`, `trusted` a folder it may run MCP servers in. */
export function geminiEnv(home, url, trusted) {
  mkdirSync(path.join(home, ".gemini"), { recursive: true });
  const settings = { security: { auth: { selectedType: "gemini-api-key" } }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false }, general: { maxAttempts: 1 } };
  writeFileSync(path.join(home, ".gemini/settings.json"), JSON.stringify(settings));
  writeFileSync(path.join(home, ".gemini/trustedFolders.json"), JSON.stringify({ [trusted]: "TRUST_FOLDER" }));
  return { ...process.env, HOME: home, TMPDIR: home, GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: "e2e", GEMINI_CLI_NO_RELAUNCH: "true" };
}

/** The tool results the model got, in order, as each API holds them: [{ text, json }]. */
export function toolResults(request) {
  const body = request.body;
  const blocks = (body.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  const anthropic = blocks.filter((b) => b.type === "tool_result").map((b) => b.content);
  const chat = (body.messages ?? []).filter((m) => m.role === "tool").map((m) => m.content);
  const responses = (Array.isArray(body.input) ? body.input : []).filter((i) => i.type === "function_call_output").map((i) => i.output);
  const gemini = (body.contents ?? []).flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse.response);
  return [...anthropic, ...chat, ...responses, ...gemini].map((content) => ({
    json: JSON.stringify(content),
    text: typeof content === "string" ? content : Array.isArray(content) ? content.map((b) => b.text ?? "").join("\n") : content.output ?? content.error ?? JSON.stringify(content),
  }));
}

/**
 * Each host set up to run its built-in shell tool on `commands`, one call each, in turn:
 * { binary, calls, args, env(home, url, viaGateway) } by host name. Through the gateway, Codex's
 * upstream is its own base URL. Codex cuts a shell output to about 10 KB for a model it does not
 * know; a user's `tool_output_token_limit` lets 25,000 characters through, as bigger budgets do.
 */
export function shellHosts(commands) {
  const calls = (tool, key) => commands.map((command) => ({ tool, args: { [key]: command } }));
  return {
    "Claude Code": {
      binary: "claude",
      calls: calls("Bash", "command"),
      args: ["-p", "List the files.", "--allowedTools", "Bash", "--output-format", "json", "--no-session-persistence"],
      env: (home, url) => claudeEnv(home, url),
    },
    Codex: {
      binary: "codex",
      calls: calls("exec_command", "cmd"),
      args: ["exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox", "List the files."],
      env: (home, url, viaGateway) => {
        const settings = ["tool_output_token_limit = 20000"];
        return viaGateway
          ? codexEnv(home, null, { OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: "sk-e2e" }, settings)
          : codexEnv(home, url, {}, settings);
      },
    },
    "gemini-cli": {
      binary: "gemini",
      calls: calls("run_shell_command", "command"),
      args: ["-p", "List the files.", "--yolo", "--output-format", "json", "-m", "gemini-e2e"],
      env: (home, url) => geminiEnv(home, url, home),
    },
  };
}
