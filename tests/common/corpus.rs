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
        (
            "a + 1,000,000 tabs + b",
            format!("a{}b", "\t".repeat(1_000_000)),
        ),
        (
            "a + 1,000,000 newlines + b",
            format!("a{}b", "\n".repeat(1_000_000)),
        ),
        (
            "a + 333,333 ideographic spaces + b",
            format!("a{}b", "\u{3000}".repeat(333_333)),
        ),
        ("1,000,000 a", "a".repeat(1_000_000)),
        ("1 MB of base64", base64(1_000_000)),
        ("1 MB single-line script", minified_script(1_000_000)),
    ]
}

/// Runs of white space longer than tiktoken-rs can pre-tokenize (999,999 characters and up),
/// by name: of one character and mixed, led by a line break, a tab or other white space, with
/// words on the same line and listings around them.
pub fn white_space_runs() -> Vec<(&'static str, String)> {
    let mut state = 7u64;
    let mixed: String = (0..1_500_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            [' ', '\t', '\u{3000}', ' ', ' '][(state % 5) as usize]
        })
        .collect();
    let listing = listing_of(5_000);
    vec![
        (
            "newline + 999,999 spaces",
            format!("\n{}", " ".repeat(999_999)),
        ),
        (
            "tab + 1,000,000 spaces + x",
            format!("\t{}x", " ".repeat(1_000_000)),
        ),
        (
            "listing + 1,500,000 spaces + listing",
            format!("{listing}{}{listing}", " ".repeat(1_500_000)),
        ),
        (
            "999,999 spaces + hello world x 90,000",
            " ".repeat(999_999) + &"hello world ".repeat(90_000),
        ),
        ("space tab x 1,000,000", " \t".repeat(1_000_000)),
        (
            "ideographic space, space x 500,000",
            "\u{3000} ".repeat(500_000),
        ),
        (
            "space tab x 1,000,000 + END + word x 1100",
            " \t".repeat(1_000_000) + "END" + &" word".repeat(1100),
        ),
        ("x + mixed 1,500,000 + y", format!("x{mixed}y")),
        (
            "a + 1,100,000 tabs + b + 900,000 spaces + c",
            format!("a{}b{}c", "\t".repeat(1_100_000), " ".repeat(900_000)),
        ),
        (
            "punctuation + CRLF + 2,100,000 spaces + word",
            format!("a;\r\n\r\n{}word", " ".repeat(2_100_000)),
        ),
        (
            "line + 1,000,000 spaces then no-break spaces + slash",
            format!("x\n{}{}/y", " ".repeat(1_000_000), "\u{a0}".repeat(1000)),
        ),
    ]
}

/// The kinds of listing a tool really returns, made from this machine's own files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealListing {
    /// `find /usr -type f`: absolute paths, as Glob tools and MCP servers return them.
    Absolute,
    /// The same with the leading `/` of each line removed.
    Relative,
    /// The same as `C:\Users\dev\...` paths with `\r\n` line ends.
    Windows,
    /// `grep -rnI return /usr/include`: `path:line:text`.
    Grep,
}

impl RealListing {
    /// Every kind, in the order of the benchmark table.
    pub const ALL: [RealListing; 4] = [
        RealListing::Absolute,
        RealListing::Relative,
        RealListing::Windows,
        RealListing::Grep,
    ];

    /// The name taken on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RealListing::Absolute => "absolute",
            RealListing::Relative => "relative",
            RealListing::Windows => "windows",
            RealListing::Grep => "grep",
        }
    }

    /// What the listing is, for a table.
    pub fn describe(self) -> &'static str {
        match self {
            RealListing::Absolute => "`find /usr -type f`",
            RealListing::Relative => "`find /usr -type f`, relative",
            RealListing::Windows => "`find /usr -type f` as `C:\\Users\\...` with CRLF",
            RealListing::Grep => "`grep -rnI return /usr/include`",
        }
    }

    /// About `bytes` bytes of this listing, in whole lines, the command's output repeated as
    /// often as needed; an error saying why when the command gives nothing here.
    pub fn of(self, bytes: usize) -> Result<String, String> {
        let (program, args): (&str, &[&str]) = match self {
            RealListing::Grep => ("grep", &["-rnI", "return", "/usr/include"]),
            _ => ("find", &["/usr", "-type", "f"]),
        };
        let output = std::process::Command::new(program)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        let source = String::from_utf8_lossy(&output.stdout);
        if source.trim().is_empty() {
            return Err(format!("`{program} {}` printed nothing", args.join(" ")));
        }
        let mut listing = String::with_capacity(bytes + 4096);
        for line in source.lines().cycle() {
            if listing.len() >= bytes {
                break;
            }
            match self {
                RealListing::Absolute | RealListing::Grep => listing.push_str(line),
                RealListing::Relative => listing.push_str(line.trim_start_matches('/')),
                RealListing::Windows => {
                    listing.push_str("C:\\Users\\dev");
                    listing.push_str(&line.replace('/', "\\"));
                    listing.push('\r');
                }
            }
            listing.push('\n');
        }
        Ok(listing)
    }
}

/// About `bytes` bytes of minified JSON on a single line: an array of records such as an API
/// or an MCP server returns.
pub fn minified_json(bytes: usize) -> String {
    let mut json = String::with_capacity(bytes + 200);
    json.push('[');
    let mut i = 0u64;
    while json.len() < bytes {
        let hash = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            r#"{{"id":{i},"path":"/srv/app/src/module_{}/file_{hash:06x}.rs","size":{},"modified":"2026-11-{:02}T10:{:02}:00Z","tags":["rust","src"]}}"#,
            i % 97,
            hash % 100_000,
            i % 28 + 1,
            i % 60
        ));
        i += 1;
    }
    json.push(']');
    json
}
