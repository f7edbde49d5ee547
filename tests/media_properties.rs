//! The media rule stated once, for the generator to find the corner: random mixes of text,
//! images (that scale, and that do not decode) and PDFs, under random limits, never reach the
//! model over the limit, unless the first image alone is over it at the floor; and a result
//! capped once is the same bytes when capped again.

mod common;
mod pdf;

use std::io::Cursor;

use base64::Engine;
use common::{count, listing};
use pdf::pdf_of;
use proptest::prelude::*;
use serde_json::{json, Value};
use tool_output_cap::{Detail, ImageTokens, Media, Outcome, ToolOutputLimits, FLOOR_LONG_EDGE};

/// A block of a generated result.
#[derive(Debug, Clone)]
enum Block {
    /// A listing of this many paths.
    Text(usize),
    /// A PNG of this width and height: one that decodes, or its header alone.
    Image(u32, u32, bool),
    /// A PDF of this many pages.
    Pdf(usize),
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        (1usize..600).prop_map(Block::Text),
        (16u32..2400, 16u32..2400, any::<bool>())
            .prop_map(|(w, h, decodes)| Block::Image(w, h, decodes)),
        (1usize..4).prop_map(Block::Pdf),
    ]
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn png(width: u32, height: u32, decodes: bool) -> Vec<u8> {
    if !decodes {
        let mut header = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        header.extend(width.to_be_bytes());
        header.extend(height.to_be_bytes());
        header.extend(b"\x08\x06\0\0\0");
        return header;
    }
    let pixels = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([x as u8, y as u8, 90]));
    let mut bytes = Cursor::new(Vec::new());
    pixels
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    bytes.into_inner()
}

fn as_json(block: &Block) -> Value {
    match *block {
        Block::Text(paths) => json!({"type": "text", "text": listing(paths)}),
        Block::Image(w, h, decodes) => {
            json!({"type": "image", "data": base64(&png(w, h, decodes)), "mimeType": "image/png"})
        }
        Block::Pdf(pages) => json!({"type": "resource", "resource": {
            "uri": "file:///report.pdf", "mimeType": "application/pdf", "blob": base64(&pdf_of(pages)),
        }}),
    }
}

/// The least the first image of `blocks` can cost: at the floor if it decodes, else as it is.
fn first_image_least(blocks: &[Block]) -> usize {
    let Some(&Block::Image(w, h, decodes)) = blocks.iter().find(|b| matches!(b, Block::Image(..)))
    else {
        return 0;
    };
    let (w, h) = (w as usize, h as usize);
    let long = w.max(h);
    let floor = |side: usize| (side * FLOOR_LONG_EDGE / long).max(1);
    match decodes && long > FLOOR_LONG_EDGE {
        true => ImageTokens::Anthropic.tokens(floor(w), floor(h), Detail::Auto),
        false => ImageTokens::Anthropic.tokens(w, h, Detail::Auto),
    }
}

/// What the blocks the model gets cost, as the crate's rule counts them: their text together,
/// the note that media gave way on its own, each image at Anthropic's price, each PDF by its
/// pages.
fn priced(blocks: &[Value]) -> usize {
    let decoded = |data: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(data.as_str().unwrap())
            .unwrap()
    };
    let (mut texts, mut notes, mut media) = (Vec::new(), 0, 0);
    for block in blocks {
        match block["type"].as_str().unwrap() {
            "text" => {
                let text = block["text"].as_str().unwrap();
                match text.contains(" tokens dropped (") {
                    true => notes += count(text),
                    false => texts.push(text),
                }
            }
            "image" => {
                let bytes = decoded(&block["data"]);
                media += ImageTokens::Anthropic.of_image(&bytes, Detail::Auto);
            }
            _ => {
                let bytes = decoded(&block["resource"]["blob"]);
                media += Media::pdf(Some(&bytes), ImageTokens::Anthropic).tokens;
            }
        }
    }
    count(&texts.join("\n")) + notes + media
}

/// The rule checked on one result: `blocks` capped to `max_tokens`.
fn check(blocks: &[Block], max_tokens: usize) -> Result<(), TestCaseError> {
    let given: Vec<Value> = blocks.iter().map(as_json).collect();
    let list = Value::from(given.clone()).to_string();
    let limits = ToolOutputLimits::new(max_tokens).unwrap();
    // The first image stays, at the floor at least, even when it alone is over the room.
    let room = max_tokens - 2 * 32;
    let first_over = first_image_least(blocks) > room;
    let Some(capped) = limits.cap_blocks("tool", &list, Outcome::Output).unwrap() else {
        let tokens = priced(&given);
        prop_assert!(
            tokens <= max_tokens || first_over,
            "{tokens} tokens passed as they came"
        );
        return Ok(());
    };
    let sent: Vec<Value> = capped
        .blocks
        .iter()
        .map(|block| serde_json::from_str(&block.json).unwrap())
        .collect();
    let tokens = priced(&sent);
    prop_assert!(
        tokens <= max_tokens || first_over,
        "{tokens} tokens of {max_tokens}: {:?}",
        blocks
    );
    prop_assert_eq!(capped.truncation.max_tokens, max_tokens);
    // The same result, the same bytes; and capped once, nothing more to cut.
    let again = limits.cap_blocks("tool", &list, Outcome::Output).unwrap();
    prop_assert!(
        again.as_ref() == Some(&capped),
        "capped twice, two results: {:?}",
        blocks
    );
    if tokens <= max_tokens {
        let capped_list = Value::from(sent).to_string();
        let twice = limits
            .cap_blocks("tool", &capped_list, Outcome::Output)
            .unwrap();
        prop_assert!(
            twice.is_none(),
            "cut again: {:?} of {:?}",
            twice.map(|t| t.truncation),
            blocks
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_mix_of_text_images_and_pdfs_is_within_its_limit(
        blocks in prop::collection::vec(block(), 1..7),
        max_tokens in 200usize..=12_000,
    ) {
        check(&blocks, max_tokens)?;
    }
}

/// Media that fill the room to the token leave no room for a note longer than its reserve.
#[test]
fn a_note_longer_than_its_reserve_still_fits() {
    use Block::*;
    let blocks = [
        Image(1594, 1875, true),
        Text(4),
        Pdf(1),
        Image(950, 603, false),
        Image(16, 47, false),
    ];
    check(&blocks, 2016).unwrap();
}
