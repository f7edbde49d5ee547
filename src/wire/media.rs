//! The media among a list of content blocks, each priced ([`Media`]): an image by its
//! provider's rule ([`ImageTokens`]), anything else by the estimate of [`media`](crate::media).
//!
//! | block | kind |
//! | --- | --- |
//! | MCP `image` (`data`); Anthropic `image` (a `base64` `source` with its `data`, or a `url` or `file`) | image |
//! | Responses `input_image` (an `image_url`, a `data:` URL or a URL, or a `file_id`; its `detail`), and a `computer_call_output`'s `computer_screenshot` | image |
//! | the frameworks' images: LangChain's `image` (`base64`, or a `url`), Chat's and LangChain's `image_url` (`image_url.url`, its `detail`), OpenAI Agents' `image` (`image_url`; in JS `image`), the AI SDK's `image-data` (`data`) | image |
//! | MCP `audio` (`data`, `mimeType`); LangChain's `audio` (`base64`); `input_audio` (`input_audio.data`) | audio |
//! | MCP `resource` with a `blob` | by its `mimeType`: an image, a PDF, audio, else binary |
//! | Anthropic `document` with a `base64` source (a PDF), or a `url` or `file` one | PDF |
//! | Responses `input_file` and OpenAI Agents' `file` (`file_data`, a `data:` URL or base64, or a `file_id` or `file_url`), LangChain's `file` (`base64`, `mime_type`), the AI SDK's `file-data` and `media` (`data`, `mediaType`) | PDF, or by its type when its name, type or bytes say it is none |
//! | Gemini `inlineData` (`inline_data`) of a function response's `parts` | by its `mimeType` |
//!
//! Media whose bytes are not in the request are priced at the most their kind can cost: an
//! image at the most its rule charges, a PDF at 100 pages.

use base64::Engine;
use serde_json::value::RawValue;

use super::labels::{labels, tokens as label_tokens};
use super::raw::{fields, string, Fields};
use crate::image::{Detail, ImageTokens};
use crate::json::walk::{span_of, splice};
use crate::media::{Media, MediaKind};
use crate::scale;
use crate::tokenizer::Tokenizer;

/// A block of media, priced, its [`labels`](super::labels) in its price; for an image whose
/// bytes are in the request, the image, which may be scaled down.
#[derive(Debug)]
pub(super) struct Priced<'a> {
    pub(super) media: Media,
    pub(super) image: Option<Image<'a>>,
    /// The tokens of its labels, in the media's.
    pub(super) label_tokens: usize,
}

/// An image whose bytes are in a block: the string that holds them, what comes before their
/// base64 there (a `data:` URL's head), the bytes, their width and height, and their `detail`.
#[derive(Debug)]
pub(super) struct Image<'a> {
    string: &'a RawValue,
    head: String,
    bytes: Vec<u8>,
    pub(super) size: (usize, usize),
    pub(super) detail: Detail,
    /// Whether it is of a format it can be scaled in ([`scale::can_scale`]).
    pub(super) scalable: bool,
}

impl Image<'_> {
    /// Its bytes scaled down to a long edge of `long_edge` ([`scale::scaled`]), in the block
    /// `block` that holds it; `None` when it cannot be scaled.
    pub(super) fn scaled_in(&self, block: &str, long_edge: usize) -> Option<String> {
        let bytes = scale::scaled(&self.bytes, long_edge)?;
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        let literal = serde_json::to_string(&format!("{}{data}", self.head)).ok()?;
        Some(splice(block, span_of(block, self.string.get()), &literal))
    }
}

/// The shapes of media blocks, by their `type`.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Image,
    Audio,
    InputAudio,
    Resource,
    Document,
    File,
}

/// The shape of a block of the type `kind`, if it is one of media.
fn shape(kind: &str) -> Option<Shape> {
    Some(match kind {
        "image" | "image_url" | "image-data" | "input_image" | "computer_screenshot" => {
            Shape::Image
        }
        "audio" => Shape::Audio,
        "input_audio" => Shape::InputAudio,
        "resource" => Shape::Resource,
        "document" => Shape::Document,
        "input_file" | "file" | "file-data" | "media" => Shape::File,
        _ => return None,
    })
}

/// Whether a block of the type `kind` is one of media, priced here.
pub(super) fn is_media(kind: &str) -> bool {
    shape(kind).is_some()
}

/// `block`, priced under `rule`, its labels counted by `tokenizer`, if it is media.
pub(super) fn priced<'a>(
    block: &'a RawValue,
    rule: ImageTokens,
    tokenizer: &dyn Tokenizer,
) -> Option<Priced<'a>> {
    let block = fields(block)?;
    let kind = text(block.get("type"))?;
    let mut labelled = Vec::new();
    let media = match shape(&kind)? {
        Shape::Image => return Some(image_in(image_data(&block), rule, detail(&block))),
        Shape::Audio => audio(decoded(
            text(block.get("data")).or_else(|| text(block.get("base64"))),
        )),
        Shape::InputAudio => {
            let audio_fields = block.get("input_audio").and_then(|inner| fields(inner));
            audio(decoded(
                audio_fields.and_then(|inner| text(inner.get("data"))),
            ))
        }
        Shape::Resource => {
            let resource = fields(block.get("resource")?)?;
            let blob = text(resource.get("blob"))?;
            labelled = labels(&kind, &resource);
            of_type(&resource, "mimeType", &blob, rule)
        }
        Shape::Document => {
            let source = fields(block.get("source")?)?;
            labelled = labels(&kind, &block);
            match text(source.get("type"))?.as_str() {
                "base64" => {
                    let data = text(source.get("data")).unwrap_or_default();
                    of_type(&source, "media_type", &data, rule)
                }
                "url" | "file" => Media::pdf(None, rule),
                _ => return None,
            }
        }
        Shape::File => file(&block, rule),
    };
    let label_tokens = label_tokens(&labelled, tokenizer);
    let media = Media {
        tokens: media.tokens + label_tokens,
        ..media
    };
    Some(Priced {
        media,
        image: None,
        label_tokens,
    })
}

