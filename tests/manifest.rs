//! The `[worker.tool_output]` section: what loads, and every bad value as a clear error.

use std::io::Write;

use tool_output_cap::{
    Encoding, ImageTokens, Keep, LimitError, Manifest, ManifestError, ToolLimit, ToolOutputLimits,
};

const TICKET: &str = r#"
[project]
name = "agent"

[model]
name = "gpt-4o"

[worker]
max_turns = 40

[worker.tool_output]
# Default limit for every tool. 5000 when omitted.
default_max_tokens = 5000

# Per-tool overrides. Keys are the registered tool names ("Glob", "Read", ...).
[worker.tool_output.per_tool]
Read = 8000   # Read deliberately returns large files, so a little looser
Grep = 3000
"#;

#[test]
fn the_manifest_of_the_ticket_loads_beside_other_tables() {
    let limits = Manifest::from_toml_str(TICKET).unwrap().worker.limits();
    assert_eq!(limits.max_tokens_for("Read"), 8000);
    assert_eq!(limits.max_tokens_for("Grep"), 3000);
    assert_eq!(limits.max_tokens_for("Glob"), 5000);
    assert_eq!(limits.encoding(), Encoding::O200kBase);
    let expected = ToolOutputLimits::new(5000)
        .and_then(|limits| limits.with_tool("Read", 8000))
        .and_then(|limits| limits.with_tool("Grep", 3000))
        .unwrap();
    assert_eq!(limits, expected);
}

#[test]
fn the_section_and_the_map_are_optional() {
    for text in [
        "",
        "[project]\nname = \"x\"\n",
        "[worker]\nmax_turns = 3\n",
        "[worker.tool_output]\n",
    ] {
        let manifest = Manifest::from_toml_str(text).unwrap();
        assert_eq!(
            manifest.worker.limits(),
            ToolOutputLimits::default(),
            "{text:?}"
        );
        assert_eq!(manifest.worker.limits().max_tokens_for("Glob"), 5000);
    }
    assert_eq!(
        Manifest::from_toml_str("").unwrap().worker.tool_output,
        None
    );
    let only_map = Manifest::from_toml_str("[worker.tool_output.per_tool]\nGrep = 3000\n").unwrap();
    assert_eq!(only_map.worker.limits().max_tokens_for("Grep"), 3000);
    assert_eq!(only_map.worker.limits().max_tokens_for("Glob"), 5000);
}

#[test]
fn the_encoding_is_chosen_by_name() {
    let manifest =
        Manifest::from_toml_str("[worker.tool_output]\nencoding = \"cl100k_base\"\n").unwrap();
    assert_eq!(manifest.worker.limits().encoding(), Encoding::Cl100kBase);
}

#[test]
fn the_smallest_limit_is_accepted() {
    let manifest =
        Manifest::from_toml_str("[worker.tool_output]\ndefault_max_tokens = 32\n").unwrap();
    assert_eq!(manifest.worker.limits().max_tokens_for("Glob"), 32);
}

fn error(text: &str) -> ManifestError {
    Manifest::from_toml_str(text).expect_err(text)
}

#[test]
fn bad_limits_name_the_key_and_the_line() {
    let cases = [
        ("default_max_tokens = \"lots\"", "string"),
        ("default_max_tokens = -5", "-5"),
        ("default_max_tokens = 12.5", "float"),
        ("default_max_tokens = 0", "at least 32"),
        ("default_max_tokens = 31", "at least 32"),
        ("default_max_tokens = true", "boolean"),
    ];
    for (line, what) in cases {
        let err = error(&format!("[worker]\n\n[worker.tool_output]\n{line}\n"));
        assert_eq!(
            err.key(),
            Some("worker.tool_output.default_max_tokens"),
            "{line}"
        );
        assert_eq!(err.line(), Some(4), "{line}");
        assert!(err.message().contains(what), "{line}: {err}");
        let shown = err.to_string();
        assert!(
            shown.contains("4:") && shown.contains("default_max_tokens"),
            "{shown}"
        );
    }
}

