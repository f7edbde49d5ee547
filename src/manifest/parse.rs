//! Reading `[worker.tool_output]` from TOML, each value checked where it is written.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::ManifestError;
use crate::limit::{Keep, LimitError, ToolLimit};
use crate::limits::ToolOutputLimits;
use crate::tokenizer::Encoding;

/// The `[worker.tool_output]` section of the manifest `text`, if it has one, with a relative
/// `tokenizer_file` read from the folder `base`.
pub(super) fn tool_output(
    text: &str,
    base: Option<&Path>,
) -> Result<Option<ToolOutputLimits>, ManifestError> {
    let raw: RawManifest = toml::from_str(text).map_err(|e| {
        let (key, message) =
            not_a_table(e.message()).unwrap_or_else(|| (None, e.message().to_owned()));
        ManifestError {
            key,
            message,
            ..ManifestError::at(text, e.span().map_or(0, |span| span.start))
        }
    })?;
    raw.worker
        .and_then(|worker| worker.tool_output)
        .map(|raw| raw.validate(text, base))
        .transpose()
}

#[derive(Deserialize)]
struct RawManifest {
    worker: Option<RawWorker>,
}

// What serde expects of a table is said as `a table at `key``, which `not_a_table` reads back.
#[derive(Deserialize)]
#[serde(expecting = "a table at `worker`")]
struct RawWorker {
    tool_output: Option<RawLimits>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table at `worker.tool_output`")]
struct RawLimits {
    default_max_tokens: Option<Spanned<toml::Value>>,
    default_keep: Option<Spanned<toml::Value>>,
    encoding: Option<Spanned<toml::Value>>,
    max_tokens_per_turn: Option<Spanned<toml::Value>>,
    tokenizer_file: Option<Spanned<toml::Value>>,
    #[serde(default)]
    per_tool: PerTool,
}

/// `[worker.tool_output.per_tool]`: each tool's value with its place in the text.
#[derive(Default)]
struct PerTool(BTreeMap<String, Spanned<toml::Value>>);

impl<'de> Deserialize<'de> for PerTool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = PerTool;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table at `worker.tool_output.per_tool`")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<PerTool, A::Error> {
                let mut per_tool = BTreeMap::new();
                while let Some((tool, limit)) = map.next_entry()? {
                    per_tool.insert(tool, limit);
                }
                Ok(PerTool(per_tool))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The key and the message of serde's "invalid type: integer `5`, expected a table at `key`".
fn not_a_table(message: &str) -> Option<(Option<String>, String)> {
    let (found, key) = message
        .strip_prefix("invalid type: ")?
        .split_once(", expected a table at `")?;
    let key = key.strip_suffix('`')?;
    let found = match found {
        "sequence" => "array".to_owned(),
        found => found.replace('`', ""),
    };
    Some((
        Some(key.to_owned()),
        format!("must be a table, found {found}"),
    ))
}

impl RawLimits {
    fn validate(self, text: &str, base: Option<&Path>) -> Result<ToolOutputLimits, ManifestError> {
        let value = |key: &str, value| Value::new(text, key, value);
        let mut limits = ToolOutputLimits::default();
        if let Some(max) = &self.default_max_tokens {
            limits.default.max_tokens = value("default_max_tokens", max).max_tokens()?;
        }
        if let Some(keep) = &self.default_keep {
            limits.default.keep = value("default_keep", keep).keep()?;
        }
        if let Some(encoding) = &self.encoding {
            limits.encoding = value("encoding", encoding).encoding()?;
        }
        if let Some(max) = &self.max_tokens_per_turn {
            limits.max_tokens_per_turn = Some(value("max_tokens_per_turn", max).max_tokens()?);
        }
        if let Some(file) = &self.tokenizer_file {
            let file = value("tokenizer_file", file);
            if self.encoding.is_some() {
                return Err(file.error(
                    "cannot be given with `encoding`: tokens are counted in one vocabulary"
                        .to_owned(),
                ));
            }
            limits = file.tokenizer_file(limits, base)?;
        }
        for (tool, limit) in &self.per_tool.0 {
            let limit = value(&format!("per_tool.{tool}"), limit).tool_limit(&limits.default)?;
            limits.per_tool.insert(tool.clone(), limit);
        }
        Ok(limits)
    }
}

/// A value of `[worker.tool_output]`, to check.
struct Value<'a> {
    text: &'a str,
    key: String,
    value: &'a toml::Value,
    at: usize,
}

