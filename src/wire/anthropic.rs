//! The Anthropic Messages API (`/v1/messages`, `/v1/messages/count_tokens`): the `tool_result`
//! blocks of `messages`, each answering the `tool_use` with its `tool_use_id`.

use std::collections::HashMap;

use super::found::{Content, Found};
use super::raw::{string_field, turns_of_role, Object};
use crate::image::ImageTokens;
use crate::limit::Outcome;

/// Where the request's tool results are: the blocks of each message's content.
pub(super) const PATH: &[&str] = &["messages", "content"];

pub(super) fn results<'a>(request: &Object<'a>) -> Vec<Found<'a>> {
    let messages = &request.list;
    let turns = turns_of_role(messages, "assistant");
    let mut tools = HashMap::new();
    let mut results = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        for block in message.list.iter().map(|block| &block.fields) {
            match string_field(block, "type").as_deref() {
                Some("tool_use") => {
                    if let (Some(id), Some(name)) =
                        (string_field(block, "id"), string_field(block, "name"))
                    {
                        tools.insert(id, name);
                    }
                }
                Some("tool_result") => results.push((at, block)),
                _ => {}
            }
        }
    }
    results
        .into_iter()
        .filter_map(|(at, result)| {
            let content =
                Content::text_or_blocks(result.get("content")?, "text", ImageTokens::Anthropic)?;
            let outcome = match result.get("is_error").map(|error| error.get()) {
                Some("true") => Outcome::Error,
                _ => Outcome::Output,
            };
            let id = string_field(result, "tool_use_id");
            Some(Found {
                tool: id.and_then(|id| tools.get(&id).cloned()),
                outcome,
                content,
                turn: turns[at],
            })
        })
        .collect()
}
