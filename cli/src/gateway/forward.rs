//! One request through the gateway: its body capped when it is a model API's inference or
//! token-count request, everything else sent on as it is, and the upstream's answer streamed
//! back as it comes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH};
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use tokio::sync::Semaphore;
use tool_output_cap::wire::{Api, CappedRequest, RateLimit, RequestCap};

use super::answer::{answered, error_answer, AnswerBody};
use super::body::{read, Read};
use super::encoding::{decode, NotDecoded};
use super::metrics::{Metrics, Unread};
use super::rate_limit::{self, log_fit};
use super::upstream::{Body, Upstream};
use super::TARGET;
use crate::args::ServerArgs;

/// What every request shares: the upstream, the cap, and the rate limit the upstream reports.
#[derive(Debug)]
pub(super) struct Gateway {
    pub(super) upstream: Upstream,
    pub(super) cap: RequestCap,
    pub(super) rate_limit: RateLimit,
    /// Its bounds and timeouts.
    pub(super) server: ServerArgs,
    /// What it does, for `--metrics`.
    pub(super) metrics: Arc<Metrics>,
    /// One permit for each core: bodies read whole wait for one before they are capped, so
    /// that no more decoded bodies and cuts are held at once than there are cores to work on them.
    pub(super) capping: Arc<Semaphore>,
    /// In front of a remote MCP server, not a model API: the limits its tool results are
    /// capped to ([`mcp`](super::mcp)).
    pub(super) mcp: Option<Arc<tool_output_cap::ToolOutputLimits>>,
}

/// Sends `request` on, capped, and gives the upstream's answer; an error in the API's own shape
/// when the body did not come in time (408), the upstream cannot be reached (502), or it sent
/// nothing for `--upstream-timeout` (504).
pub(super) async fn forward(
    gateway: Arc<Gateway>,
    request: Request<Incoming>,
) -> Result<Response<AnswerBody>, std::convert::Infallible> {
    if let Some(limits) = &gateway.mcp {
        let answer = super::mcp::sent_on(&gateway, limits, request).await;
        gateway.metrics.request(None, answer.status());
        return Ok(answer);
    }
    let api = (request.method() == Method::POST)
        .then(|| Api::for_path(request.uri().path()))
        .flatten();
    let answer = sent_on(&gateway, api, request).await;
    gateway.metrics.request(api, answer.status());
    Ok(answer)
}

/// `request`, of `api`, sent on capped, and the answer the host gets.
async fn sent_on(
    gateway: &Arc<Gateway>,
    api: Option<Api>,
    request: Request<Incoming>,
) -> Response<AnswerBody> {
    let started = Instant::now();
    // The path alone: a query may hold a key (Gemini's `?key=`).
    let route = request.uri().path().to_owned();
    let (mut parts, body) = request.into_parts();
    let body = match api {
        Some(api) => match capped_body(gateway, api, &route, &mut parts.headers, body).await {
            Ok(body) => {
                gateway.metrics.added(api, started.elapsed());
                body
            }
            Err(NotRead::CutShort(error)) => {
                // The host went away while sending: there is no one to answer.
                let why = format!("the request body was cut short: {error}");
                return error_answer(Some(api), StatusCode::BAD_GATEWAY, &why);
            }
            Err(NotRead::Late(seconds)) => {
                let why =
                    format!("the request body did not come within {seconds} s (--body-timeout)");
                tracing::warn!(target: TARGET, route, "{why}");
                return error_answer(Some(api), StatusCode::REQUEST_TIMEOUT, &why);
            }
        },
        None => body.boxed(),
    };
    let wait = Duration::from_secs(gateway.server.upstream_timeout);
    let sent = gateway.upstream.send(Request::from_parts(parts, body));
    let Ok(answer) = tokio::time::timeout(wait, sent).await else {
        let why = format!(
            "the upstream sent no answer within {} s (--upstream-timeout)",
            wait.as_secs()
        );
        tracing::warn!(target: TARGET, route, "{why}");
        return error_answer(api, StatusCode::GATEWAY_TIMEOUT, &why);
    };
    if let (Ok(answer), Some(share)) = (&answer, gateway.cap.limits().rate_limit_share()) {
        if let Some(limit) = rate_limit::learn(&gateway.rate_limit, answer.headers(), share) {
            gateway.metrics.rate_limit(limit);
        }
    }
    answered(answer, api, &route, started, wait)
}

/// Why a request's body was not read.
enum NotRead {
    /// The host stopped sending it.
    CutShort(hyper::Error),
    /// It did not come within this many seconds.
    Late(u64),
}

