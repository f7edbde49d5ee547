//! `Limits`: the limits of `[worker.tool_output]`, from a manifest or from options.

use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value};
use tool_output_cap::wire::RequestCap;
use tool_output_cap::{Manifest, Outcome, ToolOutputLimits};

use crate::capped::{Capped, CappedJson, Truncation};
use crate::errors::{invalid, refused};
use crate::request::{self, CappedRequest, RateLimit};
use crate::task::Work;

/// The options of a tool's cap.
#[napi(object)]
pub struct ToolCapOptions {
    /// An error keeps its tail.
    pub error: Option<bool>,
    /// What a framework writes before the text (the AI SDK's `Error: `): the prefix and the
    /// capped text together are within the limit.
    pub prefix: Option<String>,
}

/// The parts of an output capped together: each kept text, `null` for a part cut out.
#[napi(object)]
pub struct CappedTexts {
    pub texts: Vec<Either<String, Null>>,
    pub truncation: Truncation,
}

/// One result's content blocks capped: the JSON of each block that goes to the model, and for
/// each the place in the list given of the block it came from (`null` for the note that media
/// gave way).
#[napi(object)]
pub struct CappedBlocks {
    pub blocks: Vec<String>,
    pub sources: Vec<Either<u32, Null>>,
    pub truncation: Truncation,
}

/// The limit of every tool, of each tool by name, and the tokenizer they count with. The
/// package's `Limits` wraps it, and gives its errors as `ManifestError`.
#[napi(js_name = "NativeLimits")]
pub struct Limits(Arc<ToolOutputLimits>, Arc<OnceLock<RequestCap>>);

impl Limits {
    fn of(limits: ToolOutputLimits) -> Limits {
        Limits(Arc::new(limits), Arc::default())
    }
}

/// The request cap of `limits`, which keeps the cuts it made, made on first use.
fn request_cap<'a>(limits: &ToolOutputLimits, cap: &'a OnceLock<RequestCap>) -> &'a RequestCap {
    cap.get_or_init(|| RequestCap::new(limits.clone()))
}

#[napi]
impl Limits {
    /// The keys of `[worker.tool_output]` in camel case (`defaultMaxTokens`, `perTool`, ...),
    /// checked as the crate checks the manifest's; an error names the key.
    #[napi(constructor)]
    pub fn new(options: Option<Value>) -> Result<Limits> {
        let section = snake_case(options.unwrap_or(Value::Object(Map::new())));
        ToolOutputLimits::from_section(section)
            .map(Limits::of)
            .map_err(|e| match e.key() {
                Some(key) => invalid(format!("{} {}", camel_case(key), e.message())),
                None => invalid(e),
            })
    }

    /// The limits of the manifest at `path`'s `[worker.tool_output]`, or the defaults without
    /// one; an error names the file, line, column and key.
    #[napi(factory)]
    pub fn from_manifest(path: String) -> Result<Limits> {
        let manifest = Manifest::from_path(path).map_err(invalid)?;
        Ok(Limits::of(manifest.worker.limits()))
    }

    /// `text`, an output of `toolName` (its error, which keeps the tail, with `error`), capped
    /// to the tool's limit.
    #[napi]
    pub fn cap(&self, tool_name: String, text: String, options: Option<ToolCapOptions>) -> Capped {
        cap(&self.0, &tool_name, &text, options)
    }

    /// [`cap`](Self::cap) on the libuv pool.
    #[napi(ts_return_type = "Promise<Capped>")]
    pub fn cap_async(
        &self,
        tool_name: String,
        text: String,
        options: Option<ToolCapOptions>,
    ) -> AsyncTask<Work<Capped>> {
        let limits = Arc::clone(&self.0);
        Work::spawn(move || Ok(cap(&limits, &tool_name, &text, options)))
    }

