//! A [Tower](https://docs.rs/tower) layer that caps every LLM tool output to a token budget
//! before it reaches the history.
//!
//! Tools return whatever they are asked for: a Glob of `*` over a large project is 125 KB, more
//! than a 30k tokens-per-minute rate limit allows in one request, and since the history is sent
//! again on every retry, the session never recovers. [`ToolOutputCapLayer`] sits at the one place
//! every tool output passes: it counts the output's tokens with a real tokenizer (tiktoken-rs),
//! and cuts one over its limit to fit, ending it with the line
//! `truncated: N tokens dropped, refine your query` so that the model narrows its query.
//! A truncation is never an error.
//!
//! Cargo features: `bpe-openai` counts with bpe-openai instead of tiktoken-rs; `hf` counts in a
//! model's own tokens from its Hugging Face `tokenizer.json` (`HfTokenizer`, or
//! `tokenizer_file` in the manifest). The `tool-output-cap` binary, an MCP stdio proxy and shell
//! filters for agent hosts that cannot link this crate, is the crate `tool-output-cap-cli`.
//!
//! # Example
//!
//! ```
//! use tool_output_cap::{Manifest, ToolCall, ToolError, ToolOutput, ToolOutputCapLayer};
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let manifest = Manifest::from_toml_str(
//!     r#"
//!     [worker.tool_output]
//!     default_max_tokens = 5000
//!
//!     [worker.tool_output.per_tool]
//!     Glob = 1000
//!     "#,
//! )?;
//! let cap = ToolOutputCapLayer::new(manifest.worker.limits());
//!
//! let glob = service_fn(|_call: ToolCall| async {
//!     let listing: String = (0..20_000).map(|i| format!("src/module_{i}/mod.rs\n")).collect();
//!     Ok::<_, ToolError>(ToolOutput::new(listing))
//! });
//! let tools = ServiceBuilder::new().layer(cap).service(glob);
//!
//! let output = tools
//!     .oneshot(ToolCall::new("Glob", serde_json::json!({ "pattern": "*" })))
//!     .await?;
//! let truncation = output.truncation.expect("20,000 paths are over 1000 tokens");
//! assert_eq!(truncation.max_tokens, 1000);
//! assert!(output.content.ends_with(&format!(
//!     "\ntruncated: {} tokens dropped, refine your query",
//!     truncation.dropped_tokens
//! )));
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub
)]

mod cap;
pub mod future;
mod layer;
mod manifest;
mod service;
mod tokenizer;
mod tool;
mod truncate;
mod worker;

pub use cap::{cap, cut, note, Cut, Keep, ToolLimit, CUT_MARKER};
pub use layer::ToolOutputCapLayer;
pub use manifest::{Manifest, ManifestError, ToolOutputLimits, WorkerManifest};
pub use service::ToolOutputCap;
#[cfg(feature = "bpe-openai")]
pub use tokenizer::BpeOpenai;
pub use tokenizer::{Encoding, Prefix, Tiktoken, Tokenizer};
#[cfg(feature = "hf")]
pub use tokenizer::{HfTokenizer, TokenizerFileError};
pub use tool::{ToolCall, ToolError, ToolOutput, Truncation};
pub use worker::{BoxTool, HistoryEntry, Worker, WorkerBuilder};
