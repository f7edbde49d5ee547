//! The [`Tokenizer`] trait the cap counts and cuts with, and its backends.

use std::fmt;
use std::sync::Arc;

#[cfg(feature = "bpe-openai")]
mod bpe_openai;
#[cfg(feature = "hf")]
mod hf;
mod tiktoken;
mod white_space;

#[cfg(feature = "bpe-openai")]
pub use self::bpe_openai::BpeOpenai;
#[cfg(feature = "hf")]
pub use self::hf::{HfTokenizer, TokenizerFileError};
pub use self::tiktoken::Tiktoken;

/// Counts tokens and finds where to cut a text so that it fits a token budget.
///
/// The cap calls [`prefix`](Tokenizer::prefix) once per output that may be over its limit, so a
/// backend should find the cut and the total count in one pass over the text. Implement it to
/// count with another model's tokenizer and pass it to
/// [`ToolOutputCapLayer::with_tokenizer`](crate::ToolOutputCapLayer::with_tokenizer).
pub trait Tokenizer: Send + Sync + fmt::Debug {
    /// The number of tokens in `text`, read as ordinary text (no special tokens).
    fn count(&self, text: &str) -> usize;

    /// The longest prefix of `text` that is at most `max_tokens` tokens, cut on a char boundary,
    /// together with the token count of the whole of `text`.
    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix;

    /// The number of tokens in `text` if it is at most `max_tokens`, else `None`: what
    /// [`count`](Self::count) says. The default counts the whole text; a backend that counts in
    /// parts stops at the part that goes over, so that asking whether a large text fits a small
    /// limit costs about the limit.
    fn count_within(&self, text: &str, max_tokens: usize) -> Option<usize> {
        let tokens = self.count(text);
        (tokens <= max_tokens).then_some(tokens)
    }

    /// The number of tokens in `text[..keep]` followed by `tail`, where `text` is known to be
    /// `text_tokens` tokens and `keep` is a char boundary of it.
    ///
    /// Token counts are not additive: text may merge into other tokens where it is cut or joined.
    /// The default counts the edited text; a backend that knows where its pre-tokenizer must
    /// split counts only from there.
    fn count_edited(&self, text: &str, text_tokens: usize, keep: usize, tail: &str) -> usize {
        let _ = text_tokens;
        self.count(&[&text[..keep], tail].concat())
    }

    /// The last place where `text` can be split to be counted in parts: a byte offset `at`,
    /// after a line break, such that the tokens of `text` and of any text that starts with it
    /// are the tokens of `text[..at]` followed by those of the rest, and the rest's tokens are
    /// its own wherever it follows a line break. `None` when the backend knows no such place,
    /// and a text read in parts ([`TokenCount`](crate::TokenCount),
    /// [`StreamedOutput`](crate::StreamedOutput)) is held until one comes: the default.
    fn last_split(&self, text: &str) -> Option<usize> {
        let _ = text;
        None
    }
}

/// Where [`Tokenizer::prefix`] cuts a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// Byte length of the prefix; always on a char boundary.
    pub len: usize,
    /// Token count of the prefix on its own.
    pub tokens: usize,
    /// Token count of the whole text.
    pub total_tokens: usize,
}

/// A vocabulary of OpenAI's, chosen with `encoding` in the manifest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-5 and the o-series. The default.
    #[default]
    O200kBase,
    /// `cl100k_base`: GPT-4 and GPT-3.5.
    Cl100kBase,
}

impl Encoding {
    /// The name used in the manifest.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The process-wide tokenizer of this vocabulary, built on first use: bpe-openai's with the
    /// `bpe-openai` feature, tiktoken-rs's without.
    pub fn tokenizer(self) -> &'static dyn Tokenizer {
        #[cfg(feature = "bpe-openai")]
        return self.bpe_openai();
        #[cfg(not(feature = "bpe-openai"))]
        return self.tiktoken();
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The tokenizer a cap holds: a built-in one is a process-wide static, so that a call copies a
/// reference; a custom one is shared.
#[derive(Debug, Clone)]
pub(crate) enum TokenizerRef {
    Static(&'static dyn Tokenizer),
    Shared(Arc<dyn Tokenizer>),
}

impl std::ops::Deref for TokenizerRef {
    type Target = dyn Tokenizer;

