//! The command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use tool_output_cap::{Encoding, Keep};

/// Caps what LLM tools return to a token budget before the model reads it: in front of an MCP
/// server, in front of a model API, around a command, or in a shell pipeline.
///
/// Tokens are counted with a real tokenizer (o200k_base by default, or a model's own
/// tokenizer.json). An output over its limit is cut and ends with the line
/// `truncated: N tokens dropped, refine your query`. The limits come from the flags, over a
/// manifest's `[worker.tool_output]`: `--manifest FILE`, else the file in
/// $TOOL_OUTPUT_CAP_MANIFEST, else `tool-output-cap/manifest.toml` in the user's config folder
/// (~/.config on Linux), else the built-in defaults: 5000 tokens, keep head, o200k_base.
#[derive(Debug, Parser)]
#[command(name = "tool-output-cap", version, about, long_about)]
#[command(after_help = "\
Examples:
  tool-output-cap mcp --max-tokens 4000 -- npx -y @modelcontextprotocol/server-filesystem ~/projects
  tool-output-cap check -- npx -y @modelcontextprotocol/server-filesystem ~/projects
  tool-output-cap gateway -- claude
  tool-output-cap run --keep tail -- cargo build
  rg -n TODO / | tool-output-cap cap --max-tokens 3000
  git diff | tool-output-cap count")]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Runs COMMAND as an MCP stdio server and relays its messages, capping each tool result;
    /// or relays to a remote server at --url, as a stdio server, or on --listen ADDRESS.
    ///
    /// Limits in the manifest's `per_tool` are keyed by MCP tool names (`check` lists them); the
    /// flags set the limit of every other tool. With --listen, the server's bounds and timeouts
    /// are the gateway's flags below.
    #[command(after_help = "\
Examples:
  tool-output-cap mcp --manifest ~/.config/tool-output-cap/manifest.toml -- \\
    npx -y @modelcontextprotocol/server-filesystem ~/projects
  tool-output-cap mcp --url https://mcp.example.com/mcp --header 'Authorization: Bearer ${MCP_TOKEN}'
  tool-output-cap mcp --listen 127.0.0.1:8350 --url https://mcp.example.com/mcp")]
    Mcp {
        #[command(flatten)]
        limit: LimitArgs,
        #[command(flatten)]
        remote: RemoteArgs,
        #[command(flatten)]
        server: ServerArgs,
        /// The server's command and its arguments, with or without `--` before them.
        #[arg(
            required_unless_present = "url",
            conflicts_with = "url",
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "COMMAND"
        )]
        command: Vec<String>,
    },
    /// Starts COMMAND as `mcp` would, lists its tools with the limit each gets, and exits; or,
    /// with --request, says what the gateway would cut of a recorded request.
    ///
    /// Exits 0 when the server answered, and non-zero with the reason and the server's stderr
    /// when it could not start, exited, or did not answer in time.
    #[command(after_help = "\
Examples:
  tool-output-cap check --manifest agent.toml -- npx -y @modelcontextprotocol/server-filesystem .
  tool-output-cap check --manifest agent.toml --request recorded.json --route /v1/messages")]
    Check {
        #[command(flatten)]
        limit: LimitArgs,
        #[command(flatten)]
        request_budget: RequestArgs,
        /// How long the server has to answer each request, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 30)]
        timeout: u64,
        /// A recorded model API request body: each tool result the gateway would cut, and to
        /// what.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "url"])]
        request: Option<PathBuf>,
        /// The route the recorded request was sent to, such as /v1/messages [default: told
        /// from the body].
        #[arg(long, value_name = "PATH", requires = "request")]
        route: Option<String>,
        #[command(flatten)]
        remote: RemoteArgs,
        /// The server's command and its arguments, with or without `--` before them.
        #[arg(
            required_unless_present_any = ["request", "url"],
            conflicts_with = "url",
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "COMMAND"
        )]
        command: Vec<String>,
    },
    /// Runs COMMAND, caps its stdout and stderr (merged, in the order written) and exits with
    /// its exit code.
    ///
    /// Keeps head and tail unless --keep or the tool's limit says otherwise: a command's first
    /// lines say what it did and hold its first error, its last lines its summary.
    #[command(after_help = "\
