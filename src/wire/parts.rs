//! A Gemini function response with `parts`: its `response` (any JSON object) and the media of
//! its parts (`inlineData`, priced by Gemini's rule; [`media`](super::media)), cut together to
//! one limit.
//!
//! The parts stay, byte for byte, while they fit, as a list of blocks' media do
//! ([`MediaFit`]): scaled down, or giving way; those that give way leave the list, and the `response` says so under the
//! key `tool-output-cap`, in the note's form, since a part holds media alone. The `response` is
//! cut to what the parts leave, as a Gemini `response` is cut alone.

use serde_json::value::RawValue;

use super::blocks::rebuilt;
use super::found::cap_shape;
use super::media::{inline_data, Priced};
use super::media_fit::MediaFit;
use super::raw::{fields, items};
use crate::image::ImageTokens;
use crate::json::walk::{span_of, splice};
use crate::limit::ToolLimit;
use crate::media::Media;
use crate::tokenizer::Tokenizer;
use crate::truncation::Truncation;

/// The key of a `response` under which the note of the parts that gave way goes.
pub(super) const NOTE_KEY: &str = "tool-output-cap";

/// The `response` and the `parts` of the function response `whole`.
pub(super) fn response_and_parts(whole: &RawValue) -> Option<(&RawValue, Vec<&RawValue>)> {
    let whole = fields(whole)?;
    Some((*whole.get("response")?, items(whole.get("parts")?)?))
}

/// The media of the parts of the function response `whole`.
pub(super) fn media(whole: &RawValue) -> Vec<Media> {
    let parts = response_and_parts(whole).map(|(_, parts)| parts);
    let parts = parts.unwrap_or_default();
    let priced = parts
        .iter()
        .filter_map(|part| inline_data(part, ImageTokens::Gemini));
    priced.map(|priced| priced.media).collect()
}

/// The kinds of the parts of the function response `whole` that hold no `inlineData`, and so
/// are not priced (a `fileData`, a file by its URI): passed as they are, uncounted.
pub(super) fn unpriced(whole: &RawValue) -> Vec<String> {
    let parts = response_and_parts(whole).map(|(_, parts)| parts);
    let parts = parts.unwrap_or_default();
    let unpriced = parts
        .iter()
        .filter(|part| inline_data(part, ImageTokens::Gemini).is_none());
    let kinds = unpriced.filter_map(|part| fields(part)?.keys().min().map(|key| key.to_string()));
    kinds.collect()
}

/// The function response `whole` cut to `limit`: its parts' media first, then its `response`
/// to what they leave (as `{text_in: text}` when no cut of its shape fits); `None` when it is
/// within the limit.
pub(super) fn cut(
    whole: &RawValue,
    text_in: &str,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(String, Truncation)> {
    let (response, parts) = response_and_parts(whole)?;
    let priced: Vec<(usize, Priced<'_>)> = parts
        .iter()
        .enumerate()
        .filter_map(|(at, part)| Some((at, inline_data(part, ImageTokens::Gemini)?)))
        .collect();
    // The note goes in as a JSON entry, whose key, quotes and comma take room too, and a token
    // more where it meets what it follows.
    let note_cost = |note: &str| tokenizer.count(&entry(note)) + 1;
    let gone = MediaFit::of(&parts, &priced, ImageTokens::Gemini, limit, &note_cost);
    let entry = gone.note.as_deref().map(entry);
    let text_limit = gone.text_limit(limit);
    let response_cut = match cap_shape(
        response,
        tool,
        &text_limit,
        tokenizer,
        None,
        "a tool result",
    ) {
        Some(Ok(cut)) => Some(cut),
        Some(Err((text, truncation))) => {
            Some((serde_json::json!({ text_in: text }).to_string(), truncation))
        }
        None => None,
    };
    if response_cut.is_none() && gone.edits.is_empty() {
        return None;
    }
    let text_tokens = match &response_cut {
        Some((_, truncation)) => (truncation.original_tokens, truncation.kept_tokens),
        None => {
            let tokens = tokenizer.count(response.get());
            (tokens, tokens)
        }
    };
    let mut response_json =
        response_cut.map_or_else(|| response.get().to_owned(), |(json, _)| json);
    if let Some(entry) = &entry {
        noted(&mut response_json, entry);
    }
    let parts_json = rebuilt(&parts, gone.edits.clone());
    Some((
        spliced(whole, &response_json, &parts_json)?,
        gone.figures(limit, text_tokens),
    ))
}

/// The function response `whole` as one line, `text`, when it gives way whole: its `response`
/// `{text_in: text}`, and no parts.
pub(super) fn replaced_by(whole: &RawValue, text_in: &str, text: &str) -> Option<String> {
    let response = serde_json::json!({ text_in: text }).to_string();
    spliced(whole, &response, "[]")
}

/// `whole` with its `response` and its `parts` replaced.
fn spliced(whole: &RawValue, response: &str, parts: &str) -> Option<String> {
    let (old_response, _) = response_and_parts(whole)?;
    let json = whole.get();
    let response_at = span_of(json, old_response.get());
    let parts_at = span_of(json, parts_list(whole)?.get());
    // The later span first, so that the earlier stays where it is.
    Some(if response_at.start < parts_at.start {
        splice(&splice(json, parts_at, parts), response_at, response)
    } else {
        splice(&splice(json, response_at, response), parts_at, parts)
    })
}

fn parts_list(whole: &RawValue) -> Option<&RawValue> {
    fields(whole)?.get("parts").copied()
}

/// The entry of `note` in a response: `,"tool-output-cap":"truncated: ..."`.
fn entry(note: &str) -> String {
    let key = serde_json::to_string(NOTE_KEY).expect("a string");
    format!(",{key}:{}", serde_json::to_string(note).expect("a string"))
}

/// `response`, a JSON object, with `entry` last; as it is if it is no object.
fn noted(response: &mut String, entry: &str) {
    if !response.trim_start().starts_with('{') {
        return;
    }
    let empty = response
        .trim_end()
        .trim_end_matches('}')
        .trim_end()
        .ends_with('{');
    let at = response.rfind('}').unwrap_or(response.len());
    response.insert_str(at, if empty { &entry[1..] } else { entry });
}
