//! What the `tool-output-cap mcp` proxy costs, as ratios in one run, with `cat` as the server
//! (it sends each line back, so a response the host writes comes back as the server's):
//!
//! - throughput of relayed lines against the same lines through `cat` alone;
//! - the round trip of a small `tools/call` against the same through `cat` alone;
//! - what capping a result adds to relaying a notification of the same size, against one token
//!   count of what it caps, in rounds that take turns, since one round can take seconds: a
//!   2.7 MB `search_files` result of this machine's absolute paths (the text again as
//!   `structuredContent`, as the filesystem server sends it), a 200 MB text line of the same
//!   paths repeated, and a 56 MB line of records (the text, and each path again as an object).
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
    let search_files = json!({"content": [{"type": "text", "text": listing}], "structuredContent": {"content": listing}});
    let (capped, counted) = capping_cost(&search_files, &[&listing], 9);
    println!(
        "| 2.7 MB search_files result: what capping adds to relaying it, against one count of its text, ms | {:.0} | {:.0} | {:.2} |",
        counted * 1e3,
        capped * 1e3,
        capped / counted
    );
    drop(search_files);
    let paths: Vec<&str> = listing.lines().collect();
    let mut text = String::with_capacity(200_000_000 + listing.len());
    while text.len() < 200_000_000 {
        text.push_str(&listing);
    }
    let result = json!({"content": [{"type": "text", "text": text}]});
    let (capped, counted) = capping_cost(&result, &[&text], 3);
    println!(
        "| 200 MB text line: what capping adds to relaying it, against one count of its text, s | {counted:.2} | {capped:.2} | {:.2} |",
        capped / counted
    );
    drop((result, text));
    let files: Vec<serde_json::Value> = paths
        .iter()
        .cycle()
        .take(400_000)
        .enumerate()
        .map(|(size, path)| json!({"path": path, "size": size}))
        .collect();
    let text = files
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let structure = json!({"files": files});
    drop(files);
    let structure_json = structure.to_string();
    let records =
        json!({"content": [{"type": "text", "text": text}], "structuredContent": structure});
    let (capped, counted) = capping_cost(&records, &[&text, &structure_json], 3);
    println!(
        "| {:.0} MB line of records: what capping adds to relaying it, against one count of its text and one of its structure, s | {counted:.2} | {capped:.2} | {:.2} |",
        records.to_string().len() as f64 / 1e6,
        capped / counted
    );
}

/// The medians of `rounds` rounds that take turns, in seconds, of: what capping `result` through
/// the proxy adds to relaying a notification of the same size through it, and one count of each
/// of `texts`.
fn capping_cost(result: &serde_json::Value, texts: &[&str], rounds: usize) -> (f64, f64) {
    let request = json!({"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": {"name": "search_files"}});
    let response = json!({"jsonrpc": "2.0", "id": "big", "result": result});
    let capped_lines = format!("{request}\n{response}\n").into_bytes();
    drop(response);
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": result}});
    let relayed_lines = format!("{request}\n{notification}\n").into_bytes();
    drop(notification);
    let tokenizer = Encoding::O200kBase.tokenizer();
    let mut pipe = Pipe::start(true);
    let (mut capped, mut counted) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let took = pipe.round_trip(&capped_lines, 2).as_secs_f64();
        let relayed = pipe.round_trip(&relayed_lines, 2).as_secs_f64();
        capped.push(took - relayed);
        let start = Instant::now();
        for text in texts {
            std::hint::black_box(tokenizer.count(text));
        }
        counted.push(start.elapsed().as_secs_f64());
    }
    let median = |mut times: Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    (median(capped), median(counted))
}
