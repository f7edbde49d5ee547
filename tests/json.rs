//! The JSON cap through the public API: valid JSON of the same shape within the limit, and a
//! clear error for what it cannot cut.

use serde_json::{json, Value};
use tool_output_cap::json::{cap_json, CappedJson, NotJson};
use tool_output_cap::{Encoding, Keep, Outcome, ToolLimit, ToolOutputLimits};

fn listing(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("/usr/share/doc/package-{i}/copyright"))
        .collect()
}

#[test]
fn a_long_string_is_cut_and_the_rest_stays_byte_for_byte() {
    let tokenizer = Encoding::O200kBase.tokenizer();
    let text = listing(3000).join("\n");
    let value = json!({"pattern": "*", "content": text, "count": 3000});
    let limit = ToolLimit::new(300).unwrap();
    let Some(CappedJson::Json(capped, truncation)) =
        cap_json(&value.to_string(), &limit, tokenizer).unwrap()
    else {
        panic!("the string is cut, the shape kept")
    };
    assert!(tokenizer.count(&capped) <= 300);
    let capped: Value = serde_json::from_str(&capped).unwrap();
    assert_eq!(
        (&capped["pattern"], &capped["count"]),
        (&json!("*"), &json!(3000))
    );
    let content = capped["content"].as_str().unwrap();
    let (kept, note) = content.rsplit_once('\n').unwrap();
    assert!(text.starts_with(kept));
    assert_eq!(
        note,
        format!(
            "truncated: {} tokens dropped, refine your query",
            truncation.dropped_tokens
        )
    );
}

#[test]
fn an_error_keeps_the_end_of_its_lists() {
    let tokenizer = Encoding::O200kBase.tokenizer();
    let files = listing(3000);
    let value = json!({ "files": files }).to_string();
    let limits = ToolOutputLimits::new(5000)
        .unwrap()
        .with_tool("Find", 400)
        .unwrap();
    let Some(CappedJson::Json(capped, truncation)) =
        limits.cap_json("Find", &value, Outcome::Error).unwrap()
    else {
        panic!("the list is shortened, the shape kept")
    };
    assert_eq!((truncation.keep, truncation.max_tokens), (Keep::Tail, 400));
    assert!(tokenizer.count(&capped) <= 400);
    let kept: Value = serde_json::from_str(&capped).unwrap();
    let kept = kept["files"].as_array().unwrap();
    let last = kept.last().unwrap().as_str().unwrap();
    assert!(last.starts_with(&files[files.len() - 1]), "{last}");
    for (kept, file) in kept[1..kept.len() - 1]
        .iter()
        .rev()
        .zip(files.iter().rev().skip(1))
    {
        assert_eq!(kept, file);
    }
}

#[test]
fn what_fits_or_cannot_be_cut_says_so() {
    let tokenizer = Encoding::O200kBase.tokenizer();
    let limit = ToolLimit::new(100).unwrap();
    assert!(cap_json(r#"{"a": 1}"#, &limit, tokenizer)
        .unwrap()
        .is_none());
    // Not JSON, but within the limit as text: nothing to cut.
    assert!(cap_json(r#"{"a": "#, &limit, tokenizer).unwrap().is_none());

    let broken = format!("{{\"files\": [\"{}", listing(100).join("\", \""));
    match cap_json(&broken, &limit, tokenizer) {
        Err(NotJson { tokens, error }) => {
            assert_eq!(tokens, tokenizer.count(&broken));
            assert!(
                error.to_string().starts_with("EOF while parsing"),
                "{error}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// The three shapes no cut keeps: an object of many short fields, small objects nested with
/// no list, and a list of one item that is such an object.
fn no_fit_shapes() -> Vec<(&'static str, String)> {
    let fields: serde_json::Map<String, Value> =
        (0..500).map(|i| (format!("field_{i}"), json!(i))).collect();
    let fields = Value::Object(fields);
    let mut nested = json!({"leaf": 0});
    for depth in 1..120 {
        nested = json!({ "depth": depth, "flag": true, "inner": nested });
    }
    vec![
        ("500 short fields", fields.to_string()),
        ("nested small objects", nested.to_string()),
        ("a list of one huge item", json!([fields]).to_string()),
    ]
}

#[test]
fn a_structure_no_cut_fits_is_capped_as_text_within_the_limit() {
    let tokenizer = Encoding::O200kBase.tokenizer();
    for keep in [Keep::Head, Keep::Tail] {
        let limit = ToolLimit::new(100).unwrap().with_keep(keep);
        for (shape, json) in no_fit_shapes() {
            let tokens = tokenizer.count(&json);
            assert!(tokens > 100, "{shape}");
            let capped = cap_json(&json, &limit, tokenizer).unwrap().unwrap();
            let CappedJson::Text(text, truncation) = &capped else {
                panic!("{shape}: {capped:?}");
            };
            assert!(!capped.is_json());
            assert!(tokenizer.count(text) <= 100, "{shape}");
            assert_eq!(truncation.original_tokens, tokens, "{shape}");
            let (kept, note) = text.rsplit_once('\n').unwrap();
            assert_eq!(
                note,
                format!(
                    "truncated: {} tokens dropped, refine your query",
                    truncation.dropped_tokens
                )
            );
            match keep {
                Keep::Tail => assert!(json.ends_with(kept), "{shape}"),
                _ => assert!(json.starts_with(kept), "{shape}"),
            }
            assert!(
                serde_json::from_str::<Value>(text).is_err(),
                "{shape}: not JSON"
            );
        }
    }
}

#[test]
fn text_that_is_not_json_is_an_error_naming_its_tokens() {
    let tokenizer = Encoding::O200kBase.tokenizer();
    let broken = format!("[\"{}", listing(100).join("\", \""));
    let error: NotJson = cap_json(&broken, &ToolLimit::new(100).unwrap(), tokenizer).unwrap_err();
    assert_eq!(error.tokens, tokenizer.count(&broken));
    assert!(
        error.to_string().contains("not JSON: EOF while parsing"),
        "{error}"
    );
}
