//! The `[worker.tool_output]` section as data: its keys and values checked once, whether they
//! were read from the manifest or given in code, such as Python's `Limits(...)` arguments.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::ManifestError;
use crate::limit::{Keep, LimitError, ToolLimit};
use crate::limits::ToolOutputLimits;
use crate::share::RateLimitShare;

/// The keys of the section.
const KEYS: [&str; 9] = [
    "default_max_tokens",
    "default_keep",
    "encoding",
    "max_tokens_per_turn",
    "max_tokens_per_request",
    "rate_limit_share",
    "image_tokens",
    "tokenizer_file",
    "per_tool",
];

/// The keys of a tool's table in `per_tool`.
const TOOL_KEYS: &str = "max_tokens, keep or hint";

/// Where a section's values come from, which is what its errors say of where they are.
#[derive(Debug, Clone, Copy)]
pub(super) struct Origin<'a> {
    /// The key the values are under: `["worker", "tool_output"]` in a manifest, none for data
    /// given in code.
    pub(super) under: &'a [&'a str],
    /// The manifest's text, in which a bad value's line and column are found.
    pub(super) text: Option<&'a str>,
    /// The folder a relative `tokenizer_file` is read from.
    pub(super) base: Option<&'a Path>,
}

impl<'a> Origin<'a> {
    /// The limits the section `section` sets.
    pub(super) fn limits(self, section: &'a Table) -> Result<ToolOutputLimits, ManifestError> {
        if let Some(key) = section.keys().find(|key| !KEYS.contains(&key.as_str())) {
            return Err(self.error(
                &[key],
                format!("is not a key of the section: {}", KEYS.join(", ")),
            ));
        }
        let value = |key: &'a str| section.get(key).map(|value| self.value(vec![key], value));
        let mut limits = ToolOutputLimits::default();
        if let Some(max) = value("default_max_tokens") {
            limits.default.max_tokens = max.max_tokens()?;
        }
        if let Some(keep) = value("default_keep") {
            limits.default.keep = keep.keep()?;
        }
        if let Some(encoding) = value("encoding") {
            limits.encoding = encoding.encoding()?;
        }
        if let Some(max) = value("max_tokens_per_turn") {
            limits.max_tokens_per_turn = Some(max.max_tokens()?);
        }
        if let Some(max) = value("max_tokens_per_request") {
            limits.max_tokens_per_request = Some(max.max_tokens()?);
        }
        if let Some(share) = value("rate_limit_share") {
            limits.rate_limit_share = Some(share.share()?);
        }
        if let Some(rule) = value("image_tokens") {
            limits.image_tokens = rule.named(r#""anthropic", "openai" or "gemini""#)?;
        }
        if let Some(file) = value("tokenizer_file") {
            if section.contains_key("encoding") {
                return Err(file.error(
                    "cannot be given with `encoding`: tokens are counted in one vocabulary"
                        .to_owned(),
                ));
            }
            limits = file.tokenizer_file(limits)?;
        }
        if let Some(per_tool) = value("per_tool") {
            for (tool, limit) in per_tool.table()? {
                let limit = per_tool.inner(tool, limit).tool_limit(&limits.default)?;
                limits.per_tool.insert(tool.clone(), limit);
            }
        }
        Ok(limits)
    }

    /// `value`, at `path` under the section's key, to check.
    pub(super) fn value(self, path: Vec<&'a str>, value: &'a Value) -> Checked<'a> {
        Checked {
            origin: self,
            path,
            value,
        }
    }

    /// The error `message` of the value at `path` under the section's key: its key, and its
    /// line and column when it was read from a text.
    fn error(&self, path: &[&str], message: String) -> ManifestError {
        let full: Vec<&str> = self.under.iter().chain(path).copied().collect();
        let at = self
            .text
            .and_then(|text| Some(ManifestError::at(text, offset_of(text, &full)?)));
        ManifestError {
            key: Some(full.join(".")),
            message,
            ..at.unwrap_or_default()
        }
    }
}

