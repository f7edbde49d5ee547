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
        let mut out = String::with_capacity(whole.len());
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
