//! The JSON cap: a structured result over its limit cut to fit while it stays valid JSON of the
//! same shape, for the model and for a schema that checks it.
//!
//! The work is done on the value's compact JSON, the form a host writes it in for the model
//! (`JSON.stringify`), and is text surgery on it: the one string cut, or the items dropped, are
//! spliced out and every other byte stays. No tree of the structure is built, so capping a large
//! value holds little more than its text.
//!
//! ```
//! use tool_output_cap::{json, Encoding, ToolLimit};
//!
//! let files: Vec<String> = (0..3000).map(|i| format!("src/module_{i}/mod.rs")).collect();
//! let listing = serde_json::json!({"count": 3000, "files": files}).to_string();
//! let tokenizer = Encoding::O200kBase.tokenizer();
//! let (capped, truncation) = json::cap_json(&listing, &ToolLimit::new(500)?, tokenizer, None)?
//!     .expect("over 500 tokens");
//! assert!(tokenizer.count(&capped) <= 500);
//! let capped: serde_json::Value = serde_json::from_str(&capped)?;
//! assert_eq!(capped["count"], 3000);
//! let kept = capped["files"].as_array().unwrap();
//! assert!(kept.len() < 3000);
//! let note = format!("truncated: {} tokens dropped, refine your query", truncation.dropped_tokens);
//! assert!(kept.last().unwrap().as_str().unwrap().ends_with(&note));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use crate::layout::Cut;
use crate::limit::ToolLimit;
use crate::limits::ToolOutputLimits;
use crate::tokenizer::Tokenizer;
use crate::tool::{Outcome, Truncation};

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
pub struct CutText<'a> {
    /// The text that was cut.
    pub text: &'a str,
    /// Where it was cut.
    pub cut: &'a Cut,
}

/// Why a JSON value over its limit was not cut.
#[derive(Debug)]
#[non_exhaustive]
pub enum JsonCapError {
    /// It is over the limit and cannot be read as JSON.
    NotJson {
        /// What is wrong with it.
        error: serde_json::Error,
        /// Its tokens, as a text.
        tokens: usize,
    },
    /// Neither a cut of one string nor items dropped from its lists make it fit: a structure of
    /// many short fields and no list, or one nested deeper than serde_json reads.
    NoCutFits {
        /// Its tokens.
        tokens: usize,
    },
}

impl JsonCapError {
    /// The tokens of the value that was not cut.
    pub fn tokens(&self) -> usize {
        match self {
            JsonCapError::NotJson { tokens, .. } | JsonCapError::NoCutFits { tokens } => *tokens,
        }
    }
}

impl fmt::Display for JsonCapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonCapError::NotJson { error, tokens } => {
                write!(
                    f,
                    "is over the limit ({tokens} tokens) and not JSON: {error}"
                )
            }
            JsonCapError::NoCutFits { tokens } => write!(
                f,
                "is over the limit ({tokens} tokens), and neither a string nor its lists can be \
                 cut to fit"
            ),
        }
    }
}

impl std::error::Error for JsonCapError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JsonCapError::NotJson { error, .. } => Some(error),
            JsonCapError::NoCutFits { .. } => None,
        }
    }
}

/// `json` cut to `limit` as compact JSON of the same shape, and the figures of the cut; `None`
/// when it is within the limit.
///
/// Its longest string is cut as [`cap`](crate::cap) cuts a text (its start kept, or its end
/// with [`Keep::Tail`](crate::Keep::Tail)) and ends with the note. When no one string can make
/// the whole fit, its largest lists keep their first items (their last with `Keep::Tail`), the
/// item next to those kept is cut in place to fill what they leave, and the note ends the
/// structure's last string. `known`, a text a string of the structure may be, saves counting it
/// again. `Keep::HeadTail` keeps the head of a list.
pub fn cap_json(
    json: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    known: Option<CutText<'_>>,
) -> Result<Option<(String, Truncation)>, JsonCapError> {
    let max_tokens = limit.max_tokens();
    if json.len() <= max_tokens {
        return Ok(None);
    }
    let json = match compact(without_lone_surrogates(json)) {
        Ok(json) => json,
        Err(error) => {
            let tokens = tokenizer.count(json);
            if tokens <= max_tokens {
                return Ok(None);
            }
            return Err(JsonCapError::NotJson { error, tokens });
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
    if let Some(capped) =
        longest.and_then(|string| cut_string(&json, string, limit, tokenizer, known))
    {
        return Ok(Some(capped));
    }
    let tokens = total.unwrap_or_else(|| tokenizer.count(&json));
    match drop_items(json, tokens, limit, tokenizer) {
        Some(capped) => Ok(Some(capped)),
        None => Err(JsonCapError::NoCutFits { tokens }),
    }
}

impl ToolOutputLimits {
    /// Caps `json`, a structured result of `tool` that was its `outcome`, to the tool's limit as
    /// [`cap_json`] does, and emits the truncation event ([`Truncation::record`]): the capped
    /// compact JSON and its figures, or `None` when it fits.
    ///
    /// ```
    /// use tool_output_cap::{Outcome, ToolOutputLimits};
    ///
    /// let limits = ToolOutputLimits::default().with_tool("Search", 300)?;
    /// let hits: Vec<_> = (0..2000).map(|i| serde_json::json!({"path": format!("src/{i}.rs"), "line": i})).collect();
    /// let result = serde_json::json!({"hits": hits}).to_string();
    /// let (capped, truncation) = limits.cap_json("Search", &result, Outcome::Output)?.unwrap();
    /// let capped: serde_json::Value = serde_json::from_str(&capped)?;
    /// assert!(capped["hits"].as_array().unwrap().len() < 2000);
    /// assert_eq!(truncation.max_tokens, 300);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cap_json(
        &self,
        tool: &str,
        json: &str,
        outcome: Outcome,
    ) -> Result<Option<(String, Truncation)>, JsonCapError> {
        let limit = outcome.limit(self.limit_for(tool));
        let capped = cap_json(json, &limit, self.tokenizer(), None)?;
        if let Some((_, truncation)) = &capped {
            truncation.record(tool, outcome);
        }
        Ok(capped)
    }
}
