//! A request's budget: which of its older tool results give way, whole, so that all of them
//! together fit `max_tokens_per_request`.
//!
//! The rule is a pure function of the results' token counts, in request order:
//!
//! - The newest turn's results are not elided (the request cap gives them their turn's shares,
//!   within the budget).
//! - When the results are over the budget by `over`, the oldest results give way first, each
//!   replaced by a stub line, until what they give is at least `over` rounded up to a multiple
//!   of half the budget.
//!
//! So the elided prefix is found from the oldest result's side with sums that appending turns
//! does not change, and it moves only when `over` passes a multiple of half the budget: at most
//! once for each half budget of new results' tokens. A history sent again with one more turn
//! keeps the bytes of every result before the step, and the provider's prompt cache hits.

/// A tool result as the budget sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Weighed {
    /// Its tokens, as it goes up capped.
    pub(super) tokens: usize,
    /// The tokens of its stub line, if it may be replaced by one.
    pub(super) stub_tokens: Option<usize>,
    /// Whether it is of the newest turn.
    pub(super) newest: bool,
}

/// Which of `results` are replaced by their stubs so that together they fit `budget`, when the
/// older ones can make them fit; as many as there are, when they cannot. They give way in
/// multiples of `step` tokens (half the budget, when it does not change from request to request).
pub(super) fn elided(results: &[Weighed], budget: usize, step: usize) -> Vec<bool> {
    let mut elided = vec![false; results.len()];
    let total: usize = results.iter().map(|result| result.tokens).sum();
    let Some(over) = total.checked_sub(budget).filter(|&over| over > 0) else {
        return elided;
    };
    let step = step.max(1);
    let target = over.div_ceil(step) * step;
    let mut given = 0;
    for (at, result) in results.iter().enumerate() {
        if given >= target {
            break;
        }
        let Some(stub_tokens) = result.stub_tokens.filter(|_| !result.newest) else {
            continue;
        };
        if let Some(saved) = result.tokens.checked_sub(stub_tokens).filter(|&s| s > 0) {
            elided[at] = true;
            given += saved;
        }
    }
    elided
}

/// The stub that stands for a result of `tool`, of `tokens` tokens, given way to the budget.
pub(super) fn stub(tool: Option<&str>, tokens: usize) -> String {
    let again = match tool {
        Some(tool) if !tool.is_empty() => format!("call {tool} again"),
        _ => "call the tool again".to_owned(),
    };
    format!("truncated: all {tokens} tokens dropped to fit the request's budget, {again} if you need it")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn old(tokens: usize) -> Weighed {
        Weighed {
            tokens,
            stub_tokens: Some(20),
            newest: false,
        }
    }

    #[test]
    fn the_oldest_give_way_in_steps_of_half_the_budget_and_the_newest_never() {
        let newest = Weighed {
            tokens: 3000,
            newest: true,
            ..old(0)
        };
        // Within the budget: nothing.
        assert_eq!(
            elided(&[old(1000), newest], 10_000, 10_000 / 2),
            [false, false]
        );
        // 1000 over: the first results that give 5000 (half the budget) go.
        let results = [old(3000), old(3000), old(3000), old(3000), newest];
        assert_eq!(
            elided(&results, 10_000, 10_000 / 2),
            [true, true, false, false, false]
        );
        // One more turn, 2000 more over: still under the next step, the same prefix.
        let more = [
            old(3000),
            old(3000),
            old(3000),
            old(3000),
            old(3000),
            newest,
        ];
        assert_eq!(
            elided(&more, 13_000, 13_000 / 2)[..2],
            [true, true],
            "a budget of 13000: 5000 over, a step of 6500"
        );
        assert_eq!(
            elided(&more, 10_000, 10_000 / 2)[..4],
            [true, true, true, true],
            "4000 over: a step of 5000"
        );
        // A result that cannot give way is passed over; the newest never gives way.
        let fixed = Weighed {
            stub_tokens: None,
            ..old(9000)
        };
        assert_eq!(
            elided(&[fixed, old(3000), newest], 1000, 1000 / 2),
            [false, true, false]
        );
    }

    #[test]
    fn a_stub_names_the_tool_and_what_was_dropped() {
        assert_eq!(
            stub(Some("Glob"), 4990),
            "truncated: all 4990 tokens dropped to fit the request's budget, call Glob again if you need it"
        );
        assert!(stub(None, 1).contains("call the tool again"));
    }
}
