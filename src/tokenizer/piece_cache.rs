//! The tokens of the pieces a thread merged last, kept from one text to the next: real text
//! repeats its pieces (a listing's folder names, prose's words that are no one token, a JSON's
//! keys, a Japanese text's phrases), and a piece found here costs one hash and one compare
//! instead of a merge.
//!
//! One per thread, so that no lock is taken, of a bounded size: [`SLOTS`] pieces of up to
//! [`KEY_MAX`] bytes and their counts, 832 KB, and, once the thread encodes, their tokens, 480 KB
//! more; eight times as many, 6.5 MB and 3.75 MB, from the text after the one in which it missed
//! more pieces than it holds ([`cache_growth`]). [`Caches::count`] and [`Caches::encode`] keep a
//! piece of fewer than 8 bytes in [`short_piece_cache`] instead, a word each. Both are borrowed
//! once for a run of a text's pieces ([`with`]), not once a piece. Four-way set-associative: a
//! piece may sit in any of the four slots of the set its hash picks, each with a tag of its hash,
//! so that pieces that share a set do not push each other out. A new piece takes the slot its
//! hash picks if it is empty, else another empty slot of its set. In a full set, it takes the
//! slot of a piece the thread found in none of its last [`UNMET`] texts, if one is (the one its
//! hash picks first); else the one its hash picks, unless that slot's piece was found again since
//! it was kept: that piece is then passed over once, and the new one merged and not kept. So a
//! text counted again keeps every piece its sets fit: the pieces of texts counted long before
//! give way to it at once, where two that pick the same slot, in a set of those, would pass each
//! other over at every count, and a set of five pieces taking each other's slots in turn would
//! merge all five every time; and a piece no longer met gives way to a new one the second time
//! that one comes. A session whose texts come back within half as many texts keeps its pieces by
//! that last rule alone. A piece is only ever answered by a slot that holds exactly its bytes, of
//! the same vocabulary.
//!
//! Most pieces sit in the slot their hash picks, so a look-up asks for that slot's key as it
//! reads its set's header ([`Slots::fetch_own_key`]): where neither is in the CPU's caches (a
//! text seen before, counted again after other work), it waits on memory once, not twice.
//!
//! A zero tag marks a slot empty, so the keys and tokens need no other start than zeroed
//! memory, which the allocator hands out without writing it.
//!
//! [`cache_growth`]: super::cache_growth

use std::cell::RefCell;
use std::hash::Hasher;

use rustc_hash::FxHasher;
use tiktoken_rs::Rank;

use super::cache_growth::{Growth, GROWN};
use super::{short_piece_cache, Encoding};

/// Pieces of up to this many bytes are kept; longer ones are merged each time.
pub(super) const KEY_MAX: usize = 96;

/// The tokens of a piece of up to this many are kept; of a piece of more, its count alone.
const TOKENS_MAX: usize = 15;

/// The number of slots: 832 KB for each thread that counts with [`KEY_MAX`], and 480 KB more once
/// it encodes, with [`TOKENS_MAX`].
const SLOTS: usize = 8192;

/// The slots a piece may take: those of its set.
const WAYS: usize = 4;

/// A piece not found in this many of a thread's texts gives way to a new one at once. A text's
/// pieces renew their slots' mark of it ([`Held::found_in`]) once in half as many, so that a
/// piece found again and again seldom writes its set's line: one is unmet 33 to 64 texts after
/// it was last found.
const UNMET: u8 = 64;

// [`holds`] reads a piece's first and last eight bytes.
const _: () = assert!(short_piece_cache::SHORT >= 8);

// A piece's length and its number of tokens, at most its length, are kept in bytes.
const _: () = assert!(KEY_MAX <= u8::MAX as usize);

/// A thread's slots: a look-up reads its set's header, then the one key it points at, two cache
/// lines where a hit is found.
struct Slots {
    /// As many as the slots' by [`WAYS`], a power of two.
    sets: Box<[Set]>,
    keys: Box<[[u8; KEY_MAX]]>,
    growth: Growth,
    /// Of each slot, its tokens, if [`KEPT`] says they are: empty until the thread first
    /// encodes, so that a thread that only counts does not hold them.
    tokens: Vec<[Rank; TOKENS_MAX]>,
    /// Where [`Caches::count`] has a piece merged, so that a piece met the first time allocates nothing.
    merged: Vec<Rank>,
    /// The text the thread counts or encodes, of its last 256: one more each text.
    text: u8,
}

