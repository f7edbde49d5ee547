//! One request through the gateway: its body capped when it is a model API's inference or
//! token-count request, everything else sent on as it is, and the upstream's answer streamed
//! back as it comes.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use tool_output_cap::wire::{Api, RequestCap};

use super::encoding::decode;
use super::rate_limit::{log_fit, RateLimit};
use super::upstream::{without_hop_by_hop, Body, Upstream};
use super::TARGET;

/// What every request shares: the upstream, the cap, and the rate limit the upstream reports.
#[derive(Debug)]
pub(super) struct Gateway {
    pub(super) upstream: Upstream,
    pub(super) cap: RequestCap,
    pub(super) rate_limit: RateLimit,
}

/// Sends `request` on, capped, and gives the upstream's answer, or a 502 in the API's own error
/// shape when the upstream cannot be reached.
pub(super) async fn forward(
    gateway: Arc<Gateway>,
    request: Request<Incoming>,
) -> Result<Response<Body>, std::convert::Infallible> {
    let started = Instant::now();
    // The path alone: a query may hold a key (Gemini's `?key=`).
    let route = request.uri().path().to_owned();
    let api = (request.method() == Method::POST)
        .then(|| Api::for_path(&route))
        .flatten();
    let (mut parts, body) = request.into_parts();
    let body = match api {
        Some(api) => match capped_body(&gateway, api, &route, &mut parts.headers, body).await {
            Ok(body) => Full::new(body).map_err(|never| match never {}).boxed(),
            // The host went away while sending: there is no one to answer.
            Err(error) => {
                let why =
                    format!("tool-output-cap gateway: the request body was cut short: {error}");
                return Ok(bad_gateway(Some(api), &why));
            }
        },
        None => body.boxed(),
    };
    let answer = gateway
        .upstream
        .send(Request::from_parts(parts, body))
        .await;
    if let (Ok(answer), Some(share)) = (&answer, gateway.cap.limits().rate_limit_share()) {
        gateway.rate_limit.learn(answer.headers(), share);
    }
    Ok(answered(answer, api, &route, started))
}

/// The body of a request of `api`, read whole and capped on a blocking thread; `headers` made to
/// say what it now is. What could not be capped goes on as it came.
async fn capped_body(
    gateway: &Arc<Gateway>,
    api: Api,
    route: &str,
    headers: &mut HeaderMap,
    body: Incoming,
) -> Result<Bytes, hyper::Error> {
    let body = read(body, headers).await?;
    let (gateway, route, sent) = (Arc::clone(gateway), route.to_owned(), body.clone());
    let encoding = header(headers, CONTENT_ENCODING);
    let capped = tokio::task::spawn_blocking(move || {
        capped(&gateway, api, &route, encoding.as_deref(), &sent)
    })
    .await
    .unwrap_or_else(|panicked| {
        // Never the host's error: what could not be capped goes on as it came.
        tracing::warn!(target: TARGET, "sent on as it came: capping it failed: {panicked}");
        None
    });
    let Some(capped) = capped else {
        return Ok(body);
    };
    headers.remove(CONTENT_ENCODING);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(capped.len()));
    Ok(capped)
}

/// The upstream's `answer` as the host gets it, logged; a 502 in `api`'s shape when there is none.
fn answered(
    answer: Result<Response<Incoming>, hyper_util::client::legacy::Error>,
    api: Option<Api>,
    route: &str,
    started: Instant,
) -> Response<Body> {
    match answer {
        Ok(answer) => {
            tracing::info!(
                target: TARGET,
                route,
                status = answer.status().as_u16(),
                headers_ms = started.elapsed().as_millis() as u64,
                "forwarded"
            );
            let (mut parts, body) = answer.into_parts();
            without_hop_by_hop(&mut parts.headers);
            Response::from_parts(parts, body.boxed())
        }
        Err(error) => {
            let reason = std::error::Error::source(&error)
                .map_or_else(|| error.to_string(), |source| format!("{error}: {source}"));
            tracing::warn!(target: TARGET, route, "the upstream cannot be reached: {reason}");
            let why = format!("tool-output-cap gateway: the upstream cannot be reached: {reason}");
            bad_gateway(api, &why)
        }
    }
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
    let unread = |why: &str| tracing::warn!(target: TARGET, route, "sent on as it came: {why}");
    let decoded = decode(encoding, body).map_err(|why| unread(&why)).ok()?;
    let Ok(text) = std::str::from_utf8(&decoded) else {
        unread("a body that is not UTF-8");
        return None;
    };
    let capped = match gateway.rate_limit.get() {
        Some(limit) => gateway.cap.cap_within_rate_limit(api, text, limit),
        None => gateway.cap.cap(api, text),
    };
    let capped = capped.map_err(|error| unread(&error.to_string())).ok()?;
    log_fit(&capped, route);
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

/// The whole of `body`, read into one buffer of the size its `Content-Length` says.
async fn read(mut body: Incoming, headers: &HeaderMap) -> Result<Bytes, hyper::Error> {
    let length = header(headers, CONTENT_LENGTH).and_then(|length| length.parse::<usize>().ok());
    // A length is only a hint: a body is read to its end whatever it says.
    let mut buffer = Vec::with_capacity(length.unwrap_or(0).min(64 << 20));
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            buffer.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(buffer))
}

/// The value of the header `name`, if it is text.
fn header(headers: &HeaderMap, name: hyper::header::HeaderName) -> Option<String> {
    headers.get(name)?.to_str().ok().map(str::to_owned)
}

/// A 502 whose body has `api`'s error shape (OpenAI's for a route of no known API), saying why.
fn bad_gateway(api: Option<Api>, why: &str) -> Response<Body> {
    let body = match api {
        Some(Api::AnthropicMessages) => serde_json::json!({
            "type": "error",
            "error": {"type": "api_error", "message": why},
        }),
        Some(Api::Gemini) => serde_json::json!({
            "error": {"code": 502, "message": why, "status": "UNAVAILABLE"},
        }),
        _ => serde_json::json!({
            "error": {"message": why, "type": "server_error", "param": null, "code": "bad_gateway"},
        }),
    };
    let mut response = Response::new(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = StatusCode::BAD_GATEWAY;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
