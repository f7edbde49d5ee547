//! `check`: starts a server as `mcp` would, asks it for its tools, and says what limit each
//! gets, so that a setup can be tried by hand before a host hides what went wrong.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tool_output_cap::ToolOutputLimits;

use crate::args::LimitArgs;
use crate::config::Config;
use crate::{child, Failure};

/// The revision `initialize` asks for; a server that refuses `initialize` is asked the
/// 2026-07-28 way, with the revision in each request's `_meta`.
pub(crate) const PROTOCOL: &str = "2025-11-25";
const STATELESS_PROTOCOL: &str = "2026-07-28";

/// How much of the server's stderr a failure shows: its end.
const STDERR_SHOWN: usize = 8 * 1024;

/// Lists the tools of the server `command` starts with the limits each gets.
pub(crate) fn list_tools(
    args: &LimitArgs,
    timeout: Duration,
    command: &[String],
) -> Result<u8, Failure> {
    let config = Config::for_every_tool(args)?;
    let mut server = Server::start(command, timeout)?;
    let listed = server.list_tools();
    let stderr = server.stop();
    let (tools, protocol) = listed.map_err(|reason| {
        let stderr = String::from_utf8_lossy(&stderr);
        let stderr = stderr.trim_end();
        if stderr.is_empty() {
            Failure::io(format!("{reason}; the server wrote nothing on stderr"))
        } else {
            Failure::io(format!("{reason}; the server's stderr:\n{stderr}"))
        }
    })?;
    print!("{}", report(&config, &tools, &protocol));
    Ok(0)
}

/// What `check` prints: where the limits come from, each tool's limit, and the `per_tool`
/// names that no tool has.
pub(crate) fn report(config: &Config, tools: &[String], protocol: &str) -> String {
    let limits = &config.limits;
    let mut out = format!("{}\ncounting: {}\n", config.describe(), counting(limits));
    out.push_str(&format!(
        "server: {} tools (MCP {protocol})\n\n",
        tools.len()
    ));
    let width = tools.iter().map(String::len).max().unwrap_or(0).max(4);
    out.push_str(&format!(
        "{:width$}  {:>10}  {:9}  {:8}  hint\n",
        "tool", "max_tokens", "keep", "limit"
    ));
    for tool in tools {
        let limit = limits.limit_for(tool);
        let own = limits.per_tool().any(|(name, _)| name == tool);
        out.push_str(
            format!(
                "{tool:width$}  {:>10}  {:9}  {:8}  {}",
                limit.max_tokens(),
                limit.keep().name(),
                if own { "per_tool" } else { "default" },
                limit.hint().unwrap_or("")
            )
            .trim_end(),
        );
        out.push('\n');
    }
    let names: Vec<&str> = tools.iter().map(String::as_str).collect();
    for name in limits.unmatched_tools(&names) {
        out.push_str(&format!(
            "warning: `per_tool.{name}` names no tool of this server; its limit is never used\n"
        ));
    }
    out
}

/// Adds the tool names of `page`, a `tools/list` result asked for at `cursor`, to `tools`: the
/// cursor of the next page, `None` after the last.
pub(crate) fn next_page(
    page: &Value,
    tools: &mut Vec<String>,
    cursor: Option<String>,
) -> Result<Option<String>, String> {
    let names = page["tools"]
        .as_array()
        .ok_or("the server's `tools/list` result has no `tools` list")?;
    tools.extend(
        names
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned)),
    );
    Ok(match page["nextCursor"].as_str() {
        Some(next) if cursor.as_deref() != Some(next) => Some(next.to_owned()),
        _ => None,
    })
}

fn counting(limits: &ToolOutputLimits) -> String {
    #[cfg(feature = "hf")]
    if let Some(file) = limits.tokenizer_file() {
        return format!("the tokenizer file {}", file.display());
    }
    limits.encoding().name().to_owned()
}

/// A server started for the check: its stdin, its stdout's lines, and its stderr, read to the
/// end by a thread of its own so that it never blocks.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
    timeout: Duration,
    next_id: u64,
}

