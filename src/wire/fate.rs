//! What becomes of each tool result of a request: its cut to its limit, taken from the cache or
//! made, and its tokens as it goes up. Which limit that is, and whether it gives way to its stub
//! whole, is the request's budget's to say ([`budget`](super::budget)).

use std::sync::Arc;

use super::cache::{Entry, Key};
use super::found::Found;
use super::RequestCap;
use crate::limit::ToolLimit;
use crate::truncation::Truncation;

/// What becomes of one tool result.
#[derive(Debug, Default)]
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
    /// `result` cut to `limit` (an error to its tail), from the cache or made and kept there.
    pub(super) fn fate(&self, result: &Found<'_>, limit: &ToolLimit) -> Fate {
        let tool = result.tool.as_deref().unwrap_or_default();
        let limit = result.outcome.limit(limit);
        let content = &result.content;
        let key = Key::new(
            content.json().get(),
            &limit,
            content.shape(),
            content.image_rule(),
        );
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
    pub(super) fn tokens_of(&self, result: &Found<'_>, capped: Option<&str>) -> usize {
        let text = match capped {
            Some(json) => result.content.measured(json).into(),
            None => result.content.text(),
        };
        let tokenizer = self.limits.tokenizer();
        tokenizer.count(&text) + result.content.media_tokens(capped, tokenizer)
    }
}
