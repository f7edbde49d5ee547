//! The limits in force: every tool's, each tool's own, and a turn's, with the tokenizer they
//! count with, and the caps that apply them. Every method of [`ToolOutputLimits`] is in this
//! folder: here, the limits and the caps of a text; a turn's budget in `turn.rs`; the entries
//! for a structured result, an MCP result and a manifest section in `shapes.rs`.

mod shapes;
mod turn;

use std::collections::BTreeMap;
#[cfg(feature = "hf")]
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::image::ImageTokens;
use crate::layout::Cut;
use crate::limit::Outcome;
use crate::limit::{Keep, LimitError, ToolLimit};
use crate::share::RateLimitShare;
#[cfg(feature = "hf")]
use crate::tokenizer::HfTokenizer;
use crate::tokenizer::{Encoding, Tokenizer};
use crate::truncate::cap_text;
use crate::truncation::Truncation;

/// Token limits on tool outputs, for every tool, per tool, and per turn.
///
/// ```toml
/// [worker.tool_output]
/// default_max_tokens = 5000     # every tool; 5000 when omitted
/// default_keep = "head"         # "head", "tail" or "head_tail"; "head" when omitted
/// encoding = "o200k_base"       # or "cl100k_base"; o200k_base when omitted
/// max_tokens_per_turn = 20000   # all the outputs of one turn; no turn budget when omitted
/// max_tokens_per_request = 24000 # all the tool results of one request to a model API; none when omitted
/// rate_limit_share = 0.5        # of the per-minute input-token limit the provider reports; none when omitted
/// image_tokens = "anthropic"    # the rule that prices an image in a result; "anthropic" when omitted
///
/// [worker.tool_output.per_tool]
/// Read = 8000
/// Bash = { max_tokens = 6000, keep = "head_tail" }
/// Glob = { max_tokens = 3000, hint = "use a narrower pattern, e.g. src/**/*.rs" }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutputLimits {
    pub(crate) default: ToolLimit,
    pub(crate) per_tool: BTreeMap<String, ToolLimit>,
    pub(crate) encoding: Encoding,
    pub(crate) max_tokens_per_turn: Option<usize>,
    pub(crate) max_tokens_per_request: Option<usize>,
    pub(crate) rate_limit_share: Option<RateLimitShare>,
    pub(crate) image_tokens: ImageTokens,
    /// A tokenizer given in place of the encoding's.
    custom: Option<CustomTokenizer>,
}

/// A tokenizer given to the limits: the same as another when it is the same one, or when both
/// were read from the same `tokenizer.json`.
#[derive(Debug, Clone)]
struct CustomTokenizer {
    tokenizer: Arc<dyn Tokenizer>,
    #[cfg(feature = "hf")]
    file: Option<PathBuf>,
}

impl PartialEq for CustomTokenizer {
    fn eq(&self, other: &Self) -> bool {
        #[cfg(feature = "hf")]
        if let (Some(file), Some(other)) = (&self.file, &other.file) {
            return file == other;
        }
        Arc::ptr_eq(&self.tokenizer, &other.tokenizer)
    }
}

impl Eq for CustomTokenizer {}

impl Default for ToolOutputLimits {
    /// 5000 tokens for every tool, keeping the head, counted in `o200k_base`; no turn budget.
    fn default() -> Self {
        ToolOutputLimits {
            default: ToolLimit {
                max_tokens: Self::DEFAULT_MAX_TOKENS,
                keep: Keep::Head,
                hint: None,
            },
            per_tool: BTreeMap::new(),
            encoding: Encoding::default(),
            max_tokens_per_turn: None,
            max_tokens_per_request: None,
            rate_limit_share: None,
            image_tokens: ImageTokens::default(),
            custom: None,
        }
    }
}

impl ToolOutputLimits {
    /// The limit of a tool the manifest says nothing about.
    pub const DEFAULT_MAX_TOKENS: usize = 5000;

    /// `default_max_tokens` for every tool; an error under [`ToolLimit::MIN_MAX_TOKENS`].
    pub fn new(default_max_tokens: usize) -> Result<Self, LimitError> {
        Ok(ToolOutputLimits {
            default: ToolLimit::new(default_max_tokens)?,
            ..Self::default()
        })
    }

    /// Gives tools without a limit of their own `limit`.
    #[must_use]
    pub fn with_default_limit(mut self, limit: ToolLimit) -> Self {
        self.default = limit;
        self
    }

    /// Keeps `keep` of the outputs of tools without a limit of their own, and of tools given
    /// one with [`with_tool`](Self::with_tool) afterwards.
    #[must_use]
    pub fn with_default_keep(mut self, keep: Keep) -> Self {
        self.default = self.default.with_keep(keep);
        self
    }

