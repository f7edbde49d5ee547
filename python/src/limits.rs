//! `Limits`: the limits of `[worker.tool_output]`, from a manifest or from arguments.

use std::path::PathBuf;
use std::sync::OnceLock;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use tool_output_cap::json::NotJson;
use tool_output_cap::wire::RequestCap;
use tool_output_cap::{Manifest, Outcome, ToolOutputLimits};

use crate::blocks::CappedBlocks;
use crate::capped::{Capped, CappedJson, Truncation};
use crate::errors::{manifest_error, refused};
use crate::request::{self, CappedRequest, RateLimit};
use crate::text::Text;

/// What `cap_texts` keeps of each part: `None` for a part wholly cut out.
type KeptTexts = Vec<Option<Py<PyString>>>;

/// The limit of every tool, of each tool by name, and the tokenizer they count with; and, once a
/// request was capped with them, the crate's `RequestCap`, which keeps the cuts it made.
#[pyclass(frozen, module = "tool_output_cap")]
pub(crate) struct Limits(ToolOutputLimits, OnceLock<RequestCap>);

impl From<ToolOutputLimits> for Limits {
    fn from(limits: ToolOutputLimits) -> Self {
        Limits(limits, OnceLock::new())
    }
}

impl Limits {
    fn request_cap(&self) -> &RequestCap {
        self.1.get_or_init(|| RequestCap::new(self.0.clone()))
    }
}

#[pymethods]
impl Limits {
    #[new]
    #[pyo3(signature = (default_max_tokens = None, default_keep = None, per_tool = None, encoding = None, tokenizer_file = None, max_tokens_per_turn = None, max_tokens_per_request = None, rate_limit_share = None, image_tokens = None))]
    // One keyword argument a key of the section, as Python callers name them.
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        default_max_tokens: Option<&Bound<'_, PyAny>>,
        default_keep: Option<&Bound<'_, PyAny>>,
        per_tool: Option<&Bound<'_, PyAny>>,
        encoding: Option<&Bound<'_, PyAny>>,
        tokenizer_file: Option<PathBuf>,
        max_tokens_per_turn: Option<&Bound<'_, PyAny>>,
        max_tokens_per_request: Option<&Bound<'_, PyAny>>,
        rate_limit_share: Option<&Bound<'_, PyAny>>,
        image_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Limits> {
        // The arguments are the manifest's section, which the crate reads as it reads the file.
        let section = PyDict::new(py);
        let given = [
            ("default_max_tokens", default_max_tokens),
            ("default_keep", default_keep),
            ("per_tool", per_tool),
            ("encoding", encoding),
            ("max_tokens_per_turn", max_tokens_per_turn),
            ("max_tokens_per_request", max_tokens_per_request),
            ("rate_limit_share", rate_limit_share),
            ("image_tokens", image_tokens),
        ];
        for (key, value) in given {
            if let Some(value) = value {
                section.set_item(key, value)?;
            }
        }
        if let Some(path) = tokenizer_file {
            let path = path
                .to_str()
                .ok_or_else(|| manifest_error(format!("tokenizer_file {path:?} is not UTF-8")))?;
            section.set_item("tokenizer_file", path)?;
        }
        let mut section = pythonize::Depythonizer::from_object(section.as_any());
        ToolOutputLimits::from_section(&mut section)
            .map(Limits::from)
            .map_err(|e| match e.key() {
                Some(key) => manifest_error(format!("{key} {}", e.message())),
                None => manifest_error(e),
            })
    }

    /// The limits of the manifest at `path`'s `[worker.tool_output]`, or the defaults without one.
    #[staticmethod]
    fn from_manifest(path: PathBuf) -> PyResult<Limits> {
        let manifest = Manifest::from_path(path).map_err(manifest_error)?;
        Ok(Limits::from(manifest.worker.limits()))
    }

