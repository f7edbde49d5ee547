//! Capping the tool results of a model API request: each to its tool's limit, the rest byte for
//! byte, and the same bytes on every later turn. Anthropic Messages here; the other APIs in
//! `request_apis.rs`.

mod common;

use common::{count, listing};
use serde_json::{json, Value};
use tool_output_cap::wire::{Api, NotARequest, RequestCap};
use tool_output_cap::ToolOutputLimits;

/// `body` capped, without a cache: `None` when nothing was cut.
fn cap_messages(body: &str, limits: &ToolOutputLimits) -> Result<Option<String>, NotARequest> {
    let cap = RequestCap::new(limits.clone()).with_cache_bytes(0);
    Ok(cap.cap(Api::AnthropicMessages, body)?.body)
}

fn limits() -> ToolOutputLimits {
    ToolOutputLimits::new(5000)
        .unwrap()
        .with_tool("Glob", 1000)
        .unwrap()
}

/// A request whose last message answers the `tool_use` `toolu_1` of `tool` with `content`.
fn request(tool: &str, content: Value, is_error: bool) -> String {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "x-unknown": {"kept": [1, 2.50, "é"]},
        "messages": [
            {"role": "user", "content": "list every file"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "toolu_1", "name": tool, "input": {"pattern": "*"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": content, "is_error": is_error},
            ]},
        ],
    })
    .to_string()
}

fn result_of(body: &str) -> Value {
    let body: Value = serde_json::from_str(body).unwrap();
    body["messages"][2]["content"][0]["content"].clone()
}

#[test]
fn a_string_result_is_cut_to_its_tools_limit_and_the_rest_stays_byte_for_byte() {
    let text = listing(3000);
    let body = request("Glob", json!(text), false);
    let capped = cap_messages(&body, &limits()).unwrap().unwrap();
    let kept = result_of(&capped);
    let kept = kept.as_str().unwrap();
    assert!(count(kept) <= 1000);
    assert!(kept.ends_with("refine your query"));
    assert!(text.starts_with(&kept[..kept.rfind('\n').unwrap()]));
    // Everything around the result is the same bytes.
    let literal = serde_json::to_string(&text).unwrap();
    let at = body.find(&literal).unwrap();
    assert!(capped.starts_with(&body[..at]));
    assert!(capped.ends_with(&body[at + literal.len()..]));
}

#[test]
fn text_blocks_are_cut_together_and_other_blocks_stay() {
    // A 1 x 1 PNG: one token at Anthropic's price.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}});
    let content = json!([
        {"type": "text", "text": listing(20)},
        image.clone(),
        {"type": "text", "text": listing(3000), "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": listing(3000)},
    ]);
    let body = request("Glob", content, false);
    let capped = cap_messages(&body, &limits()).unwrap().unwrap();
    let blocks = result_of(&capped);
    let blocks = blocks.as_array().unwrap();
    // The third text block is wholly past the cut: removed.
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0]["text"], listing(20));
    assert_eq!(blocks[1], image);
    assert_eq!(blocks[2]["cache_control"], json!({"type": "ephemeral"}));
    let texts: Vec<&str> = [&blocks[0], &blocks[2]]
        .map(|b| b["text"].as_str().unwrap())
        .into();
    assert!(count(&texts.join("\n")) <= 1000);
    assert!(texts[1].ends_with("refine your query"));
}

#[test]
fn an_error_keeps_its_tail_and_a_result_without_its_call_gets_the_default_limit() {
    let log = listing(3000) + "error: linking failed";
    let capped = cap_messages(&request("Bash", json!(log), true), &limits())
        .unwrap()
        .unwrap();
    let kept = result_of(&capped);
    let kept = kept.as_str().unwrap();
    assert!(kept.contains("error: linking failed\ntruncated: "));
    assert!(count(kept) <= 5000);

    // The same result answering a call the request does not hold: the default limit.
    let body = request("Glob", json!(listing(3000)), false).replacen(
        "\"id\":\"toolu_1\"",
        "\"id\":\"toolu_0\"",
        1,
    );
    let capped = cap_messages(&body, &limits()).unwrap().unwrap();
    let kept = count(result_of(&capped).as_str().unwrap());
    assert!(kept > 1000 && kept <= 5000, "{kept}");
}

