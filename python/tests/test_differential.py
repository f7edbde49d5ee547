"""The count against OpenAI's `tiktoken` on 600 generated inputs and real ones, in both encodings:
white-space runs of every mix up to 2 MB, fragment soups of what the patterns treat apart
(contractions in every case, marks, title case, numbers of every script, emoji, line breaks
before slashes), CJK, base64, minified JSON, this machine's C headers and file listings. Any
mismatch fails, and names the input."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
import regex

import tool_output_cap as toc

ENCODINGS = ["o200k_base", "cl100k_base"]

WHITE_SPACE = [" ", "\t", "\n", "\r", "\u3000", "\u00a0", "\u2003", "\x0b", "\x0c", "\u0085", "\u2028"]

FRAGMENTS = [
    "'s", "'S", "'\u017f", "'t", "'ll", "'LL", "'Re", "'ve", "'M", "'d", "don't", "I'M", "'",
    "HELLO", "Hello", "hello", "\u01c5ungla", "\u01c4", "e\u0301", "\u0301", "A\u0308", "\u02b0",
    "123", "12345", "\u0661\u0662\u0663", "\u216b", "\u00bd", "\u65e5\u672c\u8a9e", "\u30c6\u30b9\u30c8",
    "\ud55c\uad6d\uc5b4", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\U0001f980", "\U0001f44d\U0001f3fd",
    " ", "  ", "\t", "\n", "\r\n", "\n\n", " \n", "\u3000", "\u00a0", "/", "//", ";\n/", "\n/usr",
    "...", "!?", "$", "_", "-", "\x00", "\u200b", "\ufeff", "a", "Z", "x1", "\u00fcber", "\u03a3\u0391\u03a3",
    "\ufb01", "\u1e9e", "<|endoftext|>", "{\"a\":", "},", "0x1F", "\\n", "\u0130", "\u212a",
]


def white_space_run(rng: random.Random, length: int) -> str:
    mix = rng.sample(WHITE_SPACE, rng.randint(1, 4))
    return "".join(rng.choice(mix) for _ in range(length))


def listing_lines() -> list[str]:
    lines = []
    for root, _, files in os.walk("/usr"):
        lines.extend(os.path.join(root, name) for name in files)
        if len(lines) > 200_000:
            break
    return lines


def headers() -> str:
    folder = Path("/usr/include")
    paths = sorted(folder.glob("*.h")) if folder.is_dir() else []
    return "".join(path.read_text(errors="replace") for path in paths[:300])


def inputs() -> dict[str, str]:
    rng = random.Random(33)
    cases: dict[str, str] = {}
    for i in range(100):
        length = int(10 ** rng.uniform(0, 4.3))
        cases[f"white space {i} ({length})"] = white_space_run(rng, length)
    for i, length in enumerate([100_000, 500_000, 999_999, 1_000_000, 1_500_000, 2_000_000]):
        cases[f"long white space {i} ({length}) between letters"] = "x" + white_space_run(rng, length) + "y"
    for i in range(200):
        cases[f"fragment soup {i}"] = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 300)))
    cjk = [chr(c) for c in range(0x4E00, 0x4E00 + 500)] + [chr(c) for c in range(0x3041, 0x3097)]
    for i in range(80):
        cases[f"CJK {i}"] = "".join(
            rng.choice(cjk) if rng.random() > 0.05 else rng.choice("\u3001\u3002 \n\uff01")
            for _ in range(rng.randint(1, 5000))
        )
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    for i in range(50):
        cases[f"base64 {i}"] = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 100_000)))
    for i in range(50):
        records = [
            {"id": rng.randint(0, 10**9), "path": f"/srv/app/module_{rng.randint(0, 99)}.rs",
             "size": rng.random() * 1e6, "tags": rng.sample(["rust", "src", "\u65e5\u672c", "x y"], 2)}
            for _ in range(rng.randint(1, 300))
        ]
        cases[f"minified JSON {i}"] = json.dumps(records, separators=(",", ":"), ensure_ascii=rng.random() < 0.5)
    code = headers()
    lines = listing_lines()
    for i in range(50):
        if code:
            start = rng.randrange(len(code))
            cases[f"C headers {i}"] = code[start : start + rng.randint(1, 200_000)]
        if lines:
            start = rng.randrange(len(lines))
            cases[f"file listing {i}"] = "\n".join(lines[start : start + rng.randint(1, 5000)]) + "\n"
    return cases


def exact(encoding, text: str) -> int:
    """tiktoken's count; past the runs its regex can take, its own pattern and BPE piece by piece."""
    if len(text) < 500_000:
        return len(encoding.encode_ordinary(text))
    return sum(
        len(encoding._encode_single_piece(piece.encode())) for piece in regex.findall(encoding._pat_str, text)
    )


CASES = inputs()


def test_there_are_at_least_500_inputs():
    assert len(CASES) >= 500


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_count_is_tiktokens(tiktoken_encoding, encoding):
    oracle = tiktoken_encoding(encoding)
    mismatches = [
        f"{name}: {ours} tokens, tiktoken {theirs}"
        for name, text in CASES.items()
        if (ours := toc.count(text, encoding)) != (theirs := exact(oracle, text))
    ]
    assert not mismatches, "\n".join(mismatches[:20])