impl Server {
    fn start(command: &[String], timeout: Duration) -> Result<Self, Failure> {
        let mut child = child::command(command)?
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| child::not_started(command, e))?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("the three pipes were asked for");
        };
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) if send.send(line).is_err() => return,
                    Ok(_) => {}
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stderr.read_to_end(&mut bytes);
            bytes
        });
        Ok(Server {
            child,
            stdin: Some(stdin),
            lines,
            stderr,
            timeout,
            next_id: 0,
        })
    }

    /// The names of the server's tools, every page of them, and the revision it spoke.
    fn list_tools(&mut self) -> Result<(Vec<String>, String), String> {
        let initialize = json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "tool-output-cap check", "version": env!("CARGO_PKG_VERSION")},
        });
        let (meta, protocol) = match self.request("initialize", initialize)? {
            Ok(result) => {
                self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                    .map_err(|e| format!("the server stopped reading after `initialize`: {e}"))?;
                let protocol = result["protocolVersion"].as_str().unwrap_or(PROTOCOL);
                (None, protocol.to_owned())
            }
            // No handshake: the revision that carries its version in each request.
            Err(_) => (
                Some(json!({
                    "io.modelcontextprotocol/protocolVersion": STATELESS_PROTOCOL,
                    "io.modelcontextprotocol/clientCapabilities": {},
                })),
                STATELESS_PROTOCOL.to_owned(),
            ),
        };
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut params = json!({});
            if let Some(meta) = &meta {
                params["_meta"] = meta.clone();
            }
            if let Some(cursor) = &cursor {
                params["cursor"] = json!(cursor);
            }
            let page = self
                .request("tools/list", params)?
                .map_err(|error| format!("the server refused `tools/list`: {error}"))?;
            cursor = next_page(&page, &mut tools, cursor)?;
            if cursor.is_none() {
                return Ok((tools, protocol));
            }
        }
    }

    /// Sends the request `method` and waits for its response: its result, or its error.
    fn request(&mut self, method: &str, params: Value) -> Result<Result<Value, Value>, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .map_err(|e| format!("the server stopped reading before `{method}`: {e}"))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let line = match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "the server did not answer `{method}` within {} s",
                        self.timeout.as_secs()
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "the server closed its stdout before it answered `{method}`{}",
                        self.exited()
                    ))
                }
            };
            let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                let line = String::from_utf8_lossy(&line);
                return Err(format!(
                    "the server wrote a line that is not JSON-RPC on stdout, which breaks a host: {:?}",
                    line.trim_end()
                ));
            };
            if let Some(request) = message["method"].as_str() {
                if !message["id"].is_null() {
                    self.answer(request, &message["id"])?;
                }
                continue;
            }
            if message["id"] != json!(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Ok(Err(error.clone()));
            }
            return Ok(Ok(message["result"].clone()));
        }
    }

    /// Answers a request of the server's own: `ping`, and `roots/list` with no roots.
    fn answer(&mut self, method: &str, id: &Value) -> Result<(), String> {
        let response = match method {
            "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "roots/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}}),
            _ => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "check answers no requests"}})
            }
        };
        self.send(&response)
            .map_err(|e| format!("the server stopped reading before it was answered: {e}"))
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the server's stdin is closed")?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{e}{}", self.exited()))
    }

    /// `, and exited with …` if the server has exited.
    fn exited(&mut self) -> String {
        std::thread::sleep(Duration::from_millis(100));
        match self.child.try_wait() {
            Ok(Some(status)) => format!(" ({status})"),
            _ => String::new(),
        }
    }

    /// Ends the server as a host would: closes its stdin, gives it a moment, then kills it.
    /// Returns the end of its stderr.
    fn stop(mut self) -> Vec<u8> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A grandchild may still hold the pipe: do not wait for it for long.
        let deadline = Instant::now() + Duration::from_secs(1);
        while !self.stderr.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !self.stderr.is_finished() {
            return Vec::new();
        }
        let mut stderr = self.stderr.join().unwrap_or_default();
        if stderr.len() > STDERR_SHOWN {
            stderr.drain(..stderr.len() - STDERR_SHOWN);
        }
        stderr
    }
}
