//! A small [`Worker`] that shows where the layer sits: between the tools and the history.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceBuilder, ServiceExt};

use crate::layer::ToolOutputCapLayer;
use crate::manifest::WorkerManifest;
use crate::service::ToolOutputCap;
use crate::tool::{ToolCall, ToolError, ToolOutput};

/// A registered tool, boxed.
pub type BoxTool = BoxCloneSyncService<ToolCall, ToolOutput, ToolError>;

/// One call and what came of it, as the history keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    /// The call the model made.
    pub call: ToolCall,
    /// The capped output, or the error.
    pub result: Result<ToolOutput, ToolError>,
}

/// Runs tool calls through `ServiceBuilder::new().layer(cap)` and appends each result to its
/// history, capped.
#[derive(Debug)]
pub struct Worker {
    tools: ToolOutputCap<Tools>,
    history: Vec<HistoryEntry>,
}

/// Builds a [`Worker`]: [`Worker::builder`], then [`tool`](WorkerBuilder::tool) for each tool.
#[derive(Debug)]
#[must_use]
pub struct WorkerBuilder {
    cap: ToolOutputCapLayer,
    tools: HashMap<String, BoxTool>,
}

impl Worker {
    /// Starts a worker with the limits of `manifest`.
    pub fn builder(manifest: &WorkerManifest) -> WorkerBuilder {
        WorkerBuilder::new(ToolOutputCapLayer::new(manifest.limits()))
    }

    /// Calls a tool and records the capped result; a call of an unregistered tool is recorded
    /// as a [`ToolError`].
    pub async fn call(&mut self, call: ToolCall) -> &HistoryEntry {
        let result = self.tools.clone().oneshot(call.clone()).await;
        self.history.push(HistoryEntry { call, result });
        &self.history[self.history.len() - 1]
    }

    /// Every call so far, oldest first.
    pub fn history(&self) -> &[HistoryEntry] {
        &self.history
    }
}

impl WorkerBuilder {
    /// Starts a worker whose tools are wrapped in `cap`.
    pub fn new(cap: ToolOutputCapLayer) -> Self {
        WorkerBuilder {
            cap,
            tools: HashMap::new(),
        }
    }

    /// Registers `service` as tool `name`.
    pub fn tool<S>(mut self, name: impl Into<String>, service: S) -> Self
    where
        S: Service<ToolCall, Response = ToolOutput, Error = ToolError>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        self.tools
            .insert(name.into(), BoxCloneSyncService::new(service));
        self
    }

    /// The worker; warns of each per-tool limit that names no registered tool.
    pub fn build(self) -> Worker {
        for (tool, max_tokens) in self.cap.limits().per_tool() {
            if !self.tools.contains_key(tool) {
                tracing::warn!(
                    tool,
                    max_tokens,
                    "[worker.tool_output.per_tool] names a tool that is not registered"
                );
            }
        }
        let tools = Tools {
            by_name: Arc::new(self.tools),
        };
        Worker {
            tools: ServiceBuilder::new().layer(self.cap).service(tools),
            history: Vec::new(),
        }
    }
}

/// Routes each call to the tool it names.
#[derive(Debug, Clone)]
struct Tools {
    by_name: Arc<HashMap<String, BoxTool>>,
}

type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;

impl Service<ToolCall> for Tools {
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = ToolFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        // Each tool is made ready in `call`, once the call says which one.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolCall) -> ToolFuture {
        match self.by_name.get(&call.name) {
            Some(tool) => Box::pin(tool.clone().oneshot(call)),
            None => {
                let error = ToolError::new(format!("no tool named `{}` is registered", call.name));
                Box::pin(std::future::ready(Err(error)))
            }
        }
    }
}
