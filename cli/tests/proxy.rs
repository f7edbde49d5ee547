//! The `tool-output-cap mcp` proxy in front of a scripted fake server: a `sh` script that logs
//! every line it receives and answers line N with the lines the test wrote for it.

#![cfg(unix)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::Scratch;
use tool_output_cap::Encoding;

const META_KEY: &str = "tool-output-cap/truncation";

/// Reads each line, logs it to `received`, then writes the file named for its number, if any,
/// and exits with the code in `N.exit`, if any. On end of input it runs `at_eof`, if any.
const SERVER: &str = r#"
n=0
while IFS= read -r line; do
  n=$((n+1))
  printf '%s\n' "$line" >> "$DIR/received"
  [ -f "$DIR/$n" ] && cat "$DIR/$n"
  [ -f "$DIR/$n.exit" ] && exit "$(cat "$DIR/$n.exit")"
done
[ -f "$DIR/at_eof" ] && . "$DIR/at_eof"
exit 0
"#;

/// A fake server's folder and the proxy running it: the folder goes once the proxy has ended.
struct Session {
    _dir: Scratch,
    proxy: Child,
    lines: mpsc::Receiver<Vec<u8>>,
}

/// A folder of its own for each test.
fn scratch(name: &str) -> Scratch {
    support::scratch("mcp", name)
}

/// Writes what the server answers to its `n`th line (a JSON value a line, or raw lines).
fn answer(dir: &Path, n: usize, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(dir.join(n.to_string()), text).unwrap();
}

fn line(value: Value) -> String {
    serde_json::to_string(&value).unwrap()
}

impl Session {
    /// The proxy with the manifest `manifest`, if any, in front of the fake server.
    fn start(dir: Scratch, manifest: Option<&str>) -> Session {
        let mut flags = Vec::new();
        if let Some(manifest) = manifest {
            let path = dir.join("agent.toml");
            std::fs::write(&path, manifest).unwrap();
            flags = vec!["--manifest".to_owned(), path.to_str().unwrap().to_owned()];
        }
        Session::start_with(dir, &flags, true)
    }

    /// The proxy with `flags` in front of the fake server, with `--` before its command or not.
    fn start_with(dir: Scratch, flags: &[String], dashes: bool) -> Session {
        let mut command = support::binary(&dir);
        command.arg("mcp").args(flags);
        if dashes {
            command.arg("--");
        }
        let mut proxy = command
            .args(["sh", "-c", SERVER])
            .env("DIR", &dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = proxy.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if sender.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Session {
            _dir: dir,
            proxy,
            lines,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.proxy.stdin.as_mut().unwrap().write_all(bytes).unwrap();
        self.proxy.stdin.as_mut().unwrap().flush().unwrap();
    }

    fn send_json(&mut self, value: Value) {
        self.send(format!("{}\n", line(value)).as_bytes());
    }

    /// The next line the proxy writes to the host.
    fn next(&self) -> Vec<u8> {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a line from the proxy within 30 s")
    }

    fn next_json(&self) -> Value {
        serde_json::from_slice(&self.next()).expect("a JSON line")
    }

    /// Closes stdin and waits for the proxy: its exit code and stderr.
    fn finish(mut self) -> (Option<i32>, String, Duration) {
        drop(self.proxy.stdin.take());
        let start = Instant::now();
        let status = self.proxy.wait().unwrap();
        let elapsed = start.elapsed();
        let mut stderr = String::new();
        self.proxy
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (status.code(), stderr, elapsed)
    }
}

/// However a test ends, its proxy (and with it the server) ends, and its folder goes.
impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.proxy.kill();
        let _ = self.proxy.wait();
    }
}

fn tokens(text: &str) -> usize {
    Encoding::O200kBase.tokenizer().count(text)
}

fn listing(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("/usr/share/doc/package-{i}/changelog.Debian.gz"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn call(id: Value, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {"pattern": "**/*"}}})
}

fn note_of(text: &str) -> &str {
    text.rsplit('\n').next().unwrap()
}

