//! The `[worker.tool_output]` section of the manifest.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::tokenizer::Encoding;

/// The agent's manifest, of which this crate reads `[worker]`.
///
/// Other tables and other keys under `[worker]` belong to the rest of the agent and are left alone.
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

/// Token limits on tool outputs, for every tool and per tool.
///
/// ```toml
/// [worker.tool_output]
/// default_max_tokens = 5000   # every tool; 5000 when omitted
/// encoding = "o200k_base"     # or "cl100k_base"; o200k_base when omitted
///
/// [worker.tool_output.per_tool]
/// Read = 8000
/// Grep = 3000
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutputLimits {
    default_max_tokens: usize,
    per_tool: BTreeMap<String, usize>,
    encoding: Encoding,
}

impl Default for ToolOutputLimits {
    /// 5000 tokens for every tool, counted in `o200k_base`.
    fn default() -> Self {
        ToolOutputLimits {
            default_max_tokens: Self::DEFAULT_MAX_TOKENS,
            per_tool: BTreeMap::new(),
            encoding: Encoding::default(),
        }
    }
}

impl ToolOutputLimits {
    /// The limit of a tool the manifest says nothing about.
    pub const DEFAULT_MAX_TOKENS: usize = 5000;
    /// The smallest limit accepted: room for the note and a little of the output.
    pub const MIN_MAX_TOKENS: usize = 32;

    /// `default_max_tokens` for every tool; an error if it is under [`Self::MIN_MAX_TOKENS`].
    pub fn new(default_max_tokens: usize) -> Result<Self, ManifestError> {
        check_min("default_max_tokens", default_max_tokens)?;
        Ok(ToolOutputLimits {
            default_max_tokens,
            ..Self::default()
        })
    }

    /// Sets the limit of one tool; an error if it is under [`Self::MIN_MAX_TOKENS`].
    pub fn with_tool(
        mut self,
        tool: impl Into<String>,
        max_tokens: usize,
    ) -> Result<Self, ManifestError> {
        let tool = tool.into();
        check_min(&format!("per_tool.{tool}"), max_tokens)?;
        self.per_tool.insert(tool, max_tokens);
        Ok(self)
    }

    /// Counts tokens in `encoding`'s vocabulary.
    #[must_use]
    pub fn with_encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = encoding;
        self
    }

    /// The token limit of `tool`'s outputs, note included.
    pub fn max_tokens_for(&self, tool: &str) -> usize {
        self.per_tool
            .get(tool)
            .copied()
            .unwrap_or(self.default_max_tokens)
    }

    /// The limit of tools without one of their own.
    pub fn default_max_tokens(&self) -> usize {
        self.default_max_tokens
    }

    /// The tools with a limit of their own, by name.
    pub fn per_tool(&self) -> impl Iterator<Item = (&str, usize)> {
        self.per_tool
            .iter()
            .map(|(tool, &max)| (tool.as_str(), max))
    }

    /// The vocabulary tokens are counted in.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

fn check_min(key: &str, max_tokens: usize) -> Result<(), ManifestError> {
    if max_tokens >= ToolOutputLimits::MIN_MAX_TOKENS {
        return Ok(());
    }
    Err(ManifestError {
        key: Some(format!("worker.tool_output.{key}")),
        message: too_small(max_tokens),
        ..ManifestError::default()
    })
}

fn too_small(max_tokens: impl fmt::Display) -> String {
    format!(
        "must be at least {} tokens (room for the note), found {max_tokens}",
        ToolOutputLimits::MIN_MAX_TOKENS
    )
}

impl Manifest {
    /// Parses a manifest from TOML text.
    pub fn from_toml_str(text: &str) -> Result<Manifest, ManifestError> {
        let raw: RawManifest = toml::from_str(text).map_err(|e| ManifestError {
            message: e.message().to_owned(),
            ..ManifestError::at(text, e.span().map_or(0, |span| span.start))
        })?;
        let tool_output = raw
            .worker
            .and_then(|worker| worker.tool_output)
            .map(|raw| raw.validate(text))
            .transpose()?;
        Ok(Manifest {
            worker: WorkerManifest { tool_output },
        })
    }

