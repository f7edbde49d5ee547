//! What the cap costs, as ratios: against one plain tiktoken-rs count, between the backends,
//! per MB of hostile input against a realistic listing, and on small outputs against the bare
//! service.
//!
//! ```text
//! cargo bench --features bpe-openai --bench cap
//! TOOL_OUTPUT_CAP_TOKENIZERS=.ci/parts/tokenizers cargo bench --features bpe-openai,hf --bench cap
//! ```
//!
//! The second adds the hf backend with Qwen 3's tokenizer.json, which `.ci/run` fetches.
//!
//! Criterion measures each large case, and the table at the end divides the medians. The small
//! outputs are timed in child processes, each in pairs of batches, the bare service and the layer
//! in turn, each way [`Driven`] names; a process's ratio is the median of its pairs', and the ratio
//! printed the median of the processes'. A filter (`-- "small output"`) leaves just them.

#[path = "../tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Mutex;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use corpus::RealListing;
use criterion::{BenchmarkGroup, Criterion};
use futures_util::FutureExt;
use serde_json::json;
use tool_output_cap::{
    cap, Encoding, Tokenizer, ToolCall, ToolLimit, ToolOutput, ToolOutputCapLayer, ToolOutputLimits,
};
use tower::{service_fn, Layer, Service};

const MAX_TOKENS: usize = 5000;

/// Seconds per iteration of every measured call, by case and then by what was measured; and
/// the small outputs' ratios, pair by pair.
static MEDIANS: Mutex<BTreeMap<(String, &str), Vec<f64>>> = Mutex::new(BTreeMap::new());

fn record(case: &str, what: &'static str, per_iteration: Duration) {
    push(case, what, per_iteration.as_secs_f64());
}

fn push(case: &str, what: &'static str, value: f64) {
    let mut medians = MEDIANS.lock().unwrap();
    medians
        .entry((case.to_owned(), what))
        .or_default()
        .push(value);
}

fn median(case: &str, what: &str) -> Option<f64> {
    let medians = MEDIANS.lock().unwrap();
    let mut times = medians.get(&(case.to_owned(), what))?.clone();
    times.sort_by(f64::total_cmp);
    Some(times[times.len() / 2])
}

/// Measures `routine` on `text` under `case / what`; `routine` gets its own copy of the text
/// (made outside the timing), as the cap does with an output it owns.
fn measure(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    case: &str,
    what: &'static str,
    text: &str,
    mut routine: impl FnMut(&mut String),
) {
    group.bench_function(what, |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let mut copy = text.to_owned();
                let start = Instant::now();
                routine(black_box(&mut copy));
                total += start.elapsed();
            }
            record(case, what, total / iterations as u32);
            total
        })
    });
}

/// The inputs, by name: the generated listing first (the base of the per-MB ratios), then this
/// machine's own listings at 125 KB and 50 MB, the hostile inputs and a 50 MB generated listing.
fn inputs() -> Vec<(String, String)> {
    let mut inputs = vec![
        ("125 KB listing".to_owned(), corpus::listing_of(125_000)),
        (
            "125 KB Japanese with code".to_owned(),
            corpus::japanese_with_code(125_000),
        ),
    ];
    for (size, bytes) in [("125 KB", 125_000), ("50 MB", 50_000_000)] {
        for kind in RealListing::ALL {
            match kind.of(bytes) {
                Ok(listing) => inputs.push((format!("{size} {}", kind.describe()), listing)),
                Err(why) => eprintln!("skipped the {size} {} listing: {why}", kind.name()),
            }
        }
    }
    inputs.extend(
        corpus::hostile()
            .into_iter()
            .map(|(case, text)| (case.to_owned(), text)),
    );
    inputs.push(("50 MB listing".to_owned(), corpus::listing_of(50_000_000)));
    inputs
}

