//! The cap itself: a pure function of a text, a limit and a tokenizer.

use std::fmt;
use std::sync::Arc;

use crate::fence::closing_fence;
use crate::tokenizer::{ceil_char_boundary, floor_char_boundary, Prefix, Tokenizer};
use crate::tool::Truncation;

/// Which part of an output over its limit is kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// The start: what a listing or a search returns first. The default.
    #[default]
    Head,
    /// The end: where a build or test log puts its errors.
    Tail,
    /// The start and the end, half the budget each (what the start leaves goes to the end), with
    /// the line [`CUT_MARKER`] where the middle was cut out.
    HeadTail,
}

impl Keep {
    /// The name used in the manifest: `head`, `tail` or `head_tail`.
    pub fn name(self) -> &'static str {
        match self {
            Keep::Head => "head",
            Keep::Tail => "tail",
            Keep::HeadTail => "head_tail",
        }
    }
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The line that stands where [`Keep::HeadTail`] cut out the middle of an output.
pub const CUT_MARKER: &str = "[... cut here ...]";

/// A cut that falls inside a line moves to the line's edge when that gives up no more than
/// this share of the part's budget: one eighth.
const LINE_SHARE: usize = 8;

/// The limit of one tool's outputs: the budget, what to keep, and a hint for the note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimit {
    pub(crate) max_tokens: usize,
    pub(crate) keep: Keep,
    pub(crate) hint: Option<Arc<str>>,
}

impl ToolLimit {
    /// At most `max_tokens` tokens, note included, keeping the head, with no hint.
    pub fn new(max_tokens: usize) -> Self {
        ToolLimit {
            max_tokens,
            keep: Keep::Head,
            hint: None,
        }
    }

    /// Keeps `keep` of an output over the limit.
    #[must_use]
    pub fn with_keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// At most `max_tokens` tokens, note included.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Ends the note with `: hint`.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<Arc<str>>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The budget, note included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// What is kept of an output over the limit.
    pub fn keep(&self) -> Keep {
        self.keep
    }

    /// The hint at the end of the note, if any.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
}

/// What puts a line that follows `text` on a line of its own: a newline, or nothing when `text`
/// is empty or already ends with one. The cut marker and the note follow what they follow so,
/// with no blank line before them.
pub fn line_break_after(text: &str) -> &'static str {
    if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    }
}

/// The note that ends a truncated output, without the newline before it.
pub fn note(dropped_tokens: usize, hint: Option<&str>) -> String {
    match hint {
        Some(hint) => {
            format!("truncated: {dropped_tokens} tokens dropped, refine your query: {hint}")
        }
        None => format!("truncated: {dropped_tokens} tokens dropped, refine your query"),
    }
}

