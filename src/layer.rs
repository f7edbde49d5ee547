//! [`ToolOutputCapLayer`], which applies [`ToolOutputCap`] to a tool service.

use std::sync::Arc;

use tower_layer::Layer;

use crate::limits::ToolOutputLimits;
use crate::plan::Plans;
use crate::service::ToolOutputCap;
use crate::tokenizer::Tokenizer;

/// Applies [`ToolOutputCap`] to a tool service: every output is capped to its tool's limit.
///
/// Cheap to clone: the limits, and the tokenizer they hold, are shared.
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolOutputCapLayer {
    limits: Arc<ToolOutputLimits>,
    plans: Arc<Plans>,
}

impl ToolOutputCapLayer {
    /// Caps outputs to `limits`, counting with their tokenizer
    /// ([`ToolOutputLimits::tokenizer`]): one given to them, a tokenizer file's, or the
    /// vocabulary they name with the default engine.
    ///
    /// The encoder is built here (a tokenizer file was loaded with the limits), once per
    /// process, so that no tool call waits for it.
    pub fn new(limits: ToolOutputLimits) -> Self {
        limits.tokenizer();
        ToolOutputCapLayer {
            plans: Arc::new(Plans::new(&limits)),
            limits: Arc::new(limits),
        }
    }

    /// Caps outputs to `limits`, counting with the model's own tokenizer read from the
    /// `tokenizer.json` at `path` (once per process and path): the layer of
    /// [`ToolOutputLimits::with_tokenizer_file`].
    #[cfg(feature = "hf")]
    pub fn with_tokenizer_file(
        limits: ToolOutputLimits,
        path: impl AsRef<std::path::Path>,
    ) -> Result<Self, crate::TokenizerFileError> {
        Ok(ToolOutputCapLayer::new(limits.with_tokenizer_file(path)?))
    }

    /// Caps outputs to `limits`, counting with `tokenizer` (say, the tokenizer of another
    /// model): the layer of [`ToolOutputLimits::with_tokenizer`].
    pub fn with_tokenizer(limits: ToolOutputLimits, tokenizer: Arc<dyn Tokenizer>) -> Self {
        ToolOutputCapLayer::new(limits.with_tokenizer(tokenizer))
    }

    /// The tokenizer outputs are counted with: the limits'.
    pub fn tokenizer(&self) -> &dyn Tokenizer {
        self.limits.tokenizer()
    }

    /// The limits outputs are capped to. A caller that knows the names of the tools it wraps
    /// can warn of `per_tool` names that match none of them, whose limits never apply:
    /// `layer.limits().warn_of_unmatched_tools(&["Glob", "Read"])`.
    pub fn limits(&self) -> &ToolOutputLimits {
        &self.limits
    }
}

impl<S> Layer<S> for ToolOutputCapLayer {
    type Service = ToolOutputCap<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ToolOutputCap::from_shared(inner, Arc::clone(&self.plans))
    }
}
