//! With the `bpe-openai` feature: both backends count and cap alike.
#![cfg(feature = "bpe-openai")]

mod common;

use common::corpus::{hostile, japanese_with_code, listing_of, minified_script};
use tool_output_cap::{cap, Encoding, Tokenizer};

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
            assert_eq!(
                tiktoken.count(&text),
                bpe.count(&text),
                "{encoding}: {name}"
            );
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
            let truncation = cap(&mut by_tiktoken, max_tokens, tiktoken);
            assert_eq!(
                truncation,
                cap(&mut by_bpe, max_tokens, bpe),
                "{name} at {max_tokens}"
            );
            assert!(
                by_tiktoken == by_bpe,
                "{name} at {max_tokens}: the capped texts differ"
            );
        }
    }
}
