//! Finding a prefix within a budget from a text's segments, each counted on its own, and
//! counting long runs of one character by their blocks.

use super::{floor_char_boundary, Encoding, Mark, Prefix, Tokenizer};

/// Where a backend cuts the segment that crosses the budget.
pub(super) struct SegmentCut {
    /// Where the kept text ends in the whole text, maybe inside a character.
    pub(super) end: usize,
    /// A piece start inside the segment, before `end`, with the segment's tokens before it, if
    /// the backend knows one.
    pub(super) piece_start: Option<Mark>,
}

/// The prefix of `text` within `max_tokens`, from its consecutive `segments`, each with its
/// tokens (anything `len` can count) and each split from the next where the pre-tokenizer splits.
/// `cut` says where to cut the segment that crosses the budget, given its offset in `text`, the
/// segment, its tokens and the room left.
///
/// The kept text is then counted again from the last piece start before the cut: cutting can
/// change how the last pieces split (a white-space run that ended before a word can run on to the
/// cut), but never anything before a piece start.
pub(super) fn prefix_over<'a, T>(
    tokenizer: &impl Tokenizer,
    encoding: Encoding,
    text: &'a str,
    max_tokens: usize,
    segments: impl Iterator<Item = (&'a str, T)>,
    len: impl Fn(&T) -> usize,
    cut: impl FnOnce(usize, &'a str, T, usize) -> SegmentCut,
) -> Prefix {
    let (mut total_tokens, mut offset) = (0, 0);
    let mut last_piece_start = Mark { at: 0, tokens: 0 };
    let mut cut = Some(cut);
    let mut kept = None;
    for (segment, tokens) in segments {
        let segment_tokens = len(&tokens);
        if encoding.starts_piece(text, offset) {
            last_piece_start = Mark {
                at: offset,
                tokens: total_tokens,
            };
        }
        if total_tokens + segment_tokens > max_tokens {
            if let Some(cut) = cut.take() {
                let SegmentCut { end, piece_start } =
                    cut(offset, segment, tokens, max_tokens - total_tokens);
                let start = piece_start.map_or(last_piece_start, |start| Mark {
                    at: start.at,
                    tokens: total_tokens + start.tokens,
                });
                kept = Some(count_from(tokenizer, text, start, end, max_tokens));
            }
        }
        total_tokens += segment_tokens;
        offset += segment.len();
    }
    Prefix::ending_at(kept, text, total_tokens)
}

/// The end of the kept text `text[..end]` and its tokens, counted on from `start`, a piece
/// start; cut again if it is over `max_tokens`.
fn count_from(
    tokenizer: &impl Tokenizer,
    text: &str,
    start: Mark,
    end: usize,
    max_tokens: usize,
) -> Mark {
    let rest = &text[start.at..floor_char_boundary(text, end)];
    match tokenizer.count(rest) {
        tokens if start.tokens + tokens <= max_tokens => Mark {
            at: start.at + rest.len(),
            tokens: start.tokens + tokens,
        },
        // Re-encoding a cut piece can give more tokens than the prefix it was cut from.
        _ => {
            let prefix = tokenizer.prefix(rest, max_tokens - start.tokens);
            Mark {
                at: start.at + prefix.len,
                tokens: start.tokens + prefix.tokens,
            }
        }
    }
}

/// A text of one character repeated this many times or more is counted by [`count_long_run`].
pub(super) const LONG_RUN: usize = 4096;
/// BPE merges such a run into blocks of up to this many characters from its start.
pub(super) const RUN_BLOCK: usize = 128;
/// How far from its end such a run may merge differently from its middle, in characters.
const RUN_TAIL: usize = 1024;
/// The most bytes of other characters that may follow such a run in the same text: a line break
/// after a run of tabs, a letter after a run of spaces.
pub(super) const RUN_SUFFIX: usize = 16;

/// A text that is one long run of one character, and at most [`RUN_SUFFIX`] bytes of others
/// after it, as BPE merges it: so many blocks of [`RUN_BLOCK`] of it, then a tail, which ends
/// with those others.
///
/// BPE merges a run of one repeated character pairwise from its start, into blocks of a power of
/// two of it up to 128, and differently only near its end, where what follows it may merge with
/// its last characters first. So the run is so many blocks of 128 and a tail of 1024 to 1151 of
/// it, then what follows, which holds whatever the end changes. Encoding the whole run instead
/// costs tiktoken-rs 0.3 s a MB or more, and bpe-openai, or the linear BPE over white-space
/// tokens, up to ten times a listing of the same size (tabs make their encoder backtrack at every
/// token). A run of digits is many pieces of up to three, so it is left alone.
pub(super) struct LongRun<'a> {
    c: char,
    /// How many blocks of [`RUN_BLOCK`] characters come before the tail.
    pub(super) blocks: usize,
    /// The characters of the run in the tail.
    tail: usize,
    /// What follows the run.
    suffix: &'a str,
}

