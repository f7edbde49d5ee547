//! The error of reading keeps, encodings and model APIs by their names, for a caller that takes them as text: a
//! binding, a flag, a config file of its own.

use std::fmt;

/// A name that is not one of a [`Keep`](crate::Keep)'s, an [`Encoding`](crate::Encoding)'s or an
/// [`Api`](crate::wire::Api)'s.
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

impl UnknownName {
    /// The one of `all` whose name is `name`, or an error saying what was `expected`.
    pub(crate) fn find<T: Copy>(
        all: &[T],
        name_of: fn(T) -> &'static str,
        expected: &'static str,
        name: &str,
    ) -> Result<T, UnknownName> {
        all.iter()
            .copied()
            .find(|value| name_of(*value) == name)
            .ok_or_else(|| UnknownName {
                expected,
                found: name.to_owned(),
            })
    }
}
