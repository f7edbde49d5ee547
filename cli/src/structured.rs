//! Capping a `structuredContent` over the limit. The work is done on its compact JSON, the form
//! a host writes it in for the model (`JSON.stringify`), and is text surgery on it: the one
//! string cut, or the items dropped, are spliced out and every other byte stays. No tree of the
//! structure is built, so a line of records holds little more than the line.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use tool_output_cap::{
    cap, cut, line_break_after, note, Cut, Keep, Tokenizer, ToolLimit, ToolOutputLimits, Truncation,
};

use crate::lenient;

/// A text and where it was cut: the text blocks of a result, taken together, which a
/// `structuredContent` string may carry again.
pub(crate) struct CutText<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) cut: Cut,
}

/// `structuredContent`, when its compact JSON is over the limit, cut to fit: its longest string
/// is cut and ends with the note; when no one string can make the whole fit, its largest arrays
/// lose items instead and the note ends its last string. `None` when it fits, or when neither
/// can make it fit.
pub(crate) fn cap_structured(
    value: &RawValue,
    failed: bool,
    tool: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    text: Option<CutText>,
) -> Option<(Box<RawValue>, Truncation)> {
    let max_tokens = limit.max_tokens();
    if value.get().len() <= max_tokens {
        return None;
    }
    let json = match compact(lenient::without_lone_surrogates(value.get())) {
        Ok(json) => json,
        Err(error) => {
            let tokens = tokenizer.count(value.get());
            if tokens > max_tokens {
                tracing::warn!(
                    tool,
                    tokens,
                    max_tokens,
                    "structuredContent is over the limit and cannot be read to be cut ({error}); left whole"
                );
            }
            return None;
        }
    };
    let limit = if failed {
        limit.clone().with_keep(Keep::Tail)
    } else {
        limit.clone()
    };
    let longest = largest(&json, |value, _| {
        value.starts_with('"').then_some(value.len())
    });
    // The text blocks' text again (the filesystem server's `{"content": text}`): its cut is
    // known, and a text of more than twice the limit is over it as JSON too, whose escapes only
    // add characters. Else the structure is counted.
    let known = text.filter(|known| {
        known.cut.truncation.keep == limit.keep()
            && longest
                .as_ref()
                .is_some_and(|string| is_string(&json[string.clone()], &known.text))
    });
    let mut total = None;
    if known
        .as_ref()
        .is_none_or(|known| known.cut.truncation.original_tokens <= 2 * max_tokens)
    {
        let tokens = tokenizer.count(&json);
        if tokens <= max_tokens {
            return None;
        }
        total = Some(tokens);
    }
    let cut = longest.and_then(|string| cut_string(&json, string, &limit, tokenizer, known));
    let capped = cut.or_else(|| {
        let tokens = *total.get_or_insert_with(|| tokenizer.count(&json));
        drop_items(json, tokens, &limit, tokenizer)
    });
    let Some((json, truncation)) = capped else {
        tracing::warn!(
            tool,
            tokens = total,
            max_tokens,
            "structuredContent is over the limit and neither a string nor its arrays can be cut to fit; left whole"
        );
        return None;
    };
    truncation.record(tool, failed);
    Some((RawValue::from_string(json).ok()?, truncation))
}

/// `json` with its string at `string` cut to make the whole fit `limit`; when that string is the
/// text of `known`, cut again from what its first cut kept. `None` when no cut makes it fit.
fn cut_string(
    json: &str,
    string: Range<usize>,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    known: Option<CutText>,
) -> Option<(String, Truncation)> {
    let max_tokens = limit.max_tokens();
    // What the rest of the structure takes, counted without the string, and only as far as it
    // leaves the string the least budget: past that, no cut of the string can make it fit.
    let rest = splice(json, string.clone(), "\"\"");
    let room = max_tokens.checked_sub(ToolOutputLimits::MIN_MAX_TOKENS)?;
    let rest = tokenizer.count_within(&rest, room)?;
    let mut budget = max_tokens - rest;
    let mut original = None;
    // JSON escapes change the count a little: cut again by what is over.
    for _ in 0..8 {
        if budget < ToolOutputLimits::MIN_MAX_TOKENS {
            break;
        }
        let within = limit.clone().with_max_tokens(budget);
        let (cut, truncation) = match known.as_ref().and_then(|k| recut(k, &within, tokenizer)) {
            Some(recut) => recut,
            None => {
                let original = original.get_or_insert_with(|| decode(&json[string.clone()]));
                let mut cut = original.as_ref()?.clone();
                let truncation = cap(&mut cut, &within, tokenizer)?;
                (cut, truncation)
            }
        };
        let spliced = splice(json, string.clone(), &serde_json::to_string(&cut).ok()?);
        let tokens = tokenizer.count(&spliced);
        if tokens <= max_tokens {
            return Some((spliced, truncation));
        }
        budget = budget.saturating_sub(tokens - max_tokens);
    }
    None
}

