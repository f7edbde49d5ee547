//! A tool result found in a request, and its cut.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::blocks::{self, cut_blocks, joined};
use super::media::priced;
use super::parts;
use super::raw::{items, string};
use crate::image::ImageTokens;
use crate::json::{cap_json_known, CappedJson, CutText};
use crate::limit::{Outcome, ToolLimit};
use crate::media::Media;
use crate::tokenizer::Tokenizer;
use crate::truncation::{Truncation, TARGET};

/// A tool result in a request: where it is, what it was, and the tool whose call it answers.
#[derive(Debug)]
pub(super) struct Found<'a> {
    /// The tool's name, from the call the result answers; `None` when that call is not found.
    pub(super) tool: Option<String>,
    pub(super) outcome: Outcome,
    pub(super) content: Content<'a>,
    /// The turn it belongs to: where in the request the model message it answers is, the last
    /// model message before it (`None` before any).
    pub(super) turn: Option<usize>,
}

/// The part of a request that a tool result's cut replaces.
#[derive(Debug, Clone, Copy)]
pub(super) enum Content<'a> {
    /// A string.
    Text(&'a RawValue),
    /// A list of blocks whose blocks of this `type` hold a `text`, cut together, and whose
    /// images are priced by this rule.
    Blocks(&'a RawValue, &'static str, ImageTokens),
    /// Any JSON value, cut to the same shape ([`cap_json`](crate::json::cap_json)). When no cut
    /// of the shape fits, its capped text goes in an object under this key, if the slot takes
    /// one (Gemini's `{"output": text}`); else the value is left whole, with a warning, for a
    /// slot whose shape is demanded.
    Json(&'a RawValue, Option<&'static str>),
    /// One block of media, in a slot that takes only its shape (a Responses
    /// `computer_call_output`'s screenshot), priced by this rule: counted, never cut.
    Media(&'a RawValue, ImageTokens),
    /// A Gemini function response with `parts`: the whole `functionResponse`, its `response`
    /// and its parts' media cut together ([`parts`](super::parts)), the response's capped text
    /// under this key when no cut of its shape fits.
    WithParts(&'a RawValue, &'static str),
}

impl<'a> Content<'a> {
    /// `value` as a string; `None` for anything else.
    pub(super) fn string(value: &'a RawValue) -> Option<Self> {
        value.get().starts_with('"').then_some(Content::Text(value))
    }

    /// `value` as a string or a list of blocks whose text blocks are of type `text_type` and
    /// whose images are priced by `images`; `None` for anything else.
    pub(super) fn text_or_blocks(
        value: &'a RawValue,
        text_type: &'static str,
        images: ImageTokens,
    ) -> Option<Self> {
        match value.get().as_bytes().first() {
            Some(b'"') => Some(Content::Text(value)),
            Some(b'[') => Some(Content::Blocks(value, text_type, images)),
            _ => None,
        }
    }

    /// How it is read, for the cache's key.
    pub(super) fn shape(&self) -> &'static str {
        match *self {
            Content::Text(_) => "text",
            Content::Blocks(_, text_type, _) => text_type,
            Content::Json(_, _) => "json",
            Content::Media(_, _) => "media",
            Content::WithParts(_, _) => "gemini parts",
        }
    }

    /// The rule its images are priced by, for the cache's key: none for content that holds
    /// none it reads.
    pub(super) fn image_rule(&self) -> Option<ImageTokens> {
        match *self {
            Content::Blocks(_, _, images) | Content::Media(_, images) => Some(images),
            Content::WithParts(_, _) => Some(ImageTokens::Gemini),
            Content::Text(_) | Content::Json(_, _) => None,
        }
    }

    /// The media in `json`, the JSON that replaces it, or in its own if none, each priced, its
    /// labels counted by `tokenizer`.
    pub(super) fn media(&self, json: Option<&str>, tokenizer: &dyn Tokenizer) -> Vec<Media> {
        let (own, rule) = match *self {
            Content::Blocks(own, _, rule) => (own, rule),
            Content::Media(own, rule) => {
                let priced = priced(own, rule, tokenizer);
                return priced.map(|p| p.media).into_iter().collect();
            }
            Content::WithParts(own, _) => {
                return match json.map(serde_json::from_str::<&RawValue>) {
                    Some(Ok(whole)) => parts::media(whole),
                    Some(Err(_)) => Vec::new(),
                    None => parts::media(own),
                }
            }
            Content::Text(_) | Content::Json(_, _) => return Vec::new(),
        };
        let list = match json.map(serde_json::from_str::<&RawValue>) {
            Some(Ok(list)) => list,
            Some(Err(_)) => return Vec::new(),
            None => own,
        };
        let blocks = items(list).unwrap_or_default();
        blocks
            .iter()
            .filter_map(|block| Some(priced(block, rule, tokenizer)?.media))
            .collect()
    }

    /// The types of the blocks (or the kinds of the parts) it carries that are neither text nor
    /// media the cut prices: passed as they are, uncounted.
    pub(super) fn unpriced(&self) -> Vec<String> {
        match *self {
            Content::Blocks(value, text_type, _) => blocks::unpriced(value, text_type),
            Content::WithParts(whole, _) => parts::unpriced(whole),
            Content::Text(_) | Content::Json(_, _) | Content::Media(_, _) => Vec::new(),
        }
    }

    /// The tokens of the media in `json`, or in its own if none, their labels' among them.
    pub(super) fn media_tokens(&self, json: Option<&str>, tokenizer: &dyn Tokenizer) -> usize {
        let media = self.media(json, tokenizer);
        media.iter().map(|media| media.tokens).sum()
    }

    /// Its JSON, as it is in the request.
    pub(super) fn json(&self) -> &'a RawValue {
        match *self {
            Content::Text(value)
            | Content::Blocks(value, _, _)
            | Content::Json(value, _)
            | Content::Media(value, _)
            | Content::WithParts(value, _) => value,
        }
    }

    /// What a tool's limit is measured on: the string, the text blocks joined by newlines, or
    /// the JSON.
    pub(super) fn text(&self) -> Cow<'a, str> {
        match *self {
            Content::Text(value) => Cow::Owned(string(value).unwrap_or_default()),
            Content::Blocks(value, text_type, _) => Cow::Owned(joined(value, text_type)),
            Content::Json(value, _) => Cow::Borrowed(value.get()),
            Content::Media(_, _) => Cow::Borrowed(""),
            Content::WithParts(whole, _) => match parts::response_and_parts(whole) {
                Some((response, _)) => Cow::Borrowed(response.get()),
                None => Cow::Borrowed(whole.get()),
            },
        }
    }

    /// What a tool's limit is measured on of `json`, the JSON that replaces it: read as this
    /// content is read.
    pub(super) fn measured(&self, json: &str) -> String {
        let Ok(value) = serde_json::from_str::<&RawValue>(json) else {
            return json.to_owned();
        };
        match *self {
            Content::Text(_) => Content::Text(value).text().into_owned(),
            Content::Blocks(_, text_type, images) => Content::Blocks(value, text_type, images)
                .text()
                .into_owned(),
            Content::Json(_, _) => json.to_owned(),
            Content::Media(_, _) => String::new(),
            Content::WithParts(_, text_in) => {
                Content::WithParts(value, text_in).text().into_owned()
            }
        }
    }

    /// The JSON that replaces it by the one line `text`, when its slot takes one: a string, one
    /// text block, or an object under the slot's key; `None` for a slot whose shape is demanded.
    pub(super) fn replaced_by(&self, text: &str) -> Option<String> {
        match *self {
            Content::Text(_) => serde_json::to_string(text).ok(),
            Content::Blocks(_, text_type, _) => {
                Some(serde_json::json!([{ "type": text_type, "text": text }]).to_string())
            }
            Content::Json(_, key) => {
                let key = key?;
                Some(serde_json::json!({ key: text }).to_string())
            }
            Content::Media(_, _) => None,
            Content::WithParts(whole, text_in) => parts::replaced_by(whole, text_in, text),
        }
    }

    /// The JSON that replaces it, cut to `limit`, and the figures of the cut; `None` when it is
    /// within the limit, or when it is left whole (a JSON value no cut fits, in a slot that
    /// takes only its shape).
    pub(super) fn cut(
        &self,
        tool: &str,
        limit: &ToolLimit,
        tokenizer: &dyn Tokenizer,
    ) -> Option<(String, Truncation)> {
        match *self {
            Content::Text(value) => {
                let text = string(value)?;
                let cut = crate::cut(&text, limit, tokenizer)?;
                Some((
                    serde_json::to_string(&cut.capped(&text)).ok()?,
                    cut.truncation,
                ))
            }
            Content::Blocks(value, text_type, images) => {
                cut_blocks(value, text_type, limit, tokenizer, images)
                    .map(|blocks| (blocks.json, blocks.truncation))
            }
            Content::Json(value, text_in) => {
                match cap_shape(value, tool, limit, tokenizer, None, "a tool result")? {
                    Ok(capped) => Some(capped),
                    Err((text, truncation)) => {
                        let key = text_in?;
                        Some((serde_json::json!({ key: text }).to_string(), truncation))
                    }
                }
            }
            Content::Media(_, _) => None,
            Content::WithParts(whole, text_in) => {
                parts::cut(whole, text_in, tool, limit, tokenizer)
            }
        }
    }
}

/// `value` cut as [`cap_json`](crate::json::cap_json) cuts it: `Ok` with JSON of the same shape,
/// `Err` with a text when no cut of the shape fits, which a slot that takes only the shape
/// leaves whole, and says so with a warning naming `what` and `tool`. `None` when it fits.
pub(super) fn cap_shape(
    value: &RawValue,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    known: Option<CutText<'_>>,
    what: &str,
) -> Option<Result<(String, Truncation), (String, Truncation)>> {
    match cap_json_known(value.get(), limit, tokenizer, known) {
        Ok(Some(CappedJson::Json(json, truncation))) => Some(Ok((json, truncation))),
        Ok(Some(CappedJson::Text(text, truncation))) => {
            tracing::warn!(
                target: TARGET,
                tool,
                tokens = truncation.original_tokens,
                max_tokens = truncation.max_tokens,
                "{what} is over the limit and no cut of its shape fits"
            );
            Some(Err((text, truncation)))
        }
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(
                target: TARGET,
                tool,
                tokens = error.tokens,
                max_tokens = limit.max_tokens(),
                "{what} {error}: left as it is"
            );
            None
        }
    }
}
