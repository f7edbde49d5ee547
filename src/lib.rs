//! A [Tower](https://docs.rs/tower) layer that caps every LLM tool output to a token budget
//! before it reaches the history.
//!
//! Tools return whatever they are asked for: a Glob of `*` over a large project is 125 KB, more
//! than a 30k tokens-per-minute rate limit allows in one request, and since the history is sent
//! again on every retry, the session never recovers. [`ToolOutputCapLayer`] sits at the one place
//! every tool output passes: it counts the output's tokens with a real tokenizer (OpenAI's
//! vocabularies with tiktoken-rs or bpe-openai, or a model's own `tokenizer.json`), and cuts one
//! over its limit to fit, ending it with the line
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
//!
//! # What a cut keeps
//!
//! - **`head`** (the default): the start, for listings and searches; then the note.
//! - **`tail`**: the end, for build and test logs, whose errors come last; then the note.
//! - **`head_tail`**: both ends, half the budget each (what the head leaves goes to the tail), with
//!   the line `[... cut here ...]` where the middle was; then the note.
//!
//! The marker and the note are lines of their own, after a newline unless what comes before them
//! already ends with one: `last kept line\ntruncated: ...`, never a blank line between.
//! When what is kept leaves a Markdown code fence open (a page snapshot's ```` ```yaml ````), a line
//! that closes it comes before the note, so that the note is not read as code.
//! In every strategy the note is the last line, the whole is within the limit, `N` is the original
//! count less the kept parts' own counts, and [`Truncation::keep`] says which strategy applied.
//!
//! **Line edges.** A cut that falls inside a line moves to the line's edge (the end of the last whole
//! line of a head, the start of the first whole line of a tail) when that gives up no more than an
//! eighth of the part's budget. So a listing never ends on half a path as long as a path is at most
//! an eighth of the budget (with `head_tail`, of half of it): under the default 5000 tokens, paths of
//! up to 600 tokens. A line longer than that (a 100 KB minified script) is still cut inside.
//!
//! **Hints.** A tool's `hint` ends its note after a colon:
//! `truncated: 36525 tokens dropped, refine your query: use a narrower pattern, e.g. src/**/*.rs`,
//! still within the limit.
//!
//! **Errors.** When a tool fails with this crate's [`ToolError`] (or a `tower::BoxError` holding one),
//! its message is capped with its tool's limit and hint, keeping the end, where compilers and stack
//! traces say what went wrong; [`ToolError::truncation`] says how, and it stays an error. Other error
//! types pass through untouched.
//!
//! **Turns.** [`Worker::run_turn`] runs the calls of one model turn together and records their results
//! in the order of the calls. With `max_tokens_per_turn`, the results together, notes included,
//! stay within it: each is held to its tool's limit, and if they are still over the turn's budget,
//! it is shared by water-filling: every result within an equal share is kept whole, and the others
//! are cut to the one largest share that makes them all fit (each still within its tool's limit,
//! errors included). No share is under 32 tokens, so a turn of more than `max_tokens_per_turn / 32`
//! calls can go over it.
//!
//! `cargo run --example turn` runs such a turn (Glob, a build log, a file read and a failing
//! test) under the manifest in `examples/turn.rs`, with a 6000-token turn budget, and prints what
//! enters the history: four results of about 1500 tokens each, 5977 tokens in all.
//!
//! # Where the rest is
//!
//! The manifest's keys are under [`Manifest`]; a limit, valid by construction, is a
//! [`ToolLimit`]; where to cut is [`cut`] (and [`cut_leaving_room`] for an output that ends with
//! a suffix), cutting is [`cap`]. A structured result is cut to valid JSON of the same shape, or
//! said to fit no such cut and cut as text, by [`json::cap_json`]. The shapes results travel in
//! are in [`wire`]: an MCP `CallToolResult`, and the tool results of a request to a model API,
//! where a host's built-in tools' results and a history already too big meet the model. A turn's
//! limits are [`ToolOutputLimits::limits_for_turn`]. Counting in another model's tokens is
//! [`Tokenizer`] (and `HfTokenizer` with the `hf` feature), given once to the limits
//! ([`ToolOutputLimits::with_tokenizer`]). An output read in parts, as from a pipe, is counted
//! by [`TokenCount`] and cut by [`StreamedOutput`], which hold only what a cut keeps. The
//! repository's `docs/guarantees.md` names the tests that hold each promise, and
//! `benches/README.md` the figures.

#![forbid(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub
)]

mod cap;
mod fence;
pub mod future;
mod image;
pub mod json;
mod layer;
mod layout;
mod limit;
mod limits;
mod manifest;
pub mod media;
mod name;
mod plan;
mod scale;
mod search;
mod service;
mod share;
mod stream;
mod tokenizer;
mod tool;
mod truncate;
mod truncation;
pub mod wire;
mod worker;

pub use cap::{cap, cut, cut_leaving_room};
pub use image::{Detail, ImageTokens};
pub use layer::ToolOutputCapLayer;
pub use layout::{line_break_after, note, Cut, CUT_MARKER};
pub use limit::{Keep, LimitError, Outcome, ToolLimit};
pub use limits::ToolOutputLimits;
pub use manifest::{Manifest, ManifestError, WorkerManifest};
pub use media::{Media, MediaKind};
pub use name::UnknownName;
pub use scale::FLOOR_LONG_EDGE;
pub use service::ToolOutputCap;
pub use share::{RateLimitShare, ShareError};
pub use stream::{StreamedOutput, TokenCount};
#[cfg(feature = "bpe-openai")]
pub use tokenizer::BpeOpenai;
pub use tokenizer::{Encoding, Prefix, Tiktoken, Tokenizer};
#[cfg(feature = "hf")]
pub use tokenizer::{HfTokenizer, TokenizerFileError};
pub use tool::{ToolCall, ToolError, ToolOutput};
pub use truncation::Truncation;
pub use worker::{BoxTool, HistoryEntry, Worker, WorkerBuilder};
