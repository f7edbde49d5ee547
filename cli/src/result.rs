//! The MCP result surgery: how the proxy caps a `CallToolResult` while keeping every field it
//! does not touch byte for byte.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde_json::value::RawValue;
use serde_json::Value;
use tool_output_cap::json::{cap_json, CutText};
use tool_output_cap::{cut, Cut, Outcome, Tokenizer, ToolLimit, Truncation};

use crate::pending::{string, Carries};

/// A JSON object whose values are kept as they came, borrowed from the line, but those the cap
/// writes anew: capping a line holds no copy of what it leaves.
type Object<'a> = IndexMap<String, Cow<'a, RawValue>>;

/// The `_meta` key under which a capped result carries its truncation figures.
pub(crate) const META_KEY: &str = "tool-output-cap/truncation";

/// What a response the proxy waited for turned out to be.
#[derive(Debug, PartialEq)]
pub(crate) enum Response {
    /// Nothing to cap: forward it as it came.
    Unchanged,
    /// A task-augmented call's `CreateTaskResult`: the result comes later for this task id.
    Task(String),
    /// The capped line, without its line end.
    Capped(String),
}

/// Caps the `CallToolResult` in the response `line` to `limit`.
pub(crate) fn cap_response(
    line: &str,
    carries: Carries,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Response {
    let Some(mut response) = object_of(line) else {
        return Response::Unchanged;
    };
    let Some(mut result) = response.get("result").and_then(object) else {
        return Response::Unchanged;
    };
    let capped = match carries {
        Carries::CallToolResult => {
            if !result.contains_key("content") {
                return task_id(&result).map_or(Response::Unchanged, Response::Task);
            }
            cap_call_tool_result(&mut result, tool, limit, tokenizer)
        }
        Carries::Task => {
            let completed = result.get("status").and_then(|s| string(s));
            let inner = result.get("result").and_then(object);
            match (completed.as_deref(), inner) {
                (Some("completed"), Some(mut inner)) => {
                    let capped = cap_call_tool_result(&mut inner, tool, limit, tokenizer);
                    if capped {
                        result.insert("result".to_owned(), raw(&inner));
                    }
                    capped
                }
                _ => false,
            }
        }
    };
    if !capped {
        return Response::Unchanged;
    }
    response.insert("result".to_owned(), raw(&result));
    Response::Capped(serde_json::to_string(&response).expect("JSON values serialize"))
}

/// The task id of a `CreateTaskResult`: `task.taskId`, or `taskId`.
fn task_id(result: &Object) -> Option<String> {
    let task = result.get("task").and_then(object);
    task.as_ref()
        .and_then(|task| task.get("taskId"))
        .or_else(|| result.get("taskId"))
        .and_then(|id| string(id))
}

/// Caps the text blocks and the `structuredContent` of `result`, and says so in its `_meta`;
/// whether anything was cut.
fn cap_call_tool_result(
    result: &mut Object,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> bool {
    if result
        .get("resultType")
        .and_then(|t| string(t))
        .is_some_and(|t| t != "complete")
    {
        return false;
    }
    let outcome = if result.get("isError").is_some_and(|e| e.get() == "true") {
        Outcome::Error
    } else {
        Outcome::Output
    };
    let mut figures = serde_json::Map::new();
    let mut text = None;
    if let Some((content, joined, cut)) = result
        .get("content")
        .and_then(|content| cap_content(content, outcome, tool, limit, tokenizer))
    {
        result.insert("content".to_owned(), content);
        figures.insert("content".to_owned(), json(cut.truncation));
        text = Some((joined, cut));
    }
    let known = text.as_ref().map(|(text, cut)| CutText { text, cut });
    if let Some((structured, truncation)) = result
        .get("structuredContent")
        .and_then(|value| cap_structured(value, outcome, tool, limit, tokenizer, known))
    {
        result.insert("structuredContent".to_owned(), Cow::Owned(structured));
        figures.insert("structuredContent".to_owned(), json(truncation));
    }
    if figures.is_empty() {
        return false;
    }
    let mut meta = result.get("_meta").and_then(object).unwrap_or_default();
    meta.insert(META_KEY.to_owned(), raw(&Value::Object(figures)));
    result.insert("_meta".to_owned(), raw(&meta));
    true
}

/// The `content` blocks with their text blocks, taken together as one text joined by newlines,
/// capped: blocks wholly past a cut are removed, the block a cut falls in is cut, and the note
/// ends the last text block kept. Other blocks stay where they are, untouched.
fn cap_content<'a>(
    content: &Cow<'a, RawValue>,
    outcome: Outcome,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(Cow<'static, RawValue>, Cow<'a, str>, Cut)> {
    let Cow::Borrowed(content) = content else {
        return None;
    };
    let mut blocks: Vec<Cow<'a, RawValue>> =
        serde_json::from_str::<Vec<&'a RawValue>>(content.get())
            .ok()?
            .into_iter()
            .map(Cow::Borrowed)
            .collect();
    let mut texts = text_blocks(&blocks);
    let texts_len = texts
        .iter()
        .map(|(_, _, text)| text.len() + 1)
        .sum::<usize>();
    if texts_len.saturating_sub(1) <= limit.max_tokens() {
        return None;
    }
    let lengths: Vec<usize> = texts.iter().map(|(_, _, text)| text.len()).collect();
    // One text block, the usual result, is cut where it is.
    let joined = match texts.as_mut_slice() {
        [(_, _, text)] => std::mem::take(text),
        texts => Cow::Owned(
            texts
                .iter()
                .map(|(_, _, text)| text.as_ref())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    };
    let cut = cut(&joined, &outcome.limit(limit), tokenizer)?;
    cut.truncation.record(tool, outcome);
    let kept = cut.split(&joined, &lengths);
    let mut removed = Vec::new();
    for ((at, mut block, _), kept) in texts.into_iter().zip(kept) {
        match kept {
            Some(text) => {
                block.insert("text".to_owned(), raw(&text));
                blocks[at] = raw(&block);
            }
            None => removed.push(at),
        }
    }
    let blocks: Vec<Cow<'a, RawValue>> = blocks
        .into_iter()
        .enumerate()
        .filter(|(at, _)| !removed.contains(at))
        .map(|(_, block)| block)
        .collect();
    Some((raw(&blocks), joined, cut))
}

/// `structuredContent` capped as [`cap_json`] caps it, with the cut recorded; `None` when it
/// fits, or, with a warning, when it cannot be cut.
fn cap_structured(
    value: &RawValue,
    outcome: Outcome,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    known: Option<CutText<'_>>,
) -> Option<(Box<RawValue>, Truncation)> {
    match cap_json(value.get(), &outcome.limit(limit), tokenizer, known) {
        Ok(Some((json, truncation))) => {
            truncation.record(tool, outcome);
            Some((RawValue::from_string(json).ok()?, truncation))
        }
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(
                tool,
                tokens = error.tokens(),
                max_tokens = limit.max_tokens(),
                "structuredContent {error}; left whole"
            );
            None
        }
    }
}

/// The text blocks among `blocks`: where each is, its fields, and its text.
fn text_blocks<'a>(blocks: &[Cow<'a, RawValue>]) -> Vec<(usize, Object<'a>, Cow<'a, str>)> {
    let mut texts = Vec::new();
    for (at, block) in blocks.iter().enumerate() {
        let Some(block) = object(block) else { continue };
        if block.get("type").and_then(|t| string(t)).as_deref() != Some("text") {
            continue;
        }
        if let Some(text) = block.get("text").and_then(text_of) {
            texts.push((at, block, text));
        }
    }
    texts
}

