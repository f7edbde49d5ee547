//! Accepting connections until told to stop, then finishing the requests in flight.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::forward::{forward, Gateway};
use super::TARGET;

/// How long the requests in flight have to finish once the gateway is told to stop.
pub(super) const DRAIN: Duration = Duration::from_secs(10);

/// Serves `gateway` on `listener` until `stop` resolves; then accepts no more connections, and
/// waits at most [`DRAIN`] for the requests in flight. It holds at most `--max-connections`
/// connections: past that, a new one waits in the listener's backlog until one ends, and the
/// connections in flight go on; that is logged once. A connection that sends no request
/// headers for `--header-timeout` (an idle HTTP/1 keep-alive one among them) is closed.
pub(super) async fn serve(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    stop: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let builder = connection_builder(&gateway);
    let bound = max_connections(gateway.server.max_connections);
    let open = Arc::new(Semaphore::new(bound));
    let mut said_full = false;
    tokio::pin!(stop);
    loop {
        if open.available_permits() == 0 && !said_full {
            said_full = true;
            tracing::warn!(
                target: TARGET,
                "{bound} connections are open (--max-connections): new ones wait until one ends"
            );
        }
        let permit = tokio::select! {
            permit = Arc::clone(&open).acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut stop => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(target: TARGET, "cannot accept a connection: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let connection = serve_connection(
            stream,
            builder.clone(),
            Arc::clone(&gateway),
            graceful.watcher(),
        );
        tokio::spawn(async move {
            connection.await;
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            target: TARGET,
            "requests still in flight after {} s: stopped", DRAIN.as_secs()
        );
    }
}

/// How each connection is served: HTTP/1 or HTTP/2, with the gateway's header timeout.
fn connection_builder(gateway: &Gateway) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(gateway.server.header_timeout))
        // A read buffer of 64 KiB at most for each connection, not hyper's 400 KiB: a body is
        // read in parts of that size, and a request's headers fit.
        .max_buf_size(64 << 10);
    builder.http2().timer(TokioTimer::new());
    builder
}

/// Serves the connection `stream` with `builder`, watched by `watcher` for a graceful shutdown.
async fn serve_connection(
    stream: TcpStream,
    builder: auto::Builder<TokioExecutor>,
    gateway: Arc<Gateway>,
    watcher: Watcher,
) {
    // hyper's timer starts once it reads a request's head, after the first bytes have told
    // HTTP/1 from HTTP/2: a connection that sends none is closed here.
    let wait = Duration::from_secs(gateway.server.header_timeout);
    let first = tokio::time::timeout(wait, stream.peek(&mut [0u8; 1])).await;
    if matches!(first, Ok(Ok(1..))) {
        let service = service_fn(move |request| forward(Arc::clone(&gateway), request));
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        if let Err(error) = watcher.watch(connection.into_owned()).await {
            tracing::debug!(target: TARGET, "a connection ended: {error}");
        }
    }
}

/// `given`, or a third of the process's open-file limit: each connection takes one file, and
/// one more to the upstream, with room left for the rest.
fn max_connections(given: Option<usize>) -> usize {
    given
        .unwrap_or_else(|| {
            #[cfg(unix)]
            let files = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                .map_or(1024, |(soft, _)| soft);
            #[cfg(not(unix))]
            let files = 1024;
            usize::try_from(files / 3).unwrap_or(usize::MAX)
        })
        .max(1)
}
