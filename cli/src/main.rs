//! `tool-output-cap`: the cap of the `tool-output-cap` crate for agent hosts and shells that
//! cannot link a Rust crate. An MCP stdio proxy (`mcp`, checked by `check`), and filters (`run`,
//! `cap`, `count`). See the README.

use std::process::ExitCode;

use clap::Parser;

mod args;
mod check;
mod child;
mod config;
mod filter;
mod pending;
mod relay;
mod result;
mod run;

use args::{Args, Command};

/// Runs the command line; logs go to stderr, at the level `RUST_LOG` sets (`warn` without it).
fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
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
    outcome.unwrap_or_else(|failure| {
        eprintln!("tool-output-cap: {}", failure.message);
        ExitCode::from(failure.code)
    })
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
