//! One model turn of four parallel tool calls through the worker, under a per-turn budget:
//! a Glob listing (head, with a hint), a build log (tail), a file read (head and tail) and a
//! failing test run (an error, capped keeping its end).
//!
//! ```text
//! cargo run --example turn
//! ```

use serde_json::json;
use tool_output_cap::{Manifest, ToolCall, ToolError, ToolOutput, Worker, CUT_MARKER};
use tower::service_fn;

const MANIFEST: &str = r#"
[worker.tool_output]
default_max_tokens = 5000
default_keep = "head"
max_tokens_per_turn = 6000

[worker.tool_output.per_tool]
Glob = { max_tokens = 3000, hint = "use a narrower pattern, e.g. src/**/*.rs" }
Bash = { max_tokens = 4000, keep = "tail" }
Read = { max_tokens = 8000, keep = "head_tail" }
Test = 2000
"#;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_ansi(false)
        .with_target(false)
        .without_time()
        .init();
    let manifest = Manifest::from_toml_str(MANIFEST)?;
    let limits = manifest.worker.limits();
    let tokenizer = limits.encoding().tokenizer();

    let mut worker = Worker::builder(&manifest.worker)
        .tool(
            "Glob",
            service_fn(|_: ToolCall| async { Ok(ToolOutput::new(listing())) }),
        )
        .tool(
            "Bash",
            service_fn(|_: ToolCall| async { Ok(ToolOutput::new(build_log())) }),
        )
        .tool(
            "Read",
            service_fn(|_: ToolCall| async { Ok(ToolOutput::new(source_file())) }),
        )
        .tool(
            "Test",
            service_fn(|_: ToolCall| async {
                Err::<ToolOutput, _>(ToolError::new(test_failure()))
            }),
        )
        .build();

    let calls = vec![
        ToolCall::new("Glob", json!({ "pattern": "*" })),
        ToolCall::new("Bash", json!({ "command": "cargo build" })),
        ToolCall::new("Read", json!({ "path": "src/parser.rs" })),
        ToolCall::new("Test", json!({ "command": "cargo test" })),
    ];
    let entries = worker.run_turn(calls).await;

    println!(
        "\nturn budget: {} tokens",
        limits.max_tokens_per_turn().unwrap_or(0)
    );
    let mut total = 0;
    for entry in entries {
        let (kind, text, truncation) = match &entry.result {
            Ok(output) => ("output", &output.content, output.truncation),
            Err(error) => ("error", &error.message, error.truncation),
        };
        let tokens = tokenizer.count(text);
        total += tokens;
        println!(
            "\n== {} {kind}: {tokens} tokens in the history",
            entry.call.name
        );
        if let Some(t) = truncation {
            println!(
                "   kept {} of {} tokens ({}), cut to {}",
                t.kept_tokens, t.original_tokens, t.keep, t.max_tokens
            );
        }
        print_excerpt(text);
    }
    println!("\n{total} tokens entered the history in all");
    Ok(())
}

/// The first two and last three lines of `text`, and the lines around the head-tail marker.
fn print_excerpt(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    let mut shown: Vec<usize> = (0..2)
        .chain(lines.len().saturating_sub(3)..lines.len())
        .collect();
    if let Some(marker) = lines.iter().position(|&line| line == CUT_MARKER) {
        shown.extend(marker - 1..=marker + 1);
    }
    shown.sort_unstable();
    shown.dedup();
    for (i, &at) in shown.iter().enumerate() {
        if i > 0 && at > shown[i - 1] + 1 {
            println!("   ~");
        }
        println!("   | {}", lines[at]);
    }
}

fn listing() -> String {
    (0..3000)
        .map(|i| format!("crates/app/src/module_{:02}/file_{i}.rs\n", i % 60))
        .collect()
}

fn build_log() -> String {
    let mut log: String = (0..2500)
        .map(|i| format!("   Compiling dependency_{i} v0.{}.0\n", i % 9))
        .collect();
    log.push_str("error[E0308]: mismatched types\n  --> src/parser.rs:42:17\n   |\n42 |     let n: u32 = \"forty-two\";\n   |            ---   ^^^^^^^^^^^ expected `u32`, found `&str`\n\nerror: could not compile `app` (lib) due to 1 previous error\n");
    log
}

fn source_file() -> String {
    let mut file = String::from("//! The parser.\n\nuse std::str::Chars;\n\n");
    file.extend((0..4000).map(|i| format!("fn rule_{i}(input: &mut Chars<'_>) -> Option<u32> {{ input.next().map(|c| c as u32 + {i}) }}\n")));
    file.push_str("\npub fn parse(input: &str) -> Vec<u32> {\n    todo!()\n}\n");
    file
}

fn test_failure() -> String {
    let mut out: String = (0..3000)
        .map(|i| format!("test parser::tests::case_{i} ... ok\n"))
        .collect();
    out.push_str("test parser::tests::forty_two ... FAILED\n\nthread 'parser::tests::forty_two' panicked at src/parser.rs:88:5:\nassertion `left == right` failed\n  left: 41\n right: 42\n");
    out
}
