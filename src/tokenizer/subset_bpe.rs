//! The exact BPE of a long piece made of few distinct bytes, in time linear in the piece: over
//! the vocabulary's tokens made of those bytes alone, which are all such a piece can merge into.
//!
//! A piece merges only into tokens that are parts of it, and each of those merges from tokens
//! that are parts of it in turn; so the tokens made of the piece's bytes, in the vocabulary's
//! rank order, merge it the same way, pair by pair, as the whole vocabulary does. Over so few
//! tokens, bpe's backtracking encoder builds its tables at once and encodes in linear time
//! (tiktoken-rs's merge is quadratic in a piece's length).

use std::sync::{Arc, Mutex};

use bpe::byte_pair_encoding::BytePairEncoding;
use tiktoken_rs::Rank;

use super::ranks::Ranks;

/// A set of bytes.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ByteSet([u64; 4]);

impl ByteSet {
    pub(super) fn insert(&mut self, byte: u8) {
        self.0[usize::from(byte >> 6)] |= 1 << (byte & 63);
    }

    pub(super) fn contains(&self, byte: u8) -> bool {
        self.0[usize::from(byte >> 6)] & 1 << (byte & 63) != 0
    }

    /// The bytes of `bytes`, or `None` past `most` distinct ones.
    pub(super) fn of(bytes: &[u8], most: usize) -> Option<Self> {
        let mut set = ByteSet::default();
        let mut distinct = 0;
        for &byte in bytes {
            if !set.contains(byte) {
                distinct += 1;
                if distinct > most {
                    return None;
                }
                set.insert(byte);
            }
        }
        Some(set)
    }
}

/// The BPE of a vocabulary's tokens made of a set of bytes alone.
pub(super) struct SubsetBpe {
    bpe: BytePairEncoding,
    /// The vocabulary's rank of each of `bpe`'s tokens.
    ranks: Vec<Rank>,
}

impl SubsetBpe {
    /// The BPE of the tokens of `ranks` made of `bytes` alone.
    pub(super) fn new(ranks: &Ranks, bytes: ByteSet) -> Self {
        let (ranks, tokens): (Vec<Rank>, Vec<Vec<u8>>) = ranks
            .tokens_where(|token| token.iter().all(|&byte| bytes.contains(byte)))
            .into_iter()
            .unzip();
        SubsetBpe {
            bpe: BytePairEncoding::from_dictionary(tokens, None),
            ranks,
        }
    }

    /// The tokens of one piece of the pre-tokenizer made of the set's bytes.
    pub(super) fn encode(&self, piece: &[u8]) -> Vec<Rank> {
        self.bpe
            .encode_via_backtracking(piece)
            .into_iter()
            .map(|token| self.ranks[token as usize])
            .collect()
    }
}

/// The BPEs built for the byte sets of the last long pieces: a long piece of few bytes is often
/// one of many alike.
#[derive(Default)]
pub(super) struct SubsetBpes(Mutex<Vec<(ByteSet, Arc<SubsetBpe>)>>);

impl SubsetBpes {
    /// How many are kept: each is a few dozen tokens.
    const KEPT: usize = 64;

    /// The BPE of `bytes`, kept or built by `build`.
    pub(super) fn get(&self, bytes: ByteSet, build: impl FnOnce() -> SubsetBpe) -> Arc<SubsetBpe> {
        let kept = |bpes: &Vec<(ByteSet, Arc<SubsetBpe>)>| {
            bpes.iter()
                .find(|(set, _)| *set == bytes)
                .map(|(_, bpe)| Arc::clone(bpe))
        };
        if let Some(bpe) = kept(&self.0.lock().unwrap_or_else(|poison| poison.into_inner())) {
            return bpe;
        }
        // Built outside the lock: another thread may build the same one meanwhile, and either
        // is exact.
        let bpe = Arc::new(build());
        let mut bpes = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        if bpes.len() == Self::KEPT {
            bpes.remove(0);
        }
        bpes.push((bytes, Arc::clone(&bpe)));
        bpe
    }
}
