//! OpenAI's vocabularies, by the names the manifest gives them.

use std::fmt;

use super::Tokenizer;
use crate::name::UnknownName;

/// A vocabulary of OpenAI's, chosen with `encoding` in the manifest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-5 and the o-series. The default.
    #[default]
    O200kBase,
    /// `cl100k_base`: GPT-4 and GPT-3.5.
    Cl100kBase,
}

impl Encoding {
    /// The name used in the manifest.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The process-wide tokenizer of this vocabulary, built on first use: bpe-openai's with the
    /// `bpe-openai` feature, tiktoken-rs's without.
    pub fn tokenizer(self) -> &'static dyn Tokenizer {
        #[cfg(feature = "bpe-openai")]
        return self.bpe_openai();
        #[cfg(not(feature = "bpe-openai"))]
        return self.tiktoken();
    }
}

impl std::str::FromStr for Encoding {
    type Err = UnknownName;

    /// `o200k_base` or `cl100k_base`, as [`Encoding::name`] gives them.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let all = [Encoding::O200kBase, Encoding::Cl100kBase];
        UnknownName::find(
            &all,
            Encoding::name,
            r#""o200k_base" or "cl100k_base""#,
            name,
        )
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
