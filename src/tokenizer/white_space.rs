//! The white-space runs that tiktoken-rs cannot pre-tokenize: where its pattern splits them, and
//! their exact tokens.
//!
//! tiktoken-rs 0.12 refuses a text holding a run of about a million white-space characters with
//! no line break: at the run's start `\s*[\r\n]+` finds no line break, and `\s+(?!\S)`, which
//! fancy-regex runs in its backtracking machine, keeps a state for each character of the run, past
//! that machine's limit ("Max stack size exceeded for backtracking"). Both vocabularies' patterns
//! split such a run in a way that follows from the pattern alone, so the refused text is split
//! there and the run encoded on its own, with no guess.

use std::ops::Range;

use super::subset_bpe::ByteSet;

/// The pieces of `text`'s runs of white space with no line break, in order: those the
/// pre-tokenizers of both vocabularies, and of the open models that descend from
/// `cl100k_base`, make of each such run on its own.
///
/// Such a run `R` starts after a line break, after a character that is not white space, or at the
/// start, and ends before a character `X` that is not white space, or at the end:
///
/// - every pattern that takes a line break ends at the last one of its run (`\s*[\r\n]+`), or at
///   the first white space that is not one (the punctuation pattern's `[\r\n]*`, `[\r\n/]*`), and
///   no pattern that ends in a character that is not white space goes on into white space but by
///   those, so a piece starts where `R` does;
/// - at `R`'s start, every pattern before `\s+(?!\S)` fails (a letter, a number or punctuation
///   would have to follow its first character, and `\s*[\r\n]+` finds no line break), and that one
///   takes `R` less its last character when `X` follows (the last one then starts a piece of its
///   own, or of `X`'s), or all of `R` at the end.
pub(super) fn runs(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = None;
    text.char_indices()
        .chain([(text.len(), '\0')])
        .filter_map(move |(at, c)| {
            let in_run = c.is_whitespace() && c != '\r' && c != '\n' && at < text.len();
            match (in_run, start) {
                (true, None) => start = Some(at),
                (false, Some(run_start)) => {
                    start = None;
                    // A run followed by a line break is not one: its line break comes later.
                    if matches!(c, '\r' | '\n') {
                        return None;
                    }
                    let piece_end = if at == text.len() {
                        at
                    } else {
                        at - text[..at].chars().next_back().map_or(0, char::len_utf8)
                    };
                    return (piece_end > run_start).then_some(run_start..piece_end);
                }
                _ => {}
            }
            None
        })
}

/// The bytes of the UTF-8 of every white-space character: all a white-space piece is made of.
pub(super) fn white_space_bytes() -> ByteSet {
    let mut bytes = ByteSet::default();
    let mut utf8 = [0; 4];
    for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
        if c.is_whitespace() {
            c.encode_utf8(&mut utf8)
                .bytes()
                .for_each(|byte| bytes.insert(byte));
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_with_no_line_break_is_a_piece_but_its_last_character() {
        let cases: [(&str, &[&str]); 7] = [
            ("a    b", &["   "]),
            ("a\n    b  c", &["   ", " "]),
            ("a  \n b", &[]),
            ("x\t \t", &["\t \t"]),
            (
                "a  b\u{3000}\u{3000}\u{3000}\u{3000}c",
                &[" ", "\u{3000}\u{3000}\u{3000}"],
            ),
            ("a \n\n", &[]),
            ("abc", &[]),
        ];
        for (text, pieces) in cases {
            let found: Vec<&str> = runs(text).map(|run| &text[run]).collect();
            assert_eq!(found, pieces, "{text:?}");
        }
    }
}
