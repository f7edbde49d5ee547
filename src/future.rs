//! [`ResponseFuture`], which caps the output once the tool is done.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use pin_project_lite::pin_project;

use tower::BoxError;

use crate::limit::ToolLimit;
use crate::tokenizer::TokenizerRef;
use crate::tool::{ToolError, ToolOutput};
use crate::truncate::{cap_error, cap_output};

pin_project! {
    /// Response future of [`ToolOutputCap`](crate::ToolOutputCap).
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        limit: ToolLimit,
        tokenizer: TokenizerRef,
        // The tool name, kept only when the truncation event would be recorded.
        tool: Option<String>,
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn new(
        inner: F,
        limit: ToolLimit,
        tokenizer: TokenizerRef,
        tool: Option<String>,
    ) -> Self {
        ResponseFuture {
            inner,
            limit,
            tokenizer,
            tool,
        }
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
        let tool = this.tool.as_deref().unwrap_or_default();
        let tokenizer = &**this.tokenizer;
        match ready!(this.inner.poll(cx)) {
            Ok(mut output) => {
                cap_output(tool, &mut output, this.limit, tokenizer);
                Poll::Ready(Ok(output))
            }
            Err(mut error) => {
                if let Some(tool_error) = tool_error(&mut error) {
                    cap_error(tool, tool_error, this.limit, tokenizer);
                }
                Poll::Ready(Err(error))
            }
        }
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
