// The package as npm installs it on Node 20, which it does not support: `npm install` of the
// packed tarball ($TOOL_OUTPUT_CAP_TARBALL) into a fresh project warns of its `engines`, and a
// framework of another major than its peer range is refused. Run with the machine's own Node 20
// and npm, resolving only (`--package-lock-only`), so nothing is built or downloaded whole.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";

const tarball = process.env.TOOL_OUTPUT_CAP_TARBALL;
const node20 = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "";
const skip = !tarball
  ? "skipped: TOOL_OUTPUT_CAP_TARBALL names no packed tarball (.ci/run sets it)"
  : !node20.startsWith("v20.")
    ? `skipped: /usr/bin/node is ${node20 || "missing"}, not Node 20`
    : false;
if (skip) console.log(`install.test.mjs ${skip}`);

/** `npm install ARGS` in a fresh project, with the machine's Node 20 first on the PATH. */
function install(args) {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-output-cap-install-"));
  try {
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "fresh", private: true }));
    const env = { ...process.env, PATH: `/usr/bin:${process.env.PATH}`, npm_config_update_notifier: "false" };
    const args_ = ["install", "--package-lock-only", "--no-audit", "--no-fund", ...args];
    return spawnSync("/usr/bin/npm", args_, { cwd: dir, env, encoding: "utf8" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("on Node 20, npm warns of the engines the package needs", { skip }, () => {
  const result = install([tarball]);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stderr, /EBADENGINE/);
  assert.match(result.stderr, /package: 'tool-output-cap@0\.1\.0'/);
  assert.match(result.stderr, /required: \{ node: '>=22' \}/);
});

test("a framework of another major is refused, naming the package and its range", { skip }, () => {
  const result = install([tarball, "ai@6"]);
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /ERESOLVE/);
  assert.match(result.stderr, /peerOptional ai@"\^7\.0\.0" from tool-output-cap@0\.1\.0/);
});
