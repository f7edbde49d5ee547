//! What the binary's tests share: a folder of their own, the binary without the user's own
//! manifest, and a process that ends with the test.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// The `tool-output-cap` binary the tests run.
pub const BIN: &str = env!("CARGO_BIN_EXE_tool-output-cap");

/// A new, empty folder for the test `name` of the test file `file`, removed when dropped, however
/// the test ends: a run leaves nothing behind in the system's temporary folder.
pub fn scratch(file: &str, name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!(
        "tool-output-cap-{file}-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A test's folder ([`scratch`]), a path wherever one is taken.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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

/// A child process, killed and waited for when dropped, however the test ends: a failed
/// assertion leaves no process running.
#[derive(Debug)]
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
