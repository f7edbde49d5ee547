//! The command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::{Encoding, Keep};

/// Caps LLM tool outputs to a token budget: in front of an MCP server, or in a shell pipeline.
#[derive(Debug, Parser)]
#[command(name = "tool-output-cap", version, about)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Runs COMMAND as an MCP stdio server and relays its messages, capping each tool result.
    Mcp {
        /// The manifest whose `[worker.tool_output]` sets the limits, keyed by MCP tool name.
        #[arg(long, value_name = "FILE")]
        manifest: Option<PathBuf>,
        #[command(flatten)]
        counting: CountingArgs,
        /// The server command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Reads all of stdin and writes it to stdout, capped.
    Cap {
        #[command(flatten)]
        limit: LimitArgs,
    },
    /// Prints the token count of stdin.
    Count {
        /// The manifest whose `encoding` or `tokenizer_file` to count with.
        #[arg(long, value_name = "FILE")]
        manifest: Option<PathBuf>,
        #[command(flatten)]
        counting: CountingArgs,
    },
}

/// What tokens are counted with, over the manifest's choice.
#[derive(Debug, clap::Args)]
pub(crate) struct CountingArgs {
    /// The vocabulary to count in: o200k_base or cl100k_base.
    #[arg(long, value_name = "NAME", conflicts_with = "tokenizer_file")]
    pub(crate) encoding: Option<EncodingArg>,
    /// A model's Hugging Face tokenizer.json to count with (needs the `hf` feature).
    #[arg(long, value_name = "FILE")]
    pub(crate) tokenizer_file: Option<PathBuf>,
}

/// The limit of the `cap` filter: the manifest's, with flags over it.
#[derive(Debug, clap::Args)]
pub(crate) struct LimitArgs {
    /// The manifest to read limits from.
    #[arg(long, value_name = "FILE")]
    pub(crate) manifest: Option<PathBuf>,
    /// The tool whose limit in the manifest applies; the default limit without it.
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,
    /// The budget, note included (32 or more).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(32..))]
    pub(crate) max_tokens: Option<u32>,
    /// What a cut keeps.
    #[arg(long)]
    pub(crate) keep: Option<KeepArg>,
    /// Ends the note with `: TEXT` (one line).
    #[arg(long, value_name = "TEXT")]
    pub(crate) hint: Option<String>,
    #[command(flatten)]
    pub(crate) counting: CountingArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum KeepArg {
    Head,
    Tail,
    #[value(name = "head_tail")]
    HeadTail,
}

impl From<KeepArg> for Keep {
    fn from(keep: KeepArg) -> Keep {
        match keep {
            KeepArg::Head => Keep::Head,
            KeepArg::Tail => Keep::Tail,
            KeepArg::HeadTail => Keep::HeadTail,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum EncodingArg {
    #[value(name = "o200k_base")]
    O200kBase,
    #[value(name = "cl100k_base")]
    Cl100kBase,
}

impl From<EncodingArg> for Encoding {
    fn from(encoding: EncodingArg) -> Encoding {
        match encoding {
            EncodingArg::O200kBase => Encoding::O200kBase,
            EncodingArg::Cl100kBase => Encoding::Cl100kBase,
        }
    }
}
