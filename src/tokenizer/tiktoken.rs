//! The tiktoken-rs backend.

use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use tiktoken_rs::{CoreBPE, Rank};

use crate::json::walk::span_of;

use super::piece_cache;
use super::pre_tokenizer::pieces;
use super::ranks::{Ranks, MERGED_HERE};
use super::short_piece_cache::{ShortKey, SHORT};
use super::subset_bpe::{ByteSet, SubsetBpe, SubsetBpes};
use super::white_space::{runs, white_space_bytes};
use super::{
    count_edited_from_last_piece, count_long_run, floor_char_boundary, prefix_over, sum_within,
    Encoding, LongRun, Mark, Prefix, SegmentCut, Tokenizer,
};

/// Texts are encoded in chunks of about this many bytes, split where the pre-tokenizer splits,
/// so that no more than one chunk's tokens are held at a time.
const CHUNK: usize = 64 * 1024;

/// Whether `chunk` reads as base64: its first KiB is all of base64's alphabet and line breaks.
/// Its pieces are short and seldom the same, so that each look-up in a grown table waits on
/// memory ([`Tiktoken::count_chunk_ahead`]); other text repeats its pieces, found in the CPU's
/// caches.
fn is_base64(chunk: &str) -> bool {
    let start = &chunk.as_bytes()[..chunk.len().min(1024)];
    start.iter().all(|&byte| {
        byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=' | b'\r' | b'\n')
    })
}

/// The pieces [`Tiktoken::count_chunk_ahead`] takes at a time.
const AHEAD: usize = 32;

/// Texts of this many bytes and more are counted on every core.
const PARALLEL_FROM: usize = 4 << 20;

/// A word piece (one that ends in a letter) of [`FEW_BYTES_FROM`] bytes or more with at most this
/// many distinct bytes is encoded by the linear BPE of the vocabulary's tokens made of them: a
/// few dozen tokens, built in milliseconds. bpe's backtracking encoder is fast on such words, but
/// slow on runs of some punctuation (a second or more a MB of `-`), which tiktoken-rs merges
/// faster; and on a shorter piece, tiktoken-rs's merge costs less than a build.
const FEW_BYTES: usize = 4;
const FEW_BYTES_FROM: usize = 64 * 1024;

/// The bytes of `piece` if it is a word of [`FEW_BYTES_FROM`] bytes or more made of at most
/// [`FEW_BYTES`] distinct ones.
fn few_bytes_word(piece: &str) -> Option<ByteSet> {
    if piece.len() < FEW_BYTES_FROM || !piece.chars().next_back().is_some_and(char::is_alphabetic) {
        return None;
    }
    ByteSet::of(piece.as_bytes(), FEW_BYTES)
}

/// The tiktoken-rs backend: exact counts, one encoding per cut, the default.
///
/// Its vocabularies are tiktoken-rs's. A text is split into pieces by a pre-tokenizer written
/// for these two vocabularies, not by tiktoken-rs's regex, which takes most of its time (ASCII
/// a block of 64 bytes at a time, `piece_blocks`): each
/// piece is then looked up whole if it is short, or taken from the thread's caches of the pieces
/// it saw last (`piece_cache`, up to 96 bytes), or looked up whole or merged pair by pair as
/// tiktoken merges it, each pair asked first of the thread's cache of the pairs it merged last
/// (`pair_cache`, 64 KB), and kept there. A piece of more than 1 KiB is
/// encoded by the white-space BPE below if it is white space, by its blocks if it is one
/// character repeated, by the BPE of its bytes if it is a long word of few of them, else by
/// tiktoken-rs.
///
/// tiktoken-rs 0.12 cannot pre-tokenize a run of about a million white-space characters with no
/// line break (its regex runs out of backtracking stack). A chunk it refuses is split where the
/// pre-tokenizer splits such a run, and the run's piece is encoded by an exact BPE over the
/// vocabulary's white-space tokens: the counts are exact on every input.
pub struct Tiktoken {
    encoding: Encoding,
    bpe: &'static CoreBPE,
    /// The ranks of its tokens, by their bytes.
    ranks: Ranks,
    /// Byte length of every token, indexed by rank.
    token_len: Vec<u8>,
    /// The BPE of white-space pieces tiktoken-rs refuses, built when one first comes.
    white_space: OnceLock<SubsetBpe>,
    /// The BPEs of the last long pieces of few distinct bytes.
    subsets: SubsetBpes,
}