/// A set's header: of each of its slots, the tag of its piece's hash and vocabulary (0 where
/// the slot is empty) and what it holds. Two to a cache line.
#[derive(Default, Clone, Copy)]
#[repr(align(32))]
struct Set {
    tags: [u32; WAYS],
    held: [Held; WAYS],
}

impl Slots {
    fn new() -> Self {
        Slots::of(SLOTS)
    }

    fn of(slots: usize) -> Self {
        // All zero but what each slot holds: allocated zeroed, not written.
        Slots {
            sets: vec![Set::default(); slots / WAYS].into_boxed_slice(),
            keys: vec![[0; KEY_MAX]; slots].into_boxed_slice(),
            growth: Growth::default(),
            tokens: Vec::new(),
            merged: Vec::with_capacity(KEY_MAX),
            text: 0,
        }
    }

    /// Grows the slots if they are due to ([`cache_growth`]), each piece and its count taken
    /// into the grown slots; its tokens are not, and are merged again when it is next encoded.
    fn grow_if_due(&mut self) {
        if self.keys.len() != SLOTS || !self.growth.due(SLOTS) {
            return;
        }
        let mut grown = Slots::of(GROWN * SLOTS);
        for (at, key) in self.keys.iter().enumerate() {
            let set = &self.sets[at / WAYS];
            let (tag, held) = (set.tags[at % WAYS], set.held[at % WAYS]);
            if tag == 0 {
                continue;
            }
            let piece = &key[..usize::from(held.len)];
            // The tag is the hash's high half, the set its low bits: more of them now.
            let (to, _) = place(encoding_of(tag), piece, grown.sets.len());
            let header = &mut grown.sets[to];
            if let Some(way) = empty_way(&header.tags, tag) {
                header.tags[way] = tag;
                header.held[way] = Held {
                    count: held.count & !KEPT,
                    ..held
                };
                grown.keys[to * WAYS + way][..piece.len()].copy_from_slice(piece);
            }
        }
        grown.text = self.text;
        *self = grown;
    }

    /// The bytes the slots take, as allocated.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        fn of<T>(slice: &[T]) -> usize {
            std::mem::size_of_val(slice)
        }
        of(&self.sets)
            + of(&self.keys)
            + self.tokens.capacity() * size_of::<[Rank; TOKENS_MAX]>()
            + self.merged.capacity() * size_of::<Rank>()
    }
}

/// What a slot holds: its piece's length and number of tokens, with [`KEPT`] if its tokens are
/// kept too; whether its piece was found again since it was kept, or since a new piece last
/// passed it over; and a text it was kept or found in ([`UNMET`]), of the thread's last 256
/// ([`Slots::text`]), so that a piece unmet for longer may seem met, and give way by the rules
/// for those. Its vocabulary is in its tag ([`place`]).
#[derive(Debug, Default, Clone, Copy)]
struct Held {
    len: u8,
    count: u8,
    found_again: bool,
    found_in: u8,
}

impl Held {
    /// How many of the thread's texts ago, `text` being the current one, the slot's mark of a
    /// text it was found in was last renewed.
    fn texts_since_found(&self, text: u8) -> u8 {
        text.wrapping_sub(self.found_in)
    }
}

/// In [`Held::count`]: the slot's tokens are kept. A piece has at most [`KEY_MAX`] tokens.
const KEPT: u8 = 0x80;
const _: () = assert!(KEY_MAX < KEPT as usize);

thread_local! {
    static SLOTS_OF_THIS_THREAD: RefCell<Slots> = RefCell::new(Slots::new());
}

/// This thread's caches of pieces, this one's and [`short_piece_cache`]'s, borrowed for the length
/// of `f`: a text's pieces are looked up one after another with no borrow each.
pub(super) fn with<T>(f: impl FnOnce(&mut Caches<'_>) -> T) -> T {
    SLOTS_OF_THIS_THREAD.with(|slots| {
        short_piece_cache::with(|short| {
            f(&mut Caches {
                short,
                slots: &mut slots.borrow_mut(),
            })
        })
    })
}

/// Readies this thread's caches of pieces for a new text: grows those that are due to
/// ([`cache_growth`]), and counts one more text ([`Slots::text`]). Called before a text, not
/// within one.
pub(super) fn before_text() {
    SLOTS_OF_THIS_THREAD.with(|slots| {
        let mut slots = slots.borrow_mut();
        slots.grow_if_due();
        slots.text = slots.text.wrapping_add(1);
    });
    short_piece_cache::grow_if_due();
}

/// A thread's caches of pieces, borrowed.
pub(super) struct Caches<'a> {
    short: &'a mut short_piece_cache::Slots,
    slots: &'a mut Slots,
}