fn bench_inputs(c: &mut Criterion, inputs: &[(String, String)]) {
    let tiktoken = Encoding::O200kBase.tiktoken();
    let plain = tiktoken_rs::o200k_base_singleton();
    let limit = ToolLimit::new(MAX_TOKENS).unwrap();
    #[cfg(feature = "bpe-openai")]
    let bpe = Encoding::O200kBase.bpe_openai();
    #[cfg(feature = "hf")]
    let hf = qwen3();
    for (case, text) in inputs {
        let case = case.as_str();
        let mut group = c.benchmark_group(case);
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_secs(1));
        // tiktoken-rs panics in encode_ordinary where encode returns an error.
        if plain.encode(text, &Default::default()).is_ok() {
            measure(
                &mut group,
                case,
                "tiktoken-rs count_ordinary",
                text,
                |text| {
                    black_box(plain.count_ordinary(text));
                },
            );
        }
        measure(
            &mut group,
            case,
            "count, tiktoken-rs backend",
            text,
            |text| {
                black_box(tiktoken.count(text));
            },
        );
        measure(&mut group, case, "cap, tiktoken-rs backend", text, |text| {
            black_box(cap(text, &limit, tiktoken));
        });
        #[cfg(feature = "bpe-openai")]
        {
            measure(
                &mut group,
                case,
                "count, bpe-openai backend",
                text,
                |text| {
                    black_box(bpe.count(text));
                },
            );
            measure(&mut group, case, "cap, bpe-openai backend", text, |text| {
                black_box(cap(text, &limit, bpe));
            });
        }
        // 50 MB takes the hf backend some 25 s a pass: those rows are left out.
        #[cfg(feature = "hf")]
        if let Some(hf) = hf.as_deref().filter(|_| text.len() <= 2_000_000) {
            measure(&mut group, case, "count, hf backend", text, |text| {
                black_box(hf.count(text));
            });
            measure(&mut group, case, "cap, hf backend", text, |text| {
                black_box(cap(text, &limit, hf));
            });
        }
        group.finish();
    }
}

/// Qwen 3's tokenizer, from the folder `TOOL_OUTPUT_CAP_TOKENIZERS` names (`.ci/run` fetches it).
#[cfg(feature = "hf")]
fn qwen3() -> Option<std::sync::Arc<tool_output_cap::HfTokenizer>> {
    let Some(dir) = std::env::var_os("TOOL_OUTPUT_CAP_TOKENIZERS") else {
        eprintln!("skipped the hf backend: TOOL_OUTPUT_CAP_TOKENIZERS is not set");
        return None;
    };
    let path = std::path::Path::new(&dir).join("qwen3/tokenizer.json");
    Some(tool_output_cap::HfTokenizer::shared(path).expect("Qwen 3's tokenizer.json loads"))
}

/// Small outputs: a Glob that found ten files, and a tool that returns one fixed line, which
/// shows the layer's own cost.
const SMALL_OUTPUTS: [&str; 2] = ["small output: ten paths", "small output: one fixed line"];

/// Pairs of batches each small output is timed in, and calls in a batch.
const PAIRS: usize = 201;
const CALLS: u32 = 5_000;

fn bench_small_output() {
    let ten_paths = service_fn(|_: ToolCall| {
        let listing: String = (0..10)
            .map(|i| format!("src/module_{i}/mod.rs\n"))
            .collect();
        std::future::ready(Ok::<_, Infallible>(ToolOutput::new(listing)))
    });
    let fixed_line =
        service_fn(|_: ToolCall| std::future::ready(Ok::<_, Infallible>(ToolOutput::new("ok"))));
    bench_small(SMALL_OUTPUTS[0], ten_paths);
    bench_small(SMALL_OUTPUTS[1], fixed_line);
}

/// How a batch drives its calls.
#[derive(Clone, Copy)]
enum Driven {
    /// Each call's future moved into `now_or_never` and polled once there.
    Moved,
    /// Each call's future pinned where it is and polled once, as an executor polls a task.
    PolledInPlace,
    /// Each call awaited in turn in one task, as an agent's loop awaits its tools.
    Awaited,
}

const DRIVEN: [Driven; 3] = [Driven::Moved, Driven::PolledInPlace, Driven::Awaited];