impl Encoding {
    /// The process-wide tiktoken-rs tokenizer of this vocabulary, built on first use.
    pub fn tiktoken(self) -> &'static Tiktoken {
        static O200K: OnceLock<Tiktoken> = OnceLock::new();
        static CL100K: OnceLock<Tiktoken> = OnceLock::new();
        let (cell, bpe): (_, fn() -> &'static CoreBPE) = match self {
            Encoding::O200kBase => (&O200K, tiktoken_rs::o200k_base_singleton),
            Encoding::Cl100kBase => (&CL100K, tiktoken_rs::cl100k_base_singleton),
        };
        cell.get_or_init(|| Tiktoken::new(self, bpe()))
    }
}

impl Tiktoken {
    fn new(encoding: Encoding, bpe: &'static CoreBPE) -> Self {
        let (ranks, token_len) = Ranks::of(encoding, bpe);
        Tiktoken {
            encoding,
            bpe,
            ranks,
            token_len,
            white_space: OnceLock::new(),
            subsets: SubsetBpes::default(),
        }
    }

    /// The vocabulary this tokenizer encodes with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The rank of `piece` if it is a token of one or two bytes, found in a table without a
    /// hash. A longer piece is looked up in the thread's caches first, which answer a piece seen
    /// again, one token or more, with one hash, from a smaller table than the vocabulary's: a
    /// session's words are found there while the vocabulary's table has left the CPU's caches.
    #[inline(always)]
    fn short_token(&self, piece: &[u8]) -> Option<Rank> {
        (piece.len() < 3).then(|| self.ranks.get(piece)).flatten()
    }

    /// The tokens of `piece`, of at most [`MERGED_HERE`] bytes, pushed on `tokens`: its own if it
    /// is one, else its bytes merged.
    fn merged(&self, piece: &[u8], tokens: &mut Vec<Rank>) {
        match self.ranks.get(piece) {
            Some(rank) => tokens.push(rank),
            None => self.ranks.encode(piece, tokens),
        }
    }

    /// The tokens of one chunk as ordinary text.
    fn encode_chunk(&self, chunk: &str) -> Vec<Rank> {
        let mut tokens = Vec::with_capacity(chunk.len() / 4);
        let mut pieces = pieces(self.encoding, chunk);
        // The thread's caches are borrowed once for the pieces up to one of more than
        // `MERGED_HERE` bytes, which is encoded without them: its paths encode chunks again.
        while let Some(long) = piece_cache::with(|caches| {
            pieces.find(|piece| {
                let bytes = piece.as_bytes();
                if let Some(rank) = self.short_token(bytes) {
                    tokens.push(rank);
                } else if piece.len() <= piece_cache::KEY_MAX {
                    caches.encode(self.encoding, bytes, &mut tokens, |tokens| {
                        self.merged(bytes, tokens)
                    });
                } else if let Some(rank) = self.ranks.get(bytes) {
                    tokens.push(rank);
                } else if piece.len() <= MERGED_HERE {
                    self.ranks.encode(bytes, &mut tokens);
                } else {
                    return true;
                }
                false
            })
        }) {
            tokens.extend(self.encode_long_piece(long));
        }
        tokens
    }

    /// The number of tokens of one chunk as ordinary text.
    fn count_chunk(&self, chunk: &str) -> usize {
        if is_base64(chunk) && piece_cache::with(|caches| caches.short().grown()) {
            return self.count_chunk_ahead(chunk);
        }
        let mut count = 0;
        let mut pieces = pieces(self.encoding, chunk);
        // Borrowed as `encode_chunk` borrows them.
        while let Some(long) = piece_cache::with(|caches| {
            pieces.find(|piece| match self.count_piece(caches, piece.as_bytes()) {
                Some(tokens) => {
                    count += tokens;
                    false
                }
                None => true,
            })
        }) {
            count += self.encode_long_piece(long).len();
        }
        count
    }

