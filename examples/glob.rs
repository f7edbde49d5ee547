//! The incident, replayed: a Glob tool asked for `*` returns a whole project, and the layer caps
//! it before it reaches the history.
//!
//! ```text
//! cargo run --example glob                 # a generated listing of about 125 KB
//! cargo run --example glob -- DIR          # a real directory, listed recursively
//! cargo run --example glob -- --manifest agent.toml [DIR]
//! cargo run --example glob --features hf -- --manifest qwen.toml DIR   # tokenizer_file = ...
//! ```

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;
use tool_output_cap::{
    Encoding, Manifest, ToolCall, ToolError, ToolOutput, ToolOutputCapLayer, WorkerBuilder,
};
use tower::service_fn;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_ansi(std::io::stdout().is_terminal())
        .with_target(false)
        .without_time()
        .init();

    let (manifest, root) = match args() {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };

    // A Glob tool that returns everything it is asked for, as real ones do.
    let glob = service_fn(|call: ToolCall| async move {
        let listing = match call.arguments["path"].as_str() {
            Some(root) => list(Path::new(root))?,
            None => generated_listing(),
        };
        Ok::<_, ToolError>(ToolOutput::new(listing))
    });
    let limits = manifest.worker.limits();
    let cap = ToolOutputCapLayer::new(limits.clone());
    let tokenizer = cap.tokenizer();
    let o200k = Encoding::O200kBase.tokenizer();
    let mut worker = WorkerBuilder::new(cap.clone()).tool("Glob", glob).build();

    let arguments = match &root {
        Some(root) => json!({ "pattern": "*", "path": root }),
        None => json!({ "pattern": "*" }),
    };
    let entry = worker.call(ToolCall::new("Glob", arguments)).await;
    let output = match &entry.result {
        Ok(output) => output,
        Err(error) => {
            eprintln!("error: the Glob tool failed: {error}");
            return ExitCode::FAILURE;
        }
    };

    println!();
    match &root {
        Some(root) => println!("Glob(pattern: \"*\") over {root}"),
        None => println!(
            "Glob(pattern: \"*\") over a generated project listing of {} bytes",
            generated_listing().len()
        ),
    }
    println!(
        "limit for Glob: {} tokens, counted with {tokenizer:?}",
        limits.max_tokens_for("Glob"),
    );
    let after = (tokenizer.count(&output.content), output.content.len());
    match output.truncation {
        Some(truncation) => println!(
            "before: {} tokens | after: {} tokens, {} bytes ({} tokens kept + the note)",
            truncation.original_tokens, after.0, after.1, truncation.kept_tokens
        ),
        None => println!(
            "{} tokens, {} bytes: within the limit, passed through untouched",
            after.0, after.1
        ),
    }
    if !std::ptr::addr_eq(tokenizer, o200k) {
        let listing = match &root {
            Some(root) => list(Path::new(root)).unwrap_or_default(),
            None => generated_listing(),
        };
        println!(
            "in o200k_base tokens: before {} | after {}",
            o200k.count(&listing),
            o200k.count(&output.content)
        );
    }
    println!();
    println!("last lines of what went into the history:");
    let lines: Vec<&str> = output.content.lines().collect();
    for line in &lines[lines.len().saturating_sub(4)..] {
        println!("  | {line}");
    }
    ExitCode::SUCCESS
}

/// `[--manifest FILE] [DIR]`
fn args() -> Result<(Manifest, Option<String>), String> {
    let mut manifest = Manifest::default();
    let mut root = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--manifest" {
            let path = args.next().ok_or("--manifest needs a file")?;
            manifest = Manifest::from_path(&path).map_err(|e| e.to_string())?;
        } else if root.is_none() {
            root = Some(arg);
        } else {
            return Err(format!(
                "unexpected argument {arg:?}; usage: glob [--manifest FILE] [DIR]"
            ));
        }
    }
    Ok((manifest, root))
}

/// Every file under `root`, one relative path a line, sorted, as Glob `*` would list them.
fn list(root: &Path) -> Result<String, ToolError> {
    let mut paths = Vec::new();
    let mut dirs = vec![PathBuf::from(root)];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| ToolError::new(format!("cannot list {}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => dirs.push(path),
                Ok(_) => paths.push(path),
                Err(_) => {}
            }
        }
    }
    let mut lines: Vec<String> = paths
        .iter()
        .map(|path| {
            path.strip_prefix(root)
                .unwrap_or(path)
                .display()
                .to_string()
        })
        .collect();
    lines.sort();
    Ok(lines.join("\n"))
}

/// About 125 KB of paths: a Rust workspace with its build output and vendored front-end code.
fn generated_listing() -> String {
    let mut lines = Vec::new();
    for krate in ["core", "api", "worker", "cli", "storage", "proto"] {
        for module in 0..60 {
            lines.push(format!("crates/{krate}/src/module_{module:02}/mod.rs"));
            lines.push(format!("crates/{krate}/src/module_{module:02}/tests.rs"));
        }
    }
    for hash in 0..1200u32 {
        let hash = hash.wrapping_mul(2_654_435_761);
        lines.push(format!(
            "target/debug/deps/libdependency_{:04}-{hash:08x}.rlib",
            hash % 997
        ));
    }
    for package in 0..800 {
        lines.push(format!(
            "web/node_modules/package-{package}/dist/index.min.js"
        ));
    }
    lines.join("\n")
}
