//! A request's budget: every tool result of a request as one [`Record`], laid out under its
//! limit, then fitted to the room the request's budget leaves. How older results give way is
//! here, and only here.
//!
//! The budget is `max_tokens_per_request`, or `rate_limit_share` of the provider's per-minute
//! input-token limit, whichever is smaller, and no more than the rest of the request leaves
//! under that limit ([`RequestCap::cap_within_rate_limit`]). The rules:
//!
//! - A result's tokens are its text's and its images', each image at its provider's price
//!   ([`wire`](super)): a result of screenshots weighs what the model is charged for it.
//! - Each result is first held to its limit: its tool's, or its turn's share when the turn's
//!   results share `max_tokens_per_turn` or the budget, each turn on its own.
//! - The newest turn's results are never elided.
//! - When the results are over the budget by `over`, the oldest give way first, each replaced
//!   by its stub, one line that names its tool and what was dropped, until what they give is at
//!   least `over` rounded up to a multiple of half the budget. So the elided prefix is found
//!   from the oldest result's side with sums that appending turns does not change, and it moves
//!   only when `over` passes a multiple of half the budget: a history sent again with one more
//!   turn keeps the bytes of every result before the step, and the provider's prompt cache hits.
//! - When the newest turn is still over what the others leave, its results share that, as a
//!   turn shares its budget. They are measured twice for it: what the older results leave
//!   depends on the newest results' tokens as cut to their own limits, so those cuts are made,
//!   and counted, before the room they may take is known.

use std::collections::BTreeMap;
use std::ops::Range;

use super::fate::Fate;
use super::found::Found;
use super::rate::{left, pieces, RateLimitFit, NEWEST_FLOOR};
use super::{cache, RequestCap};
use crate::limit::ToolLimit;
use crate::truncation::Truncation;

/// A tool result of a request, and all that the budget knows of it.
#[derive(Debug)]
pub(super) struct Record<'a> {
    /// Where it is, its tool, turn and outcome.
    pub(super) result: Found<'a>,
    /// The limit it is cut to: its turn's share, else its tool's.
    pub(super) limit: ToolLimit,
    /// What becomes of it.
    pub(super) fate: Fate,
    /// The stub it gives way to, under a budget; `None` for the newest turn's, which never give
    /// way, and for a slot whose shape is demanded.
    stub: Option<Stub>,
    /// Whether it is of the newest turn.
    newest: bool,
}

/// The one line that stands for a result given way to the budget.
#[derive(Debug)]
struct Stub {
    /// The JSON that replaces the result.
    json: String,
    /// The figures: every token dropped.
    truncation: Truncation,
    /// Its tokens, as measured where it stands.
    tokens: usize,
}

/// A tool result as the rule of [`elided_before`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Weighed {
    /// Its tokens, as it goes up capped.
    tokens: usize,
    /// The tokens of its stub line, if it may be replaced by one.
    stub_tokens: Option<usize>,
    /// Whether it is of the newest turn.
    newest: bool,
}

impl Weighed {
    /// What it gives by giving way to its stub: `None` when it may not, or gives nothing.
    fn saves(self) -> Option<usize> {
        let stub_tokens = self.stub_tokens.filter(|_| !self.newest)?;
        self.tokens
            .checked_sub(stub_tokens)
            .filter(|&saved| saved > 0)
    }
}

impl Record<'_> {
    /// Its tokens as it goes up, counted under a budget.
    fn tokens(&self) -> usize {
        self.fate.tokens.unwrap_or_default()
    }

    fn weighed(&self) -> Weighed {
        Weighed {
            tokens: self.tokens(),
            stub_tokens: self.stub.as_ref().map(|stub| stub.tokens),
            newest: self.newest,
        }
    }

    /// The least it can take: the newest's floor (at most its own limit and tokens), an older
    /// one's stub (at most its own tokens).
    fn least(&self) -> usize {
        match self.newest {
            true => self.tokens().min(self.limit.max_tokens()).min(NEWEST_FLOOR),
            false => self
                .weighed()
                .stub_tokens
                .map_or(self.tokens(), |stub| stub.min(self.tokens())),
        }
    }

    /// Gives way to its stub, if that gives anything.
    fn give_way(&mut self) {
        if self.weighed().saves().is_none() {
            return;
        }
        if let Some(stub) = self.stub.take() {
            self.fate = Fate {
                cut: Some((stub.json.into(), stub.truncation)),
                tokens: Some(stub.tokens),
                cached: false,
                elided: true,
            };
        }
    }
}

impl RequestCap {
    /// The budget of a request's tool results together: the smaller of `max_tokens_per_request`
    /// and `rate_limit_share` of `rate_limit`, the per-minute limit the provider reported.
    pub(super) fn budget(&self, rate_limit: Option<usize>) -> Option<usize> {
        let shared = rate_limit
            .zip(self.limits.rate_limit_share())
            .map(|(limit, share)| share.of(limit).max(ToolLimit::MIN_MAX_TOKENS));
        [self.limits.max_tokens_per_request(), shared]
            .into_iter()
            .flatten()
            .min()
    }

