"""Counts, notes and bounds on white-space runs longer than tiktoken and fancy-regex can
pre-tokenize, against independent oracles: OpenAI's `tiktoken` where it encodes the text, and
above its own limit its pattern run with the `regex` module and each piece encoded with its BPE;
and for Qwen 3's and DeepSeek V3's tokenizer files, Hugging Face's Python `tokenizers`, which
splits with Oniguruma, as model servers do."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
import regex

import tool_output_cap as toc
from conftest import note_of

ENCODINGS = ["o200k_base", "cl100k_base"]


def runs() -> dict[str, str]:
    """The families of runs (999,999 to 2,100,000 characters), as `tests/common/corpus.rs` has them."""
    rng = random.Random(7)
    mixed = "".join(rng.choice(" \t\u3000  ") for _ in range(1_500_000))
    listing = "".join(f"crates/core/src/module_{i}/mod.rs\n" for i in range(150))
    return {
        "newline + 999,999 spaces": "\n" + " " * 999_999,
        "tab + 1,000,000 spaces + x": "\t" + " " * 1_000_000 + "x",
        "listing + 1,500,000 spaces + listing": listing + " " * 1_500_000 + listing,
        "999,999 spaces + hello world x 90,000": " " * 999_999 + "hello world " * 90_000,
        "space tab x 1,000,000": " \t" * 1_000_000,
        "ideographic space, space x 500,000": "\u3000 " * 500_000,
        "x + mixed 1,500,000 + y": "x" + mixed + "y",
        "a + 1,100,000 tabs + b + 900,000 spaces + c": "a" + "\t" * 1_100_000 + "b" + " " * 900_000 + "c",
        "punctuation + CRLF + 2,100,000 spaces + word": "a;\r\n\r\n" + " " * 2_100_000 + "word",
        "newline + 1,000,000 spaces + no-break spaces + slash": "x\n" + " " * 1_000_000 + "\u00a0" * 1000 + "/y",
    }


def exact(encoding, text: str) -> int:
    """tiktoken's count; where tiktoken gives up, its own pattern and BPE piece by piece."""
    if len(text) < 500_000:
        return len(encoding.encode_ordinary(text))
    return sum(
        len(encoding._encode_single_piece(piece.encode()))
        for piece in regex.findall(encoding._pat_str, text)
    )


@pytest.fixture(scope="module")
def families():
    return runs()


@pytest.mark.parametrize("name", list(runs()))
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_count_cap_and_note_are_exact(tiktoken_encoding, families, encoding, name):
    oracle = tiktoken_encoding(encoding)
    text = families[name]
    tokens = exact(oracle, text)
    assert toc.count(text, encoding) == tokens
    for keep in ["head", "tail", "head_tail"]:
        capped = toc.cap(text, max_tokens=5000, keep=keep, encoding=encoding)
        assert capped.truncation.original_tokens == tokens
        assert exact(oracle, capped.text) <= 5000, keep
        assert note_of(capped.text) == tokens - capped.truncation.kept_tokens


def test_a_limit_past_a_refused_run_holds(tiktoken_encoding):
    """A limit large enough that the kept head holds the refused run itself."""
    oracle = tiktoken_encoding("o200k_base")
    text = " \t" * 1_000_000 + "END" + " word" * 1100
    capped = toc.cap(text, max_tokens=1_000_015)
    assert capped.truncation is not None
    assert exact(oracle, capped.text) <= 1_000_015
    kept = capped.text.rsplit("\n", 1)[0]
    assert capped.truncation.kept_tokens == exact(oracle, kept)


MODELS = ["qwen3", "deepseek_v3"]


@pytest.fixture(scope="module", params=MODELS)
def model_file(request) -> Path:
    """The model's tokenizer.json, from the folder $TOOL_OUTPUT_CAP_TOKENIZERS that `.ci/run` fills."""
    folder = os.environ.get("TOOL_OUTPUT_CAP_TOKENIZERS")
    if not folder:
        pytest.skip("TOOL_OUTPUT_CAP_TOKENIZERS is not set: .ci/run fetches the tokenizer files")
    path = Path(folder) / request.param / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} is missing: .ci/run fetches it")
    return path


@pytest.mark.parametrize("name", list(runs()))
def test_a_tokenizer_file_counts_as_python_tokenizers_does(model_file, families, name):
    tokenizers = pytest.importorskip("tokenizers", reason="the oracle for tokenizer files")
    oracle = tokenizers.Tokenizer.from_file(str(model_file))
    oracle.encode_special_tokens = True
    tokens = lambda text: len(oracle.encode(text, add_special_tokens=False).ids)  # noqa: E731
    text = families[name]
    # The oracle takes seconds on a run of a million spaces: it counts the whole text once.
    expected = tokens(text)
    limits = toc.Limits(tokenizer_file=model_file)
    assert limits.count(text) == expected
    capped = limits.cap("any", text)
    assert capped.truncation.original_tokens == expected
    assert tokens(capped.text) <= 5000
    assert note_of(capped.text) == expected - capped.truncation.kept_tokens
