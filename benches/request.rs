//! What capping a model API request costs, as ratios in one run: a turn that adds one 125 KB
//! result to a 1 MB history (the host sends its own uncut history again), against one count of
//! the new result, with the cache of cuts and without it, and with the cache under a request's
//! budget (`max_tokens_per_request`) and under a share of a per-minute limit; and the peak of what capping a 1 MB
//! request allocates, against the body.
//!
//! ```text
//! cargo bench --bench request
//! ```
//!
//! The results are this machine's `find /usr -type f` (and `grep -rnI return /usr/include`),
//! each 125 KB, as a Glob or Grep tool returns them. Each case runs in turns with the others,
//! and the medians are divided.

#[path = "../tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use corpus::RealListing;
use serde_json::json;
use tool_output_cap::wire::{Api, RequestCap};
use tool_output_cap::{Encoding, RateLimitShare, ToolOutputLimits};

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator as it came; the counters are only read.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const RESULT_BYTES: usize = 125_000;
const HISTORY_RESULTS: usize = 8; // 1 MB of results before the new one
const ROUNDS: usize = 15;

/// An Anthropic Messages request of `results`, each answering a `Glob` call.
fn request(results: &[String]) -> String {
    let mut messages = vec![json!({"role": "user", "content": "find the config"})];
    for (at, result) in results.iter().enumerate() {
        let id = format!("toolu_{at}");
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Glob", "input": {"pattern": "*"}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": result}]}));
    }
    json!({"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": messages}).to_string()
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let listing = |kind: RealListing, salt: usize| -> String {
        let text = kind
            .of(RESULT_BYTES * 4)
            .expect("a listing of this machine");
        // A different 125 KB of it for each result, so that no two are the same bytes.
        let start = text[salt * 997 % (text.len() - RESULT_BYTES - 1)..]
            .find('\n')
            .map_or(0, |at| {
                salt * 997 % (text.len() - RESULT_BYTES - 1) + at + 1
            });
        let end = start + text[start..start + RESULT_BYTES].rfind('\n').unwrap() + 1;
        text[start..end].to_owned()
    };
    let limits = ToolOutputLimits::default();
    let budgeted = limits.clone().with_max_tokens_per_request(24_000).unwrap();
    let shared = limits
        .clone()
        .with_rate_limit_share(RateLimitShare::new(0.5).unwrap());
    let tokenizer = Encoding::O200kBase.tokenizer();
    println!("| turn | one count of the new 125 KB result, ms | capping the request, cached, ms | cached / count | uncached, ms | uncached / count | cached, max_tokens_per_request 24000 / count | cached, rate_limit_share 0.5 of 60000 / count |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for kind in [RealListing::Absolute, RealListing::Grep] {
        let history: Vec<String> = (0..HISTORY_RESULTS).map(|i| listing(kind, i)).collect();
        let (mut count, mut cached, mut uncached) = (Vec::new(), Vec::new(), Vec::new());
        let (mut budget, mut share) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let new = listing(kind, 100 + round);
            let mut turn = history.clone();
            turn.push(new.clone());
            let (before, after) = (request(&history), request(&turn));

            let started = Instant::now();
            black_box(tokenizer.count(black_box(&new)));
            count.push(started.elapsed().as_secs_f64());

            // The cache holds the history's cuts from the turns before; the new result is new.
            let cap = RequestCap::new(limits.clone());
            cap.cap(Api::AnthropicMessages, &before).unwrap();
            let started = Instant::now();
            black_box(cap.cap(Api::AnthropicMessages, black_box(&after)).unwrap());
            cached.push(started.elapsed().as_secs_f64());

            let cap = RequestCap::new(limits.clone()).with_cache_bytes(0);
            let started = Instant::now();
            black_box(cap.cap(Api::AnthropicMessages, black_box(&after)).unwrap());
            uncached.push(started.elapsed().as_secs_f64());

            let cap = RequestCap::new(budgeted.clone());
            cap.cap(Api::AnthropicMessages, &before).unwrap();
            let started = Instant::now();
            black_box(cap.cap(Api::AnthropicMessages, black_box(&after)).unwrap());
            budget.push(started.elapsed().as_secs_f64());

            let cap = RequestCap::new(shared.clone());
            cap.cap_within_rate_limit(Api::AnthropicMessages, &before, 60_000)
                .unwrap();
            let started = Instant::now();
            black_box(
                cap.cap_within_rate_limit(Api::AnthropicMessages, black_box(&after), 60_000)
                    .unwrap(),
            );
            share.push(started.elapsed().as_secs_f64());
        }
        let (count, cached, uncached) = (median(count), median(cached), median(uncached));
        let (budget, share) = (median(budget), median(share));
        println!(
            "| {} results, 1 MB of history and a new one | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            kind.describe(),
            count * 1e3,
            cached * 1e3,
            cached / count,
            uncached * 1e3,
            uncached / count,
            budget / count,
            share / count,
        );
    }

    // A turn that adds nothing: every cut of the history is cached. What reading costs, against
    // parsing the body into a `serde_json::Value`.
    let history: Vec<String> = (0..HISTORY_RESULTS)
        .map(|i| listing(RealListing::Absolute, i))
        .collect();
    let body = request(&history);
    let cap = RequestCap::new(limits.clone());
    cap.cap(Api::AnthropicMessages, &body).unwrap();
    let (mut again, mut parse) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let started = Instant::now();
        black_box(cap.cap(Api::AnthropicMessages, black_box(&body)).unwrap());
        again.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        black_box(serde_json::from_str::<serde_json::Value>(black_box(&body)).unwrap());
        parse.push(started.elapsed().as_secs_f64());
    }
    let (again, parse) = (median(again), median(parse));
    println!(
        "
the same {:.2} MB request again, every cut cached: {:.2} ms; parsing it into a serde_json::Value: {:.2} ms; ratio {:.2}",
        body.len() as f64 / 1e6,
        again * 1e3,
        parse * 1e3,
        again / parse
    );

    // Memory: the peak of what is allocated while a 1 MB request is capped, over the body.
    let cap = RequestCap::new(limits).with_cache_bytes(0);
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    let capped = cap.cap(Api::AnthropicMessages, &body).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - live;
    drop(capped);
    println!(
        "\ncapping a {:.2} MB request (8 results of `find /usr -type f`, each cut): {:.2} MB allocated at the peak, {:.2} times the body",
        body.len() as f64 / 1e6,
        peak as f64 / 1e6,
        peak as f64 / body.len() as f64
    );
}