#[test]
fn bad_per_tool_limits_name_the_tool() {
    let err = error("[worker.tool_output.per_tool]\nRead = 8000\nGrep = 10\n");
    assert_eq!(err.key(), Some("worker.tool_output.per_tool.Grep"));
    assert_eq!(err.line(), Some(3));
    assert!(err.message().contains("at least 32"));

    let err = error("[worker.tool_output.per_tool]\nGrep = \"3000\"\n");
    assert_eq!(err.key(), Some("worker.tool_output.per_tool.Grep"));
    assert!(err.message().contains("string"));
}

#[test]
fn an_unknown_key_in_the_section_is_an_error() {
    let err = error("[worker.tool_output]\ndefault_max_token = 5000\n");
    assert_eq!(err.line(), Some(2));
    assert!(err.message().contains("default_max_token"), "{err}");
    assert!(
        err.message().contains("default_max_tokens"),
        "says what was meant: {err}"
    );
}

#[test]
fn an_unknown_encoding_is_an_error() {
    let err = error("[worker.tool_output]\nencoding = \"p50k_base\"\n");
    assert_eq!(err.key(), Some("worker.tool_output.encoding"));
    assert_eq!(err.line(), Some(2));
    assert!(err.message().contains("p50k_base"));
}

#[test]
fn a_value_of_the_wrong_type_names_its_key_in_the_users_words() {
    let cases = [
        (
            "worker = 5",
            1,
            "worker",
            "must be a table, found integer 5",
        ),
        (
            "worker = \"x\"",
            1,
            "worker",
            "must be a table, found string \"x\"",
        ),
        (
            "[worker]\ntool_output = 7",
            2,
            "worker.tool_output",
            "must be a table, found integer 7",
        ),
        (
            "[worker.tool_output]\nper_tool = 5",
            2,
            "worker.tool_output.per_tool",
            "must be a table, found integer 5",
        ),
        (
            "[worker.tool_output]\nper_tool = [1]",
            2,
            "worker.tool_output.per_tool",
            "must be a table, found array",
        ),
        (
            "[worker.tool_output.per_tool]\nRead = []",
            2,
            "worker.tool_output.per_tool.Read",
            "must be a whole number of tokens, found array []",
        ),
        (
            "[worker.tool_output]\ndefault_keep = 5",
            2,
            "worker.tool_output.default_keep",
            "must be \"head\", \"tail\" or \"head_tail\", found 5",
        ),
        (
            "[worker.tool_output.per_tool]\nBash = { keep = 5 }",
            2,
            "worker.tool_output.per_tool.Bash.keep",
            "must be \"head\", \"tail\" or \"head_tail\", found 5",
        ),
        (
            "[worker.tool_output.per_tool]\nGlob = { hint = 5 }",
            2,
            "worker.tool_output.per_tool.Glob.hint",
            "must be a string, found integer 5",
        ),
        (
            "[worker.tool_output]\nencoding = 5",
            2,
            "worker.tool_output.encoding",
            "must be \"o200k_base\" or \"cl100k_base\", found 5",
        ),
    ];
    for (text, line, key, message) in cases {
        let err = error(text);
        assert_eq!(
            (err.line(), err.key(), err.message()),
            (Some(line), Some(key), message),
            "{text:?}"
        );
        assert!(!err.to_string().contains("Raw"), "{err}");
    }
}

#[test]
fn malformed_toml_says_the_line() {
    let err = error("[worker.tool_output]\ndefault_max_tokens = \n");
    assert_eq!(err.line(), Some(2));
    let err = error("[worker\n");
    assert_eq!(err.line(), Some(1));
}

