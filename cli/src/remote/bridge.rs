//! `mcp --url URL`: a stdio server to the host, whose every message goes to the remote server
//! as a POST, and whose answers (a JSON body, or a stream of events) come back to the host as
//! lines, the results of `tools/call` capped as the stdio proxy caps them.
//!
//! - The session the server gives on its answer to `initialize` (`Mcp-Session-Id`), and the
//!   protocol revision it answered, go with every request after it; a request of the
//!   2026-07-28 revision, which has no `initialize`, says its revision in its `_meta`, and goes
//!   with it. Once initialized, the server's own stream (GET) is opened, when it offers one,
//!   for the requests it makes of the host (sampling, elicitation, roots).
//! - Each of the host's requests is sent as it comes, without waiting for the answers to those
//!   before it: a long tool call holds up nothing. A notification, or the host's response to a
//!   request of the server's, is accepted by the server before the next message is sent, so
//!   that the server reads them in the host's order: the `tools/list` after
//!   `notifications/initialized` lists the tools a server adds once initialized.
//! - When the server cannot be reached, refuses a request (401, 404) or breaks off its answer
//!   before the response to a request, the host gets an error response for that request,
//!   naming the server's URL (never a header's value), and a line on stderr; the bridge goes
//!   on, for the host to retry.
//! - When the host closes stdin, the answers on their way are delivered, then the session is
//!   ended (DELETE); on SIGTERM, SIGINT or SIGHUP, at once.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use hyper::header::HeaderValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{mpsc, oneshot};
use tokio::task::{AbortHandle, JoinSet};
use tool_output_cap::ToolOutputLimits;

use super::server::{Remote, Unreachable};
use crate::capper::{lock, Capper};
use crate::lenient;
use crate::pending::{id_key, Envelope, Pending};
use crate::signals::shutdown_signal;
use crate::Failure;

/// The `_meta` key of a 2026-07-28 request's protocol revision.
const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// How long the server has to answer the end of the session.
const END_WITHIN: Duration = Duration::from_secs(2);

/// How long to wait before opening the server's own stream again once it ended.
const LISTEN_AGAIN: Duration = Duration::from_secs(1);

/// Relays the host's messages to `remote` and its answers back, capping each tool result to
/// `limits`, until the host closes stdin or a signal comes.
pub(crate) async fn bridge(limits: ToolOutputLimits, remote: Remote) -> Result<u8, Failure> {
    let remote = Arc::new(remote);
    let pending = Arc::new(Mutex::new(Pending::default()));
    let capper = Capper::new(Arc::clone(&pending), Arc::new(limits))
        .map_err(|e| Failure::io(format!("cannot start the capping thread: {e}")))?;
    let (to_host, messages) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_to_host(messages, capper));
    let relay = Relay {
        remote: Arc::clone(&remote),
        to_host,
        listening: Arc::new(OnceLock::new()),
    };
    let mut posts = JoinSet::new();
    let signalled = tokio::select! {
        () = read_host(&relay, &pending, &mut posts) => {
            // The answers on their way are the host's: wait for them, but not past a signal.
            tokio::select! {
                () = async { while posts.join_next().await.is_some() {} } => false,
                _ = shutdown_signal() => true,
            }
        }
        _ = shutdown_signal() => true,
    };
    posts.abort_all();
    if let Some(listening) = relay.listening.get() {
        listening.abort();
    }
    remote.end(END_WITHIN).await;
    drop(relay);
    if !signalled {
        if let Ok(Err(e)) = writer.await {
            tracing::warn!("cannot relay the server's answers to the host: {e}");
        }
    }
    Ok(0)
}

/// What each POST needs: the server, the way to the host, and the server's own stream once it
/// is open.
#[derive(Clone)]
struct Relay {
    remote: Arc<Remote>,
    to_host: mpsc::UnboundedSender<Vec<u8>>,
    listening: Arc<OnceLock<AbortHandle>>,
}

/// Reads the host's lines until it closes stdin, noting the calls to cap, and sends each.
async fn read_host(relay: &Relay, pending: &Mutex<Pending>, posts: &mut JoinSet<()>) {
    let mut lines = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        lock(pending).note_host_message(&line);
        let line = line.trim_ascii_end().to_vec();
        let sent = Sent::of(&line);
        let request = sent.raw_id.is_some();
        let (accepted, acceptance) = oneshot::channel();
        posts.spawn(relay.clone().post(sent, line, accepted));
        if !request {
            // Accepted, or refused: the error goes nowhere, as a notification has no answer.
            let _ = acceptance.await;
        }
        // The POSTs done are forgotten as the host goes on.
        while posts.try_join_next().is_some() {}
    }
}

