//! The search for where an output over its limit is cut: the most of it that fits with the note,
//! cut at line edges where that costs little.

use crate::layout::{ending, kept_read, lay_out, note, Cut, CUT_MARKER};
use crate::limit::{Keep, ToolLimit};
use crate::tokenizer::{ceil_char_boundary, floor_char_boundary, Prefix, Tokenizer};
use crate::truncation::Truncation;

/// A cut that falls inside a line moves to the line's edge when that gives up no more than
/// this share of the part's budget: one eighth.
const LINE_SHARE: usize = 8;

/// The tokens and bytes of a stretch of an output: the whole of one of which the cut sees only a
/// head and a tail, or what lies between them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Extent {
    /// Its tokens.
    pub(crate) tokens: usize,
    /// Its length in bytes.
    pub(crate) len: usize,
}

/// The search for where an output over its limit is cut: it keeps `content[..head.edge]` and
/// `content[tail.edge..]`.
pub(crate) struct Search<'a> {
    limit: &'a ToolLimit,
    tokenizer: &'a dyn Tokenizer,
    original_tokens: usize,
    /// The length of the whole output, `content`'s unless only its head and tail are at hand.
    original_len: usize,
    head: Part,
    tail: Part,
    /// What follows the kept parts: the fence's closing line, if any, and the note, each after
    /// a newline when needed, then `suffix`.
    ending: String,
    suffix: &'a str,
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
            None => secant.min(high.saturating_sub(((content.len() - high) / 64).max(1))),
            Some(_) if secant_first && (low..high).contains(&secant) => secant,
            Some(_) => low + (high - low) / 2,
        };
        // `low` is a char boundary, so the one at or before the guess is between the ends.
        Some(floor_char_boundary(content, guess.max(low)))
    }
}

impl<'a> Search<'a> {
    /// Finds the cut, or `None` if the content is within the limit.
    pub(crate) fn new(
        content: &str,
        limit: &'a ToolLimit,
        tokenizer: &'a dyn Tokenizer,
        whole: Option<Extent>,
        suffix: &'a str,
    ) -> Option<Self> {
        let max_tokens = limit.max_tokens;
        let original_len = whole.map_or(content.len(), |whole| whole.len);
        // Room for the note (no more tokens can be dropped than the text has bytes) and the
        // marker: what they take, not where they stand, which is `lay_out`'s to say.
        let mut reserved = format!("\n{}{suffix}", note(original_len, limit.hint()));
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
            ending: String::new(),
            suffix,
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
            let head = &content[..self.head.edge];
            let tail = &content[self.tail.edge..];
            let kept = kept_read(self.limit.keep, head, tail);
            let note = note(self.original_tokens - kept_tokens, self.limit.hint());
            self.ending = ending(&kept, &note) + self.suffix;
            let tokens = match self.limit.keep {
                Keep::Head => self.tokenizer.count_edited(
                    &content[..self.head.edge],
                    self.head.tokens,
                    self.head.edge,
                    &self.ending,
                ),
                Keep::Tail => {
                    let tail = &content[self.tail.edge..];
                    self.tokenizer
                        .count_edited(tail, self.tail.tokens, tail.len(), &self.ending)
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
        let mut start = self.first_tail_start(content, budget);
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

    /// Where a tail of `budget` tokens would start if its tokens were of the output's average
    /// length, after the head.
    fn first_tail_start(&self, content: &str, budget: usize) -> usize {
        let bytes_a_token = self
            .original_len
            .div_ceil(self.original_tokens.max(1))
            .max(1);
        content
            .len()
            .saturating_sub(budget * bytes_a_token)
            .max(self.head.edge)
    }

    /// The capped output.
    fn assemble(&self, content: &str) -> String {
        lay_out(
            &content[..self.head.edge],
            self.limit.keep == Keep::HeadTail,
            &content[self.tail.edge..],
            self.ending.trim_start_matches('\n'),
        )
    }

    /// The cut found.
    pub(crate) fn into_cut(self) -> Cut {
        let kept_tokens = self.head.tokens + self.tail.tokens;
        Cut {
            head_end: self.head.edge,
            tail_start: self.tail.edge,
            note: self.ending.trim_start_matches('\n').to_owned(),
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

    /// A suffix within the budget that starts near the content's start, in a content of more
    /// than 64 bytes after it: the step back from it is more than the bytes before it.
    #[test]
    fn the_next_start_stays_between_the_ends_when_the_suffix_within_starts_near_the_start() {
        let content = " ".repeat(500);
        let bracket = Bracket {
            over: None,
            within: Part { edge: 2, tokens: 4 },
        };
        assert_eq!(bracket.next(&content, 0, 400, true), Some(0));
        assert_eq!(bracket.next(&content, 1, 400, true), Some(1));
    }
}
