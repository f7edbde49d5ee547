//! The images among a list of content blocks, each priced by a rule ([`ImageTokens`]):
//!
//! - MCP's `image` (`data`, base64);
//! - Anthropic's `image` (a `source` of `type` `base64` with its `data`, or a `url`);
//! - Responses' `input_image` (an `image_url` that is a `data:` URL or a URL, or a `file_id`;
//!   its `detail`).
//!
//! An image whose bytes are not in the request, or whose size cannot be read, is priced at the
//! most its rule charges.

use base64::Engine;
use serde_json::value::RawValue;

use super::raw::{fields, string};
use crate::image::{Detail, ImageTokens};

/// The tokens of `block` under `rule`, if it is an image.
pub(super) fn image_tokens(block: &RawValue, rule: ImageTokens) -> Option<usize> {
    let block = fields(block)?;
    let kind = block.get("type").and_then(|kind| string(kind))?;
    let text = |value: Option<&&RawValue>| value.and_then(|value| string(value));
    let (data, detail) = match kind.as_str() {
        "image" => match block.get("source").and_then(|source| fields(source)) {
            Some(source) => (text(source.get("data")), Detail::Auto),
            None => (text(block.get("data")), Detail::Auto),
        },
        "input_image" => {
            let detail = match text(block.get("detail")).as_deref() {
                Some("low") => Detail::Low,
                _ => Detail::Auto,
            };
            let url = text(block.get("image_url"));
            let data = url.and_then(|url| Some(url.split_once(";base64,")?.1.to_owned()));
            (data, detail)
        }
        _ => return None,
    };
    let bytes = data.and_then(|data| base64::engine::general_purpose::STANDARD.decode(data).ok());
    Some(match bytes {
        Some(bytes) => rule.of_image(&bytes, detail),
        // OpenAI's low detail is one price, whatever the size.
        None if rule == ImageTokens::OpenAiTiles && detail == Detail::Low => {
            rule.tokens(1, 1, detail)
        }
        None => rule.most(),
    })
}
