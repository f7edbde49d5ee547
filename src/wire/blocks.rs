//! A list of content blocks: where it carries text, and its cut. The one block cut of every
//! shape: an MCP result's `content`, Anthropic's `tool_result` blocks, Chat's and Responses'
//! text parts.
//!
//! Text in any block is text: where each kind of block carries it is the table of the
//! module's doc ([`wire`](super)). A block whose text is wholly past the cut goes, and so does a
//! text block inside one; every other block stays where it is, byte for byte.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::media::{is_media, priced as priced_media, Priced};
use super::media_fit::MediaFit;
use super::raw::{fields, items, string, Fields};
use crate::image::ImageTokens;
use crate::json::walk::{span_of, splice};
use crate::layout::Cut;
use crate::limit::ToolLimit;
use crate::tokenizer::Tokenizer;
use crate::truncation::Truncation;

/// Where a block carries its text.
#[derive(Debug, Clone, Copy)]
enum Carrier<'a> {
    /// A string of its own: the block goes when that is wholly cut.
    Own(&'a RawValue),
    /// A list of `text` blocks inside it (at this string within the block): cut as a list, the
    /// block going when all of them go.
    Inner(&'a RawValue),
}

/// Where `block` carries text, in a list whose text blocks are of `text_type`.
fn carrier<'a>(block: &'a RawValue, text_type: &str) -> Option<Carrier<'a>> {
    let block = fields(block)?;
    let kind = block.get("type").and_then(|kind| string(kind))?;
    let own = |fields: &Fields<'a>, key: &str| -> Option<Carrier<'a>> {
        let value = *fields.get(key)?;
        value.get().starts_with('"').then_some(Carrier::Own(value))
    };
    match kind.as_str() {
        kind if kind == text_type || kind == "output_text" || kind == "text-plain" => {
            own(&block, "text")
        }
        "resource" => own(&fields(block.get("resource")?)?, "text"),
        "search_result" => inner(block.get("content")?),
        "document" => {
            let source = fields(block.get("source")?)?;
            match source.get("type").and_then(|kind| string(kind))?.as_str() {
                "text" => own(&source, "data"),
                "content" => {
                    let content = *source.get("content")?;
                    own(&source, "content").or_else(|| inner(content))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn inner(list: &RawValue) -> Option<Carrier<'_>> {
    list.get().starts_with('[').then_some(Carrier::Inner(list))
}

/// A text that a list of blocks carries: the string, its text, and for a text block inside a
/// block, where that text block is in its list.
#[derive(Debug)]
struct Text<'a> {
    value: &'a RawValue,
    text: String,
    inner_at: usize,
}

/// The texts of `blocks`, a list whose text blocks are of `text_type`, in order, each block with
/// its place and where it carries them.
fn texts<'a>(blocks: &[&'a RawValue], text_type: &str) -> Vec<(usize, Carrier<'a>, Vec<Text<'a>>)> {
    blocks
        .iter()
        .enumerate()
        .filter_map(|(at, block)| {
            let carrier = carrier(block, text_type)?;
            let texts = match carrier {
                Carrier::Own(value) => vec![Text {
                    value,
                    text: string(value)?,
                    inner_at: 0,
                }],
                Carrier::Inner(list) => items(list)
                    .map(|inner| text_blocks(&inner))
                    .unwrap_or_default(),
            };
            Some((at, carrier, texts))
        })
        .collect()
}

/// The texts of the `text` blocks among `blocks`.
fn text_blocks<'a>(blocks: &[&'a RawValue]) -> Vec<Text<'a>> {
    blocks
        .iter()
        .enumerate()
        .filter_map(|(inner_at, block)| {
            let fields = fields(block)?;
            let kind = fields.get("type").and_then(|kind| string(kind))?;
            let value = *fields.get("text").filter(|_| kind == "text")?;
            Some(Text {
                value,
                text: string(value)?,
                inner_at,
            })
        })
        .collect()
}

/// The text `blocks` carries, its texts joined by newlines: what a tool's limit is measured on.
pub(super) fn joined(blocks: &RawValue, text_type: &str) -> String {
    let Some(all) = items(blocks) else {
        return String::new();
    };
    let texts = texts(&all, text_type);
    let parts: Vec<&str> = texts
        .iter()
        .flat_map(|(_, _, texts)| texts.iter().map(|text| text.text.as_str()))
        .collect();
    parts.join("\n")
}

