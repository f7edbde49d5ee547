//! A tool result as a framework holds it, a list of content blocks, capped: the crate's
//! `ToolOutputLimits::cap_blocks`, for the adapters to write their own blocks back.

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::capped::Truncation;

/// A list of content blocks capped: `blocks`, the blocks that go to the model (dicts, as MCP
/// writes them), `sources`, for each of them the place in the list given of the block it came
/// from (`None` for the note that media gave way), and `truncation`.
#[pyclass(frozen, module = "tool_output_cap")]
pub(crate) struct CappedBlocks {
    #[pyo3(get)]
    blocks: Py<PyList>,
    #[pyo3(get)]
    sources: Vec<Option<usize>>,
    #[pyo3(get)]
    truncation: Py<Truncation>,
}

impl CappedBlocks {
    /// What the crate gave back, as Python values.
    pub(crate) fn new(
        py: Python<'_>,
        capped: tool_output_cap::wire::CappedBlocks,
    ) -> PyResult<CappedBlocks> {
        let loads = py.import("json")?.getattr("loads")?;
        let blocks = capped
            .blocks
            .iter()
            .map(|block| loads.call1((block.json.as_str(),)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(CappedBlocks {
            blocks: PyList::new(py, blocks)?.unbind(),
            sources: capped.blocks.iter().map(|block| block.from).collect(),
            truncation: Py::new(py, Truncation::from(capped.truncation))?,
        })
    }
}

#[pymethods]
impl CappedBlocks {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "CappedBlocks(blocks=<{} blocks>, sources={:?}, truncation={})",
            self.blocks.bind(py).len(),
            self.sources,
            self.truncation.get().__repr__()
        )
    }
}
