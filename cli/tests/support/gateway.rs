//! What the gateway's tests share: a fake model API on 127.0.0.1, the gateway binary running,
//! and a client.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{HeaderMap, Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::Notify;

use super::{binary, scratch};

pub const NOTE_END: &str = "refine your query";
pub const RATE_LIMITED: &str = r#"{"type":"error","error":{"type":"rate_limit_error","message":"request too large for the per-minute limit"}}"#;

pub fn listing(n: usize) -> String {
    (0..n)
        .map(|i| format!("/usr/share/doc/package-{i}/copyright\n"))
        .collect()
}

pub fn count(text: &str) -> usize {
    tool_output_cap::Encoding::O200kBase.tokenizer().count(text)
}

/// A request the fake upstream got.
#[derive(Debug, Clone)]
pub struct Seen {
    pub version: hyper::Version,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// A fake model API: it keeps what it gets; it answers `x-fake-status: 429` with a rate-limit
/// error, a streamed request with two events (the second once `release` is notified), and
/// anything else with a small JSON.
#[derive(Clone)]
pub struct Fake {
    pub url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub release: Arc<Notify>,
    /// Set when a stream's second event could not be sent: its reader went away.
    pub stream_cut: Arc<Notify>,
}

pub type FakeBody = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

impl Fake {
    pub async fn start(tls: Option<tokio_rustls::TlsAcceptor>) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let scheme = if tls.is_some() {
            "https://localhost"
        } else {
            "http://127.0.0.1"
        };
        let fake = Fake {
            url: format!("{scheme}:{port}"),
            seen: Arc::default(),
            release: Arc::new(Notify::new()),
            stream_cut: Arc::new(Notify::new()),
        };
        let serving = fake.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let fake = serving.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let fake = fake.clone();
                        async move { Ok::<_, std::convert::Infallible>(fake.answer(request).await) }
                    });
                    let builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    let _ = match tls {
                        Some(tls) => {
                            let stream = tls.accept(stream).await.unwrap();
                            builder
                                .serve_connection(TokioIo::new(stream), service)
                                .await
                        }
                        None => {
                            builder
                                .serve_connection(TokioIo::new(stream), service)
                                .await
                        }
                    };
                });
            }
        });
        fake
    }

    pub async fn answer(&self, request: Request<Incoming>) -> Response<FakeBody> {
        let path = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let version = request.version();
        let headers = request.headers().clone();
        let body = request.into_body().collect().await.unwrap().to_bytes();
        self.seen.lock().unwrap().push(Seen {
            version,
            path: path.clone(),
            headers: headers.clone(),
            body: body.clone(),
        });
        if headers.get("x-fake-status").is_some_and(|s| s == "429") {
            return Response::builder()
                .status(429)
                .header("retry-after", "7")
                .header("x-fake", "kept")
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from_static(RATE_LIMITED.as_bytes())).boxed())
                .unwrap();
        }
        let streamed = path.contains("streamGenerateContent")
            || serde_json::from_slice::<Value>(&body).is_ok_and(|b| b["stream"] == true);
        if streamed {
            let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, _>>(1);
            let (release, cut) = (Arc::clone(&self.release), Arc::clone(&self.stream_cut));
            tokio::spawn(async move {
                let event =
                    |text: &'static str| Ok(Frame::data(Bytes::from_static(text.as_bytes())));
                let _ = sender
                    .send(event("event: first\ndata: {\"n\":1}\n\n"))
                    .await;
                release.notified().await;
                // The connection's end shows once the frame cannot go.
                for _ in 0..50 {
                    if sender
                        .send(event("event: second\ndata: {\"n\":2}\n\n"))
                        .await
                        .is_err()
                    {
                        cut.notify_one();
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            });
            let stream = tokio_stream_of(receiver);
            return Response::builder()
                .header("content-type", "text/event-stream")
                .body(StreamBody::new(stream).boxed())
                .unwrap();
        }
        let mut answer = Response::builder()
            .header("content-type", "application/json")
            .header("x-fake", "kept");
        // The per-minute limit a provider reports on every answer, when the test asks for one.
        if let Some(limit) = headers.get("x-fake-input-limit") {
            answer = answer.header("anthropic-ratelimit-input-tokens-limit", limit);
        }
        answer
            .body(Full::new(Bytes::from_static(br#"{"ok": true}"#)).boxed())
            .unwrap()
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// The frames `receiver` gets, as a stream.
pub fn tokio_stream_of<T>(
    mut receiver: tokio::sync::mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> {
    futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx))
}

/// The gateway binary, running, and what it wrote to stderr: all of it once it is dropped.
pub struct Gateway {
    pub child: Child,
    pub url: String,
    pub stderr: Arc<Mutex<String>>,
    pub dir: super::Scratch,
    /// The thread that reads its stderr into `stderr`, to the end.
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Gateway {
    /// `tool-output-cap gateway --upstream UPSTREAM --listen 127.0.0.1:0 ARGS` with `env`.
    pub fn start(name: &str, upstream: &str, args: &[&str], env: &[(&str, &str)]) -> Gateway {
        let dir = scratch("gateway", name);
        Gateway::spawn(binary(&dir), dir, upstream, args, env)
    }

    /// [`start`](Self::start), started by `sh` after `ulimit ULIMIT` (as `-Sn 1024`).
    pub fn start_under_ulimit(name: &str, upstream: &str, args: &[&str], ulimit: &str) -> Gateway {
        let dir = scratch("gateway", name);
        let binary = binary(&dir);
        let mut shell = std::process::Command::new("sh");
        shell
            .args(["-c", &format!("ulimit {ulimit} && exec \"$0\" \"$@\"")])
            .arg(binary.get_program());
        for (name, value) in binary.get_envs() {
            match value {
                Some(value) => shell.env(name, value),
                None => shell.env_remove(name),
            };
        }
        Gateway::spawn(shell, dir, upstream, args, &[])
    }

    fn spawn(
        mut command: std::process::Command,
        dir: super::Scratch,
        upstream: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Gateway {
        let mut child = command
            .args(["gateway", "--upstream", upstream, "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (url_sender, url) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if let Some(url) = line
                    .split_whitespace()
                    .find(|w| w.starts_with("http://127.0.0.1:"))
                {
                    let _ = url_sender.send(url.to_owned());
                }
                log.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let url = url
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| {
                panic!(
                    "the gateway said where it listens: {}",
                    stderr.lock().unwrap()
                )
            });
        Gateway {
            child,
            url,
            stderr,
            dir,
            reader: Some(reader),
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // What the gateway wrote before it ended may still be in the pipe.
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// How long a streamed answer's headers, or its next frame, may take: a liveness guard, long
/// enough for a loaded 2-core machine; what the tests assert of the order of events holds
/// whatever it is.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// POSTs `body`, a streamed request, to `url`: the answer, whose headers must come within
/// [`PATIENCE`].
pub async fn stream(url: &str, body: Value) -> Response<Incoming> {
    let request = Request::post(url)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    tokio::time::timeout(PATIENCE, client().request(request))
        .await
        .expect("the answer's headers came in time")
        .unwrap()
}

/// The next frame of `body`, which must come within [`PATIENCE`].
pub async fn next_frame(body: &mut Incoming) -> Frame<Bytes> {
    tokio::time::timeout(PATIENCE, body.frame())
        .await
        .expect("a frame came in time")
        .expect("the body has a frame")
        .expect("the frame was read")
}

pub fn client() -> Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

/// POSTs `body` to `url` with `headers`; the answer's status, headers and body.
pub async fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> (StatusCode, HeaderMap, Bytes) {
    let mut request = Request::post(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let answer = client()
        .request(request.body(Full::new(body.into())).unwrap())
        .await
        .unwrap();
    let (parts, body) = answer.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

/// A TLS acceptor for `localhost` that offers the protocols `alpn` (none: HTTP/1.1 by default),
/// and the PEM of the authority that signed its certificate.
pub fn tls_acceptor(alpn: Vec<Vec<u8>>) -> (tokio_rustls::TlsAcceptor, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let mut config = tokio_rustls::rustls::ServerConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        tokio_rustls::rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .unwrap();
    config.alpn_protocols = alpn;
    (tokio_rustls::TlsAcceptor::from(Arc::new(config)), ca.pem())
}
