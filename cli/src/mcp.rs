//! `mcp`: runs the server command and relays newline-delimited JSON-RPC between the host (this
//! process's stdin and stdout) and the server (the child's), capping each tool result.
//!
//! Every line is forwarded byte for byte, in order, but the responses to `tools/call` (and the
//! task results that carry a tool's result later), which are capped. Host messages are read for
//! their method, id and the few params that route them; server messages for their id, and only
//! while a call is pending.

use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::Child;
use tokio::sync::watch;
use tool_output_cap::ToolOutputLimits;

use crate::args::LimitArgs;
use crate::capper::{lock, Capper};
use crate::child;
use crate::config::Config;
use crate::last_output::LastOutput;
use crate::pending::Pending;
use crate::signals::shutdown_signal;
use crate::Failure;

/// How long the server has to exit once its stdin is closed, and again after SIGTERM: together
/// less than the 2 s + 2 s an SDK gives the proxy itself, so that it is done before its host
/// escalates.
const GRACE: Duration = Duration::from_millis(1500);

/// Once the server has exited, how long its stdout may stay silent before the relay stops: a
/// process it started may hold the pipe open, and write no more.
const SILENCE: Duration = Duration::from_millis(200);

/// Runs `command` as the server, relaying until it exits; its exit code is this process's.
pub(crate) fn proxy(args: &LimitArgs, command: &[String]) -> Result<u8, Failure> {
    let limits = Config::for_every_tool(args)?.limits;
    crate::allocator::give_large_blocks_back();
    let runtime = crate::runtime::runtime(Some(2))?;
    // On this thread, the main one, so that the server dies with the process (`child::command`).
    let outcome = runtime.block_on(relay(limits, command));
    // Reading stdin may still block a thread: do not wait for it.
    runtime.shutdown_background();
    outcome
}

async fn relay(limits: ToolOutputLimits, command: &[String]) -> Result<u8, Failure> {
    let mut child = tokio::process::Command::from(child::command(command)?)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| child::not_started(command, e))?;
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        unreachable!("both pipes were asked for");
    };
    let pending = Arc::new(Mutex::new(Pending::default()));
    let mut to_server = tokio::spawn(host_to_server(
        tokio::io::stdin(),
        server_in,
        Arc::clone(&pending),
    ));
    let (exited, exit_seen) = watch::channel(false);
    let last_output = LastOutput::now();
    let mut to_host = tokio::spawn(server_to_host(
        last_output.watch(server_out),
        tokio::io::stdout(),
        pending,
        Arc::new(limits),
        exit_seen,
    ));
    let mut to_host_done = false;
    let status = tokio::select! {
        status = child.wait() => status,
        // A result the host asked for before it left may still be on its way.
        _ = &mut to_server => stop(&mut child, "the host closed stdin", Some(&last_output)).await,
        signal = shutdown_signal() => {
            // Closes the server's stdin, as a host's EOF does.
            to_server.abort();
            stop(&mut child, &format!("the proxy got {signal}"), None).await
        }
        relayed = &mut to_host => {
            to_host_done = true;
            report(relayed);
            to_server.abort();
            stop(&mut child, "the server closed its stdout", None).await
        }
    }
    .map_err(|e| Failure::io(format!("cannot wait for `{}`: {e}", command[0])))?;
    // Deliver every response the server wrote before it exited, however long capping takes.
    let _ = exited.send(true);
    if !to_host_done {
        report(to_host.await);
    }
    Ok(child::exit_code(status))
}

/// Warns of a relay to the host that failed.
fn report(relayed: Result<std::io::Result<()>, tokio::task::JoinError>) {
    match relayed {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("cannot relay the server's output to the host: {e}"),
        Err(e) => tracing::warn!("the relay to the host failed: {e}"),
    }
}

