//! `cap` and `count`: stdin to stdout, read in parts and held only as far as a cut keeps it.

use std::io::{ErrorKind, Read, Write};
use std::path::Path;

use tool_output_cap::{Outcome, StreamedOutput, TokenCount, ToolLimit};

use crate::args::{CountingArgs, LimitArgs};
use crate::config::Config;
use crate::Failure;

/// How much is read at a time.
const READ: usize = 64 * 1024;

/// Writes stdin to stdout, capped to the limit of `tool` (the default limit without one) with
/// the flags of `args` over it.
pub(crate) fn cap(args: &LimitArgs, tool: Option<&str>) -> Result<(), Failure> {
    let config = Config::load(args.manifest.as_deref(), &args.counting)?;
    let limit = config.limit(tool, args, None)?;
    let mut output = StreamedOutput::new(config.limits.tokenizer(), limit.max_tokens());
    read_text(std::io::stdin().lock(), "stdin", Utf8::Strict, |text| {
        output.push(text);
    })?;
    output.finish();
    // Without --tool, the event names the tool `stdin`.
    match capped(&output, tool.unwrap_or("stdin"), &limit) {
        Some(capped) => write_stdout(capped.as_bytes()),
        None => write_stdout(output.held().as_bytes()),
    }
}

/// Prints the token count of stdin.
pub(crate) fn count(manifest: Option<&Path>, counting: &CountingArgs) -> Result<(), Failure> {
    let config = Config::load(manifest, counting)?;
    let mut count = TokenCount::new(config.limits.tokenizer());
    read_text(std::io::stdin().lock(), "stdin", Utf8::Strict, |text| {
        count.push(text);
    })?;
    write_stdout(format!("{}\n", count.finish()).as_bytes())
}

/// `output`, an output of `tool`, capped to `limit`, with the cut recorded; `None` when it is
/// within the limit. A capped text ends with a newline after the note, as a filter's output
/// should, and that newline is within the limit.
pub(crate) fn capped(output: &StreamedOutput<'_>, tool: &str, limit: &ToolLimit) -> Option<String> {
    let cut = output.cut_leaving_room(limit, "\n")?;
    cut.truncation.record(tool, Outcome::Output);
    Some(cut.capped(output.held()))
}

/// What to do with bytes that are not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Utf8 {
    /// Stop, with an error that says where: a filter's input is text.
    Strict,
    /// Read each stretch of them as one U+FFFD, as hosts show them, with a warning.
    Lossy,
}

/// Reads `reader`, named `name` in errors, to its end, giving its text to `each` as it comes.
pub(crate) fn read_text(
    mut reader: impl Read,
    name: &str,
    utf8: Utf8,
    mut each: impl FnMut(&str),
) -> Result<(), Failure> {
    let mut buffer = vec![0; READ];
    // Bytes not yet given: a character a read cut in two.
    let mut waiting = Vec::new();
    // The offset of `waiting` in what was read.
    let mut offset = 0;
    let mut warned = false;
    let mut invalid = |at: usize| -> Result<(), Failure> {
        match utf8 {
            Utf8::Strict => Err(Failure::io(format!(
                "{name} is not UTF-8: invalid byte at offset {at}; tokens are counted in text"
            ))),
            Utf8::Lossy => {
                if !std::mem::replace(&mut warned, true) {
                    tracing::warn!(
                        offset = at,
                        "{name} is not UTF-8; its invalid bytes are counted and kept as U+FFFD"
                    );
                }
                Ok(())
            }
        }
    };
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::io(format!("cannot read {name}: {e}"))),
        };
        waiting.extend_from_slice(&buffer[..read]);
        let start = give_text(&waiting, offset, &mut each, &mut invalid)?;
        offset += start;
        waiting.drain(..start);
    }
    if !waiting.is_empty() {
        invalid(offset)?;
        each("\u{FFFD}");
    }
    Ok(())
}

/// Gives `each` the text of `bytes`, read from `offset` on, and U+FFFD for each stretch of them
/// that is not UTF-8, once `invalid` allows it; how many bytes it gave, less a character cut in
/// two at the end, which the next read completes.
fn give_text(
    bytes: &[u8],
    offset: usize,
    each: &mut impl FnMut(&str),
    invalid: &mut impl FnMut(usize) -> Result<(), Failure>,
) -> Result<usize, Failure> {
    let mut start = 0;
    while start < bytes.len() {
        match std::str::from_utf8(&bytes[start..]) {
            Ok(text) => {
                each(text);
                return Ok(bytes.len());
            }
            Err(e) => {
                let valid = start + e.valid_up_to();
                each(std::str::from_utf8(&bytes[start..valid]).expect("valid up to here"));
                let Some(len) = e.error_len() else {
                    return Ok(valid);
                };
                invalid(offset + valid)?;
                each("\u{FFFD}");
                start = valid + len;
            }
        }
    }
    Ok(start)
}

/// Writes `bytes` to stdout and flushes it.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::io(format!("cannot write stdout: {e}")))
}
