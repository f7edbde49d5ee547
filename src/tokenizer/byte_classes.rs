//! The classes of up to 64 bytes of a text at once, as bit masks: bit `k` of each mask says
//! whether the byte `k` places from the block's start is of the class. The pre-tokenizers find
//! every piece start of a block of ASCII from these masks at once
//! ([`piece_blocks`](super::piece_blocks)).
//!
//! On x86-64, by SSE2, which every such CPU has, through [`safe_arch`]'s safe wrappers: four
//! 16-byte compares a class. Elsewhere, byte by byte: the same masks, slower.

/// The bytes of a block.
pub(super) const WIDTH: usize = 64;

/// The classes of the bytes of a block: ASCII classes, and the bytes past ASCII. A place past
/// the text's end is in none.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct ByteClasses {
    /// `A` to `Z`.
    pub(super) upper: u64,
    /// `a` to `z`.
    pub(super) lower: u64,
    /// `0` to `9`.
    pub(super) digit: u64,
    /// `\t` to `\r` and ` `: `\s` in ASCII.
    pub(super) space: u64,
    /// ` ` alone.
    pub(super) blank: u64,
    /// `\r` and `\n`.
    pub(super) newline: u64,
    /// `/`.
    pub(super) slash: u64,
    /// `'`.
    pub(super) quote: u64,
    /// The rest of ASCII: `[^\s\p{L}\p{N}]` in ASCII.
    pub(super) punctuation: u64,
    /// A byte of 0x80 or more.
    pub(super) past_ascii: u64,
}

impl ByteClasses {
    /// The classes of the first (up to) [`WIDTH`] bytes of `bytes`.
    #[inline]
    pub(super) fn of(bytes: &[u8]) -> ByteClasses {
        match bytes.first_chunk::<WIDTH>() {
            Some(block) => Self::of_block(block),
            None => {
                let mut block = [0; WIDTH];
                block[..bytes.len()].copy_from_slice(bytes);
                // The zeros past the end are in no class but punctuation.
                Self::of_block(&block).within((1u64 << bytes.len()) - 1)
            }
        }
    }

    /// These classes of the bytes of `bits` alone.
    #[inline(always)]
    pub(super) fn within(self, bits: u64) -> ByteClasses {
        ByteClasses {
            upper: self.upper & bits,
            lower: self.lower & bits,
            digit: self.digit & bits,
            space: self.space & bits,
            blank: self.blank & bits,
            newline: self.newline & bits,
            slash: self.slash & bits,
            quote: self.quote & bits,
            punctuation: self.punctuation & bits,
            past_ascii: self.past_ascii & bits,
        }
    }