/// Caps `content` to `limit`, note included.
///
/// An output of at most `limit.max_tokens()` tokens is left byte for byte as it was and `None`
/// comes back; one whose byte length is within the limit is not even tokenized, since every
/// token of a byte-level BPE is at least one byte. A longer one is cut to what `limit.keep()`
/// keeps, and ends with the line [`note`]:
///
/// - [`Keep::Head`]: `head`, then `note` on a line of its own, `head` a prefix of the content;
/// - [`Keep::Tail`]: `tail`, then `note`, `tail` a suffix of it;
/// - [`Keep::HeadTail`]: `head`, the line [`CUT_MARKER`], `tail`, then `note`.
///
/// Each line after a part starts after a newline, unless the part is empty or already ends with
/// one ([`line_break_after`]): no blank line comes before the marker or the note. When what is
/// kept leaves a Markdown code fence open (```` ```yaml ```` and no closing ```` ``` ````), a line
/// that closes it comes before the note, within the limit, so that the note is not read as code.
///
/// Cuts fall on char boundaries, and on line boundaries when that gives up at most an eighth of
/// the budget. `N` in the note is the original count less the tokens of the kept parts, each
/// counted on its own. With [`Keep::Head`] the whole text is encoded once and only the end of
/// the head, where the note joins it, is counted again; the other strategies count their parts
/// again, which costs about their budget.
///
/// The bound holds whenever the note (with [`Keep::HeadTail`], the note and the marker) fits in
/// the limit, which it does from 32 tokens up with the built-in tokenizers, real models'
/// tokenizer files and a short hint (the manifest accepts no less). Below that nothing of the
/// content is kept, and the output is the note (and the marker) alone.
///
/// ```
/// use tool_output_cap::{cap, Encoding, Keep, ToolLimit};
///
/// let tokenizer = Encoding::O200kBase.tokenizer();
/// let mut log = (0..2000).map(|i| format!("compiling crate_{i}\n")).collect::<String>() + "error: linking failed";
/// let limit = ToolLimit::new(100).with_keep(Keep::Tail);
/// let truncation = cap(&mut log, &limit, tokenizer).unwrap();
/// assert!(log.ends_with(&format!(
///     "error: linking failed\ntruncated: {} tokens dropped, refine your query",
///     truncation.dropped_tokens
/// )));
/// ```
#[inline]
pub fn cap(
    content: &mut String,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<Truncation> {
    let cut = cut(content, limit, tokenizer)?;
    cut.apply(content);
    Some(cut.truncation)
}

/// Where [`cap`] would cut `content`, without cutting it: `None` if it is within `limit`.
///
/// For a caller that lays the kept parts out itself, say over several text blocks that were
/// counted as one text.
///
/// ```
/// use tool_output_cap::{cut, line_break_after, Encoding, Keep, ToolLimit, CUT_MARKER};
///
/// let listing: String = (0..5000).map(|i| format!("src/file_{i}.rs\n")).collect();
/// let limit = ToolLimit::new(200).with_keep(Keep::HeadTail);
/// let cut = cut(&listing, &limit, Encoding::O200kBase.tokenizer()).unwrap();
/// let (head, tail) = (&listing[..cut.head_end], &listing[cut.tail_start..]);
/// let marker = format!("{}{CUT_MARKER}\n", line_break_after(head));
/// let capped = format!("{head}{marker}{tail}{}{}", line_break_after(tail), cut.note);
/// let mut in_place = listing.clone();
/// cut.apply(&mut in_place);
/// assert_eq!(in_place, capped);
/// ```
pub fn cut(content: &str, limit: &ToolLimit, tokenizer: &dyn Tokenizer) -> Option<Cut> {
    if content.len() <= limit.max_tokens {
        return None;
    }
    Some(Search::new(content, limit, tokenizer, None)?.into_cut())
}

/// What is known of the whole of an output of which the cut sees only a head and a tail.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Whole {
    /// Its tokens.
    pub(crate) tokens: usize,
    /// Its length in bytes.
    pub(crate) len: usize,
}

/// Where [`cut`] would cut an output of which `content` holds the start and the end, and
/// `whole` says the rest: what [`StreamedOutput`](crate::StreamedOutput) cuts. Each of the two
/// must be more tokens than `limit`, and the end must start where a piece starts after a line
/// break ([`Tokenizer::last_split`]), so that no search leaves the part it looks in.
pub(crate) fn cut_known(
    content: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    whole: Whole,
) -> Option<Cut> {
    Some(Search::new(content, limit, tokenizer, Some(whole))?.into_cut())
}

/// Where an output over its limit is cut, and the note that ends it: what [`cut`] finds and
/// [`cap`] applies.
///
/// The capped output is `content[..head_end]`, then with [`Keep::HeadTail`] the line
/// [`CUT_MARKER`], then `content[tail_start..]`, and the note last, the marker and the note each
/// on a line of its own ([`line_break_after`]): for [`Keep::Head`] `tail_start` is the
/// content's length, for [`Keep::Tail`] `head_end` is 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The end of the kept head, a char boundary of the content.
    pub head_end: usize,
    /// The start of the kept tail, a char boundary of the content.
    pub tail_start: usize,
    /// The lines that end the capped output, without the newline before them: the line that
    /// closes a Markdown code fence the kept text leaves open, if it leaves one, and the note.
    pub note: String,
    /// The figures of the cut.
    pub truncation: Truncation,
}