    /// `text`, an output of `tool_name` (its error if `error`, which keeps the tail), capped to
    /// the tool's limit.
    #[pyo3(signature = (tool_name, text, error = false))]
    fn cap(
        &self,
        py: Python<'_>,
        tool_name: &str,
        text: &Bound<'_, PyString>,
        error: bool,
    ) -> PyResult<Capped> {
        Capped::of(py, text, |text| self.0.cut(tool_name, text, outcome(error)))
    }

    /// The results of one model turn, each `(tool_name, text, error)`, each capped to its
    /// tool's limit and, with the manifest's `max_tokens_per_turn`, together within it (as the
    /// crate's `ToolOutputLimits::limits_for_turn` shares it), in their order.
    fn cap_turn(
        &self,
        py: Python<'_>,
        results: Vec<(String, Bound<'_, PyString>, bool)>,
    ) -> PyResult<Vec<Capped>> {
        let utf8: Vec<Text> = results.iter().map(|(_, text, _)| Text::of(text)).collect();
        let named: Vec<(&str, &str)> = results
            .iter()
            .zip(&utf8)
            .map(|((tool, _, _), text)| (tool.as_str(), &**text))
            .collect();
        let turn = py.detach(|| self.0.limits_for_turn(&named));
        let tokenizer = self.0.tokenizer();
        results
            .iter()
            .zip(&utf8)
            .zip(turn)
            .map(|(((_, text, error), utf8), limit)| {
                Capped::of_read(py, text, utf8, |text| {
                    tool_output_cap::cut(text, &outcome(*error).limit(&limit), tokenizer)
                })
            })
            .collect()
    }

    /// `json`, the JSON text of a structured result of `tool_name` (its error if `error`),
    /// capped to the tool's limit by the crate's `ToolOutputLimits::cap_json`: compact JSON of
    /// the same shape (its longest string cut and ending with the note, or its largest lists
    /// shortened), and `is_json`; or, when no cut of the shape fits, its JSON capped as text,
    /// and `is_json` false. `json` that is not JSON is a `ValueError`.
    #[pyo3(signature = (tool_name, json, error = false))]
    fn cap_json(
        &self,
        py: Python<'_>,
        tool_name: &str,
        json: &Bound<'_, PyString>,
        error: bool,
    ) -> PyResult<CappedJson> {
        let utf8 = Text::of(json);
        let capped = py.detach(|| {
            let capped = self.0.cap_json(tool_name, &utf8, outcome(error))?;
            // Within the limit, it may not have been read: read it to say whether it is JSON.
            if capped.is_none() {
                serde_json::from_str::<serde::de::IgnoredAny>(&utf8)
                    .map_err(|error| NotJson { error, tokens: 0 })?;
            }
            Ok::<_, NotJson>(capped)
        });
        let capped = capped.map_err(|e| refused("json")(format!("is not JSON: {}", e.error)))?;
        CappedJson::new(py, json, capped)
    }

    /// `texts`, the parts of one output of `tool_name`, capped as one text joined by newlines:
    /// the kept text of each part (`None` for a part wholly cut out) and the truncation, or
    /// the texts unchanged and `None`.
    #[pyo3(signature = (tool_name, texts, error = false))]
    fn cap_texts(
        &self,
        py: Python<'_>,
        tool_name: &str,
        texts: Vec<Bound<'_, PyString>>,
        error: bool,
    ) -> PyResult<(KeptTexts, Option<Truncation>)> {
        let utf8 = texts.iter().map(Text::of).collect::<Vec<_>>();
        let capped = py.detach(|| {
            let parts: Vec<&str> = utf8.iter().map(|text| &**text).collect();
            self.0.cap_texts(tool_name, &parts, outcome(error))
        });
        Ok(match capped {
            None => (
                texts.into_iter().map(|text| Some(text.unbind())).collect(),
                None,
            ),
            Some((kept, truncation)) => (
                kept.iter()
                    .map(|text| text.as_deref().map(|text| PyString::new(py, text).unbind()))
                    .collect(),
                Some(Truncation::from(truncation)),
            ),
        })
    }

    /// `blocks`, the content blocks of one result of `tool_name` (its error if `error`) as
    /// dicts in MCP's shapes (`text`, `image`, `audio`, `resource`), capped by the crate's
    /// `ToolOutputLimits::cap_blocks`: their text as one text, their images priced by
    /// `image_tokens` and scaled down or given way to fit; `None` when they fit. Blocks that
    /// are not JSON are `json.dumps`'s `TypeError`, and a value that is not a list a
    /// `ValueError`.
    #[pyo3(signature = (tool_name, blocks, error = false))]
    fn cap_blocks(
        &self,
        py: Python<'_>,
        tool_name: &str,
        blocks: &Bound<'_, PyAny>,
        error: bool,
    ) -> PyResult<Option<CappedBlocks>> {
        let json = request::dumped(py, blocks)?;
        let capped = py.detach(|| self.0.cap_blocks(tool_name, &json, outcome(error)));
        let capped = capped.map_err(|e| PyValueError::new_err(e.to_string()))?;
        capped
            .map(|capped| CappedBlocks::new(py, capped))
            .transpose()
    }

    /// `body`, a request to the model API `api` (`"anthropic"`, `"openai-chat"`,
    /// `"openai-responses"` or `"gemini"`) as `bytes`, `str` or `dict`, with each tool result
    /// cut to the limit of the tool whose call it answers (the crate's `wire::RequestCap`):
    /// the capped body as UTF-8 `bytes`, or `None` when nothing needed a cut. Cuts are kept
    /// between calls, so a history sent again is not counted again. With `rate_limit`, a
    /// `RateLimit` that has learned the provider's per-minute limit, and `rate_limit_share`,
    /// the tool results together stay within that share of it. A body that is not a JSON
    /// object is a `ValueError`.
    #[pyo3(signature = (api, body, rate_limit = None))]
    fn cap_request(
        &self,
        py: Python<'_>,
        api: &str,
        body: &Bound<'_, PyAny>,
        rate_limit: Option<&RateLimit>,
    ) -> PyResult<Option<Py<PyBytes>>> {
        Ok(request::cap(py, self.request_cap(), api, body, rate_limit)?.into_body())
    }

    /// [`cap_request`](Self::cap_request), with the figures of each result it cut.
    #[pyo3(signature = (api, body, rate_limit = None))]
    fn cap_request_with_cuts(
        &self,
        py: Python<'_>,
        api: &str,
        body: &Bound<'_, PyAny>,
        rate_limit: Option<&RateLimit>,
    ) -> PyResult<CappedRequest> {
        request::cap(py, self.request_cap(), api, body, rate_limit)
    }

    /// The `per_tool` names that are none of `tools`, in order: limits that never apply (names
    /// are case-sensitive).
    fn unmatched_tools(&self, tools: Vec<String>) -> Vec<String> {
        let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
        self.0
            .unmatched_tools(&tools)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// The tokens of `text` with these limits' tokenizer.
    fn count(&self, py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<usize> {
        let text = Text::of(text);
        Ok(py.detach(|| self.0.tokenizer().count(&text)))
    }

    /// The token limit of `tool_name`'s outputs, note included.
    fn max_tokens_for(&self, tool_name: &str) -> usize {
        self.0.max_tokens_for(tool_name)
    }

    fn __repr__(&self) -> String {
        let limit = self.0.default_limit();
        let tools = self.0.per_tool().count();
        let vocabulary = match self.0.tokenizer_file() {
            Some(path) => format!("tokenizer_file={:?}", path.display().to_string()),
            None => format!("encoding={:?}", self.0.encoding().name()),
        };
        format!(
            "Limits(default_max_tokens={}, default_keep={:?}, per_tool=<{tools} tools>, {vocabulary})",
            limit.max_tokens(),
            limit.keep().name()
        )
    }
}

/// The outcome a Python caller names with `error`.
fn outcome(error: bool) -> Outcome {
    if error {
        Outcome::Error
    } else {
        Outcome::Output
    }
}
