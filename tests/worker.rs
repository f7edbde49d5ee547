//! The worker: routing by name, the capped history, and the warning for unknown tools.

mod common;

use std::sync::{Arc, Mutex};

use common::{assert_capped, count, listing};
use serde_json::json;
use tool_output_cap::{Manifest, ToolCall, ToolError, ToolOutput, Worker};
use tower::service_fn;

fn manifest(text: &str) -> Manifest {
    Manifest::from_toml_str(text).unwrap()
}

/// Returns `arguments.text` as its output, or as its error when `arguments.fail` is set.
fn echo(
) -> impl tower::Service<ToolCall, Response = ToolOutput, Error = ToolError, Future = impl Send>
       + Clone
       + Send
       + Sync
       + 'static {
    service_fn(|call: ToolCall| async move {
        let text = call.arguments["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if call.arguments["fail"].as_bool() == Some(true) {
            Err(ToolError::new(text))
        } else {
            Ok(ToolOutput::new(text))
        }
    })
}

#[tokio::test]
async fn results_enter_the_history_capped_in_call_order() {
    let manifest = manifest("[worker.tool_output.per_tool]\nGlob = 300\n");
    let mut worker = Worker::builder(&manifest.worker)
        .tool("Glob", echo())
        .tool("Fail", echo())
        .build();

    let small = ToolCall::new("Glob", json!({ "text": listing(3) }));
    let large = ToolCall::new("Glob", json!({ "text": listing(5000) }));
    let entry = worker.call(small.clone()).await;
    assert_eq!(entry.result, Ok(ToolOutput::new(listing(3))));
    worker.call(large.clone()).await;
    worker
        .call(ToolCall::new(
            "Fail",
            json!({ "text": "disk on fire", "fail": true }),
        ))
        .await;

    let history = worker.history();
    assert_eq!(history.len(), 3);
    assert_eq!(history[0].call, small);
    assert_eq!(history[1].call, large);
    assert_capped(&listing(5000), history[1].result.as_ref().unwrap(), 300);
    assert_eq!(history[2].result, Err(ToolError::new("disk on fire")));
}

#[tokio::test]
async fn a_call_of_an_unregistered_tool_is_a_recorded_error() {
    let mut worker = Worker::builder(&Manifest::default().worker)
        .tool("Glob", echo())
        .build();
    let entry = worker
        .call(ToolCall::new("Bash", json!({ "cmd": "ls" })))
        .await;
    let error = entry.result.clone().unwrap_err();
    assert!(error.message.contains("Bash"), "{error}");
    assert_eq!(worker.history().len(), 1);
}