impl Cut {
    /// Whether the line [`CUT_MARKER`] stands between the head and the tail.
    pub fn has_marker(&self) -> bool {
        self.truncation.keep == Keep::HeadTail
    }

    /// The capped output of `content`, the text this cut was found in, built from the parts it
    /// keeps: what [`apply`](Self::apply) leaves in place.
    pub fn capped(&self, content: &str) -> String {
        lay_out(
            &content[..self.head_end],
            self.has_marker(),
            &content[self.tail_start..],
            &self.note,
        )
    }

    /// Cuts `content`, the text this cut was found in, in place.
    pub fn apply(&self, content: &mut String) {
        match self.truncation.keep {
            Keep::Head => content.truncate(self.head_end),
            Keep::Tail => content.replace_range(..self.tail_start, ""),
            Keep::HeadTail => {
                let marker = format!(
                    "{}{CUT_MARKER}\n",
                    line_break_after(&content[..self.head_end])
                );
                content.replace_range(self.head_end..self.tail_start, &marker);
            }
        }
        content.push_str(line_break_after(content));
        content.push_str(&self.note);
    }

    /// The kept text of each of several texts that were cut as one: `joined` is the texts
    /// joined by newlines, the text this cut was found in, and `lengths` their lengths in
    /// bytes. `None` stands for a text wholly cut out. The kept texts joined by newlines are
    /// [`capped`](Self::capped): the marker ends the head's last text, or stands in the text
    /// the middle was cut from, and the note ends the last text kept.
    ///
    /// For outputs made of several texts, such as an MCP result's text blocks, that are
    /// counted as one.
    ///
    /// ```
    /// use tool_output_cap::{cut, Encoding, ToolLimit};
    ///
    /// let blocks: Vec<String> = (0..3).map(|b| (0..400).map(|i| format!("{b}/{i}\n")).collect()).collect();
    /// let joined = blocks.join("\n");
    /// let cut = cut(&joined, &ToolLimit::new(500), Encoding::O200kBase.tokenizer()).unwrap();
    /// let kept = cut.split(&joined, &blocks.iter().map(String::len).collect::<Vec<_>>());
    /// assert!(kept[0].is_some() && kept[2].is_none());
    /// let kept: Vec<String> = kept.into_iter().flatten().collect();
    /// assert_eq!(kept.join("\n"), cut.capped(&joined));
    /// ```
    pub fn split(&self, joined: &str, lengths: &[usize]) -> Vec<Option<String>> {
        let keep = self.truncation.keep;
        let mut kept = Vec::with_capacity(lengths.len());
        let (mut start, mut last_head, mut marked) = (0, None, false);
        for (text, &len) in lengths.iter().enumerate() {
            let end = start + len;
            let head = (keep != Keep::Tail && start <= self.head_end)
                .then(|| &joined[start..end.min(self.head_end)]);
            let tail = (keep != Keep::Head && end >= self.tail_start)
                .then(|| &joined[start.max(self.tail_start)..end]);
            kept.push(match (head, tail) {
                (Some(head), Some(tail)) => {
                    marked = true;
                    Some(format!(
                        "{head}{}{CUT_MARKER}\n{tail}",
                        line_break_after(head)
                    ))
                }
                (Some(head), None) => {
                    last_head = Some(text);
                    Some(head.to_owned())
                }
                (None, Some(tail)) => Some(tail.to_owned()),
                (None, None) => None,
            });
            start = end + 1;
        }
        // A head and a tail in different texts: the marker ends the head's last text.
        if let Some(text) = last_head
            .filter(|_| self.has_marker() && !marked)
            .and_then(|text| kept[text].as_mut())
        {
            text.push_str(line_break_after(text));
            text.push_str(CUT_MARKER);
        }
        if let Some(last) = kept.iter_mut().rev().find_map(Option::as_mut) {
            last.push_str(line_break_after(last));
            last.push_str(&self.note);
        }
        kept
    }
}

