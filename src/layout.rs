//! How a capped output is laid out: the kept parts, the cut marker and the note, each line of
//! its own, and where a cut falls ([`Cut`]).

use std::borrow::Cow;

use crate::fence::closing_fence;
use crate::limit::{Keep, ToolLimit};
use crate::media::MediaKind;
use crate::tokenizer::Tokenizer;
use crate::truncation::Truncation;

/// The line that stands where [`Keep::HeadTail`] cut out the middle of an output.
pub const CUT_MARKER: &str = "[... cut here ...]";

/// What puts a line that follows `text` on a line of its own: a newline, or nothing when `text`
/// is empty or already ends with one. The cut marker and the note follow what they follow so,
/// with no blank line before them.
pub fn line_break_after(text: &str) -> &'static str {
    if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    }
}

/// The lines that end a capped output whose kept text is `kept`, from the line break after it:
/// the line that closes a Markdown code fence `kept` leaves open, if it leaves one, then `note`.
/// The one place the note is laid out, for a text and for a string of a JSON structure alike.
pub(crate) fn ending(kept: &str, note: &str) -> String {
    let fence = closing_fence(kept).map_or_else(String::new, |fence| fence + "\n");
    format!("{}{fence}{note}", line_break_after(kept))
}

/// What the note follows when `keep` keeps `head` and `tail`, read as the model reads it: with
/// [`Keep::HeadTail`], the marker between the parts (and with no tail, the marker's line ends
/// with a newline).
pub(crate) fn kept_read<'a>(keep: Keep, head: &'a str, tail: &'a str) -> Cow<'a, str> {
    match keep {
        Keep::Head => Cow::Borrowed(head),
        Keep::Tail => Cow::Borrowed(tail),
        Keep::HeadTail => Cow::Owned(lay_out(head, true, tail, "")),
    }
}

/// The note that ends a truncated output, without the newline before it.
pub fn note(dropped_tokens: usize, hint: Option<&str>) -> String {
    noted(&format!("{dropped_tokens} tokens dropped"), hint)
}

/// The note that ends a result of which media were dropped, `dropped_tokens` together: each
/// kind's `(kind, gone, of)` blocks that gave way, and `scaled`, how many images were scaled
/// down and to what long edge: `truncated: N tokens dropped (2 of 10 images; 8 scaled to
/// 1024 px), refine your query`.
pub(crate) fn media_note(
    dropped_tokens: usize,
    gone: &[(MediaKind, usize, usize)],
    scaled: Option<(usize, usize)>,
    hint: Option<&str>,
) -> String {
    let gone: Vec<String> = gone
        .iter()
        .map(|(kind, gone, of)| format!("{gone} of {of} {kind}"))
        .collect();
    let scaled = scaled.map(|(images, edge)| match gone.is_empty() {
        true if images == 1 => format!("1 image scaled to {edge} px"),
        true => format!("{images} images scaled to {edge} px"),
        false => format!("; {images} scaled to {edge} px"),
    });
    noted(
        &format!(
            "{dropped_tokens} tokens dropped ({}{})",
            gone.join(", "),
            scaled.unwrap_or_default()
        ),
        hint,
    )
}

/// The note, saying `dropped`.
fn noted(dropped: &str, hint: Option<&str>) -> String {
    match hint {
        Some(hint) => format!("truncated: {dropped}, refine your query: {hint}"),
        None => format!("truncated: {dropped}, refine your query"),
    }
}

/// Where an output over its limit is cut, and the note that ends it: what [`cut`](crate::cut)
/// finds and [`cap`](crate::cap) applies.
///
/// The capped output is `content[..head_end]`, then with [`Keep::HeadTail`] the line
/// [`CUT_MARKER`], then `content[tail_start..]`, and the note last, the marker and the note each
/// on a line of its own ([`line_break_after`]): for [`Keep::Head`] `tail_start` is the
/// content's length, for [`Keep::Tail`] `head_end` is 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The end of the kept head, a char boundary of the content.
    pub head_end: usize,
    /// The start of the kept tail, a char boundary of the content.
    pub tail_start: usize,
    /// The lines that end the capped output, without the newline before them: the line that
    /// closes a Markdown code fence the kept text leaves open, if it leaves one, and the note,
    /// then the suffix of [`cut_leaving_room`](crate::cut_leaving_room), if any.
    pub note: String,
    /// The figures of the cut.
    pub truncation: Truncation,
}

impl Cut {
    /// Whether the line [`CUT_MARKER`] stands between the head and the tail.
    pub fn has_marker(&self) -> bool {
        self.truncation.keep == Keep::HeadTail
    }

    /// The capped output of `content`, the text this cut was found in, built from the parts it
    /// keeps: what [`apply`](Self::apply) leaves in place.
    pub fn capped(&self, content: &str) -> String {
        lay_out(
            &content[..self.head_end],
            self.has_marker(),
            &content[self.tail_start..],
            &self.note,
        )
    }

    /// Cuts `content`, the text this cut was found in, in place.
    pub fn apply(&self, content: &mut String) {
        *content = self.capped(content);
    }