Example:
  tool-output-cap run --max-tokens 3000 -- cargo test")]
    Run {
        #[command(flatten)]
        limit: LimitArgs,
        #[command(flatten)]
        tool: ToolArg,
        #[command(flatten)]
        command: CommandArgs,
    },
    /// Serves a model API on a loopback port in front of --upstream, capping the tool results of
    /// every request; or runs HOST (claude, codex or gemini) pointed at it.
    ///
    /// It caps the tool results of Anthropic Messages, OpenAI Chat Completions and Responses,
    /// and Gemini requests, a host's built-in tools' among them, to the limits of the tools the
    /// model called (the manifest's `per_tool` names are the names the model sees: `Bash`,
    /// `Glob`, `Read`). Every other request, and every response, goes through as it is. With
    /// HOST, the gateway listens on a free loopback port, the upstream is the one the host would
    /// have used, and it stops when the host exits, with its exit code.
    #[command(after_help = "\
Examples:
  tool-output-cap gateway -- claude
  tool-output-cap gateway -- codex
  tool-output-cap gateway -- gemini
  tool-output-cap gateway --upstream https://api.anthropic.com --listen 127.0.0.1:8340")]
    Gateway(GatewayArgs),
    /// Reads stdin and writes it to stdout, capped.
    #[command(after_help = "\
Example:
  cargo build 2>&1 | tool-output-cap cap --keep tail --max-tokens 3000")]
    Cap {
        #[command(flatten)]
        limit: LimitArgs,
        #[command(flatten)]
        tool: ToolArg,
    },
    /// Prints the token count of stdin.
    #[command(after_help = "\
Example:
  git diff | tool-output-cap count --encoding cl100k_base")]
    Count {
        /// The manifest whose `encoding` or `tokenizer_file` to count with.
        #[arg(long, value_name = "FILE")]
        manifest: Option<PathBuf>,
        #[command(flatten)]
        counting: CountingArgs,
    },
}

/// `gateway`'s flags.
#[derive(Debug, clap::Args)]
pub(crate) struct GatewayArgs {
    #[command(flatten)]
    pub(crate) limit: LimitArgs,
    #[command(flatten)]
    pub(crate) request_budget: RequestArgs,
    /// The share of the per-minute input-token limit that the model API reports on its
    /// answers, for the tool results of each request together, once it is known; no more
    /// than the rest of the request leaves under the limit [default: the manifest's
    /// rate_limit_share, else none].
    #[arg(long, value_name = "FRACTION")]
    pub(crate) rate_limit_share: Option<tool_output_cap::RateLimitShare>,
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// The model API to forward to [default: with HOST, the one it would have used].
    #[arg(long, value_name = "URL")]
    pub(crate) upstream: Option<String>,
    /// The address to listen on [default: 127.0.0.1:8340; with HOST, a free loopback port].
    #[arg(long, value_name = "ADDRESS")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// The host to run pointed at the gateway, and its arguments, after `--`.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "HOST"
    )]
    pub(crate) host: Vec<String>,
}

/// A remote MCP server, in place of a command.
#[derive(Debug, clap::Args)]
pub(crate) struct RemoteArgs {
    /// A remote MCP server's Streamable HTTP URL, in place of COMMAND: the proxy is a stdio
    /// server to the host, and relays each message to it.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// A header sent with every request to --url, as `Name: value`; again for another. `${VAR}`
    /// in the value is the environment variable VAR, so that a token stays out of `ps` and the
    /// shell's history.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub(crate) headers: Vec<String>,
    /// Serves --url's own paths on ADDRESS (as 127.0.0.1:8350), a capping reverse proxy for a
    /// host that takes a URL, in place of stdio: the host's requests and sign-in go to the
    /// server, and its tool results come back capped. The gateway's bounds and timeouts apply.
    #[arg(
        long,
        value_name = "ADDRESS",
        requires = "url",
        conflicts_with = "headers"
    )]
    pub(crate) listen: Option<std::net::SocketAddr>,
}

/// A command to run and its arguments: the first argument that is not a flag of ours, or
/// everything after `--`.
#[derive(Debug, clap::Args)]
pub(crate) struct CommandArgs {
    /// The command and its arguments, with or without `--` before them.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub(crate) command: Vec<String>,
}

/// The tool whose limit applies.
#[derive(Debug, clap::Args)]
pub(crate) struct ToolArg {
    /// The tool whose limit in the manifest applies; the default limit without it.
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,
}

