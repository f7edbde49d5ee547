from os import PathLike
from typing import Any, Literal, Mapping, Optional, Sequence, Union, final

Keep = Literal["head", "tail", "head_tail"]
Encoding = Literal["o200k_base", "cl100k_base"]
Api = Literal["anthropic", "openai-chat", "openai-responses", "gemini"]
ImageTokens = Literal["anthropic", "openai", "gemini"]


def count(text: str, encoding: Encoding = "o200k_base") -> int:
    """The tokens of `text` in `encoding`, read as ordinary text."""

def cap(
    text: str,
    max_tokens: int = 5000,
    keep: Keep = "head",
    hint: Optional[str] = None,
    encoding: Encoding = "o200k_base",
) -> Capped:
    """`text` within `max_tokens` tokens, the note included, keeping `keep` of it."""

@final
class Truncation:
    """How a text over its limit was cut; `dropped_tokens` is the note's N."""

    @property
    def original_tokens(self) -> int: ...
    @property
    def kept_tokens(self) -> int: ...
    @property
    def dropped_tokens(self) -> int: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def keep(self) -> Keep: ...

@final
class Capped:
    """A capped text; `truncation` is None when the text came back unchanged."""

    @property
    def text(self) -> str: ...
    @property
    def truncation(self) -> Optional[Truncation]: ...

@final
class CappedJson:
    """A capped JSON text: JSON of the same shape when `is_json`, else its JSON capped as text,
    since no cut of the shape fits; `truncation` is None when it came back unchanged."""

    @property
    def text(self) -> str: ...
    @property
    def truncation(self) -> Optional[Truncation]: ...
    @property
    def is_json(self) -> bool: ...

@final
class Limits:
    """The limit of every tool and of each tool by name, and the tokenizer they count with."""

    def __init__(
        self,
        default_max_tokens: int = 5000,
        default_keep: Keep = "head",
        per_tool: Optional[Mapping[str, Union[int, Mapping[str, Union[int, str]]]]] = None,
        encoding: Optional[Encoding] = None,
        tokenizer_file: Optional[Union[str, PathLike[str]]] = None,
        max_tokens_per_turn: Optional[int] = None,
        max_tokens_per_request: Optional[int] = None,
        rate_limit_share: Optional[float] = None,
        image_tokens: ImageTokens = "anthropic",
    ) -> None:
        """The keys of the manifest's `[worker.tool_output]` section, checked as the crate checks
        the manifest's; a `ManifestError` names the argument."""
    @staticmethod
    def from_manifest(path: Union[str, PathLike[str]]) -> Limits:
        """The `[worker.tool_output]` section of the manifest at `path`, as the crate reads it."""
    def cap(self, tool_name: str, text: str, error: bool = False) -> Capped:
        """`text`, an output of `tool_name` (an error if `error`: its tail is kept), capped."""
    def cap_texts(
        self, tool_name: str, texts: Sequence[str], error: bool = False
    ) -> tuple[list[Optional[str]], Optional[Truncation]]:
        """The parts of one output capped as one text joined by newlines; None for a part cut out."""
    def cap_blocks(
        self, tool_name: str, blocks: Sequence[Any], error: bool = False
    ) -> Optional[CappedBlocks]:
        """One result's content blocks (dicts: MCP's, or a framework's own shapes) capped
        together: their text as one text, their images priced by image_tokens, scaled down or
        the last giving way; None when they fit."""
    def cap_json(self, tool_name: str, json: str, error: bool = False) -> CappedJson:
        """The JSON text of a structured result capped to compact JSON of the same shape: its
        longest string or its lists cut, the note ending a string. When no such cut fits, its
        JSON capped as text, and `is_json` False. Raises ValueError for text that is not JSON."""
    def cap_turn(self, results: Sequence[tuple[str, str, bool]]) -> list[Capped]:
        """One turn's results, each (tool_name, text, error), capped to their tools' limits and,
        with the manifest's max_tokens_per_turn, together within it."""
    def cap_request(
        self,
        api: Api,
        body: Union[bytes, str, Mapping[str, Any]],
        rate_limit: Optional[RateLimit] = None,
    ) -> Optional[bytes]:
        """A model API request (api "anthropic", "openai-chat", "openai-responses" or "gemini")
        with each tool result cut to the limit of the tool whose call it answers: the capped body
        as UTF-8 bytes, or None when nothing needed a cut. With `rate_limit` and
        rate_limit_share, the results together within that share of the limit it learned.
        Raises ValueError for a body that is not a JSON object."""
    def cap_request_with_cuts(
        self,
        api: Api,
        body: Union[bytes, str, Mapping[str, Any]],
        rate_limit: Optional[RateLimit] = None,
    ) -> CappedRequest:
        """`cap_request`, with the figures of each tool result it cut."""
    def unmatched_tools(self, tools: Sequence[str]) -> list[str]:
        """The per_tool names that are none of `tools`: limits that never apply (case-sensitive)."""
    def count(self, text: str) -> int:
        """The tokens of `text` with these limits' tokenizer."""
    def max_tokens_for(self, tool_name: str) -> int:
        """The token limit of `tool_name`'s outputs, the note included."""

@final
class RateLimit:
    """The per-minute input-token limit a provider reports, learned from its answers' headers.
    One for each provider key (each model behind a router); shared between threads."""

    def __init__(self) -> None: ...
    def learn(self, headers: Mapping[str, Any]) -> Optional[int]:
        """Learns the limit the headers report (the provider's own, or LiteLLM's copies prefixed
        `llm_provider-`): the limit, or None when they report none."""
    @property
    def limit(self) -> Optional[int]:
        """The limit learned so far; None before."""

@final
class CappedRequest:
    """A request with its tool results capped."""

    @property
    def body(self) -> Optional[bytes]:
        """The capped body as UTF-8, or None when nothing needed a cut."""
    @property
    def cuts(self) -> list[RequestCut]: ...

@final
class RequestCut:
    """One tool result cut."""

    @property
    def tool(self) -> Optional[str]:
        """The tool whose call it answers; None when the call is not in the request."""
    @property
    def error(self) -> bool: ...
    @property
    def truncation(self) -> Truncation: ...
    @property
    def cached(self) -> bool:
        """Whether it was cut for an earlier request and taken from the cuts kept."""
    @property
    def elided(self) -> bool:
        """Whether it gave way whole to max_tokens_per_request: one line in its place."""

def api_for_path(path: str) -> Optional[Api]:
    """The API whose inference or token-count route `path` is ("/v1/messages" is "anthropic"),
    a query after it or not; None for any other route."""

class ManifestError(ValueError):
    """A manifest or a Limits argument the crate refuses; the message says where and what."""

def command(argv: Sequence[str]) -> int:
    """Runs the tool-output-cap command line `argv`, its name first; gives its exit code."""

def manifest_path() -> Optional[PathLike[str]]:
    """The manifest the tool-output-cap command reads without --manifest: the file
    $TOOL_OUTPUT_CAP_MANIFEST names, else tool-output-cap/manifest.toml in the user's config
    folder if it exists; None for the built-in defaults."""
