//! Text in any block is text: an MCP embedded resource, an Anthropic document or search result,
//! a Responses `output_text`, each counted and cut with the result's text blocks as one text,
//! and every other block kept byte for byte.

mod common;

use common::{count, listing};
use serde_json::{json, Value};
use tool_output_cap::wire::{Api, RequestCap};
use tool_output_cap::{Keep, ToolLimit, ToolOutputLimits};

fn limits() -> ToolOutputLimits {
    ToolOutputLimits::new(5000)
        .unwrap()
        .with_tool("Read", 1000)
        .unwrap()
}

/// The text `blocks` carry, joined by newlines: each block's labels (an MCP resource's `uri` and
/// `mimeType`, a search result's `title` and `source`, a document's `title` and `context`), then
/// its text blocks, wherever it carries them.
fn carried(blocks: &Value) -> String {
    let texts: Vec<&str> = blocks
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|block| {
            let labels = match block["type"].as_str() {
                Some("resource") => [&block["resource"]["uri"], &block["resource"]["mimeType"]],
                Some("search_result") => [&block["title"], &block["source"]],
                Some("document") => [&block["title"], &block["context"]],
                _ => [&Value::Null, &Value::Null],
            };
            let inner = block["content"]
                .as_array()
                .or(block["source"]["content"].as_array());
            let own = [
                &block["text"],
                &block["resource"]["text"],
                &block["source"]["data"],
            ];
            let inner = inner.into_iter().flatten().map(|b| &b["text"]);
            let texts = own.into_iter().chain(inner).filter_map(Value::as_str);
            let texts: Vec<&str> = texts.collect();
            let labels = labels.into_iter().filter_map(Value::as_str);
            labels
                .filter(|_| !texts.is_empty())
                .chain(texts.clone())
                .collect::<Vec<_>>()
        })
        .collect();
    texts.join("\n")
}

fn assert_capped(blocks: &Value, max_tokens: usize) {
    let text = carried(blocks);
    assert!(count(&text) <= max_tokens, "{} tokens", count(&text));
    assert!(text.ends_with("refine your query"), "{text:.200}");
}

#[test]
fn an_mcp_embedded_resource_is_cut_as_text_and_keeps_its_uri_and_mime_type() {
    let resource = |text: String| json!({"type": "resource", "resource": {"uri": "file:///srv/listing.txt", "mimeType": "text/plain", "text": text}});
    // A 1 x 1 PNG, 1 token, and a blob of 3 bytes, 3 tokens: both fit, beside the text.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let image = json!({"type": "image", "data": png, "mimeType": "image/png"});
    let blob = json!({"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAAA"}});
    let result = json!({"content": [
        {"type": "text", "text": "the files:"},
        resource(listing(5000)),
        image.clone(),
        blob.clone(),
        resource(listing(100)),
    ]});
    let capped = limits()
        .cap_call_tool_result("Read", &result.to_string())
        .expect("a 5000-line resource is over 1000 tokens");
    let capped: Value = serde_json::from_str(&capped.json).unwrap();
    let blocks = &capped["content"];
    assert_capped(blocks, 1000);
    // The second resource is wholly past the cut: it goes; the image and the blob stay.
    assert_eq!(blocks.as_array().unwrap().len(), 4);
    assert_eq!(blocks[1]["resource"]["uri"], "file:///srv/listing.txt");
    assert_eq!(blocks[1]["resource"]["mimeType"], "text/plain");
    assert_eq!((&blocks[2], &blocks[3]), (&image, &blob));
    assert_eq!(
        capped["_meta"]["tool-output-cap/truncation"]["content"]["max_tokens"],
        1000
    );
}

/// An Anthropic request whose one tool result, of `Read`, has `blocks` for its content.
fn anthropic(blocks: Value) -> String {
    json!({"model": "claude-sonnet-4-5", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": blocks}]},
    ]})
    .to_string()
}

fn anthropic_result(body: &str) -> Value {
    let body: Value = serde_json::from_str(body).unwrap();
    body["messages"][1]["content"][0]["content"].clone()
}

