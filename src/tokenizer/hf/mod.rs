//! The Hugging Face `tokenizer.json` backend, behind the `hf` feature.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{
    count_edited_from_last_piece, floor_char_boundary, sum_within, Encoding, Mark, Prefix,
    Tokenizer,
};

mod chunks;
mod pipeline;

use chunks::{Chunking, Window, CHUNKING};
use pipeline::{ordinary_added_tokens, splits_at_line_starts, splits_white_space_as_cl100k};

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
    chunking: Chunking,
    /// Whether texts are cut where a line starts.
    at_lines: bool,
    /// Whether long lines are cut where a word starts.
    in_lines: bool,
    /// Whether a long run of white space with no line break is encoded apart, as its own piece.
    runs_apart: bool,
}

/// A `tokenizer.json` that cannot be read or loaded.
#[derive(Debug)]
pub struct TokenizerFileError {
    path: PathBuf,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
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

impl std::error::Error for TokenizerFileError {
    /// The error of reading, parsing or loading the file, when there was one.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|source| source as _)
    }
}

impl HfTokenizer {
    /// Loads the `tokenizer.json` at `path`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<HfTokenizer, TokenizerFileError> {
        let path = path.as_ref();
        let error = |message: String, source: Option<Box<dyn std::error::Error + Send + Sync>>| {
            TokenizerFileError {
                path: path.to_owned(),
                message,
                source,
            }
        };
        let bytes = std::fs::read(path).map_err(|e| {
            error(
                format!("cannot read the tokenizer file: {e}"),
                Some(e.into()),
            )
        })?;
        let json: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            error(
                format!("is not a tokenizer.json: not JSON ({e})"),
                Some(e.into()),
            )
        })?;
        if json.get("model").is_none_or(|model| !model.is_object()) {
            let message = "is not a tokenizer.json: it has no `model` table";
            return Err(error(message.to_owned(), None));
        }
        let mut inner = tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| {
            error(
                format!("cannot be loaded as a Hugging Face tokenizer: {e}"),
                Some(e),
            )
        })?;
        inner
            .with_truncation(None)
            .map_err(|e| error(format!("cannot turn truncation off: {e}"), Some(e)))?;
        inner.with_padding(None);
        inner.set_encode_special_tokens(true);
        let mut tokenizer = HfTokenizer {
            inner,
            path: path.to_owned(),
            chunking: CHUNKING,
            at_lines: false,
            in_lines: false,
            runs_apart: false,
        };
        tokenizer.at_lines = splits_at_line_starts(&json) && tokenizer.probe_line_starts();
        tokenizer.in_lines = tokenizer.at_lines
            && !ordinary_added_tokens(&json)
                .any(|token| token.get("single_word") == Some(&true.into()))
            && tokenizer.probe_word_starts();
        tokenizer.runs_apart = tokenizer.at_lines && splits_white_space_as_cl100k(&json);
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

    /// Whether texts are encoded in chunks split where a line starts (and, in a line of tens of
    /// kilobytes, where a word starts): only when the pipeline is of the kinds that split there
    /// anyway, and a probe of such splits agrees. Else each text is encoded whole, and holds
    /// all of its tokens at once.
    pub fn splits_at_line_starts(&self) -> bool {
        self.at_lines
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
}

impl fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HfTokenizer")
            .field("path", &self.path)
            .field("splits_at_line_starts", &self.at_lines)
            .field("splits_long_lines", &self.in_lines)
            .field("splits_long_white_space_runs", &self.runs_apart)
            .finish_non_exhaustive()
    }
}

impl Tokenizer for HfTokenizer {
    /// A line start, when the pre-tokenizer starts pieces there
    /// ([`splits_at_line_starts`](HfTokenizer::splits_at_line_starts)).
    fn last_split(&self, text: &str) -> Option<usize> {
        if !self.at_lines {
            return None;
        }
        Encoding::Cl100kBase
            .piece_starts(text, 0, text.len())
            .next_back()
    }

    fn count(&self, text: &str) -> usize {
        self.chunks(text).map(|chunk| self.tokens(&chunk)).sum()
    }

    fn count_within(&self, text: &str, max_tokens: usize) -> Option<usize> {
        sum_within(
            self.chunks(text).map(|chunk| self.tokens(&chunk)),
            max_tokens,
        )
    }

    /// Counts again from the last line start before `keep`, where the pipeline splits the
    /// edited text as it splits `text`; all of it when the pipeline may not be split.
    fn count_edited(&self, text: &str, text_tokens: usize, keep: usize, tail: &str) -> usize {
        if !self.at_lines {
            return self.count(&[&text[..keep], tail].concat());
        }
        // Line starts are the piece starts of `cl100k_base` after a newline.
        count_edited_from_last_piece(
            Encoding::Cl100kBase,
            text,
            text_tokens,
            keep,
            tail,
            |text| self.count(text),
        )
    }

