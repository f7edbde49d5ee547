//! The shapes tool results travel in, and their cuts: an MCP `CallToolResult`, as a server
//! sends it ([`ToolOutputLimits::cap_call_tool_result`]), and the request to a model API, where
//! every tool result of an agent, a host's built-in tools' included, meets the model, and where
//! a history that is already too big is sent again on every turn ([`RequestCap`]). One block cut
//! serves them all: the text a result's blocks carry is cut together as one text, other blocks
//! kept.
//!
//! [`RequestCap::cap`] cuts each tool result of a request to the limit of the tool whose call it
//! answers, with the crate's note, in the shapes of four APIs ([`Api`]):
//!
//! | API | tool results | the tool's name |
//! | --- | --- | --- |
//! | Anthropic Messages | `tool_result` blocks: `content` a string or blocks | the `tool_use` with the same `id` |
//! | OpenAI Chat Completions | `role: "tool"` messages: `content` a string or text parts | the assistant's `tool_calls` |
//! | OpenAI Responses | `function_call_output`, `custom_tool_call_output`, `local_shell_call_output`, `shell_call_output`, `mcp_call` | the `function_call` or `custom_tool_call` with the same `call_id`; `local_shell`; `shell`; the `mcp_call`'s `name` |
//! | Gemini | `functionResponse.response`, any JSON object | `functionResponse.name` |
//!
//! Text in any block is text:
//!
//! | block | its text | its labels |
//! | --- | --- | --- |
//! | `text` (Responses' `input_text`), Responses' `output_text`, LangChain's `text-plain` | `text` | |
//! | an MCP embedded `resource` | `resource.text` | `resource.uri`, `resource.mimeType` |
//! | an Anthropic `document` with a `text` source | `source.data` | `title`, `context` |
//! | an Anthropic `document` with a `content` source | the `text` blocks of `source.content` | `title`, `context` |
//! | an Anthropic `search_result` | the `text` blocks of `content` | `title`, `source` |
//!
//! A block's labels name its text and reach the model with it: they count with it, before it,
//! in the order above, and are never cut. A block whose labels a cut would split, or keep
//! with none of its text, goes whole, its tokens among those the note says were dropped (a note
//! that would have ended a text of that block ends the result in a text block of its own). A
//! block of media's labels (a PDF `document`'s `title` and `context`, a resource blob's `uri`
//! and `mimeType`) count in its price, and go with it.
//!
//! Every image counts, priced from its header as its provider prices it ([`ImageTokens`]):
//!
//! | block | priced by |
//! | --- | --- |
//! | an MCP `image` (`data`), and a framework's image ([`ToolOutputLimits::cap_blocks`]) | the manifest's `image_tokens` ([`ToolOutputLimits::image_tokens`]), Anthropic's by default |
//! | an Anthropic `image` (a base64 or URL `source`) | Anthropic's rule |
//! | a Responses `input_image` (a `data:` URL, a URL or a file id; its `detail`) | OpenAI's rule for the request's `model`: tiles, or patches with the model's multiplier |
//!
//! An image whose size cannot be read (a URL, a file id) is priced at the most its rule charges.
//!
//! The rules:
//!
//! - A result's limit covers its text and its media together ([`media`](crate::media): a PDF,
//!   audio or a blob by a documented estimate). The images stay, byte for byte, while they fit;
//!   else they are scaled down, never below a long edge of 1024 px; else, from the first that
//!   does not fit, the last give way whole. The first always stays; any other block of media
//!   stays only if it fits. A last text block says what was dropped, in the note's form:
//!   `truncated: 6120 tokens dropped (3 of 10 images; 7 scaled to 1024 px), refine your query`.
//!   The figures of the cut ([`Truncation`]) count both.
//! - A result's text is cut together, as an MCP result's is, to what its images leave: the text
//!   its blocks (or parts) carry, as the table above says, as one text joined by newlines. A
//!   block whose text is wholly past the cut goes, and so does a text block inside one; other
//!   blocks stay byte for byte. A JSON value (Gemini's
//!   `response`, a shell call's output) is cut to compact JSON of the same shape
//!   ([`cap_json`](crate::json::cap_json)); when no cut of its shape fits, a Gemini `response`
//!   becomes `{"output": text}` (`{"error": text}`), its JSON capped as text, and a shell call's
//!   output, whose shape the API demands, is left whole with a warning. An error
//!   (`is_error: true`, or a Gemini `response` with an `error` and no `output`) keeps its tail.
//! - `per_tool` applies to the names the model sees (Claude Code's `Glob`, `Read`, `Bash`); a
//!   result whose call is not in the request gets the default limit.
//! - With `max_tokens_per_turn`, the results of each turn (those that answer one model message)
//!   share it as [`ToolOutputLimits::limits_for_turn`] says, each turn on its own: a turn's cuts
//!   depend on its own results alone, so appending turns never moves an earlier turn's cuts,
//!   whatever the cache holds.
//! - The same request bytes give the same output bytes. A result within its limit, one this
//!   crate already cut among them, and every byte outside the cut results stay as they were:
//!   a history capped once is the same bytes on every later turn, so the provider's prompt
//!   cache keeps hitting.
//! - Anything else passes byte for byte: unknown fields, block types and APIs, and the results
//!   of the provider's own tools (`web_search_tool_result`, `web_fetch_tool_result`,
//!   `mcp_tool_result`, `code_execution_tool_result`), which the provider made and reads. A
//!   block of a tool result that is neither text nor media the cut prices (a type it does not
//!   know, a Gemini `fileData` part) is never passed silently: [`CappedRequest::unpriced`] and
//!   [`Carried::unpriced`] name it.
//!
//! A cut once made is kept, keyed by a seeded 128-bit hash of the result's bytes and by its limit,
//! in a cache of bounded size: a long history sent again on every turn is not counted again.

