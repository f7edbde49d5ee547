//! A session's worth of real tool results, counted as a gateway counts an agent's requests: the
//! history is sent again at every turn, so turn `k` counts the first `k` results. The results are
//! this machine's own, taken in turn: a C header read whole, a listing of a folder of
//! `/usr/share`, a package's `copyright` file; each at most [`RESULT_MAX`] bytes.

use std::path::{Path, PathBuf};

/// The results of a session.
pub const RESULTS: usize = 48;

/// The most bytes of one result.
const RESULT_MAX: usize = 40_000;

/// The session's results, fewer where this machine lacks the files.
pub fn results() -> Vec<String> {
    let headers = sorted(Path::new("/usr/include"))
        .into_iter()
        .filter(|path| {
            path.extension().is_some_and(|e| e == "h")
                && path.metadata().is_ok_and(|m| m.len() >= 2_000)
        });
    let folders = sorted(Path::new("/usr/share"))
        .into_iter()
        .filter(|p| p.is_dir());
    let copyrights = sorted(Path::new("/usr/share/doc"))
        .into_iter()
        .map(|dir| dir.join("copyright"))
        .filter(|path| path.is_file());
    let reads = headers.filter_map(|path| std::fs::read_to_string(path).ok());
    let listings = folders.map(|folder| listing(&folder));
    let copyrights = copyrights.filter_map(|path| std::fs::read_to_string(path).ok());
    let kinds: [Box<dyn Iterator<Item = String>>; 3] =
        [Box::new(reads), Box::new(listings), Box::new(copyrights)];
    let mut kinds = kinds.map(|kind| kind.filter(|text| !text.trim().is_empty()));
    (0..RESULTS)
        .map_while(|i| kinds[i % 3].next())
        .map(|text| cut(text, RESULT_MAX))
        .collect()
}

/// The tokens of every turn of the session, by `count`; `None` if it cannot count a result.
pub fn every_turn(results: &[String], count: &dyn Fn(&str) -> Option<usize>) -> Option<usize> {
    let mut tokens = 0;
    for turn in 1..=results.len() {
        for result in &results[..turn] {
            tokens += count(result)?;
        }
    }
    Some(tokens)
}

/// The bytes every turn counts.
pub fn bytes(results: &[String]) -> usize {
    (1..=results.len())
        .map(|turn| results[..turn].iter().map(String::len).sum::<usize>())
        .sum()
}

/// The entries of `folder`, sorted; none if it cannot be read.
fn sorted(folder: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    paths.sort();
    paths
}

/// The files under `folder`, a path a line, as a Glob tool lists them, up to [`RESULT_MAX`] bytes.
fn listing(folder: &Path) -> String {
    let mut listing = String::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for path in sorted(&folder) {
            if listing.len() >= RESULT_MAX {
                return listing;
            }
            if path.is_dir() && !path.is_symlink() {
                folders.push(path);
            } else {
                listing.push_str(&path.to_string_lossy());
                listing.push('\n');
            }
        }
    }
    listing
}

/// `text` cut to at most `bytes`, on a character boundary.
fn cut(mut text: String, bytes: usize) -> String {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}
