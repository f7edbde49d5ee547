//! OpenAI Chat Completions (`/v1/chat/completions`): the `role: "tool"` messages, each answering
//! the assistant's `tool_calls` entry with its `tool_call_id`.

use std::collections::HashMap;

use super::found::{Content, Found};
use super::raw::{fields, string_field, turns_of_role, Object};
use crate::image::ImageTokens;
use crate::limit::Outcome;

/// Where the request's tool calls are: each message's `tool_calls`.
pub(super) const PATH: &[&str] = &["messages", "tool_calls"];

pub(super) fn results<'a>(request: &Object<'a>) -> Vec<Found<'a>> {
    let messages = &request.list;
    let role = |message: &Object<'_>| string_field(&message.fields, "role");
    let turns = turns_of_role(messages, "assistant");
    let mut tools = HashMap::new();
    for call in messages.iter().flat_map(|message| &message.list) {
        let name = call
            .fields
            .get("function")
            .and_then(|function| fields(function))
            .and_then(|function| string_field(&function, "name"));
        if let (Some(id), Some(name)) = (string_field(&call.fields, "id"), name) {
            tools.insert(id, name);
        }
    }
    messages
        .iter()
        .enumerate()
        .filter(|(_, message)| role(message).as_deref() == Some("tool"))
        .filter_map(|(at, message)| {
            // A tool message holds text parts only: no image to price.
            let content = message.fields.get("content")?;
            let content = Content::text_or_blocks(content, "text", ImageTokens::OpenAiTiles)?;
            let id = string_field(&message.fields, "tool_call_id");
            Some(Found {
                tool: id.and_then(|id| tools.get(&id).cloned()),
                outcome: Outcome::Output,
                content,
                turn: turns[at],
            })
        })
        .collect()
}
