//! The `[worker.tool_output]` section of the manifest: the agent's file, read into
//! [`ToolOutputLimits`].

use std::path::Path;

use serde::Deserialize;

use crate::limits::ToolOutputLimits;

mod error;
mod section;

pub use error::ManifestError;
use section::Origin;

/// The agent's manifest, of which this crate reads `[worker]`.
///
/// Other tables and other keys under `[worker]` belong to the rest of the agent and are left alone.
/// The section this crate reads, with every key:
///
/// ```toml
/// [worker.tool_output]
/// default_max_tokens = 5000   # every tool's limit, note included; 5000 when omitted
/// default_keep = "head"       # what a cut keeps: "head", "tail" or "head_tail"; "head" when omitted
/// encoding = "o200k_base"     # the vocabulary: "o200k_base" (default) or "cl100k_base"
/// max_tokens_per_turn = 20000 # the outputs of one turn together; no turn budget when omitted
/// max_tokens_per_request = 24000 # the tool results of one model API request together; none when omitted
/// rate_limit_share = 0.5      # of the provider's per-minute input-token limit, for them; none when omitted
/// image_tokens = "anthropic"  # how an image in a result is priced: "anthropic" (default), "openai" or "gemini"
///
/// # Per-tool overrides, by registered tool name: a number, or a table.
/// [worker.tool_output.per_tool]
/// Read = 8000
/// Grep = 3000
/// Bash = { max_tokens = 6000, keep = "tail" }
/// Glob = { max_tokens = 3000, hint = "use a narrower pattern, e.g. src/**/*.rs" }
///
/// [worker.tool_output.per_tool.Test]   # the same table, written out
/// max_tokens = 4000
/// keep = "head_tail"
/// ```
///
/// | key | default | accepted |
/// | --- | --- | --- |
/// | `default_max_tokens` | 5000 | a whole number, 32 or more |
/// | `default_keep` | `"head"` | `"head"`, `"tail"`, `"head_tail"` |
/// | `encoding` | `"o200k_base"` | `"o200k_base"`, `"cl100k_base"` |
/// | `max_tokens_per_turn` | none | a whole number, 32 or more |
/// | `max_tokens_per_request` | none | a whole number, 32 or more: the tool results of one request to a model API together ([`RequestCap`](crate::wire::RequestCap)) |
/// | `rate_limit_share` | none | a fraction over 0 and at most 1: of the per-minute input-token limit the model API reports, the tool results of one request together ([`RequestCap::cap_within_rate_limit`](crate::wire::RequestCap::cap_within_rate_limit)) |
/// | `image_tokens` | `"anthropic"` | `"anthropic"`, `"openai"`, `"gemini"`: the provider whose rule prices an image in a tool result ([`ImageTokens`](crate::ImageTokens)); a model API's requests are priced by that API's own rule |
/// | `tokenizer_file` | none | the path of a model's `tokenizer.json` (the `hf` feature), not with `encoding`; a relative one is read beside the manifest |
/// | `per_tool.<Tool>` | the defaults | a whole number (32 or more), or a table of the three below |
/// | `per_tool.<Tool>.max_tokens` | `default_max_tokens` | a whole number, 32 or more |
/// | `per_tool.<Tool>.keep` | `default_keep` | `"head"`, `"tail"`, `"head_tail"` |
/// | `per_tool.<Tool>.hint` | none | a string of one line |
///
/// - The section and the map are optional; other tables (`[project]`, `[model]`) and other keys under
///   `[worker]` are left to the rest of the agent.
/// - A limit counts the note too: a capped output is at most `max_tokens` tokens in all. 32 is the
///   least that leaves room for the note and a little of the output. A limit that the note (with
///   `head_tail`, the note and the cut marker) cannot fit in keeps nothing of the output but the
///   note: with `o200k_base` or a real model's tokenizer that takes a long hint, or a tokenizer file
///   with almost no merges.
/// - A `per_tool` name is the tool's own name, as the model calls it, and names are case-sensitive:
///   `Glob` is not a tool named `glob`. A name that no tool has is not an error, but its limit
///   never applies: [`Worker`](crate::Worker) logs a warning naming it when it is built, and
///   [`ToolOutputLimits::warn_of_unmatched_tools`] does the same for any caller that knows its
///   tools' names.
/// - Anything else is a [`ManifestError`] that names the file, line, column and key, and says what is
///   wrong: `agent.toml:4:22: `worker.tool_output.default_max_tokens` must be at least 32 tokens (room
///   for the note), found 10`. That covers strings, negative numbers, floats, zero, limits under 32, an
///   unknown encoding or keep, a hint that is not a string of one line, an unknown key in
///   `[worker.tool_output]` or in a tool's table (a typo such as `default_max_token` is not
///   ignored), malformed TOML, and a file that cannot be read.
/// - The same section given as data, such as Python's `Limits(...)` arguments, is checked by the
///   same rules: [`ToolOutputLimits::from_section`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The `[worker]` table.
    pub worker: WorkerManifest,
}

