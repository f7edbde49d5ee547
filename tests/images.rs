//! Every token a tool result carries counts: its images are priced as the provider prices them,
//! from their header, and a result's limit covers its text and its images together. Checked on
//! this machine's own screenshots, those of the Rust toolchain's docs, where there are ten.

mod common;

use base64::Engine;
use common::{count, listing};
use serde_json::{json, Value};
use tool_output_cap::wire::{Api, RequestCap};
use tool_output_cap::{Detail, ImageTokens, Outcome, ToolOutputLimits};

/// Ten screenshots of this machine, PNGs of 800 px wide or more, with their bytes: those of the
/// Rust toolchain's own docs (its `rust-docs` component: the book's, cargo's, rustc's); none
/// (the tests that need them say so) where there are not ten.
fn screenshots(test: &str) -> Vec<(String, Vec<u8>)> {
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default();
    let folder = std::path::Path::new(&sysroot).join("share/doc/rust/html");
    let mut found = Vec::new();
    pngs_in(&folder, &mut found);
    found.sort();
    found.dedup_by(|a, b| a.1 == b.1);
    if found.len() < 10 {
        eprintln!(
            "skipped {test}: fewer than ten PNGs of 800 px wide or more in {} (rustup's \
             rust-docs component)",
            folder.display()
        );
        return Vec::new();
    }
    found.truncate(10);
    found
}

/// The PNGs of 800 px wide or more in `folder` and the folders in it.
fn pngs_in(folder: &std::path::Path, found: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            pngs_in(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "png") {
            let bytes = std::fs::read(&path).unwrap();
            if imagesize::blob_size(&bytes).is_ok_and(|size| size.width >= 800) {
                found.push((path.display().to_string(), bytes));
            }
        }
    }
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn anthropic_price(bytes: &[u8]) -> usize {
    ImageTokens::Anthropic.of_image(bytes, Detail::Auto)
}

/// The tokens a list of MCP or Anthropic blocks costs: its text, and its images at Anthropic's
/// price, each read back from its base64.
fn priced(blocks: &Value) -> usize {
    let mut text = Vec::new();
    let mut images = 0;
    for block in blocks.as_array().unwrap() {
        let data = block["data"].as_str().or(block["source"]["data"].as_str());
        match (block["type"].as_str(), data) {
            (Some("image"), Some(data)) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap();
                images += anthropic_price(&bytes);
            }
            _ => text.extend(block["text"].as_str()),
        }
    }
    count(&text.join("\n")) + images
}

#[test]
fn ten_screenshots_in_an_mcp_result_are_priced_scaled_to_the_floor_and_the_last_give_way_whole() {
    let shots =
        screenshots("ten_screenshots_in_an_mcp_result_are_priced_scaled_to_the_floor_and_the_last_give_way_whole");
    if shots.is_empty() {
        return;
    }
    let images: Vec<Value> = shots
        .iter()
        .map(|(_, bytes)| json!({"type": "image", "data": base64(bytes), "mimeType": "image/png"}))
        .collect();
    let mut content = vec![json!({"type": "text", "text": listing(200)})];
    content.extend(images.iter().cloned());
    let result = json!({ "content": content });
    let before = priced(&result["content"]);
    let limits = ToolOutputLimits::new(5000).unwrap();
    let capped = limits
        .cap_call_tool_result("browser_take_screenshot", &result.to_string())
        .expect("ten screenshots are over 5000 tokens");
    let capped: Value = serde_json::from_str(&capped.json).unwrap();
    let blocks = capped["content"].as_array().unwrap();
    let after = priced(&capped["content"]);
    assert!(after <= 5000, "{after} tokens reached the model");
    // The first images stay, in order, each as it came or scaled down to a long edge of 1024
    // px, in its own format and decoding; the others go, and the last block says so.
    let kept: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "image").collect();
    assert!(!kept.is_empty());
    let mut scaled = 0;
    for (kept, ((_, original), image)) in kept.iter().zip(shots.iter().zip(&images)) {
        if *kept == image {
            continue;
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(kept["data"].as_str().unwrap())
            .unwrap();
        let decoded = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
            .expect("a scaled image decodes as a PNG");
        let (width, height) = (decoded.width() as usize, decoded.height() as usize);
        let size = imagesize::blob_size(original).unwrap();
        assert_eq!(width.max(height), 1024, "scaled to the floor");
        assert!(size.width.max(size.height) > 1024);
        assert!((width * size.height).abs_diff(height * size.width) <= size.width.max(size.height));
        scaled += 1;
    }
    let gone = images.len() - kept.len();
    assert!(gone > 0);
    let kept_tokens: usize = kept
        .iter()
        .map(|image| {
            let data = image["data"].as_str().unwrap();
            anthropic_price(
                &base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap(),
            )
        })
        .sum();
    let all: usize = shots.iter().map(|(_, bytes)| anthropic_price(bytes)).sum();
    let note = blocks.last().unwrap()["text"].as_str().unwrap();
    let scaled = match scaled {
        0 => String::new(),
        scaled => format!("; {scaled} scaled to 1024 px"),
    };
    assert_eq!(
        note,
        format!(
            "truncated: {} tokens dropped ({gone} of {} images{scaled}), refine your query",
            all - kept_tokens,
            images.len()
        )
    );
    eprintln!("{note}");
    let figures = &capped["_meta"]["tool-output-cap/truncation"]["content"];
    assert_eq!(figures["original_tokens"], before);
    // Capped once, nothing more to cut: a host that keeps the capped result sends it again.
    let again = json!({ "content": capped["content"] }).to_string();
    assert_eq!(
        limits.cap_call_tool_result("browser_take_screenshot", &again),
        None
    );
    eprintln!("ten screenshots and a listing: {before} tokens at Anthropic's price, {after} after");
}

