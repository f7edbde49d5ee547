//! `check --request`: what the gateway would cut of a recorded model API request, and to what.

use std::path::Path;

use serde_json::Value;
use tool_output_cap::wire::{Api, Carried, RequestCap, ResultCut};
use tool_output_cap::MediaKind;

use crate::args::{LimitArgs, RequestArgs};
use crate::config::Config;
use crate::Failure;

/// Prints each tool result of the request in `file` that the gateway would cut, with its tool
/// and figures, and the request's tokens before and after. `route` names its API; without it,
/// the API is told from the body.
pub(crate) fn check_request(
    args: &LimitArgs,
    budget: &RequestArgs,
    file: &Path,
    route: Option<&str>,
) -> Result<u8, Failure> {
    let config = Config::for_requests(args, budget, None)?;
    let body = std::fs::read_to_string(file)
        .map_err(|e| Failure::io(format!("cannot read the request {}: {e}", file.display())))?;
    let api = match route {
        Some(route) => Api::for_path(route).ok_or_else(|| {
            Failure::usage(format!(
                "--route {route:?} is not a route the gateway caps: /v1/messages, \
                 /v1/chat/completions, /v1/responses or models/M:generateContent"
            ))
        })?,
        None => api_of(&body).ok_or_else(|| {
            Failure::usage(format!(
                "cannot tell the API of the request {}: give its route, such as --route /v1/messages",
                file.display()
            ))
        })?,
    };
    let described = config.describe();
    let cap = RequestCap::new(config.limits).with_cache_bytes(0);
    let not_a_request = |e| Failure::usage(format!("{}: {e}", file.display()));
    let capped = cap.cap(api, &body).map_err(not_a_request)?;
    let carried = cap.carried(api, &body).map_err(not_a_request)?;
    let tokenizer = cap.limits().tokenizer();
    let after = capped
        .body
        .as_deref()
        .map_or_else(|| tokenizer.count(&body), |b| tokenizer.count(b));
    println!("{described}\nrequest: {} ({})", file.display(), api.name());
    println!("{}", counted(&carried));
    for cut in &capped.cuts {
        println!("{}", said(cut));
    }
    if capped.cuts.is_empty() {
        println!("no tool result is over its limit: the request goes as it is");
    }
    if let (Some((before, after)), Some(budget)) =
        (capped.result_tokens, cap.limits().max_tokens_per_request())
    {
        println!("tokens of the tool results: {before} as recorded, {after} capped (max_tokens_per_request {budget})");
    }
    println!(
        "tokens of the request's JSON: {} as recorded, {after} capped",
        tokenizer.count(&body)
    );
    Ok(0)
}

/// What the request's tool results carry, by kind, as the cap counts them: their text, and each
/// kind of media they hold.
fn counted(carried: &[Carried]) -> String {
    let text: usize = carried.iter().map(|c| c.text_tokens).sum();
    let mut kinds = vec![format!("{text} tokens of text")];
    for kind in MediaKind::ALL {
        let (blocks, tokens) = carried
            .iter()
            .map(|c| c.of_kind(kind))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        if blocks > 0 || kind == MediaKind::Image {
            kinds.push(format!("{blocks} {kind} of {tokens} tokens"));
        }
    }
    let unpriced: Vec<&str> = carried
        .iter()
        .flat_map(|c| c.unpriced.iter().map(String::as_str))
        .collect();
    let mut said = format!(
        "counted in its {} tool results: {}",
        carried.len(),
        kinds.join(", ")
    );
    if !unpriced.is_empty() {
        let uncounted = format!(
            "\nsent on uncounted, neither text nor media the cap prices: {} blocks ({})",
            unpriced.len(),
            unpriced.join(", ")
        );
        said.push_str(&uncounted);
    }
    said
}

/// What `check` says of a result cut: its tool and figures, or that it gave way to the budget.
fn said(cut: &ResultCut) -> String {
    let tool = cut
        .tool
        .as_deref()
        .unwrap_or("(a result whose call is not in the request)");
    let truncation = &cut.truncation;
    if cut.elided {
        return format!(
            "{tool}: {} tokens, given way to the request's budget: one line",
            truncation.original_tokens
        );
    }
    format!(
        "{tool}: {} tokens, cut to {} (max_tokens {}, keep {})",
        truncation.original_tokens,
        truncation.kept_tokens,
        truncation.max_tokens,
        truncation.keep.name(),
    )
}

/// The API whose request `body` is, told by its fields: `contents` (Gemini), `input`
/// (Responses), `messages` with a `tool` message (Chat Completions) or with content blocks
/// (Anthropic Messages).
fn api_of(body: &str) -> Option<Api> {
    let body: Value = serde_json::from_str(body).ok()?;
    if body.get("contents").is_some() {
        return Some(Api::Gemini);
    }
    if body.get("input").is_some() {
        return Some(Api::Responses);
    }
    let messages = body.get("messages")?.as_array()?;
    if messages
        .iter()
        .any(|m| m["role"] == "tool" || m.get("tool_calls").is_some())
    {
        Some(Api::ChatCompletions)
    } else {
        Some(Api::AnthropicMessages)
    }
}
