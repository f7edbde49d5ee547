//! The agent hosts `gateway -- HOST` runs pointed at the gateway: where each would have sent its
//! requests, and how it is told to send them to the gateway instead.

use std::path::Path;

/// A host the gateway knows how to point at itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Host {
    /// Claude Code (`claude`): `ANTHROPIC_BASE_URL`.
    ClaudeCode,
    /// Codex (`codex`): a model provider of its own, given with `-c`, over HTTP.
    Codex,
    /// gemini-cli (`gemini`), with an API key: `GOOGLE_GEMINI_BASE_URL`.
    GeminiCli,
}

/// The name of the model provider `gateway -- codex` gives Codex.
const CODEX_PROVIDER: &str = "tool_output_cap";

impl Host {
    /// The host `program` is, by its file name; `None` for any other program.
    pub(super) fn of(program: &str) -> Option<Host> {
        let name = Path::new(program).file_stem()?.to_str()?;
        match name {
            "claude" => Some(Host::ClaudeCode),
            "codex" => Some(Host::Codex),
            "gemini" => Some(Host::GeminiCli),
            _ => None,
        }
    }

    /// The variable that holds the host's base URL, and the public API it uses without it.
    fn base_url(self) -> (&'static str, &'static str) {
        match self {
            Host::ClaudeCode => ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
            Host::Codex => ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
            Host::GeminiCli => (
                "GOOGLE_GEMINI_BASE_URL",
                "https://generativelanguage.googleapis.com",
            ),
        }
    }

    /// Where the host would have sent its requests: its base URL variable if set, else the
    /// provider's public API.
    pub(super) fn upstream(self) -> String {
        let (variable, public) = self.base_url();
        std::env::var(variable)
            .ok()
            .filter(|url| !url.trim().is_empty())
            .unwrap_or_else(|| public.to_owned())
    }

    /// `argv`, the host's command line, and the variables to set, for it to send its requests
    /// to the gateway at `url`.
    ///
    /// Codex gets a model provider of its own after its program name, with its `OPENAI_API_KEY`
    /// and without WebSockets, so that it speaks HTTP, whose bodies the gateway reads.
    pub(super) fn pointed_at(
        self,
        argv: &[String],
        url: &str,
    ) -> (Vec<String>, Vec<(String, String)>) {
        let (variable, _) = self.base_url();
        match self {
            Host::Codex => {
                let provider = format!(
                    "model_providers.{CODEX_PROVIDER}={{ name = \"tool-output-cap gateway\", \
                     base_url = \"{url}\", env_key = \"OPENAI_API_KEY\", wire_api = \"responses\", \
                     supports_websockets = false }}"
                );
                let mut pointed = vec![argv[0].clone()];
                pointed.extend([
                    "-c".to_owned(),
                    format!("model_provider=\"{CODEX_PROVIDER}\""),
                    "-c".to_owned(),
                    provider,
                ]);
                pointed.extend_from_slice(&argv[1..]);
                (pointed, Vec::new())
            }
            Host::ClaudeCode | Host::GeminiCli => {
                (argv.to_vec(), vec![(variable.to_owned(), url.to_owned())])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_known_by_their_program_and_pointed_at_the_gateway() {
        assert_eq!(Host::of("/usr/local/bin/claude"), Some(Host::ClaudeCode));
        assert_eq!(Host::of("codex"), Some(Host::Codex));
        assert_eq!(Host::of("gemini.cmd"), Some(Host::GeminiCli));
        assert_eq!(Host::of("python3"), None);
        let argv = ["codex".to_owned(), "exec".to_owned(), "list".to_owned()];
        let (pointed, env) = Host::Codex.pointed_at(&argv, "http://127.0.0.1:9");
        assert_eq!((pointed[0].as_str(), &pointed[5..]), ("codex", &argv[1..]));
        assert!(
            pointed[4].contains("base_url = \"http://127.0.0.1:9\""),
            "{}",
            pointed[4]
        );
        assert!(env.is_empty());
        let (pointed, env) = Host::ClaudeCode.pointed_at(&argv[..1], "http://127.0.0.1:9");
        assert_eq!(pointed, ["codex"]);
        assert_eq!(
            env,
            [(
                "ANTHROPIC_BASE_URL".to_owned(),
                "http://127.0.0.1:9".to_owned()
            )]
        );
    }
}
