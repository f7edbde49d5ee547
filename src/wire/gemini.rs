//! Gemini (`:generateContent`, `:streamGenerateContent`, `:countTokens`): the `functionResponse`
//! parts of `contents`, each naming its function. A `response` is any JSON object, cut to the
//! same shape; one that no cut of its shape fits becomes `{"output": text}` (`{"error": text}`
//! for an error), its capped text. One with an `error` and no `output` is an error. The media
//! of its `parts` (`inlineData`) are priced by Gemini's rule and cut with it
//! ([`parts`](super::parts)).

use super::found::{Content, Found};
use super::raw::{fields, string_field, turns_of_role, Object};
use crate::limit::Outcome;

/// Where the request's tool results are: the parts of each content.
pub(super) const PATH: &[&str] = &["contents", "parts"];

pub(super) fn results<'a>(request: &Object<'a>) -> Vec<Found<'a>> {
    let contents = &request.list;
    let turns = turns_of_role(contents, "model");
    let mut results = Vec::new();
    for (at, content) in contents.iter().enumerate() {
        for part in &content.list {
            let Some(response) = part.fields.get("functionResponse").and_then(|r| fields(r)) else {
                continue;
            };
            let Some(value) = response.get("response").copied() else {
                continue;
            };
            let outcome = match fields(value) {
                Some(object) if object.contains_key("error") && !object.contains_key("output") => {
                    Outcome::Error
                }
                _ => Outcome::Output,
            };
            // No cut of its shape fits: its text, as the API's own `output` or `error`.
            let text_in = match outcome {
                Outcome::Output => "output",
                Outcome::Error => "error",
            };
            // With parts, its media are priced and cut with its response.
            let whole = part.fields.get("functionResponse").copied();
            let content = match whole.filter(|_| response.contains_key("parts")) {
                Some(whole) => Content::WithParts(whole, text_in),
                None => Content::Json(value, Some(text_in)),
            };
            results.push(Found {
                tool: string_field(&response, "name"),
                outcome,
                content,
                turn: turns[at],
            });
        }
    }
    results
}
