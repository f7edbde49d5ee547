//! The `tool-output-cap` command, run in this process: the package's script calls it.

use std::ffi::OsString;

use pyo3::prelude::*;

/// Runs the command line `argv`, the program's name first, and gives its exit code, with the
/// GIL released until it is done.
#[pyfunction]
pub(crate) fn command(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    py.detach(|| tool_output_cap_cli::run(argv))
}
