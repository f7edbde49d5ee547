//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

pub mod corpus;

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use tool_output_cap::{
    cap, cut, line_break_after, note, Encoding, Keep, Prefix, Tokenizer, ToolLimit, ToolOutput,
    Truncation, CUT_MARKER,
};

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

/// Checks every promise of an output the layer truncated to `max_tokens`, keeping the head,
/// and returns the truncation.
pub fn assert_capped(original: &str, output: &ToolOutput, max_tokens: usize) -> Truncation {
    let truncation = output.truncation.expect("the output was truncated");
    assert_truncated(
        original,
        &output.content,
        &truncation,
        &ToolLimit::new(max_tokens).unwrap(),
    );
    truncation
}

/// Caps `original` to `limit` with the default engine and checks every promise: untouched if
/// within the limit, else [`assert_truncated`].
pub fn check(original: &str, limit: &ToolLimit) -> Option<(String, Truncation)> {
    check_with(original, limit, Encoding::O200kBase.tokenizer(), &count)
}

/// [`check`] with another `tokenizer`, against the `count` of its reference implementation.
pub fn check_with(
    original: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    count: &dyn Fn(&str) -> usize,
) -> Option<(String, Truncation)> {
    let mut capped = original.to_owned();
    let found = cut(original, limit, tokenizer);
    let Some(truncation) = cap(&mut capped, limit, tokenizer) else {
        assert!(count(original) <= limit.max_tokens());
        assert_eq!(capped, original);
        assert_eq!(found, None, "cut agrees with cap");
        return None;
    };
    assert_truncated_with(original, &capped, &truncation, limit, count);
    // `cut` says where `cap` cut: the parts it names, laid out, are the capped output.
    let found = found.expect("cut agrees with cap");
    assert_eq!(found.truncation, truncation);
    let (head, tail) = (&original[..found.head_end], &original[found.tail_start..]);
    let marker = if found.has_marker() {
        format!("{}{CUT_MARKER}\n", line_break_after(head))
    } else {
        String::new()
    };
    let before_note = format!("{head}{marker}{tail}");
    let laid_out = format!(
        "{before_note}{}{}",
        line_break_after(&before_note),
        found.note
    );
    assert_eq!(capped, laid_out);
    assert_eq!(found.capped(original), capped);
    Some((capped, truncation))
}

/// Checks `capped`, `original` cut to `limit`: the note is the last line, the kept parts are
/// where the strategy keeps them, the figures are exact, and the whole is within the limit.
pub fn assert_truncated(original: &str, capped: &str, truncation: &Truncation, limit: &ToolLimit) {
    assert_truncated_with(original, capped, truncation, limit, &count);
}

/// [`assert_truncated`], counting with `count`.
pub fn assert_truncated_with(
    original: &str,
    capped: &str,
    truncation: &Truncation,
    limit: &ToolLimit,
    count: &dyn Fn(&str) -> usize,
) {
    let (head, tail) = kept_parts(original, capped, truncation, limit.hint(), count);
    assert_eq!(truncation.keep, limit.keep());
    assert_eq!(truncation.max_tokens, limit.max_tokens());
    assert_eq!(truncation.original_tokens, count(original));
    assert_eq!(truncation.kept_tokens, count(head) + count(tail));
    assert_eq!(
        truncation.dropped_tokens,
        truncation.original_tokens - truncation.kept_tokens
    );
    let tokens = count(capped);
    assert!(
        tokens <= limit.max_tokens(),
        "{tokens} tokens with the note, over {}",
        limit.max_tokens()
    );
}

