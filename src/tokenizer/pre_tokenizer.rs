//! The pre-tokenizers of OpenAI's vocabularies, written out by hand: the pieces the patterns of
//! `o200k_base` and `cl100k_base` split a text into, as their backtracking regexes find them,
//! without a regex. The character classes are the regex crate's own tables, read once.
//!
//! `o200k_base`, one alternative after another, each tried in order at each piece start:
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! \p{N}{1,3}
//!  ?[^\s\p{L}\p{N}]+[\r\n/]*
//! \s*[\r\n]+
//! \s+(?!\S)
//! \s+
//! ```
//!
//! `cl100k_base`, as tiktoken-rs and tiktoken write it, possessive where backtracking would
//! change nothing but `\s++$`, which takes a white-space run at the end of a text whole:
//!
//! ```text
//! '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
//! ```

use std::sync::LazyLock;

use super::ascii_runs::{self, AsciiClass};
use super::piece_blocks;
use super::Encoding;

/// A character's classes, as bits.
type Class = u8;
const UPPER: Class = 1 << 0; // Lu
const TITLE: Class = 1 << 1; // Lt
const MODIFIER: Class = 1 << 2; // Lm
const OTHER_LETTER: Class = 1 << 3; // Lo
const LOWER: Class = 1 << 4; // Ll
const MARK: Class = 1 << 5; // M
const NUMBER: Class = 1 << 6; // N
const SPACE: Class = 1 << 7; // \s: White_Space
const LETTER: Class = UPPER | TITLE | MODIFIER | OTHER_LETTER | LOWER;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const CASED_UPPER: Class = UPPER | TITLE | MODIFIER | OTHER_LETTER | MARK;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const CASED_LOWER: Class = LOWER | MODIFIER | OTHER_LETTER | MARK;

/// The classes of every character, from the regex crate's Unicode tables: a table for the
/// first planes, and ranges past them.
struct Classes {
    low: Vec<Class>,
    high: Vec<(u32, u32, Class)>,
}

/// The characters below this are looked up in a table; the rest in ranges.
const TABLE: u32 = 0x3_0000;

static CLASSES: LazyLock<Classes> = LazyLock::new(|| {
    let mut low = vec![0; TABLE as usize];
    let mut high = Vec::new();
    for (class, pattern) in [
        (UPPER, r"\p{Lu}"),
        (TITLE, r"\p{Lt}"),
        (MODIFIER, r"\p{Lm}"),
        (OTHER_LETTER, r"\p{Lo}"),
        (LOWER, r"\p{Ll}"),
        (MARK, r"\p{M}"),
        (NUMBER, r"\p{N}"),
        (SPACE, r"\s"),
    ] {
        let hir = regex_syntax::parse(pattern).expect("a Unicode class the regex crate knows");
        let regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(ranges)) =
            hir.kind()
        else {
            unreachable!("{pattern} is a Unicode class");
        };
        for range in ranges.iter() {
            let (start, end) = (u32::from(range.start()), u32::from(range.end()));
            for c in start..=end.min(TABLE - 1) {
                low[c as usize] |= class;
            }
            if end >= TABLE {
                high.push((start.max(TABLE), end, class));
            }
        }
    }
    high.sort_unstable();
    Classes { low, high }
});

impl Classes {
    fn of(&self, c: char) -> Class {
        let c = u32::from(c);
        if c < TABLE {
            return self.low[c as usize];
        }
        self.high
            .iter()
            .filter(|&&(start, end, _)| start <= c && c <= end)
            .fold(0, |classes, &(_, _, class)| classes | class)
    }
}

/// The code point at byte `at` of `bytes` if it takes three bytes, the most common width past
/// ASCII (CJK, kana, most symbols), decoded here: `bytes` are UTF-8 and a character starts at
/// `at`, so its bytes follow.
#[inline(always)]
fn three_byte_char(bytes: &[u8], at: usize) -> Option<u32> {
    let &[first, second, third] = bytes.get(at..at + 3)? else {
        return None;
    };
    (first & 0xF0 == 0xE0).then(|| {
        u32::from(first & 0x0F) << 12 | u32::from(second & 0x3F) << 6 | u32::from(third & 0x3F)
    })
}

