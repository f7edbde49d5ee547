//! What the binary's tests share: a folder of their own, and the binary without the user's own
//! manifest.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `tool-output-cap` binary the tests run.
pub const BIN: &str = env!("CARGO_BIN_EXE_tool-output-cap");

/// A new, empty folder for the test `name` of the test file `file`.
pub fn scratch(file: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "tool-output-cap-{file}-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary with no manifest but the ones a test names: none from `TOOL_OUTPUT_CAP_MANIFEST`,
/// none in the user's config folder, which is `dir/config`.
pub fn binary(dir: &Path) -> Command {
    let mut command = Command::new(BIN);
    command
        .env_remove("TOOL_OUTPUT_CAP_MANIFEST")
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("HOME", dir);
    command
}

pub mod gateway;
pub mod remote;
