//! A request within the per-minute input-token limit its provider reports: the limit, learned
//! from the provider's answers ([`RateLimit`]), and what of it a request's tool results may take.
//!
//! Anthropic reports the limit on every answer in `anthropic-ratelimit-input-tokens-limit`, and
//! OpenAI in `x-ratelimit-limit-tokens`; Gemini reports none. LiteLLM passes them on to its
//! callers prefixed `llm_provider-`. How a request is capped within it is
//! [`RequestCap::cap_within_rate_limit`](super::RequestCap::cap_within_rate_limit)'s to say.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The headers in which a model API reports its per-minute input-token limit: Anthropic's and
/// OpenAI's.
pub const INPUT_LIMIT_HEADERS: [&str; 2] = [
    "anthropic-ratelimit-input-tokens-limit",
    "x-ratelimit-limit-tokens",
];

/// What each of the newest turn's results keeps at least, when its limit is larger, before what
/// the rest of a request leaves is given up.
pub const NEWEST_FLOOR: usize = 1000;

/// The prefix LiteLLM puts before a provider's headers when it passes them on.
const LITELLM_PREFIX: &str = "llm_provider-";

/// The per-minute input-token limit that a header `name` of a model API's answer reports, with
/// its `value`: a whole number over 0 in one of [`INPUT_LIMIT_HEADERS`], or in LiteLLM's copy of
/// one (`llm_provider-` before its name).
///
/// ```
/// use tool_output_cap::wire::input_tokens_limit;
///
/// assert_eq!(input_tokens_limit("anthropic-ratelimit-input-tokens-limit", "30000"), Some(30_000));
/// assert_eq!(input_tokens_limit("X-RateLimit-Limit-Tokens", "150000"), Some(150_000));
/// assert_eq!(input_tokens_limit("llm_provider-x-ratelimit-limit-tokens", "150000"), Some(150_000));
/// assert_eq!(input_tokens_limit("x-ratelimit-remaining-tokens", "149000"), None);
/// assert_eq!(input_tokens_limit("x-ratelimit-limit-tokens", "0"), None);
/// ```
pub fn input_tokens_limit(name: &str, value: &str) -> Option<usize> {
    let name = match name.get(..LITELLM_PREFIX.len()) {
        Some(prefix) if prefix.eq_ignore_ascii_case(LITELLM_PREFIX) => &name[prefix.len()..],
        _ => name,
    };
    INPUT_LIMIT_HEADERS
        .iter()
        .any(|header| header.eq_ignore_ascii_case(name))
        .then(|| value.trim().parse().ok())
        .flatten()
        .filter(|&limit| limit > 0)
}

/// The per-minute input-token limit one provider's key reports, learned from its answers' headers
/// and kept for the requests after them; none before the first answer that reports one. Shared
/// by reference among threads: one for each upstream, or each model behind a router.
///
/// Only the limit is read, never the `-remaining` headers: those count down for every agent on
/// the same key, and round to the provider's own estimate.
///
/// ```
/// use tool_output_cap::wire::{Api, RateLimit, RequestCap};
/// use tool_output_cap::{RateLimitShare, ToolOutputLimits};
///
/// let limits = ToolOutputLimits::default().with_rate_limit_share(RateLimitShare::new(0.5)?);
/// let cap = RequestCap::new(limits);
/// let rate_limit = RateLimit::new();
/// assert_eq!(rate_limit.get(), None);
///
/// // The provider's answer reports the limit; the next request is capped within it.
/// let learned = rate_limit.learn([("anthropic-ratelimit-input-tokens-limit", "30000")]);
/// assert_eq!(learned.map(|learned| (learned.limit, learned.before)), Some((30_000, None)));
/// let body = r#"{"messages": []}"#;
/// let capped = cap.cap_learned(Api::AnthropicMessages, body, &rate_limit)?;
/// assert_eq!(capped.rate_limit.map(|fit| fit.limit), Some(30_000));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct RateLimit {
    /// The limit in tokens; 0 before it is known.
    tokens: AtomicUsize,
}

/// A limit learned from an answer's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Learned {
    /// The limit the answer reports.
    pub limit: usize,
    /// The limit known before it, if any: a caller logs the limit when it differs.
    pub before: Option<usize>,
}

impl RateLimit {
    /// None learned yet.
    pub fn new() -> Self {
        RateLimit::default()
    }

    /// The limit, once an answer has reported it.
    pub fn get(&self) -> Option<usize> {
        Some(self.tokens.load(Ordering::Relaxed)).filter(|&tokens| tokens > 0)
    }

