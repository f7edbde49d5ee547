//! How an output was cut, and the `tracing` event that records it.

use crate::limit::{Keep, Outcome};

/// The `tracing` target of the truncation event, and of every event of the library.
pub(crate) const TARGET: &str = "tool_output_cap";

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
            target: TARGET,
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