/// `head`, the line [`CUT_MARKER`] if there is a `marker`, `tail`, then `note`, each line after
/// a part on a line of its own.
fn lay_out(head: &str, marker: bool, tail: &str, note: &str) -> String {
    let mut capped = String::with_capacity(head.len() + tail.len() + note.len() + 32);
    capped.push_str(head);
    if marker {
        capped.push_str(line_break_after(head));
        capped.push_str(CUT_MARKER);
        capped.push('\n');
    }
    capped.push_str(tail);
    capped.push_str(line_break_after(&capped));
    capped.push_str(note);
    capped
}

/// The search for where an output over its limit is cut: it keeps `content[..head.edge]` and
/// `content[tail.edge..]`.
struct Search<'a> {
    limit: &'a ToolLimit,
    tokenizer: &'a dyn Tokenizer,
    original_tokens: usize,
    /// The length of the whole output, `content`'s unless only its head and tail are at hand.
    original_len: usize,
    head: Part,
    tail: Part,
    line: String,
}

/// A kept part: its edge in the content (the end of a head, the start of a tail) and its tokens.
#[derive(Debug, Clone, Copy)]
struct Part {
    edge: usize,
    tokens: usize,
}

impl Part {
    /// `at_line_edge`, the part cut at a line's edge instead, if that gives up at most an eighth
    /// of `budget`; else this part.
    fn or_at_line_edge(self, at_line_edge: Part, budget: usize) -> Part {
        if self.tokens.saturating_sub(at_line_edge.tokens) <= budget / LINE_SHARE {
            at_line_edge
        } else {
            self
        }
    }
}

/// What the tail search knows: the shortest suffix start over the budget, if any, and the
/// longest suffix within it.
struct Bracket {
    over: Option<usize>,
    within: Part,
}

impl Bracket {
    /// The next start to count, strictly between the two ends (from `from` on while no start is
    /// known over), or `None` when no char boundary is left between them. Until a start over the
    /// budget is known, the `secant` guess, but at least a 64th of the suffix further back; then
    /// the `secant` guess if `secant_first` and it lies between the ends, else the middle.
    fn next(&self, content: &str, from: usize, secant: usize, secant_first: bool) -> Option<usize> {
        let low = match self.over {
            Some(over) => ceil_char_boundary(content, over + 1),
            None => from,
        };
        let high = self.within.edge;
        if low >= high {
            return None;
        }
        let guess = match self.over {
            None => secant.min(high - ((content.len() - high) / 64).max(1)),
            Some(_) if secant_first && (low..high).contains(&secant) => secant,
            Some(_) => low + (high - low) / 2,
        };
        // `low` is a char boundary, so the one at or before the guess is between the ends.
        Some(floor_char_boundary(content, guess.max(low)))
    }
}

impl<'a> Search<'a> {
    /// Finds the cut, or `None` if the content is within the limit.
    fn new(
        content: &str,
        limit: &'a ToolLimit,
        tokenizer: &'a dyn Tokenizer,
        whole: Option<Whole>,
    ) -> Option<Self> {
        let max_tokens = limit.max_tokens;
        let original_len = whole.map_or(content.len(), |whole| whole.len);
        // Room for the note (no more tokens can be dropped than the text has bytes) and the
        // marker.
        let mut reserved = format!("\n{}", note(original_len, limit.hint()));
        if limit.keep == Keep::HeadTail {
            reserved.push_str(&format!("\n{CUT_MARKER}\n"));
        }
        let budget = max_tokens.saturating_sub(tokenizer.count(&reserved));
        let head_budget = match limit.keep {
            Keep::Head => budget,
            Keep::Tail => 0,
            Keep::HeadTail => budget / 2,
        };
        // The one pass over the whole text: its count, and the head.
        let first = tokenizer.prefix(content, head_budget);
        let original_tokens = whole.map_or(first.total_tokens, |whole| whole.tokens);
        if original_tokens <= max_tokens {
            return None;
        }
        let mut cut = Search {
            limit,
            tokenizer,
            original_tokens,
            original_len,
            head: Part { edge: 0, tokens: 0 },
            tail: Part {
                edge: content.len(),
                tokens: 0,
            },
            line: String::new(),
        };
        if head_budget > 0 {
            cut.head = cut.head_at_line_end(content, first, head_budget);
        }
        if limit.keep != Keep::Head {
            cut.tail = cut.tail_within(content, budget - cut.head.tokens);
        }
        cut.fit(content);
        Some(cut)
    }

