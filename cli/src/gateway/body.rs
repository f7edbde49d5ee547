//! A request body read whole up to a limit, or, past it, sent on as it comes.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::CONTENT_LENGTH;
use hyper::HeaderMap;

/// A request body as the gateway read it.
pub(super) enum Read {
    /// The whole body, at most the limit.
    Whole(Bytes),
    /// A body over the limit: what was read of it, then the rest as it comes.
    Over(Prefixed),
}

/// Reads `body` whole if it is at most `max` bytes; past that, stops reading. A `Content-Length`
/// over `max` is taken at its word, and nothing is read.
pub(super) async fn read(
    mut body: Incoming,
    headers: &HeaderMap,
    max: usize,
) -> Result<Read, hyper::Error> {
    let length = headers
        .get(CONTENT_LENGTH)
        .and_then(|length| length.to_str().ok()?.parse::<usize>().ok());
    if length.is_some_and(|length| length > max) {
        return Ok(Read::Over(Prefixed::new(Bytes::new(), body)));
    }
    // A length is only a hint: a body is read to its end whatever it says.
    let mut buffer = Vec::with_capacity(length.unwrap_or(0));
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            buffer.extend_from_slice(&data);
            if buffer.len() > max {
                return Ok(Read::Over(Prefixed::new(buffer.into(), body)));
            }
        }
    }
    Ok(Read::Whole(buffer.into()))
}

/// A body whose start was read: that start, then the rest of the body as it comes.
pub(super) struct Prefixed {
    read: Option<Bytes>,
    rest: Incoming,
}

impl Prefixed {
    fn new(read: Bytes, rest: Incoming) -> Self {
        Prefixed {
            read: Some(read).filter(|read| !read.is_empty()),
            rest,
        }
    }
}

impl Body for Prefixed {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        if let Some(read) = self.read.take() {
            return Poll::Ready(Some(Ok(Frame::data(read))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.read.is_none() && self.rest.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let read = self.read.as_ref().map_or(0, |read| read.len() as u64);
        let rest = self.rest.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(rest.lower() + read);
        if let Some(upper) = rest.upper() {
            hint.set_upper(upper + read);
        }
        hint
    }
}