/// The object `json`, its values borrowed from it.
fn object_of(json: &str) -> Option<Object<'_>> {
    let fields: IndexMap<String, &RawValue> = serde_json::from_str(json).ok()?;
    Some(
        fields
            .into_iter()
            .map(|(key, value)| (key, Cow::Borrowed(value)))
            .collect(),
    )
}

/// The object `value` of a line, its values borrowed from the line: `None` for a value the cap
/// wrote, which it does not read again.
fn object<'a>(value: &Cow<'a, RawValue>) -> Option<Object<'a>> {
    match value {
        Cow::Borrowed(value) => object_of(value.get()),
        Cow::Owned(_) => None,
    }
}

/// The string `value` of a line, borrowed from it when it has no escapes to decode.
fn text_of<'a>(value: &Cow<'a, RawValue>) -> Option<Cow<'a, str>> {
    let Cow::Borrowed(value) = value else {
        return None;
    };
    // Not tried as a `&str` first: the error would hold a copy of the whole string.
    if value.get().contains('\\') {
        return string(value).map(Cow::Owned);
    }
    serde_json::from_str::<&'a str>(value.get())
        .ok()
        .map(Cow::Borrowed)
}

/// The figures of a cut, as `_meta` carries them.
fn json(truncation: Truncation) -> Value {
    serde_json::to_value(truncation).expect("figures serialize")
}

/// `value`, written as JSON, to stand for a value of the line.
fn raw(value: &impl serde::Serialize) -> Cow<'static, RawValue> {
    Cow::Owned(serde_json::value::to_raw_value(value).expect("JSON values serialize"))
}
