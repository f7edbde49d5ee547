//! The `run`, `cap` and `count` filters of the `tool-output-cap` binary, and where it finds its
//! manifest.

#[cfg(feature = "hf")]
#[path = "../../tests/common/mod.rs"]
mod common;
mod support;

use std::io::Write;
use std::process::{Output, Stdio};

#[cfg(feature = "hf")]
use tool_output_cap::Tokenizer;
use tool_output_cap::{Encoding, CUT_MARKER};

fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_in(&[], args, stdin)
}

/// The binary with `env` and no manifest but what `env` and `args` name: none from the test's
/// own environment, none in the user's config folder.
fn run_in(env: &[(&str, &std::path::Path)], args: &[&str], stdin: &[u8]) -> Output {
    let mut command = support::binary(std::path::Path::new("/nonexistent"));
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command
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
        // The note is the last line, ended by a newline, and follows the last kept line
        // directly, though that line ended with a newline of its own.
        let body = capped
            .strip_suffix('\n')
            .expect("a newline ends the output");
        let (kept, note) = body.rsplit_once('\n').unwrap();
        assert!(
            note.starts_with("truncated: ") && note.ends_with(" tokens dropped, refine your query")
        );
        assert!(
            !kept.ends_with('\n'),
            "{keep}: a blank line before the note"
        );
        match keep {
            "head" => assert!(log.starts_with(kept)),
            "tail" => {
                assert!(log.ends_with(&format!("{kept}\n")));
                assert!(kept.ends_with("error[E0425]: cannot find value `x` in this scope"));
            }
            _ => {
                let (head, tail) = kept.split_once(&format!("\n{CUT_MARKER}\n")).unwrap();
                assert!(log.starts_with(head) && log.ends_with(&format!("{tail}\n")));
            }
        }
    }
}

#[test]
fn cap_takes_a_tools_limit_from_the_manifest_and_flags_over_it() {
    let dir = scratch("manifest-and-flags");
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
    assert!(capped.ends_with("refine your query: grep the log for error\n"));
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
    let body = capped.strip_suffix('\n').unwrap();
    assert!(log.starts_with(body.rsplit_once('\n').unwrap().0));
    assert!(capped.ends_with("refine your query: narrower\n"));

    // Another tool gets the default.
    let output = run(
        &["cap", "--manifest", manifest, "--tool", "Read"],
        log.as_bytes(),
    );
    assert!(tokens(stdout(&output)) > 4000);
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
    let dir = scratch("tokenizer-file");
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
}

#[cfg(not(feature = "hf"))]
#[test]
fn tokenizer_file_needs_the_hf_feature() {
    let output = run(&["count", "--tokenizer-file", "tokenizer.json"], b"x");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("build with the `hf` feature"));
}

fn scratch(name: &str) -> support::Scratch {
    support::scratch("filters", name)
}

fn manifest(path: &std::path::Path, max_tokens: usize) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("[worker.tool_output]\ndefault_max_tokens = {max_tokens}\n"),
    )
    .unwrap();
}

#[test]
fn the_manifest_is_the_flags_else_the_variables_else_the_config_folders() {
    let dir = scratch("manifests");
    let config = dir.join("config");
    manifest(&config.join("tool-output-cap/manifest.toml"), 100);
    manifest(&dir.join("env.toml"), 200);
    manifest(&dir.join("flag.toml"), 300);
    let log = build_log();
    let env_file = dir.join("env.toml");
    let capped_to = |env: &[(&str, &std::path::Path)], args: &[&str]| {
        let output = run_in(env, args, log.as_bytes());
        assert!(output.status.success(), "{output:?}");
        tokens(stdout(&output))
    };
    let folder = [("XDG_CONFIG_HOME", config.as_path())];
    let both = [
        ("XDG_CONFIG_HOME", config.as_path()),
        ("TOOL_OUTPUT_CAP_MANIFEST", env_file.as_path()),
    ];
    let flag = dir.join("flag.toml");
    let tokens_of = [
        capped_to(&folder, &["cap"]),
        capped_to(&both, &["cap"]),
        capped_to(&both, &["cap", "--manifest", flag.to_str().unwrap()]),
        capped_to(&[], &["cap"]),
    ];
    // Each within its limit, and no further below it than a line edge may move a cut.
    assert!((80..=100).contains(&tokens_of[0]), "{tokens_of:?}");
    assert!((170..=200).contains(&tokens_of[1]), "{tokens_of:?}");
    assert!((260..=300).contains(&tokens_of[2]), "{tokens_of:?}");
    assert!(
        (4300..=5000).contains(&tokens_of[3]),
        "built-in: {tokens_of:?}"
    );

    // A path that is named must be there; the config folder's file need not be.
    let missing = dir.join("missing.toml");
    let output = run_in(
        &[("TOOL_OUTPUT_CAP_MANIFEST", missing.as_path())],
        &["cap"],
        b"x",
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("missing.toml"), "{stderr}");
}

