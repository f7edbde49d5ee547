//! One request through the gateway: its body capped when it is a model API's inference or
//! token-count request, everything else sent on as it is, and the upstream's answer streamed
//! back as it comes.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use tool_output_cap::request::{Api, RequestCap};

use super::encoding::decode;
use super::upstream::{without_hop_by_hop, Body, Upstream};

/// What every request shares: the upstream and the cap.
#[derive(Debug)]
pub(super) struct Gateway {
    pub(super) upstream: Upstream,
    pub(super) cap: RequestCap,
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
        Some(api) => match read(body, &parts.headers).await {
            Ok(body) => {
                let gateway = Arc::clone(&gateway);
                let route = route.clone();
                let encoding = header(&parts.headers, CONTENT_ENCODING);
                let sent = body.clone();
                let capped = tokio::task::spawn_blocking(move || {
                    capped(&gateway.cap, api, &route, encoding.as_deref(), &sent)
                })
                .await
                .unwrap_or_else(|panicked| {
                    // Never the host's error: what could not be capped goes on as it came.
                    tracing::warn!(target: "tool_output_cap::gateway", "sent on as it came: capping it failed: {panicked}");
                    None
                });
                let body = match capped {
                    Some(capped) => {
                        parts.headers.remove(CONTENT_ENCODING);
                        parts
                            .headers
                            .insert(CONTENT_LENGTH, HeaderValue::from(capped.len()));
                        capped
                    }
                    None => body,
                };
                Full::new(body).map_err(|never| match never {}).boxed()
            }
            // The host went away while sending: there is no one to answer.
            Err(error) => {
                return Ok(bad_gateway(
                    Some(api),
                    &format!("tool-output-cap gateway: the request body was cut short: {error}"),
                ))
            }
        },
        None => body.boxed(),
    };
    let answer = gateway
        .upstream
        .send(Request::from_parts(parts, body))
        .await;
    match answer {
        Ok(answer) => {
            tracing::info!(
                target: "tool_output_cap::gateway",
                route,
                status = answer.status().as_u16(),
                headers_ms = started.elapsed().as_millis() as u64,
                "forwarded"
            );
            let (mut parts, body) = answer.into_parts();
            without_hop_by_hop(&mut parts.headers);
            Ok(Response::from_parts(parts, body.boxed()))
        }
        Err(error) => {
            let reason = std::error::Error::source(&error)
                .map_or_else(|| error.to_string(), |source| format!("{error}: {source}"));
            tracing::warn!(target: "tool_output_cap::gateway", route, "the upstream cannot be reached: {reason}");
            Ok(bad_gateway(
                api,
                &format!("tool-output-cap gateway: the upstream cannot be reached: {reason}"),
            ))
        }
    }
}

/// `body`, a request of `api` sent `encoding`-encoded, with its tool results capped, decoded:
/// `None` when nothing was cut, and the bytes that came go on. What cannot be read goes on as
/// it came, with a warning.
fn capped(
    cap: &RequestCap,
    api: Api,
    route: &str,
    encoding: Option<&str>,
    body: &Bytes,
) -> Option<Bytes> {
    let started = Instant::now();
    let unread = |why: &str| {
        tracing::warn!(target: "tool_output_cap::gateway", route, "sent on as it came: {why}");
    };
    let decoded = decode(encoding, body).map_err(|why| unread(&why)).ok()?;
    let Ok(text) = std::str::from_utf8(&decoded) else {
        unread("a body that is not UTF-8");
        return None;
    };
    let capped = cap
        .cap(api, text)
        .map_err(|error| unread(&error.to_string()))
        .ok()?;
    for cut in &capped.cuts {
        tracing::info!(
            target: "tool_output_cap::gateway",
            route,
            tool = cut.tool.as_deref().unwrap_or("(call not in the request)"),
            original_tokens = cut.truncation.original_tokens,
            kept_tokens = cut.truncation.kept_tokens,
            max_tokens = cut.truncation.max_tokens,
            cached = cut.cached,
            "capped a tool result"
        );
    }
    tracing::debug!(
        target: "tool_output_cap::gateway",
        route,
        bytes = text.len(),
        cuts = capped.cuts.len(),
        cap_ms = started.elapsed().as_secs_f64() * 1e3,
        "read a request"
    );
    capped.body.map(Bytes::from)
}

/// The whole of `body`, read into one buffer of the size its `Content-Length` says.
async fn read(mut body: Incoming, headers: &hyper::HeaderMap) -> Result<Bytes, hyper::Error> {
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
fn header(headers: &hyper::HeaderMap, name: hyper::header::HeaderName) -> Option<String> {
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
