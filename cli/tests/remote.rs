//! `tool-output-cap mcp --url URL`, the stdio bridge to a remote MCP server, in front of a fake
//! Streamable HTTP server of the tests' own (`support/remote.rs`): the host's lines go as POSTs
//! with the session, the version and the headers; the answers come back capped; and what goes
//! wrong is an error response to the host, naming the URL, never a header's value.

#![cfg(unix)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};
use support::gateway::count;
use support::remote::{Answers, Remote};
use support::{binary, scratch, Running, Scratch};

/// The bridge, running, the lines it writes to the host, and its folder.
struct Bridge {
    child: Running,
    _dir: Scratch,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

impl Bridge {
    fn start(name: &str, url: &str, args: &[&str], env: &[(&str, &str)]) -> Bridge {
        let dir = scratch("remote", name);
        let mut child = Running(
            binary(&dir)
                .args(["mcp", "--max-tokens", "1000", "--url", url])
                .args(args)
                .envs(env.iter().copied())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let read = |from: Box<dyn std::io::Read + Send>| {
            let (sender, lines) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(from).lines() {
                    let Ok(line) = line else { return };
                    if sender.send(line).is_err() {
                        return;
                    }
                }
            });
            lines
        };
        let lines = read(Box::new(child.0.stdout.take().unwrap()));
        let stderr = read(Box::new(child.0.stderr.take().unwrap()));
        Bridge {
            stdin: child.0.stdin.take(),
            child,
            _dir: dir,
            lines,
            stderr,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the host gets.
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    }

    /// The message the host gets that answers `id`, the others before it kept in `others`.
    fn answer_to(&self, id: &str, others: &mut Vec<Value>) -> Value {
        loop {
            let message = self.next();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            others.push(message);
        }
    }

