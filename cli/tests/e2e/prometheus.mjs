// A real Prometheus (Debian's `prometheus`, which .ci/run installs where missing) scraping one
// target every second, on loopback, with a store of its own, and its HTTP API to query.

import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { freePort } from "./host_setup.mjs";

const BINARY = "/usr/bin/prometheus";

/** Prometheus's version, or `null` when it is not installed. */
export function prometheusVersion() {
  try {
    return execFileSync(BINARY, ["--version"], { encoding: "utf8" }).split("\n")[0];
  } catch {
    return null;
  }
}

/**
 * Starts Prometheus scraping `target` (host:port) every second; resolves once it is ready, to
 * { query(expression): number | undefined, stop() }.
 */
export async function startPrometheus(target) {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-output-cap-prometheus-"));
  const config = path.join(dir, "prometheus.yml");
  writeFileSync(config, `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gateway\n    static_configs:\n      - targets: ["${target}"]\n`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(BINARY, [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr.on("data", (data) => (log += data));
  const stop = () =>
    new Promise((resolve) => {
      const done = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null) return done();
      child.on("exit", done);
      child.kill("SIGTERM");
    });
  for (let waited = 0; ; waited += 200) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (child.exitCode !== null || waited > 60_000) {
      await stop();
      throw new Error(`Prometheus did not start: ${log.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const query = async (expression) => {
    const answer = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`).then((r) => r.json());
    const value = answer.data?.result?.[0]?.value?.[1];
    return value === undefined ? undefined : Number(value);
  };
  return { query, stop };
}

/** Polls `query(expression)` until it gives `expected` (or 30 s pass): the last value it gave. */
export async function scraped(prometheus, expression, expected) {
  let value;
  for (let waited = 0; waited <= 30_000; waited += 500) {
    value = await prometheus.query(expression);
    if (value === expected) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return value;
}