#[test]
fn anthropic_documents_and_search_results_are_cut_as_text() {
    let cap = RequestCap::new(limits()).with_cache_bytes(0);
    let text_source = json!([{"type": "document", "title": "listing", "source": {"type": "text", "media_type": "text/plain", "data": listing(5000)}}]);
    let content_source = json!([{"type": "document", "source": {"type": "content", "content": [
        {"type": "text", "text": listing(3000)},
        {"type": "text", "text": listing(3000)},
    ]}}]);
    let search = json!([
        {"type": "search_result", "source": "https://docs.example.com/a", "title": "A", "content": [
            {"type": "text", "text": listing(2000)},
            {"type": "text", "text": listing(2000)},
        ], "citations": {"enabled": true}},
        {"type": "search_result", "source": "https://docs.example.com/b", "title": "B", "content": [
            {"type": "text", "text": listing(10)},
        ]},
    ]);
    for blocks in [text_source, content_source, search] {
        let body = anthropic(blocks.clone());
        let capped = cap.cap(Api::AnthropicMessages, &body).unwrap();
        let sent = anthropic_result(capped.body.as_deref().expect("over the limit: cut"));
        assert_capped(&sent, 1000);
        assert_eq!(
            capped.cuts[0].truncation.original_tokens,
            count(&carried(&blocks))
        );
        // What is kept of a block keeps its other fields; inner text blocks wholly cut go.
        let first = &sent[0];
        assert_eq!(first["type"], blocks[0]["type"]);
        assert_eq!(first["title"], blocks[0]["title"]);
        if let Some(inner) = first["content"]
            .as_array()
            .or(first["source"]["content"].as_array())
        {
            assert_eq!(inner.len(), 1, "the second text block is past the cut");
        }
        if blocks[0]["type"] == "search_result" {
            assert_eq!(
                sent.as_array().unwrap().len(),
                1,
                "the second search result went"
            );
            assert_eq!(first["citations"], json!({"enabled": true}));
        }
        // Capped once, the same bytes after.
        let again = cap.cap(Api::AnthropicMessages, capped.body.as_deref().unwrap());
        assert_eq!(again.unwrap().body, None);
    }
}

#[test]
fn a_responses_output_text_is_cut_with_its_input_text() {
    let cap = RequestCap::new(limits()).with_cache_bytes(0);
    let output = json!([
        {"type": "input_text", "text": listing(1000)},
        {"type": "output_text", "text": listing(3000)},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
    ]);
    let body = json!({"model": "gpt-5", "input": [
        {"type": "function_call", "call_id": "c", "name": "Read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": output},
    ]})
    .to_string();
    let capped = cap.cap(Api::Responses, &body).unwrap();
    let sent: Value = serde_json::from_str(&capped.body.unwrap()).unwrap();
    let blocks = &sent["input"][1]["output"];
    assert_capped(blocks, 1000);
    assert_eq!(
        blocks.as_array().unwrap().last().unwrap(),
        output.as_array().unwrap().last().unwrap()
    );
}

/// The figures of the cut of an MCP result's content, from its `_meta`.
fn figures(capped: &Value) -> (u64, u64, u64) {
    let figures = &capped["_meta"]["tool-output-cap/truncation"]["content"];
    let figure = |key: &str| figures[key].as_u64().unwrap();
    (
        figure("original_tokens"),
        figure("kept_tokens"),
        figure("dropped_tokens"),
    )
}

#[test]
fn labels_count_with_the_text_and_a_block_whose_labels_do_not_fit_goes_whole() {
    // A megabyte `uri` on a resource of one line, between two text blocks.
    let hostile = format!("file:///srv/{}", "a/".repeat(500_000));
    let blocks = json!([
        {"type": "text", "text": listing(20)},
        {"type": "resource", "resource": {"uri": hostile, "mimeType": "text/plain", "text": "one line"}},
        {"type": "text", "text": listing(20)},
    ]);
    for is_error in [false, true] {
        let result = json!({"content": blocks, "isError": is_error}).to_string();
        let capped = limits()
            .cap_call_tool_result("Read", &result)
            .expect("the uri is over 1000 tokens");
        let capped: Value = serde_json::from_str(&capped.json).unwrap();
        let sent = &capped["content"];
        let sent_blocks = sent.as_array().unwrap();
        // The resource went whole, its uri with it; an output keeps its head, an error its tail.
        assert_eq!(sent_blocks.len(), 1, "{sent:.300}");
        assert!(sent_blocks.iter().all(|block| block["type"] == "text"));
        assert_capped(sent, 1000);
        let (original, kept, dropped) = figures(&capped);
        assert_eq!(original as usize, count(&carried(&blocks)));
        assert_eq!(kept as usize, count(&listing(20)));
        assert_eq!(dropped, original - kept);
        assert!(carried(sent).ends_with(&format!(
            "truncated: {dropped} tokens dropped, refine your query"
        )));
    }
}