    fn initialize(&mut self, id: &str) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}));
        let answer = self.answer_to(id, &mut Vec::new());
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    fn call(&mut self, id: &str, tool: &str) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}}));
        self.answer_to(id, &mut Vec::new())
    }

    /// Closes the host's side, and waits for the bridge to exit: its exit code and stderr.
    fn close(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let status = self.child.0.wait().unwrap();
        // All of it: the reader ends when the bridge's stderr closes.
        let stderr: Vec<String> = self.stderr.iter().collect();
        (status.code().unwrap_or(-1), stderr.join("\n"))
    }
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_servers_results_come_back_capped_with_the_session_version_and_headers() {
    for events in [false, true] {
        let remote = Remote::start(Answers {
            token: Some("s3cret".into()),
            events,
        })
        .await;
        let mut bridge = Bridge::start(
            "capped",
            &remote.url,
            &[
                "--header",
                "Authorization: Bearer ${TEST_TOKEN}",
                "--header",
                "X-Team: tools",
            ],
            &[("TEST_TOKEN", "s3cret"), ("RUST_LOG", "trace")],
        );
        let initialized = bridge.initialize("1");
        assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
        // Sent at once, but after the server accepted `notifications/initialized`: with the tool
        // it adds then.
        let mut others = Vec::new();
        bridge.send(json!({"jsonrpc": "2.0", "id": "3", "method": "tools/list"}));
        let listed = bridge.answer_to("3", &mut others);
        assert_eq!(listed["result"]["tools"][0]["name"], "list");
        assert_eq!(listed["result"]["tools"][1]["name"], "late", "{listed}");
        bridge.send(json!({"jsonrpc": "2.0", "id": "2", "method": "tools/call", "params": {"name": "list", "arguments": {}}}));
        let capped = bridge.answer_to("2", &mut others);
        let text = text_of(&capped);
        assert!(count(text) <= 1000, "{} tokens", count(text));
        assert!(text.ends_with("refine your query"), "{text}");
        assert!(
            capped["result"]["_meta"]["tool-output-cap/truncation"]["content"]["dropped_tokens"]
                .as_u64()
                > Some(0)
        );
        // The server's own stream asked the host for its roots; the host's answer goes back.
        let roots = match others.iter().find(|m| m["method"] == "roots/list") {
            Some(roots) => roots.clone(),
            None => bridge.next(),
        };
        assert_eq!(roots["id"], "server-1");
        bridge.send(json!({"jsonrpc": "2.0", "id": "server-1", "result": {"roots": []}}));
        std::thread::sleep(Duration::from_millis(300));
        let (code, stderr) = bridge.close();
        assert_eq!(code, 0, "{stderr}");
        let got = remote.got();
        let posts: Vec<_> = got.iter().filter(|g| g.method == "POST").collect();
        for post in &posts {
            assert_eq!(post.headers["authorization"], "Bearer s3cret");
            assert_eq!(post.headers["x-team"], "tools");
        }
        // After initialize: the session and the revision it answered.
        for post in &posts[1..] {
            assert_eq!(post.headers["mcp-session-id"], "session-1");
            assert_eq!(post.headers["mcp-protocol-version"], "2025-11-25");
        }
        assert!(posts
            .iter()
            .any(|p| p.body["id"] == "server-1" && p.body["result"]["roots"] == json!([])));
        assert!(
            got.iter().any(|g| g.method == "GET"),
            "the server's own stream"
        );
        let ended = got
            .iter()
            .find(|g| g.method == "DELETE")
            .expect("the session ended");
        assert_eq!(ended.headers["mcp-session-id"], "session-1");
        assert!(!stderr.contains("s3cret"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_goes_wrong_is_an_error_to_the_host_naming_the_url_and_the_bridge_goes_on() {
    let remote = Remote::start(Answers {
        token: Some("s3cret".into()),
        events: true,
    })
    .await;
    // A wrong token: a 401 for each request, and the bridge stays for the host to retry.
    let mut refused = Bridge::start(
        "refused",
        &remote.url,
        &["--header", "Authorization: Bearer wrong-token"],
        &[],
    );
    for id in ["1", "2"] {
        refused.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let error = refused.answer_to(id, &mut Vec::new());
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&remote.url) && message.contains("401"),
            "{message}"
        );
        assert!(!message.contains("wrong-token"), "{message}");
    }
    let (code, stderr) = refused.close();
    assert_eq!(code, 0);
    assert!(
        stderr.contains("401") && !stderr.contains("wrong-token"),
        "{stderr}"
    );

    // A stream broken off before the response: an error for that request; the session goes on.
    let mut bridge = Bridge::start(
        "broken",
        &remote.url,
        &["--header", "Authorization: Bearer s3cret"],
        &[],
    );
    bridge.initialize("1");
    let broken = bridge.call("2", "broken");
    assert!(
        broken["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ended before the response"),
        "{broken}"
    );
    assert!(text_of(&bridge.call("3", "list")).ends_with("refine your query"));

    // The server restarts: its old session is gone (404), and initializing again gives a new one.
    remote.restart();
    let gone = bridge.call("4", "list");
    assert!(
        gone["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize again"),
        "{gone}"
    );
    bridge.initialize("5");
    assert!(text_of(&bridge.call("6", "list")).ends_with("refine your query"));
    let sessions: Vec<_> = remote
        .got()
        .iter()
        .filter_map(|g| g.headers.get("mcp-session-id").cloned())
        .collect();
    assert_eq!(sessions.last().unwrap(), "session-2");
    bridge.close();

    // A request of the 2026-07-28 revision, with no initialize: its revision goes in its header.
    let mut stateless = Bridge::start(
        "stateless",
        &remote.url,
        &["--header", "Authorization: Bearer s3cret"],
        &[],
    );
    stateless.send(json!({"jsonrpc": "2.0", "id": "1", "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}));
    stateless.answer_to("1", &mut Vec::new());
    stateless.close();
    let last = remote
        .got()
        .into_iter()
        .rfind(|got| got.body["method"] == "tools/list")
        .unwrap();
    assert_eq!(last.headers["mcp-protocol-version"], "2026-07-28");
    assert!(last.headers.get("mcp-session-id").is_none());

    // TLS to a server that speaks none: the host's error, naming the URL.
    let https = remote.url.replace("http://", "https://");
    let mut tls = Bridge::start("tls", &https, &[], &[]);
    tls.send(json!({"jsonrpc": "2.0", "id": "1", "method": "tools/list"}));
    let error = tls.answer_to("1", &mut Vec::new());
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("cannot reach {https}")),
        "{error}"
    );
    tls.close();

    // A server that is not there at all.
    let mut nowhere = Bridge::start("nowhere", "http://127.0.0.1:9/mcp", &[], &[]);
    nowhere.send(json!({"jsonrpc": "2.0", "id": "1", "method": "tools/list"}));
    let error = nowhere.answer_to("1", &mut Vec::new());
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot reach http://127.0.0.1:9/mcp"),
        "{error}"
    );
    nowhere.close();
}

#[test]
fn a_header_from_an_unset_variable_is_refused_naming_it() {
    let dir = scratch("remote", "unset");
    let output = binary(&dir)
        .args([
            "mcp",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--header",
            "Authorization: Bearer ${TOOL_OUTPUT_CAP_UNSET}",
        ])
        .env_remove("TOOL_OUTPUT_CAP_UNSET")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the environment variable TOOL_OUTPUT_CAP_UNSET is not set"),
        "{stderr}"
    );
}

/// The peak resident memory of the process `pid`, in bytes (Linux's `VmHWM`); `None` without
/// `/proc`.
fn peak_rss(pid: u32) -> Option<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<usize>().ok()? * 1024)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_megabyte_result_is_capped_in_memory_bounded_by_a_few_times_its_size() {
    let remote = Remote::start(Answers::default()).await;
    let mut bridge = Bridge::start("large", &remote.url, &[], &[]);
    bridge.initialize("1");
    // About 100 MB of paths, as JSON.
    let paths = 2_600_000;
    bridge.send(json!({"jsonrpc": "2.0", "id": "2", "method": "tools/call", "params": {"name": "list", "arguments": {"paths": paths}}}));
    let capped = bridge.answer_to("2", &mut Vec::new());
    let text = text_of(&capped);
    assert!(count(text) <= 1000 && text.ends_with("refine your query"));
    let sent = serde_json::to_string(&remote.got().last().unwrap().body)
        .unwrap()
        .len();
    let Some(peak) = peak_rss(bridge.child.0.id()) else {
        eprintln!("skipped the peak: it is read from /proc, which this system has not");
        return;
    };
    let result = support::gateway::listing(paths).len();
    eprintln!(
        "a result of {} MB: the bridge peaked at {} MB",
        result >> 20,
        peak >> 20
    );
    assert!(result > 100_000_000 && sent > 0);
    assert!(
        peak < 4 * result,
        "a peak of {} MiB for a result of {} MiB",
        peak >> 20,
        result >> 20
    );
    bridge.close();
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_the_session_and_the_bridge_at_once() {
    let remote = Remote::start(Answers::default()).await;
    let mut bridge = Bridge::start("sigterm", &remote.url, &[], &[]);
    bridge.initialize("1");
    let pid = nix::unistd::Pid::from_raw(bridge.child.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let started = std::time::Instant::now();
    let (code, stderr) = bridge.close();
    assert_eq!(code, 0, "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        remote.got().iter().any(|g| g.method == "DELETE"),
        "the session ended"
    );
}

/// `mcp --listen ADDRESS --url URL`, running in `dir`, once it said where it listens: the proxy,
/// its URL for the server's own path, and what it said before.
fn listening(dir: &Path, url: &str, listen: &str) -> (Running, String, Vec<String>) {
    let mut child = Running(
        binary(dir)
            .args([
                "mcp",
                "--max-tokens",
                "1000",
                "--listen",
                listen,
                "--url",
                url,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (sender, lines) = mpsc::channel();
    let stderr = child.0.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let mut before = Vec::new();
    let said = loop {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .expect("where it listens");
        if line.contains(" stands for ") {
            break line;
        }
        before.push(line);
    };
    let proxy_url = said.split_whitespace().nth(2).expect("a URL").to_owned();
    (child, proxy_url, before)
}

/// POSTs `message` to `url` with `headers`: the status, the headers and the body.
async fn post_message(
    url: &str,
    headers: &[(&str, &str)],
    message: Value,
) -> (u16, hyper::HeaderMap, String) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let mut request = hyper::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(http_body_util::Full::new(bytes::Bytes::from(
            message.to_string(),
        )))
        .unwrap();
    let answer = client.request(request).await.unwrap();
    let (parts, body) = answer.into_parts();
    let body = http_body_util::BodyExt::collect(body)
        .await
        .unwrap()
        .to_bytes();
    (
        parts.status.as_u16(),
        parts.headers,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

/// The JSON-RPC message of an answer's body: the body, or the data of its one event.
fn message_of(body: &str) -> Value {
    let data = body
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(body);
    serde_json::from_str(data).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_listening_proxy_caps_the_servers_results_and_keeps_the_hosts_own_sign_in() {
    for events in [false, true] {
        let remote = Remote::start(Answers {
            token: Some("s3cret".into()),
            events,
        })
        .await;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = scratch("remote", "listen");
        let (proxy, url, _) = listening(&dir, &remote.url, &format!("127.0.0.1:{port}"));
        assert_eq!(
            url,
            format!("http://127.0.0.1:{port}/mcp"),
            "the server's own path"
        );
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        // Without the host's token: the server's 401 and its WWW-Authenticate, as they came.
        let (status, headers, _) = post_message(&url, &[], initialize.clone()).await;
        assert_eq!(status, 401);
        assert!(headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("resource_metadata"));
        // The metadata a host signs in with, from the server.
        for document in ["oauth-protected-resource", "oauth-authorization-server"] {
            let origin = url.trim_end_matches("/mcp");
            let client =
                hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                    .build_http::<http_body_util::Empty<bytes::Bytes>>();
            let answer = client
                .get(format!("{origin}/.well-known/{document}").parse().unwrap())
                .await
                .unwrap();
            assert_eq!(answer.status(), 200, "{document}");
            let body = http_body_util::BodyExt::collect(answer.into_body())
                .await
                .unwrap()
                .to_bytes();
            let body: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(body["resource"], remote.url.as_str());
        }
        // With it: the session, and a result capped.
        let bearer = [("authorization", "Bearer s3cret")];
        let (status, headers, body) = post_message(&url, &bearer, initialize).await;
        assert_eq!(status, 200, "{body}");
        let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
        assert_eq!(message_of(&body)["result"]["protocolVersion"], "2025-11-25");
        let with_session = [
            bearer[0],
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list", "arguments": {}}});
        let (status, _, body) = post_message(&url, &with_session, call).await;
        assert_eq!(status, 200);
        let capped = message_of(&body);
        let text = text_of(&capped);
        assert!(
            count(text) <= 1000 && text.ends_with("refine your query"),
            "{} tokens",
            count(text)
        );
        // Anything but a tool's result, as the server wrote it.
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
        let (_, _, body) = post_message(&url, &with_session, list).await;
        assert_eq!(message_of(&body)["result"]["tools"][0]["name"], "list");
        let got = remote.got();
        assert!(got
            .iter()
            .filter(|g| g.method == "POST")
            .skip(1)
            .all(|g| g.headers["authorization"] == "Bearer s3cret"));
        drop(proxy);
    }
}

#[test]
fn a_proxy_listening_beyond_this_machine_says_so() {
    let dir = scratch("remote", "beyond");
    let (proxy, _, said) = listening(&dir, "http://127.0.0.1:9/mcp", "0.0.0.0:0");
    drop(proxy);
    assert!(
        said.iter().any(|line| line.contains("beyond this machine")),
        "{said:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn check_lists_a_remote_servers_tools_with_their_limits() {
    let remote = Remote::start(Answers {
        token: Some("s3cret".into()),
        events: true,
    })
    .await;
    let dir = scratch("remote", "check");
    let manifest = dir.join("agent.toml");
    std::fs::write(
        &manifest,
        "[worker.tool_output.per_tool]\nlist = 700\nGlob = 300\n",
    )
    .unwrap();
    let url = remote.url.clone();
    let output = tokio::task::spawn_blocking(move || {
        binary(&dir)
            .args([
                "check",
                "--manifest",
                manifest.to_str().unwrap(),
                "--url",
                &url,
            ])
            .args(["--header", "Authorization: Bearer ${TEST_TOKEN}"])
            .env("TEST_TOKEN", "s3cret")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        // The tool the server adds once initialized is listed too.
        stdout.contains("server: 2 tools (MCP 2025-11-25)"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|line| line.split_whitespace().collect::<Vec<_>>()
                == ["list", "700", "head", "per_tool"]),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning: `per_tool.Glob` names no tool of this server"),
        "{stdout}"
    );
    assert!(
        remote.got().iter().any(|got| got.method == "DELETE"),
        "the session ended"
    );
    // Without the token: the server's refusal, and no token in what is said.
    let dir = scratch("remote", "check-refused");
    let url = remote.url.clone();
    let refused = tokio::task::spawn_blocking(move || {
        binary(&dir)
            .args([
                "check",
                "--url",
                &url,
                "--header",
                "Authorization: Bearer nope",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("401") && !stderr.contains("nope"),
        "{stderr}"
    );
}
