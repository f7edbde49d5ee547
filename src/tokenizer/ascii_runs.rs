//! The runs of one class of ASCII characters, read eight bytes at a time: each byte of a machine
//! word is classified at once, by arithmetic that never carries from one byte into the next, and
//! the run's end is the first byte outside the class, found by counting trailing zeros. A word of
//! prose or a path's name is read without a branch per byte, and so without the mispredicted
//! branch at its end that a byte-by-byte loop pays for every piece. (A run of punctuation, mostly
//! one to three bytes, is cheaper byte by byte, and is read so by the pre-tokenizer.)
//!
//! Portable: plain `u64` arithmetic, the same on every target.

/// A class of ASCII characters that a piece of the pre-tokenizers runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AsciiClass {
    /// `A` to `Z`.
    Upper,
    /// `a` to `z`.
    Lower,
    /// `A` to `Z` and `a` to `z`.
    Letter,
    /// `\t` to `\r` and ` `: `\s` in ASCII.
    Space,
}

/// A byte of 1 in every byte of a word.
const ONES: u64 = u64::from_le_bytes([1; 8]);
/// The high bit of every byte.
const HIGH: u64 = 0x80 * ONES;

/// The high bit of each byte of `word` that is ASCII and in `low..high` (`high` at most 0x80).
#[inline(always)]
fn within(word: u64, low: u8, high: u8) -> u64 {
    let seven = word & !HIGH;
    // A byte's seven bits plus `0x80 - low` reach its high bit iff they are at least `low`;
    // `0x7F + high` less them keeps it iff they are below `high`. Neither passes 0xFF or
    // goes below 0, so no byte carries into or borrows from its neighbour.
    let at_least_low = seven + u64::from(0x80 - low) * ONES;
    let below_high = (0x7F + u64::from(high)) * ONES - seven;
    at_least_low & below_high & !word & HIGH
}

/// The high bit of each byte of `word` of `class`.
#[inline(always)]
fn members(word: u64, class: AsciiClass) -> u64 {
    match class {
        AsciiClass::Upper => within(word, b'A', b'Z' + 1),
        AsciiClass::Lower => within(word, b'a', b'z' + 1),
        AsciiClass::Letter => within(word | (0x20 * ONES), b'a', b'z' + 1),
        AsciiClass::Space => within(word, b'\t', b'\r' + 1) | within(word, b' ', b' ' + 1),
    }
}

/// The eight bytes of `bytes` from `at` (at most `bytes.len()`) as a word, those past the end
/// read as 0x80, which is in no class and so ends a run.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    match bytes[at..].first_chunk::<8>() {
        Some(&eight) => u64::from_le_bytes(eight),
        None => {
            let rest = &bytes[at..];
            let mut eight = [0x80; 8];
            eight[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(eight)
        }
    }
}

/// The end of the run of bytes of `class` in `bytes` from `at` (at most `bytes.len()`): the first
/// byte that is not of it, or the end.
#[inline(always)]
pub(super) fn end(bytes: &[u8], mut at: usize, class: AsciiClass) -> usize {
    loop {
        let outside = !members(word_at(bytes, at), class) & HIGH;
        if outside != 0 {
            return at + (outside.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
}

/// The end of a run of upper-case letters and then one of lower-case letters from `at`, either
/// empty: both read from one word where they end within it, as a word of prose or a path's name
/// does.
#[inline(always)]
pub(super) fn cased_word_end(bytes: &[u8], at: usize) -> usize {
    let word = word_at(bytes, at);
    let upper = (!members(word, AsciiClass::Upper) & HIGH).trailing_zeros();
    if upper < 64 {
        // The first byte from the upper-case run's end that is not lower case.
        let lower = !members(word, AsciiClass::Lower) & HIGH & (u64::MAX << upper);
        if lower != 0 {
            return at + (lower.trailing_zeros() / 8) as usize;
        }
    }
    end(bytes, end(bytes, at, AsciiClass::Upper), AsciiClass::Lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLASSES: [AsciiClass; 4] = [
        AsciiClass::Upper,
        AsciiClass::Lower,
        AsciiClass::Letter,
        AsciiClass::Space,
    ];

    /// Whether `byte` is of `class`, one byte at a time, by the standard library.
    fn is(byte: u8, class: AsciiClass) -> bool {
        match class {
            AsciiClass::Upper => byte.is_ascii_uppercase(),
            AsciiClass::Lower => byte.is_ascii_lowercase(),
            AsciiClass::Letter => byte.is_ascii_alphabetic(),
            // `is_ascii_whitespace` leaves out `\x0B`, which `\s` takes.
            AsciiClass::Space => matches!(byte, b'\t'..=b'\r' | b' '),
        }
    }

    /// The end of the run, one byte at a time.
    fn end_byte_by_byte(bytes: &[u8], at: usize, class: AsciiClass) -> usize {
        at + bytes[at..].iter().take_while(|&&b| is(b, class)).count()
    }

    #[test]
    fn every_byte_in_every_position_of_a_word_is_classified_alone() {
        for class in CLASSES {
            for byte in 0..=u8::MAX {
                for position in 0..8 {
                    // The byte among neighbours of every kind: none may carry into it.
                    for fill in [0x00, 0x7F, 0x80, 0xFF, b'a', b'Z', b' '] {
                        let mut eight = [fill; 8];
                        eight[position] = byte;
                        let high = members(u64::from_le_bytes(eight), class).to_le_bytes();
                        assert_eq!(
                            high[position] == 0x80,
                            is(byte, class),
                            "{class:?} {byte:#04x} at {position} among {fill:#04x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn runs_end_at_the_end_of_the_text() {
        assert_eq!(cased_word_end(b"", 0), 0);
        assert_eq!(cased_word_end(b"ABCDEFGHIJ", 0), 10);
        assert_eq!(cased_word_end(b"Abcdefghijklmnop.", 0), 16);
        assert_eq!(cased_word_end(b"ABCDEFGHijklmnop.", 0), 16);
        assert_eq!(end(b"", 0, AsciiClass::Letter), 0);
        assert_eq!(end(b"abc", 3, AsciiClass::Letter), 3);
        assert_eq!(end(b"abcdefghijklmnopq", 0, AsciiClass::Lower), 17);
        assert_eq!(end(b"abcdefghIjklmnopq", 1, AsciiClass::Lower), 8);
    }

    proptest::proptest! {
        #[test]
        fn runs_end_where_a_byte_by_byte_read_ends_them(
            runs in proptest::collection::vec(
                (
                    proptest::prop_oneof![
                        proptest::num::u8::ANY,
                        proptest::sample::select(b"aZ \t\x0b!/0\x80".to_vec()),
                    ],
                    1..20usize,
                ),
                0..6,
            ),
            at in 0..60usize,
        ) {
            let bytes: Vec<u8> = runs.iter().flat_map(|&(byte, n)| vec![byte; n]).collect();
            let at = at.min(bytes.len());
            let upper_end = end_byte_by_byte(&bytes, at, AsciiClass::Upper);
            proptest::prop_assert_eq!(
                cased_word_end(&bytes, at),
                end_byte_by_byte(&bytes, upper_end, AsciiClass::Lower)
            );
            for class in CLASSES {
                proptest::prop_assert_eq!(
                    end(&bytes, at, class),
                    end_byte_by_byte(&bytes, at, class),
                    "{:?}", class
                );
            }
        }
    }
}
