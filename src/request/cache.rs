//! Cuts already made, so that a history sent again on every turn is not counted again.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::limit::ToolLimit;
use crate::tool::Truncation;

/// What a tool result's cut depends on: its JSON, as sent, how it is read, and the limit it is
/// cut to.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    pub(super) json: Box<str>,
    pub(super) max_tokens: usize,
    pub(super) keep: crate::Keep,
    pub(super) hint: Option<Arc<str>>,
    pub(super) shape: &'static str,
}

impl Key {
    pub(super) fn new(json: &str, limit: &ToolLimit, shape: &'static str) -> Self {
        Key {
            shape,
            json: json.into(),
            max_tokens: limit.max_tokens,
            keep: limit.keep,
            hint: limit.hint.clone(),
        }
    }
}

/// A cut: the JSON that replaces a result and its figures, or `None` for a result within its limit.
pub(super) type Entry = Option<(Arc<str>, Truncation)>;

/// A bounded map of results to their cuts; the oldest go first when it is full.
#[derive(Debug)]
pub(super) struct CutCache {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<Arc<Key>, Entry>,
    order: VecDeque<Arc<Key>>,
    bytes: usize,
}

impl CutCache {
    pub(super) fn new(max_bytes: usize) -> Self {
        CutCache {
            max_bytes,
            inner: Mutex::default(),
        }
    }

    pub(super) fn get(&self, key: &Key) -> Option<Entry> {
        let inner = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        inner.entries.get(key).cloned()
    }

    pub(super) fn insert(&self, key: Key, entry: Entry) {
        let size = size_of(&key, &entry);
        if size > self.max_bytes {
            return;
        }
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        while inner.bytes + size > self.max_bytes {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            if let Some(entry) = inner.entries.remove(&oldest) {
                inner.bytes -= size_of(&oldest, &entry);
            }
        }
        let key = Arc::new(key);
        if inner.entries.insert(Arc::clone(&key), entry).is_none() {
            inner.order.push_back(key);
            inner.bytes += size;
        }
    }
}

fn size_of(key: &Key, entry: &Entry) -> usize {
    key.json.len() + entry.as_ref().map_or(0, |(json, _)| json.len())
}