use std::borrow::Cow;
use std::fmt;

#[cfg(doc)]
use crate::image::ImageTokens;
use crate::limit::Outcome;
use crate::limits::ToolOutputLimits;
use crate::name::UnknownName;
use crate::truncation::Truncation;

mod anthropic;
mod blocks;
mod budget;
mod cache;
mod carried;
mod chat;
pub(crate) mod content;
mod fate;
mod found;
mod gemini;
mod labels;
pub(crate) mod mcp;
mod media;
mod media_fit;
mod parts;
mod rate;
mod raw;
mod responses;

use budget::Record;
use cache::CutCache;
use found::Found;
use raw::{Object, Splices};

pub use carried::Carried;
pub use content::{CappedBlock, CappedBlocks, NotABlockList};
pub use mcp::{CappedResult, META_KEY};
pub use rate::{
    input_tokens_limit, Learned, RateLimit, RateLimitFit, INPUT_LIMIT_HEADERS, NEWEST_FLOOR,
};

/// A model API whose requests [`RequestCap`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Api {
    /// Anthropic Messages: `/v1/messages` and `/v1/messages/count_tokens`.
    AnthropicMessages,
    /// OpenAI Chat Completions: `/v1/chat/completions`.
    ChatCompletions,
    /// OpenAI Responses: `/v1/responses` and `/v1/responses/input_tokens`.
    Responses,
    /// Gemini: `models/M:generateContent`, `:streamGenerateContent` and `:countTokens`.
    Gemini,
}

impl Api {
    /// Every API, in the order of this module's table.
    pub const ALL: [Api; 4] = [
        Api::AnthropicMessages,
        Api::ChatCompletions,
        Api::Responses,
        Api::Gemini,
    ];

