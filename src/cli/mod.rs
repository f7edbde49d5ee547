//! The `tool-output-cap` binary, behind the `cli` feature: an MCP stdio proxy (`mcp`) and shell
//! filters (`cap`, `count`). Not part of the library's API.

use std::process::ExitCode;

use clap::Parser;

mod args;
mod filter;
mod mcp;
mod relay;

use args::{Args, Command};

/// Runs the command line; logs go to stderr, at the level `RUST_LOG` sets (`warn` without it).
pub fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let outcome = match args.command {
        Command::Mcp {
            manifest,
            counting,
            command,
        } => relay::run(manifest.as_deref(), &counting, &command),
        Command::Cap { limit } => filter::cap(limit).map(|()| ExitCode::SUCCESS),
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

    /// Reading or writing failed: exit code 1.
    pub(crate) fn io(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// The server command could not be started: exit code 127, as a shell says.
    pub(crate) fn not_started(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 127,
        }
    }
}

impl From<crate::ManifestError> for Failure {
    fn from(error: crate::ManifestError) -> Self {
        Failure::usage(error.to_string())
    }
}
