//! A remote MCP server, reached over Streamable HTTP: `mcp --url URL` is a stdio server to the
//! host that relays each of its messages to the remote server, and the answers back
//! ([`bridge`](bridge::bridge)), each tool result capped by the library's call, as the stdio
//! proxy caps it; `check --url URL` lists its tools with their limits ([`check`]).

use std::time::Duration;

use crate::args::{LimitArgs, RemoteArgs};
use crate::config::Config;
use crate::Failure;

mod answer;
mod bridge;
mod check;
mod server;

use server::Remote;

/// How long connecting to the server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the bridge to the server `remote` names, until the host closes stdin or a signal comes.
pub(crate) fn bridge(args: &LimitArgs, remote: &RemoteArgs) -> Result<u8, Failure> {
    let limits = Config::for_every_tool(args)?.limits;
    let url = remote.url.as_deref().expect("the bridge runs with --url");
    let remote = Remote::new(url, &remote.headers, CONNECT_TIMEOUT).map_err(Failure::usage)?;
    crate::allocator::give_large_blocks_back();
    let runtime = crate::runtime::runtime(Some(2))?;
    let outcome = runtime.block_on(bridge::bridge(limits, remote));
    // Reading stdin may still block a thread: do not wait for it.
    runtime.shutdown_background();
    outcome
}

/// Lists the tools of the server `remote` names with the limits each gets (`check --url`).
pub(crate) fn check(
    args: &LimitArgs,
    remote: &RemoteArgs,
    timeout: Duration,
) -> Result<u8, Failure> {
    if remote.listen.is_some() {
        return Err(Failure::usage(
            "check reaches a server by --url alone, not --listen",
        ));
    }
    let config = Config::for_every_tool(args)?;
    let url = remote.url.as_deref().expect("checked with --url");
    let remote = Remote::new(url, &remote.headers, CONNECT_TIMEOUT).map_err(Failure::usage)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::io(format!("cannot start the runtime: {e}")))?;
    let listed = runtime.block_on(check::list_tools(&remote, &config, timeout));
    print!("{}", listed.map_err(Failure::io)?);
    Ok(0)
}
