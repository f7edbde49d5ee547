//! How many of a model's own tokens a text is, as a multiple of its `o200k_base` count: what a
//! limit in `o200k_base` tokens means for an open model.
//!
//! ```text
//! cargo run --release --features hf --example model_tokens -- NAME=tokenizer.json...
//! cargo run --release --features hf --example model_tokens -- \
//!     qwen3=.ci/parts/tokenizers/qwen3/tokenizer.json \
//!     deepseek_v3=.ci/parts/tokenizers/deepseek_v3/tokenizer.json
//! ```
//!
//! The texts are this machine's own: 125 KB of `find /usr -type f`, this crate's Rust source and
//! Cargo.lock, and Japanese prose (GnuPG's Japanese help, from Debian's gnupg-l10n).

#[path = "../tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::path::Path;

use tool_output_cap::{Encoding, HfTokenizer, Tokenizer};

/// This crate's `.rs` files under `dir`, in order.
fn rust_source(dir: &Path, source: &mut String) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_source(&path, source);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            source.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
}

fn main() {
    let models: Vec<(String, HfTokenizer)> = std::env::args()
        .skip(1)
        .map(|arg| {
            let (name, path) = arg.split_once('=').unwrap_or(("model", &arg));
            let tokenizer = HfTokenizer::from_file(path).unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1);
            });
            (name.to_owned(), tokenizer)
        })
        .collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut source = String::new();
    rust_source(&root.join("src"), &mut source);
    let mut texts = vec![
        (
            "125 KB `find /usr -type f` listing",
            corpus::RealListing::Absolute
                .of(125_000)
                .unwrap_or_else(|why| panic!("{why}")),
        ),
        ("this crate's Rust source", source),
        (
            "Cargo.lock",
            std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default(),
        ),
    ];
    match std::fs::read_to_string("/usr/share/gnupg/help.ja.txt") {
        Ok(japanese) => texts.push(("Japanese prose (GnuPG help)", japanese)),
        Err(e) => eprintln!("no Japanese prose: /usr/share/gnupg/help.ja.txt: {e}"),
    }
    print!("| input | o200k_base tokens | cl100k_base |");
    for (name, _) in &models {
        print!(" {name} |");
    }
    println!();
    println!("|---|---:|---:|{}", "---:|".repeat(models.len()));
    for (input, text) in &texts {
        let o200k = Encoding::O200kBase.tokenizer().count(text);
        let ratio = |tokens: usize| format!("{:.2}", tokens as f64 / o200k as f64);
        print!(
            "| {input} | {o200k} | {} |",
            ratio(Encoding::Cl100kBase.tokenizer().count(text))
        );
        for (_, model) in &models {
            print!(" {} |", ratio(model.count(text)));
        }
        println!();
    }
}
