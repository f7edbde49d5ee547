#!/usr/bin/env node
// The `tool-output-cap` command: the crate's own, run inside the addon, with every subcommand of
// the Rust binary. Node's own SIGINT and SIGTERM handlers would end the process at once; with
// listeners of its own it leaves them to the command, which ends its server and children first.
"use strict";

const { run } = require("../native.js");

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => {});
process.exit(run(["tool-output-cap", ...process.argv.slice(2)]));
