//! The per-minute input-token limit the upstream reports on its answers, learned for the
//! requests after them (`rate_limit_share`, the library's `wire::RateLimit`), and logged.

use hyper::HeaderMap;
use tool_output_cap::wire::{CappedRequest, RateLimit};
use tool_output_cap::RateLimitShare;

use super::TARGET;

/// Learns the limit that `headers`, of an answer, report into `rate_limit`, if they do, and
/// gives it; logs it the first time and when it changes.
pub(super) fn learn(
    rate_limit: &RateLimit,
    headers: &HeaderMap,
    share: RateLimitShare,
) -> Option<usize> {
    let headers = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)));
    let learned = rate_limit.learn(headers)?;
    if learned.before != Some(learned.limit) {
        tracing::info!(
            target: TARGET,
            limit = learned.limit,
            share = share.get(),
            budget = share.of(learned.limit),
            "the upstream reports a per-minute input-token limit: the tool results of each \
             request share {share} of it"
        );
    }
    Some(learned.limit)
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