#[test]
fn every_message_it_does_not_cap_passes_byte_for_byte_in_order() {
    let dir = scratch("passthrough");
    // From the host: requests, notifications, responses to the server, unknown fields, Unicode,
    // string, large and negative ids, and lines that are not JSON.
    let mut sent = Vec::new();
    let mut expected_out = Vec::new();
    for i in 0..1100u64 {
        let text = match i % 11 {
            0 => line(
                json!({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"cursor": format!("c{i}")}}),
            ),
            1 => format!(
                r#"{{"jsonrpc":"2.0","id":"req-{i}-日本語","method":"resources/read","params":{{"uri":"file:///tmp/🦀{i}"}},"x-unknown":[1,2,{{"deep":null}}]}}"#
            ),
            2 => format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{i},"progress":0.5,"total":1e2}}}}"#
            ),
            3 => format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"roots":[{{"uri":"file:///home"}}]}}}}"#,
                18446744073709551615u64 - i
            ),
            4 => format!(r#"{{"jsonrpc":"2.0","id":-{i},"method":"ping"}}"#),
            5 => "not json at all, { nor this".to_owned(),
            6 => format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":"never-sent-{i}","reason":"x"}}}}"#
            ),
            7 => format!(
                r#"{{ "jsonrpc" : "2.0", "id" : {i}, "method" : "tools/call", "params" : {{ "name" : "Echo", "arguments" : {{}} }}, "_meta": {{"progressToken": "p{i}"}} }}"#
            ),
            8 => format!(
                r#"{{"jsonrpc":"2.0","id":123456789012345678901234567890{i},"method":"some/future_method","params":{{"ünïcode":"\u00e9\ud83e\udd80"}}}}"#
            ),
            9 => format!(
                r#"{{"jsonrpc":"2.0","id":"s{i}","result":{{"action":"accept","content":{{"x":{i}}}}}}}"#
            ),
            _ => format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"Small","arguments":{{}}}}}}"#
            ),
        };
        sent.extend_from_slice(text.as_bytes());
        sent.push(b'\n');
        // The server answers with its own varied stream: its requests, notifications, results
        // of calls (small, so never cut), responses to unknown ids, junk.
        let n = i as usize + 1;
        let answer_lines = match i % 11 {
            0 => vec![format!(
                r#"{{"jsonrpc":"2.0","id":{i},"result":{{"tools":[],"nextCursor":"n{i}"}},"extra":"🦀"}}"#
            )],
            4 => vec![
                format!(r#"{{"jsonrpc":"2.0","id":-{i},"result":{{}}}}"#),
                format!(
                    r#"{{"jsonrpc":"2.0","id":"srv-{i}","method":"sampling/createMessage","params":{{"messages":[],"maxTokens":{i}}}}}"#
                ),
            ],
            5 => vec![
                "server junk ¿ \u{1}".to_owned(),
                format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"roots/list"}}"#),
            ],
            7 => vec![
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"p{i}","progress":1}}}}"#
                ),
                format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"result":{{"content":[{{"type":"text","text":"ok {i} ✓"}}],"isError":false,"_meta":{{"k":1.50}},"unknown":true}}}}"#
                ),
            ],
            10 => vec![format!(
                r#"{{"jsonrpc":"2.0","id":{i},"result":{{"content":[{{"type":"text","text":"small"}}],"structuredContent":{{"content":"small"}}}}}}"#
            )],
            _ => vec![format!(
                r#"{{"jsonrpc":"2.0","id":"unknown-{i}","result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
                "x".repeat(100)
            )],
        };
        for line in &answer_lines {
            expected_out.extend_from_slice(line.as_bytes());
            expected_out.push(b'\n');
        }
        answer(&dir, n, &answer_lines);
    }
    let received = dir.join("received");
    let mut session = Session::start(dir, Some("[worker.tool_output]\ndefault_max_tokens = 32\n"));
    session.send(&sent);
    let mut out = Vec::new();
    while out.len() < expected_out.len() {
        out.extend(session.next());
    }
    assert!(out == expected_out, "the server's stream came out changed");
    let received = std::fs::read(received).unwrap();
    assert!(
        received == sent,
        "the host's stream reached the server changed"
    );
    let (code, _, _) = session.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn a_large_text_result_is_capped_with_the_note_and_its_figures_in_meta() {
    let dir = scratch("text");
    let text = listing(20_000);
    answer(
        &dir,
        1,
        &[line(json!({"jsonrpc": "2.0", "id": "call-1", "result": {
            "content": [{"type": "text", "text": text, "annotations": {"audience": ["assistant"]}}],
            "_meta": {"server": {"took_ms": 12}},
            "resultType": "complete",
            "future_field": [1, 2, 3],
        }}))],
    );
    let mut session = Session::start(
        dir,
        Some("[worker.tool_output.per_tool]\nsearch_files = 2000\n"),
    );
    session.send_json(call(json!("call-1"), "search_files"));
    let response = session.next_json();
    let result = &response["result"];
    let capped = result["content"][0]["text"].as_str().unwrap();
    assert!(tokens(capped) <= 2000, "{}", tokens(capped));
    let figures = &result["_meta"][META_KEY]["content"];
    let dropped = figures["dropped_tokens"].as_u64().unwrap();
    assert_eq!(
        note_of(capped),
        format!("truncated: {dropped} tokens dropped, refine your query")
    );
    assert!(text.starts_with(capped.rsplit_once('\n').unwrap().0));
    assert_eq!(
        figures["original_tokens"].as_u64().unwrap(),
        tokens(&text) as u64
    );
    assert_eq!(figures["max_tokens"], 2000);
    assert_eq!(figures["keep"], "head");
    assert_eq!(
        result["content"][0]["annotations"],
        json!({"audience": ["assistant"]})
    );
    assert_eq!(result["_meta"]["server"], json!({"took_ms": 12}));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["future_field"], json!([1, 2, 3]));
    assert_eq!(response["id"], "call-1");
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn structured_content_is_capped_within_the_limit_too() {
    let dir = scratch("structured");
    let text = listing(20_000);
    // The filesystem server's shape, which an outputSchema of {"content": string} validates.
    answer(
        &dir,
        1,
        &[line(json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"content": text},
        }}))],
    );
    // A shape without a schema: the longest string is cut, the rest is kept.
    answer(
        &dir,
        2,
        &[line(json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "see structuredContent"}],
            "structuredContent": {"matches": 20_000, "truncated": false, "paths": text, "root": "/usr"},
        }}))],
    );
    let mut session = Session::start(dir, None);
    session.send_json(call(json!(1), "search_files"));
    let result = session.next_json()["result"].clone();
    let structured = serde_json::to_string(&result["structuredContent"]).unwrap();
    assert!(tokens(&structured) <= 5000, "{}", tokens(&structured));
    let inner = result["structuredContent"]["content"].as_str().unwrap();
    assert!(
        note_of(inner).starts_with("truncated: ") && note_of(inner).ends_with("refine your query")
    );
    let kept = inner.rsplit_once('\n').unwrap().0;
    assert!(text.starts_with(kept));
    // Its figures are exact, though its string was cut from the text block's cut.
    let figures = &result["_meta"][META_KEY]["structuredContent"];
    assert_eq!(
        figures["original_tokens"].as_u64(),
        Some(tokens(&text) as u64)
    );
    assert_eq!(figures["kept_tokens"].as_u64(), Some(tokens(kept) as u64));
    assert_eq!(
        note_of(inner),
        format!(
            "truncated: {} tokens dropped, refine your query",
            figures["dropped_tokens"]
        )
    );
    let text_block = result["content"][0]["text"].as_str().unwrap();
    assert!(tokens(text_block) <= 5000);
    assert!(
        result["_meta"][META_KEY]["structuredContent"]["dropped_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );

    session.send_json(call(json!(2), "search_files"));
    let result = session.next_json()["result"].clone();
    let structured = &result["structuredContent"];
    assert!(tokens(&serde_json::to_string(structured).unwrap()) <= 5000);
    assert_eq!(structured["matches"], 20_000);
    assert_eq!(structured["truncated"], false);
    assert_eq!(structured["root"], "/usr");
    assert!(note_of(structured["paths"].as_str().unwrap()).starts_with("truncated: "));
    assert_eq!(result["content"][0]["text"], "see structuredContent");
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn text_blocks_are_cut_together_and_other_blocks_stay() {
    let dir = scratch("blocks");
    let (first, second) = (listing(3_000), listing(3_000).replace("doc", "man"));
    let image =
        json!({"type": "image", "data": "iVBORw0KGgo=".repeat(10_000), "mimeType": "image/png"});
    let blocks = json!([
        {"type": "text", "text": "short header"},
        image,
        {"type": "text", "text": first},
        {"type": "resource_link", "uri": "file:///x", "name": "x"},
        {"type": "text", "text": second},
    ]);
    answer(
        &dir,
        1,
        &[line(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": blocks}}),
        )],
    );
    answer(
        &dir,
        2,
        &[line(
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": blocks}}),
        )],
    );
    answer(
        &dir,
        3,
        &[line(
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": blocks}}),
        )],
    );
    let manifest = "[worker.tool_output.per_tool]\nhead = 1000\ntail = { max_tokens = 1000, keep = \"tail\" }\nboth = { max_tokens = 1000, keep = \"head_tail\" }\n";
    let mut session = Session::start(dir, Some(manifest));
    for (id, tool) in [(1, "head"), (2, "tail"), (3, "both")] {
        session.send_json(call(json!(id), tool));
        let result = session.next_json()["result"].clone();
        let content = result["content"].as_array().unwrap();
        let texts: Vec<&str> = content
            .iter()
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap())
            .collect();
        let joined = texts.join("\n");
        assert!(tokens(&joined) <= 1000, "{tool}: {}", tokens(&joined));
        assert!(
            note_of(texts.last().unwrap()).starts_with("truncated: "),
            "{tool}"
        );
        assert!(content.contains(&image), "{tool}: the image stays");
        match tool {
            "head" => {
                assert_eq!(texts[0], "short header");
                assert_eq!(texts.len(), 2, "the text block past the cut is removed");
                assert!(content.iter().any(|b| b["type"] == "resource_link"));
            }
            "tail" => {
                assert_eq!(texts.len(), 1, "the blocks before the cut are removed");
                assert!(second.ends_with(texts[0].rsplit_once('\n').unwrap().0));
            }
            _ => {
                assert_eq!(texts[0], "short header");
                assert!(joined.contains("\n[... cut here ...]\n"));
                assert!(second.ends_with(
                    joined
                        .rsplit_once('\n')
                        .unwrap()
                        .0
                        .rsplit_once("[... cut here ...]\n")
                        .unwrap()
                        .1
                ));
            }
        }
    }
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn an_error_result_keeps_its_tail_and_task_results_are_capped() {
    let dir = scratch("errors-tasks");
    let log = format!("{}\nerror[E0308]: mismatched types", listing(10_000));
    answer(
        &dir,
        1,
        &[line(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": log}], "structuredContent": {"content": log}, "isError": true}}),
        )],
    );
    // 2025-11-25: a task-augmented call, then tasks/result.
    answer(
        &dir,
        2,
        &[line(
            json!({"jsonrpc": "2.0", "id": 2, "result": {"task": {"taskId": "t-1", "status": "working"}}}),
        )],
    );
    answer(
        &dir,
        3,
        &[line(
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": listing(10_000)}]}}),
        )],
    );
    // 2026-07-28: the result arrives in a completed tasks/get.
    answer(
        &dir,
        4,
        &[line(
            json!({"jsonrpc": "2.0", "id": 4, "result": {"resultType": "task", "taskId": "t-2", "status": "working"}}),
        )],
    );
    answer(
        &dir,
        5,
        &[line(
            json!({"jsonrpc": "2.0", "id": 5, "result": {"taskId": "t-2", "status": "working", "resultType": "complete"}}),
        )],
    );
    answer(
        &dir,
        6,
        &[line(
            json!({"jsonrpc": "2.0", "id": 6, "result": {"taskId": "t-2", "status": "completed", "resultType": "complete", "result": {"content": [{"type": "text", "text": listing(10_000)}]}}}),
        )],
    );
    // input_required passes as it is.
    let input_required = line(
        json!({"jsonrpc": "2.0", "id": 7, "result": {"resultType": "input_required", "content": [{"type": "text", "text": listing(10_000)}]}}),
    );
    answer(&dir, 7, std::slice::from_ref(&input_required));
    let mut session = Session::start(
        dir,
        Some("[worker.tool_output]\ndefault_max_tokens = 500\n"),
    );

    session.send_json(call(json!(1), "Bash"));
    let result = session.next_json()["result"].clone();
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("error[E0308]: mismatched types\ntruncated: "),
        "{text}"
    );
    assert_eq!(result["isError"], true);
    assert_eq!(result["_meta"][META_KEY]["content"]["keep"], "tail");
    // The structure's copy of the log keeps its tail too, cut from the text block's cut.
    let structured = &result["structuredContent"];
    assert!(tokens(&structured.to_string()) <= 500);
    let inner = structured["content"].as_str().unwrap();
    let (kept, _) = inner.rsplit_once('\n').unwrap();
    assert!(log.ends_with(kept) && kept.ends_with("error[E0308]: mismatched types"));
    let figures = &result["_meta"][META_KEY]["structuredContent"];
    assert_eq!(figures["keep"], "tail");
    assert_eq!(figures["kept_tokens"].as_u64(), Some(tokens(kept) as u64));
    assert_eq!(
        figures["original_tokens"].as_u64(),
        Some(tokens(&log) as u64)
    );

    session.send_json(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "Glob", "arguments": {}, "task": {"ttl": 60000}}}));
    assert_eq!(session.next_json()["result"]["task"]["taskId"], "t-1");
    session.send_json(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": "t-1"}}),
    );
    let text = session.next_json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(tokens(&text) <= 500 && note_of(&text).starts_with("truncated: "));

    session.send_json(call(json!(4), "Glob"));
    assert_eq!(session.next_json()["result"]["taskId"], "t-2");
    for id in [5, 6] {
        session.send_json(
            json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get", "params": {"taskId": "t-2"}}),
        );
    }
    assert_eq!(session.next_json()["result"]["status"], "working");
    let result = session.next_json()["result"].clone();
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(tokens(text) <= 500 && note_of(text).starts_with("truncated: "));
    assert!(result["result"]["_meta"][META_KEY]["content"].is_object());

    session.send_json(call(json!(7), "Glob"));
    assert_eq!(session.next(), format!("{input_required}\n").into_bytes());
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn cancelled_unknown_and_error_responses_pass_untouched() {
    let dir = scratch("cancelled");
    let big = |id: Value| {
        line(
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": listing(10_000)}]}}),
        )
    };
    // The server answers the cancelled call late, a call nobody made, and an unknown tool.
    answer(
        &dir,
        2,
        &[big(json!(7)), big(json!(8)), "}{ not json".to_owned()],
    );
    answer(
        &dir,
        3,
        &[line(
            json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32602, "message": listing(10_000)}}),
        )],
    );
    let mut session = Session::start(dir, None);
    session.send_json(call(json!(7), "Glob"));
    session.send_json(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
    );
    assert_eq!(session.next(), format!("{}\n", big(json!(7))).into_bytes());
    assert_eq!(session.next(), format!("{}\n", big(json!(8))).into_bytes());
    assert_eq!(session.next(), b"}{ not json\n".to_vec());
    session.send_json(call(json!(9), "Nope"));
    assert!(
        session.next_json()["error"]["message"]
            .as_str()
            .unwrap()
            .len()
            > 100_000
    );
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn the_servers_exit_code_is_the_proxys_after_its_output() {
    let dir = scratch("exit");
    answer(&dir, 1, &["last words".to_owned()]);
    std::fs::write(dir.join("1.exit"), "3").unwrap();
    let mut session = Session::start(dir, None);
    session.send(b"{}\n");
    assert_eq!(session.next(), b"last words\n".to_vec());
    let status = session.proxy.wait().unwrap();
    assert_eq!(status.code(), Some(3));
}

