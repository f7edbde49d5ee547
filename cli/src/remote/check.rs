//! `check --url URL`: asks a remote server for its tools, as `mcp --url` would reach it, and
//! says what limit each gets.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{json, Value};

use super::server::{Remote, Unreachable};
use crate::check::{next_page, report, PROTOCOL};
use crate::config::Config;

/// The names of `remote`'s tools, every page of them, and the revision it spoke; `timeout` for
/// each answer.
pub(super) async fn list_tools(
    remote: &Remote,
    config: &Config,
    timeout: Duration,
) -> Result<String, String> {
    let initialize = json!({
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "tool-output-cap check", "version": env!("CARGO_PKG_VERSION")},
    });
    let initialized = request(remote, 1, "initialize", initialize, timeout).await?;
    let protocol = initialized["protocolVersion"]
        .as_str()
        .unwrap_or(PROTOCOL)
        .to_owned();
    remote.set_version(&protocol);
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = remote
        .post(Bytes::from(notification.to_string()), None)
        .await;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 2.. {
        let params = cursor
            .as_ref()
            .map_or(json!({}), |cursor| json!({"cursor": cursor}));
        let page = request(remote, id, "tools/list", params, timeout).await?;
        cursor = next_page(&page, &mut tools, cursor)?;
        if cursor.is_none() {
            break;
        }
    }
    remote.end(timeout).await;
    Ok(report(config, &tools, &protocol))
}

/// Sends the request `method` with the id `id` and waits, at most `timeout`, for its result.
async fn request(
    remote: &Remote,
    id: u64,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Value, String> {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let answered = async {
        let mut messages = remote
            .post(Bytes::from(message.to_string()), None)
            .await
            .map_err(|Unreachable(why)| why)?;
        while let Some(message) = messages.next().await {
            let message: Value = serde_json::from_slice(&message?).unwrap_or_default();
            if message["id"] == id && message.get("method").is_none() {
                return match message.get("error") {
                    Some(error) => Err(format!("the server refused `{method}`: {error}")),
                    None => Ok(message["result"].clone()),
                };
            }
        }
        Err(format!(
            "the server's answer to `{method}` ended before its response"
        ))
    };
    tokio::time::timeout(timeout, answered)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "the server did not answer `{method}` within {} s",
                timeout.as_secs()
            ))
        })
}
