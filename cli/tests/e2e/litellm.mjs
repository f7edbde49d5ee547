// The LiteLLM proxy with the Python package's guardrail, as python/README.md sets it up: its
// config.yaml, taken from the README as it is, run by the real `litellm` as a process on
// 127.0.0.1 in front of the fake model API of fake_model.mjs on another loopback port, with the
// incident's manifest (Glob 3000 tokens, with a hint). Checked:
//
// - a Messages request whose history holds a 125 KB Glob tool_result reaches the model capped to
//   3000 tokens with the hint in the note, and as the same bytes when sent again;
// - real Claude Code through the proxy: its Bash lists /usr/share (25,000 characters, within
//   what Claude Code sends whole), and the result the model gets is within 5000 tokens and ends
//   with the note;
// - a Chat Completions tool message and a Responses function_call_output are capped the same;
// - two proxies (replicas) each cut the same request themselves, and send the same bytes;
// - with `max_tokens_per_request` in the guardrail's `tool_output`, a history of one to ten
//   turns sent again, four times at once to two workers, stays within it, as the same bytes;
// - with `rate_limit_share` in the guardrail's `tool_output`, behind a provider that reports a
//   per-minute limit of 30,000 input tokens and refuses any request over it, 15 turns of
//   20,000-token results through two workers all go through, each worker learning the limit;
// - a guardrail key it does not know stops the proxy at start, naming the key;
// - `litellm_settings.callbacks: tool_output_cap.litellm.proxy_handler` caps as the guardrail does;
// - a request with no tool result, and ones whose history the guardrail cannot read, reach the
//   model as they came, and LiteLLM answers them.
//
//   node cli/tests/e2e/litellm.mjs PARTS VENV BINARY
//
// PARTS is the folder where .ci/run installed the hosts, VENV the venv with the package and
// LiteLLM installed, BINARY the built tool-output-cap (its `count` is the oracle). Without
// LiteLLM, or without Claude Code, the checks that need it are skipped with a line saying so.

