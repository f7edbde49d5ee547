//! The JSON-RPC around an MCP result: which response carries a `CallToolResult` (a `tools/call`
//! answer, or a task's), and the line with it capped. The cap itself is the library's
//! ([`ToolOutputLimits::cap_call_tool_result`]); every field it does not touch stays byte for
//! byte.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde_json::value::RawValue;
use tool_output_cap::ToolOutputLimits;

use crate::pending::{string, Carries};

/// A JSON object whose values are kept as they came, borrowed from the line, but those the cap
/// writes anew: capping a line holds no copy of what it leaves.
type Object<'a> = IndexMap<String, Cow<'a, RawValue>>;

/// What a response the proxy waited for turned out to be.
#[derive(Debug, PartialEq)]
pub(crate) enum Response {
    /// Nothing to cap: forward it as it came.
    Unchanged,
    /// A task-augmented call's `CreateTaskResult`: the result comes later for this task id.
    Task(String),
    /// The capped line, without its line end.
    Capped(String),
}

/// Caps the `CallToolResult` of `tool` in the response `line` to its limit in `limits`.
pub(crate) fn cap_response(
    line: &str,
    carries: Carries,
    tool: &str,
    limits: &ToolOutputLimits,
) -> Response {
    let Some(mut response) = object_of(line) else {
        return Response::Unchanged;
    };
    let Some(result) = response.get("result").and_then(object) else {
        return Response::Unchanged;
    };
    let capped = match carries {
        Carries::CallToolResult if !result.contains_key("content") => {
            return task_id(&result).map_or(Response::Unchanged, Response::Task);
        }
        Carries::CallToolResult => capped_result(&response["result"], tool, limits),
        Carries::Task => capped_task(result, tool, limits),
    };
    let Some(capped) = capped else {
        return Response::Unchanged;
    };
    response.insert("result".to_owned(), capped);
    Response::Capped(serde_json::to_string(&response).expect("JSON values serialize"))
}

/// A completed task's result, its `result` capped; `None` when nothing was cut.
fn capped_task<'a>(
    mut task: Object<'a>,
    tool: &str,
    limits: &ToolOutputLimits,
) -> Option<Cow<'a, RawValue>> {
    let completed = task.get("status").and_then(|s| string(s));
    if completed.as_deref() != Some("completed") {
        return None;
    }
    let inner = capped_result(task.get("result")?, tool, limits)?;
    task.insert("result".to_owned(), inner);
    Some(Cow::Owned(serde_json::value::to_raw_value(&task).ok()?))
}

/// `result` capped by the library; `None` when nothing was cut.
fn capped_result(
    result: &RawValue,
    tool: &str,
    limits: &ToolOutputLimits,
) -> Option<Cow<'static, RawValue>> {
    let capped = limits.cap_call_tool_result(tool, result.get())?;
    RawValue::from_string(capped.json).ok().map(Cow::Owned)
}

/// The task id of a `CreateTaskResult`: `task.taskId`, or `taskId`.
fn task_id(result: &Object) -> Option<String> {
    let task = result.get("task").and_then(object);
    task.as_ref()
        .and_then(|task| task.get("taskId"))
        .or_else(|| result.get("taskId"))
        .and_then(|id| string(id))
}

/// The object `json`, its values borrowed from it.
fn object_of(json: &str) -> Option<Object<'_>> {
    let fields: IndexMap<String, &RawValue> = serde_json::from_str(json).ok()?;
    Some(
        fields
            .into_iter()
            .map(|(key, value)| (key, Cow::Borrowed(value)))
            .collect(),
    )
}

/// The object `value` of a line, its values borrowed from the line.
fn object<'a>(value: &Cow<'a, RawValue>) -> Option<Object<'a>> {
    match value {
        Cow::Borrowed(value) => object_of(value.get()),
        Cow::Owned(_) => None,
    }
}