/// What tokens are counted with, over the manifest's choice.
#[derive(Debug, clap::Args)]
pub(crate) struct CountingArgs {
    /// The vocabulary to count in: o200k_base or cl100k_base [default: the manifest's, else
    /// o200k_base].
    #[arg(long, value_name = "NAME", conflicts_with = "tokenizer_file")]
    pub(crate) encoding: Option<EncodingArg>,
    /// A model's Hugging Face tokenizer.json to count with.
    #[arg(long, value_name = "FILE")]
    pub(crate) tokenizer_file: Option<PathBuf>,
}

/// A limit: the manifest's, with flags over it.
#[derive(Debug, clap::Args)]
pub(crate) struct LimitArgs {
    /// The manifest to read limits from (its `[worker.tool_output]` section).
    #[arg(long, value_name = "FILE")]
    pub(crate) manifest: Option<PathBuf>,
    /// The budget, note included: 32 or more [default: the manifest's, else 5000].
    #[arg(long, value_name = "N", value_parser = budget)]
    pub(crate) max_tokens: Option<usize>,
    /// What a cut keeps [default: the manifest's, else head; for `run`, head_tail].
    #[arg(long)]
    pub(crate) keep: Option<KeepArg>,
    /// Ends the note with `: TEXT` (one line).
    #[arg(long, value_name = "TEXT")]
    pub(crate) hint: Option<String>,
    #[command(flatten)]
    pub(crate) counting: CountingArgs,
}

/// The budget of a model API request's tool results together, for `gateway` and `check
/// --request`.
#[derive(Debug, clap::Args)]
pub(crate) struct RequestArgs {
    /// All the tool results of one model API request together, notes and stub lines included:
    /// the oldest give way first, each to one line [default: the manifest's
    /// max_tokens_per_request, else none].
    #[arg(long, value_name = "N", value_parser = budget)]
    pub(crate) max_tokens_per_request: Option<usize>,
}

/// How the gateway serves: the bounds of a body, the timeouts, and the connections it holds.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ServerArgs {
    /// The most bytes of a request body read, and decoded, to be capped; a larger one goes on
    /// unread, as it came, with a warning [default: 32 MiB, over Anthropic's own request limit
    /// of 32 MB].
    #[arg(long, value_name = "BYTES", default_value_t = 32 << 20, hide_default_value = true)]
    pub(crate) max_body_bytes: usize,
    /// Seconds for a client to send a request's headers; an idle keep-alive HTTP/1 connection
    /// is closed after as long.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub(crate) header_timeout: u64,
    /// Seconds for a client to send a request's whole body.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub(crate) body_timeout: u64,
    /// Seconds to connect to the upstream.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub(crate) connect_timeout: u64,
    /// Seconds the upstream may go without a byte of its answer, its headers included (a model
    /// may think for minutes before it streams); past it, a 504 in the API's own error shape
    /// before the headers, the answer ended after them.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub(crate) upstream_timeout: u64,
    /// The most client connections open at once; more wait to be accepted, and that is logged
    /// once [default: a third of the open-file limit, which the gateway raises to its hard
    /// limit at start, each connection needing one of its own and one to the upstream].
    #[arg(long, value_name = "N")]
    pub(crate) max_connections: Option<usize>,
    /// The most bytes of cuts kept, so that a history sent again is not cut again; 0 keeps
    /// none [default: 64 MiB].
    #[arg(long, value_name = "BYTES", default_value_t = tool_output_cap::wire::RequestCap::DEFAULT_CACHE_BYTES, hide_default_value = true)]
    pub(crate) cache_bytes: usize,
    /// Serves the gateway's metrics at `/metrics` on ADDRESS (as 127.0.0.1:9340), in the
    /// Prometheus text format, on a listener of its own [default: none].
    #[arg(long, value_name = "ADDRESS")]
    pub(crate) metrics: Option<std::net::SocketAddr>,
}

/// A `--max-tokens` the library accepts as a budget.
fn budget(value: &str) -> Result<usize, String> {
    let max_tokens: i64 = value
        .parse()
        .map_err(|_| format!("must be a whole number of tokens, found {value:?}"))?;
    tool_output_cap::ToolLimit::budget(max_tokens).map_err(|e| e.to_string())
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
