//! What a cap gives back: the text, and how it was cut.

use napi::bindgen_prelude::Null;
use napi::Either;
use napi_derive::napi;
use tool_output_cap::Cut;

/// A capped text: `text`, `null` when it came back unchanged (the package's `index.js` gives
/// the caller's own string then), and `truncation`, `null` then too.
#[napi(object)]
pub struct Capped {
    pub text: Either<String, Null>,
    pub truncation: Either<Truncation, Null>,
}

/// A capped JSON text: `text` is JSON of the same shape when `isJson`, and else its compact JSON
/// capped as text, since no cut of the shape fits; `text` and `truncation` are `null` when it
/// came back unchanged.
#[napi(object)]
pub struct CappedJson {
    pub text: Either<String, Null>,
    pub truncation: Either<Truncation, Null>,
    pub is_json: bool,
}

impl From<Option<tool_output_cap::json::CappedJson>> for CappedJson {
    fn from(capped: Option<tool_output_cap::json::CappedJson>) -> Self {
        match capped {
            Some(capped) => CappedJson {
                is_json: capped.is_json(),
                truncation: Either::A(Truncation::from(capped.truncation())),
                text: Either::A(capped.into_text()),
            },
            None => CappedJson {
                text: Either::B(Null),
                truncation: Either::B(Null),
                is_json: true,
            },
        }
    }
}

/// How a text over its limit was cut: the crate's figures, `N` of the note being
/// `droppedTokens`.
#[napi(object)]
pub struct Truncation {
    pub original_tokens: u32,
    pub kept_tokens: u32,
    pub dropped_tokens: u32,
    pub max_tokens: u32,
    pub keep: String,
}

impl Capped {
    /// `text` cut where `find` says.
    pub fn cut(text: &str, find: impl FnOnce(&str) -> Option<Cut>) -> Capped {
        match find(text) {
            Some(cut) => Capped::new(cut.capped(text), cut.truncation),
            None => Capped::unchanged(),
        }
    }

    pub fn new(text: String, truncation: tool_output_cap::Truncation) -> Capped {
        Capped {
            text: Either::A(text),
            truncation: Either::A(Truncation::from(truncation)),
        }
    }

    pub fn unchanged() -> Capped {
        Capped {
            text: Either::B(Null),
            truncation: Either::B(Null),
        }
    }
}

impl From<tool_output_cap::Truncation> for Truncation {
    fn from(truncation: tool_output_cap::Truncation) -> Self {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Truncation {
            original_tokens: count(truncation.original_tokens),
            kept_tokens: count(truncation.kept_tokens),
            dropped_tokens: count(truncation.dropped_tokens),
            max_tokens: count(truncation.max_tokens),
            keep: truncation.keep.name().to_owned(),
        }
    }
}
