//! The `tool-output-cap mcp` proxy at its edges: a server that exits right after a large result,
//! a host that leaves while one is capped, signals, a SIGKILL, a stderr nobody reads, a server
//! that closes its stdout and stays. Each test says what the host gets, the exit code, the time
//! it takes, and that no server is left running, checked by its pid.

#![cfg(target_os = "linux")]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_files"}}"#;

/// A folder of its own for each test.
fn scratch(name: &str) -> support::Scratch {
    support::scratch("lifecycle", name)
}

/// The proxy in front of the server `script` (run by `sh`, with `$DIR`), with no manifest.
fn proxy(dir: &Path, script: &str, stderr: Stdio) -> Child {
    support::binary(dir)
        .args(["mcp", "--", "sh", "-c", script])
        .env("DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// A result of `paths` paths, one JSON line: 35 MB for 700,000, which takes the proxy seconds
/// to cap.
fn large_result(dir: &Path, paths: usize) -> PathBuf {
    let text: Vec<String> = (0..paths)
        .map(|i| format!("/usr/share/doc/package-{i}/changelog.Debian.gz"))
        .collect();
    let line = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text.join("\n")}]}});
    let path = dir.join("result");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    path
}

/// The pid the server wrote to `$DIR/pid`, once it is there.
fn server_pid(dir: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(pid) = std::fs::read_to_string(dir.join("pid")) {
            if let Ok(pid) = pid.trim().parse() {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "the server wrote no pid");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a live process (a zombie is not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// Waits up to `within` for `pid` to end.
fn ends_within(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Everything the proxy writes to the host, and its exit code, within `within`.
fn host_gets(mut proxy: Child, within: Duration) -> (Vec<Value>, Option<i32>, Duration) {
    let start = Instant::now();
    let stdout = proxy.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map(|line| serde_json::from_str(&line.unwrap()).expect("a JSON line"))
            .collect::<Vec<Value>>()
    });
    loop {
        if let Some(status) = proxy.try_wait().unwrap() {
            let lines = reader.join().unwrap();
            return (lines, status.code(), start.elapsed());
        }
        if start.elapsed() > within {
            let _ = proxy.kill();
            let _ = proxy.wait();
            panic!("the proxy is still running after {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn capped_text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap()
}

#[test]
fn a_large_result_written_just_before_the_server_exits_is_capped_and_delivered() {
    let dir = scratch("exits");
    let result = large_result(&dir, 700_000);
    let script = format!("read -r line; cat '{}'; exit 3", result.display());
    let mut proxy = proxy(&dir, &script, Stdio::inherit());
    // The host stays: it is the server that goes.
    let mut stdin = proxy.stdin.take().unwrap();
    writeln!(stdin, "{CALL}").unwrap();
    let (lines, code, _) = host_gets(proxy, Duration::from_secs(120));
    drop(stdin);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(capped_text(&lines[0]).ends_with("tokens dropped, refine your query"));
    assert_eq!(code, Some(3));
}

#[test]
fn a_result_being_capped_when_the_host_leaves_is_still_delivered() {
    let dir = scratch("host-leaves");
    let result = large_result(&dir, 700_000);
    // Answers, then exits when its stdin closes, while the proxy is still capping.
    let script = format!(
        "echo $$ > \"$DIR/pid\"; read -r line; cat '{}'; while read -r line; do :; done",
        result.display()
    );
    let mut proxy = proxy(&dir, &script, Stdio::inherit());
    let mut stdin = proxy.stdin.take().unwrap();
    writeln!(stdin, "{CALL}").unwrap();
    let pid = server_pid(&dir);
    // Once the server has written the result, the host leaves.
    let size = std::fs::metadata(&result).unwrap().len();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|line| line.strip_prefix("wchar: ").map(|n| n.parse::<u64>().ok()))
        })
        .flatten()
        .is_none_or(|written| written < size)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(stdin);
    let (lines, code, _) = host_gets(proxy, Duration::from_secs(120));
    assert_eq!(lines.len(), 1, "the result is delivered: {lines:?}");
    assert!(capped_text(&lines[0]).ends_with("tokens dropped, refine your query"));
    assert_eq!(code, Some(0));
    assert!(!alive(pid));
}

#[test]
fn a_result_still_being_written_when_the_host_leaves_is_delivered_whole() {
    let dir = scratch("slow-writer");
    // Writes its answer in parts for longer than the shutdown's grace after the host has left,
    // then exits: it is not stopped while it writes.
    let script = "echo $$ > \"$DIR/pid\"; read -r line; \
        printf '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"'; \
        for i in 1 2 3 4 5 6 7 8; do printf 'part %s\\\\n' $i; sleep 0.4; done; printf '\"}]}}\\n'";
    let mut proxy = proxy(&dir, script, Stdio::inherit());
    let mut stdin = proxy.stdin.take().unwrap();
    writeln!(stdin, "{CALL}").unwrap();
    let pid = server_pid(&dir);
    drop(stdin);
    let (lines, code, took) = host_gets(proxy, Duration::from_secs(60));
    assert_eq!(lines.len(), 1, "the result is delivered: {lines:?}");
    assert!(capped_text(&lines[0]).ends_with("part 8\n"), "{lines:?}");
    assert_eq!(code, Some(0), "the server was not stopped");
    assert!(took > Duration::from_secs(3), "{took:?}");
    assert!(!alive(pid));
}

/// A server that ignores the end of its stdin and SIGTERM, and writes its pid.
const STUBBORN: &str = "trap '' TERM; echo $$ > \"$DIR/pid\"; while :; do sleep 0.05; done";

#[test]
fn sigterm_sigint_and_sighup_shut_the_server_down_as_host_eof_does() {
    for signal in ["TERM", "INT", "HUP"] {
        let dir = scratch(&format!("signal-{signal}"));
        let mut proxy = proxy(&dir, STUBBORN, Stdio::null());
        // The host keeps stdin open: only the signal ends the session.
        let _stdin = proxy.stdin.take().unwrap();
        let pid = server_pid(&dir);
        let start = Instant::now();
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &proxy.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let (_, code, _) = host_gets(proxy, Duration::from_secs(10));
        let elapsed = start.elapsed();
        assert_eq!(
            code,
            Some(128 + 9),
            "{signal}: killed after SIGTERM was ignored"
        );
        assert!(
            elapsed < Duration::from_secs(4),
            "{signal}: within an SDK's own 2 s + 2 s: {elapsed:?}"
        );
        assert!(
            ends_within(pid, Duration::from_secs(1)),
            "{signal}: the server is gone"
        );
    }
}

#[test]
fn a_sigkill_to_the_proxy_ends_the_server_too() {
    let dir = scratch("sigkill");
    let mut proxy = proxy(&dir, STUBBORN, Stdio::null());
    let pid = server_pid(&dir);
    proxy.kill().unwrap();
    proxy.wait().unwrap();
    assert!(
        ends_within(pid, Duration::from_secs(2)),
        "the server outlived the proxy"
    );
}

#[test]
fn a_stderr_nobody_reads_does_not_stall_the_shutdown() {
    let dir = scratch("stderr");
    // The server fills the shared stderr pipe, which the host never reads, then idles.
    let script = format!("head -c 1000000 /dev/zero | tr '\\0' x >&2 & {STUBBORN}");
    let mut proxy = proxy(&dir, &script, Stdio::piped());
    let _unread = proxy.stderr.take().unwrap();
    let pid = server_pid(&dir);
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    drop(proxy.stdin.take());
    let (_, code, _) = host_gets(proxy, Duration::from_secs(15));
    let elapsed = start.elapsed();
    assert_eq!(code, Some(128 + 9));
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
    assert!(ends_within(pid, Duration::from_secs(1)));
}

#[test]
fn a_server_that_closes_its_stdout_and_stays_is_shut_down() {
    let dir = scratch("closes-stdout");
    let script = format!("exec 1>&-; {STUBBORN}");
    let mut proxy = proxy(&dir, &script, Stdio::null());
    let _stdin = proxy.stdin.take().unwrap();
    let pid = server_pid(&dir);
    let (lines, code, elapsed) = host_gets(proxy, Duration::from_secs(10));
    assert!(lines.is_empty());
    assert_eq!(code, Some(128 + 9));
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert!(ends_within(pid, Duration::from_secs(1)));
}

#[test]
fn a_process_the_server_leaves_holding_its_stdout_does_not_hold_the_proxy() {
    let dir = scratch("grandchild");
    let result = large_result(&dir, 20_000);
    // A process of the server's own keeps the pipe open for 5 s after the server exits.
    let script = format!(
        "read -r line; sleep 5 & echo $! > \"$DIR/pid\"; cat '{}'; exit 4",
        result.display()
    );
    let mut proxy = proxy(&dir, &script, Stdio::piped());
    let mut stdin = proxy.stdin.take().unwrap();
    let stderr = proxy.stderr.take().unwrap();
    writeln!(stdin, "{CALL}").unwrap();
    let left = server_pid(&dir);
    let (lines, code, elapsed) = host_gets(proxy, Duration::from_secs(20));
    drop(stdin);
    assert_eq!(lines.len(), 1, "the result is delivered");
    assert!(capped_text(&lines[0]).ends_with("tokens dropped, refine your query"));
    assert_eq!(code, Some(4));
    assert!(
        elapsed < Duration::from_secs(4),
        "not held by the pipe: {elapsed:?}"
    );
    let mut said = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut said).unwrap_or_default();
    assert!(said.contains("stopped relaying"), "{said}");
    // The process that held the pipe ends on its own.
    assert!(ends_within(left, Duration::from_secs(10)));
}