/// Writes each of the server's messages to the host, a line each, capped where it answers a
/// call that waits.
async fn write_to_host(
    mut messages: mpsc::UnboundedReceiver<Vec<u8>>,
    capper: Capper,
) -> std::io::Result<()> {
    let mut writer = BufWriter::with_capacity(64 * 1024, tokio::io::stdout());
    while let Some(message) = messages.recv().await {
        // The line end written on its own: a large message is not grown, and so copied, for it.
        capper.write(&mut writer, message).await?;
        writer.write_all(b"\n").await?;
        if messages.is_empty() {
            writer.flush().await?;
        }
    }
    writer.flush().await
}

/// What a host's message is, as far as the bridge needs: its id when it is a request, its
/// method, and the protocol revision it says in its `_meta`.
struct Sent {
    id: Option<String>,
    raw_id: Option<String>,
    initialize: bool,
    version: Option<HeaderValue>,
}

impl Sent {
    fn of(line: &[u8]) -> Sent {
        let line = lenient::readable(line);
        let message = Envelope::of(&line);
        let request = message.as_ref().filter(|m| m.method.is_some());
        let version = request
            .and_then(|m| m.param("_meta"))
            .and_then(|meta| serde_json::from_str::<serde_json::Value>(meta.get()).ok())
            .and_then(|meta| meta.get(VERSION_META)?.as_str().map(str::to_owned))
            .and_then(|version| HeaderValue::try_from(version).ok());
        Sent {
            id: request.and_then(Envelope::id_key),
            raw_id: request.and_then(|m| m.id).map(|id| id.get().to_owned()),
            initialize: request.is_some_and(|m| m.method.as_deref() == Some("initialize")),
            version,
        }
    }
}

impl Relay {
    /// Sends the host's `line` to the server, and its answer's messages to the host; for a
    /// request the server does not answer, an error response. `accepted` is sent once the
    /// server's answer has begun.
    async fn post(self, sent: Sent, line: Vec<u8>, accepted: oneshot::Sender<()>) {
        let posted = self
            .remote
            .post(Bytes::from(line), sent.version.clone())
            .await;
        let _ = accepted.send(());
        let answered = match posted {
            Ok(mut messages) => {
                let mut answered = false;
                while let Some(message) = messages.next().await {
                    match message {
                        Ok(message) => answered |= self.relayed(&sent, message),
                        Err(broke_off) => {
                            tracing::warn!("{broke_off}");
                            break;
                        }
                    }
                }
                answered.then_some(()).ok_or_else(|| {
                    let url = self.remote.url();
                    Unreachable(format!("{url}'s answer ended before the response"))
                })
            }
            Err(unreachable) => Err(unreachable),
        };
        if let (Err(Unreachable(why)), Some(id)) = (answered, &sent.raw_id) {
            tracing::warn!("{why}");
            let error = serde_json::json!({
                "jsonrpc": "2.0",
                "id": serde_json::from_str::<serde_json::Value>(id).unwrap_or_default(),
                "error": {"code": -32000, "message": format!("tool-output-cap: {why}")},
            });
            let _ = self.to_host.send(error.to_string().into_bytes());
        }
    }

    /// Sends the server's `message` to the host: whether it is the response to `sent`. The
    /// response to `initialize` says the session's revision, and opens the server's stream.
    fn relayed(&self, sent: &Sent, message: Vec<u8>) -> bool {
        let readable = lenient::readable(&message);
        let envelope = Envelope::of(&readable);
        let answers = envelope.as_ref().is_some_and(|m| {
            m.method.is_none() && sent.id.is_some() && m.id.and_then(id_key) == sent.id
        });
        if answers && sent.initialize {
            let result: Option<serde_json::Value> = serde_json::from_str(&readable).ok();
            let version = result
                .as_ref()
                .and_then(|r| r["result"]["protocolVersion"].as_str());
            if let Some(version) = version {
                self.remote.set_version(version);
            }
            self.open_stream();
        }
        let _ = self.to_host.send(message);
        answers
    }

    /// Opens the server's own stream, once, in the background: while it lasts, its messages go
    /// to the host; it is opened again when it ends, until the server offers none.
    fn open_stream(&self) {
        let relay = self.clone();
        let listening = tokio::spawn(async move {
            loop {
                match relay.remote.listen().await {
                    Ok(Some(mut messages)) => {
                        while let Some(Ok(message)) = messages.next().await {
                            let _ = relay.to_host.send(message);
                        }
                    }
                    Ok(None) => return,
                    Err(Unreachable(why)) => {
                        tracing::warn!("the server's own stream: {why}");
                        return;
                    }
                }
                tokio::time::sleep(LISTEN_AGAIN).await;
            }
        });
        if let Err(again) = self.listening.set(listening.abort_handle()) {
            // Initialized again: the stream already open stays.
            drop(again);
            listening.abort();
        }
    }
}
