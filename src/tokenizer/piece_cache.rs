//! The tokens of the pieces a thread merged last, kept from one text to the next: real text
//! repeats its pieces (a listing's folder names, prose's words that are no one token, a JSON's
//! keys), and a piece found here costs one hash and one compare instead of a merge.
//!
//! Direct-mapped, with the piece's bytes as the key and eviction by overwrite, and one per
//! thread, so that no lock is taken: the remembered tokens are those of the last piece that
//! hashed to a slot, merged in full, and a piece is only ever answered by a slot that holds
//! exactly its bytes, of the same vocabulary.

use std::cell::RefCell;
use std::hash::Hasher;

use rustc_hash::FxHasher;
use tiktoken_rs::Rank;

use super::Encoding;

/// Pieces of up to this many bytes are kept; longer ones are merged each time.
pub(super) const KEY_MAX: usize = 96;

/// The tokens of a piece of up to this many are kept; of a piece of more, its count alone.
const TOKENS_MAX: usize = 15;

/// The number of slots: 1.3 MB for each thread that counts, with [`KEY_MAX`] and [`TOKENS_MAX`].
const SLOTS: usize = 8192;

// A piece's length and its number of tokens, at most its length, are kept in bytes.
const _: () = assert!(KEY_MAX <= u8::MAX as usize);

#[derive(Clone, Copy)]
struct Slot {
    /// The vocabulary of the piece held, [`NO_ONE`] where the slot is empty.
    owner: u8,
    len: u8,
    /// The piece's number of tokens.
    count: u8,
    key: [u8; KEY_MAX],
    /// Its tokens, if there are at most [`TOKENS_MAX`].
    tokens: [Rank; TOKENS_MAX],
}

const NO_ONE: u8 = u8::MAX;

const EMPTY: Slot = Slot {
    owner: NO_ONE,
    len: 0,
    count: 0,
    key: [0; KEY_MAX],
    tokens: [0; TOKENS_MAX],
};

thread_local! {
    static SLOTS_OF_THIS_THREAD: RefCell<Box<[Slot]>> = RefCell::new(vec![EMPTY; SLOTS].into_boxed_slice());
}

/// The number of tokens of `piece`, at most [`KEY_MAX`] bytes, in `encoding`: as kept, or as
/// `merge` pushes them on a vector, then kept.
pub(super) fn count(encoding: Encoding, piece: &[u8], merge: impl FnOnce(&mut Vec<Rank>)) -> usize {
    with_slot(encoding, piece, |slot| match slot {
        Found(slot) => usize::from(slot.count),
        Vacant(slot) => {
            let mut tokens = Vec::with_capacity(piece.len());
            merge(&mut tokens);
            keep(slot, encoding, piece, &tokens);
            tokens.len()
        }
    })
}

/// Pushes the tokens of `piece`, at most [`KEY_MAX`] bytes, in `encoding` on `tokens`: as kept,
/// or as `merge` pushes them, then kept.
pub(super) fn encode(
    encoding: Encoding,
    piece: &[u8],
    tokens: &mut Vec<Rank>,
    merge: impl FnOnce(&mut Vec<Rank>),
) {
    with_slot(encoding, piece, |slot| match slot {
        Found(slot) if usize::from(slot.count) <= TOKENS_MAX => {
            tokens.extend_from_slice(&slot.tokens[..usize::from(slot.count)]);
        }
        Found(slot) | Vacant(slot) => {
            let start = tokens.len();
            merge(tokens);
            keep(slot, encoding, piece, &tokens[start..]);
        }
    })
}

enum Lookup<'a> {
    /// The slot holds `piece`.
    Found(&'a mut Slot),
    /// The slot `piece` hashes to, holding another piece or none.
    Vacant(&'a mut Slot),
}
use Lookup::{Found, Vacant};

fn with_slot<T>(encoding: Encoding, piece: &[u8], f: impl FnOnce(Lookup<'_>) -> T) -> T {
    debug_assert!(piece.len() <= KEY_MAX);
    let mut hasher = FxHasher::default();
    // The piece alone: its bytes in the other vocabulary take the same slot, told apart by
    // its owner.
    hasher.write(piece);
    let hash = hasher.finish();
    let at = ((hash ^ (hash >> 32)) as usize) & (SLOTS - 1);
    SLOTS_OF_THIS_THREAD.with(|slots| {
        let mut slots = slots.borrow_mut();
        let slot = &mut slots[at];
        if slot.owner == encoding as u8
            && usize::from(slot.len) == piece.len()
            && slot.key[..piece.len()] == *piece
        {
            f(Found(slot))
        } else {
            f(Vacant(slot))
        }
    })
}

fn keep(slot: &mut Slot, encoding: Encoding, piece: &[u8], tokens: &[Rank]) {
    slot.owner = encoding as u8;
    slot.len = piece.len() as u8;
    slot.count = tokens.len() as u8;
    slot.key[..piece.len()].copy_from_slice(piece);
    if tokens.len() <= TOKENS_MAX {
        slot.tokens[..tokens.len()].copy_from_slice(tokens);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A merge that must not run: the piece was kept.
    fn kept(_: &mut Vec<Rank>) {
        panic!("merged again");
    }

    #[test]
    fn a_thread_keeps_the_1_3_mb_the_docs_say() {
        assert_eq!(std::mem::size_of::<Slot>() * SLOTS, 1_310_720);
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
        assert_eq!(count(Encoding::O200kBase, piece, merge), 3);
        assert_eq!(merges, 1);
        assert_eq!(count(Encoding::O200kBase, piece, kept), 3);
        let mut out = vec![9];
        encode(Encoding::O200kBase, piece, &mut out, kept);
        assert_eq!(out, [9, 1, 2, 3]);
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
    fn slots_overwritten_by_many_pieces_still_answer_each_exactly() {
        // Far more pieces than slots, each with tokens of its own: every answer is its own.
        let pieces: Vec<String> = (0..3 * SLOTS).map(|i| format!(" p{i}")).collect();
        let tokens_of = |i: usize| [i as Rank, i as Rank + 1];
        for round in 0..2 {
            for (i, piece) in pieces.iter().enumerate() {
                let mut out = Vec::new();
                encode(Encoding::O200kBase, piece.as_bytes(), &mut out, |out| {
                    out.extend(tokens_of(i))
                });
                assert_eq!(out, tokens_of(i), "{piece}, round {round}");
            }
        }
    }
}