/// The types of the blocks of `blocks`, a list whose text blocks are of `text_type`, that carry
/// no text the cut reads and are no media it prices: passed as they are, uncounted.
pub(super) fn unpriced(blocks: &RawValue, text_type: &str) -> Vec<String> {
    let Some(all) = items(blocks) else {
        return Vec::new();
    };
    let kinds = all
        .iter()
        .filter(|block| carrier(block, text_type).is_none());
    let kinds = kinds.filter_map(|block| fields(block)?.get("type").and_then(|kind| string(kind)));
    kinds.filter(|kind| !is_media(kind)).collect()
}

/// A list of blocks cut to a limit: the list's JSON, the text the blocks carry joined by
/// newlines, where that text was cut (if it was), and the figures of the whole cut, its media
/// included.
#[derive(Debug)]
pub(super) struct BlocksCut {
    pub(super) json: String,
    pub(super) joined: String,
    pub(super) text_cut: Option<Cut>,
    pub(super) truncation: Truncation,
    /// For each block of `json`, the place in the list cut of the block it is; `None` for the
    /// note that media gave way.
    pub(super) from: Vec<Option<usize>>,
}

/// The list `blocks` cut to `limit`, its text and its media (images priced by `images`, the rest
/// by [`media`](crate::media)'s estimate) together.
///
/// - The media fit first, as [`MediaFit`] says: images byte for byte while they fit, else
///   scaled down, else the last give way whole; the first image always stays, and any other
///   block of media stays only if it fits. A last text block says what was dropped, in the
///   note's form.
/// - The text the blocks carry is cut together, taken as one text joined by newlines, to what
///   the media leave: a block (or a text block inside one) wholly past the cut is removed, the
///   text the cut falls in is cut, and the note ends the last text kept.
/// - Other blocks stay where they are, byte for byte.
pub(super) fn cut_blocks(
    blocks: &RawValue,
    text_type: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    images: ImageTokens,
) -> Option<BlocksCut> {
    let all = items(blocks)?;
    let priced = priced(&all, images);
    let media_tokens: usize = priced.iter().map(|(_, priced)| priced.media.tokens).sum();
    let mut carried = texts(&all, text_type);
    let texts = carried
        .iter_mut()
        .flat_map(|(_, _, texts)| texts.iter_mut());
    let mut texts: Vec<&mut Text<'_>> = texts.collect();
    let lengths: Vec<usize> = texts.iter().map(|text| text.text.len()).collect();
    let within = lengths.iter().map(|len| len + 1).sum::<usize>();
    if within.saturating_sub(1) + media_tokens <= limit.max_tokens() {
        return None;
    }
    let joined = taken_together(&mut texts);
    // A newline more: read again, the result's text is its blocks' joined by newlines, the
    // note's among them.
    let note_cost = |note: &str| tokenizer.count(note) + 1;
    let fit = MediaFit::of(&all, &priced, images, limit, &note_cost);
    let text_cut = crate::cut(&joined, &fit.text_limit(limit), tokenizer);
    if text_cut.is_none() && fit.edits.is_empty() {
        return None;
    }
    let mut edits = fit.edits.clone();
    let text_tokens = match &text_cut {
        Some(cut) => {
            edits.extend(text_edits(&all, &carried, cut.split(&joined, &lengths))?);
            (cut.truncation.original_tokens, cut.truncation.kept_tokens)
        }
        None => {
            let tokens = tokenizer.count(&joined);
            (tokens, tokens)
        }
    };
    edits.sort_by_key(|(at, _)| *at);
    let from = sources(all.len(), &edits, fit.note.is_some());
    let mut json = rebuilt(&all, edits);
    note_after(&mut json, text_type, fit.note.as_deref());
    let truncation = fit.figures(limit, text_tokens);
    Some(BlocksCut {
        json,
        joined,
        text_cut,
        truncation,
        from,
    })
}

