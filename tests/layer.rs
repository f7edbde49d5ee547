//! The layer's guarantees, one test each, over mock tool services.

mod common;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{assert_capped, count, kept_parts, listing, Recording};
use futures_util::FutureExt;
use serde_json::json;
use tokio_test::{assert_pending, assert_ready_ok};
use tool_output_cap::{
    Encoding, Manifest, Prefix, Tokenizer, ToolCall, ToolError, ToolOutput, ToolOutputCap,
    ToolOutputCapLayer, ToolOutputLimits,
};
use tower::util::BoxCloneService;
use tower::{service_fn, Layer, Service, ServiceBuilder, ServiceExt};
use tower_test::mock;

fn limits(max_tokens: usize) -> ToolOutputLimits {
    ToolOutputLimits::new(max_tokens).unwrap()
}

/// Runs `content` as the output of tool `Glob` through a layer with `limits`.
fn run(limits: ToolOutputLimits, content: &str) -> ToolOutput {
    let content = content.to_owned();
    let tool = service_fn(move |_: ToolCall| {
        let content = content.clone();
        async move { Ok::<_, Infallible>(ToolOutput::new(content)) }
    });
    let mut capped = ServiceBuilder::new()
        .layer(ToolOutputCapLayer::new(limits))
        .service(tool);
    capped
        .call(ToolCall::new("Glob", json!({ "pattern": "*" })))
        .now_or_never()
        .expect("the mock tool is ready at once")
        .unwrap()
}

// 1. Exact tokens.

#[test]
fn counts_the_tokens_tiktoken_rs_counts() {
    let text = listing(2000);
    let output = run(limits(1000), &text);
    let expected = tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(&text)
        .len();
    assert_eq!(output.truncation.unwrap().original_tokens, expected);
}

#[test]
fn cl100k_base_is_chosen_in_the_manifest() {
    let manifest =
        Manifest::from_toml_str("[worker.tool_output]\nencoding = \"cl100k_base\"\n").unwrap();
    let text = "日本語のファイル名.txt\n".repeat(2000);
    let output = run(manifest.worker.limits(), &text);
    let expected = tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(&text)
        .len();
    assert_eq!(output.truncation.unwrap().original_tokens, expected);
    assert_ne!(
        expected,
        count(&text),
        "the vocabularies differ on this text"
    );
}

#[test]
fn special_token_text_is_counted_as_plain_text() {
    let text = "<|endoftext|>".repeat(2000);
    let output = run(limits(100), &text);
    let truncation = assert_capped(&text, &output, 100);
    let ordinary = tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(&text)
        .len();
    assert_eq!(truncation.original_tokens, ordinary);
    assert!(ordinary > 2000, "one special token each would be 2000");
}

