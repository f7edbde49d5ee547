//! Logs that never block: a line goes to a bounded queue that a thread of its own writes to
//! stderr, so that a host that does not read the proxy's stderr cannot stall the relay or its
//! shutdown. A line that finds the queue full is dropped and counted.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;

/// How many lines may wait to be written.
const QUEUE: usize = 1024;

/// Logs to stderr, at the level `RUST_LOG` sets (`warn` without it), without ever blocking.
pub(crate) fn init() {
    let (sender, lines) = mpsc::sync_channel(QUEUE);
    let state = Arc::new(State::default());
    let writer = Arc::clone(&state);
    std::thread::spawn(move || write_lines(lines, &writer));
    let _ = STDERR.set(Stderr { sender, state });
    tracing_subscriber::fmt()
        .with_writer(StderrQueue)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
}

/// Queues `line` for stderr as it is, as a log line is.
pub(crate) fn say(line: String) {
    drop(Line(line.into_bytes()));
}

/// Gives the logs queued so far up to `wait` to reach stderr, and says how many were dropped.
pub(crate) fn flush(wait: Duration) {
    let Some(stderr) = STDERR.get() else { return };
    let deadline = Instant::now() + wait;
    while stderr.state.queued.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let dropped = stderr.state.dropped.swap(0, Ordering::AcqRel);
    if dropped > 0 {
        let line = format!("tool-output-cap: {dropped} log lines dropped: stderr was not read\n");
        let _ = stderr.sender.try_send(line.into_bytes());
    }
}

static STDERR: OnceLock<Stderr> = OnceLock::new();

struct Stderr {
    sender: SyncSender<Vec<u8>>,
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    /// Lines sent and not yet written.
    queued: AtomicUsize,
    /// Lines dropped since the last [`flush`].
    dropped: AtomicUsize,
}

fn write_lines(lines: Receiver<Vec<u8>>, state: &State) {
    let mut stderr = std::io::stderr();
    for line in lines {
        let _ = stderr.write_all(&line);
        state.queued.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The `MakeWriter` of the queue: each event is formatted into a writer of its own and queued
/// whole when it is dropped.
struct StderrQueue;

impl<'a> MakeWriter<'a> for StderrQueue {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line(Vec::new())
    }
}

struct Line(Vec<u8>);

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let Some(stderr) = STDERR.get() else { return };
        if self.0.is_empty() {
            return;
        }
        stderr.state.queued.fetch_add(1, Ordering::AcqRel);
        match stderr.sender.try_send(std::mem::take(&mut self.0)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                stderr.state.queued.fetch_sub(1, Ordering::AcqRel);
                stderr.state.dropped.fetch_add(1, Ordering::AcqRel);
            }
        }
    }
}