/// The `texts` as one, joined by newlines. One text, the usual result, is taken from its place,
/// not copied.
fn taken_together(texts: &mut [&mut Text<'_>]) -> String {
    match texts {
        [text] => std::mem::take(&mut text.text),
        texts => texts
            .iter()
            .map(|text| text.text.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The edits of the blocks among `all` that `carried` says carry text, each text's `kept` part
/// (in order, `None` for a text wholly cut) in its place; `None` only for a text that cannot be
/// written as JSON.
fn text_edits(
    all: &[&RawValue],
    carried: &[(usize, Carrier<'_>, Vec<Text<'_>>)],
    kept: Vec<Option<String>>,
) -> Option<Vec<(usize, Option<String>)>> {
    let mut kept = kept.into_iter();
    let edits = carried.iter().map(|(at, carrier, texts)| {
        let kept: Vec<Option<String>> = kept.by_ref().take(texts.len()).collect();
        Some((*at, edited(all[*at], *carrier, texts, kept)?))
    });
    edits.collect()
}

/// The media among `blocks`: each block's place, and its price under `rule`.
fn priced<'a>(blocks: &[&'a RawValue], rule: ImageTokens) -> Vec<(usize, Priced<'a>)> {
    let priced = blocks.iter().enumerate();
    let priced = priced.filter_map(|(at, block)| Some((at, priced_media(block, rule)?)));
    priced.collect()
}

/// Where each block of a list of `len` blocks rebuilt with `edits` (sorted by place) came from,
/// the `note` last if there is one.
fn sources(len: usize, edits: &[(usize, Option<String>)], note: bool) -> Vec<Option<usize>> {
    let removed = |at: &usize| {
        edits
            .binary_search_by_key(at, |(edited, _)| *edited)
            .is_ok_and(|found| edits[found].1.is_none())
    };
    let kept = (0..len).filter(|at| !removed(at)).map(Some);
    kept.chain(note.then_some(None)).collect()
}

/// Ends the list `json` with `note`, if there is one, as a block of `text_type`.
fn note_after(json: &mut String, text_type: &str, note: Option<&str>) {
    let Some(note) = note else {
        return;
    };
    let block = serde_json::json!({ "type": text_type, "text": note }).to_string();
    let comma = if json == "[]" { "" } else { "," };
    json.insert_str(json.len() - 1, &format!("{comma}{block}"));
}

/// `block`, which carries `texts` as `carrier` says, with each text's `kept` part (`None` for
/// a text wholly cut): `Some(None)` when the block goes, none of its texts kept; `None` only for
/// a text that cannot be written as JSON.
fn edited(
    block: &RawValue,
    carrier: Carrier<'_>,
    texts: &[Text<'_>],
    kept: Vec<Option<String>>,
) -> Option<Option<String>> {
    if kept.iter().all(Option::is_none) {
        return Some(None);
    }
    let with_text = |json: &str, value: &RawValue, text: &str| -> Option<String> {
        let literal = serde_json::to_string(text).ok()?;
        Some(splice(json, span_of(json, value.get()), &literal))
    };
    let block = block.get();
    match carrier {
        Carrier::Own(value) => {
            let text = kept.into_iter().flatten().next()?;
            with_text(block, value, &text).map(Some)
        }
        Carrier::Inner(list) => {
            let inner = items(list)?;
            let mut edits = Vec::with_capacity(texts.len());
            for (text, kept) in texts.iter().zip(kept) {
                let item = inner[text.inner_at].get();
                let edit = match kept {
                    Some(kept) => Some(with_text(item, text.value, &kept)?),
                    None => None,
                };
                edits.push((text.inner_at, edit));
            }
            let list_json = rebuilt(&inner, edits);
            Some(Some(splice(block, span_of(block, list.get()), &list_json)))
        }
    }
}

/// The list of `items` with the edits, by place: an item replaced, or removed with `None`.
pub(super) fn rebuilt(items: &[&RawValue], edits: Vec<(usize, Option<String>)>) -> String {
    let mut edits = edits.into_iter().peekable();
    let mut out: Vec<Cow<'_, str>> = Vec::with_capacity(items.len());
    for (at, item) in items.iter().enumerate() {
        match edits.next_if(|(edited, _)| *edited == at) {
            Some((_, Some(edited))) => out.push(Cow::Owned(edited)),
            Some((_, None)) => {}
            None => out.push(Cow::Borrowed(item.get())),
        }
    }
    format!("[{}]", out.join(","))
}
