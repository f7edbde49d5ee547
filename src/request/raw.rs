//! Reading a request in place: its objects, lists and strings borrowed from its text, and the
//! edits that make the capped body.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use serde_json::value::RawValue;

use crate::json::walk::span_of;

/// The fields of a JSON object, each value borrowed from the object's text.
pub(super) type Fields<'a> = HashMap<Cow<'a, str>, &'a RawValue>;

/// The fields of the JSON object `json`; `None` for anything else.
pub(super) fn fields(json: &RawValue) -> Option<Fields<'_>> {
    serde_json::from_str(json.get()).ok()
}

/// The items of the JSON array `json`; `None` for anything else.
pub(super) fn items(json: &RawValue) -> Option<Vec<&RawValue>> {
    serde_json::from_str(json.get()).ok()
}

/// A JSON object read in one pass: its fields, borrowed from the text, and the objects of the
/// list under the key its path descends into, read the same way.
///
/// One pass matters: each level of a request read on its own would read its long strings again.
#[derive(Debug, Default)]
pub(super) struct Object<'a> {
    pub(super) fields: Fields<'a>,
    /// The objects of the list under the path's first key (not among `fields`); items that are
    /// not objects are left out.
    pub(super) list: Vec<Object<'a>>,
}

/// Reads `body`, which must be a JSON object, in one pass, descending `path`: the list under its
/// key `path[0]`, in each object of that list the list under `path[1]`, and so on.
pub(super) fn read<'a>(
    body: &'a str,
    path: &'static [&'static str],
) -> Result<Object<'a>, serde_json::Error> {
    use serde::de::{DeserializeSeed, Error};
    let mut deserializer = serde_json::Deserializer::from_str(body);
    let node = Descend(path).deserialize(&mut deserializer)?;
    deserializer.end()?;
    match node {
        Node::Object(object) => Ok(object),
        _ => Err(serde_json::Error::custom("the body is not a JSON object")),
    }
}

/// A JSON value as [`Descend`] reads it.
enum Node<'a> {
    Object(Object<'a>),
    /// The objects of a list; its other items are left out.
    List(Vec<Object<'a>>),
    /// Anything else, read past.
    Other,
}

/// Reads a value descending a path: an object's key that the path names is read (as a list of
/// objects) with the rest of the path, its other values are borrowed.
struct Descend(&'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for Descend {
    type Value = Node<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Descend {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = Object::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match self.0.split_first() {
                Some((descend, rest)) if key == *descend => {
                    if let Node::List(list) = map.next_value_seed(Descend(rest))? {
                        object.list = list;
                    }
                }
                _ => {
                    object
                        .fields
                        .insert(key, map.next_value::<&'de RawValue>()?);
                }
            }
        }
        Ok(Node::Object(object))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut list = Vec::new();
        while let Some(item) = seq.next_element_seed(Descend(self.0))? {
            if let Node::Object(object) = item {
                list.push(object);
            }
        }
        Ok(Node::List(list))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Node::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Node::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Node::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Node::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Node::Other)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Node::Other)
    }
}

/// `body` with each escape of a lone surrogate (`\ud800`) made `\ufffd`: the same length, so
/// every value is where it was, and a string reads as the crate reads it anyway (a lone
/// surrogate is U+FFFD). Borrowed when there is none.
pub(super) fn without_lone_surrogates(body: &str) -> Cow<'_, str> {
    let bytes = body.as_bytes();
    let hex = |at: usize| {
        let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    let mut lone = Vec::new();
    let mut at = 0;
    while let Some(found) = bytes[at..].iter().position(|&b| b == b'\\') {
        let escape = at + found;
        at = escape + 2;
        if bytes.get(escape + 1) != Some(&b'u') {
            continue;
        }
        let Some(unit) = hex(escape + 2) else {
            continue;
        };
        at = escape + 6;
        let low = |at: usize| {
            bytes.get(at..at + 2) == Some(&b"\\u"[..])
                && hex(at + 2).is_some_and(|u| (0xDC00..=0xDFFF).contains(&u))
        };
        match unit {
            0xD800..=0xDBFF if low(at) => at += 6,
            0xD800..=0xDFFF => lone.push(escape + 2),
            _ => {}
        }
    }
    if lone.is_empty() {
        return Cow::Borrowed(body);
    }
    let mut out = body.to_owned();
    for at in lone {
        out.replace_range(at..at + 4, "fffd");
    }
    Cow::Owned(out)
}

/// The string `json` stands for, if it is one.
pub(super) fn string(json: &RawValue) -> Option<String> {
    crate::json::decode_string(json.get())
}

/// Where in `list` the last object whose `role` is `role` is.
pub(super) fn last_of_role(list: &[Object<'_>], role: &str) -> Option<usize> {
    list.iter()
        .rposition(|object| string_field(&object.fields, "role").as_deref() == Some(role))
}

/// The string field `key` of `fields`, if it is one.
pub(super) fn string_field(fields: &Fields<'_>, key: &str) -> Option<String> {
    fields.get(key).and_then(|value| string(value))
}

/// Edits of a text, each a range of it and what replaces it, made in one pass.
#[derive(Debug, Default)]
pub(super) struct Splices(Vec<(Range<usize>, Arc<str>)>);

impl Splices {
    /// Replaces `part`, a slice of `whole`, by `with`.
    pub(super) fn replace(&mut self, whole: &str, part: &str, with: Arc<str>) {
        self.0.push((span_of(whole, part), with));
    }

    /// `whole` with the edits made, or `None` when there are none.
    pub(super) fn apply(mut self, whole: &str) -> Option<String> {
        if self.0.is_empty() {
            return None;
        }
        self.0.sort_by_key(|(range, _)| range.start);
        let removed: usize = self.0.iter().map(|(range, _)| range.len()).sum();
        let added: usize = self.0.iter().map(|(_, with)| with.len()).sum();
        let mut out = String::with_capacity(whole.len() - removed + added);
        let mut at = 0;
        for (range, with) in &self.0 {
            out.push_str(&whole[at..range.start]);
            out.push_str(with);
            at = range.end;
        }
        out.push_str(&whole[at..]);
        Some(out)
    }
}