    /// Its name for a caller that takes it as text (a binding, a config file):
    /// `anthropic`, `openai-chat`, `openai-responses` or `gemini`; `str::parse` reads it back.
    ///
    /// ```
    /// use tool_output_cap::wire::Api;
    ///
    /// assert_eq!("openai-responses".parse::<Api>(), Ok(Api::Responses));
    /// assert_eq!(Api::Gemini.name(), "gemini");
    /// assert!("openai".parse::<Api>().unwrap_err().to_string().contains(r#"found "openai""#));
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic",
            Api::ChatCompletions => "openai-chat",
            Api::Responses => "openai-responses",
            Api::Gemini => "gemini",
        }
    }

    /// The API whose inference or token-count route `path` is, a query after it or not; `None`
    /// for any other route.
    ///
    /// ```
    /// use tool_output_cap::wire::Api;
    ///
    /// assert_eq!(Api::for_path("/v1/messages?beta=true"), Some(Api::AnthropicMessages));
    /// assert_eq!(Api::for_path("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"), Some(Api::Gemini));
    /// assert_eq!(Api::for_path("/v1/models"), None);
    /// ```
    pub fn for_path(path: &str) -> Option<Api> {
        let path = path.split('?').next().unwrap_or_default();
        let last = path.rsplit('/').next().unwrap_or_default();
        if path.ends_with("/messages") || path.ends_with("/messages/count_tokens") {
            Some(Api::AnthropicMessages)
        } else if path.ends_with("/chat/completions") {
            Some(Api::ChatCompletions)
        } else if path.ends_with("/responses") || path.ends_with("/responses/input_tokens") {
            Some(Api::Responses)
        } else if [":generateContent", ":streamGenerateContent", ":countTokens"]
            .iter()
            .any(|method| last.ends_with(method))
        {
            Some(Api::Gemini)
        } else {
            None
        }
    }

    /// The lists a request of this API is read down, in one pass.
    fn path(self) -> &'static [&'static str] {
        match self {
            Api::AnthropicMessages => anthropic::PATH,
            Api::ChatCompletions => chat::PATH,
            Api::Responses => responses::PATH,
            Api::Gemini => gemini::PATH,
        }
    }

    fn results<'a>(self, request: &Object<'a>) -> Vec<Found<'a>> {
        match self {
            Api::AnthropicMessages => anthropic::results(request),
            Api::ChatCompletions => chat::results(request),
            Api::Responses => responses::results(request),
            Api::Gemini => gemini::results(request),
        }
    }
}

impl std::str::FromStr for Api {
    type Err = UnknownName;

    /// `anthropic`, `openai-chat`, `openai-responses` or `gemini`, as [`Api::name`] gives them.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let expected = r#""anthropic", "openai-chat", "openai-responses" or "gemini""#;
        UnknownName::find(&Api::ALL, Api::name, expected, name)
    }
}

/// A request body that is not a JSON object: it is left as it is.
#[derive(Debug)]
pub struct NotARequest(serde_json::Error);

impl fmt::Display for NotARequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the request body is not a JSON object: {}", self.0)
    }
}

impl std::error::Error for NotARequest {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// A request, capped: its new body, and each cut.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CappedRequest {
    /// The body with its tool results cut; `None` when none was over its limit, and the body
    /// goes as it came.
    pub body: Option<String>,
    /// Each result cut, in the order of the request.
    pub cuts: Vec<ResultCut>,
    /// The tokens of the request's tool results together as they came, and as they go up: counted
    /// under a request's budget (`max_tokens_per_request`, or a share of a rate limit), `None`
    /// without one.
    pub result_tokens: Option<(usize, usize)>,
    /// How the request was capped within the provider's per-minute input-token limit:
    /// `Some` when it was capped within one ([`RequestCap::cap_within_rate_limit`]) under a
    /// `rate_limit_share`.
    pub rate_limit: Option<RateLimitFit>,
    /// The blocks its tool results carry that are neither text nor media the cap prices (a
    /// block type it does not know, a Gemini `fileData` part), passed as they are, uncounted:
    /// each type with how many, by type.
    pub unpriced: Vec<(String, usize)>,
}

/// A tool result cut in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResultCut {
    /// The tool whose call it answers; `None` when the call is not in the request.
    pub tool: Option<String>,
    /// Whether it was an output or an error.
    pub outcome: Outcome,
    /// The figures of the cut.
    pub truncation: Truncation,
    /// Whether the cut was made for an earlier request, and taken from the cache.
    pub cached: bool,
    /// Whether it gave way whole to the request's budget: it goes as one line that names the
    /// tool and what was dropped.
    pub elided: bool,
}

