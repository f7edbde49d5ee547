//! Keeps, encodings and model APIs by their names, for a caller that takes them as text: a
//! binding, a flag, a config file of its own.

use std::fmt;
use std::str::FromStr;

use crate::limit::Keep;
use crate::request::Api;
use crate::tokenizer::Encoding;

/// A name that is not one of a [`Keep`]'s, an [`Encoding`]'s or an [`Api`]'s.
///
/// ```
/// use tool_output_cap::{Encoding, Keep};
///
/// assert_eq!("head_tail".parse::<Keep>(), Ok(Keep::HeadTail));
/// let error = "middle".parse::<Keep>().unwrap_err();
/// assert_eq!(error.to_string(), r#"must be "head", "tail" or "head_tail", found "middle""#);
/// assert_eq!("cl100k_base".parse::<Encoding>(), Ok(Encoding::Cl100kBase));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    expected: &'static str,
    found: String,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "must be {}, found {:?}", self.expected, self.found)
    }
}

impl std::error::Error for UnknownName {}

impl FromStr for Keep {
    type Err = UnknownName;

    /// `head`, `tail` or `head_tail`, as [`Keep::name`] gives them.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        [Keep::Head, Keep::Tail, Keep::HeadTail]
            .into_iter()
            .find(|keep| keep.name() == name)
            .ok_or_else(|| UnknownName {
                expected: r#""head", "tail" or "head_tail""#,
                found: name.to_owned(),
            })
    }
}

impl FromStr for Encoding {
    type Err = UnknownName;

    /// `o200k_base` or `cl100k_base`, as [`Encoding::name`] gives them.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        [Encoding::O200kBase, Encoding::Cl100kBase]
            .into_iter()
            .find(|encoding| encoding.name() == name)
            .ok_or_else(|| UnknownName {
                expected: r#""o200k_base" or "cl100k_base""#,
                found: name.to_owned(),
            })
    }
}

impl FromStr for Api {
    type Err = UnknownName;

    /// `anthropic`, `openai-chat`, `openai-responses` or `gemini`, as [`Api::name`] gives them.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Api::ALL
            .into_iter()
            .find(|api| api.name() == name)
            .ok_or_else(|| UnknownName {
                expected: r#""anthropic", "openai-chat", "openai-responses" or "gemini""#,
                found: name.to_owned(),
            })
    }
}