/// The text of `known` cut to `limit` from what its first cut kept, which holds all a cut to a
/// smaller limit keeps: the kept part cut again, and the note counting what the whole text drops.
/// `None` with `head_tail`, whose parts are cut afresh.
fn recut(
    known: &CutText,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(String, Truncation)> {
    let first = &known.cut;
    let (kept, kept_tokens) = match limit.keep() {
        Keep::Head => {
            let region = &known.text[..first.head_end];
            match cut(region, limit, tokenizer) {
                Some(again) => (&region[..again.head_end], again.truncation.kept_tokens),
                None => (region, first.truncation.kept_tokens),
            }
        }
        Keep::Tail => {
            let region = &known.text[first.tail_start..];
            match cut(region, limit, tokenizer) {
                Some(again) => (&region[again.tail_start..], again.truncation.kept_tokens),
                None => (region, first.truncation.kept_tokens),
            }
        }
        Keep::HeadTail => return None,
    };
    let original_tokens = first.truncation.original_tokens;
    let dropped_tokens = original_tokens - kept_tokens;
    let text = format!(
        "{kept}{}{}",
        line_break_after(kept),
        note(dropped_tokens, limit.hint())
    );
    let truncation = Truncation {
        original_tokens,
        kept_tokens,
        dropped_tokens,
        max_tokens: limit.max_tokens(),
        keep: limit.keep(),
    };
    Some((text, truncation))
}

/// `json`, `total` tokens, with items dropped from its largest arrays (from the end, or from the
/// start when `limit` keeps the tail) until it fits `limit` with the note at the end of its last
/// string. Its figures count the structure without the note.
fn drop_items(
    mut json: Cow<str>,
    total: usize,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(String, Truncation)> {
    for _ in 0..16 {
        // The longest list of two items or more (so that a list holding one large list is not
        // emptied whole), else the longest non-empty one.
        let array = largest(&json, |value, items| {
            (value.starts_with('[') && !items.is_empty()).then_some((items.len() > 1, value.len()))
        })?;
        let items = children_of(&json, array.clone());
        // The structure with `kept` of the array's items, and with the note if it fits.
        let fits = |kept: usize| {
            let json = if kept == 0 {
                [&json[..array.start + 1], &json[array.end - 1..]].concat()
            } else {
                match limit.keep() {
                    Keep::Tail => {
                        let first = &items[items.len() - kept];
                        [&json[..array.start + 1], &json[first.start..]].concat()
                    }
                    Keep::Head | Keep::HeadTail => {
                        let last = &items[kept - 1];
                        [&json[..last.end], &json[array.end - 1..]].concat()
                    }
                }
            };
            // Over the limit without the note, it is over with it: counted only so far.
            let Some(kept_tokens) = tokenizer.count_within(&json, limit.max_tokens()) else {
                return (json, None);
            };
            let dropped_tokens = total.saturating_sub(kept_tokens);
            let noted = with_note(&json, &note(dropped_tokens, limit.hint()));
            let truncation = Truncation {
                original_tokens: total,
                kept_tokens,
                dropped_tokens,
                max_tokens: limit.max_tokens(),
                keep: limit.keep(),
            };
            let fits = tokenizer.count_within(&noted, limit.max_tokens()).is_some();
            (json, fits.then_some((noted, truncation)))
        };
        // Doubling from one item while it fits, then halving between the last that fitted and
        // the first that did not: a few counts of about what is kept.
        let (emptied, mut best) = fits(0);
        if best.is_none() {
            json = Cow::Owned(emptied);
            continue;
        }
        let (mut fitted, mut over) = (0, items.len() + 1);
        let mut kept = 1;
        while kept <= items.len() {
            match fits(kept).1 {
                Some(capped) => (fitted, best) = (kept, Some(capped)),
                None => {
                    over = kept;
                    break;
                }
            }
            kept *= 2;
        }
        while over - fitted > 1 {
            let mid = fitted + (over - fitted) / 2;
            match fits(mid).1 {
                Some(capped) => (fitted, best) = (mid, Some(capped)),
                None => over = mid,
            }
        }
        return best;
    }
    None
}

/// `json` with `note` at the end of its last string, after a line break; as it is when it has no
/// string.
fn with_note(json: &str, note: &str) -> String {
    let last = largest(json, |value, _| {
        value.starts_with('"').then_some(value.as_ptr() as usize)
    });
    let Some(last) = last else {
        return json.to_owned();
    };
    let Some(mut string) = decode(&json[last.clone()]) else {
        return json.to_owned();
    };
    string.push_str(line_break_after(&string));
    string.push_str(note);
    let string = serde_json::to_string(&string).expect("strings serialize");
    splice(json, last, &string)
}

/// `json` with `with` in place of `json[at]`.
fn splice(json: &str, at: Range<usize>, with: &str) -> String {
    [&json[..at.start], with, &json[at.end..]].concat()
}

/// The string the JSON string `literal` stands for.
fn decode(literal: &str) -> Option<String> {
    serde_json::from_str(literal).ok()
}

/// Whether the JSON string `literal` stands for `text`, decoded only when it has escapes and
/// could.
fn is_string(literal: &str, text: &str) -> bool {
    let inner = &literal[1..literal.len() - 1];
    if !inner.contains('\\') {
        return inner == text;
    }
    inner.len() >= text.len() && decode(literal).is_some_and(|string| string == text)
}

/// Where in the compact JSON `json` lies its value that `rank` ranks highest, the first of
/// equals. `rank` is given each value's JSON and, for an array or an object, its items or its
/// values.
fn largest<R: Ord>(
    json: &str,
    rank: impl Fn(&str, &[&RawValue]) -> Option<R>,
) -> Option<Range<usize>> {
    fn walk<'a, R: Ord>(
        value: &'a str,
        rank: &impl Fn(&str, &[&RawValue]) -> Option<R>,
        best: &mut Option<(R, &'a str)>,
    ) {
        let children = children(value);
        if let Some(ranked) = rank(value, &children) {
            if best.as_ref().is_none_or(|(best, _)| ranked > *best) {
                *best = Some((ranked, value));
            }
        }
        for child in children {
            walk(child.get(), rank, best);
        }
    }
    let mut best = None;
    walk(json, &rank, &mut best);
    best.map(|(_, value)| span_of(json, value))
}

/// Where the items or values of the array or object at `at` lie in `json`.
fn children_of(json: &str, at: Range<usize>) -> Vec<Range<usize>> {
    children(&json[at])
        .into_iter()
        .map(|child| span_of(json, child.get()))
        .collect()
}

/// Where `value`, a slice of `json`, lies in it.
fn span_of(json: &str, value: &str) -> Range<usize> {
    let start = value.as_ptr() as usize - json.as_ptr() as usize;
    start..start + value.len()
}

/// The items of the array `json`, or the values of the object; none for anything else.
fn children(json: &str) -> Vec<&RawValue> {
    if !json.starts_with(['[', '{']) {
        return Vec::new();
    }
    serde_json::from_str::<Children>(json).map_or_else(|_| Vec::new(), |children| children.0)
}

/// The items of an array, or the values of an object, borrowed from its JSON.
struct Children<'a>(Vec<&'a RawValue>);

impl<'de> Deserialize<'de> for Children<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Children<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array or an object")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Self::Value, A::Error> {
                let mut children = Vec::with_capacity(items.size_hint().unwrap_or(0));
                while let Some(item) = items.next_element()? {
                    children.push(item);
                }
                Ok(Children(children))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut fields: A) -> Result<Self::Value, A::Error> {
                let mut children = Vec::new();
                while fields.next_key::<IgnoredAny>()?.is_some() {
                    children.push(fields.next_value()?);
                }
                Ok(Children(children))
            }
        }
        deserializer.deserialize_any(Each)
    }
}

