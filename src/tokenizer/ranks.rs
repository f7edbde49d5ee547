//! A vocabulary's ranks by their bytes, and the byte-pair merge of a piece, for the pieces the
//! hand-written pre-tokenizer finds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

use super::pair_cache::{self, Pairs};
use super::whole_chars::{Gathered, WholeChars};
use super::Encoding;

/// The pieces up to this many bytes are merged here; longer ones go to `Tiktoken`'s paths for
/// long pieces (white space, runs, words of few bytes), else to tiktoken-rs: the heap merge below
/// is checked against it up to 1,000 bytes only, and is slower than it on pieces of a million
/// bytes (one letter or `-` repeated, or random letters).
pub(super) const MERGED_HERE: usize = 1024;

/// The pieces up to this many bytes are merged by scanning their pairs; longer ones with a heap.
const SHORT: usize = 48;
// A short piece's part starts are kept in bytes.
const _: () = assert!(SHORT < 256);

/// The ranks of a vocabulary's tokens, by their bytes: those of one and two bytes in tables;
/// those of up to 15 bytes by their bytes and length packed in one or two words, for a merge
/// looks up mostly those, and a whole piece of prose or CJK is mostly one of those; the longer
/// ones by their bytes, kept in one block.
///
/// They add about 8 MB to a process's peak for `o200k_base`, besides tiktoken-rs's own maps
/// (`examples/glob` in a release build, `/usr/bin/time -f %M`: a peak RSS of 62.8 MB, against
/// 65.1 MB when the tokens of 8 to 15 bytes were kept in the map of the longer ones, and 54.5 MB
/// without these tables).
pub(super) struct Ranks {
    /// The vocabulary, which the thread's [`pair_cache`] keeps its merges under.
    encoding: Encoding,
    /// The ranks of the tokens of two bytes, by the bytes as a big-endian number: a merge's
    /// first look-ups, without a hash.
    pairs: Box<[Rank]>,
    /// The rank of each byte's token: every byte is one in a byte-level vocabulary.
    bytes: [Rank; 256],
    short: Table<u64>,
    middle: Table<MiddleKey>,
    long: FxHashMap<&'static [u8], Rank>,
    /// The characters a merge may start from whole.
    whole: WholeChars,
}

/// A key of a [`Table`]: bytes packed in words, never the default, which marks a slot empty.
trait Packed: Copy + Default + Eq {
    /// The key's bits mixed into one word, to pick its slot.
    fn word(self) -> u64;
}

impl Packed for u64 {
    fn word(self) -> u64 {
        self
    }
}

/// 8 to 15 bytes: the first eight, and the rest [`packed`] with its length, the top bit set so
/// that the key of 8 bytes is not the default.
type MiddleKey = (u64, u64);

fn middle_key(bytes: &[u8]) -> MiddleKey {
    let (first, rest) = bytes.split_first_chunk::<8>().expect("8 bytes or more");
    (u64::from_le_bytes(*first), packed(rest) | 1 << 63)
}

impl Packed for MiddleKey {
    fn word(self) -> u64 {
        self.0 ^ self.1.rotate_left(29)
    }
}

/// The ranks of tokens by their packed bytes, in one open-addressed table whose slots hold key
/// and rank side by side: a look-up reads one cache line where a map that keeps its control
/// bytes apart, and its keys' bytes apart again, reads two or three, and most of a count's
/// look-ups miss the cache.
struct Table<K> {
    /// `(packed bytes, rank)`, the default key where empty. Linear probing from the slot the
    /// key hashes to.
    slots: Box<[(K, Rank)]>,
    /// The bits of a slot's index.
    bits: u32,
}

