//! Inputs that tool outputs are made of, realistic and hostile; shared by tests and benchmarks.

/// A Glob-like listing of about `bytes` bytes, one path a line.
pub fn listing_of(bytes: usize) -> String {
    let mut listing = String::with_capacity(bytes + 100);
    let mut i = 0u64;
    while listing.len() < bytes {
        let hash = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        listing.push_str(&match i % 4 {
            0 => format!("crates/core/src/module_{}/mod.rs\n", i % 97),
            1 => format!("target/debug/deps/libserde_derive-{hash:06x}.rlib\n"),
            2 => format!(
                "web/node_modules/@scope/package-{}/dist/index.min.js\n",
                i % 389
            ),
            _ => format!("docs/guide/chapter_{:02}/section_{i}.md\n", i % 31),
        });
        i += 1;
    }
    listing
}

/// About `bytes` bytes of Japanese prose mixed with code and emoji.
pub fn japanese_with_code(bytes: usize) -> String {
    let block = "## 設定ファイルの読み込み 🦀\n\
                 設定は `agent.toml` から読み込まれ、ツールごとの上限が適用されます。\n\
                 ```rust\nlet limits = manifest.worker.limits(); // 既定値は5000トークン\n```\n\
                 エラーが発生した場合は、行番号とキーを含むメッセージが表示されます。🎉\n";
    block.repeat(bytes / block.len() + 1)
}

/// `bytes` bytes of base64 from a fixed pseudo-random stream.
pub fn base64(bytes: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..bytes)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(ALPHABET[(state % 64) as usize])
        })
        .collect()
}

/// About `bytes` bytes of minified JavaScript on a single line.
pub fn minified_script(bytes: usize) -> String {
    let mut script = String::with_capacity(bytes + 100);
    let mut i = 0;
    while script.len() < bytes {
        script.push_str(&format!(
            "function f{i}(a,b){{return a.map(function(c){{return c*b+{i}}}).filter(Boolean)}};var v{i}=f{i}([1,2,3],{});",
            i % 7
        ));
        i += 1;
    }
    script
}

/// The hostile inputs, by name: long white-space runs, one letter repeated, base64, a
/// single-line script.
pub fn hostile() -> Vec<(&'static str, String)> {
    vec![
        ("2,000,000 spaces", " ".repeat(2_000_000)),
        ("1,000,000 tabs", "\t".repeat(1_000_000)),
        ("1,000,000 ideographic spaces", "\u{3000}".repeat(1_000_000)),
        (
            "x + 1,200,000 spaces + y",
            format!("x{}y", " ".repeat(1_200_000)),
        ),
        ("1,000,000 newlines", "\n".repeat(1_000_000)),
        ("1,000,000 a", "a".repeat(1_000_000)),
        ("1 MB of base64", base64(1_000_000)),
        ("1 MB single-line script", minified_script(1_000_000)),
    ]
}
