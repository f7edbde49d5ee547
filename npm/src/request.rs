//! A model API request capped: the crate's `wire::RequestCap`, for gateways and proxies written
//! in JavaScript.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_output_cap::wire::{Api, RequestCap, ResultCut};
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

/// `body`, a request of the API named `api`, capped by `cap`.
pub fn cap(cap: &RequestCap, api: &str, body: &str) -> Result<CappedRequest> {
    let api: Api = api.parse().map_err(refused("api"))?;
    let capped = cap.cap(api, body).map_err(invalid)?;
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
