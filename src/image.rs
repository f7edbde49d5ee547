//! What an image in a tool result costs the model: its width and height, read from its header
//! without decoding it, priced as its provider documents.
//!
//! | rule | tokens of a `w` × `h` image | source |
//! | --- | --- | --- |
//! | [`Anthropic`](ImageTokens::Anthropic) | scaled down, aspect kept, to a long edge of at most 1568 px; then `w × h / 750`, at most 1640 (784 × 1568, the largest size of the table of maximum sizes) | docs.claude.com, "Vision" |
//! | [`OpenAiTiles`](ImageTokens::OpenAiTiles) (GPT-4o, GPT-4.1, GPT-5) | `detail: "low"`: 85. Else fit within 2048 × 2048, then the shortest side down to 768; 85 + 170 per 512-px tile | platform.openai.com, "Images and vision" |
//! | [`OpenAiPatches`](ImageTokens::OpenAiPatches) (GPT-4.1 mini and nano, o4-mini, GPT-5 mini and nano) | 32-px patches, scaled down to at most 1536 of them, times the model's multiplier | the same guide |
//! | [`Gemini`](ImageTokens::Gemini) | 258 when both sides are at most 384 px; else 258 per 768-px tile | ai.google.dev, "Image understanding" |
//!
//! An image whose size cannot be read (a URL, a file id, bytes of no known format) is priced at
//! the most its rule can charge ([`ImageTokens::most`]): never passed as free.

use crate::name::UnknownName;

/// How a model prices an image: the rule of its provider.
///
/// In a manifest, `image_tokens` in `[worker.tool_output]` names it: `"anthropic"` (the
/// default), `"openai"` (the tile models) or `"gemini"`.
///
/// ```
/// use tool_output_cap::{Detail, ImageTokens};
///
/// // A 1280 x 800 screenshot.
/// assert_eq!(ImageTokens::Anthropic.tokens(1280, 800, Detail::Auto), 1366);
/// assert_eq!(ImageTokens::OpenAiTiles.tokens(1280, 800, Detail::Auto), 1105);
/// assert_eq!(ImageTokens::OpenAiTiles.tokens(1280, 800, Detail::Low), 85);
/// assert_eq!(ImageTokens::Gemini.tokens(1280, 800, Detail::Auto), 1032);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ImageTokens {
    /// Anthropic's rule, for every Claude model.
    #[default]
    Anthropic,
    /// OpenAI's rule for its tile models.
    OpenAiTiles,
    /// OpenAI's rule for its patch models, with the model's multiplier in hundredths (162 for
    /// 1.62).
    OpenAiPatches {
        /// The model's multiplier, in hundredths.
        multiplier: u32,
    },
    /// Google's rule for Gemini 2 models.
    Gemini,
}

/// The `detail` an OpenAI image asks for; the other rules ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Detail {
    /// `"low"`.
    Low,
    /// Any other, or none.
    #[default]
    Auto,
}

/// The rule a manifest names: `"anthropic"`, `"openai"` (the tile models) or `"gemini"`.
impl std::str::FromStr for ImageTokens {
    type Err = UnknownName;

    fn from_str(name: &str) -> Result<Self, UnknownName> {
        let named = [
            ImageTokens::Anthropic,
            ImageTokens::OpenAiTiles,
            ImageTokens::Gemini,
        ];
        UnknownName::find(
            &named,
            ImageTokens::name,
            r#""anthropic", "openai" or "gemini""#,
            name,
        )
    }
}

const ANTHROPIC_LONG_EDGE: f64 = 1568.0;
const ANTHROPIC_MOST: usize = 1640;
const PATCHES_MOST: f64 = 1536.0;