/// The `[worker]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerManifest {
    /// `[worker.tool_output]`; `None` when the section is omitted, which means the defaults.
    pub tool_output: Option<ToolOutputLimits>,
}

impl WorkerManifest {
    /// The limits in force: those of `[worker.tool_output]`, or the defaults.
    pub fn limits(&self) -> ToolOutputLimits {
        self.tool_output.clone().unwrap_or_default()
    }
}

impl Manifest {
    /// Parses a manifest from TOML text; a relative `tokenizer_file` is read from the current
    /// folder.
    pub fn from_toml_str(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(text, None)
    }

    /// Parses `text`, reading a relative `tokenizer_file` from the folder `base`.
    fn parse(text: &str, base: Option<&Path>) -> Result<Manifest, ManifestError> {
        Ok(Manifest {
            worker: WorkerManifest {
                tool_output: tool_output(text, base)?,
            },
        })
    }

    /// Reads and parses the manifest at `path`; errors name the path, and a relative
    /// `tokenizer_file` is read from the manifest's own folder.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Manifest, ManifestError> {
        let path = path.as_ref();
        let with_path = |e: ManifestError| ManifestError {
            path: Some(path.to_owned()),
            ..e
        };
        let text = std::fs::read_to_string(path).map_err(|source| {
            with_path(ManifestError {
                message: format!("cannot read the manifest: {source}"),
                source: Some(source),
                ..ManifestError::default()
            })
        })?;
        Manifest::parse(&text, path.parent()).map_err(with_path)
    }
}

/// The limits of the `[worker.tool_output]` section of the manifest `text`, if it has one, with
/// a relative `tokenizer_file` read from the folder `base`.
fn tool_output(text: &str, base: Option<&Path>) -> Result<Option<ToolOutputLimits>, ManifestError> {
    let document: toml::Table = toml::from_str(text).map_err(|e| ManifestError {
        message: e.message().to_owned(),
        ..ManifestError::at(text, e.span().map_or(0, |span| span.start))
    })?;
    let root = Origin {
        under: &[],
        text: Some(text),
        base,
    };
    let Some(worker) = document.get("worker") else {
        return Ok(None);
    };
    let worker = root.value(vec!["worker"], worker).table()?;
    let Some(section) = worker.get("tool_output") else {
        return Ok(None);
    };
    let section = root.value(vec!["worker", "tool_output"], section).table()?;
    let origin = Origin {
        under: &["worker", "tool_output"],
        ..root
    };
    origin.limits(section).map(Some)
}

/// The limits a `[worker.tool_output]` section given as data sets:
/// [`ToolOutputLimits::from_section`].
pub(crate) fn limits_of_section<'de, D: serde::Deserializer<'de>>(
    section: D,
) -> Result<ToolOutputLimits, ManifestError> {
    let section = toml::Table::deserialize(section).map_err(|e| ManifestError {
        message: format!("is not a table of the section's keys: {e}"),
        ..ManifestError::default()
    })?;
    let origin = Origin {
        under: &[],
        text: None,
        base: None,
    };
    origin.limits(&section)
}
