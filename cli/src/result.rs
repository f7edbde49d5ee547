//! The MCP result surgery: how the proxy caps a `CallToolResult` while keeping every field it
//! does not touch byte for byte.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde_json::value::RawValue;
use serde_json::Value;
use tool_output_cap::{
    cap, cut, line_break_after, note, Cut, Keep, Tokenizer, ToolLimit, ToolOutputLimits, Truncation,
};

use crate::lenient;
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
    let failed = result.get("isError").is_some_and(|e| e.get() == "true");
    let mut figures = serde_json::Map::new();
    let mut text = None;
    if let Some((content, cut_text)) = result
        .get("content")
        .and_then(|content| cap_content(content, failed, tool, limit, tokenizer))
    {
        result.insert("content".to_owned(), content);
        figures.insert("content".to_owned(), figures_of(cut_text.cut.truncation));
        text = Some(cut_text);
    }
    if let Some((structured, truncation)) = result
        .get("structuredContent")
        .and_then(|value| cap_structured(value, failed, tool, limit, tokenizer, text.as_ref()))
    {
        result.insert("structuredContent".to_owned(), structured);
        figures.insert("structuredContent".to_owned(), figures_of(truncation));
    }
    if figures.is_empty() {
        return false;
    }
    let mut meta = result.get("_meta").and_then(object).unwrap_or_default();
    meta.insert(META_KEY.to_owned(), raw(&Value::Object(figures)));
    result.insert("_meta".to_owned(), raw(&meta));
    true
}

fn figures_of(truncation: Truncation) -> Value {
    serde_json::json!({
        "original_tokens": truncation.original_tokens,
        "kept_tokens": truncation.kept_tokens,
        "dropped_tokens": truncation.dropped_tokens,
        "max_tokens": truncation.max_tokens,
        "keep": truncation.keep.name(),
    })
}

/// The `content` blocks with their text blocks, taken together as one text joined by newlines,
/// capped: blocks wholly past a cut are removed, the block a cut falls in is cut, and the note
/// ends the last text block kept. Other blocks stay where they are, untouched.
fn cap_content<'a>(
    content: &Cow<'a, RawValue>,
    failed: bool,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(Cow<'static, RawValue>, CutText<'a>)> {
    let Cow::Borrowed(content) = content else {
        return None;
    };
    let mut blocks: Vec<Cow<'a, RawValue>> =
        serde_json::from_str::<Vec<&'a RawValue>>(content.get())
            .ok()?
            .into_iter()
            .map(Cow::Borrowed)
            .collect();
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
    let limit = if failed {
        limit.clone().with_keep(Keep::Tail)
    } else {
        limit.clone()
    };
    let cut = cut(&joined, &limit, tokenizer)?;
    cut.truncation.record(tool, failed);
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
    Some((raw(&blocks), CutText { text: joined, cut }))
}

/// A text and where it was cut: the text blocks of a result, taken together, which a
/// `structuredContent` string may carry again.
struct CutText<'a> {
    text: Cow<'a, str>,
    cut: Cut,
}

