//! A Python `str` as the crate reads it.

use std::ops::Deref;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;

/// The UTF-8 of a `str`, copied out of it once, so that it can be read with the GIL released.
/// A `str` with lone surrogates, which UTF-8 cannot hold, is read with U+FFFD in their place,
/// as the proxy reads a `\ud800` escape.
pub(crate) enum Text {
    Backed(PyBackedStr),
    Lossy(String),
}

impl Text {
    pub(crate) fn of(text: &Bound<'_, PyString>) -> Text {
        match text.extract::<PyBackedStr>() {
            Ok(text) => Text::Backed(text),
            Err(_) => Text::Lossy(text.to_string_lossy().into_owned()),
        }
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Backed(text) => text,
            Text::Lossy(text) => text,
        }
    }
}
