//! Guarantees 2 and 3 on generated outputs: under the limit untouched, over it capped and said.

mod common;

use common::{assert_capped, count};
use proptest::prelude::*;
use tool_output_cap::{cap, Encoding, ToolLimit, ToolOutput};

/// One stretch of a tool output.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9_./-]{1,40}\n",
        "[ -~]{0,80}",
        "[ぁ-んァ-ン一-龥、。]{1,30}",
        prop::collection::vec(
            prop::sample::select(vec!["🦀", "🎉", "👩‍👩‍👧‍👦", "🇯🇵", "é", "ß"]),
            1..20
        )
        .prop_map(|emoji| emoji.concat()),
        (
            prop::sample::select(vec![" ", "\t", "\n", "\u{3000}", "\r\n"]),
            1..3000usize
        )
            .prop_map(|(space, run)| space.repeat(run)),
        any::<String>(),
    ]
}

fn output() -> impl Strategy<Value = String> {
    prop::collection::vec(segment(), 0..120).prop_map(|segments| segments.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn capped_outputs_keep_every_promise(text in output(), max_tokens in 32usize..=10_000) {
        let tokenizer = Encoding::O200kBase.tokenizer();
        let mut content = text.clone();
        let truncation = cap(&mut content, &ToolLimit::new(max_tokens), tokenizer);
        if count(&text) <= max_tokens {
            prop_assert_eq!(truncation, None);
            prop_assert_eq!(content, text);
        } else {
            assert_capped(&text, &ToolOutput { content, summary: None, truncation }, max_tokens);
        }
    }

    #[test]
    fn small_limits_on_long_outputs(text in output(), max_tokens in 32usize..=64) {
        let tokenizer = Encoding::O200kBase.tokenizer();
        let mut content = text.repeat(4);
        let truncation = cap(&mut content, &ToolLimit::new(max_tokens), tokenizer);
        if truncation.is_some() {
            assert_capped(&text.repeat(4), &ToolOutput { content, summary: None, truncation }, max_tokens);
        } else {
            prop_assert!(count(&content) <= max_tokens);
        }
    }
}

/// Found by `small_limits_on_long_outputs`: the cut falls in the tab that a word had taken from
/// the run before it, and the run and that tab join into one piece again once cut.
#[test]
fn a_cut_that_joins_a_white_space_run_again_is_counted_exactly() {
    let text = format!("{}ぁ", "\t".repeat(566)).repeat(4);
    let tokenizer = Encoding::O200kBase.tokenizer();
    for max_tokens in 32..=64 {
        let mut content = text.clone();
        let truncation = cap(&mut content, &ToolLimit::new(max_tokens), tokenizer);
        assert_capped(
            &text,
            &ToolOutput {
                content,
                summary: None,
                truncation,
            },
            max_tokens,
        );
    }
}
