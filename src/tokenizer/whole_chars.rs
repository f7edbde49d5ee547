//! The characters a merge may start from whole. A piece of Japanese or Chinese is merged from its
//! bytes, three to a character, and most of its merges only put each character's bytes back
//! together: two of the three merges of an ideograph that is one token. Where the result is
//! provably the same, the merge starts from the character's token instead, with a third of the
//! parts.
//!
//! A character `c` of two or three bytes is taken whole at a place of a piece when:
//! - its bytes alone merge into its token, and `m`, the highest rank of those merges, is known;
//! - no token that holds `c`'s bytes and more ranks below `m` (`" 北京赛车"` is a token of
//!   `o200k_base` ranked below `北`, which is never taken whole);
//! - no token that reaches into `c` ranks below `m` and fits the bytes around it: one that ends
//!   in the first bytes of `c` after the byte before `c`, or that starts with its last bytes
//!   followed by the byte after it (`" \xe6"` is one ranked below `日`'s merges, so `日` after
//!   a space is merged from its bytes).
//!
//! Then the merge of the bytes ends as the merge from the characters does. While `c` is in
//! parts, a pair of them ranked at most `m` can be merged, so a token that reaches into `c`,
//! ranked above `m`, is never merged before `c` is whole, and none ranked below fits. A pair the
//! merge from the characters meets before the merge of the bytes holds `c` whole, so it makes a
//! token ranked above `m`, above every pair the merge of the bytes picks while `c` is in parts.
//! The tests check the merge against tiktoken-rs's at every token that reaches into a
//! character or holds one.
//!
//! The characters and the bytes around them that forbid each are read from the vocabulary as
//! it loads, in one pass with its tables ([`Gathered`]): about 4,700 characters of `o200k_base`,
//! with a table of 128 KB by code point.

use rustc_hash::FxHashMap;
use tiktoken_rs::Rank;

use super::subset_bpe::ByteSet;

/// The first code point the table holds: the first of two bytes.
const FIRST: u32 = 0x80;
/// The code points the table holds: up to the last of three bytes.
const POINTS: usize = 0x1_0000 - FIRST as usize;

/// The characters a merge may start from whole, and where.
pub(super) struct WholeChars {
    /// By code point less [`FIRST`]: 0 for none, else one more than its place in `chars`.
    index: Box<[u16]>,
    chars: Box<[WholeChar]>,
    /// The sets of bytes `chars` name.
    sets: Box<[ByteSet]>,
}

/// A character a merge may take whole: its token, and the sets of bytes before and after it that
/// forbid it, by their place in [`WholeChars::sets`].
#[derive(Clone, Copy)]
struct WholeChar {
    rank: Rank,
    before: u16,
    after: u16,
}

impl WholeChars {
    /// The token of the character at `at` of `piece`, and its length, if a merge of `piece` may
    /// take it whole.
    #[inline(always)]
    pub(super) fn at(&self, piece: &[u8], at: usize) -> Option<(Rank, usize)> {
        let (point, len) = code_point(piece, at)?;
        let index = *self.index.get(point.wrapping_sub(FIRST) as usize)?;
        let char = self.chars.get(usize::from(index).wrapping_sub(1))?;
        let forbids = |set: u16, byte: Option<&u8>| {
            byte.is_some_and(|&byte| self.sets[usize::from(set)].contains(byte))
        };
        let before = at.checked_sub(1).and_then(|before| piece.get(before));
        if forbids(char.before, before) || forbids(char.after, piece.get(at + len)) {
            return None;
        }
        Some((char.rank, len))
    }
}

/// The code point of the character of two or three bytes at `at`, and its length; `None` for
/// another byte or an ill-formed sequence.
#[inline(always)]
fn code_point(piece: &[u8], at: usize) -> Option<(u32, usize)> {
    let continued = |by: usize| {
        let byte = *piece.get(at + by)?;
        (byte & 0xC0 == 0x80).then_some(u32::from(byte & 0x3F))
    };
    match piece[at] {
        lead @ 0xC2..=0xDF => Some((u32::from(lead & 0x1F) << 6 | continued(1)?, 2)),
        lead @ 0xE0..=0xEF => {
            let point = u32::from(lead & 0x0F) << 12 | continued(1)? << 6 | continued(2)?;
            (point >= 0x800).then_some((point, 3))
        }
        _ => None,
    }
}

