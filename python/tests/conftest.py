"""Real data and independent oracles for the tests: this machine's own file listing, OpenAI's
`tiktoken` on the vocabulary files the tiktoken-rs crate ships, and Hugging Face's `tokenizers`
on a model's tokenizer.json. A test whose oracle is missing is skipped, saying why."""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTE = re.compile(r"truncated: (\d+) tokens dropped, refine your query(: .*)?")
URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


@functools.lru_cache(maxsize=None)
def usr_listing() -> str:
    """`find /usr -type f`, as an agent's Glob over a real tree returns it."""
    found = subprocess.run(
        ["find", "/usr", "-type", "f"], capture_output=True, check=False
    ).stdout
    return found.decode("utf-8", "replace")


@pytest.fixture(scope="session")
def listing() -> str:
    """About 125 KB of the listing: the size of the incident's Glob result."""
    text = usr_listing()
    end = text.index("\n", 125_000) + 1
    return text[:end]


@functools.lru_cache(maxsize=None)
def _tiktoken_assets() -> Path:
    """The folder of the vocabulary files tiktoken-rs ships, the crate's own."""
    if shutil.which("cargo") is None:
        pytest.skip("no cargo on PATH: the tiktoken oracle reads the vocabularies tiktoken-rs ships")
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--manifest-path", str(REPO / "Cargo.toml")],
            capture_output=True,
            check=True,
        ).stdout
    )
    [crate] = [p for p in metadata["packages"] if p["name"] == "tiktoken-rs"]
    return Path(crate["manifest_path"]).parent / "assets"


def vocabulary(name: str) -> Path:
    """The crate's own vocabulary file `name` (`o200k_base`), named as OpenAI names it."""
    return _tiktoken_assets() / f"{name}.tiktoken"


@functools.lru_cache(maxsize=None)
def _tiktoken_cache() -> Path:
    """A tiktoken cache holding the crate's own vocabulary files, named as tiktoken names them."""
    # A folder of this process's own, removed when it exits.
    cache = Path(tempfile.mkdtemp(prefix="tool-output-cap-tiktoken-"))
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    for name, url in URLS.items():
        shutil.copyfile(vocabulary(name), cache / hashlib.sha1(url.encode()).hexdigest())
    return cache


@pytest.fixture(scope="session")
def tiktoken_encoding():
    """`tiktoken.get_encoding`, offline: tiktoken checks each file's sha256 against its own pin."""
    tiktoken = pytest.importorskip("tiktoken", reason="the oracle for the built-in encodings")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(_tiktoken_cache())
    return tiktoken.get_encoding


@pytest.fixture(scope="session")
def tokenizer_file() -> Path:
    """Qwen 3's tokenizer.json, which `.ci/run` fetches into the folder $TOOL_OUTPUT_CAP_TOKENIZERS."""
    folder = os.environ.get("TOOL_OUTPUT_CAP_TOKENIZERS")
    if not folder:
        pytest.skip("TOOL_OUTPUT_CAP_TOKENIZERS is not set (.ci/run fetches the tokenizer files and sets it)")
    path = Path(folder) / "qwen3" / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"TOOL_OUTPUT_CAP_TOKENIZERS names {folder}, which has no qwen3/tokenizer.json")
    return path


def note_of(text: str) -> int:
    """The N of the note on `text`'s last line; fails when the last line is not the note."""
    last = text.rsplit("\n", 1)[-1]
    match = NOTE.fullmatch(last)
    assert match, f"the last line is not the note: {last[:200]!r}"
    return int(match.group(1))


def unmatched_warnings(caught) -> list[str]:
    """The messages of the adapters' warnings of per_tool names that match no tool."""
    return [str(w.message) for w in caught if "tool_output_cap: per_tool names" in str(w.message)]


def no_fit_shapes() -> dict:
    """The three structures no cut of the shape fits under a limit of 100: an object of 500 short
    fields, small objects nested with no list, and a list of one such object."""
    fields = {f"field_{i}": i for i in range(500)}
    nested: dict = {"leaf": 0}
    for depth in range(1, 120):
        nested = {"depth": depth, "flag": True, "inner": nested}
    return {
        "500 short fields": fields,
        "nested small objects": nested,
        "a list of one huge item": [fields],
    }


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its header; fails for anything else."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", data[:16]
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def anthropic_tokens(width: int, height: int) -> int:
    """Anthropic's published price of an image: scaled down to a long edge of 1568 px, then its
    area over 750, at most 1640 (docs.claude.com, "Vision")."""
    scale = min(1.0, 1568 / max(width, height))
    width, height = max(1, int(width * scale)), max(1, int(height * scale))
    return min(-(-width * height // 750), 1640)


@functools.lru_cache(maxsize=None)
def _screenshots() -> tuple[bytes, ...]:
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, check=False)
    folder = Path(sysroot.stdout.decode().strip()) / "share/doc/rust/html"
    found = sorted(
        (path for path in folder.rglob("*.png") if sysroot.returncode == 0),
        key=str,
    )
    wide = {}
    for path in found:
        data = path.read_bytes()
        if data[:8] == b"\x89PNG\r\n\x1a\n" and png_size(data)[0] >= 800:
            wide.setdefault(data, None)
    return tuple(wide)[:10]


@pytest.fixture(scope="session")
def screenshots() -> tuple[bytes, ...]:
    """Ten screenshots of this machine, PNGs of 800 px wide or more: those of the Rust
    toolchain's own docs (its rust-docs component), as the crate's image tests take them."""
    shots = _screenshots()
    if len(shots) < 10:
        pytest.skip("fewer than ten PNGs of 800 px wide or more in rustc's sysroot docs (rustup's rust-docs component)")
    return shots


MEDIA_NOTE = re.compile(r"truncated: (\d+) tokens dropped \((\d+) of (\d+) images(; (\d+) scaled to (\d+) px)?\), refine your query")


def media_note_of(text: str) -> re.Match:
    """The note that images gave way; fails when `text` is not one."""
    match = MEDIA_NOTE.fullmatch(text)
    assert match, f"not the note that images gave way: {text[:200]!r}"
    return match
