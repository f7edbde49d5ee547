// What the adapters' tests give their tools: the three structures no cut of the shape fits, and
// ten screenshots of this machine with the oracle of their price.

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

// The three structures no cut of the shape fits, under a limit of 100: an object of 500 short
// fields, small objects nested with no list, and a list of one such object.
const fields = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field_${i}`, i]));
let nested = { leaf: 0 };
for (let depth = 1; depth < 120; depth++) nested = { depth, flag: true, inner: nested };

export const NO_FIT = {
  "500 short fields": fields,
  "nested small objects": nested,
  "a list of one huge item": [fields],
};

/** A PNG's width and height, from its header; throws for anything else. */
export function pngSize(bytes) {
  const png = Buffer.from(bytes);
  if (png.toString("latin1", 1, 4) !== "PNG" || png.toString("latin1", 12, 16) !== "IHDR") throw new Error("not a PNG");
  return [png.readUInt32BE(16), png.readUInt32BE(20)];
}

/**
 * Anthropic's published price of an image: scaled down to a long edge of 1568 px, then its area
 * over 750, at most 1640 (docs.claude.com, "Vision").
 */
export function anthropicTokens([width, height]) {
  const scale = Math.min(1, 1568 / Math.max(width, height));
  const [w, h] = [Math.max(1, Math.floor(width * scale)), Math.max(1, Math.floor(height * scale))];
  return Math.min(Math.ceil((w * h) / 750), 1640);
}

/** The note that images gave way: [dropped tokens, how many gave way, of how many]; null for any other text. */
export function mediaNote(text) {
  const match = /^truncated: (\d+) tokens dropped \((\d+) of (\d+) images(; \d+ scaled to \d+ px)?\), refine your query$/.exec(text);
  return match && match.slice(1, 4).map(Number);
}

/**
 * Ten screenshots of this machine, PNGs of 800 px wide or more: those of the Rust toolchain's own
 * docs (its rust-docs component), as the crate's image tests take them; null, having said why,
 * where there are not ten.
 */
export function screenshots() {
  let folder;
  try {
    folder = path.join(execFileSync("rustc", ["--print", "sysroot"], { encoding: "utf8" }).trim(), "share/doc/rust/html");
  } catch {
    console.log("skipped: no rustc to find the screenshots of its docs");
    return null;
  }
  const files = readdirSync(folder, { recursive: true }).filter((name) => name.endsWith(".png")).sort();
  const seen = new Set();
  const shots = [];
  for (const name of files) {
    const bytes = readFileSync(path.join(folder, name));
    const key = bytes.toString("base64");
    if (seen.has(key) || bytes.toString("latin1", 1, 4) !== "PNG" || pngSize(bytes)[0] < 800) continue;
    seen.add(key);
    shots.push(bytes);
  }
  if (shots.length < 10) {
    console.log(`skipped: fewer than ten PNGs of 800 px wide or more in ${folder} (rustup's rust-docs component)`);
    return null;
  }
  return shots.slice(0, 10);
}
