//! A tool result found in a request, and its cut.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::raw::{fields, items, string};
use crate::json::walk::{span_of, splice};
use crate::json::{cap_json_known, CappedJson, CutText};
use crate::layout::Cut;
use crate::limit::{Outcome, ToolLimit};
use crate::tokenizer::Tokenizer;
use crate::truncation::{Truncation, TARGET};

/// A tool result in a request: where it is, what it was, and the tool whose call it answers.
#[derive(Debug)]
pub(super) struct Found<'a> {
    /// The tool's name, from the call the result answers; `None` when that call is not found.
    pub(super) tool: Option<String>,
    pub(super) outcome: Outcome,
    pub(super) content: Content<'a>,
    /// The turn it belongs to: where in the request the model message it answers is, the last
    /// model message before it (`None` before any).
    pub(super) turn: Option<usize>,
}

/// The part of a request that a tool result's cut replaces.
#[derive(Debug, Clone, Copy)]
pub(super) enum Content<'a> {
    /// A string.
    Text(&'a RawValue),
    /// A list of blocks whose blocks of this `type` hold a `text`, cut together.
    Blocks(&'a RawValue, &'static str),
    /// Any JSON value, cut to the same shape ([`cap_json`](crate::json::cap_json)). When no cut
    /// of the shape fits, its capped text goes in an object under this key, if the slot takes
    /// one (Gemini's `{"output": text}`); else the value is left whole, with a warning, for a
    /// slot whose shape is demanded.
    Json(&'a RawValue, Option<&'static str>),
}

impl<'a> Content<'a> {
    /// `value` as a string; `None` for anything else.
    pub(super) fn string(value: &'a RawValue) -> Option<Self> {
        value.get().starts_with('"').then_some(Content::Text(value))
    }

    /// `value` as a string or a list of blocks whose text blocks are of type `text_type`;
    /// `None` for anything else.
    pub(super) fn text_or_blocks(value: &'a RawValue, text_type: &'static str) -> Option<Self> {
        match value.get().as_bytes().first() {
            Some(b'"') => Some(Content::Text(value)),
            Some(b'[') => Some(Content::Blocks(value, text_type)),
            _ => None,
        }
    }

    /// How it is read, for the cache's key.
    pub(super) fn shape(&self) -> &'static str {
        match *self {
            Content::Text(_) => "text",
            Content::Blocks(_, text_type) => text_type,
            Content::Json(_, _) => "json",
        }
    }

    /// Its JSON, as it is in the request.
    pub(super) fn json(&self) -> &'a RawValue {
        match *self {
            Content::Text(value) | Content::Blocks(value, _) | Content::Json(value, _) => value,
        }
    }

    /// What a tool's limit is measured on: the string, the text blocks joined by newlines, or
    /// the JSON.
    pub(super) fn text(&self) -> Cow<'a, str> {
        match *self {
            Content::Text(value) => Cow::Owned(string(value).unwrap_or_default()),
            Content::Blocks(value, text_type) => Cow::Owned(
                items(value)
                    .map(|blocks| texts(&blocks, text_type))
                    .into_iter()
                    .flatten()
                    .map(|(_, _, text)| text)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Content::Json(value, _) => Cow::Borrowed(value.get()),
        }
    }

    /// What a tool's limit is measured on of `json`, the JSON that replaces it: read as this
    /// content is read.
    pub(super) fn measured(&self, json: &str) -> String {
        let Ok(value) = serde_json::from_str::<&RawValue>(json) else {
            return json.to_owned();
        };
        match *self {
            Content::Text(_) => Content::Text(value).text().into_owned(),
            Content::Blocks(_, text_type) => Content::Blocks(value, text_type).text().into_owned(),
            Content::Json(_, _) => json.to_owned(),
        }
    }

    /// The JSON that replaces it by the one line `text`, when its slot takes one: a string, one
    /// text block, or an object under the slot's key; `None` for a slot whose shape is demanded.
    pub(super) fn replaced_by(&self, text: &str) -> Option<String> {
        match *self {
            Content::Text(_) => serde_json::to_string(text).ok(),
            Content::Blocks(_, text_type) => {
                Some(serde_json::json!([{ "type": text_type, "text": text }]).to_string())
            }
            Content::Json(_, key) => {
                let key = key?;
                Some(serde_json::json!({ key: text }).to_string())
            }
        }
    }

    /// The JSON that replaces it, cut to `limit`, and the figures of the cut; `None` when it is
    /// within the limit, or when it is left whole (a JSON value no cut fits, in a slot that
    /// takes only its shape).
    pub(super) fn cut(
        &self,
        tool: &str,
        limit: &ToolLimit,
        tokenizer: &dyn Tokenizer,
    ) -> Option<(String, Truncation)> {
        match *self {
            Content::Text(value) => {
                let text = string(value)?;
                let cut = crate::cut(&text, limit, tokenizer)?;
                Some((
                    serde_json::to_string(&cut.capped(&text)).ok()?,
                    cut.truncation,
                ))
            }
            Content::Blocks(value, text_type) => cut_blocks(value, text_type, limit, tokenizer)
                .map(|blocks| (blocks.json, blocks.cut.truncation)),
            Content::Json(value, text_in) => {
                match cap_shape(value, tool, limit, tokenizer, None, "a tool result")? {
                    Ok(capped) => Some(capped),
                    Err((text, truncation)) => {
                        let key = text_in?;
                        Some((serde_json::json!({ key: text }).to_string(), truncation))
                    }
                }
            }
        }
    }
}

