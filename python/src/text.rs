//! A Python `str` as the crate reads it.

use std::ops::Deref;

use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::PyString;

/// The UTF-8 of a `str`, read in place (an ASCII `str` is its own UTF-8; another makes its UTF-8
/// once and keeps it), and the `str` held, so that it can be read with the GIL released.
/// A `str` with lone surrogates, which UTF-8 cannot hold, is read with one U+FFFD in place of
/// each, as the proxy reads a `\ud800` escape in JSON (and a pair of them as the character they
/// make, as JSON does).
pub(crate) enum Text {
    Backed(PyBackedStr),
    Lossy(String),
}

impl Text {
    pub(crate) fn of(text: &Bound<'_, PyString>) -> Text {
        match text.extract::<PyBackedStr>() {
            Ok(text) => Text::Backed(text),
            Err(_) => Text::Lossy(replacing_lone_surrogates(text)),
        }
    }
}

/// `text` with one U+FFFD for each lone surrogate, read from its UTF-16: PyO3's
/// `to_string_lossy` reads a surrogate's three bytes of "surrogatepass" UTF-8 as three U+FFFD.
fn replacing_lone_surrogates(text: &Bound<'_, PyString>) -> String {
    let utf16 = text
        .call_method1("encode", ("utf-16-le", "surrogatepass"))
        .and_then(|bytes| Ok(bytes.extract::<PyBackedBytes>()?));
    match utf16 {
        Ok(utf16) => char::decode_utf16(
            utf16
                .chunks_exact(2)
                .map(|unit| u16::from_le_bytes([unit[0], unit[1]])),
        )
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect(),
        // "surrogatepass" encodes every `str`; were it ever refused, read it as PyO3 does.
        Err(_) => text.to_string_lossy().into_owned(),
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