#[test]
fn a_missing_file_names_its_path() {
    let err = Manifest::from_path("/no/such/dir/agent.toml").unwrap_err();
    assert_eq!(
        err.path(),
        Some(std::path::Path::new("/no/such/dir/agent.toml"))
    );
    assert!(err.to_string().contains("/no/such/dir/agent.toml"), "{err}");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn a_bad_value_in_a_file_names_the_path_and_the_line() {
    let mut file = tempfile();
    writeln!(file.1, "[worker.tool_output]\ndefault_max_tokens = 0").unwrap();
    let err = Manifest::from_path(&file.0).unwrap_err();
    assert_eq!(err.path(), Some(file.0.as_path()));
    assert!(
        err.to_string()
            .starts_with(&format!("{}:2:", file.0.display())),
        "{err}"
    );

    std::fs::write(&file.0, TICKET).unwrap();
    let limits = Manifest::from_path(&file.0).unwrap().worker.limits();
    assert_eq!(limits.max_tokens_for("Read"), 8000);
    std::fs::remove_file(&file.0).unwrap();
}

fn tempfile() -> (std::path::PathBuf, std::fs::File) {
    let path = std::env::temp_dir().join(format!("tool-output-cap-{}.toml", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    (path, file)
}

#[test]
fn limits_built_in_code_are_checked_too() {
    let err = ToolOutputLimits::new(5).unwrap_err();
    assert_eq!(err, LimitError::TooFewTokens { found: 5 });
    assert_eq!(
        err.to_string(),
        "must be at least 32 tokens (room for the note), found 5"
    );
    let err = ToolOutputLimits::default()
        .with_tool("Grep", 0)
        .unwrap_err();
    assert_eq!(err, LimitError::TooFewTokens { found: 0 });
    let err = ToolOutputLimits::default()
        .with_max_tokens_per_turn(31)
        .unwrap_err();
    assert_eq!(err, LimitError::TooFewTokens { found: 31 });
}

const STRATEGIES: &str = r#"
[worker.tool_output]
default_max_tokens = 4000
default_keep = "tail"
max_tokens_per_turn = 20000
rate_limit_share = 0.5
image_tokens = "openai"

[worker.tool_output.per_tool]
Read = 8000
Bash = { max_tokens = 6000, keep = "head_tail" }
Glob = { keep = "head", hint = "use a narrower pattern, e.g. src/**/*.rs" }

[worker.tool_output.per_tool.Grep]
max_tokens = 3000
"#;

#[test]
fn strategies_hints_and_the_turn_budget_load() {
    let limits = Manifest::from_toml_str(STRATEGIES).unwrap().worker.limits();
    assert_eq!(limits.max_tokens_per_turn(), Some(20_000));
    assert_eq!(
        limits.rate_limit_share().map(|share| share.get()),
        Some(0.5)
    );
    assert_eq!(limits.image_tokens(), ImageTokens::OpenAiTiles);
    assert_eq!(
        limits.default_limit(),
        &ToolLimit::new(4000).unwrap().with_keep(Keep::Tail)
    );
    assert_eq!(
        limits.limit_for("Read"),
        &ToolLimit::new(8000).unwrap().with_keep(Keep::Tail)
    );
    assert_eq!(
        limits.limit_for("Bash"),
        &ToolLimit::new(6000).unwrap().with_keep(Keep::HeadTail)
    );
    assert_eq!(
        limits.limit_for("Glob"),
        &ToolLimit::new(4000)
            .unwrap()
            .with_hint("use a narrower pattern, e.g. src/**/*.rs")
            .unwrap()
    );
    assert_eq!(
        limits.limit_for("Grep"),
        &ToolLimit::new(3000).unwrap().with_keep(Keep::Tail)
    );
    assert_eq!(limits.limit_for("Other"), limits.default_limit());
}

#[test]
fn no_turn_budget_and_head_when_omitted() {
    let limits = Manifest::from_toml_str(TICKET).unwrap().worker.limits();
    assert_eq!(limits.max_tokens_per_turn(), None);
    assert_eq!(limits.rate_limit_share(), None);
    assert_eq!(limits.image_tokens(), ImageTokens::Anthropic);
    assert_eq!(limits.limit_for("Read").keep(), Keep::Head);
}

#[test]
fn bad_strategy_values_name_the_key_and_the_line() {
    let cases = [
        (
            "default_keep = \"middle\"",
            "worker.tool_output.default_keep",
            "middle",
        ),
        (
            "default_keep = 3",
            "worker.tool_output.default_keep",
            "head_tail",
        ),
        (
            "max_tokens_per_turn = 10",
            "worker.tool_output.max_tokens_per_turn",
            "at least 32",
        ),
        (
            "rate_limit_share = 1.5",
            "worker.tool_output.rate_limit_share",
            "over 0 and at most 1, found 1.5",
        ),
        (
            "image_tokens = \"claude\"",
            "worker.tool_output.image_tokens",
            r#"must be "anthropic", "openai" or "gemini", found "claude""#,
        ),
        (
            "rate_limit_share = \"half\"",
            "worker.tool_output.rate_limit_share",
            "string",
        ),
        (
            "max_tokens_per_turn = \"lots\"",
            "worker.tool_output.max_tokens_per_turn",
            "string",
        ),
        (
            "[worker.tool_output.per_tool]\nBash = { keep = \"end\" }",
            "worker.tool_output.per_tool.Bash.keep",
            "end",
        ),
        (
            "[worker.tool_output.per_tool]\nBash = { max_tokens = 8 }",
            "worker.tool_output.per_tool.Bash.max_tokens",
            "at least 32",
        ),
        (
            "[worker.tool_output.per_tool]\nBash = { max_tokens = 1.5 }",
            "worker.tool_output.per_tool.Bash.max_tokens",
            "float",
        ),
        (
            "[worker.tool_output.per_tool]\nBash = { hint = 3 }",
            "worker.tool_output.per_tool.Bash.hint",
            "integer",
        ),
        (
            "[worker.tool_output.per_tool]\nBash = { hint = \"two\\nlines\" }",
            "worker.tool_output.per_tool.Bash.hint",
            "one line",
        ),
        (
            "[worker.tool_output.per_tool]\nBash = { max_token = 6000 }",
            "worker.tool_output.per_tool.Bash.max_token",
            "max_tokens, keep or hint",
        ),
        (
            "[worker.tool_output.per_tool]\nBash = \"big\"",
            "worker.tool_output.per_tool.Bash",
            "string",
        ),
    ];
    for (lines, key, what) in cases {
        let text = format!("[worker.tool_output]\n{lines}\n");
        let err = error(&text);
        assert_eq!(err.key(), Some(key), "{lines}");
        assert_eq!(err.line(), Some(text.lines().count()), "{lines}: {err}");
        let last_line = text.lines().last().unwrap();
        let column = err.column().unwrap();
        assert!(
            column > 1 && column <= last_line.chars().count(),
            "{lines}: {err}"
        );
        assert!(err.to_string().contains(&format!(":{column}: ")), "{err}");
        assert!(err.message().contains(what), "{lines}: {err}");
    }
}

#[test]
fn a_hint_of_more_than_one_line_is_refused_in_code_too() {
    let limit = ToolLimit::new(100).unwrap();
    assert_eq!(limit.with_hint("a\nb"), Err(LimitError::HintNotOneLine));
    assert_eq!(
        ToolLimit::new(100).unwrap().with_hint("a\rb"),
        Err(LimitError::HintNotOneLine)
    );
}

#[cfg(not(feature = "hf"))]
#[test]
fn a_tokenizer_file_without_the_hf_feature_is_an_error_never_o200k() {
    let err = error("[worker.tool_output]\ntokenizer_file = \"models/qwen3/tokenizer.json\"\n");
    assert_eq!(err.key(), Some("worker.tool_output.tokenizer_file"));
    assert_eq!(err.line(), Some(2));
    assert!(
        err.message().contains("models/qwen3/tokenizer.json"),
        "{err}"
    );
    assert!(
        err.message().contains("build with the `hf` feature"),
        "{err}"
    );
}

#[test]
fn a_default_limit_set_over_the_manifest_leaves_the_tools_of_their_own() {
    let manifest = Manifest::from_toml_str(
        "[worker.tool_output]\ndefault_max_tokens = 4000\n[worker.tool_output.per_tool]\nGrep = 300\n",
    )
    .unwrap();
    let limits = manifest.worker.limits().with_default_limit(
        ToolLimit::new(100)
            .unwrap()
            .with_keep(Keep::Tail)
            .with_hint("narrow it")
            .unwrap(),
    );
    assert_eq!(limits.limit_for("Glob").max_tokens(), 100);
    assert_eq!(limits.limit_for("Glob").keep(), Keep::Tail);
    assert_eq!(limits.limit_for("Glob").hint(), Some("narrow it"));
    assert_eq!(limits.limit_for("Grep").max_tokens(), 300);

    assert_eq!(
        ToolLimit::new(31),
        Err(LimitError::TooFewTokens { found: 31 })
    );
    assert_eq!(
        ToolLimit::new(100).unwrap().with_hint("two\nlines"),
        Err(LimitError::HintNotOneLine)
    );
}

#[test]
fn limits_cap_a_text_with_its_tools_limit_and_an_error_keeping_its_end() {
    let limits = ToolOutputLimits::default().with_tool("Bash", 64).unwrap();
    let log: String = (0..500).map(|i| format!("line {i}\n")).collect::<String>() + "error: last";
    let mut output = log.clone();
    let truncation = limits.cap("Bash", &mut output).expect("over 64 tokens");
    assert_eq!((truncation.max_tokens, truncation.keep), (64, Keep::Head));
    assert!(output.starts_with("line 0\n"));
    let mut error = log.clone();
    let truncation = limits
        .cap_error("Bash", &mut error)
        .expect("over 64 tokens");
    assert_eq!(truncation.keep, Keep::Tail);
    assert!(error.contains("error: last\ntruncated: "), "{error}");
    let mut small = "ok".to_owned();
    assert_eq!(limits.cap("Glob", &mut small), None);
    assert_eq!(small, "ok");
}

#[test]
fn a_section_given_as_data_is_checked_as_the_manifests_is() {
    use serde_json::json;
    let cases = [
        ("default_max_tokens = 10", json!({"default_max_tokens": 10})),
        (
            "default_max_tokens = 1.5",
            json!({"default_max_tokens": 1.5}),
        ),
        (
            "default_keep = \"middle\"",
            json!({"default_keep": "middle"}),
        ),
        ("encoding = \"p50k_base\"", json!({"encoding": "p50k_base"})),
        (
            "default_max_token = 5000",
            json!({"default_max_token": 5000}),
        ),
        ("per_tool = 5", json!({"per_tool": 5})),
        (
            "[worker.tool_output.per_tool]\nGrep = \"500\"",
            json!({"per_tool": {"Grep": "500"}}),
        ),
        (
            "[worker.tool_output.per_tool]\nGrep = { hint = \"a\\nb\" }",
            json!({"per_tool": {"Grep": {"hint": "a\nb"}}}),
        ),
        (
            "[worker.tool_output.per_tool]\nGrep = { max_token = 500 }",
            json!({"per_tool": {"Grep": {"max_token": 500}}}),
        ),
    ];
    for (lines, data) in cases {
        let from_file = error(&format!("[worker.tool_output]\n{lines}\n"));
        let from_data = ToolOutputLimits::from_section(data).unwrap_err();
        assert_eq!(from_data.message(), from_file.message(), "{lines}");
        assert_eq!(
            from_file.key().map(str::to_owned),
            from_data
                .key()
                .map(|key| format!("worker.tool_output.{key}")),
            "{lines}"
        );
        assert_eq!((from_data.line(), from_data.column()), (None, None));
    }

    let from_file = Manifest::from_toml_str(STRATEGIES).unwrap().worker.limits();
    let data = json!({
        "default_max_tokens": 4000,
        "default_keep": "tail",
        "max_tokens_per_turn": 20000,
        "rate_limit_share": 0.5,
        "image_tokens": "openai",
        "per_tool": {
            "Read": 8000,
            "Bash": {"max_tokens": 6000, "keep": "head_tail"},
            "Glob": {"keep": "head", "hint": "use a narrower pattern, e.g. src/**/*.rs"},
            "Grep": {"max_tokens": 3000},
        },
    });
    let from_data = ToolOutputLimits::from_section(data).unwrap();
    assert_eq!(from_data, from_file);
    for tool in ["Glob", "Bash", "Read", "Grep", "Other"] {
        assert_eq!(
            from_data.limit_for(tool),
            from_file.limit_for(tool),
            "{tool}"
        );
    }
    assert_eq!(
        from_data.max_tokens_per_turn(),
        from_file.max_tokens_per_turn()
    );
}
