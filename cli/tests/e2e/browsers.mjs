// The browser manifests of cli/README.md against the real servers: `tool-output-cap check` with
// each manifest in front of Playwright MCP and Chrome DevTools MCP, at the versions pinned in
// package.json. Listing the tools starts no browser, so none is needed.
//
//   node cli/tests/e2e/browsers.mjs PARTS PROXY
//
// PARTS is the folder where .ci/run installed the packages, PROXY the built binary. Every
// `per_tool` name must be a tool of its server and get its limit, with no warning.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [parts, proxy] = process.argv.slice(2).map((arg) => path.resolve(arg));
const readme = readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), "../../README.md"),
  "utf8",
);
const section = readme.slice(readme.indexOf("### Browsers"));
const manifests = [...section.matchAll(/```toml\n(.*?)```/gs)].map((m) => m[1]);
const servers = [
  ["playwright.toml", "node_modules/@playwright/mcp/cli.js"],
  ["chrome-devtools.toml", "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"],
];
const scratch = mkdtempSync(path.join(tmpdir(), "tool-output-cap-browsers-"));
try {
  for (const [name, script] of servers) {
    const manifest = manifests.find((text) => text.startsWith(`# ~/.config/tool-output-cap/${name}`));
    assert.ok(manifest, `cli/README.md has no ${name}`);
    const file = path.join(scratch, name);
    writeFileSync(file, manifest);
    const out = execFileSync(
      proxy,
      ["check", "--manifest", file, "--", process.execPath, path.join(parts, script)],
      { encoding: "utf8", timeout: 120_000 },
    );
    assert.ok(!out.includes("warning:"), `${name}:\n${out}`);
    const names = [...manifest.matchAll(/^(\w+) = /gm)].map((m) => m[1]);
    assert.ok(names.length >= 4, `${name}: ${names}`);
    for (const tool of names) {
      const max = Number(manifest.match(new RegExp(`^${tool} = \\{ max_tokens = (\\d+)`, "m"))[1]);
      const line = out.split("\n").find((l) => l.startsWith(`${tool} `));
      assert.ok(line, `${name}: no tool ${tool} in\n${out}`);
      assert.match(line, new RegExp(`^${tool}\\s+${max}\\s+\\w+\\s+per_tool\\s`), `${name}: ${line}`);
    }
    console.log(`${name}: ${names.length} per_tool limits, each a tool of its server`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
