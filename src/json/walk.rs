//! Finding values in compact JSON text: where they lie, and their items, borrowed from it.

use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::literal::decode_string;

/// `json` with `with` in place of `json[at]`.
pub(crate) fn splice(json: &str, at: Range<usize>, with: &str) -> String {
    [&json[..at.start], with, &json[at.end..]].concat()
}

/// Whether the JSON string `literal` stands for `text`, decoded only when it has escapes and
/// could.
pub(super) fn is_string(literal: &str, text: &str) -> bool {
    let inner = &literal[1..literal.len() - 1];
    if !inner.contains('\\') {
        return inner == text;
    }
    inner.len() >= text.len() && decode_string(literal).is_some_and(|string| string == text)
}

/// Where in the compact JSON `json` lies its value that `rank` ranks highest, the first of
/// equals. `rank` is given each value's JSON and, for an array or an object, its items or its
/// values.
pub(super) fn largest<R: Ord>(
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
pub(super) fn children_of(json: &str, at: Range<usize>) -> Vec<Range<usize>> {
    children(&json[at])
        .into_iter()
        .map(|child| span_of(json, child.get()))
        .collect()
}

/// Where `value`, a slice of `json`, lies in it.
#[inline]
pub(crate) fn span_of(json: &str, value: &str) -> Range<usize> {
    let start = value.as_ptr() as usize - json.as_ptr() as usize;
    start..start + value.len()
}

/// The items of the array `json`, or the values of the object; none for anything else.
pub(super) fn children(json: &str) -> Vec<&RawValue> {
    if !json.starts_with(['[', '{']) {
        return Vec::new();
    }
    serde_json::from_str::<Children<'_>>(json).map_or_else(|_| Vec::new(), |children| children.0)
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
