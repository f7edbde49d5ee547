//! The cap itself: a pure function of a text, a budget and a tokenizer.

use crate::tokenizer::Tokenizer;
use crate::tool::Truncation;

/// The note that ends a truncated output, without the newline before it.
pub fn note(dropped_tokens: usize) -> String {
    format!("truncated: {dropped_tokens} tokens dropped, refine your query")
}

/// Caps `content` to `max_tokens` tokens, note included.
///
/// An output of at most `max_tokens` tokens is left byte for byte as it was and `None` comes
/// back; one whose byte length is at most `max_tokens` is not even tokenized, since every token
/// of a byte-level BPE is at least one byte. A longer one becomes `kept + "\n" + note`, where
/// `kept` is the longest prefix that leaves room for the note, cut on a char boundary, and
/// the [`Truncation`] says how many tokens went. The whole text is encoded once; only the end
/// of `kept`, where the note joins it, is counted again.
///
/// The bound holds whenever the note alone fits in `max_tokens`, which it does from 32 tokens
/// up with the built-in tokenizers (the manifest accepts no less).
///
/// ```
/// use tool_output_cap::{cap, Encoding};
///
/// let tokenizer = Encoding::O200kBase.tokenizer();
/// let mut listing = "src/some/deeply/nested/module/file.rs\n".repeat(1000);
/// let truncation = cap(&mut listing, 100, tokenizer).unwrap();
/// assert!(listing.ends_with(&format!(
///     "\ntruncated: {} tokens dropped, refine your query",
///     truncation.dropped_tokens
/// )));
/// ```
#[inline]
pub fn cap(
    content: &mut String,
    max_tokens: usize,
    tokenizer: &dyn Tokenizer,
) -> Option<Truncation> {
    // Every token is at least one byte.
    if content.len() <= max_tokens {
        return None;
    }
    cap_tokens(content, max_tokens, tokenizer)
}

/// [`cap`] of an output that may be over its limit.
fn cap_tokens(
    content: &mut String,
    max_tokens: usize,
    tokenizer: &dyn Tokenizer,
) -> Option<Truncation> {
    // Room for the note: no more tokens can be dropped than the text has bytes.
    let reserve = tokenizer.count(&format!("\n{}", note(content.len())));
    let first = tokenizer.prefix(content, max_tokens.saturating_sub(reserve));
    let original_tokens = first.total_tokens;
    if original_tokens <= max_tokens {
        return None;
    }
    let (mut kept_len, mut kept_tokens) = (first.len, first.tokens);
    let line = loop {
        let line = format!("\n{}", note(original_tokens - kept_tokens));
        let tokens = tokenizer.count_joined(&content[..kept_len], kept_tokens, &line);
        if tokens <= max_tokens || kept_tokens == 0 {
            break line;
        }
        // The seam merged into more tokens than reserved: cut the kept text again.
        let shorter = kept_tokens.saturating_sub(tokens - max_tokens);
        let prefix = tokenizer.prefix(&content[..kept_len], shorter);
        (kept_len, kept_tokens) = (prefix.len, prefix.tokens);
    };
    content.truncate(kept_len);
    content.push_str(&line);
    Some(Truncation {
        original_tokens,
        kept_tokens,
        dropped_tokens: original_tokens - kept_tokens,
        max_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Encoding;

    fn count(text: &str) -> usize {
        Encoding::O200kBase.tokenizer().count(text)
    }

    fn capped(text: &str, max_tokens: usize) -> (String, Option<Truncation>) {
        let mut content = text.to_owned();
        let truncation = cap(&mut content, max_tokens, Encoding::O200kBase.tokenizer());
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
        assert_eq!(capped(&text, tokens), (text.clone(), None));
    }

    #[test]
    fn an_output_over_the_limit_ends_with_the_note() {
        let text = "src/some/module/file.rs\n".repeat(500);
        let (content, truncation) = capped(&text, 200);
        let truncation = truncation.expect("over the limit");
        let (kept, note_line) = content.rsplit_once('\n').unwrap();
        assert_eq!(note_line, note(truncation.dropped_tokens));
        assert!(text.starts_with(kept));
        assert_eq!(truncation.original_tokens, count(&text));
        assert_eq!(truncation.kept_tokens, count(kept));
        assert_eq!(
            truncation.dropped_tokens,
            truncation.original_tokens - truncation.kept_tokens
        );
        assert_eq!(truncation.max_tokens, 200);
        assert!(count(&content) <= 200);
    }

    #[test]
    fn a_cut_inside_a_character_moves_back_to_its_start() {
        let text = "日本語🦀".repeat(400);
        let (content, truncation) = capped(&text, 64);
        let kept = content.rsplit_once('\n').unwrap().0;
        assert!(text.starts_with(kept));
        assert!(count(&content) <= 64);
        assert_eq!(truncation.unwrap().kept_tokens, count(kept));
    }

    #[test]
    fn empty_output_is_untouched() {
        assert_eq!(capped("", 32), (String::new(), None));
    }
}
