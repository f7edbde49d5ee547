//! The messages of one answer of the server's, in order: the message of a JSON body (each of a
//! batch's), or the data of each event of a stream of server-sent events. A message is one
//! line: an event's data of several lines is joined by spaces, which JSON allows between its
//! tokens and never holds raw in a string.

use std::pin::Pin;

use eventsource_stream::Eventsource;
use futures_util::{stream, Stream, StreamExt};
use http_body_util::BodyExt;
use hyper::body::Body;
use hyper::body::Incoming;
use hyper::header::CONTENT_TYPE;
use hyper::Response;
use serde_json::value::RawValue;

use super::server::Unreachable;

/// The messages of an answer; an error ends it (the stream broke off).
pub(crate) type Messages = Pin<Box<dyn Stream<Item = Result<Vec<u8>, String>> + Send>>;

/// The messages of `response`, an answer of the server at `url`.
pub(crate) async fn messages(
    response: Response<Incoming>,
    url: &str,
) -> Result<Messages, Unreachable> {
    let streamed = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|kind| kind.to_str().ok())
        .is_some_and(|kind| kind.starts_with("text/event-stream"));
    if streamed {
        let url = url.to_owned();
        let events = response.into_body().into_data_stream().eventsource();
        let messages = events.filter_map(move |event| {
            let message = match event {
                Ok(event) if event.data.is_empty() => None,
                Ok(event) if event.event.is_empty() || event.event == "message" => {
                    Some(Ok(one_line(event.data.into_bytes())))
                }
                Ok(_) => None,
                Err(error) => Some(Err(format!("{url}'s stream broke off: {error}"))),
            };
            std::future::ready(message)
        });
        return Ok(Box::pin(messages));
    }
    let body = whole(response.into_body())
        .await
        .map_err(|e| Unreachable(format!("{url}'s answer broke off: {e}")))?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Box::pin(stream::empty()));
    }
    let batch = body.trim_ascii_start().starts_with(b"[");
    let batch: Option<Vec<&RawValue>> = batch.then(|| serde_json::from_slice(&body).ok()).flatten();
    let messages: Vec<Result<Vec<u8>, String>> = match batch {
        Some(batch) => batch
            .into_iter()
            .map(|message| Ok(one_line(message.get().as_bytes().to_vec())))
            .collect(),
        None => vec![Ok(one_line(body))],
    };
    Ok(Box::pin(stream::iter(messages)))
}

/// The whole of `body`, read into one buffer as it comes: no frame is kept once copied, so that
/// a large result takes its size once, not twice.
async fn whole(mut body: Incoming) -> Result<Vec<u8>, hyper::Error> {
    let mut whole = Vec::with_capacity(body.size_hint().exact().unwrap_or(0) as usize);
    while let Some(frame) = body.frame().await {
        if let Some(data) = frame?.data_ref() {
            whole.extend_from_slice(data);
        }
    }
    Ok(whole)
}

/// `message` on one line: its line ends as spaces.
fn one_line(mut message: Vec<u8>) -> Vec<u8> {
    for byte in &mut message {
        if matches!(byte, b'\n' | b'\r') {
            *byte = b' ';
        }
    }
    message
}