impl<K: Packed> Table<K> {
    fn new(tokens: Vec<(K, Rank)>) -> Self {
        // At most 70% full, so that a miss ends within a few slots.
        let bits = (tokens.len() * 10 / 7 + 1)
            .next_power_of_two()
            .trailing_zeros();
        let mut table = Table {
            slots: vec![(K::default(), 0); 1 << bits].into_boxed_slice(),
            bits,
        };
        for (key, rank) in tokens {
            let mut at = table.slot(key);
            while table.slots[at].0 != K::default() {
                at = (at + 1) & (table.slots.len() - 1);
            }
            table.slots[at] = (key, rank);
        }
        table
    }

    /// The slot `key` hashes to: the top bits of its product with an odd constant.
    #[inline(always)]
    fn slot(&self, key: K) -> usize {
        (key.word().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    #[inline(always)]
    fn get(&self, key: K) -> Option<Rank> {
        let mut at = self.slot(key);
        loop {
            match self.slots[at] {
                (empty, _) if empty == K::default() => return None,
                (found, rank) if found == key => return Some(rank),
                _ => at = (at + 1) & (self.slots.len() - 1),
            }
        }
    }

    /// The keys held, with their ranks.
    fn iter(&self) -> impl Iterator<Item = (K, Rank)> + '_ {
        self.slots
            .iter()
            .copied()
            .filter(|&(key, _)| key != K::default())
    }
}

/// `bytes`, at most 7, and their length, in one word: the bytes little-endian, the length in the
/// top byte. Read as two overlapping loads, which put the same byte in the same place, rather
/// than copied byte by byte.
#[inline]
pub(super) fn packed(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!(len < 8);
    let word = if len >= 4 {
        let low = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let high = u32::from_le_bytes([
            bytes[len - 4],
            bytes[len - 3],
            bytes[len - 2],
            bytes[len - 1],
        ]);
        u64::from(low) | u64::from(high) << ((len - 4) * 8)
    } else if len > 0 {
        u64::from(bytes[0])
            | u64::from(bytes[len / 2]) << (len / 2 * 8)
            | u64::from(bytes[len - 1]) << ((len - 1) * 8)
    } else {
        0
    };
    word | (len as u64) << 56
}

/// [`packed`] of the `len` bytes, 1 to 7, at `at` of `text`: one read of eight bytes and a mask
/// where eight follow, with no branch on `len`.
#[inline(always)]
pub(super) fn packed_at(text: &[u8], at: usize, len: usize) -> u64 {
    debug_assert!((1..8).contains(&len));
    match text.get(at..at + 8) {
        Some(&[a, b, c, d, e, f, g, h]) => {
            let bytes = u64::from_le_bytes([a, b, c, d, e, f, g, h]) & u64::MAX >> (64 - 8 * len);
            bytes | (len as u64) << 56
        }
        _ => packed(&text[at..at + len]),
    }
}

impl Ranks {
    /// The ranks of `bpe`'s tokens, read back from it, and the byte length of each, by rank.
    pub(super) fn of(encoding: Encoding, bpe: &CoreBPE) -> (Ranks, Vec<u8>) {
        let mut token_len = Vec::new();
        let mut pairs = vec![Rank::MAX; 1 << 16].into_boxed_slice();
        let mut byte_ranks = [Rank::MAX; 256];
        // The tokens of up to 15 bytes, packed; the longer ones' bytes, one after another.
        let (mut short, mut middle) = (Vec::new(), Vec::new());
        let (mut long, mut long_bytes) = (Vec::new(), Vec::new());
        let mut gathered = Gathered::default();
        let mut rank: Rank = 0;
        let mut misses = 0;
        // Ranks are dense up to the special tokens, which sit a few places past the end.
        while misses < 64 {
            match bpe.decode_bytes(&[rank]) {
                Ok(bytes) => {
                    token_len.resize(rank as usize, 0);
                    token_len.push(u8::try_from(bytes.len()).unwrap_or(u8::MAX));
                    if let [byte] = bytes[..] {
                        byte_ranks[usize::from(byte)] = rank;
                    }
                    if let [first, second] = bytes[..] {
                        pairs[usize::from(u16::from_be_bytes([first, second]))] = rank;
                    }
                    gathered.token(&bytes, rank);
                    if bytes.len() < 8 {
                        short.push((packed(&bytes), rank));
                    } else if bytes.len() < 16 {
                        middle.push((middle_key(&bytes), rank));
                    } else {
                        long.push((rank, long_bytes.len(), bytes.len()));
                        long_bytes.extend_from_slice(&bytes);
                    }
                    misses = 0;
                }
                Err(_) => misses += 1,
            }
            rank += 1;
        }
        // Held for the process, as the vocabulary is.
        let long_bytes: &'static [u8] = long_bytes.leak();
        let (short, middle) = (Table::new(short), Table::new(middle));
        let long: FxHashMap<&'static [u8], Rank> = long
            .into_iter()
            .map(|(rank, at, len)| (&long_bytes[at..at + len], rank))
            .collect();
        debug_assert!(!byte_ranks.contains(&Rank::MAX), "a byte with no token");
        let whole = gathered.whole_chars(&pairs);
        let ranks = Ranks {
            encoding,
            pairs,
            bytes: byte_ranks,
            short,
            middle,
            long,
            whole,
        };
        (ranks, token_len)
    }

