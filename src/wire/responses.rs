//! OpenAI Responses (`/v1/responses`): the tool outputs among the `input` items.
//!
//! - `function_call_output` and `custom_tool_call_output`: `output` a string or a list of
//!   `input_text` parts, answering the `function_call` or `custom_tool_call` with its `call_id`;
//! - `local_shell_call_output`: `output` a string, of the tool `local_shell`;
//! - `shell_call_output`: `output` a list of `stdout`, `stderr` and `outcome` objects, of the
//!   tool `shell`, cut to the same shape (left whole, with a warning, if no cut of it fits);
//! - `mcp_call`: its `output` string, of the tool `name`;
//! - `computer_call_output`: its `output` screenshot, of the tool `computer`: priced, and never
//!   cut, since the API takes only a screenshot there.

use std::collections::HashMap;

use super::found::{Content, Found};
use super::raw::{string_field, Fields, Object};
use crate::image::ImageTokens;
use crate::limit::Outcome;

/// Where the request's tool outputs are: its `input` items.
pub(super) const PATH: &[&str] = &["input"];

pub(super) fn results<'a>(request: &Object<'a>) -> Vec<Found<'a>> {
    let input: Vec<&Fields<'a>> = request.list.iter().map(|item| &item.fields).collect();
    let kind = |item: &Fields<'_>| string_field(item, "type").unwrap_or_default();
    // The model's items, its calls and messages, each start a turn: a result is of the turn of
    // the last one at or before it (an `mcp_call` holds its own output).
    let mut last_model = None;
    let turns: Vec<Option<usize>> = input
        .iter()
        .enumerate()
        .map(|(at, item)| {
            let kind = kind(item);
            if kind.ends_with("_call")
                || kind == "reasoning"
                || string_field(item, "role").as_deref() == Some("assistant")
            {
                last_model = Some(at);
            }
            last_model
        })
        .collect();
    // Images are priced as the request's model prices them.
    let model = string_field(&request.fields, "model").unwrap_or_default();
    let images = ImageTokens::of_openai_model(&model);
    let mut tools = HashMap::new();
    for item in input.iter().copied() {
        if matches!(kind(item).as_str(), "function_call" | "custom_tool_call") {
            if let (Some(id), Some(name)) =
                (string_field(item, "call_id"), string_field(item, "name"))
            {
                tools.insert(id, name);
            }
        }
    }
    input
        .iter()
        .enumerate()
        .filter_map(|(at, item)| {
            let output = item.get("output")?;
            let (tool, content) = match kind(item).as_str() {
                "function_call_output" | "custom_tool_call_output" => (
                    string_field(item, "call_id").and_then(|id| tools.get(&id).cloned()),
                    Content::text_or_blocks(output, "input_text", images)?,
                ),
                "local_shell_call_output" => (Some("local_shell".into()), Content::string(output)?),
                "shell_call_output" => (Some("shell".into()), Content::Json(output, None)),
                "mcp_call" => (string_field(item, "name"), Content::string(output)?),
                "computer_call_output" => (Some("computer".into()), Content::Media(output, images)),
                _ => return None,
            };
            Some(Found {
                tool,
                outcome: Outcome::Output,
                content,
                turn: turns[at],
            })
        })
        .collect()
}
