//! The package's errors, made in one place: a `ValueError` that names the argument, and a
//! `ManifestError` that names the file, line, column and key.

use std::fmt::Display;

use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

pyo3::create_exception!(
    tool_output_cap,
    ManifestError,
    PyValueError,
    "A manifest, or a `Limits` argument, that the crate refuses: its message names the file, \
     line, column and key, and says what is wrong."
);

/// A `ValueError` for the argument `name`, whose value the crate refused with `error`:
/// `max_tokens must be at least 32 ...`.
pub(crate) fn refused<E: Display>(name: &'static str) -> impl Fn(E) -> PyErr {
    move |error| PyValueError::new_err(format!("{name} {error}"))
}

/// A `ManifestError` saying `error`.
pub(crate) fn manifest_error(error: impl Display) -> PyErr {
    ManifestError::new_err(error.to_string())
}