    /// [`count_chunk`](Self::count_chunk) of a chunk of base64 ([`is_base64`]) on a thread whose
    /// table of short pieces has grown past a core's caches: the pieces are taken [`AHEAD`] at a
    /// time, and the set of each of 3 to 7 bytes is fetched before the first is looked up, so
    /// that their waits on memory overlap instead of following one another; a piece of one or
    /// two bytes, most of base64's, is one token or two by the vocabulary's table of them, and
    /// takes no slot. Other text, and a table that has not grown, keep the loop of one piece at a
    /// time: their pieces are found in the CPU's caches, and taking them ahead only cost (1.5
    /// times the time of 2 MB of Japanese, on a thread whose table had grown).
    fn count_chunk_ahead(&self, chunk: &str) -> usize {
        let mut count = 0;
        let mut pieces = pieces(self.encoding, chunk);
        let mut ahead = [("", ShortKey::default()); AHEAD];
        loop {
            let mut taken = 0;
            for piece in pieces.by_ref().take(AHEAD) {
                ahead[taken].0 = piece;
                taken += 1;
            }
            if taken == 0 {
                return count;
            }
            let mut next = 0;
            // Borrowed as `encode_chunk` borrows them.
            while let Some(long) = piece_cache::with(|caches| {
                if next == 0 {
                    let short = caches.short();
                    for (piece, key) in &mut ahead[..taken] {
                        if (3..SHORT).contains(&piece.len()) {
                            let at = span_of(chunk, piece).start;
                            *key = short.key_at(self.encoding, chunk.as_bytes(), at, piece.len());
                            short.fetch(*key);
                        }
                    }
                }
                for &(piece, key) in &ahead[next..taken] {
                    next += 1;
                    let bytes = piece.as_bytes();
                    count += if bytes.len() < 3 {
                        self.short_token(bytes).map_or(2, |_| 1)
                    } else if bytes.len() < SHORT {
                        let merge = |tokens: &mut Vec<Rank>| self.merged(bytes, tokens);
                        caches.short().count_key(key, merge)
                    } else {
                        match self.count_piece(caches, bytes) {
                            Some(tokens) => tokens,
                            None => return Some(piece),
                        }
                    };
                }
                None
            }) {
                count += self.encode_long_piece(long).len();
            }
        }
    }

    /// The number of tokens of `piece`, from `caches` or merged; `None` for a piece of more than
    /// [`MERGED_HERE`] bytes, which [`encode_long_piece`](Self::encode_long_piece) encodes
    /// without the caches borrowed.
    #[inline(always)]
    fn count_piece(&self, caches: &mut piece_cache::Caches<'_>, bytes: &[u8]) -> Option<usize> {
        Some(if self.short_token(bytes).is_some() {
            1
        } else if bytes.len() <= piece_cache::KEY_MAX {
            caches.count(self.encoding, bytes, |tokens| self.merged(bytes, tokens))
        } else if self.ranks.get(bytes).is_some() {
            1
        } else if bytes.len() <= MERGED_HERE {
            self.ranks.count(bytes)
        } else {
            return None;
        })
    }

    /// The tokens of a piece over [`MERGED_HERE`] bytes: of one character repeated, white space
    /// among them, by the blocks BPE merges it into ([`LongRun`]); of white space alone, by the
    /// exact linear BPE over the vocabulary's white-space tokens, for no other token can be part
    /// of it (a run of tabs makes that encoder backtrack at every token: a run of one character
    /// goes the first way); a long word of at most [`FEW_BYTES`] distinct bytes, by the linear
    /// BPE over the tokens made of those; else by tiktoken-rs.
    fn encode_long_piece(&self, piece: &str) -> Vec<Rank> {
        if let Some(run) = LongRun::of(piece) {
            let block = self.encode_chunk(&run.block());
            let mut tokens = block.repeat(run.blocks);
            tokens.extend(self.encode_chunk(&run.tail()));
            tokens
        } else if piece.chars().all(char::is_whitespace) {
            self.white_space().encode(piece.as_bytes())
        } else if let Some(bytes) = few_bytes_word(piece) {
            self.subsets
                .get(bytes, || SubsetBpe::new(&self.ranks, bytes))
                .encode(piece.as_bytes())
        } else {
            self.encode_long(piece)
        }
    }

