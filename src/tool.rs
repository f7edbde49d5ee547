//! What goes into a tool and what comes out of it.

use std::borrow::Cow;
use std::fmt;

use crate::limit::{Keep, ToolLimit};

/// A call of a named tool with its JSON arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The registered tool name, such as `"Glob"`.
    pub name: String,
    /// The arguments the model passed.
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// A call of tool `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        ToolCall {
            name: name.into(),
            arguments,
        }
    }
}

/// What a tool returned, as it goes into the history.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model reads.
    pub content: String,
    /// A short summary, if the tool gives one. The cap leaves it as it is.
    pub summary: Option<String>,
    /// Set when the cap truncated `content`.
    pub truncation: Option<Truncation>,
}

impl ToolOutput {
    /// An output with `content`, no summary and no truncation.
    pub fn new(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            ..ToolOutput::default()
        }
    }
}

/// A tool that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// What went wrong, for the model to read.
    pub message: String,
    /// Set when the cap truncated `message`, keeping its end.
    pub truncation: Option<Truncation>,
}

impl ToolError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            truncation: None,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// What a tool's call gave: its output, or an error. The one rule that tells them apart when they
/// are cut is [`Outcome::limit`]: an error keeps its end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// What the tool returned.
    #[default]
    Output,
    /// The tool's error: an MCP result with `isError`, a [`ToolError`], a framework's failed
    /// tool message.
    Error,
}

impl Outcome {
    /// The limit a result of this outcome is cut to: `limit` for an output; for an error, `limit`
    /// keeping its end, where compilers and stack traces say what went wrong.
    ///
    /// ```
    /// use tool_output_cap::{Keep, Outcome, ToolLimit};
    ///
    /// let limit = ToolLimit::new(500)?;
    /// assert_eq!(Outcome::Output.limit(&limit).keep(), Keep::Head);
    /// assert_eq!(Outcome::Error.limit(&limit).keep(), Keep::Tail);
    /// # Ok::<(), tool_output_cap::LimitError>(())
    /// ```
    pub fn limit(self, limit: &ToolLimit) -> Cow<'_, ToolLimit> {
        match self {
            Outcome::Error if limit.keep() != Keep::Tail => {
                Cow::Owned(limit.clone().with_keep(Keep::Tail))
            }
            _ => Cow::Borrowed(limit),
        }
    }
}

/// How an output was cut to fit its budget.
///
/// It serializes as its five fields, `keep` by its name in the manifest:
///
/// ```
/// use tool_output_cap::{Keep, Truncation};
///
/// let truncation = Truncation {
///     original_tokens: 37_439,
///     kept_tokens: 4_984,
///     dropped_tokens: 32_455,
///     max_tokens: 5_000,
///     keep: Keep::HeadTail,
/// };
/// assert_eq!(
///     serde_json::to_string(&truncation)?,
///     r#"{"original_tokens":37439,"kept_tokens":4984,"dropped_tokens":32455,"max_tokens":5000,"keep":"head_tail"}"#
/// );
/// # Ok::<_, serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Truncation {
    /// Tokens in the output the tool returned.
    pub original_tokens: usize,
    /// Tokens of the original content that were kept.
    pub kept_tokens: usize,
    /// `original_tokens - kept_tokens`: the `N` of the note.
    pub dropped_tokens: usize,
    /// The budget the output was cut to, note included.
    pub max_tokens: usize,
    /// What was kept.
    pub keep: Keep,
}

impl Truncation {
    /// Emits the `tracing` event the layer emits for each cut, at level `INFO` with the target
    /// `tool_output_cap`: the tool's name and these figures, for the result of `tool` that was
    /// its `outcome`. For a cut made with [`cap`](crate::cap) directly.
    pub fn record(&self, tool: &str, outcome: Outcome) {
        tracing::info!(
            target: crate::truncate::TARGET,
            tool,
            original_tokens = self.original_tokens,
            kept_tokens = self.kept_tokens,
            dropped_tokens = self.dropped_tokens,
            max_tokens = self.max_tokens,
            keep = self.keep.name(),
            "{}",
            if outcome == Outcome::Error {
                "truncated tool error"
            } else {
                "truncated tool output"
            }
        );
    }
}
