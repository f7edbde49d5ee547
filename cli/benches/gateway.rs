//! What the gateway costs, in one run, against a fake model API on 127.0.0.1 that answers each
//! request with a stream whose first event it sends at once:
//!
//! - the time to the first streamed byte through the gateway, less the same going direct, for a
//!   small request and for a 1 MB history whose results the gateway capped on an earlier turn;
//! - the gateway's peak RSS (VmHWM) while it caps 1 MB requests, one at a time and 8 at once,
//!   over what it held before, against the bodies in flight;
//! - load: 200 clients sending 5,000 requests, one in ten a 1 MB history of its own: the errors,
//!   the requests a second, and the peak RSS over what it held before, against the most bytes of
//!   bodies in flight at once, with the cut cache's part of it (from the gateway's metrics).
//!
//! ```text
//! cargo bench -p tool-output-cap-cli --bench gateway
//! cargo bench -p tool-output-cap-cli --bench gateway -- load   # the load alone
//! ```

#[path = "../../tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::json;

const GATEWAY: &str = env!("CARGO_BIN_EXE_tool-output-cap");
const ROUNDS: usize = 200;

/// Starts the fake model API: every request gets a stream of one event, at once.
async fn fake() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    |request: Request<hyper::body::Incoming>| async move {
                        request.into_body().collect().await?;
                        Ok::<_, hyper::Error>(
                            hyper::Response::builder()
                                .header("content-type", "text/event-stream")
                                .body(Full::new(Bytes::from_static(
                                    b"event: message_start\ndata: {}\n\n",
                                )))
                                .unwrap(),
                        )
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    url
}

/// The gateway in front of `upstream`, and its URL.
fn gateway(upstream: &str, flags: &[&str]) -> (Child, String) {
    let mut child = Command::new(GATEWAY)
        .args(["gateway", "--upstream", upstream, "--listen", "127.0.0.1:0"])
        .args(flags)
        .env_remove("TOOL_OUTPUT_CAP_MANIFEST")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_owned();
    (child, url)
}

/// A Messages request with a 1 MB history of `find /usr -type f` results, or none.
fn request(history: bool, salt: usize) -> Bytes {
    let listing = corpus::RealListing::Absolute.of(1_000_000).unwrap();
    request_of(&listing, history, salt)
}

/// A Messages request with a history of `listing` in results of 125 KB, or none; `salt` makes
/// its results its own.
fn request_of(listing: &str, history: bool, salt: usize) -> Bytes {
    let mut messages = vec![json!({"role": "user", "content": format!("turn {salt}")})];
    if history {
        for (at, part) in listing.as_bytes().chunks(125_000).enumerate() {
            let id = format!("toolu_{at}");
            let text = format!("{salt}\n{}", String::from_utf8_lossy(part));
            messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Glob", "input": {}}]}));
            messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]}));
        }
    }
    Bytes::from(json!({"model": "m", "stream": true, "messages": messages}).to_string())
}

type Http = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// The time from sending `body` to `url` to the answer's first byte.
async fn first_byte(client: &Http, url: &str, body: Bytes) -> Duration {
    let started = Instant::now();
    let answer = client
        .request(
            Request::post(format!("{url}/v1/messages"))
                .body(Full::new(body))
                .unwrap(),
        )
        .await
        .unwrap();
    let mut body = answer.into_body();
    body.frame().await.unwrap().unwrap();
    let elapsed = started.elapsed();
    while body.frame().await.is_some() {}
    elapsed
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

/// The peak resident memory of process `pid` so far, in bytes.
fn peak_rss(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kb| {
            kb.trim()
                .trim_end_matches(" kB")
                .trim()
                .parse::<usize>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let upstream = fake().await;
        // `cargo bench --bench gateway -- load`: the load alone.
        if std::env::args().any(|arg| arg == "load") {
            return load(&upstream).await;
        }
        let (mut child, url) = gateway(&upstream, &[]);
        let client: Http = Client::builder(TokioExecutor::new()).build_http();
        println!("| request | direct, ms | through the gateway, ms | added, ms |");
        println!("| --- | ---: | ---: | ---: |");
        for (name, history) in [("small, no tool results", false), ("1 MB history, capped on an earlier turn", true)] {
            let body = request(history, 0);
            // The turn before: its cuts are made and kept.
            first_byte(&client, &url, body.clone()).await;
            let (mut direct, mut through) = (Vec::new(), Vec::new());
            for _ in 0..ROUNDS {
                direct.push(first_byte(&client, &upstream, body.clone()).await);
                through.push(first_byte(&client, &url, body.clone()).await);
            }
            let (direct, through) = (median(direct), median(through));
            println!("| {name} | {direct:.3} | {through:.3} | {:.3} |", through - direct);
        }

        let _ = child.kill();
        let _ = child.wait();

        // Memory: a gateway of its own for each case, its peak after a small request with a cut
        // (which loads the tokenizer), then after the 1 MB requests, each with results of its own.
        for (name, at_once) in [("one at a time", 1usize), ("8 at once", 8)] {
            let (mut child, url) = gateway(&upstream, &[]);
            let small: String = (0..3000).map(|i| format!("/usr/lib/file_{i}\n")).collect();
            let warm = json!({"model": "m", "messages": [
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Glob", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": small}]}]});
            first_byte(&client, &url, Bytes::from(warm.to_string())).await;
            let before = peak_rss(child.id());
            if before == 0 {
                println!("\nthe peak RSS is read from /proc, which this system does not have: skipped");
                break;
            }
            let bodies: Vec<Bytes> = (1..=at_once * 3).map(|salt| request(true, salt + at_once * 100)).collect();
            let size = bodies[0].len();
            for round in bodies.chunks(at_once) {
                let sends = round.iter().cloned().map(|body| {
                    let (client, url) = (client.clone(), url.clone());
                    tokio::spawn(async move { first_byte(&client, &url, body).await })
                });
                for send in sends.collect::<Vec<_>>() {
                    send.await.unwrap();
                }
            }
            let grown = peak_rss(child.id()).saturating_sub(before);
            println!(
                "\n{name}: {:.2} MB requests, each cut anew: the peak RSS grew by {:.2} MB, {:.2} times the bodies in flight",
                size as f64 / 1e6,
                grown as f64 / 1e6,
                grown as f64 / (size * at_once) as f64
            );
            let _ = child.kill();
            let _ = child.wait();
        }
        load(&upstream).await;
    });
}

