//! The merges a thread looked up last: whether two tokens side by side in a piece being merged
//! make a token, and which. A text never seen is mostly merged, and a merge is mostly look-ups
//! of the bytes of two parts in the vocabulary's tables, 4 MB and more, which a cold count finds
//! outside the CPU's caches. The same pairs come back in piece after piece (a Japanese text's
//! characters are each merged from their three bytes, in every phrase that holds them), and
//! are found here, by the two tokens' ranks, in 64 KB.
//!
//! One per thread, so that no lock is taken, made on its first merge, of a fixed size: [`SLOTS`]
//! words, each the pair's vocabulary and ranks and what they make, or that they make none.
//! Direct-mapped: a pair takes the slot its hash picks, in place of the one there. A pair is only ever answered by a word
//! that holds exactly its two ranks and its vocabulary; a zero word marks a slot empty.

use std::cell::Cell;

use tiktoken_rs::Rank;

use super::Encoding;

/// The bits of a rank kept; a pair with a rank past them is looked up, never kept. Both
/// vocabularies' ranks fit.
const RANK_BITS: u32 = 18;
/// In the place of the merged rank: the pair makes no token.
const NO_TOKEN: u64 = (1 << RANK_BITS) - 1;

/// A word: the right token's rank (bits 0 to 17), the left's (18 to 35), what they make (36 to
/// 53, [`NO_TOKEN`] if nothing), the vocabulary (bit 62) and that the slot is taken (bit 63).
const LEFT: u32 = RANK_BITS;
const MADE: u32 = 2 * RANK_BITS;
const VOCABULARY: u32 = 62;
const TAKEN: u64 = 1 << 63;

// The vocabulary takes one bit.
const _: () = assert!((Encoding::Cl100kBase as u8) < 2 && (Encoding::O200kBase as u8) < 2);

/// The bits of a slot's index: 8,192 words, 64 KB for each thread that merges.
const SLOT_BITS: u32 = 13;
const SLOTS: usize = 1 << SLOT_BITS;

/// A thread's slots, made on its first merge.
pub(super) struct Pairs {
    words: Box<[Cell<u64>]>,
}

impl Pairs {
    fn new() -> Self {
        Pairs {
            words: vec![Cell::new(0); SLOTS].into_boxed_slice(),
        }
    }
}

thread_local! {
    static PAIRS_OF_THIS_THREAD: Pairs = Pairs::new();
}

/// `f` with this thread's pairs, for the length of a merge.
pub(super) fn with<T>(f: impl FnOnce(&Pairs) -> T) -> T {
    PAIRS_OF_THIS_THREAD.with(f)
}

impl Pairs {
    /// The token `left` and `right` of `encoding` make, side by side: as kept here, or as
    /// `look_up` finds it from their bytes, then kept.
    #[inline(always)]
    pub(super) fn merged(
        &self,
        encoding: Encoding,
        left: Rank,
        right: Rank,
        look_up: impl FnOnce() -> Option<Rank>,
    ) -> Option<Rank> {
        if u64::from(left.max(right)) >= NO_TOKEN {
            return look_up();
        }
        let key =
            TAKEN | (encoding as u64) << VOCABULARY | u64::from(left) << LEFT | u64::from(right);
        let slot =
            &self.words[(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOT_BITS)) as usize];
        let word = slot.get();
        if word & !(NO_TOKEN << MADE) == key {
            let made = word >> MADE & NO_TOKEN;
            return (made != NO_TOKEN).then_some(made as Rank);
        }
        let made = look_up();
        if let Some(rank) = made.filter(|&rank| u64::from(rank) >= NO_TOKEN) {
            return Some(rank);
        }
        slot.set(key | made.map_or(NO_TOKEN, u64::from) << MADE);
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs() -> Pairs {
        Pairs::new()
    }

    #[test]
    fn the_slots_take_the_documented_64_kb() {
        assert_eq!(std::mem::size_of_val(&*pairs().words), 64 << 10);
    }

    #[test]
    fn a_pair_is_looked_up_once_then_answered_by_its_own_word() {
        let pairs = pairs();
        let o200k = Encoding::O200kBase;
        assert_eq!(pairs.merged(o200k, 1, 2, || Some(300)), Some(300));
        assert_eq!(
            pairs.merged(o200k, 1, 2, || panic!("looked up again")),
            Some(300)
        );
        assert_eq!(pairs.merged(o200k, 2, 1, || None), None);
        assert_eq!(
            pairs.merged(o200k, 2, 1, || panic!("looked up again")),
            None
        );
    }

    #[test]
    fn the_vocabularies_keep_their_own_answers() {
        let pairs = pairs();
        assert_eq!(
            pairs.merged(Encoding::O200kBase, 7, 9, || Some(11)),
            Some(11)
        );
        assert_eq!(pairs.merged(Encoding::Cl100kBase, 7, 9, || None), None);
        // Whichever took the slot, each vocabulary's answer is its own.
        assert_eq!(
            pairs.merged(Encoding::O200kBase, 7, 9, || Some(11)),
            Some(11)
        );
        assert_eq!(pairs.merged(Encoding::Cl100kBase, 7, 9, || None), None);
    }

    #[test]
    fn pairs_that_share_a_slot_push_each_other_out_and_never_answer_for_each_other() {
        let pairs = pairs();
        let o200k = Encoding::O200kBase;
        // More pairs than slots: some share one, and each is still answered with its own.
        for left in 0..3 * SLOTS as Rank {
            assert_eq!(
                pairs.merged(o200k, left, 5, || Some(left + 1)),
                Some(left + 1)
            );
        }
        for left in 0..3 * SLOTS as Rank {
            assert_eq!(
                pairs.merged(o200k, left, 5, || Some(left + 1)),
                Some(left + 1)
            );
        }
    }

    #[test]
    fn ranks_past_the_kept_bits_are_looked_up_every_time() {
        let pairs = pairs();
        let big = NO_TOKEN as Rank;
        let mut looked_up = 0;
        for _ in 0..2 {
            let made = pairs.merged(Encoding::O200kBase, big, 1, || {
                looked_up += 1;
                Some(3)
            });
            assert_eq!(made, Some(3));
        }
        assert_eq!(looked_up, 2);
        let made = pairs.merged(Encoding::O200kBase, 1, 1, || Some(big));
        assert_eq!(made, Some(big));
        assert_eq!(
            pairs.merged(Encoding::O200kBase, 1, 1, || Some(big)),
            Some(big)
        );
    }
}
