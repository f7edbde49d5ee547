//! What the proxy holds while it caps one large line: its peak RSS (VmHWM) in front of a server
//! that answers one `tools/call` with a result of many paths, less the peak of the same proxy
//! answering a small one, at most three times the line.

#![cfg(target_os = "linux")]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
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

/// The proxy's peak RSS in bytes once it has relayed the capped answer to `result`, and the
/// length of that result's line.
fn peak_for(dir: &Path, result: Value) -> (u64, usize) {
    let line = json!({"jsonrpc": "2.0", "id": 1, "result": result});
    let line = format!("{line}\n");
    drop(result);
    std::fs::write(dir.join("result"), &line).unwrap();
    let mut proxy = support::binary(dir)
        .args([
            "mcp",
            "--",
            "sh",
            "-c",
            r#"read call; cat "$DIR/result"; read rest; true"#,
        ])
        .env("DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    writeln!(stdin, "{CALL}").unwrap();
    let mut answer = String::new();
    BufReader::new(proxy.stdout.take().unwrap())
        .read_line(&mut answer)
        .unwrap();
    assert!(
        answer.contains("tokens dropped") || line.len() < 10_000,
        "{}",
        &answer[..200.min(answer.len())]
    );
    let status = std::fs::read_to_string(format!("/proc/{}/status", proxy.id())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    drop(stdin);
    assert!(proxy.wait().unwrap().success());
    (peak_kib * 1024, line.len())
}

/// How many times the line capping `result` holds beyond capping a small result of its kind.
fn held(name: &str, shape: impl Fn(usize) -> Value) -> f64 {
    let dir = support::scratch("memory", name);
    let (idle, _) = peak_for(&dir, shape(10));
    let (peak, line) = peak_for(&dir, shape(1_000_000));
    let held = peak.saturating_sub(idle) as f64 / line as f64;
    eprintln!(
        "{name}: a {:.1} MB line: peak {:.1} MB, {:.1} MB idle: {held:.2} times the line",
        line as f64 / 1e6,
        peak as f64 / 1e6,
        idle as f64 / 1e6
    );
    let _ = std::fs::remove_dir_all(&dir);
    held
}

#[test]
fn capping_a_text_line_holds_at_most_three_times_it() {
    let held = held("text", |n| text(paths(n)));
    assert!(held <= 3.0, "capping held {held:.2} times the line");
}

/// The filesystem server's shape: the text again as `structuredContent.content`.
#[test]
fn capping_a_line_with_its_text_again_as_structure_holds_at_most_three_times_it() {
    let held = held("text-again", |n| {
        let mut result = text(paths(n));
        result["structuredContent"] = json!({"content": result["content"][0]["text"]});
        result
    });
    assert!(held <= 3.0, "capping held {held:.2} times the line");
}

/// Records: the text, and each path again as an object of an array.
#[test]
fn capping_a_line_of_records_holds_at_most_three_times_it() {
    let held = held("records", |n| {
        let paths = paths(n / 2);
        let files: Vec<Value> = paths
            .iter()
            .enumerate()
            .map(|(size, path)| json!({"path": path, "size": size}))
            .collect();
        let mut result = text(paths);
        result["structuredContent"] = json!({"files": files});
        result
    });
    assert!(held <= 3.0, "capping held {held:.2} times the line");
}
