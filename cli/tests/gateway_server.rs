//! The gateway as a server: an HTTP/2 client in front of an HTTP/1 upstream, bodies over the
//! limit and compression bombs passed on unread in bounded memory, an upstream that hangs, idle
//! connections closed, and what it never logs or says of where it listens.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};
use support::gateway::{count, listing, post, tls_acceptor, Fake, Gateway, NOTE_END};
use support::{binary, scratch};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An Anthropic Messages request whose one tool result is `result`.
fn with_result(result: &str) -> Value {
    json!({
        "model": "m",
        "messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Glob", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}]},
        ],
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http2_client_gets_the_answer_of_an_http1_upstream() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("h2c", &fake.url, &["--max-tokens", "1000"], &[]);
    // Prior knowledge: HTTP/2 on a cleartext connection, as `curl --http2-prior-knowledge`.
    let client = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http::<Full<Bytes>>();
    let request = Request::post(format!("{}/v1/messages", gateway.url))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            with_result(&listing(3000)).to_string(),
        )))
        .unwrap();
    let answer = client.request(request).await.unwrap();
    assert_eq!(answer.version(), hyper::Version::HTTP_2);
    assert_eq!(answer.status(), StatusCode::OK, "{}", gateway.stderr());
    let body = answer.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], br#"{"ok": true}"#);
    let seen = fake.seen().pop().unwrap();
    let sent: Value = serde_json::from_slice(&seen.body).unwrap();
    let result = sent["messages"][1]["content"][0]["content"]
        .as_str()
        .unwrap();
    assert!(count(result) <= 1000 && result.ends_with(NOTE_END));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_https_upstream_is_spoken_to_in_the_version_it_offers() {
    for (alpn, version) in [
        (vec![b"http/1.1".to_vec()], hyper::Version::HTTP_11),
        (vec![b"h2".to_vec()], hyper::Version::HTTP_2),
        (
            vec![b"h2".to_vec(), b"http/1.1".to_vec()],
            hyper::Version::HTTP_2,
        ),
    ] {
        let (acceptor, ca_pem) = tls_acceptor(alpn.clone());
        let fake = Fake::start(Some(acceptor)).await;
        let dir = scratch("gateway-server", "alpn");
        let ca_file = dir.join("ca.pem");
        std::fs::write(&ca_file, ca_pem).unwrap();
        let gateway = Gateway::start(
            "alpn",
            &fake.url,
            &["--max-tokens", "1000"],
            &[("SSL_CERT_FILE", ca_file.to_str().unwrap())],
        );
        let url = format!("{}/v1/messages", gateway.url);
        let (status, _, _) = post(&url, &[], with_result(&listing(3000)).to_string()).await;
        assert_eq!(status, StatusCode::OK, "{alpn:?}: {}", gateway.stderr());
        let seen = fake.seen().pop().unwrap();
        assert_eq!(seen.version, version, "{alpn:?}");
        let sent: Value = serde_json::from_slice(&seen.body).unwrap();
        let result = sent["messages"][1]["content"][0]["content"]
            .as_str()
            .unwrap();
        assert!(result.ends_with(NOTE_END), "{alpn:?}");
    }
}