impl ImageTokens {
    /// The rule of OpenAI's model `model`: its patch models by their published multiplier,
    /// the tile rule for any other. Where OpenAI's guide and its billing disagree (GPT-5 mini
    /// and nano), the larger multiplier is taken, so that an image is never undercounted.
    pub fn of_openai_model(model: &str) -> Self {
        const PATCH_MODELS: [(&str, u32); 6] = [
            ("gpt-4.1-mini", 162),
            ("gpt-4.1-nano", 246),
            ("gpt-5-mini", 162),
            ("gpt-5-nano", 246),
            ("o4-mini", 172),
            ("codex-mini", 172),
        ];
        PATCH_MODELS
            .iter()
            .find(|(name, _)| model.starts_with(name))
            .map_or(ImageTokens::OpenAiTiles, |&(_, multiplier)| {
                ImageTokens::OpenAiPatches { multiplier }
            })
    }

    /// The tokens of a `width` × `height` image under this rule.
    pub fn tokens(self, width: usize, height: usize, detail: Detail) -> usize {
        let (w, h) = (width as f64, height as f64);
        match self {
            ImageTokens::Anthropic => {
                let (w, h) = within(w, h, ANTHROPIC_LONG_EDGE, f64::INFINITY);
                ((w * h / 750.0).ceil() as usize).min(ANTHROPIC_MOST)
            }
            ImageTokens::OpenAiTiles if detail == Detail::Low => 85,
            ImageTokens::OpenAiTiles => {
                let (w, h) = within(w, h, 2048.0, 2048.0);
                let (w, h) = within(w, h, f64::INFINITY, 768.0);
                85 + 170 * tiles(w, 512.0) * tiles(h, 512.0)
            }
            ImageTokens::OpenAiPatches { multiplier } => {
                (patches(w, h) as f64 * f64::from(multiplier) / 100.0).ceil() as usize
            }
            ImageTokens::Gemini if width <= 384 && height <= 384 => 258,
            ImageTokens::Gemini => 258 * tiles(w, 768.0) * tiles(h, 768.0),
        }
    }

    /// The tokens of an image whose size cannot be read: the most this rule charges (for
    /// Gemini, whose charge grows with the size, that of a 3072 × 3072 image).
    pub fn most(self) -> usize {
        match self {
            ImageTokens::Anthropic => ANTHROPIC_MOST,
            ImageTokens::OpenAiTiles => self.tokens(768, 2048, Detail::Auto),
            ImageTokens::OpenAiPatches { multiplier } => {
                (PATCHES_MOST * f64::from(multiplier) / 100.0).ceil() as usize
            }
            ImageTokens::Gemini => self.tokens(3072, 3072, Detail::Auto),
        }
    }

    /// The tokens of the image `bytes` (PNG, JPEG, GIF, WebP and the other formats the
    /// `imagesize` crate reads), or [`most`](Self::most) when its size cannot be read.
    pub fn of_image(self, bytes: &[u8], detail: Detail) -> usize {
        match imagesize::blob_size(bytes) {
            Ok(size) if size.width > 0 && size.height > 0 => {
                self.tokens(size.width, size.height, detail)
            }
            _ => self.most(),
        }
    }

    /// The name of the rule, for a cache's key and a log.
    pub fn name(self) -> &'static str {
        match self {
            ImageTokens::Anthropic => "anthropic",
            ImageTokens::OpenAiTiles => "openai",
            ImageTokens::OpenAiPatches { .. } => "openai patches",
            ImageTokens::Gemini => "gemini",
        }
    }
}

/// `w` × `h` scaled down, aspect kept, to a long edge of at most `long` and a short edge of at
/// most `short`; as it is if within both.
fn within(w: f64, h: f64, long: f64, short: f64) -> (f64, f64) {
    let scale = (long / w.max(h)).min(short / w.min(h)).min(1.0);
    ((w * scale).floor().max(1.0), (h * scale).floor().max(1.0))
}

/// How many `side`-px tiles cover `length` px.
fn tiles(length: f64, side: f64) -> usize {
    (length / side).ceil() as usize
}

