//! What a server's message becomes for the host, whatever carries it (a pipe, an HTTP answer):
//! capped when it answers a call that waits for its result, on the capping thread, in the order
//! the messages come; any other as it came.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tool_output_cap::ToolOutputLimits;

use crate::capping_thread::CappingThread;
use crate::lenient;
use crate::pending::{Pending, Waiting};
use crate::result::{cap_response, Response};

/// The calls that wait, the limits, and the thread the results are capped on.
pub(crate) struct Capper {
    pending: Arc<Mutex<Pending>>,
    limits: Arc<ToolOutputLimits>,
    capping: CappingThread,
}

impl Capper {
    /// A capper of the calls `pending` holds, to `limits`.
    pub(crate) fn new(
        pending: Arc<Mutex<Pending>>,
        limits: Arc<ToolOutputLimits>,
    ) -> std::io::Result<Self> {
        let capping = CappingThread::start()?;
        Ok(Capper {
            pending,
            limits,
            capping,
        })
    }

    /// Writes the server's `line` to `writer` as the host gets it: capped if it answers a call
    /// that waits, with the line's own BOM and line end; else as it came. Gives the line back,
    /// for its buffer.
    pub(crate) async fn write(
        &self,
        writer: &mut (impl AsyncWrite + Unpin),
        mut line: Vec<u8>,
    ) -> std::io::Result<Vec<u8>> {
        let waited = lock(&self.pending).take_response(&line);
        let Some(Waiting { tool, carries }) = waited else {
            writer.write_all(&line).await?;
            return Ok(line);
        };
        let limits = Arc::clone(&self.limits);
        let owned = std::mem::take(&mut line);
        // Awaited here, so that nothing overtakes it.
        let (response, owned, tool) = self
            .capping
            .call(move || {
                let readable = lenient::readable(&owned);
                let response = cap_response(
                    readable.trim_end_matches(['\r', '\n']),
                    carries,
                    &tool,
                    &limits,
                );
                (response, owned, tool)
            })
            .await?;
        line = owned;
        if let Response::Task(task) = &response {
            lock(&self.pending).note_task(task.clone(), tool);
        }
        write_response(writer, &line, response).await?;
        Ok(line)
    }
}

/// Writes `response` to the server's `line` as the host gets it: the capped line with the
/// line's own BOM and line end, or the line as it came.
async fn write_response(
    writer: &mut (impl AsyncWrite + Unpin),
    line: &[u8],
    response: Response,
) -> std::io::Result<()> {
    match response {
        Response::Capped(capped) => {
            if line.starts_with(lenient::BOM) {
                writer.write_all(lenient::BOM).await?;
            }
            let end = &line[line.trim_ascii_end().len()..];
            writer.write_all(capped.as_bytes()).await?;
            writer.write_all(end).await
        }
        Response::Task(_) | Response::Unchanged => writer.write_all(line).await,
    }
}

/// The calls that wait, locked: a poisoned lock still holds them.
pub(crate) fn lock(pending: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
