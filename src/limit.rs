//! A tool's limit, valid by construction: at least [`ToolLimit::MIN_MAX_TOKENS`] tokens, and a
//! hint of one line.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::name::UnknownName;

/// Which part of an output over its limit is kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// The start: what a listing or a search returns first. The default.
    #[default]
    Head,
    /// The end: where a build or test log puts its errors.
    Tail,
    /// The start and the end, half the budget each (what the start leaves goes to the end), with
    /// the line [`CUT_MARKER`](crate::CUT_MARKER) where the middle was cut out.
    HeadTail,
}

impl Keep {
    /// The name used in the manifest: `head`, `tail` or `head_tail`.
    pub fn name(self) -> &'static str {
        match self {
            Keep::Head => "head",
            Keep::Tail => "tail",
            Keep::HeadTail => "head_tail",
        }
    }
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Keep {
    type Err = UnknownName;

    /// `head`, `tail` or `head_tail`, as [`Keep::name`] gives them.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let all = [Keep::Head, Keep::Tail, Keep::HeadTail];
        UnknownName::find(&all, Keep::name, r#""head", "tail" or "head_tail""#, name)
    }
}

/// The limit of one tool's outputs: the budget, what to keep, and a hint for the note.
///
/// Every `ToolLimit` leaves room for the note: its constructors refuse a budget under
/// [`MIN_MAX_TOKENS`](Self::MIN_MAX_TOKENS) and a hint that is not one line.
///
/// ```
/// use tool_output_cap::{Keep, LimitError, ToolLimit};
///
/// let limit = ToolLimit::new(3000)?.with_keep(Keep::Tail).with_hint("pass a narrower path")?;
/// assert_eq!((limit.max_tokens(), limit.keep()), (3000, Keep::Tail));
/// assert_eq!(ToolLimit::new(10), Err(LimitError::TooFewTokens { found: 10 }));
/// assert_eq!(limit.with_hint("two\nlines"), Err(LimitError::HintNotOneLine));
/// # Ok::<(), LimitError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimit {
    pub(crate) max_tokens: usize,
    pub(crate) keep: Keep,
    pub(crate) hint: Option<Arc<str>>,
}

impl ToolLimit {
    /// The smallest budget: room for the note and a little of the output.
    pub const MIN_MAX_TOKENS: usize = 32;

    /// At most `max_tokens` tokens, note included, keeping the head, with no hint; an error
    /// under [`MIN_MAX_TOKENS`](Self::MIN_MAX_TOKENS).
    pub fn new(max_tokens: usize) -> Result<Self, LimitError> {
        Ok(ToolLimit {
            max_tokens: Self::checked(max_tokens)?,
            keep: Keep::Head,
            hint: None,
        })
    }

    /// `max_tokens` as a budget, such as a whole number read from a file or another language,
    /// negative ones included; an error under [`MIN_MAX_TOKENS`](Self::MIN_MAX_TOKENS).
    pub fn budget(max_tokens: i64) -> Result<usize, LimitError> {
        match usize::try_from(max_tokens) {
            Ok(max_tokens) => Self::checked(max_tokens),
            Err(_) => Err(LimitError::TooFewTokens { found: max_tokens }),
        }
    }

    fn checked(max_tokens: usize) -> Result<usize, LimitError> {
        if max_tokens >= Self::MIN_MAX_TOKENS {
            Ok(max_tokens)
        } else {
            // Under 32, so it fits.
            Err(LimitError::TooFewTokens {
                found: max_tokens as i64,
            })
        }
    }

    /// Keeps `keep` of an output over the limit.
    #[must_use]
    pub fn with_keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// At most `max_tokens` tokens, note included; an error under
    /// [`MIN_MAX_TOKENS`](Self::MIN_MAX_TOKENS).
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Result<Self, LimitError> {
        self.max_tokens = Self::checked(max_tokens)?;
        Ok(self)
    }

    /// Ends the note with `: hint`; an error if `hint` holds a line break, since the note is
    /// the output's last line.
    pub fn with_hint(mut self, hint: impl Into<Arc<str>>) -> Result<Self, LimitError> {
        let hint = hint.into();
        if hint.contains(['\n', '\r']) {
            return Err(LimitError::HintNotOneLine);
        }
        self.hint = Some(hint);
        Ok(self)
    }

    /// The budget, note included.
    #[inline]
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Whether `text` is within the limit by its length alone, with no count
    /// ([`fits_by_length`]).
    #[inline]
    pub(crate) fn holds_by_length(&self, text: &str) -> bool {
        fits_by_length(text, self.max_tokens)
    }

    /// What is kept of an output over the limit.
    pub fn keep(&self) -> Keep {
        self.keep
    }

    /// The hint at the end of the note, if any.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
}

/// A limit refused by [`ToolLimit`]'s constructors. Its message says what is wrong, for the
/// caller to put after the name of the value: ``"`default_max_tokens` must be at least 32 …"``.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitError {
    /// A budget under [`ToolLimit::MIN_MAX_TOKENS`]: no room for the note.
    TooFewTokens {
        /// The budget given.
        found: i64,
    },
    /// A hint with a line break.
    HintNotOneLine,
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::TooFewTokens { found } => write!(
                f,
                "must be at least {} tokens (room for the note), found {found}",
                ToolLimit::MIN_MAX_TOKENS
            ),
            LimitError::HintNotOneLine => {
                f.write_str("must be one line: the note is the output's last line")
            }
        }
    }
}

impl std::error::Error for LimitError {}

/// What a tool's call gave: its output, or an error. The one rule that tells them apart when they
/// are cut is [`Outcome::limit`]: an error keeps its end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// What the tool returned.
    #[default]
    Output,
    /// The tool's error: an MCP result with `isError`, a [`ToolError`](crate::ToolError), a framework's failed
    /// tool message.
    Error,
}

impl Outcome {
    /// The limit a result of this outcome is cut to: `limit` for an output; for an error, `limit`
    /// keeping its end, where compilers and stack traces say what went wrong.
    ///
    /// ```
    /// use tool_output_cap::{Keep, Outcome, ToolLimit};
    ///
    /// let limit = ToolLimit::new(500)?;
    /// assert_eq!(Outcome::Output.limit(&limit).keep(), Keep::Head);
    /// assert_eq!(Outcome::Error.limit(&limit).keep(), Keep::Tail);
    /// # Ok::<(), tool_output_cap::LimitError>(())
    /// ```
    pub fn limit(self, limit: &ToolLimit) -> Cow<'_, ToolLimit> {
        match self {
            Outcome::Error if limit.keep() != Keep::Tail => {
                Cow::Owned(limit.clone().with_keep(Keep::Tail))
            }
            _ => Cow::Borrowed(limit),
        }
    }
}

/// Whether `text` is within `max_tokens` by its length alone, with no count: every token is at
/// least one byte.
#[inline]
pub(crate) fn fits_by_length(text: &str, max_tokens: usize) -> bool {
    text.len() <= max_tokens
}
