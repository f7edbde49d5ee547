//! Gemini (`:generateContent`, `:streamGenerateContent`, `:countTokens`): the `functionResponse`
//! parts of `contents`, each naming its function. A `response` is any JSON object, cut as the
//! MCP proxy cuts a `structuredContent`; one with an `error` and no `output` is an error.

use super::found::{Content, Found};
use super::raw::{fields, objects, string_field, Fields};
use crate::tool::Outcome;

pub(super) fn results<'a>(request: &Fields<'a>) -> Vec<Found<'a>> {
    let Some(contents) = request
        .get("contents")
        .and_then(|contents| objects(contents))
    else {
        return Vec::new();
    };
    let last_model = contents
        .iter()
        .rposition(|content| string_field(content, "role").as_deref() == Some("model"));
    let mut results = Vec::new();
    for (at, content) in contents.iter().enumerate() {
        let parts = content.get("parts").and_then(|parts| objects(parts));
        for part in parts.into_iter().flatten() {
            let Some(response) = part.get("functionResponse").and_then(|r| fields(r)) else {
                continue;
            };
            let Some(value) = response.get("response") else {
                continue;
            };
            let outcome = match fields(value) {
                Some(object) if object.contains_key("error") && !object.contains_key("output") => {
                    Outcome::Error
                }
                _ => Outcome::Output,
            };
            results.push(Found {
                tool: string_field(&response, "name"),
                outcome,
                content: Content::Json(value),
                latest: last_model.is_none_or(|last| at > last),
            });
        }
    }
    results
}
