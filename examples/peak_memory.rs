//! Peak memory of capping a 50 MB tool output, against the memory the process held before.
//!
//! ```text
//! cargo build --release --example peak_memory && /usr/bin/time -v target/release/examples/peak_memory [KIND]
//! cargo build --release --features bpe-openai --example peak_memory && /usr/bin/time -v target/release/examples/peak_memory [KIND]
//! ```
//!
//! With `--features hf`, a second argument names a tokenizer.json to count with instead.
//!
//! KIND is the output: `generated` (a generated listing of relative paths, the default), this
//! machine's `find /usr -type f` as `absolute`, `relative` or `windows` paths, `grep` output
//! (`grep -rnI return /usr/include`), or `json`, minified on a single line.
//!
//! Linux only: it resets its peak resident set size (VmHWM) through /proc/self/clear_refs once
//! the output is made, and reads it from /proc/self/status.

#[path = "../tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::convert::Infallible;

use serde_json::json;
use tool_output_cap::{ToolCall, ToolOutput, ToolOutputCapLayer, ToolOutputLimits};
use tower::{service_fn, Layer, ServiceExt};

/// The peak resident set size of this process so far, in MiB.
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .unwrap_or(f64::NAN);
    kb / 1024.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    const BYTES: usize = 50_000_000;
    let kind = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "generated".to_owned());
    let listing = match kind.as_str() {
        "generated" => corpus::listing_of(BYTES),
        "json" => corpus::minified_json(BYTES),
        name => {
            let Some(real) = corpus::RealListing::ALL
                .into_iter()
                .find(|k| k.name() == name)
            else {
                eprintln!(
                    "unknown kind {name:?}: generated, absolute, relative, windows, grep or json"
                );
                std::process::exit(2);
            };
            real.of(BYTES).unwrap_or_else(|why| {
                eprintln!("cannot make the {name} listing: {why}");
                std::process::exit(1);
            })
        }
    };
    let limits = ToolOutputLimits::default();
    #[cfg(feature = "hf")]
    let limits = match std::env::args().nth(2) {
        Some(file) => limits.with_tokenizer_file(&file).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        }),
        None => limits,
    };
    let layer = ToolOutputCapLayer::new(limits);
    let input_mib = listing.len() as f64 / (1024.0 * 1024.0);
    let mut output = Some(ToolOutput::new(listing));
    // The tool hands its output over; nothing here copies it.
    let tool = service_fn(move |_: ToolCall| {
        std::future::ready(Ok::<_, Infallible>(output.take().unwrap_or_default()))
    });
    // Start the peak afresh, so that making the output does not hide what capping adds.
    if let Err(e) = std::fs::write("/proc/self/clear_refs", "5") {
        eprintln!(
            "cannot reset the peak ({e}): the peak before capping includes making the output"
        );
    }
    let before = peak_mib();
    let capped = layer
        .layer(tool)
        .oneshot(ToolCall::new("Glob", json!({ "pattern": "*" })))
        .await
        .unwrap_or_else(|never| match never {});
    let after = peak_mib();
    let truncation = capped.truncation.expect("50 MB is over 5000 tokens");
    println!("tokenizer: {:?}", layer.tokenizer());
    println!(
        "capped {input_mib:.1} MiB of {kind} output ({} tokens) to {} tokens",
        truncation.original_tokens, truncation.max_tokens
    );
    println!("resident before capping: {before:.1} MiB (the tokenizer and the output)");
    println!(
        "peak after capping:  {after:.1} MiB, {:.1} MiB more: {:.0}% of the output",
        after - before,
        (after - before) / input_mib * 100.0
    );
}
