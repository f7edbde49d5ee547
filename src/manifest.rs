//! The `[worker.tool_output]` section of the manifest.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;

use crate::cap::{Cut, Keep, ToolLimit};
#[cfg(feature = "hf")]
use crate::tokenizer::HfTokenizer;
use crate::tokenizer::{Encoding, Tokenizer, TokenizerRef};
use crate::tool::{Outcome, Truncation};
use crate::truncate::cap_text;

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
/// - A `per_tool` name that the worker does not register is not an error: [`Worker`](crate::Worker)
///   logs a warning naming it when it is built.
/// - Anything else is a [`ManifestError`] that names the file, line, column and key, and says what is
///   wrong: `agent.toml:4:22: `worker.tool_output.default_max_tokens` must be at least 32 tokens (room
///   for the note), found 10`. That covers strings, negative numbers, floats, zero, limits under 32, an
///   unknown encoding or keep, a hint that is not a string of one line, an unknown key in
///   `[worker.tool_output]` or in a tool's table (a typo such as `default_max_token` is not
///   ignored), malformed TOML, and a file that cannot be read. A key inside a tool's inline table is
///   reported at the line of the table.
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

/// Token limits on tool outputs, for every tool, per tool, and per turn.
///
/// ```toml
/// [worker.tool_output]
/// default_max_tokens = 5000     # every tool; 5000 when omitted
/// default_keep = "head"         # "head", "tail" or "head_tail"; "head" when omitted
/// encoding = "o200k_base"       # or "cl100k_base"; o200k_base when omitted
/// max_tokens_per_turn = 20000   # all the outputs of one turn; no turn budget when omitted
///
/// [worker.tool_output.per_tool]
/// Read = 8000
/// Bash = { max_tokens = 6000, keep = "head_tail" }
/// Glob = { max_tokens = 3000, hint = "use a narrower pattern, e.g. src/**/*.rs" }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutputLimits {
    default: ToolLimit,
    per_tool: BTreeMap<String, ToolLimit>,
    encoding: Encoding,
    max_tokens_per_turn: Option<usize>,
    #[cfg(feature = "hf")]
    tokenizer_file: Option<TokenizerFile>,
}

/// A loaded `tokenizer.json`, the same as another when it was read from the same path.
#[cfg(feature = "hf")]
#[derive(Debug, Clone)]
struct TokenizerFile(Arc<HfTokenizer>);

#[cfg(feature = "hf")]
impl PartialEq for TokenizerFile {
    fn eq(&self, other: &Self) -> bool {
        self.0.path() == other.0.path()
    }
}

#[cfg(feature = "hf")]
impl Eq for TokenizerFile {}