/// OpenAI's 32-px patches of a `w` × `h` image: scaled down, when over 1536, so that whole
/// patches fit within 1536; at most 1536.
fn patches(w: f64, h: f64) -> usize {
    let count = |w: f64, h: f64| tiles(w, 32.0) * tiles(h, 32.0);
    if count(w, h) as f64 <= PATCHES_MOST {
        return count(w, h);
    }
    let shrink = (32.0 * 32.0 * PATCHES_MOST / (w * h)).sqrt();
    let (sw, sh) = (w * shrink / 32.0, h * shrink / 32.0);
    let shrink = shrink * (sw.floor() / sw).min(sh.floor() / sh);
    count((w * shrink).floor(), (h * shrink).floor()).min(PATCHES_MOST as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_scales_the_long_edge_to_1568_and_charges_an_area_over_750() {
        // docs.claude.com's table: 1092 x 1092 is about 1590 tokens, 200 x 200 about 54.
        assert_eq!(
            ImageTokens::Anthropic.tokens(1092, 1092, Detail::Auto),
            1590
        );
        assert_eq!(ImageTokens::Anthropic.tokens(200, 200, Detail::Auto), 54);
        // 3136 x 1568 is scaled to 1568 x 784.
        assert_eq!(
            ImageTokens::Anthropic.tokens(3136, 1568, Detail::Auto),
            1640
        );
        assert_eq!(
            ImageTokens::Anthropic.tokens(8000, 8000, Detail::Auto),
            1640
        );
    }

    #[test]
    fn openai_tiles_are_the_guides_examples() {
        // The guide: 1024 x 1024 high is 765; 2048 x 4096 is 1105; low is 85.
        assert_eq!(
            ImageTokens::OpenAiTiles.tokens(1024, 1024, Detail::Auto),
            765
        );
        assert_eq!(
            ImageTokens::OpenAiTiles.tokens(2048, 4096, Detail::Auto),
            1105
        );
        assert_eq!(ImageTokens::OpenAiTiles.tokens(4096, 8192, Detail::Low), 85);
        assert_eq!(ImageTokens::OpenAiTiles.tokens(100, 100, Detail::Auto), 255);
    }

    #[test]
    fn openai_patches_are_the_guides_examples() {
        let one = ImageTokens::OpenAiPatches { multiplier: 100 };
        // The guide: 1024 x 1024 is 1024 patches; 1800 x 2400 is scaled to 1452.
        assert_eq!(one.tokens(1024, 1024, Detail::Auto), 1024);
        assert_eq!(one.tokens(1800, 2400, Detail::Auto), 1452);
        let mini = ImageTokens::of_openai_model("gpt-4.1-mini-2025-04-14");
        assert_eq!(mini.tokens(1024, 1024, Detail::Low), 1659);
        assert_eq!(
            ImageTokens::of_openai_model("gpt-4o"),
            ImageTokens::OpenAiTiles
        );
    }

    #[test]
    fn gemini_charges_258_a_768_px_tile() {
        assert_eq!(ImageTokens::Gemini.tokens(384, 384, Detail::Auto), 258);
        assert_eq!(ImageTokens::Gemini.tokens(385, 100, Detail::Auto), 258);
        assert_eq!(
            ImageTokens::Gemini.tokens(1600, 800, Detail::Auto),
            3 * 2 * 258
        );
    }

    #[test]
    fn an_image_of_no_readable_size_costs_the_most_its_rule_charges() {
        for rule in [
            ImageTokens::Anthropic,
            ImageTokens::OpenAiTiles,
            ImageTokens::of_openai_model("o4-mini"),
            ImageTokens::Gemini,
        ] {
            assert_eq!(rule.of_image(b"not an image", Detail::Auto), rule.most());
            assert!(
                rule.most() >= rule.tokens(3000, 2000, Detail::Auto),
                "{rule:?}"
            );
        }
    }
}