    fn deref(&self) -> &Self::Target {
        match self {
            TokenizerRef::Static(tokenizer) => *tokenizer,
            TokenizerRef::Shared(tokenizer) => tokenizer.as_ref(),
        }
    }
}

impl Encoding {
    /// The piece start that the line break ending at byte `at` of `text` gives, if any: one
    /// that holds whatever comes after the character there, so that the tokens of `text` are the
    /// tokens of `text[..start]` followed by those of `text[start..]`, and stay so when `text` is
    /// cut after `start`.
    ///
    /// Every pattern of these pre-tokenizers that can take a newline stops at a character that
    /// is not white space, so that character starts a piece, but for one case. The punctuation
    /// pattern of `o200k_base`, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, carries the line breaks that
    /// follow punctuation on into slashes: there the piece starts after the slashes (`a;\n/usr`
    /// splits before `usr`, `a\n/usr` before `/usr`). In `cl100k_base` that pattern ends in
    /// `[\r\n]*`, so a `/` starts a piece like any other character.
    fn piece_start_after_newline(self, text: &str, at: usize) -> Option<usize> {
        let c = text[at..].chars().next()?;
        if c.is_whitespace() {
            return None;
        }
        if c != '/' || self == Encoding::Cl100kBase {
            return Some(at);
        }
        let before = text[..at]
            .trim_end_matches(['\r', '\n'])
            .chars()
            .next_back();
        if before.is_none_or(is_letter_number_or_space) {
            return Some(at);
        }
        // Only ASCII punctuation is surely in a punctuation piece here: a combining mark may
        // end a word instead.
        let slashes_end = at + text[at..].len() - text[at..].trim_start_matches('/').len();
        let next = text[slashes_end..].chars().next()?;
        (before.is_some_and(|c| c.is_ascii_punctuation()) && !matches!(next, '\r' | '\n'))
            .then_some(slashes_end)
    }

    /// Whether a piece starts at byte `at` of `text` (see
    /// [`piece_start_after_newline`](Self::piece_start_after_newline)).
    pub(crate) fn starts_piece(self, text: &str, at: usize) -> bool {
        let newline_end = match text.as_bytes().get(at.wrapping_sub(1)) {
            Some(b'\n') => at,
            Some(b'/') if self == Encoding::O200kBase => text[..at].trim_end_matches('/').len(),
            _ => return false,
        };
        newline_end > 0
            && text.as_bytes()[newline_end - 1] == b'\n'
            && self.piece_start_after_newline(text, newline_end) == Some(at)
    }

    /// The piece starts (see [`starts_piece`](Self::starts_piece)) that the line breaks in
    /// `text[from..to]` give, in order.
    pub(crate) fn piece_starts(
        self,
        text: &str,
        from: usize,
        to: usize,
    ) -> impl DoubleEndedIterator<Item = usize> + '_ {
        text.as_bytes()[from..to]
            .iter()
            .enumerate()
            .filter(|&(_, &byte)| byte == b'\n')
            .filter_map(move |(at, _)| self.piece_start_after_newline(text, from + at + 1))
            .filter(move |&start| start <= to)
    }

    /// [`Tokenizer::last_split`] for this vocabulary's pre-tokenizer: the last line start
    /// whose line holds a character that is not white space, after spaces or tabs if any.
    ///
    /// Both pre-tokenizers end a piece at a line break that such a line follows, and start
    /// the line's pieces afresh there, but for a `/` right after the line break: `o200k_base`
    /// starts its piece there after a letter or digit, but after punctuation may carry the line
    /// break on into the slashes (see [`piece_start_after_newline`](Self::piece_start_after_newline)).
    /// A split before such a `/` is taken only after an ASCII letter or digit.
    pub(crate) fn last_split(self, text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        (1..bytes.len())
            .rev()
            .find(|&at| bytes[at - 1] == b'\n' && self.splits_line_at(text, at))
    }

