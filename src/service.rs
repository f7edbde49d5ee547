//! [`ToolOutputCap`], the middleware service.

use std::sync::Arc;
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use crate::future::ResponseFuture;
use crate::layer::ToolOutputCapLayer;
use crate::limits::ToolOutputLimits;
use crate::tool::{ToolCall, ToolOutput};
use crate::truncation::TARGET;

/// Caps the output of every call of the inner tool service to that tool's token limit.
///
/// See the [crate docs](crate) for what a capped output looks like.
#[derive(Debug, Clone)]
pub struct ToolOutputCap<S> {
    inner: S,
    limits: Arc<ToolOutputLimits>,
}

impl<S> ToolOutputCap<S> {
    /// Wraps `inner`, as [`ToolOutputCapLayer::new`] would.
    pub fn new(inner: S, limits: ToolOutputLimits) -> Self {
        ToolOutputCapLayer::new(limits).layer(inner)
    }

    pub(crate) fn from_shared(inner: S, limits: Arc<ToolOutputLimits>) -> Self {
        ToolOutputCap { inner, limits }
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

    #[inline]
    fn call(&mut self, call: ToolCall) -> Self::Future {
        let limit = self.limits.limit_for(&call.name).clone();
        let tool = tracing::enabled!(target: TARGET, tracing::Level::INFO)
            .then(|| call.name.as_str().into());
        ResponseFuture::new(
            self.inner.call(call),
            limit,
            self.limits.tokenizer_ref(),
            tool,
        )
    }
}
