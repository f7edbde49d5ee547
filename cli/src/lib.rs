//! The `tool-output-cap` command: the cap of the `tool-output-cap` crate for agent hosts and
//! shells that cannot link a Rust crate. An MCP stdio proxy (`mcp`, checked by `check`), a
//! gateway in front of a model API (`gateway`, checked by `check --request`), and filters
//! (`run`, `cap`, `count`). See the README.
//!
//! Its item [`run`] is the whole command, for a program that ships it inside another process:
//! the binary's `main`, and the Python package's `tool-output-cap` script. [`manifest_path`]
//! is the manifest it reads, for a program that caps as it does.

#![deny(unsafe_code)] // but the blocks in `child` and `allocator`, with their safety arguments

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

mod allocator;
mod args;
mod capper;
mod capping_thread;
mod check;
mod check_request;
mod child;
mod config;
mod failure;
mod filter;
mod gateway;
mod https;
mod last_output;
mod lenient;
mod log;
mod mcp;
mod pending;
mod remote;
mod result;
mod run;
mod runtime;
mod signals;

use args::{Args, Command};
use failure::Failure;

/// How long the logs have to reach stderr once the work is done: a host that does not read it
/// is not waited for.
const LOGS_FLUSH: Duration = Duration::from_millis(200);

/// The manifest the command reads when `--manifest` does not name one: the file
/// `$TOOL_OUTPUT_CAP_MANIFEST` names, else `tool-output-cap/manifest.toml` in the user's config
/// folder (`$XDG_CONFIG_HOME` or `~/.config` on Linux) if it exists; `None` for the built-in
/// defaults.
pub fn manifest_path() -> Option<PathBuf> {
    config::manifest_path(None)
}

/// Runs the command line `args`, the program's name first, and gives its exit code: the
/// server's or the command's, or 1, 2 or 127 for what stopped it (said on stderr, as `--help`
/// and a bad flag are). Logs go to stderr, at the level `RUST_LOG` sets (`warn` without it).
///
/// Call it once per process, on the thread that will wait for it: it sets the process's log
/// subscriber, and handles SIGTERM, SIGINT and SIGHUP while `mcp` runs.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args = match Args::try_parse_from(args) {
        Ok(args) => args,
        Err(error) => {
            let _ = error.print();
            return u8::try_from(error.exit_code()).unwrap_or(2);
        }
    };
    log::init();
    let outcome = match args.command {
        Command::Mcp {
            limit,
            remote,
            server,
            command,
        } => match (&remote.url, remote.listen) {
            (Some(url), Some(listen)) => gateway::mcp_listen(&limit, &server, url, listen),
            (Some(_), None) => remote::bridge(&limit, &remote),
            (None, _) => mcp::proxy(&limit, &command),
        },
        Command::Check {
            limit,
            request_budget,
            request: Some(request),
            route,
            ..
        } => check_request::check_request(&limit, &request_budget, &request, route.as_deref()),
        Command::Check {
            limit,
            timeout,
            remote,
            command,
            ..
        } => match remote.url {
            Some(_) => remote::check(&limit, &remote, std::time::Duration::from_secs(timeout)),
            None => check::list_tools(&limit, std::time::Duration::from_secs(timeout), &command),
        },
        Command::Run {
            limit,
            tool,
            command,
        } => run::run_capped(&limit, tool.tool.as_deref(), &command.command),
        Command::Gateway(args) => gateway::gateway(&args),
        Command::Cap { limit, tool } => filter::cap(&limit, tool.tool.as_deref()).map(|()| 0),
        Command::Count { manifest, counting } => {
            filter::count(manifest.as_deref(), &counting).map(|()| 0)
        }
    };
    let code = outcome.unwrap_or_else(|failure| {
        log::say(format!("tool-output-cap: {}\n", failure.message));
        failure.code
    });
    log::flush(LOGS_FLUSH);
    code
}
