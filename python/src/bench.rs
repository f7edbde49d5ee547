//! The crate's own cap, timed in Rust, for `bench/perf.py` to set the binding's cost against.

use std::time::Instant;

use pyo3::prelude::*;
use tool_output_cap::{cut, Encoding, ToolLimit};

/// The seconds `runs` caps of `text` to `max_tokens` take in the crate alone, the text already
/// in Rust and the capped text left there: what `cap` does less its crossings.
#[pyfunction]
pub(crate) fn crate_cap_seconds(
    py: Python<'_>,
    text: String,
    max_tokens: usize,
    runs: usize,
) -> PyResult<f64> {
    let limit = ToolLimit::new(max_tokens).map_err(crate::errors::refused("max_tokens"))?;
    let tokenizer = Encoding::O200kBase.tokenizer();
    Ok(py.detach(|| {
        let started = Instant::now();
        for _ in 0..runs {
            let capped = cut(&text, &limit, tokenizer).map(|cut| cut.capped(&text));
            std::hint::black_box(capped);
        }
        started.elapsed().as_secs_f64()
    }))
}