/// What [`WholeChars`] is read from, gathered token by token as the vocabulary loads.
#[derive(Default)]
pub(super) struct Gathered {
    /// The tokens that are one character of two or three bytes: its code point and rank.
    chars: Vec<(u32, Rank)>,
    /// The least rank of a token that holds a character's bytes and more, by code point.
    held: FxHashMap<u32, Rank>,
    /// The tokens that end in the first bytes of a character after another byte: by those
    /// bytes, that byte and the token's rank.
    ending: FxHashMap<Partial, Vec<(u8, Rank)>>,
    /// The tokens that start with the last bytes of a character before another byte: by those
    /// bytes, that byte and the token's rank.
    starting: FxHashMap<Partial, Vec<(u8, Rank)>>,
}

/// One to three bytes of a character, and their count, in one word.
type Partial = u32;

fn partial(bytes: &[u8]) -> Partial {
    bytes.iter().fold(bytes.len() as u32, |word, &byte| {
        word << 8 | u32::from(byte)
    })
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// How many bytes of `token` belong to a character it holds in part: its first continuation
/// bytes, at most 3, and its last bytes from a lead byte on that are no whole character.
fn parts_of_characters(token: &[u8]) -> (usize, usize) {
    let first = token
        .iter()
        .take(3)
        .take_while(|&&byte| is_continuation(byte))
        .count();
    let tail = token.len().saturating_sub(3);
    let last = (tail..token.len())
        .rev()
        .find(|&at| !is_continuation(token[at]))
        .filter(|&lead| token[lead] >= 0xC0)
        .filter(|&lead| code_point(token, lead).is_none_or(|(_, len)| lead + len != token.len()))
        .map_or(0, |lead| token.len() - lead);
    (first, last)
}

impl Gathered {
    /// Takes in the token `bytes` of rank `rank`.
    pub(super) fn token(&mut self, bytes: &[u8], rank: Rank) {
        if bytes.is_ascii() {
            return;
        }
        for at in 0..bytes.len() {
            match code_point(bytes, at) {
                Some((point, len)) if len == bytes.len() => self.chars.push((point, rank)),
                Some((point, _)) => {
                    let held = self.held.entry(point).or_insert(rank);
                    *held = (*held).min(rank);
                }
                None => {}
            }
        }
        let (first, last) = parts_of_characters(bytes);
        if last > 0 && last < bytes.len() {
            let lead = bytes.len() - last;
            let key = partial(&bytes[lead..]);
            self.ending
                .entry(key)
                .or_default()
                .push((bytes[lead - 1], rank));
        }
        for len in 1..=first.min(bytes.len() - 1) {
            let key = partial(&bytes[..len]);
            self.starting
                .entry(key)
                .or_default()
                .push((bytes[len], rank));
        }
    }

    /// The characters a merge may take whole, by the ranks of the tokens of two bytes (`pairs`,
    /// by the bytes as a big-endian number).
    pub(super) fn whole_chars(self, pairs: &[Rank]) -> WholeChars {
        let mut index = vec![0u16; POINTS].into_boxed_slice();
        let mut chars = Vec::new();
        let mut sets: Vec<ByteSet> = vec![ByteSet::default()];
        let mut set_of = |set: ByteSet| match sets.iter().position(|&kept| kept == set) {
            Some(at) => u16::try_from(at).ok(),
            None => {
                sets.push(set);
                u16::try_from(sets.len() - 1).ok()
            }
        };
        for &(point, rank) in &self.chars {
            // A surrogate's three bytes are no character.
            let Some(char) = char::from_u32(point) else {
                continue;
            };
            let mut bytes = [0; 4];
            let bytes = char.encode_utf8(&mut bytes).as_bytes();
            let Some(highest) = highest_merge(bytes, rank, pairs) else {
                continue;
            };
            if self.held.get(&point).is_some_and(|&held| held < highest) {
                continue;
            }
            let reaching = |tokens: &FxHashMap<Partial, Vec<(u8, Rank)>>, parts: &[&[u8]]| {
                let mut set = ByteSet::default();
                let tokens = parts.iter().filter_map(|part| tokens.get(&partial(part)));
                for &(byte, _) in tokens.flatten().filter(|&&(_, other)| other < highest) {
                    set.insert(byte);
                }
                set
            };
            let (firsts, lasts): (Vec<_>, Vec<_>) =
                (1..bytes.len()).map(|at| bytes.split_at(at)).unzip();
            let before = set_of(reaching(&self.ending, &firsts));
            let after = set_of(reaching(&self.starting, &lasts));
            let (Some(before), Some(after)) = (before, after) else {
                continue;
            };
            let Ok(place) = u16::try_from(chars.len() + 1) else {
                break;
            };
            index[(point - FIRST) as usize] = place;
            chars.push(WholeChar {
                rank,
                before,
                after,
            });
        }
        WholeChars {
            index,
            chars: chars.into_boxed_slice(),
            sets: sets.into_boxed_slice(),
        }
    }
}

/// The highest rank of the merges that make the character `bytes`, of two or three bytes, whose
/// token ranks `rank`, from its bytes alone; `None` if they do not make it.
fn highest_merge(bytes: &[u8], rank: Rank, pairs: &[Rank]) -> Option<Rank> {
    let pair = |at: usize| {
        let rank = pairs[usize::from(u16::from_be_bytes([bytes[at], bytes[at + 1]]))];
        (rank != Rank::MAX).then_some(rank)
    };
    match bytes.len() {
        2 => Some(rank),
        3 => {
            let first = [pair(0), pair(1)].into_iter().flatten().min()?;
            Some(first.max(rank))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use tiktoken_rs::CoreBPE;

    use super::super::pre_tokenizer::pieces;
    use super::super::ranks::Ranks;
    use super::super::Encoding;
    use super::*;

    fn vocabularies() -> [(Encoding, &'static CoreBPE); 2] {
        [
            (Encoding::O200kBase, tiktoken_rs::o200k_base_singleton()),
            (Encoding::Cl100kBase, tiktoken_rs::cl100k_base_singleton()),
        ]
    }

    /// The characters of two or three bytes.
    fn characters() -> Vec<String> {
        (0x80..0x1_0000)
            .filter_map(char::from_u32)
            .map(String::from)
            .collect()
    }

    /// At most `most` of `all`, spread over it.
    fn spread<T: Clone>(all: Vec<T>, most: usize) -> Vec<T> {
        let step = all.len().div_ceil(most).max(1);
        all.into_iter().step_by(step).collect()
    }

    /// The texts where each token of `ranks` that holds a character in part meets it: completed
    /// on each side by characters that hold its bytes there, those a merge may take whole first.
    fn reaching_tokens_completed(ranks: &Ranks, characters: &[String]) -> Vec<String> {
        let whole = ranks.whole_chars();
        let completing = |fits: &dyn Fn(&[u8]) -> bool| {
            let (mut taken, others): (Vec<&String>, Vec<_>) = characters
                .iter()
                .filter(|char| fits(char.as_bytes()))
                .partition(|char| whole.at(char.as_bytes(), 0).is_some());
            taken.extend(others);
            spread(taken, 12)
        };
        let mut texts = Vec::new();
        for (_, token) in ranks.tokens_where(|token| parts_of_characters(token) != (0, 0)) {
            let (first, last) = parts_of_characters(&token);
            let befores: Vec<&[u8]> = match first {
                0 => vec![b""],
                first => completing(&|char| char.len() > first && char.ends_with(&token[..first]))
                    .into_iter()
                    .map(|char| &char.as_bytes()[..char.len() - first])
                    .collect(),
            };
            let afters: Vec<&[u8]> = match last {
                0 => vec![b""],
                last => {
                    let end = &token[token.len() - last..];
                    completing(&|char| char.len() > last && char.starts_with(end))
                        .into_iter()
                        .map(|char| &char.as_bytes()[last..])
                        .collect()
                }
            };
            for before in &befores {
                for after in &afters {
                    texts.extend(String::from_utf8([before, &token[..], after].concat()).ok());
                }
            }
        }
        texts
    }

    /// The texts where each token of `ranks` that holds a character and more is merged: between
    /// two ideographs.
    fn holding_tokens_within_a_phrase(ranks: &Ranks) -> Vec<String> {
        let holds = |token: &[u8]| (0..token.len()).any(|at| code_point(token, at).is_some());
        ranks
            .tokens_where(|token| token.len() > 3 && holds(token))
            .into_iter()
            .filter_map(|(_, token)| String::from_utf8(token).ok())
            .map(|token| format!("的{token}的"))
            .collect()
    }

    #[test]
    fn every_token_that_reaches_into_or_holds_a_character_merges_as_tiktoken_rs_merges_it() {
        let characters = characters();
        for (encoding, bpe) in vocabularies() {
            let (ranks, _) = Ranks::of(encoding, bpe);
            let whole = ranks.whole_chars();
            let reaching = reaching_tokens_completed(&ranks, &characters);
            let holding = holding_tokens_within_a_phrase(&ranks);
            let (mut merged, mut taken_whole) = (0, 0);
            for text in reaching.iter().chain(&holding) {
                for piece in pieces(encoding, text) {
                    let bytes = piece.as_bytes();
                    if ranks.get(bytes).is_some() {
                        continue;
                    }
                    let mut tokens = Vec::new();
                    ranks.encode(bytes, &mut tokens);
                    assert_eq!(
                        tokens,
                        bpe.encode_ordinary(piece),
                        "{encoding:?}: {piece:?}"
                    );
                    merged += 1;
                    taken_whole += piece
                        .char_indices()
                        .filter(|&(at, _)| whole.at(bytes, at).is_some())
                        .count();
                }
            }
            assert!(
                reaching.len() > 1_000,
                "{encoding:?}: {} texts",
                reaching.len()
            );
            assert!(
                holding.len() > 1_000,
                "{encoding:?}: {} texts",
                holding.len()
            );
            assert!(merged > 5_000, "{encoding:?}: {merged} pieces");
            assert!(
                taken_whole > 5_000,
                "{encoding:?}: {taken_whole} taken whole"
            );
        }
    }

    #[test]
    fn a_character_is_taken_whole_unless_a_token_ranked_below_its_merges_reaches_into_it() {
        let bpe = tiktoken_rs::o200k_base_singleton();
        let (ranks, _) = Ranks::of(Encoding::O200kBase, bpe);
        let whole = ranks.whole_chars();
        let rank = |text: &str| ranks.get(text.as_bytes()).expect("a token");
        // `語` ends in bytes that a token ranked below its merges starts with, before the byte
        // 0xe0 (that Thai starts with); before `日`, none.
        assert_eq!(whole.at("語ก".as_bytes(), 0), None);
        assert_eq!(whole.at("語日".as_bytes(), 0), Some((rank("語"), 3)));
        // `" \xe6"` is a token ranked below `日`'s merges, and `日` starts with `\xe6`.
        assert!(ranks
            .get(b" \xe6")
            .is_some_and(|reaching| reaching < rank("日")));
        assert_eq!(whole.at(" 日".as_bytes(), 1), None);
        assert_eq!(whole.at("「日".as_bytes(), 3), Some((rank("日"), 3)));
        assert_eq!(whole.at("日".as_bytes(), 0), Some((rank("日"), 3)));
        // `" 北京赛车"` is a token ranked below `北`'s merges.
        let holding = ranks.get(" 北京赛车".as_bytes());
        assert!(holding.is_some_and(|holding| holding < rank("北")));
        assert_eq!(whole.at("北".as_bytes(), 0), None);
        // Two bytes: `é`.
        assert_eq!(whole.at("café".as_bytes(), 3), Some((rank("é"), 2)));
        // No character of four bytes, no ill-formed one, no byte within one.
        assert_eq!(whole.at("😀".as_bytes(), 0), None);
        assert_eq!(whole.at(b"\xe5\x8c", 0), None);
        assert_eq!(whole.at(b"\xe0\x9f\xbf", 0), None, "U+07FF in three bytes");
        assert_eq!(whole.at("北".as_bytes(), 1), None);
    }

    #[test]
    fn a_token_of_a_surrogate_s_three_bytes_is_no_character() {
        let mut gathered = Gathered::default();
        gathered.token(b"\xed\xa0\x80", 7);
        // Every two bytes a token, so that the three would merge.
        let whole = gathered.whole_chars(&[0; 1 << 16]);
        assert_eq!(whole.at(b"\xed\xa0\x80", 0), None);
    }
}