impl Default for ToolOutputLimits {
    /// 5000 tokens for every tool, keeping the head, counted in `o200k_base`; no turn budget.
    fn default() -> Self {
        ToolOutputLimits {
            default: ToolLimit::new(Self::DEFAULT_MAX_TOKENS),
            per_tool: BTreeMap::new(),
            encoding: Encoding::default(),
            max_tokens_per_turn: None,
            #[cfg(feature = "hf")]
            tokenizer_file: None,
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
            default: ToolLimit::new(default_max_tokens),
            ..Self::default()
        })
    }

    /// Gives tools without a limit of their own `limit`; an error if it is under
    /// [`Self::MIN_MAX_TOKENS`] or its hint is more than one line.
    pub fn with_default_limit(mut self, limit: ToolLimit) -> Result<Self, ManifestError> {
        check_min("default_max_tokens", limit.max_tokens())?;
        if limit.hint().is_some_and(|hint| hint.contains(['\n', '\r'])) {
            return Err(ManifestError {
                message: format!("the default hint {HINT_ON_ONE_LINE}"),
                ..ManifestError::default()
            });
        }
        self.default = limit;
        Ok(self)
    }

    /// Keeps `keep` of the outputs of tools without a limit of their own, and of tools given
    /// one with [`with_tool`](Self::with_tool) afterwards.
    #[must_use]
    pub fn with_default_keep(mut self, keep: Keep) -> Self {
        self.default = self.default.with_keep(keep);
        self
    }

    /// Gives `tool` a limit of `max_tokens`, keeping what the default keeps; an error if it is
    /// under [`Self::MIN_MAX_TOKENS`].
    pub fn with_tool(
        mut self,
        tool: impl Into<String>,
        max_tokens: usize,
    ) -> Result<Self, ManifestError> {
        let tool = tool.into();
        check_min(&format!("per_tool.{tool}"), max_tokens)?;
        let limit = ToolLimit::new(max_tokens).with_keep(self.default.keep());
        self.per_tool.insert(tool, limit);
        Ok(self)
    }

    /// Gives `tool` its own [`ToolLimit`]; an error if it is under [`Self::MIN_MAX_TOKENS`] or
    /// its hint is more than one line.
    pub fn with_tool_limit(
        mut self,
        tool: impl Into<String>,
        limit: ToolLimit,
    ) -> Result<Self, ManifestError> {
        let tool = tool.into();
        check_min(&format!("per_tool.{tool}.max_tokens"), limit.max_tokens())?;
        if limit.hint().is_some_and(|hint| hint.contains(['\n', '\r'])) {
            return Err(ManifestError {
                key: Some(format!("worker.tool_output.per_tool.{tool}.hint")),
                message: HINT_ON_ONE_LINE.to_owned(),
                ..ManifestError::default()
            });
        }
        self.per_tool.insert(tool, limit);
        Ok(self)
    }

    /// Caps the outputs of one turn together to `max_tokens`; an error if it is under
    /// [`Self::MIN_MAX_TOKENS`].
    pub fn with_max_tokens_per_turn(mut self, max_tokens: usize) -> Result<Self, ManifestError> {
        check_min("max_tokens_per_turn", max_tokens)?;
        self.max_tokens_per_turn = Some(max_tokens);
        Ok(self)
    }

    /// Counts tokens in `encoding`'s vocabulary (and with no tokenizer file).
    #[must_use]
    pub fn with_encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = encoding;
        #[cfg(feature = "hf")]
        {
            self.tokenizer_file = None;
        }
        self
    }

    /// The limit of `tool`'s outputs: its own, or the default.
    pub fn limit_for(&self, tool: &str) -> &ToolLimit {
        self.per_tool.get(tool).unwrap_or(&self.default)
    }

    /// The token limit of `tool`'s outputs, note included.
    pub fn max_tokens_for(&self, tool: &str) -> usize {
        self.limit_for(tool).max_tokens()
    }

    /// The limit of tools without one of their own.
    pub fn default_limit(&self) -> &ToolLimit {
        &self.default
    }

    /// The tools with a limit of their own, by name.
    pub fn per_tool(&self) -> impl Iterator<Item = (&str, &ToolLimit)> {
        self.per_tool
            .iter()
            .map(|(tool, limit)| (tool.as_str(), limit))
    }

    /// The budget of all the outputs of one turn together, if there is one.
    pub fn max_tokens_per_turn(&self) -> Option<usize> {
        self.max_tokens_per_turn
    }

    /// The vocabulary tokens are counted in, unless a `tokenizer_file`
    /// is given.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Counts tokens with the model's own tokenizer, from the `tokenizer.json` at `path`, loaded
    /// once per process and path ([`HfTokenizer::shared`]).
    #[cfg(feature = "hf")]
    pub fn with_tokenizer_file(
        mut self,
        path: impl AsRef<Path>,
    ) -> Result<Self, crate::TokenizerFileError> {
        self.tokenizer_file = Some(TokenizerFile(HfTokenizer::shared(path)?));
        Ok(self)
    }

    /// The `tokenizer.json` tokens are counted with, if one is given.
    #[cfg(feature = "hf")]
    pub fn tokenizer_file(&self) -> Option<&Path> {
        self.tokenizer_file.as_ref().map(|file| file.0.path())
    }

    /// The tokenizer these limits count with: the tokenizer file's, or the encoding's with the
    /// default engine ([`Encoding::tokenizer`]).
    pub fn tokenizer(&self) -> &dyn Tokenizer {
        #[cfg(feature = "hf")]
        if let Some(TokenizerFile(tokenizer)) = &self.tokenizer_file {
            return tokenizer.as_ref();
        }
        self.encoding.tokenizer()
    }

    /// Caps `text`, an output of `tool`, to the tool's limit, counting with
    /// [`tokenizer`](Self::tokenizer), and emits the truncation event as the layer does
    /// ([`Truncation::record`]). For a caller that holds outputs as plain text, not as
    /// [`ToolOutput`](crate::ToolOutput)s.
    ///
    /// ```
    /// use tool_output_cap::ToolOutputLimits;
    ///
    /// let limits = ToolOutputLimits::default().with_tool("Grep", 100)?;
    /// let mut matches: String = (0..1000).map(|i| format!("src/lib.rs:{i}: return x;\n")).collect();
    /// let truncation = limits.cap("Grep", &mut matches).expect("over 100 tokens");
    /// assert_eq!(truncation.max_tokens, 100);
    /// assert!(matches.ends_with("tokens dropped, refine your query"));
    /// # Ok::<(), tool_output_cap::ManifestError>(())
    /// ```
    pub fn cap(&self, tool: &str, text: &mut String) -> Option<Truncation> {
        cap_text(
            tool,
            text,
            self.limit_for(tool),
            self.tokenizer(),
            Outcome::Output,
        )
    }

    /// Caps `message`, an error of `tool`, to the tool's limit, keeping its end as the layer does
    /// for a [`ToolError`](crate::ToolError), and emits the truncation event.
    pub fn cap_error(&self, tool: &str, message: &mut String) -> Option<Truncation> {
        cap_text(
            tool,
            message,
            self.limit_for(tool),
            self.tokenizer(),
            Outcome::Error,
        )
    }

    /// Caps `texts`, the parts of one result of `tool` that was its `outcome`, taken
    /// together as one text joined by newlines: what [`Cut::split`](crate::Cut::split) keeps of
    /// each, `None` for a part wholly cut out, and the truncation, which it emits as
    /// [`cap`](Self::cap) does. `None` when they fit.
    ///
    /// ```
    /// use tool_output_cap::{Outcome, ToolOutputLimits};
    ///
    /// let limits = ToolOutputLimits::new(100)?;
    /// let block: String = (0..200).map(|i| format!("match {i}\n")).collect();
    /// let (kept, truncation) = limits.cap_texts("Grep", &[&block, &block], Outcome::Output).unwrap();
    /// assert!(kept[0].as_deref().unwrap().ends_with("tokens dropped, refine your query"));
    /// assert_eq!((kept[1].as_deref(), truncation.max_tokens), (None, 100));
    /// # Ok::<(), tool_output_cap::ManifestError>(())
    /// ```
    pub fn cap_texts(
        &self,
        tool: &str,
        texts: &[&str],
        outcome: Outcome,
    ) -> Option<(Vec<Option<String>>, Truncation)> {
        let joined = texts.join("\n");
        let cut = self.cut(tool, &joined, outcome)?;
        cut.truncation.record(tool, outcome);
        let lengths: Vec<usize> = texts.iter().map(|text| text.len()).collect();
        Some((cut.split(&joined, &lengths), cut.truncation))
    }

    /// Where [`cap`](Self::cap) would cut `text`, a result of `tool` that was its `outcome`
    /// ([`cap_error`](Self::cap_error) for an error), without cutting it or emitting the event:
    /// `None` if it fits. For a caller that builds the capped text itself
    /// ([`Cut::capped`](crate::Cut::capped)).
    pub fn cut(&self, tool: &str, text: &str, outcome: Outcome) -> Option<Cut> {
        crate::cut(text, &outcome.limit(self.limit_for(tool)), self.tokenizer())
    }

    /// The tokenizer these limits count with, as the layer holds it.
    pub(crate) fn tokenizer_ref(&self) -> TokenizerRef {
        #[cfg(feature = "hf")]
        if let Some(TokenizerFile(tokenizer)) = &self.tokenizer_file {
            return TokenizerRef::Shared(Arc::clone(tokenizer) as _);
        }
        TokenizerRef::Static(self.encoding.tokenizer())
    }
}

