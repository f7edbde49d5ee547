//! Nothing a tool result carries passes uncounted: a PDF, audio, a blob, a file, a computer
//! screenshot and a Gemini function response's media parts are each priced, and each gives way
//! whole, with a note naming its kind, when it does not fit.

mod common;
mod pdf;

use base64::Engine;
use common::{count, listing};
use pdf::pdf_of;
use serde_json::{json, Value};
use tool_output_cap::wire::{Api, RequestCap};
use tool_output_cap::{Detail, ImageTokens, Media, MediaKind, ToolOutputLimits};

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A WAV file of `seconds` of silence, 8 kHz mono, 16-bit.
fn wav_of(seconds: u32) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 8000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut wav = hound::WavWriter::new(&mut bytes, spec).unwrap();
    (0..seconds * 8000).for_each(|_| wav.write_sample(0i16).unwrap());
    wav.finalize().unwrap();
    bytes.into_inner()
}

/// One Anthropic request whose one tool result holds `content`.
fn anthropic(content: Value) -> String {
    json!({"model": "claude-sonnet-4-5", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": content}]},
    ]})
    .to_string()
}

fn cap(max_tokens: usize) -> RequestCap {
    RequestCap::new(ToolOutputLimits::new(max_tokens).unwrap()).with_cache_bytes(0)
}

#[test]
fn a_pdf_is_priced_by_its_pages_and_gives_way_whole_with_a_note_naming_it() {
    let pdf = pdf_of(3);
    // 3 pages of 3,000 tokens of text and a page image at Anthropic's most, 1,640.
    let priced = Media::pdf(Some(&pdf), ImageTokens::Anthropic);
    assert_eq!((priced.kind, priced.tokens), (MediaKind::Pdf, 3 * 4640));
    let document = json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": base64(&pdf)}});
    let body = anthropic(json!([{"type": "text", "text": "the report:"}, document.clone()]));
    let capped = cap(5000).cap(Api::AnthropicMessages, &body).unwrap();
    let sent: Value = serde_json::from_str(capped.body.as_deref().unwrap()).unwrap();
    let blocks = sent["messages"][1]["content"][0]["content"]
        .as_array()
        .unwrap();
    assert!(!blocks.contains(&document), "the PDF gives way");
    assert_eq!(
        blocks.last().unwrap()["text"],
        "truncated: 13920 tokens dropped (1 of 1 PDFs), refine your query"
    );
    let figures = capped.cuts[0].truncation;
    assert_eq!(figures.original_tokens, count("the report:") + 3 * 4640);
    assert!(figures.kept_tokens <= 5000);
    // Within a larger limit, it passes byte for byte.
    assert_eq!(
        cap(20_000).cap(Api::AnthropicMessages, &body).unwrap().body,
        None
    );
}

