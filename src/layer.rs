//! [`ToolOutputCapLayer`], which applies [`ToolOutputCap`] to a tool service.

use std::sync::Arc;

use tower_layer::Layer;

use crate::manifest::ToolOutputLimits;
use crate::service::ToolOutputCap;
use crate::tokenizer::{Tokenizer, TokenizerRef};

/// Applies [`ToolOutputCap`] to a tool service: every output is capped to its tool's limit.
///
/// Cheap to clone: the limits and the tokenizer are shared.
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolOutputCapLayer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) limits: ToolOutputLimits,
    pub(crate) tokenizer: TokenizerRef,
}

impl ToolOutputCapLayer {
    /// Caps outputs to `limits`, counting in the vocabulary it names with the default engine
    /// ([`Encoding::tokenizer`](crate::Encoding::tokenizer)).
    ///
    /// The encoder is built here, once per process, so that no tool call waits for it.
    pub fn new(limits: ToolOutputLimits) -> Self {
        let tokenizer = TokenizerRef::Static(limits.encoding().tokenizer());
        ToolOutputCapLayer::from_parts(limits, tokenizer)
    }

    /// Caps outputs to `limits`, counting with `tokenizer` (say, the tokenizer of another
    /// model); the limits' encoding is not used.
    pub fn with_tokenizer(limits: ToolOutputLimits, tokenizer: Arc<dyn Tokenizer>) -> Self {
        ToolOutputCapLayer::from_parts(limits, TokenizerRef::Shared(tokenizer))
    }

    fn from_parts(limits: ToolOutputLimits, tokenizer: TokenizerRef) -> Self {
        ToolOutputCapLayer {
            shared: Arc::new(Shared { limits, tokenizer }),
        }
    }

    /// The tokenizer outputs are counted with.
    pub fn tokenizer(&self) -> &dyn Tokenizer {
        &*self.shared.tokenizer
    }

    /// The limits outputs are capped to.
    pub fn limits(&self) -> &ToolOutputLimits {
        &self.shared.limits
    }
}

impl<S> Layer<S> for ToolOutputCapLayer {
    type Service = ToolOutputCap<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ToolOutputCap::from_shared(inner, Arc::clone(&self.shared))
    }
}
