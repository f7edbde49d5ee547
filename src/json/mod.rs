//! The JSON cap: a structured result over its limit cut to fit while it stays valid JSON of the
//! same shape, for the model and for a schema that checks it.
//!
//! The work is done on the value's compact JSON, the form a host writes it in for the model
//! (`JSON.stringify`), and is text surgery on it: the one string cut, or the items dropped, are
//! spliced out and every other byte stays. No tree of the structure is built, so capping a large
//! value holds little more than its text. A structure that no such cut fits is cut as a text:
//! [`CappedJson`] says which came back.
//!
//! ```
//! use tool_output_cap::{json, Encoding, ToolLimit};
//!
//! let files: Vec<String> = (0..3000).map(|i| format!("src/module_{i}/mod.rs")).collect();
//! let listing = serde_json::json!({"count": 3000, "files": files}).to_string();
//! let tokenizer = Encoding::O200kBase.tokenizer();
//! let Some(json::CappedJson::Json(capped, truncation)) =
//!     json::cap_json(&listing, &ToolLimit::new(500)?, tokenizer)?
//! else {
//!     panic!("over 500 tokens, and its list can be shortened");
//! };
//! assert!(tokenizer.count(&capped) <= 500);
//! let capped: serde_json::Value = serde_json::from_str(&capped)?;
//! assert_eq!(capped["count"], 3000);
//! let kept = capped["files"].as_array().unwrap();
//! assert!(kept.len() < 3000);
//! let note = format!("truncated: {} tokens dropped, refine your query", truncation.dropped_tokens);
//! assert!(kept.last().unwrap().as_str().unwrap().ends_with(&note));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::fmt;

use crate::layout::Cut;
use crate::limit::ToolLimit;
use crate::tokenizer::Tokenizer;
use crate::truncation::Truncation;

mod compact;
mod items;
mod literal;
mod string;
pub(crate) mod walk;

pub use literal::decode_string;

use compact::compact;
use items::drop_items;
pub(crate) use literal::without_lone_surrogates;
use string::cut_string;
use walk::{is_string, largest};

/// A text and where it was cut, which a string of a structure may carry again: an MCP result's
/// text blocks, taken together, and its `structuredContent` `{"content": text}`. A string that
/// is this text is cut again from what the first cut kept, not from the whole text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CutText<'a> {
    /// The text that was cut.
    pub(crate) text: &'a str,
    /// Where it was cut.
    pub(crate) cut: &'a Cut,
}

/// A JSON value over its limit, capped: of the same shape when a cut of it fits, else as text.
///
/// The one rule for a structure that no cut fits: its compact JSON is cut as a text is, ending
/// with the note, so the limit holds whatever the shape. A caller whose slot takes only the
/// shape (a schema, an API that demands an object) branches on this, and none guesses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CappedJson {
    /// Compact JSON of the same shape: its longest string cut, or its largest lists shortened,
    /// and the note at the end of its last string.
    Json(String, Truncation),
    /// Its compact JSON cut as a text ([`cap`](crate::cap)), the note on the last line: not
    /// JSON. What comes back when no cut of a string or of lists makes the shape fit, such as an
    /// object of many short fields.
    Text(String, Truncation),
}

impl CappedJson {
    /// The capped text: JSON for [`Json`](Self::Json), a text for [`Text`](Self::Text).
    pub fn text(&self) -> &str {
        match self {
            CappedJson::Json(text, _) | CappedJson::Text(text, _) => text,
        }
    }

    /// The capped text, owned.
    pub fn into_text(self) -> String {
        match self {
            CappedJson::Json(text, _) | CappedJson::Text(text, _) => text,
        }
    }

    /// The figures of the cut.
    pub fn truncation(&self) -> Truncation {
        match self {
            CappedJson::Json(_, truncation) | CappedJson::Text(_, truncation) => *truncation,
        }
    }

    /// Whether the shape was kept: the text is JSON.
    pub fn is_json(&self) -> bool {
        matches!(self, CappedJson::Json(..))
    }
}

/// A text over its limit that is not JSON, given to [`cap_json`].
#[derive(Debug)]
pub struct NotJson {
    /// What is wrong with it.
    pub error: serde_json::Error,
    /// Its tokens, as a text.
    pub tokens: usize,
}

impl fmt::Display for NotJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let NotJson { error, tokens } = self;
        write!(
            f,
            "is over the limit ({tokens} tokens) and not JSON: {error}"
        )
    }
}

impl std::error::Error for NotJson {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// `json` capped to `limit`, and the figures of the cut; `None` when it is within the limit.
///
/// Its longest string is cut as [`cap`](crate::cap) cuts a text (its start kept, or its end
/// with [`Keep::Tail`](crate::Keep::Tail)) and ends with the note. When no one string can make
/// the whole fit, its largest lists keep their first items (their last with `Keep::Tail`), the
/// item next to those kept is cut in place to fill what they leave, and the note ends the
/// structure's last string. `Keep::HeadTail` keeps the head of a list. Both give
/// [`CappedJson::Json`].
///
/// An object's fields are never dropped: its keys are its schema, and a missing field reads as
/// an absent value. When neither cut fits (many short fields, or small objects nested with no
/// list), its compact JSON is cut as a text: [`CappedJson::Text`].
pub fn cap_json(
    json: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Result<Option<CappedJson>, NotJson> {
    cap_json_known(json, limit, tokenizer, None)
}

/// [`cap_json`], where `known`, a text a string of the structure may be, saves counting it
/// again.
pub(crate) fn cap_json_known(
    json: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    known: Option<CutText<'_>>,
) -> Result<Option<CappedJson>, NotJson> {
    if limit.holds_by_length(json) {
        return Ok(None);
    }
    let max_tokens = limit.max_tokens();
    let json = match compact(without_lone_surrogates(json)) {
        Ok(json) => json,
        Err(error) => {
            let tokens = tokenizer.count(json);
            if tokens <= max_tokens {
                return Ok(None);
            }
            return Err(NotJson { error, tokens });
        }
    };
    let longest = largest(&json, |value, _| {
        value.starts_with('"').then_some(value.len())
    });
    // The cut text again: a text of more than twice the limit is over it as JSON too, whose
    // escapes only add characters. Else the structure is counted.
    let known = known.filter(|known| {
        known.cut.truncation.keep == limit.keep()
            && longest
                .as_ref()
                .is_some_and(|string| is_string(&json[string.clone()], known.text))
    });
    let mut total = None;
    if known.is_none_or(|known| known.cut.truncation.original_tokens <= 2 * max_tokens) {
        let tokens = tokenizer.count(&json);
        if tokens <= max_tokens {
            return Ok(None);
        }
        total = Some(tokens);
    }
    let shape = longest
        .and_then(|string| cut_string(&json, string, limit, tokenizer, known))
        .or_else(|| {
            let tokens = total.unwrap_or_else(|| tokenizer.count(&json));
            drop_items(Cow::Borrowed(&json), tokens, limit, tokenizer)
        });
    if let Some((json, truncation)) = shape {
        return Ok(Some(CappedJson::Json(json, truncation)));
    }
    // Within the limit as compact JSON, it is not cut.
    Ok(crate::cut(&json, limit, tokenizer)
        .map(|cut| CappedJson::Text(cut.capped(&json), cut.truncation)))
}
