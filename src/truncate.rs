//! Capping a tool's output or error and recording the truncation: the one place the layer, the
//! worker and [`ToolOutputLimits::cap`](crate::ToolOutputLimits::cap) do it.

use crate::cap::{cap, Keep, ToolLimit};
use crate::tokenizer::Tokenizer;
use crate::tool::{ToolError, ToolOutput, Truncation};

/// The `tracing` target of the truncation event.
pub(crate) const TARGET: &str = "tool_output_cap";

/// Caps `text` to `limit`, or, for a tool that `failed`, keeping its end, where compilers and
/// stack traces say what went wrong; records the truncation, if any.
pub(crate) fn cap_text(
    tool: &str,
    text: &mut String,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    failed: bool,
) -> Option<Truncation> {
    let truncation = if failed {
        cap(text, &limit.clone().with_keep(Keep::Tail), tokenizer)?
    } else {
        cap(text, limit, tokenizer)?
    };
    truncation.record(tool, failed);
    Some(truncation)
}

/// Caps `output` to `limit` and records the truncation, if any.
pub(crate) fn cap_output(
    tool: &str,
    output: &mut ToolOutput,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) {
    if let Some(truncation) = cap_text(tool, &mut output.content, limit, tokenizer, false) {
        output.truncation = Some(truncation);
    }
}

/// Caps the message of `error` to `limit`, keeping its end, and records the truncation, if any.
pub(crate) fn cap_error(
    tool: &str,
    error: &mut ToolError,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) {
    if let Some(truncation) = cap_text(tool, &mut error.message, limit, tokenizer, true) {
        error.truncation = Some(truncation);
    }
}