#[test]
fn a_block_of_medias_labels_count_in_its_price_and_a_megabyte_of_them_gives_way_with_it() {
    let pdf = pdf_of(1);
    let title = "quarterly report ".repeat(60_000);
    let document = json!({"type": "document", "title": title, "source": {"type": "base64", "media_type": "application/pdf", "data": base64(&pdf)}});
    let body = anthropic(json!([{"type": "text", "text": "the report:"}, document.clone()]));
    let price = 4640 + count(&title);
    let carried = cap(5000).carried(Api::AnthropicMessages, &body).unwrap();
    assert_eq!(carried[0].of_kind(MediaKind::Pdf), (1, price));
    let capped = cap(5000).cap(Api::AnthropicMessages, &body).unwrap();
    let sent: Value = serde_json::from_str(capped.body.as_deref().unwrap()).unwrap();
    let blocks = sent["messages"][1]["content"][0]["content"]
        .as_array()
        .unwrap();
    assert_eq!(blocks.len(), 2, "the text, and the note");
    assert_eq!(
        blocks[1]["text"],
        format!("truncated: {price} tokens dropped (1 of 1 PDFs), refine your query")
    );
    assert_eq!(
        capped.cuts[0].truncation.original_tokens,
        count("the report:") + price
    );
    // An MCP resource's image, 1 x 1, under a megabyte `uri`: the first image stays only
    // within the room, its labels with it.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let uri = format!("file:///{}", "shots/".repeat(150_000));
    let image =
        json!({"type": "resource", "resource": {"uri": uri, "mimeType": "image/png", "blob": png}});
    let result = json!({"content": [{"type": "text", "text": "the page:"}, image]}).to_string();
    let capped = ToolOutputLimits::new(5000)
        .unwrap()
        .cap_call_tool_result("shot", &result)
        .unwrap();
    let capped: Value = serde_json::from_str(&capped.json).unwrap();
    let texts: Vec<&str> = capped["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts[0], "the page:");
    assert!(
        texts[1].ends_with("(1 of 1 images), refine your query"),
        "{}",
        texts[1]
    );
}

#[test]
fn a_pdf_is_counted_by_its_pages_and_a_broken_one_as_a_hundred() {
    for pages in [1, 12, 40] {
        let priced = Media::pdf(Some(&pdf_of(pages)), ImageTokens::Gemini);
        assert_eq!(priced.tokens, pages * 258);
    }
    let mut broken = pdf_of(12);
    broken.truncate(broken.len() / 2);
    assert_eq!(
        Media::pdf(Some(&broken), ImageTokens::Gemini).tokens,
        100 * 258
    );
}

#[test]
fn audio_is_priced_by_its_seconds_and_a_blob_by_its_bytes() {
    let audio = json!({"type": "audio", "data": base64(&wav_of(10)), "mimeType": "audio/wav"});
    let blob = json!({"type": "resource", "resource": {"uri": "file:///dump.bin", "mimeType": "application/octet-stream", "blob": base64(&[7u8; 30_000])}});
    let result =
        json!({"content": [{"type": "text", "text": "recorded"}, audio.clone(), blob.clone()]});
    let limits = ToolOutputLimits::new(5000).unwrap();
    let capped = limits
        .cap_call_tool_result("record", &result.to_string())
        .expect("a 30,000-byte blob is over 5000 tokens");
    let capped: Value = serde_json::from_str(&capped.json).unwrap();
    let blocks = capped["content"].as_array().unwrap();
    // Ten seconds at 32 tokens a second fit; the blob, a token a byte, and its labels, its
    // `uri` and `mimeType`, give way.
    assert_eq!(blocks[1], audio);
    assert!(!blocks.contains(&blob));
    let blob_tokens = 30_000 + count("file:///dump.bin\napplication/octet-stream");
    assert_eq!(
        blocks.last().unwrap()["text"],
        format!(
            "truncated: {blob_tokens} tokens dropped (1 of 1 binary blocks), refine your query"
        )
    );
    let figures = &capped["_meta"]["tool-output-cap/truncation"]["content"];
    assert_eq!(
        figures["original_tokens"],
        count("recorded") + 320 + blob_tokens
    );
    assert_eq!(figures["kept_tokens"], count("recorded") + 320);
}

#[test]
fn a_wav_of_this_machine_is_priced_by_its_seconds() {
    let found = ["3.13.0", "3.11.7", "3.7.16"]
        .iter()
        .map(|version| {
            format!(
                "{}/.pyenv/versions/{version}/lib/python{}/test/audiodata/pluck-pcm16.wav",
                std::env::var("HOME").unwrap_or_default(),
                version.rsplit_once('.').unwrap().0
            )
        })
        .find(|path| std::path::Path::new(path).exists());
    let Some(path) = found else {
        eprintln!("skipped a_wav_of_this_machine_is_priced_by_its_seconds: no CPython test WAV under ~/.pyenv");
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let wav = hound::WavReader::new(std::io::Cursor::new(&bytes)).unwrap();
    let seconds = (wav.duration() as usize).div_ceil(wav.spec().sample_rate as usize);
    assert_eq!(Media::audio(&bytes).tokens, seconds.max(1) * 32, "{path}");
}

#[test]
fn a_responses_file_and_a_computer_screenshot_are_counted_in_the_requests_budget() {
    let pdf = format!("data:application/pdf;base64,{}", base64(&pdf_of(2)));
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let body = json!({"model": "gpt-4o", "input": [
        {"type": "function_call", "call_id": "f", "name": "fetch", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "f", "output": [
            {"type": "input_text", "text": "the file"},
            {"type": "input_file", "filename": "report.pdf", "file_data": pdf},
        ]},
        {"type": "computer_call", "call_id": "c", "action": {"type": "screenshot"}},
        {"type": "computer_call_output", "call_id": "c", "output": {"type": "computer_screenshot", "image_url": format!("data:image/png;base64,{png}")}},
    ]})
    .to_string();
    let cap = cap(5000);
    let carried = cap.carried(Api::Responses, &body).unwrap();
    // Two pages at OpenAI's price: 3,000 and a letter page's four tiles, 765, each.
    assert_eq!(carried[0].of_kind(MediaKind::Pdf), (1, 2 * 3765));
    assert_eq!(carried[1].tool.as_deref(), Some("computer"));
    assert_eq!(
        carried[1].of_kind(MediaKind::Image),
        (1, ImageTokens::OpenAiTiles.tokens(1, 1, Detail::Auto))
    );
    let capped = cap.cap(Api::Responses, &body).unwrap();
    let sent: Value = serde_json::from_str(capped.body.as_deref().unwrap()).unwrap();
    let output = sent["input"][1]["output"].as_array().unwrap();
    assert_eq!(output.len(), 2, "the file gave way to its note");
    assert!(output[1]["text"]
        .as_str()
        .unwrap()
        .contains("(1 of 1 PDFs)"));
    // The screenshot, whose slot takes only a screenshot, goes as it came.
    assert_eq!(
        sent["input"][3],
        serde_json::from_str::<Value>(&body).unwrap()["input"][3]
    );
}

#[test]
fn a_gemini_function_responses_media_parts_are_priced_and_cut_with_its_response() {
    // Ten 1 x 1 PNGs at Gemini's 258 each, and a response of a listing.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let parts: Vec<Value> = (0..10)
        .map(|_| json!({"inlineData": {"mimeType": "image/png", "data": png}}))
        .collect();
    let body = json!({"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": "shots", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "shots", "response": {"output": listing(2000)}, "parts": parts}}]},
    ]})
    .to_string();
    let cap = cap(2000);
    assert_eq!(
        cap.carried(Api::Gemini, &body).unwrap()[0].of_kind(MediaKind::Image),
        (10, 2580)
    );
    let capped = cap.cap(Api::Gemini, &body).unwrap();
    let sent: Value = serde_json::from_str(capped.body.as_deref().unwrap()).unwrap();
    let response = &sent["contents"][1]["parts"][0]["functionResponse"];
    let kept = response["parts"].as_array().unwrap();
    assert!(
        !kept.is_empty() && kept.len() < 10,
        "{} parts kept",
        kept.len()
    );
    assert!(
        kept.iter().all(|part| part == &parts[0]),
        "the parts that stay are as they came"
    );
    let note = response["response"]["tool-output-cap"].as_str().unwrap();
    assert_eq!(
        note,
        format!(
            "truncated: {} tokens dropped ({} of 10 images), refine your query",
            258 * (10 - kept.len()),
            10 - kept.len()
        )
    );
    assert_eq!(response["name"], "shots");
    let figures = capped.cuts[0].truncation;
    assert!(figures.kept_tokens <= 2000, "{figures:?}");
    let output = response["response"]["output"].as_str().unwrap();
    assert!(
        output.ends_with("refine your query"),
        "the listing is cut too"
    );
    // Capped once, the same bytes after.
    let again = cap
        .cap(Api::Gemini, capped.body.as_deref().unwrap())
        .unwrap();
    assert_eq!(again.body, None);
}

