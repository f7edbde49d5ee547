//! The Hugging Face `tokenizer.json` backend, behind the `hf` feature.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{floor_char_boundary, Encoding, Prefix, Tokenizer};

/// Texts are encoded in chunks of about this many bytes, split where a line starts, when the
/// tokenizer's pipeline is one that splits there (see [`HfTokenizer::splits_at_line_starts`]).
const CHUNK: usize = 64 * 1024;

/// A model's own tokenizer, read from its Hugging Face `tokenizer.json` (Qwen, Llama, DeepSeek,
/// Mistral...), counting with the reference implementation, the `tokenizers` crate.
///
/// A count is the number of ids the file's pipeline gives for the text as ordinary text: no
/// special tokens are added, and special-token text such as `<|im_end|>` in a tool output is
/// counted as the plain text it is. Added tokens not marked special stay ordinary vocabulary.
///
/// ```no_run
/// use std::sync::Arc;
/// use tool_output_cap::{HfTokenizer, ToolOutputCapLayer, ToolOutputLimits};
///
/// let qwen = HfTokenizer::from_file("models/qwen3/tokenizer.json")?;
/// let layer = ToolOutputCapLayer::with_tokenizer(ToolOutputLimits::default(), Arc::new(qwen));
/// # Ok::<_, tool_output_cap::TokenizerFileError>(())
/// ```
pub struct HfTokenizer {
    inner: tokenizers::Tokenizer,
    path: PathBuf,
    chunked: bool,
}

/// A `tokenizer.json` that cannot be read or loaded.
#[derive(Debug)]
pub struct TokenizerFileError {
    path: PathBuf,
    message: String,
}

impl TokenizerFileError {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is wrong with it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for TokenizerFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for TokenizerFileError {}

impl HfTokenizer {
    /// Loads the `tokenizer.json` at `path`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<HfTokenizer, TokenizerFileError> {
        let path = path.as_ref();
        let error = |message: String| TokenizerFileError {
            path: path.to_owned(),
            message,
        };
        let bytes = std::fs::read(path)
            .map_err(|e| error(format!("cannot read the tokenizer file: {e}")))?;
        let json: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| error(format!("is not a tokenizer.json: not JSON ({e})")))?;
        if json.get("model").is_none_or(|model| !model.is_object()) {
            return Err(error(
                "is not a tokenizer.json: it has no `model` table".to_owned(),
            ));
        }
        let mut inner = tokenizers::Tokenizer::from_bytes(&bytes)
            .map_err(|e| error(format!("cannot be loaded as a Hugging Face tokenizer: {e}")))?;
        inner
            .with_truncation(None)
            .map_err(|e| error(format!("cannot turn truncation off: {e}")))?;
        inner.with_padding(None);
        inner.set_encode_special_tokens(true);
        let mut tokenizer = HfTokenizer {
            inner,
            path: path.to_owned(),
            chunked: false,
        };
        tokenizer.chunked = splits_at_line_starts(&json) && tokenizer.probe_line_starts();
        Ok(tokenizer)
    }

    /// The process-wide tokenizer of the file at `path`, loaded on first use.
    pub fn shared(path: impl AsRef<Path>) -> Result<Arc<HfTokenizer>, TokenizerFileError> {
        static LOADED: Mutex<Option<HashMap<PathBuf, Arc<HfTokenizer>>>> = Mutex::new(None);
        let path = path.as_ref();
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        let loaded = loaded.get_or_insert_with(HashMap::new);
        if let Some(tokenizer) = loaded.get(&key) {
            return Ok(Arc::clone(tokenizer));
        }
        let tokenizer = Arc::new(HfTokenizer::from_file(path)?);
        loaded.insert(key, Arc::clone(&tokenizer));
        Ok(tokenizer)
    }

    /// The file this tokenizer was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether texts are encoded in chunks split where a line starts: only when the pipeline is
    /// of the kinds that split there anyway, and a probe of line starts agrees.
    pub fn splits_at_line_starts(&self) -> bool {
        self.chunked
    }

    /// The ids of `text` and, if `offsets`, where each starts in it.
    fn encode(&self, text: &str, offsets: bool) -> tokenizers::Encoding {
        let encoded = if offsets {
            self.inner.encode(text, false)
        } else {
            self.inner.encode_fast(text, false)
        };
        // With truncation and padding off, encoding fails only where the file's own pipeline
        // does; a tool output is counted all the same, as the bytes it is.
        encoded.unwrap_or_else(|e| {
            tracing::warn!(path = %self.path.display(), "cannot encode a text: {e}; counting its bytes");
            tokenizers::Encoding::from_tokens(
                text.bytes()
                    .enumerate()
                    .map(|(at, byte)| tokenizers::Token::new(byte.into(), String::new(), (at, at + 1)))
                    .collect(),
                0,
            )
        })
    }

    /// `text` in consecutive chunks of at least [`CHUNK`] bytes (but the last), each ending
    /// where a line starts; the whole text when the pipeline may not split there.
    fn chunks<'a>(&self, text: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let chunked = self.chunked;
        let mut rest = text;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let end = if chunked {
                line_starts(rest, CHUNK.min(rest.len()), rest.len())
                    .next()
                    .unwrap_or(rest.len())
            } else {
                rest.len()
            };
            let (chunk, tail) = rest.split_at(end);
            rest = tail;
            Some(chunk)
        })
    }

    /// Whether every line start of a probe splits its encoding in two.
    fn probe_line_starts(&self) -> bool {
        const PROBE: &str = "fn main() {\n    let x = 1;\n}\n/usr/share/doc/a.gz\n\
            C:\\Users\\dev\\a.rs\r\nsrc/lib.rs:12:    return x.len();\n日本語のテキスト。\n\
            テスト\n🦀 crab\n123\n456 items.\n-- end --\n\t\n'quoted'\n<|im_end|>\n<think>\nok";
        let ids = |text: &str| self.encode(text, false).get_ids().to_vec();
        let whole = ids(PROBE);
        line_starts(PROBE, 0, PROBE.len()).all(|at| {
            let mut joined = ids(&PROBE[..at]);
            joined.extend(ids(&PROBE[at..]));
            joined == whole
        })
    }
}