    /// Cuts again until the assembled output, note included, is within the limit: BPE counts are
    /// not additive, so the seams may take more tokens than reserved.
    fn fit(&mut self, content: &str) {
        let max_tokens = self.limit.max_tokens;
        loop {
            let kept_tokens = self.head.tokens + self.tail.tokens;
            let before_note = match self.limit.keep {
                Keep::Head => &content[..self.head.edge],
                // With head_tail and no tail, the marker's line ends with a newline.
                Keep::Tail | Keep::HeadTail => &content[self.tail.edge..],
            };
            let closing_fence = match self.limit.keep {
                Keep::Head | Keep::Tail => closing_fence(before_note),
                Keep::HeadTail => closing_fence(&format!(
                    "{}\n{CUT_MARKER}\n{before_note}",
                    &content[..self.head.edge]
                )),
            };
            self.line = format!(
                "{}{}{}",
                line_break_after(before_note),
                closing_fence.map_or_else(String::new, |fence| fence + "\n"),
                note(self.original_tokens - kept_tokens, self.limit.hint())
            );
            let tokens = match self.limit.keep {
                Keep::Head => self.tokenizer.count_edited(
                    &content[..self.head.edge],
                    self.head.tokens,
                    self.head.edge,
                    &self.line,
                ),
                Keep::Tail => {
                    let tail = &content[self.tail.edge..];
                    self.tokenizer
                        .count_edited(tail, self.tail.tokens, tail.len(), &self.line)
                }
                Keep::HeadTail => self.tokenizer.count(&self.assemble(content)),
            };
            if tokens <= max_tokens || kept_tokens == 0 {
                return;
            }
            let excess = tokens - max_tokens;
            if self.tail.tokens >= self.head.tokens {
                self.tail = self.tail_within(content, self.tail.tokens.saturating_sub(excess));
            } else {
                let budget = self.head.tokens.saturating_sub(excess);
                let prefix = self.tokenizer.prefix(&content[..self.head.edge], budget);
                self.head = self.head_at_line_end(content, prefix, budget);
            }
        }
    }

    /// The head `prefix` gives, moved back to the end of its last whole line if the line it cuts
    /// holds at most an eighth of `budget`.
    fn head_at_line_end(&self, content: &str, prefix: Prefix, budget: usize) -> Part {
        let head = Part {
            edge: prefix.len,
            tokens: prefix.tokens,
        };
        let at_line_end = content
            .as_bytes()
            .get(head.edge)
            .is_none_or(|&byte| byte == b'\n');
        let Some(line_end) = content[..head.edge].rfind('\n').filter(|_| !at_line_end) else {
            return head;
        };
        let kept = &content[..head.edge];
        let tokens = self.tokenizer.count_edited(kept, head.tokens, line_end, "");
        head.or_at_line_edge(
            Part {
                edge: line_end,
                tokens,
            },
            budget,
        )
    }

    /// The longest suffix of `content` after the head within `budget` tokens, moved forward to
    /// the start of its first whole line if the line it cuts holds at most an eighth of the
    /// budget.
    ///
    /// The suffix found is within the budget and one character longer is not: a bisection over
    /// the char boundaries between the longest suffix known within and the shortest known over,
    /// sped up by secant steps by the bytes a token of the last count.
    fn tail_within(&self, content: &str, budget: usize) -> Part {
        let end = Part {
            edge: content.len(),
            tokens: 0,
        };
        if budget == 0 {
            return end;
        }
        let from = self.head.edge;
        let count = |start: usize| self.tokenizer.count(&content[start..]);
        // Start where the average token would put the cut.
        let bytes_a_token = self
            .original_len
            .div_ceil(self.original_tokens.max(1))
            .max(1);
        let mut start = content
            .len()
            .saturating_sub(budget * bytes_a_token)
            .max(from);
        let mut bracket = Bracket {
            over: None,
            within: end,
        };
        for step in 0.. {
            start = ceil_char_boundary(content, start);
            let tokens = count(start);
            let bytes_a_token = (content.len() - start).div_ceil(tokens.max(1)).max(1);
            let secant = if tokens <= budget {
                bracket.within = Part {
                    edge: start,
                    tokens,
                };
                if start == from {
                    break;
                }
                start.saturating_sub((budget - tokens) * bytes_a_token)
            } else {
                bracket.over = Some(start);
                start + (tokens - budget) * bytes_a_token
            };
            match bracket.next(content, from, secant, step % 2 == 0) {
                Some(next) => start = next,
                None => break,
            }
        }
        let best = bracket.within;
        let Some(line_start) = content[best.edge..]
            .find('\n')
            .map(|at| best.edge + at + 1)
            .filter(|_| best.edge > from && content.as_bytes()[best.edge - 1] != b'\n')
        else {
            return best;
        };
        best.or_at_line_edge(
            Part {
                edge: line_start,
                tokens: count(line_start),
            },
            budget,
        )
    }