    /// The tokens whose bytes `keep` keeps, with their ranks, in rank order.
    pub(super) fn tokens_where(&self, keep: impl Fn(&[u8]) -> bool) -> Vec<(Rank, Vec<u8>)> {
        let unpacked = |key: u64| key.to_le_bytes()[..(key >> 56 & 0x7F) as usize].to_vec();
        let short = self.short.iter().map(|(key, rank)| (rank, unpacked(key)));
        let middle = self.middle.iter().map(|((first, rest), rank)| {
            let mut bytes = first.to_le_bytes().to_vec();
            bytes.extend(unpacked(rest));
            (rank, bytes)
        });
        let long = self
            .long
            .iter()
            .filter(|(bytes, _)| keep(bytes))
            .map(|(&bytes, &rank)| (rank, bytes.to_vec()));
        let mut tokens: Vec<(Rank, Vec<u8>)> = short
            .chain(middle)
            .filter(|(_, bytes)| keep(bytes))
            .chain(long)
            .collect();
        tokens.sort_unstable_by_key(|&(rank, _)| rank);
        tokens
    }

    /// The rank of the token `bytes` are, if they are one.
    #[inline(always)]
    pub(super) fn get(&self, bytes: &[u8]) -> Option<Rank> {
        match bytes[..] {
            [byte] => return Some(self.bytes[usize::from(byte)]),
            [first, second] => {
                let rank = self.pairs[usize::from(u16::from_be_bytes([first, second]))];
                return (rank != Rank::MAX).then_some(rank);
            }
            _ => {}
        }
        if bytes.len() < 8 {
            self.short.get(packed(bytes))
        } else if bytes.len() < 16 {
            self.middle.get(middle_key(bytes))
        } else {
            self.get_long(bytes)
        }
    }

    /// [`get`](Self::get) for 16 bytes or more, kept apart so that the rest inlines.
    #[inline(never)]
    fn get_long(&self, bytes: &[u8]) -> Option<Rank> {
        self.long.get(bytes).copied()
    }

    /// The tokens of `piece`, at most [`MERGED_HERE`] bytes, that is not one token (its callers
    /// have looked it up whole), pushed on `tokens`: its bytes merged pair by pair, the pair of
    /// the lowest rank first, the leftmost of equal ones, as tiktoken merges. Whether two parts
    /// make a token is asked of the thread's [`pair_cache`] first.
    pub(super) fn encode(&self, piece: &[u8], tokens: &mut Vec<Rank>) {
        pair_cache::with(|pairs| {
            if piece.len() <= SHORT {
                self.encode_short(pairs, piece, tokens);
            } else {
                self.encode_long(pairs, piece, tokens);
            }
        });
    }