/// A text read character by character, with each character's classes.
struct Chars<'a> {
    text: &'a str,
    classes: &'a Classes,
}

impl Chars<'_> {
    /// The character at byte `at`, its classes and its width; `None` at the end.
    #[inline(always)]
    fn at(&self, at: usize) -> Option<(char, Class, usize)> {
        let bytes = self.text.as_bytes();
        let byte = *bytes.get(at)?;
        if byte < 0x80 {
            return Some((byte as char, self.classes.low[byte as usize], 1));
        }
        if let Some(c) = three_byte_char(bytes, at) {
            return Some((char::from_u32(c)?, self.classes.low[c as usize], 3));
        }
        let c = self.text[at..].chars().next()?;
        Some((c, self.classes.of(c), c.len_utf8()))
    }

    /// Whether the character at `at` has one of `classes`, and its width.
    #[inline(always)]
    fn is(&self, at: usize, classes: Class) -> Option<usize> {
        self.at(at)
            .filter(|&(_, class, _)| class & classes != 0)
            .map(|(_, _, width)| width)
    }

    /// The end of the run of characters with one of `classes` from `at`.
    #[inline(always)]
    fn run(&self, mut at: usize, classes: Class) -> usize {
        loop {
            at = self.three_byte_run(at, classes);
            match self.is(at, classes) {
                Some(width) => at += width,
                None => return at,
            }
        }
    }

    /// The end of the run of three-byte characters with one of `classes` from `at`: the
    /// letters of Japanese and Chinese, read without the checks [`at`](Self::at) makes of a
    /// character of any width.
    #[inline(always)]
    fn three_byte_run(&self, mut at: usize, classes: Class) -> usize {
        while let Some(c) = three_byte_char(self.text.as_bytes(), at) {
            if self.classes.low[c as usize] & classes == 0 {
                break;
            }
            at += 3;
        }
        at
    }

    /// `[^\r\n\p{L}\p{N}]` at `at`: its width.
    #[inline(always)]
    fn not_letter_number_or_newline(&self, at: usize) -> Option<usize> {
        self.at(at)
            .filter(|&(c, class, _)| class & (LETTER | NUMBER) == 0 && c != '\r' && c != '\n')
            .map(|(_, _, width)| width)
    }

    /// `[^\s\p{L}\p{N}]` at `at`: its width.
    #[inline(always)]
    fn punctuation(&self, at: usize) -> Option<usize> {
        self.at(at)
            .filter(|&(_, class, _)| class & (SPACE | LETTER | NUMBER) == 0)
            .map(|(_, _, width)| width)
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `at`: its end.
    #[inline(always)]
    fn contraction(&self, at: usize) -> Option<usize> {
        if self.text.as_bytes().get(at) != Some(&b'\'') {
            return None;
        }
        self.contraction_after_quote(at)
    }

    /// [`contraction`](Self::contraction) at a `'`.
    fn contraction_after_quote(&self, at: usize) -> Option<usize> {
        let rest = &self.text[at + 1..];
        let mut chars = rest.chars();
        let first = chars.next()?;
        let second = chars.next();
        let folded = |c: char| match c {
            // The regex crate folds case by Unicode's simple folding: `ſ` is an `s`.
            '\u{17F}' => 's',
            c => c.to_ascii_lowercase(),
        };
        let one = at + 1 + first.len_utf8();
        match folded(first) {
            's' | 't' | 'm' | 'd' => Some(one),
            'r' | 'v' if second.map(folded) == Some('e') => Some(one + 1),
            'l' if second.map(folded) == Some('l') => Some(one + 1),
            _ => None,
        }
    }

    /// `\s*[\r\n]+`, `\s+(?!\S)` and `\s+` at `at`, in that order (after `\s++$` with
    /// `whole_at_end`): the end of the first that matches.
    fn white_space(&self, at: usize, whole_at_end: bool) -> Option<usize> {
        let ascii_end = ascii_runs::end(self.text.as_bytes(), at, AsciiClass::Space);
        let end = self.run(ascii_end, SPACE);
        if end == at {
            return None;
        }
        if whole_at_end && end == self.text.len() {
            return Some(end);
        }
        // `\s*` gives back to the last line break of the run.
        let bytes = &self.text.as_bytes()[at..end];
        if let Some(last) = bytes.iter().rposition(|&b| b == b'\r' || b == b'\n') {
            return Some(at + last + 1);
        }
        if end == self.text.len() {
            return Some(end);
        }
        // Followed by something else: all but the last character, or the one.
        let last = self.text[at..end]
            .chars()
            .next_back()
            .map_or(0, char::len_utf8);
        Some(if end - last > at { end - last } else { end })
    }

    /// `\p{N}{1,3}` at `at`.
    fn number(&self, at: usize) -> Option<usize> {
        let mut end = at;
        for _ in 0..3 {
            match self.is(end, NUMBER) {
                Some(width) => end += width,
                None => break,
            }
        }
        (end > at).then_some(end)
    }

    /// ` ?[^\s\p{L}\p{N}]+` then `trailing`, at `at`.
    fn punctuation_run(&self, at: usize, trailing: &[u8]) -> Option<usize> {
        let start = match self.text.as_bytes().get(at) {
            Some(b' ') if self.punctuation(at + 1).is_some() => at + 1,
            _ => at,
        };
        let mut end = start;
        while let Some(width) = self.punctuation(end) {
            end += width;
        }
        (end > start).then(|| self.trailing(end, trailing))
    }

    /// The end of the run of `trailing` bytes from `at`: what may follow a punctuation run.
    #[inline(always)]
    fn trailing(&self, mut at: usize, trailing: &[u8]) -> usize {
        let bytes = self.text.as_bytes();
        while bytes.get(at).is_some_and(|byte| trailing.contains(byte)) {
            at += 1;
        }
        at
    }

    /// o200k's first alternative from `from` (after its optional first character): its end.
    fn o200k_lower_word(&self, from: usize) -> Option<usize> {
        // The run of `[..]*`, and where the last of its characters that `[..]+` can take ends:
        // one pass over a run of letters that are both, such as CJK.
        let (mut upper_end, mut last_lower) = (from, None);
        while let Some((_, class, width)) = self.at(upper_end) {
            if class & CASED_UPPER == 0 {
                break;
            }
            upper_end += width;
            if class & CASED_LOWER != 0 {
                // The letters both classes hold, such as CJK's, in one run.
                upper_end = self.run(upper_end, CASED_UPPER & CASED_LOWER);
                last_lower = Some(upper_end);
            }
        }
        let lower_end = self.run(upper_end, CASED_LOWER);
        // `[..]*` gives back to the last character `[..]+` can take.
        let end = if lower_end > upper_end {
            lower_end
        } else {
            last_lower?
        };
        Some(self.contraction(end).unwrap_or(end))
    }

    /// o200k's second alternative from `from`: its end.
    fn o200k_upper_word(&self, from: usize) -> Option<usize> {
        let upper_end = self.run(from, CASED_UPPER);
        if upper_end == from {
            return None;
        }
        let end = self.run(upper_end, CASED_LOWER);
        Some(self.contraction(end).unwrap_or(end))
    }

    /// The end of the `o200k_base` piece that starts at `at`, not the end of the text.
    fn o200k_piece(&self, at: usize) -> usize {
        match self.text.as_bytes().get(at) {
            Some(&byte) if byte < 0x80 => self.o200k_ascii_piece(at, byte),
            _ => self.o200k_any_piece(at),
        }
    }

    /// [`o200k_piece`](Self::o200k_piece) at an ASCII character, read byte by byte while the
    /// bytes are ASCII: an ASCII character is in no class but its own (a letter is upper or lower
    /// case, never a mark), so a word is a run of upper-case letters and one of lower-case ones,
    /// and an ASCII character other than a letter starts a word only as its optional first
    /// character. Where a piece meets a character past ASCII, whose classes may continue it, the
    /// piece is found again by [`o200k_any_piece`](Self::o200k_any_piece).
    #[inline(always)]
    fn o200k_ascii_piece(&self, at: usize, byte: u8) -> usize {
        self.ascii_piece(at, byte, Self::o200k_ascii_word, b"\r\n/", false)
            .unwrap_or_else(|| self.o200k_any_piece(at))
    }

    /// A piece at an ASCII character `byte` while its bytes are ASCII, `word` being the
    /// encoding's word at an ASCII letter, `trailing` what may follow its punctuation, and
    /// `whole_at_end` whether white space at the end is taken whole; `None` where the piece meets
    /// a character past ASCII.
    #[inline(always)]
    fn ascii_piece(
        &self,
        at: usize,
        byte: u8,
        word: fn(&Self, usize) -> Option<usize>,
        trailing: &[u8],
        whole_at_end: bool,
    ) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let class = self.ascii_class(byte);
        if class & LETTER != 0 {
            return word(self, at);
        }
        if class & NUMBER != 0 {
            return self.ascii_number(at);
        }
        if byte == b'\r' || byte == b'\n' {
            return self.white_space(at, whole_at_end);
        }
        let next = match bytes.get(at + 1) {
            None => return Some(at + 1),
            Some(&next) if next >= 0x80 => return None,
            Some(&next) => self.ascii_class(next),
        };
        if next & LETTER != 0 {
            return word(self, at + 1);
        }
        let start = if byte == b' ' && next & (SPACE | LETTER | NUMBER) == 0 {
            at + 1
        } else {
            at
        };
        let end = self.ascii_punctuation_run(start)?;
        if end == start {
            return self.white_space(at, whole_at_end);
        }
        Some(self.trailing(end, trailing))
    }

    /// The classes of an ASCII byte.
    #[inline(always)]
    fn ascii_class(&self, byte: u8) -> Class {
        self.classes.low[usize::from(byte)]
    }

    /// The end of the run of ASCII characters of `class` from `at`; `None` if the run ends at a
    /// character past ASCII.
    #[inline(always)]
    fn ascii_run(&self, at: usize, class: AsciiClass) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let end = ascii_runs::end(bytes, at, class);
        bytes.get(end).is_none_or(u8::is_ascii).then_some(end)
    }

    /// The end of the run of ASCII punctuation from `at`, byte by byte: such a run is mostly one
    /// to three bytes long (`":"`, `();`, ` = `), where reading eight at a time costs more than it
    /// saves; `None` if the run ends at a character past ASCII.
    #[inline(always)]
    fn ascii_punctuation_run(&self, mut at: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(at) {
            if byte >= 0x80 {
                return None;
            }
            if self.ascii_class(byte) & (SPACE | LETTER | NUMBER) != 0 {
                break;
            }
            at += 1;
        }
        Some(at)
    }

    /// o200k's words at an ASCII letter, `[A-Z]*[a-z]+` or `[A-Z]+[a-z]*` and a contraction:
    /// the end; `None` if a character past ASCII ends either run.
    #[inline(always)]
    fn o200k_ascii_word(&self, at: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let end = ascii_runs::cased_word_end(bytes, at);
        if bytes.get(end).is_some_and(|byte| !byte.is_ascii()) {
            return None;
        }
        Some(self.contraction(end).unwrap_or(end))
    }

    /// `\p{N}{1,3}` at an ASCII digit; `None` if a character past ASCII follows its digits.
    #[inline(always)]
    fn ascii_number(&self, at: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let mut end = at + 1;
        while end < at + 3 {
            match bytes.get(end) {
                Some(byte) if byte.is_ascii_digit() => end += 1,
                Some(&byte) if byte >= 0x80 => return None,
                _ => break,
            }
        }
        Some(end)
    }

    /// [`o200k_piece`](Self::o200k_piece) at any character: each alternative in order.
    fn o200k_any_piece(&self, at: usize) -> usize {
        let first = self.not_letter_number_or_newline(at);
        let word = |alternative: fn(&Self, usize) -> Option<usize>| {
            first
                .and_then(|width| alternative(self, at + width))
                .or_else(|| alternative(self, at))
        };
        word(Self::o200k_lower_word)
            .or_else(|| word(Self::o200k_upper_word))
            .or_else(|| self.number(at))
            .or_else(|| self.punctuation_run(at, b"\r\n/"))
            .or_else(|| self.white_space(at, false))
            .unwrap_or_else(|| at + self.at(at).map_or(1, |(_, _, width)| width))
    }

    /// The end of the `cl100k_base` piece that starts at `at`, not the end of the text.
    fn cl100k_piece(&self, at: usize) -> usize {
        match self.text.as_bytes().get(at) {
            // A `'` may start a contraction, cl100k's first alternative, which the ASCII path
            // does not try.
            Some(&byte) if byte < 0x80 && byte != b'\'' => self
                .ascii_piece(at, byte, Self::cl100k_ascii_word, b"\r\n", true)
                .unwrap_or_else(|| self.cl100k_any_piece(at)),
            _ => self.cl100k_any_piece(at),
        }
    }

    /// cl100k's word at an ASCII letter, `\p{L}++`; `None` if a character past ASCII ends it.
    #[inline(always)]
    fn cl100k_ascii_word(&self, at: usize) -> Option<usize> {
        self.ascii_run(at, AsciiClass::Letter)
    }

    /// [`cl100k_piece`](Self::cl100k_piece) at any character: each alternative in order.
    fn cl100k_any_piece(&self, at: usize) -> usize {
        let letters = |from: usize| Some(self.run(from, LETTER)).filter(|&end| end > from);
        self.contraction(at)
            .or_else(|| {
                self.not_letter_number_or_newline(at)
                    .and_then(|width| letters(at + width))
                    .or_else(|| letters(at))
            })
            .or_else(|| self.number(at))
            .or_else(|| self.punctuation_run(at, b"\r\n"))
            .or_else(|| self.white_space(at, true))
            .unwrap_or_else(|| at + self.at(at).map_or(1, |(_, _, width)| width))
    }
}