    /// Reads and parses the manifest at `path`; errors name the path.
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
        Manifest::from_toml_str(&text).map_err(with_path)
    }
}

#[derive(Deserialize)]
struct RawManifest {
    worker: Option<RawWorker>,
}

#[derive(Deserialize)]
struct RawWorker {
    tool_output: Option<RawLimits>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    default_max_tokens: Option<Spanned<toml::Value>>,
    encoding: Option<Spanned<toml::Value>>,
    #[serde(default)]
    per_tool: BTreeMap<String, Spanned<toml::Value>>,
}

impl RawLimits {
    fn validate(self, text: &str) -> Result<ToolOutputLimits, ManifestError> {
        let mut limits = ToolOutputLimits::default();
        if let Some(value) = &self.default_max_tokens {
            limits.default_max_tokens = max_tokens(text, "default_max_tokens", value)?;
        }
        if let Some(value) = &self.encoding {
            limits.encoding = encoding(text, value)?;
        }
        for (tool, value) in &self.per_tool {
            let max = max_tokens(text, &format!("per_tool.{tool}"), value)?;
            limits.per_tool.insert(tool.clone(), max);
        }
        Ok(limits)
    }
}

fn max_tokens(text: &str, key: &str, value: &Spanned<toml::Value>) -> Result<usize, ManifestError> {
    let message = match value.get_ref() {
        toml::Value::Integer(n) => match usize::try_from(*n) {
            Ok(n) if n >= ToolOutputLimits::MIN_MAX_TOKENS => return Ok(n),
            _ => too_small(n),
        },
        other => format!(
            "must be a whole number of tokens, found {} {other}",
            other.type_str()
        ),
    };
    Err(ManifestError::at_key(
        text,
        key,
        value.span().start,
        message,
    ))
}

fn encoding(text: &str, value: &Spanned<toml::Value>) -> Result<Encoding, ManifestError> {
    match value.get_ref().as_str() {
        Some("o200k_base") => Ok(Encoding::O200kBase),
        Some("cl100k_base") => Ok(Encoding::Cl100kBase),
        _ => Err(ManifestError::at_key(
            text,
            "encoding",
            value.span().start,
            format!(
                "must be \"o200k_base\" or \"cl100k_base\", found {}",
                value.get_ref()
            ),
        )),
    }
}

/// A manifest that cannot be read or holds a bad value; says where and what.
#[derive(Debug, Default)]
pub struct ManifestError {
    path: Option<PathBuf>,
    key: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    message: String,
    source: Option<io::Error>,
}

impl ManifestError {
    fn at(text: &str, offset: usize) -> Self {
        let before = text.get(..offset).unwrap_or(text);
        let line_start = before.rfind('\n').map_or(0, |at| at + 1);
        ManifestError {
            line: Some(before.matches('\n').count() + 1),
            column: Some(before[line_start..].chars().count() + 1),
            ..ManifestError::default()
        }
    }

    fn at_key(text: &str, key: &str, offset: usize, message: String) -> Self {
        ManifestError {
            key: Some(format!("worker.tool_output.{key}")),
            message,
            ..ManifestError::at(text, offset)
        }
    }

    /// The manifest file, when it was read with [`Manifest::from_path`].
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The dotted key of the bad value, such as `worker.tool_output.per_tool.Grep`.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The 1-based line of the bad value.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}:", path.display())?;
        }
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, "{line}:{column}:")?;
        }
        if self.path.is_some() || self.line.is_some() {
            f.write_str(" ")?;
        }
        if let Some(key) = &self.key {
            write!(f, "`{key}` ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ManifestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}