    /// The number of tokens of `piece`, at most [`MERGED_HERE`] bytes, that is not one token.
    pub(super) fn count(&self, piece: &[u8]) -> usize {
        let mut tokens = Vec::new();
        self.encode(piece, &mut tokens);
        tokens.len()
    }

    /// The token the parts `left` and `right`, whose bytes are `bytes`, make, if any.
    #[inline(always)]
    fn merged(&self, pairs: &Pairs, left: Rank, right: Rank, bytes: &[u8]) -> Option<Rank> {
        pairs.merged(self.encoding, left, right, || self.get(bytes))
    }

    /// [`merged`](Self::merged) for a merge's first pairs: two bytes from their table, which a
    /// thread's first merges find faster than its pair cache, and without filling it.
    #[inline(always)]
    fn first_pair(&self, pairs: &Pairs, left: Rank, right: Rank, bytes: &[u8]) -> Option<Rank> {
        if bytes.len() == 2 {
            self.get(bytes)
        } else {
            self.merged(pairs, left, right, bytes)
        }
    }

    /// The characters a merge may start from whole.
    #[cfg(test)]
    pub(super) fn whole_chars(&self) -> &WholeChars {
        &self.whole
    }

    /// The part a merge of `piece` starts from at `at`, and its length: the token of the
    /// character there if the merge may take it whole ([`WholeChars`]), else its byte's.
    #[inline(always)]
    fn first_part(&self, piece: &[u8], at: usize) -> (Rank, usize) {
        let byte = piece[at];
        if byte >= 0xC2 {
            if let Some(whole) = self.whole.at(piece, at) {
                return whole;
            }
        }
        (self.bytes[usize::from(byte)], 1)
    }

    /// [`encode`](Self::encode) of a piece of more than [`SHORT`] bytes: the pairs kept in a
    /// heap, the parts in a list linked both ways, each with its token and the rank of the pair
    /// it begins, by which a pair popped that has changed since it was pushed is known.
    fn encode_long(&self, pairs: &Pairs, piece: &[u8], tokens: &mut Vec<Rank>) {
        let len = piece.len();
        let mut parts = self.first_parts(pairs, piece);
        let pair = |parts: &[Part], at: usize| {
            let (part, next) = (parts[at], parts.get(parts[at].next)?);
            let bytes = &piece[at..next.next];
            self.merged(pairs, part.token, next.token, bytes)
        };
        // The pairs by rank, then start, in one word each.
        let mut heap: BinaryHeap<Reverse<u64>> = parts
            .iter()
            .enumerate()
            .filter_map(|(at, part)| Some(Reverse(u64::from(part.pair?) << 32 | at as u64)))
            .collect();
        while let Some(Reverse(popped)) = heap.pop() {
            let (rank, at) = ((popped >> 32) as Rank, popped as u32 as usize);
            if parts[at].pair != Some(rank) {
                continue;
            }
            let gone = parts[at].next;
            parts[gone].pair = None;
            parts[at].token = rank;
            parts[at].next = parts[gone].next;
            let next = parts[at].next;
            if let Some(next) = parts.get_mut(next) {
                next.previous = at;
            }
            for at in [parts[at].previous, at] {
                if at < len {
                    parts[at].pair = pair(&parts, at);
                    if let Some(rank) = parts[at].pair {
                        heap.push(Reverse(u64::from(rank) << 32 | at as u64));
                    }
                }
            }
        }
        let mut at = 0;
        while at < len {
            tokens.push(parts[at].token);
            at = parts[at].next;
        }
    }

