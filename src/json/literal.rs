//! JSON strings read as the hosts written in JavaScript read them (Claude Code, gemini-cli):
//! a `\u` escape of a lone UTF-16 surrogate, which a JavaScript server writes when it slices a
//! string between the halves of an emoji, is U+FFFD.

use std::borrow::Cow;

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

/// The string the JSON string `literal` stands for, with a `\u` escape of a lone surrogate read as
/// U+FFFD; `None` if `literal` is not a JSON string.
///
/// Decoded straight into a string of at most the literal's length: serde_json decodes a string
/// with escapes into a buffer and copies it out, which holds the text twice at its peak, and a
/// result's text is often megabytes.
pub fn decode_string(literal: &str) -> Option<String> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    let bytes = inner.as_bytes();
    let mut string = String::with_capacity(inner.len());
    let (mut at, mut plain_from) = (0, 0);
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => {
                string.push_str(&inner[plain_from..at]);
                let (c, len) = escape(inner, at)?;
                string.push(c);
                at += len;
                plain_from = at;
            }
            b'"' | 0..=0x1f => return None,
            _ => at += 1,
        }
    }
    string.push_str(&inner[plain_from..]);
    Some(string)
}

/// The character the escape at `at` in `inner` stands for, and its length in bytes: a pair of
/// `\u` escapes of surrogates is one character, a lone one is U+FFFD.
fn escape(inner: &str, at: usize) -> Option<(char, usize)> {
    let c = match inner.as_bytes().get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = |at: usize| -> Option<u32> {
                let hex = inner.get(at + 2..at + 6)?;
                let digits =
                    hex.bytes().all(|b| b.is_ascii_hexdigit()) && inner.as_bytes()[at] == b'\\';
                digits.then(|| u32::from_str_radix(hex, 16).ok()).flatten()
            };
            let high = unit(at)?;
            return Some(match high {
                0xD800..=0xDBFF => match unit(at + 6).filter(|low| (0xDC00..=0xDFFF).contains(low))
                {
                    Some(low) => {
                        let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        (char::from_u32(c)?, 12)
                    }
                    None => (char::REPLACEMENT_CHARACTER, 6),
                },
                0xDC00..=0xDFFF => (char::REPLACEMENT_CHARACTER, 6),
                _ => (char::from_u32(high)?, 6),
            });
        }
        _ => return None,
    };
    Some((c, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_decodes_as_serde_json_decodes_it_but_for_lone_surrogates() {
        assert_eq!(
            decode_string(r#""a\ud83e\udd80b\ud83ec\udd80d\\ud800\u00e9\/\"\b\f\n\r\t""#)
                .as_deref(),
            Some("a🦀b\u{fffd}c\u{fffd}d\\ud800é/\"\u{8}\u{c}\n\r\t")
        );
        assert_eq!(
            decode_string(r#""end\ud83e""#).as_deref(),
            Some("end\u{fffd}")
        );
        assert_eq!(
            decode_string(r#""\uDD80\uD83E""#).as_deref(),
            Some("\u{fffd}\u{fffd}")
        );
        for broken in [
            r#""broken"#,
            r#""a\x""#,
            r#""\u12g4""#,
            r#""\u+123""#,
            "\"\u{1}\"",
            r#""\"#,
            "\"a\"b\"",
        ] {
            assert_eq!(decode_string(broken), None, "{broken:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_string_serde_json_writes_decodes_to_itself(text in ".*", every in proptest::bool::ANY) {
            let literal = if every {
                // Every character as `\u` escapes, as some servers write them.
                let units: String = text.encode_utf16().map(|unit| format!("\\u{unit:04X}")).collect();
                format!("\"{units}\"")
            } else {
                serde_json::to_string(&text).unwrap()
            };
            proptest::prop_assert_eq!(decode_string(&literal), Some(text));
        }
    }
}