/// The kept head and tail of a capped output, checked against the original: the note is the
/// last line, with no blank line before it, the head a prefix, the tail a suffix, they do not
/// overlap, and they hold `truncation.kept_tokens`, counted with `count`.
pub fn kept_parts<'a>(
    original: &'a str,
    capped: &'a str,
    truncation: &Truncation,
    hint: Option<&str>,
    count: &dyn Fn(&str) -> usize,
) -> (&'a str, &'a str) {
    let with_fence = capped
        .strip_suffix(&note(truncation.dropped_tokens, hint))
        .unwrap_or_else(|| panic!("the note does not end the output: {:?}", tail_of(capped)));
    // The kept text, or, when a line of backticks or tildes comes before the note, the text
    // before that line: it may close a fence the kept text left open.
    let without_fence = with_fence.strip_suffix('\n').and_then(|text| {
        let line_start = text.rfind('\n').map_or(0, |at| at + 1);
        let line = &text[line_start..];
        let fence =
            line.len() >= 3 && (line.bytes().all(|b| b == b'`') || line.bytes().all(|b| b == b'~'));
        fence.then_some(&text[..line_start])
    });
    // The parts a text followed by a line of its own may hold: the text before that line's
    // break, or all of it when it ends with a newline of its own.
    let parts = |text: &'a str| {
        [Some(text), text.strip_suffix('\n')]
            .into_iter()
            .flatten()
            .filter(move |part| format!("{part}{}", line_break_after(part)) == text)
    };
    let marker = format!("{CUT_MARKER}\n");
    let splits_of = |kept: &'a str| -> Vec<(&'a str, &'a str)> {
        match truncation.keep {
            Keep::Head => parts(kept).map(|head| (head, "")).collect(),
            Keep::Tail => parts(kept).map(|tail| ("", tail)).collect(),
            // The marker could stand in the output itself: take the split that fits.
            Keep::HeadTail => kept
                .match_indices(&marker)
                .flat_map(|(at, _)| {
                    let (before, after) = (&kept[..at], &kept[at + marker.len()..]);
                    parts(before).flat_map(move |head| parts(after).map(move |tail| (head, tail)))
                })
                .collect(),
        }
    };
    let splits = [Some(with_fence), without_fence]
        .into_iter()
        .flatten()
        .flat_map(splits_of);
    let (head, tail) = splits
        .into_iter()
        .find(|(head, tail)| {
            original.starts_with(head)
                && original.ends_with(tail)
                && head.len() + tail.len() <= original.len()
                && count(head) + count(tail) == truncation.kept_tokens
        })
        .unwrap_or_else(|| {
            panic!(
                "no head and tail of the original, of its kept tokens, each followed by a line \
                 of its own with no blank line added, in ...{:?}",
                tail_of(with_fence)
            )
        });
    (head, tail)
}

/// The end of `text`, for a message.
fn tail_of(text: &str) -> &str {
    let mut start = text.len().saturating_sub(300);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    &text[start..]
}

/// One stretch of a generated tool output: paths, ASCII, Japanese, emoji, white-space runs, or
/// any Unicode.
pub fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9_./-]{1,40}\n",
        "[ -~]{0,80}",
        "[ぁ-んァ-ン一-龥、。]{1,30}\n?",
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

/// A generated tool output of up to `segments` stretches.
pub fn output(segments: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(segment(), 0..segments).prop_map(|segments| segments.concat())
}

/// A small byte-level BPE with a few merges and `<|im_end|>` as a special token, written as a
/// tokenizer.json; with `metaspace`, a SentencePiece-style one that prepends `▁` instead.
#[cfg(feature = "hf")]
pub fn small_tokenizer(dir: &std::path::Path, metaspace: bool) -> std::path::PathBuf {
    let mut vocab = serde_json::Map::new();
    let mut add = |token: String| {
        let id = vocab.len();
        vocab.entry(token).or_insert(id.into());
    };
    let mut alphabet: Vec<char> = tokenizers::pre_tokenizers::byte_level::ByteLevel::alphabet()
        .into_iter()
        .collect();
    alphabet.sort_unstable();
    for c in alphabet {
        add(c.to_string());
    }
    add("▁".to_owned());
    add("\n".to_owned());
    let pairs = [
        "s r", "u sr", "/ usr", "h a", "r e", "ha re", "s hare", "/ share", "Ġ t", "t h", "th e",
        "Ġ the", "e r", "i n", "▁ a", "▁a l",
    ];
    let mut merges = Vec::new();
    for pair in pairs {
        let (a, b) = pair.split_once(' ').unwrap();
        add(format!("{a}{b}"));
        merges.push(pair);
    }
    let special = vocab.len();
    let pre_tokenizer = if metaspace {
        serde_json::json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true})
    } else {
        serde_json::json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})
    };
    let json = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [{"id": special, "content": "<|im_end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": null,
        "decoder": null,
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "vocab": vocab, "merges": merges},
    });
    let path = dir.join(if metaspace {
        "metaspace.json"
    } else {
        "tokenizer.json"
    });
    std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
    path
}

/// Delegates to o200k_base and records how many bytes it was asked to tokenize.
#[derive(Debug, Default)]
pub struct Recording {
    pub prefix_calls: AtomicUsize,
    pub bytes: AtomicUsize,
}

impl Tokenizer for Recording {
    fn count(&self, text: &str) -> usize {
        self.bytes.fetch_add(text.len(), Ordering::SeqCst);
        Encoding::O200kBase.tiktoken().count(text)
    }
    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
        self.prefix_calls.fetch_add(1, Ordering::SeqCst);
        self.bytes.fetch_add(text.len(), Ordering::SeqCst);
        Encoding::O200kBase.tiktoken().prefix(text, max_tokens)
    }
    fn count_edited(&self, text: &str, text_tokens: usize, keep: usize, tail: &str) -> usize {
        // Record what the built-in backend counts again: from the last line start of the kept
        // text, once alone and once edited.
        let start = text[..keep].rfind('\n').map_or(0, |at| at + 1);
        self.bytes
            .fetch_add(2 * (text.len() - start) + tail.len(), Ordering::SeqCst);
        Encoding::O200kBase
            .tiktoken()
            .count_edited(text, text_tokens, keep, tail)
    }
}
