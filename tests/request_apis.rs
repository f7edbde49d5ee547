//! Capping the tool results of OpenAI Chat Completions, OpenAI Responses and Gemini requests, a
//! turn's shared budget, the cache of cuts, and a property over random histories of each API.

mod common;

use common::{count, listing};
use proptest::prelude::*;
use serde_json::{json, Value};
use tool_output_cap::wire::{Api, RequestCap};
use tool_output_cap::{RateLimitShare, ToolOutputLimits};

fn cap() -> RequestCap {
    let limits = ToolOutputLimits::new(5000)
        .unwrap()
        .with_tool("shell", 1000)
        .unwrap();
    RequestCap::new(limits).with_cache_bytes(0)
}

fn capped(api: Api, body: &Value) -> Value {
    let body = cap().cap(api, &body.to_string()).unwrap().body.unwrap();
    serde_json::from_str(&body).unwrap()
}

fn assert_capped(text: &str, max_tokens: usize) {
    assert!(count(text) <= max_tokens, "{} tokens", count(text));
    assert!(
        text.ends_with("refine your query"),
        "{}",
        &text[text.len() - 80..]
    );
}

#[test]
fn chat_completions_tool_messages_get_the_limit_of_their_call() {
    let body = json!({
        "model": "gpt-5",
        "messages": [
            {"role": "user", "content": "list"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{}"}},
                {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": listing(3000)},
            {"role": "tool", "tool_call_id": "call_2", "content": [
                {"type": "text", "text": listing(1000)}, {"type": "text", "text": listing(1000)}]},
        ],
    });
    let sent = capped(Api::ChatCompletions, &body);
    assert_capped(sent["messages"][2]["content"].as_str().unwrap(), 1000);
    let parts = sent["messages"][3]["content"].as_array().unwrap();
    let texts: Vec<&str> = parts.iter().map(|p| p["text"].as_str().unwrap()).collect();
    assert_capped(&texts.join("\n"), 5000);
    assert!(
        count(&texts.join("\n")) > 1000,
        "read has the default limit"
    );
}

#[test]
fn responses_outputs_of_every_kind_are_cut_and_server_items_pass() {
    let stdout = listing(3000);
    let body = json!({
        "model": "gpt-5-codex",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list"}]},
            {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": listing(3000)},
            {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "x"},
            {"type": "custom_tool_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": listing(3000)}]},
            {"type": "local_shell_call_output", "id": "ls_1", "output": listing(3000)},
            {"type": "shell_call_output", "call_id": "call_3", "output": [{"stdout": stdout, "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
            {"type": "mcp_call", "id": "mcp_1", "name": "search_files", "server_label": "fs", "arguments": "{}", "output": listing(3000)},
            {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": listing(3000)}},
        ],
    });
    let sent = capped(Api::Responses, &body);
    let input = sent["input"].as_array().unwrap();
    assert_capped(input[2]["output"].as_str().unwrap(), 1000);
    assert_capped(input[4]["output"][0]["text"].as_str().unwrap(), 5000);
    assert_capped(input[5]["output"].as_str().unwrap(), 5000);
    // A shell call's output is cut as JSON of the same shape.
    let shell = &input[6]["output"];
    assert_eq!(shell[0]["outcome"]["exit_code"], 0);
    assert_capped(shell[0]["stdout"].as_str().unwrap(), 1000);
    assert!(count(&shell.to_string()) <= 1000);
    assert_capped(input[7]["output"].as_str().unwrap(), 5000);
    assert_eq!(input[8], body["input"][8], "the provider's own tool passes");
}

#[test]
fn gemini_function_responses_are_cut_as_json_and_errors_keep_their_tail() {
    let error = listing(3000) + "error: exit status 2";
    let body = json!({
        "contents": [
            {"role": "user", "parts": [{"text": "list"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "shell", "args": {}}}, {"functionCall": {"name": "run", "args": {}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "shell", "response": {"output": listing(3000)}}},
                {"functionResponse": {"name": "shell", "response": {"error": error}}},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
            ]},
        ],
        "generationConfig": {"temperature": 0},
    });
    let sent = capped(Api::Gemini, &body);
    let parts = &sent["contents"][2]["parts"];
    let output = parts[0]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap();
    assert_capped(output, 1000);
    assert!(listing(3000).starts_with(&output[..output.rfind("\ntruncated").unwrap()]));
    let kept = parts[1]["functionResponse"]["response"]["error"]
        .as_str()
        .unwrap();
    assert!(kept.contains("error: exit status 2\ntruncated: "));
    assert_eq!(parts[2], body["contents"][2]["parts"][2]);
    assert_eq!(sent["generationConfig"], body["generationConfig"]);
}

#[test]
fn a_gemini_response_no_cut_fits_goes_as_its_text() {
    let fields: serde_json::Map<String, Value> = (0..3000)
        .map(|i| (format!("field_{i}"), json!(i)))
        .collect();
    let stats = Value::Object(fields);
    let failed = json!({"error": {"code": 2, "counts": stats.clone()}});
    let body = json!({
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "stats", "args": {}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "stats", "response": stats}},
                {"functionResponse": {"name": "stats", "response": failed}},
            ]},
        ],
    });
    let sent = capped(Api::Gemini, &body);
    let parts = &sent["contents"][1]["parts"];
    // The API's own text form: `output`, or `error` for an error, which keeps its tail.
    let output = parts[0]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap();
    assert_capped(output, 5000);
    assert!(stats
        .to_string()
        .starts_with(&output[..output.rfind("\ntruncated").unwrap()]));
    let error = parts[1]["functionResponse"]["response"]["error"]
        .as_str()
        .unwrap();
    assert_capped(error, 5000);
    assert!(failed
        .to_string()
        .ends_with(&error[..error.rfind("\ntruncated").unwrap()]));
}

