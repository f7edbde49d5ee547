//! A stream of server-sent events relayed as it comes, each event that answers a call that
//! waits capped: its `data` lines replaced by one, the capped message; its other lines, and every
//! other event (a comment that keeps the stream alive among them), go on byte for byte.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use tokio::sync::{mpsc, Semaphore};
use tool_output_cap::ToolOutputLimits;

use super::answer::AnswerBody;
use super::mcp::capped_message;
use crate::pending::Pending;

type Sent = Result<Frame<Bytes>, Box<dyn std::error::Error + Send + Sync>>;

/// `body`, a stream of events, with the results of the calls `pending` waits for capped to
/// `limits`, each on a core `capping` lends.
pub(super) fn capped_events(
    body: AnswerBody,
    pending: Pending,
    limits: Arc<ToolOutputLimits>,
    capping: Arc<Semaphore>,
) -> AnswerBody {
    let (sender, mut receiver) = mpsc::channel::<Sent>(16);
    tokio::spawn(relay(body, pending, limits, capping, sender));
    let frames = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx));
    StreamBody::new(frames).boxed()
}

/// Relays `body` into `sender`, event by event while a call waits, then frame by frame.
async fn relay(
    mut body: AnswerBody,
    mut pending: Pending,
    limits: Arc<ToolOutputLimits>,
    capping: Arc<Semaphore>,
    sender: mpsc::Sender<Sent>,
) {
    // The lines of the event being read, each with its line end, and a line not yet ended.
    let (mut event, mut partial) = (Vec::<Vec<u8>>::new(), Vec::new());
    while let Some(frame) = body.frame().await {
        let data = match frame {
            Ok(frame) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            Err(error) => {
                let _ = sender.send(Err(error)).await;
                return;
            }
        };
        if !pending.waits() && event.is_empty() && partial.is_empty() {
            if sender.send(Ok(Frame::data(data))).await.is_err() {
                return;
            }
            continue;
        }
        partial.extend_from_slice(&data);
        while let Some(end) = partial.iter().position(|&byte| byte == b'\n') {
            let line: Vec<u8> = partial.drain(..=end).collect();
            let blank = line == b"\n" || line == b"\r\n";
            event.push(line);
            if blank {
                let lines = std::mem::take(&mut event);
                let out;
                (out, pending) = finished(lines, pending, &limits, &capping).await;
                if sender
                    .send(Ok(Frame::data(Bytes::from(out))))
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
    }
    // What the stream did not end: as it came.
    let rest = [event.concat(), partial].concat();
    if !rest.is_empty() {
        let _ = sender.send(Ok(Frame::data(Bytes::from(rest)))).await;
    }
}

/// The event of `lines` as the host gets it: its `data` capped when it answers a call `pending`
/// waits for; and `pending`, given back.
async fn finished(
    lines: Vec<Vec<u8>>,
    pending: Pending,
    limits: &Arc<ToolOutputLimits>,
    capping: &Arc<Semaphore>,
) -> (Vec<u8>, Pending) {
    let data: Vec<&[u8]> = lines.iter().filter_map(|line| data_of(line)).collect();
    if data.is_empty() || !pending.waits() {
        return (lines.concat(), pending);
    }
    let message = String::from_utf8_lossy(&data.join(&b'\n')).into_owned();
    let limits = Arc::clone(limits);
    let core = Arc::clone(capping).acquire_owned().await;
    let capped = tokio::task::spawn_blocking(move || {
        let mut pending = pending;
        let capped = capped_message(&message, &mut pending, &limits);
        drop(core);
        (capped, pending)
    })
    .await;
    let (capped, pending) = match capped {
        Ok(capped) => capped,
        // A cap that failed: the event as it came, and no call waits any more.
        Err(_) => return (lines.concat(), Pending::default()),
    };
    let Some(capped) = capped else {
        return (lines.concat(), pending);
    };
    // The first `data` line holds the capped message; the others go.
    let mut out = Vec::new();
    let mut written = false;
    for line in &lines {
        if data_of(line).is_none() {
            out.extend_from_slice(line);
        } else if !written {
            written = true;
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(capped.as_bytes());
            out.push(b'\n');
        }
    }
    (out, pending)
}

/// The value of a `data` line, without its line end; `None` for any other line.
fn data_of(line: &[u8]) -> Option<&[u8]> {
    let value = line.strip_prefix(b"data:")?;
    let value = value.strip_prefix(b" ").unwrap_or(value);
    Some(
        value
            .strip_suffix(b"\n")
            .map_or(value, |value| value.strip_suffix(b"\r").unwrap_or(value)),
    )
}