    /// Gives `tool` a limit of `max_tokens`, keeping what the default keeps; an error under
    /// [`ToolLimit::MIN_MAX_TOKENS`].
    pub fn with_tool(self, tool: impl Into<String>, max_tokens: usize) -> Result<Self, LimitError> {
        let limit = ToolLimit::new(max_tokens)?.with_keep(self.default.keep());
        Ok(self.with_tool_limit(tool, limit))
    }

    /// Gives `tool` its own [`ToolLimit`].
    #[must_use]
    pub fn with_tool_limit(mut self, tool: impl Into<String>, limit: ToolLimit) -> Self {
        self.per_tool.insert(tool.into(), limit);
        self
    }

    /// Caps the outputs of one turn together to `max_tokens`; an error under
    /// [`ToolLimit::MIN_MAX_TOKENS`].
    pub fn with_max_tokens_per_turn(mut self, max_tokens: usize) -> Result<Self, LimitError> {
        self.max_tokens_per_turn = Some(ToolLimit::new(max_tokens)?.max_tokens());
        Ok(self)
    }

    /// Caps the tool results of one request to a model API together to `max_tokens`
    /// ([`RequestCap`](crate::wire::RequestCap)); an error under [`ToolLimit::MIN_MAX_TOKENS`].
    pub fn with_max_tokens_per_request(mut self, max_tokens: usize) -> Result<Self, LimitError> {
        self.max_tokens_per_request = Some(ToolLimit::new(max_tokens)?.max_tokens());
        Ok(self)
    }

    /// Prices the images of tool results by `rule`, where no model API says which
    /// ([`ImageTokens`]): the layer's, the MCP proxy's and the adapters' results.
    #[must_use]
    pub fn with_image_tokens(mut self, rule: ImageTokens) -> Self {
        self.image_tokens = rule;
        self
    }

    /// Caps the tool results of one request together to `share` of the per-minute input-token
    /// limit that the model API reports, once it is known
    /// ([`RequestCap::cap_within_rate_limit`](crate::wire::RequestCap::cap_within_rate_limit)).
    #[must_use]
    pub fn with_rate_limit_share(mut self, share: RateLimitShare) -> Self {
        self.rate_limit_share = Some(share);
        self
    }

