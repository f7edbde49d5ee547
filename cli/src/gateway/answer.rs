//! What the host gets back: the upstream's answer as it streams, or the gateway's own error in
//! the API's shape.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use tool_output_cap::wire::Api;
use tower_http::timeout::TimeoutBody;

use super::TARGET;
use crate::https::without_hop_by_hop;

/// A body the host gets: the upstream's, as it streams, or the gateway's error.
pub(super) type AnswerBody = BoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// The upstream's `answer` as the host gets it, logged, ended if the upstream goes `wait`
/// without sending a byte of it; a 502 in `api`'s shape when there is none.
pub(super) fn answered(
    answer: Result<Response<Incoming>, hyper_util::client::legacy::Error>,
    api: Option<Api>,
    route: &str,
    started: Instant,
    wait: Duration,
) -> Response<AnswerBody> {
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
            Response::from_parts(parts, TimeoutBody::new(wait, body).boxed())
        }
        Err(error) => {
            let reason = std::error::Error::source(&error)
                .map_or_else(|| error.to_string(), |source| format!("{error}: {source}"));
            tracing::warn!(target: TARGET, route, "the upstream cannot be reached: {reason}");
            let why = format!("the upstream cannot be reached: {reason}");
            error_answer(api, StatusCode::BAD_GATEWAY, &why)
        }
    }
}

/// The gateway's own error `status`, its body in `api`'s error shape (OpenAI's for a route of
/// no known API), saying why.
pub(super) fn error_answer(
    api: Option<Api>,
    status: StatusCode,
    why: &str,
) -> Response<AnswerBody> {
    let message = format!("tool-output-cap gateway: {why}");
    let timeout = status == StatusCode::GATEWAY_TIMEOUT || status == StatusCode::REQUEST_TIMEOUT;
    let body = match api {
        Some(Api::AnthropicMessages) => serde_json::json!({
            "type": "error",
            "error": {"type": if timeout { "timeout_error" } else { "api_error" }, "message": message},
        }),
        Some(Api::Gemini) => serde_json::json!({
            "error": {
                "code": status.as_u16(),
                "message": message,
                "status": if timeout { "DEADLINE_EXCEEDED" } else { "UNAVAILABLE" },
            },
        }),
        _ => serde_json::json!({
            "error": {
                "message": message,
                "type": "server_error",
                "param": null,
                "code": if timeout { "timeout" } else { "bad_gateway" },
            },
        }),
    };
    json_answer(status, &body)
}

/// An answer of the gateway's own: `status`, and `body` as JSON.
pub(super) fn json_answer(status: StatusCode, body: &serde_json::Value) -> Response<AnswerBody> {
    let mut response = Response::new(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
