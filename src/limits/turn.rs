//! A turn's budget, shared among its results.

use crate::limit::ToolLimit;
use crate::limits::ToolOutputLimits;
use crate::tokenizer::Tokenizer;

impl ToolOutputLimits {
    /// The limit each of one model turn's results is cut to: `results` gives each one's tool and
    /// text (an output or an error's message), in any order, and the limits come back in it.
    ///
    /// Without `max_tokens_per_turn`, each is its tool's limit. With it, the results together,
    /// notes included, stay within it: each result is first held to its tool's limit; if they
    /// are over the turn's budget together, the budget is shared by water-filling: every result
    /// at or under an equal share keeps its tool's limit, and the others are cut to that share,
    /// the largest it can be while they all fit. A share is never under 32 tokens (room for the
    /// note), so a turn of more results than `max_tokens_per_turn / 32` can go over it.
    ///
    /// ```
    /// use tool_output_cap::ToolOutputLimits;
    ///
    /// let limits = ToolOutputLimits::new(5000)?.with_max_tokens_per_turn(6000)?;
    /// let listing: String = (0..5000).map(|i| format!("src/module_{i}/mod.rs\n")).collect();
    /// let turn = limits.limits_for_turn(&[("Glob", &listing), ("Read", "fn main() {}\n"), ("Grep", &listing)]);
    /// assert_eq!(turn[0].max_tokens(), turn[2].max_tokens());
    /// assert!(turn[0].max_tokens() < 3000 && turn[1].max_tokens() == 5000);
    /// # Ok::<(), tool_output_cap::LimitError>(())
    /// ```
    pub fn limits_for_turn(&self, results: &[(&str, &str)]) -> Vec<ToolLimit> {
        self.limits_sharing(results, self.max_tokens_per_turn())
    }

    /// [`limits_for_turn`](Self::limits_for_turn) with `max_tokens` shared, if given, in place
    /// of the turn's budget.
    pub(crate) fn limits_sharing(
        &self,
        results: &[(&str, &str)],
        max_tokens: Option<usize>,
    ) -> Vec<ToolLimit> {
        let Some(max_tokens) = max_tokens else {
            return results
                .iter()
                .map(|(tool, _)| self.limit_for(tool).clone())
                .collect();
        };
        let demands: Vec<(&str, usize)> = results
            .iter()
            .map(|(tool, text)| (*tool, self.demand(tool, text)))
            .collect();
        self.limits_for_demands(&demands, max_tokens)
    }

    /// What `text`, a result of `tool`, takes when held to its tool's limit alone.
    pub(crate) fn demand(&self, tool: &str, text: &str) -> usize {
        within(self.tokenizer(), text, self.max_tokens_for(tool))
    }

    /// The limits of results that share `max_tokens`, given each one's tool and
    /// [`demand`](Self::demand).
    pub(crate) fn limits_for_demands(
        &self,
        demands: &[(&str, usize)],
        max_tokens: usize,
    ) -> Vec<ToolLimit> {
        let takes: Vec<usize> = demands.iter().map(|(_, demand)| *demand).collect();
        let share = water_level(&takes, max_tokens).max(ToolLimit::MIN_MAX_TOKENS);
        demands
            .iter()
            .map(|&(tool, demand)| {
                let limit = self.limit_for(tool).clone();
                if demand <= share {
                    limit
                } else {
                    // At least the least a limit may be, as a share is.
                    ToolLimit {
                        max_tokens: share,
                        ..limit
                    }
                }
            })
            .collect()
    }
}

/// The tokens of `text`, or `max_tokens` if it is over them.
fn within(tokenizer: &dyn Tokenizer, text: &str, max_tokens: usize) -> usize {
    tokenizer
        .count_within(text, max_tokens)
        .unwrap_or(max_tokens)
}

/// The largest level such that `demands`, each cut to it, add up to at most `budget`; `usize::MAX`
/// when they fit whole.
fn water_level(demands: &[usize], budget: usize) -> usize {
    let mut sorted = demands.to_vec();
    sorted.sort_unstable();
    let mut remaining = budget;
    for (i, &demand) in sorted.iter().enumerate() {
        let share = remaining / (sorted.len() - i);
        if demand > share {
            return share;
        }
        remaining -= demand;
    }
    usize::MAX
}
