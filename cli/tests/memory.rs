//! What the proxy holds while it caps one large line: its peak RSS (VmHWM) in front of a server
//! that answers one `tools/call` with a result of many paths, less the peak of the same proxy
//! answering a small one, at most three times the line.

#![cfg(target_os = "linux")]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;

use serde_json::json;

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_files"}}"#;

/// The proxy's peak RSS in bytes once it has relayed the capped answer to a result of `paths`
/// paths, and the length of that result's line.
fn peak_for(dir: &Path, paths: usize) -> (u64, usize) {
    let text: Vec<String> = (0..paths)
        .map(|i| format!("/usr/share/doc/package-{i}/changelog.Debian.gz"))
        .collect();
    let line = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text.join("\n")}]}});
    let line = format!("{line}\n");
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
        answer.contains("tokens dropped") || paths < 100,
        "{}",
        &answer[..200]
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

#[test]
fn capping_a_line_holds_at_most_three_times_it() {
    let dir = support::scratch("memory", "line");
    let (idle, _) = peak_for(&dir, 10);
    let (peak, line) = peak_for(&dir, 1_000_000);
    let held = peak.saturating_sub(idle) as f64 / line as f64;
    eprintln!(
        "a {:.1} MB line: peak {:.1} MB, {:.1} MB idle: {held:.2} times the line",
        line as f64 / 1e6,
        peak as f64 / 1e6,
        idle as f64 / 1e6
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(held <= 3.0, "capping held {held:.2} times the line");
}