fn run_with(tokenizer: Arc<Recording>, max_tokens: usize, content: &str) -> ToolOutput {
    let layer = ToolOutputCapLayer::with_tokenizer(limits(max_tokens), tokenizer);
    let content = content.to_owned();
    let tool = service_fn(move |_: ToolCall| {
        let content = content.clone();
        async move { Ok::<_, Infallible>(ToolOutput::new(content)) }
    });
    layer
        .layer(tool)
        .oneshot(ToolCall::new("Glob", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap()
}

#[test]
fn an_output_no_longer_in_bytes_than_its_limit_is_not_tokenized() {
    let tokenizer = Arc::new(Recording::default());
    let text = "x".repeat(1000);
    let output = run_with(Arc::clone(&tokenizer), 1000, &text);
    assert_eq!(output, ToolOutput::new(text));
    assert_eq!(tokenizer.bytes.load(Ordering::SeqCst), 0);
}

// 2. Under the limit, untouched.

#[test]
fn an_output_within_its_limit_comes_back_byte_for_byte() {
    let text = listing(100);
    let tokens = count(&text);
    assert!(text.len() > tokens);
    let mut expected = ToolOutput::new(text.clone());
    expected.summary = Some("100 paths".into());
    let tool = service_fn({
        let expected = expected.clone();
        move |_: ToolCall| std::future::ready(Ok::<_, Infallible>(expected.clone()))
    });
    let output = ToolOutputCap::new(tool, limits(tokens))
        .oneshot(ToolCall::new("Glob", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap();
    assert_eq!(output, expected);
    assert_eq!(output.truncation, None);
}

// 3. Over the limit, capped and said.

#[test]
fn an_output_over_its_limit_is_cut_and_ends_with_the_note() {
    let text = listing(5000);
    let output = run(limits(5000), &text);
    let truncation = assert_capped(&text, &output, 5000);
    assert!(truncation.dropped_tokens > 0);
    // The note takes about 15 tokens; the cut moves back to a line end for at most an eighth.
    assert!(
        truncation.kept_tokens + 15 + 5000 / 8 >= 5000,
        "kept {} of a 5000 budget",
        truncation.kept_tokens
    );
    let kept = output.content.rsplit_once('\n').unwrap().0;
    assert!(
        text[kept.len()..].starts_with('\n'),
        "no half a path at the end"
    );
}

#[test]
fn japanese_and_emoji_are_cut_on_a_char_boundary() {
    for text in [
        "東京都の設定ファイル/日本語のドキュメント.md\n".repeat(400),
        "🦀🎉👩‍👩‍👧‍👦🇯🇵".repeat(500),
        "テスト🦀".repeat(700),
    ] {
        for max_tokens in [32, 33, 100, 257] {
            let output = run(limits(max_tokens), &text);
            assert_capped(&text, &output, max_tokens);
        }
    }
}

#[test]
fn the_summary_is_left_as_it_was_and_the_response_stays_ok() {
    let tool = service_fn(|_: ToolCall| async {
        Ok::<_, ToolError>(ToolOutput {
            summary: Some("2000 paths".into()),
            ..ToolOutput::new(listing(2000))
        })
    });
    let result = ToolOutputCap::new(tool, limits(100))
        .oneshot(ToolCall::new("Glob", json!({})))
        .now_or_never()
        .unwrap();
    let output = result.expect("a truncation is not an error");
    assert_eq!(output.summary.as_deref(), Some("2000 paths"));
    assert!(output.truncation.is_some());
}

#[test]
fn each_tool_gets_its_own_limit() {
    let manifest = Manifest::from_toml_str(
        "[worker.tool_output]\ndefault_max_tokens = 300\n[worker.tool_output.per_tool]\nRead = 800\n",
    )
    .unwrap();
    let tool =
        service_fn(|_: ToolCall| async { Ok::<_, Infallible>(ToolOutput::new(listing(2000))) });
    let capped = ToolOutputCapLayer::new(manifest.worker.limits()).layer(tool);
    for (name, max_tokens) in [("Read", 800), ("Glob", 300)] {
        let output = capped
            .clone()
            .oneshot(ToolCall::new(name, json!({})))
            .now_or_never()
            .unwrap()
            .unwrap();
        assert_capped(&listing(2000), &output, max_tokens);
    }
}

// 4. One encoding pass; one encoder per process.

#[test]
fn the_output_is_encoded_once() {
    let tokenizer = Arc::new(Recording::default());
    let text = listing(5000);
    let output = run_with(Arc::clone(&tokenizer), 2000, &text);
    assert_capped(&text, &output, 2000);
    assert_eq!(tokenizer.prefix_calls.load(Ordering::SeqCst), 1);
    // The one pass over the text, the note alone, and the last line of the kept text twice.
    let tokenized = tokenizer.bytes.load(Ordering::SeqCst);
    assert!(
        tokenized < text.len() + 500,
        "{tokenized} bytes tokenized for an output of {}",
        text.len()
    );
}

#[test]
fn layers_share_the_process_wide_encoder() {
    let first = ToolOutputCapLayer::new(ToolOutputLimits::default());
    let second = ToolOutputCapLayer::new(limits(100));
    assert!(std::ptr::addr_eq(first.tokenizer(), second.tokenizer()));
    assert!(std::ptr::addr_eq(
        first.tokenizer(),
        Encoding::O200kBase.tokenizer()
    ));
}

// 5. No panic on any input.

#[test]
fn hostile_outputs_are_capped_without_panic() {
    let hostile = [
        " ".repeat(2_000_000),
        "\t".repeat(1_000_000),
        "\u{3000}".repeat(1_000_000),
        format!("x{}y", " ".repeat(1_200_000)),
        format!("{}{}{}", listing(100), " ".repeat(1_500_000), listing(100)),
        "\0".repeat(100_000),
        (0u8..32).map(char::from).cycle().take(200_000).collect(),
        "\n".repeat(300_000),
    ];
    for text in &hostile {
        let output = run(limits(5000), text);
        let truncation = output.truncation.expect("over the limit");
        kept_parts(text, &output.content, &truncation, None, &count);
        assert!(count(&output.content) <= 5000);
        // The original's count, exactly: bpe-openai's, which pre-tokenizes any run whole.
        let exact = bpe_openai::o200k_base().count(text.as_str());
        assert_eq!(truncation.original_tokens, exact, "{:?}", &text[..8]);
    }
}

#[test]
fn an_empty_output_is_untouched() {
    assert_eq!(run(limits(32), ""), ToolOutput::new(""));
}

#[test]
fn a_50_mb_output_is_capped() {
    let text = listing(1_200_000);
    assert!(text.len() > 50_000_000);
    let output = run(ToolOutputLimits::default(), &text);
    let truncation = output.truncation.unwrap();
    assert!(text.starts_with(output.content.rsplit_once('\n').unwrap().0));
    assert!(truncation.original_tokens > 10_000_000);
    assert!(count(&output.content) <= 5000);
}

// 6. Errors pass through; readiness is forwarded; the inner service is not cloned.

#[derive(Debug, PartialEq)]
struct Refused(&'static str);

#[test]
fn the_tool_error_comes_back_unchanged() {
    let tool = service_fn(|_: ToolCall| async { Err::<ToolOutput, _>(Refused("no such path")) });
    let error = ToolOutputCap::new(tool, limits(32))
        .oneshot(ToolCall::new("Glob", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(error, Refused("no such path"));
}

#[tokio::test]
async fn poll_ready_forwards_to_the_inner_service() {
    let (mut service, mut handle) =
        mock::spawn_layer::<ToolCall, ToolOutput, _>(ToolOutputCapLayer::new(limits(100)));

    handle.allow(0);
    assert_pending!(service.poll_ready());
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());

    let response = service.call(ToolCall::new("Glob", json!({ "pattern": "*" })));
    let (request, send) = handle.next_request().await.unwrap();
    assert_eq!(request, ToolCall::new("Glob", json!({ "pattern": "*" })));
    send.send_response(ToolOutput::new(listing(500)));
    assert_capped(&listing(500), &response.await.unwrap(), 100);

    handle.send_error(ToolError::new("tool is down"));
    let error = futures_util::future::poll_fn(|cx| service.get_mut().poll_ready(cx))
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "tool is down");
}

#[derive(Debug)]
struct CountsClones(Arc<AtomicUsize>);

impl Clone for CountsClones {
    fn clone(&self) -> Self {
        self.0.fetch_add(1, Ordering::SeqCst);
        CountsClones(Arc::clone(&self.0))
    }
}

impl Service<ToolCall> for CountsClones {
    type Response = ToolOutput;
    type Error = Infallible;
    type Future = std::future::Ready<Result<ToolOutput, Infallible>>;
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, _: ToolCall) -> Self::Future {
        std::future::ready(Ok(ToolOutput::new(listing(1000))))
    }
}

#[test]
fn call_does_not_clone_the_inner_service() {
    let clones = Arc::new(AtomicUsize::new(0));
    let mut capped = ToolOutputCap::new(CountsClones(Arc::clone(&clones)), limits(100));
    for _ in 0..3 {
        let output = capped
            .call(ToolCall::new("Glob", json!({})))
            .now_or_never()
            .unwrap();
        assert!(output.unwrap().truncation.is_some());
    }
    assert_eq!(clones.load(Ordering::SeqCst), 0);
}

// 7. Tower citizen.

#[test]
fn layer_and_service_are_tower_citizens() {
    fn clone_debug<T: Clone + std::fmt::Debug>(_: &T) {}
    let layer = ToolOutputCapLayer::new(ToolOutputLimits::default());
    clone_debug(&layer);
    assert!(format!("{layer:?}").contains("5000"));
    clone_debug(&layer.layer(CountsClones(Arc::default())));
}

#[tokio::test]
async fn composes_with_timeout_concurrency_limit_and_boxing() {
    let tool = service_fn(|call: ToolCall| async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let paths = call.arguments["paths"].as_u64().unwrap() as usize;
        Ok::<_, ToolError>(ToolOutput::new(listing(paths)))
    });
    let stack: BoxCloneService<ToolCall, ToolOutput, tower::BoxError> = ServiceBuilder::new()
        .timeout(Duration::from_secs(30))
        .concurrency_limit(2)
        .layer(ToolOutputCapLayer::new(limits(200)))
        .service(tool)
        .boxed_clone();

    let calls = (0..8).map(|i| {
        let stack = stack.clone();
        tokio::spawn(async move {
            let paths = 10 + i * 200;
            let output = stack
                .oneshot(ToolCall::new("Glob", json!({ "paths": paths })))
                .await
                .unwrap();
            (paths, output)
        })
    });
    for call in futures_util::future::join_all(calls).await {
        let (paths, output) = call.unwrap();
        let text = listing(paths);
        if count(&text) <= 200 {
            assert_eq!(output, ToolOutput::new(text));
        } else {
            assert_capped(&text, &output, 200);
        }
    }
}

// 8. Tracing.

/// The fields of one event, as `(name, value)`.
type Fields = Vec<(String, String)>;

#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<Fields>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Record(Fields);
        impl tracing::field::Visit for Record {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push((field.name().to_owned(), format!("{value:?}")));
            }
        }
        let mut fields = Record(Vec::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
}

#[test]
fn each_truncation_emits_one_event_with_its_figures() {
    use tracing_subscriber::layer::SubscriberExt;
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(events.clone());
    let output = tracing::subscriber::with_default(subscriber, || {
        run(limits(100), "short");
        run(limits(100), &listing(1000))
    });
    let truncation = output.truncation.unwrap();
    let events = events.0.lock().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    let field = |name: &str| {
        events[0]
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.clone())
            .unwrap_or_else(|| panic!("no field {name} in {:?}", events[0]))
    };
    assert_eq!(field("tool"), "\"Glob\"");
    assert_eq!(
        field("original_tokens"),
        truncation.original_tokens.to_string()
    );
    assert_eq!(field("kept_tokens"), truncation.kept_tokens.to_string());
    assert_eq!(
        field("dropped_tokens"),
        truncation.dropped_tokens.to_string()
    );
    assert_eq!(field("max_tokens"), "100");
    assert_eq!(field("keep"), "\"head\"");
}

// Capped errors.

fn compile_log() -> String {
    (0..5000)
        .map(|i| format!("   Compiling crate_{i} v0.1.0\n"))
        .collect::<String>()
        + "error[E0308]: mismatched types"
}

#[test]
fn a_long_tool_error_is_capped_keeping_its_end_and_stays_an_error() {
    let tool =
        service_fn(|_: ToolCall| async { Err::<ToolOutput, _>(ToolError::new(compile_log())) });
    let error = ToolOutputCap::new(tool, limits(300))
        .oneshot(ToolCall::new("Bash", json!({ "cmd": "cargo build" })))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    let truncation = error.truncation.expect("the message was capped");
    assert_eq!(truncation.keep, tool_output_cap::Keep::Tail);
    assert_eq!(truncation.original_tokens, count(&compile_log()));
    let (kept, note_line) = error.message.rsplit_once('\n').unwrap();
    assert!(kept.ends_with("error[E0308]: mismatched types"));
    assert!(compile_log().ends_with(kept));
    assert_eq!(
        note_line,
        tool_output_cap::note(truncation.dropped_tokens, None)
    );
    assert!(count(&error.message) <= 300);
}

#[test]
fn a_boxed_tool_error_is_capped_too() {
    let tool = service_fn(|_: ToolCall| async {
        Err::<ToolOutput, tower::BoxError>(ToolError::new(compile_log()).into())
    });
    let error = ToolOutputCap::new(tool, limits(300))
        .oneshot(ToolCall::new("Bash", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    let error = error.downcast::<ToolError>().expect("still a ToolError");
    assert!(error.truncation.is_some());
    assert!(count(&error.message) <= 300);
}

#[test]
fn a_short_tool_error_is_untouched() {
    let tool =
        service_fn(|_: ToolCall| async { Err::<ToolOutput, _>(ToolError::new("no such file")) });
    let error = ToolOutputCap::new(tool, limits(300))
        .oneshot(ToolCall::new("Read", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(error, ToolError::new("no such file"));
}

#[test]
fn each_tool_keeps_what_its_limit_says() {
    let manifest = Manifest::from_toml_str(
        r#"
        [worker.tool_output]
        default_max_tokens = 200
        [worker.tool_output.per_tool]
        Bash = { max_tokens = 300, keep = "tail", hint = "pipe the output through tail" }
        "#,
    )
    .unwrap();
    let tool =
        service_fn(|_: ToolCall| async { Ok::<_, Infallible>(ToolOutput::new(compile_log())) });
    let capped = ToolOutputCapLayer::new(manifest.worker.limits()).layer(tool);
    let call = |name: &str| {
        capped
            .clone()
            .oneshot(ToolCall::new(name, json!({})))
            .now_or_never()
            .unwrap()
            .unwrap()
    };
    let bash = call("Bash");
    assert!(bash
        .content
        .contains("error[E0308]: mismatched types\ntruncated: "));
    assert!(bash.content.ends_with(": pipe the output through tail"));
    assert!(count(&bash.content) <= 300);
    let glob = call("Glob");
    assert!(glob.content.starts_with("   Compiling crate_0 v0.1.0\n"));
    assert!(count(&glob.content) <= 200);
}

/// A tokenizer of another kind, as a user would plug one in: one token a character, and only
/// the two required methods.
#[derive(Debug)]
struct OneTokenACharacter;

impl Tokenizer for OneTokenACharacter {
    fn count(&self, text: &str) -> usize {
        text.chars().count()
    }
    fn prefix(&self, text: &str, max_tokens: usize) -> Prefix {
        let len = text
            .char_indices()
            .nth(max_tokens)
            .map_or(text.len(), |(at, _)| at);
        Prefix {
            len,
            tokens: text[..len].chars().count(),
            total_tokens: self.count(text),
        }
    }
}

#[test]
fn a_custom_tokenizer_counts_and_cuts() {
    let layer = ToolOutputCapLayer::with_tokenizer(limits(100), Arc::new(OneTokenACharacter));
    let text = "日本語のパス/ファイル.rs\n".repeat(50);
    let tool = service_fn({
        let text = text.clone();
        move |_: ToolCall| std::future::ready(Ok::<_, Infallible>(ToolOutput::new(text.clone())))
    });
    let output = layer
        .layer(tool)
        .oneshot(ToolCall::new("Glob", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap();
    let truncation = output.truncation.unwrap();
    assert_eq!(truncation.original_tokens, text.chars().count());
    assert!(output.content.chars().count() <= 100);
    let kept = output.content.rsplit_once('\n').unwrap().0;
    assert!(text.starts_with(kept));
    assert_eq!(truncation.kept_tokens, kept.chars().count());
}