/// `structuredContent`, when its compact JSON is over the limit, cut to fit: its longest string
/// is cut and ends with the note; when no one string can make the whole fit, its largest arrays
/// lose items instead and the note ends its last string. `None` when it fits, or when neither
/// can make it fit.
fn cap_structured(
    value: &RawValue,
    failed: bool,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    text: Option<&CutText>,
) -> Option<(Cow<'static, RawValue>, Truncation)> {
    let max_tokens = limit.max_tokens();
    if value.get().len() <= max_tokens {
        return None;
    }
    let value: Value = match lenient::parse(value.get()) {
        Ok(value) => value,
        Err(error) => {
            let tokens = tokenizer.count(value.get());
            if tokens > max_tokens {
                tracing::warn!(
                    tool,
                    tokens,
                    max_tokens,
                    "structuredContent is over the limit and cannot be read to be cut ({error}); left whole"
                );
            }
            return None;
        }
    };
    let limit = if failed {
        limit.clone().with_keep(Keep::Tail)
    } else {
        limit.clone()
    };
    let count = |value: &Value| tokenizer.count(&serde_json::to_string(value).unwrap_or_default());
    let longest = pointer_of_max(&value, |value| value.as_str().map(str::len));
    // The text blocks' text again (the filesystem server's `{"content": text}`): its cut is
    // known, and a text of more than twice the limit is over it as JSON too, whose escapes only
    // add characters. Else the structure is counted.
    let known = text.filter(|known| {
        known.cut.truncation.keep == limit.keep()
            && longest
                .as_deref()
                .and_then(|pointer| value.pointer(pointer)?.as_str())
                .is_some_and(|string| string == known.text)
    });
    let mut total = None;
    if known.is_none_or(|known| known.cut.truncation.original_tokens <= 2 * max_tokens) {
        let tokens = count(&value);
        if tokens <= max_tokens {
            return None;
        }
        total = Some(tokens);
    }
    let mut value = value;
    let cut = longest.and_then(|pointer| {
        let truncation = cut_string(&mut value, &pointer, &limit, tokenizer, known, count)?;
        Some((value.clone(), truncation))
    });
    let capped = match cut {
        Some(cut) => Some(cut),
        None => {
            let tokens = *total.get_or_insert_with(|| count(&value));
            drop_items(value, tokens, &limit, count)
        }
    };
    let Some((value, truncation)) = capped else {
        tracing::warn!(
            tool,
            tokens = total,
            max_tokens,
            "structuredContent is over the limit and neither a string nor its arrays can be cut to fit; left whole"
        );
        return None;
    };
    truncation.record(tool, failed);
    Some((raw(&value), truncation))
}

/// Cuts the string of `value` at `pointer` to make the whole fit `limit`; when that string is
/// the text of `known`, cuts it again from what its first cut kept. `value` is left as it was
/// when no cut makes it fit.
fn cut_string(
    value: &mut Value,
    pointer: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    known: Option<&CutText>,
    count: impl Fn(&Value) -> usize,
) -> Option<Truncation> {
    let Value::String(original) = std::mem::take(value.pointer_mut(pointer)?) else {
        return None;
    };
    // What the rest of the structure takes, counted without the string.
    let mut budget = limit.max_tokens().saturating_sub(count(value));
    // JSON escapes change the count a little: cut again by what is over.
    for _ in 0..8 {
        if budget < ToolOutputLimits::MIN_MAX_TOKENS {
            break;
        }
        let within = limit.clone().with_max_tokens(budget);
        let recut = known.and_then(|known| recut(known, &within, tokenizer));
        let Some((cut, truncation)) = recut.or_else(|| {
            let mut cut = original.clone();
            let truncation = cap(&mut cut, &within, tokenizer)?;
            Some((cut, truncation))
        }) else {
            break;
        };
        *value.pointer_mut(pointer)? = Value::String(cut);
        let tokens = count(value);
        if tokens <= limit.max_tokens() {
            return Some(truncation);
        }
        budget = budget.saturating_sub(tokens - limit.max_tokens());
    }
    *value.pointer_mut(pointer)? = Value::String(original);
    None
}