/// 200 clients send 5,000 requests through a gateway of its own, one in ten a 1 MB history of
/// its own: the errors, the rate, and the peak RSS against the most bytes of bodies in flight.
async fn load(upstream: &str) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    const CLIENTS: usize = 200;
    const EACH: usize = 25;
    // Its metrics, for the bytes its cut cache holds at the end.
    let metrics = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let (mut child, url) = gateway(upstream, &["--metrics", &metrics]);
    let client: Http = Client::builder(TokioExecutor::new()).build_http();
    let listing: Arc<str> = corpus::RealListing::Absolute.of(1_000_000).unwrap().into();
    // The tokenizer loaded, as in a gateway that has served.
    first_byte(&client, &url, request_of(&listing, true, 0)).await;
    let before = peak_rss(child.id());
    let (errors, in_flight, most) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (client, url, listing) = (client.clone(), url.clone(), Arc::clone(&listing));
            let (errors, in_flight, most) = (
                Arc::clone(&errors),
                Arc::clone(&in_flight),
                Arc::clone(&most),
            );
            tokio::spawn(async move {
                for r in 0..EACH {
                    let n = c * EACH + r;
                    let body = request_of(&listing, n.is_multiple_of(10), n + 1);
                    let size = body.len();
                    most.fetch_max(
                        in_flight.fetch_add(size, Ordering::Relaxed) + size,
                        Ordering::Relaxed,
                    );
                    let request = Request::post(format!("{url}/v1/messages"))
                        .body(Full::new(body))
                        .unwrap();
                    let ok = match client.request(request).await {
                        Ok(answer) => {
                            answer.status().is_success()
                                && answer.into_body().collect().await.is_ok()
                        }
                        Err(_) => false,
                    };
                    in_flight.fetch_sub(size, Ordering::Relaxed);
                    if !ok {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for client in clients {
        client.await.unwrap();
    }
    let took = started.elapsed().as_secs_f64();
    let grown = peak_rss(child.id()).saturating_sub(before);
    let most = most.load(Ordering::Relaxed);
    let metrics = Client::builder(TokioExecutor::new())
        .build_http::<Full<Bytes>>()
        .get(format!("http://{metrics}/metrics").parse().unwrap())
        .await
        .unwrap();
    let metrics = metrics.into_body().collect().await.unwrap().to_bytes();
    let cached: usize = String::from_utf8_lossy(&metrics)
        .lines()
        .find_map(|line| line.strip_prefix("tool_output_cap_gateway_cache_bytes "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap();
    println!(
        "
load: {CLIENTS} clients, {} requests (one in ten a 1 MB history of its own) in {took:.1} s ({:.0} a second), {} errors; \
         the peak RSS grew by {:.1} MB, {:.2} times the most bodies in flight at once ({:.1} MB): \
         the cut cache's {:.1} MB (at most --cache-bytes), and {:.2} times the bodies besides",
        CLIENTS * EACH,
        (CLIENTS * EACH) as f64 / took,
        errors.load(Ordering::Relaxed),
        grown as f64 / 1e6,
        grown as f64 / most as f64,
        most as f64 / 1e6,
        cached as f64 / 1e6,
        grown.saturating_sub(cached) as f64 / most as f64,
    );
    let _ = child.kill();
    let _ = child.wait();
}