#[test]
fn an_image_within_the_limit_passes_as_it_came() {
    let shots = screenshots("an_image_within_the_limit_passes_as_it_came");
    let Some((_, bytes)) = shots.first() else {
        return;
    };
    let result = json!({"content": [
        {"type": "text", "text": "the page:"},
        {"type": "image", "data": base64(bytes), "mimeType": "image/png"},
    ]});
    let limits = ToolOutputLimits::new(5000).unwrap();
    assert_eq!(
        limits.cap_call_tool_result("shot", &result.to_string()),
        None
    );
}

#[test]
fn the_text_is_cut_to_what_the_images_leave() {
    let shots = screenshots("the_text_is_cut_to_what_the_images_leave");
    let Some((_, bytes)) = shots.first() else {
        return;
    };
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64(bytes)}});
    let body = json!({"model": "claude-sonnet-4-5", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": listing(3000)},
            image.clone(),
        ]}]},
    ]})
    .to_string();
    let cap = RequestCap::new(ToolOutputLimits::new(5000).unwrap()).with_cache_bytes(0);
    let capped = cap.cap(Api::AnthropicMessages, &body).unwrap();
    let sent: Value = serde_json::from_str(capped.body.as_deref().unwrap()).unwrap();
    let blocks = &sent["messages"][1]["content"][0]["content"];
    assert_eq!(blocks[1], image, "the image stays, byte for byte");
    let image_tokens = anthropic_price(bytes);
    let text = blocks[0]["text"].as_str().unwrap();
    assert!(count(text) + image_tokens <= 5000);
    assert!(
        count(text) > 5000 - image_tokens - 100,
        "the text takes what is left"
    );
    assert!(text.ends_with("refine your query"));
    let again = cap.cap(Api::AnthropicMessages, capped.body.as_deref().unwrap());
    assert_eq!(
        again.unwrap().body,
        None,
        "capped once, the same bytes after"
    );
}

#[test]
fn a_responses_image_is_priced_by_the_requests_model_and_its_detail() {
    let shots = screenshots("a_responses_image_is_priced_by_the_requests_model_and_its_detail");
    if shots.is_empty() {
        return;
    }
    let request = |model: &str, detail: &str| {
        let output: Vec<Value> = shots
            .iter()
            .map(|(_, bytes)| json!({"type": "input_image", "detail": detail, "image_url": format!("data:image/png;base64,{}", base64(bytes))}))
            .collect();
        json!({"model": model, "input": [
            {"type": "function_call", "call_id": "c", "name": "shot", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": output},
        ]})
        .to_string()
    };
    let cap = RequestCap::new(ToolOutputLimits::new(5000).unwrap()).with_cache_bytes(0);
    // Ten images at 85 tokens each are within 5000: low detail passes as it came.
    let low = cap.cap(Api::Responses, &request("gpt-4o", "low")).unwrap();
    assert_eq!(low.body, None);
    for model in ["gpt-4o", "gpt-4.1-mini"] {
        let rule = ImageTokens::of_openai_model(model);
        let high = cap.cap(Api::Responses, &request(model, "high")).unwrap();
        let figures = high.cuts[0].truncation;
        let total: usize = shots
            .iter()
            .map(|(_, bytes)| rule.of_image(bytes, Detail::Auto))
            .sum();
        assert_eq!(figures.original_tokens, total, "{model}");
        assert!(figures.kept_tokens <= 5000, "{model}");
    }
}

#[test]
fn a_screenshot_every_turn_for_24_turns_stays_within_the_requests_budget() {
    let shots =
        screenshots("a_screenshot_every_turn_for_24_turns_stays_within_the_requests_budget");
    if shots.is_empty() {
        return;
    }
    let limits = ToolOutputLimits::new(5000)
        .unwrap()
        .with_max_tokens_per_request(12_000)
        .unwrap();
    let cap = RequestCap::new(limits);
    let mut messages = vec![json!({"role": "user", "content": "Check the pages."})];
    let mut largest = 0;
    for turn in 0..24 {
        let (_, bytes) = &shots[turn % shots.len()];
        let id = format!("t{turn}");
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "screenshot", "input": {}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": [
            {"type": "text", "text": format!("page {turn}")},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64(bytes)}},
        ]}]}));
        // The uncut history, sent again each turn, as a host sends it.
        let body = json!({"model": "claude-sonnet-4-5", "messages": messages}).to_string();
        let capped = cap.cap(Api::AnthropicMessages, &body).unwrap();
        let sent: Value = serde_json::from_str(capped.body.as_deref().unwrap_or(&body)).unwrap();
        let results: usize = sent["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|message| message["content"].as_array())
            .flatten()
            .filter(|block| block["type"] == "tool_result")
            .map(|block| match &block["content"] {
                Value::String(text) => count(text),
                blocks => priced(blocks),
            })
            .sum();
        assert!(
            results <= 12_000,
            "turn {turn}: {results} tokens of results"
        );
        largest = largest.max(results);
    }
    eprintln!("24 turns with a screenshot each: at most {largest} tokens of results in a request");
}

