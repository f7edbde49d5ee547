//! The signals that stop this process, awaited.

/// The first of SIGTERM, SIGINT and SIGHUP to reach this process, by name.
#[cfg(unix)]
pub(crate) async fn shutdown_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let listen = |kind| signal(kind).ok();
    let (mut term, mut int, mut hup) = (
        listen(SignalKind::terminate()),
        listen(SignalKind::interrupt()),
        listen(SignalKind::hangup()),
    );
    tokio::select! {
        () = recv(&mut term) => "SIGTERM",
        () = recv(&mut int) => "SIGINT",
        () = recv(&mut hup) => "SIGHUP",
    }
}

/// The next signal of `stream`; never, if it could not be listened to.
#[cfg(unix)]
pub(crate) async fn recv(stream: &mut Option<tokio::signal::unix::Signal>) {
    match stream {
        Some(stream) => {
            stream.recv().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(not(unix))]
pub(crate) async fn shutdown_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}
