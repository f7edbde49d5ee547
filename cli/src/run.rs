//! `run`: a command's output, capped, and its exit code.

use tool_output_cap::{Keep, StreamedOutput};

use crate::args::LimitArgs;
use crate::config::Config;
use crate::filter::{capped, read_text, write_stdout, Utf8};
use crate::{child, Failure};

/// What a cut of a command's output keeps without `--keep` or a tool's own limit: the first
/// lines say what the command did and hold its first error, the last its summary.
const KEEP: Keep = Keep::HeadTail;

/// Runs `command` with its stdout and stderr on one pipe, so that their lines stay in the order
/// they were written; writes what it wrote to stdout, capped; exits as it did.
pub(crate) fn run_capped(
    args: &LimitArgs,
    tool: Option<&str>,
    command: &[String],
) -> Result<u8, Failure> {
    let config = Config::load(args.manifest.as_deref(), &args.counting)?;
    let limit = config.limit(tool, args, Some(KEEP))?;
    let (output, writer) =
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
    let mut capture = StreamedOutput::new(config.limits.tokenizer(), limit.max_tokens());
    let read = read_text(
        output,
        &format!("the output of `{}`", command[0]),
        Utf8::Lossy,
        |text| capture.push(text),
    );
    let status = started
        .wait()
        .map_err(|e| Failure::io(format!("cannot wait for `{}`: {e}", command[0])))?;
    read?;
    capture.finish();
    match capped(&capture, tool.unwrap_or(&command[0]), &limit) {
        Some(capped) => write_stdout(capped.as_bytes())?,
        None => write_stdout(capture.held().as_bytes())?,
    }
    Ok(child::exit_code(status))
}