#[test]
fn a_document_whose_title_alone_is_over_the_limit_leaves_the_note_in_a_block_of_its_own() {
    let cap = RequestCap::new(limits()).with_cache_bytes(0);
    let title = "日本語のタイトル ".repeat(50_000);
    let blocks = json!([{"type": "document", "title": title, "source": {"type": "text", "media_type": "text/plain", "data": "the text"}}]);
    let capped = cap
        .cap(Api::AnthropicMessages, &anthropic(blocks.clone()))
        .unwrap();
    let sent = anthropic_result(capped.body.as_deref().expect("over the limit: cut"));
    let original = count(&carried(&blocks));
    assert_eq!(capped.cuts[0].truncation.original_tokens, original);
    assert_eq!(capped.cuts[0].truncation.kept_tokens, 0);
    let note = format!("truncated: {original} tokens dropped, refine your query");
    assert_eq!(sent, json!([{"type": "text", "text": note}]));
}

#[test]
fn search_results_past_the_cut_go_with_their_labels_and_those_kept_keep_them_whole() {
    let cap = RequestCap::new(limits()).with_cache_bytes(0);
    let result = |i: usize| {
        json!({"type": "search_result", "source": format!("https://docs.example.com/{i}"),
        "title": format!("Result {i}: {}", "a long title ".repeat(20)), "content": [{"type": "text", "text": listing(3)}]})
    };
    let blocks = Value::Array((0..100).map(result).collect());
    let capped = cap
        .cap(Api::AnthropicMessages, &anthropic(blocks.clone()))
        .unwrap();
    let sent = anthropic_result(capped.body.as_deref().expect("over the limit: cut"));
    assert_capped(&sent, 1000);
    let truncation = capped.cuts[0].truncation;
    assert_eq!(truncation.original_tokens, count(&carried(&blocks)));
    let kept = sent.as_array().unwrap();
    for (i, block) in kept.iter().enumerate() {
        assert_eq!(block["title"], blocks[i]["title"]);
        assert_eq!(block["source"], blocks[i]["source"]);
    }
    // What was kept, read again without the note, is what the figures say was kept.
    let note = format!(
        "truncated: {} tokens dropped, refine your query",
        truncation.dropped_tokens
    );
    let text = carried(&sent);
    let without_note = text.strip_suffix(&note).expect("the note ends the text");
    assert_eq!(truncation.kept_tokens, count(without_note));
    assert!(kept.len() < 100);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Resources and text blocks of any sizes, their labels long or short, under any limit and
    /// keep: the result is within the limit; every resource kept has its labels whole; the
    /// figures say what was kept, and the note says what was dropped.
    #[test]
    fn no_cut_splits_a_label_and_every_cut_holds(
        sizes in proptest::collection::vec((0usize..120, 0usize..300, proptest::bool::ANY), 1..8),
        max_tokens in 60usize..1500,
        keep in proptest::sample::select(vec![Keep::Head, Keep::Tail, Keep::HeadTail]),
    ) {
        let blocks: Vec<Value> = sizes.iter().enumerate().map(|(i, &(label, lines, resource))| match resource {
            true => json!({"type": "resource", "resource": {
                "uri": format!("file:///srv/{i}/{}", "dir/".repeat(label)), "mimeType": "text/plain", "text": listing(lines)}}),
            false => json!({"type": "text", "text": listing(lines)}),
        }).collect();
        let blocks = Value::Array(blocks);
        let limits = ToolOutputLimits::default()
            .with_tool_limit("Read", ToolLimit::new(max_tokens).unwrap().with_keep(keep));
        let result = json!({"content": blocks}).to_string();
        let original = count(&carried(&blocks));
        let Some(capped) = limits.cap_call_tool_result("Read", &result) else {
            proptest::prop_assert!(original <= max_tokens);
            return Ok(());
        };
        let capped: Value = serde_json::from_str(&capped.json).unwrap();
        let sent = &capped["content"];
        let text = carried(sent);
        proptest::prop_assert!(count(&text) <= max_tokens, "{} tokens", count(&text));
        let (original_figure, kept, dropped) = figures(&capped);
        proptest::prop_assert_eq!(original_figure as usize, original);
        let note = format!("truncated: {dropped} tokens dropped, refine your query");
        proptest::prop_assert!(text.ends_with(&note), "{:.200}", text);
        proptest::prop_assert_eq!(original_figure - kept, dropped);
        let uris: Vec<&Value> = blocks.as_array().unwrap().iter().map(|b| &b["resource"]["uri"]).collect();
        for block in sent.as_array().unwrap().iter().filter(|b| b["type"] == "resource") {
            proptest::prop_assert!(uris.contains(&&block["resource"]["uri"]));
            proptest::prop_assert_eq!(&block["resource"]["mimeType"], "text/plain");
        }
    }
}
