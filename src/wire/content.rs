//! A tool result as an agent framework holds it: a list of content blocks, capped by
//! [`ToolOutputLimits::cap_blocks`] with the block cut every shape shares.
//!
//! The frameworks each have their own blocks (a LangChain `ToolMessage`'s, pydantic-ai's
//! `BinaryContent`, the AI SDK's `image-data` parts). Their adapters write them as MCP's (`text`,
//! `image`, `audio`, `resource`), whose shape every framework's maps to, and read the capped list
//! back by [`CappedBlock::from`]: each block that goes to the model says which one it came from.

use std::fmt;

use serde_json::value::RawValue;

use super::blocks::cut_blocks;
use super::raw::items;
use crate::limit::Outcome;
use crate::limits::ToolOutputLimits;
use crate::truncation::Truncation;

/// A list of content blocks capped: the blocks that go to the model, and the figures of the cut.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CappedBlocks {
    /// The blocks, in order: those kept, some with their text cut or their image scaled down,
    /// and last, when media gave way, the note that says so.
    pub blocks: Vec<CappedBlock>,
    /// The figures of the cut, its text and media together.
    pub truncation: Truncation,
}

/// A block of a capped list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CappedBlock {
    /// The place in the list given of the block this one is, as it came or cut; `None` for the
    /// note that media gave way, a `text` block of its own.
    pub from: Option<usize>,
    /// Its JSON: byte for byte the block given, unless its text was cut or its image scaled.
    pub json: String,
}

/// Blocks given to [`ToolOutputLimits::cap_blocks`] that are not a JSON list: what they are.
#[derive(Debug)]
pub struct NotABlockList(String);

impl fmt::Display for NotABlockList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the blocks are not a JSON list: {}", self.0)
    }
}

impl std::error::Error for NotABlockList {}

/// `blocks` of `tool`, that was its `outcome`, capped to its limit in `limits`:
/// [`ToolOutputLimits::cap_blocks`].
pub(crate) fn cap_blocks(
    limits: &ToolOutputLimits,
    tool: &str,
    blocks: &str,
    outcome: Outcome,
) -> Result<Option<CappedBlocks>, NotABlockList> {
    let list: &RawValue =
        serde_json::from_str(blocks).map_err(|error| NotABlockList(error.to_string()))?;
    if !list.get().starts_with('[') {
        let start: String = list.get().chars().take(20).collect();
        return Err(NotABlockList(format!("it starts {start:?}")));
    }
    let limit = outcome.limit(limits.limit_for(tool));
    let rule = limits.image_tokens();
    let Some(cut) = cut_blocks(list, "text", &limit, limits.tokenizer(), rule) else {
        return Ok(None);
    };
    cut.truncation.record(tool, outcome);
    let json: &RawValue = serde_json::from_str(&cut.json).expect("the cut writes JSON");
    let capped = items(json)
        .expect("the cut writes a list")
        .into_iter()
        .zip(cut.from)
        .map(|(json, from)| CappedBlock {
            from,
            json: json.get().to_owned(),
        })
        .collect();
    Ok(Some(CappedBlocks {
        blocks: capped,
        truncation: cut.truncation,
    }))
}