    /// Whether [`last_split`](Self::last_split) may split `text` at `at`, a line start.
    fn splits_line_at(self, text: &str, at: usize) -> bool {
        let line = &text[at..];
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let Some(first) = line[indent..].chars().next() else {
            return false;
        };
        if first.is_whitespace() {
            return false;
        }
        if first != '/' || indent > 0 || self == Encoding::Cl100kBase {
            return true;
        }
        ends_in_ascii_word(&text[..at])
    }

    /// The last piece start of `text`, or 0.
    fn last_piece_start(self, text: &str) -> usize {
        self.piece_starts(text, 0, text.len())
            .next_back()
            .unwrap_or(0)
    }
}

/// Whether the last character of `text` before its line breaks is an ASCII letter or digit:
/// then a line that follows starts its pieces afresh, `/` and all, in both vocabularies.
pub(crate) fn ends_in_ascii_word(text: &str) -> bool {
    text.trim_end_matches(['\r', '\n'])
        .as_bytes()
        .last()
        .is_some_and(u8::is_ascii_alphanumeric)
}

/// Whether `c` is in `\p{L}`, `\p{N}` or `\s`, the classes that no punctuation piece holds.
fn is_letter_number_or_space(c: char) -> bool {
    static CLASS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[\p{L}\p{N}\s]$").expect("a valid pattern")
    });
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c.is_ascii_whitespace();
    }
    CLASS.is_match(c.encode_utf8(&mut [0; 4]))
}

/// [`Tokenizer::count_edited`] for the built-in backends: counts again only from the last piece
/// start before `keep`, which splits the edited text as it splits `text`.
fn count_edited_from_last_piece(
    encoding: Encoding,
    text: &str,
    text_tokens: usize,
    keep: usize,
    tail: &str,
    count: impl Fn(&str) -> usize,
) -> usize {
    let start = encoding.last_piece_start(&text[..keep]);
    if start == 0 {
        return count(&[&text[..keep], tail].concat());
    }
    // `count(&text[start..]) <= text_tokens` holds for an exact `text_tokens`; saturate all the
    // same.
    text_tokens.saturating_sub(count(&text[start..])) + count(&[&text[start..keep], tail].concat())
}

/// Where a backend cuts the segment that crosses the budget.
struct SegmentCut {
    /// Where the kept text ends in the whole text, maybe inside a character.
    end: usize,
    /// A piece start inside the segment, before `end`, and the number of the segment's tokens
    /// before it, if the backend knows one.
    piece_start: Option<(usize, usize)>,
}

