//! Reading a line as the hosts written in JavaScript read it (Claude Code, gemini-cli), so that
//! what they would show the model is capped too: a leading byte order mark is skipped, and bytes
//! that are not UTF-8 read as U+FFFD. The library's JSON cap reads `\u` escapes of lone UTF-16
//! surrogates as U+FFFD in the same way ([`tool_output_cap::json::decode_string`]).

use std::borrow::Cow;

/// The UTF-8 byte order mark.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `line` without a leading BOM, with each stretch of bytes that are not UTF-8 as one U+FFFD.
pub(crate) fn readable(line: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(line.strip_prefix(BOM).unwrap_or(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bom_is_skipped_and_bad_bytes_read_as_the_replacement_character() {
        assert_eq!(readable(b"\xEF\xBB\xBF{}"), "{}");
        assert_eq!(readable(b"{\"a\":\"x\xffy\"}"), "{\"a\":\"x\u{fffd}y\"}");
        assert!(matches!(readable(b"{}"), Cow::Borrowed("{}")));
    }
}
