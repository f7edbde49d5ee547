//! The Anthropic Messages API (`/v1/messages` and `/v1/messages/count_tokens`): the
//! `tool_result` blocks of its `messages`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::value::RawValue;

use super::{fields, items, string, NotARequest, Splices};
use crate::json::walk::{span_of, splice};
use crate::limits::ToolOutputLimits;
use crate::tool::Outcome;

/// `body`, a Messages API request, with each `tool_result` capped to the limit of the tool
/// whose `tool_use` it answers; `None` when none is over its limit.
///
/// A result's `content` is a string, or a list of blocks whose text blocks are capped together,
/// joined by newlines, as the MCP proxy caps a result's text blocks: a block wholly past the cut
/// is removed, the block the cut falls in is cut, and the note ends the last text block kept.
/// Other blocks (images, documents, search results) are kept where they are and not counted.
/// `is_error: true` keeps the tail. A result whose `tool_use` is not in the request gets the
/// default limit. Everything else passes byte for byte: other fields, other messages, results
/// within their limits (those capped on an earlier turn among them), and the results of the
/// server's own tools (`web_fetch_tool_result`, `mcp_tool_result` and the like). Each cut emits
/// the truncation event. `max_tokens_per_turn` is not applied here.
///
/// ```
/// use serde_json::json;
/// use tool_output_cap::request::anthropic::cap_messages;
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
/// let limits = ToolOutputLimits::default().with_tool("Glob", 3000)?;
/// let capped = cap_messages(&body, &limits)?.expect("over 3000 tokens");
/// let sent: serde_json::Value = serde_json::from_str(&capped)?;
/// let result = sent["messages"][2]["content"][0]["content"].as_str().unwrap();
/// assert!(result.ends_with("refine your query"));
/// assert_eq!(cap_messages(&capped, &limits)?, None); // capped once, the same bytes after
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cap_messages(body: &str, limits: &ToolOutputLimits) -> Result<Option<String>, NotARequest> {
    let request: HashMap<Cow<'_, str>, &RawValue> =
        serde_json::from_str(body).map_err(NotARequest)?;
    let Some(messages) = request.get("messages").and_then(|messages| items(messages)) else {
        return Ok(None);
    };
    let mut tools = HashMap::new();
    let mut results = Vec::new();
    for block in messages
        .iter()
        .filter_map(|message| blocks(message))
        .flatten()
    {
        let Some(block) = fields(block) else { continue };
        match block.get("type").and_then(|kind| string(kind)).as_deref() {
            Some("tool_use") => {
                let id = block.get("id").and_then(|id| string(id));
                let name = block.get("name").and_then(|name| string(name));
                if let (Some(id), Some(name)) = (id, name) {
                    tools.insert(id, name);
                }
            }
            Some("tool_result") => results.push(block),
            _ => {}
        }
    }
    let mut splices = Splices::default();
    for result in &results {
        let Some(content) = result.get("content") else {
            continue;
        };
        let id = result.get("tool_use_id").and_then(|id| string(id));
        let tool = id.and_then(|id| tools.get(&id)).map_or("", String::as_str);
        let outcome = match result.get("is_error").map(|error| error.get()) {
            Some("true") => Outcome::Error,
            _ => Outcome::Output,
        };
        if let Some(capped) = cap_content(content, tool, outcome, limits) {
            splices.replace(body, content.get(), capped);
        }
    }
    Ok(splices.apply(body))
}

/// The content blocks of `message`, when its content is a list.
fn blocks(message: &RawValue) -> Option<Vec<&RawValue>> {
    fields(message)?
        .get("content")
        .and_then(|content| items(content))
}

/// `content`, a tool result's string or list of blocks, capped to `tool`'s limit; `None` when
/// it is within it.
fn cap_content(
    content: &RawValue,
    tool: &str,
    outcome: Outcome,
    limits: &ToolOutputLimits,
) -> Option<String> {
    if let Some(text) = string(content) {
        let cut = limits.cut(tool, &text, outcome)?;
        cut.truncation.record(tool, outcome);
        return serde_json::to_string(&cut.capped(&text)).ok();
    }
    let blocks = items(content)?;
    // The text blocks: where each is among the blocks, its `text` value, and its text.
    let texts: Vec<(usize, &RawValue, String)> = blocks
        .iter()
        .enumerate()
        .filter_map(|(at, block)| {
            let fields = fields(block)?;
            let kind = fields.get("type").and_then(|kind| string(kind));
            let value = *fields
                .get("text")
                .filter(|_| kind.as_deref() == Some("text"))?;
            Some((at, value, string(value)?))
        })
        .collect();
    let joined = texts
        .iter()
        .map(|(_, _, text)| text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let cut = limits.cut(tool, &joined, outcome)?;
    cut.truncation.record(tool, outcome);
    let lengths: Vec<usize> = texts.iter().map(|(_, _, text)| text.len()).collect();
    let mut kept = texts.iter().zip(cut.split(&joined, &lengths));
    let mut next = kept.next();
    let mut out = Vec::with_capacity(blocks.len());
    for (at, block) in blocks.iter().enumerate() {
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
    Some(format!("[{}]", out.join(",")))
}
