//! A list of content blocks: where it carries text, and its cut. The one block cut of every
//! shape: an MCP result's `content`, Anthropic's `tool_result` blocks, Chat's and Responses'
//! text parts.
//!
//! Text in any block is text: where each kind of block carries it is the table of the
//! module's doc ([`wire`](super)). A block whose text is wholly past the cut goes, and so does a
//! text block inside one, and so does a block whose labels the cut would split; every other
//! block stays where it is, byte for byte.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::labels::labels;
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

/// Where `block` carries text, in a list whose text blocks are of `text_type`, and its
/// [`labels`], which count with the text, before it.
fn carrier<'a>(block: &'a RawValue, text_type: &str) -> Option<(Carrier<'a>, Vec<String>)> {
    let block = fields(block)?;
    let kind = block.get("type").and_then(|kind| string(kind))?;
    let own = |fields: &Fields<'a>, key: &str| -> Option<Carrier<'a>> {
        let value = *fields.get(key)?;
        value.get().starts_with('"').then_some(Carrier::Own(value))
    };
    let labelled =
        |carrier: Carrier<'a>, holder: &Fields<'a>| Some((carrier, labels(&kind, holder)));
    match kind.as_str() {
        kind if kind == text_type || kind == "output_text" || kind == "text-plain" => {
            Some((own(&block, "text")?, Vec::new()))
        }
        "resource" => {
            let resource = fields(block.get("resource")?)?;
            labelled(own(&resource, "text")?, &resource)
        }
        "search_result" => labelled(inner(block.get("content")?)?, &block),
        "document" => {
            let source = fields(block.get("source")?)?;
            let carrier = match source.get("type").and_then(|kind| string(kind))?.as_str() {
                "text" => own(&source, "data"),
                "content" => {
                    let content = *source.get("content")?;
                    own(&source, "content").or_else(|| inner(content))
                }
                _ => None,
            };
            labelled(carrier?, &block)
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

/// A block of a list that carries text: its place, where it carries the text, its labels and
/// its texts.
#[derive(Debug)]
struct Carrying<'a> {
    at: usize,
    carrier: Carrier<'a>,
    labels: Vec<String>,
    texts: Vec<Text<'a>>,
}

impl Carrying<'_> {
    /// Its labels, then its texts: what it adds to the text of the list, joined by newlines.
    fn strings(&self) -> impl Iterator<Item = &str> {
        let texts = self.texts.iter().map(|text| text.text.as_str());
        self.labels.iter().map(String::as_str).chain(texts)
    }
}

/// The blocks of `blocks`, a list whose text blocks are of `text_type`, that carry text, in
/// order. A block whose text is an empty list of blocks has no labels counted either: it
/// carries nothing for them to name.
fn texts<'a>(blocks: &[&'a RawValue], text_type: &str) -> Vec<Carrying<'a>> {
    blocks
        .iter()
        .enumerate()
        .filter_map(|(at, block)| {
            let (carrier, mut labels) = carrier(block, text_type)?;
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
            if texts.is_empty() {
                labels.clear();
            }
            Some(Carrying {
                at,
                carrier,
                labels,
                texts,
            })
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
    taken_together(&mut texts(&all, text_type))
}

/// The labels and texts of `carried`, joined by newlines. One text, the usual result, is taken
/// from its place, not copied.
fn taken_together(carried: &mut [Carrying<'_>]) -> String {
    if let [Carrying { labels, texts, .. }] = carried {
        if let ([], [text]) = (labels.as_slice(), texts.as_mut_slice()) {
            return std::mem::take(&mut text.text);
        }
    }
    let parts: Vec<&str> = carried.iter().flat_map(Carrying::strings).collect();
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
    /// For each block of `json`, the place in the list cut of the block it is; `None` for a
    /// block of a note.
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
    let priced = priced(&all, images, tokenizer);
    let media_tokens: usize = priced.iter().map(|(_, priced)| priced.media.tokens).sum();
    let mut carried = texts(&all, text_type);
    let strings = carried.iter().flat_map(Carrying::strings);
    let lengths: Vec<usize> = strings.map(str::len).collect();
    let within = lengths.iter().map(|len| len + 1).sum::<usize>();
    if within.saturating_sub(1) + media_tokens <= limit.max_tokens() {
        return None;
    }
    let joined = taken_together(&mut carried);
    // A newline more: read again, the result's text is its blocks' joined by newlines, the
    // note's among them.
    let note_cost = |note: &str| tokenizer.count(note) + 1;
    let fit = MediaFit::of(&all, &priced, images, limit, &note_cost);
    let text_limit = fit.text_limit(limit);
    let text_cut = crate::cut(&joined, &text_limit, tokenizer).map(|cut| {
        keeping_labels_whole(cut, &joined, (&carried, &lengths), &text_limit, tokenizer)
    });
    if text_cut.is_none() && fit.edits.is_empty() {
        return None;
    }
    let mut edits = fit.edits.clone();
    let mut notes = Vec::new();
    let text_tokens = match &text_cut {
        Some(cut) => {
            let (text_edits, note) = text_edits(&all, &carried, cut.split(&joined, &lengths))?;
            edits.extend(text_edits);
            notes.extend(note.then(|| cut.note.clone()));
            (cut.truncation.original_tokens, cut.truncation.kept_tokens)
        }
        None => {
            let tokens = tokenizer.count(&joined);
            (tokens, tokens)
        }
    };
    edits.sort_by_key(|(at, _)| *at);
    notes.extend(fit.note.clone());
    let from = sources(all.len(), &edits, notes.len());
    let mut json = rebuilt(&all, edits);
    for note in &notes {
        note_after(&mut json, text_type, note);
    }
    let truncation = fit.figures(limit, text_tokens);
    Some(BlocksCut {
        json,
        joined,
        text_cut,
        truncation,
        from,
    })
}

/// `cut`, of `joined`, the labels and texts of the blocks `carried` (of `lengths`) joined by
/// newlines, narrowed so that it splits no block's labels: a block whose labels it would not
/// keep whole, or would keep with none of its text, goes whole, with what the cut kept of it.
fn keeping_labels_whole(
    cut: Cut,
    joined: &str,
    (carried, lengths): (&[Carrying<'_>], &[usize]),
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Cut {
    let (mut head_end, mut tail_start) = (cut.head_end, cut.tail_start);
    let (mut start, mut lengths) = (0, lengths.iter());
    for carrying in carried {
        let mut span = |n: usize| lengths.by_ref().take(n).map(|len| len + 1).sum::<usize>();
        let text_start = start + span(carrying.labels.len());
        let next = text_start + span(carrying.texts.len());
        if !carrying.labels.is_empty() {
            // In the head, the labels and a byte of text at least; in the tail, all of it.
            if start <= head_end && head_end <= text_start {
                head_end = head_end.min(start.saturating_sub(1));
            }
            if start < tail_start && tail_start < next {
                tail_start = tail_start.max(next.min(joined.len()));
            }
        }
        start = next;
    }
    if (head_end, tail_start) == (cut.head_end, cut.tail_start) {
        return cut;
    }
    cut.narrowed(joined, (head_end, tail_start), limit, tokenizer)
}

/// The edits of the blocks among `all` that `carried` says carry text, from the `kept` part of
/// each of their labels and texts (in order, `None` for one wholly cut, the last kept ending
/// with the note): a block whose labels are not kept whole goes. Whether the note went with a
/// block that goes, and must end the result in a block of its own; `None` only for a text that
/// cannot be written as JSON.
fn text_edits(
    all: &[&RawValue],
    carried: &[Carrying<'_>],
    kept: Vec<Option<String>>,
) -> Option<(Vec<Edit>, bool)> {
    let noted = kept.iter().rposition(Option::is_some);
    let mut kept = kept.into_iter();
    let (mut edits, mut note_gone, mut first) = (Vec::with_capacity(carried.len()), false, 0);
    for carrying in carried {
        let labels: Vec<Option<String>> = kept.by_ref().take(carrying.labels.len()).collect();
        let texts: Vec<Option<String>> = kept.by_ref().take(carrying.texts.len()).collect();
        let whole =
            (carrying.labels.iter().zip(&labels)).all(|(label, kept)| kept.as_ref() == Some(label));
        let edit = match whole {
            true => edited(all[carrying.at], carrying.carrier, &carrying.texts, texts)?,
            false => None,
        };
        let after = first + carrying.labels.len() + carrying.texts.len();
        note_gone |= edit.is_none() && noted.is_some_and(|noted| (first..after).contains(&noted));
        edits.push((carrying.at, edit));
        first = after;
    }
    Some((edits, note_gone))
}

/// The media among `blocks`: each block's place, and its price under `rule`, its labels counted
/// by `tokenizer`.
fn priced<'a>(
    blocks: &[&'a RawValue],
    rule: ImageTokens,
    tokenizer: &dyn Tokenizer,
) -> Vec<(usize, Priced<'a>)> {
    let priced = blocks.iter().enumerate();
    let priced = priced.filter_map(|(at, block)| Some((at, priced_media(block, rule, tokenizer)?)));
    priced.collect()
}

/// Where each block of a list of `len` blocks rebuilt with `edits` (sorted by place) came from,
/// then the `notes` blocks of notes.
fn sources(len: usize, edits: &[Edit], notes: usize) -> Vec<Option<usize>> {
    let removed = |at: &usize| {
        edits
            .binary_search_by_key(at, |(edited, _)| *edited)
            .is_ok_and(|found| edits[found].1.is_none())
    };
    let kept = (0..len).filter(|at| !removed(at)).map(Some);
    kept.chain(std::iter::repeat_n(None, notes)).collect()
}

/// Ends the list `json` with `note`, as a block of `text_type`.
fn note_after(json: &mut String, text_type: &str, note: &str) {
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

/// An edit of a list: the place of an item, and what replaces it, `None` to remove it.
pub(super) type Edit = (usize, Option<String>);

/// The list of `items` with the edits, by place: an item replaced, or removed with `None`.
pub(super) fn rebuilt(items: &[&RawValue], edits: Vec<Edit>) -> String {
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
