//! What is wrong with a manifest, and where.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::limit::LimitError;

/// A manifest that cannot be read or holds a bad value; says where and what.
#[derive(Debug, Default)]
pub struct ManifestError {
    pub(super) path: Option<PathBuf>,
    pub(super) key: Option<String>,
    pub(super) line: Option<usize>,
    pub(super) column: Option<usize>,
    pub(super) message: String,
    pub(super) source: Option<io::Error>,
}

impl ManifestError {
    /// An error at `offset` in the manifest `text`: its line and column.
    pub(super) fn at(text: &str, offset: usize) -> Self {
        let before = text.get(..offset).unwrap_or(text);
        let line_start = before.rfind('\n').map_or(0, |at| at + 1);
        ManifestError {
            line: Some(before.matches('\n').count() + 1),
            column: Some(before[line_start..].chars().count() + 1),
            ..ManifestError::default()
        }
    }

    /// The manifest file, when it was read with [`Manifest::from_path`](super::Manifest::from_path).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The dotted key of the bad value, such as `worker.tool_output.per_tool.Grep`.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The 1-based line of the bad value.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The 1-based column of the bad value, in characters.
    pub fn column(&self) -> Option<usize> {
        self.column
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}:", path.display())?;
        }
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, "{line}:{column}:")?;
        }
        if self.path.is_some() || self.line.is_some() {
            f.write_str(" ")?;
        }
        if let Some(key) = &self.key {
            write!(f, "`{key}` ")?;
        }
        f.write_str(&self.message)
    }
}

impl From<LimitError> for ManifestError {
    /// A limit refused in code, not read from a file: the message alone.
    fn from(error: LimitError) -> Self {
        ManifestError {
            message: error.to_string(),
            ..ManifestError::default()
        }
    }
}

impl std::error::Error for ManifestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}
