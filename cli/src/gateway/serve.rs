//! Accepting connections until told to stop, then finishing the requests in flight.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use super::forward::{forward, Gateway};
use super::TARGET;

/// How long the requests in flight have to finish once the gateway is told to stop.
pub(super) const DRAIN: Duration = Duration::from_secs(10);

/// Serves `gateway` on `listener` until `stop` resolves; then accepts no more connections, and
/// waits at most [`DRAIN`] for the requests in flight.
pub(super) async fn serve(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    stop: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let builder = auto::Builder::new(TokioExecutor::new());
    tokio::pin!(stop);
    loop {
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
        let gateway = Arc::clone(&gateway);
        let service = service_fn(move |request| forward(Arc::clone(&gateway), request));
        let connection = builder
            .serve_connection(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(target: TARGET, "a connection ended: {error}");
            }
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
