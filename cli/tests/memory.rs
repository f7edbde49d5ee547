//! What the proxy holds while it caps large lines, call after call: its peak RSS (VmHWM, reset
//! before each call through `/proc/PID/clear_refs`) while it caps and relays one result, less its
//! RSS when idle, at most three times the result's line. Idle is once it has capped a small
//! result, so that what every proxy pays once (the vocabulary, the capping thread and its regex
//! caches) is not counted against a line.

#![cfg(target_os = "linux")]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{json, Value};

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_files"}}"#;

/// The paths of a listing of `paths` files.
fn paths(paths: usize) -> Vec<String> {
    (0..paths)
        .map(|i| format!("/usr/share/doc/package-{i}/changelog.Debian.gz"))
        .collect()
}

/// A result of the listing `paths` as text.
fn text(paths: Vec<String>) -> Value {
    json!({"content": [{"type": "text", "text": paths.join("\n")}]})
}

/// The filesystem server's shape: the text again as `structuredContent.content`.
fn text_again(paths: Vec<String>) -> Value {
    let mut result = text(paths);
    result["structuredContent"] = json!({"content": result["content"][0]["text"]});
    result
}

/// Records: the text, and each path again as an object of an array.
fn records(paths: Vec<String>) -> Value {
    let files: Vec<Value> = paths
        .iter()
        .enumerate()
        .map(|(size, path)| json!({"path": path, "size": size}))
        .collect();
    let mut result = text(paths);
    result["structuredContent"] = json!({"files": files});
    result
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// One proxy answering a small result over its limit, then `calls` calls of each of `results`
/// in turn; for each call, its line's length and the most the proxy held during it beyond what
/// it held once the small result was answered, in bytes: what a call keeps after it is counted
/// against every call that follows.
fn held_per_call(name: &str, results: Vec<Value>, calls: usize) -> Vec<(usize, u64)> {
    let scratch = support::scratch("memory", name);
    let dir = &*scratch;
    let mut files = vec!["small".to_owned()];
    let write = |file: &str, result: Value| {
        let line = format!("{}\n", json!({"jsonrpc": "2.0", "id": 1, "result": result}));
        std::fs::write(dir.join(file), &line).unwrap();
        line.len()
    };
    write("small", text(paths(2_000)));
    let mut lines = Vec::new();
    for (i, result) in results.into_iter().enumerate() {
        let len = write(&i.to_string(), result);
        for _ in 0..calls {
            files.push(i.to_string());
            lines.push(len);
        }
    }
    let script = format!(
        r#"for f in {}; do read call; cat "$DIR/$f"; done; read rest; true"#,
        files.join(" ")
    );
    let mut proxy = support::binary(dir)
        .args(["mcp", "--", "sh", "-c", &script])
        .env("DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map(support::Running)
        .unwrap();
    let proxy = &mut proxy.0;
    let pid = proxy.id();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = BufReader::new(proxy.stdout.take().unwrap());
    let mut call = || {
        writeln!(stdin, "{CALL}").unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        assert!(
            answer.contains("tokens dropped"),
            "{}",
            &answer[..200.min(answer.len())]
        );
    };
    call();
    let idle = status_kib(pid, "VmRSS:");
    let mut held = Vec::new();
    for len in lines {
        std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
        call();
        let peak = status_kib(pid, "VmHWM:");
        held.push((len, peak.saturating_sub(idle) * 1024));
    }
    drop(stdin);
    assert!(proxy.wait().unwrap().success());
    held
}

/// Checks that each call held at most three times its line, saying what each held.
fn assert_at_most_three_times_the_line(name: &str, held: &[(usize, u64)]) {
    for (call, &(line, held)) in held.iter().enumerate() {
        let times = held as f64 / line as f64;
        eprintln!(
            "{name}, call {}: a {:.1} MB line, {:.1} MB held: {times:.2} times the line",
            call + 1,
            line as f64 / 1e6,
            held as f64 / 1e6
        );
        assert!(
            times <= 3.0,
            "{name}, call {}: {times:.2} times the line",
            call + 1
        );
    }
}

#[test]
fn capping_text_lines_of_1_to_50_mb_holds_at_most_three_times_each_call_after_call() {
    let results = [20_000, 180_000, 1_000_000].map(|n| text(paths(n)));
    let held = held_per_call("text", results.into(), 3);
    assert_at_most_three_times_the_line("text", &held);
}

#[test]
fn capping_a_100_mb_line_with_its_text_again_as_structure_holds_at_most_three_times_it() {
    let held = held_per_call("text-again", vec![text_again(paths(1_000_000))], 2);
    assert!(held[0].0 > 100_000_000);
    assert_at_most_three_times_the_line("text again", &held);
}

#[test]
fn capping_lines_of_records_holds_at_most_three_times_each_call_after_call() {
    let results = [100_000, 500_000].map(|n| records(paths(n)));
    let held = held_per_call("records", results.into(), 2);
    assert_at_most_three_times_the_line("records", &held);
}
