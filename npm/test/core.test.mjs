// The API on real and hostile text: counts equal js-tiktoken's (the ranks it ships, no network),
// every keep at every limit keeps its promises, the manifest and its errors, and the event loop
// turning while a large output is capped on the libuv pool.

import assert from "node:assert/strict";
import { execSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";

import { Tiktoken } from "js-tiktoken/lite";
import cl100k_base from "js-tiktoken/ranks/cl100k_base";
import o200k_base from "js-tiktoken/ranks/o200k_base";
import { cap, capAsync, count, countAsync, Limits, ManifestError, RateLimit } from "tool-output-cap";
import { NO_FIT } from "./shapes.mjs";

const NOTE = /\ntruncated: (\d+) tokens dropped, refine your query(: .*)?$/;
const listing = execSync("find /usr -type f | head -c 125000", { maxBuffer: 1 << 26 }).toString();
const texts = {
  "a find /usr -type f listing": listing,
  Japanese: "日本語のテキストを数えます。東京都の天気は晴れ。".repeat(2000),
  emoji: "🦀👩‍👩‍👧‍👦🇯🇵✨ ".repeat(3000),
  "special-token text": "<|endoftext|><|im_start|>user<|im_end|><|fim_prefix|>".repeat(2000),
  // Runs of a thousand or so: js-tiktoken's merge takes the square of a run's length.
  "white-space runs": `${" ".repeat(1500)}x${"\n".repeat(1000)}y${"\t ".repeat(700)}\n`.repeat(20),
  base64: Buffer.from(execSync("head -c 60000 /usr/bin/env")).toString("base64"),
};

test("counts equal js-tiktoken's in both encodings", () => {
  for (const [encoding, ranks] of [["o200k_base", o200k_base], ["cl100k_base", cl100k_base]]) {
    const oracle = new Tiktoken(ranks);
    for (const [name, text] of Object.entries(texts)) {
      assert.equal(count(text, { encoding }), oracle.encode(text, [], []).length, `${name} in ${encoding}`);
    }
  }
});

test("every keep at limits from 32 to 5000 keeps its promises", () => {
  const total = count(listing);
  for (const maxTokens of [32, 33, 100, 999, 1000, 3000, 5000]) {
    for (const keep of ["head", "tail", "head_tail"]) {
      const { text, truncation } = cap(listing, { maxTokens, keep });
      assert.ok(count(text) <= maxTokens, `${keep} ${maxTokens}: ${count(text)} tokens`);
      const [, dropped] = text.match(NOTE);
      assert.equal(Number(dropped), truncation.droppedTokens);
      assert.equal(truncation.keptTokens + truncation.droppedTokens, total);
      assert.deepEqual([truncation.originalTokens, truncation.maxTokens, truncation.keep], [total, maxTokens, keep]);
      const kept = text.slice(0, text.match(NOTE).index);
      if (keep === "head") assert.ok(listing.startsWith(kept));
      if (keep === "tail") assert.ok(listing.endsWith(kept));
    }
  }
  const short = "a short output";
  assert.deepEqual(cap(short), { text: short, truncation: null });
  assert.match(cap(listing, { hint: "use a narrower pattern" }).text, /refine your query: use a narrower pattern$/);
});

test("hostile text is capped within its limit", () => {
  for (const [name, text] of Object.entries(texts)) {
    const capped = cap(text, { maxTokens: 500 });
    assert.ok(count(capped.text) <= 500, name);
  }
  assert.ok(count(cap("a".repeat(10_000_000), { maxTokens: 100 }).text) <= 100);
  assert.ok(count(cap(" ".repeat(1_000_000), { maxTokens: 100 }).text) <= 100);
  const lone = `a lone \ud800 surrogate ${listing}`;
  assert.ok(count(cap(lone, { maxTokens: 100 }).text) <= 100);
  // Read with U+FFFD in its place, as the crate reads a `\ud800` escape.
  assert.equal(count(lone), count(lone.replace("\ud800", "\ufffd")));
  assert.ok(cap(lone, { maxTokens: 100 }).text.startsWith("a lone \ufffd surrogate"));
});

test("a tool's limit, its hint, an error's tail, and JSON of the same shape", () => {
  const limits = new Limits({ defaultMaxTokens: 4000, perTool: { Glob: { maxTokens: 3000, hint: "use a narrower pattern" }, Bash: 2000 } });
  assert.deepEqual([limits.maxTokensFor("Glob"), limits.maxTokensFor("Bash"), limits.maxTokensFor("Read")], [3000, 2000, 4000]);
  const glob = limits.cap("Glob", listing);
  assert.ok(limits.count(glob.text) <= 3000 && glob.text.endsWith(": use a narrower pattern"));
  const error = limits.cap("Bash", listing, { error: true });
  assert.ok(listing.endsWith(error.text.slice(error.text.indexOf("\n") + 1)) || error.truncation.keep === "tail");
  assert.equal(error.truncation.keep, "tail");
  const files = listing.split("\n");
  const json = limits.capJson("Glob", { files, total: files.length });
  const value = JSON.parse(json.text);
  assert.ok(Array.isArray(value.files) && value.total === files.length && limits.count(json.text) <= 3000);
  assert.throws(() => limits.capJson("Glob", "{not json"), /json is not JSON/);
  assert.deepEqual(limits.unmatchedTools(["Glob", "Read"]), ["Bash"]);
});

test("the manifest, and errors that say where", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-output-cap-npm-"));
  try {
    const file = path.join(dir, "agent.toml");
    writeFileSync(file, '[worker.tool_output]\ndefault_max_tokens = 4000\n\n[worker.tool_output.per_tool]\nGlob = { max_tokens = 3000, hint = "narrow it" }\n');
    const limits = Limits.fromManifest(file);
    assert.deepEqual([limits.maxTokensFor("Glob"), limits.maxTokensFor("Bash")], [3000, 4000]);
    writeFileSync(file, "[worker.tool_output]\ndefault_max_tokens = 10\n");
    assert.throws(() => Limits.fromManifest(file), (e) => e instanceof ManifestError && /agent\.toml:2:22: .*default_max_tokens/.test(e.message));
    assert.throws(() => Limits.fromManifest(path.join(dir, "missing.toml")), ManifestError);
    assert.throws(() => new Limits({ perTool: { Glob: { maxTokens: 10 } } }), { name: "ManifestError", message: /^perTool\.Glob\.maxTokens must be at least 32/ });
    assert.throws(() => new Limits({ defaultKeep: "middle" }), { name: "ManifestError", message: /defaultKeep/ });
    assert.throws(() => new Limits({ maxTokens: 3000 }), ManifestError);
    assert.throws(() => cap(listing, { keep: "middle" }), /keep must be "head", "tail" or "head_tail", found "middle"/);
    assert.throws(() => cap(listing, { maxTokens: 3 }), /maxTokens/);
    assert.throws(() => count(listing, { encoding: "p50k" }), /encoding must be/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the event loop keeps turning while a large output is capped", async () => {
  const big = listing.repeat(80); // 10 MB
  let ticks = 0;
  const timer = setInterval(() => (ticks += 1), 1);
  const [capped, tokens] = await Promise.all([capAsync(big, { maxTokens: 5000 }), countAsync(big)]);
  clearInterval(timer);
  assert.ok(count(capped.text) <= 5000);
  assert.equal(tokens, capped.truncation.originalTokens);
  // Work done on this thread would hold the timer back until the results were in, and the
  // interval is cleared as soon as they are: a tick is the loop turning while the work ran,
  // however loaded the machine.
  assert.ok(ticks > 0, "the timer never ticked while the work ran");
  const limits = new Limits({ perTool: { Glob: 3000 } });
  const [a, b] = await Promise.all([limits.capAsync("Glob", big), limits.capJsonAsync("Glob", { big })]);
  assert.ok(limits.count(a.text) <= 3000 && limits.count(b.text) <= 3000);
});

test("capJson says when no cut of the shape fits, and its text is within the limit", () => {
  const limits = new Limits({ defaultMaxTokens: 100 });
  for (const [shape, value] of Object.entries(NO_FIT)) {
    for (const error of [false, true]) {
      const capped = limits.capJson("stats", value, { error });
      assert.equal(capped.isJson, false, shape);
      assert.ok(count(capped.text) <= 100, `${shape}: ${count(capped.text)} tokens`);
      const [, dropped] = capped.text.match(NOTE);
      assert.equal(Number(dropped), capped.truncation.droppedTokens, shape);
      assert.throws(() => JSON.parse(capped.text), SyntaxError, shape);
    }
  }
  const files = listing.split("\n");
  const kept = limits.capJson("search", { files });
  assert.equal(kept.isJson, true);
  assert.ok(JSON.parse(kept.text).files.length < files.length);
  assert.deepEqual(limits.capJson("search", { files: ["a"] }), { text: '{"files":["a"]}', truncation: null, isJson: true });
});

test("a bad argument is a TypeError that names it", async () => {
  const limits = new Limits();
  const cases = [
    [() => count(123), "text must be a string, found a number"],
    [() => cap(123), "text must be a string, found a number"],
    [() => cap("x", { maxTokens: "100" }), "options.maxTokens must be a number, found a string"],
    [() => cap("x", "head"), "options must be an object, found a string"],
    [() => limits.cap("Glob", 123), "text must be a string, found a number"],
    [() => limits.cap(7, "x"), "toolName must be a string, found a number"],
    [() => limits.cap("Glob", "x", { error: "yes" }), "options.error must be a boolean, found a string"],
    [() => limits.capJson("Glob", undefined), "value must be JSON, found undefined"],
    [() => limits.capTexts("Glob", ["a", 2]), "texts[1] must be a string, found a number"],
    [() => limits.unmatchedTools("Glob"), "tools must be an array of strings, found a string"],
    [() => new Limits(5000), "options must be an object, found a number"],
    [() => Limits.fromManifest(undefined), "path must be a string, found undefined"],
  ];
  for (const [call, message] of cases) {
    assert.throws(call, (error) => error instanceof TypeError && error.message === message, message);
  }
  // The variants on the libuv pool reject with it.
  await assert.rejects(countAsync(null), { name: "TypeError", message: "text must be a string, found null" });
  await assert.rejects(limits.capAsync("Glob", 1), { name: "TypeError", message: "text must be a string, found a number" });
});

/** An Anthropic history of `turns` Glob calls, each answered with the listing. */
function globHistory(turns) {
  const messages = [{ role: "user", content: "go" }];
  for (let at = 0; at < turns; at++) {
    messages.push({ role: "assistant", content: [{ type: "tool_use", id: `t${at}`, name: "Glob", input: {} }] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${at}`, content: listing }] });
  }
  return messages;
}

test("a RateLimit learns the provider's limit from its headers, and capRequest keeps within rateLimitShare of it", async () => {
  const limits = new Limits({ defaultMaxTokens: 5000, rateLimitShare: 0.5 });
  const messages = globHistory(6);
  const sum = (capped) => JSON.parse(capped.body).messages.filter((_, at) => at % 2 === 0 && at > 0).reduce((sum, m) => sum + count(m.content[0].content), 0);
  const rateLimit = new RateLimit();
  assert.equal(rateLimit.limit, null);
  // Before any answer reported a limit: each result within its tool's limit alone.
  const before = limits.capRequest("anthropic", { messages }, { rateLimit });
  assert.ok(sum(before) > 15000, `${sum(before)}`);
  assert.equal(rateLimit.learn({ "content-type": "application/json" }), null);
  assert.equal(rateLimit.learn(new Headers({ "anthropic-ratelimit-input-tokens-limit": "30000" })), 30000);
  assert.equal(rateLimit.learn({ "llm_provider-x-ratelimit-limit-tokens": 40000 }), 40000, "LiteLLM's copy, a number");
  assert.equal(rateLimit.learn({ "anthropic-ratelimit-input-tokens-limit": "30000" }), 30000);
  assert.equal(rateLimit.limit, 30000);
  const capped = limits.capRequest("anthropic", { messages }, { rateLimit });
  assert.ok(sum(capped) <= 15000, `${sum(capped)}`);
  assert.ok(capped.cuts[0].elided);
  const again = await limits.capRequestAsync("anthropic", { messages }, { rateLimit });
  assert.equal(again.body, capped.body);
  assert.throws(() => limits.capRequest("anthropic", { messages }, { rateLimit: 30000 }), { name: "TypeError", message: "options.rateLimit must be a RateLimit, found a number" });
  assert.throws(() => rateLimit.learn("x"), { name: "TypeError", message: "headers must be a Headers or an object, found a string" });
});

test("capRequest caps a request's tool results as the gateway does, within maxTokensPerRequest", async () => {
  const limits = new Limits({ defaultMaxTokens: 3000, maxTokensPerRequest: 8000 });
  const messages = globHistory(6);
  const capped = limits.capRequest("anthropic", { messages });
  const sent = JSON.parse(capped.body).messages;
  const results = sent.filter((_, at) => at % 2 === 0 && at > 0).map((m) => m.content[0].content);
  assert.equal(results.length, 6);
  assert.ok(results.reduce((sum, result) => sum + count(result), 0) <= 8000);
  assert.ok(capped.cuts[0].elided && !capped.cuts[5].elided);
  assert.match(results[0], /^truncated: all \d+ tokens dropped to fit the request's budget, call Glob again if you need it$/);
  assert.match(results[5], NOTE);
  const again = await limits.capRequestAsync("anthropic", JSON.stringify({ messages }));
  assert.equal(again.body, capped.body);
  assert.ok(again.cuts.every((cut) => cut.cached || cut.elided));
  assert.equal(new Limits().capRequest("anthropic", { messages: [] }).body, null);
  assert.throws(() => limits.capRequest("openai", {}), /api must be "anthropic", "openai-chat", "openai-responses" or "gemini", found "openai"/);
  assert.throws(() => limits.capRequest("anthropic", "[1]"), /the request body is not a JSON object/);
  assert.throws(() => limits.capRequest("anthropic", 5), { name: "TypeError", message: "body must be a string or an object, found a number" });
});
