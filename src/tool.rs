//! What goes into a tool and what comes out of it.

use std::fmt;

use crate::truncation::Truncation;

/// A call of a named tool with its JSON arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The registered tool name, such as `"Glob"`.
    pub name: String,
    /// The arguments the model passed.
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// A call of tool `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        ToolCall {
            name: name.into(),
            arguments,
        }
    }
}

/// What a tool returned, as it goes into the history.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model reads.
    pub content: String,
    /// A short summary, if the tool gives one. The cap leaves it as it is.
    pub summary: Option<String>,
    /// Set when the cap truncated `content`.
    pub truncation: Option<Truncation>,
}

impl ToolOutput {
    /// An output with `content`, no summary and no truncation.
    pub fn new(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            ..ToolOutput::default()
        }
    }
}

/// A tool that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// What went wrong, for the model to read.
    pub message: String,
    /// Set when the cap truncated `message`, keeping its end.
    pub truncation: Option<Truncation>,
}

impl ToolError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            truncation: None,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}