    /// The capped output.
    fn assemble(&self, content: &str) -> String {
        lay_out(
            &content[..self.head.edge],
            self.limit.keep == Keep::HeadTail,
            &content[self.tail.edge..],
            self.line.trim_start_matches('\n'),
        )
    }

    /// The cut found.
    fn into_cut(self) -> Cut {
        let kept_tokens = self.head.tokens + self.tail.tokens;
        Cut {
            head_end: self.head.edge,
            tail_start: self.tail.edge,
            note: self.line.trim_start_matches('\n').to_owned(),
            truncation: Truncation {
                original_tokens: self.original_tokens,
                kept_tokens,
                dropped_tokens: self.original_tokens - kept_tokens,
                max_tokens: self.limit.max_tokens,
                keep: self.limit.keep,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Encoding;

    fn count(text: &str) -> usize {
        Encoding::O200kBase.tokenizer().count(text)
    }

    fn capped(text: &str, limit: &ToolLimit) -> (String, Option<Truncation>) {
        let mut content = text.to_owned();
        let truncation = cap(&mut content, limit, Encoding::O200kBase.tokenizer());
        (content, truncation)
    }

    #[test]
    fn an_output_within_the_limit_is_untouched() {
        let text = "one two three four five six seven eight nine ten ".repeat(20);
        let tokens = count(&text);
        assert!(
            text.len() > tokens,
            "the byte shortcut must not decide this case"
        );
        assert_eq!(capped(&text, &ToolLimit::new(tokens)), (text.clone(), None));
    }

    #[test]
    fn an_output_over_the_limit_ends_with_the_note() {
        let text = "src/some/module/file.rs\n".repeat(500);
        let (content, truncation) = capped(&text, &ToolLimit::new(200));
        let truncation = truncation.expect("over the limit");
        let (kept, note_line) = content.rsplit_once('\n').unwrap();
        assert_eq!(note_line, note(truncation.dropped_tokens, None));
        assert!(text.starts_with(kept));
        assert_eq!(truncation.original_tokens, count(&text));
        assert_eq!(truncation.kept_tokens, count(kept));
        assert_eq!(truncation.keep, Keep::Head);
        assert!(count(&content) <= 200);
    }

    #[test]
    fn a_cut_inside_a_character_moves_back_to_its_start() {
        let text = "日本語🦀".repeat(400);
        let (content, truncation) = capped(&text, &ToolLimit::new(64));
        let kept = content.rsplit_once('\n').unwrap().0;
        assert!(text.starts_with(kept));
        assert!(count(&content) <= 64);
        assert_eq!(truncation.unwrap().kept_tokens, count(kept));
    }

    #[test]
    fn a_cut_inside_a_line_moves_to_its_edge() {
        let text = "src/components/module/widget.rs\n".repeat(400);
        for keep in [Keep::Head, Keep::Tail, Keep::HeadTail] {
            let (content, _) = capped(&text, &ToolLimit::new(150).with_keep(keep));
            let kept = content.rsplit_once('\n').unwrap().0;
            let lines: Vec<&str> = kept.lines().filter(|line| !line.is_empty()).collect();
            assert!(lines.len() > 10, "{keep}: {kept:?}");
            for line in lines {
                assert!(
                    line == "src/components/module/widget.rs" || line == CUT_MARKER,
                    "{keep}: half a path {line:?}"
                );
            }
        }
    }

    #[test]
    fn a_single_long_line_is_cut_inside() {
        let text = "x".repeat(100_000);
        let (content, truncation) = capped(&text, &ToolLimit::new(100));
        assert!(truncation.unwrap().kept_tokens > 50);
        assert!(content.starts_with("xxxx"));
    }

    #[test]
    fn the_hint_ends_the_note() {
        let limit = ToolLimit::new(100).with_hint("use a narrower pattern, e.g. src/**/*.rs");
        let (content, truncation) = capped(&"a/b.rs\n".repeat(1000), &limit);
        let dropped = truncation.unwrap().dropped_tokens;
        assert!(content.ends_with(&format!(
            "\ntruncated: {dropped} tokens dropped, refine your query: use a narrower pattern, e.g. src/**/*.rs"
        )));
        assert!(count(&content) <= 100);
    }

    #[test]
    fn no_blank_line_comes_before_the_note_or_the_marker() {
        let log = (0..2000)
            .map(|i| format!("compiling crate_{i}\n"))
            .collect::<String>();
        for keep in [Keep::Head, Keep::Tail, Keep::HeadTail] {
            let (content, truncation) = capped(&log, &ToolLimit::new(100).with_keep(keep));
            let note_line = note(truncation.unwrap().dropped_tokens, None);
            let kept = content.strip_suffix(&note_line).expect("the note ends it");
            assert!(
                kept.ends_with('\n') && !kept.ends_with("\n\n"),
                "{keep}: {content:?}"
            );
            assert!(!content.contains("\n\n"), "{keep}: {content:?}");
        }
        // The log ends with a newline: the tail keeps it, and the note follows it.
        let (content, _) = capped(&log, &ToolLimit::new(100).with_keep(Keep::Tail));
        assert!(
            content.contains("compiling crate_1999\ntruncated: "),
            "{content:?}"
        );
    }

    #[test]
    fn a_code_fence_left_open_is_closed_before_the_note() {
        // The shape of Playwright MCP's browser_snapshot result.
        let rows: String = (0..4000)
            .map(|i| format!("  - row \"Item {i}\" [ref=e{i}]:\n    - cell \"{i}\" [ref=c{i}]\n"))
            .collect();
        let snapshot = format!(
            "### Page\n- Page URL: http://127.0.0.1:8000/\n### Snapshot\n```yaml\n- table [ref=e1]:\n{rows}```\n"
        );
        for keep in [Keep::Head, Keep::HeadTail] {
            let (content, truncation) = capped(&snapshot, &ToolLimit::new(500).with_keep(keep));
            let note_line = note(truncation.unwrap().dropped_tokens, None);
            assert!(
                content.ends_with(&format!("\n```\n{note_line}")),
                "{keep}: {content:?}"
            );
            assert!(count(&content) <= 500);
            let kept = content.strip_suffix(&format!("```\n{note_line}")).unwrap();
            assert_eq!(closing_fence(kept).as_deref(), Some("```"), "{keep}");
            assert_eq!(closing_fence(&content), None, "{keep}");
        }
        // A tail holds the fence's end but not its start, so that, read on its own, its last
        // line opens a fence: that one is closed too, and the note is not read as code.
        let (content, _) = capped(&snapshot, &ToolLimit::new(500).with_keep(Keep::Tail));
        let before_note = content.rsplit_once('\n').unwrap().0;
        assert!(before_note.ends_with("```\n```"), "{content:?}");
        assert_eq!(closing_fence(before_note), None);
        let log = "compiling\n".repeat(2000);
        let (content, _) = capped(&log, &ToolLimit::new(100));
        assert!(!content.contains("```"));
    }

    #[test]
    fn empty_output_is_untouched() {
        assert_eq!(capped("", &ToolLimit::new(32)), (String::new(), None));
    }
}
