//! Guarantees 2 and 3 on generated outputs: under the limit untouched, over it capped and said,
//! keeping the most that fits.

mod common;

use common::corpus::hostile;
use common::{check, count, output};
use proptest::prelude::*;
use tool_output_cap::{cut, Keep, CUT_MARKER};
use tool_output_cap::{Encoding, ToolLimit};

/// How many tokens a capped output may hold fewer than the limit when one more line or character
/// of it does not fit: the note's own figure may take a token fewer than the room kept for it
/// (fewer digits), and seams may merge.
const SLACK: usize = 3;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn capped_outputs_keep_every_promise(text in output(120), max_tokens in 32usize..=10_000) {
        check(&text, &ToolLimit::new(max_tokens).unwrap());
    }

    #[test]
    fn a_count_within_a_limit_is_the_count(text in output(120), max_tokens in 0usize..=10_000) {
        let tokens = count(&text);
        let within = Encoding::O200kBase.tokenizer().count_within(&text, max_tokens);
        prop_assert_eq!(within, (tokens <= max_tokens).then_some(tokens));
    }

    #[test]
    fn each_keep_keeps_the_most_that_fits(
        text in dense_and_sparse(),
        max_tokens in 32usize..=400,
        keep in prop::sample::select(vec![Keep::Head, Keep::Tail, Keep::HeadTail]),
    ) {
        assert_keeps_the_most_that_fits(&text, &ToolLimit::new(max_tokens).unwrap().with_keep(keep));
    }

    #[test]
    fn small_limits_on_long_outputs(text in output(120), max_tokens in 32usize..=64) {
        check(&text.repeat(4), &ToolLimit::new(max_tokens).unwrap());
    }
}

/// Found by `small_limits_on_long_outputs`: the cut falls in the tab that a word had taken from
/// the run before it, and the run and that tab join into one piece again once cut.
#[test]
fn a_cut_that_joins_a_white_space_run_again_is_counted_exactly() {
    let text = format!("{}ぁ", "\t".repeat(566)).repeat(4);
    for max_tokens in 32..=64 {
        assert!(check(&text, &ToolLimit::new(max_tokens).unwrap()).is_some());
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

/// Stretches whose bytes a token differ widely, one after another: sparse white space, dense
/// words, digits, one byte a token, and long lines.
fn dense_and_sparse() -> impl Strategy<Value = String> {
    let stretch = prop_oneof![
        (
            prop::sample::select(vec![" ", "\t", "\u{c}", "\n", "\u{3000}"]),
            1..2000usize
        )
            .prop_map(|(space, run)| space.repeat(run)),
        (1..200usize).prop_map(|words| "hello world ".repeat(words)),
        "[0-9]{1,300}",
        "[!-/:-@]{1,300}",
        "([a-z/._]{1,30}\n){1,40}",
        "[a-z ]{300,3000}",
    ];
    prop::collection::vec(stretch, 1..5).prop_map(|stretches| stretches.concat())
}

/// Checks `original` capped to `limit`, and that it keeps the most that fits: with one more line
/// of the part that fills the output (when it was cut at a line's edge) or one more character
/// (inside a line), the parts, the marker and the note, each counted on its own, would not fit.
fn assert_keeps_the_most_that_fits(original: &str, limit: &ToolLimit) {
    let Some((capped, _)) = check(original, limit) else {
        return;
    };
    let found = cut(original, limit, Encoding::O200kBase.tokenizer()).expect("over the limit");
    // The tokens of the parts a cut keeps, each counted on its own, with the marker's and the
    // note's lines: what the cut fills the limit with (seams may merge a token or two more).
    let marker = if limit.keep() == Keep::HeadTail {
        count(&format!("\n{CUT_MARKER}\n"))
    } else {
        0
    };
    let parts = |head_end: usize, tail_start: usize| {
        count(&original[..head_end])
            + marker
            + count(&original[tail_start..])
            + count(&format!("\n{}", found.note))
    };
    assert!(
        parts(found.head_end, found.tail_start) <= limit.max_tokens() + SLACK,
        "{capped:?}"
    );
    // With head_tail the head is the most that fits in half the budget, and the tail takes what
    // it leaves: the tail is the part that fills the output.
    if limit.keep() == Keep::Head && found.head_end < found.tail_start {
        let rest = &original[found.head_end..found.tail_start];
        let more = match rest.strip_prefix('\n') {
            Some(line) => 1 + line.find('\n').unwrap_or(line.len()),
            None => rest.chars().next().map_or(0, char::len_utf8),
        };
        let longer = parts(found.head_end + more, found.tail_start);
        assert!(
            longer + SLACK > limit.max_tokens(),
            "{}: a head {more} bytes longer fits in {}: {longer} tokens",
            limit.keep(),
            limit.max_tokens(),
        );
    }
    if limit.keep() != Keep::Head && found.head_end < found.tail_start {
        let rest = &original[found.head_end..found.tail_start];
        let more = match rest.strip_suffix('\n') {
            Some(line) => rest.len() - line.rfind('\n').map_or(0, |at| at + 1),
            None => rest.chars().next_back().map_or(0, char::len_utf8),
        };
        let longer = parts(found.head_end, found.tail_start - more);
        assert!(
            longer + SLACK > limit.max_tokens(),
            "{}: a tail {more} bytes longer fits in {}: {longer} tokens",
            limit.keep(),
            limit.max_tokens(),
        );
    }
}

/// Found by a differential run against Python tiktoken: the tail search took secant steps for
/// the whole suffix's bytes a token and gave up after 16, keeping almost nothing.
#[test]
fn a_tail_under_sparse_white_space_keeps_the_most_that_fits() {
    let form_feeds = format!("x.\n{}123", "\u{c}".repeat(200));
    let spaces = " ".repeat(1650) + &"hello world ".repeat(14);
    for (text, max_tokens) in [(&form_feeds, 100), (&spaces, 41), (&spaces, 42)] {
        assert_keeps_the_most_that_fits(
            text,
            &ToolLimit::new(max_tokens).unwrap().with_keep(Keep::Tail),
        );
    }
}