/// `value` cut as [`cap_json`](crate::json::cap_json) cuts it: `Ok` with JSON of the same shape,
/// `Err` with a text when no cut of the shape fits, which a slot that takes only the shape
/// leaves whole, and says so with a warning naming `what` and `tool`. `None` when it fits.
pub(super) fn cap_shape(
    value: &RawValue,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    known: Option<CutText<'_>>,
    what: &str,
) -> Option<Result<(String, Truncation), (String, Truncation)>> {
    match cap_json_known(value.get(), limit, tokenizer, known) {
        Ok(Some(CappedJson::Json(json, truncation))) => Some(Ok((json, truncation))),
        Ok(Some(CappedJson::Text(text, truncation))) => {
            tracing::warn!(
                target: TARGET,
                tool,
                tokens = truncation.original_tokens,
                max_tokens = truncation.max_tokens,
                "{what} is over the limit and no cut of its shape fits"
            );
            Some(Err((text, truncation)))
        }
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(
                target: TARGET,
                tool,
                tokens = error.tokens,
                max_tokens = limit.max_tokens(),
                "{what} {error}: left as it is"
            );
            None
        }
    }
}

/// The text blocks of the list `blocks`: where each is in it, its `text` value, and its text.
fn texts<'a>(blocks: &[&'a RawValue], text_type: &str) -> Vec<(usize, &'a RawValue, String)> {
    blocks
        .iter()
        .enumerate()
        .filter_map(|(at, block)| {
            let fields = fields(block)?;
            let kind = fields.get("type").and_then(|kind| string(kind));
            let value = *fields
                .get("text")
                .filter(|_| kind.as_deref() == Some(text_type))?;
            Some((at, value, string(value)?))
        })
        .collect()
}

/// A list of blocks with its text blocks cut together: the list's JSON, the text the blocks
/// make joined by newlines, and where it was cut.
#[derive(Debug)]
pub(super) struct BlocksCut {
    pub(super) json: String,
    pub(super) joined: String,
    pub(super) cut: Cut,
}

/// The list `blocks` with its text blocks (of type `text_type`) cut together, taken as one text
/// joined by newlines: a block wholly past the cut is removed, the block the cut falls in is
/// cut, and the note ends the last text block kept. Other blocks stay where they are, byte for
/// byte. The one block cut of every shape: an MCP result's `content`, Anthropic's `tool_result`
/// blocks, Chat's and Responses' text parts.
pub(super) fn cut_blocks(
    blocks: &RawValue,
    text_type: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<BlocksCut> {
    let all = items(blocks)?;
    let mut texts = texts(&all, text_type);
    let lengths: Vec<usize> = texts.iter().map(|(_, _, text)| text.len()).collect();
    let within = lengths.iter().map(|len| len + 1).sum::<usize>();
    if within.saturating_sub(1) <= limit.max_tokens() {
        return None;
    }
    // One text block, the usual result, is cut where it is, not copied.
    let joined = match texts.as_mut_slice() {
        [(_, _, text)] => std::mem::take(text),
        texts => texts
            .iter()
            .map(|(_, _, text)| text.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let cut = crate::cut(&joined, limit, tokenizer)?;
    let mut kept = texts.iter().zip(cut.split(&joined, &lengths));
    let mut next = kept.next();
    let mut out = Vec::with_capacity(all.len());
    for (at, block) in all.iter().enumerate() {
        match next {
            Some(((text_at, value, _), text)) if *text_at == at => {
                if let Some(text) = text {
                    let block = block.get();
                    let literal = serde_json::to_string(&text).ok()?;
                    out.push(Cow::Owned(splice(
                        block,
                        span_of(block, value.get()),
                        &literal,
                    )));
                }
                next = kept.next();
            }
            _ => out.push(Cow::Borrowed(block.get())),
        }
    }
    let json = format!("[{}]", out.join(","));
    Some(BlocksCut { json, joined, cut })
}