import assert from "node:assert/strict";
import { execFileSync, execSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { startFakeModel } from "./fake_model.mjs";
import { bin, claudeEnv, freePort, runHost, toolResults } from "./host_setup.mjs";

const [parts, venv, binary] = process.argv.slice(2, 5).map((arg) => path.resolve(arg));
const litellm = path.join(venv, "bin/litellm");
const NOTE = /truncated: (\d+) tokens dropped, refine your query(: .*)?$/;
const HINT = "use a narrower pattern, e.g. src/**/*.rs";
const MANIFEST = `[worker.tool_output]
default_max_tokens = 5000

[worker.tool_output.per_tool]
Glob = { max_tokens = 3000, hint = "${HINT}" }
`;
const KEY = "sk-litellm-e2e";
const count = (text) => Number(execFileSync(binary, ["count"], { input: text, maxBuffer: 1 << 30 }));

if (!existsSync(litellm)) {
  console.log(`skipped the LiteLLM proxy: ${litellm} is not installed (.ci/run installs it)`);
  process.exit(0);
}

/** python/README.md's config.yaml, as a user copies it. */
const readme = readFileSync(new URL("../../../python/README.md", import.meta.url), "utf8");
const config = readme.match(/```yaml\n# config\.yaml\n([\s\S]*?)```/)?.[1];
assert.ok(config, "python/README.md has a config.yaml");

const home = mkdtempSync(path.join(tmpdir(), "tool-output-cap-litellm-"));
// Removed however the script ends, a proxy that did not start among the ways.
process.on("exit", () => rmSync(home, { recursive: true, force: true }));
writeFileSync(path.join(home, "config.yaml"), config);
// The README's other way: the callback instead of the guardrails section.
const callbacks = config.replace(/\nguardrails:[\s\S]*$/, "\nlitellm_settings:\n  callbacks: tool_output_cap.litellm.proxy_handler\n");
assert.notEqual(callbacks, config);
writeFileSync(path.join(home, "callbacks.yaml"), callbacks);
// The guardrail given its limits in litellm_params, with a request's budget.
const BUDGET = 8000;
const budgeted = config.replace(/( +)default_on: true\n/, `$&$1tool_output: {max_tokens_per_request: ${BUDGET}, per_tool: {Glob: 3000}}\n`);
assert.notEqual(budgeted, config);
writeFileSync(path.join(home, "budget.yaml"), budgeted);
// With a share of the per-minute limit the provider reports, and with a key it does not know.
const SHARE = 0.5;
const shared = config.replace(/( +)default_on: true\n/, `$&$1tool_output: {rate_limit_share: ${SHARE}}\n`);
writeFileSync(path.join(home, "share.yaml"), shared);
writeFileSync(path.join(home, "unknown.yaml"), shared.replace("rate_limit_share", "rate_limit_shares"));
writeFileSync(path.join(home, "manifest.toml"), MANIFEST);
// Claude Code keeps a Bash output over 30,000 characters (BASH_MAX_OUTPUT_LENGTH) in a file and
// sends the model a 2 KB preview of it: the listing is what it sends whole.
const model = await startFakeModel([{ tool: "Bash", args: { command: "find /usr/share -type f | head -c 25000" } }]);

/**
 * Starts the proxy with `args` and the config `file`, in front of `upstream` (the fake model);
 * resolves once it answers, to { url, log, stop }.
 */
async function startProxy(args = [], file = "config.yaml", upstream = model) {
  const port = await freePort();
  const env = {
    ...process.env,
    HOME: home,
    PATH: `${path.join(venv, "bin")}:${process.env.PATH}`,
    TOOL_OUTPUT_CAP_MANIFEST: path.join(home, "manifest.toml"),
    LITELLM_MASTER_KEY: KEY,
    LITELLM_LOCAL_MODEL_COST_MAP: "True",
    LITELLM_LOG: "INFO",
    ANTHROPIC_API_KEY: "sk-e2e",
    ANTHROPIC_API_BASE: upstream.url,
    OPENAI_API_KEY: "sk-e2e",
    OPENAI_API_BASE: `${upstream.url}/v1`,
    GEMINI_API_KEY: "sk-e2e",
  };
  const child = spawn(litellm, ["--config", file, "--host", "127.0.0.1", "--port", String(port), ...args], { cwd: home, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  child.stdout.on("data", (data) => (log += data));
  child.stderr.on("data", (data) => (log += data));
  const url = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.on("exit", resolve);
      process.kill(-child.pid, "SIGTERM"); // the proxy and its workers
    });
  for (let waited = 0; ; waited += 250) {
    if (child.exitCode !== null || waited > 120_000) {
      await stop();
      throw new Error(`the proxy did not start: ${log.slice(-3000)}`);
    }
    const up = await fetch(`${url}/health/liveliness`).then((r) => r.ok, () => false);
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url, log: () => log, stop };
}

const listing = execSync("find /usr/share -type f | head -c 125000", { maxBuffer: 1 << 24 }).toString();
const messages = (result) => ({
  model: "claude-e2e",
  max_tokens: 100,
  messages: [
    { role: "user", content: "List the files." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_e2e_1", name: "Glob", input: { pattern: "*" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_e2e_1", content: result }] },
  ],
});
const headers = { "content-type": "application/json", authorization: `Bearer ${KEY}`, "anthropic-version": "2023-06-01" };
/** POSTs `body` to the proxy's `route`; the model's request it caused. */
async function send(proxy, route, body) {
  const before = model.requests.length;
  const response = await fetch(`${proxy.url}${route}`, { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await response.text();
  assert.equal(response.status, 200, `${route}: ${answer.slice(0, 500)}`);
  assert.equal(model.requests.length, before + 1, `${route}: one request reached the model`);
  return model.requests.at(-1);
}
/** The one tool result of `request`, checked to be a Glob result capped to 3000 tokens. */
function cappedGlob(request, what) {
  const [result] = toolResults(request);
  const tokens = count(result.text);
  assert.ok(tokens <= 3000, `${what}: ${tokens} tokens`);
  assert.match(result.text, NOTE, `${what}: ends with the note`);
  assert.ok(result.text.endsWith(`: ${HINT}`), `${what}: the note has the hint`);
  return { tokens, dropped: Number(result.text.match(NOTE)[1]) };
}
/** The guardrail's log lines of fresh cuts, and of cuts taken from its cache. */
const cuts = (log) => ({
  fresh: log.match(/tool-output-cap: cut a result of Glob from \d+ to \d+ tokens \(\d+ dropped, limit 3000\)$/gm) ?? [],
  cached: log.match(/tool-output-cap: cut a result of Glob .*, as cut before$/gm) ?? [],
});

let [passed, failed] = [0, 0];
async function check(name, body) {
  try {
    console.log(`${name}: ${await body()}`);
    passed += 1;
  } catch (error) {
    console.log(`${name}: FAILED: ${error.stack}`);
    failed += 1;
  }
}

// Two proxies with the README's config, started at once: the first takes the checks of one
// proxy, and with the second it makes the replicas of "Two LiteLLM replicas".
const started = await Promise.allSettled([startProxy(), startProxy()]);
const [proxy, replica] = started.map((result) => (result.status === "fulfilled" ? result.value : null));
try {
  for (const result of started) if (result.status === "rejected") throw result.reason;
  await check("Anthropic Messages through LiteLLM", async () => {
    const first = await send(proxy, "/v1/messages", messages(listing));
    const again = await send(proxy, "/v1/messages", messages(listing));
    const { tokens, dropped } = cappedGlob(first, "the 125 KB Glob result");
    assert.equal(again.text, first.text, "sent again, the same bytes reach the model");
    const log = cuts(proxy.log());
    assert.equal(log.fresh.length, 1, `one cut logged: ${proxy.log().slice(-2000)}`);
    assert.equal(log.cached.length, 1, "and one taken from the cache");
    return `${listing.length} bytes (${count(listing)} tokens) reached the model as ${tokens} tokens, ${dropped} dropped, the hint in the note; the same ${first.text.length} bytes again; logged "${log.fresh[0]}"`;
  });

  await check("Chat Completions and Responses through LiteLLM", async () => {
    const chat = await send(proxy, "/v1/chat/completions", {
      model: "gpt-e2e",
      messages: [
        { role: "user", content: "List the files." },
        { role: "assistant", content: null, tool_calls: [{ id: "call_e2e_1", type: "function", function: { name: "Glob", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_e2e_1", content: listing },
      ],
    });
    const responses = await send(proxy, "/v1/responses", {
      model: "gpt-e2e",
      input: [
        { role: "user", content: "List the files." },
        { type: "function_call", call_id: "call_e2e_1", name: "Glob", arguments: "{}" },
        { type: "function_call_output", call_id: "call_e2e_1", output: listing },
      ],
    });
    assert.equal(chat.path, "/v1/chat/completions");
    assert.equal(responses.path, "/v1/responses");
    const [a, b] = [cappedGlob(chat, "the tool message"), cappedGlob(responses, "the function_call_output")];
    return `the tool message reached the model as ${a.tokens} tokens, the function_call_output as ${b.tokens}`;
  });

  await check("Requests the guardrail leaves as they came", async () => {
    const plain = { model: "claude-e2e", max_tokens: 100, messages: [{ role: "user", content: "Hello." }] };
    // A tool_result whose content is neither a string nor a list of blocks, and a history with
    // an item that is no message: nothing the cap can read.
    const odd = messages({ unexpected: listing });
    const stray = { ...plain, messages: [...plain.messages, "not a message"] };
    const bodies = [plain, odd, stray];
    for (const body of bodies) {
      const reached = await send(proxy, "/v1/messages", body);
      assert.deepEqual(reached.body.messages, body.messages, "the messages reach the model as they came");
    }
    return `${bodies.length} requests (no tool result, a tool_result of an unknown shape, a history with a stray item) reached the model unchanged`;
  });

  await check("Two LiteLLM replicas", async () => {
    // Two proxies, as an organisation runs replicas behind a load balancer: each cuts the result
    // itself, with nothing shared, and the model gets the same bytes from both. (Which of a
    // proxy's own `--num_workers` takes a connection is the kernel's choice, so a test of two cuts
    // made apart needs two proxies; the workers are in a check below.) A listing neither has cut.
    const other = `${listing}\n/usr/share/replicas`;
    const replicas = [proxy, replica];
    const before = replicas.map((one) => cuts(one.log()).fresh.length);
    const reached = [];
    for (const one of replicas) reached.push(await send(one, "/v1/messages", messages(other)));
    replicas.forEach((one, i) => {
      const fresh = cuts(one.log()).fresh.length - before[i];
      assert.equal(fresh, 1, `each replica cut it once: ${one.log().slice(-3000)}`);
    });
    assert.equal(reached[1].text, reached[0].text, "both replicas sent the model the same bytes");
    const { tokens } = cappedGlob(reached[0], "through two replicas");
    return `each of two proxies cut the 125 KB result itself, and both sent the model the same ${tokens} tokens`;
  });

  await check("Claude Code through LiteLLM", async () => {
    if (!existsSync(bin(parts, "claude"))) return `skipped: ${bin(parts, "claude")} is not installed (.ci/run installs it)`;
    const claudeHome = mkdtempSync(path.join(tmpdir(), "tool-output-cap-litellm-claude-"));
    try {
      const before = model.requests.length;
      // As python/README.md says: the proxy's URL, and a LiteLLM key as the token.
      const env = { ...claudeEnv(claudeHome, proxy.url), ANTHROPIC_AUTH_TOKEN: KEY };
      delete env.ANTHROPIC_API_KEY;
      const args = ["-p", "List the files.", "--allowedTools", "Bash", "--output-format", "json", "--no-session-persistence"];
      const run = await runHost(bin(parts, "claude"), args, { env, cwd: claudeHome });
      assert.equal(run.status, 0, `Claude Code: ${run.stderr.slice(-2000)}${run.stdout.slice(-1000)}`);
      const turn = model.requests.slice(before).find((request) => toolResults(request).length > 0);
      assert.ok(turn, "a request with Bash's result reached the model");
      const [result] = toolResults(turn);
      const tokens = count(result.text);
      assert.ok(tokens <= 5000, `${tokens} tokens`);
      assert.match(result.text, NOTE);
      return `Bash's listing of /usr/share (${count(execSync("find /usr/share -type f | head -c 25000").toString())} tokens) reached the model as ${tokens} tokens, ending with the note`;
    } finally {
      rmSync(claudeHome, { recursive: true, force: true });
    }
  });
} finally {
  await Promise.all([proxy, replica].filter(Boolean).map((one) => one.stop()));
}

await check("A 10-turn history under max_tokens_per_request, through two workers", async () => {
  // uvicorn kills a worker that does not answer its health check within 5 s, and a worker still
  // importing LiteLLM on a loaded machine does not: it would be killed and started again for good.
  const workers = await startProxy(["--num_workers", "2", "--timeout_worker_healthcheck", "120"], "budget.yaml");
  try {
    // Ten Glob results of about 8,000 tokens each, the uncut history sent again with one more
    // each time, four times at once on connections of their own.
    const results = Array.from({ length: 10 }, (_, i) => listing.slice(i * 12_000, i * 12_000 + 25_000));
    const history = (turns) => {
      const body = messages(results[0]);
      body.messages = [body.messages[0]];
      for (let turn = 0; turn < turns; turn += 1) {
        const id = `toolu_e2e_${turn + 1}`;
        body.messages.push({ role: "assistant", content: [{ type: "tool_use", id, name: "Glob", input: { pattern: "*" } }] });
        body.messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: results[turn] }] });
      }
      return body;
    };
    let largest = 0;
    for (let turns = 1; turns <= 10; turns += 1) {
      const before = model.requests.length;
      const send = async () => {
        const response = await fetch(`${workers.url}/v1/messages`, { method: "POST", headers: { ...headers, connection: "close" }, body: JSON.stringify(history(turns)) }).catch((error) => {
          throw new Error(`turn ${turns}: ${error.cause ?? error}: ${workers.log().slice(-3000)}`);
        });
        assert.equal(response.status, 200, await response.text());
      };
      await Promise.all([send(), send(), send(), send()]);
      const reached = model.requests.slice(before);
      assert.equal(new Set(reached.map((request) => request.text)).size, 1, `turn ${turns}: the same bytes from every send`);
      const sent = toolResults(reached[0]);
      assert.equal(sent.length, turns);
      const total = sent.reduce((sum, result) => sum + count(result.text), 0);
      assert.ok(total <= BUDGET, `turn ${turns}: ${total} tokens of tool results`);
      largest = Math.max(largest, total);
    }
    return `10 requests, each sent four times at once: every one within ${BUDGET} tokens of tool results (the largest ${largest}), the same bytes from every send`;
  } finally {
    await workers.stop();
  }
});

await check("15 turns of 20,000-token results under a 30,000-token per-minute limit, through two workers", async () => {
  // The provider reports its limit on every answer, and refuses (429) a request counted over it.
  const LIMIT = 30_000;
  const provider = await startFakeModel([], { limit: LIMIT, count, report: true });
  const workers = await startProxy(["--num_workers", "2", "--timeout_worker_healthcheck", "120"], "share.yaml", provider);
  try {
    const tools = [{ name: "Glob", description: "Lists files.", input_schema: { type: "object", properties: {} } }];
    const big = execSync("find /usr -type f | head -c 1500000", { maxBuffer: 1 << 26 }).toString();
    const results = Array.from({ length: 15 }, (_, i) => big.slice(i * 90_000, i * 90_000 + 80_000));
    const history = (turns) => {
      const body = { model: "claude-e2e", max_tokens: 100, tools, messages: [{ role: "user", content: "List the files." }] };
      for (let turn = 0; turn < turns; turn += 1) {
        const id = `toolu_e2e_${turn + 1}`;
        body.messages.push({ role: "assistant", content: [{ type: "tool_use", id, name: "Glob", input: { pattern: "*" } }] });
        body.messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: results[turn] }] });
      }
      return body;
    };
    const post = (body) => fetch(`${workers.url}/v1/messages`, { method: "POST", headers: { ...headers, connection: "close" }, body: JSON.stringify(body) });
    // Each worker learns the limit from its own first answer: asked until both have.
    const learned = () => new Set(workers.log().match(/reports a per-minute input-token limit of \d+ \(worker \d+\)/g) ?? []);
    for (let tries = 0; learned().size < 2; tries += 1) {
      assert.ok(tries < 40, `both workers learned the limit: ${workers.log().slice(-3000)}`);
      const response = await post(history(0));
      assert.equal(response.status, 200, await response.text());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const tokens = [];
    for (let turns = 1; turns <= results.length; turns += 1) {
      const response = await post(history(turns));
      assert.equal(response.status, 200, `turn ${turns}: ${(await response.text()).slice(0, 500)}`);
      const reached = provider.requests.at(-1);
      assert.ok(reached.tokens <= provider.baseline() + LIMIT, `turn ${turns}: ${reached.tokens} tokens`);
      tokens.push(toolResults(reached).reduce((sum, result) => sum + count(result.text), 0));
    }
    assert.equal(provider.limited.length, 0, "no request was refused");
    assert.ok(Math.max(...tokens) <= SHARE * (provider.baseline() + LIMIT), `tool results: ${tokens}`);
    const uncut = results.reduce((sum, result) => sum + count(result), 0);
    return `15 turns (${uncut} tokens of results in all) went through, none refused; the tool results of each request within ${SHARE} of the limit (the largest ${Math.max(...tokens)}); ${[...learned()].join("; ")}`;
  } finally {
    await workers.stop();
    await provider.close();
  }
});

await check("A guardrail key LiteLLM's guardrail does not know stops the proxy", async () => {
  const started = await startProxy([], "unknown.yaml").then(
    (proxy) => proxy.stop().then(() => null),
    (error) => error,
  );
  assert.ok(started, "the proxy did not start");
  assert.match(started.message, /rate_limit_shares/, "the error names the key");
  assert.doesNotMatch(started.message, /starting WITHOUT this guardrail/);
  return `the proxy exited at start, naming the key: ${started.message.match(/GuardrailConfigError: [^\n]*/)?.[0]}`;
});

await check("The callback through LiteLLM", async () => {
  const proxy = await startProxy([], "callbacks.yaml");
  try {
    const { tokens } = cappedGlob(await send(proxy, "/v1/messages", messages(listing)), "through the callback");
    return `with litellm_settings.callbacks, the 125 KB Glob result reached the model as ${tokens} tokens`;
  } finally {
    await proxy.stop();
  }
});

await model.close();
console.log(`LiteLLM proxy: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
