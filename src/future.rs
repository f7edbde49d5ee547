//! [`ResponseFuture`], which caps the output once the tool is done.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use pin_project_lite::pin_project;

use tower::BoxError;

use crate::plan::CallPlan;
use crate::tool::{ToolError, ToolOutput};
use crate::truncate::{cap_error, cap_output};

pin_project! {
    /// Response future of [`ToolOutputCap`](crate::ToolOutputCap).
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        plan: CallPlan,
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn new(inner: F, plan: CallPlan) -> Self {
        ResponseFuture { inner, plan }
    }
}

impl<F, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<ToolOutput, E>>,
    E: 'static,
{
    type Output = Result<ToolOutput, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut result = ready!(this.inner.poll(cx));
        // An output within the limit by its length, the common case, costs one comparison here;
        // the tokenizer is looked up, and the count made, out of line.
        match &mut result {
            Ok(output) if this.plan.holds_by_length(&output.content) => {}
            Ok(output) => cap_long_output(output, this.plan),
            Err(error) => cap_any_error(error, this.plan),
        }
        Poll::Ready(result)
    }
}

/// Caps `output`, which is longer in bytes than its limit has tokens.
#[cold]
#[inline(never)]
fn cap_long_output(output: &mut ToolOutput, plan: &CallPlan) {
    plan.with(|tool, limit, tokenizer| cap_output(tool, output, limit, tokenizer));
}

/// Caps `error`'s message if it is the crate's [`ToolError`].
#[cold]
#[inline(never)]
fn cap_any_error<E: 'static>(error: &mut E, plan: &CallPlan) {
    if let Some(tool_error) = tool_error(error) {
        plan.with(|tool, limit, tokenizer| cap_error(tool, tool_error, limit, tokenizer));
    }
}

/// The crate's [`ToolError`] in `error`: `error` itself, or what a [`BoxError`] holds.
fn tool_error<E: 'static>(error: &mut E) -> Option<&mut ToolError> {
    let error: &mut dyn Any = error;
    if error.is::<ToolError>() {
        error.downcast_mut::<ToolError>()
    } else {
        error
            .downcast_mut::<BoxError>()?
            .downcast_mut::<ToolError>()
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// What the future holds besides the tool's future, as benches/README.md gives it: the call's
    /// plan (24 bytes: the limit's length, what it keeps, the vocabulary, and a pointer).
    #[test]
    fn the_future_adds_the_call_plan_to_the_tools() {
        type Tool = std::future::Ready<Result<ToolOutput, std::convert::Infallible>>;
        assert_eq!(size_of::<ToolOutput>(), 88);
        assert_eq!(size_of::<CallPlan>(), 24);
        assert_eq!(size_of::<ResponseFuture<Tool>>(), size_of::<Tool>() + 24);
    }
}
