//! The `cap` and `count` filters of the `tool-output-cap` binary.

#[cfg(feature = "hf")]
#[path = "../../tests/common/mod.rs"]
mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

#[cfg(feature = "hf")]
use tool_output_cap::Tokenizer;
use tool_output_cap::{Encoding, CUT_MARKER};

const BIN: &str = env!("CARGO_BIN_EXE_tool-output-cap");

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    // A command that fails on its flags does not read stdin: a broken pipe is not a failure.
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let output = child.wait_with_output().unwrap();
    let _ = writer.join().unwrap();
    output
}

fn stdout(output: &Output) -> &str {
    std::str::from_utf8(&output.stdout).unwrap()
}

fn tokens(text: &str) -> usize {
    Encoding::O200kBase.tokenizer().count(text)
}

/// A build log: many lines of progress, the error last.
fn build_log() -> String {
    let mut log: String = (0..5000)
        .map(|i| format!("   Compiling crate-{i} v0.{i}.0 (/home/dev/project/crates/crate-{i})\n"))
        .collect();
    log.push_str("error[E0425]: cannot find value `x` in this scope\n");
    log
}

#[test]
fn cap_keeps_head_tail_or_both_within_the_limit() {
    let log = build_log();
    for keep in ["head", "tail", "head_tail"] {
        let output = run(
            &["cap", "--max-tokens", "300", "--keep", keep],
            log.as_bytes(),
        );
        assert!(output.status.success(), "{keep}");
        let capped = stdout(&output);
        assert!(tokens(capped) <= 300, "{keep}: {}", tokens(capped));
        let (body, note) = capped.rsplit_once('\n').unwrap();
        assert!(
            note.starts_with("truncated: ") && note.ends_with(" tokens dropped, refine your query")
        );
        match keep {
            "head" => assert!(log.starts_with(body)),
            "tail" => {
                assert!(log.ends_with(body));
                assert!(body.contains("error[E0425]"));
            }
            _ => {
                let (head, tail) = body.split_once(&format!("\n{CUT_MARKER}\n")).unwrap();
                assert!(log.starts_with(head) && log.ends_with(tail));
            }
        }
    }
}

#[test]
fn cap_takes_a_tools_limit_from_the_manifest_and_flags_over_it() {
    let dir = std::env::temp_dir().join(format!("tool-output-cap-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("agent.toml");
    std::fs::write(
        &manifest,
        "[worker.tool_output.per_tool]\nBash = { max_tokens = 200, keep = \"tail\", hint = \"grep the log for error\" }\n",
    )
    .unwrap();
    let manifest = manifest.to_str().unwrap();
    let log = build_log();

    let output = run(
        &["cap", "--manifest", manifest, "--tool", "Bash"],
        log.as_bytes(),
    );
    let capped = stdout(&output);
    assert!(tokens(capped) <= 200);
    assert!(capped.ends_with("refine your query: grep the log for error"));
    assert!(capped.contains("error[E0425]"));

    let output = run(
        &[
            "cap",
            "--manifest",
            manifest,
            "--tool",
            "Bash",
            "--max-tokens",
            "100",
            "--keep",
            "head",
            "--hint",
            "narrower",
        ],
        log.as_bytes(),
    );
    let capped = stdout(&output);
    assert!(tokens(capped) <= 100 && tokens(capped) > 50);
    assert!(log.starts_with(capped.rsplit_once('\n').unwrap().0));
    assert!(capped.ends_with("refine your query: narrower"));

    // Another tool gets the default.
    let output = run(
        &["cap", "--manifest", manifest, "--tool", "Read"],
        log.as_bytes(),
    );
    assert!(tokens(stdout(&output)) > 4000);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cap_passes_input_within_the_limit_byte_for_byte_and_empty_input_empty() {
    for input in ["", "one line\n", "日本語 🦀 <|endoftext|>\r\n\t"] {
        let output = run(&["cap", "--max-tokens", "32"], input.as_bytes());
        assert!(output.status.success());
        assert_eq!(output.stdout, input.as_bytes());
        assert!(output.stderr.is_empty());
    }
}

#[test]
fn invalid_input_and_flags_are_clear_errors() {
    let output = run(&["cap"], b"valid, then \xff\xfe");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("stdin is not UTF-8: invalid byte at offset 12"),
        "{stderr}"
    );

    for (args, says) in [
        (&["cap", "--max-tokens", "31"][..], "--max-tokens"),
        (&["cap", "--keep", "middle"][..], "middle"),
        (
            &["cap", "--hint", "two\nlines"][..],
            "--hint must be one line",
        ),
        (&["count", "--encoding", "p50k_base"][..], "p50k_base"),
        (
            &["cap", "--manifest", "/nonexistent/agent.toml"][..],
            "/nonexistent/agent.toml: cannot read the manifest",
        ),
    ] {
        let output = run(args, b"text");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn count_prints_the_token_count_in_the_chosen_encoding() {
    let text = "fn main() { println!(\"héllo 🦀\"); }\n".repeat(100);
    let output = run(&["count"], text.as_bytes());
    assert_eq!(stdout(&output), format!("{}\n", tokens(&text)));
    let output = run(&["count", "--encoding", "cl100k_base"], text.as_bytes());
    let cl100k = Encoding::Cl100kBase.tokenizer().count(&text);
    assert_eq!(stdout(&output), format!("{cl100k}\n"));
    assert_eq!(stdout(&run(&["count"], b"")), "0\n");
}

#[test]
fn help_and_version_behave_as_clap_tools_do() {
    let output = run(&["--version"], b"");
    assert_eq!(
        stdout(&output),
        format!("tool-output-cap {}\n", env!("CARGO_PKG_VERSION"))
    );
    let output = run(&["--help"], b"");
    assert!(output.status.success());
    for subcommand in ["mcp", "cap", "count"] {
        assert!(stdout(&output).contains(subcommand));
    }
    let output = run(&["mcp"], b"");
    assert_eq!(
        output.status.code(),
        Some(2),
        "a server command is required"
    );
}

#[cfg(feature = "hf")]
#[test]
fn tokenizer_file_counts_and_caps_in_the_models_tokens() {
    let dir = std::env::temp_dir().join(format!("tool-output-cap-cli-hf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = common::small_tokenizer(&dir, false);
    let model = tool_output_cap::HfTokenizer::from_file(&file).unwrap();
    let file = file.to_str().unwrap();
    let log = build_log();
    let output = run(&["count", "--tokenizer-file", file], log.as_bytes());
    assert_eq!(stdout(&output), format!("{}\n", model.count(&log)));
    assert_ne!(model.count(&log), tokens(&log));
    let output = run(
        &["cap", "--tokenizer-file", file, "--max-tokens", "500"],
        log.as_bytes(),
    );
    let capped = stdout(&output);
    assert!(
        model.count(capped) <= 500 && model.count(capped) > 400,
        "{}",
        model.count(capped)
    );
    let output = run(
        &["count", "--tokenizer-file", "/nonexistent/tokenizer.json"],
        b"x",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("/nonexistent/tokenizer.json: cannot read"));
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(not(feature = "hf"))]
#[test]
fn tokenizer_file_needs_the_hf_feature() {
    let output = run(&["count", "--tokenizer-file", "tokenizer.json"], b"x");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("build with the `hf` feature"));
}
