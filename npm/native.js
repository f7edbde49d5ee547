// Loads the addon built for this platform: beside this file when built or packed here, else
// from the platform's own package, which the release installs as an optional dependency.
"use strict";

const { platform, arch } = process;

function libc() {
  if (platform !== "linux") return "";
  const report = typeof process.report?.getReport === "function" ? process.report.getReport() : null;
  return report?.header?.glibcVersionRuntime ? "-gnu" : "-musl";
}

const triple = `${platform}-${arch}${libc()}`;
const tried = [];
for (const file of [`./tool-output-cap.${triple}.node`, `tool-output-cap-${triple}`]) {
  try {
    module.exports = require(file);
    return;
  } catch (error) {
    if (error.code !== "MODULE_NOT_FOUND") throw error;
    tried.push(file);
  }
}
throw new Error(
  `tool-output-cap has no build for ${triple} (tried ${tried.join(", ")}); ` +
    "this repository builds and tests linux-x64-gnu, and its release workflow the other platforms",
);
