//! OpenAI Chat Completions (`/v1/chat/completions`): the `role: "tool"` messages, each answering
//! the assistant's `tool_calls` entry with its `tool_call_id`.

use std::collections::HashMap;

use super::found::{Content, Found};
use super::raw::{fields, objects, string_field, Fields};
use crate::tool::Outcome;

pub(super) fn results<'a>(request: &Fields<'a>) -> Vec<Found<'a>> {
    let Some(messages) = request
        .get("messages")
        .and_then(|messages| objects(messages))
    else {
        return Vec::new();
    };
    let role = |message: &Fields<'_>| string_field(message, "role");
    let last_assistant = messages
        .iter()
        .rposition(|message| role(message).as_deref() == Some("assistant"));
    let mut tools = HashMap::new();
    for call in messages
        .iter()
        .filter_map(|message| message.get("tool_calls").and_then(|calls| objects(calls)))
        .flatten()
    {
        let name = call
            .get("function")
            .and_then(|function| fields(function))
            .and_then(|function| string_field(&function, "name"));
        if let (Some(id), Some(name)) = (string_field(&call, "id"), name) {
            tools.insert(id, name);
        }
    }
    messages
        .iter()
        .enumerate()
        .filter(|(_, message)| role(message).as_deref() == Some("tool"))
        .filter_map(|(at, message)| {
            let content = Content::text_or_blocks(message.get("content")?, "text")?;
            let id = string_field(message, "tool_call_id");
            Some(Found {
                tool: id.and_then(|id| tools.get(&id).cloned()),
                outcome: Outcome::Output,
                content,
                latest: last_assistant.is_none_or(|last| at > last),
            })
        })
        .collect()
}