/// Caps the tool results of model API requests to [`ToolOutputLimits`], keeping the cuts it
/// made. Shared by reference among threads.
///
/// ```
/// use serde_json::json;
/// use tool_output_cap::wire::{Api, RequestCap};
/// use tool_output_cap::ToolOutputLimits;
///
/// let listing: String = (0..5000).map(|i| format!("src/module_{i}/mod.rs\n")).collect();
/// let body = json!({
///     "model": "claude-sonnet-4-5",
///     "messages": [
///         {"role": "user", "content": "list every file"},
///         {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {"pattern": "*"}}]},
///         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": listing}]},
///     ],
/// })
/// .to_string();
/// let cap = RequestCap::new(ToolOutputLimits::default().with_tool("Glob", 3000)?);
/// let capped = cap.cap(Api::AnthropicMessages, &body)?;
/// let sent: serde_json::Value = serde_json::from_str(capped.body.as_deref().unwrap())?;
/// let result = sent["messages"][2]["content"][0]["content"].as_str().unwrap();
/// assert!(result.ends_with("refine your query"));
/// assert_eq!(capped.cuts[0].truncation.max_tokens, 3000);
/// // Capped once, the same bytes after.
/// assert_eq!(cap.cap(Api::AnthropicMessages, capped.body.as_deref().unwrap())?.body, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RequestCap {
    limits: ToolOutputLimits,
    cache: CutCache,
}

impl RequestCap {
    /// How many bytes of cuts the cache holds by default: 64 MiB.
    pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

    /// Caps to `limits`, with a cache of [`DEFAULT_CACHE_BYTES`](Self::DEFAULT_CACHE_BYTES).
    pub fn new(limits: ToolOutputLimits) -> Self {
        RequestCap {
            limits,
            cache: CutCache::new(Self::DEFAULT_CACHE_BYTES),
        }
    }

    /// The cache holds at most `max_bytes` of cuts (and about 128 bytes for each result it knows
    /// to be within its limit); 0 turns it off.
    pub fn with_cache_bytes(self, max_bytes: usize) -> Self {
        RequestCap {
            cache: CutCache::new(max_bytes),
            ..self
        }
    }

    /// The bytes its cache holds now, as [`with_cache_bytes`](Self::with_cache_bytes) counts
    /// them: at most its bound.
    pub fn cached_bytes(&self) -> usize {
        self.cache.bytes()
    }

    /// The limits it caps to.
    pub fn limits(&self) -> &ToolOutputLimits {
        &self.limits
    }

    /// `body`, a request of `api`, with each tool result cut to its limit; an error when the
    /// body is not a JSON object. It emits no event of its own: its [`CappedRequest::cuts`] are
    /// the record, for the caller to log once with what it knows (a route, a replica).
    pub fn cap(&self, api: Api, body: &str) -> Result<CappedRequest, NotARequest> {
        self.cap_within(api, body, None)
    }

