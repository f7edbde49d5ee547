// The incident, replayed in real hosts: Claude Code, Codex and gemini-cli each run a built-in
// shell tool whose output goes over a per-minute input-token limit that the fake model API of
// fake_model.mjs enforces (o200k_base, between the capped and the uncapped request sizes).
// Direct, the session fails on the API's own 429. Through the README's line,
// `tool-output-cap gateway -- HOST`, it completes: the result the model got is within 5000
// tokens and ends with the note, and the next turn sends it again as the same bytes. Then a
// recorded request that carries a 125 KB tool_result, which the limit refuses, goes through a
// gateway capped, three times, while a real Prometheus scrapes the gateway's metrics: the cuts
// it counts are the ones the fake upstream saw.
//
//   node cli/tests/e2e/gateway.mjs PARTS BINARY
//
// PARTS is the folder where .ci/run installed the hosts, BINARY the built tool-output-cap. A
// host that is not installed is skipped, with a line saying so.

import assert from "node:assert/strict";
import { execFileSync, execSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { startFakeModel } from "./fake_model.mjs";
import { bin, freePort, runHost, shellHosts, toolResults } from "./host_setup.mjs";
import { prometheusVersion, scraped, startPrometheus } from "./prometheus.mjs";

const [parts, binary] = process.argv.slice(2, 4).map((arg) => path.resolve(arg));
const NOTE = /truncated: \d+ tokens dropped, refine your query"?\}?$/;
const COMMAND = "find /usr/share -type f | head -c 25000";
// The limit over the first request: more than a capped result, less than the whole one.
const MARGIN = 7000;
const count = (text) => Number(execFileSync(binary, ["count"], { input: text, maxBuffer: 1 << 30 }));
const gateway = [binary, "gateway", "--"]; // `tool-output-cap gateway -- HOST`, as cli/README.md says

const hosts = shellHosts([COMMAND, "echo next"]);

/** Runs `host` against a fake model with the limit, direct or through the gateway. */
async function session(host, viaGateway) {
  const home = mkdtempSync(path.join(tmpdir(), "tool-output-cap-gateway-"));
  const model = await startFakeModel(host.calls, { limit: MARGIN, count });
  try {
    const env = host.env(home, model.url, viaGateway);
    const line = viaGateway ? [...gateway, bin(parts, host.binary)] : [bin(parts, host.binary)];
    const run = await runHost(line[0], [...line.slice(1), ...host.args], { env, cwd: home });
    return { run, model };
  } finally {
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The inference requests that reached the model, with the tool results each held. */
const inferences = (model) => model.requests.filter((r) => r.tokens !== undefined && !model.limited.includes(r));

let [passed, failed] = [0, 0];
let recorded;
for (const [name, host] of Object.entries(hosts)) {
  if (!existsSync(bin(parts, host.binary))) {
    console.log(`skipped ${name}: ${bin(parts, host.binary)} is not installed (.ci/run installs it)`);
    continue;
  }
  try {
    const direct = await session(host, false);
    assert.notEqual(direct.run.status, 0, `${name}: direct, the session fails`);
    assert.ok(direct.model.limited.length > 0, `${name}: direct, the model API refused a request: ${direct.run.stderr.slice(-500)}`);
    const refused = direct.model.limited[0];
    if (name === "Claude Code") recorded = refused;

    const capped = await session(host, true);
    assert.equal(capped.run.status, 0, `${name} through the gateway: ${capped.run.stderr.slice(-2000)}`);
    assert.equal(capped.model.limited.length, 0, `${name}: through the gateway, no request was refused`);
    const turns = inferences(capped.model).filter((r) => toolResults(r).length > 0);
    assert.ok(turns.length >= 2, `${name}: two turns after the first result`);
    const [first, next] = [toolResults(turns[0])[0], toolResults(turns[1])[0]];
    const resultTokens = count(first.text);
    assert.ok(resultTokens <= 5000, `${name}: ${resultTokens} tokens`);
    assert.match(first.text, NOTE, `${name}: the result ends with the note`);
    assert.equal(next.json, first.json, `${name}: the next turn sends the result as the same bytes`);
    console.log(
      `${name}: direct, a request of ${refused.tokens} tokens (baseline ${direct.model.baseline()}) got the 429; ` +
        `through the gateway, ${turns[0].tokens} tokens, the result ${resultTokens} tokens ending with the note, ` +
        `the same bytes on the next turn`,
    );
    passed += 1;
  } catch (error) {
    console.log(`${name}: FAILED: ${error.stack}`);
    failed += 1;
  }
}

// A history already too big: the recorded Claude Code request, its result now 125 KB.
if (recorded) {
  try {
    const listing = execSync("find /usr/share -type f | head -c 125000", { maxBuffer: 1 << 24 }).toString();
    const body = structuredClone(recorded.body);
    const result = body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === "tool_result");
    result.content = listing;
    const model = await startFakeModel([], { limit: MARGIN, count });
    let proxy, prometheus;
    try {
      // The baseline: the request without its result's text.
      const empty = structuredClone(recorded.body);
      empty.messages = empty.messages.slice(0, 1);
      const send = (url) => fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "sk-e2e", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
      await fetch(`${model.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(empty) });
      const direct = await send(model.url);
      assert.equal(direct.status, 429, "direct, the bloated history is refused");
      const metrics = `127.0.0.1:${await freePort()}`;
      proxy = spawn(binary, ["gateway", "--upstream", model.url, "--listen", "127.0.0.1:0", "--metrics", metrics], { stdio: ["ignore", "ignore", "pipe"] });
      const url = await new Promise((resolve) => proxy.stderr.on("data", (data) => resolve(String(data).match(/http:\/\/127\.0\.0\.1:\d+/)?.[0])));
      prometheus = prometheusVersion() && (await startPrometheus(metrics));
      // Three times: cut once, then taken from the cache.
      for (let time = 0; time < 3; time += 1) {
        const through = await send(url);
        assert.equal(through.status, 200, "through the gateway, the same request completes");
      }
      const sent = model.requests.slice(-3).map((request) => toolResults(request)[0]);
      assert.ok(sent.every((result) => count(result.text) <= 5000 && NOTE.test(result.text)));
      let scrape = `skipped the Prometheus scrape: ${"/usr/bin/prometheus"} is not installed (.ci/run installs it)`;
      if (prometheus) {
        // What the fake upstream saw, read back from Prometheus's own API.
        const cuts = await scraped(prometheus, "sum(tool_output_cap_gateway_results_cut_total)", sent.length);
        assert.equal(cuts, sent.length, "Prometheus counted the cuts the upstream saw");
        const before = await scraped(prometheus, 'tool_output_cap_gateway_tokens_before_total{api="anthropic",tool="Bash"}', 3 * count(listing));
        assert.equal(before, 3 * count(listing), "and the tokens they came with");
        const cached = await scraped(prometheus, "sum(tool_output_cap_gateway_cuts_cached_total)", 2);
        assert.equal(cached, 2, "two of them from the cache");
        scrape = `${prometheusVersion()} scraped ${cuts} cuts (${cached} from the cache) of ${before} tokens, as the upstream saw them`;
      }
      console.log(`a recorded request with a 125 KB tool_result: ${model.limited[0].tokens} tokens refused direct; ${model.requests.at(-1).tokens} tokens through the gateway; ${scrape}`);
    } finally {
      proxy?.kill("SIGTERM");
      await prometheus?.stop();
      await model.close();
    }
    passed += 1;
  } catch (error) {
    console.log(`a bloated history: FAILED: ${error.stack}`);
    failed += 1;
  }
}
console.log(`gateway hosts: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
