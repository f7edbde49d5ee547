//! The `tool-output-cap` command, run in this process: the package's `bin` script calls it.

use napi_derive::napi;

/// Runs the command line `argv`, the program's name first, and gives its exit code. It blocks
/// the thread it runs on until the command is done, as a command does.
#[napi]
pub fn run(argv: Vec<String>) -> u8 {
    tool_output_cap_cli::run(argv)
}
