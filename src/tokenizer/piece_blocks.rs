//! The piece starts of OpenAI's pre-tokenizers in a block of up to 64 bytes of ASCII, all at
//! once: each rule of the pattern is a few operations on the block's [`ByteClasses`], and only
//! white-space runs, a punctuation run's trailing line breaks, contractions and numbers of four
//! digits or more take a step each. A text's pieces are read a block at a time from a piece
//! start, which makes the block read as if the text began there.
//!
//! For ASCII, the patterns' alternatives (in [`pre_tokenizer`](super::pre_tokenizer)) come down
//! to these rules:
//!
//! - a run of letters is a word; `o200k_base` splits it before each capital that follows a
//!   small letter (`[A-Z]*[a-z]+` or `[A-Z]+[a-z]*`), and gives it a contraction (`'s`, `'t`,
//!   `'re`, `'ve`, `'m`, `'ll`, `'d`, in any case) right after it; `cl100k_base` takes a
//!   contraction as a piece of its own wherever a piece starts with it;
//! - a run of digits is split every three from its first (`\p{N}{1,3}`);
//! - a run of punctuation is one piece with the line breaks (and in `o200k_base` slashes) that
//!   follow it (` ?[^\s\p{L}\p{N}]+[\r\n/]*`), and with a space before it;
//! - a piece's first character, if it is white space but a line break, or punctuation, takes
//!   the letters after it as its word;
//! - a run of white space ends its first piece after its last line break (`\s*[\r\n]+`), and
//!   gives its last character to what follows (`\s+(?!\S)`), but at the end of the text, where
//!   `cl100k_base` takes it whole (`\s++$`).

use super::byte_classes::{ByteClasses, WIDTH};
use super::Encoding;

/// The piece starts of a block that its bytes decide, as bits from its first byte: a start
/// that may depend on the bytes past the block is left to the block read from the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Starts {
    /// The sure starts after the block's first byte.
    pub(super) bits: u64,
    /// Whether the text ends within the block, so that the piece of the last start ends there;
    /// else that piece may run on past what the block is sure of.
    pub(super) ends_text: bool,
}

