//! Which manifest applies, and the flags over it.

use std::path::{Path, PathBuf};

use tool_output_cap::{Keep, LimitError, Manifest, RateLimitShare, ToolLimit, ToolOutputLimits};

use crate::args::{CountingArgs, LimitArgs, RequestArgs};
use crate::Failure;

/// The variable that names the manifest when `--manifest` does not.
pub(crate) const MANIFEST_ENV: &str = "TOOL_OUTPUT_CAP_MANIFEST";

/// The limits to cap with, and the manifest they came from.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) limits: ToolOutputLimits,
    /// The manifest read; `None` for the built-in defaults.
    pub(crate) manifest: Option<PathBuf>,
}

impl Config {
    /// The manifest's limits (see [`manifest_path`]), counting with what the flags say if they
    /// say anything.
    pub(crate) fn load(manifest: Option<&Path>, counting: &CountingArgs) -> Result<Self, Failure> {
        let manifest = manifest_path(manifest);
        let limits = match &manifest {
            Some(path) => Manifest::from_path(path)?.worker.limits(),
            None => ToolOutputLimits::default(),
        };
        let limits = match (counting.encoding, &counting.tokenizer_file) {
            (Some(encoding), _) => limits.with_encoding(encoding.into()),
            (None, Some(file)) => with_tokenizer_file(limits, file)?,
            (None, None) => limits,
        };
        Ok(Config { limits, manifest })
    }

    /// The limits of the flags over the manifest's default limit, for a proxy: `per_tool`
    /// limits stay as the manifest sets them.
    pub(crate) fn for_every_tool(args: &LimitArgs) -> Result<Self, Failure> {
        let config = Config::load(args.manifest.as_deref(), &args.counting)?;
        let default = over(config.limits.default_limit().clone(), args, None)?;
        Ok(Config {
            limits: config.limits.with_default_limit(default),
            ..config
        })
    }

    /// The limits of the flags over the manifest's, for a model API request's cap: the proxy's
    /// ([`for_every_tool`](Self::for_every_tool)), with `--max-tokens-per-request` over the
    /// manifest's `max_tokens_per_request`, and `rate_limit_share` (the gateway's
    /// `--rate-limit-share`), if given, over its `rate_limit_share`.
    pub(crate) fn for_requests(
        args: &LimitArgs,
        request: &RequestArgs,
        rate_limit_share: Option<RateLimitShare>,
    ) -> Result<Self, Failure> {
        let config = Config::for_every_tool(args)?;
        let mut limits = config.limits;
        if let Some(max_tokens) = request.max_tokens_per_request {
            limits = limits
                .with_max_tokens_per_request(max_tokens)
                .map_err(|e| Failure::usage(format!("--max-tokens-per-request {e}")))?;
        }
        if let Some(share) = rate_limit_share {
            limits = limits.with_rate_limit_share(share);
        }
        Ok(Config { limits, ..config })
    }

    /// The limit of `tool` (the default limit without one) with the flags over it; without a
    /// `--keep` or a tool's own limit, a cut keeps `keep`, if given.
    pub(crate) fn limit(
        &self,
        tool: Option<&str>,
        args: &LimitArgs,
        keep: Option<Keep>,
    ) -> Result<ToolLimit, Failure> {
        let own = tool.and_then(|tool| {
            self.limits
                .per_tool()
                .find_map(|(name, limit)| (name == tool).then_some(limit))
        });
        let keep = keep.filter(|_| own.is_none());
        let limit = own.unwrap_or(self.limits.default_limit()).clone();
        over(limit, args, keep)
    }

    /// What `check` prints of where the limits came from.
    pub(crate) fn describe(&self) -> String {
        match &self.manifest {
            Some(path) => format!("manifest: {}", path.display()),
            None => "manifest: none, built-in defaults".to_owned(),
        }
    }
}

/// The manifest to read: `--manifest`, else the file `$TOOL_OUTPUT_CAP_MANIFEST` names (both
/// must exist), else [`default_manifest`] if it exists, else none.
pub(crate) fn manifest_path(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_owned());
    }
    if let Some(path) = std::env::var_os(MANIFEST_ENV).filter(|path| !path.is_empty()) {
        return Some(path.into());
    }
    default_manifest().filter(|path| path.is_file())
}

/// `tool-output-cap/manifest.toml` in the user's config folder: `$XDG_CONFIG_HOME` or
/// `~/.config` on Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
pub(crate) fn default_manifest() -> Option<PathBuf> {
    dirs::config_dir().map(|folder| folder.join("tool-output-cap").join("manifest.toml"))
}

/// `limit` with the flags over it, and `keep` when `--keep` is not given.
fn over(mut limit: ToolLimit, args: &LimitArgs, keep: Option<Keep>) -> Result<ToolLimit, Failure> {
    fn refused(flag: &'static str) -> impl Fn(LimitError) -> Failure {
        move |e| Failure::usage(format!("{flag} {e}"))
    }
    if let Some(max_tokens) = args.max_tokens {
        limit = limit
            .with_max_tokens(max_tokens)
            .map_err(refused("--max-tokens"))?;
    }
    if let Some(keep) = args.keep.map(Keep::from).or(keep) {
        limit = limit.with_keep(keep);
    }
    if let Some(hint) = &args.hint {
        limit = limit.with_hint(hint.as_str()).map_err(refused("--hint"))?;
    }
    Ok(limit)
}

#[cfg(feature = "hf")]
fn with_tokenizer_file(limits: ToolOutputLimits, file: &Path) -> Result<ToolOutputLimits, Failure> {
    limits
        .with_tokenizer_file(file)
        .map_err(|e| Failure::usage(format!("--tokenizer-file {e}")))
}

#[cfg(not(feature = "hf"))]
fn with_tokenizer_file(_: ToolOutputLimits, file: &Path) -> Result<ToolOutputLimits, Failure> {
    Err(Failure::usage(format!(
        "--tokenizer-file {}: this build cannot read tokenizer files; build with the `hf` feature",
        file.display()
    )))
}