impl Caches<'_> {
    /// The thread's table of pieces of fewer than 8 bytes.
    pub(super) fn short(&mut self) -> &mut short_piece_cache::Slots {
        self.short
    }

    /// The number of tokens of `piece`, at most [`KEY_MAX`] bytes, in `encoding`: as kept here or
    /// in [`short_piece_cache`], or as `merge` pushes them on a vector, then kept.
    #[inline(always)]
    pub(super) fn count(
        &mut self,
        encoding: Encoding,
        piece: &[u8],
        merge: impl FnOnce(&mut Vec<Rank>),
    ) -> usize {
        if piece.len() < short_piece_cache::SHORT {
            return self.short.count(encoding, piece, merge);
        }
        match self.slots.slot(encoding, piece) {
            Found(slot) => slot.count(),
            PassedOver(slots) => {
                let tokens = &mut slots.merged;
                tokens.clear();
                merge(tokens);
                tokens.len()
            }
            Vacant(mut slot) => {
                // The thread's one vector for merges, taken while the slot is written.
                let mut tokens = std::mem::take(&mut slot.slots.merged);
                tokens.clear();
                merge(&mut tokens);
                slot.keep(piece, &tokens, false);
                let count = tokens.len();
                slot.slots.merged = tokens;
                count
            }
        }
    }

    /// Pushes the tokens of `piece`, at most [`KEY_MAX`] bytes, in `encoding` on `tokens`: as
    /// kept here or in [`short_piece_cache`], or as `merge` pushes them, then kept.
    #[inline(always)]
    pub(super) fn encode(
        &mut self,
        encoding: Encoding,
        piece: &[u8],
        tokens: &mut Vec<Rank>,
        merge: impl FnOnce(&mut Vec<Rank>),
    ) {
        if piece.len() < short_piece_cache::SHORT {
            return self.short.encode(encoding, piece, tokens, merge);
        }
        match self.slots.slot(encoding, piece) {
            Found(slot) if slot.kept() => {
                tokens.extend_from_slice(&slot.slots.tokens[slot.at][..slot.count()]);
            }
            Found(mut slot) | Vacant(mut slot) => {
                let start = tokens.len();
                merge(tokens);
                slot.keep(piece, &tokens[start..], true);
            }
            PassedOver(_) => merge(tokens),
        }
    }
}

/// One slot of a thread's, and the tag of the piece looked up.
struct Slot<'a> {
    slots: &'a mut Slots,
    at: usize,
    tag: u32,
}

impl Slot<'_> {
    fn held(&self) -> Held {
        self.slots.sets[self.at / WAYS].held[self.at % WAYS]
    }

    fn count(&self) -> usize {
        usize::from(self.held().count & !KEPT)
    }

    /// Whether the slot's tokens are kept.
    fn kept(&self) -> bool {
        self.held().count & KEPT != 0
    }

    /// Keeps `piece` and its number of tokens in the slot, and, with `with_tokens`, its tokens
    /// if there are at most [`TOKENS_MAX`].
    fn keep(&mut self, piece: &[u8], tokens: &[Rank], with_tokens: bool) {
        let kept = with_tokens && tokens.len() <= TOKENS_MAX;
        if kept {
            let all = &mut self.slots.tokens;
            if all.is_empty() {
                *all = vec![[0; TOKENS_MAX]; self.slots.keys.len()];
            }
            all[self.at][..tokens.len()].copy_from_slice(tokens);
        }
        let set = &mut self.slots.sets[self.at / WAYS];
        set.tags[self.at % WAYS] = self.tag;
        let held = &mut set.held[self.at % WAYS];
        *held = Held {
            len: piece.len() as u8,
            count: tokens.len() as u8 | if kept { KEPT } else { 0 },
            // A piece found, kept again with its tokens, stays found again; a new piece's slot
            // was made not found again when the piece took it.
            found_again: held.found_again,
            found_in: self.slots.text,
        };
        self.slots.keys[self.at][..piece.len()].copy_from_slice(piece);
    }
}

