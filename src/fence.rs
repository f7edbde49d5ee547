//! Markdown code fences that a cut leaves open.
//!
//! Tools that return Markdown (a browser's page snapshot in a ```` ```yaml ```` block, a script's
//! result in ```` ```json ````) open a fence that the cut may drop the end of. The note that follows
//! would then read as part of the code, so the cut closes the fence first.

/// The line that closes the code fence `text` leaves open, if it leaves one: as many backticks or
/// tildes as opened it.
///
/// A fence opens on a line of at least three backticks or tildes after at most three spaces (a
/// backtick fence's info string holds no backtick), and closes on a line of at least as many of
/// the same character, after at most three spaces, with nothing but spaces or tabs after them
/// (CommonMark's rules).
pub(crate) fn closing_fence(text: &str) -> Option<String> {
    let mut open: Option<(char, usize)> = None;
    for line in text.lines() {
        let Some((c, len, rest)) = fence_of(line) else {
            continue;
        };
        match open {
            None if c == '~' || !rest.contains('`') => open = Some((c, len)),
            Some((open_c, open_len))
                if c == open_c && len >= open_len && rest.trim_matches([' ', '\t']).is_empty() =>
            {
                open = None;
            }
            _ => {}
        }
    }
    open.map(|(c, len)| std::iter::repeat_n(c, len).collect())
}

/// The fence character, its count and what follows, if `line` starts a fence.
fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let line = &line[indent..];
    let c = line.chars().next().filter(|&c| c == '`' || c == '~')?;
    let rest = line.trim_start_matches(c);
    let len = line.len() - rest.len();
    (len >= 3).then_some((c, len, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_fence_is_closed_by_its_own_characters() {
        let cases: [(&str, Option<&str>); 9] = [
            (
                "### Snapshot\n```yaml\n- generic [ref=e2]:\n  - row",
                Some("```"),
            ),
            ("```json\n{\"a\": 1}\n```\n", None),
            ("````md\n```\nstill inside\n", Some("````")),
            ("~~~\ncode\n```\n", Some("~~~")),
            ("    ```\nindented code, no fence\n", None),
            ("```\nx\n``` not a closer\n", Some("```")),
            (
                "``` a`b\nan info string with a backtick opens nothing\n",
                None,
            ),
            ("text with ``` inside a line\n", None),
            ("", None),
        ];
        for (text, closer) in cases {
            assert_eq!(closing_fence(text).as_deref(), closer, "{text:?}");
        }
    }
}
