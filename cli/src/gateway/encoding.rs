//! Request bodies a host sends compressed: `Content-Encoding` gzip, deflate (zlib) or zstd.

use std::io::Read;

use bytes::Bytes;

/// `body` decoded from `encoding` (a `Content-Encoding` value, `None` for identity), every gzip
/// member and zstd frame of it, when it decodes to at most `max` bytes; an error naming what
/// could not be read. Decoding stops past `max`, whatever the compression ratio.
pub(super) fn decode(
    encoding: Option<&str>,
    body: &Bytes,
    max: usize,
) -> Result<Bytes, NotDecoded> {
    let Some(encoding) = encoding
        .map(str::trim)
        .filter(|e| !e.eq_ignore_ascii_case("identity"))
    else {
        return Ok(body.clone());
    };
    let mut decoded = Vec::with_capacity((body.len() * 4).min(max));
    let limit = max as u64 + 1;
    let read = match encoding.to_ascii_lowercase().as_str() {
        "gzip" | "x-gzip" => flate2::read::MultiGzDecoder::new(&body[..])
            .take(limit)
            .read_to_end(&mut decoded),
        "deflate" => flate2::read::ZlibDecoder::new(&body[..])
            .take(limit)
            .read_to_end(&mut decoded),
        "zstd" => zstd_frames(&body[..], &mut decoded, limit),
        other => {
            return Err(NotDecoded::Unreadable(format!(
                "a body in the content encoding {other:?}, which is not read"
            )))
        }
    };
    read.map_err(|e| {
        NotDecoded::Unreadable(format!("a {encoding} body that cannot be decoded: {e}"))
    })?;
    if decoded.len() > max {
        return Err(NotDecoded::OverLimit(format!(
            "a {encoding} body that decodes to more than {max} bytes (--max-body-bytes)"
        )));
    }
    Ok(decoded.into())
}

/// Why a body was not decoded, in words.
#[derive(Debug)]
pub(super) enum NotDecoded {
    /// It decodes to more than the limit.
    OverLimit(String),
    /// Its encoding is not read, or it is not in it.
    Unreadable(String),
}

impl std::fmt::Display for NotDecoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotDecoded::OverLimit(why) | NotDecoded::Unreadable(why) => f.write_str(why),
        }
    }
}

/// Decodes every frame of the zstd `source` into `decoded`, skippable frames passed over, until
/// it holds `limit` bytes.
fn zstd_frames(mut source: &[u8], decoded: &mut Vec<u8>, limit: u64) -> std::io::Result<usize> {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    let before = decoded.len();
    while !source.is_empty() && (decoded.len() as u64) < limit {
        match ruzstd::decoding::StreamingDecoder::new(&mut source) {
            Ok(frame) => {
                let room = limit - decoded.len() as u64;
                frame.take(room).read_to_end(decoded)?;
            }
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => source = source.get(length as usize..).unwrap_or_default(),
            Err(error) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("a frame cannot be read: {error}"),
                ))
            }
        }
    }
    Ok(decoded.len() - before)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn a_gzip_body_of_two_members_and_a_zstd_body_of_two_frames_are_read_whole() {
        let (first, second) = (&br#"{"messages": [1, "#[..], &br#"2]}"#[..]);
        let gzip = |part: &[u8]| {
            let mut gzip =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gzip.write_all(part).unwrap();
            gzip.finish().unwrap()
        };
        let zstd = |part: &[u8]| {
            ruzstd::encoding::compress_to_vec(part, ruzstd::encoding::CompressionLevel::Fastest)
        };
        for (encoding, body) in [
            ("gzip", [gzip(first), gzip(second)].concat()),
            ("zstd", [zstd(first), zstd(second)].concat()),
        ] {
            let decoded = decode(Some(encoding), &body.clone().into(), 1 << 20).unwrap();
            assert_eq!(&decoded[..], [first, second].concat(), "{encoding}");
            // Decoding stops past the limit.
            let error = decode(Some(encoding), &body.into(), 10)
                .unwrap_err()
                .to_string();
            assert!(error.contains("more than 10 bytes"), "{error}");
            assert_eq!(&decoded[..], [first, second].concat(), "{encoding}");
        }
    }

    #[test]
    fn gzip_deflate_and_identity_bodies_are_read_and_others_named() {
        let text = br#"{"messages": []}"#;
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(text).unwrap();
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zlib.write_all(text).unwrap();
        for (encoding, body) in [
            (Some("gzip"), gzip.finish().unwrap()),
            (Some("deflate"), zlib.finish().unwrap()),
            (None, text.to_vec()),
            (Some("identity"), text.to_vec()),
        ] {
            assert_eq!(
                &decode(encoding, &body.into(), 1 << 20).unwrap()[..],
                text,
                "{encoding:?}"
            );
        }
        let error = decode(Some("br"), &Bytes::from_static(b"x"), 100)
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"br\""), "{error}");
        let error = decode(Some("gzip"), &Bytes::from_static(b"not gzip"), 100)
            .unwrap_err()
            .to_string();
        assert!(error.contains("gzip"), "{error}");
    }
}