    /// The tokens of a text by tiktoken-rs, its long white-space runs encoded apart if it
    /// refuses it: a long piece, which its pre-tokenizer gives back whole, as the hand-written
    /// one's pieces have no look-around past their own end but `\s+(?!\S)`'s and `\s++$`'s,
    /// which hold at a text's end.
    fn encode_long(&self, chunk: &str) -> Vec<Rank> {
        let refused = match self.bpe.encode(chunk, &HashSet::new()) {
            Ok((tokens, _)) => return tokens,
            Err(refused) => refused,
        };
        // Split around its longest run with no line break, which the pattern splits alone.
        let Some(run) = runs(chunk).max_by_key(|run| run.len()) else {
            // Not seen: only `\s+(?!\S)` over a long run exceeds the regex's stack.
            tracing::error!(%refused, "tiktoken-rs refused a text with no long white-space run; its count may be off by a token");
            let mid = floor_char_boundary(chunk, chunk.len() / 2).max(1);
            let mut tokens = self.encode_long(&chunk[..mid]);
            tokens.extend(self.encode_long(&chunk[mid..]));
            return tokens;
        };
        let mut tokens = self.encode_long(&chunk[..run.start]);
        tokens.extend(self.white_space().encode(chunk[run.clone()].as_bytes()));
        tokens.extend(self.encode_long(&chunk[run.end..]));
        tokens
    }

    /// The chunks of `text`, with the tokens of each, counted on every core: `text`'s chunks in
    /// as many runs of consecutive chunks as there are cores, the first on this thread, with the
    /// caches it has warmed, and each of the others on a thread of its own. The chunks end at a
    /// number's end too, so that one long line of JSON is counted on every core as well.
    fn counted_chunks<'a>(&self, text: &'a str) -> Vec<(&'a str, usize)> {
        let chunks: Vec<&str> = chunks(self.encoding, text, true, CHUNK).collect();
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let count = |run: &[&'a str]| -> Vec<(&'a str, usize)> {
            run.iter()
                .map(|&chunk| (chunk, self.count_chunk(chunk)))
                .collect()
        };
        if cores == 1 || chunks.len() < 2 {
            return count(&chunks);
        }
        let mut runs = chunks.chunks(chunks.len().div_ceil(cores));
        let first = runs.next().unwrap_or_default();
        std::thread::scope(|scope| {
            let others: Vec<_> = runs.map(|run| scope.spawn(move || count(run))).collect();
            let mut counted = count(first);
            for run in others {
                counted.extend(
                    run.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                );
            }
            counted
        })
    }

    /// The BPE of the white-space pieces tiktoken-rs refuses.
    fn white_space(&self) -> &SubsetBpe {
        self.white_space
            .get_or_init(|| SubsetBpe::new(&self.ranks, white_space_bytes()))
    }

    fn token_len(&self, token: Rank) -> usize {
        self.token_len
            .get(token as usize)
            .map_or(0, |&len| len.into())
    }

    /// Cuts the chunk at `offset` in `text` after at most `room` of its `tokens`, remembering
    /// the last piece start on the way.
    fn cut_chunk(&self, text: &str, offset: usize, tokens: &[Rank], room: usize) -> SegmentCut {
        let (mut end, mut piece_start) = (offset, None);
        for (i, &token) in tokens[..room].iter().enumerate() {
            if i > 0 && self.encoding.starts_piece(text, end) {
                piece_start = Some(Mark { at: end, tokens: i });
            }
            end += self.token_len(token);
        }
        SegmentCut { end, piece_start }
    }
}

