//! The one thread the proxy caps results on.

use std::io;
use std::sync::mpsc;

type Job = Box<dyn FnOnce() + Send>;

/// A thread of its own for capping, which is CPU work: off the runtime's threads, so that host
/// messages keep flowing while a large result is counted, and always the same thread, so that
/// what capping allocates is reused from one result to the next. On a new thread each time (as
/// `spawn_blocking` may give), each result grew the allocator's arenas and the tokenizer's regex
/// caches anew.
pub(crate) struct CappingThread {
    jobs: mpsc::Sender<Job>,
}

impl CappingThread {
    /// Starts the thread; it ends when this is dropped and its last job is done.
    pub(crate) fn start() -> io::Result<Self> {
        let (jobs, next) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("capping".into())
            .spawn(move || {
                for job in next {
                    job();
                }
            })?;
        Ok(CappingThread { jobs })
    }

    /// What `job` returns, run on the capping thread after the jobs sent before it.
    pub(crate) async fn call<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> io::Result<T> {
        let (done, result) = tokio::sync::oneshot::channel();
        let stopped = || io::Error::other("the capping thread stopped (a cap panicked)");
        self.jobs
            .send(Box::new(move || {
                let _ = done.send(job());
            }))
            .map_err(|_| stopped())?;
        result.await.map_err(|_| stopped())
    }
}
