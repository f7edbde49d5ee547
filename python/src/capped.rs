//! What a cap gives back: the text, and how it was cut.

use pyo3::prelude::*;
use pyo3::types::PyString;
use tool_output_cap::Cut;

use crate::text::Text;

/// A capped text: `text`, and `truncation`, `None` when the text came back unchanged.
#[pyclass(frozen, module = "tool_output_cap")]
pub(crate) struct Capped {
    #[pyo3(get)]
    text: Py<PyString>,
    #[pyo3(get)]
    truncation: Option<Py<Truncation>>,
}

impl Capped {
    /// `text` cut where `find` says, found and applied with the GIL released: the same `str`
    /// when there is no cut.
    pub(crate) fn of(
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        find: impl FnOnce(&str) -> Option<Cut> + Send,
    ) -> PyResult<Capped> {
        Capped::of_read(py, text, &Text::of(text), find)
    }

    /// [`of`](Self::of) for a `text` already read as `utf8`.
    pub(crate) fn of_read(
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        utf8: &str,
        find: impl FnOnce(&str) -> Option<Cut> + Send,
    ) -> PyResult<Capped> {
        let Some((capped, truncation)) = py.detach(|| {
            let cut = find(utf8)?;
            Some((cut.capped(utf8), cut.truncation))
        }) else {
            return Ok(Capped::unchanged(text));
        };
        Capped::new(py, &capped, Some(truncation))
    }

    /// `text` as it came: the same `str`.
    pub(crate) fn unchanged(text: &Bound<'_, PyString>) -> Capped {
        Capped {
            text: text.clone().unbind(),
            truncation: None,
        }
    }

    pub(crate) fn new(
        py: Python<'_>,
        text: &str,
        truncation: Option<tool_output_cap::Truncation>,
    ) -> PyResult<Capped> {
        Ok(Capped {
            text: PyString::new(py, text).unbind(),
            truncation: truncation
                .map(|truncation| Py::new(py, Truncation::from(truncation)))
                .transpose()?,
        })
    }
}

#[pymethods]
impl Capped {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Capped(text=<{} chars>, truncation={})",
            self.text.bind(py).len()?,
            repr(&self.truncation)
        ))
    }
}

/// A capped JSON text: `text` is JSON of the same shape when `is_json`, and else its compact
/// JSON capped as text, since no cut of the shape fits; `truncation` is `None` when it came back
/// unchanged.
#[pyclass(frozen, module = "tool_output_cap")]
pub(crate) struct CappedJson {
    #[pyo3(get)]
    text: Py<PyString>,
    #[pyo3(get)]
    truncation: Option<Py<Truncation>>,
    #[pyo3(get)]
    is_json: bool,
}

impl CappedJson {
    /// What the crate's `cap_json` gave for `json`: `None`, `json` itself.
    pub(crate) fn new(
        py: Python<'_>,
        json: &Bound<'_, PyString>,
        capped: Option<tool_output_cap::json::CappedJson>,
    ) -> PyResult<CappedJson> {
        let Some(capped) = capped else {
            return Ok(CappedJson {
                text: json.clone().unbind(),
                truncation: None,
                is_json: true,
            });
        };
        Ok(CappedJson {
            is_json: capped.is_json(),
            truncation: Some(Py::new(py, Truncation::from(capped.truncation()))?),
            text: PyString::new(py, capped.text()).unbind(),
        })
    }
}

#[pymethods]
impl CappedJson {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "CappedJson(text=<{} chars>, truncation={}, is_json={})",
            self.text.bind(py).len()?,
            repr(&self.truncation),
            if self.is_json { "True" } else { "False" }
        ))
    }
}

/// A truncation as Python writes it: `None` for none.
fn repr(truncation: &Option<Py<Truncation>>) -> String {
    truncation.as_ref().map_or_else(
        || "None".to_owned(),
        |truncation| truncation.get().__repr__(),
    )
}

/// How a text over its limit was cut: the crate's figures, `N` of the note being
/// `dropped_tokens`.
#[pyclass(frozen, eq, module = "tool_output_cap")]
#[derive(PartialEq, Eq)]
pub(crate) struct Truncation {
    #[pyo3(get)]
    original_tokens: usize,
    #[pyo3(get)]
    kept_tokens: usize,
    #[pyo3(get)]
    dropped_tokens: usize,
    #[pyo3(get)]
    max_tokens: usize,
    #[pyo3(get)]
    keep: &'static str,
}

impl From<tool_output_cap::Truncation> for Truncation {
    fn from(truncation: tool_output_cap::Truncation) -> Self {
        Truncation {
            original_tokens: truncation.original_tokens,
            kept_tokens: truncation.kept_tokens,
            dropped_tokens: truncation.dropped_tokens,
            max_tokens: truncation.max_tokens,
            keep: truncation.keep.name(),
        }
    }
}

#[pymethods]
impl Truncation {
    pub(crate) fn __repr__(&self) -> String {
        format!(
            "Truncation(original_tokens={}, kept_tokens={}, dropped_tokens={}, max_tokens={}, keep={:?})",
            self.original_tokens, self.kept_tokens, self.dropped_tokens, self.max_tokens, self.keep
        )
    }
}
