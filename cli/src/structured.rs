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
    cap, cut, line_break_after, note, Cut, Keep, Outcome, Tokenizer, ToolLimit, ToolOutputLimits,
    Truncation,
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
    outcome: Outcome,
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
    let limit = outcome.limit(limit);
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
    truncation.record(tool, outcome);
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
                let original =
                    original.get_or_insert_with(|| lenient::decode_string(&json[string.clone()]));
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
/// string, and the item next to those kept cut in place ([`shrink`]) to fill what they leave.
/// Its figures count the structure without the note.
fn drop_items(
    mut json: Cow<str>,
    total: usize,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(String, Truncation)> {
    // The structure `json` with the note, if it fits.
    let check = |json: &str| -> Option<(String, Truncation)> {
        // Over the limit without the note, it is over with it: counted only so far.
        let kept_tokens = tokenizer.count_within(json, limit.max_tokens())?;
        let dropped_tokens = total.saturating_sub(kept_tokens);
        let noted = with_note(json, &note(dropped_tokens, limit.hint()));
        tokenizer.count_within(&noted, limit.max_tokens())?;
        let truncation = Truncation {
            original_tokens: total,
            kept_tokens,
            dropped_tokens,
            max_tokens: limit.max_tokens(),
            keep: limit.keep(),
        };
        Some((noted, truncation))
    };
    for _ in 0..16 {
        // The longest list of two items or more (so that a list holding one large list is not
        // emptied whole), else the longest non-empty one.
        let array = largest(&json, |value, items| {
            (value.starts_with('[') && !items.is_empty()).then_some((items.len() > 1, value.len()))
        })?;
        match shrink(&json, array.clone(), limit.keep(), &check, 0) {
            Some(capped) => return Some(capped),
            // Emptied, it is still over: empty it, and cut the next list.
            None => json = Cow::Owned([&json[..array.start + 1], &json[array.end - 1..]].concat()),
        }
    }
    None
}

/// How deep [`shrink`] goes into a structure: as deep as serde_json reads one.
const MAX_DEPTH: usize = 128;

/// `json` with its value at `at` cut in place to the most with which `check` finds the whole
/// within the limit, and what `check` gives for it: a string keeps its start (its end with
/// `Keep::Tail`), a list its first items (its last) and then the next one cut in the same way,
/// and an object its largest value cut so. `None` when nothing of the value makes it fit.
fn shrink(
    json: &str,
    at: Range<usize>,
    keep: Keep,
    check: &dyn Fn(&str) -> Option<(String, Truncation)>,
    depth: usize,
) -> Option<(String, Truncation)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let value = &json[at.clone()];
    match value.as_bytes().first()? {
        b'"' => {
            let string = lenient::decode_string(value)?;
            // The longest part of at most `len` bytes that ends (with `Keep::Tail`, starts) on a
            // char boundary.
            let kept = |len: usize| match keep {
                Keep::Tail => {
                    let start = (string.len() - len..=string.len())
                        .find(|&at| string.is_char_boundary(at))
                        .unwrap_or(string.len());
                    &string[start..]
                }
                Keep::Head | Keep::HeadTail => {
                    let end = (0..=len)
                        .rev()
                        .find(|&at| string.is_char_boundary(at))
                        .unwrap_or(0);
                    &string[..end]
                }
            };
            most_that_fits(string.len(), |len| {
                let literal = serde_json::to_string(kept(len)).ok()?;
                check(&splice(json, at.clone(), &literal))
            })
            .map(|(_, capped)| capped)
        }
        b'[' => {
            let items = children_of(json, at.clone());
            // The structure with `kept` of the items, and where the first or last of them lies.
            let with = |kept: usize| -> (String, Range<usize>) {
                if kept == 0 {
                    return ([&json[..at.start + 1], &json[at.end - 1..]].concat(), 0..0);
                }
                match keep {
                    Keep::Tail => {
                        let first = &items[items.len() - kept];
                        let json = [&json[..at.start + 1], &json[first.start..]].concat();
                        (json, at.start + 1..at.start + 1 + first.len())
                    }
                    Keep::Head | Keep::HeadTail => {
                        let last = items[kept - 1].clone();
                        ([&json[..last.end], &json[at.end - 1..]].concat(), last)
                    }
                }
            };
            let (kept, whole_items) = most_that_fits(items.len(), |kept| check(&with(kept).0))?;
            if kept == items.len() {
                return Some(whole_items);
            }
            let (next, item) = with(kept + 1);
            shrink(&next, item, keep, check, depth + 1).or(Some(whole_items))
        }
        b'{' => {
            let largest = children_of(json, at)
                .into_iter()
                .max_by_key(|value| value.len())?;
            shrink(json, largest, keep, check, depth + 1)
        }
        _ => None,
    }
}

