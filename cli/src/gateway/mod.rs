//! `gateway`: an HTTP reverse proxy in front of one model API, which caps the tool results of
//! every inference and token-count request (the library's `wire::RequestCap`), a host's
//! built-in tools' among them; with a host command, it runs the host pointed at itself.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tool_output_cap::wire::RequestCap;
use tool_output_cap::RateLimitShare;

use crate::args::{LimitArgs, RequestArgs, ServerArgs};
use crate::config::Config;
use crate::{child, log, Failure};

mod answer;
mod body;
mod encoding;
mod forward;
mod host;
mod metrics;
mod rate_limit;
mod serve;
mod upstream;

use forward::Gateway;
use host::Host;
use rate_limit::RateLimit;
use upstream::Upstream;

/// The `tracing` target of the gateway's events.
const TARGET: &str = "tool_output_cap::gateway";

/// Where a gateway without a host listens unless told otherwise.
pub(crate) const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 8340);

/// The budgets of a request's tool results together that the gateway's flags give.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budgets<'a> {
    pub(crate) request: &'a RequestArgs,
    pub(crate) rate_limit_share: Option<RateLimitShare>,
}

/// Serves the gateway: until SIGTERM, SIGINT or SIGHUP without `host`; with it, until the host
/// it runs exits, whose exit code is this process's.
pub(crate) fn gateway(
    args: &LimitArgs,
    budgets: Budgets<'_>,
    server: &ServerArgs,
    upstream: Option<&str>,
    listen: Option<SocketAddr>,
    host: &[String],
) -> Result<u8, Failure> {
    let mut limits = Config::for_requests(args, budgets.request)?.limits;
    if let Some(share) = budgets.rate_limit_share {
        limits = limits.with_rate_limit_share(share);
    }
    let known = host
        .first()
        .map(|program| known_host(program))
        .transpose()?;
    let upstream_url = match (upstream, known) {
        (Some(url), _) => url.to_owned(),
        (None, Some(host)) => host.upstream(),
        (None, None) => {
            return Err(Failure::usage(
                "the gateway needs --upstream URL, or a host to run: claude, codex or gemini",
            ))
        }
    };
    let connect_timeout = Duration::from_secs(server.connect_timeout);
    let gateway = Arc::new(Gateway {
        upstream: Upstream::new(&upstream_url, connect_timeout).map_err(Failure::usage)?,
        cap: RequestCap::new(limits).with_cache_bytes(server.cache_bytes),
        rate_limit: RateLimit::default(),
        server: server.clone(),
        metrics: Arc::default(),
        capping: Arc::new(Semaphore::new(
            std::thread::available_parallelism().map_or(1, usize::from),
        )),
    });
    let upstream_url = upstream::without_userinfo(&upstream_url);
    crate::allocator::give_large_blocks_back();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::io(format!("cannot start the runtime: {e}")))?;
    // With a host, on a free port of its own; alone, on the port users point their hosts at.
    let listen = listen.unwrap_or(match known {
        Some(_) => SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0),
        None => DEFAULT_LISTEN,
    });
    // On this thread, the main one, so that the host dies with the process (`child::command`).
    if !listen.ip().is_loopback() {
        tracing::warn!(
            target: TARGET,
            "listening on {listen}, beyond this machine: the gateway forwards each client's own \
             key to the upstream and authenticates no one"
        );
    }
    let outcome = runtime.block_on(async {
        if let Some(address) = server.metrics {
            metrics::serve(address, Arc::clone(&gateway.metrics))
                .await
                .map_err(Failure::io)?;
        }
        let (listener, url) = bind(listen).await?;
        match known {
            Some(known) => run_host(known, host, listener, gateway, &url).await,
            None => {
                log::say(format!(
                    "tool-output-cap gateway: {url} stands for {upstream_url}\n"
                ));
                let stop = async {
                    crate::signals::shutdown_signal().await;
                };
                serve::serve(listener, gateway, stop).await;
                Ok(0)
            }
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    outcome
}

/// The host `program` names, or a usage error saying which the gateway runs.
fn known_host(program: &str) -> Result<Host, Failure> {
    Host::of(program).ok_or_else(|| {
        Failure::usage(format!(
            "cannot point `{program}` at the gateway: the hosts it runs are claude, codex and \
             gemini; run the gateway alone (--upstream URL) and set the program's base URL to it"
        ))
    })
}

/// A listener on `listen`, and its URL.
async fn bind(listen: SocketAddr) -> Result<(TcpListener, String), Failure> {
    let cannot = |e: std::io::Error| Failure::io(format!("cannot listen on {listen}: {e}"));
    let listener = TcpListener::bind(listen).await.map_err(cannot)?;
    let address = listener.local_addr().map_err(cannot)?;
    Ok((listener, format!("http://{address}")))
}

/// Runs the host `argv` (a `known` one) pointed at the gateway at `url`, serving until it exits:
/// its exit code.
async fn run_host(
    known: Host,
    argv: &[String],
    listener: TcpListener,
    gateway: Arc<Gateway>,
    url: &str,
) -> Result<u8, Failure> {
    let (pointed, env) = known.pointed_at(argv, url);
    let mut command = child::command(&pointed)?;
    command.envs(env);
    let mut running = tokio::process::Command::from(command)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| child::not_started(argv, e))?;
    let pid = running.id();
    let status = std::sync::Mutex::new(None::<std::io::Result<ExitStatus>>);
    serve::serve(listener, gateway, async {
        let ended = tokio::select! {
            ended = running.wait() => ended,
            () = pass_on_signals(pid) => unreachable!("passing signals on never ends"),
        };
        *status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(ended);
    })
    .await;
    // The gateway stopped because the host ended: its status is there.
    let status = status
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .expect("the gateway stops once the host has ended");
    let status = status.map_err(|e| Failure::io(format!("cannot wait for `{}`: {e}", argv[0])))?;
    Ok(child::exit_code(status))
}

/// Passes SIGTERM and SIGHUP on to the host `pid`. SIGINT is not: a terminal sends Ctrl-C to
/// the host itself, which decides what it means.
async fn pass_on_signals(pid: Option<u32>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let listen = |kind| signal(kind).ok();
        let (mut term, mut int, mut hup) = (
            listen(SignalKind::terminate()),
            listen(SignalKind::interrupt()),
            listen(SignalKind::hangup()),
        );
        loop {
            let signal = tokio::select! {
                () = crate::signals::recv(&mut term) => nix::sys::signal::Signal::SIGTERM,
                () = crate::signals::recv(&mut hup) => nix::sys::signal::Signal::SIGHUP,
                () = crate::signals::recv(&mut int) => continue,
            };
            if let Some(pid) = pid {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal);
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        std::future::pending::<()>().await
    }
}