#[test]
fn the_api_of_a_route_is_found_and_others_are_none() {
    for (path, api) in [
        ("/v1/messages", Some(Api::AnthropicMessages)),
        (
            "/v1/messages/count_tokens?beta=true",
            Some(Api::AnthropicMessages),
        ),
        ("/v1/chat/completions", Some(Api::ChatCompletions)),
        ("/v1/responses", Some(Api::Responses)),
        ("/v1/responses/input_tokens", Some(Api::Responses)),
        (
            "/v1beta/models/gemini-2.5-flash:generateContent",
            Some(Api::Gemini),
        ),
        (
            "/v1beta/models/gemini-2.5-flash:countTokens",
            Some(Api::Gemini),
        ),
        ("/v1/models", None),
        ("/v1/responses/resp_1/cancel", None),
        ("/", None),
    ] {
        assert_eq!(Api::for_path(path), api, "{path}");
    }
}

/// An Anthropic request: `turns` tool calls and results, each of `tool` with `content`.
fn history(turns: &[(&str, String)]) -> String {
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for (at, (tool, content)) in turns.iter().enumerate() {
        let id = format!("toolu_{at}");
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": tool, "input": {}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]}));
    }
    json!({"model": "claude-sonnet-4-5", "messages": messages}).to_string()
}

