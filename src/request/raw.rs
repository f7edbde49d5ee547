//! Reading a request in place: its objects, lists and strings borrowed from its text, and the
//! edits that make the capped body.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

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

/// The fields of each object of the JSON array `json`, read in one pass (items that are not
/// objects are left out); `None` for anything but an array.
///
/// One pass matters: each level of a request read on its own reads its long strings again.
pub(super) fn objects(json: &RawValue) -> Option<Vec<Fields<'_>>> {
    let items: Vec<Object<'_>> = serde_json::from_str(json.get()).ok()?;
    Some(items.into_iter().filter_map(|item| item.0).collect())
}

/// A JSON object's fields, or `None` for any other value.
struct Object<'a>(Option<Fields<'a>>);

impl<'de> serde::Deserialize<'de> for Object<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Object<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut fields = Fields::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    fields.insert(key, map.next_value::<&'de RawValue>()?);
                }
                Ok(Object(Some(fields)))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Object(None))
            }

            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Object(None))
            }

            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Object(None))
            }

            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Object(None))
            }

            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Object(None))
            }

            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Object(None))
            }

            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Object(None))
            }
        }

        deserializer.deserialize_any(Visitor)
    }
}

/// The string `json` stands for, if it is one.
pub(super) fn string(json: &RawValue) -> Option<String> {
    crate::json::decode_string(json.get())
}

/// The string field `key` of `fields`, if it is one.
pub(super) fn string_field(fields: &Fields<'_>, key: &str) -> Option<String> {
    fields.get(key).and_then(|value| string(value))
}

/// Edits of a text, each a range of it and what replaces it, made in one pass.
#[derive(Debug, Default)]
pub(super) struct Splices(Vec<(Range<usize>, String)>);

impl Splices {
    /// Replaces `part`, a slice of `whole`, by `with`.
    pub(super) fn replace(&mut self, whole: &str, part: &str, with: String) {
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
