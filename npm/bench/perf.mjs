// What the package costs against the exact tokenizers JavaScript users have, in one run, as
// ratios (this machine is shared and noisy, so each round times every side in turn): `count`
// and `cap` on a 125 KB `find /usr -type f` listing and on 10 MB of it, against js-tiktoken
// (pure JS), gpt-tokenizer (pure TS) and tiktoken (WASM) counting the same text in o200k_base.
// Run from a project that installed the package and the three (the tests' project does):
//
//   node perf.mjs

import { execSync } from "node:child_process";

import { Tiktoken as JsTiktoken } from "js-tiktoken/lite";
import o200k_base from "js-tiktoken/ranks/o200k_base";
import { countTokens as gptCount } from "gpt-tokenizer/encoding/o200k_base";
import { get_encoding } from "tiktoken";
import { cap, count } from "tool-output-cap";

const listing = execSync("find /usr -type f | head -c 125000", { maxBuffer: 1 << 26 }).toString();
const big = execSync("find /usr -type f", { maxBuffer: 1 << 28 }).toString().repeat(20).slice(0, 10_000_000);
const js = new JsTiktoken(o200k_base);
const wasm = get_encoding("o200k_base");
const sides = {
  "tool-output-cap count": (text) => count(text),
  "tool-output-cap cap 5000": (text) => cap(text, { maxTokens: 5000 }).truncation.originalTokens,
  "js-tiktoken encode": (text) => js.encode(text, [], []).length,
  "gpt-tokenizer countTokens": (text) => gptCount(text, { disallowedSpecial: new Set() }),
  "tiktoken (WASM) encode_ordinary": (text) => wasm.encode_ordinary(text).length,
};

function bench(name, text, rounds) {
  const counts = Object.fromEntries(Object.entries(sides).map(([side, fn]) => [side, fn(text)]));
  const expected = counts["tool-output-cap count"];
  for (const [side, n] of Object.entries(counts)) {
    if (side !== "tool-output-cap cap 5000" && n !== expected) throw new Error(`${side} counts ${n}, tool-output-cap ${expected}`);
  }
  const times = Object.fromEntries(Object.keys(sides).map((side) => [side, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (const [side, fn] of Object.entries(sides)) {
      const started = performance.now();
      fn(text);
      times[side].push(performance.now() - started);
    }
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const ours = median(times["tool-output-cap count"]);
  console.log(`${name}: ${Buffer.byteLength(text)} bytes, ${expected} tokens (every side counts the same); median of ${rounds}`);
  for (const [side, values] of Object.entries(times)) {
    const ms = median(values);
    console.log(`  ${side.padEnd(32)} ${ms.toFixed(2).padStart(9)} ms   ratio to tool-output-cap count ${(ms / ours).toFixed(2)}`);
  }
}

bench("the 125 KB listing", listing, 15);
bench("10 MB of listings", big, 3);
wasm.free();
