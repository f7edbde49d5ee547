//! [`Plan`], what the layer's future carries to cap one tool's outputs, and [`Plans`], one for
//! each tool with a limit of its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::limit::{fits_by_length, Keep, ToolLimit};
use crate::limits::ToolOutputLimits;
use crate::tokenizer::{Encoding, Tokenizer};

/// How one tool's outputs are capped, made once with the layer: what its future carries.
///
/// An output no longer in bytes than `max_tokens` needs nothing more. A longer one is capped
/// with the limit and the tokenizer. For a limit with no hint, counted in a built-in vocabulary
/// (the common case), they are rebuilt from `keep` and `encoding`, so that a call copies the plan
/// with no reference count; otherwise they are shared.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    max_tokens: usize,
    keep: Keep,
    encoding: Encoding,
    shared: Option<Arc<Shared>>,
}

/// A limit with a hint, or one counted with a tokenizer given to the limits.
#[derive(Debug)]
struct Shared {
    limit: ToolLimit,
    tokenizer: Option<Arc<dyn Tokenizer>>,
}

impl Plan {
    fn new(limit: &ToolLimit, limits: &ToolOutputLimits) -> Plan {
        let custom = limits.custom_tokenizer();
        Plan {
            max_tokens: limit.max_tokens,
            keep: limit.keep,
            encoding: limits.encoding(),
            shared: (limit.hint.is_some() || custom.is_some()).then(|| {
                Arc::new(Shared {
                    limit: limit.clone(),
                    tokenizer: custom.cloned(),
                })
            }),
        }
    }

    /// Whether `text` is within the limit by its length alone, with no count.
    #[inline]
    pub(crate) fn holds_by_length(&self, text: &str) -> bool {
        fits_by_length(text, self.max_tokens)
    }

    /// Calls `cap` with the limit and the tokenizer.
    pub(crate) fn with<R>(&self, cap: impl FnOnce(&ToolLimit, &dyn Tokenizer) -> R) -> R {
        match &self.shared {
            Some(shared) => {
                let given = shared.tokenizer.as_deref();
                cap(
                    &shared.limit,
                    given.unwrap_or_else(|| self.encoding.tokenizer()),
                )
            }
            None => {
                let limit = ToolLimit {
                    max_tokens: self.max_tokens,
                    keep: self.keep,
                    hint: None,
                };
                cap(&limit, self.encoding.tokenizer())
            }
        }
    }
}

/// The plans of a layer's limits: the default's and each tool's own.
#[derive(Debug)]
pub(crate) struct Plans {
    default: Plan,
    per_tool: BTreeMap<String, Plan>,
}

impl Plans {
    pub(crate) fn new(limits: &ToolOutputLimits) -> Plans {
        Plans {
            default: Plan::new(limits.default_limit(), limits),
            per_tool: limits
                .per_tool()
                .map(|(tool, limit)| (tool.to_owned(), Plan::new(limit, limits)))
                .collect(),
        }
    }

    /// The plan of `tool`'s outputs: its own, or the default. With no tool of its own, no name is
    /// compared.
    #[inline]
    pub(crate) fn plan_for(&self, tool: &str) -> &Plan {
        if self.per_tool.is_empty() {
            &self.default
        } else {
            self.plan_named(tool)
        }
    }

    fn plan_named(&self, tool: &str) -> &Plan {
        self.per_tool.get(tool).unwrap_or(&self.default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One token a byte.
    #[derive(Debug)]
    struct Bytes;

    impl Tokenizer for Bytes {
        fn count(&self, text: &str) -> usize {
            text.len()
        }
        fn prefix(&self, text: &str, max_tokens: usize) -> crate::Prefix {
            let len = crate::tokenizer::floor_char_boundary(text, max_tokens.min(text.len()));
            crate::Prefix {
                len,
                tokens: len,
                total_tokens: text.len(),
            }
        }
    }

    fn tokenizer_address(tokenizer: &dyn Tokenizer) -> *const u8 {
        std::ptr::from_ref(tokenizer).cast()
    }

    #[test]
    fn a_limit_without_a_hint_in_a_built_in_vocabulary_is_rebuilt_not_shared() {
        let limit = ToolLimit::new(100).unwrap().with_keep(Keep::Tail);
        let limits = ToolOutputLimits::new(5000)
            .unwrap()
            .with_tool_limit("Bash", limit.clone());
        let plans = Plans::new(&limits);
        let plan = plans.plan_for("Bash");
        assert!(plan.shared.is_none());
        plan.with(|rebuilt, tokenizer| {
            assert_eq!(rebuilt, &limit);
            assert_eq!(
                tokenizer_address(tokenizer),
                tokenizer_address(limits.tokenizer())
            );
        });
    }

    #[test]
    fn a_hint_and_a_given_tokenizer_are_shared() {
        let hinted = ToolLimit::new(300)
            .unwrap()
            .with_hint("use a narrower pattern")
            .unwrap();
        let limits = ToolOutputLimits::new(5000)
            .unwrap()
            .with_tool_limit("Glob", hinted.clone());
        let plans = Plans::new(&limits);
        assert!(plans.plan_for("Glob").shared.is_some());
        plans.plan_for("Glob").with(|limit, tokenizer| {
            assert_eq!(limit, &hinted);
            assert_eq!(
                tokenizer_address(tokenizer),
                tokenizer_address(limits.tokenizer())
            );
        });
        assert!(plans.plan_for("Read").shared.is_none());

        let given: Arc<dyn Tokenizer> = Arc::new(Bytes);
        let limits = limits.with_tokenizer(Arc::clone(&given));
        let plans = Plans::new(&limits);
        for tool in ["Glob", "Read"] {
            plans.plan_for(tool).with(|limit, tokenizer| {
                assert_eq!(limit, limits.limit_for(tool));
                assert_eq!(tokenizer_address(tokenizer), tokenizer_address(&*given));
            });
        }
    }

    #[test]
    fn a_tool_without_a_limit_of_its_own_gets_the_default() {
        let limits = ToolOutputLimits::new(5000)
            .unwrap()
            .with_tool("Read", 8000)
            .unwrap();
        let plans = Plans::new(&limits);
        assert_eq!(plans.plan_for("Read").max_tokens, 8000);
        assert_eq!(plans.plan_for("read").max_tokens, 5000);
        assert_eq!(plans.plan_for("Glob").max_tokens, 5000);
    }
}
