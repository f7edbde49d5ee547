//! [`Plan`], how one tool's outputs are capped, made once with the layer; [`Plans`], one for each
//! tool with a limit of its own; and [`CallPlan`], what a call's future carries of its tool's plan.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::limit::{fits_by_length, Keep, ToolLimit};
use crate::limits::ToolOutputLimits;
use crate::tokenizer::{Encoding, Tokenizer};

/// How one tool's outputs are capped, made once with the layer.
///
/// An output no longer in bytes than `max_tokens` needs nothing more. A longer one is capped
/// with the limit and the tokenizer. For a limit with no hint, counted in a built-in vocabulary
/// (the common case), they are rebuilt from the plan's [`Bounds`]; otherwise they are shared.
#[derive(Debug)]
pub(crate) struct Plan {
    bounds: Bounds,
    shared: Option<Arc<Shared>>,
}

/// What a limit with no hint, in a built-in vocabulary, is made of: copied on each call.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    max_tokens: usize,
    keep: Keep,
    encoding: Encoding,
}

/// A limit with a hint, or one counted with a tokenizer given to the limits.
#[derive(Debug)]
struct Shared {
    limit: ToolLimit,
    tokenizer: Option<Arc<dyn Tokenizer>>,
}

/// What a call's future carries of its tool's plan: the bounds, and a box only when capping
/// needs more (the tool's name, kept while the truncation event would be recorded, or the plan's
/// shared part). In the common case a call copies three words: no allocation, no reference
/// count, and nothing for the future's drop to free.
#[derive(Debug)]
pub(crate) struct CallPlan {
    bounds: Bounds,
    more: Option<Box<More>>,
}

/// What capping one call's output needs beyond its bounds.
#[derive(Debug)]
struct More {
    tool: Option<Box<str>>,
    shared: Option<Arc<Shared>>,
}

impl Plan {
    fn new(limit: &ToolLimit, limits: &ToolOutputLimits) -> Plan {
        let custom = limits.custom_tokenizer();
        Plan {
            bounds: Bounds {
                max_tokens: limit.max_tokens,
                keep: limit.keep,
                encoding: limits.encoding(),
            },
            shared: (limit.hint.is_some() || custom.is_some()).then(|| {
                Arc::new(Shared {
                    limit: limit.clone(),
                    tokenizer: custom.cloned(),
                })
            }),
        }
    }

    /// What a call of the tool carries, with `tool`, the name the truncation event records.
    #[inline]
    pub(crate) fn for_call(&self, tool: Option<Box<str>>) -> CallPlan {
        let more = if tool.is_none() && self.shared.is_none() {
            None
        } else {
            Some(self.more(tool))
        };
        CallPlan {
            bounds: self.bounds,
            more,
        }
    }

    fn more(&self, tool: Option<Box<str>>) -> Box<More> {
        Box::new(More {
            tool,
            shared: self.shared.clone(),
        })
    }
}

impl CallPlan {
    /// Whether `text` is within the limit by its length alone, with no count.
    #[inline]
    pub(crate) fn holds_by_length(&self, text: &str) -> bool {
        fits_by_length(text, self.bounds.max_tokens)
    }

    /// Calls `cap` with the tool's name (empty if the event is not recorded), the limit and the
    /// tokenizer.
    pub(crate) fn with<R>(&self, cap: impl FnOnce(&str, &ToolLimit, &dyn Tokenizer) -> R) -> R {
        let more = self.more.as_deref();
        let tool = more
            .and_then(|more| more.tool.as_deref())
            .unwrap_or_default();
        let built_in = || self.bounds.encoding.tokenizer();
        match more.and_then(|more| more.shared.as_deref()) {
            Some(shared) => cap(
                tool,
                &shared.limit,
                shared.tokenizer.as_deref().unwrap_or_else(built_in),
            ),
            None => {
                let limit = ToolLimit {
                    max_tokens: self.bounds.max_tokens,
                    keep: self.bounds.keep,
                    hint: None,
                };
                cap(tool, &limit, built_in())
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
        plan.for_call(None).with(|tool, rebuilt, tokenizer| {
            assert_eq!(tool, "");
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
        plans
            .plan_for("Glob")
            .for_call(None)
            .with(|_, limit, tokenizer| {
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
            plans
                .plan_for(tool)
                .for_call(None)
                .with(|_, limit, tokenizer| {
                    assert_eq!(limit, limits.limit_for(tool));
                    assert_eq!(tokenizer_address(tokenizer), tokenizer_address(&*given));
                });
        }
    }

    #[test]
    fn a_call_boxes_only_a_recorded_name_or_a_shared_part() {
        let limits = ToolOutputLimits::new(5000).unwrap().with_tool_limit(
            "Glob",
            ToolLimit::new(300).unwrap().with_hint("narrow it").unwrap(),
        );
        let plans = Plans::new(&limits);
        assert!(plans.plan_for("Read").for_call(None).more.is_none());
        for (tool, recorded) in [
            ("Read", Some("Read")),
            ("Glob", None),
            ("Glob", Some("Glob")),
        ] {
            let call = plans.plan_for(tool).for_call(recorded.map(Box::from));
            assert!(call.more.is_some(), "{tool}");
            call.with(|name, limit, _| {
                assert_eq!(name, recorded.unwrap_or_default());
                assert_eq!(limit, limits.limit_for(tool));
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
        assert_eq!(plans.plan_for("Read").bounds.max_tokens, 8000);
        assert_eq!(plans.plan_for("read").bounds.max_tokens, 5000);
        assert_eq!(plans.plan_for("Glob").bounds.max_tokens, 5000);
    }
}