    /// Counts tokens in `encoding`'s vocabulary (and with no tokenizer of its own).
    #[must_use]
    pub fn with_encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = encoding;
        self.custom = None;
        self
    }

    /// Counts tokens with `tokenizer` (say, another model's) in place of the encoding's: the one
    /// tokenizer of everything that caps to these limits, the layer, [`Worker`](crate::Worker),
    /// the turn's shares and [`RequestCap`](crate::wire::RequestCap) alike.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_output_cap::{Prefix, Tokenizer, ToolOutputCapLayer, ToolOutputLimits};
    ///
    /// /// One token a byte.
    /// #[derive(Debug)]
    /// struct Bytes;
    ///
    /// impl Tokenizer for Bytes {
    ///     fn count(&self, text: &str) -> usize {
    ///         text.len()
    ///     }
    ///     fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
    ///         let mut len = max_tokens.min(text.len());
    ///         while !text.is_char_boundary(len) {
    ///             len -= 1;
    ///         }
    ///         Prefix { len, tokens: len, total_tokens: text.len() }
    ///     }
    /// }
    ///
    /// let limits = ToolOutputLimits::new(100)?.with_tokenizer(Arc::new(Bytes));
    /// assert_eq!(limits.tokenizer().count("four"), 4);
    /// let layer = ToolOutputCapLayer::new(limits);
    /// assert_eq!(layer.limits().tokenizer().count("four"), 4);
    /// # Ok::<(), tool_output_cap::LimitError>(())
    /// ```
    #[must_use]
    pub fn with_tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.custom = Some(CustomTokenizer {
            tokenizer,
            #[cfg(feature = "hf")]
            file: None,
        });
        self
    }

    /// The limit of `tool`'s outputs: its own, or the default.
    #[inline]
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

    /// The `per_tool` names that are none of `tools`, in their order: limits that never apply.
    /// A name must be the tool's as the model calls it, and names are case-sensitive: `Glob`
    /// is not `glob`.
    ///
    /// ```
    /// use tool_output_cap::ToolOutputLimits;
    ///
    /// let limits = ToolOutputLimits::default().with_tool("Glob", 3000)?.with_tool("grep", 2000)?;
    /// assert_eq!(limits.unmatched_tools(&["glob", "grep"]), ["Glob"]);
    /// # Ok::<(), tool_output_cap::LimitError>(())
    /// ```
    pub fn unmatched_tools<'a>(&'a self, tools: &[&str]) -> Vec<&'a str> {
        self.per_tool()
            .map(|(name, _)| name)
            .filter(|name| !tools.contains(name))
            .collect()
    }

    /// Logs one warning for each of the [`unmatched_tools`](Self::unmatched_tools) of `tools`,
    /// naming it, and gives them: for a caller that knows its tools' names when it starts.
    pub fn warn_of_unmatched_tools<'a>(&'a self, tools: &[&str]) -> Vec<&'a str> {
        let unmatched = self.unmatched_tools(tools);
        for tool in &unmatched {
            tracing::warn!(
                tool,
                max_tokens = self.max_tokens_for(tool),
                "[worker.tool_output.per_tool] names no tool, so its limit never applies (names \
                 are the tools' own, and case-sensitive)"
            );
        }
        unmatched
    }

    /// The budget of all the outputs of one turn together, if there is one.
    pub fn max_tokens_per_turn(&self) -> Option<usize> {
        self.max_tokens_per_turn
    }

    /// The budget of all the tool results of one request to a model API together, if there is
    /// one.
    pub fn max_tokens_per_request(&self) -> Option<usize> {
        self.max_tokens_per_request
    }

    /// The share of the provider's per-minute input-token limit that the tool results of one
    /// request may take together, if one is set.
    pub fn rate_limit_share(&self) -> Option<RateLimitShare> {
        self.rate_limit_share
    }

    /// The rule that prices an image in a tool result: Anthropic's unless set.
    pub fn image_tokens(&self) -> ImageTokens {
        self.image_tokens
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
        let tokenizer = HfTokenizer::shared(path)?;
        let file = Some(tokenizer.path().to_owned());
        self.custom = Some(CustomTokenizer { tokenizer, file });
        Ok(self)
    }

    /// The `tokenizer.json` tokens are counted with, if one is given.
    #[cfg(feature = "hf")]
    pub fn tokenizer_file(&self) -> Option<&Path> {
        self.custom.as_ref()?.file.as_deref()
    }

    /// The tokenizer these limits count with: the one given ([`with_tokenizer`](Self::with_tokenizer),
    /// or a tokenizer file's), or the encoding's with the default engine
    /// ([`Encoding::tokenizer`]).
    pub fn tokenizer(&self) -> &dyn Tokenizer {
        match &self.custom {
            Some(custom) => custom.tokenizer.as_ref(),
            None => self.encoding.tokenizer(),
        }
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

    /// Where [`cut`](Self::cut) would cut `text`, a result of `tool` that a framework writes
    /// after `prefix` (the AI SDK writes a thrown error as `Error: message`): `prefix` and the
    /// capped text together within the tool's limit, the prefix not part of the cut. `None` when
    /// they fit.
    ///
    /// ```
    /// use tool_output_cap::{Outcome, ToolOutputLimits};
    ///
    /// let limits = ToolOutputLimits::new(100)?;
    /// let message = "error: linking failed\n".repeat(200);
    /// let cut = limits.cut_after("Bash", "Error: ", &message, Outcome::Error).unwrap();
    /// let written = format!("Error: {}", cut.capped(&message));
    /// assert!(limits.tokenizer().count(&written) <= 100);
    /// # Ok::<(), tool_output_cap::LimitError>(())
    /// ```
    pub fn cut_after(&self, tool: &str, prefix: &str, text: &str, outcome: Outcome) -> Option<Cut> {
        let limit = outcome.limit(self.limit_for(tool));
        let tokenizer = self.tokenizer();
        let total = limit.max_tokens();
        let written = |capped: &str| tokenizer.count(&[prefix, capped].concat());
        if text.len() + prefix.len() <= total || written(text) <= total {
            return None;
        }
        // Counts are not additive where the prefix meets the text: cut again by what is over.
        let mut max_tokens = total.saturating_sub(tokenizer.count(prefix));
        loop {
            let within = limit
                .clone()
                .into_owned()
                .with_max_tokens(max_tokens)
                .ok()?;
            let over = match crate::cut(text, &within, tokenizer) {
                Some(cut) => match written(&cut.capped(text)).checked_sub(total) {
                    None | Some(0) => return Some(cut),
                    Some(over) => over,
                },
                None => 1,
            };
            max_tokens = max_tokens.checked_sub(over)?;
        }
    }

    /// The tokenizer given to these limits, if any.
    pub(crate) fn custom_tokenizer(&self) -> Option<&Arc<dyn Tokenizer>> {
        self.custom.as_ref().map(|custom| &custom.tokenizer)
    }
}