impl Driven {
    /// `small_output`'s case, driven this way.
    fn case(self, small_output: &str) -> String {
        let driven = match self {
            Driven::Moved => "moved into now_or_never",
            Driven::PolledInPlace => "polled in place",
            Driven::Awaited => "awaited",
        };
        format!("{small_output}, {driven}")
    }
}

/// Times the bare service and the layer over it in [`PAIRS`] pairs of batches, the first of a
/// pair alternating, each way of [`DRIVEN`]. A pair's two batches run a millisecond apart, on the
/// machine as it is then, so the median of the pairs' ratios holds still on a shared machine
/// where two medians taken seconds apart do not.
fn bench_small<S>(case: &'static str, tool: S)
where
    S: Service<ToolCall, Response = ToolOutput, Error = Infallible> + Clone,
{
    fn call() -> ToolCall {
        ToolCall::new("Glob", json!({ "pattern": "*" }))
    }
    fn batch<S: Service<ToolCall, Response = ToolOutput, Error = Infallible>>(
        service: &mut S,
        driven: Driven,
    ) -> Duration {
        let start = Instant::now();
        match driven {
            Driven::Moved => {
                for _ in 0..CALLS {
                    black_box(service.call(call()).now_or_never());
                }
            }
            Driven::PolledInPlace => {
                let mut cx = Context::from_waker(Waker::noop());
                for _ in 0..CALLS {
                    let future = pin!(service.call(call()));
                    let _ = black_box(future.poll(&mut cx));
                }
            }
            Driven::Awaited => async {
                for _ in 0..CALLS {
                    let Ok(output) = service.call(call()).await;
                    black_box(output);
                }
            }
            .now_or_never()
            .expect("every call is ready"),
        }
        start.elapsed() / CALLS
    }
    let mut bare = tool.clone();
    let mut capped = ToolOutputCapLayer::new(ToolOutputLimits::default()).layer(tool);
    for driven in DRIVEN {
        let case = driven.case(case);
        batch(&mut bare, driven);
        batch(&mut capped, driven);
        for pair in 0..PAIRS {
            let (bare_time, layered_time) = if pair % 2 == 0 {
                (batch(&mut bare, driven), batch(&mut capped, driven))
            } else {
                let layered = batch(&mut capped, driven);
                (batch(&mut bare, driven), layered)
            };
            record(&case, "bare service", bare_time);
            record(&case, "through the layer", layered_time);
            push(
                &case,
                "layer over bare",
                layered_time.as_secs_f64() / bare_time.as_secs_f64(),
            );
        }
    }
}

fn print_ratios(cases: &[(String, String)]) {
    let per_mb = |case: &str, bytes: usize, what: &str| {
        median(case, what).map(|time| time / bytes as f64 * 1e6)
    };
    let listing_per_mb = |what: &str| per_mb(&cases[0].0, cases[0].1.len(), what);
    let ms = |time: Option<f64>| time.map_or("-".to_owned(), |t| format!("{:.2}", t * 1e3));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", a / b),
        _ => "-".to_owned(),
    };
    println!();
    println!(
        "o200k_base, cap to {MAX_TOKENS} tokens, medians on {} cores:",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!("| input | tiktoken-rs count, ms | cap (tiktoken-rs), ms | cap / count | count (bpe-openai), ms | cap (bpe-openai), ms | cap / count (bpe-openai) | tiktoken-rs cap / bpe-openai cap | per MB vs listing, tiktoken-rs | per MB vs listing, bpe-openai |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (case, text) in cases {
        let plain = median(case, "tiktoken-rs count_ordinary");
        let cap_tiktoken = median(case, "cap, tiktoken-rs backend");
        let count_bpe = median(case, "count, bpe-openai backend");
        let cap_bpe = median(case, "cap, bpe-openai backend");
        println!(
            "| {case} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            if plain.is_some() {
                ms(plain)
            } else {
                "cannot encode".to_owned()
            },
            ms(cap_tiktoken),
            ratio(cap_tiktoken, plain),
            ms(count_bpe),
            ms(cap_bpe),
            ratio(cap_bpe, count_bpe),
            ratio(cap_tiktoken, cap_bpe),
            ratio(
                per_mb(case, text.len(), "cap, tiktoken-rs backend"),
                listing_per_mb("cap, tiktoken-rs backend")
            ),
            ratio(
                per_mb(case, text.len(), "cap, bpe-openai backend"),
                listing_per_mb("cap, bpe-openai backend")
            ),
        );
    }
    println!();
    println!("The hf backend with Qwen 3's tokenizer.json, cap to {MAX_TOKENS} of its tokens:");
    println!();
    println!("| input | count (hf), ms | cap (hf), ms | cap / count | hf count / tiktoken-rs count | per MB vs listing, hf |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (case, text) in cases {
        let count_hf = median(case, "count, hf backend");
        let cap_hf = median(case, "cap, hf backend");
        if count_hf.is_none() {
            continue;
        }
        println!(
            "| {case} | {} | {} | {} | {} | {} |",
            ms(count_hf),
            ms(cap_hf),
            ratio(cap_hf, count_hf),
            ratio(count_hf, median(case, "count, tiktoken-rs backend")),
            ratio(
                per_mb(case, text.len(), "cap, hf backend"),
                listing_per_mb("cap, hf backend")
            ),
        );
    }
    println!();
    for case in small_cases() {
        let ratios = MEDIANS.lock().unwrap()[&(case.clone(), "layer over bare")].clone();
        let each: Vec<String> = ratios.iter().map(|ratio| format!("{ratio:.2}")).collect();
        println!(
            "{case} (under the limit): bare service {:.0} ns, through the layer {:.0} ns; \
             median of {PROCESSES} processes' ratios {:.2} (each the median of {PAIRS} pairs: {})",
            median(&case, "bare service").unwrap_or_default() * 1e9,
            median(&case, "through the layer").unwrap_or_default() * 1e9,
            median(&case, "layer over bare").unwrap_or_default(),
            each.join(", ")
        );
    }
}