    /// `texts`, the parts of one output of `toolName`, capped as one text joined by newlines:
    /// the kept text of each part (`null` for a part wholly cut out) and the truncation; `null`
    /// when they are within the limit.
    #[napi]
    pub fn cap_texts(
        &self,
        tool_name: String,
        texts: Vec<String>,
        options: Option<ToolCapOptions>,
    ) -> Either<CappedTexts, Null> {
        let parts: Vec<&str> = texts.iter().map(String::as_str).collect();
        match self.0.cap_texts(&tool_name, &parts, outcome(options)) {
            Some((texts, truncation)) => Either::A(CappedTexts {
                texts: texts
                    .into_iter()
                    .map(|text| text.map_or(Either::B(Null), Either::A))
                    .collect(),
                truncation: Truncation::from(truncation),
            }),
            None => Either::B(Null),
        }
    }

    /// `blocks`, the JSON list of one result's content blocks (MCP's, or a framework's own
    /// shapes), capped by the crate's `ToolOutputLimits::cap_blocks`: their text as one text,
    /// their images priced by `imageTokens` and scaled down or given way to fit; `null` when
    /// they fit. Blocks that are not a JSON list are an error.
    #[napi]
    pub fn cap_blocks(
        &self,
        tool_name: String,
        blocks: String,
        options: Option<ToolCapOptions>,
    ) -> Result<Either<CappedBlocks, Null>> {
        let capped = self.0.cap_blocks(&tool_name, &blocks, outcome(options));
        let Some(capped) = capped.map_err(invalid)? else {
            return Ok(Either::B(Null));
        };
        let sources = capped.blocks.iter().map(|block| match block.from {
            Some(from) => Either::A(u32::try_from(from).unwrap_or(u32::MAX)),
            None => Either::B(Null),
        });
        Ok(Either::A(CappedBlocks {
            sources: sources.collect(),
            blocks: capped.blocks.into_iter().map(|block| block.json).collect(),
            truncation: Truncation::from(capped.truncation),
        }))
    }

    /// `json`, the JSON text of a structured result of `toolName`, capped to the tool's limit by
    /// the crate's `ToolOutputLimits::cap_json`: compact JSON of the same shape and `isJson`, or,
    /// when no cut of the shape fits, its JSON capped as text and `isJson` false. Text that is
    /// not JSON is an error.
    #[napi]
    pub fn cap_json(
        &self,
        tool_name: String,
        json: String,
        options: Option<ToolCapOptions>,
    ) -> Result<CappedJson> {
        cap_json(&self.0, &tool_name, &json, outcome(options))
    }

    /// [`cap_json`](Self::cap_json) on the libuv pool.
    #[napi(ts_return_type = "Promise<CappedJson>")]
    pub fn cap_json_async(
        &self,
        tool_name: String,
        json: String,
        options: Option<ToolCapOptions>,
    ) -> AsyncTask<Work<CappedJson>> {
        let (limits, outcome) = (Arc::clone(&self.0), outcome(options));
        Work::spawn(move || cap_json(&limits, &tool_name, &json, outcome))
    }

    /// `body`, the JSON of a request to the model API `api` (`anthropic`, `openai-chat`,
    /// `openai-responses` or `gemini`), with each tool result cut to the limit of the tool whose
    /// call it answers, as the gateway cuts it: the capped body (`null` when nothing needed a
    /// cut) and each cut. The cuts are kept between calls, so a history sent again is not
    /// counted again. A body that is not a JSON object is an error.
    /// With `rateLimit`, a `RateLimit` that has learned the provider's per-minute limit, and
    /// `rateLimitShare`, the tool results together stay within that share of it.
    #[napi]
    pub fn cap_request(
        &self,
        api: String,
        body: String,
        rate_limit: Option<&RateLimit>,
    ) -> Result<CappedRequest> {
        let learned = rate_limit.map(|rate_limit| rate_limit.0.as_ref());
        request::cap(request_cap(&self.0, &self.1), &api, &body, learned)
    }

    /// [`cap_request`](Self::cap_request) on the libuv pool.
    #[napi(ts_return_type = "Promise<CappedRequest>")]
    pub fn cap_request_async(
        &self,
        api: String,
        body: String,
        rate_limit: Option<&RateLimit>,
    ) -> AsyncTask<Work<CappedRequest>> {
        let (limits, cap) = (Arc::clone(&self.0), Arc::clone(&self.1));
        let learned = rate_limit.map(|rate_limit| Arc::clone(&rate_limit.0));
        Work::spawn(move || {
            request::cap(request_cap(&limits, &cap), &api, &body, learned.as_deref())
        })
    }

