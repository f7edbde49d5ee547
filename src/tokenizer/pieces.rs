//! Where the pre-tokenizers of OpenAI's vocabularies start a piece after a line break: the
//! places a text can be counted in parts and cut without changing the tokens before them.

use super::Encoding;

impl Encoding {
    /// The piece start that the line break ending at byte `at` of `text` gives, if any: one
    /// that holds whatever comes after the character there, so that the tokens of `text` are the
    /// tokens of `text[..start]` followed by those of `text[start..]`, and stay so when `text` is
    /// cut after `start`.
    ///
    /// Every pattern of these pre-tokenizers that can take a newline stops at a character that
    /// is not white space, so that character starts a piece, but for one case. The punctuation
    /// pattern of `o200k_base`, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, carries the line breaks that
    /// follow punctuation on into slashes: there the piece starts after the slashes (`a;\n/usr`
    /// splits before `usr`, `a\n/usr` before `/usr`). In `cl100k_base` that pattern ends in
    /// `[\r\n]*`, so a `/` starts a piece like any other character.
    fn piece_start_after_newline(self, text: &str, at: usize) -> Option<usize> {
        let c = text[at..].chars().next()?;
        if c.is_whitespace() {
            return None;
        }
        if c != '/' || self == Encoding::Cl100kBase {
            return Some(at);
        }
        let before = text[..at]
            .trim_end_matches(['\r', '\n'])
            .chars()
            .next_back();
        if before.is_none_or(is_letter_number_or_space) {
            return Some(at);
        }
        // Only ASCII punctuation is surely in a punctuation piece here: a combining mark may
        // end a word instead.
        let slashes_end = at + text[at..].len() - text[at..].trim_start_matches('/').len();
        let next = text[slashes_end..].chars().next()?;
        (before.is_some_and(|c| c.is_ascii_punctuation()) && !matches!(next, '\r' | '\n'))
            .then_some(slashes_end)
    }

    /// Whether a piece starts at byte `at` of `text` (see
    /// [`piece_start_after_newline`](Self::piece_start_after_newline)).
    pub(crate) fn starts_piece(self, text: &str, at: usize) -> bool {
        let newline_end = match text.as_bytes().get(at.wrapping_sub(1)) {
            Some(b'\n') => at,
            Some(b'/') if self == Encoding::O200kBase => text[..at].trim_end_matches('/').len(),
            _ => return false,
        };
        newline_end > 0
            && text.as_bytes()[newline_end - 1] == b'\n'
            && self.piece_start_after_newline(text, newline_end) == Some(at)
    }

    /// The piece starts (see [`starts_piece`](Self::starts_piece)) that the line breaks in
    /// `text[from..to]` give, in order.
    pub(crate) fn piece_starts(
        self,
        text: &str,
        from: usize,
        to: usize,
    ) -> impl DoubleEndedIterator<Item = usize> + '_ {
        text.as_bytes()[from..to]
            .iter()
            .enumerate()
            .filter(|&(_, &byte)| byte == b'\n')
            .filter_map(move |(at, _)| self.piece_start_after_newline(text, from + at + 1))
            .filter(move |&start| start <= to)
    }

    /// [`Tokenizer::last_split`](super::Tokenizer::last_split) for this vocabulary's pre-tokenizer: the last line start
    /// whose line holds a character that is not white space, after spaces or tabs if any.
    ///
    /// Both pre-tokenizers end a piece at a line break that such a line follows, and start
    /// the line's pieces afresh there, but for a `/` right after the line break: `o200k_base`
    /// starts its piece there after a letter or digit, but after punctuation may carry the line
    /// break on into the slashes (see [`piece_start_after_newline`](Self::piece_start_after_newline)).
    /// A split before such a `/` is taken only after an ASCII letter or digit.
    pub(crate) fn last_split(self, text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        (1..bytes.len())
            .rev()
            .find(|&at| bytes[at - 1] == b'\n' && self.splits_line_at(text, at))
    }

    /// Whether [`last_split`](Self::last_split) may split `text` at `at`, a line start.
    fn splits_line_at(self, text: &str, at: usize) -> bool {
        let line = &text[at..];
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let Some(first) = line[indent..].chars().next() else {
            return false;
        };
        if first.is_whitespace() {
            return false;
        }
        if first != '/' || indent > 0 || self == Encoding::Cl100kBase {
            return true;
        }
        ends_in_ascii_word(&text[..at])
    }

    /// The last piece start of `text`, or 0.
    fn last_piece_start(self, text: &str) -> usize {
        self.piece_starts(text, 0, text.len())
            .next_back()
            .unwrap_or(0)
    }
}

/// Whether the last character of `text` before its line breaks is an ASCII letter or digit:
/// then a line that follows starts its pieces afresh, `/` and all, in both vocabularies.
pub(crate) fn ends_in_ascii_word(text: &str) -> bool {
    text.trim_end_matches(['\r', '\n'])
        .as_bytes()
        .last()
        .is_some_and(u8::is_ascii_alphanumeric)
}