impl fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tiktoken")
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

impl Tokenizer for Tiktoken {
    fn last_split(&self, text: &str) -> Option<usize> {
        self.encoding().last_split(text)
    }

    fn count(&self, text: &str) -> usize {
        piece_cache::before_text();
        count_long_run(text, |run| self.count(run)).unwrap_or_else(|| {
            if text.len() >= PARALLEL_FROM {
                return self.counted_chunks(text).iter().map(|&(_, n)| n).sum();
            }
            chunks(self.encoding, text, false, CHUNK)
                .map(|chunk| self.count_chunk(chunk))
                .sum()
        })
    }

    fn count_within(&self, text: &str, max_tokens: usize) -> Option<usize> {
        piece_cache::before_text();
        match count_long_run(text, |run| self.count(run)) {
            Some(tokens) => (tokens <= max_tokens).then_some(tokens),
            None => sum_within(
                // Chunks of the budget in bytes, fewer than its tokens: counting stops at the first
                // that goes over, so a long text is not read far past the budget.
                chunks(self.encoding, text, true, max_tokens.clamp(1024, CHUNK))
                    .map(|chunk| self.count_chunk(chunk)),
                max_tokens,
            ),
        }
    }

    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
        piece_cache::before_text();
        if text.len() >= PARALLEL_FROM {
            // Counted on every core; the chunk that crosses the budget encoded again to be cut.
            return prefix_over(
                self,
                self.encoding,
                text,
                max_tokens,
                self.counted_chunks(text).into_iter(),
                |&tokens| tokens,
                |offset, chunk, _, room| {
                    self.cut_chunk(text, offset, &self.encode_chunk(chunk), room)
                },
            );
        }
        prefix_over(
            self,
            self.encoding,
            text,
            max_tokens,
            chunks(self.encoding, text, false, CHUNK)
                .map(|chunk| (chunk, self.encode_chunk(chunk))),
            Vec::len,
            |offset, _, tokens, room| self.cut_chunk(text, offset, &tokens, room),
        )
    }

    fn count_edited(&self, text: &str, text_tokens: usize, keep: usize, tail: &str) -> usize {
        count_edited_from_last_piece(self.encoding, text, text_tokens, keep, tail, |text| {
            self.count(text)
        })
    }
}

