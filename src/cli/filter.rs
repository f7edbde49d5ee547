//! `cap` and `count`: stdin to stdout.

use std::io::{Read, Write};
use std::path::Path;

use super::args::{CountingArgs, LimitArgs};
use super::Failure;
use crate::truncate::cap_text;
use crate::{Manifest, ToolLimit, ToolOutputLimits};

/// Writes stdin to stdout, capped to the limit `args` give.
pub(crate) fn cap(args: LimitArgs) -> Result<(), Failure> {
    let limits = limits(args.manifest.as_deref(), &args.counting)?;
    // Without --tool, the default limit; the event names the tool `stdin`.
    let tool = args.tool.as_deref();
    let mut limit = tool
        .map_or(limits.default_limit(), |tool| limits.limit_for(tool))
        .clone();
    if let Some(max_tokens) = args.max_tokens {
        limit = ToolLimit {
            max_tokens: max_tokens as usize,
            ..limit
        };
    }
    if let Some(keep) = args.keep {
        limit = limit.with_keep(keep.into());
    }
    if let Some(hint) = args.hint {
        if hint.contains(['\n', '\r']) {
            return Err(Failure::usage(
                "--hint must be one line: the note is the output's last line",
            ));
        }
        limit = limit.with_hint(hint);
    }
    let mut text = read_stdin()?;
    cap_text(
        tool.unwrap_or("stdin"),
        &mut text,
        &limit,
        &*limits.tokenizer(),
        false,
    );
    write_stdout(text.as_bytes())
}

/// Prints the token count of stdin.
pub(crate) fn count(manifest: Option<&Path>, counting: &CountingArgs) -> Result<(), Failure> {
    let tokenizer = limits(manifest, counting)?.tokenizer();
    let text = read_stdin()?;
    write_stdout(format!("{}\n", tokenizer.count(&text)).as_bytes())
}

/// The limits of the manifest at `path` (or the defaults), counting with what `counting` says
/// if it says anything.
pub(crate) fn limits(
    path: Option<&Path>,
    counting: &CountingArgs,
) -> Result<ToolOutputLimits, Failure> {
    let limits = match path {
        Some(path) => Manifest::from_path(path)?.worker.limits(),
        None => ToolOutputLimits::default(),
    };
    if let Some(encoding) = counting.encoding {
        return Ok(limits.with_encoding(encoding.into()));
    }
    match &counting.tokenizer_file {
        #[cfg(feature = "hf")]
        Some(file) => limits
            .with_tokenizer_file(file)
            .map_err(|e| Failure::usage(format!("--tokenizer-file {e}"))),
        #[cfg(not(feature = "hf"))]
        Some(file) => Err(Failure::usage(format!(
            "--tokenizer-file {}: this build cannot read tokenizer files; build with the `hf` \
             feature",
            file.display()
        ))),
        None => Ok(limits),
    }
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

fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::io(format!("cannot write stdout: {e}")))
}