/// The body of a request of `api`, read whole and capped on a blocking thread; `headers` made to
/// say what it now is. What could not be capped goes on as it came; a body over
/// `--max-body-bytes` is not read, and goes on as it comes.
async fn capped_body(
    gateway: &Arc<Gateway>,
    api: Api,
    route: &str,
    headers: &mut HeaderMap,
    body: Incoming,
) -> Result<Body, NotRead> {
    let max = gateway.server.max_body_bytes;
    let seconds = gateway.server.body_timeout;
    let reading = tokio::time::timeout(Duration::from_secs(seconds), read(body, headers, max));
    let body = match reading.await.map_err(|_| NotRead::Late(seconds))? {
        Err(error) => return Err(NotRead::CutShort(error)),
        Ok(Read::Whole(body)) => body,
        Ok(Read::Over(body)) => {
            gateway.metrics.unread(Unread::OverLimit);
            tracing::warn!(target: TARGET, route, "sent on unread: a body over {max} bytes (--max-body-bytes)");
            return Ok(body.boxed());
        }
    };
    let (capping, route, sent) = (Arc::clone(gateway), route.to_owned(), body.clone());
    let encoding = header(headers, CONTENT_ENCODING);
    let core = Arc::clone(&gateway.capping).acquire_owned().await;
    let core = core.expect("the semaphore is never closed");
    let capped = tokio::task::spawn_blocking(move || {
        let capped = capped(&capping, api, &route, encoding.as_deref(), &sent);
        drop(core);
        capped
    })
    .await
    .unwrap_or_else(|panicked| {
        // Never the host's error: what could not be capped goes on as it came.
        tracing::warn!(target: TARGET, "sent on as it came: capping it failed: {panicked}");
        gateway.metrics.unread(Unread::Failed);
        None
    });
    let Some(capped) = capped else {
        return Ok(full(body));
    };
    headers.remove(CONTENT_ENCODING);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(capped.len()));
    Ok(full(capped))
}

/// `bytes` as a body to send on.
fn full(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(|never| match never {}).boxed()
}

/// `body`, a request of `api` sent `encoding`-encoded, with its tool results capped, decoded:
/// `None` when nothing was cut, and the bytes that came go on. What cannot be read goes on as
/// it came, with a warning. Each cut is logged once, here, with its route.
fn capped(
    gateway: &Gateway,
    api: Api,
    route: &str,
    encoding: Option<&str>,
    body: &Bytes,
) -> Option<Bytes> {
    let started = Instant::now();
    let unread = |reason: Unread, why: &str| {
        tracing::warn!(target: TARGET, route, "sent on as it came: {why}");
        gateway.metrics.unread(reason);
    };
    let decoded = match decode(encoding, body, gateway.server.max_body_bytes) {
        Ok(decoded) => decoded,
        Err(not) => {
            let reason = match not {
                NotDecoded::OverLimit(_) => Unread::DecodedOverLimit,
                NotDecoded::Unreadable(_) => Unread::Undecodable,
            };
            unread(reason, &not.to_string());
            return None;
        }
    };
    let Ok(text) = std::str::from_utf8(&decoded) else {
        unread(Unread::NotUtf8, "a body that is not UTF-8");
        return None;
    };
    let capped = gateway
        .cap
        .cap_learned(api, text, &gateway.rate_limit)
        .map_err(|error| unread(Unread::NotJson, &error.to_string()))
        .ok()?;
    record(gateway, api, route, &capped);
    tracing::debug!(
        target: TARGET,
        route,
        bytes = text.len(),
        cuts = capped.cuts.len(),
        cap_ms = started.elapsed().as_secs_f64() * 1e3,
        "read a request"
    );
    capped.body.map(Bytes::from)
}

/// Logs and counts what the cap of a request of `api` on `route` did: each cut, once, and the
/// blocks it sent on uncounted, in one warning.
fn record(gateway: &Gateway, api: Api, route: &str, capped: &CappedRequest) {
    log_fit(capped, route);
    gateway.metrics.cuts(api, &capped.cuts);
    gateway.metrics.unpriced(api, &capped.unpriced);
    gateway.metrics.cache_bytes(gateway.cap.cached_bytes());
    for cut in &capped.cuts {
        tracing::info!(
            target: TARGET,
            route,
            tool = cut.tool.as_deref().unwrap_or("(call not in the request)"),
            original_tokens = cut.truncation.original_tokens,
            kept_tokens = cut.truncation.kept_tokens,
            dropped_tokens = cut.truncation.dropped_tokens,
            max_tokens = cut.truncation.max_tokens,
            keep = cut.truncation.keep.name(),
            cached = cut.cached,
            "capped a tool result"
        );
    }
    if !capped.unpriced.is_empty() {
        let kinds: Vec<String> = capped
            .unpriced
            .iter()
            .map(|(kind, blocks)| format!("{blocks} {kind}"))
            .collect();
        tracing::warn!(
            target: TARGET,
            route,
            blocks = kinds.join(", "),
            "tool results carry blocks that are neither text nor media the gateway prices: sent on uncounted"
        );
    }
}

/// The value of the header `name`, if it is text.
fn header(headers: &HeaderMap, name: hyper::header::HeaderName) -> Option<String> {
    headers.get(name)?.to_str().ok().map(str::to_owned)
}
