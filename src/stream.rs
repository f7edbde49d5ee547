//! Outputs read in parts, as a pipe gives them: counted, or cut, holding only what a cut keeps.

use std::collections::VecDeque;
use std::sync::OnceLock;

use crate::cap::{cut_known, cut_leaving_room};
use crate::layout::Cut;
use crate::limit::ToolLimit;
use crate::search::Extent;
use crate::tokenizer::{ends_in_ascii_word, Tokenizer};

/// Parts are split once this many bytes wait, where the tokenizer allows
/// ([`Tokenizer::last_split`]).
const SPLIT_AT: usize = 64 * 1024;

/// The text of an output given in parts, split where its tokens can be counted apart: each
/// piece goes to `each` with its tokens, and what waits for a split is held.
#[derive(Debug)]
struct Splitter<'t> {
    tokenizer: &'t dyn Tokenizer,
    waiting: String,
    /// How long `waiting` must be before a split is looked for: twice what it was when none was
    /// found, so that a long line is not searched again at every part.
    try_at: usize,
}

impl<'t> Splitter<'t> {
    fn new(tokenizer: &'t dyn Tokenizer) -> Self {
        Splitter {
            tokenizer,
            waiting: String::new(),
            try_at: SPLIT_AT,
        }
    }

    /// Adds `text`; gives the part that can now be counted apart, if any.
    fn push(&mut self, text: &str) -> Option<(String, usize)> {
        self.waiting.push_str(text);
        if self.waiting.len() < self.try_at {
            return None;
        }
        let Some(at) = self.tokenizer.last_split(&self.waiting) else {
            self.try_at = 2 * self.waiting.len();
            return None;
        };
        self.try_at = SPLIT_AT;
        let rest = self.waiting.split_off(at);
        let part = std::mem::replace(&mut self.waiting, rest);
        let tokens = self.tokenizer.count(&part);
        Some((part, tokens))
    }

    /// What still waits, as the last part.
    fn finish(&mut self) -> (String, usize) {
        let part = self.finish_uncounted();
        let tokens = self.tokenizer.count(&part);
        (part, tokens)
    }

    /// What still waits, not counted.
    fn finish_uncounted(&mut self) -> String {
        std::mem::take(&mut self.waiting)
    }
}

/// The tokens of a text given in parts, such as a pipe's reads, the same as those of the whole:
/// it holds only what came since the last place the tokenizer can split
/// ([`Tokenizer::last_split`]), so a count of a listing or a log holds a few lines.
///
/// ```
/// use tool_output_cap::{Encoding, TokenCount, Tokenizer};
///
/// let tokenizer = Encoding::O200kBase.tokenizer();
/// let log: String = (0..50_000).map(|i| format!("test case_{i} ... ok\n")).collect();
/// let mut count = TokenCount::new(tokenizer);
/// for part in log.as_bytes().chunks(4096) {
///     count.push(std::str::from_utf8(part).unwrap());
/// }
/// assert_eq!(count.finish(), tokenizer.count(&log));
/// ```
#[derive(Debug)]
pub struct TokenCount<'t> {
    splitter: Splitter<'t>,
    tokens: usize,
}

impl<'t> TokenCount<'t> {
    /// A count with `tokenizer`, of nothing yet.
    pub fn new(tokenizer: &'t dyn Tokenizer) -> Self {
        TokenCount {
            splitter: Splitter::new(tokenizer),
            tokens: 0,
        }
    }

    /// Counts `text`, the next part of the text.
    pub fn push(&mut self, text: &str) {
        if let Some((_, tokens)) = self.splitter.push(text) {
            self.tokens += tokens;
        }
    }

    /// The tokens of the whole text.
    pub fn finish(mut self) -> usize {
        self.tokens + self.splitter.finish().1
    }
}

/// An output given in parts, such as a pipe's reads, that is to be cut to a limit of at most
/// `window` tokens: it holds the start and the end of the output, each more than `window`
/// tokens, and counts what lies between, so that cutting 1 GiB holds about what cutting 100 KB
/// does. A part is held until the tokenizer can split after it ([`Tokenizer::last_split`]): an
/// output with no line break, or a tokenizer that knows no place to split, is held whole.
///
/// The figures of its cut are exact, and so is the head it keeps: the same as [`cut`](crate::cut) finds on
/// the whole. A tail is the longest suffix within its budget that the search finds, as
/// [`cut`](crate::cut)'s is, and may stop a little earlier or later than [`cut`](crate::cut)'s on the whole.
///
/// ```
/// use tool_output_cap::{Encoding, Keep, StreamedOutput, ToolLimit};
///
/// let tokenizer = Encoding::O200kBase.tokenizer();
/// let listing: String = (0..100_000).map(|i| format!("src/module_{i}/lib.rs\n")).collect();
/// let limit = ToolLimit::new(500)?.with_keep(Keep::Tail);
/// let mut output = StreamedOutput::new(tokenizer, limit.max_tokens());
/// for part in listing.as_bytes().chunks(8192) {
///     output.push(std::str::from_utf8(part).unwrap());
/// }
/// output.finish();
/// assert!(output.held().len() < listing.len() / 10);
/// let cut = output.cut(&limit).unwrap();
/// assert_eq!(cut.truncation.original_tokens, tokenizer.count(&listing));
/// let capped = cut.capped(output.held());
/// assert!(capped.ends_with("tokens dropped, refine your query"));
/// # Ok::<(), tool_output_cap::LimitError>(())
/// ```
#[derive(Debug)]
pub struct StreamedOutput<'t> {
    tokenizer: &'t dyn Tokenizer,
    window: usize,
    splitter: Splitter<'t>,
    head: String,
    head_tokens: usize,
    tail: VecDeque<(String, usize)>,
    tail_tokens: usize,
    /// The tokens and bytes between the head and the tail, which are not held.
    between: Option<Extent>,
    /// The head and the tail together, once the output has ended.
    held: Option<String>,
    /// The tokens of an output that came as one part, held whole and not counted until asked:
    /// a cut counts it anyway.
    whole_tokens: Option<OnceLock<usize>>,
}