#[test]
fn a_history_capped_once_is_the_same_bytes_on_every_later_turn() {
    let limits = limits();
    let first = request("Glob", json!(listing(3000)), false);
    let capped = cap_messages(&first, &limits).unwrap().unwrap();
    // Capping it again changes nothing.
    assert_eq!(cap_messages(&capped, &limits).unwrap(), None);

    // The next turn: the host sends the capped history again, and a new large result.
    let mut next: Value = serde_json::from_str(&capped).unwrap();
    let messages = next["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_2", "name": "Grep", "input": {"pattern": "x"}}]}));
    messages.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": listing(9000)}]}));
    let next = next.to_string();
    let capped_next = cap_messages(&next, &limits).unwrap().unwrap();
    let old = serde_json::to_string(&result_of(&capped)).unwrap();
    assert!(
        capped_next.contains(&old),
        "the old result is the same bytes"
    );
    let grep: Value = serde_json::from_str(&capped_next).unwrap();
    let grep = grep["messages"][4]["content"][0]["content"]
        .as_str()
        .unwrap();
    assert!(count(grep) <= 5000 && grep.ends_with("refine your query"));
}

#[test]
fn what_is_within_its_limit_or_unknown_passes() {
    let limits = limits();
    assert_eq!(
        cap_messages(&request("Glob", json!("a.rs\nb.rs\n"), false), &limits).unwrap(),
        None
    );
    let server_tool = json!({
        "model": "claude-sonnet-4-5",
        "messages": [{"role": "user", "content": [
            {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "web_fetch_result", "url": "https://example.com", "content": listing(3000)}},
        ]}],
    })
    .to_string();
    assert_eq!(cap_messages(&server_tool, &limits).unwrap(), None);
    assert_eq!(cap_messages(r#"{"model": "x"}"#, &limits).unwrap(), None);
    assert!(cap_messages("not json", &limits).is_err());
    assert!(cap_messages("[1, 2]", &limits).is_err());
}

#[test]
fn hostile_results_are_capped_exactly() {
    let limits = limits();
    for text in [
        " ".repeat(1_000_000),
        "日本語のテキスト🦀".repeat(20_000),
        "<|endoftext|><|im_end|>".repeat(20_000),
    ] {
        let capped = cap_messages(&request("Glob", json!(text), false), &limits)
            .unwrap()
            .unwrap();
        let kept = result_of(&capped);
        assert!(count(kept.as_str().unwrap()) <= 1000);
    }
    // A lone surrogate escape, as a JavaScript host may write: read as U+FFFD.
    let body = request("Glob", json!(listing(3000)), false).replacen("src/", "\\ud800src/", 1);
    let kept = result_of(&cap_messages(&body, &limits).unwrap().unwrap());
    assert!(kept.as_str().unwrap().starts_with("\u{fffd}src/"));
}

#[test]
fn lone_surrogates_where_serde_json_reads_a_string_are_read_and_kept() {
    // In a message's text, in a key and in a result: escapes a JavaScript host may write.
    let limits = limits();
    let body = request("Glob", json!(listing(3000)), false)
        .replacen("src/", "\\udfffsrc/", 1)
        .replacen(
            "\"messages\":[",
            "\"messages\":[{\"role\":\"user\",\"content\":\"a \\ud800 and a pair \\ud83e\\udd80\",\"\\udc00\":1},",
            1,
        );
    assert!(
        serde_json::from_str::<Value>(&body).is_err(),
        "serde_json refuses it"
    );
    let capped = cap_messages(&body, &limits).unwrap().unwrap();
    let sent: Value =
        serde_json::from_str(&capped.replace("\\ud800", "").replace("\\udc00", "")).unwrap();
    let kept = sent["messages"][3]["content"][0]["content"]
        .as_str()
        .unwrap();
    assert!(kept.starts_with("\u{fffd}src/"), "{}", &kept[..20]);
    assert!(count(kept) <= 1000);
    // Everything but the result is the same bytes, the escapes with it.
    let before = body.find("\\udfffsrc/").unwrap();
    assert_eq!(capped[..before], body[..before]);
    assert!(capped.contains("\"a \\ud800 and a pair \\ud83e\\udd80\",\"\\udc00\":1}"));
    assert_eq!(cap_messages(&capped, &limits).unwrap(), None);
}
