//! A Python `str` as the crate reads it.

use std::ops::Deref;
use std::sync::OnceLock;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyString};

/// The UTF-8 of a `str`, and what holds it, so that it can be read with the GIL released. An
/// ASCII `str` is its own UTF-8, read in place; another's UTF-8 is made for the call alone, and
/// dropped with it, so that the `str` does not keep a copy of itself in UTF-8 for as long as it
/// lives (which reading it in place would have CPython make, and keep): from its Latin-1 where
/// CPython holds it one byte a character ([`widened_latin1`]), else by `str.encode`. A `str` with
/// lone surrogates, which UTF-8 cannot hold, is read with one U+FFFD in place of each, as the
/// proxy reads a `\ud800` escape in JSON (and a pair of them as the character they make, as JSON
/// does).
pub(crate) enum Text {
    Ascii(PyBackedStr),
    Widened(String),
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
        if let Some(utf8) = widened_latin1(text) {
            return Text::Widened(utf8);
        }
        match text.encode_utf8() {
            Ok(utf8) => Text::Encoded(utf8.into()),
            Err(_) => Text::Lossy(replacing_lone_surrogates(text)),
        }
    }
}

/// The UTF-8 of `text`, not ASCII, where CPython holds it one byte a character (each below
/// U+0100) with no UTF-8 of its own: its Latin-1 is then a copy of those bytes, which
/// `encoding_rs` widens to UTF-8 a word of ASCII at a time, where `str.encode()` reads it a
/// character at a time (`python/README.md`'s figures). `None` for any other `str`, and for a
/// subclass of `str`, whose methods may be its own.
fn widened_latin1(text: &Bound<'_, PyString>) -> Option<String> {
    if !text.is_exact_instance_of::<PyString>() || !one_byte_a_character(text) {
        return None;
    }
    let py = text.py();
    let latin1 = text
        .call_method1(intern!(py, "encode"), (intern!(py, "latin-1"),))
        .ok()?;
    let latin1 = latin1.cast::<PyBytes>().ok()?;
    Some(encoding_rs::mem::decode_latin1(latin1.as_bytes()).into_owned())
}

/// Whether CPython holds `text` one byte a character, with no UTF-8 of its own kept: its
/// `__sizeof__` is then a header's and one byte a character and one more, the header being what
/// a `str` of two such characters made here shows. Any other size (two or four bytes a
/// character, a UTF-8 kept with it) says no; and a wrong answer costs time, never the count, for
/// `encode("latin-1")` refuses a character over U+00FF.
fn one_byte_a_character(text: &Bound<'_, PyString>) -> bool {
    static HEADER: OnceLock<Option<usize>> = OnceLock::new();
    let size_of = |text: &Bound<'_, PyString>| {
        let size = text.call_method0(intern!(text.py(), "__sizeof__")).ok()?;
        size.extract::<usize>().ok()
    };
    let header = HEADER.get_or_init(|| {
        let two = PyString::new(text.py(), "\u{e9}\u{e9}");
        size_of(&two)?.checked_sub(3)
    });
    match (header, text.len()) {
        (Some(header), Ok(len)) => size_of(text) == Some(header + len + 1),
        _ => false,
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
            Text::Widened(text) | Text::Lossy(text) => text,
        }
    }
}
