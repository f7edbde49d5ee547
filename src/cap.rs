//! The cap itself: a pure function of a text, a limit and a tokenizer.

use crate::layout::Cut;
#[cfg(doc)]
use crate::layout::{line_break_after, note, CUT_MARKER};
#[cfg(doc)]
use crate::limit::Keep;
use crate::limit::ToolLimit;
use crate::search::{Extent, Search};
use crate::tokenizer::Tokenizer;
use crate::truncation::Truncation;

/// Caps `content` to `limit`, note included.
///
/// An output of at most `limit.max_tokens()` tokens is left byte for byte as it was and `None`
/// comes back; one whose byte length is within the limit is not even tokenized, since every
/// token of a byte-level BPE is at least one byte. A longer one is cut to what `limit.keep()`
/// keeps, and ends with the line [`note`]:
///
/// - [`Keep::Head`]: `head`, then `note` on a line of its own, `head` a prefix of the content;
/// - [`Keep::Tail`]: `tail`, then `note`, `tail` a suffix of it;
/// - [`Keep::HeadTail`]: `head`, the line [`CUT_MARKER`], `tail`, then `note`.
///
/// Each line after a part starts after a newline, unless the part is empty or already ends with
/// one ([`line_break_after`]): no blank line comes before the marker or the note. When what is
/// kept leaves a Markdown code fence open (```` ```yaml ```` and no closing ```` ``` ````), a line
/// that closes it comes before the note, within the limit, so that the note is not read as code.
///
/// Cuts fall on char boundaries, and on line boundaries when that gives up at most an eighth of
/// the budget. `N` in the note is the original count less the tokens of the kept parts, each
/// counted on its own. With [`Keep::Head`] the whole text is encoded once and only the end of
/// the head, where the note joins it, is counted again; the other strategies count their parts
/// again, which costs about their budget.
///
/// The bound holds whenever the note (with [`Keep::HeadTail`], the note and the marker) fits in
/// the limit, which it does from 32 tokens up with the built-in tokenizers, real models'
/// tokenizer files and a short hint (the manifest accepts no less). Below that nothing of the
/// content is kept, and the output is the note (and the marker) alone.
///
/// ```
/// use tool_output_cap::{cap, Encoding, Keep, ToolLimit};
///
/// let tokenizer = Encoding::O200kBase.tokenizer();
/// let mut log = (0..2000).map(|i| format!("compiling crate_{i}\n")).collect::<String>() + "error: linking failed";
/// let limit = ToolLimit::new(100)?.with_keep(Keep::Tail);
/// let truncation = cap(&mut log, &limit, tokenizer).unwrap();
/// assert!(log.ends_with(&format!(
///     "error: linking failed\ntruncated: {} tokens dropped, refine your query",
///     truncation.dropped_tokens
/// )));
/// # Ok::<(), tool_output_cap::LimitError>(())
/// ```
#[inline]
pub fn cap(
    content: &mut String,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
) -> Option<Truncation> {
    let cut = cut(content, limit, tokenizer)?;
    cut.apply(content);
    Some(cut.truncation)
}

/// Where [`cap`] would cut `content`, without cutting it: `None` if it is within `limit`.
///
/// For a caller that lays the kept parts out itself, say over several text blocks that were
/// counted as one text.
///
/// ```
/// use tool_output_cap::{cut, line_break_after, Encoding, Keep, ToolLimit, CUT_MARKER};
///
/// let listing: String = (0..5000).map(|i| format!("src/file_{i}.rs\n")).collect();
/// let limit = ToolLimit::new(200)?.with_keep(Keep::HeadTail);
/// let cut = cut(&listing, &limit, Encoding::O200kBase.tokenizer()).unwrap();
/// let (head, tail) = (&listing[..cut.head_end], &listing[cut.tail_start..]);
/// let marker = format!("{}{CUT_MARKER}\n", line_break_after(head));
/// let capped = format!("{head}{marker}{tail}{}{}", line_break_after(tail), cut.note);
/// let mut in_place = listing.clone();
/// cut.apply(&mut in_place);
/// assert_eq!(in_place, capped);
/// # Ok::<(), tool_output_cap::LimitError>(())
/// ```
pub fn cut(content: &str, limit: &ToolLimit, tokenizer: &dyn Tokenizer) -> Option<Cut> {
    cut_leaving_room(content, limit, tokenizer, "")
}

