// A session that keeps working under a per-minute input-token limit, in real hosts: Claude Code,
// Codex and gemini-cli each run their built-in shell tool ten times, each output about 8,000
// tokens (under each host's own ceiling), against the fake model API of fake_model.mjs. The fake
// reports a per-minute limit L (the host's own first request plus 12,000 tokens, tool
// definitions counted) in the provider's header, and refuses with the provider's own 429 every
// request counted over L.
//
// Direct, the session fails for good at the second or third call. Through
// `tool-output-cap gateway --rate-limit-share 0.5 -- HOST`, with no other budget, all ten calls
// complete, no request is over L, and the newest result the model reads each time is its
// tool's capped output with the note, never a stub. Gemini reports no limit, so gemini-cli runs
// with `--max-tokens-per-request` instead, as cli/README.md says. Each host's line reports the
// requests sent and how many times the history's older results changed.
//
//   node cli/tests/e2e/rate_limit.mjs PARTS BINARY
//
// PARTS is the folder where .ci/run installed the hosts, BINARY the built tool-output-cap. A
// host that is not installed is skipped, with a line saying so.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { startFakeModel } from "./fake_model.mjs";
import { bin, runHost, shellHosts, toolResults } from "./host_setup.mjs";

const [parts, binary] = process.argv.slice(2, 4).map((arg) => path.resolve(arg));
const NOTE = /truncated: \d+ tokens dropped, refine your query"?\}?$/;
const STUB = /dropped to fit the request's budget/;
const CALLS = 10;
const MARGIN = 12_000;
// Ten different listings of about 25,000 characters (8,000 tokens) each.
const commands = Array.from({ length: CALLS }, (_, i) => `find /usr/share -type f | tail -n +${1 + 300 * i} | head -c 25000`);
const count = (text) => Number(execFileSync(binary, ["count"], { input: text, maxBuffer: 1 << 30 }));
const budget = { "gemini-cli": ["--max-tokens-per-request", "6000"] };

/** Runs `host` against the fake model, direct or through the gateway with `flags`. */
async function session(name, host, flags) {
  const home = mkdtempSync(path.join(tmpdir(), "tool-output-cap-rate-limit-"));
  const model = await startFakeModel(host.calls, { limit: MARGIN, count, report: true });
  try {
    const env = host.env(home, model.url, Boolean(flags));
    const line = flags ? [binary, "gateway", ...flags, "--", bin(parts, host.binary)] : [bin(parts, host.binary)];
    const run = await runHost(line[0], [...line.slice(1), ...host.args], { env: { ...env, RUST_LOG: "info" }, cwd: home });
    return { run, model };
  } finally {
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The counted inference requests the model answered that hold tool results, in order. */
const turns = (model) => model.requests.filter((r) => r.tokens !== undefined && !model.limited.includes(r) && toolResults(r).length > 0);

let [passed, failed] = [0, 0];
for (const [name, host] of Object.entries(shellHosts(commands))) {
  if (!existsSync(bin(parts, host.binary))) {
    console.log(`skipped ${name}: ${bin(parts, host.binary)} is not installed (.ci/run installs it)`);
    continue;
  }
  try {
    const direct = await session(name, host, null);
    assert.notEqual(direct.run.status, 0, `${name}: direct, the session fails`);
    assert.ok(direct.model.limited.length > 0, `${name}: direct, the model API refused a request`);
    const failedAt = toolResults(direct.model.limited[0]).length;
    assert.ok(failedAt <= 3, `${name}: direct, it failed at call ${failedAt}`);

    const flags = budget[name] ?? ["--rate-limit-share", "0.5"];
    const capped = await session(name, host, flags);
    assert.equal(capped.run.status, 0, `${name} through the gateway: ${capped.run.stderr.slice(-2000)}`);
    assert.equal(capped.model.limited.length, 0, `${name}: through the gateway, no request was refused`);
    const sent = turns(capped.model);
    const limit = capped.model.baseline() + MARGIN;
    assert.equal(toolResults(sent.at(-1)).length, CALLS, `${name}: all ${CALLS} calls completed`);
    let changes = 0;
    for (const [k, request] of sent.entries()) {
      assert.ok(request.tokens <= limit, `${name}: request ${k + 1} is ${request.tokens} tokens, over ${limit}`);
      const results = toolResults(request);
      const newest = results.at(-1).text;
      assert.doesNotMatch(newest, STUB, `${name}: request ${k + 1}'s newest result is never a stub`);
      assert.match(newest, NOTE, `${name}: request ${k + 1}'s newest result ends with the note`);
      const before = k > 0 ? toolResults(sent[k - 1]) : [];
      const older = Math.min(before.length, results.length - 1);
      if (results.slice(0, older).some((result, at) => result.json !== before[at].json)) changes += 1;
      for (let at = 0; at < older; at += 1) {
        const [was, is] = [count(before[at].text), count(results[at].text)];
        assert.ok(is <= was, `${name}: request ${k + 1}'s result ${at + 1} grew from ${was} to ${is} tokens`);
      }
    }
    const logged = capped.run.stderr.includes("reports a per-minute input-token limit");
    assert.equal(logged, !budget[name], `${name}: the gateway logged the limit it learned`);
    console.log(
      `${name}: direct, the ${failedAt === 1 ? "first" : `call ${failedAt}`} result's request got the 429 (L ${limit} tokens); ` +
        `through the gateway (${flags.join(" ")}), ${CALLS} calls in ${sent.length} requests, the largest ` +
        `${Math.max(...sent.map((r) => r.tokens))} tokens, the older results changed ${changes} times`,
    );
    passed += 1;
  } catch (error) {
    console.log(`${name}: FAILED: ${error.stack}`);
    failed += 1;
  }
}
console.log(`rate-limit hosts: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