    /// The tokens of `text` with these limits' tokenizer.
    #[napi]
    pub fn count(&self, text: String) -> u32 {
        crate::tokens(self.0.tokenizer().count(&text))
    }

    /// The token limit of `toolName`'s outputs, the note included.
    #[napi]
    pub fn max_tokens_for(&self, tool_name: String) -> u32 {
        crate::tokens(self.0.max_tokens_for(&tool_name))
    }

    /// The `perTool` names that are none of `tools`: limits that never apply (names are
    /// case-sensitive).
    #[napi]
    pub fn unmatched_tools(&self, tools: Vec<String>) -> Vec<String> {
        let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
        self.0
            .unmatched_tools(&tools)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

fn cap_json(
    limits: &ToolOutputLimits,
    tool: &str,
    json: &str,
    outcome: Outcome,
) -> Result<CappedJson> {
    let not_json = |e: &dyn std::fmt::Display| refused("json")(format!("is not JSON: {e}"));
    let capped = limits
        .cap_json(tool, json, outcome)
        .map_err(|e| not_json(&e.error))?;
    // Within the limit, it may not have been read: read it to say whether it is JSON.
    if capped.is_none() {
        serde_json::from_str::<serde::de::IgnoredAny>(json).map_err(|e| not_json(&e))?;
    }
    Ok(CappedJson::from(capped))
}

/// `text`, an output of `tool`, capped as `options` say: after their `prefix`, if any.
fn cap(
    limits: &ToolOutputLimits,
    tool: &str,
    text: &str,
    options: Option<ToolCapOptions>,
) -> Capped {
    let prefix = options.as_ref().and_then(|o| o.prefix.clone());
    let outcome = outcome(options);
    Capped::cut(text, |text| match &prefix {
        Some(prefix) => limits.cut_after(tool, prefix, text, outcome),
        None => limits.cut(tool, text, outcome),
    })
}

fn outcome(options: Option<ToolCapOptions>) -> Outcome {
    match options.and_then(|o| o.error) {
        Some(true) => Outcome::Error,
        _ => Outcome::Output,
    }
}

/// The options' keys as the manifest's: `defaultMaxTokens` is `default_max_tokens`, and the
/// keys of each `perTool` limit too; a tool's name stays as it is.
fn snake_case(options: Value) -> Value {
    let Value::Object(options) = options else {
        return options;
    };
    let key = |key: String| -> String {
        key.chars()
            .flat_map(|c| {
                let lower = c.to_ascii_lowercase();
                (c.is_ascii_uppercase())
                    .then_some('_')
                    .into_iter()
                    .chain(std::iter::once(lower))
            })
            .collect()
    };
    let limit = |value: Value| match value {
        Value::Object(limit) => {
            Value::Object(limit.into_iter().map(|(k, v)| (key(k), v)).collect())
        }
        other => other,
    };
    Value::Object(
        options
            .into_iter()
            .map(|(name, value)| match (key(name), value) {
                (name, Value::Object(tools)) if name == "per_tool" => (
                    name,
                    Value::Object(
                        tools
                            .into_iter()
                            .map(|(tool, v)| (tool, limit(v)))
                            .collect(),
                    ),
                ),
                (name, value) => (name, value),
            })
            .collect(),
    )
}

/// A key of the manifest as the options spell it: `per_tool.Glob.max_tokens` is
/// `perTool.Glob.maxTokens`.
fn camel_case(key: &str) -> String {
    let mut parts = key.split('.');
    let camel = |part: &str| {
        let mut words = part.split('_');
        let first = words.next().unwrap_or_default().to_owned();
        words.fold(first, |mut out, word| {
            let mut chars = word.chars();
            if let Some(c) = chars.next() {
                out.push(c.to_ascii_uppercase());
                out.extend(chars);
            }
            out
        })
    };
    let mut out = parts.next().map(camel).unwrap_or_default();
    if out == "perTool" {
        if let Some(tool) = parts.next() {
            out = format!("{out}.{tool}");
        }
    }
    for part in parts {
        out.push('.');
        out.push_str(&camel(part));
    }
    out
}