    /// The parts a long piece's merge starts from, linked both ways, each with the pair it
    /// begins: a byte each, or a character taken whole. By the part's start; the piece's length
    /// ends the list. The bytes within a character taken whole start no part, and are never
    /// reached.
    #[inline(always)]
    fn first_parts(&self, pairs: &Pairs, piece: &[u8]) -> Vec<Part> {
        let len = piece.len();
        let unreached = Part {
            next: len,
            previous: usize::MAX,
            token: Rank::MAX,
            pair: None,
        };
        let mut parts = vec![unreached; len];
        let (mut at, mut previous) = (0, usize::MAX);
        while at < len {
            let (token, part_len) = self.first_part(piece, at);
            parts[at] = Part {
                next: at + part_len,
                previous,
                token,
                pair: None,
            };
            (previous, at) = (at, at + part_len);
        }
        let mut at = 0;
        while at < len {
            let next = parts[at].next;
            if let Some(&Part {
                next: end, token, ..
            }) = parts.get(next)
            {
                let made = self.first_pair(pairs, parts[at].token, token, &piece[at..end]);
                parts[at].pair = made;
            }
            at = next;
        }
        parts
    }

    /// [`encode`](Self::encode) of a piece of at most [`SHORT`] bytes: the same merge, by
    /// scanning all the pairs at each step, in arrays on the stack, each part with its token.
    fn encode_short(&self, pairs: &Pairs, piece: &[u8], tokens: &mut Vec<Rank>) {
        debug_assert!(piece.len() <= SHORT);
        let len = piece.len();
        // Each part: the rank of the pair it begins (`Rank::MAX` where it is no token), its
        // token and its start; after the last, the piece's end. One array, so that a merge moves
        // the parts after it once.
        let mut part = [ShortPart::default(); SHORT + 1];
        let (mut parts, mut at) = (0, 0);
        while at < len {
            let (token, part_len) = self.first_part(piece, at);
            part[parts] = ShortPart {
                pair: Rank::MAX,
                token,
                start: at as u8,
            };
            (parts, at) = (parts + 1, at + part_len);
        }
        part[parts] = ShortPart {
            pair: Rank::MAX,
            token: Rank::MAX,
            start: len as u8,
        };
        for i in 0..parts.saturating_sub(1) {
            let bytes = &piece[usize::from(part[i].start)..usize::from(part[i + 2].start)];
            let made = self.first_pair(pairs, part[i].token, part[i + 1].token, bytes);
            part[i].pair = made.unwrap_or(Rank::MAX);
        }
        loop {
            // The pair of the lowest rank, the leftmost of equal ones.
            let (mut rank, mut i) = (Rank::MAX, 0);
            for (at, part) in part[..parts.saturating_sub(1)].iter().enumerate() {
                if part.pair < rank {
                    (rank, i) = (part.pair, at);
                }
            }
            if rank == Rank::MAX {
                break;
            }
            part[i].token = rank;
            part.copy_within(i + 2..=parts, i + 1);
            parts -= 1;
            // The pairs the new part ends and begins; the last part begins none.
            for i in [i.wrapping_sub(1), i].into_iter().filter(|&i| i < parts) {
                part[i].pair = if i + 1 < parts {
                    self.short_pair(pairs, piece, &part, i)
                } else {
                    Rank::MAX
                };
            }
        }
        tokens.extend(part[..parts].iter().map(|part| part.token));
    }

    /// The rank of the pair that part `i` of `piece` begins in [`encode_short`](Self::encode_short),
    /// `Rank::MAX` for none: a method, not a closure, so that it is inlined.
    #[inline(always)]
    fn short_pair(&self, pairs: &Pairs, piece: &[u8], part: &[ShortPart], i: usize) -> Rank {
        let bytes = &piece[usize::from(part[i].start)..usize::from(part[i + 2].start)];
        let made = self.merged(pairs, part[i].token, part[i + 1].token, bytes);
        made.unwrap_or(Rank::MAX)
    }
}

/// A part of a piece being merged by [`Ranks::encode_short`].
#[derive(Clone, Copy, Default)]
struct ShortPart {
    pair: Rank,
    token: Rank,
    start: u8,
}

/// A part of a piece being merged by [`Ranks::encode_long`], at its start.
#[derive(Clone, Copy)]
struct Part {
    /// The next part's start, or the piece's length.
    next: usize,
    /// The previous part's start, `usize::MAX` for the first.
    previous: usize,
    token: Rank,
    /// The rank of the token this part and the next make; `None` if they make none, or if the
    /// part was merged into the one before it.
    pair: Option<Rank>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_is_the_bytes_and_the_length_in_one_word() {
        let bytes = [0x61, 0xff, 0x00, 0x80, 0x7f, 0x01, 0xe3];
        for len in 0..8 {
            let mut word = [0; 8];
            word[..len].copy_from_slice(&bytes[..len]);
            word[7] = len as u8;
            assert_eq!(
                packed(&bytes[..len]),
                u64::from_le_bytes(word),
                "{len} bytes"
            );
        }
    }