/// `text` in consecutive chunks of at least `size` bytes (but the last), each ending where
/// the next piece starts after a line break, or with `at_numbers` also where a number ends
/// within the next `size` bytes: compact JSON has no line breaks, but numbers. Both
/// pre-tokenizers end a piece where a run of digits ends, for `\p{N}{1,3}` is the only pattern
/// that takes a digit, and it takes nothing else; and none looks back.
fn chunks(
    encoding: Encoding,
    text: &str,
    at_numbers: bool,
    size: usize,
) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let from = size.min(rest.len());
        let number_end = |at: usize| {
            rest.as_bytes()[at - 1].is_ascii_digit()
                && rest[at..].chars().next().is_some_and(|c| !c.is_numeric())
        };
        let end = at_numbers
            .then(|| (from.max(1)..(2 * size).min(rest.len())).find(|&at| number_end(at)))
            .flatten()
            .or_else(|| encoding.piece_starts(rest, from, rest.len()).next())
            .unwrap_or(rest.len());
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        Some(chunk)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::piece_cache::tests::on_a_new_thread;

    fn o200k() -> &'static Tiktoken {
        Encoding::O200kBase.tiktoken()
    }

    #[test]
    fn counts_like_tiktoken_rs() {
        let text = "src/main.rs\nsrc/lib.rs\n日本語のテキスト 🦀🦀\n".repeat(5000);
        assert!(text.len() > 2 * CHUNK);
        let expected = tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(&text)
            .len();
        assert_eq!(o200k().count(&text), expected);
    }

    #[test]
    fn pieces_seen_again_encode_alike_in_both_vocabularies_and_every_thread() {
        // Phrases that are one piece and no token, between punctuation: the cache's usual fare.
        let phrases = [
            "設定ファイルの読み込み",
            "ツールごとの上限が適用されます",
            "行番号とキーを含むメッセージ",
        ];
        let text: String = (0..3000)
            .map(|i| format!("{}、{i}。 configuration_{i}\n", phrases[i % 3]))
            .collect();
        let expected = |encoding: Encoding| encoding.tiktoken().bpe.encode_ordinary(&text);
        let (o200k, cl100k) = (
            expected(Encoding::O200kBase),
            expected(Encoding::Cl100kBase),
        );
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    for _ in 0..2 {
                        for (encoding, expected) in [
                            (Encoding::O200kBase, &o200k),
                            (Encoding::Cl100kBase, &cl100k),
                        ] {
                            let tokenizer = encoding.tiktoken();
                            assert_eq!(&tokenizer.encode_chunk(&text), expected, "{encoding:?}");
                            assert_eq!(
                                tokenizer.count_chunk(&text),
                                expected.len(),
                                "{encoding:?}"
                            );
                        }
                    }
                });
            }
        });
    }

    #[test]
    fn a_thread_grows_its_caches_before_a_text_never_within_one() {
        // 40,000 words of 8 letters, each a piece of its own: more than twice the 8,192 slots,
        // in lines, so that the text is counted in chunks.
        let words: String = (0..40_000u64)
            .map(|i| {
                let letters = (0..8).map(|d| char::from(b'a' + (i / 26u64.pow(d) % 26) as u8));
                let before = if i % 1000 == 0 { '\n' } else { ' ' };
                format!("{before}{}", letters.collect::<String>())
            })
            .collect();
        on_a_new_thread("grown between texts, counting alike", move || {
            let expected = tiktoken_rs::o200k_base_singleton()
                .encode_ordinary(&words)
                .len();
            let small = piece_cache::tests::bytes();
            assert_eq!(o200k().count(&words), expected);
            assert_eq!(piece_cache::tests::bytes(), small, "not within a text");
            assert_eq!(o200k().count(&words), expected);
            assert!(
                piece_cache::tests::bytes() > 7 * small,
                "grown before the next"
            );
            assert_eq!(o200k().count(&words), expected);
        });
    }

    #[test]
    fn a_thread_whose_short_pieces_outgrew_their_table_counts_base64_alike_looking_them_up_ahead() {
        // Base64 of bytes that do not repeat: more pieces of fewer than 8 bytes than twice the
        // table's slots, so that it grows before the next text.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..1_000_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        // Words of random letters after a space, each with its shorter starts: pieces of 2 to
        // 7 bytes that share their first bytes and not always their count.
        let starts: Vec<String> = noise
            .chunks(6)
            .take(3000)
            .map(|word| {
                let word: String = word.iter().map(|b| char::from(b'a' + b % 26)).collect();
                (1..=6).map(|len| format!(" {}", &word[..len])).collect()
            })
            .collect();
        let noise = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, noise);
        // Lines that start as base64 and go on with pieces of every kind, whatever their place
        // in a run taken ahead: one and two bytes, short and long words, a piece over
        // `MERGED_HERE` bytes between short ones, Japanese, emoji, special-token text, white
        // space; and a piece at the text's very end.
        let word = "zq".repeat(600);
        let mut mixed: String = starts
            .chunks(20)
            .zip(noise.as_bytes().chunks(1100))
            .map(|(starts, base64)| {
                let base64 = std::str::from_utf8(base64).unwrap();
                let starts = starts.concat();
                format!("{base64} 日本語のテキスト 🦀🦀 <|endoftext|> a b cd {word} hij\t\t {starts} 9\n")
            })
            .collect();
        mixed.push_str("xQz");
        let chunks: Vec<&str> = chunks(Encoding::O200kBase, &mixed, false, CHUNK).collect();
        assert!(chunks.len() > 3 && chunks.iter().all(|chunk| is_base64(chunk)));
        on_a_new_thread("a grown table counts alike", move || {
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let tokenizer = encoding.tiktoken();
                let expected = |text: &str| tokenizer.bpe.encode_ordinary(text).len();
                assert_eq!(tokenizer.count(&noise), expected(&noise), "{encoding:?}");
                for text in [&noise, &mixed, &mixed[..mixed.len() - 1]] {
                    assert_eq!(tokenizer.count(text), expected(text), "{encoding:?}");
                    assert!(
                        piece_cache::with(|caches| caches.short().grown()),
                        "looked up ahead"
                    );
                }
            }
        });
    }

    #[test]
    fn base64_is_told_from_other_text_by_its_first_kib() {
        let base64 =
            "f0VMRgIBAQAAAAAAAAAAAAIAPgABAAAAoGRAAAAAAABAAAAAAAAAAFgWCAAAAAAA+/9=\n".repeat(40);
        assert!(is_base64(&base64) && is_base64(&base64.replace('\n', "")));
        assert!(
            is_base64(&format!("{base64} then prose")),
            "only the first KiB is read"
        );
        for other in [
            "/usr/share/doc/bash/README.gz\n",
            "Permission is hereby granted, free of charge, ",
            "{\"key\":\"value\",\"n\":12}",
            "設定ファイルの読み込み",
        ] {
            assert!(!is_base64(&other.repeat(50)), "{other}");
        }
    }

    #[test]
    fn special_token_text_is_ordinary_text() {
        let bpe = tiktoken_rs::o200k_base_singleton();
        let text = "before <|endoftext|> after";
        assert_eq!(o200k().count(text), bpe.encode_ordinary(text).len());
        assert!(o200k().count(text) > bpe.encode_with_special_tokens(text).len());
    }

    #[test]
    fn token_lengths_add_up_to_the_text() {
        let tokenizer = o200k();
        let text = "fn main() { println!(\"héllo 🦀\"); }\n";
        let total: usize = tokenizer
            .encode_chunk(text)
            .iter()
            .map(|&t| tokenizer.token_len(t))
            .sum();
        assert_eq!(total, text.len());
    }

    #[test]
    fn chunks_cover_the_text_and_end_at_piece_starts() {
        let text = "alpha/beta.rs\n  gamma\n".repeat(10_000);
        let chunks: Vec<&str> = chunks(Encoding::O200kBase, &text, false, CHUNK).collect();
        assert!(chunks.len() > 2);
        assert_eq!(chunks.concat(), text);
        let mut at = 0;
        for chunk in &chunks[..chunks.len() - 1] {
            at += chunk.len();
            assert!(chunk.len() >= CHUNK && Encoding::O200kBase.starts_piece(&text, at));
        }
    }

    #[test]
    fn prefix_is_the_longest_within_the_budget() {
        let tokenizer = o200k();
        let text = "alpha/beta.rs\ngamma/delta.rs\n".repeat(10_000);
        for max_tokens in [40, 30_000] {
            let prefix = tokenizer.prefix(&text, max_tokens);
            assert_eq!(prefix.total_tokens, tokenizer.count(&text));
            assert_eq!(prefix.tokens, tokenizer.count(&text[..prefix.len]));
            assert!(prefix.tokens <= max_tokens);
            let longer = floor_char_boundary(&text, prefix.len + 1);
            assert!(tokenizer.count(&text[..longer]) > max_tokens);
        }
    }

    #[test]
    fn a_large_text_counted_on_every_core_counts_and_cuts_as_tiktoken_rs_does() {
        let tokenizer = o200k();
        let lines = "crates/core/src/module_7/mod.rs\n日本語 🦀 x = 12345;\n".repeat(100_000);
        // One line of JSON, split at its numbers' ends.
        let json = (0..120_000)
            .map(|i| {
                format!(
                    r#"{{"id":{i},"path":"src/módulo_{i}.rs","size":{}}}"#,
                    i * 37 % 9973
                )
            })
            .collect::<Vec<_>>()
            .join(",");
        assert!(chunks(Encoding::O200kBase, &json, true, CHUNK).count() > 2);
        for text in [lines, format!("[{json}]")] {
            assert!(text.len() >= PARALLEL_FROM);
            let exact = tokenizer.bpe.encode_ordinary(&text).len();
            assert_eq!(tokenizer.count(&text), exact);
            let max_tokens = exact / 3;
            let prefix = tokenizer.prefix(&text, max_tokens);
            assert_eq!(prefix.total_tokens, exact);
            assert_eq!(prefix.tokens, tokenizer.count(&text[..prefix.len]));
            assert!(prefix.tokens <= max_tokens);
            let longer = prefix.len + text[prefix.len..].chars().next().unwrap().len_utf8();
            assert!(tokenizer.count(&text[..longer]) > max_tokens);
        }
    }

    #[test]
    fn long_whitespace_runs_count_exactly() {
        // Exact counts from bpe-openai, which encodes these runs whole.
        let tokenizer = o200k();
        for (text, exact) in [
            (" ".repeat(2_000_000), 15_625),
            ("\t".repeat(1_000_000), 62_500),
            ("\u{3000}".repeat(1_000_000), 62_500),
            (format!("x{}y", " ".repeat(1_200_000)), 9_378),
        ] {
            assert_eq!(tokenizer.count(&text), exact, "{:?}", &text[..4]);
        }
    }

    #[test]
    fn long_pieces_of_few_bytes_encode_as_tiktoken_rs_encodes_them() {
        // Words of few bytes, by their bytes' BPE.
        let words = [
            format!("x{}y", "a".repeat(70_000)),
            "ab".repeat(33_000),
            "abcd".repeat(17_000),
            format!("x{}", "日".repeat(22_000)),
            format!("{}\n", "ßé".repeat(17_000)),
        ];
        // One character repeated, between letters: the blocks BPE merges it into.
        let runs = [
            format!("x{}y", "-".repeat(5000)),
            format!("x{}y", "=".repeat(4500)),
            format!("x{}y", "*".repeat(4200)),
            format!("x{}y", "🦀".repeat(4500)),
            // And what follows a run in its piece, or in the text.
            format!("x{}\n", "\t".repeat(5000)),
            format!("{}\r\n\n", "\t".repeat(4500)),
            format!("{} \n", "\u{3000}".repeat(4200)),
            format!("{}x", " ".repeat(4301)),
            format!("{}bc!", "a".repeat(4444)),
            format!("{}\tend", "\n".repeat(4100)),
        ];
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let tokenizer = encoding.tiktoken();
            for text in words.iter().chain(&runs) {
                let found =
                    |piece: &str| few_bytes_word(piece).is_some() || LongRun::of(piece).is_some();
                assert!(
                    pieces(encoding, text).any(found),
                    "{encoding}: {:?}",
                    text.get(..8)
                );
                let exact = tokenizer.bpe.encode_ordinary(text);
                assert_eq!(
                    tokenizer.encode_chunk(text),
                    exact,
                    "{encoding}: {:?}",
                    text.get(..8)
                );
                assert_eq!(
                    tokenizer.count(text),
                    exact.len(),
                    "{encoding}: {:?}",
                    text.get(..8)
                );
            }
        }
    }

    #[test]
    fn white_space_pieces_encode_as_tiktoken_rs_encodes_them() {
        // Below the length tiktoken-rs refuses, each text is one `\s+(?!\S)` piece.
        let pieces = [
            " \t".repeat(50_000),
            "\u{3000} ".repeat(40_000),
            "\t\t \u{a0}\u{2003}".repeat(20_000),
            " ".repeat(1000) + &"\t".repeat(3),
        ];
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let tokenizer = encoding.tiktoken();
            for piece in &pieces {
                let (exact, _) = tokenizer.bpe.encode(piece, &HashSet::new()).unwrap();
                assert_eq!(
                    tokenizer.white_space().encode(piece.as_bytes()),
                    exact,
                    "{encoding}: {:?}",
                    &piece[..8]
                );
            }
        }
    }
}
