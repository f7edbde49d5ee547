//! The `tool-output-cap` command, run in this process (the package's script calls it), and the
//! manifest it reads.

use std::ffi::OsString;
use std::path::PathBuf;

use pyo3::prelude::*;

/// Runs the command line `argv`, the program's name first, and gives its exit code, with the
/// GIL released until it is done.
#[pyfunction]
pub(crate) fn command(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    py.detach(|| tool_output_cap_cli::run(argv))
}

/// The manifest the `tool-output-cap` command reads without `--manifest`: the file
/// `$TOOL_OUTPUT_CAP_MANIFEST` names, else `tool-output-cap/manifest.toml` in the user's config
/// folder if it exists; `None` for the built-in defaults.
#[pyfunction]
pub(crate) fn manifest_path() -> Option<PathBuf> {
    tool_output_cap_cli::manifest_path()
}