#[test]
fn each_turns_budget_is_shared_by_its_results_and_appending_turns_moves_no_cut() {
    let limits = ToolOutputLimits::new(5000)
        .unwrap()
        .with_max_tokens_per_turn(6000)
        .unwrap();
    let cap = RequestCap::new(limits).with_cache_bytes(0);
    // One turn of two large results: they share 6000 tokens.
    let both = json!({"model": "m", "messages": [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "Glob", "input": {}},
            {"type": "tool_use", "id": "b", "name": "Grep", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": listing(3000)},
            {"type": "tool_result", "tool_use_id": "b", "content": listing(3000)}]},
    ]})
    .to_string();
    let capped = cap.cap(Api::AnthropicMessages, &both).unwrap();
    let shares: Vec<usize> = capped
        .cuts
        .iter()
        .map(|c| c.truncation.max_tokens)
        .collect();
    assert_eq!(shares.len(), 2);
    assert!(shares.iter().sum::<usize>() <= 6000, "{shares:?}");

    // The host sends its own uncut history again with one more turn: the first turn's results
    // still share its budget, so its bytes stay, with the cache cold as here.
    let mut next: Value = serde_json::from_str(&both).unwrap();
    next["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "Read", "input": {}}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": listing(3000)}]}),
    ]);
    let again = cap.cap(Api::AnthropicMessages, &next.to_string()).unwrap();
    let (first, second) = (capped.body.unwrap(), again.body.unwrap());
    // The first turn's messages, as their bytes in the first request, are in the second as they
    // were (whatever order serde_json writes the body's keys in).
    let messages = serde_json::from_str::<Value>(&first).unwrap()["messages"].clone();
    for message in messages.as_array().unwrap() {
        let bytes = message.to_string();
        assert!(
            first.contains(&bytes),
            "the message as the first request has it"
        );
        assert!(second.contains(&bytes), "an earlier turn's bytes moved");
    }
    let again: Vec<usize> = again.cuts.iter().map(|c| c.truncation.max_tokens).collect();
    assert_eq!(again[..2], shares[..]);
    // The new turn's one result has the whole turn budget, within its tool's limit.
    assert_eq!(again[2], 5000);
}

#[test]
fn a_cut_is_made_once_and_taken_from_the_cache_after() {
    let cap = RequestCap::new(ToolOutputLimits::new(1000).unwrap());
    let first = history(&[("Glob", listing(3000))]);
    let once = cap.cap(Api::AnthropicMessages, &first).unwrap();
    assert!(!once.cuts[0].cached);
    // The host sends its own uncut history again, with one more result.
    let second = history(&[("Glob", listing(3000)), ("Grep", listing(2000))]);
    let again = cap.cap(Api::AnthropicMessages, &second).unwrap();
    assert_eq!(again.cuts.len(), 2);
    assert!(again.cuts[0].cached && !again.cuts[1].cached);
    // The cached cut is the same bytes as the first.
    let old_result = |body: &str| {
        let body: Value = serde_json::from_str(body).unwrap();
        body["messages"][2].to_string()
    };
    assert_eq!(
        old_result(once.body.as_deref().unwrap()),
        old_result(again.body.as_deref().unwrap())
    );
    // Without a cache, the same bytes too.
    let uncached = RequestCap::new(ToolOutputLimits::new(1000).unwrap()).with_cache_bytes(0);
    assert_eq!(
        uncached.cap(Api::AnthropicMessages, &second).unwrap().body,
        again.body
    );
}

#[test]
fn requests_that_need_the_same_cut_at_once_wait_for_one_and_get_the_same_bytes() {
    let cap = RequestCap::new(ToolOutputLimits::new(1000).unwrap());
    let body = history(&[("Glob", listing(60_000))]);
    let barrier = std::sync::Barrier::new(20);
    let capped: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..20)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    cap.cap(Api::AnthropicMessages, &body).unwrap()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let made = capped.iter().filter(|c| !c.cuts[0].cached).count();
    assert_eq!(
        made, 1,
        "the cut was made {made} times for 20 requests at once"
    );
    assert!(capped.iter().all(|c| c.body == capped[0].body));
}

fn content() -> impl Strategy<Value = String> {
    prop_oneof![
        (0usize..4000).prop_map(listing),
        (0usize..200_000).prop_map(|n| " ".repeat(n)),
        (0usize..3000).prop_map(|n| "日本語🦀<|endoftext|>\u{fffd}".repeat(n)),
    ]
}