/// Where lines start in `text[from..to]`: after a newline, before a character that is not white
/// space. `cl100k_base`'s pre-tokenizer starts a piece at each of them, and so do those of the
/// open models that descend from it.
fn line_starts(text: &str, from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
    Encoding::Cl100kBase.piece_starts(text, from, to)
}

/// Whether the normalizer and pre-tokenizer of a `tokenizer.json` are of kinds that never join a
/// newline to what follows it, so that a text may be encoded line by line: byte-level BPE with
/// `Split` regexes (GPT-2, Llama 3, Qwen, DeepSeek), digits and punctuation splits, and
/// normalizers that do not add text. Metaspace (which prepends `▁` to each text it encodes)
/// and anything unknown keep the text whole.
fn splits_at_line_starts(json: &serde_json::Value) -> bool {
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
    let added_with_newline = json
        .get("added_tokens")
        .and_then(|tokens| tokens.as_array())
        .into_iter()
        .flatten()
        .any(|token| {
            token
                .get("content")
                .and_then(|content| content.as_str())
                .is_some_and(|content| content.contains(['\n', '\r']))
        });
    !added_with_newline
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

impl fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HfTokenizer")
            .field("path", &self.path)
            .field("splits_at_line_starts", &self.chunked)
            .finish_non_exhaustive()
    }
}

impl Tokenizer for HfTokenizer {
    fn count(&self, text: &str) -> usize {
        self.chunks(text)
            .map(|chunk| self.encode(chunk, false).len())
            .sum()
    }

    /// Counts chunk by chunk, and finds the cut from the offsets of the one chunk that crosses
    /// the limit; the kept part of that chunk is counted again, since a cut can change how it
    /// encodes.
    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
        let (mut total_tokens, mut offset) = (0, 0);
        let mut kept = None;
        for chunk in self.chunks(text) {
            let (tokens, cut) = if kept.is_none() {
                let encoded = self.encode(chunk, true);
                let room = max_tokens.saturating_sub(total_tokens);
                let cut = encoded.get_offsets().get(room).map(|&(start, _)| start);
                (encoded.len(), cut)
            } else {
                (self.encode(chunk, false).len(), None)
            };
            if let Some(cut) = cut {
                let room = max_tokens - total_tokens;
                let head = &chunk[..floor_char_boundary(chunk, cut)];
                let (len, head_tokens) = match self.count(head) {
                    tokens if tokens <= room => (head.len(), tokens),
                    // Re-encoding a cut text can take more ids than it had in the whole.
                    _ => {
                        let shorter = self.prefix(head, room.saturating_sub(1));
                        (shorter.len, shorter.tokens)
                    }
                };
                kept = Some((offset + len, total_tokens + head_tokens));
            }
            total_tokens += tokens;
            offset += chunk.len();
        }
        let (len, tokens) = kept.unwrap_or((text.len(), total_tokens));
        Prefix {
            len,
            tokens,
            total_tokens,
        }
    }
}
