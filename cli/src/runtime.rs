//! The tokio runtime the long-running commands (`mcp`, `gateway`) run on.

use crate::Failure;

/// A multi-threaded runtime with every driver: `workers` threads, else one a core.
pub(crate) fn runtime(workers: Option<usize>) -> Result<tokio::runtime::Runtime, Failure> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = workers {
        builder.worker_threads(workers);
    }
    builder
        .enable_all()
        .build()
        .map_err(|e| Failure::io(format!("cannot start the runtime: {e}")))
}