/// Whether the first eight bytes of `bytes` (all of them, if fewer) are ASCII: where a block
/// of ASCII is worth reading. Between the characters of Japanese or Chinese, a line break or a
/// digit is read as a piece alone.
#[inline(always)]
fn ascii_ahead(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8)].is_ascii()
}

/// The pieces `encoding`'s pre-tokenizer splits `text` into, in order: a block of ASCII at a
/// time ([`piece_blocks`]) from each piece start that eight bytes of ASCII follow; character by
/// character elsewhere, and where a block is sure of no start past its first (a piece longer
/// than the block, or one that meets a character past ASCII).
pub(super) fn pieces(encoding: Encoding, text: &str) -> impl Iterator<Item = &str> {
    let chars = Chars {
        text,
        classes: &CLASSES,
    };
    let bytes = text.as_bytes();
    let mut at = 0;
    // Of the block read last, from `block_start`: the piece starts after `at`, and whether the
    // piece after the last of them ends the text.
    let (mut block_start, mut starts, mut ends_text) = (0, 0u64, false);
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        if starts == 0 && !ends_text && ascii_ahead(&bytes[at..]) {
            let block = piece_blocks::starts(encoding, &bytes[at..]);
            (block_start, starts, ends_text) = (at, block.bits, block.ends_text);
        }
        let end = if starts != 0 {
            let end = block_start + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            end
        } else if ends_text {
            ends_text = false;
            text.len()
        } else {
            match encoding {
                Encoding::O200kBase => chars.o200k_piece(at),
                Encoding::Cl100kBase => chars.cl100k_piece(at),
            }
        };
        let piece = &text[at..end];
        at = end;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fancy_regex::Regex;

    /// tiktoken-rs's `cl100k_base` pattern, which it does not export.
    const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

    /// The pieces tiktoken-rs's own regex finds.
    fn regex_pieces(encoding: Encoding, text: &str) -> Vec<&str> {
        static O200K: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(tiktoken_rs::O200K_BASE_PAT_STR).unwrap());
        static CL100K: LazyLock<Regex> = LazyLock::new(|| Regex::new(CL100K_PATTERN).unwrap());
        let regex = match encoding {
            Encoding::O200kBase => &*O200K,
            Encoding::Cl100kBase => &*CL100K,
        };
        regex
            .find_iter(text)
            .map(|piece| piece.unwrap().as_str())
            .collect()
    }

    fn assert_same_pieces(text: &str) {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let ours: Vec<&str> = pieces(encoding, text).collect();
            assert_eq!(ours, regex_pieces(encoding, text), "{encoding}: {text:?}");
        }
    }

    #[test]
    fn every_character_has_the_regex_crates_classes() {
        let classes = [
            (UPPER, r"^\p{Lu}$"),
            (TITLE, r"^\p{Lt}$"),
            (MODIFIER, r"^\p{Lm}$"),
            (OTHER_LETTER, r"^\p{Lo}$"),
            (LOWER, r"^\p{Ll}$"),
            (MARK, r"^\p{M}$"),
            (NUMBER, r"^\p{N}$"),
            (SPACE, r"^\s$"),
        ]
        .map(|(class, pattern)| (class, regex::Regex::new(pattern).unwrap()));
        let mut buffer = [0; 4];
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            let text = c.encode_utf8(&mut buffer);
            let expected = classes
                .iter()
                .filter(|(_, regex)| regex.is_match(text))
                .fold(0, |all, (class, _)| all | class);
            assert_eq!(CLASSES.of(c), expected, "{c:?} (U+{:04X})", u32::from(c));
        }
    }

    #[test]
    fn every_short_text_of_every_class_splits_as_the_regex_splits_it() {
        // One character or more of each class, and the characters the patterns name.
        let alphabet = [
            "a", "A", "ǅ", "ʰ", "中", "\u{301}", "7", "٣", "Ⅻ", " ", "\t", "\n", "\r", "\u{3000}",
            "'", "s", "S", "ſ", "l", "e", "r", "/", ".", "!", "🦀", "\u{a0}",
        ];
        let n = alphabet.len();
        for len in 1..=4u32 {
            for mut index in 0..n.pow(len) {
                let mut text = String::new();
                for _ in 0..len {
                    text.push_str(alphabet[index % n]);
                    index /= n;
                }
                assert_same_pieces(&text);
            }
        }
    }

    #[test]
    fn real_texts_split_as_the_regex_splits_them() {
        for text in [
            "src/main.rs\nsrc/lib.rs\n  fn main() {\n\tprintln!(\"héllo 🦀\");\n}\n",
            "They're here; WE'LL go. I'VE seen ſ's and 'Ll's\r\n\r\n  \n\t x",
            "日本語のテキスト、カタカナ。１２３４５ 한국어 العربية עברית ελληνικά",
            "{\"a\":[1,22,333,4444,55555],\"b\":null,\"c\":\"x\\ny\"}",
            "x\u{3000}\u{3000}y  \u{a0}z\n\n\n/usr/bin;\n//x a;\n/usr",
            "e\u{301}\u{301} A\u{301}b \u{301}\u{301}x 1\u{301}2 .\u{301}",
        ] {
            assert_same_pieces(text);
        }
    }

    proptest::proptest! {
        #[test]
        fn ascii_text_and_the_characters_that_may_continue_its_pieces_split_as_the_regex_splits_them(
            text in "([\\x00-\\x7f]{1,6}|[éſ\u{301}٣Ⅻ\u{3000}\u{a0}中🦀ǅʰ]){0,40}",
        ) {
            assert_same_pieces(&text);
        }

        #[test]
        fn long_runs_of_each_ascii_class_split_as_the_regex_splits_them(
            // Runs longer than the 64 bytes `piece_blocks` reads at once, and every kind of
            // piece start, across its blocks' ends.
            text in r"([a-z]{1,70}|[A-Z]{1,9}|[0-9]{1,70}| {1,70}|[\t\n\r \x0b\x0c]{1,70}|\n{1,3}|[!-&(-/:-@\[-`{-~]{1,70}|/{1,3}|'([sStTmMdD]|[rRvV][eE]|[lL]{2}|x)|\x{a0}|中){0,24}",
        ) {
            assert_same_pieces(&text);
        }

        #[test]
        fn scripts_digits_punctuation_and_white_space_mixed_split_as_the_regex_splits_them(
            text in r"([ぁ-んァ-ヶ一-龥、。「」ー・]{1,12}|[가-힣]{1,4}|[α-ωΑ-Ω]{1,4}|[а-яА-Я]{1,4}|[٠-٩0-9０-９]{1,5}|[ \t\n\r\x{3000}\x{a0}]{1,4}|[!-/:-@\[-`{-~]{1,3}|[a-zA-Z\x27]{1,6}|[\x{300}-\x{36f}\x{3099}\x{309a}]|[🦀🎉€£¥©]|\PC){0,40}",
        ) {
            assert_same_pieces(&text);
        }
    }
}
