//! A Python `str` as the crate reads it.

use std::ops::Deref;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::PyString;

/// The UTF-8 of a `str`, and what holds it, so that it can be read with the GIL released. An
/// ASCII `str` is its own UTF-8, read in place; another's UTF-8 is made for the call alone, into
/// a `bytes` dropped with it, so that the `str` does not keep a copy of itself in UTF-8 for as long
/// as it lives (which reading it in place would have CPython make, and keep). A `str` with lone
/// surrogates, which UTF-8 cannot hold, is read with one U+FFFD in place of each, as the proxy
/// reads a `\ud800` escape in JSON (and a pair of them as the character they make, as JSON does).
pub(crate) enum Text {
    Ascii(PyBackedStr),
    Encoded(PyBackedBytes),
    Lossy(String),
}

impl Text {
    pub(crate) fn of(text: &Bound<'_, PyString>) -> Text {
        let ascii = text
            .call_method0(intern!(text.py(), "isascii"))
            .and_then(|ascii| ascii.is_truthy());
        if let Ok(true) = ascii {
            if let Ok(text) = text.extract::<PyBackedStr>() {
                return Text::Ascii(text);
            }
        }
        match text.encode_utf8() {
            Ok(utf8) => Text::Encoded(utf8.into()),
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
            Text::Ascii(text) => text,
            // SAFETY: `str.encode` made these bytes as UTF-8, refusing what UTF-8 cannot hold.
            Text::Encoded(utf8) => unsafe { std::str::from_utf8_unchecked(utf8) },
            Text::Lossy(text) => text,
        }
    }
}