/// A request of `api` whose turns each call a tool and get `content` back, and where each
/// result is: a pointer to it, and whether it is measured as JSON (Gemini's `response`).
fn body_of(api: Api, turns: &[(&str, String)]) -> (String, Vec<(String, bool)>) {
    if api == Api::AnthropicMessages {
        let places = (0..turns.len())
            .map(|at| (format!("/messages/{}/content/0/content", 2 * at + 2), false));
        return (history(turns), places.collect());
    }
    let mut items = Vec::new();
    let mut places = Vec::new();
    for (at, (tool, content)) in turns.iter().enumerate() {
        let id = format!("call_{at}");
        match api {
            Api::ChatCompletions => {
                items.push(json!({"role": "assistant", "tool_calls": [{"id": id, "type": "function", "function": {"name": tool, "arguments": "{}"}}]}));
                items.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
                places.push((format!("/messages/{}/content", 2 * at + 1), false));
            }
            Api::Responses => {
                items.push(json!({"type": "function_call", "call_id": id, "name": tool, "arguments": "{}"}));
                items.push(
                    json!({"type": "function_call_output", "call_id": id, "output": content}),
                );
                places.push((format!("/input/{}/output", 2 * at + 1), false));
            }
            _ => {
                items.push(json!({"role": "model", "parts": [{"functionCall": {"name": tool, "args": {}}}]}));
                items.push(json!({"role": "user", "parts": [{"functionResponse": {"name": tool, "response": {"output": content}}}]}));
                places.push((
                    format!("/contents/{}/parts/0/functionResponse/response", 2 * at + 1),
                    true,
                ));
            }
        }
    }
    let key = match api {
        Api::ChatCompletions => "messages",
        Api::Responses => "input",
        _ => "contents",
    };
    (json!({"model": "m", key: items}).to_string(), places)
}

