//! `tool_output_cap._native`: the crate's cap for Python, with the GIL released while it counts
//! and cuts. The package's `__init__.py` re-exports it; its stubs are `_native.pyi`.

use pyo3::prelude::*;
use pyo3::types::PyString;
use tool_output_cap::{Encoding, Keep, ToolLimit, ToolOutputLimits};

mod bench;
mod blocks;
mod capped;
mod command;
mod errors;
mod limits;
mod request;
mod text;

use capped::{Capped, Truncation};
use errors::{refused, ManifestError};
use limits::Limits;

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
    let max_tokens = ToolLimit::budget(max_tokens).map_err(refused("max_tokens"))?;
    let mut limit = ToolLimit::new(max_tokens)
        .map_err(refused("max_tokens"))?
        .with_keep(parse::<Keep>("keep", keep)?);
    if let Some(hint) = hint {
        limit = limit.with_hint(hint).map_err(refused("hint"))?;
    }
    let limits = ToolOutputLimits::default()
        .with_encoding(parse::<Encoding>("encoding", encoding)?)
        .with_default_limit(limit);
    let limit = limits.default_limit();
    Capped::of(py, text, |text| {
        tool_output_cap::cut(text, limit, limits.tokenizer())
    })
}

/// `value` of the argument `name` as a keep or an encoding, or a `ValueError` naming both.
fn parse<T>(name: &'static str, value: &str) -> PyResult<T>
where
    T: std::str::FromStr<Err = tool_output_cap::UnknownName>,
{
    value.parse().map_err(refused(name))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(count, m)?)?;
    m.add_function(wrap_pyfunction!(cap, m)?)?;
    m.add_function(wrap_pyfunction!(command::command, m)?)?;
    m.add_function(wrap_pyfunction!(command::manifest_path, m)?)?;
    m.add(
        "_crate_cap_seconds",
        wrap_pyfunction!(bench::crate_cap_seconds, m)?,
    )?;
    m.add_class::<Capped>()?;
    m.add_class::<capped::CappedJson>()?;
    m.add_class::<blocks::CappedBlocks>()?;
    m.add_class::<Truncation>()?;
    m.add_class::<Limits>()?;
    m.add_class::<request::CappedRequest>()?;
    m.add_class::<request::RequestCut>()?;
    m.add_class::<request::RateLimit>()?;
    m.add_function(wrap_pyfunction!(request::api_for_path, m)?)?;
    m.add("ManifestError", m.py().get_type::<ManifestError>())?;
    Ok(())
}
