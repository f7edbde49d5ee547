//! What the `cap` and `count` filters hold: they read stdin in parts, so that 100 MB through
//! them peaks where 100 KB does, give or take the caches of pieces a thread grows once it
//! misses more pieces than they hold (16.25 MB at most, in the crate's `tokenizer::cache_growth`),
//! and a few MiB. Its own test binary, so that no other test's processes are among the children
//! whose peak RSS it reads.

#![cfg(target_os = "linux")]

mod support;

use std::io::Write;
use std::process::Stdio;

use nix::sys::resource::{getrusage, UsageWho};

/// A real listing's shape: this machine's `/usr` if `find` gives one, else generated paths.
fn listing() -> Vec<u8> {
    let found = std::process::Command::new("find")
        .args(["/usr", "-type", "f"])
        .output()
        .map(|out| out.stdout)
        .unwrap_or_default();
    if found.len() > 100_000 {
        return found;
    }
    (0..20_000)
        .flat_map(|i| format!("/usr/share/doc/package-{i}/changelog.Debian.gz\n").into_bytes())
        .collect()
}

/// The peak RSS of the filter `args` fed `bytes` of `listing` repeated, in KiB: the most any
/// child of this process has held, so the runs go from the smallest input to the largest.
fn peak_kib(args: &[&str], listing: &[u8], bytes: usize) -> i64 {
    let dir = support::scratch("filter_memory", args[0]);
    let mut filter = support::binary(&dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = filter.stdin.take().unwrap();
    let listing = listing.to_vec();
    let feeder = std::thread::spawn(move || {
        let mut left = bytes;
        while left > 0 {
            let part = &listing[..left.min(listing.len())];
            stdin.write_all(part).unwrap();
            left -= part.len();
        }
    });
    let out = filter.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    if args[0] == "cap" && bytes > 1_000_000 {
        assert!(
            text.ends_with(" tokens dropped, refine your query\n"),
            "{}",
            &text[text.len() - 200..]
        );
    }
    getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss()
}

#[test]
fn a_hundred_megabytes_through_a_filter_peak_where_a_hundred_kilobytes_do() {
    let listing = listing();
    for args in [&["count"][..], &["cap", "--keep", "head_tail"][..]] {
        let small = peak_kib(args, &listing, 100_000);
        let large = peak_kib(args, &listing, 100_000_000);
        eprintln!("{args:?}: {small} KiB for 100 KB, {large} KiB for 100 MB");
        assert!(
            large - small <= 20 * 1024,
            "{args:?}: {large} KiB against {small} KiB"
        );
    }
}
