//! Cuts already made, so that a history sent again on every turn is not counted again.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use crate::image::ImageTokens;
use crate::limit::ToolLimit;
use crate::truncation::Truncation;

/// The seed of the results' hashes: drawn once per process, so that the hash of a result is not
/// known before it is read.
static SEED: LazyLock<u64> = LazyLock::new(|| RandomState::new().hash_one("tool-output-cap"));

/// What a tool result's cut depends on: its JSON as sent (by a seeded 128-bit XXH3 hash and its
/// length), how it is read, and the limit it is cut to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Key {
    json_hash: u128,
    json_len: usize,
    max_tokens: usize,
    keep: crate::Keep,
    hint: Option<Arc<str>>,
    shape: &'static str,
    images: Option<ImageTokens>,
}

impl Key {
    pub(super) fn new(
        json: &str,
        limit: &ToolLimit,
        shape: &'static str,
        images: Option<ImageTokens>,
    ) -> Self {
        Key {
            shape,
            images,
            json_hash: twox_hash::XxHash3_128::oneshot_with_seed(*SEED, json.as_bytes()),
            json_len: json.len(),
            max_tokens: limit.max_tokens,
            keep: limit.keep,
            hint: limit.hint.clone(),
        }
    }

    /// The key of what the result `json` takes under `limit`, alone, whose entry is that count.
    pub(super) fn of_demand(json: &str, limit: &ToolLimit) -> Self {
        Key {
            shape: "demand",
            ..Key::new(json, limit, "", None)
        }
    }

    /// The key of a piece of a request's `text` outside its tool results, whose entry is its count.
    pub(super) fn of_text(text: &str) -> Self {
        Key {
            shape: "text outside the tool results",
            json_hash: twox_hash::XxHash3_128::oneshot_with_seed(*SEED, text.as_bytes()),
            json_len: text.len(),
            max_tokens: 0,
            keep: crate::Keep::Head,
            hint: None,
            images: None,
        }
    }
}

/// What is known of a result under a limit: its cut, the JSON that replaces it and its figures
/// (`None` within its limit), and, under a request's budget, its tokens as it goes up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) cut: Option<(Arc<str>, Truncation)>,
    pub(super) tokens: Option<usize>,
}

/// A bounded map of results to their cuts; the oldest go first when it is full. What is being
/// made for one request is made once: another that needs it meanwhile waits for it.
#[derive(Debug)]
pub(super) struct CutCache {
    max_bytes: usize,
    inner: Mutex<Inner>,
    /// What is being made, by its key.
    making: Mutex<HashMap<Key, Arc<OnceLock<Entry>>>>,
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
            making: Mutex::default(),
        }
    }

    /// The bytes it holds, as [`insert`](Self::insert) counts them.
    pub(super) fn bytes(&self) -> usize {
        lock(&self.inner).bytes
    }

    pub(super) fn get(&self, key: &Key) -> Option<Entry> {
        lock(&self.inner).entries.get(key).cloned()
    }

    /// The entry of `key`, and whether it was there or made by another caller; else `make`s it,
    /// once however many callers ask for it at the same time, and keeps it.
    pub(super) fn get_or_make(&self, key: Key, make: impl FnOnce() -> Entry) -> (Entry, bool) {
        let making = {
            let mut making = lock(&self.making);
            // Looked up under this lock: a maker keeps its entry before it lets go of its key.
            if let Some(entry) = self.get(&key) {
                return (entry, true);
            }
            Arc::clone(making.entry(key.clone()).or_default())
        };
        let mut made = false;
        let entry = making
            .get_or_init(|| {
                made = true;
                make()
            })
            .clone();
        if made {
            self.insert(key.clone(), entry.clone());
            lock(&self.making).remove(&key);
        }
        (entry, !made)
    }

    /// The tokens of `text` in `tokenizer`, counted once and kept (as [`Key::of_text`]).
    pub(super) fn count(&self, text: &str, tokenizer: &dyn crate::Tokenizer) -> usize {
        let (entry, _) = self.get_or_make(Key::of_text(text), || Entry {
            cut: None,
            tokens: Some(tokenizer.count(text)),
        });
        entry.tokens.unwrap_or_default()
    }

    pub(super) fn insert(&self, key: Key, entry: Entry) {
        let size = size_of(&entry);
        if size > self.max_bytes {
            return;
        }
        let mut inner = lock(&self.inner);
        while inner.bytes + size > self.max_bytes {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            if let Some(entry) = inner.entries.remove(&oldest) {
                inner.bytes -= size_of(&entry);
            }
        }
        let key = Arc::new(key);
        if inner.entries.insert(Arc::clone(&key), entry).is_none() {
            inner.order.push_back(key);
            inner.bytes += size;
        }
    }
}

/// `mutex` locked, whether or not a thread panicked holding it: what it guards is whole at
/// every point a panic can reach.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The bytes an entry holds: its cut, and about what its key and the map's slot take.
fn size_of(entry: &Entry) -> usize {
    128 + entry.cut.as_ref().map_or(0, |(json, _)| json.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Keep;

    fn cut(text: &str) -> Entry {
        let truncation = Truncation {
            original_tokens: 100,
            kept_tokens: 40,
            dropped_tokens: 60,
            max_tokens: 50,
            keep: Keep::Head,
        };
        Entry {
            cut: Some((Arc::from(text), truncation)),
            tokens: None,
        }
    }

    #[test]
    fn the_oldest_cuts_go_first_when_the_cache_is_full_and_one_too_big_is_not_kept() {
        let limit = ToolLimit::new(50).unwrap();
        let key = |json: &str| Key::new(json, &limit, "text", None);
        // Room for three cuts of 10 bytes.
        let cache = CutCache::new(3 * size_of(&cut("0123456789")));
        for json in ["\"a\"", "\"b\"", "\"c\"", "\"d\""] {
            cache.insert(key(json), cut("0123456789"));
        }
        assert_eq!(cache.get(&key("\"a\"")), None, "the oldest went");
        for json in ["\"b\"", "\"c\"", "\"d\""] {
            assert_eq!(cache.get(&key(json)), Some(cut("0123456789")), "{json}");
        }
        // Another limit is another key.
        let other = ToolLimit::new(60).unwrap();
        assert_eq!(cache.get(&Key::new("\"d\"", &other, "text", None)), None);
        cache.insert(key("\"e\""), cut(&"x".repeat(1000)));
        assert_eq!(
            cache.get(&key("\"e\"")),
            None,
            "a cut bigger than the cache"
        );
        assert!(
            cache.get(&key("\"b\"")).is_some(),
            "and nothing went for it"
        );
    }
}
