//! A block's labels: the strings that name what it carries and reach the model with it, an MCP
//! resource's `uri` and `mimeType`, a document's `title` and `context`, a search result's
//! `title` and `source`. They count, a block of text's with its text ([`blocks`](super::blocks)),
//! a block of media's in its price ([`media`](super::media)), and are never cut: a block keeps
//! them whole or goes.

use super::raw::{string, Fields};
use crate::tokenizer::Tokenizer;

/// The keys of the labels of each kind of block that has them, in the order they count.
const LABELS: [(&str, &[&str]); 3] = [
    ("resource", &["uri", "mimeType"]),
    ("search_result", &["title", "source"]),
    ("document", &["title", "context"]),
];

/// The labels of a block of the type `kind`, from `holder`, the fields that hold them (the
/// block's, or an MCP resource's `resource`'s), in order.
pub(super) fn labels(kind: &str, holder: &Fields<'_>) -> Vec<String> {
    let keys = LABELS.iter().find(|(of, _)| *of == kind);
    let keys = keys.map_or(&[][..], |(_, keys)| keys);
    let labels = keys.iter().filter_map(|key| string(holder.get(*key)?));
    labels.collect()
}

/// The tokens of `labels`, taken one to a line.
pub(super) fn tokens(labels: &[String], tokenizer: &dyn Tokenizer) -> usize {
    match labels {
        [] => 0,
        labels => tokenizer.count(&labels.join("\n")),
    }
}
