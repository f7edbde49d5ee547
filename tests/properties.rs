//! Guarantees 2 and 3 on generated outputs: under the limit untouched, over it capped and said.

mod common;

use common::corpus::hostile;
use common::{check, count, output};
use proptest::prelude::*;
use tool_output_cap::{Encoding, ToolLimit};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn capped_outputs_keep_every_promise(text in output(120), max_tokens in 32usize..=10_000) {
        check(&text, &ToolLimit::new(max_tokens));
    }

    #[test]
    fn a_count_within_a_limit_is_the_count(text in output(120), max_tokens in 0usize..=10_000) {
        let tokens = count(&text);
        let within = Encoding::O200kBase.tokenizer().count_within(&text, max_tokens);
        prop_assert_eq!(within, (tokens <= max_tokens).then_some(tokens));
    }

    #[test]
    fn small_limits_on_long_outputs(text in output(120), max_tokens in 32usize..=64) {
        check(&text.repeat(4), &ToolLimit::new(max_tokens));
    }
}

/// Found by `small_limits_on_long_outputs`: the cut falls in the tab that a word had taken from
/// the run before it, and the run and that tab join into one piece again once cut.
#[test]
fn a_cut_that_joins_a_white_space_run_again_is_counted_exactly() {
    let text = format!("{}ぁ", "\t".repeat(566)).repeat(4);
    for max_tokens in 32..=64 {
        assert!(check(&text, &ToolLimit::new(max_tokens)).is_some());
    }
}

#[test]
fn a_count_within_a_limit_is_the_count_on_hostile_outputs() {
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let tokenizer = encoding.tokenizer();
        let records: Vec<_> = (0..20_000)
            .map(|i| serde_json::json!({"path": format!("/usr/lib/é{i}/{i}½{i}"), "size": i, "n": [i, -1.5e3]}))
            .collect();
        let json = (
            "records as compact JSON",
            serde_json::json!({"files": records}).to_string(),
        );
        for (name, text) in hostile().into_iter().chain([json]) {
            let tokens = tokenizer.count(&text);
            for max_tokens in [0, tokens.saturating_sub(1), tokens, 5000] {
                let within = tokenizer.count_within(&text, max_tokens);
                assert_eq!(
                    within,
                    (tokens <= max_tokens).then_some(tokens),
                    "{encoding}: {name}"
                );
            }
        }
    }
}