    /// Learns the limit that `headers`, the names and values of an answer's headers, report
    /// ([`input_tokens_limit`]), if they do; the limit stays as it was when they do not.
    pub fn learn<N, V>(&self, headers: impl IntoIterator<Item = (N, V)>) -> Option<Learned>
    where
        N: AsRef<str>,
        V: AsRef<str>,
    {
        let limit = headers
            .into_iter()
            .find_map(|(name, value)| input_tokens_limit(name.as_ref(), value.as_ref()))?;
        let before = self.tokens.swap(limit, Ordering::Relaxed);
        Some(Learned {
            limit,
            before: Some(before).filter(|&before| before > 0),
        })
    }
}

/// How a request was capped within a per-minute input-token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimitFit {
    /// The limit.
    pub limit: usize,
    /// The tokens of the rest of the request (all but its tool results), as its JSON.
    pub rest_tokens: usize,
    /// What the tool results were given together; `None` when what the rest leaves under the
    /// limit cannot hold the newest results' floor, and the request was capped to its configured
    /// budgets alone.
    pub budget: Option<usize>,
}

/// What the rest of a request, of `rest` tokens, leaves its tool results under `limit`, rounded
/// down to a multiple of `quantum`.
pub(super) fn left(limit: usize, rest: usize, quantum: usize) -> usize {
    let quantum = quantum.max(1);
    limit.saturating_sub(rest) / quantum * quantum
}

/// The pieces `text` is counted in, cut where its content says (after a `},` or `],` whose
/// 32 bytes before hash to one in 8), so that text inserted in one place leaves every piece
/// after the next cut as it was, and already counted.
pub(super) fn pieces(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let end = (start + 1..bytes.len())
            .find(|&at| {
                matches!(bytes[at - 1..=at], [b'}' | b']', b',']) && {
                    let window = &bytes[at.saturating_sub(32)..at];
                    twox_hash::XxHash3_64::oneshot(window).is_multiple_of(8)
                }
            })
            .map_or(bytes.len(), |at| at + 1);
        let piece = start..end;
        start = end;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_learned_from_the_first_header_that_reports_one_and_kept() {
        let rate_limit = RateLimit::new();
        assert_eq!(
            rate_limit.learn([("content-type", "application/json")]),
            None
        );
        assert_eq!(rate_limit.get(), None);
        let headers = [
            ("x-ratelimit-remaining-tokens", "10"),
            ("x-ratelimit-limit-tokens", " 90000 "),
        ];
        let learned = rate_limit.learn(headers).unwrap();
        assert_eq!((learned.limit, learned.before), (90_000, None));
        // An answer that reports none leaves it; a new figure replaces it.
        assert_eq!(
            rate_limit.learn([("x-ratelimit-limit-tokens", "many")]),
            None
        );
        assert_eq!(rate_limit.get(), Some(90_000));
        let learned = rate_limit.learn([(
            "LLM_PROVIDER-anthropic-ratelimit-input-tokens-limit",
            "30000",
        )]);
        assert_eq!(learned.map(|learned| learned.before), Some(Some(90_000)));
        assert_eq!(rate_limit.get(), Some(30_000));
    }

    #[test]
    fn what_the_rest_leaves_moves_in_quanta() {
        assert_eq!(left(20_000, 9_000, 1_000), 11_000);
        assert_eq!(left(20_000, 9_400, 1_000), 10_000);
        assert_eq!(left(20_000, 25_000, 1_000), 0);
    }

    #[test]
    fn pieces_cover_the_text_and_resynchronise_after_an_insertion() {
        let items: Vec<String> = (0..2000).map(|i| format!("{{\"n\":{i}}}")).collect();
        let text = format!("[{}]", items.join(","));
        let ranges: Vec<_> = pieces(&text).collect();
        assert_eq!(ranges.first().unwrap().start, 0);
        assert_eq!(ranges.last().unwrap().end, text.len());
        assert!(ranges.windows(2).all(|pair| pair[0].end == pair[1].start));
        let longer = format!("[{{\"new\":true}},{}", &text[1..]);
        let tail = |text: &str| -> Vec<String> {
            let all: Vec<String> = pieces(text).map(|r| text[r].to_owned()).collect();
            assert!(all.len() > 20, "{} pieces", all.len());
            all[all.len() - 10..].to_vec()
        };
        assert_eq!(tail(&text), tail(&longer), "the last pieces are the same");
    }
}
