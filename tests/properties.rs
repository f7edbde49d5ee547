//! Guarantees 2 and 3 on generated outputs: under the limit untouched, over it capped and said.

mod common;

use common::{check, output};
use proptest::prelude::*;
use tool_output_cap::ToolLimit;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn capped_outputs_keep_every_promise(text in output(120), max_tokens in 32usize..=10_000) {
        check(&text, &ToolLimit::new(max_tokens));
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