/// `json` as compact JSON, written as serde_json and `JSON.stringify` write it: itself when it
/// already is, which is how the SDKs write it.
fn compact(json: Cow<'_, str>) -> serde_json::Result<Cow<'_, str>> {
    let mut same = Same {
        rest: json.as_bytes(),
        differs: false,
    };
    let read = transcode(&json, &mut same);
    if !same.differs {
        read?;
        if same.rest.is_empty() {
            return Ok(json);
        }
    }
    let mut written = Vec::with_capacity(json.len());
    transcode(&json, &mut written)?;
    String::from_utf8(written)
        .map(Cow::Owned)
        .map_err(serde::ser::Error::custom)
}

/// Writes the JSON `json` compact to `to`.
fn transcode(json: &str, to: impl io::Write) -> serde_json::Result<()> {
    let mut from = serde_json::Deserializer::from_str(json);
    serde_transcode::transcode(&mut from, &mut serde_json::Serializer::new(to))?;
    from.end()
}

/// A writer that checks that what is written is `rest`, and stops at the first difference.
struct Same<'a> {
    rest: &'a [u8],
    differs: bool,
}

impl io::Write for Same<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self.rest.strip_prefix(bytes) {
            Some(rest) => {
                self.rest = rest;
                Ok(bytes.len())
            }
            None => {
                self.differs = true;
                Err(io::Error::other("not compact"))
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tool_output_cap::Encoding;

    #[test]
    fn compact_json_is_read_in_place_and_other_json_is_written_compact() {
        let read = |json: &'static str| compact(Cow::Borrowed(json));
        assert!(matches!(
            read(r#"{"a":[1,2],"b":"é/"}"#),
            Ok(Cow::Borrowed(_))
        ));
        let written = read("{ \"a\" : [1, 2.50],\n \"b\": \"\\u00e9\\/\" }").unwrap();
        assert!(matches!(written, Cow::Owned(_)));
        assert_eq!(written, r#"{"a":[1,2.5],"b":"é/"}"#);
        assert!(read(r#"{"a":"#).is_err());
    }

    #[test]
    fn a_list_keeps_the_most_items_that_fit_with_the_note() {
        let tokenizer = Encoding::O200kBase.tokenizer();
        let files: Vec<Value> = (0..3_000)
            .map(|i| json!({"path": format!("/usr/share/doc/package-{i}/copyright"), "size": i}))
            .collect();
        let json = json!({"root": "/usr", "files": files, "end": "done"}).to_string();
        let total = tokenizer.count(&json);
        for keep in [Keep::Head, Keep::Tail] {
            let limit = ToolLimit::new(2_000).with_keep(keep);
            let (capped, truncation) =
                drop_items(Cow::Borrowed(&json), total, &limit, tokenizer).unwrap();
            assert!(tokenizer.count(&capped) <= 2_000);
            let capped: Value = serde_json::from_str(&capped).unwrap();
            let kept = capped["files"].as_array().unwrap();
            let (first, more) = match keep {
                Keep::Tail => (files.len() - kept.len(), files.len() - kept.len() - 1),
                _ => (0, 0),
            };
            assert_eq!(kept[..], files[first..first + kept.len()]);
            let note = note(truncation.dropped_tokens, limit.hint());
            assert_eq!(capped["end"], format!("done\n{note}"));
            assert_eq!(truncation.original_tokens, total);
            // One item more would not fit.
            let mut more_kept = kept.clone();
            match keep {
                Keep::Tail => more_kept.insert(0, files[more].clone()),
                _ => more_kept.push(files[kept.len()].clone()),
            }
            let over = json!({"root": "/usr", "files": more_kept, "end": "done"}).to_string();
            let dropped = total - tokenizer.count(&over);
            let over = with_note(&over, &super::note(dropped, limit.hint()));
            assert!(tokenizer.count(&over) > 2_000);
        }
    }
}
