//! The tokens of the short pieces a thread met last, kept from one text to the next: pieces of
//! fewer than 8 bytes but the tokens of one or two bytes, which real text repeats (prose's
//! ` which`, a base64 text's `xQz`, a Japanese word of two characters, a listing's `3.12`), one
//! token or more, and which [`piece_cache`] would hold in slots of 96 bytes. A piece that is one
//! token is found here in a table of 256 KB that stays in the CPU's caches, where the
//! vocabulary's table of short tokens is 4 MB.
//!
//! A piece, its vocabulary and its number of tokens make one word ([`Key`]), so that a look-up
//! reads one cache line: the eight words of the set its hash picks. A piece is only ever
//! answered by a word that holds exactly its bytes, its length and its vocabulary. [`SLOTS`]
//! pieces, 768 KB for each thread that encodes: 256 KB of words, and 512 KB of tokens, which
//! only [`Slots::encode`] writes and reads, and allocates on its first call, so that a thread that only
//! counts has the words alone; eight times as many, 2 MB of words and 4 MB of tokens, from the
//! text after the one in which it missed more pieces than it holds ([`cache_growth`]). A new
//! piece takes an empty slot of its set, else the one its hash picks; a piece found moves one
//! slot ahead in its set, so that the pieces met most are found at a set's first word, not
//! after those another text left there; a zero word marks a slot empty, so the words need no
//! other start than zeroed memory.
//!
//! Grown, the words are more than a core's caches hold, and a look-up of a piece seldom met
//! waits on memory. A thread that counts base64 then takes its pieces a run at a time, each key
//! read from the text in one word ([`Slots::key_at`]) and its set fetched ([`Slots::fetch`])
//! before the first is looked up, so that the waits overlap; its pieces of one or two bytes are
//! counted from the vocabulary's table of them, and take no slot.
//!
//! [`piece_cache`]: super::piece_cache
//! [`cache_growth`]: super::cache_growth

use std::cell::RefCell;

use tiktoken_rs::Rank;

use super::cache_growth::{Growth, GROWN};
use super::ranks::{packed, packed_at};
use super::Encoding;

/// Pieces of fewer than this many bytes are kept here.
pub(super) const SHORT: usize = 8;

/// The slots a piece may take: those of its set, one cache line of words.
const WAYS: usize = 8;
/// A thread's table has `1 << SET_BITS` sets, and [`GROWN`] times as many once it grows.
const SET_BITS: u32 = 12;
const SLOTS: usize = (1 << SET_BITS) * WAYS;
const GROWN_SET_BITS: u32 = SET_BITS + GROWN.ilog2();

/// The tokens kept of a piece of up to this many; of a piece of more, its count alone.
const TOKENS_KEPT: usize = 4;

/// A piece's bytes and length ([`packed`]: bits 0 to 58), its vocabulary (bit 59), its number of
/// tokens (bits 60 to 62: a piece of 7 bytes has at most 7) and whether its tokens are kept (bit
/// 63).
type Key = u64;
const VOCABULARY: u32 = 59;
const COUNT: u32 = 60;
const KEPT: Key = 1 << 63;
/// The bits that say which piece a word holds.
const PIECE: Key = (1 << COUNT) - 1;

// The vocabulary takes one bit.
const _: () = assert!((Encoding::Cl100kBase as u8) < 2 && (Encoding::O200kBase as u8) < 2);

/// The words of a set, in one cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Set([Key; WAYS]);

/// A thread's slots, by set: a look-up reads its set's words, then, to encode, one slot's tokens.
pub(super) struct Slots {
    keys: Box<[Set]>,
    /// The number of sets is `1 << set_bits`.
    set_bits: u32,
    growth: Growth,
    /// By slot; empty until the thread first encodes.
    tokens: Vec<[Rank; TOKENS_KEPT]>,
    /// Where a merge pushes a piece's tokens while the slots are borrowed.
    merged: Vec<Rank>,
}

impl Slots {
    fn new() -> Self {
        Slots::of(SET_BITS)
    }

    fn of(set_bits: u32) -> Self {
        Slots {
            keys: vec![Set([0; WAYS]); 1 << set_bits].into_boxed_slice(),
            set_bits,
            growth: Growth::default(),
            tokens: Vec::new(),
            merged: Vec::with_capacity(SHORT),
        }
    }

    /// Grows the slots if they are due to ([`cache_growth`]), each piece and its count taken
    /// into the grown slots; its tokens are not, and are merged again when it is next encoded.
    fn grow_if_due(&mut self) {
        if self.slots() != SLOTS || !self.growth.due(SLOTS) {
            return;
        }
        let mut grown = Slots::of(GROWN_SET_BITS);
        for &word in self
            .keys
            .iter()
            .flat_map(|set| &set.0)
            .filter(|&&word| word != 0)
        {
            let set = &mut grown.keys[set_of(word & PIECE, GROWN_SET_BITS)].0;
            if let Some(way) = set.iter().position(|&held| held == 0) {
                set[way] = word & !KEPT;
            }
        }
        *self = grown;
    }