/// Each small output, each way of [`DRIVEN`].
fn small_cases() -> Vec<String> {
    SMALL_OUTPUTS
        .iter()
        .flat_map(|case| DRIVEN.map(|driven| driven.case(case)))
        .collect()
}

/// Processes the small outputs are timed in, each with its own pairs: a process's ratio moves
/// with where its code and memory land, by a few hundredths between two processes of one build,
/// so the ratio printed is the median of the processes'.
const PROCESSES: usize = 5;

/// Times the small outputs in [`PROCESSES`] child processes (`cap small-outputs`), one after
/// another, and records each one's medians.
fn small_outputs_in_processes() {
    let exe = std::env::current_exe().expect("the bench's own path");
    for _ in 0..PROCESSES {
        let output = std::process::Command::new(&exe)
            .arg("small-outputs")
            .output()
            .expect("the bench runs itself");
        assert!(output.status.success(), "the small outputs' process failed");
        let output = String::from_utf8(output.stdout).expect("the small outputs' figures are text");
        for line in output.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            let [case, bare, layered, ratio] = fields[..] else {
                panic!("a small output's line is case, bare, layered and ratio: {line:?}");
            };
            let number = |field: &str| field.parse::<f64>().expect("a number");
            push(case, "bare service", number(bare));
            push(case, "through the layer", number(layered));
            push(case, "layer over bare", number(ratio));
        }
    }
}

fn main() {
    // `cap small-outputs`: one process's small outputs, a line each, for the parent to gather.
    if std::env::args().any(|arg| arg == "small-outputs") {
        bench_small_output();
        for case in small_cases() {
            let median = |what| median(&case, what).unwrap_or_default();
            let (bare, layered) = (median("bare service"), median("through the layer"));
            println!("{case}\t{bare}\t{layered}\t{}", median("layer over bare"));
        }
        return;
    }
    small_outputs_in_processes();
    let mut c = Criterion::default().configure_from_args();
    let inputs = inputs();
    bench_inputs(&mut c, &inputs);
    c.final_summary();
    print_ratios(&inputs);
}
