//! When the server last wrote to its stdout: while it writes, the host's end does not stop it.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, ReadBuf};

/// The time of the server's last output, shared between the reader that sees it and the
/// shutdown that asks for it.
#[derive(Debug, Clone)]
pub(crate) struct LastOutput(Arc<Mutex<Instant>>);

impl LastOutput {
    pub(crate) fn now() -> Self {
        LastOutput(Arc::new(Mutex::new(Instant::now())))
    }

    /// How long ago the server last wrote.
    pub(crate) fn since(&self) -> Duration {
        self.lock().elapsed()
    }

    /// `output`, read with each read that yields bytes noted here.
    pub(crate) fn watch<R>(&self, output: R) -> Watched<R> {
        Watched {
            output,
            last: self.clone(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Instant> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A reader of the server's output that notes when it last yielded bytes.
pub(crate) struct Watched<R> {
    output: R,
    last: LastOutput,
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.output).poll_read(cx, buf);
        if buf.filled().len() > before {
            *self.last.lock() = Instant::now();
        }
        polled
    }
}
