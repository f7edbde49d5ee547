//! Text in any block is text: an MCP embedded resource, an Anthropic document or search result,
//! a Responses `output_text`, each counted and cut with the result's text blocks as one text,
//! and every other block kept byte for byte.

mod common;

use common::{count, listing};
use serde_json::{json, Value};
use tool_output_cap::wire::{Api, RequestCap};
use tool_output_cap::ToolOutputLimits;

fn limits() -> ToolOutputLimits {
    ToolOutputLimits::new(5000)
        .unwrap()
        .with_tool("Read", 1000)
        .unwrap()
}

/// The text blocks of `blocks`, wherever they carry text, joined by newlines.
fn carried(blocks: &Value) -> String {
    let texts: Vec<&str> = blocks
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|block| {
            let inner = block["content"]
                .as_array()
                .or(block["source"]["content"].as_array());
            let own = [
                &block["text"],
                &block["resource"]["text"],
                &block["source"]["data"],
            ];
            own.into_iter()
                .filter_map(Value::as_str)
                .chain(
                    inner
                        .into_iter()
                        .flatten()
                        .filter_map(|b| b["text"].as_str()),
                )
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
