//! The gateway in front of a remote MCP server (`mcp --listen ADDRESS --url URL`): each request
//! goes on as it came, the host's own `Authorization` among its headers, to the server's own
//! path; a POST's body is read for the `tools/call` requests it makes, and the answer to it (a
//! JSON body, or a stream of events) has their results capped as the stdio proxy caps them, by
//! the same library call. Everything else passes as it came, byte for byte: a 401 and its
//! `WWW-Authenticate`, the OAuth metadata documents, the server's own stream (GET), the end of a
//! session (DELETE).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ACCEPT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::value::RawValue;
use tool_output_cap::ToolOutputLimits;

use super::answer::{answered, json_answer, AnswerBody};
use super::body::{read, Read};
use super::events::capped_events;
use super::forward::Gateway;
use super::upstream::Body;
use super::TARGET;
use crate::lenient;
use crate::pending::Pending;
use crate::result::{cap_response, Response as Capped};

/// `request` sent on to the server, and its answer, the results of the calls it made capped to
/// `limits`.
pub(super) async fn sent_on(
    gateway: &Arc<Gateway>,
    limits: &Arc<ToolOutputLimits>,
    request: Request<Incoming>,
) -> Response<AnswerBody> {
    let started = Instant::now();
    let route = request.uri().path().to_owned();
    let (mut parts, body) = request.into_parts();
    let mut pending = Pending::default();
    let body = match parts.method {
        Method::POST => match noted(gateway, &route, &parts.headers, body, &mut pending).await {
            Ok(body) => body,
            Err(error) => return error,
        },
        _ => body.boxed(),
    };
    if pending.waits() {
        // The answer is read to be capped: as the server writes it, not compressed.
        parts.headers.remove(ACCEPT_ENCODING);
    }
    let wait = Duration::from_secs(gateway.server.upstream_timeout);
    let sent = gateway.upstream.send(Request::from_parts(parts, body));
    let answer = match tokio::time::timeout(wait, sent).await {
        Err(_) => {
            let why = format!(
                "the server sent no answer within {} s (--upstream-timeout)",
                wait.as_secs()
            );
            tracing::warn!(target: TARGET, route, "{why}");
            return jsonrpc_error(StatusCode::GATEWAY_TIMEOUT, &why);
        }
        Ok(Err(error)) => {
            let reason = std::error::Error::source(&error)
                .map_or_else(|| error.to_string(), |source| format!("{error}: {source}"));
            tracing::warn!(target: TARGET, route, "the server cannot be reached: {reason}");
            let why = format!("the server cannot be reached: {reason}");
            return jsonrpc_error(StatusCode::BAD_GATEWAY, &why);
        }
        Ok(Ok(answer)) => answered(Ok(answer), None, &route, started, wait),
    };
    if !pending.waits() || !answer.status().is_success() {
        return answer;
    }
    capped(gateway, limits, answer, pending).await
}

/// A POST's `body`, read whole to note in `pending` the calls it makes, to send on; a body over
/// `--max-body-bytes` goes on as it comes, its results uncapped. The host's error when it did not
/// come.
async fn noted(
    gateway: &Gateway,
    route: &str,
    headers: &hyper::HeaderMap,
    body: Incoming,
    pending: &mut Pending,
) -> Result<Body, Response<AnswerBody>> {
    let seconds = gateway.server.body_timeout;
    let max = gateway.server.max_body_bytes;
    let reading = tokio::time::timeout(Duration::from_secs(seconds), read(body, headers, max));
    match reading.await {
        Ok(Ok(Read::Whole(bytes))) => {
            note_calls(&bytes, pending);
            Ok(Full::new(bytes).map_err(|never| match never {}).boxed())
        }
        Ok(Ok(Read::Over(rest))) => {
            tracing::warn!(target: TARGET, route, "sent on unread, its results uncapped: a body over {max} bytes (--max-body-bytes)");
            Ok(rest.boxed())
        }
        Ok(Err(error)) => {
            let why = format!("the request body was cut short: {error}");
            Err(jsonrpc_error(StatusCode::BAD_GATEWAY, &why))
        }
        Err(_) => {
            let why = format!("the request body did not come within {seconds} s (--body-timeout)");
            Err(jsonrpc_error(StatusCode::REQUEST_TIMEOUT, &why))
        }
    }
}