/// A value of the section, with its key, to check.
pub(super) struct Checked<'a> {
    origin: Origin<'a>,
    path: Vec<&'a str>,
    value: &'a Value,
}

impl<'a> Checked<'a> {
    fn error(&self, message: String) -> ManifestError {
        self.origin.error(&self.path, message)
    }

    /// What [`ToolLimit`] says of this value, with its key.
    fn checked<T>(&self, checked: Result<T, LimitError>) -> Result<T, ManifestError> {
        checked.map_err(|e| self.error(e.to_string()))
    }

    /// The value `value` of this table's `key`.
    fn inner(&self, key: &'a str, value: &'a Value) -> Checked<'a> {
        let mut path = self.path.clone();
        path.push(key);
        self.origin.value(path, value)
    }

    /// This value as a table.
    pub(super) fn table(&self) -> Result<&'a Table, ManifestError> {
        self.value.as_table().ok_or_else(|| {
            let found = match self.value {
                Value::Array(_) => "array".to_owned(),
                other => found(other),
            };
            self.error(format!("must be a table, found {found}"))
        })
    }

    fn max_tokens(&self) -> Result<usize, ManifestError> {
        match self.value {
            Value::Integer(n) => self.checked(ToolLimit::budget(*n)),
            other => Err(self.error(format!(
                "must be a whole number of tokens, found {}",
                found(other)
            ))),
        }
    }

    fn share(&self) -> Result<RateLimitShare, ManifestError> {
        let share = match self.value {
            Value::Float(share) => *share,
            Value::Integer(share) => *share as f64,
            other => {
                return Err(self.error(format!(
                    "must be a fraction over 0 and at most 1, found {}",
                    found(other)
                )))
            }
        };
        RateLimitShare::new(share).map_err(|e| self.error(e.to_string()))
    }

    fn keep(&self) -> Result<Keep, ManifestError> {
        self.named("\"head\", \"tail\" or \"head_tail\"")
    }

    fn encoding(&self) -> Result<crate::Encoding, ManifestError> {
        self.named("\"o200k_base\" or \"cl100k_base\"")
    }

    /// This value as one of the names `names` says.
    fn named<T: std::str::FromStr>(&self, names: &str) -> Result<T, ManifestError> {
        match self.value.as_str().and_then(|name| name.parse().ok()) {
            Some(named) => Ok(named),
            None => Err(self.error(format!("must be {names}, found {}", self.value))),
        }
    }

    /// `limits` counting with the tokenizer file this value names, relative to the origin's
    /// folder.
    fn tokenizer_file(&self, limits: ToolOutputLimits) -> Result<ToolOutputLimits, ManifestError> {
        let Some(path) = self.value.as_str() else {
            return Err(self.error(format!(
                "must be the path of a tokenizer.json, found {}",
                found(self.value)
            )));
        };
        let path = self
            .origin
            .base
            .map_or_else(|| PathBuf::from(path), |base| base.join(path));
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
            None => Err(self.error(format!("must be a string, found {}", found(self.value)))),
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
                    return Err(value.error(format!("is not a key of a tool's limit: {TOOL_KEYS}")))
                }
            };
        }
        Ok(limit)
    }
}

/// What `value` is, for an error: its type, and the value when it is short.
fn found(value: &Value) -> String {
    match value {
        Value::Table(_) => value.type_str().to_owned(),
        other => format!("{} {other}", other.type_str()),
    }
}

/// Where the value at the key `path` lies in the TOML `text`.
fn offset_of(text: &str, path: &[&str]) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let document = DeTable::parse(text).ok()?;
    let mut table = document.get_ref();
    let mut offset = None;
    for key in path {
        let (_, value) = table.iter().find(|(name, _)| name.get_ref() == key)?;
        offset = Some(value.span().start);
        match value.get_ref() {
            DeValue::Table(inner) => table = inner,
            _ => break,
        }
    }
    offset
}