/// The bits below `n`.
#[inline(always)]
fn below(n: u32) -> u64 {
    if n >= u64::BITS {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// The end of the run of `class` from bit `from`, at most `len`.
#[inline(always)]
fn run_end(class: u64, from: u32, len: u32) -> u32 {
    (from + (!class >> from).trailing_zeros()).min(len)
}

/// The piece starts of `encoding` in the first (up to) 64 bytes of `text`, which a piece
/// starts: read up to its first byte past ASCII.
pub(super) fn starts(encoding: Encoding, text: &[u8]) -> Starts {
    let block = Block::of(encoding, text);
    let mut starts = 1 | block.words() | block.numbers();
    let trailing = block.trailing(&mut starts);
    let punctuation_starts = block.punctuation(trailing, &mut starts);
    block.white_space(trailing, &mut starts);
    let contractions = match encoding {
        Encoding::O200kBase => block.after_words(),
        Encoding::Cl100kBase => punctuation_starts,
    };
    let sure = block.contractions(text, contractions, &mut starts);
    Starts {
        bits: starts & below(sure) & !1,
        ends_text: block.ends_text && sure == block.len,
    }
}

/// A block's classes, of its ASCII bytes alone.
struct Block {
    encoding: Encoding,
    classes: ByteClasses,
    letter: u64,
    /// The ASCII bytes read, and whether the text ends after them.
    len: u32,
    ends_text: bool,
}

impl Block {
    fn of(encoding: Encoding, text: &[u8]) -> Block {
        let classes = ByteClasses::of(text);
        let read = text.len().min(WIDTH) as u32;
        let len = classes.past_ascii.trailing_zeros().min(read);
        // What follows the first byte past ASCII is read character by character.
        let classes = classes.within(below(len));
        Block {
            encoding,
            letter: classes.upper | classes.lower,
            classes,
            len,
            ends_text: len as usize == text.len(),
        }
    }

    /// The bits of the block's bytes.
    fn known(&self) -> u64 {
        below(self.len)
    }

    /// Where the letters after something else start a word, where (in `o200k_base`) a capital
    /// after a small letter does, and where something else after a word does.
    fn words(&self) -> u64 {
        let (letter, ByteClasses { upper, lower, .. }) = (self.letter, self.classes);
        let capitals = match self.encoding {
            Encoding::O200kBase => upper & (lower << 1),
            Encoding::Cl100kBase => 0,
        };
        letter & !(letter << 1) | capitals | self.after_words()
    }

    /// The bytes right after a word.
    fn after_words(&self) -> u64 {
        !self.letter & (self.letter << 1) & self.known()
    }

    /// Where numbers start, three digits a piece, and where something else after one does.
    fn numbers(&self) -> u64 {
        let digit = self.classes.digit;
        let first_digits = digit & !(digit << 1);
        let mut starts = first_digits | !digit & (digit << 1) & self.known();
        let fourth = digit & (digit << 1) & (digit << 2) & (digit << 3);
        let mut third = first_digits;
        loop {
            third = (third << 3) & fourth;
            if third == 0 {
                return starts;
            }
            starts |= third;
        }
    }

    /// The line breaks after punctuation, and in `o200k_base` slashes (`[\r\n/]*`), which end
    /// its piece: their bits, with a start after each run of them.
    fn trailing(&self, starts: &mut u64) -> u64 {
        let ByteClasses {
            newline,
            slash,
            punctuation,
            ..
        } = self.classes;
        let class = match self.encoding {
            Encoding::O200kBase => newline | slash,
            Encoding::Cl100kBase => newline,
        };
        let mut trailing = 0;
        let mut seeds = newline & (punctuation << 1);
        while seeds != 0 {
            let from = seeds.trailing_zeros();
            let end = run_end(class, from, self.len);
            trailing |= below(end) & !below(from);
            *starts |= 1u64.checked_shl(end).unwrap_or(0);
            seeds &= !below(end);
        }
        trailing
    }

    /// Punctuation but the `trailing`: a run starts a piece, but after a space, which starts
    /// it instead; the run ends it, but before a line break, which the trailing takes. A
    /// piece's first character that is white space but a line break, or punctuation, is the
    /// first of the word after it. The punctuation that starts a piece.
    fn punctuation(&self, trailing: u64, starts: &mut u64) -> u64 {
        let ByteClasses {
            space,
            blank,
            newline,
            punctuation,
            ..
        } = self.classes;
        let punctuation = punctuation & !trailing;
        let punctuation_starts = punctuation & !(punctuation << 1) & !(blank << 1);
        *starts |= punctuation_starts | !punctuation & (punctuation << 1) & self.known() & !newline;
        let word_firsts = space & !newline | punctuation_starts;
        *starts &= !(self.letter & (word_firsts << 1));
        punctuation_starts
    }

    /// White space but the `trailing`: each run starts a piece; a run of two or more
    /// characters may start more, found a run at a time, but one that ends the text in
    /// `cl100k_base`.
    fn white_space(&self, trailing: u64, starts: &mut u64) {
        let (white, newline, len) = (
            self.classes.space & !trailing,
            self.classes.newline,
            self.len,
        );
        let white_starts = white & !(white << 1);
        *starts |= white_starts;
        let mut runs = white_starts & (white >> 1);
        while runs != 0 {
            let from = runs.trailing_zeros();
            runs &= runs - 1;
            let end = run_end(white, from, len);
            let ends_text = self.ends_text && end == len;
            if end >= len && !self.ends_text || ends_text && self.encoding == Encoding::Cl100kBase {
                // Where it ends, and so its other starts, are past the block; or it is one
                // piece.
                continue;
            }
            let breaks = newline & below(end) & !below(from);
            let after_breaks = if breaks == 0 {
                from
            } else {
                u64::BITS - breaks.leading_zeros()
            };
            if after_breaks < end {
                *starts |= 1 << after_breaks;
            }
            if end - after_breaks >= 2 && !ends_text {
                *starts |= 1 << (end - 1);
            }
        }
    }

    /// The contractions at the `'`s among `at`, each the end of a word (`o200k_base`) or a
    /// piece (`cl100k_base`), which the next piece starts after. The bits the starts are sure
    /// of: those before a `'` too near the block's end to tell.
    fn contractions(&self, text: &[u8], at: u64, starts: &mut u64) -> u32 {
        let mut quotes = at & self.classes.quote;
        let mut contraction_end = None;
        while quotes != 0 {
            let at = quotes.trailing_zeros();
            quotes &= quotes - 1;
            if at + 3 > self.len && !self.ends_text {
                return at;
            }
            if contraction_end == Some(at) && self.encoding == Encoding::O200kBase {
                // It starts the word after the contraction, which ends no word.
                continue;
            }
            if let Some(contraction) = contraction(&text[at as usize..self.len as usize]) {
                let end = at + contraction;
                contraction_end = Some(end);
                // In `o200k_base` the word's; in `cl100k_base` a piece of its own.
                let first = match self.encoding {
                    Encoding::O200kBase => at,
                    Encoding::Cl100kBase => at + 1,
                };
                *starts &= !(below(end) & !below(first));
                *starts |= 1u64.checked_shl(end).unwrap_or(0);
            }
        }
        self.len
    }
}

/// The length of the contraction `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at the start of `text`, a `'`
/// and ASCII after it.
fn contraction(text: &[u8]) -> Option<u32> {
    let folded = |at: usize| text.get(at).map(u8::to_ascii_lowercase);
    match (folded(1)?, folded(2)) {
        (b's' | b't' | b'm' | b'd', _) => Some(2),
        (b'r' | b'v', Some(b'e')) | (b'l', Some(b'l')) => Some(3),
        _ => None,
    }
}
