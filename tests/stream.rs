//! Outputs read in parts: `TokenCount` gives the whole's count, and `StreamedOutput` cuts as
//! `cut` does on the whole, holding only its start and end, on this machine's own file listing,
//! a real build log shape and hostile text.

mod common;

use std::sync::atomic::Ordering;

use common::{assert_truncated, count, Recording};
use tool_output_cap::{cut, Encoding, Keep, StreamedOutput, TokenCount, ToolLimit};

/// `find /usr -type f` on this machine, or a generated listing where there is no /usr.
fn usr_listing() -> String {
    let found = std::process::Command::new("find")
        .args(["/usr", "-type", "f"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default();
    if found.len() < 1_000_000 {
        eprintln!(
            "skipped the real listing: `find /usr -type f` gave little; a generated one instead"
        );
        return common::listing(60_000);
    }
    // A few MB of it: the shape is what matters, and the tests cut it a dozen times.
    let end = found.len().min(3_000_000);
    let end = found[..end].rfind('\n').map_or(0, |at| at + 1);
    found[..end].to_owned()
}

/// Texts of many lines, and texts without the line breaks a split needs.
fn outputs() -> Vec<(&'static str, String)> {
    let log: String = (0..40_000)
        .map(|i| match i % 7 {
            0 => format!("   Compiling crate_{i} v0.1.{i} (/work/crates/crate_{i})\n"),
            1 => format!("warning: unused variable: `x{i}`\n  --> src/lib.rs:{i}:9\n   |\n"),
            2 => "\n\n".to_owned(),
            3 => format!("\t/usr/lib/x86_64-linux-gnu/libc.so.6 ({i})\n"),
            4 => format!("東京 {i} 😀 <|endoftext|> 日本語\n"),
            5 => format!("    {}\n", "    ".repeat(i % 40)),
            _ => format!("test tests::case_{i} ... ok\n"),
        })
        .collect();
    vec![
        ("usr listing", usr_listing()),
        ("build log", log),
        ("one long line", "word ".repeat(100_000)),
    ]
}

/// `text` in parts of about `size` bytes, each of whole characters.
fn parts(text: &str, size: usize) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut at = size.min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (part, after) = rest.split_at(at);
        parts.push(part);
        rest = after;
    }
    parts
}

fn streamed<'t>(
    text: &str,
    tokenizer: &'t dyn tool_output_cap::Tokenizer,
    window: usize,
    size: usize,
) -> StreamedOutput<'t> {
    let mut output = StreamedOutput::new(tokenizer, window);
    for part in parts(text, size) {
        output.push(part);
    }
    output.finish();
    output
}

#[test]
fn a_count_in_parts_is_the_count_of_the_whole() {
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let tokenizer = encoding.tokenizer();
        for (name, text) in outputs() {
            for part in [1000, 65_536] {
                let mut counted = TokenCount::new(tokenizer);
                for piece in parts(&text, part) {
                    counted.push(piece);
                }
                assert_eq!(
                    counted.finish(),
                    tokenizer.count(&text),
                    "{name} in {encoding} parts of {part}"
                );
            }
        }
    }
}

#[test]
fn a_streamed_output_is_cut_as_the_whole_is() {
    let tokenizer = Encoding::O200kBase.tokenizer();
    for (name, text) in outputs() {
        for max_tokens in [32, 1000, 5000] {
            for keep in [Keep::Head, Keep::Tail, Keep::HeadTail] {
                let limit = ToolLimit::new(max_tokens)
                    .unwrap()
                    .with_keep(keep)
                    .with_hint("narrow it")
                    .unwrap();
                let output = streamed(&text, tokenizer, max_tokens, 8192);
                let found = output.cut(&limit).expect("over the limit");
                assert_eq!(found.truncation.original_tokens, count(&text), "{name}");
                let capped = found.capped(output.held());
                assert_truncated(&text, &capped, &found.truncation, &limit);
                if keep == Keep::Head {
                    let whole = cut(&text, &limit, tokenizer).expect("over the limit");
                    assert_eq!(capped, whole.capped(&text), "{name} at {max_tokens}");
                    assert_eq!(found.truncation, whole.truncation, "{name} at {max_tokens}");
                }
                if name != "one long line" {
                    assert!(!output.is_whole(), "{name} was held whole");
                    assert!(
                        output.held().len() < 2 << 20,
                        "{name}: held {} bytes",
                        output.held().len()
                    );
                }
            }
        }
    }
}

#[test]
fn an_output_within_its_window_is_held_whole() {
    let tokenizer = Encoding::O200kBase.tokenizer();
    let text = common::listing(3000);
    let output = streamed(&text, tokenizer, 100_000, 4096);
    assert!(output.is_whole());
    assert_eq!(output.held(), text);
    assert_eq!(output.tokens(), count(&text));
    assert_eq!(output.cut(&ToolLimit::new(100_000).unwrap()), None);
}

#[test]
fn an_output_held_whole_in_one_part_is_read_once_by_its_cut() {
    let tokenizer = Recording::default();
    // No line break, so no place to split: the output is one part.
    let text = "word ".repeat(200_000);
    let limit = ToolLimit::new(500).unwrap();
    let mut output = StreamedOutput::new(&tokenizer, limit.max_tokens());
    for part in parts(&text, 8192) {
        output.push(part);
    }
    output.finish();
    let cut = output.cut(&limit).unwrap();
    let read = tokenizer.bytes.load(Ordering::SeqCst);
    assert!(
        read < text.len() * 3 / 2,
        "{read} bytes read for {}",
        text.len()
    );
    assert_eq!(cut.truncation.original_tokens, count(&text));
    assert_eq!(output.tokens(), count(&text));
    assert_eq!(
        tokenizer.bytes.load(Ordering::SeqCst),
        read,
        "the cut's count is kept"
    );
    assert_eq!(
        Some(cut),
        tool_output_cap::cut(&text, &limit, Encoding::O200kBase.tokenizer())
    );
}