#[test]
fn run_caps_the_merged_output_and_exits_with_the_commands_code() {
    let script = "for i in $(seq 1 3000); do echo \"out $i\"; echo \"err $i\" >&2; done; exit 3";
    let output = run(
        &["run", "--max-tokens", "300", "--", "sh", "-c", script],
        b"",
    );
    assert_eq!(output.status.code(), Some(3));
    let capped = stdout(&output);
    assert!(tokens(capped) <= 300, "{}", tokens(capped));
    // Both streams, in the order written; head and tail by default.
    assert!(
        capped.starts_with("out 1\nerr 1\nout 2\nerr 2\n"),
        "{capped}"
    );
    let (kept, note) = capped
        .strip_suffix('\n')
        .unwrap()
        .rsplit_once('\n')
        .unwrap();
    assert!(note.starts_with("truncated: "), "{note}");
    assert!(kept.contains(&format!("\n{CUT_MARKER}\n")), "{kept}");
    assert!(kept.ends_with("out 3000\nerr 3000"), "{kept}");

    // Without `--`, keeping the tail; a signal is 128 + its number, as a shell says.
    let output = run(
        &[
            "run",
            "--keep",
            "tail",
            "--max-tokens",
            "100",
            "sh",
            "-c",
            "seq 1 5000; kill -TERM $$",
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(128 + 15));
    let capped = stdout(&output);
    assert!(capped.contains("4999\n5000\n"), "{capped}");
    assert!(!capped.contains(CUT_MARKER));

    // Within the limit: byte for byte, and stdin is the command's.
    let output = run(
        &["run", "--", "sh", "-c", "cat; printf 'no newline'"],
        b"from stdin\n",
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "from stdin\nno newline");

    // Bytes that are not UTF-8 are counted and kept as U+FFFD, and said.
    let output = run(&["run", "--", "printf", "ok \\377 ok"], b"");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "ok \u{fffd} ok");
    assert!(String::from_utf8_lossy(&output.stderr).contains("not UTF-8"));

    let output = run(&["run", "--", "/nonexistent/command"], b"");
    assert_eq!(output.status.code(), Some(127));
    assert!(output.stdout.is_empty());
}

#[test]
fn the_help_says_what_the_binary_is_its_defaults_and_an_example_a_subcommand() {
    let output = run(&["--help"], b"");
    let help = stdout(&output);
    assert!(
        help.contains("5000 tokens, keep head, o200k_base"),
        "{help}"
    );
    for example in [
        "tool-output-cap mcp ",
        "tool-output-cap check ",
        "tool-output-cap gateway -- claude",
        "tool-output-cap run ",
        "| tool-output-cap cap ",
        "| tool-output-cap count",
    ] {
        assert!(help.contains(example), "{example}: {help}");
    }
    for subcommand in ["mcp", "check", "gateway", "run", "cap", "count"] {
        let output = run(&[subcommand, "--help"], b"");
        let help = stdout(&output);
        assert!(
            help.contains("Example:\n  ") || help.contains("Examples:\n  "),
            "{subcommand}"
        );
    }
    // A manifest may set other defaults: the flags say so, and never a bare figure.
    let output = run(&["cap", "--help"], b"");
    let help = stdout(&output);
    assert!(
        help.contains("[default: the manifest's, else 5000]"),
        "{help}"
    );
    assert!(!help.contains("[default: 5000]"), "{help}");
}
