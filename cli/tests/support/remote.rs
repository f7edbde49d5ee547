//! A fake remote MCP server over Streamable HTTP, of the tests' own: it answers in JSON or in
//! server-sent events as a test asks, may require a bearer token, records every request, and
//! may break off a stream, forget its sessions, or send the host a request of its own. Like the
//! official `server-everything`, it adds a tool once the host says it is initialized, and takes
//! its time over that notification.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{HeaderMap, Method, Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{json, Value};
use tokio::net::TcpListener;

use super::gateway::{listing, tokio_stream_of, FakeBody};

/// A request the server got.
#[derive(Debug, Clone)]
pub struct Got {
    pub method: Method,
    pub headers: HeaderMap,
    pub body: Value,
}

/// How the server answers.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// The token a request must bear (`Authorization: Bearer TOKEN`); else a 401.
    pub token: Option<String>,
    /// Answers as server-sent events, not JSON.
    pub events: bool,
}

/// The server, running.
#[derive(Clone)]
pub struct Remote {
    pub url: String,
    got: Arc<Mutex<Vec<Got>>>,
    sessions: Arc<Mutex<u32>>,
    /// The session the server knows, if any: forgotten as a restart forgets it.
    live: Arc<Mutex<Option<String>>>,
    /// Whether the host said it is initialized: the tool `late` is listed from then on.
    initialized: Arc<AtomicBool>,
    answers: Answers,
}

impl Remote {
    pub async fn start(answers: Answers) -> Remote {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://127.0.0.1:{}/mcp",
            listener.local_addr().unwrap().port()
        );
        let remote = Remote {
            url,
            got: Arc::default(),
            sessions: Arc::default(),
            live: Arc::default(),
            initialized: Arc::default(),
            answers,
        };
        let serving = remote.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let remote = serving.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let remote = remote.clone();
                        async move { Ok::<_, Infallible>(remote.answer(request).await) }
                    });
                    let builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    let _ = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        remote
    }

    /// The requests it got, in order.
    pub fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// Forgets its sessions, as a server that restarted.
    pub fn restart(&self) {
        *self.live.lock().unwrap() = None;
    }

    async fn answer(&self, request: Request<Incoming>) -> Response<FakeBody> {
        let (parts, body) = request.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        self.got.lock().unwrap().push(Got {
            method: parts.method.clone(),
            headers: parts.headers.clone(),
            body: message.clone(),
        });
        // The OAuth metadata a host reads to sign in, as a server serves it.
        if parts.uri.path().starts_with("/.well-known/oauth-") {
            let document = json!({"resource": self.url, "authorization_servers": ["https://auth.example.com"]});
            return Response::builder()
                .header("content-type", "application/json")
                .body(full(Bytes::from(document.to_string())))
                .unwrap();
        }
        if let Some(token) = &self.answers.token {
            let bearer = format!("Bearer {token}");
            if parts
                .headers
                .get("authorization")
                .is_none_or(|given| given != bearer.as_str())
            {
                return Response::builder()
                    .status(401)
                    .header(
                        "www-authenticate",
                        r#"Bearer resource_metadata="/.well-known/oauth-protected-resource""#,
                    )
                    .body(full(Bytes::new()))
                    .unwrap();
            }
        }
        let session = parts
            .headers
            .get("mcp-session-id")
            .and_then(|s| s.to_str().ok());
        let initialize = message["method"] == "initialize";
        if !initialize && session.is_some() && session != self.live.lock().unwrap().as_deref() {
            return status(404);
        }
        match parts.method {
            Method::DELETE => status(200),
            // A stream of its own, which sends the host a request, and stays open.
            Method::GET => self.events(
                vec![json!({"jsonrpc": "2.0", "id": "server-1", "method": "roots/list"})],
                Ends::Never,
            ),
            _ if message["method"] == "notifications/initialized" => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                self.initialized.store(true, Ordering::SeqCst);
                status(202)
            }
            _ => self.answer_post(&message),
        }
    }

    fn answer_post(&self, message: &Value) -> Response<FakeBody> {
        let Some(method) = message["method"].as_str() else {
            return status(202);
        };
        let id = message["id"].clone();
        if id.is_null() {
            return status(202);
        }
        let result = match method {
            "initialize" => {
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}})
            }
            "tools/list" => {
                let mut tools = vec![json!({"name": "list", "inputSchema": {"type": "object"}})];
                if self.initialized.load(Ordering::SeqCst) {
                    tools.push(json!({"name": "late", "inputSchema": {"type": "object"}}));
                }
                json!({ "tools": tools })
            }
            "tools/call" if message["params"]["name"] == "broken" => {
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}});
                return self.events(vec![progress], Ends::Broken);
            }
            "tools/call" => {
                let paths = message["params"]["arguments"]["paths"]
                    .as_u64()
                    .unwrap_or(3000);
                json!({"content": [{"type": "text", "text": listing(paths as usize)}]})
            }
            _ => json!({}),
        };
        let response = json!({"jsonrpc": "2.0", "id": id, "result": result});
        let mut answer = if self.answers.events {
            self.events(vec![response], Ends::After)
        } else {
            Response::builder()
                .header("content-type", "application/json")
                .body(full(Bytes::from(response.to_string())))
                .unwrap()
        };
        if method == "initialize" {
            let mut sessions = self.sessions.lock().unwrap();
            *sessions += 1;
            let session = format!("session-{sessions}");
            *self.live.lock().unwrap() = Some(session.clone());
            answer
                .headers_mut()
                .insert("mcp-session-id", session.parse().unwrap());
        }
        answer
    }

    /// A stream of `messages` as events, which then ends as `ends` says.
    fn events(&self, messages: Vec<Value>, ends: Ends) -> Response<FakeBody> {
        let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, Infallible>>(8);
        tokio::spawn(async move {
            for message in messages {
                let event = format!("event: message\ndata: {message}\n\n");
                let _ = sender.send(Ok(Frame::data(Bytes::from(event)))).await;
            }
            match ends {
                Ends::After => {}
                // Half an event, then the end, as a server whose connection drops.
                Ends::Broken => {
                    let half = Bytes::from_static(b"data: {\"jsonrpc\"");
                    let _ = sender.send(Ok(Frame::data(half))).await;
                }
                Ends::Never => sender.closed().await,
            }
        });
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(StreamBody::new(tokio_stream_of(receiver)).boxed())
            .unwrap()
    }
}

/// How a stream of events ends.
#[derive(Debug, Clone, Copy)]
enum Ends {
    /// After its messages.
    After,
    /// Halfway through an event, before the response.
    Broken,
    /// When the client goes.
    Never,
}

fn full(bytes: Bytes) -> FakeBody {
    Full::new(bytes).boxed()
}

fn status(code: u16) -> Response<FakeBody> {
    Response::builder()
        .status(code)
        .body(full(Bytes::new()))
        .unwrap()
}
