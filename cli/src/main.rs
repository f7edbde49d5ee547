//! The `tool-output-cap` binary: [`tool_output_cap_cli::run`] on the process's command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(tool_output_cap_cli::run(std::env::args_os()))
}