impl<'t> StreamedOutput<'t> {
    /// An output to cut to limits of at most `window` tokens, counted with `tokenizer`.
    pub fn new(tokenizer: &'t dyn Tokenizer, window: usize) -> Self {
        StreamedOutput {
            tokenizer,
            window,
            splitter: Splitter::new(tokenizer),
            head: String::new(),
            head_tokens: 0,
            tail: VecDeque::new(),
            tail_tokens: 0,
            between: None,
            held: None,
            whole_tokens: None,
        }
    }

    /// Adds `text`, the next part of the output.
    ///
    /// # Panics
    ///
    /// If the output has ended ([`finish`](Self::finish)).
    pub fn push(&mut self, text: &str) {
        assert!(self.held.is_none(), "a part pushed after the output ended");
        if let Some(part) = self.splitter.push(text) {
            self.keep(part);
        }
    }

    /// Ends the output.
    pub fn finish(&mut self) {
        if self.held.is_some() {
            return;
        }
        if self.head.is_empty() {
            self.held = Some(self.splitter.finish_uncounted());
            self.whole_tokens = Some(OnceLock::new());
            return;
        }
        let last = self.splitter.finish();
        self.keep(last);
        let mut held = std::mem::take(&mut self.head);
        for (part, _) in self.tail.drain(..) {
            held.push_str(&part);
        }
        self.held = Some(held);
    }

    /// The head, until it is more than the window; then the tail, which gives its first parts
    /// to what lies between while the rest is more than the window.
    ///
    /// The head ends after a letter or a digit, so that a tail starting with `/` still starts
    /// its pieces afresh after it ([`Encoding::last_split`](crate::Encoding)).
    fn keep(&mut self, (part, tokens): (String, usize)) {
        if self.head_tokens <= self.window || !ends_in_ascii_word(&self.head) {
            self.head.push_str(&part);
            self.head_tokens += tokens;
            return;
        }
        self.tail.push_back((part, tokens));
        self.tail_tokens += tokens;
        while self.tail.len() > 1 && self.tail_tokens - self.tail[0].1 > self.window {
            let (part, tokens) = self.tail.pop_front().expect("a part");
            self.tail_tokens -= tokens;
            let between = self.between.get_or_insert(Extent { tokens: 0, len: 0 });
            between.tokens += tokens;
            between.len += part.len();
        }
    }

    /// The text the output holds once it has ended: the whole output, or its head and its tail
    /// when what lies between them was only counted. The offsets of [`cut`](crate::cut)(Self::cut)'s
    /// [`Cut`] are in this text.
    ///
    /// # Panics
    ///
    /// If the output has not ended.
    pub fn held(&self) -> &str {
        self.held.as_deref().expect("the output has not ended")
    }

    /// Whether [`held`](Self::held) is the whole output.
    pub fn is_whole(&self) -> bool {
        self.between.is_none()
    }

    /// The tokens of the whole output.
    pub fn tokens(&self) -> usize {
        if let Some(tokens) = &self.whole_tokens {
            return *tokens.get_or_init(|| self.tokenizer.count(self.held()));
        }
        let between = self.between.map_or(0, |between| between.tokens);
        self.head_tokens + between + self.tail_tokens
    }

    /// Where the output is cut to `limit`, in [`held`](Self::held): `None` when it is within
    /// the limit.
    ///
    /// # Panics
    ///
    /// If the output has not ended, or `limit` is more than the window.
    pub fn cut(&self, limit: &ToolLimit) -> Option<Cut> {
        self.cut_leaving_room(limit, "")
    }

    /// Where the output is cut to `limit` for a capped output that ends with `suffix` after the
    /// note, as [`cut_leaving_room`](crate::cut_leaving_room) cuts a text: `None` when the output
    /// is within the limit.
    ///
    /// # Panics
    ///
    /// If the output has not ended, or `limit` is more than the window.
    pub fn cut_leaving_room(&self, limit: &ToolLimit, suffix: &str) -> Option<Cut> {
        assert!(
            limit.max_tokens() <= self.window,
            "a limit of {} tokens over the window of {}",
            limit.max_tokens(),
            self.window
        );
        let held = self.held();
        match self.between {
            None => {
                let cut = cut_leaving_room(held, limit, self.tokenizer, suffix);
                if let (Some(tokens), Some(cut)) = (&self.whole_tokens, &cut) {
                    let _ = tokens.set(cut.truncation.original_tokens);
                }
                cut
            }
            Some(between) => cut_known(
                held,
                limit,
                self.tokenizer,
                Extent {
                    tokens: self.tokens(),
                    len: held.len() + between.len,
                },
                suffix,
            ),
        }
    }
}