    /// This cut of `content` (found with no suffix) keeping less: its head up to `head_end`
    /// and its tail from `tail_start`, its figures and note counted again. For a caller that
    /// keeps whole what this cut would split, such as a block's labels. Within the limit when
    /// this cut is: it keeps a part of what this cut keeps, and the note's room was set aside
    /// for any count of dropped tokens.
    pub(crate) fn narrowed(
        &self,
        content: &str,
        (head_end, tail_start): (usize, usize),
        limit: &ToolLimit,
        tokenizer: &dyn Tokenizer,
    ) -> Cut {
        let (head_end, tail_start) = (head_end.min(self.head_end), tail_start.max(self.tail_start));
        let (head, tail) = (&content[..head_end], &content[tail_start..]);
        let kept_tokens = tokenizer.count(head) + tokenizer.count(tail);
        let dropped_tokens = self.truncation.original_tokens.saturating_sub(kept_tokens);
        let kept = kept_read(self.truncation.keep, head, tail);
        let note = ending(&kept, &note(dropped_tokens, limit.hint()));
        Cut {
            head_end,
            tail_start,
            note: note.trim_start_matches('\n').to_owned(),
            truncation: Truncation {
                kept_tokens,
                dropped_tokens,
                ..self.truncation
            },
        }
    }

    /// The kept text of each of several texts that were cut as one: `joined` is the texts
    /// joined by newlines, the text this cut was found in, and `lengths` their lengths in
    /// bytes. `None` stands for a text wholly cut out. The kept texts joined by newlines are
    /// [`capped`](Self::capped): the marker ends the head's last text, or stands in the text
    /// the middle was cut from, and the note ends the last text kept.
    ///
    /// For outputs made of several texts, such as an MCP result's text blocks, that are
    /// counted as one.
    ///
    /// ```
    /// use tool_output_cap::{cut, Encoding, ToolLimit};
    ///
    /// let blocks: Vec<String> = (0..3).map(|b| (0..400).map(|i| format!("{b}/{i}\n")).collect()).collect();
    /// let joined = blocks.join("\n");
    /// let cut = cut(&joined, &ToolLimit::new(500)?, Encoding::O200kBase.tokenizer()).unwrap();
    /// let kept = cut.split(&joined, &blocks.iter().map(String::len).collect::<Vec<_>>());
    /// assert!(kept[0].is_some() && kept[2].is_none());
    /// let kept: Vec<String> = kept.into_iter().flatten().collect();
    /// assert_eq!(kept.join("\n"), cut.capped(&joined));
    /// # Ok::<(), tool_output_cap::LimitError>(())
    /// ```
    pub fn split(&self, joined: &str, lengths: &[usize]) -> Vec<Option<String>> {
        let keep = self.truncation.keep;
        let mut kept = Vec::with_capacity(lengths.len());
        let (mut start, mut last_head, mut marked) = (0, None, false);
        for (text, &len) in lengths.iter().enumerate() {
            let end = start + len;
            let head = (keep != Keep::Tail && start <= self.head_end)
                .then(|| &joined[start..end.min(self.head_end)]);
            let tail = (keep != Keep::Head && end >= self.tail_start)
                .then(|| &joined[start.max(self.tail_start)..end]);
            kept.push(match (head, tail) {
                (Some(head), Some(tail)) => {
                    marked = true;
                    Some(lay_out(head, true, tail, ""))
                }
                (Some(head), None) => {
                    last_head = Some(text);
                    Some(head.to_owned())
                }
                (None, Some(tail)) => Some(tail.to_owned()),
                (None, None) => None,
            });
            start = end + 1;
        }
        // A head and a tail in different texts: the marker ends the head's last text.
        if let Some(text) = last_head
            .filter(|_| self.has_marker() && !marked)
            .and_then(|text| kept[text].as_mut())
        {
            *text = lay_out(text, false, "", CUT_MARKER);
        }
        if let Some(last) = kept.iter_mut().rev().find_map(Option::as_mut) {
            *last = lay_out(last, false, "", &self.note);
        }
        kept
    }
}

/// The one layout of a capped output: `head`, the line [`CUT_MARKER`] if there is a `marker`,
/// `tail`, then `ending` (the note, or any last line), each line after a part on a line of its
/// own ([`line_break_after`]); nothing after `tail` when `ending` is empty.
pub(crate) fn lay_out(head: &str, marker: bool, tail: &str, ending: &str) -> String {
    let mut capped = String::with_capacity(head.len() + tail.len() + ending.len() + 32);
    capped.push_str(head);
    if marker {
        capped.push_str(line_break_after(head));
        capped.push_str(CUT_MARKER);
        capped.push('\n');
    }
    capped.push_str(tail);
    if !ending.is_empty() {
        capped.push_str(line_break_after(&capped));
        capped.push_str(ending);
    }
    capped
}

#[cfg(test)]
mod tests {
    use super::media_note;
    use crate::media::MediaKind;

    #[test]
    fn the_media_note_says_what_gave_way_and_what_was_scaled() {
        let gone = [(MediaKind::Image, 3, 10)];
        assert_eq!(
            media_note(6120, &gone, Some((7, 1024)), None),
            "truncated: 6120 tokens dropped (3 of 10 images; 7 scaled to 1024 px), refine your query"
        );
        assert_eq!(
            media_note(766, &[], Some((1, 1024)), Some("ask for one page")),
            "truncated: 766 tokens dropped (1 image scaled to 1024 px), refine your query: ask for one page"
        );
        assert_eq!(
            media_note(1532, &[], Some((2, 1280)), None),
            "truncated: 1532 tokens dropped (2 images scaled to 1280 px), refine your query"
        );
        let gone = [(MediaKind::Pdf, 1, 1), (MediaKind::Audio, 2, 3)];
        assert_eq!(
            media_note(9000, &gone, None, None),
            "truncated: 9000 tokens dropped (1 of 1 PDFs, 2 of 3 audio blocks), refine your query"
        );
    }
}