    /// The records of the results `found`: each held to its limit (its turn's share of
    /// `max_tokens_per_turn` or `budget`, else its tool's) and cut to it, with its stub under a
    /// budget.
    pub(super) fn lay_out<'a>(
        &self,
        found: Vec<Found<'a>>,
        budget: Option<usize>,
    ) -> Vec<Record<'a>> {
        let newest = found.iter().map(|result| result.turn).max();
        let mut records: Vec<Record<'a>> = found
            .into_iter()
            .map(|result| Record {
                limit: self.limit_of(&result).clone(),
                newest: Some(result.turn) == newest,
                result,
                fate: Fate::default(),
                stub: None,
            })
            .collect();
        self.share_turns(&mut records, budget);
        for record in &mut records {
            record.fate = self.fate(&record.result, &record.limit);
            // The newest turn's results never give way: they need no stub.
            record.stub = budget
                .filter(|_| !record.newest)
                .and_then(|_| self.stub(record));
        }
        records
    }

    /// Fits `records` to `budget`: older results give way to their stubs; then, if the newest
    /// turn is over what the rest leaves, its results share that. With `rate_limit`, the
    /// per-minute limit the provider reported, no more than what the rest of the request,
    /// `readable`, leaves under it; how that went is returned.
    pub(super) fn fit(
        &self,
        records: &mut [Record<'_>],
        budget: usize,
        rate_limit: Option<(usize, &str)>,
    ) -> Option<RateLimitFit> {
        // Steps of half the configured budget, whatever the rest leaves: a smaller budget then
        // only ever elides more.
        let step = budget / 2;
        let fit = rate_limit.map(|(limit, readable)| {
            let rest_tokens = self.rest_tokens(readable, records);
            let least: usize = records.iter().map(Record::least).sum();
            let left = left(limit, rest_tokens, budget / 4);
            RateLimitFit {
                limit,
                rest_tokens,
                budget: (least <= left).then_some(budget.min(left)),
            }
        });
        let budget = fit.and_then(|fit| fit.budget).unwrap_or(budget);
        let end = elided_before(records.iter().map(Record::weighed), budget, step);
        records[..end].iter_mut().for_each(Record::give_way);
        self.share_newest(records, budget);
        fit
    }

    /// The limit of `result` alone: its tool's.
    fn limit_of(&self, result: &Found<'_>) -> &ToolLimit {
        self.limits
            .limit_for(result.tool.as_deref().unwrap_or_default())
    }

    /// Each turn's results (those that answer one model message) share `max_tokens_per_turn`,
    /// or the request's `budget` if it is smaller, each turn on its own, so that a turn's cuts
    /// depend on its results alone and appending turns moves none of them.
    fn share_turns(&self, records: &mut [Record<'_>], budget: Option<usize>) {
        let budget = match (self.limits.max_tokens_per_turn(), budget) {
            (Some(turn), Some(request)) => turn.min(request),
            (Some(budget), None) | (None, Some(budget)) => budget,
            (None, None) => return,
        };
        let mut turns: BTreeMap<Option<usize>, Vec<&mut Record<'_>>> = BTreeMap::new();
        for record in records {
            turns.entry(record.result.turn).or_default().push(record);
        }
        for turn in turns.values_mut() {
            self.share(turn, budget);
        }
    }

    /// The `records` share `budget`, as a turn's results share it
    /// ([`ToolOutputLimits::limits_for_turn`](crate::ToolOutputLimits::limits_for_turn)).
    fn share(&self, records: &mut [&mut Record<'_>], budget: usize) {
        let demands: Vec<(&str, usize)> = records
            .iter()
            .map(|record| {
                let tool = record.result.tool.as_deref().unwrap_or_default();
                (tool, self.demand(&record.result, tool))
            })
            .collect();
        let shares = self.limits.limits_for_demands(&demands, budget);
        for (record, share) in records.iter_mut().zip(shares) {
            record.limit = share;
        }
    }

    /// What `result`, of `tool`, takes when held to its tool's limit alone: counted once, and
    /// kept, as a history sent again shares its turns' budgets again on every request.
    fn demand(&self, result: &Found<'_>, tool: &str) -> usize {
        let limit = self.limits.limit_for(tool);
        let key = cache::Key::of_demand(result.content.json().get(), limit);
        let (entry, _) = self.cache.get_or_make(key, || cache::Entry {
            cut: None,
            tokens: Some(self.limits.demand(tool, &result.content.text())),
        });
        entry.tokens.unwrap_or_default()
    }

    /// The stub that stands for `record`'s result given way to the budget; `None` for a slot
    /// whose shape is demanded.
    fn stub(&self, record: &Record<'_>) -> Option<Stub> {
        let original = match &record.fate.cut {
            Some((_, truncation)) => truncation.original_tokens,
            None => record.tokens(),
        };
        let result = &record.result;
        let json = result
            .content
            .replaced_by(&stub_line(result.tool.as_deref(), original))?;
        let limit = result.outcome.limit(&record.limit);
        let truncation = Truncation {
            original_tokens: original,
            kept_tokens: 0,
            dropped_tokens: original,
            max_tokens: limit.max_tokens(),
            keep: limit.keep(),
        };
        let tokens = self.tokens_of(result, Some(&json));
        Some(Stub {
            json,
            truncation,
            tokens,
        })
    }

    /// When the newest turn's results are over what the others leave of `budget`, they share
    /// that, as a turn shares its budget (each at least [`ToolLimit::MIN_MAX_TOKENS`]), and are
    /// cut again.
    fn share_newest(&self, records: &mut [Record<'_>], budget: usize) {
        let (mut newest, older): (Vec<&mut Record<'_>>, Vec<&mut Record<'_>>) =
            records.iter_mut().partition(|record| record.newest);
        let room = budget.saturating_sub(older.iter().map(|record| record.tokens()).sum());
        if newest.iter().map(|record| record.tokens()).sum::<usize>() <= room {
            return;
        }
        self.share(&mut newest, room);
        for record in newest {
            record.fate = self.fate(&record.result, &record.limit);
        }
    }

    /// The tokens of `readable` outside the tool results of `records`, counted in pieces
    /// ([`pieces`]) that the cache keeps: what a history sent again adds is counted, not what
    /// it repeats.
    fn rest_tokens(&self, readable: &str, records: &[Record<'_>]) -> usize {
        let mut spans: Vec<Range<usize>> = records
            .iter()
            .map(|record| crate::json::walk::span_of(readable, record.result.content.json().get()))
            .collect();
        spans.sort_by_key(|span| span.start);
        let mut outside = Vec::new();
        let mut at = 0;
        for span in spans {
            if span.start >= at {
                outside.push(&readable[at..span.start]);
                at = span.end;
            }
        }
        outside.push(&readable[at..]);
        let tokenizer = self.limits.tokenizer();
        outside
            .into_iter()
            .flat_map(|text| pieces(text).map(move |piece| &text[piece]))
            .map(|piece| self.cache.count(piece, tokenizer))
            .sum()
    }
}

/// How many of `results`, oldest first, are passed over before enough of them gave way: each
/// that can give something ([`Weighed::saves`]) before that place is replaced by its stub, so
/// that together they fit `budget` when the older ones can make them fit, in multiples of
/// `step` tokens (half the budget, when it does not change from request to request).
fn elided_before(
    results: impl Iterator<Item = Weighed> + Clone,
    budget: usize,
    step: usize,
) -> usize {
    let total: usize = results.clone().map(|result| result.tokens).sum();
    let Some(over) = total.checked_sub(budget).filter(|&over| over > 0) else {
        return 0;
    };
    let step = step.max(1);
    let target = over.div_ceil(step) * step;
    let mut given = 0;
    let mut end = 0;
    for result in results {
        if given >= target {
            break;
        }
        given += result.saves().unwrap_or_default();
        end += 1;
    }
    end
}

/// The stub line that stands for a result of `tool`, of `tokens` tokens, given way to the budget.
fn stub_line(tool: Option<&str>, tokens: usize) -> String {
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

    /// Which of `results` give way under `budget` in steps of half of `step_of`.
    fn elided(results: &[Weighed], budget: usize, step_of: usize) -> Vec<bool> {
        let end = elided_before(results.iter().copied(), budget, step_of / 2);
        let gives = |(at, result): (usize, &Weighed)| at < end && result.saves().is_some();
        results.iter().enumerate().map(gives).collect()
    }

    #[test]
    fn the_oldest_give_way_in_steps_of_half_the_budget_and_the_newest_never() {
        let newest = Weighed {
            tokens: 3000,
            newest: true,
            ..old(0)
        };
        // Within the budget: nothing.
        assert_eq!(elided(&[old(1000), newest], 10_000, 10_000), [false, false]);
        // 1000 over: the first results that give 5000 (half the budget) go.
        let results = [old(3000), old(3000), old(3000), old(3000), newest];
        assert_eq!(
            elided(&results, 10_000, 10_000),
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
            elided(&more, 13_000, 13_000)[..2],
            [true, true],
            "a budget of 13000: 5000 over, a step of 6500"
        );
        assert_eq!(
            elided(&more, 10_000, 10_000)[..4],
            [true, true, true, true],
            "4000 over: a step of 5000"
        );
        // A result that cannot give way is passed over; the newest never gives way.
        let fixed = Weighed {
            stub_tokens: None,
            ..old(9000)
        };
        assert_eq!(
            elided(&[fixed, old(3000), newest], 1000, 1000),
            [false, true, false]
        );
    }

    #[test]
    fn a_stub_names_the_tool_and_what_was_dropped() {
        assert_eq!(
            stub_line(Some("Glob"), 4990),
            "truncated: all 4990 tokens dropped to fit the request's budget, call Glob again if you need it"
        );
        assert!(stub_line(None, 1).contains("call the tool again"));
    }
}