/// Where [`cut`] would cut `content` for a capped output that ends with `suffix` after the note,
/// such as the newline that ends a filter's output: within the limit with the suffix, which
/// ends [`Cut::note`]. `None` if `content` (without the suffix) is within `limit`.
///
/// ```
/// use tool_output_cap::{cut_leaving_room, Encoding, ToolLimit};
///
/// let tokenizer = Encoding::O200kBase.tokenizer();
/// let listing: String = (0..5000).map(|i| format!("src/file_{i}.rs\n")).collect();
/// let cut = cut_leaving_room(&listing, &ToolLimit::new(100)?, tokenizer, "\n").unwrap();
/// let capped = cut.capped(&listing);
/// assert!(capped.ends_with("refine your query\n"));
/// assert!(tokenizer.count(&capped) <= 100);
/// # Ok::<(), tool_output_cap::LimitError>(())
/// ```
pub fn cut_leaving_room(
    content: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    suffix: &str,
) -> Option<Cut> {
    if limit.holds_by_length(content) {
        return None;
    }
    Some(Search::new(content, limit, tokenizer, None, suffix)?.into_cut())
}

/// Where [`cut`] would cut an output of which `content` holds the start and the end, and
/// `whole` says the rest: what [`StreamedOutput`](crate::StreamedOutput) cuts. Each of the two
/// must be more tokens than `limit`, and the end must start where a piece starts after a line
/// break ([`Tokenizer::last_split`]), so that no search leaves the part it looks in. The note
/// ends with `suffix`, as with [`cut_leaving_room`].
pub(crate) fn cut_known(
    content: &str,
    limit: &ToolLimit,
    tokenizer: &dyn Tokenizer,
    whole: Extent,
    suffix: &str,
) -> Option<Cut> {
    Some(Search::new(content, limit, tokenizer, Some(whole), suffix)?.into_cut())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fence::closing_fence;
    use crate::layout::{note, CUT_MARKER};
    use crate::limit::Keep;
    use crate::tokenizer::Encoding;

    fn count(text: &str) -> usize {
        Encoding::O200kBase.tokenizer().count(text)
    }

    fn capped(text: &str, limit: &ToolLimit) -> (String, Option<Truncation>) {
        let mut content = text.to_owned();
        let truncation = cap(&mut content, limit, Encoding::O200kBase.tokenizer());
        (content, truncation)
    }

    #[test]
    fn an_output_within_the_limit_is_untouched() {
        let text = "one two three four five six seven eight nine ten ".repeat(20);
        let tokens = count(&text);
        assert!(
            text.len() > tokens,
            "the byte shortcut must not decide this case"
        );
        assert_eq!(
            capped(&text, &ToolLimit::new(tokens).unwrap()),
            (text.clone(), None)
        );
    }

    #[test]
    fn an_output_over_the_limit_ends_with_the_note() {
        let text = "src/some/module/file.rs\n".repeat(500);
        let (content, truncation) = capped(&text, &ToolLimit::new(200).unwrap());
        let truncation = truncation.expect("over the limit");
        let (kept, note_line) = content.rsplit_once('\n').unwrap();
        assert_eq!(note_line, note(truncation.dropped_tokens, None));
        assert!(text.starts_with(kept));
        assert_eq!(truncation.original_tokens, count(&text));
        assert_eq!(truncation.kept_tokens, count(kept));
        assert_eq!(truncation.keep, Keep::Head);
        assert!(count(&content) <= 200);
    }

    #[test]
    fn a_cut_inside_a_character_moves_back_to_its_start() {
        let text = "日本語🦀".repeat(400);
        let (content, truncation) = capped(&text, &ToolLimit::new(64).unwrap());
        let kept = content.rsplit_once('\n').unwrap().0;
        assert!(text.starts_with(kept));
        assert!(count(&content) <= 64);
        assert_eq!(truncation.unwrap().kept_tokens, count(kept));
    }

    #[test]
    fn a_cut_inside_a_line_moves_to_its_edge() {
        let text = "src/components/module/widget.rs\n".repeat(400);
        for keep in [Keep::Head, Keep::Tail, Keep::HeadTail] {
            let (content, _) = capped(&text, &ToolLimit::new(150).unwrap().with_keep(keep));
            let kept = content.rsplit_once('\n').unwrap().0;
            let lines: Vec<&str> = kept.lines().filter(|line| !line.is_empty()).collect();
            assert!(lines.len() > 10, "{keep}: {kept:?}");
            for line in lines {
                assert!(
                    line == "src/components/module/widget.rs" || line == CUT_MARKER,
                    "{keep}: half a path {line:?}"
                );
            }
        }
    }

    #[test]
    fn a_single_long_line_is_cut_inside() {
        let text = "x".repeat(100_000);
        let (content, truncation) = capped(&text, &ToolLimit::new(100).unwrap());
        assert!(truncation.unwrap().kept_tokens > 50);
        assert!(content.starts_with("xxxx"));
    }

    #[test]
    fn the_hint_ends_the_note() {
        let limit = ToolLimit::new(100)
            .unwrap()
            .with_hint("use a narrower pattern, e.g. src/**/*.rs")
            .unwrap();
        let (content, truncation) = capped(&"a/b.rs\n".repeat(1000), &limit);
        let dropped = truncation.unwrap().dropped_tokens;
        assert!(content.ends_with(&format!(
            "\ntruncated: {dropped} tokens dropped, refine your query: use a narrower pattern, e.g. src/**/*.rs"
        )));
        assert!(count(&content) <= 100);
    }

    #[test]
    fn no_blank_line_comes_before_the_note_or_the_marker() {
        let log = (0..2000)
            .map(|i| format!("compiling crate_{i}\n"))
            .collect::<String>();
        for keep in [Keep::Head, Keep::Tail, Keep::HeadTail] {
            let (content, truncation) = capped(&log, &ToolLimit::new(100).unwrap().with_keep(keep));
            let note_line = note(truncation.unwrap().dropped_tokens, None);
            let kept = content.strip_suffix(&note_line).expect("the note ends it");
            assert!(
                kept.ends_with('\n') && !kept.ends_with("\n\n"),
                "{keep}: {content:?}"
            );
            assert!(!content.contains("\n\n"), "{keep}: {content:?}");
        }
        // The log ends with a newline: the tail keeps it, and the note follows it.
        let (content, _) = capped(&log, &ToolLimit::new(100).unwrap().with_keep(Keep::Tail));
        assert!(
            content.contains("compiling crate_1999\ntruncated: "),
            "{content:?}"
        );
    }

    #[test]
    fn a_code_fence_left_open_is_closed_before_the_note() {
        // The shape of Playwright MCP's browser_snapshot result.
        let rows: String = (0..4000)
            .map(|i| format!("  - row \"Item {i}\" [ref=e{i}]:\n    - cell \"{i}\" [ref=c{i}]\n"))
            .collect();
        let snapshot = format!(
            "### Page\n- Page URL: http://127.0.0.1:8000/\n### Snapshot\n```yaml\n- table [ref=e1]:\n{rows}```\n"
        );
        for keep in [Keep::Head, Keep::HeadTail] {
            let (content, truncation) =
                capped(&snapshot, &ToolLimit::new(500).unwrap().with_keep(keep));
            let note_line = note(truncation.unwrap().dropped_tokens, None);
            assert!(
                content.ends_with(&format!("\n```\n{note_line}")),
                "{keep}: {content:?}"
            );
            assert!(count(&content) <= 500);
            let kept = content.strip_suffix(&format!("```\n{note_line}")).unwrap();
            assert_eq!(closing_fence(kept).as_deref(), Some("```"), "{keep}");
            assert_eq!(closing_fence(&content), None, "{keep}");
        }
        // A tail holds the fence's end but not its start, so that, read on its own, its last
        // line opens a fence: that one is closed too, and the note is not read as code.
        let (content, _) = capped(
            &snapshot,
            &ToolLimit::new(500).unwrap().with_keep(Keep::Tail),
        );
        let before_note = content.rsplit_once('\n').unwrap().0;
        assert!(before_note.ends_with("```\n```"), "{content:?}");
        assert_eq!(closing_fence(before_note), None);
        let log = "compiling\n".repeat(2000);
        let (content, _) = capped(&log, &ToolLimit::new(100).unwrap());
        assert!(!content.contains("```"));
    }

    #[test]
    fn empty_output_is_untouched() {
        assert_eq!(
            capped("", &ToolLimit::new(32).unwrap()),
            (String::new(), None)
        );
    }
}
