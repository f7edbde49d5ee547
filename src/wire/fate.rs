//! What becomes of each tool result of a request: its cut to its limit, taken from the cache or
//! made; its tokens as it goes up; and, under a request's budget, its stub.

use std::collections::HashMap;
use std::sync::Arc;

use super::budget::{elided, stub, Weighed};
use super::cache::{Entry, Key};
use super::found::Found;
use super::rate::{left, RateLimitFit, NEWEST_FLOOR};
use super::RequestCap;
use crate::limit::ToolLimit;
use crate::truncation::Truncation;

/// What becomes of one tool result.
#[derive(Debug)]
pub(super) struct Fate {
    /// The JSON that replaces it and the figures of its cut; `None` when it goes as it came.
    pub(super) cut: Option<(Arc<str>, Truncation)>,
    /// Its tokens as it goes up, counted under a request's budget.
    pub(super) tokens: Option<usize>,
    /// Whether its cut was made for an earlier request.
    pub(super) cached: bool,
    /// Whether it gave way to the request's budget, and goes as its stub.
    pub(super) elided: bool,
}

impl RequestCap {
    /// The limit of the result at `at` among `found`: its turn's share in `limits`, else its
    /// tool's.
    pub(super) fn limit_at<'a>(
        &'a self,
        found: &[Found<'_>],
        limits: &'a HashMap<usize, ToolLimit>,
        at: usize,
    ) -> &'a ToolLimit {
        let tool = found[at].tool.as_deref().unwrap_or_default();
        limits
            .get(&at)
            .unwrap_or_else(|| self.limits.limit_for(tool))
    }

    /// `result` cut to `limit` (an error to its tail), from the cache or made and kept there.
    pub(super) fn fate(&self, result: &Found<'_>, limit: &ToolLimit) -> Fate {
        let tool = result.tool.as_deref().unwrap_or_default();
        let limit = result.outcome.limit(limit);
        let key = Key::new(result.content.json().get(), &limit, result.content.shape());
        let (entry, cached) = self.cache.get_or_make(key, || {
            let tokenizer = self.limits.tokenizer();
            let cut = result.content.cut(tool, &limit, tokenizer);
            let cut = cut.map(|(json, truncation)| (Arc::<str>::from(json), truncation));
            let budgeted = self.limits.max_tokens_per_request().is_some()
                || self.limits.rate_limit_share().is_some();
            let tokens = budgeted.then(|| {
                let capped = cut.as_ref().map(|(json, _)| json.as_ref());
                self.tokens_of(result, capped)
            });
            Entry { cut, tokens }
        });
        Fate {
            cut: entry.cut,
            tokens: entry.tokens,
            cached,
            elided: false,
        }
    }

    /// The tokens of `result` as it goes up: of `capped`, the JSON that replaces it, or its own.
    fn tokens_of(&self, result: &Found<'_>, capped: Option<&str>) -> usize {
        let text = match capped {
            Some(json) => result.content.measured(json).into(),
            None => result.content.text(),
        };
        self.limits.tokenizer().count(&text)
    }

    /// Fits the results of a request, whose `fates` they have under `limits`, to `budget`:
    /// older results give way to their stubs ([`elided`]); then, if the newest turn is over
    /// what the rest leaves, its results share that. With `room`, a per-minute limit and the
    /// tokens of the rest of the request, no more than what the rest leaves under the limit
    /// ([`rate`](super::rate)); how that went is returned.
    pub(super) fn fit(
        &self,
        found: &[Found<'_>],
        fates: &mut [Fate],
        limits: &HashMap<usize, ToolLimit>,
        budget: usize,
        room: Option<(usize, usize)>,
    ) -> Option<RateLimitFit> {
        let newest = found.iter().map(|result| result.turn).max();
        let limit_of = |at: usize| self.limit_at(found, limits, at);
        let mut stubs: Vec<Option<(String, Truncation)>> = (0..found.len())
            .map(|at| self.stub_of(&found[at], &fates[at], limit_of(at)))
            .collect();
        let weighed: Vec<Weighed> = (0..found.len())
            .map(|at| Weighed {
                tokens: fates[at].tokens.unwrap_or_default(),
                stub_tokens: stubs[at]
                    .as_ref()
                    .map(|(json, _)| self.tokens_of(&found[at], Some(json))),
                newest: Some(found[at].turn) == newest,
            })
            .collect();
        // Steps of half the configured budget, whatever the rest leaves: a smaller budget then
        // only ever elides more.
        let step = budget / 2;
        let fit = room.map(|(limit, rest_tokens)| {
            let least: usize = (0..found.len())
                .map(|at| {
                    let own = &weighed[at];
                    match own.newest {
                        true => own.tokens.min(limit_of(at).max_tokens()).min(NEWEST_FLOOR),
                        false => own.stub_tokens.unwrap_or(own.tokens).min(own.tokens),
                    }
                })
                .sum();
            let left = left(limit, rest_tokens, budget / 4);
            RateLimitFit {
                limit,
                rest_tokens,
                budget: (least <= left).then_some(budget.min(left)),
            }
        });
        let budget = fit.and_then(|fit| fit.budget).unwrap_or(budget);
        for (at, elide) in elided(&weighed, budget, step).into_iter().enumerate() {
            if let Some((json, truncation)) = stubs[at].take().filter(|_| elide) {
                fates[at] = Fate {
                    cut: Some((json.into(), truncation)),
                    tokens: weighed[at].stub_tokens,
                    cached: false,
                    elided: true,
                };
            }
        }
        self.share_newest(found, fates, newest, budget);
        fit
    }

    /// The stub that stands for `result`, whose fate under `limit` is `fate`, given way to the
    /// budget, and its figures; `None` for a slot whose shape is demanded.
    fn stub_of(
        &self,
        result: &Found<'_>,
        fate: &Fate,
        limit: &ToolLimit,
    ) -> Option<(String, Truncation)> {
        let original = match &fate.cut {
            Some((_, truncation)) => truncation.original_tokens,
            None => fate.tokens.unwrap_or_default(),
        };
        let json = result
            .content
            .replaced_by(&stub(result.tool.as_deref(), original))?;
        let limit = result.outcome.limit(limit);
        let truncation = Truncation {
            original_tokens: original,
            kept_tokens: 0,
            dropped_tokens: original,
            max_tokens: limit.max_tokens(),
            keep: limit.keep(),
        };
        Some((json, truncation))
    }

    /// When the `newest` turn's results are over what the others leave of `budget`, they share
    /// that, as a turn shares its budget (each at least [`ToolLimit::MIN_MAX_TOKENS`]).
    fn share_newest(
        &self,
        found: &[Found<'_>],
        fates: &mut [Fate],
        newest: Option<Option<usize>>,
        budget: usize,
    ) {
        let tokens = |at: usize| fates[at].tokens.unwrap_or_default();
        let (newest, older): (Vec<usize>, Vec<usize>) =
            (0..found.len()).partition(|&at| Some(found[at].turn) == newest);
        let room = budget.saturating_sub(older.iter().map(|&at| tokens(at)).sum());
        if newest.iter().map(|&at| tokens(at)).sum::<usize>() <= room {
            return;
        }
        let shares = self.shares(found, &newest, room);
        for (&at, share) in newest.iter().zip(&shares) {
            fates[at] = self.fate(&found[at], share);
        }
    }
}
