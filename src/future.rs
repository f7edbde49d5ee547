//! [`ResponseFuture`], which caps the output once the tool is done.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use pin_project_lite::pin_project;

use crate::cap::cap;
use crate::tokenizer::TokenizerRef;
use crate::tool::ToolOutput;

/// The `tracing` target of the truncation event.
pub(crate) const TARGET: &str = "tool_output_cap";

pin_project! {
    /// Response future of [`ToolOutputCap`](crate::ToolOutputCap).
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        max_tokens: usize,
        tokenizer: TokenizerRef,
        // The tool name, kept only when the truncation event would be recorded.
        tool: Option<String>,
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn new(
        inner: F,
        max_tokens: usize,
        tokenizer: TokenizerRef,
        tool: Option<String>,
    ) -> Self {
        ResponseFuture {
            inner,
            max_tokens,
            tokenizer,
            tool,
        }
    }
}

impl<F, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<ToolOutput, E>>,
{
    type Output = Result<ToolOutput, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut output = ready!(this.inner.poll(cx))?;
        if let Some(truncation) = cap(&mut output.content, *this.max_tokens, &**this.tokenizer) {
            tracing::info!(
                target: TARGET,
                tool = this.tool.as_deref().unwrap_or_default(),
                original_tokens = truncation.original_tokens,
                kept_tokens = truncation.kept_tokens,
                dropped_tokens = truncation.dropped_tokens,
                max_tokens = truncation.max_tokens,
                "truncated tool output"
            );
            output.truncation = Some(truncation);
        }
        Poll::Ready(Ok(output))
    }
}
