//! The limits applied to a shape of result, or read from one: a structured result
//! ([`json`](crate::json)), an MCP `CallToolResult` ([`wire`](crate::wire)), and a
//! `[worker.tool_output]` section given as data ([`Manifest`](crate::Manifest)). Each method is
//! the entry; the shape's own module does the work.

use crate::json::{cap_json, CappedJson, NotJson};
use crate::limit::Outcome;
use crate::manifest::ManifestError;
use crate::wire::{CappedBlocks, CappedResult, NotABlockList};

use super::ToolOutputLimits;

impl ToolOutputLimits {
    /// Caps `json`, a structured result of `tool` that was its `outcome`, to the tool's limit as
    /// [`cap_json`] does, and emits the truncation event ([`Truncation::record`](crate::Truncation::record)); `None` when it
    /// fits.
    ///
    /// ```
    /// use tool_output_cap::json::CappedJson;
    /// use tool_output_cap::{Outcome, ToolOutputLimits};
    ///
    /// let limits = ToolOutputLimits::default().with_tool("Search", 300)?;
    /// let hits: Vec<_> = (0..2000).map(|i| serde_json::json!({"path": format!("src/{i}.rs"), "line": i})).collect();
    /// let result = serde_json::json!({"hits": hits}).to_string();
    /// let Some(CappedJson::Json(capped, truncation)) = limits.cap_json("Search", &result, Outcome::Output)? else {
    ///     panic!("a list is shortened, and the shape kept");
    /// };
    /// let capped: serde_json::Value = serde_json::from_str(&capped)?;
    /// assert!(capped["hits"].as_array().unwrap().len() < 2000);
    /// assert_eq!(truncation.max_tokens, 300);
    ///
    /// // Many short fields and no list: no cut keeps the shape, and it is capped as text.
    /// let fields: serde_json::Map<_, _> = (0..500).map(|i| (format!("k{i}"), i.into())).collect();
    /// let stats = serde_json::Value::Object(fields).to_string();
    /// let capped = limits.cap_json("Search", &stats, Outcome::Output)?.unwrap();
    /// assert!(!capped.is_json() && capped.text().ends_with("refine your query"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cap_json(
        &self,
        tool: &str,
        json: &str,
        outcome: Outcome,
    ) -> Result<Option<CappedJson>, NotJson> {
        let limit = outcome.limit(self.limit_for(tool));
        let capped = cap_json(json, &limit, self.tokenizer())?;
        if let Some(capped) = &capped {
            capped.truncation().record(tool, outcome);
        }
        Ok(capped)
    }

    /// `result`, the JSON of an MCP `CallToolResult` of `tool`, capped to the tool's limit, each
    /// part as the table says, and each cut recorded ([`Truncation::record`](crate::Truncation::record)); `None` when
    /// nothing was cut, or `result` is no complete result. Every other field stays byte for byte.
    ///
    /// | field | what the cut does |
    /// | --- | --- |
    /// | `content` | its `text` blocks cut together as one text, other blocks kept |
    /// | `structuredContent` | cut to the same shape; left whole, with a warning, when no cut of it fits, since a client checks it against the tool's `outputSchema` |
    /// | `isError` | `true`: the cut keeps the tail |
    /// | `_meta` | gains [`META_KEY`](crate::wire::META_KEY) with the figures of each cut |
    /// | `resultType` | anything but `complete` is not a result yet: left as it is |
    ///
    /// ```
    /// use serde_json::{json, Value};
    /// use tool_output_cap::wire::META_KEY;
    /// use tool_output_cap::ToolOutputLimits;
    ///
    /// let listing: String = (0..5000).map(|i| format!("/srv/file_{i}.txt\n")).collect();
    /// let result = json!({
    ///     "content": [{"type": "text", "text": listing}],
    ///     "structuredContent": {"content": listing},
    /// });
    /// let limits = ToolOutputLimits::default().with_tool("search_files", 1000)?;
    /// let capped = limits.cap_call_tool_result("search_files", &result.to_string()).unwrap();
    /// let capped: Value = serde_json::from_str(&capped.json)?;
    /// assert!(capped["content"][0]["text"].as_str().unwrap().ends_with("refine your query"));
    /// assert_eq!(capped["_meta"][META_KEY]["content"]["max_tokens"], 1000);
    /// assert!(capped["_meta"][META_KEY]["structuredContent"]["dropped_tokens"].as_u64() > Some(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cap_call_tool_result(&self, tool: &str, result: &str) -> Option<CappedResult> {
        crate::wire::mcp::cap_call_tool_result(self, tool, result)
    }

    /// `blocks`, the JSON list of the content blocks of one result of `tool` that was its
    /// `outcome`, capped to the tool's limit by the cut of an MCP result's `content`, and the
    /// cut recorded ([`Truncation::record`](crate::Truncation::record)); `None` when it fits.
    ///
    /// The blocks are MCP's (`text`, `image`, `audio`, `resource`) or any other the table of
    /// [`wire`](crate::wire) names; images are priced by [`image_tokens`](Self::image_tokens).
    /// The text they carry is cut as one text, and the media fit what the limit leaves: scaled
    /// down, or the last giving way whole. Each block given back says which block it came from
    /// ([`CappedBlock::from`](crate::wire::CappedBlock::from)), for an agent framework's adapter
    /// to write its own blocks back.
    ///
    /// ```
    /// use serde_json::{json, Value};
    /// use tool_output_cap::{Outcome, ToolOutputLimits};
    ///
    /// let listing: String = (0..3000).map(|i| format!("src/module_{i}.rs\n")).collect();
    /// let blocks = json!([
    ///     {"type": "text", "text": "the files:"},
    ///     {"type": "text", "text": listing},
    ///     {"type": "text", "text": "the end"},
    /// ]);
    /// let limits = ToolOutputLimits::default().with_tool("Glob", 500)?;
    /// let capped = limits.cap_blocks("Glob", &blocks.to_string(), Outcome::Output)?.unwrap();
    /// let from: Vec<_> = capped.blocks.iter().map(|block| block.from).collect();
    /// assert_eq!(from, [Some(0), Some(1)], "the last block is wholly past the cut");
    /// let cut: Value = serde_json::from_str(&capped.blocks[1].json)?;
    /// assert!(cut["text"].as_str().unwrap().ends_with("refine your query"));
    /// assert_eq!(capped.truncation.max_tokens, 500);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cap_blocks(
        &self,
        tool: &str,
        blocks: &str,
        outcome: Outcome,
    ) -> Result<Option<CappedBlocks>, NotABlockList> {
        crate::wire::content::cap_blocks(self, tool, blocks, outcome)
    }

    /// The limits that a `[worker.tool_output]` section given as data sets: the manifest's keys
    /// and values in any serde format, such as a JSON object or a Python dict, checked as the
    /// manifest's are. An error names the key, such as `per_tool.Grep`. A relative
    /// `tokenizer_file` is read from the current folder.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_output_cap::{Keep, ToolOutputLimits};
    ///
    /// let section = json!({"default_max_tokens": 3000, "per_tool": {"Bash": {"max_tokens": 600, "keep": "tail"}}});
    /// let limits = ToolOutputLimits::from_section(section)?;
    /// assert_eq!(limits.max_tokens_for("Glob"), 3000);
    /// assert_eq!(limits.limit_for("Bash").keep(), Keep::Tail);
    ///
    /// let error = ToolOutputLimits::from_section(json!({"per_tool": {"Grep": 10}})).unwrap_err();
    /// assert_eq!(error.key(), Some("per_tool.Grep"));
    /// assert_eq!(error.message(), "must be at least 32 tokens (room for the note), found 10");
    /// # Ok::<(), tool_output_cap::ManifestError>(())
    /// ```
    pub fn from_section<'de, D: serde::Deserializer<'de>>(
        section: D,
    ) -> Result<Self, ManifestError> {
        crate::manifest::limits_of_section(section)
    }
}
