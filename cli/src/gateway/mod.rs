//! `gateway`: an HTTP reverse proxy in front of one model API, which caps the tool results of
//! every inference and token-count request (the library's `wire::RequestCap`), a host's
//! built-in tools' among them; with a host command, it runs the host pointed at itself.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tool_output_cap::wire::{RateLimit, RequestCap};
use tool_output_cap::ToolOutputLimits;

use crate::args::{GatewayArgs, LimitArgs, ServerArgs};
use crate::config::Config;
use crate::{child, log, Failure};

mod answer;
mod body;
mod encoding;
mod events;
mod forward;
mod host;
mod mcp;
mod metrics;
mod rate_limit;
mod serve;
mod upstream;

use forward::Gateway;
use host::Host;
use upstream::Upstream;

/// The `tracing` target of the gateway's events.
const TARGET: &str = "tool_output_cap::gateway";

/// Where a gateway without a host listens unless told otherwise.
pub(crate) const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 8340);

/// Serves the gateway: until SIGTERM, SIGINT or SIGHUP without a host; with one, until the host
/// it runs exits, whose exit code is this process's.
pub(crate) fn gateway(args: &GatewayArgs) -> Result<u8, Failure> {
    let known = args
        .host
        .first()
        .map(|program| known_host(program))
        .transpose()?;
    let upstream_url = match (&args.upstream, known) {
        (Some(url), _) => url.clone(),
        (None, Some(host)) => host.upstream(),
        (None, None) => {
            return Err(Failure::usage(
                "the gateway needs --upstream URL, or a host to run: claude, codex or gemini",
            ))
        }
    };
    let gateway = Arc::new(Gateway::new(args, &upstream_url)?);
    crate::allocator::give_large_blocks_back();
    raise_open_file_limit();
    let runtime = crate::runtime::runtime(None)?;
    // With a host, on a free port of its own; alone, on the port users point their hosts at.
    let listen = args.listen.unwrap_or(match known {
        Some(_) => SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0),
        None => DEFAULT_LISTEN,
    });
    if !listen.ip().is_loopback() {
        tracing::warn!(
            target: TARGET,
            "listening on {listen}, beyond this machine: the gateway forwards each client's own \
             key to the upstream and authenticates no one"
        );
    }
    // On this thread, the main one, so that the host dies with the process (`child::command`).
    let outcome = runtime.block_on(async {
        if let Some(address) = args.server.metrics {
            metrics::serve(address, Arc::clone(&gateway.metrics))
                .await
                .map_err(Failure::io)?;
        }
        let (listener, url) = bind(listen).await?;
        match known {
            Some(known) => run_host(known, &args.host, listener, gateway, &url).await,
            None => serve_alone(listener, gateway, &url, &upstream_url).await,
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    outcome
}

/// Serves a capping reverse proxy of the remote MCP server at `url` on `listen` (`mcp --listen
/// ADDRESS --url URL`), until SIGTERM, SIGINT or SIGHUP: the server's own paths, its tool
/// results capped to the limits `limit` gives.
pub(crate) fn mcp_listen(
    limit: &LimitArgs,
    server: &ServerArgs,
    url: &str,
    listen: SocketAddr,
) -> Result<u8, Failure> {
    let limits = Config::for_every_tool(limit)?.limits;
    let (shown, _) = crate::https::split_userinfo(url);
    let origin = origin_of(&shown).ok_or_else(|| {
        Failure::usage(format!(
            "--url {shown:?} must be an http:// or https:// URL"
        ))
    })?;
    let gateway = Arc::new(Gateway::with(limits, server, &origin, true)?);
    crate::allocator::give_large_blocks_back();
    raise_open_file_limit();
    if !listen.ip().is_loopback() {
        tracing::warn!(
            target: TARGET,
            "listening on {listen}, beyond this machine: the proxy forwards each client's own \
             credentials to the server and authenticates no one"
        );
    }
    let runtime = crate::runtime::runtime(None)?;
    let outcome = runtime.block_on(async {
        let (listener, address) = bind(listen).await?;
        let path = shown
            .get(origin.len()..)
            .filter(|path| !path.is_empty())
            .unwrap_or("/");
        log::say(format!(
            "tool-output-cap mcp: {address}{path} stands for {shown}\n"
        ));
        let stop = async {
            crate::signals::shutdown_signal().await;
        };
        serve::serve(listener, gateway, stop).await;
        Ok(0)
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    outcome
}

/// The scheme and authority of `url`, as `https://host:port`: the server whose paths the proxy
/// serves as its own.
fn origin_of(url: &str) -> Option<String> {
    let uri: hyper::Uri = url.parse().ok()?;
    let scheme = uri
        .scheme_str()
        .filter(|scheme| matches!(*scheme, "http" | "https"))?;
    Some(format!("{scheme}://{}", uri.authority()?))
}

impl Gateway {
    /// The gateway to `upstream_url` that `args` describe.
    fn new(args: &GatewayArgs, upstream_url: &str) -> Result<Self, Failure> {
        let limits =
            Config::for_requests(&args.limit, &args.request_budget, args.rate_limit_share)?.limits;
        Gateway::with(limits, &args.server, upstream_url, false)
    }

    /// The gateway to `upstream_url`, served as `server` says, capping to `limits` the tool
    /// results of model API requests, or those in a remote MCP server's answers (`mcp`).
    fn with(
        limits: ToolOutputLimits,
        server: &ServerArgs,
        upstream_url: &str,
        mcp: bool,
    ) -> Result<Self, Failure> {
        let connect_timeout = Duration::from_secs(server.connect_timeout);
        Ok(Gateway {
            upstream: Upstream::new(upstream_url, connect_timeout).map_err(Failure::usage)?,
            mcp: mcp.then(|| Arc::new(limits.clone())),
            cap: RequestCap::new(limits).with_cache_bytes(server.cache_bytes),
            rate_limit: RateLimit::new(),
            server: server.clone(),
            metrics: Arc::default(),
            capping: Arc::new(Semaphore::new(
                std::thread::available_parallelism().map_or(1, usize::from),
            )),
        })
    }
}

/// Serves `gateway` on `listener`, at `url`, until SIGTERM, SIGINT or SIGHUP.
async fn serve_alone(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    url: &str,
    upstream_url: &str,
) -> Result<u8, Failure> {
    let (shown, _) = crate::https::split_userinfo(upstream_url);
    log::say(format!(
        "tool-output-cap gateway: {url} stands for {shown}\n"
    ));
    let stop = async {
        crate::signals::shutdown_signal().await;
    };
    serve::serve(listener, gateway, stop).await;
    Ok(0)
}

/// Raises the soft limit of open files to the hard one: each connection takes one, and one more
/// to the upstream, and a host's idle keep-alive connections add up.
fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
            if soft < hard {
                if let Err(error) = setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
                    tracing::debug!(target: TARGET, soft, hard, "cannot raise the open-file limit: {error}");
                }
            }
        }
    }
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
