//! [`ToolOutputCap`], the middleware service.

use std::sync::Arc;
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use crate::future::ResponseFuture;
use crate::layer::ToolOutputCapLayer;
use crate::limits::ToolOutputLimits;
use crate::plan::Plans;
use crate::tool::{ToolCall, ToolOutput};
use crate::truncation::TARGET;

/// Caps the output of every call of the inner tool service to that tool's token limit.
///
/// See the [crate docs](crate) for what a capped output looks like.
#[derive(Debug, Clone)]
pub struct ToolOutputCap<S> {
    inner: S,
    plans: Arc<Plans>,
}

impl<S> ToolOutputCap<S> {
    /// Wraps `inner`, as [`ToolOutputCapLayer::new`] would.
    pub fn new(inner: S, limits: ToolOutputLimits) -> Self {
        ToolOutputCapLayer::new(limits).layer(inner)
    }

    pub(crate) fn from_shared(inner: S, plans: Arc<Plans>) -> Self {
        ToolOutputCap { inner, plans }
    }

    /// A [`ToolOutputCapLayer`] with `limits`.
    pub fn layer(limits: ToolOutputLimits) -> ToolOutputCapLayer {
        ToolOutputCapLayer::new(limits)
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<ToolCall> for ToolOutputCap<S>
where
    S: Service<ToolCall, Response = ToolOutput>,
    S::Error: 'static,
{
    type Response = ToolOutput;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    // Always inlined: with `#[inline]` alone the compiler left it out of line in a loop that awaits
    // its calls (benches/README.md, "Small outputs", gives what that cost).
    #[inline(always)]
    fn call(&mut self, call: ToolCall) -> Self::Future {
        let plan = self.plans.plan_for(&call.name);
        let plan = plan.for_call(recorded_name(&call.name));
        ResponseFuture::new(self.inner.call(call), plan)
    }
}

/// `tool`, kept if the truncation event would be recorded. The global level is checked inline;
/// the subscriber is asked out of line.
#[inline]
fn recorded_name(tool: &str) -> Option<Box<str>> {
    #[inline(never)]
    fn if_enabled(tool: &str) -> Option<Box<str>> {
        tracing::enabled!(target: TARGET, tracing::Level::INFO).then(|| tool.into())
    }
    if tracing::level_enabled!(tracing::Level::INFO) {
        if_enabled(tool)
    } else {
        None
    }
}
