//! `mcp`: runs the server command and relays newline-delimited JSON-RPC between the host (this
//! process's stdin and stdout) and the server (the child's), capping each tool result.
//!
//! Every line is forwarded byte for byte, in order, but the responses to `tools/call` (and the
//! task results that carry a tool's result later), which are capped. Host messages are read for
//! their method, id and the few params that route them; server messages for their id, and only
//! while a call is pending.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::{ExitCode, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::Child;

use super::args::CountingArgs;
use super::mcp::{cap_response, id_key, string, Carries, Envelope, Response};
use super::{filter, Failure};
use crate::tokenizer::TokenizerRef;
use crate::ToolOutputLimits;

/// How many calls (and tasks) may wait for their result at once; past that the oldest is
/// forgotten, and its result passes uncapped.
pub(crate) const MAX_PENDING: usize = 4096;

/// How long the server has to exit once its stdin is closed, and again after SIGTERM.
const GRACE: Duration = Duration::from_secs(2);

/// Runs `command` as the server, relaying until it exits; its exit code is this process's.
pub(crate) fn run(
    manifest: Option<&Path>,
    counting: &CountingArgs,
    command: &[String],
) -> Result<ExitCode, Failure> {
    let limits = filter::limits(manifest, counting)?;
    let tokenizer = limits.tokenizer();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::io(format!("cannot start the runtime: {e}")))?;
    let outcome = runtime.block_on(relay(limits, tokenizer, command));
    // Reading stdin may still block a thread: do not wait for it.
    runtime.shutdown_background();
    outcome
}

async fn relay(
    limits: ToolOutputLimits,
    tokenizer: TokenizerRef,
    command: &[String],
) -> Result<ExitCode, Failure> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| Failure::usage("no server command after `--`"))?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| Failure::not_started(format!("cannot start `{program}`: {e}")))?;
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        unreachable!("both pipes were asked for");
    };
    let pending = Arc::new(Mutex::new(Pending::default()));
    let mut to_server = tokio::spawn(host_to_server(
        tokio::io::stdin(),
        server_in,
        Arc::clone(&pending),
    ));
    let to_host = tokio::spawn(server_to_host(
        server_out,
        tokio::io::stdout(),
        pending,
        Arc::new(limits),
        tokenizer,
    ));
    let status = tokio::select! {
        status = child.wait() => status,
        _ = &mut to_server => stop(&mut child).await,
    }
    .map_err(|e| Failure::io(format!("cannot wait for `{program}`: {e}")))?;
    // Flush what the server wrote before it exited, unless something it left holds the pipe.
    match tokio::time::timeout(GRACE, to_host).await {
        Ok(Ok(Err(e))) => tracing::warn!("cannot relay the server's output: {e}"),
        Err(_) => tracing::warn!("the server's stdout stayed open after it exited"),
        _ => {}
    }
    Ok(exit_code(status))
}

/// Once the host has closed stdin (and so the server's): waits for the server to exit, then
/// sends it SIGTERM, then SIGKILL.
async fn stop(child: &mut Child) -> std::io::Result<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(GRACE, child.wait()).await {
        return status;
    }
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        tracing::warn!(
            pid,
            "the server has not exited since stdin closed; sending SIGTERM"
        );
        let pid = nix::unistd::Pid::from_raw(pid as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        if let Ok(status) = tokio::time::timeout(GRACE, child.wait()).await {
            return status;
        }
    }
    tracing::warn!("the server has not exited; killing it");
    child.kill().await?;
    child.wait().await
}

/// The server's exit code, or 128 and the signal that ended it, as a shell says.
fn exit_code(status: ExitStatus) -> ExitCode {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return ExitCode::from(128u8.saturating_add(signal as u8));
    }
    ExitCode::from(status.code().unwrap_or(1) as u8)
}