/// An MCP image block of a PNG header of `width` x `height` and no pixels: priced from its
/// header, and never scaled, since it does not decode.
fn header_only_png(width: u32, height: u32) -> Value {
    let mut header = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend(b"\x08\x06\0\0\0");
    json!({"type": "image", "data": base64(&header), "mimeType": "image/png"})
}

#[test]
fn an_image_that_does_not_decode_is_priced_as_it_came_and_never_scaled() {
    // 1640 tokens each at Anthropic's price, its most. Scaled to 1024 px, five would fit in
    // 5000; but they cannot be scaled, so the fit counts each whole: three stay as they came,
    // and the last two give way.
    let image = header_only_png(1568, 1000);
    let result = json!({ "content": vec![image.clone(); 5] });
    let limits = ToolOutputLimits::new(5000).unwrap();
    let capped = limits
        .cap_call_tool_result("screenshot", &result.to_string())
        .expect("five images of 1640 tokens are over 5000");
    let capped: Value = serde_json::from_str(&capped.json).unwrap();
    let blocks = capped["content"].as_array().unwrap();
    assert_eq!(blocks[..3], vec![image; 3][..], "as they came");
    assert_eq!(
        blocks[3..],
        [
            json!({"type": "text", "text": "truncated: 3280 tokens dropped (2 of 5 images), refine your query"})
        ]
    );
}

