//! What the `tool-output-cap mcp` proxy costs, as ratios in one run, with `cat` as the server
//! (it sends each line back, so a response the host writes comes back as the server's):
//!
//! - throughput of relayed lines against the same lines through `cat` alone;
//! - the round trip of a small `tools/call` against the same through `cat` alone;
//! - capping a 2.7 MB `search_files`-like result of this machine's absolute paths against one
//!   token count of its text;
//! - what capping a 200 MB text line (the same paths, repeated) adds to relaying a notification
//!   of the same text, against one count of its text, in three rounds that take turns, since
//!   one round takes seconds.
//!
//! ```text
//! cargo bench -p tool-output-cap-cli --bench relay
//! ```

#[path = "../../tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::json;
use tool_output_cap::Encoding;

const PROXY: &str = env!("CARGO_BIN_EXE_tool-output-cap");

static MEDIANS: Mutex<BTreeMap<&str, Vec<f64>>> = Mutex::new(BTreeMap::new());

fn record(what: &'static str, per_iteration: Duration) {
    MEDIANS
        .lock()
        .unwrap()
        .entry(what)
        .or_default()
        .push(per_iteration.as_secs_f64());
}

fn median(what: &str) -> f64 {
    let mut times = MEDIANS.lock().unwrap()[what].clone();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// `cat`, alone or behind the proxy, with its ends.
struct Pipe {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Pipe {
    fn start(through_proxy: bool) -> Pipe {
        let mut command = if through_proxy {
            let mut command = Command::new(PROXY);
            command.args(["mcp", "--", "cat"]);
            command
        } else {
            Command::new("cat")
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Pipe {
            child,
            input,
            output,
        }
    }

    /// Sends `lines` and reads as many back; the time it took.
    fn round_trip(&mut self, lines: &[u8], count: usize) -> Duration {
        let start = Instant::now();
        std::thread::scope(|scope| {
            let input = &mut self.input;
            scope.spawn(move || {
                input.write_all(lines).unwrap();
                input.flush().unwrap();
            });
            let mut line = Vec::new();
            for _ in 0..count {
                line.clear();
                self.output.read_until(b'\n', &mut line).unwrap();
            }
        });
        start.elapsed()
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let progress: Vec<u8> = (0..20_000)
        .flat_map(|i| {
            let line = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": format!("call-{i}"), "progress": i, "total": 20_000,
                "message": "indexing /usr/share/doc/package/changelog.Debian.gz"}});
            format!("{line}\n").into_bytes()
        })
        .collect();
    let small_call = |id: usize| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "read_text_file", "arguments": {"path": "/etc/hostname"}}});
        let response = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "localhost"}], "structuredContent": {"content": "localhost"}}});
        format!("{request}\n{response}\n").into_bytes()
    };
    let listing = corpus::RealListing::Absolute
        .of(2_700_000)
        .expect("find /usr lists files here");
    let big_result = {
        let request = json!({"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": {"name": "search_files", "arguments": {"path": "/usr", "pattern": "**/*"}}});
        let response = json!({"jsonrpc": "2.0", "id": "big", "result": {"content": [{"type": "text", "text": listing}], "structuredContent": {"content": listing}}});
        format!("{request}\n{response}\n").into_bytes()
    };

    for (what, through_proxy) in [
        ("progress lines, cat alone", false),
        ("progress lines, through the proxy", true),
    ] {
        let mut pipe = Pipe::start(through_proxy);
        c.bench_function(what, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let took = pipe.round_trip(&progress, 20_000);
                    record(what, took);
                    total += took;
                }
                total
            })
        });
    }
    for (what, through_proxy) in [
        ("small tools/call round trip, cat alone", false),
        ("small tools/call round trip, through the proxy", true),
    ] {
        let mut pipe = Pipe::start(through_proxy);
        let mut id = 0;
        c.bench_function(what, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    id += 1;
                    let took = pipe.round_trip(&small_call(id), 2);
                    record(what, took);
                    total += took;
                }
                total
            })
        });
    }
    let mut group = c.benchmark_group("2.7 MB result");
    group.sample_size(10);
    let mut pipe = Pipe::start(true);
    group.bench_function("capped through the proxy", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let took = pipe.round_trip(&big_result, 2);
                record("2.7 MB result capped", took);
                total += took;
            }
            total
        })
    });
    let tokenizer = Encoding::O200kBase.tokenizer();
    group.bench_function("one count of its text", |b| {
        b.iter_custom(|iterations| {
            let start = Instant::now();
            for _ in 0..iterations {
                std::hint::black_box(tokenizer.count(&listing));
            }
            let took = start.elapsed() / iterations as u32;
            record("2.7 MB text counted", took);
            took * iterations as u32
        })
    });
    group.finish();
    drop(pipe);
    c.final_summary();

    let mb = progress.len() as f64 / 1e6;
    let (cat, proxy) = (
        median("progress lines, cat alone"),
        median("progress lines, through the proxy"),
    );
    println!();
    println!("| what | cat alone | through the proxy | ratio |");
    println!("| --- | ---: | ---: | ---: |");
    println!(
        "| 20,000 progress notifications ({mb:.1} MB), MB/s | {:.0} | {:.0} | {:.2} |",
        mb / cat,
        mb / proxy,
        cat / proxy
    );
    let (cat, proxy) = (
        median("small tools/call round trip, cat alone"),
        median("small tools/call round trip, through the proxy"),
    );
    println!(
        "| small tools/call round trip, µs | {:.0} | {:.0} | {:.2} |",
        cat * 1e6,
        proxy * 1e6,
        proxy / cat
    );
    let (capped, counted) = (
        median("2.7 MB result capped"),
        median("2.7 MB text counted"),
    );
    println!(
        "| 2.7 MB search_files result: capped through the proxy, against one count of its text, ms | {:.0} | {:.0} | {:.2} |",
        counted * 1e3,
        capped * 1e3,
        capped / counted
    );

    let (capped, relayed, counted) = huge_line(&listing);
    println!(
        "| 200 MB text line: what capping adds to relaying it, against one count of its text, s | {counted:.2} | {:.2} | {:.2} |",
        capped - relayed,
        (capped - relayed) / counted
    );
}

/// The medians of three rounds, in seconds, of: a 200 MB text result capped through the proxy,
/// a notification of the same text relayed through it, and one count of the text.
fn huge_line(listing: &str) -> (f64, f64, f64) {
    let mut text = String::with_capacity(200_000_000 + listing.len());
    while text.len() < 200_000_000 {
        text.push_str(listing);
    }
    let request = json!({"jsonrpc": "2.0", "id": "huge", "method": "tools/call", "params": {"name": "search_files"}});
    let response = json!({"jsonrpc": "2.0", "id": "huge", "result": {"content": [{"type": "text", "text": text}]}});
    let capped_lines = format!("{request}\n{response}\n").into_bytes();
    drop(response);
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": text}});
    let relayed_lines = format!("{request}\n{notification}\n").into_bytes();
    drop(notification);
    let tokenizer = Encoding::O200kBase.tokenizer();
    let mut pipe = Pipe::start(true);
    let (mut capped, mut relayed, mut counted) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        capped.push(pipe.round_trip(&capped_lines, 2).as_secs_f64());
        relayed.push(pipe.round_trip(&relayed_lines, 2).as_secs_f64());
        let start = Instant::now();
        std::hint::black_box(tokenizer.count(&text));
        counted.push(start.elapsed().as_secs_f64());
    }
    let median = |mut times: Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[1]
    };
    (median(capped), median(relayed), median(counted))
}
