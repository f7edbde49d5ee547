//! What the tool results of a request carry, by kind, as the cap counts them: what
//! `tool-output-cap check --request` lists.

use super::{read, Api, NotARequest, RequestCap};
use crate::media::{Media, MediaKind};

/// What one tool result of a request carries, as the cap counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Carried {
    /// The tool whose call it answers; `None` when the call is not in the request.
    pub tool: Option<String>,
    /// The tokens of its text: its text blocks and the text other blocks carry, with their
    /// labels, joined by newlines, or its string, or its JSON.
    pub text_tokens: usize,
    /// The media it carries, in order, each priced: an image at its provider's price, a PDF,
    /// audio or other binary data by [`media`](crate::media)'s estimate.
    pub media: Vec<Media>,
    /// The types of the blocks it carries that are neither text nor media the cap prices,
    /// passed as they are, uncounted ([`CappedRequest::unpriced`](super::CappedRequest::unpriced)).
    pub unpriced: Vec<String>,
}

impl Carried {
    /// How many blocks of `kind` it carries, and their tokens.
    pub fn of_kind(&self, kind: MediaKind) -> (usize, usize) {
        let of_kind = self.media.iter().filter(|media| media.kind == kind);
        of_kind.fold((0, 0), |(blocks, tokens), media| {
            (blocks + 1, tokens + media.tokens)
        })
    }
}

impl RequestCap {
    /// What each tool result of the request `body` of `api` carries, in the request's order,
    /// uncut; an error when the body is not a JSON object.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_output_cap::wire::{Api, RequestCap};
    /// use tool_output_cap::{MediaKind, ToolOutputLimits};
    ///
    /// // A 1 x 1 PNG, and a line of text.
    /// let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    /// let body = json!({"messages": [
    ///     {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "shot", "input": {}}]},
    ///     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
    ///         {"type": "text", "text": "the page"},
    ///         {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
    ///     ]}]},
    /// ]})
    /// .to_string();
    /// let carried = RequestCap::new(ToolOutputLimits::default()).carried(Api::AnthropicMessages, &body)?;
    /// assert_eq!(carried[0].tool.as_deref(), Some("shot"));
    /// assert_eq!(carried[0].text_tokens, 2);
    /// assert_eq!(carried[0].of_kind(MediaKind::Image), (1, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn carried(&self, api: Api, body: &str) -> Result<Vec<Carried>, NotARequest> {
        let tokenizer = self.limits.tokenizer();
        read(api, body, |_, request| {
            let results = api.results(&request);
            let carried = results.into_iter().map(|result| Carried {
                text_tokens: tokenizer.count(&result.content.text()),
                media: result.content.media(None, tokenizer),
                unpriced: result.content.unpriced(),
                tool: result.tool,
            });
            carried.collect()
        })
    }
}
