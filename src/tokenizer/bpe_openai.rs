//! The bpe-openai backend, behind the `bpe-openai` feature.

use std::fmt;
use std::sync::{Arc, OnceLock};

use super::{
    count_joined_at_last_piece, floor_char_boundary, prefix_over, Encoding, Prefix, SegmentCut,
    Tokenizer,
};

/// The bpe-openai backend: the same tokens as tiktoken-rs, in time linear in the text on any
/// input, and a cut that encodes only up to the limit and counts the rest.
pub struct BpeOpenai {
    encoding: Encoding,
    tokenizer: &'static bpe_openai::Tokenizer,
}

impl Encoding {
    /// The process-wide bpe-openai tokenizer of this vocabulary, built on first use.
    pub fn bpe_openai(self) -> Arc<BpeOpenai> {
        static O200K: OnceLock<Arc<BpeOpenai>> = OnceLock::new();
        static CL100K: OnceLock<Arc<BpeOpenai>> = OnceLock::new();
        let (cell, tokenizer): (_, fn() -> &'static bpe_openai::Tokenizer) = match self {
            Encoding::O200kBase => (&O200K, bpe_openai::o200k_base),
            Encoding::Cl100kBase => (&CL100K, bpe_openai::cl100k_base),
        };
        Arc::clone(cell.get_or_init(|| {
            Arc::new(BpeOpenai {
                encoding: self,
                tokenizer: tokenizer(),
            })
        }))
    }
}

/// A run of one repeated character this long or longer is counted from two short runs.
const LONG_RUN: usize = 4096;
/// The blocks such a run is merged into, from its start, are of up to this many characters.
const RUN_BLOCK: usize = 128;
/// How far from its end a run may merge differently from its middle, in characters, at most.
const RUN_TAIL: usize = 1024;

impl BpeOpenai {
    /// The vocabulary this tokenizer encodes with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The tokens of one piece of the pre-tokenizer.
    fn count_piece(&self, piece: &str) -> usize {
        match one_repeated_char(piece) {
            Some((c, chars)) if chars >= LONG_RUN => self.count_run(c, chars),
            _ => self.tokenizer.bpe.count(piece.as_bytes()),
        }
    }

    /// The tokens of a run of `chars` times `c`, as one piece.
    ///
    /// BPE merges a run of one repeated character pairwise from its start, into blocks of a
    /// power of two of it up to 128, and differently only near its end. So the run is
    /// `blocks` times the tokens of 128 of it, and the tokens of a tail of 1024 to 1151 of it,
    /// which holds whatever the end changes. Counting the whole run instead costs up to ten
    /// times a listing of the same size (tabs, whose blocks are 16 while tokens of up to 20 tabs
    /// exist, make the encoder backtrack at every token).
    fn count_run(&self, c: char, chars: usize) -> usize {
        let blocks = (chars - RUN_TAIL) / RUN_BLOCK;
        let tail = chars - blocks * RUN_BLOCK;
        let bpe = &self.tokenizer.bpe;
        let block: String = std::iter::repeat_n(c, RUN_BLOCK).collect();
        let tail: String = std::iter::repeat_n(c, tail).collect();
        blocks * bpe.count(block.as_bytes()) + bpe.count(tail.as_bytes())
    }

    /// Cuts the piece at `offset` after at most `room` of its tokens.
    fn cut_piece(&self, offset: usize, piece: &str, room: usize) -> SegmentCut {
        let bpe = &self.tokenizer.bpe;
        // Encode no more of a long piece than can fit, doubling from about four bytes a token.
        let mut head_len = room.saturating_mul(4).max(64);
        loop {
            let head = &piece[..floor_char_boundary(piece, head_len)];
            let tokens = bpe.encode_via_backtracking(head.as_bytes());
            if tokens.len() > room || head.len() == piece.len() {
                let kept: usize = tokens[..room.min(tokens.len())]
                    .iter()
                    .map(|&token| bpe.token_len(token))
                    .sum();
                return SegmentCut {
                    end: offset + kept,
                    piece_start: None,
                };
            }
            head_len = head_len.saturating_mul(2);
        }
    }
}

/// The character `text` repeats and how many times, if it is one character repeated.
fn one_repeated_char(text: &str) -> Option<(char, usize)> {
    let c = text.chars().next()?;
    let width = c.len_utf8();
    let repeated = text.len() % width == 0
        && text
            .as_bytes()
            .chunks_exact(width)
            .all(|chunk| chunk == &text.as_bytes()[..width]);
    repeated.then(|| (c, text.len() / width))
}

impl fmt::Debug for BpeOpenai {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpeOpenai")
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

impl Tokenizer for BpeOpenai {
    fn count(&self, text: &str) -> usize {
        self.tokenizer
            .split(text)
            .map(|piece| self.count_piece(piece))
            .sum()
    }

    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
        prefix_over(
            self,
            text,
            max_tokens,
            self.tokenizer
                .split(text)
                .map(|piece| (piece, self.count_piece(piece))),
            |&tokens| tokens,
            |offset, piece, _, room| self.cut_piece(offset, piece, room),
        )
    }

    fn count_joined(&self, head: &str, head_tokens: usize, tail: &str) -> usize {
        count_joined_at_last_piece(head, head_tokens, tail, |text| self.count(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o200k() -> Arc<BpeOpenai> {
        Encoding::O200kBase.bpe_openai()
    }

    fn whole_run(c: char, chars: usize) -> usize {
        let run: String = std::iter::repeat_n(c, chars).collect();
        o200k().tokenizer.bpe.count(run.as_bytes())
    }

    #[test]
    fn long_runs_count_as_when_encoded_whole() {
        let tokenizer = o200k();
        for c in [
            ' ', '\t', '\n', 'a', 'x', '\u{3000}', '=', '-', '.', 'é', '日', '🦀', '\0',
        ] {
            for chars in (LONG_RUN..LONG_RUN + 2 * RUN_BLOCK + 1).chain([20_011, 65_536]) {
                assert_eq!(
                    tokenizer.count_run(c, chars),
                    whole_run(c, chars),
                    "{c:?} x {chars}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn any_long_run_counts_as_when_encoded_whole(c in proptest::char::any(), chars in LONG_RUN..12_000usize) {
            proptest::prop_assert_eq!(o200k().count_run(c, chars), whole_run(c, chars));
        }
    }

    #[test]
    fn one_repeated_char_is_found() {
        assert_eq!(one_repeated_char("ééé"), Some(('é', 3)));
        assert_eq!(one_repeated_char("éèé"), None);
        assert_eq!(one_repeated_char("aab"), None);
        assert_eq!(one_repeated_char(""), None);
    }
}
