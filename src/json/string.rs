//! Cutting a structure by its longest string: the string cut as a text is, the rest whole.

use std::ops::Range;

use super::literal::decode_string;
use super::walk::splice;
use super::CutText;
use crate::cap::{cap, cut};
use crate::layout::{ending, note};
use crate::limit::{Keep, ToolLimit};
use crate::tokenizer::Tokenizer;
use crate::truncation::Truncation;

/// `json` with its string at `string` cut to make the whole fit `limit`; when that string is the
/// text of `known`, cut again from what its first cut kept. `None` when no cut makes it fit.
pub(super) fn cut_string(
    json: &str,
    string: Range<usize>,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    known: Option<CutText<'_>>,
) -> Option<(String, Truncation)> {
    let max_tokens = limit.max_tokens();
    // What the rest of the structure takes, counted without the string, and only as far as it
    // leaves the string the least budget: past that, no cut of the string can make it fit.
    let rest = splice(json, string.clone(), "\"\"");
    let room = max_tokens.checked_sub(ToolLimit::MIN_MAX_TOKENS)?;
    let rest = tokenizer.count_within(&rest, room)?;
    let mut budget = max_tokens - rest;
    let mut original = None;
    // JSON escapes change the count a little: cut again by what is over.
    for _ in 0..8 {
        let Ok(within) = limit.clone().with_max_tokens(budget) else {
            break;
        };
        let (cut, truncation) = match known.as_ref().and_then(|k| recut(k, &within, tokenizer)) {
            Some(recut) => recut,
            None => {
                let original = original.get_or_insert_with(|| decode_string(&json[string.clone()]));
                let mut cut = original.as_ref()?.clone();
                let truncation = cap(&mut cut, &within, tokenizer)?;
                (cut, truncation)
            }
        };
        let spliced = splice(json, string.clone(), &serde_json::to_string(&cut).ok()?);
        let tokens = tokenizer.count(&spliced);
        if tokens <= max_tokens {
            return Some((spliced, truncation));
        }
        budget = budget.saturating_sub(tokens - max_tokens);
    }
    None
}

/// The text of `known` cut to `limit` from what its first cut kept, which holds all a cut to a
/// smaller limit keeps: the kept part cut again, and the note counting what the whole text drops.
/// `None` with `head_tail`, whose parts are cut afresh.
fn recut(
    known: &CutText<'_>,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<(String, Truncation)> {
    let first = &known.cut;
    let (kept, kept_tokens) = match limit.keep() {
        Keep::Head => {
            let region = &known.text[..first.head_end];
            match cut(region, limit, tokenizer) {
                Some(again) => (&region[..again.head_end], again.truncation.kept_tokens),
                None => (region, first.truncation.kept_tokens),
            }
        }
        Keep::Tail => {
            let region = &known.text[first.tail_start..];
            match cut(region, limit, tokenizer) {
                Some(again) => (&region[again.tail_start..], again.truncation.kept_tokens),
                None => (region, first.truncation.kept_tokens),
            }
        }
        Keep::HeadTail => return None,
    };
    let original_tokens = first.truncation.original_tokens;
    let dropped_tokens = original_tokens - kept_tokens;
    let text = format!(
        "{kept}{}",
        ending(kept, &note(dropped_tokens, limit.hint()))
    );
    let truncation = Truncation {
        original_tokens,
        kept_tokens,
        dropped_tokens,
        max_tokens: limit.max_tokens(),
        keep: limit.keep(),
    };
    Some((text, truncation))
}
