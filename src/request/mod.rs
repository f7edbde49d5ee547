//! Capping the tool results of a request to a model API: where every tool result of an agent,
//! a host's built-in tools' included, meets the model, and where a history that is already too
//! big is sent again on every turn.
//!
//! Each tool result is cut to the limit of the tool whose call it answers (found by the call's
//! id), with the crate's note. The rest of the request stays byte for byte, and so does a result
//! within its limit, one already capped among them: a history capped once is the same bytes on
//! every later turn, so the provider's prompt cache keeps hitting.
//!
//! The Anthropic Messages API is read so far ([`anthropic::cap_messages`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use serde_json::value::RawValue;

use crate::json::walk::span_of;

pub mod anthropic;

/// A request body that is not a JSON object: it is left as it is.
#[derive(Debug)]
pub struct NotARequest(serde_json::Error);

impl fmt::Display for NotARequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the request body is not a JSON object: {}", self.0)
    }
}

impl std::error::Error for NotARequest {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// The fields of the JSON object `json`, borrowed from it; `None` for anything else.
fn fields(json: &RawValue) -> Option<HashMap<Cow<'_, str>, &RawValue>> {
    serde_json::from_str(json.get()).ok()
}

/// The items of the JSON array `json`, borrowed from it; `None` for anything else.
fn items(json: &RawValue) -> Option<Vec<&RawValue>> {
    serde_json::from_str(json.get()).ok()
}

/// The string `json` stands for, if it is one.
fn string(json: &RawValue) -> Option<String> {
    crate::json::decode_string(json.get())
}

/// Edits of a text, each a range of it and what replaces it, made in one pass.
#[derive(Debug, Default)]
struct Splices(Vec<(Range<usize>, String)>);

impl Splices {
    /// Replaces `part`, a slice of `whole`, by `with`.
    fn replace(&mut self, whole: &str, part: &str, with: String) {
        self.0.push((span_of(whole, part), with));
    }

    /// `whole` with the edits made, or `None` when there are none.
    fn apply(mut self, whole: &str) -> Option<String> {
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
