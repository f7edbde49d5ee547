//! Capping a tool's output or error and recording the truncation: the one place the layer, the
//! worker and [`ToolOutputLimits::cap`](crate::ToolOutputLimits::cap) do it.

use crate::cap::cap;
use crate::limit::{Outcome, ToolLimit};
use crate::tokenizer::Tokenizer;
use crate::tool::{ToolError, ToolOutput};
use crate::truncation::Truncation;

/// Caps `text`, a result of `tool` that was its `outcome`, to `limit` as
/// [`Outcome::limit`] says; records the truncation, if any.
pub(crate) fn cap_text(
    tool: &str,
    text: &mut String,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    outcome: Outcome,
) -> Option<Truncation> {
    let truncation = cap(text, &outcome.limit(limit), tokenizer)?;
    truncation.record(tool, outcome);
    Some(truncation)
}

/// Caps `output` to `limit` and records the truncation, if any.
pub(crate) fn cap_output(
    tool: &str,
    output: &mut ToolOutput,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) {
    if let Some(truncation) = cap_text(tool, &mut output.content, limit, tokenizer, Outcome::Output)
    {
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
    if let Some(truncation) = cap_text(tool, &mut error.message, limit, tokenizer, Outcome::Error) {
        error.truncation = Some(truncation);
    }
}
