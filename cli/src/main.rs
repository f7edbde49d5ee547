//! `tool-output-cap`: the cap of the `tool-output-cap` crate for agent hosts and shells that
//! cannot link a Rust crate. An MCP stdio proxy (`mcp`, checked by `check`), and filters (`run`,
//! `cap`, `count`). See the README.

#![deny(unsafe_code)] // but the one block in `child`, with its safety argument

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

mod args;
mod check;
mod child;
mod config;
mod filter;
mod lenient;
mod log;
mod pending;
mod relay;
mod result;
mod run;

use args::{Args, Command};

/// How long the logs have to reach stderr once the work is done: a host that does not read it
/// is not waited for.
const LOGS_FLUSH: Duration = Duration::from_millis(200);

/// Runs the command line; logs go to stderr, at the level `RUST_LOG` sets (`warn` without it).
fn main() -> ExitCode {
    let args = Args::parse();
    log::init();
    let outcome = match args.command {
        Command::Mcp { limit, server } => relay::run(&limit, &server.command),
        Command::Check {
            limit,
            timeout,
            server,
        } => check::run(
            &limit,
            std::time::Duration::from_secs(timeout),
            &server.command,
        ),
        Command::Run {
            limit,
            tool,
            command,
        } => run::run(&limit, tool.tool.as_deref(), &command.command),
        Command::Cap { limit, tool } => {
            filter::cap(&limit, tool.tool.as_deref()).map(|()| ExitCode::SUCCESS)
        }
        Command::Count { manifest, counting } => {
            filter::count(manifest.as_deref(), &counting).map(|()| ExitCode::SUCCESS)
        }
    };
    let code = outcome.unwrap_or_else(|failure| {
        log::say(format!("tool-output-cap: {}\n", failure.message));
        ExitCode::from(failure.code)
    });
    log::flush(LOGS_FLUSH);
    code
}

/// What stops the binary before it could do its job: said on stderr, with an exit code.
#[derive(Debug)]
pub(crate) struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    /// A bad flag or manifest: exit code 2.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 2,
        }
    }

    /// Reading or writing failed, or a server did not answer: exit code 1.
    pub(crate) fn io(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// The command could not be started: exit code 127, as a shell says.
    pub(crate) fn not_started(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 127,
        }
    }
}

impl From<tool_output_cap::ManifestError> for Failure {
    fn from(error: tool_output_cap::ManifestError) -> Self {
        Failure::usage(error.to_string())
    }
}
