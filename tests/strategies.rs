//! Every keep strategy on generated outputs and limits: the token bound with the note, the exact
//! figures, char boundaries, what is kept, line edges, and the hint.

mod common;

use common::{check, count, kept_parts, listing, output};
use proptest::prelude::*;
use tool_output_cap::{Keep, ToolLimit, CUT_MARKER};

fn keep() -> impl Strategy<Value = Keep> {
    prop::sample::select(vec![Keep::Head, Keep::Tail, Keep::HeadTail])
}

fn hint() -> impl Strategy<Value = Option<&'static str>> {
    prop::sample::select(vec![
        None,
        Some("use a narrower pattern, e.g. src/**/*.rs"),
        Some("read a line range: offset and limit"),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_strategy_keeps_every_promise(
        text in output(150),
        max_tokens in 32usize..=10_000,
        keep in keep(),
        hint in hint(),
    ) {
        let mut limit = ToolLimit::new(max_tokens).unwrap().with_keep(keep);
        if let Some(hint) = hint {
            limit = limit.with_hint(hint).unwrap();
        }
        check(&text, &limit);
    }

    /// A path here is about 11 tokens: from 400 tokens up, every part's eighth holds one.
    #[test]
    fn listings_are_cut_at_line_edges(
        paths in 200usize..3000,
        max_tokens in 400usize..=3000,
        keep in keep(),
    ) {
        let text = listing(paths);
        let limit = ToolLimit::new(max_tokens).unwrap().with_keep(keep);
        if let Some((capped, truncation)) = check(&text, &limit) {
            let (head, tail) = kept_parts(&text, &capped, &truncation, None, &count);
            prop_assert!(head.is_empty() || text[head.len()..].starts_with('\n'), "head ends on half a path");
            prop_assert!(tail.is_empty() || text[..text.len() - tail.len()].ends_with('\n'), "tail starts on half a path");
        }
    }
}

#[test]
fn tail_keeps_the_end_of_a_build_log() {
    let log = (0..3000)
        .map(|i| format!("   Compiling crate_{i} v0.1.0\n"))
        .collect::<String>()
        + "error[E0308]: mismatched types\n  --> src/main.rs:4:18\n";
    let (capped, truncation) =
        check(&log, &ToolLimit::new(200).unwrap().with_keep(Keep::Tail)).unwrap();
    assert!(capped.contains("error[E0308]: mismatched types\n  --> src/main.rs:4:18\n"));
    assert!(
        capped.starts_with("   Compiling crate_"),
        "starts on a whole line: {capped:.40}"
    );
    assert!(truncation.kept_tokens > 150);
}

#[test]
fn head_tail_keeps_both_ends_around_the_marker() {
    let text = listing(3000);
    let (capped, truncation) = check(
        &text,
        &ToolLimit::new(400).unwrap().with_keep(Keep::HeadTail),
    )
    .unwrap();
    let (head, tail) = kept_parts(&text, &capped, &truncation, None, &count);
    // Half the budget each, give or take the line edges and the note.
    for part in [head, tail] {
        let tokens = count(part);
        assert!((150..=200).contains(&tokens), "{tokens} tokens in a part");
    }
    assert_eq!(capped.matches(CUT_MARKER).count(), 1);
}

#[test]
fn a_single_line_longer_than_the_budget_is_cut_inside() {
    let line = "0123456789abcdef".repeat(6_400);
    for keep in [Keep::Head, Keep::Tail, Keep::HeadTail] {
        let (_, truncation) = check(&line, &ToolLimit::new(500).unwrap().with_keep(keep)).unwrap();
        assert!(
            truncation.kept_tokens > 400,
            "{keep}: kept {}",
            truncation.kept_tokens
        );
    }
}

#[test]
fn the_hint_stays_within_the_bound_at_the_smallest_limit() {
    let limit = ToolLimit::new(32)
        .unwrap()
        .with_hint("use a narrower pattern, e.g. src/**/*.rs")
        .unwrap();
    for keep in [Keep::Head, Keep::Tail, Keep::HeadTail] {
        check(&listing(1000), &limit.clone().with_keep(keep)).unwrap();
    }
}
