//! A small [`Worker`] that shows where the layer sits: between the tools and the history.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceBuilder, ServiceExt};

use futures_util::future::join_all;

use crate::layer::ToolOutputCapLayer;
use crate::limits::ToolOutputLimits;
use crate::manifest::WorkerManifest;
use crate::service::ToolOutputCap;
use crate::tool::{ToolCall, ToolError, ToolOutput};
use crate::truncate::{cap_error, cap_output};

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
    cap: ToolOutputCapLayer,
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

    /// Runs the calls of one model turn together and records their results in the order of the
    /// calls.
    ///
    /// With `max_tokens_per_turn`, the results together, notes included, stay within it, as
    /// [`ToolOutputLimits::limits_for_turn`](crate::ToolOutputLimits::limits_for_turn) shares it. Errors are results too: they keep their
    /// end.
    pub async fn run_turn(&mut self, calls: Vec<ToolCall>) -> &[HistoryEntry] {
        let results = match self.cap.limits().max_tokens_per_turn() {
            None => {
                join_all(
                    calls
                        .iter()
                        .map(|call| self.tools.clone().oneshot(call.clone())),
                )
                .await
            }
            Some(_) => {
                let tools = self.tools.get_ref();
                let raw =
                    join_all(calls.iter().map(|call| tools.clone().oneshot(call.clone()))).await;
                share_turn(self.cap.limits(), &calls, raw)
            }
        };
        let start = self.history.len();
        let entries = calls.into_iter().zip(results);
        self.history
            .extend(entries.map(|(call, result)| HistoryEntry { call, result }));
        &self.history[start..]
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

    /// The worker; warns of each per-tool limit that names no registered tool
    /// ([`ToolOutputLimits::warn_of_unmatched_tools`](crate::ToolOutputLimits::warn_of_unmatched_tools)).
    pub fn build(self) -> Worker {
        let names: Vec<&str> = self.tools.keys().map(String::as_str).collect();
        self.cap.limits().warn_of_unmatched_tools(&names);
        let tools = Tools {
            by_name: Arc::new(self.tools),
        };
        Worker {
            tools: ServiceBuilder::new().layer(self.cap.clone()).service(tools),
            cap: self.cap,
            history: Vec::new(),
        }
    }
}

/// Caps the results of one turn to the limits [`ToolOutputLimits::limits_for_turn`](crate::ToolOutputLimits::limits_for_turn) gives them.
fn share_turn(
    limits: &ToolOutputLimits,
    calls: &[ToolCall],
    mut results: Vec<Result<ToolOutput, ToolError>>,
) -> Vec<Result<ToolOutput, ToolError>> {
    let texts: Vec<(&str, &str)> = calls
        .iter()
        .zip(&results)
        .map(|(call, result)| {
            let text = match result {
                Ok(output) => output.content.as_str(),
                Err(error) => error.message.as_str(),
            };
            (call.name.as_str(), text)
        })
        .collect();
    let turn = limits.limits_for_turn(&texts);
    let tokenizer = limits.tokenizer();
    for ((call, result), limit) in calls.iter().zip(&mut results).zip(turn) {
        match result {
            Ok(output) => cap_output(&call.name, output, &limit, tokenizer),
            Err(error) => cap_error(&call.name, error, &limit, tokenizer),
        }
    }
    results
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