#[test]
fn a_missing_command_or_a_bad_manifest_fails_before_any_output() {
    let dir = scratch("missing");
    let manifest = dir.join("bad.toml");
    std::fs::write(&manifest, "[worker.tool_output]\ndefault_max_tokens = 10\n").unwrap();
    let cases: [(&[&str], i32, &str); 2] = [
        (
            &["mcp", "--", "/nonexistent/mcp-server", "--flag"],
            127,
            "cannot start `/nonexistent/mcp-server`",
        ),
        (
            &["mcp", "--manifest", manifest.to_str().unwrap(), "--", "cat"],
            2,
            "bad.toml:2:22: `worker.tool_output.default_max_tokens` must be at least 32",
        ),
    ];
    for (args, code, message) in cases {
        let output = support::binary(&dir)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(code), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{stderr}");
    }
}

#[test]
fn the_limit_flags_set_the_default_limit_and_the_command_needs_no_dashes() {
    let dir = scratch("flags");
    let text = listing(5_000);
    let result = |id: u32| {
        line(json!({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": text}],
        }}))
    };
    answer(&dir, 1, &[result(1)]);
    answer(&dir, 2, &[result(2)]);
    let manifest = dir.join("agent.toml");
    std::fs::write(
        &manifest,
        "[worker.tool_output.per_tool]\nread_text_file = 200\n",
    )
    .unwrap();
    // As gemini-cli stores `mcp FLAGS -- COMMAND`: without the `--`.
    let flags = [
        "--manifest",
        manifest.to_str().unwrap(),
        "--max-tokens",
        "300",
        "--keep",
        "tail",
        "--hint",
        "use a narrower pattern",
    ];
    let flags: Vec<String> = flags.iter().map(|flag| flag.to_string()).collect();
    let mut session = Session::start_with(dir, &flags, false);
    session.send_json(call(json!(1), "search_files"));
    let response = session.next_json();
    let capped = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(tokens(capped) <= 300, "{}", tokens(capped));
    assert!(
        text.ends_with(capped.rsplit_once('\n').unwrap().0),
        "the tail is kept"
    );
    assert!(note_of(capped).ends_with("refine your query: use a narrower pattern"));
    assert_eq!(
        response["result"]["_meta"][META_KEY]["content"]["max_tokens"],
        300
    );
    // A tool with a limit of its own in the manifest keeps it.
    session.send_json(call(json!(2), "read_text_file"));
    let response = session.next_json();
    let figures = &response["result"]["_meta"][META_KEY]["content"];
    assert_eq!(
        (figures["max_tokens"].as_u64(), figures["keep"].as_str()),
        (Some(200), Some("head"))
    );
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn a_server_that_hangs_after_stdin_closes_gets_sigterm_then_sigkill() {
    for (at_eof, code) in [
        ("exec sleep 60\n", 128 + 15),
        ("trap '' TERM\nexec sleep 60\n", 128 + 9),
    ] {
        let dir = scratch(&format!("hang-{code}"));
        std::fs::write(dir.join("at_eof"), at_eof).unwrap();
        let session = Session::start(dir, None);
        let (exit, stderr, elapsed) = session.finish();
        assert_eq!(exit, Some(code), "{stderr}");
        assert!(elapsed >= Duration::from_millis(1400), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
        assert!(stderr.contains("SIGTERM"), "{stderr}");
    }
}

#[test]
fn host_messages_flow_while_a_large_result_is_capped() {
    let dir = scratch("flow");
    // 30 MB: seconds of capping, while the host sends a ping.
    let big = line(
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": listing(600_000)}]}}),
    );
    answer(&dir, 1, &[big]);
    answer(
        &dir,
        2,
        &[r#"{"jsonrpc":"2.0","id":"ping","result":{}}"#.to_owned()],
    );
    let received_file = dir.join("received");
    let mut session = Session::start(dir, None);
    let received = |what: &str| {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            let received = std::fs::read_to_string(&received_file).unwrap_or_default();
            if received.contains(what) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("the server never received {what}");
    };
    session.send_json(call(json!(1), "Glob"));
    received("tools/call");
    // The server is writing the result; give the proxy time to read it and start capping.
    std::thread::sleep(Duration::from_millis(300));
    session.send_json(json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}));
    received(r#""method":"ping""#);
    assert!(
        session.lines.try_recv().is_err(),
        "the ping reached the server while the result was being capped"
    );
    let response = session.next_json();
    assert!(response["result"]["_meta"][META_KEY].is_object());
    assert_eq!(
        session.next_json()["id"],
        "ping",
        "the pong comes after the result"
    );
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn a_structure_of_many_small_items_loses_items_to_fit() {
    let dir = scratch("structure");
    // 5,000 records: no one string can make them fit, so the list loses its last records and
    // the note ends the structure's last string.
    let files: Vec<Value> = (0..5_000)
        .map(|i| json!({"path": format!("/usr/share/doc/package-{i}/copyright"), "size": i * 7}))
        .collect();
    let structured = json!({"files": files, "root": "/usr"});
    // 20,000 numbers and no string: the list is cut, and the note is only in `content`.
    let numbers: Vec<u64> = (0..20_000).collect();
    // 3,000 short fields, no list: nothing can be cut without breaking the structure.
    let fields: serde_json::Map<String, Value> = (0..3_000)
        .map(|i| (format!("file_{i}"), json!("ok")))
        .collect();
    for (id, value) in [
        (1, structured.clone()),
        (2, json!({"sizes": numbers})),
        (3, Value::Object(fields.clone())),
        (4, structured.clone()),
    ] {
        let mut result = json!({
            "content": [{"type": "text", "text": listing(10_000)}],
            "structuredContent": value,
        });
        if id == 4 {
            result["isError"] = json!(true);
        }
        answer(
            &dir,
            id,
            &[line(json!({"jsonrpc": "2.0", "id": id, "result": result}))],
        );
    }
    let mut session = Session::start(dir, None);
    let capped = |session: &mut Session, id: u64| {
        session.send_json(call(json!(id), "stat_files"));
        let result = session.next_json()["result"].clone();
        assert!(tokens(&serde_json::to_string(&result["structuredContent"]).unwrap()) <= 5000);
        result
    };

    // Each kept record is whole, but the one next to those dropped, which may be cut to fill
    // what they leave: its size kept, its path a part of the path (its start, or with `tail` its
    // end).
    let cut_record = |kept: &Value, whole: &Value, tail: bool| {
        assert_eq!(kept["size"], whole["size"]);
        let (part, path) = (
            kept["path"].as_str().unwrap(),
            whole["path"].as_str().unwrap(),
        );
        assert!(
            if tail {
                path.ends_with(part)
            } else {
                path.starts_with(part)
            },
            "{part}"
        );
    };
    let result = capped(&mut session, 1);
    let kept = result["structuredContent"]["files"].as_array().unwrap();
    assert!(kept.len() > 100 && kept.len() < 5_000, "{}", kept.len());
    let last = kept.len() - 1;
    assert_eq!(kept[..last], files[..last]);
    cut_record(&kept[last], &files[last], false);
    let root = result["structuredContent"]["root"].as_str().unwrap();
    let figures = &result["_meta"][META_KEY]["structuredContent"];
    let dropped = figures["dropped_tokens"].as_u64().unwrap();
    assert_eq!(
        root,
        format!("/usr\ntruncated: {dropped} tokens dropped, refine your query")
    );
    assert_eq!(
        figures["original_tokens"].as_u64().unwrap() - dropped,
        figures["kept_tokens"].as_u64().unwrap()
    );

    let result = capped(&mut session, 2);
    let sizes = result["structuredContent"]["sizes"].as_array().unwrap();
    assert!(sizes.len() > 100 && sizes.len() < 20_000, "{}", sizes.len());
    assert_eq!(sizes.last().unwrap(), &json!(sizes.len() - 1));
    assert!(result["_meta"][META_KEY]["structuredContent"].is_object());

    session.send_json(call(json!(3), "stat_files"));
    let result = session.next_json()["result"].clone();
    assert_eq!(result["structuredContent"], Value::Object(fields));
    assert!(result["_meta"][META_KEY]["structuredContent"].is_null());
    assert!(result["_meta"][META_KEY]["content"].is_object());

    // An error keeps its tail: the first records go.
    let result = capped(&mut session, 4);
    let kept = result["structuredContent"]["files"].as_array().unwrap();
    let first = files.len() - kept.len();
    assert_eq!(kept[1..], files[first + 1..]);
    cut_record(&kept[0], &files[first], true);

    let (code, stderr, _) = session.finish();
    assert_eq!(code, Some(0));
    assert_eq!(
        stderr
            .matches("structuredContent is over the limit")
            .count(),
        1,
        "{stderr}"
    );
}

/// `check` with `args` in front of the fake server of `dir`: its exit code, stdout and stderr.
fn check(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = support::binary(dir)
        .arg("check")
        .args(args)
        .args(["sh", "-c", SERVER])
        .env("DIR", dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

#[test]
fn check_lists_every_page_of_tools_with_their_limits_and_warns_of_unknown_names() {
    let dir = scratch("check");
    let tools = |names: &[&str]| -> Vec<Value> {
        names
            .iter()
            .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
            .collect()
    };
    answer(
        &dir,
        1,
        &[line(json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"},
        }}))],
    );
    // Line 2 is `notifications/initialized`; the server asks for the roots before it answers.
    answer(
        &dir,
        3,
        &[
            line(json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list"})),
            line(
                json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools(&["read_text_file", "search_files"]), "nextCursor": "page-2"}}),
            ),
        ],
    );
    answer(
        &dir,
        5,
        &[line(
            json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": tools(&["directory_tree"])}}),
        )],
    );
    let manifest = dir.join("agent.toml");
    std::fs::write(
        &manifest,
        "[worker.tool_output]\ndefault_max_tokens = 4000\n[worker.tool_output.per_tool]\n\
         search_files = { max_tokens = 3000, hint = \"use a narrower pattern\" }\nGlob = 1000\n",
    )
    .unwrap();
    let (code, out, err) = check(
        &dir,
        &[
            "--manifest",
            manifest.to_str().unwrap(),
            "--keep",
            "tail",
            "--",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&format!("manifest: {}", manifest.display())),
        "{out}"
    );
    assert!(out.contains("counting: o200k_base"), "{out}");
    assert!(out.contains("server: 3 tools (MCP 2025-06-18)"), "{out}");
    let row = |tool: &str| -> Vec<String> {
        let line = out
            .lines()
            .find(|line| line.starts_with(tool))
            .unwrap_or_else(|| panic!("{tool}: {out}"));
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(
        row("read_text_file"),
        ["read_text_file", "4000", "tail", "default"]
    );
    assert_eq!(
        row("search_files")[..4],
        ["search_files", "3000", "head", "per_tool"]
    );
    assert!(out.contains("use a narrower pattern"), "{out}");
    assert_eq!(
        row("directory_tree"),
        ["directory_tree", "4000", "tail", "default"]
    );
    assert!(
        out.contains("warning: `per_tool.Glob` names no tool of this server"),
        "{out}"
    );
    let received = std::fs::read_to_string(dir.join("received")).unwrap();
    let received: Vec<Value> = received
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(received[0]["method"], "initialize");
    assert_eq!(received[1]["method"], "notifications/initialized");
    assert_eq!(
        received[3],
        json!({"jsonrpc": "2.0", "id": 0, "result": {"roots": []}})
    );
    assert_eq!(received[4]["params"]["cursor"], "page-2");
}