    fn slots(&self) -> usize {
        self.keys.len() * WAYS
    }

    /// Moves the piece found at `way` of `set` one way ahead, with its tokens, and says where it
    /// is now: the pieces a thread meets most come first in their sets, so that a look-up of
    /// one stops at its set's first word, whichever pieces took the set before.
    #[inline(always)]
    fn move_ahead(&mut self, set: usize, way: usize) -> usize {
        if way == 0 {
            return 0;
        }
        self.keys[set].0.swap(way, way - 1);
        if !self.tokens.is_empty() {
            self.tokens.swap(set * WAYS + way, set * WAYS + way - 1);
        }
        way - 1
    }

    /// The key of `piece` in `encoding`.
    #[inline(always)]
    fn key_of(&self, encoding: Encoding, piece: &[u8]) -> ShortKey {
        key_of(encoding, piece, self.set_bits)
    }

    /// The bytes the slots take, as allocated.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.keys) + self.tokens.capacity() * TOKENS_KEPT * 4
    }
}

thread_local! {
    static SLOTS_OF_THIS_THREAD: RefCell<Slots> = RefCell::new(Slots::new());
}

/// The key of `piece` in `encoding`, in slots of `1 << set_bits` sets.
#[inline(always)]
fn key_of(encoding: Encoding, piece: &[u8], set_bits: u32) -> ShortKey {
    debug_assert!(!piece.is_empty() && piece.len() < SHORT);
    ShortKey::of(packed(piece), encoding, set_bits)
}

/// The set of `key` of `1 << set_bits`.
#[inline(always)]
fn set_of(key: Key, set_bits: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - set_bits)) as usize
}

/// The number of tokens of the piece `word` holds.
#[inline(always)]
fn count_of(word: Key) -> usize {
    (word >> COUNT & 0b111) as usize
}

/// The way of `set` that holds `key`.
#[inline(always)]
fn way_of(set: &[Key; WAYS], key: Key) -> Option<usize> {
    set.iter().position(|&held| held & PIECE == key)
}

/// The way a new piece takes in `set`: an empty one, else the one `key` picks.
fn vacant(set: &[Key; WAYS], key: Key) -> usize {
    set.iter()
        .position(|&held| held == 0)
        .unwrap_or((key.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 61) as usize)
}

/// This thread's slots, borrowed for the length of `f`.
pub(super) fn with<T>(f: impl FnOnce(&mut Slots) -> T) -> T {
    SLOTS_OF_THIS_THREAD.with(|slots| f(&mut slots.borrow_mut()))
}

/// Grows this thread's slots if they are due to ([`cache_growth`]).
pub(super) fn grow_if_due() {
    SLOTS_OF_THIS_THREAD.with(|slots| slots.borrow_mut().grow_if_due());
}

/// A piece of 1 to 7 bytes as the slots look it up: its word, without its count, and its set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ShortKey {
    key: Key,
    set: usize,
}

impl ShortKey {
    /// The key of a piece of the bytes `packed` ([`packed`]) in `encoding`, in slots of
    /// `1 << set_bits` sets.
    #[inline(always)]
    fn of(packed: Key, encoding: Encoding, set_bits: u32) -> ShortKey {
        let key = packed | Key::from(encoding as u8) << VOCABULARY;
        ShortKey {
            key,
            set: set_of(key, set_bits),
        }
    }
}

impl Slots {
    /// Whether the slots have grown ([`cache_growth`](super::cache_growth)): 2 MB of words,
    /// more than a core's caches hold, so that a look-up waits on memory unless its set was
    /// fetched ahead.
    pub(super) fn grown(&self) -> bool {
        self.set_bits > SET_BITS
    }

    /// The key of the piece of `len` bytes, 1 to 7, at `at` of `text`, in `encoding`: read from
    /// the text in one word ([`packed_at`]).
    #[inline(always)]
    pub(super) fn key_at(
        &self,
        encoding: Encoding,
        text: &[u8],
        at: usize,
        len: usize,
    ) -> ShortKey {
        ShortKey::of(packed_at(text, at, len), encoding, self.set_bits)
    }