#[test]
fn a_limit_for_an_unregistered_tool_is_a_warning_naming_it() {
    use tracing_subscriber::fmt::MakeWriter;

    #[derive(Clone, Default)]
    struct Logs(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Logs {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl<'a> MakeWriter<'a> for Logs {
        type Writer = Logs;
        fn make_writer(&'a self) -> Logs {
            self.clone()
        }
    }

    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    let manifest = manifest("[worker.tool_output.per_tool]\nGlob = 300\nGrpe = 3000\n");
    tracing::subscriber::with_default(subscriber, || {
        Worker::builder(&manifest.worker)
            .tool("Glob", echo())
            .build();
    });
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let warnings: Vec<&str> = logs.lines().filter(|line| line.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{logs}");
    assert!(warnings[0].contains("Grpe"), "{logs}");
}

fn text_of(result: &Result<ToolOutput, ToolError>) -> &str {
    match result {
        Ok(output) => &output.content,
        Err(error) => &error.message,
    }
}

fn truncation_of(result: &Result<ToolOutput, ToolError>) -> Option<tool_output_cap::Truncation> {
    match result {
        Ok(output) => output.truncation,
        Err(error) => error.truncation,
    }
}

#[tokio::test]
async fn a_turn_without_a_turn_budget_caps_each_result_to_its_tool() {
    let manifest = manifest("[worker.tool_output.per_tool]\nA = 100\n");
    let mut worker = Worker::builder(&manifest.worker)
        .tool("A", echo())
        .tool("B", echo())
        .build();
    let calls = vec![
        ToolCall::new("A", json!({ "text": listing(1000) })),
        ToolCall::new("B", json!({ "text": listing(1000) })),
    ];
    let entries = worker.run_turn(calls.clone()).await;
    assert_eq!(entries.len(), 2);
    assert_capped(&listing(1000), entries[0].result.as_ref().unwrap(), 100);
    assert_capped(&listing(1000), entries[1].result.as_ref().unwrap(), 5000);
}

#[tokio::test]
async fn a_turn_shares_its_budget_and_records_errors_capped() {
    let manifest = manifest("[worker.tool_output]\nmax_tokens_per_turn = 3000\n");
    let mut worker = Worker::builder(&manifest.worker)
        .tool("Glob", echo())
        .tool("Bash", echo())
        .build();
    let log = listing(2000) + "error: linking failed";
    let calls = vec![
        ToolCall::new("Glob", json!({ "text": listing(3) })),
        ToolCall::new("Glob", json!({ "text": listing(2000) })),
        ToolCall::new("Bash", json!({ "text": log, "fail": true })),
        ToolCall::new("Nope", json!({})),
    ];
    worker.run_turn(calls.clone()).await;
    let history = worker.history();
    assert_eq!(
        history.iter().map(|entry| &entry.call).collect::<Vec<_>>(),
        calls.iter().collect::<Vec<_>>()
    );
    assert_eq!(history[0].result, Ok(ToolOutput::new(listing(3))));
    let error = history[2].result.clone().unwrap_err();
    assert!(error.message.contains("error: linking failed\ntruncated: "));
    assert_eq!(error.truncation.unwrap().keep, tool_output_cap::Keep::Tail);
    assert!(history[3].result.is_err());
    let total: usize = history
        .iter()
        .map(|entry| count(text_of(&entry.result)))
        .sum();
    assert!(total <= 3000, "{total} tokens in the turn");
    // The two large results share what the small ones leave, equally.
    let (glob, bash) = (
        truncation_of(&history[1].result).unwrap(),
        error.truncation.unwrap(),
    );
    assert_eq!(glob.max_tokens, bash.max_tokens);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    #[test]
    fn a_turn_stays_within_its_budget(
        batch in proptest::collection::vec(
            (0usize..4, proptest::prop_oneof![1usize..40, 200usize..2000]),
            1..8,
        ),
        tool_limits in proptest::collection::vec(32usize..5000, 3),
        per_call in 32usize..3000,
    ) {
        let max_tokens_per_turn = per_call * batch.len();
        let manifest = manifest(&format!(
            "[worker.tool_output]\nmax_tokens_per_turn = {max_tokens_per_turn}\n\
             [worker.tool_output.per_tool]\nA = {}\nB = {}\nC = {}\n",
            tool_limits[0], tool_limits[1], tool_limits[2]
        ));
        let names = ["A", "B", "C", "C"];
        let calls: Vec<ToolCall> = batch
            .iter()
            .map(|&(tool, paths)| {
                ToolCall::new(names[tool], json!({ "text": listing(paths), "fail": tool == 3 }))
            })
            .collect();
        let history = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(async {
                let mut worker = Worker::builder(&manifest.worker)
                    .tool("A", echo())
                    .tool("B", echo())
                    .tool("C", echo())
                    .build();
                worker.run_turn(calls.clone()).await.to_vec()
            });

        proptest::prop_assert_eq!(history.len(), calls.len());
        let mut total = 0;
        for (entry, (call, &(_, paths))) in history.iter().zip(calls.iter().zip(&batch)) {
            proptest::prop_assert_eq!(&entry.call, call, "call order");
            let original = listing(paths);
            let tool_limit = manifest.worker.limits().max_tokens_for(&call.name);
            let tokens = count(text_of(&entry.result));
            proptest::prop_assert!(tokens <= tool_limit, "{} over its tool's {}", tokens, tool_limit);
            // An output within the equal share and its tool's limit is kept whole.
            if count(&original) <= per_call.min(tool_limit) {
                proptest::prop_assert_eq!(text_of(&entry.result), original.as_str());
            }
            total += tokens;
        }
        proptest::prop_assert!(total <= max_tokens_per_turn, "{} over the turn's {}", total, max_tokens_per_turn);
    }
}

/// One token a char: a tokenizer of this test's own, far from any vocabulary's counts.
#[derive(Debug)]
struct Chars;

impl tool_output_cap::Tokenizer for Chars {
    fn count(&self, text: &str) -> usize {
        text.chars().count()
    }

    fn prefix(&self, text: &str, max_tokens: usize) -> tool_output_cap::Prefix {
        let len = text
            .char_indices()
            .nth(max_tokens)
            .map_or(text.len(), |(at, _)| at);
        tool_output_cap::Prefix {
            len,
            tokens: text[..len].chars().count(),
            total_tokens: self.count(text),
        }
    }
}

#[tokio::test]
async fn a_custom_tokenizer_given_once_shares_a_turn_and_cuts_it_alike() {
    let limits = Manifest::from_toml_str(
        "[worker.tool_output]\ndefault_max_tokens = 3000\nmax_tokens_per_turn = 2000\n",
    )
    .unwrap()
    .worker
    .limits();
    let layer = tool_output_cap::ToolOutputCapLayer::with_tokenizer(limits, Arc::new(Chars));
    let mut worker = tool_output_cap::WorkerBuilder::new(layer.clone())
        .tool("Glob", echo())
        .tool("Grep", echo())
        .build();
    let (glob, grep) = (listing(400), "match\n".repeat(300));
    let calls = vec![
        ToolCall::new("Glob", json!({ "text": glob })),
        ToolCall::new("Grep", json!({ "text": grep })),
    ];
    let turn = worker.run_turn(calls).await.to_vec();
    let shares = layer
        .limits()
        .limits_for_turn(&[("Glob", &glob), ("Grep", &grep)]);
    let mut total = 0;
    for (entry, share) in turn.iter().zip(&shares) {
        let truncation = truncation_of(&entry.result).expect("each is over its share");
        assert_eq!(truncation.max_tokens, share.max_tokens());
        let chars = text_of(&entry.result).chars().count();
        assert!(chars <= share.max_tokens(), "{chars} chars");
        total += chars;
    }
    assert!(total <= 2000, "the turn is {total} chars");

    // A request cap from the same limits counts with the same tokenizer.
    let cap = tool_output_cap::wire::RequestCap::new(layer.limits().clone());
    let body = json!({"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Glob", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": glob}]},
    ]});
    let capped = cap
        .cap(
            tool_output_cap::wire::Api::AnthropicMessages,
            &body.to_string(),
        )
        .unwrap();
    assert_eq!(
        capped.cuts[0].truncation.original_tokens,
        glob.chars().count()
    );
}