#[test]
fn a_frameworks_files_and_audio_are_priced_in_their_own_shape() {
    let pdf = base64(&pdf_of(3));
    let wav = base64(&wav_of(10));
    let three_pages = Media::pdf(Some(&pdf_of(3)), ImageTokens::Anthropic).tokens;
    let shapes = [
        (
            "LangChain",
            json!({"type": "file", "base64": pdf, "mime_type": "application/pdf"}),
            three_pages,
        ),
        (
            "OpenAI Agents",
            json!({"type": "file", "file_data": format!("data:application/pdf;base64,{pdf}"), "filename": "a.pdf"}),
            three_pages,
        ),
        (
            "AI SDK",
            json!({"type": "file-data", "data": pdf, "mediaType": "application/pdf"}),
            three_pages,
        ),
        (
            "AI SDK 5",
            json!({"type": "media", "data": wav, "mediaType": "audio/wav"}),
            320,
        ),
        (
            "LangChain",
            json!({"type": "audio", "base64": wav, "mime_type": "audio/wav"}),
            320,
        ),
        (
            "LangChain",
            json!({"type": "text-plain", "text": listing(3000), "mime_type": "text/plain"}),
            count(&listing(3000)),
        ),
        // A file by reference: its pages cannot be counted, so it costs a hundred.
        (
            "LangChain",
            json!({"type": "file", "url": "https://example.com/report.pdf"}),
            Media::pdf(None, ImageTokens::Anthropic).tokens,
        ),
    ];
    let limits = ToolOutputLimits::new(300).unwrap();
    for (framework, block, tokens) in shapes {
        let blocks = json!([block]).to_string();
        let capped = limits.cap_blocks("read", &blocks, tool_output_cap::Outcome::Output);
        let capped = capped
            .unwrap()
            .unwrap_or_else(|| panic!("{framework}: {block}"));
        assert_eq!(
            capped.truncation.original_tokens, tokens,
            "{framework}: {block}"
        );
        assert!(capped.truncation.kept_tokens <= 300, "{framework}");
    }
}

