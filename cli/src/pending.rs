//! The host's calls that wait for a result, and what the proxy reads of a message to know them:
//! state of its own, whatever carries the lines.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::lenient;

/// How many calls (and tasks) may wait for their result at once; past that the oldest is
/// forgotten, and its result passes uncapped.
pub(crate) const MAX_PENDING: usize = 4096;

/// Which result a response carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carries {
    /// A `CallToolResult`, or a `CreateTaskResult` (`tools/call`, `tasks/result`).
    CallToolResult,
    /// A task whose `result` is the `CallToolResult` once its status is `completed`
    /// (`tasks/get`).
    Task,
}

/// The fields a message is routed by; the rest is skipped unparsed.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(borrow, default)]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(crate) params: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    /// The envelope of a line, read with [`lenient::readable`], if it is a JSON object.
    pub(crate) fn of(line: &'a str) -> Option<Self> {
        serde_json::from_str(line).ok()
    }

    /// The id as a key that equal ids share: `s` and the string, or `n` and the number as
    /// written.
    pub(crate) fn id_key(&self) -> Option<String> {
        id_key(self.id?)
    }

    /// The string field `name` of the params.
    pub(crate) fn param(&self, name: &str) -> Option<&'a RawValue> {
        let params: IndexMap<Cow<'a, str>, &'a RawValue> =
            serde_json::from_str(self.params?.get()).ok()?;
        params.get(name).copied()
    }
}

/// The key of a JSON-RPC id: strings and integers; `None` for anything else.
pub(crate) fn id_key(id: &RawValue) -> Option<String> {
    let text = id.get();
    if text.starts_with('"') {
        let id: String = serde_json::from_str(text).ok()?;
        Some(format!("s{id}"))
    } else if text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        Some(format!("n{text}"))
    } else {
        None
    }
}

/// A string JSON value, decoded.
pub(crate) fn string(value: &RawValue) -> Option<String> {
    tool_output_cap::json::decode_string(value.get())
}

/// A call waiting for its result: the tool, and which result the response carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Waiting {
    pub(crate) tool: String,
    pub(crate) carries: Carries,
}

/// The host's calls waiting for a result, by id, and the tool of each task, by task id.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    calls: Bounded<Waiting>,
    tasks: Bounded<String>,
}

impl Pending {
    /// Notes a host message: a `tools/call`, `tasks/result` or `tasks/get` to wait for, or a
    /// cancellation.
    pub(crate) fn note_host_message(&mut self, line: &[u8]) {
        let line = lenient::readable(line);
        let Some(message) = Envelope::of(&line) else {
            return;
        };
        let Some(method) = message.method.as_deref() else {
            return;
        };
        let waiting = match method {
            "notifications/cancelled" => {
                if let Some(id) = message.param("requestId").and_then(id_key) {
                    self.calls.remove(&id);
                }
                return;
            }
            "tools/call" => message.param("name").and_then(string).map(|tool| Waiting {
                tool,
                carries: Carries::CallToolResult,
            }),
            "tasks/result" | "tasks/get" => message
                .param("taskId")
                .and_then(string)
                .and_then(|task| self.tasks.get(&task).cloned())
                .map(|tool| Waiting {
                    tool,
                    carries: if method == "tasks/get" {
                        Carries::Task
                    } else {
                        Carries::CallToolResult
                    },
                }),
            _ => None,
        };
        if let (Some(waiting), Some(id)) = (waiting, message.id_key()) {
            self.calls.insert(id, waiting);
        }
    }

    /// Notes that the result of `tool`'s call comes later, for the task `task`.
    pub(crate) fn note_task(&mut self, task: String, tool: String) {
        self.tasks.insert(task, tool);
    }

    /// Whether a call waits for its result.
    pub(crate) fn waits(&self) -> bool {
        !self.calls.is_empty()
    }

    /// The call a server message answers, if it is the response to one that waits.
    pub(crate) fn take_response(&mut self, line: &[u8]) -> Option<Waiting> {
        if self.calls.is_empty() {
            return None;
        }
        let line = lenient::readable(line);
        let message = Envelope::of(&line)?;
        if message.method.is_some() {
            // A request or notification of the server's own: another id space.
            return None;
        }
        self.calls.remove(&message.id_key()?)
    }
}

/// A map that holds at most [`MAX_PENDING`] entries, forgetting the oldest.
#[derive(Debug)]
struct Bounded<V> {
    entries: HashMap<String, (u64, V)>,
    order: VecDeque<(u64, String)>,
    next: u64,
}

impl<V> Default for Bounded<V> {
    fn default() -> Self {
        Bounded {
            entries: HashMap::new(),
            order: VecDeque::new(),
            next: 0,
        }
    }
}

impl<V> Bounded<V> {
    fn insert(&mut self, key: String, value: V) {
        while self.entries.len() >= MAX_PENDING && !self.entries.contains_key(&key) {
            let Some((seq, oldest)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&oldest).is_some_and(|(at, _)| *at == seq) {
                self.entries.remove(&oldest);
                tracing::warn!(
                    id = oldest.get(1..),
                    "more than {MAX_PENDING} calls wait for a result; the oldest will pass uncapped"
                );
            }
        }
        self.next += 1;
        self.order.push_back((self.next, key.clone()));
        self.entries.insert(key, (self.next, value));
        if self.order.len() > 2 * MAX_PENDING {
            let entries = &self.entries;
            self.order
                .retain(|(seq, key)| entries.get(key).is_some_and(|(at, _)| at == seq));
        }
    }

    fn get(&self, key: &str) -> Option<&V> {
        self.entries.get(key).map(|(_, value)| value)
    }

    fn remove(&mut self, key: &str) -> Option<V> {
        self.entries.remove(key).map(|(_, value)| value)
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: usize) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"Glob"}}}}"#)
            .into_bytes()
    }

    fn response(id: usize) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#).into_bytes()
    }

    #[test]
    fn the_pending_calls_are_bounded_and_the_oldest_is_forgotten() {
        let mut pending = Pending::default();
        for id in 0..MAX_PENDING + 100 {
            pending.note_host_message(&call(id));
        }
        assert_eq!(pending.calls.entries.len(), MAX_PENDING);
        assert!(pending.calls.order.len() <= 2 * MAX_PENDING);
        assert_eq!(pending.take_response(&response(99)), None, "forgotten");
        let waiting = pending.take_response(&response(100)).expect("still waits");
        assert_eq!(waiting.tool, "Glob");
        assert_eq!(pending.take_response(&response(100)), None, "answered once");
        // Answered calls leave no trace behind.
        for round in 0..10 * MAX_PENDING {
            pending.note_host_message(&call(1_000_000 + round));
            assert!(pending
                .take_response(&response(1_000_000 + round))
                .is_some());
        }
        assert!(pending.calls.order.len() <= 2 * MAX_PENDING);
    }

    #[test]
    fn a_server_request_with_a_pending_id_is_not_taken_for_the_response() {
        let mut pending = Pending::default();
        pending.note_host_message(&call(1));
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert_eq!(pending.take_response(request), None);
        assert!(pending.take_response(&response(1)).is_some());
        let cancelled =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        pending.note_host_message(&call(2));
        pending.note_host_message(cancelled);
        assert_eq!(pending.take_response(&response(2)), None);
    }
}
