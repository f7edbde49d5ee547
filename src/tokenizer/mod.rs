//! The [`Tokenizer`] trait the cap counts and cuts with, and its backends.

use std::fmt;
use std::sync::Arc;

#[cfg(feature = "bpe-openai")]
mod bpe_openai;
mod tiktoken;

#[cfg(feature = "bpe-openai")]
pub use self::bpe_openai::BpeOpenai;
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

/// Whether the o200k_base and cl100k_base pre-tokenizers start a piece at byte `at` of `text`
/// whatever comes before the newline or after the character: right after a newline, before a
/// character that is neither white space nor `/`.
///
/// Every pattern that can take a newline stops at such a character, and no pattern can take a
/// newline and then carry on into one. So the tokens of `text` are the tokens of `text[..at]`
/// followed by the tokens of `text[at..]`, and that stays true when `text` is cut after `at`.
pub(crate) fn starts_piece(text: &str, at: usize) -> bool {
    at > 0
        && text.as_bytes().get(at - 1) == Some(&b'\n')
        && text
            .get(at..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| !c.is_whitespace() && c != '/')
}

/// The piece starts (see [`starts_piece`]) that follow a newline in `text[from..to]`, in order.
pub(crate) fn piece_starts(
    text: &str,
    from: usize,
    to: usize,
) -> impl DoubleEndedIterator<Item = usize> + '_ {
    text.as_bytes()[from..to]
        .iter()
        .enumerate()
        .filter(|&(_, &byte)| byte == b'\n')
        .map(move |(at, _)| from + at + 1)
        .filter(move |&at| starts_piece(text, at))
}

/// The last piece start of `text`, or 0.
fn last_piece_start(text: &str) -> usize {
    piece_starts(text, 0, text.len()).next_back().unwrap_or(0)
}

/// [`Tokenizer::count_edited`] for the built-in backends: counts again only from the last piece
/// start before `keep`, which splits the edited text as it splits `text`.
fn count_edited_from_last_piece(
    text: &str,
    text_tokens: usize,
    keep: usize,
    tail: &str,
    count: impl Fn(&str) -> usize,
) -> usize {
    let start = last_piece_start(&text[..keep]);
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
        if starts_piece(text, offset) {
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

    #[test]
    fn piece_starts_split_the_encoding() {
        let text = "a.\nb \n\n  c;\n.d\nä\n/e\n\t\nf";
        let starts: Vec<usize> = (0..=text.len())
            .filter(|&at| starts_piece(text, at))
            .collect();
        assert_eq!(starts.len(), 4, "{starts:?}");
        for at in starts {
            let mut joined = encode(Encoding::O200kBase, &text[..at]);
            joined.extend(encode(Encoding::O200kBase, &text[at..]));
            assert_eq!(joined, encode(Encoding::O200kBase, text), "split at {at}");
        }
        assert!(!starts_piece(text, text.find("/e").unwrap()));
    }

    proptest::proptest! {
        #[test]
        fn every_piece_start_splits_the_encoding(
            text in "([a-zA-Z0-9]{0,3}[ \t\n\r/.;\u{3000}é日🦀]{0,3}){0,30}",
        ) {
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let whole = encode(encoding, &text);
                for at in (1..text.len()).filter(|&at| starts_piece(&text, at)) {
                    let mut joined = encode(encoding, &text[..at]);
                    joined.extend(encode(encoding, &text[at..]));
                    proptest::prop_assert_eq!(&joined, &whole, "{} at {}", encoding, at);
                }
            }
        }
    }
}
