//! The hf backend holds one window's tokens of a long line, not all of them (`--features hf`):
//! measured with a global allocator of this test binary that keeps the peak of live bytes.

#![cfg(feature = "hf")]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{corpus, small_tokenizer};
use tool_output_cap::{cap, HfTokenizer, Tokenizer, ToolLimit};

struct Peak;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(live, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Peak = Peak;

/// The most bytes `f` held at once, above what was live before it, in MiB.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let before = LIVE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let value = f();
    let peak = PEAK.load(Ordering::SeqCst) - before;
    (value, peak as f64 / (1024.0 * 1024.0))
}

#[test]
fn a_long_line_is_encoded_in_windows() {
    let dir =
        std::env::temp_dir().join(format!("tool-output-cap-hf-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = small_tokenizer(&dir, false);
    let tokenizer = HfTokenizer::from_file(&file).unwrap();
    let mut raw = tokenizers::Tokenizer::from_file(&file).unwrap();
    raw.set_encode_special_tokens(true);
    let line = corpus::minified_json(1_000_000);
    assert!(!line.contains('\n'));

    let (whole, whole_mib) = peak_of(|| raw.encode(line.as_str(), false).unwrap().len());
    let (tokens, count_mib) = peak_of(|| tokenizer.count(&line));
    let mut capped = line.clone();
    let (truncation, cap_mib) =
        peak_of(|| cap(&mut capped, &ToolLimit::new(5000).unwrap(), &tokenizer));

    assert_eq!(tokens, whole);
    assert_eq!(truncation.unwrap().original_tokens, whole);
    // Measured: 150 MiB for the whole line, 12 to 14 MiB for one window's encoding at a time.
    assert!(
        whole_mib > 100.0,
        "the whole line's encoding held {whole_mib:.1} MiB"
    );
    for (what, mib) in [("counting", count_mib), ("capping", cap_mib)] {
        assert!(
            mib < whole_mib / 5.0,
            "{what} held {mib:.1} MiB, against {whole_mib:.1} MiB to encode the line whole"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