#[test]
fn check_asks_a_server_without_a_handshake_the_2026_07_28_way() {
    let dir = scratch("check-stateless");
    answer(
        &dir,
        1,
        &[line(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}),
        )],
    );
    answer(
        &dir,
        2,
        &[line(
            json!({"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "tools": [{"name": "search", "inputSchema": {}}]}}),
        )],
    );
    let (code, out, err) = check(&dir, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("manifest: none, built-in defaults"), "{out}");
    assert!(out.contains("server: 1 tools (MCP 2026-07-28)"), "{out}");
    let received = std::fs::read_to_string(dir.join("received")).unwrap();
    let list: Value = serde_json::from_str(received.lines().nth(1).unwrap()).unwrap();
    assert_eq!(list["method"], "tools/list");
    assert_eq!(
        list["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}

#[test]
fn check_fails_with_the_reason_and_the_servers_stderr() {
    let dir = scratch("check-fails");
    // Exits before it answers, saying why on stderr.
    let output = support::binary(&dir)
        .args([
            "check",
            "--",
            "sh",
            "-c",
            "echo 'error: /nowhere is not a folder' >&2; exit 1",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // It may exit before the request is written, or after.
    assert!(
        stderr.contains("closed its stdout before it answered `initialize`")
            || stderr.contains("stopped reading before `initialize`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: /nowhere is not a folder"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());

    // Answers nothing: the timeout.
    let start = Instant::now();
    let (code, out, err) = check(&dir, &["--timeout", "1"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        err.contains("did not answer `initialize` within 1 s"),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let output = support::binary(&dir)
        .args(["check", "/nonexistent/server"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(127));
}

#[test]
fn a_structure_too_deep_to_cut_passes_whole_and_says_so() {
    let dir = scratch("deep");
    let depth = 100_000;
    let deep = format!("{}\"leaf\"{}", "[".repeat(depth), "]".repeat(depth));
    let response = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"small"}}],"structuredContent":{{"tree":{deep}}}}}}}"#
    );
    answer(&dir, 1, std::slice::from_ref(&response));
    let mut session = Session::start(dir, None);
    session.send_json(call(json!(1), "directory_tree"));
    assert_eq!(
        session.next(),
        format!("{response}\n").into_bytes(),
        "passed whole"
    );
    let (code, stderr, _) = session.finish();
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains("structuredContent is over the limit"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tool=\"directory_tree\"") || stderr.contains("tool=directory_tree"),
        "{stderr}"
    );
    let tokens_of_it = tokens(&format!("{{\"tree\":{deep}}}"));
    assert!(
        stderr.contains(&format!("tokens={tokens_of_it}")),
        "{stderr}"
    );
}

#[test]
fn lines_that_lenient_hosts_read_are_capped_as_they_read_them() {
    let dir = scratch("lenient");
    let text = listing(20_000);
    let result = |id: u32, text: &str| {
        line(
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "_meta": {"kept": "as it was"}}}),
        )
    };
    // 1: a BOM before the response. 2: half an emoji, as a lone surrogate escape, early on.
    // 3: a byte that is not UTF-8 in an early path.
    let mut with_bom = b"\xEF\xBB\xBF".to_vec();
    with_bom.extend_from_slice(result(1, &text).as_bytes());
    with_bom.push(b'\n');
    std::fs::write(dir.join("1"), with_bom).unwrap();
    let surrogate = result(2, &format!("/usr/share/emoji-🦀\n{text}")).replace("🦀", "\\ud83e");
    answer(&dir, 2, &[surrogate]);
    let mut bad_byte = result(3, &format!("/usr/share/latin-X.txt\n{text}")).into_bytes();
    let at = bad_byte.windows(5).position(|w| w == b"tin-X").unwrap() + 4;
    bad_byte[at] = 0xFF;
    bad_byte.push(b'\n');
    std::fs::write(dir.join("3"), bad_byte).unwrap();

    let mut session = Session::start(dir, None);
    // The host's call has a BOM too, and is still routed.
    session.send(format!("\u{feff}{}\n", line(call(json!(1), "search_files"))).as_bytes());
    let first = session.next();
    assert!(first.starts_with(b"\xEF\xBB\xBF"), "the BOM stays");
    let first: Value = serde_json::from_slice(&first[3..]).unwrap();
    session.send_json(call(json!(2), "search_files"));
    let second = session.next_json();
    session.send_json(call(json!(3), "search_files"));
    let third: Value = serde_json::from_slice(&session.next()).expect("valid JSON out");
    for (response, starts) in [
        (&first, "/usr/share/doc/package-0/"),
        (&second, "/usr/share/emoji-\u{fffd}\n"),
        (&third, "/usr/share/latin-\u{fffd}.txt\n"),
    ] {
        let capped = response["result"]["content"][0]["text"].as_str().unwrap();
        assert!(tokens(capped) <= 5000, "{}", tokens(capped));
        assert!(capped.starts_with(starts), "{}", &capped[..80]);
        assert!(note_of(capped).ends_with("tokens dropped, refine your query"));
        assert_eq!(response["result"]["_meta"]["kept"], "as it was");
    }
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn a_structure_no_cut_fits_leaves_structured_content_whole_and_the_text_capped() {
    let dir = scratch("no-fit");
    let fields: serde_json::Map<String, Value> = (0..3000)
        .map(|i| (format!("field_{i}"), json!(i)))
        .collect();
    let mut nested = json!({"leaf": 0});
    for depth in 1..120 {
        nested = json!({"depth": depth, "flag": true, "inner": nested});
    }
    let shapes = [
        Value::Object(fields.clone()),
        json!({"a": [nested, nested, nested, nested, nested, nested]}),
        json!({"items": [Value::Object(fields)]}),
    ];
    let lines: Vec<String> = shapes
        .iter()
        .enumerate()
        .map(|(id, shape)| {
            line(json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": shape.to_string()}],
                "structuredContent": shape,
            }}))
        })
        .collect();
    for (id, line) in lines.iter().enumerate() {
        answer(&dir, id + 1, std::slice::from_ref(line));
    }
    let manifest = "[worker.tool_output]\ndefault_max_tokens = 1000\n";
    let mut session = Session::start(dir, Some(manifest));
    for (id, shape) in shapes.iter().enumerate() {
        assert!(tokens(&shape.to_string()) > 1000);
        session.send_json(call(json!(id), "stats"));
        let result = session.next_json()["result"].clone();
        // Its shape is what a client checks against the tool's outputSchema: whole.
        assert_eq!(&result["structuredContent"], shape, "shape {id}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(tokens(text) <= 1000, "shape {id}: {}", tokens(text));
        assert!(note_of(text).ends_with("refine your query"), "shape {id}");
        assert!(result["_meta"][META_KEY]["content"].is_object());
        assert!(result["_meta"][META_KEY]["structuredContent"].is_null());
    }
    let (code, stderr, _) = session.finish();
    assert_eq!(code, Some(0));
    let warnings = stderr
        .matches("structuredContent is over the limit and no cut of its shape fits")
        .count();
    assert_eq!(warnings, 3, "{stderr}");
}