/// Relays the host's lines to the server, noting the calls whose results to cap; closes the
/// server's stdin when the host closes its own.
async fn host_to_server(
    from_host: impl AsyncRead + Unpin,
    to_server: impl AsyncWrite + Unpin,
    pending: Arc<Mutex<Pending>>,
) {
    let mut reader = BufReader::new(from_host);
    let mut writer = BufWriter::new(to_server);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        lock(&pending).note_host_message(&line);
        if writer.write_all(&line).await.is_err() {
            break;
        }
        if reader.buffer().is_empty() && writer.flush().await.is_err() {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

/// Relays the server's lines to the host, capping the results of pending calls in order.
async fn server_to_host(
    from_server: impl AsyncRead + Unpin,
    to_host: impl AsyncWrite + Unpin,
    pending: Arc<Mutex<Pending>>,
    limits: Arc<ToolOutputLimits>,
    tokenizer: TokenizerRef,
) -> std::io::Result<()> {
    let mut reader = BufReader::with_capacity(64 * 1024, from_server);
    let mut writer = BufWriter::with_capacity(64 * 1024, to_host);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        let waited = lock(&pending).take_response(&line);
        if let Some(Waiting { tool, carries }) = waited {
            let (limits, tokenizer) = (Arc::clone(&limits), tokenizer.clone());
            let owned = std::mem::take(&mut line);
            // Capping is CPU work: off the runtime's threads, so host messages keep flowing;
            // awaited here, so nothing overtakes it.
            let (response, owned, tool) = tokio::task::spawn_blocking(move || {
                let response = match std::str::from_utf8(&owned) {
                    Ok(text) => cap_response(
                        text.trim_end_matches(['\r', '\n']),
                        carries,
                        &tool,
                        limits.limit_for(&tool),
                        &*tokenizer,
                    ),
                    Err(_) => Response::Unchanged,
                };
                (response, owned, tool)
            })
            .await?;
            line = owned;
            match response {
                Response::Capped(capped) => {
                    let end = &line[line.trim_ascii_end().len()..];
                    writer.write_all(capped.as_bytes()).await?;
                    writer.write_all(end).await?;
                }
                Response::Task(task) => {
                    lock(&pending).tasks.insert(task, tool);
                    writer.write_all(&line).await?;
                }
                Response::Unchanged => writer.write_all(&line).await?,
            }
        } else {
            writer.write_all(&line).await?;
        }
        if reader.buffer().is_empty() {
            writer.flush().await?;
        }
    }
    writer.flush().await
}

fn lock(pending: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A call waiting for its result: the tool, and which result the response carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Waiting {
    tool: String,
    carries: Carries,
}

/// The host's calls waiting for a result, by id, and the tool of each task, by task id.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    calls: Bounded<Waiting>,
    tasks: Bounded<String>,
}

impl Pending {
    /// Notes a host message: a `tools/call`, `tasks/result` or `tasks/get` to wait for, or a
    /// cancellation.
    pub(crate) fn note_host_message(&mut self, line: &[u8]) {
        let Some(message) = Envelope::of(line) else {
            return;
        };
        let Some(method) = message.method.as_deref() else {
            return;
        };
        let waiting = match method {
            "notifications/cancelled" => {
                if let Some(id) = message.param("requestId").and_then(id_key) {
                    self.calls.remove(&id);
                }
                return;
            }
            "tools/call" => message.param("name").and_then(string).map(|tool| Waiting {
                tool,
                carries: Carries::CallToolResult,
            }),
            "tasks/result" | "tasks/get" => message
                .param("taskId")
                .and_then(string)
                .and_then(|task| self.tasks.get(&task).cloned())
                .map(|tool| Waiting {
                    tool,
                    carries: if method == "tasks/get" {
                        Carries::Task
                    } else {
                        Carries::CallToolResult
                    },
                }),
            _ => None,
        };
        if let (Some(waiting), Some(id)) = (waiting, message.id_key()) {
            self.calls.insert(id, waiting);
        }
    }

    /// The call a server message answers, if it is the response to one that waits.
    pub(crate) fn take_response(&mut self, line: &[u8]) -> Option<Waiting> {
        if self.calls.is_empty() {
            return None;
        }
        let message = Envelope::of(line)?;
        if message.method.is_some() {
            // A request or notification of the server's own: another id space.
            return None;
        }
        self.calls.remove(&message.id_key()?)
    }
}

/// A map that holds at most [`MAX_PENDING`] entries, forgetting the oldest.
#[derive(Debug)]
struct Bounded<V> {
    entries: HashMap<String, (u64, V)>,
    order: VecDeque<(u64, String)>,
    next: u64,
}

impl<V> Default for Bounded<V> {
    fn default() -> Self {
        Bounded {
            entries: HashMap::new(),
            order: VecDeque::new(),
            next: 0,
        }
    }
}

impl<V> Bounded<V> {
    fn insert(&mut self, key: String, value: V) {
        while self.entries.len() >= MAX_PENDING && !self.entries.contains_key(&key) {
            let Some((seq, oldest)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&oldest).is_some_and(|(at, _)| *at == seq) {
                self.entries.remove(&oldest);
                tracing::warn!(
                    id = oldest.get(1..),
                    "more than {MAX_PENDING} calls wait for a result; the oldest will pass uncapped"
                );
            }
        }
        self.next += 1;
        self.order.push_back((self.next, key.clone()));
        self.entries.insert(key, (self.next, value));
        if self.order.len() > 2 * MAX_PENDING {
            let entries = &self.entries;
            self.order
                .retain(|(seq, key)| entries.get(key).is_some_and(|(at, _)| at == seq));
        }
    }

    fn get(&self, key: &str) -> Option<&V> {
        self.entries.get(key).map(|(_, value)| value)
    }

    fn remove(&mut self, key: &str) -> Option<V> {
        self.entries.remove(key).map(|(_, value)| value)
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: usize) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"Glob"}}}}"#)
            .into_bytes()
    }

    fn response(id: usize) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#).into_bytes()
    }

    #[test]
    fn the_pending_calls_are_bounded_and_the_oldest_is_forgotten() {
        let mut pending = Pending::default();
        for id in 0..MAX_PENDING + 100 {
            pending.note_host_message(&call(id));
        }
        assert_eq!(pending.calls.entries.len(), MAX_PENDING);
        assert!(pending.calls.order.len() <= 2 * MAX_PENDING);
        assert_eq!(pending.take_response(&response(99)), None, "forgotten");
        let waiting = pending.take_response(&response(100)).expect("still waits");
        assert_eq!(waiting.tool, "Glob");
        assert_eq!(pending.take_response(&response(100)), None, "answered once");
        // Answered calls leave no trace behind.
        for round in 0..10 * MAX_PENDING {
            pending.note_host_message(&call(1_000_000 + round));
            assert!(pending
                .take_response(&response(1_000_000 + round))
                .is_some());
        }
        assert!(pending.calls.order.len() <= 2 * MAX_PENDING);
    }

    #[test]
    fn a_server_request_with_a_pending_id_is_not_taken_for_the_response() {
        let mut pending = Pending::default();
        pending.note_host_message(&call(1));
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert_eq!(pending.take_response(request), None);
        assert!(pending.take_response(&response(1)).is_some());
        let cancelled =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        pending.note_host_message(&call(2));
        pending.note_host_message(cancelled);
        assert_eq!(pending.take_response(&response(2)), None);
    }
}
