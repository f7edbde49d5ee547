//! A tool result found in a request, and its cut.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::raw::{fields, items, string};
use crate::json::cap_json;
use crate::json::walk::{span_of, splice};
use crate::limit::ToolLimit;
use crate::tokenizer::Tokenizer;
use crate::tool::{Outcome, Truncation};

/// A tool result in a request: where it is, what it was, and the tool whose call it answers.
#[derive(Debug)]
pub(super) struct Found<'a> {
    /// The tool's name, from the call the result answers; `None` when that call is not found.
    pub(super) tool: Option<String>,
    pub(super) outcome: Outcome,
    pub(super) content: Content<'a>,
    /// Whether the result is of the latest turn: after the model's last message.
    pub(super) latest: bool,
}

/// The part of a request that a tool result's cut replaces.
#[derive(Debug, Clone, Copy)]
pub(super) enum Content<'a> {
    /// A string.
    Text(&'a RawValue),
    /// A list of blocks whose blocks of this `type` hold a `text`, cut together.
    Blocks(&'a RawValue, &'static str),
    /// Any JSON value, cut as the MCP proxy cuts a `structuredContent`.
    Json(&'a RawValue),
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
            Content::Json(_) => "json",
        }
    }

    /// Its JSON, as it is in the request.
    pub(super) fn json(&self) -> &'a RawValue {
        match *self {
            Content::Text(value) | Content::Blocks(value, _) | Content::Json(value) => value,
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
            Content::Json(value) => Cow::Borrowed(value.get()),
        }
    }

    /// The JSON that replaces it, cut to `limit`, and the figures of the cut; `None` when it is
    /// within the limit, or when it cannot be cut (a JSON value that no cut makes fit).
    pub(super) fn cut(
        &self,
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
            Content::Blocks(value, text_type) => cut_blocks(value, text_type, limit, tokenizer),
            Content::Json(value) => match cap_json(value.get(), limit, tokenizer, None) {
                Ok(capped) => capped,
                Err(error) => {
                    tracing::warn!(target: "tool_output_cap", "a tool result {error}: left as it is");
                    None
                }
            },
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

/// The list `blocks` with its text blocks cut together, as the MCP proxy cuts a result's text
/// blocks: a block wholly past the cut is removed, the block the cut falls in is cut, and the
/// note ends the last text block kept. Other blocks stay where they are.
fn cut_blocks(
    blocks: &RawValue,
    text_type: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(String, Truncation)> {
    let all = items(blocks)?;
    let texts = texts(&all, text_type);
    let joined = texts
        .iter()
        .map(|(_, _, text)| text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let cut = crate::cut(&joined, limit, tokenizer)?;
    let lengths: Vec<usize> = texts.iter().map(|(_, _, text)| text.len()).collect();
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
    Some((format!("[{}]", out.join(",")), cut.truncation))
}
