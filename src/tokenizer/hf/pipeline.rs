//! What a `tokenizer.json`'s pipeline allows: whether a text may be encoded in parts, read from
//! the file's normalizer and pre-tokenizer and checked on a probe when it is loaded.

use super::chunks::{line_starts, Chunking, CHUNKING};
use super::HfTokenizer;

impl HfTokenizer {
    /// Whether every line start of a probe splits its encoding in two.
    pub(super) fn probe_line_starts(&self) -> bool {
        let ids = |text: &str| self.encode(text, false).get_ids().to_vec();
        let whole = ids(PROBE);
        line_starts(PROBE, 0, PROBE.len()).all(|at| {
            let mut joined = ids(&PROBE[..at]);
            joined.extend(ids(&PROBE[at..]));
            joined == whole
        })
    }

    /// Whether the probe on one line, cut at word starts in chunks of a few bytes, encodes as
    /// it does whole.
    pub(super) fn probe_word_starts(&mut self) -> bool {
        let line = PROBE.replace(['\n', '\r'], " ").repeat(4);
        let ids =
            |encoded: &tokenizers::Encoding, tokens: usize| encoded.get_ids()[..tokens].to_vec();
        self.in_lines = true;
        self.chunking = Chunking {
            chunk: 24,
            margin: 64,
        };
        let (mut joined, mut cuts) = (Vec::new(), 0);
        for chunk in self.chunks(&line) {
            match chunk.window {
                Some((encoded, tokens)) => {
                    joined.extend(ids(&encoded, tokens));
                    cuts += 1;
                }
                None => joined.extend(self.encode(chunk.text, false).get_ids()),
            }
        }
        self.chunking = CHUNKING;
        cuts > 10 && joined == self.encode(&line, false).get_ids()
    }
}

/// A text of the shapes tool outputs take, whose splits are checked when a file is loaded.
const PROBE: &str = "fn main() {\n    let x = 1;\n}\n/usr/share/doc/a.gz\n\
    C:\\Users\\dev\\a.rs\r\nsrc/lib.rs:12:    return x.len();\n日本語のテキスト。\n\
    テスト\n🦀 crab\n123\n456 items.\n-- end --\n\t\n'quoted'\n<|im_end|>\n<think>\nok\n\
    {\"id\":12345678,\"name\":\"Ünïcode wörds\",\"tags\":[\"a\",\"b\"],\"n\":-1.5e10}   x\n";

/// Whether the normalizer and pre-tokenizer of a `tokenizer.json` are of kinds that never join a
/// newline to what follows it, so that a text may be encoded line by line: byte-level BPE with
/// `Split` regexes (GPT-2, Llama 3, Qwen, DeepSeek), digits and punctuation splits, and
/// normalizers that do not add text. Metaspace (which prepends `▁` to each text it encodes)
/// and anything unknown keep the text whole.
pub(super) fn splits_at_line_starts(json: &serde_json::Value) -> bool {
    fn all_of(value: &serde_json::Value, allowed: &[&str]) -> bool {
        match value.get("type").and_then(|kind| kind.as_str()) {
            None => value.is_null(),
            Some("Sequence") => ["pretokenizers", "normalizers"]
                .iter()
                .filter_map(|key| value.get(key)?.as_array())
                .flatten()
                .all(|inner| all_of(inner, allowed)),
            Some("ByteLevel") => value.get("add_prefix_space") != Some(&true.into()),
            Some(kind) => allowed.contains(&kind),
        }
    }
    // An added token that holds a line break, or takes the white space around it, can join
    // what a split would part.
    let joins = ordinary_added_tokens(json).any(|token| {
        token.get("lstrip") == Some(&true.into())
            || token.get("rstrip") == Some(&true.into())
            || token
                .get("content")
                .and_then(|content| content.as_str())
                .is_some_and(|content| content.contains(['\n', '\r']))
    });
    !joins
        && all_of(
            json.get("normalizer").unwrap_or(&serde_json::Value::Null),
            &["NFC", "NFD", "NFKC", "NFKD", "Lowercase"],
        )
        && all_of(
            json.get("pre_tokenizer")
                .unwrap_or(&serde_json::Value::Null),
            &[
                "Split",
                "Digits",
                "Punctuation",
                "Whitespace",
                "WhitespaceSplit",
            ],
        )
}

/// Whether the last `Split` of a `tokenizer.json`'s pre-tokenizer ends in the white-space
/// alternatives of `cl100k_base`'s pattern, `\s*[\r\n]+|\s+(?!\S)|\s+`, as Qwen's and DeepSeek's
/// do: then a run of white space with no line break is split as `cl100k_base` splits it
/// ([`white_space::runs`]).
pub(super) fn splits_white_space_as_cl100k(json: &serde_json::Value) -> bool {
    fn last_split(value: &serde_json::Value) -> Option<&str> {
        match value.get("type")?.as_str()? {
            "Split" => value.get("pattern")?.get("Regex")?.as_str(),
            "Sequence" => value
                .get("pretokenizers")?
                .as_array()?
                .iter()
                .rev()
                .find_map(last_split),
            _ => None,
        }
    }
    json.get("pre_tokenizer")
        .and_then(last_split)
        .is_some_and(|pattern| {
            pattern
                .replace('\r', "\\r")
                .replace('\n', "\\n")
                .ends_with(r"|\s*[\r\n]+|\s+(?!\S)|\s+")
        })
}

/// The added tokens of a `tokenizer.json` that are not special: those are encoded as the plain
/// text they are, the others are matched in the text before it is split into words.
pub(super) fn ordinary_added_tokens(
    json: &serde_json::Value,
) -> impl Iterator<Item = &serde_json::Value> {
    json.get("added_tokens")
        .and_then(|tokens| tokens.as_array())
        .into_iter()
        .flatten()
        .filter(|token| token.get("special") != Some(&true.into()))
}