    /// Asks the CPU to fetch the set of `key` into its caches, and goes on: the look-up that
    /// follows finds it there. On x86-64; elsewhere it does nothing.
    #[inline(always)]
    pub(super) fn fetch(&self, key: ShortKey) {
        #[cfg(target_arch = "x86_64")]
        safe_arch::prefetch_t0(&self.keys[key.set]);
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The number of tokens of `piece`, of 1 to 7 bytes, in `encoding`: as kept, or as `merge`
    /// pushes them on a vector, then kept.
    #[inline]
    pub(super) fn count(
        &mut self,
        encoding: Encoding,
        piece: &[u8],
        merge: impl FnOnce(&mut Vec<Rank>),
    ) -> usize {
        self.count_key(self.key_of(encoding, piece), merge)
    }

    /// [`count`](Self::count) of the piece of `key` ([`key_at`](Self::key_at)).
    #[inline(always)]
    pub(super) fn count_key(
        &mut self,
        ShortKey { key, set }: ShortKey,
        merge: impl FnOnce(&mut Vec<Rank>),
    ) -> usize {
        self.growth.looked_up();
        let keys = &mut self.keys[set].0;
        if let Some(way) = way_of(keys, key) {
            let word = keys[way];
            self.move_ahead(set, way);
            return count_of(word);
        }
        self.growth.missed();
        self.merged.clear();
        merge(&mut self.merged);
        let count = self.merged.len();
        keys[vacant(keys, key)] = key | (count as Key) << COUNT;
        count
    }

    /// Pushes the tokens of `piece`, of 1 to 7 bytes, in `encoding` on `tokens`: as kept, or as
    /// `merge` pushes them, then kept.
    #[inline]
    pub(super) fn encode(
        &mut self,
        encoding: Encoding,
        piece: &[u8],
        tokens: &mut Vec<Rank>,
        merge: impl FnOnce(&mut Vec<Rank>),
    ) {
        self.growth.looked_up();
        let ShortKey { key, set } = self.key_of(encoding, piece);
        let keys = &self.keys[set].0;
        let found = way_of(keys, key);
        if let Some(way) = found.filter(|&way| keys[way] & KEPT != 0) {
            let count = count_of(keys[way]);
            let way = self.move_ahead(set, way);
            tokens.extend_from_slice(&self.tokens[set * WAYS + way][..count]);
            return;
        }
        let start = tokens.len();
        merge(tokens);
        let merged = &tokens[start..];
        if found.is_none() {
            self.growth.missed();
        }
        let way = found.unwrap_or_else(|| vacant(&self.keys[set].0, key));
        let mut word = key | (merged.len() as Key) << COUNT;
        if self.tokens.is_empty() {
            self.tokens = vec![[0; TOKENS_KEPT]; self.slots()];
        }
        if merged.len() <= TOKENS_KEPT {
            self.tokens[set * WAYS + way][..merged.len()].copy_from_slice(merged);
            word |= KEPT;
        }
        self.keys[set].0[way] = word;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // Pieces of fewer than 8 bytes, which the caches of pieces keep here.
    use crate::tokenizer::piece_cache::tests::{count, encode, kept, on_a_new_thread};

    /// The bytes of this thread's slots.
    fn bytes() -> usize {
        SLOTS_OF_THIS_THREAD.with(|slots| slots.borrow().bytes())
    }

    #[test]
    fn a_thread_keeps_256_kb_to_count_and_768_kb_once_it_encodes() {
        let slots = Slots::new();
        assert_eq!(slots.bytes(), 256 * 1024);
        assert_eq!(
            slots.keys.as_ptr() as usize % 64,
            0,
            "each set in a cache line"
        );
        on_a_new_thread("the thread's slots are as documented", || {
            count(Encoding::O200kBase, b"xQz", |out| out.push(1));
            assert_eq!(bytes(), 256 * 1024);
            encode(Encoding::O200kBase, b"xQz", &mut Vec::new(), |out| {
                out.push(1)
            });
            assert_eq!(bytes(), 768 * 1024);
        });
    }

    #[test]
    fn a_thread_that_misses_twice_its_slots_grows_once_to_2_mb_and_6_mb_once_it_encodes() {
        on_a_new_thread("the thread's slots grow as documented", || {
            let misses = |from: usize, to: usize| {
                for i in from..to {
                    count(Encoding::O200kBase, format!("{i:x}").as_bytes(), |out| {
                        out.push(1)
                    });
                }
            };
            misses(0, 2 * SLOTS - 1);
            grow_if_due();
            assert_eq!(bytes(), 256 * 1024, "not due yet");
            misses(2 * SLOTS - 1, 2 * SLOTS);
            assert_eq!(bytes(), 256 * 1024, "grown before a text, not within one");
            assert!(!with(|slots| slots.grown()));
            grow_if_due();
            assert_eq!(bytes(), 2 << 20);
            assert!(with(|slots| slots.grown()));
            let last = format!("{:x}", 2 * SLOTS - 1);
            assert_eq!(count(Encoding::O200kBase, last.as_bytes(), kept), 1, "kept");
            encode(Encoding::O200kBase, b"xQz", &mut Vec::new(), |out| {
                out.push(1)
            });
            assert_eq!(bytes(), 6 << 20);
            misses(2 * SLOTS, (2 * GROWN + 3) * SLOTS);
            grow_if_due();
            assert_eq!(bytes(), 6 << 20, "grown once");
        });
    }

    #[test]
    fn a_piece_read_from_its_text_has_the_key_of_its_bytes() {
        // Every place, with eight bytes after it or fewer, at the text's end.
        let text: Vec<u8> = (0..24u8).map(|i| i.wrapping_mul(37) ^ 0xA5).collect();
        for set_bits in [SET_BITS, GROWN_SET_BITS] {
            let slots = Slots::of(set_bits);
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                for len in 1..SHORT {
                    for at in 0..=text.len() - len {
                        assert_eq!(
                            slots.key_at(encoding, &text, at, len),
                            key_of(encoding, &text[at..at + len], set_bits),
                            "{len} bytes at {at}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn another_vocabulary_length_or_bytes_is_not_answered_from_a_slot() {
        encode(Encoding::O200kBase, b"ab\0", &mut Vec::new(), |out| {
            out.push(7)
        });
        for (encoding, piece) in [
            (Encoding::Cl100kBase, &b"ab\0"[..]),
            (Encoding::O200kBase, b"ab"),
            (Encoding::O200kBase, b"ab\0\0"),
            (Encoding::O200kBase, b"ac\0"),
        ] {
            let mut merged = false;
            let n = count(encoding, piece, |out| {
                merged = true;
                out.extend([8, 8, 8]);
            });
            assert!(merged, "{encoding:?} {piece:?}");
            assert_eq!(n, 3);
        }
    }

    #[test]
    fn a_piece_of_more_tokens_than_kept_keeps_its_count_and_is_merged_again_to_encode() {
        let piece = b"1234567";
        let tokens: Vec<Rank> = (1..=7).collect();
        let mut out = Vec::new();
        encode(Encoding::Cl100kBase, piece, &mut out, |o| o.extend(&tokens));
        assert_eq!(count(Encoding::Cl100kBase, piece, kept), 7);
        let mut merged = false;
        encode(Encoding::Cl100kBase, piece, &mut out, |o| {
            merged = true;
            o.extend(&tokens);
        });
        assert!(merged);
        assert_eq!(out.len(), 14);
    }

    /// Eight pieces that share a set of the slots a thread starts with.
    fn sharing_a_set() -> Vec<String> {
        let set = key_of(Encoding::O200kBase, b"s0", SET_BITS).set;
        (0..)
            .map(|i| format!("s{i}"))
            .filter(|p| key_of(Encoding::O200kBase, p.as_bytes(), SET_BITS).set == set)
            .take(WAYS)
            .collect()
    }

    #[test]
    fn the_eight_pieces_of_a_set_all_stay() {
        let sharing = sharing_a_set();
        for (i, piece) in sharing.iter().enumerate() {
            count(Encoding::O200kBase, piece.as_bytes(), |out| {
                out.extend(std::iter::repeat_n(0, i % 7 + 1))
            });
        }
        for (i, piece) in sharing.iter().enumerate() {
            assert_eq!(
                count(Encoding::O200kBase, piece.as_bytes(), kept),
                i % 7 + 1
            );
        }
    }

    #[test]
    fn a_piece_met_again_and_again_moves_to_its_sets_first_word_with_its_tokens() {
        on_a_new_thread("a piece found moves ahead in its set", || {
            let sharing = sharing_a_set();
            let tokens_of = |i: usize| -> Vec<Rank> {
                (0..=i as Rank % 3).map(|t| 10 * i as Rank + t).collect()
            };
            for (i, piece) in sharing.iter().enumerate() {
                encode(
                    Encoding::O200kBase,
                    piece.as_bytes(),
                    &mut Vec::new(),
                    |out| out.extend(tokens_of(i)),
                );
            }
            let last = sharing.len() - 1;
            let way = || {
                let ShortKey { key, set } =
                    key_of(Encoding::O200kBase, sharing[last].as_bytes(), SET_BITS);
                with(|slots| way_of(&slots.keys[set].0, key))
            };
            assert_eq!(
                way(),
                Some(last),
                "a new piece takes the set's first empty slot"
            );
            for _ in 0..last {
                assert_eq!(
                    count(Encoding::O200kBase, sharing[last].as_bytes(), kept),
                    tokens_of(last).len()
                );
            }
            assert_eq!(way(), Some(0), "found seven times, it is first");
            for (i, piece) in sharing.iter().enumerate() {
                let mut out = Vec::new();
                encode(Encoding::O200kBase, piece.as_bytes(), &mut out, kept);
                assert_eq!(out, tokens_of(i), "each piece's tokens moved with it");
            }
        });
    }
}