/// What a result's limit is measured on: its string, or its JSON.
fn measured(value: &Value, as_json: bool) -> String {
    if as_json {
        value.to_string()
    } else {
        value.as_str().unwrap().to_owned()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_result_fits_and_capping_again_changes_nothing(
        api in prop::sample::select(vec![Api::AnthropicMessages, Api::ChatCompletions, Api::Responses, Api::Gemini]),
        turns in prop::collection::vec((prop::sample::select(vec!["Glob", "Grep", "Read"]), content()), 1..4),
        max_tokens in 32usize..3000,
    ) {
        let limits = ToolOutputLimits::new(5000).unwrap().with_tool("Glob", max_tokens).unwrap();
        let cap = RequestCap::new(limits.clone());
        let (body, places) = body_of(api, &turns);
        let before: Value = serde_json::from_str(&body).unwrap();
        let once = cap.cap(api, &body).unwrap();
        let sent = once.body.clone().unwrap_or_else(|| body.clone());
        let value: Value = serde_json::from_str(&sent).unwrap();
        for ((tool, _), (place, as_json)) in turns.iter().zip(&places) {
            let original = measured(before.pointer(place).unwrap(), *as_json);
            let result = measured(value.pointer(place).unwrap(), *as_json);
            let limit = limits.max_tokens_for(tool);
            prop_assert!(count(&result) <= limit, "{api:?}: {} tokens", count(&result));
            prop_assert_eq!(result == original, count(&original) <= limit);
        }
        prop_assert_eq!(cap.cap(api, &sent).unwrap().body, None);
    }
}

/// Each result of a capped request as it goes up: its JSON, and its tokens as measured.
fn results_of(body: &str, places: &[(String, bool)]) -> Vec<(String, usize)> {
    let value: Value = serde_json::from_str(body).unwrap();
    places
        .iter()
        .map(|(place, as_json)| {
            let result = value.pointer(place).unwrap();
            (result.to_string(), count(&measured(result, *as_json)))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// The host sends its uncut history again with one more turn, request after request: every
    /// request's results fit the budget, an older result's form changes only at a step, at most
    /// once for each half budget of new results' tokens, and a cold cache gives the same bytes.
    #[test]
    fn a_request_fits_its_budget_and_older_results_move_only_in_steps(
        api in prop::sample::select(vec![Api::AnthropicMessages, Api::ChatCompletions, Api::Responses, Api::Gemini]),
        turns in prop::collection::vec(
            (prop::sample::select(vec!["Glob", "Grep", "Read"]), (0usize..700).prop_map(listing)),
            1..60,
        ),
        budget in 2000usize..20_000,
    ) {
        let limits = ToolOutputLimits::new(3000).unwrap().with_max_tokens_per_request(budget).unwrap();
        let cap = RequestCap::new(limits.clone());
        let mut before: Vec<(String, usize)> = Vec::new();
        let (mut steps, mut new_tokens) = (0, 0);
        for k in 1..=turns.len() {
            let (body, places) = body_of(api, &turns[..k]);
            let capped = cap.cap(api, &body).unwrap();
            let sent = capped.body.clone().unwrap_or_else(|| body.clone());
            let results = results_of(&sent, &places);
            let total: usize = results.iter().map(|(_, tokens)| tokens).sum();
            prop_assert!(total <= budget, "{api:?}, request {k}: {total} tokens");
            prop_assert_eq!(capped.result_tokens.map(|(_, after)| after), Some(total));
            new_tokens += results[k - 1].1;
            // The results the last request had as older ones.
            if k > 1 && results[..k - 2] != before[..k - 2] {
                steps += 1;
            }
            for (at, ((_, is), (_, was))) in results.iter().zip(&before).enumerate() {
                prop_assert!(is <= was, "{api:?}, request {k}: result {at} grew from {was} to {is} tokens");
            }
            before = results;
            if k == turns.len() {
                let cold = RequestCap::new(limits.clone()).with_cache_bytes(0);
                prop_assert_eq!(cold.cap(api, &body).unwrap().body, capped.body);
            }
        }
        prop_assert!(steps <= new_tokens / (budget / 2) + 1, "{steps} steps for {new_tokens} new tokens");
    }
}

#[test]
fn older_results_give_way_to_one_line_in_place_and_an_error_keeps_its_flag() {
    let limits = ToolOutputLimits::new(3000)
        .unwrap()
        .with_max_tokens_per_request(8000)
        .unwrap();
    let cap = RequestCap::new(limits);
    let turns: Vec<(&str, String)> = (0..6).map(|_| ("Glob", listing(2000))).collect();
    let mut body: Value = serde_json::from_str(&history(&turns)).unwrap();
    body["messages"][2]["content"][0]["is_error"] = json!(true);
    let capped = cap.cap(Api::AnthropicMessages, &body.to_string()).unwrap();
    let sent: Value = serde_json::from_str(capped.body.as_deref().unwrap()).unwrap();
    let results: Vec<&Value> = (0..6)
        .map(|at| &sent["messages"][2 * at + 2]["content"][0])
        .collect();
    let elided: Vec<bool> = capped.cuts.iter().map(|cut| cut.elided).collect();
    assert_eq!(elided.len(), 6);
    assert!(
        elided[0] && !elided[5],
        "the oldest give way, the newest never: {elided:?}"
    );
    for (result, cut) in results.iter().zip(&capped.cuts) {
        let text = result["content"].as_str().unwrap();
        if cut.elided {
            assert_eq!(
                text,
                format!(
                    "truncated: all {} tokens dropped to fit the request's budget, call Glob again if you need it",
                    cut.truncation.original_tokens
                )
            );
        } else {
            assert!(text.ends_with("refine your query"));
        }
    }
    assert_eq!(
        results[0]["is_error"],
        json!(true),
        "an error keeps its flag"
    );
    assert_eq!(results[0]["tool_use_id"], "toolu_0", "in its place");
    let (before, after) = capped.result_tokens.unwrap();
    assert!(after <= 8000 && before > 6 * 3000, "{before} -> {after}");
    // The same request again: the same bytes.
    let again = cap.cap(Api::AnthropicMessages, &body.to_string()).unwrap();
    assert_eq!(again.body, capped.body);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Under a per-minute limit the provider reported, with `rate_limit_share` and no other
    /// budget: a history sent again with one more turn, request after request, with a prompt
    /// and tool definitions of their own size. Where the newest results' floor fits, every
    /// request's results are within the share and within what the rest leaves, and the whole
    /// body, counted as it is sent, is under the limit; older results move only at steps, and a
    /// cold cache gives the same bytes.
    #[test]
    fn a_request_stays_under_the_rate_limit_the_provider_reported(
        api in prop::sample::select(vec![Api::AnthropicMessages, Api::ChatCompletions, Api::Responses, Api::Gemini]),
        turns in prop::collection::vec(
            (prop::sample::select(vec!["Glob", "Grep", "Read"]), (0usize..700).prop_map(listing)),
            1..40,
        ),
        limit in 8000usize..40_000,
        prompt in 0usize..6000,
    ) {
        let share = RateLimitShare::new(0.5).unwrap();
        let limits = ToolOutputLimits::new(3000).unwrap().with_rate_limit_share(share);
        let cap = RequestCap::new(limits.clone());
        let tools: String = (0..prompt).map(|i| format!("tool {i} ")).collect();
        let mut before: Vec<(String, usize)> = Vec::new();
        let (mut steps, mut new_tokens, mut budgets) = (0, 0, std::collections::BTreeSet::new());
        let mut fitted = false;
        for k in 1..=turns.len() {
            let (body, places) = body_of(api, &turns[..k]);
            let mut body: Value = serde_json::from_str(&body).unwrap();
            body["tools"] = json!(tools);
            let body = body.to_string();
            let capped = cap.cap_within_rate_limit(api, &body, limit).unwrap();
            let sent = capped.body.clone().unwrap_or_else(|| body.clone());
            let results = results_of(&sent, &places);
            let total: usize = results.iter().map(|(_, tokens)| tokens).sum();
            let fit = capped.rate_limit.unwrap();
            prop_assert_eq!(fit.limit, limit);
            match fit.budget {
                Some(budget) => {
                    budgets.insert(budget);
                    prop_assert!(budget <= share.of(limit), "{budget}");
                    prop_assert!(total <= budget, "{api:?}, request {k}: {total} tokens of {budget}");
                    prop_assert!(fit.rest_tokens + total <= limit);
                    prop_assert!(count(&sent) <= limit, "{api:?}, request {k}: {} tokens sent", count(&sent));
                }
                // What the rest leaves, in quanta of a quarter budget, cannot hold the newest
                // result's floor and the older ones' stub lines (under 40 tokens each).
                None => prop_assert!(
                    fit.rest_tokens + results[k - 1].1.min(1000) + share.of(limit) / 4 + 40 * (k - 1) > limit,
                    "{api:?}, request {k}: no budget with {} tokens of rest", fit.rest_tokens
                ),
            }
            new_tokens += results[k - 1].1;
            if k > 1 && results[..k - 2] != before[..k - 2] {
                steps += 1;
            }
            // Where the floor fitted both this request and the one before: when it does not,
            // the request goes with the share alone, which the gateway logs.
            if fit.budget.is_some() && fitted {
                for (at, ((_, is), (_, was))) in results.iter().zip(&before).enumerate() {
                    prop_assert!(is <= was, "{api:?}, request {k}: result {at} grew from {was} to {is} tokens");
                }
            }
            fitted = fit.budget.is_some();
            before = results;
            if k == turns.len() {
                let cold = RequestCap::new(limits.clone()).with_cache_bytes(0);
                prop_assert_eq!(cold.cap_within_rate_limit(api, &body, limit).unwrap().body, capped.body);
            }
        }
        let step = share.of(limit) / 2;
        prop_assert!(
            steps <= new_tokens / step + budgets.len(),
            "{steps} steps for {new_tokens} new tokens and {} budgets", budgets.len()
        );
    }
}
