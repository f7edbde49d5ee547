//! The cost of a cap against one count of the same text, in instructions, which a shared machine
//! does not disturb as it does time:
//!
//! ```text
//! cargo build --release [--features bpe-openai] --example instructions
//! valgrind --tool=callgrind --toggle-collect='*measured*' --callgrind-out-file=/dev/null \
//!     target/release/examples/instructions KIND BYTES count|cap
//! ```
//!
//! KIND is `generated`, `json` (minified, on one line) or, made from this machine's files,
//! `absolute`, `relative`, `windows` or `grep` (see `peak_memory`); callgrind's "Collected" line
//! is the instructions of the count or the cap alone. Counts and caps with the default engine, in
//! `o200k_base`, to 5000 tokens; with `--features hf`, a fourth argument names a tokenizer.json
//! to count with instead.

#[path = "../tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use tool_output_cap::{cap, Encoding, Tokenizer, ToolLimit};

#[inline(never)]
fn measured(text: &mut String, what: &str, tokenizer: &dyn Tokenizer) -> usize {
    match what {
        "count" => tokenizer.count(text),
        _ => cap(text, &ToolLimit::new(5000).unwrap(), tokenizer).map_or(0, |t| t.kept_tokens),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (kind, bytes, what, file) = match &args[..] {
        [kind, bytes, what] => (kind, bytes, what, None),
        [kind, bytes, what, file] if cfg!(feature = "hf") => (kind, bytes, what, Some(file)),
        _ => {
            eprintln!(
                "usage: instructions KIND BYTES count|cap [tokenizer.json, with --features hf]"
            );
            std::process::exit(2);
        }
    };
    let bytes: usize = bytes.parse().expect("BYTES is a number");
    let mut text = match kind.as_str() {
        "generated" => corpus::listing_of(bytes),
        "json" => corpus::minified_json(bytes),
        name => corpus::RealListing::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .expect("KIND is generated, json, absolute, relative, windows or grep")
            .of(bytes)
            .expect("the listing can be made here"),
    };
    // Loaded before the measured call.
    let loaded: Option<std::sync::Arc<dyn Tokenizer>> = match file {
        #[cfg(feature = "hf")]
        Some(file) => Some(tool_output_cap::HfTokenizer::shared(file).expect("a tokenizer.json")),
        _ => None,
    };
    let tokenizer = loaded.as_deref().unwrap_or(Encoding::O200kBase.tokenizer());
    tokenizer.count("warm");
    println!("{}", measured(&mut text, what, tokenizer));
}
