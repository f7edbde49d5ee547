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

/// The string `json` stands for, if it is one.
pub(super) fn string(json: &RawValue) -> Option<String> {
    crate::json::decode_string(json.get())
}

/// For each object of `list`, where the last object at or before it whose `role` is `role`
/// is: the turn of a result there, when `role` is the model's.
pub(super) fn turns_of_role(list: &[Object<'_>], role: &str) -> Vec<Option<usize>> {
    let mut last = None;
    list.iter()
        .enumerate()
        .map(|(at, object)| {
            if string_field(&object.fields, "role").as_deref() == Some(role) {
                last = Some(at);
            }
            last
        })
        .collect()
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