/// The text of `known` cut to `limit` from what its first cut kept, which holds all a cut to a
/// smaller limit keeps: the kept part cut again, and the note counting what the whole text drops.
/// `None` with `head_tail`, whose parts are cut afresh.
fn recut(
    known: &CutText,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(String, Truncation)> {
    let first = &known.cut;
    let (kept, kept_tokens) = match limit.keep() {
        Keep::Head => {
            let region = &known.text[..first.head_end];
            match cut(region, limit, tokenizer) {
                Some(again) => (&region[..again.head_end], again.truncation.kept_tokens),
                None => (region, first.truncation.kept_tokens),
            }
        }
        Keep::Tail => {
            let region = &known.text[first.tail_start..];
            match cut(region, limit, tokenizer) {
                Some(again) => (&region[again.tail_start..], again.truncation.kept_tokens),
                None => (region, first.truncation.kept_tokens),
            }
        }
        Keep::HeadTail => return None,
    };
    let original_tokens = first.truncation.original_tokens;
    let dropped_tokens = original_tokens - kept_tokens;
    let text = format!(
        "{kept}{}{}",
        line_break_after(kept),
        note(dropped_tokens, limit.hint())
    );
    let truncation = Truncation {
        original_tokens,
        kept_tokens,
        dropped_tokens,
        max_tokens: limit.max_tokens(),
        keep: limit.keep(),
    };
    Some((text, truncation))
}

/// `value`, `total` tokens, with items dropped from its largest arrays (from the end, or from
/// the start when `limit` keeps the tail) until it fits `limit` with the note at the end of its
/// last string. Its figures count the structure without the note.
fn drop_items(
    mut value: Value,
    total: usize,
    limit: &ToolLimit,
    count: impl Fn(&Value) -> usize,
) -> Option<(Value, Truncation)> {
    let mut excess = total.saturating_sub(limit.max_tokens());
    for _ in 0..16 {
        // The longest list of two items or more (so that a list holding one large list is not
        // emptied whole), else the longest non-empty one.
        let pointer = pointer_of_max(&value, |value| {
            let items = value.as_array().filter(|items| !items.is_empty())?;
            let size = serde_json::to_string(items).map_or(0, |json| json.len());
            Some((items.len() > 1, size))
        })?;
        let items = value.pointer_mut(&pointer)?.as_array_mut()?;
        let (mut dropped, mut tokens) = (0, 0);
        while tokens < excess && dropped < items.len() {
            let at = match limit.keep() {
                Keep::Tail => dropped,
                Keep::Head | Keep::HeadTail => items.len() - 1 - dropped,
            };
            // The item and its comma.
            tokens += count(&items[at]) + 1;
            dropped += 1;
        }
        match limit.keep() {
            Keep::Tail => drop(items.drain(..dropped)),
            Keep::Head | Keep::HeadTail => items.truncate(items.len() - dropped),
        }
        let kept_tokens = count(&value);
        let mut noted = value.clone();
        if let Some(last) = last_string(&mut noted) {
            last.push_str(line_break_after(last));
            last.push_str(&note(total - kept_tokens, limit.hint()));
        }
        let tokens = count(&noted);
        if tokens <= limit.max_tokens() {
            let truncation = Truncation {
                original_tokens: total,
                kept_tokens,
                dropped_tokens: total - kept_tokens,
                max_tokens: limit.max_tokens(),
                keep: limit.keep(),
            };
            return Some((noted, truncation));
        }
        excess = tokens - limit.max_tokens();
    }
    None
}

/// The last string of `value`, in the order its JSON is written.
fn last_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(string) => Some(string),
        Value::Array(items) => items.iter_mut().rev().find_map(last_string),
        Value::Object(fields) => fields.values_mut().rev().find_map(last_string),
        _ => None,
    }
}

/// The JSON pointer of the value in `value` that `rank` ranks highest, the first of equals.
fn pointer_of_max<R: Ord>(value: &Value, rank: impl Fn(&Value) -> Option<R>) -> Option<String> {
    fn walk<R: Ord>(
        value: &Value,
        pointer: String,
        rank: &impl Fn(&Value) -> Option<R>,
        best: &mut Option<(R, String)>,
    ) {
        if let Some(ranked) = rank(value) {
            if best.as_ref().is_none_or(|(best, _)| ranked > *best) {
                *best = Some((ranked, pointer.clone()));
            }
        }
        match value {
            Value::Array(items) => {
                for (at, item) in items.iter().enumerate() {
                    walk(item, format!("{pointer}/{at}"), rank, best);
                }
            }
            Value::Object(fields) => {
                for (key, field) in fields {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    walk(field, format!("{pointer}/{key}"), rank, best);
                }
            }
            _ => {}
        }
    }
    let mut best = None;
    walk(value, String::new(), &rank, &mut best);
    best.map(|(_, pointer)| pointer)
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

/// `value`, written as JSON, to stand for a value of the line.
fn raw(value: &impl serde::Serialize) -> Cow<'static, RawValue> {
    Cow::Owned(serde_json::value::to_raw_value(value).expect("JSON values serialize"))
}
