//! Cutting a text into chunks that encode as the whole text does: at line starts, and in a long
//! line at word starts, which the file's pipeline never joins across; and the head kept after a
//! cut, counted again from a start the cut cannot move.

use super::super::{floor_char_boundary, white_space, Encoding, Mark, Tokenizer};
use super::HfTokenizer;

/// A chunk's encoding: its ids, how many of them are the chunk's own, and where it starts.
pub(super) struct Window {
    pub(super) encoded: tokenizers::Encoding,
    pub(super) tokens: usize,
    pub(super) start: Mark,
}

/// How texts are cut for encoding, when the tokenizer's pipeline allows it (see
/// [`HfTokenizer::splits_at_line_starts`]): in chunks of at least `chunk` bytes (but the last),
/// each ending where a line starts, or inside a line longer than that, where a word starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunking {
    pub(super) chunk: usize,
    /// How far past `chunk` a long line is encoded to find a word start there. Word starts in
    /// the last quarter of it, and the last two, are not taken: what follows the window can
    /// still change them.
    pub(super) margin: usize,
}

/// A run of white space with no line break longer than this many bytes is encoded apart (see
/// [`HfTokenizer::splits_at_line_starts`]).
const LONG_RUN: usize = 100_000;

/// The chunking of every text: a chunk's encoding is some 9 MB with Qwen's tokenizer.
pub(super) const CHUNKING: Chunking = Chunking {
    chunk: 64 * 1024,
    margin: 4 * 1024,
};

/// A chunk of a text, and the encoding of a window from its start when a long line was cut at
/// a word start: the chunk's tokens are that encoding's first `tokens`.
pub(super) struct Chunk<'a> {
    pub(super) text: &'a str,
    pub(super) window: Option<(tokenizers::Encoding, usize)>,
}

impl HfTokenizer {
    /// `text` in consecutive chunks (see [`Chunking`]); the whole text when the pipeline may
    /// not be split.
    pub(super) fn chunks<'a>(&'a self, text: &'a str) -> impl Iterator<Item = Chunk<'a>> + 'a {
        let Chunking { chunk, margin } = self.chunking;
        let mut rest = text;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let (mut end, mut window) = (rest.len(), None);
            if self.at_lines && rest.len() > chunk + margin {
                let near = (2 * chunk).min(rest.len());
                if let Some(at) = line_starts(rest, chunk, near).next() {
                    end = at;
                } else if let Some((at, encoded, tokens)) =
                    self.in_lines.then(|| self.word_start(rest)).flatten()
                {
                    (end, window) = (at, Some((encoded, tokens)));
                } else if let Some(at) = line_starts(rest, near, rest.len()).next() {
                    end = at;
                }
            }
            // A run of white space too long for fancy-regex's look-ahead is a piece of its own.
            if self.runs_apart && end > LONG_RUN {
                let long = white_space::runs(&rest[..end]).find(|run| run.len() > LONG_RUN);
                if let Some(run) = long {
                    (end, window) = (if run.start > 0 { run.start } else { run.end }, None);
                }
            }
            let (text, tail) = rest.split_at(end);
            rest = tail;
            Some(Chunk { text, window })
        })
    }

    /// The tokens of `chunk`.
    pub(super) fn tokens(&self, chunk: &Chunk<'_>) -> usize {
        match &chunk.window {
            Some((_, tokens)) => *tokens,
            None => self.encode(chunk.text, false).len(),
        }
    }

    /// Where a word starts in `text` after the first [`Chunking::chunk`] bytes, found by
    /// encoding a window of `chunk + margin` bytes, with that encoding and the tokens before it.
    fn word_start(&self, text: &str) -> Option<(usize, tokenizers::Encoding, usize)> {
        let Chunking { chunk, margin } = self.chunking;
        let window = &text[..floor_char_boundary(text, chunk + margin)];
        let encoded = self.encode(window, true);
        let start = self
            .sure_word_starts(window, &encoded, encoded.len(), window.len())
            .into_iter()
            .find(|start| start.at >= chunk)?;
        Some((start.at, encoded, start.tokens))
    }

    /// The word starts (each with the tokens before it) of `encoded`, the first `tokens` ids of `text`, that
    /// are word starts with the same tokens before them in its prefix of `end` bytes, and in any
    /// longer text it starts: those at least a quarter of [`Chunking::margin`] before `end` and
    /// not among the last two before it.
    fn sure_word_starts(
        &self,
        text: &str,
        encoded: &tokenizers::Encoding,
        tokens: usize,
        end: usize,
    ) -> Vec<Mark> {
        if !self.in_lines {
            return Vec::new();
        }
        let (words, offsets) = (encoded.get_word_ids(), encoded.get_offsets());
        // A word start where the tokens before it end: a character the normalizer makes two
        // (`מּ` is `מ` and a mark, two words) gives its words the same offsets, and none of them
        // but the first starts where the text can be cut.
        let mut starts: Vec<Mark> = (1..tokens)
            .filter(|&i| words[i].is_some() && words[i] != words[i - 1])
            .filter(|&i| offsets[i - 1].1 <= offsets[i].0)
            .map(|i| Mark {
                at: offsets[i].0,
                tokens: i,
            })
            .take_while(|start| start.at < end)
            .collect();
        starts.truncate(starts.len().saturating_sub(2));
        let sure = end.saturating_sub(self.chunking.margin / 4);
        starts.retain(|start| start.at <= sure && text.is_char_boundary(start.at));
        starts
    }

    /// The last sure word start of `window` before `end` (see `sure_word_starts`), in `text`.
    pub(super) fn sure_start(&self, text: &str, window: &Window, end: usize) -> Option<Mark> {
        let at = window.start.at;
        let starts = self.sure_word_starts(&text[at..], &window.encoded, window.tokens, end - at);
        starts.last().map(|start| Mark {
            at: at + start.at,
            tokens: window.start.tokens + start.tokens,
        })
    }

    /// The end of `text[..end]`, or of a shorter head if it is over `max_tokens`, and its
    /// tokens: a cut can change how the last words encode, so the head is counted again from
    /// `start`, a sure word start or line start before the cut.
    pub(super) fn head(&self, text: &str, start: Mark, end: usize, max_tokens: usize) -> Mark {
        match start.tokens + self.count(&text[start.at..end]) {
            tokens if tokens <= max_tokens => Mark { at: end, tokens },
            // Re-encoding a cut text can take more ids than it had in the whole.
            _ => {
                let shorter = self.prefix(&text[..end], max_tokens.saturating_sub(1));
                Mark {
                    at: shorter.len,
                    tokens: shorter.tokens,
                }
            }
        }
    }
}

/// Where lines start in `text[from..to]`: after a newline, before a character that is not white
/// space. `cl100k_base`'s pre-tokenizer starts a piece at each of them, and so do those of the
/// open models that descend from it.
pub(super) fn line_starts(text: &str, from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
    Encoding::Cl100kBase.piece_starts(text, from, to)
}