enum Lookup<'a> {
    /// The slot holds `piece`.
    Found(Slot<'a>),
    /// The slot `piece` is to take: an empty one of its set, else the one its hash picks, if
    /// that slot's piece was not found again since it was kept or last passed over.
    Vacant(Slot<'a>),
    /// `piece` is not kept: the slot its hash picks holds a piece found again since it was
    /// kept, which is now passed over once.
    PassedOver(&'a mut Slots),
}
use Lookup::{Found, PassedOver, Vacant};

/// The set `piece` of `encoding` may sit in, of `sets`, a power of two, and its tag: the hash's
/// high half, with `encoding` in its lowest bit ([`encoding_of`]) and the next one set, so that
/// pieces of the same tag are of the same vocabulary and a tag is never 0, which marks a slot
/// empty.
fn place(encoding: u8, piece: &[u8], sets: usize) -> (usize, u32) {
    debug_assert!(encoding < 2);
    let mut hasher = FxHasher::default();
    hasher.write_u8(encoding);
    hasher.write(piece);
    let hash = hasher.finish();
    let tag = (hash >> 32) as u32 & !0b11 | 0b10 | u32::from(encoding);
    ((hash as usize) & (sets - 1), tag)
}

/// The vocabulary of a piece of `tag` ([`place`]).
fn encoding_of(tag: u32) -> u8 {
    (tag & 1) as u8
}

/// The way of its set that a piece of `tag` takes first, if it is empty or its piece gives way
/// (the rule in this module's docs).
#[inline(always)]
fn own_way(tag: u32) -> usize {
    (tag >> 2) as usize % WAYS
}

/// The empty way a new piece of `tag` takes, of a set's `tags`: its [`own_way`] if that one is
/// empty, else the first that is; `None` if none is.
#[inline(always)]
fn empty_way(tags: &[u32; WAYS], tag: u32) -> Option<usize> {
    let own = own_way(tag);
    if tags[own] == 0 {
        Some(own)
    } else {
        tags.iter().position(|&tag| tag == 0)
    }
}

/// Whether `key` starts with `piece`, of [`short_piece_cache::SHORT`] bytes or more: a piece of up
/// to 16, most of those a session sees again, by two overlapping 8-byte words.
#[inline(always)]
fn holds(key: &[u8; KEY_MAX], piece: &[u8]) -> bool {
    let key = &key[..piece.len()];
    if piece.len() > 16 {
        // By 16 bytes at a time, the last 16 overlapping the ones before: no call to `memcmp`.
        let same = |at: usize| key[at..at + 16] == piece[at..at + 16];
        return (0..piece.len() - 16).step_by(16).all(same) && same(piece.len() - 16);
    }
    key.first_chunk::<8>() == piece.first_chunk::<8>()
        && key.last_chunk::<8>() == piece.last_chunk::<8>()
}

/// The ways whose tag is `tag`, of a set's `tags`: all four compared at once, and in the
/// common case one way to look at, so that a look-up costs the same whichever way holds its
/// piece, where one that tried the ways in turn would stop at a different one each time, past
/// the pieces other texts left.
#[inline(always)]
fn ways_tagged(tags: &[u32; WAYS], tag: u32) -> impl Iterator<Item = usize> {
    let mut ways = tags.iter().enumerate().fold(0u32, |ways, (way, &held)| {
        ways | u32::from(held == tag) << way
    });
    std::iter::from_fn(move || {
        let way = ways.trailing_zeros() as usize;
        ways &= ways.wrapping_sub(1);
        (way < WAYS).then_some(way)
    })
}

impl Slots {
    /// Asks the CPU for the key of the [`own_way`] of a piece of `tag` and `len` bytes in `set`,
    /// the cache lines of its first byte and of its last, and goes on: the key of the way most
    /// pieces sit in is then read from memory while the set's header is, the two waits
    /// overlapping instead of following one another. On x86-64; elsewhere it does nothing.
    #[inline(always)]
    fn fetch_own_key(&self, set: usize, tag: u32, len: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let key = &self.keys[set * WAYS + own_way(tag)];
            safe_arch::prefetch_t0(&key[0]);
            safe_arch::prefetch_t0(&key[len - 1]);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (set, tag, len);
    }

    /// The slot `piece` of `encoding` sits in, or is to take, counted for [`Growth`].
    #[inline(always)]
    fn slot(&mut self, encoding: Encoding, piece: &[u8]) -> Lookup<'_> {
        debug_assert!(piece.len() <= KEY_MAX);
        self.growth.looked_up();
        let (set, tag) = place(encoding as u8, piece, self.sets.len());
        self.fetch_own_key(set, tag, piece.len());
        let header = self.sets[set];
        let found = ways_tagged(&header.tags, tag).find(|&way| {
            let held = header.held[way];
            usize::from(held.len) == piece.len() && holds(&self.keys[set * WAYS + way], piece)
        });
        if let Some(way) = found {
            // Written once in [`UNMET`] / 2 texts at most, so that a piece found again and again
            // seldom writes its set's line.
            let (held, text) = (&mut self.sets[set].held[way], self.text);
            if !held.found_again || held.texts_since_found(text) >= UNMET / 2 {
                held.found_again = true;
                held.found_in = text;
            }
            return Found(Slot {
                slots: self,
                at: set * WAYS + way,
                tag,
            });
        }
        self.growth.missed();
        let way = match empty_way(&header.tags, tag) {
            Some(empty) => empty,
            None => {
                let (own, text) = (own_way(tag), self.text);
                let held = &mut self.sets[set].held;
                let unmet = |held: &Held| held.texts_since_found(text) >= UNMET;
                let way = if unmet(&held[own]) {
                    own
                } else if let Some(way) = held.iter().position(unmet) {
                    way
                } else if held[own].found_again {
                    held[own].found_again = false;
                    return PassedOver(self);
                } else {
                    own
                };
                held[way].found_again = false;
                way
            }
        };
        Vacant(Slot {
            slots: self,
            at: set * WAYS + way,
            tag,
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A merge that must not run: the piece was kept.
    pub(in crate::tokenizer) fn kept(_: &mut Vec<Rank>) {
        panic!("merged again");
    }

    /// Runs `test` on a thread of its own, whose caches start empty and grow as `test` makes
    /// them; a failure panics with `what` it checked.
    pub(in crate::tokenizer) fn on_a_new_thread(what: &str, test: impl FnOnce() + Send + 'static) {
        std::thread::spawn(test).join().expect(what);
    }

    /// The bytes of this thread's slots of pieces of 8 bytes or more.
    pub(in crate::tokenizer) fn bytes() -> usize {
        SLOTS_OF_THIS_THREAD.with(|slots| slots.borrow().bytes())
    }

    /// [`Caches::count`] with this thread's caches.
    pub(in crate::tokenizer) fn count(
        encoding: Encoding,
        piece: &[u8],
        merge: impl FnOnce(&mut Vec<Rank>),
    ) -> usize {
        with(|caches| caches.count(encoding, piece, merge))
    }

    /// [`Caches::encode`] with this thread's caches.
    pub(in crate::tokenizer) fn encode(
        encoding: Encoding,
        piece: &[u8],
        tokens: &mut Vec<Rank>,
        merge: impl FnOnce(&mut Vec<Rank>),
    ) {
        with(|caches| caches.encode(encoding, piece, tokens, merge))
    }

    #[test]
    fn a_set_offers_every_way_of_the_tag_in_order_and_no_other() {
        let ways = |tags, tag| ways_tagged(&tags, tag).collect::<Vec<_>>();
        assert_eq!(ways([5, 7, 5, 9], 5), [0, 2], "a tag two pieces share");
        assert_eq!(ways([5, 7, 5, 9], 9), [3]);
        assert_eq!(ways([3; WAYS], 3), [0, 1, 2, 3]);
        assert!(ways([1, 2, 3, 4], 8).is_empty());
    }

    #[test]
    fn a_key_holds_a_piece_only_if_every_byte_is_the_same() {
        let key: [u8; KEY_MAX] = std::array::from_fn(|i| i as u8);
        for len in short_piece_cache::SHORT..=KEY_MAX {
            let mut piece = key[..len].to_vec();
            assert!(holds(&key, &piece), "{len} bytes");
            for at in 0..len {
                piece[at] ^= 1;
                assert!(!holds(&key, &piece), "{len} bytes, byte {at} changed");
                piece[at] ^= 1;
            }
        }
    }

    #[test]
    fn a_thread_keeps_832_kb_to_count_and_480_kb_more_once_it_encodes() {
        on_a_new_thread("the thread's slots are as documented", || {
            assert_eq!(bytes(), (64 + 768) * 1024 + KEY_MAX * 4);
            count(Encoding::O200kBase, b" a piece counted", |out| out.push(1));
            assert_eq!(bytes(), (64 + 768) * 1024 + KEY_MAX * 4);
            encode(
                Encoding::O200kBase,
                b" a piece encoded",
                &mut Vec::new(),
                |out| out.push(1),
            );
            assert_eq!(bytes(), (64 + 768 + 480) * 1024 + KEY_MAX * 4);
        });
    }

    #[test]
    fn a_thread_that_misses_twice_its_slots_grows_once_to_6_5_mb_and_10_25_mb_once_it_encodes() {
        on_a_new_thread("the thread's slots grow as documented", || {
            count_pieces(0, 2 * SLOTS - 1);
            before_text();
            assert_eq!(bytes(), 832 * 1024 + KEY_MAX * 4, "not due yet");
            count_pieces(2 * SLOTS - 1, 2 * SLOTS);
            let cl100k = b" a piece of the other vocabulary";
            count(Encoding::Cl100kBase, cl100k, |out| out.extend([1, 2]));
            before_text();
            assert_eq!(bytes(), (512 + 6144) * 1024 + KEY_MAX * 4);
            let last = format!(" piece-{}", 2 * SLOTS - 1);
            assert_eq!(count(Encoding::O200kBase, last.as_bytes(), kept), 1, "kept");
            assert_eq!(
                count(Encoding::Cl100kBase, cl100k, kept),
                2,
                "kept in its set"
            );
            encode(
                Encoding::O200kBase,
                b" a piece encoded",
                &mut Vec::new(),
                |out| out.push(1),
            );
            assert_eq!(bytes(), (512 + 6144 + 3840) * 1024 + KEY_MAX * 4);
            count_pieces(2 * SLOTS, (2 * GROWN + 3) * SLOTS);
            before_text();
            assert_eq!(
                bytes(),
                (512 + 6144 + 3840) * 1024 + KEY_MAX * 4,
                "grown once"
            );
        });
    }

    #[test]
    fn a_piece_counted_then_encoded_is_merged_again_once_to_keep_its_tokens() {
        // Counting keeps the count alone, in either cache: a short piece and a long one.
        for piece in [&b"xQzK"[..], b" counted before it is encoded"] {
            let mut merges = 0;
            let mut merge = |out: &mut Vec<Rank>| {
                merges += 1;
                out.extend([4, 5]);
            };
            assert_eq!(count(Encoding::O200kBase, piece, &mut merge), 2);
            assert_eq!(count(Encoding::O200kBase, piece, kept), 2);
            let mut out = vec![9];
            encode(Encoding::O200kBase, piece, &mut out, &mut merge);
            encode(Encoding::O200kBase, piece, &mut out, kept);
            assert_eq!(count(Encoding::O200kBase, piece, kept), 2);
            assert_eq!(out, [9, 4, 5, 4, 5], "{piece:?}");
            assert_eq!(merges, 2, "{piece:?}");
        }
    }

    #[test]
    fn a_piece_is_merged_once_then_answered_with_its_tokens() {
        let piece = b" tool-output-cap-test-piece";
        let tokens = [1, 2, 3];
        let mut merges = 0;
        let merge = |out: &mut Vec<Rank>| {
            merges += 1;
            out.extend_from_slice(&tokens);
        };
        let mut out = vec![9];
        encode(Encoding::O200kBase, piece, &mut out, merge);
        assert_eq!(merges, 1);
        assert_eq!(count(Encoding::O200kBase, piece, kept), 3);
        encode(Encoding::O200kBase, piece, &mut out, kept);
        assert_eq!(out, [9, 1, 2, 3, 1, 2, 3]);
    }

    #[test]
    fn another_vocabulary_or_other_bytes_are_not_answered_from_a_slot() {
        let piece = b" another-tool-output-cap-piece";
        encode(Encoding::O200kBase, piece, &mut Vec::new(), |out| {
            out.push(7)
        });
        let mut merged = false;
        let n = count(Encoding::Cl100kBase, piece, |out| {
            merged = true;
            out.extend([8, 8]);
        });
        assert!(merged, "cl100k_base's tokens are not o200k_base's");
        assert_eq!(n, 2);
        let mut merged = false;
        count(
            Encoding::O200kBase,
            b" another-tool-output-cap-piecf",
            |out| {
                merged = true;
                out.push(1);
            },
        );
        assert!(merged);
    }

    #[test]
    fn a_piece_of_many_tokens_keeps_its_count_and_is_merged_again_to_encode() {
        let piece = [b'x'; KEY_MAX];
        let tokens: Vec<Rank> = (0..KEY_MAX as Rank).collect();
        assert_eq!(
            count(Encoding::O200kBase, &piece, |out| out.extend(&tokens)),
            KEY_MAX
        );
        assert_eq!(count(Encoding::O200kBase, &piece, kept), KEY_MAX);
        let mut out = Vec::new();
        encode(Encoding::O200kBase, &piece, &mut out, |out| {
            out.extend(&tokens)
        });
        assert_eq!(out, tokens);
    }

    #[test]
    fn a_piece_sits_in_the_slot_its_hash_picks_unless_another_piece_holds_it() {
        on_a_new_thread("pieces take the slots their hashes pick", || {
            let every_piece_in_its_own_or_a_taken_ones_place = || {
                SLOTS_OF_THIS_THREAD.with(|slots| {
                    let slots = slots.borrow();
                    let mut own = 0;
                    for (set, header) in slots.sets.iter().enumerate() {
                        for (way, &tag) in header.tags.iter().enumerate() {
                            let picked = own_way(tag);
                            if tag == 0 || way == picked {
                                own += usize::from(tag != 0);
                                continue;
                            }
                            assert_ne!(
                                header.tags[picked], 0,
                                "set {set}, way {way}: its own is empty"
                            );
                        }
                    }
                    own
                })
            };
            count_pieces(0, SLOTS / 8);
            // Most sets hold one piece, in its own way: in three sets in four, not the first.
            assert!(every_piece_in_its_own_or_a_taken_ones_place() > SLOTS / 10);
            count_pieces(SLOTS / 8, 2 * SLOTS);
            every_piece_in_its_own_or_a_taken_ones_place();
            before_text();
            assert!(
                every_piece_in_its_own_or_a_taken_ones_place() > SLOTS / 2,
                "grown"
            );
        });
    }

    #[test]
    fn a_piece_unmet_for_64_texts_gives_way_to_a_new_one_at_once_and_those_met_stay() {
        on_a_new_thread("a piece no longer met gives way at once", || {
            let sharing = sharing_a_set(WAYS + 1);
            let (kept_ones, new) = (&sharing[..WAYS], &sharing[WAYS]);
            kept_and_found_again(kept_ones);
            let (met, unmet) = kept_ones.split_at(WAYS - 1);
            for _ in 0..UNMET - 1 {
                before_text();
                met.iter().for_each(|piece| assert!(!merged(piece)));
            }
            before_text();
            assert!(merged(new), "met the first time");
            assert!(!merged(new), "kept at once, in the place of {unmet:?}");
            met.iter()
                .for_each(|piece| assert!(!merged(piece), "{piece} stays"));
            assert!(merged(&unmet[0]), "{unmet:?} gave way");
        });
    }

    #[test]
    fn a_piece_found_once_in_32_texts_never_gives_way_at_once() {
        on_a_new_thread("a piece met now and then stays", || {
            let sharing = sharing_a_set(WAYS + 1);
            let (kept_ones, new) = (&sharing[..WAYS], &sharing[WAYS]);
            kept_and_found_again(kept_ones);
            for _ in 0..4 {
                (0..UNMET / 2).for_each(|_| before_text());
                kept_ones.iter().for_each(|piece| assert!(!merged(piece)));
            }
            assert!(merged(new), "passed over");
            kept_ones
                .iter()
                .for_each(|piece| assert!(!merged(piece), "{piece} stays"));
        });
    }

    #[test]
    fn two_pieces_that_pick_the_same_slot_both_stay_in_a_set_of_pieces_no_longer_met() {
        on_a_new_thread("pieces of the same slot both stay", || {
            let cl100k = Encoding::Cl100kBase as u8;
            let own = |piece: &String| own_way(place(cl100k, piece.as_bytes(), SLOTS / WAYS).1);
            let sharing = sharing_a_set(64);
            let (older, newer) = sharing.split_at(WAYS);
            let same_slot: Vec<&String> = newer
                .iter()
                .filter(|piece| own(piece) == own(&newer[0]))
                .take(2)
                .collect();
            assert_eq!(same_slot.len(), 2, "two pieces that pick the same slot");
            kept_and_found_again(older);
            for _ in 0..UNMET {
                before_text();
            }
            same_slot.iter().for_each(|piece| _ = merged(piece));
            for text in 0..3 {
                before_text();
                for piece in &same_slot {
                    assert!(!merged(piece), "{piece}, text {text}");
                }
            }
        });
    }

    /// Counts the pieces ` piece-{from}` to ` piece-{to - 1}` of o200k_base, each one token.
    fn count_pieces(from: usize, to: usize) {
        for i in from..to {
            count(
                Encoding::O200kBase,
                format!(" piece-{i}").as_bytes(),
                |out| out.push(1),
            );
        }
    }

    /// The first `n` pieces of cl100k_base that hash to one set.
    fn sharing_a_set(n: usize) -> Vec<String> {
        let cl100k = Encoding::Cl100kBase as u8;
        let (set, _) = place(cl100k, b" shared-set-0", SLOTS / WAYS);
        (0..)
            .map(|i| format!(" shared-set-{i}"))
            .filter(|piece| place(cl100k, piece.as_bytes(), SLOTS / WAYS).0 == set)
            .take(n)
            .collect()
    }

    /// Counts each of `pieces` of cl100k_base twice: merged and kept, then found again.
    fn kept_and_found_again(pieces: &[String]) {
        for piece in pieces {
            assert!(merged(piece), "{piece} met the first time");
            assert!(!merged(piece), "{piece} found again");
        }
    }

    /// Counts `piece` of cl100k_base, as one token, and says whether it was merged.
    fn merged(piece: &str) -> bool {
        let mut merged = false;
        count(Encoding::Cl100kBase, piece.as_bytes(), |out| {
            merged = true;
            out.push(0);
        });
        merged
    }

    #[test]
    fn pieces_found_again_stay_and_a_new_one_takes_a_slot_the_second_time_it_comes() {
        on_a_new_thread("a set keeps its pieces as documented", || {
            let sharing = sharing_a_set(WAYS + 1);
            let (kept_ones, new) = (&sharing[..WAYS], &sharing[WAYS]);
            for (i, piece) in kept_ones.iter().enumerate() {
                encode(
                    Encoding::Cl100kBase,
                    piece.as_bytes(),
                    &mut Vec::new(),
                    |out| out.push(i as Rank),
                );
            }
            for (i, piece) in kept_ones.iter().enumerate() {
                let mut out = Vec::new();
                encode(Encoding::Cl100kBase, piece.as_bytes(), &mut out, kept);
                assert_eq!(out, [i as Rank], "{piece}");
            }
            assert!(merged(new), "the set is full");
            assert!(merged(new), "passed over once");
            assert!(!merged(new), "kept the second time");
            let gave_way = kept_ones.iter().filter(|piece| merged(piece)).count();
            assert_eq!(gave_way, 1, "one piece gave way to it");
        });
    }

    #[test]
    fn a_piece_found_again_then_kept_with_its_tokens_is_still_passed_over_once() {
        on_a_new_thread("a piece kept again stays found again", || {
            let sharing = sharing_a_set(WAYS + 1);
            let (counted, new) = (&sharing[..WAYS], &sharing[WAYS]);
            for piece in counted {
                assert!(merged(piece), "{piece} met the first time");
                count(Encoding::Cl100kBase, piece.as_bytes(), kept);
            }
            // Each slot written again, now with its piece's tokens.
            for piece in counted {
                encode(
                    Encoding::Cl100kBase,
                    piece.as_bytes(),
                    &mut Vec::new(),
                    |out| out.push(0),
                );
            }
            assert!(merged(new), "the set is full");
            for piece in counted {
                count(Encoding::Cl100kBase, piece.as_bytes(), kept);
            }
        });
    }

    #[test]
    fn more_pieces_than_a_set_holds_seen_again_and_again_are_merged_only_as_many_as_overflow_it() {
        // Taking each other's slots in turn, every one of them would be merged every round.
        on_a_new_thread("a set keeps the pieces it fits", || {
            let sharing = sharing_a_set(WAYS + 1);
            for _ in 0..3 {
                sharing.iter().for_each(|piece| _ = merged(piece));
            }
            for round in 0..4 {
                let merges = sharing.iter().filter(|piece| merged(piece)).count();
                assert_eq!(merges, 1, "round {round}");
            }
        });
    }

    #[test]
    fn slots_overwritten_by_many_pieces_still_answer_each_exactly() {
        // Far more pieces than either table has slots, short and long, each with tokens of its
        // own: every answer, counted or encoded, is its own, before the tables grow and after.
        let short = (0..100_000).map(|i| format!("{i:x}"));
        let long = (0..3 * SLOTS).map(|i| format!(" piece-{i}"));
        let pieces: Vec<String> = short.chain(long).collect();
        let tokens_of = |i: usize| -> Vec<Rank> { (i..=i + i % 5).map(|t| t as Rank).collect() };
        for round in 0..3 {
            before_text();
            for (i, piece) in pieces.iter().enumerate() {
                let n = count(Encoding::O200kBase, piece.as_bytes(), |out| {
                    out.extend(tokens_of(i))
                });
                assert_eq!(n, i % 5 + 1, "{piece}, round {round}");
                let mut out = Vec::new();
                encode(Encoding::O200kBase, piece.as_bytes(), &mut out, |out| {
                    out.extend(tokens_of(i))
                });
                assert_eq!(out, tokens_of(i), "{piece}, round {round}");
            }
        }
    }
}