impl<'a> LongRun<'a> {
    /// `text` as a long run, if it is one: [`LONG_RUN`] characters or more, all one that is not
    /// a digit, then at most [`RUN_SUFFIX`] bytes that do not start with it.
    pub(super) fn of(text: &'a str) -> Option<Self> {
        let c = text.chars().next().filter(|c| !c.is_numeric())?;
        let width = c.len_utf8();
        let bytes = text.as_bytes();
        // The run reaches at least this far, a whole number of characters from its start...
        let least = bytes.len().saturating_sub(RUN_SUFFIX) / width * width;
        if least < width {
            return None;
        }
        // ...where the text equals itself shifted by one character, compared in one pass.
        if bytes[width..least] != bytes[..least - width] {
            return None;
        }
        let mut end = least;
        while bytes[end..].starts_with(&bytes[..width]) {
            end += width;
        }
        let chars = end / width;
        if chars < LONG_RUN || bytes.len() - end > RUN_SUFFIX {
            return None;
        }
        let blocks = (chars - RUN_TAIL) / RUN_BLOCK;
        Some(LongRun {
            c,
            blocks,
            tail: chars - blocks * RUN_BLOCK,
            // `end` follows a whole character.
            suffix: &text[end..],
        })
    }

    /// One block.
    pub(super) fn block(&self) -> String {
        std::iter::repeat_n(self.c, RUN_BLOCK).collect()
    }

    /// The tail: the run's last characters, and what follows it.
    pub(super) fn tail(&self) -> String {
        let mut tail: String = std::iter::repeat_n(self.c, self.tail).collect();
        tail.push_str(self.suffix);
        tail
    }
}

/// The tokens of `text`, if it is one long run of one character (and what little follows it),
/// from the tokens of two short texts (see [`LongRun`]).
pub(super) fn count_long_run(text: &str, count: impl Fn(&str) -> usize) -> Option<usize> {
    let run = LongRun::of(text)?;
    Some(run.blocks * count(&run.block()) + count(&run.tail()))
}

/// The sum of `tokens` if it is at most `max_tokens`, else `None`, stopping at the first part
/// that goes over.
pub(super) fn sum_within(
    mut tokens: impl Iterator<Item = usize>,
    max_tokens: usize,
) -> Option<usize> {
    tokens.try_fold(0, |sum, tokens| {
        Some(sum + tokens).filter(|&sum| sum <= max_tokens)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_long_runs_of_one_non_digit_are_counted_by_blocks() {
        let count = |text: &str| text.len();
        assert_eq!(
            count_long_run(&"é".repeat(LONG_RUN), count),
            Some(2 * LONG_RUN)
        );
        assert_eq!(count_long_run(&"é".repeat(LONG_RUN - 1), count), None);
        // What little follows the run goes with its tail; more is no long run.
        assert_eq!(
            count_long_run(&format!("{}è", "é".repeat(LONG_RUN)), count),
            Some(2 * LONG_RUN + 2)
        );
        assert_eq!(
            count_long_run(&format!("{}{}", "é".repeat(LONG_RUN), "è".repeat(9)), count),
            None
        );
        assert_eq!(count_long_run(&"7".repeat(LONG_RUN), count), None);
        assert_eq!(count_long_run("", count), None);
    }
}
