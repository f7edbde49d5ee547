//! Cutting a structure by its lists: the most whole items that fit, and the next item cut in
//! place.

use std::borrow::Cow;
use std::ops::Range;

use super::literal::decode_string;
use super::walk::{children_of, largest, splice};
use crate::layout::{ending, note};
use crate::limit::{Keep, ToolLimit};
use crate::tokenizer::Tokenizer;
use crate::truncation::Truncation;

/// `json`, `total` tokens, with items dropped from its largest arrays (from the end, or from the
/// start when `limit` keeps the tail) until it fits `limit` with the note at the end of its last
/// string, and the item next to those kept cut in place ([`shrink`]) to fill what they leave.
/// Its figures count the structure without the note.
pub(super) fn drop_items(
    mut json: Cow<'_, str>,
    total: usize,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(String, Truncation)> {
    // The structure `json` with the note, if it fits.
    let check = |json: &str| -> Option<(String, Truncation)> {
        // Over the limit without the note, it is over with it: counted only so far.
        let kept_tokens = tokenizer.count_within(json, limit.max_tokens())?;
        let dropped_tokens = total.saturating_sub(kept_tokens);
        let noted = with_note(json, &note(dropped_tokens, limit.hint()))?;
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

/// What tells whether a structure fits with the note, and gives it with the note and its figures.
type Check<'a> = &'a dyn Fn(&str) -> Option<(String, Truncation)>;

/// `json` with its value at `at` cut in place to the most with which `check` finds the whole
/// within the limit, and what `check` gives for it: a string keeps its start (its end with
/// `Keep::Tail`), a list its first items (its last) and then the next one cut in the same way,
/// and an object its largest value cut so. `None` when nothing of the value makes it fit.
fn shrink(
    json: &str,
    at: Range<usize>,
    keep: Keep,
    check: Check<'_>,
    depth: usize,
) -> Option<(String, Truncation)> {
    if depth > MAX_DEPTH {
        return None;
    }
    match json[at.clone()].as_bytes().first()? {
        b'"' => shrink_string(json, at, keep, check),
        b'[' => shrink_list(json, at, keep, check, depth),
        b'{' => {
            let largest = children_of(json, at)
                .into_iter()
                .max_by_key(|value| value.len())?;
            shrink(json, largest, keep, check, depth + 1)
        }
        _ => None,
    }
}

/// [`shrink`] of the string at `at`: its longest start (its end with `Keep::Tail`) that fits.
fn shrink_string(
    json: &str,
    at: Range<usize>,
    keep: Keep,
    check: Check<'_>,
) -> Option<(String, Truncation)> {
    let string = decode_string(&json[at.clone()])?;
    // The longest part of at most `len` bytes that ends (with `Keep::Tail`, starts) on a char
    // boundary.
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

/// [`shrink`] of the list at `at`: its most first items (last with `Keep::Tail`) that fit, then
/// the next item shrunk in place to fill what they leave.
fn shrink_list(
    json: &str,
    at: Range<usize>,
    keep: Keep,
    check: Check<'_>,
    depth: usize,
) -> Option<(String, Truncation)> {
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

/// The most of `n` for which `fits` gives something, and that: doubling from one while it fits,
/// then halving between the last that fitted and the first that did not, so that it takes a few
/// calls of about what is kept. `None` when nothing fits. 0 may not fit where 1 does (a list
/// emptied has no string left for the note), so it does not end the search.
fn most_that_fits<T>(n: usize, fits: impl Fn(usize) -> Option<T>) -> Option<(usize, T)> {
    let mut best = fits(0).map(|found| (0, found));
    let mut over = n + 1;
    let mut kept = 1;
    while kept <= n {
        match fits(kept) {
            Some(found) => best = Some((kept, found)),
            None => {
                over = kept;
                break;
            }
        }
        kept *= 2;
    }
    let mut fitted = best.as_ref().map_or(0, |(kept, _)| *kept);
    while over - fitted > 1 {
        let mid = fitted + (over - fitted) / 2;
        match fits(mid) {
            Some(found) => {
                best = Some((mid, found));
                fitted = mid;
            }
            None => over = mid,
        }
    }
    best
}

/// `json` with `note` at the end of its last string, after a line break. A structure with no
/// string keeps no note, as long as it keeps a value (a list of numbers shortened: its figures
/// say what was dropped); one that keeps none (a list emptied of its one item) is no cut: `None`.
fn with_note(json: &str, note: &str) -> Option<String> {
    let last = largest(json, |value, _| {
        value.starts_with('"').then_some(value.as_ptr() as usize)
    });
    let Some(last) = last else {
        let scalar = largest(json, |value, _| {
            (!value.starts_with(['{', '['])).then_some(())
        });
        return scalar.map(|_| json.to_owned());
    };
    let mut string = decode_string(&json[last.clone()])?;
    let ending = ending(&string, note);
    string.push_str(&ending);
    let string = serde_json::to_string(&string).ok()?;
    Some(splice(json, last, &string))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Encoding;
    use serde_json::{json, Value};

    #[test]
    fn a_list_keeps_the_most_items_that_fit_with_the_note() {
        let tokenizer = Encoding::O200kBase.tokenizer();
        let files: Vec<Value> = (0..3_000)
            .map(|i| json!({"path": format!("/usr/share/doc/package-{i}/copyright"), "size": i}))
            .collect();
        // Written out, so that `end` is last whatever order serde_json keeps keys in.
        let json = format!(r#"{{"root":"/usr","files":{},"end":"done"}}"#, json!(files));
        let total = tokenizer.count(&json);
        for keep in [Keep::Head, Keep::Tail] {
            let limit = ToolLimit::new(2_000).unwrap().with_keep(keep);
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
            let note = note(truncation.dropped_tokens, limit.hint());
            assert_eq!(capped["end"], format!("done\n{note}"));
            assert_eq!(truncation.original_tokens, total);
            let mut more = capped.clone();
            // The item next to the whole ones, cut, or not there.
            if kept[index] != files[next] {
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
                let list = more["files"].as_array_mut().unwrap();
                let (at, next) = match keep {
                    Keep::Tail => (0, next - 1),
                    _ => (list.len(), next + 1),
                };
                list.insert(at, json!({"path": "", "size": files[next]["size"]}));
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
        let json = format!(r#"{{"files":{},"end":"done"}}"#, json!(files));
        let total = tokenizer.count(&json);
        let limit = ToolLimit::new(2_000).unwrap();
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
        let limit = ToolLimit::new(5_000).unwrap();
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