/// The string that holds an image block's bytes, as base64 or a `data:` URL (or its URL, which
/// holds none): Anthropic's `source.data`; else the first of `data` (MCP, the AI SDK,
/// LangChain.js), `base64` (LangChain), `image_url` (Responses, Chat, OpenAI Agents; a string, or
/// its `url`), `image` (OpenAI Agents JS; a string, or its `data`) and `url` (LangChain).
fn image_data<'a>(block: &Fields<'a>) -> Option<&'a RawValue> {
    if let Some(source) = block.get("source") {
        return fields(source)?.get("data").copied();
    }
    ["data", "base64", "image_url", "image", "url"]
        .into_iter()
        .find_map(|key| {
            let value = *block.get(key)?;
            if value.get().starts_with('"') {
                return Some(value);
            }
            let inner = fields(value)?;
            inner.get("url").or(inner.get("data")).copied()
        })
}

/// The `detail` an image block asks for: its own, or its `image_url`'s (Chat's).
fn detail(block: &Fields<'_>) -> Detail {
    let inner = block.get("image_url").and_then(|url| fields(url));
    let detail = text(block.get("detail")).or_else(|| text(inner?.get("detail")));
    match detail.as_deref() {
        Some("low") => Detail::Low,
        _ => Detail::Auto,
    }
}

/// A Gemini part's `inlineData` (or `inline_data`), priced under `rule`, if it has one.
pub(super) fn inline_data(part: &RawValue, rule: ImageTokens) -> Option<Priced<'_>> {
    let part = fields(part)?;
    let blob = part.get("inlineData").or(part.get("inline_data"))?;
    let blob = fields(blob)?;
    let key = if blob.contains_key("mimeType") {
        "mimeType"
    } else {
        "mime_type"
    };
    let mime = text(blob.get(key)).unwrap_or_default();
    if mime.starts_with("image/") {
        return Some(image_in(blob.get("data").copied(), rule, Detail::Auto));
    }
    let data = text(blob.get("data")).unwrap_or_default();
    let media = of_type(&blob, key, &data, rule);
    Some(Priced {
        media,
        image: None,
        label_tokens: 0,
    })
}

/// The image whose base64 (or `data:` URL) is the string `data`, priced under `rule` at
/// `detail`: at the most its rule charges when its bytes are not there.
fn image_in(data: Option<&RawValue>, rule: ImageTokens, detail: Detail) -> Priced<'_> {
    let found = data.and_then(|string_value| {
        let text = string(string_value)?;
        let at = text.find(";base64,").map_or(0, |at| at + ";base64,".len());
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&text[at..])
            .ok()?;
        Some((string_value, text[..at].to_owned(), bytes))
    });
    let Some((string, head, bytes)) = found else {
        let tokens = match (rule, detail) {
            // OpenAI's low detail is one price, whatever the size.
            (ImageTokens::OpenAiTiles, Detail::Low) => rule.tokens(1, 1, detail),
            _ => rule.most(),
        };
        let media = Media {
            kind: MediaKind::Image,
            tokens,
        };
        return Priced {
            media,
            image: None,
            label_tokens: 0,
        };
    };
    let media = Media::image(&bytes, rule, detail);
    let image = scale::size(&bytes).map(|size| Image {
        string,
        head,
        scalable: scale::can_scale(&bytes),
        bytes,
        size,
        detail,
    });
    Priced {
        media,
        image,
        label_tokens: 0,
    }
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

/// A file block: Responses' `input_file` (`file_data`, a `data:` URL or base64, and its
/// `filename`), OpenAI Agents' `file` (the same), LangChain's `file` (`base64` and `mime_type`),
/// the AI SDK's `file-data` and `media` (`data` and `mediaType`). Its type is its `data:` URL's,
/// or its MIME type; a PDF unless its name, its type or its bytes say otherwise.
fn file(block: &Fields<'_>, rule: ImageTokens) -> Media {
    let data = ["file_data", "base64", "data"]
        .into_iter()
        .find_map(|key| text(block.get(key)));
    let name = text(block.get("filename")).unwrap_or_default();
    let url_type = data.as_deref().and_then(|data| {
        let (head, _) = data.strip_prefix("data:")?.split_once(';')?;
        Some(head.to_owned())
    });
    let given_type = ["mime_type", "mimeType", "mediaType"]
        .into_iter()
        .find_map(|key| text(block.get(key)));
    let bytes = decoded(data);
    let named_other = !name.is_empty() && !name.to_ascii_lowercase().ends_with(".pdf");
    let mime = match url_type.or(given_type) {
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
