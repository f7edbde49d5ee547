//! A model API request capped: the body as the crate reads it, and what it cut.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyDict, PyString};
use tool_output_cap::wire::{Api, CappedRequest as Capped, RequestCap, ResultCut};
use tool_output_cap::Outcome;

use crate::capped::Truncation;
use crate::text::Text;

/// A request with its tool results capped: `body`, the capped body as UTF-8 `bytes` (`None`
/// when nothing needed a cut), and `cuts`, one for each result cut.
#[pyclass(frozen, module = "tool_output_cap")]
pub(crate) struct CappedRequest {
    #[pyo3(get)]
    body: Option<Py<PyBytes>>,
    #[pyo3(get)]
    cuts: Vec<Py<RequestCut>>,
}

/// One tool result cut: the `tool` whose call it answers (`None` when the call is not in the
/// request), whether it was an `error`, the `truncation`, whether it was `cached`: cut for an
/// earlier request and taken from the cuts kept, and whether it was `elided`: given way whole
/// to the request's budget (`max_tokens_per_request`), one line in its place.
#[pyclass(frozen, module = "tool_output_cap")]
pub(crate) struct RequestCut {
    #[pyo3(get)]
    tool: Option<String>,
    #[pyo3(get)]
    error: bool,
    #[pyo3(get)]
    truncation: Py<Truncation>,
    #[pyo3(get)]
    cached: bool,
    #[pyo3(get)]
    elided: bool,
}

#[pymethods]
impl CappedRequest {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let body = match &self.body {
            Some(body) => format!("<{} bytes>", body.bind(py).as_bytes().len()),
            None => "None".to_owned(),
        };
        Ok(format!(
            "CappedRequest(body={body}, cuts=<{} cuts>)",
            self.cuts.len()
        ))
    }
}

#[pymethods]
impl RequestCut {
    fn __repr__(&self) -> String {
        format!(
            "RequestCut(tool={:?}, error={}, truncation={}, cached={}, elided={})",
            self.tool,
            self.error,
            self.truncation.get().__repr__(),
            self.cached,
            self.elided
        )
    }
}

/// The per-minute input-token limit a provider reports, learned from its answers' headers
/// (the crate's `wire::RateLimit`): `learn(headers)` reads a mapping of header names to values,
/// the provider's own or LiteLLM's copies prefixed `llm_provider-`, and gives the limit they
/// report, if any; `limit` is the one learned so far, `None` before. Shared between threads.
#[pyclass(frozen, module = "tool_output_cap")]
#[derive(Default)]
pub(crate) struct RateLimit(tool_output_cap::wire::RateLimit);

#[pymethods]
impl RateLimit {
    #[new]
    fn new() -> Self {
        RateLimit::default()
    }

    /// Learns the limit `headers` (a mapping of `str` names to `str` values) report.
    fn learn(&self, headers: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        let mut pairs = Vec::new();
        for item in headers.call_method0("items")?.try_iter()? {
            let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            if let (Ok(name), Ok(value)) = (name.extract::<String>(), value.str()) {
                pairs.push((name, value.to_string()));
            }
        }
        Ok(self.0.learn(pairs).map(|learned| learned.limit))
    }

    #[getter]
    fn limit(&self) -> Option<usize> {
        self.0.get()
    }

    fn __repr__(&self) -> String {
        match self.0.get() {
            Some(limit) => format!("RateLimit(limit={limit})"),
            None => "RateLimit(limit=None)".to_owned(),
        }
    }
}

/// `body` (`bytes`, `str` or `dict`), a request to the API named `api`, capped by `cap` with
/// the GIL released; within the limit `rate_limit` learned, if given.
pub(crate) fn cap(
    py: Python<'_>,
    cap: &RequestCap,
    api: &str,
    body: &Bound<'_, PyAny>,
    rate_limit: Option<&RateLimit>,
) -> PyResult<CappedRequest> {
    let api: Api = api.parse().map_err(crate::errors::refused("api"))?;
    let text = read(py, body)?;
    let learned = rate_limit.map(|rate_limit| &rate_limit.0);
    let Capped { body, cuts, .. } = py
        .detach(|| match learned {
            Some(learned) => cap.cap_learned(api, &text, learned),
            None => cap.cap(api, &text),
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(CappedRequest {
        body: body.map(|body| PyBytes::new(py, body.as_bytes()).unbind()),
        cuts: cuts
            .into_iter()
            .map(|cut| Py::new(py, RequestCut::of(py, cut)?))
            .collect::<PyResult<_>>()?,
    })
}

impl CappedRequest {
    pub(crate) fn into_body(self) -> Option<Py<PyBytes>> {
        self.body
    }
}

impl RequestCut {
    fn of(py: Python<'_>, cut: ResultCut) -> PyResult<RequestCut> {
        Ok(RequestCut {
            tool: cut.tool,
            error: cut.outcome == Outcome::Error,
            truncation: Py::new(py, Truncation::from(cut.truncation))?,
            cached: cut.cached,
            elided: cut.elided,
        })
    }
}

/// The request's JSON text: `bytes` as UTF-8, a `str`, or a `dict` dumped in its own order,
/// as the host would have sent it.
fn read(py: Python<'_>, body: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(bytes) = body.cast::<PyBytes>() {
        return String::from_utf8(bytes.as_bytes().to_vec())
            .map_err(|e| PyValueError::new_err(format!("body is not UTF-8: {e}")));
    }
    if let Ok(text) = body.cast::<PyString>() {
        return Ok(Text::of(text).to_owned());
    }
    if !body.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err("body must be bytes, str or dict"));
    }
    dumped(py, body)
}

/// `value` as compact JSON, its dicts in their own order. A value holding lone surrogates,
/// which UTF-8 cannot hold, is dumped with its non-ASCII escaped, as JSON can hold them.
pub(crate) fn dumped(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let dumps = py.import("json")?.getattr("dumps")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("separators", (",", ":"))?;
    kwargs.set_item("ensure_ascii", false)?;
    let text = dumps.call((value,), Some(&kwargs))?;
    if let Ok(text) = text.extract::<PyBackedStr>() {
        return Ok(String::from(&*text));
    }
    kwargs.set_item("ensure_ascii", true)?;
    dumps.call((value,), Some(&kwargs))?.extract()
}

/// The API whose inference or token-count route `path` is, by the name `cap_request` takes;
/// `None` for any other route.
#[pyfunction]
pub(crate) fn api_for_path(path: &str) -> Option<&'static str> {
    Api::for_path(path).map(Api::name)
}
