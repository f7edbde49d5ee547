//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

pub mod corpus;

use tool_output_cap::{note, Encoding, Tokenizer, ToolOutput, Truncation};

/// Tokens of `text` in o200k_base, counted by the crate's tiktoken-rs backend.
pub fn count(text: &str) -> usize {
    Encoding::O200kBase.tiktoken().count(text)
}

/// A Glob-like listing of `paths` paths, one a line.
pub fn listing(paths: usize) -> String {
    (0..paths)
        .map(|i| format!("src/components/module_{:03}/widget_{i}.rs\n", i % 97))
        .collect()
}

/// Checks every promise of a truncated output against the original content and returns the
/// truncation: kept prefix on a char boundary, the note as the last line, exact figures, and
/// the whole within `max_tokens`.
pub fn assert_capped(original: &str, output: &ToolOutput, max_tokens: usize) -> Truncation {
    let truncation = output.truncation.expect("the output was truncated");
    let (kept, note_line) = output
        .content
        .rsplit_once('\n')
        .expect("the note is on a line of its own");
    assert!(
        original.starts_with(kept),
        "kept text is a prefix of the original"
    );
    assert!(original.is_char_boundary(kept.len()));
    assert_eq!(note_line, note(truncation.dropped_tokens, None));
    assert_eq!(truncation.original_tokens, count(original));
    assert_eq!(truncation.kept_tokens, count(kept));
    assert_eq!(
        truncation.dropped_tokens,
        truncation.original_tokens - truncation.kept_tokens
    );
    assert_eq!(truncation.max_tokens, max_tokens);
    assert!(
        count(&output.content) <= max_tokens,
        "{} tokens with the note, over {max_tokens}",
        count(&output.content)
    );
    truncation
}
