//! An image over what its result's limit leaves, scaled down, aspect kept, in its own format: a
//! pure function of its bytes and the long edge it is scaled to, so that the same result gives
//! the same bytes every time and the provider's prompt cache keeps hitting.
//!
//! Images are tried at long edges of 1568 px (the largest Anthropic takes unscaled), 1280 and
//! 1024 px ([`STEPS`]), and never scaled below [`FLOOR_LONG_EDGE`], 1024 px: XGA's width, the
//! size Anthropic's computer-use reference scales every screenshot to, and at which the text of
//! a screenshot stays legible (a 13 px interface font of a 1920 px wide screen is 7 px there).
//! Below it, an image gives way whole instead.
//!
//! The filter is the triangle (bilinear) filter; a JPEG is encoded at quality 85, a PNG with the
//! encoder's default compression, a GIF (its first frame) and a WebP (lossless) with theirs.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::ImageFormat;

/// The long edge, in pixels, below which no image is scaled: 1024.
pub const FLOOR_LONG_EDGE: usize = 1024;

/// The long edges an image is tried at, the largest first, down to the floor.
pub(crate) const STEPS: [usize; 3] = [1568, 1280, FLOOR_LONG_EDGE];

/// A JPEG's quality when it is encoded again.
const JPEG_QUALITY: u8 = 85;

/// The size of a `width` × `height` image scaled down, aspect kept, to a long edge of at most
/// `long_edge`; as it is if within it.
pub(crate) fn fitted(width: usize, height: usize, long_edge: usize) -> (usize, usize) {
    let long = width.max(height);
    if long <= long_edge {
        return (width, height);
    }
    let scaled = |side: usize| (side * long_edge / long).max(1);
    (scaled(width), scaled(height))
}

/// The width and height of the image `bytes`, from its header; `None` when they cannot be read.
pub(crate) fn size(bytes: &[u8]) -> Option<(usize, usize)> {
    let size = imagesize::blob_size(bytes).ok()?;
    (size.width > 0 && size.height > 0).then_some((size.width, size.height))
}

/// Whether the image `bytes` is of a format [`scaled`] writes: PNG, JPEG, GIF or WebP.
pub(crate) fn can_scale(bytes: &[u8]) -> bool {
    matches!(
        image::guess_format(bytes),
        Ok(ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP)
    )
}

/// The image `bytes` scaled down to a long edge of `long_edge`, in its own format (PNG, JPEG,
/// GIF or WebP), of the size [`fitted`] gives; `None` when it is within that edge already, or is
/// of another format, or cannot be decoded.
pub(crate) fn scaled(bytes: &[u8], long_edge: usize) -> Option<Vec<u8>> {
    let (width, height) = size(bytes)?;
    let (to_width, to_height) = fitted(width, height, long_edge);
    if (to_width, to_height) == (width, height) {
        return None;
    }
    let format = image::guess_format(bytes).ok()?;
    let decoded = image::load_from_memory_with_format(bytes, format).ok()?;
    let (to_width, to_height) = (
        u32::try_from(to_width).ok()?,
        u32::try_from(to_height).ok()?,
    );
    let resized = decoded.resize_exact(to_width, to_height, FilterType::Triangle);
    let mut out = Cursor::new(Vec::new());
    match format {
        ImageFormat::Jpeg => resized
            .to_rgb8()
            .write_with_encoder(JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY)),
        ImageFormat::Png => resized.write_to(&mut out, ImageFormat::Png),
        ImageFormat::Gif | ImageFormat::WebP => resized.to_rgba8().write_to(&mut out, format),
        _ => return None,
    }
    .ok()?;
    Some(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_keeps_its_aspect_and_no_side_goes_to_zero() {
        assert_eq!(fitted(1280, 800, 1024), (1024, 640));
        assert_eq!(fitted(800, 1280, 1024), (640, 1024));
        assert_eq!(fitted(5000, 1, 1024), (1024, 1));
        assert_eq!(fitted(1000, 700, 1024), (1000, 700));
    }

    #[test]
    fn each_format_is_scaled_to_its_size_in_its_own_format_and_the_same_bytes_twice() {
        let image = image::RgbaImage::from_fn(1600, 900, |x, y| {
            image::Rgba([(x % 256) as u8, (y % 256) as u8, ((x / 7) % 256) as u8, 255])
        });
        for format in [
            ImageFormat::Png,
            ImageFormat::Jpeg,
            ImageFormat::Gif,
            ImageFormat::WebP,
        ] {
            let mut bytes = Cursor::new(Vec::new());
            let source = image::DynamicImage::ImageRgba8(image.clone());
            let source = match format {
                ImageFormat::Jpeg => image::DynamicImage::ImageRgb8(source.to_rgb8()),
                _ => source,
            };
            source.write_to(&mut bytes, format).unwrap();
            let bytes = bytes.into_inner();
            let once = scaled(&bytes, 1024).expect("1600 px is over 1024");
            assert_eq!(image::guess_format(&once).unwrap(), format);
            assert_eq!(size(&once), Some((1024, 576)), "{format:?}");
            assert_eq!(scaled(&bytes, 1024), Some(once.clone()), "{format:?}");
            assert_eq!(scaled(&once, 1024), None, "within it already");
        }
    }
}
