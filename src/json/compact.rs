//! JSON written compact, as serde_json and `JSON.stringify` write it: the form a structure is
//! counted and cut in.

use std::borrow::Cow;
use std::io;

/// `json` as compact JSON, written as serde_json and `JSON.stringify` write it: itself when it
/// already is, which is how the SDKs write it.
pub(super) fn compact(json: Cow<'_, str>) -> serde_json::Result<Cow<'_, str>> {
    let mut same = Same {
        rest: json.as_bytes(),
        differs: false,
    };
    let read = transcode(&json, &mut same);
    if !same.differs {
        read?;
        if same.rest.is_empty() {
            return Ok(json);
        }
    }
    let mut written = Vec::with_capacity(json.len());
    transcode(&json, &mut written)?;
    String::from_utf8(written)
        .map(Cow::Owned)
        .map_err(serde::ser::Error::custom)
}

/// Writes the JSON `json` compact to `to`.
fn transcode(json: &str, to: impl io::Write) -> serde_json::Result<()> {
    let mut from = serde_json::Deserializer::from_str(json);
    serde_transcode::transcode(&mut from, &mut serde_json::Serializer::new(to))?;
    from.end()
}

/// A writer that checks that what is written is `rest`, and stops at the first difference.
struct Same<'a> {
    rest: &'a [u8],
    differs: bool,
}

impl io::Write for Same<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self.rest.strip_prefix(bytes) {
            Some(rest) => {
                self.rest = rest;
                Ok(bytes.len())
            }
            None => {
                self.differs = true;
                Err(io::Error::other("not compact"))
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_json_is_read_in_place_and_other_json_is_written_compact() {
        let read = |json: &'static str| compact(Cow::Borrowed(json));
        assert!(matches!(
            read(r#"{"a":[1,2],"b":"é/"}"#),
            Ok(Cow::Borrowed(_))
        ));
        let written = read("{ \"a\" : [1, 2.50],\n \"b\": \"\\u00e9\\/\" }").unwrap();
        assert!(matches!(written, Cow::Owned(_)));
        assert_eq!(written, r#"{"a":[1,2.5],"b":"é/"}"#);
        assert!(read(r#"{"a":"#).is_err());
    }
}