/// Whether `c` is in `\p{L}`, `\p{N}` or `\s`, the classes that no punctuation piece holds.
fn is_letter_number_or_space(c: char) -> bool {
    static CLASS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[\p{L}\p{N}\s]$").expect("a valid pattern")
    });
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c.is_ascii_whitespace();
    }
    CLASS.is_match(c.encode_utf8(&mut [0; 4]))
}

/// [`Tokenizer::count_edited`](super::Tokenizer::count_edited) for the built-in backends: counts again only from the last piece
/// start before `keep`, which splits the edited text as it splits `text`.
pub(super) fn count_edited_from_last_piece(
    encoding: Encoding,
    text: &str,
    text_tokens: usize,
    keep: usize,
    tail: &str,
    count: impl Fn(&str) -> usize,
) -> usize {
    let start = encoding.last_piece_start(&text[..keep]);
    if start == 0 {
        return count(&[&text[..keep], tail].concat());
    }
    // `count(&text[start..]) <= text_tokens` holds for an exact `text_tokens`; saturate all the
    // same.
    text_tokens.saturating_sub(count(&text[start..])) + count(&[&text[start..keep], tail].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact encoding, from tiktoken-rs itself.
    fn encode(encoding: Encoding, text: &str) -> Vec<u32> {
        match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton().encode_ordinary(text),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton().encode_ordinary(text),
        }
    }

    /// Whether every piece start of `text` in `encoding` splits its encoding in two.
    fn check_piece_starts(encoding: Encoding, text: &str) -> Result<usize, String> {
        let whole = encode(encoding, text);
        let mut starts = 0;
        for at in encoding.piece_starts(text, 0, text.len()) {
            let mut joined = encode(encoding, &text[..at]);
            joined.extend(encode(encoding, &text[at..]));
            if joined != whole {
                return Err(format!(
                    "{encoding} splits {text:?} at {at}, the encoding does not"
                ));
            }
            starts += 1;
        }
        Ok(starts)
    }

    #[test]
    fn piece_starts_split_the_encoding() {
        let text = "a.\nb \n\n  c;\n.d\nä\n/e\n\t\nf";
        assert_eq!(check_piece_starts(Encoding::O200kBase, text), Ok(5));
        assert_eq!(check_piece_starts(Encoding::Cl100kBase, text), Ok(5));
    }

    #[test]
    fn a_slash_after_a_newline_starts_a_piece_unless_o200k_carries_punctuation_into_it() {
        let starts = |encoding: Encoding, text: &str| -> Vec<String> {
            let starts: Vec<usize> = (0..=text.len())
                .filter(|&at| encoding.starts_piece(text, at))
                .collect();
            let listed: Vec<usize> = encoding.piece_starts(text, 0, text.len()).collect();
            assert_eq!(starts, listed, "{text:?}");
            starts.iter().map(|&at| text[at..].to_owned()).collect()
        };
        let cases: [(&str, &[&str]); 12] = [
            ("a\n/b", &["/b"]),
            ("7\r\n/b", &["/b"]),
            ("a \n/b", &["/b"]),
            ("日\n/b", &["/b"]),
            ("\n/b", &["/b"]),
            ("a.\n/b", &["b"]),
            ("dir/\n//b", &["b"]),
            ("a;\r\n\n/ b", &[" b"]),
            ("x\n/\n/b", &["/\n/b", "b"]),
            ("x.\n/\n/", &[]),
            ("e\u{301}\n/b", &[]),
            ("\u{b7}\n/b", &[]),
        ];
        for (text, o200k) in cases {
            let cl100k: Vec<String> = text
                .match_indices("\n/")
                .map(|(at, _)| text[at + 1..].to_owned())
                .collect();
            assert_eq!(starts(Encoding::O200kBase, text), o200k, "{text:?}");
            assert_eq!(starts(Encoding::Cl100kBase, text), cl100k, "{text:?}");
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                assert!(check_piece_starts(encoding, text).is_ok(), "{text:?}");
            }
        }
        // The exclusion is needed: o200k encodes ".\n/" as one piece, cl100k does not.
        let split = |encoding: Encoding| {
            [encode(encoding, "a.\n"), encode(encoding, "/b")].concat()
                == encode(encoding, "a.\n/b")
        };
        assert!(!split(Encoding::O200kBase));
        assert!(split(Encoding::Cl100kBase));
    }

    #[test]
    fn an_absolute_listing_has_a_piece_start_on_every_line() {
        let listing = "/usr/lib/x86_64-linux-gnu/libc.so.6\n/usr/share/doc/README\n".repeat(100);
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            assert_eq!(check_piece_starts(encoding, &listing), Ok(199));
        }
    }

    proptest::proptest! {
        #[test]
        fn every_piece_start_splits_the_encoding(
            text in "([a-zA-Z0-9]{0,3}[ \t\n\r/.;\u{3000}é日🦀]{0,3}){0,30}",
            lines in proptest::collection::vec(
                "(/|C:\\\\|[a-z])[a-z0-9/._-]{0,12}([a-z]|[0-9]|[.;)}/ :\u{301}]|\u{3000})?(\n|\r\n|\n\n)",
                0..12,
            ),
        ) {
            for text in [text, lines.concat()] {
                for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                    let checked = check_piece_starts(encoding, &text);
                    proptest::prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
                }
            }
        }
    }
}
