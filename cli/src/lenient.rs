//! Reading a line as the hosts written in JavaScript read it (Claude Code, gemini-cli), so that
//! what they would show the model is capped too: a leading byte order mark is skipped, bytes
//! that are not UTF-8 read as U+FFFD, and so do `\u` escapes of lone UTF-16 surrogates (which a
//! JavaScript server writes when it slices a string between the halves of an emoji).

use std::borrow::Cow;

use serde::de::DeserializeOwned;

/// The UTF-8 byte order mark.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `line` without a leading BOM, with each stretch of bytes that are not UTF-8 as one U+FFFD.
pub(crate) fn readable(line: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(line.strip_prefix(BOM).unwrap_or(line))
}

/// The JSON `json` parsed, with a lone surrogate escape read as U+FFFD where serde_json would
/// refuse it.
pub(crate) fn parse<T: DeserializeOwned>(json: &str) -> serde_json::Result<T> {
    serde_json::from_str(json).or_else(|error| match without_lone_surrogates(json) {
        Cow::Owned(repaired) => serde_json::from_str(&repaired),
        Cow::Borrowed(_) => Err(error),
    })
}

/// `json` with every `\u` escape of a lone surrogate written `\ufffd` instead: the same length,
/// so that nothing else moves.
pub(crate) fn without_lone_surrogates(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        let hex = bytes.get(at..at + 6)?;
        if &hex[..2] != b"\\u" {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut lone = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        match unit(at) {
            Some(0xD800..=0xDBFF) => {
                if unit(at + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) {
                    at += 12;
                } else {
                    lone.push(at);
                    at += 6;
                }
            }
            Some(0xDC00..=0xDFFF) => {
                lone.push(at);
                at += 6;
            }
            Some(_) => at += 6,
            // Any other escape: the backslash and the character it escapes.
            None => at += 2,
        }
    }
    if lone.is_empty() {
        return Cow::Borrowed(json);
    }
    let mut repaired = json.to_owned();
    for at in lone {
        repaired.replace_range(at..at + 6, "\\ufffd");
    }
    Cow::Owned(repaired)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_read_as_the_replacement_character_and_pairs_as_they_are() {
        let parsed: String = parse(r#""a\ud83e\udd80b\ud83ec\udd80d\\ud800""#).unwrap();
        assert_eq!(parsed, "a🦀b\u{fffd}c\u{fffd}d\\ud800");
        let parsed: String = parse(r#""end\ud83e""#).unwrap();
        assert_eq!(parsed, "end\u{fffd}");
        assert!(parse::<String>(r#""broken"#).is_err());
    }

    #[test]
    fn a_bom_is_skipped_and_bad_bytes_read_as_the_replacement_character() {
        assert_eq!(readable(b"\xEF\xBB\xBF{}"), "{}");
        assert_eq!(readable(b"{\"a\":\"x\xffy\"}"), "{\"a\":\"x\u{fffd}y\"}");
        assert!(matches!(readable(b"{}"), Cow::Borrowed("{}")));
    }
}
