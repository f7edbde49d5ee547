//! What a block of a tool result that is not text costs the model: an image at its provider's
//! price ([`ImageTokens`]), and every other kind of media by a documented estimate, so that
//! nothing a result carries passes uncounted.
//!
//! | kind | tokens | why |
//! | --- | --- | --- |
//! | [`Image`](MediaKind::Image) | its rule's price of its width and height ([`ImageTokens`]) | the providers' published rules |
//! | [`Pdf`](MediaKind::Pdf) | per page: 3,000, and the rule's price of the page as an image (a US-letter page at 200 dpi); Gemini: 258 | Anthropic's guide: 1,500 to 3,000 tokens of text a page, and each page sent as an image too (OpenAI's guide does the same); Gemini's: 258 a page |
//! | a PDF whose pages cannot be read (a URL, a file id, an encrypted or broken file) | 100 pages | the most Anthropic takes in one request |
//! | [`Audio`](MediaKind::Audio) | 32 a second: the seconds of a WAV file from its header, of any other audio from its bytes at 32 kbit/s | Gemini's 32 tokens a second, the highest published rate; 32 kbit/s is below the usual rate of speech codecs, so the seconds are not undercounted |
//! | [`Binary`](MediaKind::Binary) (an MCP `blob`, a file that is no PDF) | a token a byte: 3 for each 4 characters of its base64 | o200k_base counts base64 at about 1.5 characters a token (1.46 for random bytes, 1.47 for a JPEG, 1.55 for a PDF, `tool-output-cap count` on `base64 -w0`), 0.7 tokens a byte: a host that passes it on as text is not undercounted |
//!
//! Every estimate errs on the side of more tokens: a block that costs more than its result's
//! limit gives way whole, with a note that names its kind.

use std::fmt;

use crate::image::{Detail, ImageTokens};

/// The kinds of block a tool result carries besides text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum MediaKind {
    /// An image: PNG, JPEG, GIF, WebP.
    Image,
    /// A PDF document.
    Pdf,
    /// Audio.
    Audio,
    /// Any other binary data: an MCP `blob`, a file that is no PDF.
    Binary,
}

impl MediaKind {
    /// Every kind, in the order a note names them.
    pub const ALL: [MediaKind; 4] = [
        MediaKind::Image,
        MediaKind::Pdf,
        MediaKind::Audio,
        MediaKind::Binary,
    ];

    /// Its name in a note and a log, in the plural: `images`, `PDFs`, `audio blocks`,
    /// `binary blocks`.
    pub fn plural(self) -> &'static str {
        match self {
            MediaKind::Image => "images",
            MediaKind::Pdf => "PDFs",
            MediaKind::Audio => "audio blocks",
            MediaKind::Binary => "binary blocks",
        }
    }
}

impl fmt::Display for MediaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.plural())
    }
}

/// A block of media, priced: its kind and its tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Media {
    /// What it is.
    pub kind: MediaKind,
    /// What it costs the model, at its provider's price or by this module's estimate.
    pub tokens: usize,
}

/// The text tokens a PDF page is taken to carry: the top of Anthropic's range.
const PDF_PAGE_TEXT: usize = 3000;
/// Gemini's price of a PDF page.
const GEMINI_PDF_PAGE: usize = 258;
/// The pages of a PDF whose pages cannot be read: the most Anthropic takes in a request.
pub(crate) const PDF_MOST_PAGES: usize = 100;
/// Tokens a second of audio.
const AUDIO_PER_SECOND: usize = 32;
/// The bytes a second of audio other than WAV is taken to take: 32 kbit/s.
const AUDIO_BYTES_PER_SECOND: usize = 4000;

impl Media {
    /// An image of `bytes`, priced by `rule` ([`ImageTokens::of_image`]).
    pub fn image(bytes: &[u8], rule: ImageTokens, detail: Detail) -> Self {
        Media {
            kind: MediaKind::Image,
            tokens: rule.of_image(bytes, detail),
        }
    }