/// Once the server's stdin is closed (`why`): waits for it to exit, then sends it SIGTERM, then
/// SIGKILL. With its `output`, the wait lasts as long as it writes, until it has been silent for
/// [`GRACE`]: a server still writing a large result is not stopped halfway through it.
async fn stop(
    child: &mut Child,
    why: &str,
    output: Option<&LastOutput>,
) -> std::io::Result<ExitStatus> {
    loop {
        if let Ok(status) = tokio::time::timeout(GRACE, child.wait()).await {
            return status;
        }
        if output.is_none_or(|output| output.since() >= GRACE) {
            break;
        }
    }
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        tracing::warn!(
            pid,
            "{why}; the server has not exited since its stdin closed; sending SIGTERM"
        );
        let pid = nix::unistd::Pid::from_raw(pid as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        if let Ok(status) = tokio::time::timeout(GRACE, child.wait()).await {
            return status;
        }
    }
    tracing::warn!("{why}; the server has not exited; killing it");
    child.kill().await?;
    child.wait().await
}

/// Relays the host's lines to the server, noting the calls whose results to cap; closes the
/// server's stdin when the host closes its own.
async fn host_to_server(
    from_host: impl AsyncRead + Unpin,
    to_server: impl AsyncWrite + Unpin,
    pending: Arc<Mutex<Pending>>,
) {
    let mut reader = BufReader::new(from_host);
    let mut writer = BufWriter::new(to_server);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        lock(&pending).note_host_message(&line);
        if writer.write_all(&line).await.is_err() {
            break;
        }
        if reader.buffer().is_empty() && writer.flush().await.is_err() {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

/// Relays the server's lines to the host, capping the results of pending calls in order.
async fn server_to_host(
    from_server: impl AsyncRead + Unpin,
    to_host: impl AsyncWrite + Unpin,
    pending: Arc<Mutex<Pending>>,
    limits: Arc<ToolOutputLimits>,
    mut exited: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut reader = BufReader::with_capacity(64 * 1024, from_server);
    let mut writer = BufWriter::with_capacity(64 * 1024, to_host);
    let capper = Capper::new(pending, limits)?;
    let mut line = Vec::new();
    loop {
        line.clear();
        if next_line(&mut reader, &mut line, &mut exited).await? == 0 {
            break;
        }
        line = capper.write(&mut writer, line).await?;
        if reader.buffer().is_empty() {
            writer.flush().await?;
        }
        // A large line's buffer is given back, not kept for the small lines that follow.
        if line.capacity() > KEPT_LINE_CAPACITY {
            line = Vec::new();
        }
    }
    writer.flush().await
}

/// The most a line buffer keeps between lines: lines are mostly small.
const KEPT_LINE_CAPACITY: usize = 1 << 20;

/// Reads the server's next line into `line`: its length, or 0 at the end. Once the server has
/// exited, the end is also [`SILENCE`] with nothing read: what it wrote before it exited is in
/// the pipe, and a process it left holding the pipe open must not hold the proxy too.
async fn next_line(
    reader: &mut BufReader<impl AsyncRead + Unpin>,
    line: &mut Vec<u8>,
    exited: &mut watch::Receiver<bool>,
) -> std::io::Result<usize> {
    loop {
        // A whole line already read: nothing to wait for.
        if reader.buffer().contains(&b'\n') {
            return reader.read_until(b'\n', line).await.map(|_| line.len());
        }
        if *exited.borrow() {
            match tokio::time::timeout(SILENCE, reader.read_until(b'\n', line)).await {
                Ok(read) => return read.map(|_| line.len()),
                Err(_) if line.is_empty() => {
                    tracing::warn!(
                        "the server has exited, but its stdout is still open (a process it \
                         started holds it); stopped relaying after {} ms with nothing to read",
                        SILENCE.as_millis()
                    );
                    return Ok(0);
                }
                // Part of a line came: wait for the rest.
                Err(_) => continue,
            }
        }
        // `read_until` keeps what it read when the other branch wins, and goes on from there.
        tokio::select! {
            read = reader.read_until(b'\n', line) => return read.map(|_| line.len()),
            changed = exited.changed() => if changed.is_err() { return Ok(line.len()) },
        }
    }
}