#[test]
fn a_frameworks_blocks_come_back_each_with_the_place_it_came_from() {
    let image = header_only_png(1568, 1000);
    let mut blocks = vec![json!({"type": "text", "text": "five screenshots:"})];
    blocks.extend(vec![image.clone(); 5]);
    let limits = ToolOutputLimits::new(5000).unwrap();
    let capped = limits
        .cap_blocks(
            "screenshot",
            &Value::from(blocks).to_string(),
            Outcome::Output,
        )
        .unwrap()
        .expect("five images of 1640 tokens are over 5000");
    let from: Vec<Option<usize>> = capped.blocks.iter().map(|block| block.from).collect();
    assert_eq!(from, [Some(0), Some(1), Some(2), Some(3), None]);
    assert_eq!(capped.blocks[1].json, image.to_string(), "byte for byte");
    let note: Value = serde_json::from_str(&capped.blocks[4].json).unwrap();
    assert_eq!(
        note["text"],
        "truncated: 3280 tokens dropped (2 of 5 images), refine your query"
    );
    assert_eq!(
        capped.truncation.original_tokens,
        5 * 1640 + count("five screenshots:")
    );
    assert!(capped.truncation.kept_tokens <= 5000);
    // Priced by the limits' rule: ten of 768 x 768 px are 7870 tokens at Anthropic's price, and
    // 2580 at Gemini's, one tile each.
    let blocks = Value::from(vec![header_only_png(768, 768); 10]).to_string();
    let anthropic = limits
        .cap_blocks("screenshot", &blocks, Outcome::Output)
        .unwrap();
    let each = ImageTokens::Anthropic.tokens(768, 768, Detail::Auto);
    assert_eq!(anthropic.unwrap().truncation.original_tokens, 10 * each);
    let gemini = limits.clone().with_image_tokens(ImageTokens::Gemini);
    assert_eq!(
        gemini
            .cap_blocks("screenshot", &blocks, Outcome::Output)
            .unwrap(),
        None
    );
    let error = limits.cap_blocks("screenshot", r#"{"type": "text"}"#, Outcome::Output);
    assert_eq!(
        error.unwrap_err().to_string(),
        r#"the blocks are not a JSON list: it starts "{\"type\": \"text\"}""#
    );
}

/// A screenshot as each agent framework holds it in a tool result, its base64 in `data`, and
/// the key its bytes stay under when scaled.
fn in_each_framework(data: &str) -> Vec<(&'static str, Value, &'static str)> {
    let url = format!("data:image/png;base64,{data}");
    vec![
        (
            "MCP, LangChain.js",
            json!({"type": "image", "data": data, "mimeType": "image/png"}),
            "/data",
        ),
        (
            "LangChain",
            json!({"type": "image", "base64": data, "mime_type": "image/png"}),
            "/base64",
        ),
        (
            "Chat, LangChain",
            json!({"type": "image_url", "image_url": {"url": url}}),
            "/image_url/url",
        ),
        (
            "OpenAI Agents",
            json!({"type": "image", "image_url": url, "detail": "auto"}),
            "/image_url",
        ),
        (
            "OpenAI Agents JS",
            json!({"type": "image", "image": url}),
            "/image",
        ),
        (
            "AI SDK",
            json!({"type": "image-data", "data": data, "mediaType": "image/png"}),
            "/data",
        ),
    ]
}

#[test]
fn a_frameworks_screenshots_are_priced_and_scaled_in_their_own_shape() {
    let shots = screenshots("a_frameworks_screenshots_are_priced_and_scaled_in_their_own_shape");
    if shots.is_empty() {
        return;
    }
    let limits = ToolOutputLimits::new(5000).unwrap();
    let all: usize = shots.iter().map(|(_, bytes)| anthropic_price(bytes)).sum();
    let shapes: Vec<Vec<(&str, Value, &str)>> = shots
        .iter()
        .map(|(_, bytes)| in_each_framework(&base64(bytes)))
        .collect();
    for shape in 0..shapes[0].len() {
        let (framework, _, key) = shapes[0][shape];
        let blocks: Vec<&Value> = shapes.iter().map(|shapes| &shapes[shape].1).collect();
        let blocks = serde_json::to_string(&blocks).unwrap();
        let capped = limits
            .cap_blocks("screenshot", &blocks, Outcome::Output)
            .unwrap()
            .unwrap_or_else(|| panic!("{framework}: ten screenshots are over 5000 tokens"));
        assert_eq!(capped.truncation.original_tokens, all, "{framework}");
        assert!(capped.truncation.kept_tokens <= 5000, "{framework}");
        let (kept, note) = capped.blocks.split_at(capped.blocks.len() - 1);
        assert_eq!(note[0].from, None, "{framework}");
        for block in kept {
            let block: Value = serde_json::from_str(&block.json).unwrap();
            let data = block.pointer(key).and_then(Value::as_str);
            let data = data.unwrap_or_else(|| panic!("{framework}: no {key} in {block}"));
            let data = data.strip_prefix("data:image/png;base64,").unwrap_or(data);
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            let decoded = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
                .unwrap_or_else(|e| panic!("{framework}: {e}"));
            assert!(decoded.width().max(decoded.height()) <= 1568, "{framework}");
        }
    }
}

#[test]
fn one_screenshot_over_the_limit_is_scaled_down_to_fit() {
    let shots = screenshots("one_screenshot_over_the_limit_is_scaled_down_to_fit");
    let Some((_, bytes)) = shots.iter().find(|(_, bytes)| {
        let size = imagesize::blob_size(bytes).unwrap();
        anthropic_price(bytes) > 1000 && size.width.max(size.height) >= 1280
    }) else {
        return;
    };
    let result =
        json!({"content": [{"type": "image", "data": base64(bytes), "mimeType": "image/png"}]});
    let limits = ToolOutputLimits::new(1000).unwrap();
    let capped = limits
        .cap_call_tool_result("browser_take_screenshot", &result.to_string())
        .expect("over 1000 tokens");
    let capped: Value = serde_json::from_str(&capped.json).unwrap();
    let after = priced(&capped["content"]);
    assert!(after <= 1000, "{after} tokens reached the model");
    let data = capped["content"][0]["data"].as_str().unwrap();
    let scaled = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let size = imagesize::blob_size(&scaled).unwrap();
    assert_eq!(size.width.max(size.height), 1024);
    let note = capped["content"][1]["text"].as_str().unwrap();
    let dropped = anthropic_price(bytes) - anthropic_price(&scaled);
    assert_eq!(
        note,
        format!(
            "truncated: {dropped} tokens dropped (1 image scaled to 1024 px), refine your query"
        )
    );
}