    /// These classes with their punctuation: the ASCII bytes in no other class.
    #[inline(always)]
    fn with_punctuation(self) -> ByteClasses {
        ByteClasses {
            punctuation: !(self.upper | self.lower | self.digit | self.space | self.past_ascii),
            ..self
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn of_block(block: &[u8; WIDTH]) -> ByteClasses {
        use safe_arch::{
            add_i8_m128i, bitor_m128i, cmp_eq_mask_i8_m128i, cmp_lt_mask_i8_m128i,
            load_unaligned_m128i, m128i, move_mask_i8_m128i, set_splat_i8_m128i,
        };
        let quarter = |at: usize| -> m128i {
            let sixteen: &[u8; 16] = block[at..at + 16].try_into().expect("16 bytes");
            load_unaligned_m128i(sixteen)
        };
        let quarters = [quarter(0), quarter(16), quarter(32), quarter(48)];
        let mask = |class: &dyn Fn(m128i) -> m128i| -> u64 {
            quarters.iter().enumerate().fold(0, |mask, (at, &quarter)| {
                let bits = move_mask_i8_m128i(class(quarter)) as u16;
                mask | u64::from(bits) << (16 * at)
            })
        };
        // `low..=high`: the byte less `low`, wrapping, is below the range's width; compared
        // as signed bytes, both moved down by 0x80.
        let within = |low: u8, high: u8| {
            let moved = set_splat_i8_m128i(0x80u8.wrapping_sub(low) as i8);
            let width = set_splat_i8_m128i(0x80u8.wrapping_add(high - low + 1) as i8);
            move |bytes: m128i| cmp_lt_mask_i8_m128i(add_i8_m128i(bytes, moved), width)
        };
        let is = |byte: u8| {
            let byte = set_splat_i8_m128i(byte as i8);
            move |bytes: m128i| cmp_eq_mask_i8_m128i(bytes, byte)
        };
        let (blank, carriage, line_feed) = (is(b' '), is(b'\r'), is(b'\n'));
        let controls = within(b'\t', b'\r');
        ByteClasses {
            upper: mask(&within(b'A', b'Z')),
            lower: mask(&within(b'a', b'z')),
            digit: mask(&within(b'0', b'9')),
            space: mask(&|bytes| bitor_m128i(controls(bytes), blank(bytes))),
            blank: mask(&blank),
            newline: mask(&|bytes| bitor_m128i(carriage(bytes), line_feed(bytes))),
            slash: mask(&is(b'/')),
            quote: mask(&is(b'\'')),
            past_ascii: mask(&|bytes| bytes),
            punctuation: 0,
        }
        .with_punctuation()
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn of_block(block: &[u8; WIDTH]) -> ByteClasses {
        Self::byte_by_byte(block)
    }

    /// The classes of `block`, one byte at a time, by the standard library.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn byte_by_byte(block: &[u8; WIDTH]) -> ByteClasses {
        let mut classes = ByteClasses::default();
        for (k, &byte) in block.iter().enumerate() {
            let bit = 1u64 << k;
            let set = |class: &mut u64, is: bool| {
                if is {
                    *class |= bit;
                }
            };
            set(&mut classes.upper, byte.is_ascii_uppercase());
            set(&mut classes.lower, byte.is_ascii_lowercase());
            set(&mut classes.digit, byte.is_ascii_digit());
            // `is_ascii_whitespace` leaves out `\x0B`, which `\s` takes.
            set(&mut classes.space, matches!(byte, b'\t'..=b'\r' | b' '));
            set(&mut classes.blank, byte == b' ');
            set(&mut classes.newline, matches!(byte, b'\r' | b'\n'));
            set(&mut classes.slash, byte == b'/');
            set(&mut classes.quote, byte == b'\'');
            set(&mut classes.past_ascii, !byte.is_ascii());
        }
        classes.with_punctuation()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes of `bytes`, one byte at a time.
    fn byte_by_byte(bytes: &[u8]) -> ByteClasses {
        let mut block = [0; WIDTH];
        let len = bytes.len().min(WIDTH);
        block[..len].copy_from_slice(&bytes[..len]);
        let in_text = if len == WIDTH {
            u64::MAX
        } else {
            (1 << len) - 1
        };
        ByteClasses::byte_by_byte(&block).within(in_text)
    }

    #[test]
    fn every_byte_in_every_place_is_classified_alone() {
        for byte in 0..=u8::MAX {
            for place in [0, 1, 15, 16, 31, 32, 47, 48, 62, 63] {
                for fill in [0x00, 0x7F, 0x80, 0xFF, b'a', b'Z', b' ', b'\n', b'/'] {
                    let mut bytes = [fill; WIDTH];
                    bytes[place] = byte;
                    assert_eq!(
                        ByteClasses::of(&bytes),
                        byte_by_byte(&bytes),
                        "{byte:#04x} at {place} among {fill:#04x}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_short_text_has_no_class_past_its_end() {
        let text = b"Ab1 \n/.'\x80";
        for end in 0..=text.len() {
            let classes = ByteClasses::of(&text[..end]);
            assert_eq!(classes, byte_by_byte(&text[..end]), "{end} bytes");
            let all = classes.upper
                | classes.lower
                | classes.digit
                | classes.space
                | classes.punctuation
                | classes.past_ascii;
            assert_eq!(all, (1 << end) - 1, "{end} bytes");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_are_classified_as_byte_by_byte(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..100),
        ) {
            proptest::prop_assert_eq!(ByteClasses::of(&bytes), byte_by_byte(&bytes));
        }
    }
}
