//! The per-minute input-token limit the upstream reports on its answers, learned for the
//! requests after them (`rate_limit_share`).

use std::sync::atomic::{AtomicUsize, Ordering};

use hyper::HeaderMap;
use tool_output_cap::wire::{input_tokens_limit, CappedRequest};
use tool_output_cap::RateLimitShare;

use super::TARGET;

/// The last per-minute input-token limit the upstream reported; none before its first answer
/// that reports one. One for the gateway: its upstream, and so its key's limit, is one.
#[derive(Debug, Default)]
pub(super) struct RateLimit {
    /// The limit in tokens; 0 before it is known.
    tokens: AtomicUsize,
}

impl RateLimit {
    /// The limit, once an answer has reported it.
    pub(super) fn get(&self) -> Option<usize> {
        Some(self.tokens.load(Ordering::Relaxed)).filter(|&tokens| tokens > 0)
    }

    /// Learns the limit that `headers`, of an answer, report, if they do, and gives it; logs it
    /// the first time and when it changes. The `-remaining` headers are not used: they count
    /// down for every agent on the same key, and round to the provider's own estimate.
    pub(super) fn learn(&self, headers: &HeaderMap, share: RateLimitShare) -> Option<usize> {
        let limit = headers
            .iter()
            .find_map(|(name, value)| input_tokens_limit(name.as_str(), value.to_str().ok()?))?;
        let before = self.tokens.swap(limit, Ordering::Relaxed);
        if before != limit {
            tracing::info!(
                target: TARGET,
                limit,
                share = share.get(),
                budget = share.of(limit),
                "the upstream reports a per-minute input-token limit: the tool results of each \
                 request share {share} of it"
            );
        }
        Some(limit)
    }
}

/// Logs how `capped` fitted the rate limit, and why, when it could not.
pub(super) fn log_fit(capped: &CappedRequest, route: &str) {
    let Some(fit) = capped.rate_limit else {
        return;
    };
    match fit.budget {
        Some(budget) => tracing::debug!(
            target: TARGET,
            route,
            limit = fit.limit,
            rest_tokens = fit.rest_tokens,
            budget,
            "the tool results shared what the rate limit leaves them"
        ),
        None => tracing::warn!(
            target: TARGET,
            route,
            limit = fit.limit,
            rest_tokens = fit.rest_tokens,
            "the request goes with its configured budgets alone: the rest of it leaves less \
             under the per-minute limit than its newest tool results need"
        ),
    }
}