const HINT_ON_ONE_LINE: &str = "must be one line: the note is the output's last line";

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
    /// Parses a manifest from TOML text; a relative `tokenizer_file` is read from the current
    /// folder.
    pub fn from_toml_str(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(text, None)
    }

    /// Parses `text`, reading a relative `tokenizer_file` from the folder `base`.
    fn parse(text: &str, base: Option<&Path>) -> Result<Manifest, ManifestError> {
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let (key, message) =
                not_a_table(e.message()).unwrap_or_else(|| (None, e.message().to_owned()));
            ManifestError {
                key,
                message,
                ..ManifestError::at(text, e.span().map_or(0, |span| span.start))
            }
        })?;
        let tool_output = raw
            .worker
            .and_then(|worker| worker.tool_output)
            .map(|raw| raw.validate(text, base))
            .transpose()?;
        Ok(Manifest {
            worker: WorkerManifest { tool_output },
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

    fn max_tokens(&self) -> Result<usize, ManifestError> {
        let message = match self.value {
            toml::Value::Integer(n) => match usize::try_from(*n) {
                Ok(n) if n >= ToolOutputLimits::MIN_MAX_TOKENS => return Ok(n),
                _ => too_small(n),
            },
            other => format!(
                "must be a whole number of tokens, found {} {other}",
                other.type_str()
            ),
        };
        Err(self.error(message))
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

    fn hint(&self) -> Result<Arc<str>, ManifestError> {
        match self.value.as_str() {
            Some(hint) if !hint.contains(['\n', '\r']) => Ok(hint.into()),
            Some(_) => Err(self.error(HINT_ON_ONE_LINE.to_owned())),
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
        let Some(table) = self.value.as_table() else {
            return Ok(ToolLimit::new(self.max_tokens()?).with_keep(default.keep()));
        };
        let mut limit = ToolLimit::new(default.max_tokens()).with_keep(default.keep());
        for (key, value) in table {
            let value = self.inner(key, value);
            limit = match key.as_str() {
                "max_tokens" => ToolLimit {
                    max_tokens: value.max_tokens()?,
                    ..limit
                },
                "keep" => limit.with_keep(value.keep()?),
                "hint" => limit.with_hint(value.hint()?),
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
