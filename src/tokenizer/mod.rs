//! The [`Tokenizer`] trait the cap counts and cuts with, and its backends.

use std::fmt;

mod ascii_runs;
#[cfg(feature = "bpe-openai")]
mod bpe_openai;
mod byte_classes;
mod cache_growth;
mod encoding;
#[cfg(feature = "hf")]
mod hf;
mod pair_cache;
mod piece_blocks;
mod piece_cache;
mod pieces;
mod pre_tokenizer;
mod ranks;
mod segments;
mod short_piece_cache;
mod subset_bpe;
mod tiktoken;
mod white_space;
mod whole_chars;

#[cfg(feature = "bpe-openai")]
pub use self::bpe_openai::BpeOpenai;
pub use self::encoding::Encoding;
#[cfg(feature = "hf")]
pub use self::hf::{HfTokenizer, TokenizerFileError};
use self::pieces::count_edited_from_last_piece;
pub(crate) use self::pieces::ends_in_ascii_word;
use self::segments::{count_long_run, prefix_over, sum_within, LongRun, SegmentCut};
pub use self::tiktoken::Tiktoken;

/// Counts tokens and finds where to cut a text so that it fits a token budget.
///
/// The cap calls [`prefix`](Tokenizer::prefix) once per output that may be over its limit, so a
/// backend should find the cut and the total count in one pass over the text. Implement it to
/// count with another model's tokenizer and pass it to
/// [`ToolOutputLimits::with_tokenizer`](crate::ToolOutputLimits::with_tokenizer): the limits
/// are its one owner, and the layer, the worker and the request cap all count with it.
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

impl Prefix {
    /// The prefix that ends at `kept`, or the whole `text`, of `total_tokens`, when nothing was
    /// cut.
    pub(crate) fn ending_at(kept: Option<Mark>, text: &str, total_tokens: usize) -> Prefix {
        let kept = kept.unwrap_or(Mark {
            at: text.len(),
            tokens: total_tokens,
        });
        Prefix {
            len: kept.at,
            tokens: kept.tokens,
            total_tokens,
        }
    }
}

/// A place in a text and the tokens before it: where a count can go on from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The byte offset.
    pub(crate) at: usize,
    /// The tokens before it.
    pub(crate) tokens: usize,
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