    /// Counts chunk by chunk, and finds the cut from the offsets of the one chunk that crosses
    /// the limit; the head is counted again from the last word start the cut cannot move (see
    /// `head`), since a cut can change how the last words encode.
    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
        let (mut total_tokens, mut offset) = (0, 0);
        let mut kept = None;
        // The window of the chunk before, when it ended at a word start: a cut just after that
        // can change how the words before it encode.
        let mut previous: Option<Window> = None;
        for chunk in self.chunks(text) {
            let tokens = if kept.is_some() {
                self.tokens(&chunk)
            } else {
                let at_word_start = chunk.window.is_some();
                let (encoded, tokens) = chunk.window.unwrap_or_else(|| {
                    let encoded = self.encode(chunk.text, true);
                    let tokens = encoded.len();
                    (encoded, tokens)
                });
                let this = Window {
                    encoded,
                    tokens,
                    start: Mark {
                        at: offset,
                        tokens: total_tokens,
                    },
                };
                let room = max_tokens.saturating_sub(total_tokens);
                if let Some(&(cut, _)) = this.encoded.get_offsets()[..tokens].get(room) {
                    let end = offset + floor_char_boundary(chunk.text, cut);
                    // Count the head again from the last sure word start before the cut: in
                    // this chunk; else in the window before, if this chunk starts at a word
                    // start; else from this chunk's start, a line start.
                    let start =
                        self.sure_start(text, &this, end)
                            .unwrap_or_else(|| match &previous {
                                Some(window) => self
                                    .sure_start(text, window, end)
                                    .unwrap_or(Mark { at: 0, tokens: 0 }),
                                None => this.start,
                            });
                    kept = Some(self.head(text, start, end, max_tokens));
                }
                previous = at_word_start.then_some(this);
                tokens
            };
            total_tokens += tokens;
            offset += chunk.text.len();
        }
        Prefix::ending_at(kept, text, total_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn long_white_space_runs_are_apart_only_with_cl100k_s_white_space_alternatives() {
        let split =
            |pattern: &str| serde_json::json!({"type": "Split", "pattern": {"Regex": pattern}});
        let tail = r"\s*[\r\n]+|\s+(?!\S)|\s+";
        let qwen = split(&format!(
            r"(?i:'s|'t)|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}|{tail}"
        ));
        // DeepSeek V3 writes its line breaks as themselves, after splits of digits.
        let deepseek = serde_json::json!({"type": "Sequence", "pretokenizers": [
            split(r"\p{N}{1,3}"),
            split(" ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"),
            {"type": "ByteLevel", "add_prefix_space": false},
        ]});
        let gpt2 = split(r"'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+");
        let digits_last = serde_json::json!({"type": "Sequence", "pretokenizers": [qwen.clone(), split(r"\p{N}")]});
        for (pre_tokenizer, apart) in [
            (qwen, true),
            (deepseek, true),
            (gpt2, false),
            (digits_last, false),
        ] {
            let json = serde_json::json!({"pre_tokenizer": pre_tokenizer});
            assert_eq!(splits_white_space_as_cl100k(&json), apart, "{json}");
        }
    }

    /// Qwen 3's and DeepSeek V3's files, when `.ci/run` has fetched them, cutting texts in
    /// chunks of a few bytes so that each line is cut at many word starts.
    fn real_files_in_small_chunks() -> &'static [HfTokenizer] {
        static LOADED: std::sync::OnceLock<Vec<HfTokenizer>> = std::sync::OnceLock::new();
        LOADED.get_or_init(|| {
            let Some(dir) = std::env::var_os("TOOL_OUTPUT_CAP_TOKENIZERS") else {
                // Past the test harness's capture, so that a plain `cargo test` shows it.
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped long_lines_cut_at_word_starts_encode_as_they_do_whole: \
                     TOOL_OUTPUT_CAP_TOKENIZERS is not set (.ci/run fetches the Qwen 3 and \
                     DeepSeek V3 tokenizer files and sets it)"
                );
                return Vec::new();
            };
            ["qwen3", "deepseek_v3"]
                .iter()
                .map(|model| {
                    let path = Path::new(&dir).join(model).join("tokenizer.json");
                    let mut tokenizer = HfTokenizer::from_file(&path).unwrap();
                    assert!(tokenizer.at_lines && tokenizer.in_lines, "{tokenizer:?}");
                    tokenizer.chunking = Chunking {
                        chunk: 48,
                        margin: 96,
                    };
                    tokenizer
                })
                .collect()
        })
    }

    /// Lines of JSON, code, paths, prose and white space, with the added tokens of both files.
    fn line() -> impl Strategy<Value = String> {
        let pieces = vec![
            "{\"id\":",
            "12345678",
            ",\"name\":\"",
            "Ünïcode",
            "e\u{301}",
            "\"}",
            "],[",
            ", ",
            " ",
            "   ",
            "\t",
            "\u{3000}",
            "日本語の",
            "テスト",
            "🦀",
            "<think>",
            "</think>",
            "<|im_end|>",
            "<｜User｜>",
            "'s",
            "don't",
            "x",
            "ABCdef",
            "-1.5e10",
            "/usr/share/",
            "C:\\Users\\",
            ";",
            "...",
            "\r\n",
            "\n",
            "0",
            "αβγ",
        ];
        prop::collection::vec(prop::sample::select(pieces), 0..300).prop_map(|line| line.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn long_lines_cut_at_word_starts_encode_as_they_do_whole(
            text in line(),
            max_tokens in 0usize..400,
        ) {
            for tokenizer in real_files_in_small_chunks() {
                let whole = |text: &str| tokenizer.encode(text, false).len();
                prop_assert_eq!(tokenizer.count(&text), whole(&text));
                let prefix = tokenizer.prefix(&text, max_tokens);
                prop_assert_eq!(prefix.total_tokens, whole(&text));
                prop_assert!(prefix.tokens <= max_tokens || prefix.len == text.len());
                prop_assert_eq!(prefix.tokens, whole(&text[..prefix.len]));
            }
        }
    }
}