/// The most of `n` for which `fits` gives something, and that: doubling from one while it fits,
/// then halving between the last that fitted and the first that did not, so that it takes a few
/// calls of about what is kept. `None` when not even 0 fits.
fn most_that_fits<T>(n: usize, fits: impl Fn(usize) -> Option<T>) -> Option<(usize, T)> {
    let mut best = (0, fits(0)?);
    let mut over = n + 1;
    let mut kept = 1;
    while kept <= n {
        match fits(kept) {
            Some(found) => best = (kept, found),
            None => {
                over = kept;
                break;
            }
        }
        kept *= 2;
    }
    while over - best.0 > 1 {
        let mid = best.0 + (over - best.0) / 2;
        match fits(mid) {
            Some(found) => best = (mid, found),
            None => over = mid,
        }
    }
    Some(best)
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
    let Some(mut string) = lenient::decode_string(&json[last.clone()]) else {
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

/// Whether the JSON string `literal` stands for `text`, decoded only when it has escapes and
/// could.
fn is_string(literal: &str, text: &str) -> bool {
    let inner = &literal[1..literal.len() - 1];
    if !inner.contains('\\') {
        return inner == text;
    }
    inner.len() >= text.len()
        && lenient::decode_string(literal).is_some_and(|string| string == text)
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
            // Whole items, then, where one fits, the item next to them cut: its path shortened.
            let (index, next) = match keep {
                Keep::Tail => (0, files.len() - kept.len()),
                _ => (kept.len() - 1, kept.len() - 1),
            };
            let whole = match keep {
                Keep::Tail => kept[1..] == files[next + 1..],
                _ => kept[..index] == files[..index],
            };
            assert!(whole, "{keep}: the items before the cut one are whole");
            let partial = kept[index] != files[next];
            let note = note(truncation.dropped_tokens, limit.hint());
            assert_eq!(capped["end"], format!("done\n{note}"));
            assert_eq!(truncation.original_tokens, total);
            let mut more = capped.clone();
            if partial {
                let path = kept[index]["path"].as_str().unwrap();
                let full = files[next]["path"].as_str().unwrap();
                assert_eq!(kept[index]["size"], files[next]["size"]);
                let longer = match keep {
                    Keep::Tail => &full[full.len() - path.len() - 1..],
                    _ => &full[..path.len() + 1],
                };
                assert!(
                    longer.len() <= full.len() && longer.contains(path),
                    "{keep}: {path}"
                );
                more["files"][index]["path"] = json!(longer);
            } else {
                // Not even the next item with an empty path fits.
                let mut empty = files[if keep == Keep::Tail {
                    next - 1
                } else {
                    next + 1
                }]
                .clone();
                empty["path"] = json!("");
                let list = more["files"].as_array_mut().unwrap();
                match keep {
                    Keep::Tail => list.insert(0, empty),
                    _ => list.push(empty),
                }
            }
            assert!(tokenizer.count(&more.to_string()) > 2_000, "{keep}");
        }
    }

    #[test]
    fn a_list_item_that_does_not_fit_whole_is_cut_to_fill_what_is_left() {
        let tokenizer = Encoding::O200kBase.tokenizer();
        let files: Vec<Value> = (0..3_000)
            .map(|i| json!({"path": format!("/usr/share/doc/package-{i}/{}", "copyright/".repeat(20)), "size": i}))
            .collect();
        let json = json!({"files": files, "end": "done"}).to_string();
        let total = tokenizer.count(&json);
        let limit = ToolLimit::new(2_000);
        let (capped, _) = drop_items(Cow::Borrowed(&json), total, &limit, tokenizer).unwrap();
        let capped: Value = serde_json::from_str(&capped).unwrap();
        let kept = capped["files"].as_array().unwrap();
        let last = kept.len() - 1;
        assert_eq!(kept[..last], files[..last]);
        let path = kept[last]["path"].as_str().unwrap();
        let full = files[last]["path"].as_str().unwrap();
        assert!(path.len() < full.len() && full.starts_with(path), "{path}");
        assert_eq!(kept[last]["size"], last);
    }

    /// The shape of Chrome DevTools MCP's `take_snapshot` structure for a page of 16,304 rows:
    /// its fourth child, a navigation of 600 links, does not fit whole.
    #[test]
    fn a_nested_tree_keeps_the_most_that_fits_inside_the_item_that_does_not_fit_whole() {
        let tokenizer = Encoding::O200kBase.tokenizer();
        let node =
            |id: String, role: &str, name: String| json!({"id": id, "role": role, "name": name});
        let mut children: Vec<Value> = (0..3)
            .map(|i| node(format!("1_{i}"), "heading", format!("Section {i}")))
            .collect();
        let links: Vec<Value> = (0..600)
            .map(|i| {
                let mut link = node(format!("2_{i}"), "link", format!("Go to page {i}"));
                link["url"] = json!(format!("http://127.0.0.1:8000/page/{i}"));
                link
            })
            .collect();
        let mut navigation = node("1_3".into(), "navigation", "Main".into());
        navigation["children"] = json!(links);
        children.push(navigation);
        children.extend((0..16_304).map(|i| {
            let mut row = node(format!("3_{i}"), "row", format!("Item {i}"));
            row["children"] = json!([node(format!("4_{i}"), "cell", format!("{i}"))]);
            row
        }));
        let mut root = node("1_0".into(), "RootWebArea", "Rows".into());
        root["children"] = json!(children);
        let json = json!({"snapshot": root}).to_string();
        let total = tokenizer.count(&json);
        let limit = ToolLimit::new(5_000);
        let (capped, truncation) =
            drop_items(Cow::Borrowed(&json), total, &limit, tokenizer).unwrap();
        assert!(tokenizer.count(&capped) <= 5_000);
        assert!(truncation.kept_tokens >= 4_500, "{truncation:?}");
        let capped: Value = serde_json::from_str(&capped).unwrap();
        let kept = capped["snapshot"]["children"].as_array().unwrap();
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[..3], children[..3]);
        assert_eq!(kept[3]["role"], "navigation");
        let links_kept = kept[3]["children"].as_array().unwrap();
        assert!(
            links_kept.len() > 100 && links_kept.len() < 600,
            "{}",
            links_kept.len()
        );
        assert_eq!(
            links_kept[..links_kept.len() - 1],
            links[..links_kept.len() - 1]
        );
    }
}