    #[test]
    fn every_token_has_its_rank_and_other_bytes_none() {
        let bpe = tiktoken_rs::o200k_base_singleton();
        let (ranks, token_len) = Ranks::of(Encoding::O200kBase, bpe);
        for rank in 0..token_len.len() as Rank {
            if let Ok(bytes) = bpe.decode_bytes(&[rank]) {
                assert_eq!(ranks.get(&bytes), Some(rank), "{bytes:?}");
            }
        }
        for bytes in [
            &b"\xff\xfe\xfd"[..],
            b"qqqqqqq",
            b"zzxqzzxqzzxq",
            b"\x00\x01",
            b"zzxqzzxq",
            b"zzxqzzxqzzxqzzx",
            b"zzxqzzxqzzxqzzxq",
        ] {
            assert_eq!(ranks.get(bytes), None, "{bytes:?}");
        }
    }

    #[test]
    fn pieces_and_their_short_windows_merge_as_tiktoken_rs_merges_them() {
        let bpe = tiktoken_rs::o200k_base_singleton();
        let (ranks, _) = Ranks::of(Encoding::O200kBase, bpe);
        let mut state = 1u64;
        let mut random = |alphabet: &[char], len: usize| -> String {
            (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect()
        };
        let mut pieces = vec![
            "設定ファイルの読み込みはツールごとの上限が適用されますエラーが発生した場合".to_owned(),
            "a".repeat(1000),
            "ab".repeat(300),
        ];
        for len in [49, 100, 300, 1000] {
            pieces.push(random(&['a', 'b', 'c', 'x', 'z', 'q'], len));
            pieces.push(random(
                &['日', '本', '語', 'の', 'テ', 'キ', 'ス', 'ト'],
                len / 3,
            ));
            pieces.push(random(&['\u{301}', 'é', 'ß', 'ǅ'], len / 2));
        }
        for piece in &pieces {
            let bytes = piece.as_bytes();
            assert_eq!(ranks.get(bytes), None, "{piece} is merged, not looked up");
            let mut tokens = Vec::new();
            ranks.encode(bytes, &mut tokens);
            assert_eq!(tokens, bpe.encode_ordinary(piece), "{piece}");
            // Its windows of up to SHORT bytes, by the merge of short pieces and by the heap's.
            let ends = (1..=piece.len()).filter(|&end| piece.is_char_boundary(end));
            for end in ends.filter(|&end| end > SHORT / 2) {
                let from = (end.saturating_sub(SHORT)..end)
                    .find(|&from| piece.is_char_boundary(from))
                    .unwrap_or(0);
                let window = &piece[from..end];
                if ranks.get(window.as_bytes()).is_some() {
                    continue; // one token, looked up before any merge
                }
                let (mut short, mut heap) = (Vec::new(), Vec::new());
                pair_cache::with(|pairs| {
                    ranks.encode_short(pairs, window.as_bytes(), &mut short);
                    ranks.encode_long(pairs, window.as_bytes(), &mut heap);
                });
                assert_eq!(short, bpe.encode_ordinary(window), "{window}");
                assert_eq!(heap, short, "{window}");
            }
        }
    }
}