#[test]
fn blocks_the_cap_cannot_price_are_said_by_type_and_sent_on_as_they_are() {
    let video =
        json!({"type": "video", "source": {"type": "url", "url": "https://example.com/a.mp4"}});
    let anthropic = anthropic(json!([{"type": "text", "text": "the clip"}, video]));
    let cap = cap(5000);
    let capped = cap.cap(Api::AnthropicMessages, &anthropic).unwrap();
    assert_eq!(capped.body, None, "within its limit: sent on as it came");
    assert_eq!(capped.unpriced, [("video".to_owned(), 1)]);
    let carried = cap.carried(Api::AnthropicMessages, &anthropic).unwrap();
    assert_eq!(carried[0].unpriced, ["video"]);
    // A Gemini file by its URI has no bytes to price.
    let gemini = json!({"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": "clip", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "clip", "response": {"output": "the clip"}, "parts": [
            {"fileData": {"mimeType": "video/mp4", "fileUri": "gs://bucket/a.mp4"}},
        ]}}]},
    ]})
    .to_string();
    let capped = cap.cap(Api::Gemini, &gemini).unwrap();
    assert_eq!(capped.unpriced, [("fileData".to_owned(), 1)]);
    // Text, images and every media block the cap prices are none of them.
    let known = anthropic_with_known_blocks();
    assert_eq!(
        cap.cap(Api::AnthropicMessages, &known).unwrap().unpriced,
        []
    );
}

/// An Anthropic request whose one result holds a text block, an image, a document and a search
/// result.
fn anthropic_with_known_blocks() -> String {
    anthropic(json!([
        {"type": "text", "text": "found"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a line"}},
        {"type": "search_result", "source": "https://example.com", "title": "t", "content": [{"type": "text", "text": "x"}]},
    ]))
}