    /// [`cap`](Self::cap), and with a `rate_limit_share`, within `limit`, the per-minute
    /// input-token limit that the model API reported ([`input_tokens_limit`]):
    ///
    /// - The request's tool results share `rate_limit_share × limit` (or
    ///   `max_tokens_per_request`, if that is smaller), and no more than the rest of the request
    ///   leaves under `limit`.
    /// - The rest (the system prompt, the tool definitions, the messages) is counted as its JSON
    ///   in the limits' tokenizer. Its keys, quotes and escapes make that count higher than a
    ///   provider's own for the same text: a margin on the safe side for a model counted in the
    ///   same vocabulary. For Claude, whose tokenizer is not local, it is an estimate.
    /// - What the rest leaves is rounded down to a quarter of the budget, so that the budget
    ///   does not change on every turn, and older results give way in steps of half the budget.
    /// - The newest turn's results keep at least the smaller of their limit and
    ///   [`NEWEST_FLOOR`] tokens each. When what the rest leaves cannot hold that, the request is
    ///   capped to its configured budgets alone, and [`RateLimitFit::budget`] says so.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_output_cap::wire::{Api, RequestCap};
    /// use tool_output_cap::{RateLimitShare, Tokenizer, ToolOutputLimits};
    ///
    /// let turn = |i: usize| {
    ///     let listing: String = (0..3000).map(|n| format!("src/turn_{i}/file_{n}.rs\n")).collect();
    ///     [
    ///         json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Glob", "input": {}}]}),
    ///         json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": listing}]}),
    ///     ]
    /// };
    /// let mut messages = vec![json!({"role": "user", "content": "list every file"})];
    /// (0..6).for_each(|i| messages.extend(turn(i)));
    /// let body = json!({"model": "claude-sonnet-4-5", "messages": messages}).to_string();
    ///
    /// let limits = ToolOutputLimits::default().with_rate_limit_share(RateLimitShare::new(0.5)?);
    /// let cap = RequestCap::new(limits);
    /// let capped = cap.cap_within_rate_limit(Api::AnthropicMessages, &body, 30_000)?;
    /// let fit = capped.rate_limit.unwrap();
    /// let (before, after) = capped.result_tokens.unwrap();
    /// assert!(before > 30_000 && after <= 15_000, "{before} -> {after}");
    /// assert!(fit.rest_tokens + after <= 30_000);
    /// // The whole request, counted as JSON, is under the limit.
    /// let sent = capped.body.unwrap();
    /// assert!(cap.limits().tokenizer().count(&sent) <= 30_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cap_within_rate_limit(
        &self,
        api: Api,
        body: &str,
        limit: usize,
    ) -> Result<CappedRequest, NotARequest> {
        self.cap_within(api, body, Some(limit))
    }

    /// [`cap_within_rate_limit`](Self::cap_within_rate_limit) within the limit `rate_limit` has
    /// learned from the provider's answers, once it has learned one; [`cap`](Self::cap) before.
    pub fn cap_learned(
        &self,
        api: Api,
        body: &str,
        rate_limit: &RateLimit,
    ) -> Result<CappedRequest, NotARequest> {
        self.cap_within(api, body, rate_limit.get())
    }

    fn cap_within(
        &self,
        api: Api,
        body: &str,
        rate_limit: Option<usize>,
    ) -> Result<CappedRequest, NotARequest> {
        let rate_limit = rate_limit.filter(|_| self.limits.rate_limit_share().is_some());
        let budget = self.budget(rate_limit);
        read(api, body, |readable, request| {
            let mut records = self.lay_out(api.results(&request), budget);
            let fit = budget.and_then(|budget| {
                let rate_limit = rate_limit.map(|limit| (limit, readable));
                self.fit(&mut records, budget, rate_limit)
            });
            capped(body, readable, records, fit)
        })
    }
}

/// `then` of the request `body` of `api`, as it is read (`readable`) and its parts: where
/// serde_json reads a string (a message's text, a key) it refuses a lone surrogate, so the body
/// is then read with each such escape as `\ufffd`, of the same length, and the cuts made where
/// they are in the body itself.
fn read<T>(
    api: Api,
    body: &str,
    then: impl FnOnce(&str, raw::Object<'_>) -> T,
) -> Result<T, NotARequest> {
    match raw::read(body, api.path()) {
        Ok(request) => Ok(then(body, request)),
        Err(error) => {
            let readable = match crate::json::without_lone_surrogates(body) {
                Cow::Borrowed(_) => return Err(NotARequest(error)),
                owned => owned,
            };
            let request = raw::read(&readable, api.path()).map_err(NotARequest)?;
            Ok(then(&readable, request))
        }
    }
}

/// The capped request: `body`, read as `readable`, with each result of `records` replaced as
/// its fate says, and the figures.
fn capped(
    body: &str,
    readable: &str,
    records: Vec<Record<'_>>,
    rate_limit: Option<RateLimitFit>,
) -> CappedRequest {
    let mut splices = Splices::default();
    let mut cuts = Vec::new();
    let mut tokens = Some((0, 0));
    let mut unpriced = std::collections::BTreeMap::<String, usize>::new();
    let any = !records.is_empty();
    for Record { result, fate, .. } in records {
        for kind in result.content.unpriced() {
            *unpriced.entry(kind).or_default() += 1;
        }
        tokens = tokens.zip(fate.tokens).map(|((before, after), it)| {
            let came = fate.cut.as_ref().map_or(it, |(_, cut)| cut.original_tokens);
            (before + came, after + it)
        });
        if let Some((json, truncation)) = fate.cut {
            splices.replace(readable, result.content.json().get(), json);
            cuts.push(ResultCut {
                tool: result.tool,
                outcome: result.outcome,
                truncation,
                cached: fate.cached,
                elided: fate.elided,
            });
        }
    }
    CappedRequest {
        body: splices.apply(body),
        cuts,
        result_tokens: tokens.filter(|_| any),
        rate_limit,
        unpriced: unpriced.into_iter().collect(),
    }
}
