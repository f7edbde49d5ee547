//! The bpe-openai backend, behind the `bpe-openai` feature.

use std::fmt;
use std::sync::OnceLock;

use super::{
    count_edited_from_last_piece, count_long_run, floor_char_boundary, prefix_over, sum_within,
    Encoding, Prefix, SegmentCut, Tokenizer,
};

/// The bpe-openai backend: the same tokens as tiktoken-rs, in time linear in the text on any
/// input, and a cut that encodes only up to the limit and counts the rest.
pub struct BpeOpenai {
    encoding: Encoding,
    tokenizer: &'static bpe_openai::Tokenizer,
}

impl Encoding {
    /// The process-wide bpe-openai tokenizer of this vocabulary, built on first use.
    pub fn bpe_openai(self) -> &'static BpeOpenai {
        static O200K: OnceLock<BpeOpenai> = OnceLock::new();
        static CL100K: OnceLock<BpeOpenai> = OnceLock::new();
        let (cell, tokenizer): (_, fn() -> &'static bpe_openai::Tokenizer) = match self {
            Encoding::O200kBase => (&O200K, bpe_openai::o200k_base),
            Encoding::Cl100kBase => (&CL100K, bpe_openai::cl100k_base),
        };
        cell.get_or_init(|| BpeOpenai {
            encoding: self,
            tokenizer: tokenizer(),
        })
    }
}

impl BpeOpenai {
    /// The vocabulary this tokenizer encodes with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The tokens of one piece of the pre-tokenizer.
    fn count_piece(&self, piece: &str) -> usize {
        let count = |text: &str| self.tokenizer.bpe.count(text.as_bytes());
        count_long_run(piece, count).unwrap_or_else(|| count(piece))
    }

    /// Cuts the piece at `offset` after at most `room` of its tokens.
    fn cut_piece(&self, offset: usize, piece: &str, room: usize) -> SegmentCut {
        let bpe = &self.tokenizer.bpe;
        // Encode no more of a long piece than can fit: start from four bytes a token, then go
        // by the bytes a token seen so far.
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
            let bytes_a_token = head.len() / tokens.len().max(1) + 1;
            head_len = head_len.max(bytes_a_token.saturating_mul(room + room / 8 + 8));
        }
    }
}

impl fmt::Debug for BpeOpenai {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpeOpenai")
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

impl Tokenizer for BpeOpenai {
    fn last_split(&self, text: &str) -> Option<usize> {
        self.encoding().last_split(text)
    }

    fn count(&self, text: &str) -> usize {
        self.tokenizer
            .split(text)
            .map(|piece| self.count_piece(piece))
            .sum()
    }

    fn count_within(&self, text: &str, max_tokens: usize) -> Option<usize> {
        sum_within(
            self.tokenizer
                .split(text)
                .map(|piece| self.count_piece(piece)),
            max_tokens,
        )
    }

    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
        prefix_over(
            self,
            self.encoding,
            text,
            max_tokens,
            self.tokenizer
                .split(text)
                .map(|piece| (piece, self.count_piece(piece))),
            |&tokens| tokens,
            |offset, piece, _, room| self.cut_piece(offset, piece, room),
        )
    }

    fn count_edited(&self, text: &str, text_tokens: usize, keep: usize, tail: &str) -> usize {
        count_edited_from_last_piece(self.encoding, text, text_tokens, keep, tail, |text| {
            self.count(text)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::segments::{LONG_RUN, RUN_BLOCK, RUN_SUFFIX};
    use super::*;

    fn bpe() -> &'static bpe_openai::byte_pair_encoding::BytePairEncoding {
        &Encoding::O200kBase.bpe_openai().tokenizer.bpe
    }

    fn whole_run(c: char, chars: usize) -> usize {
        let run: String = std::iter::repeat_n(c, chars).collect();
        bpe().count(run.as_bytes())
    }

    fn by_blocks(c: char, chars: usize) -> Option<usize> {
        let run: String = std::iter::repeat_n(c, chars).collect();
        count_long_run(&run, |text| bpe().count(text.as_bytes()))
    }

    #[test]
    fn long_runs_count_as_when_encoded_whole() {
        for c in [
            ' ', '\t', '\n', 'a', 'x', '\u{3000}', '=', '-', '.', 'é', '日', '🦀', '\0',
        ] {
            for chars in (LONG_RUN..LONG_RUN + 2 * RUN_BLOCK + 1).chain([20_011, 65_536]) {
                assert_eq!(
                    by_blocks(c, chars),
                    Some(whole_run(c, chars)),
                    "{c:?} x {chars}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn any_long_run_of_a_non_digit_counts_as_when_encoded_whole(
            c in proptest::strategy::Strategy::prop_filter(proptest::char::any(), "digits split in threes", |c| !c.is_numeric()),
            chars in LONG_RUN..12_000usize,
        ) {
            proptest::prop_assert_eq!(by_blocks(c, chars), Some(whole_run(c, chars)));
        }

        #[test]
        fn a_long_run_and_what_follows_it_count_as_when_encoded_whole(
            c in proptest::sample::select(vec![' ', '\t', '\n', 'a', '\u{3000}', '=', '日', '🦀']),
            chars in LONG_RUN..9_000usize,
            suffix in "[\n\r\t a-z!'.\u{3000}日]{1,5}",
        ) {
            let suffix: String = suffix.chars().skip_while(|&s| s == c).collect();
            proptest::prop_assume!(!suffix.is_empty() && suffix.len() <= RUN_SUFFIX);
            let text = std::iter::repeat_n(c, chars).collect::<String>() + &suffix;
            let count = |text: &str| bpe().count(text.as_bytes());
            proptest::prop_assert_eq!(count_long_run(&text, count), Some(count(&text)), "{:?} x {} + {:?}", c, chars, suffix);
        }
    }

    #[test]
    fn a_run_followed_by_more_than_a_little_is_not_a_long_run() {
        let run = "\t".repeat(LONG_RUN);
        assert!(count_long_run(&(run.clone() + &"x".repeat(RUN_SUFFIX)), |_| 0).is_some());
        assert!(count_long_run(&(run.clone() + &"x".repeat(RUN_SUFFIX + 1)), |_| 0).is_none());
        assert!(
            count_long_run(&(run[1..].to_owned() + "\n"), |_| 0).is_none(),
            "too short"
        );
        assert!(
            count_long_run(&("1".repeat(LONG_RUN)), |_| 0).is_none(),
            "digits"
        );
        assert!(count_long_run(&format!("{run}\n{run}"), |_| 0).is_none());
    }
}