impl<'a> Value<'a> {
    /// `value` of `key` in `text`.
    fn new(text: &'a str, key: &str, value: &'a Spanned<toml::Value>) -> Self {
        Value {
            text,
            key: key.to_owned(),
            value: value.get_ref(),
            at: value.span().start,
        }
    }

    fn error(&self, message: String) -> ManifestError {
        ManifestError {
            key: Some(format!("worker.tool_output.{}", self.key)),
            message,
            ..ManifestError::at(self.text, self.at)
        }
    }

    fn inner<'b>(&'b self, key: &str, value: &'b toml::Value) -> Value<'b> {
        Value {
            text: self.text,
            key: format!("{}.{key}", self.key),
            value,
            at: self.at,
        }
    }

    /// What `ToolLimit` says of this value, where it is.
    fn checked<T>(&self, checked: Result<T, LimitError>) -> Result<T, ManifestError> {
        checked.map_err(|e| self.error(e.to_string()))
    }

    fn max_tokens(&self) -> Result<usize, ManifestError> {
        match self.value {
            toml::Value::Integer(n) => self.checked(ToolLimit::budget(*n)),
            other => Err(self.error(format!(
                "must be a whole number of tokens, found {} {other}",
                other.type_str()
            ))),
        }
    }

    fn keep(&self) -> Result<Keep, ManifestError> {
        match self.value.as_str().and_then(|name| name.parse().ok()) {
            Some(keep) => Ok(keep),
            None => Err(self.error(format!(
                "must be \"head\", \"tail\" or \"head_tail\", found {}",
                self.value
            ))),
        }
    }

    fn encoding(&self) -> Result<Encoding, ManifestError> {
        match self.value.as_str().and_then(|name| name.parse().ok()) {
            Some(encoding) => Ok(encoding),
            None => Err(self.error(format!(
                "must be \"o200k_base\" or \"cl100k_base\", found {}",
                self.value
            ))),
        }
    }

    /// `limits` counting with the tokenizer file this value names, relative to `base`.
    fn tokenizer_file(
        &self,
        limits: ToolOutputLimits,
        base: Option<&Path>,
    ) -> Result<ToolOutputLimits, ManifestError> {
        let Some(path) = self.value.as_str() else {
            return Err(self.error(format!(
                "must be the path of a tokenizer.json, found {} {}",
                self.value.type_str(),
                self.value
            )));
        };
        let path = base.map_or_else(|| PathBuf::from(path), |base| base.join(path));
        #[cfg(feature = "hf")]
        return limits
            .with_tokenizer_file(&path)
            .map_err(|e| self.error(e.to_string()));
        #[cfg(not(feature = "hf"))]
        {
            let _ = limits;
            Err(self.error(format!(
                "names {}, but this build cannot read tokenizer files: build with the `hf` \
                 feature, or count in `encoding` instead",
                path.display()
            )))
        }
    }

    /// `limit` with this value as its hint.
    fn hint(&self, limit: ToolLimit) -> Result<ToolLimit, ManifestError> {
        match self.value.as_str() {
            Some(hint) => self.checked(limit.with_hint(hint)),
            None => Err(self.error(format!(
                "must be a string, found {} {}",
                self.value.type_str(),
                self.value
            ))),
        }
    }

    /// A number, or a table of `max_tokens`, `keep` and `hint`; what it leaves out is
    /// `default`'s.
    fn tool_limit(&self, default: &ToolLimit) -> Result<ToolLimit, ManifestError> {
        // The default's budget and keep; a hint is a tool's own.
        let without_hint = ToolLimit {
            hint: None,
            ..default.clone()
        };
        let Some(table) = self.value.as_table() else {
            return self.checked(without_hint.with_max_tokens(self.max_tokens()?));
        };
        let mut limit = without_hint;
        for (key, value) in table {
            let value = self.inner(key, value);
            limit = match key.as_str() {
                "max_tokens" => value.checked(limit.with_max_tokens(value.max_tokens()?))?,
                "keep" => limit.with_keep(value.keep()?),
                "hint" => value.hint(limit)?,
                _ => {
                    return Err(value.error(
                        "is not a key of a tool's limit: max_tokens, keep or hint".to_owned(),
                    ))
                }
            };
        }
        Ok(limit)
    }
}
