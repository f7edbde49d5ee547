//! A model API request capped: the crate's `wire::RequestCap`, for gateways and proxies written
//! in JavaScript.

use std::collections::HashMap;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_output_cap::wire::{self, Api, RequestCap, ResultCut};
use tool_output_cap::Outcome;

use crate::capped::Truncation;
use crate::errors::{invalid, refused};

/// A request with its tool results capped: `body`, `null` when nothing needed a cut, and one
/// cut for each result cut.
#[napi(object)]
pub struct CappedRequest {
    pub body: Either<String, Null>,
    pub cuts: Vec<RequestCut>,
}

/// One tool result cut: the tool whose call it answers (`null` when the call is not in the
/// request), whether it was an error, its figures, whether it was cut for an earlier request
/// (`cached`), and whether it gave way whole to `maxTokensPerRequest` (`elided`).
#[napi(object)]
pub struct RequestCut {
    pub tool: Either<String, Null>,
    pub error: bool,
    pub truncation: Truncation,
    pub cached: bool,
    pub elided: bool,
}

/// The per-minute input-token limit a provider reports, learned from its answers' headers (the
/// crate's `wire::RateLimit`). The package's `RateLimit` wraps it.
#[napi(js_name = "NativeRateLimit")]
#[derive(Default)]
pub struct RateLimit(pub(crate) Arc<wire::RateLimit>);

#[napi]
impl RateLimit {
    #[napi(constructor)]
    pub fn new() -> Self {
        RateLimit::default()
    }

    /// Learns the limit `headers`, names and values, report (the provider's own headers or
    /// LiteLLM's copies prefixed `llm_provider-`): the limit, or `null` when they report none.
    #[napi]
    pub fn learn(&self, headers: HashMap<String, String>) -> Either<u32, Null> {
        match self.0.learn(headers) {
            Some(learned) => Either::A(crate::tokens(learned.limit)),
            None => Either::B(Null),
        }
    }

    /// The limit learned so far, `null` before.
    #[napi(getter)]
    pub fn limit(&self) -> Either<u32, Null> {
        self.0
            .get()
            .map_or(Either::B(Null), |limit| Either::A(crate::tokens(limit)))
    }
}

/// `body`, a request of the API named `api`, capped by `cap`; within the limit `rate_limit`
/// learned, if given.
pub fn cap(
    cap: &RequestCap,
    api: &str,
    body: &str,
    rate_limit: Option<&wire::RateLimit>,
) -> Result<CappedRequest> {
    let api: Api = api.parse().map_err(refused("api"))?;
    let capped = match rate_limit {
        Some(rate_limit) => cap.cap_learned(api, body, rate_limit),
        None => cap.cap(api, body),
    };
    let capped = capped.map_err(invalid)?;
    Ok(CappedRequest {
        body: capped.body.map_or(Either::B(Null), Either::A),
        cuts: capped.cuts.into_iter().map(RequestCut::from).collect(),
    })
}

impl From<ResultCut> for RequestCut {
    fn from(cut: ResultCut) -> Self {
        RequestCut {
            tool: cut.tool.map_or(Either::B(Null), Either::A),
            error: cut.outcome == Outcome::Error,
            truncation: Truncation::from(cut.truncation),
            cached: cut.cached,
            elided: cut.elided,
        }
    }
}
