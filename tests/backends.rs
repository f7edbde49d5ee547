//! With the `bpe-openai` feature: both backends count and cap alike.
#![cfg(feature = "bpe-openai")]

mod common;

use common::corpus::{hostile, japanese_with_code, listing_of, minified_script, white_space_runs};
use tool_output_cap::{cap, Encoding, Tokenizer, ToolLimit};

fn corpus() -> Vec<(&'static str, String)> {
    let mut corpus = vec![
        ("listing", listing_of(125_000)),
        ("Japanese with code", japanese_with_code(125_000)),
        ("emoji", "🦀🎉👩‍👩‍👧‍👦🇯🇵 ok\n".repeat(5_000)),
        ("code", minified_script(50_000).replace(';', ";\n    ")),
        (
            "special-token text",
            "<|endoftext|><|endofprompt|>\n".repeat(3_000),
        ),
    ];
    corpus.extend(hostile());
    corpus
}

#[test]
fn both_backends_count_alike() {
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let (tiktoken, bpe) = (encoding.tiktoken(), encoding.bpe_openai());
        for (name, text) in corpus() {
            let tokens = tiktoken.count(&text);
            assert_eq!(tokens, bpe.count(&text), "{encoding}: {name}");
            for max_tokens in [0, tokens.saturating_sub(1), tokens, 5000] {
                let within = (tokens <= max_tokens).then_some(tokens);
                assert_eq!(tiktoken.count_within(&text, max_tokens), within, "{name}");
                assert_eq!(bpe.count_within(&text, max_tokens), within, "{name}");
            }
        }
    }
}

#[test]
fn both_backends_cap_alike() {
    let (tiktoken, bpe) = (
        Encoding::O200kBase.tiktoken(),
        Encoding::O200kBase.bpe_openai(),
    );
    for (name, text) in corpus() {
        for max_tokens in [32, 1000, 5000] {
            let (mut by_tiktoken, mut by_bpe) = (text.clone(), text.clone());
            let truncation = cap(
                &mut by_tiktoken,
                &ToolLimit::new(max_tokens).unwrap(),
                tiktoken,
            );
            assert_eq!(
                truncation,
                cap(&mut by_bpe, &ToolLimit::new(max_tokens).unwrap(), bpe),
                "{name} at {max_tokens}"
            );
            assert!(
                by_tiktoken == by_bpe,
                "{name} at {max_tokens}: the capped texts differ"
            );
        }
    }
}

/// Where tiktoken-rs cannot pre-tokenize a white-space run, the run is split where its pattern
/// splits it and encoded on its own: both backends count every family of long run alike.
#[test]
fn both_backends_count_long_white_space_runs_alike() {
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let (tiktoken, bpe) = (encoding.tiktoken(), encoding.bpe_openai());
        for (name, text) in white_space_runs() {
            assert_eq!(
                tiktoken.count(&text),
                bpe.count(&text),
                "{encoding}: {name}"
            );
        }
    }
}