/// `parts` joined, gzip-compressed one member each: a body that decodes to their whole, each
/// member compressed once however often it repeats.
fn gzip_members(parts: &[(&[u8], usize)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (part, times) in parts {
        let mut member = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        member.write_all(part).unwrap();
        let member = member.finish().unwrap();
        for _ in 0..*times {
            body.extend_from_slice(&member);
        }
    }
    body
}

/// `parts`, each compressed as one zstd frame and repeated so many times: a valid body that
/// decodes to their concatenation.
fn zstd_frames(parts: &[(&[u8], usize)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (part, times) in parts {
        let frame =
            ruzstd::encoding::compress_to_vec(*part, ruzstd::encoding::CompressionLevel::Fastest);
        for _ in 0..*times {
            body.extend_from_slice(&frame);
        }
    }
    body
}

/// The peak resident memory of the process `pid`, in bytes (Linux's `VmHWM`).
fn peak_rss(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<usize>()
        .unwrap()
        * 1024
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_over_the_limit_and_compression_bombs_go_on_unread_in_bounded_memory() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("skipped: the peak memory is read from /proc, which this system has not");
        return;
    }
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("bombs", &fake.url, &[], &[]);
    let url = format!("{}/v1/messages", gateway.url);
    let mib: Vec<u8> = vec![b'a'; 1 << 20];
    // 1 GiB of valid JSON, the history of a tool result of one letter.
    let json: [(&[u8], usize); 3] = [
        (br#"{"model":"m","messages":[{"role":"user","content":""#, 1),
        (&mib, 1024),
        (br#""}]}"#, 1),
    ];
    // 2 GiB of zeros.
    let zeros = vec![0u8; 16 << 20];
    // 40 MiB sent as it is: over the 32 MiB default, under no compression.
    let plain = with_result(&"x".repeat(40 << 20)).to_string();
    for (what, body, encoding) in [
        ("1 GiB of JSON in gzip", gzip_members(&json), "gzip"),
        (
            "2 GiB of zeros in gzip",
            gzip_members(&[(&zeros, 128)]),
            "gzip",
        ),
        ("1 GiB of JSON in zstd", zstd_frames(&json), "zstd"),
        (
            "2 GiB of zeros in zstd",
            zstd_frames(&[(&zeros, 128)]),
            "zstd",
        ),
        ("40 MiB of JSON", plain.into_bytes(), "identity"),
    ] {
        let (status, _, _) = post(&url, &[("content-encoding", encoding)], body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{what}");
        let seen = fake.seen().pop().unwrap();
        assert!(
            seen.body == body,
            "{what}: the upstream got the bytes as they came"
        );
    }
    let peak = peak_rss(gateway.child.id());
    let log = gateway.stderr();
    assert!(
        peak < 300 << 20,
        "a peak of {} MiB for bodies of 32 MiB at most",
        peak >> 20
    );
    assert_eq!(log.matches("decodes to more than").count(), 4, "{log}");
    assert_eq!(log.matches("sent on unread").count(), 1, "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_that_hangs_gives_a_504_in_each_apis_shape() {
    // An upstream that takes every connection and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let gateway = Gateway::start("hang", &upstream, &["--upstream-timeout", "1"], &[]);
    for (route, pointer, expected) in [
        ("/v1/messages", "/error/type", "timeout_error"),
        ("/v1/chat/completions", "/error/code", "timeout"),
        (
            "/v1beta/models/g:generateContent",
            "/error/status",
            "DEADLINE_EXCEEDED",
        ),
    ] {
        let started = Instant::now();
        let (status, _, body) = post(&format!("{}{route}", gateway.url), &[], "{}").await;
        assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{route}");
        assert!(started.elapsed() < Duration::from_secs(30), "{route}");
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body.pointer(pointer).unwrap(), expected, "{route}: {body}");
        assert!(body.to_string().contains("--upstream-timeout"), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_connections_are_closed_after_the_header_timeout_and_requests_are_served_meanwhile() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("idle", &fake.url, &["--header-timeout", "2"], &[]);
    let address = gateway.url.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    for _ in 0..2000 {
        idle.push(TcpStream::connect(&address).await.unwrap());
    }
    // Meanwhile, a request is answered, on a connection kept alive after it.
    let mut kept = TcpStream::connect(&address).await.unwrap();
    kept.write_all(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(30), kept.read(&mut answer))
        .await
        .expect("an answer came")
        .unwrap();
    assert!(answer[..read].starts_with(b"HTTP/1.1 200"));
    idle.push(kept);
    // Each idle connection, the kept-alive one among them, is closed by the gateway: its read
    // ends.
    let deadline = Duration::from_secs(60);
    for (at, stream) in idle.iter_mut().enumerate() {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(deadline, stream.read(&mut byte)).await;
        assert!(
            matches!(read, Ok(Ok(0) | Err(_))),
            "connection {at} was still open: {read:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_that_takes_no_connection_gives_a_502_after_the_connect_timeout() {
    // A listener whose backlog of one is taken, and never accepts: a connection to it hangs.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(0).unwrap();
    let address = listener.local_addr().unwrap();
    let _taken = TcpStream::connect(address).await.unwrap();
    let gateway = Gateway::start(
        "connect-timeout",
        &format!("http://{address}"),
        &["--connect-timeout", "1"],
        &[],
    );
    let started = Instant::now();
    let (status, _, body) = post(&format!("{}/v1/messages", gateway.url), &[], "{}").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(started.elapsed() < Duration::from_secs(30));
    let body: Value = serde_json::from_slice(&body).unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("cannot be reached"), "{message}");
    drop(listener);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_does_not_come_in_time_gets_a_408_in_the_apis_shape() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("body-timeout", &fake.url, &["--body-timeout", "1"], &[]);
    let mut stream = TcpStream::connect(gateway.url.trim_start_matches("http://"))
        .await
        .unwrap();
    // Headers that promise 100 bytes, and 10 of them.
    stream
        .write_all(
            b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"model\":1",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("}}") {
        let read = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buffer))
            .await
            .expect("an answer came")
            .unwrap();
        assert!(read > 0, "{}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buffer[..read]);
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains(r#""type":"timeout_error""#) && answer.contains("--body-timeout"),
        "{answer}"
    );
    assert!(fake.seen().is_empty(), "nothing went up");
}

#[tokio::test(flavor = "multi_thread")]
async fn past_max_connections_a_new_one_waits_until_one_ends() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start(
        "max-connections",
        &fake.url,
        &["--max-connections", "1", "--header-timeout", "2"],
        &[],
    );
    // One connection that sends nothing holds the one place.
    let mut idle = TcpStream::connect(gateway.url.trim_start_matches("http://"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let url = format!("{}/v1/models", gateway.url);
    let request = tokio::spawn(async move { post(&url, &[], "").await.0 });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !request.is_finished(),
        "a second connection waits while the first is open"
    );
    // The idle one is closed after the header timeout; then the request is served.
    let mut byte = [0u8; 1];
    let closed = tokio::time::timeout(Duration::from_secs(30), idle.read(&mut byte)).await;
    assert!(matches!(closed, Ok(Ok(0) | Err(_))), "{closed:?}");
    let status = tokio::time::timeout(Duration::from_secs(30), request)
        .await
        .expect("the waiting request was served")
        .unwrap();
    assert_eq!(status, StatusCode::OK);
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The value of the sample `series` (its name and labels, as written) in the metrics `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.split(' ').next()?.parse().ok())
}

/// The text of the gateway's metrics at `address`, checked to be served as OpenMetrics.
async fn scrape(address: &str) -> String {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let answer = client
        .get(format!("http://{address}/metrics").parse().unwrap())
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert!(answer.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/openmetrics-text"));
    String::from_utf8(
        answer
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_the_cuts_and_requests_on_a_listener_of_their_own() {
    let fake = Fake::start(None).await;
    let address = format!("127.0.0.1:{}", free_port());
    let gateway = Gateway::start(
        "metrics",
        &fake.url,
        &["--max-tokens", "1000", "--metrics", &address],
        &[],
    );
    let listing = listing(3000);
    for _ in 0..3 {
        let body = with_result(&listing).to_string();
        let (status, _, _) = post(&format!("{}/v1/messages", gateway.url), &[], body).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _, _) = post(&format!("{}/v1/messages", gateway.url), &[], "not json").await;
    assert_eq!(status, StatusCode::OK);
    // The proxied routes have no /metrics of their own: it goes to the upstream.
    post(&format!("{}/metrics", gateway.url), &[], "").await;
    assert_eq!(fake.seen().pop().unwrap().path, "/metrics");

    let text = scrape(&address).await;
    let glob = r#"{api="anthropic",tool="Glob"}"#;
    let value = |series: &str| sample(&text, series).unwrap_or_else(|| panic!("{series}:\n{text}"));
    assert_eq!(
        value(&format!("tool_output_cap_gateway_results_cut_total{glob}")),
        3.0
    );
    assert_eq!(
        value(&format!("tool_output_cap_gateway_cuts_cached_total{glob}")),
        2.0
    );
    assert_eq!(
        value(&format!(
            "tool_output_cap_gateway_tokens_before_total{glob}"
        )),
        3.0 * count(&listing) as f64
    );
    assert!(value(&format!("tool_output_cap_gateway_tokens_after_total{glob}")) <= 3000.0);
    assert_eq!(
        value(r#"tool_output_cap_gateway_requests_total{api="anthropic",status="200"}"#),
        4.0
    );
    assert_eq!(
        value(r#"tool_output_cap_gateway_requests_total{api="other",status="200"}"#),
        1.0
    );
    assert_eq!(
        value(r#"tool_output_cap_gateway_bodies_unread_total{reason="not_json"}"#),
        1.0
    );
    assert_eq!(
        value(r#"tool_output_cap_gateway_added_seconds_count{api="anthropic"}"#),
        4.0
    );
    // The cut and the three results' demands: more than the cut's text, far from the bound.
    let cached = value("tool_output_cap_gateway_cache_bytes");
    assert!((1000.0..1e6).contains(&cached), "{cached}");
}

#[tokio::test(flavor = "multi_thread")]
async fn blocks_it_cannot_price_are_logged_once_a_request_and_counted_by_kind() {
    let fake = Fake::start(None).await;
    let address = format!("127.0.0.1:{}", free_port());
    let gateway = Gateway::start("unpriced", &fake.url, &["--metrics", &address], &[]);
    // Two results, each with a block of a type no API defines for a tool result: sent on as
    // they are, and said to be uncounted.
    let video =
        json!({"type": "video", "source": {"type": "url", "url": "https://example.com/a.mp4"}});
    let result = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": [{"type": "text", "text": "the clip"}, video]});
    let body = json!({"model": "m", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Clip", "input": {}}, {"type": "tool_use", "id": "t2", "name": "Clip", "input": {}}]},
        {"role": "user", "content": [result("t1"), result("t2")]},
    ]});
    for _ in 0..2 {
        let (status, _, _) = post(
            &format!("{}/v1/messages", gateway.url),
            &[],
            body.to_string(),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            serde_json::from_slice::<Value>(&fake.seen().pop().unwrap().body).unwrap(),
            body
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    let log = gateway.stderr();
    let warned = log.matches("sent on uncounted").count();
    assert_eq!(warned, 2, "once a request:\n{log}");
    assert!(log.contains("blocks=\"2 video\""), "{log}");
    let text = scrape(&address).await;
    let series = r#"tool_output_cap_gateway_unpriced_blocks_total{api="anthropic",kind="video"}"#;
    assert_eq!(sample(&text, series), Some(4.0), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cache_of_no_bytes_keeps_no_cut_and_each_request_is_cut_anew() {
    let fake = Fake::start(None).await;
    let address = format!("127.0.0.1:{}", free_port());
    let gateway = Gateway::start(
        "no-cache",
        &fake.url,
        &[
            "--max-tokens",
            "1000",
            "--cache-bytes",
            "0",
            "--metrics",
            &address,
        ],
        &[],
    );
    let body = with_result(&listing(3000)).to_string();
    for _ in 0..2 {
        let (status, _, _) = post(&format!("{}/v1/messages", gateway.url), &[], body.clone()).await;
        assert_eq!(status, StatusCode::OK);
    }
    let text = scrape(&address).await;
    let glob = r#"{api="anthropic",tool="Glob"}"#;
    let series = format!("tool_output_cap_gateway_results_cut_total{glob}");
    assert_eq!(sample(&text, &series), Some(2.0), "{text}");
    let cached = format!("tool_output_cap_gateway_cuts_cached_total{glob}");
    assert_eq!(sample(&text, &cached).unwrap_or(0.0), 0.0, "{text}");
    assert_eq!(
        sample(&text, "tool_output_cap_gateway_cache_bytes"),
        Some(0.0),
        "{text}"
    );
}

#[test]
fn a_password_in_the_upstream_is_never_printed_and_a_public_listen_warns() {
    let dir = scratch("gateway-server", "listen");
    let mut child = support::Running(
        binary(&dir)
            .args([
                "gateway",
                "--upstream",
                "http://someone:secret-password@127.0.0.1:9/api",
                "--listen",
                "0.0.0.0:0",
            ])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(child.0.stderr.take().unwrap()).lines();
    let mut log = String::new();
    while !log.contains("stands for") {
        let line = lines
            .next()
            .expect("the gateway said where it listens")
            .unwrap();
        log.push_str(&(line + "\n"));
    }
    // Ended, so that the rest of its log ends.
    drop(child);
    for line in lines.map_while(Result::ok) {
        log.push_str(&(line + "\n"));
    }
    assert!(!log.contains("secret-password"), "{log}");
    assert!(log.contains("http://127.0.0.1:9/api"), "{log}");
    assert!(
        log.contains("beyond this machine") && log.contains("authenticates no one"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_password_in_the_upstream_goes_as_basic_auth_and_reaches_no_log_at_trace() {
    let fake = Fake::start(None).await;
    let (scheme, address) = fake.url.split_once("://").unwrap();
    let upstream = format!("{scheme}://someone:secret-password@{address}");
    let basic = "Basic c29tZW9uZTpzZWNyZXQtcGFzc3dvcmQ="; // base64("someone:secret-password")
    let trace = [("RUST_LOG", "trace,hyper=trace,hyper_util=trace")];
    for run in 0..20 {
        let gateway = Gateway::start("password", &upstream, &["--max-tokens", "1000"], &trace);
        let url = format!("{}/v1/messages", gateway.url);
        let body = with_result(&listing(3000)).to_string();
        // Two requests, the second on the pool's idle connection; one with a key of its own.
        let (status, _, _) = post(&url, &[], body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{}", gateway.stderr());
        let (status, _, _) = post(&url, &[("authorization", "Bearer own-key")], body).await;
        assert_eq!(status, StatusCode::OK, "{}", gateway.stderr());
        let seen = fake.seen();
        let authorization = |at: usize| seen[seen.len() - 2 + at].headers["authorization"].clone();
        assert_eq!(authorization(0), basic);
        assert_eq!(
            authorization(1),
            "Bearer own-key",
            "a request's own key is kept"
        );
        let stderr = std::sync::Arc::clone(&gateway.stderr);
        drop(gateway); // Ended, so that its log is whole.
        let log = stderr.lock().unwrap().clone();
        assert!(
            log.contains("TRACE"),
            "run {run}: the log is at trace: {log}"
        );
        assert!(
            !log.contains("secret-password") && !log.contains(&basic[6..]),
            "run {run}: {log}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_idle_connections_lock_no_new_client_out() {
    #[cfg(unix)]
    {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        if hard < 4096 {
            eprintln!("skipped: 1,100 connections need a hard open-file limit of 4096, not {hard}");
            return;
        }
        // This process holds the client side of every connection.
        setrlimit(Resource::RLIMIT_NOFILE, soft.max(4096), hard).unwrap();
    }
    let fake = Fake::start(None).await;
    // Started with the usual soft limit of 1024, under which a third is 341 connections.
    let gateway = Gateway::start_under_ulimit("idle", &fake.url, &[], "-Sn 1024");
    let address = gateway.url.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    for _ in 0..1100 {
        idle.push(TcpStream::connect(&address).await.unwrap());
    }
    let url = format!("{}/v1/messages", gateway.url);
    let served = tokio::time::timeout(
        Duration::from_secs(10),
        post(&url, &[], with_result("a.rs").to_string()),
    )
    .await;
    assert!(
        matches!(served, Ok((StatusCode::OK, _, _))),
        "a new client, behind 1,100 idle connections: {served:?}\n{}",
        gateway.stderr()
    );
    drop(idle);
}
