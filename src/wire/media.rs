//! The media among a list of content blocks, each priced ([`Media`]): an image by its
//! provider's rule ([`ImageTokens`]), anything else by the estimate of [`media`](crate::media).
//!
//! | block | kind |
//! | --- | --- |
//! | MCP `image` (`data`); Anthropic `image` (a `base64` `source` with its `data`, or a `url` or `file`) | image |
//! | Responses `input_image` (an `image_url`, a `data:` URL or a URL, or a `file_id`; its `detail`), and a `computer_call_output`'s `computer_screenshot` | image |
//! | MCP `audio` (`data`, `mimeType`); `input_audio` (`input_audio.data`) | audio |
//! | MCP `resource` with a `blob` | by its `mimeType`: an image, a PDF, audio, else binary |
//! | Anthropic `document` with a `base64` source (a PDF), or a `url` or `file` one | PDF |
//! | Responses `input_file` (`file_data`, a `data:` URL or base64; or a `file_id` or `file_url`) | PDF, or binary when its name, type or bytes say it is none |
//! | Gemini `inlineData` (`inline_data`) of a function response's `parts` | by its `mimeType` |
//!
//! Media whose bytes are not in the request are priced at the most their kind can cost: an
//! image at the most its rule charges, a PDF at 100 pages.

use base64::Engine;
use serde_json::value::RawValue;

use super::raw::{fields, string, Fields};
use crate::image::{Detail, ImageTokens};
use crate::media::{Media, MediaKind};

/// `block`, priced under `rule`, if it is media.
pub(super) fn priced(block: &RawValue, rule: ImageTokens) -> Option<Media> {
    let block = fields(block)?;
    let kind = text(block.get("type"))?;
    let image_at_most = Media {
        kind: MediaKind::Image,
        tokens: rule.most(),
    };
    Some(match kind.as_str() {
        "image" => {
            // MCP's `data`, or Anthropic's `source.data`.
            let source = block.get("source").and_then(|source| fields(source));
            let data = match &source {
                Some(source) => text(source.get("data")),
                None => text(block.get("data")),
            };
            match decoded(data) {
                Some((bytes, _)) => Media::image(&bytes, rule, Detail::Auto),
                None => image_at_most,
            }
        }
        "input_image" | "computer_screenshot" => input_image(&block, rule),
        "audio" => audio(decoded(text(block.get("data")))),
        "input_audio" => {
            let audio_fields = block.get("input_audio").and_then(|inner| fields(inner));
            audio(decoded(
                audio_fields.and_then(|inner| text(inner.get("data"))),
            ))
        }
        "resource" => {
            let resource = fields(block.get("resource")?)?;
            let blob = text(resource.get("blob"))?;
            of_type(&resource, "mimeType", &blob, rule)
        }
        "document" => {
            let source = fields(block.get("source")?)?;
            match text(source.get("type"))?.as_str() {
                "base64" => {
                    let data = text(source.get("data")).unwrap_or_default();
                    of_type(&source, "media_type", &data, rule)
                }
                "url" | "file" => Media::pdf(None, rule),
                _ => return None,
            }
        }
        "input_file" => input_file(&block, rule),
        _ => return None,
    })
}

/// A Gemini part's `inlineData` (or `inline_data`), priced under `rule`, if it has one.
pub(super) fn inline_data(part: &RawValue, rule: ImageTokens) -> Option<Media> {
    let part = fields(part)?;
    let blob = part.get("inlineData").or(part.get("inline_data"))?;
    let blob = fields(blob)?;
    let data = text(blob.get("data")).unwrap_or_default();
    let key = if blob.contains_key("mimeType") {
        "mimeType"
    } else {
        "mime_type"
    };
    Some(of_type(&blob, key, &data, rule))
}

/// A string field's text.
fn text(value: Option<&&RawValue>) -> Option<String> {
    value.and_then(|value| string(value))
}

/// The bytes of base64 `data` (a `data:` URL's among them), and its length; `None` when there is
/// none, or it is not base64.
fn decoded(data: Option<String>) -> Option<(Vec<u8>, usize)> {
    let data = data?;
    let base64 = data
        .split_once(";base64,")
        .map_or(data.as_str(), |(_, b)| b);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64)
        .ok()?;
    Some((bytes, base64.len()))
}

fn audio(decoded: Option<(Vec<u8>, usize)>) -> Media {
    Media::audio(
        decoded
            .map(|(bytes, _)| bytes)
            .as_deref()
            .unwrap_or_default(),
    )
}

/// Media of base64 `data`, of the MIME type in `fields[key]`.
fn of_type(fields: &Fields<'_>, key: &str, data: &str, rule: ImageTokens) -> Media {
    let mime = text(fields.get(key)).unwrap_or_default();
    let bytes = decoded(Some(data.to_owned()));
    Media::of_type(
        &mime,
        bytes.as_ref().map(|(b, _)| b.as_slice()),
        data.len(),
        rule,
    )
}

fn input_image(block: &Fields<'_>, rule: ImageTokens) -> Media {
    let detail = match text(block.get("detail")).as_deref() {
        Some("low") => Detail::Low,
        _ => Detail::Auto,
    };
    let url = text(block.get("image_url"));
    let bytes = url
        .filter(|url| url.starts_with("data:"))
        .and_then(|url| decoded(Some(url)));
    let tokens = match bytes {
        Some((bytes, _)) => rule.of_image(&bytes, detail),
        // OpenAI's low detail is one price, whatever the size.
        None if rule == ImageTokens::OpenAiTiles && detail == Detail::Low => {
            rule.tokens(1, 1, detail)
        }
        None => rule.most(),
    };
    Media {
        kind: MediaKind::Image,
        tokens,
    }
}

/// A Responses `input_file`: a PDF unless its name, its `data:` URL's type or its bytes say
/// otherwise.
fn input_file(block: &Fields<'_>, rule: ImageTokens) -> Media {
    let data = text(block.get("file_data"));
    let name = text(block.get("filename")).unwrap_or_default();
    let url_type = data.as_deref().and_then(|data| {
        let (head, _) = data.strip_prefix("data:")?.split_once(';')?;
        Some(head.to_owned())
    });
    let bytes = decoded(data);
    let named_other = !name.is_empty() && !name.to_ascii_lowercase().ends_with(".pdf");
    let mime = match url_type {
        Some(mime) => mime,
        None if named_other => String::new(),
        None => "application/pdf".to_owned(),
    };
    match bytes {
        Some((bytes, len)) => Media::of_type(&mime, Some(&bytes), len, rule),
        // A file by reference (a file id, a URL): its size is not known, so it is priced as
        // the largest PDF.
        None => Media::pdf(None, rule),
    }
}
