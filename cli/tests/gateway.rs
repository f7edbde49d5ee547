//! The gateway against a fake model API on 127.0.0.1: each API's tool results capped on the way
//! up, everything else and every answer byte for byte, streams relayed as they come, compressed
//! bodies, a TLS upstream, an upstream that is down, a host that goes away mid-stream, 100
//! concurrent 1 MB requests, SIGTERM, logs without keys, and a host run pointed at it.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use hyper::StatusCode;
use serde_json::{json, Value};
use support::gateway::{
    count, listing, next_frame, post, stream, tls_acceptor, Fake, Gateway, NOTE_END, PATIENCE,
    RATE_LIMITED,
};
use support::{binary, scratch};

/// A request of each API with one large tool result of the tool `shell`, its route, and where
/// the result is in it.
fn requests() -> Vec<(&'static str, Value, &'static str)> {
    let big = listing(3000);
    vec![
        (
            "/v1/messages?beta=true",
            json!({"model": "m", "messages": [
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shell", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": big}]}],
                "x-unknown-field": {"kept": 1}}),
            "/messages/1/content/0/content",
        ),
        (
            "/v1/messages/count_tokens",
            json!({"model": "m", "messages": [
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shell", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": big}]}]}]}),
            "/messages/1/content/0/content/0/text",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": [
                {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": big}]}),
            "/messages/1/content",
        ),
        (
            "/v1/responses",
            json!({"model": "m", "input": [
                {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": big}]}),
            "/input/1/output",
        ),
        (
            "/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-secret",
            json!({"contents": [
                {"role": "model", "parts": [{"functionCall": {"name": "shell", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "shell", "response": {"output": big}}}]}]}),
            "/contents/1/parts/0/functionResponse/response/output",
        ),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn each_apis_tool_results_are_capped_and_all_else_passes_byte_for_byte() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("apis", &fake.url, &["--max-tokens", "1000"], &[]);
    let headers = [
        ("x-api-key", "sk-ant-secret"),
        ("authorization", "Bearer sk-secret"),
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "fine-grained-tool-streaming-2025-05-14"),
        ("x-unknown", "kept as it is"),
        ("content-type", "application/json"),
    ];
    for (route, body, result) in requests() {
        let (status, answer_headers, answer) = post(
            &format!("{}{route}", gateway.url),
            &headers,
            body.to_string(),
        )
        .await;
        assert_eq!(
            (status, &answer[..]),
            (StatusCode::OK, &br#"{"ok": true}"#[..]),
            "{route}"
        );
        assert_eq!(answer_headers["x-fake"], "kept");
        let seen = fake.seen().pop().unwrap();
        assert_eq!(seen.path, route, "the path and query go on as they came");
        for (name, value) in headers {
            assert_eq!(seen.headers[name], value, "{route}: {name}");
        }
        let sent: Value = serde_json::from_slice(&seen.body).unwrap();
        let text = sent.pointer(result).unwrap().as_str().unwrap();
        assert!(count(text) <= 1000 && text.ends_with(NOTE_END), "{route}");
        // All but the result is as it was.
        let mut expected = body.clone();
        *expected.pointer_mut(result).unwrap() = json!(text);
        assert_eq!(sent, expected, "{route}");
    }
    // Other routes and methods, and a result within its limit, go on byte for byte.
    let small = r#"{"model":"m",  "messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"a.rs"}]}]}"#;
    for route in ["/v1/messages", "/v1/models", "/v1/files"] {
        post(&format!("{}{route}", gateway.url), &[], small).await;
        assert_eq!(fake.seen().pop().unwrap().body, small.as_bytes(), "{route}");
    }
    // An error answer: its status, headers and body byte for byte.
    let (status, answer_headers, answer) = post(
        &format!("{}/v1/messages", gateway.url),
        &[("x-fake-status", "429")],
        small,
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        (&answer_headers["retry-after"], &answer_headers["x-fake"]),
        (&"7".parse().unwrap(), &"kept".parse().unwrap())
    );
    assert_eq!(answer, RATE_LIMITED.as_bytes());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_answer_is_relayed_event_by_event() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("stream", &fake.url, &["--max-tokens", "1000"], &[]);
    for (route, mut body, result) in requests() {
        // Each API's streamed request: `stream: true`, or Gemini's streaming method.
        let route = route.replace(":generateContent", ":streamGenerateContent");
        body["stream"] = json!(true);
        let answer = stream(&format!("{}{route}", gateway.url), body).await;
        assert_eq!(answer.headers()["content-type"], "text/event-stream");
        let sent: Value = serde_json::from_slice(&fake.seen().pop().unwrap().body).unwrap();
        let text = sent.pointer(result).unwrap().as_str().unwrap();
        assert!(count(text) <= 1000 && text.ends_with(NOTE_END), "{route}");
        let mut body = answer.into_body();
        // The upstream holds its second event until the first has come through: a gateway that
        // waited for the whole answer would never give it.
        let first = next_frame(&mut body).await;
        assert_eq!(
            first.into_data().unwrap(),
            "event: first\ndata: {\"n\":1}\n\n"
        );
        fake.release.notify_one();
        let second = next_frame(&mut body).await;
        assert_eq!(
            second.into_data().unwrap(),
            "event: second\ndata: {\"n\":2}\n\n"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_goes_away_mid_stream_ends_the_upstreams_stream_and_the_gateway_goes_on() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("away", &fake.url, &[], &[]);
    let answer = stream(
        &format!("{}/v1/responses", gateway.url),
        json!({"model": "m", "stream": true}),
    )
    .await;
    let mut body = answer.into_body();
    next_frame(&mut body).await;
    drop(body);
    fake.release.notify_one();
    tokio::time::timeout(PATIENCE, fake.stream_cut.notified())
        .await
        .expect("the upstream's stream ended when the host went away");
    let (status, _, _) = post(&format!("{}/v1/models", gateway.url), &[], "").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn compressed_bodies_are_decoded_and_capped() {
    use std::io::Write;
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("encoded", &fake.url, &["--max-tokens", "1000"], &[]);
    let (route, body, result) = requests().remove(3);
    let text = body.to_string();
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(text.as_bytes()).unwrap();
    let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    zlib.write_all(text.as_bytes()).unwrap();
    let zstd = ruzstd::encoding::compress_to_vec(
        text.as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    for (encoding, encoded) in [
        ("gzip", gzip.finish().unwrap()),
        ("deflate", zlib.finish().unwrap()),
        ("zstd", zstd),
    ] {
        let (status, _, _) = post(
            &format!("{}{route}", gateway.url),
            &[("content-encoding", encoding)],
            encoded,
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let seen = fake.seen().pop().unwrap();
        assert!(
            seen.headers.get("content-encoding").is_none(),
            "{encoding}: sent on as identity"
        );
        assert_eq!(seen.headers["content-length"], seen.body.len().to_string());
        let sent: Value = serde_json::from_slice(&seen.body).unwrap();
        let text = sent.pointer(result).unwrap().as_str().unwrap();
        assert!(
            count(text) <= 1000 && text.ends_with(NOTE_END),
            "{encoding}"
        );
    }
    // Nothing to cut: the encoded bytes go on as they came, encoding and all.
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(br#"{"model": "m", "input": "hi"}"#).unwrap();
    let encoded = gzip.finish().unwrap();
    post(
        &format!("{}{route}", gateway.url),
        &[("content-encoding", "gzip")],
        encoded.clone(),
    )
    .await;
    let seen = fake.seen().pop().unwrap();
    assert_eq!(
        (&seen.body[..], &seen.headers["content-encoding"]),
        (&encoded[..], &"gzip".parse().unwrap())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tls_upstream_is_verified_against_the_authority_in_ssl_cert_file() {
    let (acceptor, ca_pem) = tls_acceptor(Vec::new());
    let fake = Fake::start(Some(acceptor)).await;
    let dir = scratch("gateway", "tls-ca");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca_pem).unwrap();
    let (route, body, result) = requests().remove(0);

    let trusted = Gateway::start(
        "tls",
        &fake.url,
        &["--max-tokens", "1000"],
        &[("SSL_CERT_FILE", ca_file.to_str().unwrap())],
    );
    let (status, _, _) = post(&format!("{}{route}", trusted.url), &[], body.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let sent: Value = serde_json::from_slice(&fake.seen().pop().unwrap().body).unwrap();
    assert!(sent
        .pointer(result)
        .unwrap()
        .as_str()
        .unwrap()
        .ends_with(NOTE_END));

    // Without the authority, the upstream is not trusted: a 502 that says why.
    let empty = dir.join("empty.pem");
    std::fs::write(&empty, ca_pem_of_another()).unwrap();
    let untrusted = Gateway::start(
        "tls-untrusted",
        &fake.url,
        &[],
        &[("SSL_CERT_FILE", empty.to_str().unwrap())],
    );
    let (status, _, answer) =
        post(&format!("{}{route}", untrusted.url), &[], body.to_string()).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(
        String::from_utf8_lossy(&answer).contains("certificate"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

/// The PEM of a certificate authority that signed nothing here.
fn ca_pem_of_another() -> String {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .self_signed(&rcgen::KeyPair::generate().unwrap())
        .unwrap()
        .pem()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_that_is_down_gives_a_502_in_the_apis_own_error_shape() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gateway = Gateway::start("down", &format!("http://127.0.0.1:{port}"), &[], &[]);
    for (route, shape) in [
        ("/v1/messages", "/error/type"),
        ("/v1/responses", "/error/message"),
        ("/v1beta/models/g:generateContent", "/error/status"),
        ("/v1/models", "/error/message"),
    ] {
        let (status, headers, body) = post(&format!("{}{route}", gateway.url), &[], "{}").await;
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{route}");
        assert_eq!(headers["content-type"], "application/json");
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert!(body.pointer(shape).is_some(), "{route}: {body}");
        assert!(body.to_string().contains("cannot be reached"), "{body}");
    }
    let (_, _, body) = post(&format!("{}/v1/messages", gateway.url), &[], "{}").await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (body["type"].as_str(), body["error"]["type"].as_str()),
        (Some("error"), Some("api_error"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_it_cannot_read_goes_on_unchanged_and_no_key_or_body_reaches_the_log() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start(
        "logs",
        &fake.url,
        &["--max-tokens", "1000"],
        &[("RUST_LOG", "debug")],
    );
    for body in [
        &b"not json at all"[..],
        br#"{"messages": [1, 2"#,
        b"\xff\xfe{}",
    ] {
        let (status, _, _) = post(
            &format!("{}/v1/messages", gateway.url),
            &[("x-api-key", "sk-ant-secret")],
            body.to_vec(),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(fake.seen().pop().unwrap().body, body);
    }
    let (route, body, _) = requests().remove(4);
    post(
        &format!("{}{route}", gateway.url),
        &[("authorization", "Bearer sk-secret")],
        body.to_string(),
    )
    .await;
    std::thread::sleep(Duration::from_millis(300));
    let log = gateway.stderr();
    assert_eq!(log.matches("sent on as it came").count(), 3, "{log}");
    assert!(log.contains("capped a tool result"), "{log}");
    for secret in [
        "sk-ant-secret",
        "sk-secret",
        "AIza-secret",
        "package-1/copyright",
        "not json at all",
    ] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_concurrent_one_megabyte_requests_are_each_capped() {
    let fake = Fake::start(None).await;
    let gateway = Gateway::start("hundred", &fake.url, &["--max-tokens", "1000"], &[]);
    // 1 MB each; the same result in each, as a host's history is, and a field of its own.
    let result = listing(27_000);
    assert!(result.len() > 1_000_000);
    let requests = (0..100).map(|i| {
        let body = json!({"model": "m", "metadata": {"i": i}, "messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}]}]});
        let url = format!("{}/v1/messages", gateway.url);
        tokio::spawn(async move { post(&url, &[], body.to_string()).await.0 })
    });
    for request in requests.collect::<Vec<_>>() {
        assert_eq!(request.await.unwrap(), StatusCode::OK);
    }
    let seen = fake.seen();
    assert_eq!(seen.len(), 100);
    for seen in seen {
        let sent: Value = serde_json::from_slice(&seen.body).unwrap();
        let text = sent["messages"][1]["content"][0]["content"]
            .as_str()
            .unwrap();
        assert!(count(text) <= 1000 && text.ends_with(NOTE_END));
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_finishes_the_requests_in_flight_and_takes_no_new_ones() {
    let fake = Fake::start(None).await;
    let mut gateway = Gateway::start("sigterm", &fake.url, &[], &[]);
    let answer = stream(
        &format!("{}/v1/messages", gateway.url),
        json!({"model": "m", "stream": true}),
    )
    .await;
    let mut body = answer.into_body();
    next_frame(&mut body).await;
    let pid = nix::unistd::Pid::from_raw(gateway.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // No new connection once it was told to stop.
    let address = gateway.url.trim_start_matches("http://").to_owned();
    assert!(
        tokio::net::TcpStream::connect(&address).await.is_err(),
        "a new connection was taken"
    );
    // The stream in flight goes on to its end.
    fake.release.notify_one();
    let second = next_frame(&mut body).await;
    assert!(second.into_data().unwrap().starts_with(b"event: second"));
    drop(body);
    let status = tokio::task::spawn_blocking(move || gateway.child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[cfg(unix)]
#[test]
fn a_host_runs_pointed_at_the_gateway_and_its_exit_code_is_kept() {
    use std::os::unix::fs::PermissionsExt;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(Fake::start(None));
    let dir = scratch("gateway", "host");
    // A stand-in for Claude Code: it posts one request to its base URL and exits 3.
    let claude = dir.join("claude");
    let mut script = std::fs::File::create(&claude).unwrap();
    writeln!(
        script,
        "#!/usr/bin/env python3\n\
         import json, os, sys, urllib.request\n\
         url = os.environ['ANTHROPIC_BASE_URL'] + '/v1/messages'\n\
         body = json.dumps({{'messages': [\n\
           {{'role': 'assistant', 'content': [{{'type': 'tool_use', 'id': 't', 'name': 'Glob', 'input': {{}}}}]}},\n\
           {{'role': 'user', 'content': [{{'type': 'tool_result', 'tool_use_id': 't', 'content': 'x\\n' * 20000}}]}}]}})\n\
         urllib.request.urlopen(urllib.request.Request(url, body.encode(), {{'content-type': 'application/json'}})).read()\n\
         print(url, sys.argv[1:])\n\
         sys.exit(3)"
    )
    .unwrap();
    drop(script);
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = binary(&dir)
        .args([
            "gateway",
            "--max-tokens",
            "500",
            "--",
            claude.to_str().unwrap(),
            "-p",
            "hi",
        ])
        .env("ANTHROPIC_BASE_URL", &fake.url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.starts_with("http://127.0.0.1:") && stdout.contains("['-p', 'hi']"),
        "{stdout}"
    );
    let seen = fake
        .seen()
        .pop()
        .expect("the host's request reached the upstream, its base URL");
    let sent: Value = serde_json::from_slice(&seen.body).unwrap();
    let text = sent["messages"][1]["content"][0]["content"]
        .as_str()
        .unwrap();
    assert!(count(text) <= 500 && text.ends_with(NOTE_END));
    let unknown = binary(&dir)
        .args(["gateway", "--", "python3"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("claude, codex and gemini"));
}

#[test]
fn check_says_what_the_gateway_would_cut_of_a_recorded_request() {
    let dir = scratch("gateway", "check-request");
    for (route, body, _) in requests() {
        let file = dir.join("request.json");
        std::fs::write(&file, body.to_string()).unwrap();
        let output = binary(&dir)
            .args([
                "check",
                "--max-tokens",
                "1000",
                "--request",
                file.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{route}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("shell: 29000 tokens, cut to "),
            "{route}: {stdout}"
        );
    }
    let file = dir.join("request.json");
    let refused = binary(&dir)
        .args([
            "check",
            "--request",
            file.to_str().unwrap(),
            "--route",
            "/v1/models",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--route \"/v1/models\""));
    let missing = binary(&dir)
        .args([
            "check",
            "--request",
            dir.join("none.json").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("none.json"));
}

#[test]
fn check_counts_the_media_of_a_recorded_request_by_kind_and_says_what_gives_way() {
    let dir = scratch("gateway", "check-images");
    // A 1568 x 1 PNG's header: 3 tokens at Anthropic's price; a PNG whose header cannot be
    // read: the most, 1640.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend(1568u32.to_be_bytes());
    png.extend(1u32.to_be_bytes());
    png.extend(b"\x08\x06\0\0\0");
    let base64 =
        |bytes: &[u8]| base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes);
    let image = |data: String| json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}});
    let mut content = vec![
        json!({"type": "text", "text": "the page"}),
        image(base64(&png)),
    ];
    content.extend((0..3).map(|_| image(base64(b"unreadable"))));
    // A PDF by its URL: its pages are not known, so a hundred, at 4,640 tokens each.
    content.push(json!({"type": "document", "source": {"type": "url", "url": "https://example.com/report.pdf"}}));
    // A block of a type the cap does not know: sent on, and said to be uncounted.
    content.push(
        json!({"type": "video", "source": {"type": "url", "url": "https://example.com/a.mp4"}}),
    );
    let body = json!({"model": "m", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": content}]},
    ]});
    let file = dir.join("request.json");
    std::fs::write(&file, body.to_string()).unwrap();
    let output = binary(&dir)
        .args([
            "check",
            "--max-tokens",
            "2000",
            "--request",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "counted in its 1 tool results: 2 tokens of text, 4 images of 4923 tokens, \
             1 PDFs of 464000 tokens"
        ),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("sent on uncounted, neither text nor media the cap prices: 1 blocks (video)"),
        "{stdout}"
    );
    // The first two images fit 2000 with room for the text; the last two and the PDF give way.
    assert!(
        stdout.contains("shot: 468925 tokens, cut to 1645"),
        "{stdout}"
    );
}

#[test]
fn check_shows_what_gives_way_to_the_requests_budget() {
    let dir = scratch("gateway", "check-budget");
    let listing: String = (0..2000)
        .map(|i| format!("src/module_{i}/mod.rs\n"))
        .collect();
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for at in 0..6 {
        let id = format!("toolu_{at}");
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Glob", "input": {}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": listing}]}));
    }
    let file = dir.join("request.json");
    std::fs::write(
        &file,
        json!({"model": "m", "messages": messages}).to_string(),
    )
    .unwrap();
    let check = |flags: &[&str]| {
        let output = binary(&dir)
            .args([
                "check",
                "--max-tokens",
                "3000",
                "--request",
                file.to_str().unwrap(),
            ])
            .args(flags)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let without = check(&[]);
    assert!(!without.contains("given way"), "{without}");
    let with = check(&["--max-tokens-per-request", "8000"]);
    assert!(
        with.contains("Glob: ") && with.contains("given way to the request's budget"),
        "{with}"
    );
    let line = with
        .lines()
        .find(|line| line.starts_with("tokens of the tool results: "))
        .expect("the tool results' tokens before and after");
    let after: usize = line
        .split(", ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(after <= 8000, "{line}");
    assert!(line.ends_with("(max_tokens_per_request 8000)"), "{line}");
    let refused = binary(&dir)
        .args([
            "check",
            "--max-tokens-per-request",
            "10",
            "--request",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_limit_the_upstream_reports_bounds_the_requests_after_it_and_is_logged_when_it_changes()
{
    let fake = Fake::start(None).await;
    let gateway = Gateway::start(
        "rate-limit",
        &fake.url,
        &["--max-tokens", "3000", "--rate-limit-share", "0.5"],
        &[("RUST_LOG", "info")],
    );
    let mut messages = vec![json!({"role": "user", "content": "list every file"})];
    for turn in 0..6 {
        let id = format!("toolu_{turn}");
        let listing: String = (0..1500)
            .map(|n| format!("src/turn_{turn}/file_{n}.rs\n"))
            .collect();
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Glob", "input": {}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": listing}]}));
    }
    let history = json!({"model": "m", "messages": messages}).to_string();
    let url = format!("{}/v1/messages", gateway.url);
    let sent = |limit: Option<&'static str>| {
        let headers: Vec<(&str, &str)> = limit
            .map(|limit| ("x-fake-input-limit", limit))
            .into_iter()
            .collect();
        let (url, history, fake) = (url.clone(), history.clone(), fake.clone());
        async move {
            post(&url, &headers, history).await;
            String::from_utf8(fake.seen().pop().unwrap().body.to_vec()).unwrap()
        }
    };
    // Before an answer reports the limit: each result within its tool's limit, no more.
    let before = sent(Some("20000")).await;
    assert!(count(&before) > 15_000, "{}", count(&before));
    // After it: the whole request under 20000, its results within half of it.
    let after = sent(Some("20000")).await;
    assert!(count(&after) <= 20_000, "{}", count(&after));
    let results: usize = serde_json::from_str::<Value>(&after).unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["content"][0]["content"].as_str())
        .map(count)
        .sum();
    assert!(results <= 10_000, "{results}");
    assert_eq!(sent(None).await, after, "the same bytes again");
    // A smaller limit reported: a smaller request.
    sent(Some("12000")).await;
    let smaller = sent(None).await;
    assert!(count(&smaller) <= 12_000, "{}", count(&smaller));
    std::thread::sleep(Duration::from_millis(300));
    let log = gateway.stderr();
    let learned: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("reports a per-minute input-token limit"))
        .collect();
    assert_eq!(learned.len(), 2, "once, and once when it changed:\n{log}");
    assert!(
        learned[0].contains("limit=20000") && learned[1].contains("limit=12000"),
        "{log}"
    );
}

#[cfg(unix)]
#[test]
fn sigterm_is_passed_on_to_the_host_and_its_exit_code_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("gateway", "host-sigterm");
    // A stand-in for Claude Code that exits 7 on SIGTERM, once it said it is ready.
    let claude = dir.join("claude");
    std::fs::write(
        &claude,
        "#!/usr/bin/env python3\n\
         import signal, sys, time\n\
         signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))\n\
         print('ready', flush=True)\n\
         time.sleep(60)\n",
    )
    .unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut gateway = binary(&dir)
        .args([
            "gateway",
            "--upstream",
            "http://127.0.0.1:9",
            "--",
            claude.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(gateway.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready, "ready\n");
    let pid = nix::unistd::Pid::from_raw(gateway.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let (sender, status) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(gateway.wait().unwrap()));
    let Ok(status) = status.recv_timeout(Duration::from_secs(20)) else {
        // Not left behind: the host dies with the gateway.
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        panic!("the gateway did not end once the host got SIGTERM");
    };
    assert_eq!(
        status.code(),
        Some(7),
        "the host's exit code, after it got SIGTERM"
    );
}
