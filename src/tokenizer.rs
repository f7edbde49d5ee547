//! The [`Tokenizer`] trait the cap counts and cuts with, and its tiktoken-rs backend.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use tiktoken_rs::{CoreBPE, Rank};

/// Counts tokens and finds where to cut a text so that it fits a token budget.
///
/// The layer calls [`prefix`](Tokenizer::prefix) once per output that may be over its limit,
/// so a backend should find the cut and the total count in one encoding of the text.
/// Implement it to count with another model's tokenizer and pass it to
/// [`ToolOutputCapLayer::with_tokenizer`](crate::ToolOutputCapLayer::with_tokenizer).
pub trait Tokenizer: Send + Sync + fmt::Debug {
    /// The number of tokens in `text`, read as ordinary text (no special tokens).
    fn count(&self, text: &str) -> usize;

    /// The longest prefix of `text` that is at most `max_tokens` tokens, cut on a char boundary,
    /// together with the token count of the whole of `text`.
    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix;

    /// The number of tokens in `head` followed by `tail`, where `head` is known to be
    /// `head_tokens` tokens.
    ///
    /// Token counts are not additive: the two may merge where they meet. The default counts the
    /// joined text; a backend that knows where its pre-tokenizer must split can count less.
    fn count_joined(&self, head: &str, head_tokens: usize, tail: &str) -> usize {
        let _ = head_tokens;
        self.count(&[head, tail].concat())
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

/// A tiktoken vocabulary, chosen with `encoding` in the manifest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
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

    /// The process-wide tiktoken-rs tokenizer for this vocabulary, built on first use.
    pub fn tiktoken(self) -> Arc<Tiktoken> {
        static O200K: OnceLock<Arc<Tiktoken>> = OnceLock::new();
        static CL100K: OnceLock<Arc<Tiktoken>> = OnceLock::new();
        let (cell, bpe): (_, fn() -> &'static CoreBPE) = match self {
            Encoding::O200kBase => (&O200K, tiktoken_rs::o200k_base_singleton),
            Encoding::Cl100kBase => (&CL100K, tiktoken_rs::cl100k_base_singleton),
        };
        Arc::clone(cell.get_or_init(|| Arc::new(Tiktoken::new(self, bpe()))))
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The tiktoken-rs backend: exact counts, one encoding per cut.
///
/// tiktoken-rs 0.12 cannot pre-tokenize a run of about a million white-space characters (its
/// regex runs out of backtracking stack). Such a text is split in two, at a point where the
/// pre-tokenizer must split anyway if there is one and in the middle otherwise, and each half is
/// encoded on its own. Only splits of the second kind, which fall inside those long runs, can
/// make a count differ from the exact one, by a token or two each.
pub struct Tiktoken {
    encoding: Encoding,
    bpe: &'static CoreBPE,
    /// Byte length of every token, indexed by rank.
    token_len: Vec<u8>,
}

impl Tiktoken {
    fn new(encoding: Encoding, bpe: &'static CoreBPE) -> Self {
        let mut token_len = Vec::new();
        let mut rank: Rank = 0;
        let mut misses = 0;
        // Ranks are dense up to the special tokens, which sit a few places past the end.
        while misses < 64 {
            match bpe.decode_bytes(&[rank]) {
                Ok(bytes) => {
                    token_len.resize(rank as usize, 0);
                    token_len.push(u8::try_from(bytes.len()).unwrap_or(u8::MAX));
                    misses = 0;
                }
                Err(_) => misses += 1,
            }
            rank += 1;
        }
        Tiktoken {
            encoding,
            bpe,
            token_len,
        }
    }

    /// The vocabulary this tokenizer encodes with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The tokens of `text` as ordinary text.
    pub fn encode(&self, text: &str) -> Vec<Rank> {
        match self.bpe.encode(text, &HashSet::new()) {
            Ok((tokens, _)) => tokens,
            Err(_) => {
                let mut tokens = Vec::new();
                self.encode_split(text, &mut tokens);
                tokens
            }
        }
    }

    fn encode_split(&self, text: &str, tokens: &mut Vec<Rank>) {
        let mid = split_point(text);
        for half in [&text[..mid], &text[mid..]] {
            match self.bpe.encode(half, &HashSet::new()) {
                Ok((half_tokens, _)) => tokens.extend(half_tokens),
                Err(_) => self.encode_split(half, tokens),
            }
        }
    }

    fn token_len(&self, token: Rank) -> usize {
        self.token_len
            .get(token as usize)
            .map_or(0, |&len| len.into())
    }
}

impl fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tiktoken")
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

impl Tokenizer for Tiktoken {
    fn count(&self, text: &str) -> usize {
        self.encode(text).len()
    }

    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
        let tokens = self.encode(text);
        let total_tokens = tokens.len();
        if total_tokens <= max_tokens {
            return Prefix {
                len: text.len(),
                tokens: total_tokens,
                total_tokens,
            };
        }
        // Walk the first `max_tokens` tokens, remembering the last piece start on the way: the
        // tokens before it are exactly the tokens of the text before it.
        let (mut end, mut piece_start, mut tokens_before) = (0, 0, 0);
        for (i, &token) in tokens[..max_tokens].iter().enumerate() {
            if starts_piece(text, end) {
                (piece_start, tokens_before) = (end, i);
            }
            end += self.token_len(token);
        }
        let len = floor_char_boundary(text, end);
        let rest = &text[piece_start..len];
        // A cut inside a piece can encode to more tokens than the prefix it was taken from.
        let rest = match self.count(rest) {
            tokens if tokens_before + tokens <= max_tokens => Prefix {
                len: rest.len(),
                tokens,
                total_tokens: tokens,
            },
            _ => self.prefix(rest, max_tokens - tokens_before),
        };
        Prefix {
            len: piece_start + rest.len,
            tokens: tokens_before + rest.tokens,
            total_tokens,
        }
    }

    fn count_joined(&self, head: &str, head_tokens: usize, tail: &str) -> usize {
        join_at_last_piece(head, head_tokens, tail, |text| self.count(text))
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

/// Counts `head + tail` by re-encoding only what follows the last piece start of `head`.
pub(crate) fn join_at_last_piece(
    head: &str,
    head_tokens: usize,
    tail: &str,
    count: impl Fn(&str) -> usize,
) -> usize {
    let start = head
        .match_indices('\n')
        .rev()
        .map(|(at, _)| at + 1)
        .find(|&at| starts_piece(head, at))
        .unwrap_or(0);
    let last = &head[start..];
    // `count(last) <= head_tokens` holds for an exact `head_tokens`; saturate for a custom one.
    head_tokens.saturating_sub(count(last)) + count(&[last, tail].concat())
}

/// A place to split a text tiktoken-rs cannot encode whole: the piece start nearest the middle,
/// or the middle itself (on a char boundary) if there is none.
fn split_point(text: &str) -> usize {
    let mid = floor_char_boundary(text, text.len() / 2);
    let before = text[..mid]
        .match_indices('\n')
        .rev()
        .map(|(at, _)| at + 1)
        .find(|&at| starts_piece(text, at));
    let after = text[mid..]
        .match_indices('\n')
        .map(|(at, _)| mid + at + 1)
        .find(|&at| starts_piece(text, at));
    let nearest = match (before, after) {
        (Some(b), Some(a)) => Some(if mid - b <= a - mid { b } else { a }),
        (b, a) => b.or(a),
    };
    match nearest {
        Some(at) if at > 0 && at < text.len() => at,
        _ => match split_in_run(text, mid) {
            at if at > 0 => at,
            // A text of one character always encodes; split after it all the same.
            _ => text.chars().next().map_or(0, char::len_utf8),
        },
    }
}

/// `mid`, moved back to a multiple of 128 characters from the start of the white-space run it
/// falls in. A run of one repeated character encodes as blocks of a power of two of them, up to
/// 128, from its start, so the halves of such a run add up to the exact count.
fn split_in_run(text: &str, mid: usize) -> usize {
    let run_start = text[..mid]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_whitespace())
        .last()
        .map_or(mid, |(at, _)| at);
    let aligned = text[run_start..mid].chars().count() / 128 * 128;
    match text[run_start..].char_indices().nth(aligned) {
        Some((at, _)) if aligned > 0 => run_start + at,
        _ => mid,
    }
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

    fn o200k() -> Arc<Tiktoken> {
        Encoding::O200kBase.tiktoken()
    }

    #[test]
    fn counts_like_tiktoken_rs() {
        let text = "src/main.rs\nsrc/lib.rs\n日本語のテキスト 🦀🦀\n";
        let expected = tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(text)
            .len();
        assert_eq!(o200k().count(text), expected);
    }

    #[test]
    fn special_token_text_is_ordinary_text() {
        let bpe = tiktoken_rs::o200k_base_singleton();
        let text = "before <|endoftext|> after";
        assert_eq!(o200k().count(text), bpe.encode_ordinary(text).len());
        assert!(o200k().count(text) > bpe.encode_with_special_tokens(text).len());
    }

    #[test]
    fn token_lengths_add_up_to_the_text() {
        let tokenizer = o200k();
        let text = "fn main() { println!(\"héllo 🦀\"); }\n";
        let total: usize = tokenizer
            .encode(text)
            .iter()
            .map(|&t| tokenizer.token_len(t))
            .sum();
        assert_eq!(total, text.len());
    }

    #[test]
    fn prefix_is_the_longest_within_the_budget() {
        let tokenizer = o200k();
        let text = "alpha/beta.rs\ngamma/delta.rs\n".repeat(50);
        let prefix = tokenizer.prefix(&text, 40);
        assert_eq!(prefix.total_tokens, tokenizer.count(&text));
        assert_eq!(prefix.tokens, tokenizer.count(&text[..prefix.len]));
        assert!(prefix.tokens <= 40);
        let longer = floor_char_boundary(&text, prefix.len + 1);
        assert!(tokenizer.count(&text[..longer]) > 40);
    }

    #[test]
    fn piece_starts_split_the_encoding() {
        let tokenizer = o200k();
        let text = "a.\nb \n\n  c;\n.d\nä\n/e\n\t\nf";
        for at in 0..=text.len() {
            if starts_piece(text, at) {
                let mut joined = tokenizer.encode(&text[..at]);
                joined.extend(tokenizer.encode(&text[at..]));
                assert_eq!(joined, tokenizer.encode(text), "split at {at}");
            }
        }
        assert!(!starts_piece(text, text.find("/e").unwrap()));
    }

    #[test]
    fn long_whitespace_runs_count_exactly() {
        // Exact counts from bpe-openai, which encodes these runs whole.
        let tokenizer = o200k();
        for (text, exact) in [
            (" ".repeat(2_000_000), 15_625),
            ("\t".repeat(1_000_000), 62_500),
            ("\u{3000}".repeat(1_000_000), 62_500),
            (format!("x{}y", " ".repeat(1_200_000)), 9_378),
        ] {
            assert_eq!(tokenizer.count(&text), exact, "{:?}", &text[..4]);
        }
    }

    proptest::proptest! {
        #[test]
        fn every_piece_start_splits_the_encoding(
            text in "([a-z]{0,3}[ \t\n/.;\u{3000}é日🦀]{0,3}){0,30}",
        ) {
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let tokenizer = encoding.tiktoken();
                let whole = tokenizer.encode(&text);
                for at in (1..text.len()).filter(|&at| starts_piece(&text, at)) {
                    let mut joined = tokenizer.encode(&text[..at]);
                    joined.extend(tokenizer.encode(&text[at..]));
                    proptest::prop_assert_eq!(&joined, &whole, "{} at {}", encoding, at);
                }
            }
        }
    }
}