/// The prefix of `text` within `max_tokens`, from its consecutive `segments`, each with its
/// tokens (anything `len` can count) and each split from the next where the pre-tokenizer splits.
/// `cut` says where to cut the segment that crosses the budget, given its offset in `text`, the
/// segment, its tokens and the room left.
///
/// The kept text is then counted again from the last piece start before the cut: cutting can
/// change how the last pieces split (a white-space run that ended before a word can run on to the
/// cut), but never anything before a piece start.
fn prefix_over<'a, T>(
    tokenizer: &impl Tokenizer,
    encoding: Encoding,
    text: &'a str,
    max_tokens: usize,
    segments: impl Iterator<Item = (&'a str, T)>,
    len: impl Fn(&T) -> usize,
    cut: impl FnOnce(usize, &'a str, T, usize) -> SegmentCut,
) -> Prefix {
    let (mut total_tokens, mut offset) = (0, 0);
    let mut last_piece_start = (0, 0);
    let mut cut = Some(cut);
    let mut kept = None;
    for (segment, tokens) in segments {
        let segment_tokens = len(&tokens);
        if encoding.starts_piece(text, offset) {
            last_piece_start = (offset, total_tokens);
        }
        if total_tokens + segment_tokens > max_tokens {
            if let Some(cut) = cut.take() {
                let SegmentCut { end, piece_start } =
                    cut(offset, segment, tokens, max_tokens - total_tokens);
                let (start, before) = piece_start
                    .map_or(last_piece_start, |(at, before)| (at, total_tokens + before));
                kept = Some(count_from(tokenizer, text, start, before, end, max_tokens));
            }
        }
        total_tokens += segment_tokens;
        offset += segment.len();
    }
    let (len, tokens) = kept.unwrap_or((text.len(), total_tokens));
    Prefix {
        len,
        tokens,
        total_tokens,
    }
}

/// The kept length and tokens of `text[..end]`, where `text[..start]` is `before` tokens and
/// `start` is a piece start; cut again if it is over `max_tokens`.
fn count_from(
    tokenizer: &impl Tokenizer,
    text: &str,
    start: usize,
    before: usize,
    end: usize,
    max_tokens: usize,
) -> (usize, usize) {
    let rest = &text[start..floor_char_boundary(text, end)];
    match tokenizer.count(rest) {
        tokens if before + tokens <= max_tokens => (start + rest.len(), before + tokens),
        // Re-encoding a cut piece can give more tokens than the prefix it was cut from.
        _ => {
            let prefix = tokenizer.prefix(rest, max_tokens - before);
            (start + prefix.len, before + prefix.tokens)
        }
    }
}

/// A text of one character repeated this many times or more is counted by [`count_long_run`].
const LONG_RUN: usize = 4096;
/// BPE merges such a run into blocks of up to this many characters from its start.
const RUN_BLOCK: usize = 128;
/// How far from its end such a run may merge differently from its middle, in characters.
const RUN_TAIL: usize = 1024;

/// The tokens of `text`, if it is one long run of one character, from the tokens of two short
/// runs of it.
///
/// BPE merges a run of one repeated character pairwise from its start, into blocks of a power of
/// two of it up to 128, and differently only near its end. So the run is so many blocks of 128
/// and a tail of 1024 to 1151 of it that holds whatever the end changes. Encoding the whole run
/// instead costs tiktoken-rs 0.3 s a MB or more, and bpe-openai up to ten times a listing of the
/// same size (tabs make its encoder backtrack at every token). A run of digits is many pieces of
/// up to three, so it is left alone.
fn count_long_run(text: &str, count: impl Fn(&str) -> usize) -> Option<usize> {
    let c = text.chars().next().filter(|c| !c.is_numeric())?;
    let width = c.len_utf8();
    let chars = text.len() / width;
    let repeated = chars >= LONG_RUN
        && text.len() % width == 0
        && text
            .as_bytes()
            .chunks_exact(width)
            .all(|chunk| chunk == &text.as_bytes()[..width]);
    if !repeated {
        return None;
    }
    let blocks = (chars - RUN_TAIL) / RUN_BLOCK;
    let run = |chars| std::iter::repeat_n(c, chars).collect::<String>();
    Some(blocks * count(&run(RUN_BLOCK)) + count(&run(chars - blocks * RUN_BLOCK)))
}

/// The sum of `tokens` if it is at most `max_tokens`, else `None`, stopping at the first part
/// that goes over.
fn sum_within(mut tokens: impl Iterator<Item = usize>, max_tokens: usize) -> Option<usize> {
    tokens.try_fold(0, |sum, tokens| {
        Some(sum + tokens).filter(|&sum| sum <= max_tokens)
    })
}

/// The smallest char boundary of `text` at or after `at`.
pub(crate) fn ceil_char_boundary(text: &str, at: usize) -> usize {
    (at..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
}

/// The largest char boundary of `text` at or before `at`.
pub(crate) fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact encoding, from tiktoken-rs itself.
    fn encode(encoding: Encoding, text: &str) -> Vec<u32> {
        match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton().encode_ordinary(text),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton().encode_ordinary(text),
        }
    }

    #[test]
    fn only_long_runs_of_one_non_digit_are_counted_by_blocks() {
        let count = |text: &str| text.len();
        assert_eq!(
            count_long_run(&"é".repeat(LONG_RUN), count),
            Some(2 * LONG_RUN)
        );
        assert_eq!(count_long_run(&"é".repeat(LONG_RUN - 1), count), None);
        assert_eq!(
            count_long_run(&format!("{}è", "é".repeat(LONG_RUN)), count),
            None
        );
        assert_eq!(count_long_run(&"7".repeat(LONG_RUN), count), None);
        assert_eq!(count_long_run("", count), None);
    }

    /// Whether every piece start of `text` in `encoding` splits its encoding in two.
    fn check_piece_starts(encoding: Encoding, text: &str) -> Result<usize, String> {
        let whole = encode(encoding, text);
        let mut starts = 0;
        for at in encoding.piece_starts(text, 0, text.len()) {
            let mut joined = encode(encoding, &text[..at]);
            joined.extend(encode(encoding, &text[at..]));
            if joined != whole {
                return Err(format!(
                    "{encoding} splits {text:?} at {at}, the encoding does not"
                ));
            }
            starts += 1;
        }
        Ok(starts)
    }

    #[test]
    fn piece_starts_split_the_encoding() {
        let text = "a.\nb \n\n  c;\n.d\nä\n/e\n\t\nf";
        assert_eq!(check_piece_starts(Encoding::O200kBase, text), Ok(5));
        assert_eq!(check_piece_starts(Encoding::Cl100kBase, text), Ok(5));
    }

    #[test]
    fn a_slash_after_a_newline_starts_a_piece_unless_o200k_carries_punctuation_into_it() {
        let starts = |encoding: Encoding, text: &str| -> Vec<String> {
            let starts: Vec<usize> = (0..=text.len())
                .filter(|&at| encoding.starts_piece(text, at))
                .collect();
            let listed: Vec<usize> = encoding.piece_starts(text, 0, text.len()).collect();
            assert_eq!(starts, listed, "{text:?}");
            starts.iter().map(|&at| text[at..].to_owned()).collect()
        };
        let cases: [(&str, &[&str]); 12] = [
            ("a\n/b", &["/b"]),
            ("7\r\n/b", &["/b"]),
            ("a \n/b", &["/b"]),
            ("日\n/b", &["/b"]),
            ("\n/b", &["/b"]),
            ("a.\n/b", &["b"]),
            ("dir/\n//b", &["b"]),
            ("a;\r\n\n/ b", &[" b"]),
            ("x\n/\n/b", &["/\n/b", "b"]),
            ("x.\n/\n/", &[]),
            ("e\u{301}\n/b", &[]),
            ("\u{b7}\n/b", &[]),
        ];
        for (text, o200k) in cases {
            let cl100k: Vec<String> = text
                .match_indices("\n/")
                .map(|(at, _)| text[at + 1..].to_owned())
                .collect();
            assert_eq!(starts(Encoding::O200kBase, text), o200k, "{text:?}");
            assert_eq!(starts(Encoding::Cl100kBase, text), cl100k, "{text:?}");
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                assert!(check_piece_starts(encoding, text).is_ok(), "{text:?}");
            }
        }
        // The exclusion is needed: o200k encodes ".\n/" as one piece, cl100k does not.
        let split = |encoding: Encoding| {
            [encode(encoding, "a.\n"), encode(encoding, "/b")].concat()
                == encode(encoding, "a.\n/b")
        };
        assert!(!split(Encoding::O200kBase));
        assert!(split(Encoding::Cl100kBase));
    }

    #[test]
    fn an_absolute_listing_has_a_piece_start_on_every_line() {
        let listing = "/usr/lib/x86_64-linux-gnu/libc.so.6\n/usr/share/doc/README\n".repeat(100);
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            assert_eq!(check_piece_starts(encoding, &listing), Ok(199));
        }
    }

    proptest::proptest! {
        #[test]
        fn every_piece_start_splits_the_encoding(
            text in "([a-zA-Z0-9]{0,3}[ \t\n\r/.;\u{3000}é日🦀]{0,3}){0,30}",
            lines in proptest::collection::vec(
                "(/|C:\\\\|[a-z])[a-z0-9/._-]{0,12}([a-z]|[0-9]|[.;)}/ :\u{301}]|\u{3000})?(\n|\r\n|\n\n)",
                0..12,
            ),
        ) {
            for text in [text, lines.concat()] {
                for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                    let checked = check_piece_starts(encoding, &text);
                    proptest::prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
                }
            }
        }
    }
}