    /// A PDF of `bytes`: its pages, read with `lopdf`, at the price a page costs under `rule`;
    /// `None` for bytes not in the request (a URL, a file id), priced at
    /// 100 pages, as is a PDF whose pages cannot be read.
    pub fn pdf(bytes: Option<&[u8]>, rule: ImageTokens) -> Self {
        let pages = bytes
            .and_then(|bytes| lopdf::Document::load_mem(bytes).ok())
            .map(|document| document.get_pages().len())
            .filter(|&pages| pages > 0)
            .unwrap_or(PDF_MOST_PAGES);
        let page = match rule {
            ImageTokens::Gemini => GEMINI_PDF_PAGE,
            rule => PDF_PAGE_TEXT + rule.tokens(1700, 2200, Detail::Auto),
        };
        Media {
            kind: MediaKind::Pdf,
            tokens: pages * page,
        }
    }

    /// Audio of `bytes`: 32 tokens a second, the seconds of a WAV file read from its header,
    /// of any other audio taken from its bytes at 32 kbit/s; at least one second.
    pub fn audio(bytes: &[u8]) -> Self {
        let wav_seconds = hound::WavReader::new(std::io::Cursor::new(bytes))
            .ok()
            .map(|wav| {
                let rate = wav.spec().sample_rate.max(1) as usize;
                (wav.duration() as usize).div_ceil(rate)
            });
        let seconds = wav_seconds.unwrap_or_else(|| bytes.len().div_ceil(AUDIO_BYTES_PER_SECOND));
        Media {
            kind: MediaKind::Audio,
            tokens: seconds.max(1) * AUDIO_PER_SECOND,
        }
    }

    /// Other binary data, `base64_len` characters of base64: a token a byte it holds, 3 for
    /// each 4 characters.
    pub fn binary(base64_len: usize) -> Self {
        Media {
            kind: MediaKind::Binary,
            tokens: (base64_len * 3).div_ceil(4).max(1),
        }
    }

    /// Media of the MIME type `mime`, whose bytes are `bytes` (`None` when they are not in the
    /// request) and whose base64 is `base64_len` characters long: an image, a PDF or audio by
    /// its type (or, for a PDF, its first bytes), else binary.
    pub fn of_type(mime: &str, bytes: Option<&[u8]>, base64_len: usize, rule: ImageTokens) -> Self {
        let is_pdf = mime == "application/pdf" || bytes.is_some_and(|b| b.starts_with(b"%PDF-"));
        match (mime.split('/').next().unwrap_or_default(), bytes) {
            _ if is_pdf => Media::pdf(bytes, rule),
            ("image", Some(bytes)) => Media::image(bytes, rule, Detail::Auto),
            ("image", None) => Media {
                kind: MediaKind::Image,
                tokens: rule.most(),
            },
            ("audio", Some(bytes)) => Media::audio(bytes),
            _ => Media::binary(base64_len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pdf_of_unreadable_pages_costs_a_hundred_pages() {
        let anthropic = Media::pdf(None, ImageTokens::Anthropic);
        assert_eq!(anthropic.kind, MediaKind::Pdf);
        assert_eq!(anthropic.tokens, 100 * (3000 + 1640));
        let broken = Media::pdf(Some(b"%PDF-1.7 and nothing after"), ImageTokens::Gemini);
        assert_eq!(broken.tokens, 100 * 258);
    }

    #[test]
    fn audio_that_is_no_wav_is_taken_at_32_kbit_a_second() {
        // 40,000 bytes at 4,000 a second: ten seconds.
        assert_eq!(Media::audio(&[0; 40_000]).tokens, 10 * 32);
        assert_eq!(Media::audio(&[]).tokens, 32);
    }

    #[test]
    fn a_type_says_what_the_bytes_are_and_a_pdf_is_known_by_its_first_bytes() {
        let rule = ImageTokens::Anthropic;
        let pdf = Media::of_type("application/octet-stream", Some(b"%PDF-1.4 x"), 12, rule);
        assert_eq!(pdf.kind, MediaKind::Pdf);
        assert_eq!(
            Media::of_type("image/png", None, 0, rule).tokens,
            rule.most()
        );
        let blob = Media::of_type("application/zip", Some(b"PK"), 1000, rule);
        assert_eq!((blob.kind, blob.tokens), (MediaKind::Binary, 750));
    }
}
