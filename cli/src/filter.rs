//! `cap` and `count`: stdin to stdout.

use std::io::{Read, Write};
use std::path::Path;

use tool_output_cap::{cut, ToolLimit, Truncation};

use crate::args::{CountingArgs, LimitArgs};
use crate::config::Config;
use crate::Failure;

/// Writes stdin to stdout, capped to the limit of `tool` (the default limit without one) with
/// the flags of `args` over it.
pub(crate) fn cap(args: &LimitArgs, tool: Option<&str>) -> Result<(), Failure> {
    let config = Config::load(args.manifest.as_deref(), &args.counting)?;
    let limit = config.limit(tool, args, None)?;
    let mut text = read_stdin()?;
    // Without --tool, the event names the tool `stdin`.
    capped(&mut text, tool.unwrap_or("stdin"), &limit, &config);
    write_stdout(text.as_bytes())
}

/// Prints the token count of stdin.
pub(crate) fn count(manifest: Option<&Path>, counting: &CountingArgs) -> Result<(), Failure> {
    let config = Config::load(manifest, counting)?;
    let text = read_stdin()?;
    write_stdout(format!("{}\n", config.limits.tokenizer().count(&text)).as_bytes())
}

/// Caps `text`, an output of `tool`, to `limit`, and records the cut. A capped text ends with a
/// newline after the note, as a filter's output should, and that newline is within the limit.
pub(crate) fn capped(text: &mut String, tool: &str, limit: &ToolLimit, config: &Config) {
    let tokenizer = config.limits.tokenizer();
    let max_tokens = limit.max_tokens();
    // Room for the newline: a cut a token shorter, whose total says whether the text was within
    // the limit as given; again a token shorter while the whole does not fit.
    let shorter = |room: usize| {
        cut(
            text,
            &limit.clone().with_max_tokens(max_tokens - room),
            tokenizer,
        )
    };
    let Some(mut found) = shorter(1).filter(|cut| cut.truncation.original_tokens > max_tokens)
    else {
        return;
    };
    let mut output = found.capped(text);
    output.push('\n');
    for room in 2..=8 {
        if tokenizer.count(&output) <= max_tokens {
            break;
        }
        if let Some(again) = shorter(room) {
            found = again;
        }
        output = found.capped(text);
        output.push('\n');
    }
    *text = output;
    Truncation {
        max_tokens,
        ..found.truncation
    }
    .record(tool, false);
}

/// All of stdin, which must be UTF-8.
fn read_stdin() -> Result<String, Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::io(format!("cannot read stdin: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        Failure::io(format!(
            "stdin is not UTF-8: invalid byte at offset {}; tokens are counted in text",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Writes `bytes` to stdout and flushes it.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::io(format!("cannot write stdout: {e}")))
}
