//! The worker: routing by name, the capped history, and the warning for unknown tools.

mod common;

use std::sync::{Arc, Mutex};

use common::{assert_capped, listing};
use serde_json::json;
use tool_output_cap::{Manifest, ToolCall, ToolError, ToolOutput, Worker};
use tower::service_fn;

fn manifest(text: &str) -> Manifest {
    Manifest::from_toml_str(text).unwrap()
}

fn glob(
) -> impl tower::Service<ToolCall, Response = ToolOutput, Error = ToolError, Future = impl Send>
       + Clone
       + Send
       + Sync
       + 'static {
    service_fn(|call: ToolCall| async move {
        let paths = call.arguments["paths"].as_u64().unwrap_or(10) as usize;
        Ok(ToolOutput::new(listing(paths)))
    })
}

#[tokio::test]
async fn results_enter_the_history_capped_in_call_order() {
    let manifest = manifest("[worker.tool_output.per_tool]\nGlob = 300\n");
    let mut worker = Worker::builder(&manifest.worker)
        .tool("Glob", glob())
        .tool(
            "Fail",
            service_fn(|_: ToolCall| async {
                Err::<ToolOutput, _>(ToolError::new("disk on fire"))
            }),
        )
        .build();

    let small = ToolCall::new("Glob", json!({ "paths": 3 }));
    let large = ToolCall::new("Glob", json!({ "paths": 5000 }));
    let entry = worker.call(small.clone()).await;
    assert_eq!(entry.result, Ok(ToolOutput::new(listing(3))));
    worker.call(large.clone()).await;
    worker.call(ToolCall::new("Fail", json!({}))).await;

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
        .tool("Glob", glob())
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
            .tool("Glob", glob())
            .build();
    });
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let warnings: Vec<&str> = logs.lines().filter(|line| line.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{logs}");
    assert!(warnings[0].contains("Grpe"), "{logs}");
}