/// Notes the calls the host's `body` makes, one message or a batch of them.
fn note_calls(body: &[u8], pending: &mut Pending) {
    let text = lenient::readable(body);
    match serde_json::from_str::<Vec<&RawValue>>(&text) {
        Ok(batch) => batch
            .iter()
            .for_each(|message| pending.note_host_message(message.get().as_bytes())),
        Err(_) => pending.note_host_message(body),
    }
}

/// `answer`, whose body holds the results of the calls `pending` waits for, those capped: a JSON
/// body read whole and capped at once, a stream of events capped event by event as it comes.
async fn capped(
    gateway: &Arc<Gateway>,
    limits: &Arc<ToolOutputLimits>,
    answer: Response<AnswerBody>,
    pending: Pending,
) -> Response<AnswerBody> {
    let (mut parts, body) = answer.into_parts();
    let kind = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|kind| kind.to_str().ok());
    let kind = kind.unwrap_or_default().to_owned();
    if kind.starts_with("text/event-stream") {
        parts.headers.remove(CONTENT_LENGTH);
        let body = capped_events(
            body,
            pending,
            Arc::clone(limits),
            Arc::clone(&gateway.capping),
        );
        return Response::from_parts(parts, body);
    }
    if !kind.starts_with("application/json") {
        return Response::from_parts(parts, body);
    }
    let body = match body.collect().await {
        Ok(body) => body.to_bytes(),
        Err(error) => {
            return jsonrpc_error(
                StatusCode::BAD_GATEWAY,
                &format!("the server's answer broke off: {error}"),
            )
        }
    };
    let limits = Arc::clone(limits);
    let core = Arc::clone(&gateway.capping).acquire_owned().await;
    let capped = tokio::task::spawn_blocking(move || {
        let capped = capped_json(&body, pending, &limits);
        drop(core);
        capped.map_or(body, Bytes::from)
    })
    .await;
    let Ok(body) = capped else {
        return jsonrpc_error(
            StatusCode::BAD_GATEWAY,
            "capping the server's answer failed",
        );
    };
    parts
        .headers
        .insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
    Response::from_parts(
        parts,
        Full::new(body).map_err(|never| match never {}).boxed(),
    )
}

/// The JSON `body` of an answer with the results of the calls `pending` waits for capped to
/// `limits`: one message, or each of a batch; `None` when none was cut.
fn capped_json(body: &[u8], mut pending: Pending, limits: &ToolOutputLimits) -> Option<String> {
    let text = lenient::readable(body);
    let Ok(batch) = serde_json::from_str::<Vec<&RawValue>>(&text) else {
        return capped_message(text.trim(), &mut pending, limits);
    };
    let mut any = false;
    let messages: Vec<String> = batch
        .iter()
        .map(
            |message| match capped_message(message.get(), &mut pending, limits) {
                Some(capped) => {
                    any = true;
                    capped
                }
                None => message.get().to_owned(),
            },
        )
        .collect();
    any.then(|| format!("[{}]", messages.join(",")))
}

/// `message` of the server's capped to `limits` when it answers a call `pending` waits for;
/// `None` when it does not, or nothing was cut.
pub(super) fn capped_message(
    message: &str,
    pending: &mut Pending,
    limits: &ToolOutputLimits,
) -> Option<String> {
    let waiting = pending.take_response(message.as_bytes())?;
    match cap_response(message, waiting.carries, &waiting.tool, limits) {
        Capped::Capped(capped) => Some(capped),
        Capped::Task(_) | Capped::Unchanged => None,
    }
}

/// The gateway's own error `status` for an MCP host: a JSON-RPC error, saying why.
fn jsonrpc_error(status: StatusCode, why: &str) -> Response<AnswerBody> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32000, "message": format!("tool-output-cap: {why}")},
    });
    json_answer(status, &body)
}
