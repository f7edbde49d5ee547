//! Request bodies a host sends compressed: `Content-Encoding` gzip, deflate (zlib) or zstd.

use std::io::Read;

use bytes::Bytes;

/// `body` decoded from `encoding` (a `Content-Encoding` value, `None` for identity); an error
/// naming what could not be read.
pub(super) fn decode(encoding: Option<&str>, body: &Bytes) -> Result<Bytes, String> {
    let Some(encoding) = encoding
        .map(str::trim)
        .filter(|e| !e.eq_ignore_ascii_case("identity"))
    else {
        return Ok(body.clone());
    };
    let mut decoded = Vec::with_capacity(body.len() * 4);
    let read = match encoding.to_ascii_lowercase().as_str() {
        "gzip" | "x-gzip" => flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut decoded),
        "deflate" => flate2::read::ZlibDecoder::new(&body[..]).read_to_end(&mut decoded),
        "zstd" => {
            let mut source = &body[..];
            ruzstd::decoding::StreamingDecoder::new(&mut source)
                .map_err(|e| format!("a zstd body whose frame cannot be read: {e}"))?
                .read_to_end(&mut decoded)
        }
        other => {
            return Err(format!(
                "a body in the content encoding {other:?}, which is not read"
            ))
        }
    };
    read.map_err(|e| format!("a {encoding} body that cannot be decoded: {e}"))?;
    Ok(decoded.into())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

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
                &decode(encoding, &body.into()).unwrap()[..],
                text,
                "{encoding:?}"
            );
        }
        let error = decode(Some("br"), &Bytes::from_static(b"x")).unwrap_err();
        assert!(error.contains("\"br\""), "{error}");
        let error = decode(Some("gzip"), &Bytes::from_static(b"not gzip")).unwrap_err();
        assert!(error.contains("gzip"), "{error}");
    }
}
