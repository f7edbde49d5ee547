//! MCP (`tools/call`): a `CallToolResult`, as a server sends it, capped by
//! [`ToolOutputLimits::cap_call_tool_result`] with the block cut every shape shares.
//!
//! `structuredContent` is left whole when no cut of its shape fits, because a client checks it
//! against the tool's `outputSchema` (the official SDKs refuse a result that does not match), and
//! MCP before 2026-07-28 allows only an object there.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::blocks::cut_blocks;
use super::found::cap_shape;
use super::raw::{fields, string, Splices};
use crate::json::CutText;
use crate::limit::Outcome;
use crate::limits::ToolOutputLimits;
use crate::truncation::Truncation;

/// The `_meta` key under which a capped result carries the figures of its cuts:
/// `{"content": Truncation, "structuredContent": Truncation}`, each only when cut.
pub const META_KEY: &str = "tool-output-cap/truncation";

/// A `CallToolResult` capped: its JSON, and the figures of each part cut.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CappedResult {
    /// The result, with `content` and `structuredContent` cut and the figures in `_meta`.
    pub json: String,
    /// The cut of the text blocks, if they were cut.
    pub content: Option<Truncation>,
    /// The cut of `structuredContent`, if it was cut.
    pub structured_content: Option<Truncation>,
}

/// `result`, the JSON of an MCP `CallToolResult` of `tool`, capped to its limit in `limits`:
/// [`ToolOutputLimits::cap_call_tool_result`].
pub(crate) fn cap_call_tool_result(
    limits: &ToolOutputLimits,
    tool: &str,
    result: &str,
) -> Option<CappedResult> {
    let raw: &RawValue = serde_json::from_str(result).ok()?;
    let result = raw.get();
    let fields = fields(raw)?;
    let result_type = fields.get("resultType").and_then(|kind| string(kind));
    if result_type.is_some_and(|kind| kind != "complete") {
        return None;
    }
    let outcome = match fields.get("isError") {
        Some(error) if error.get() == "true" => Outcome::Error,
        _ => Outcome::Output,
    };
    let limit = outcome.limit(limits.limit_for(tool));
    let tokenizer = limits.tokenizer();
    let mut splices = Splices::default();
    let blocks = fields.get("content").and_then(|content| {
        let blocks = cut_blocks(content, "text", &limit, tokenizer, limits.image_tokens())?;
        Some((content, blocks))
    });
    if let Some((content, blocks)) = &blocks {
        splices.replace(result, content.get(), blocks.json.as_str().into());
    }
    let known = blocks.as_ref().and_then(|(_, blocks)| {
        Some(CutText {
            text: &blocks.joined,
            cut: blocks.text_cut.as_ref()?,
        })
    });
    let structured = fields.get("structuredContent").and_then(|value| {
        let capped = cap_shape(value, tool, &limit, tokenizer, known, "structuredContent")?;
        let (json, truncation) = capped.ok()?;
        splices.replace(result, value.get(), json.into());
        Some(truncation)
    });
    let content = blocks.map(|(_, blocks)| blocks.truncation);
    let mut figures = Map::new();
    for (part, truncation) in [("content", content), ("structuredContent", structured)] {
        if let Some(truncation) = truncation {
            truncation.record(tool, outcome);
            figures.insert(part.to_owned(), serde_json::to_value(truncation).ok()?);
        }
    }
    if figures.is_empty() {
        return None;
    }
    with_figures(&mut splices, result, fields.get("_meta").copied(), figures)?;
    Some(CappedResult {
        json: splices.apply(result)?,
        content,
        structured_content: structured,
    })
}

/// Puts `figures` under [`META_KEY`] in the result's `_meta`, `meta` if it has one, or in a new
/// `_meta` at the end of `result`; the other keys of `_meta` stay as they were, byte for byte.
fn with_figures(
    splices: &mut Splices,
    result: &str,
    meta: Option<&RawValue>,
    figures: Map<String, Value>,
) -> Option<()> {
    let figures = Value::Object(figures).to_string();
    let entry = format!("{}:{figures}", Value::from(META_KEY));
    let Some(meta) = meta else {
        let end = &result[result.len() - 1..];
        splices.replace(result, end, format!(",\"_meta\":{{{entry}}}}}").into());
        return Some(());
    };
    // A `_meta` that is not an object (`null`) is replaced by one.
    let fields = fields(meta).unwrap_or_default();
    match fields.get(META_KEY) {
        Some(old) => splices.replace(result, old.get(), figures.into()),
        None if fields.is_empty() => {
            splices.replace(result, meta.get(), format!("{{{entry}}}").into())
        }
        None => splices.replace(result, &meta.get()[..1], format!("{{{entry},").into()),
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::META_KEY;
    use crate::ToolOutputLimits;

    fn capped(result: Value) -> Value {
        let listing: String = (0..3000).map(|i| format!("/srv/file_{i}.txt\n")).collect();
        let mut result = result;
        result["content"] = json!([{"type": "text", "text": listing}]);
        let limits = ToolOutputLimits::new(200).unwrap();
        let capped = limits
            .cap_call_tool_result("find", &result.to_string())
            .unwrap();
        serde_json::from_str(&capped.json).unwrap()
    }

    #[test]
    fn the_figures_go_in_meta_whatever_meta_was_and_its_keys_stay() {
        let figures = |result: &Value| result["_meta"][META_KEY]["content"]["max_tokens"].clone();
        assert_eq!(figures(&capped(json!({}))), 200);
        assert_eq!(figures(&capped(json!({"_meta": null}))), 200);
        assert_eq!(figures(&capped(json!({"_meta": {}}))), 200);
        let kept = capped(json!({"_meta": {"trace": "t-1", META_KEY: {"old": true}}}));
        assert_eq!(figures(&kept), 200);
        assert_eq!(kept["_meta"]["trace"], "t-1");
        assert!(kept["_meta"][META_KEY]["old"].is_null());
    }

    #[test]
    fn a_result_not_complete_yet_is_left_as_it_is() {
        let listing = "x\n".repeat(10_000);
        let result =
            json!({"resultType": "input_required", "content": [{"type": "text", "text": listing}]});
        let limits = ToolOutputLimits::new(200).unwrap();
        assert!(limits
            .cap_call_tool_result("find", &result.to_string())
            .is_none());
    }
}
