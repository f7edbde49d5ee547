//! `tool_output_cap._native`: the crate's cap for Python, with the GIL released while it counts
//! and cuts. The package's `__init__.py` re-exports it; its stubs are `_native.pyi`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use tool_output_cap::{Encoding, Keep, ToolLimit, ToolOutputLimits};

mod bench;
mod capped;
mod command;
mod limits;
mod text;

use capped::{Capped, Truncation};
use limits::{Limits, ManifestError};

/// The tokens of `text` in `encoding`, read as ordinary text (special-token text is text).
#[pyfunction]
#[pyo3(signature = (text, encoding = "o200k_base"))]
fn count(py: Python<'_>, text: &Bound<'_, PyString>, encoding: &str) -> PyResult<usize> {
    let tokenizer = parse::<Encoding>("encoding", encoding)?.tokenizer();
    let text = text::Text::of(text);
    Ok(py.detach(|| tokenizer.count(&text)))
}

/// `text` within `max_tokens` tokens, note included, keeping `keep` of it.
#[pyfunction]
#[pyo3(signature = (text, max_tokens = 5000, keep = "head", hint = None, encoding = "o200k_base"))]
fn cap(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    max_tokens: i64,
    keep: &str,
    hint: Option<&str>,
    encoding: &str,
) -> PyResult<Capped> {
    let mut limit =
        ToolLimit::new(usize::try_from(max_tokens).unwrap_or(0))
            .with_keep(parse::<Keep>("keep", keep)?);
    if let Some(hint) = hint {
        limit = limit.with_hint(hint);
    }
    let limits = ToolOutputLimits::default()
        .with_encoding(parse::<Encoding>("encoding", encoding)?)
        .with_default_limit(limit)
        .map_err(|e| match e.key() {
            Some(_) => PyValueError::new_err(format!("max_tokens {}", too_small(max_tokens))),
            None => PyValueError::new_err(e.message().to_owned()),
        })?;
    let limit = limits.default_limit();
    Capped::of(py, text, |text| {
        tool_output_cap::cut(text, limit, limits.tokenizer())
    })
}

/// What the crate says of a `max_tokens` under its least, negative ones included.
fn too_small(max_tokens: i64) -> String {
    format!(
        "must be at least {} tokens (room for the note), found {max_tokens}",
        ToolOutputLimits::MIN_MAX_TOKENS
    )
}

/// `value` of the argument `name` as a keep or an encoding, or a `ValueError` naming both.
fn parse<T>(name: &str, value: &str) -> PyResult<T>
where
    T: std::str::FromStr<Err = tool_output_cap::UnknownName>,
{
    value
        .parse()
        .map_err(|e| PyValueError::new_err(format!("{name} {e}")))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(count, m)?)?;
    m.add_function(wrap_pyfunction!(cap, m)?)?;
    m.add_function(wrap_pyfunction!(command::command, m)?)?;
    m.add(
        "_crate_cap_seconds",
        wrap_pyfunction!(bench::crate_cap_seconds, m)?,
    )?;
    m.add_class::<Capped>()?;
    m.add_class::<Truncation>()?;
    m.add_class::<Limits>()?;
    m.add("ManifestError", m.py().get_type::<ManifestError>())?;
    Ok(())
}
