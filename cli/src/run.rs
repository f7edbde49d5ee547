//! `run`: a command's output, capped, and its exit code.

use std::io::Read;

use tool_output_cap::Keep;

use crate::args::LimitArgs;
use crate::config::Config;
use crate::filter::{capped, write_stdout};
use crate::{child, Failure};

/// What a cut of a command's output keeps without `--keep` or a tool's own limit: the first
/// lines say what the command did and hold its first error, the last its summary.
const KEEP: Keep = Keep::HeadTail;

/// Runs `command` with its stdout and stderr on one pipe, so that their lines stay in the order
/// they were written; writes what it wrote to stdout, capped; exits as it did.
pub(crate) fn run(args: &LimitArgs, tool: Option<&str>, command: &[String]) -> Result<u8, Failure> {
    let config = Config::load(args.manifest.as_deref(), &args.counting)?;
    let limit = config.limit(tool, args, Some(KEEP))?;
    let (mut output, writer) =
        std::io::pipe().map_err(|e| Failure::io(format!("cannot make a pipe: {e}")))?;
    let error_writer = writer
        .try_clone()
        .map_err(|e| Failure::io(format!("cannot make a pipe: {e}")))?;
    let mut process = child::command(command)?;
    process.stdout(writer).stderr(error_writer);
    let mut started = process
        .spawn()
        .map_err(|e| child::not_started(command, e))?;
    // The command's copies of the pipe's writing end must close for the read to end.
    drop(process);
    let mut bytes = Vec::new();
    let read = output.read_to_end(&mut bytes);
    let status = started
        .wait()
        .map_err(|e| Failure::io(format!("cannot wait for `{}`: {e}", command[0])))?;
    read.map_err(|e| Failure::io(format!("cannot read the output of `{}`: {e}", command[0])))?;
    let mut text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            tracing::warn!(
                offset = e.utf8_error().valid_up_to(),
                "the output of `{}` is not UTF-8; its invalid bytes are counted and kept as U+FFFD",
                command[0]
            );
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    capped(&mut text, tool.unwrap_or(&command[0]), &limit, &config);
    write_stdout(text.as_bytes())?;
    Ok(child::exit_code(status))
}
