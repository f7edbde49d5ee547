//! The addon of the `tool-output-cap` npm package: the crate's cap for Node, each function with
//! a variant that runs on the libuv pool. The package's `index.js` wraps it; its types are
//! `index.d.ts`.

// Its functions are registered with Node, which calls them; a test build of it has no Node.
#![cfg_attr(test, allow(dead_code))]

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_output_cap::{Encoding, Keep, ToolLimit, ToolOutputLimits};

mod capped;
mod command;
mod errors;
mod limits;
mod request;
mod task;

use capped::Capped;
use errors::refused;
use task::Work;

/// The options of `count`.
#[napi(object)]
pub struct CountOptions {
    pub encoding: Option<String>,
}

/// The options of `cap`.
#[napi(object)]
pub struct CapOptions {
    pub max_tokens: Option<i64>,
    pub keep: Option<String>,
    pub hint: Option<String>,
    pub encoding: Option<String>,
}

/// The tokens of `text` in `encoding` (`o200k_base` unless given), read as ordinary text.
#[napi]
pub fn count(text: String, options: Option<CountOptions>) -> Result<u32> {
    let tokenizer = encoding(options.and_then(|o| o.encoding))?.tokenizer();
    Ok(tokens(tokenizer.count(&text)))
}

/// [`count`] on the libuv pool.
#[napi(ts_return_type = "Promise<number>")]
pub fn count_async(text: String, options: Option<CountOptions>) -> Result<AsyncTask<Work<u32>>> {
    let tokenizer = encoding(options.and_then(|o| o.encoding))?.tokenizer();
    Ok(Work::spawn(move || Ok(tokens(tokenizer.count(&text)))))
}

/// `text` within `maxTokens` (5000 unless given), the note included, keeping `keep`.
#[napi]
pub fn cap(text: String, options: Option<CapOptions>) -> Result<Capped> {
    let limits = one_limit(options)?;
    Ok(Capped::cut(&text, |text| {
        tool_output_cap::cut(text, limits.default_limit(), limits.tokenizer())
    }))
}

/// [`cap`] on the libuv pool.
#[napi(ts_return_type = "Promise<Capped>")]
pub fn cap_async(text: String, options: Option<CapOptions>) -> Result<AsyncTask<Work<Capped>>> {
    let limits = one_limit(options)?;
    Ok(Work::spawn(move || {
        Ok(Capped::cut(&text, |text| {
            tool_output_cap::cut(text, limits.default_limit(), limits.tokenizer())
        }))
    }))
}

/// The limits of `cap`'s options: one limit, for every tool.
fn one_limit(options: Option<CapOptions>) -> Result<ToolOutputLimits> {
    let options = options.unwrap_or(CapOptions {
        max_tokens: None,
        keep: None,
        hint: None,
        encoding: None,
    });
    let max_tokens =
        ToolLimit::budget(options.max_tokens.unwrap_or(5000)).map_err(refused("maxTokens"))?;
    let mut limit = ToolLimit::new(max_tokens)
        .map_err(refused("maxTokens"))?
        .with_keep(parse::<Keep>(
            "keep",
            options.keep.as_deref().unwrap_or("head"),
        )?);
    if let Some(hint) = options.hint {
        limit = limit.with_hint(hint).map_err(refused("hint"))?;
    }
    Ok(ToolOutputLimits::default()
        .with_encoding(encoding(options.encoding)?)
        .with_default_limit(limit))
}

fn encoding(name: Option<String>) -> Result<Encoding> {
    parse("encoding", name.as_deref().unwrap_or("o200k_base"))
}

/// `value` of the option `name` as a keep or an encoding, or an error naming both.
fn parse<T>(name: &'static str, value: &str) -> Result<T>
where
    T: std::str::FromStr<Err = tool_output_cap::UnknownName>,
{
    value.parse().map_err(refused(name))
}

/// A count as JavaScript holds it: a `u32` counts 4 GB of text at least one byte a token.
fn tokens(count: usize) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}
