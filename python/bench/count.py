"""`toc.count` against gigatoken and tiktoken, o200k_base, on one core, as ratios measured in one
run (this machine is shared and noisy): on this machine's own text (a listing of /usr, the
licence texts, the C headers, Vim's, GnuPG's and systemd's Japanese and Chinese, a binary in
base64) and on minified JSON, each at 125 KB and 10 MB,

- warm: the median of counts of the same text, again and again, the engines taking turns;
- cold: the first count in a fresh process, the engine loaded before the clock starts (each
  counts "a" first, which reads its vocabulary); the least of three processes each.

Every count is checked to be the same in every engine: a row where one differs says so, and the
bench exits with an error at the end. gigatoken and tiktoken read the crate's own vocabulary
file (tests/conftest.py); without them, the bench says what it skipped.

    python python/bench/count.py
    python python/bench/count.py 125 KB    # only the rows whose label holds `125 KB`
"""

from __future__ import annotations

import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "tests"))

SIZES = ((125_000, "125 KB"), (10_000_000, "10 MB"))
CJK_FILES = (
    "/usr/share/vim/vim90/tutor/tutor.ja.utf-8",
    "/usr/share/gnupg/help.ja.txt",
    "/usr/share/gnupg/help.zh_CN.txt",
    "/usr/lib/systemd/catalog/systemd.zh_CN.catalog",
)
ENGINES = ("toc", "gigatoken", "tiktoken")
COLD_RUNS = 3


def read_all(paths) -> str:
    texts = []
    for path in sorted(paths):
        try:
            texts.append(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            pass
    return "".join(texts)


def minified_json(size: int) -> str:
    """Records of a file listing as one line of JSON, as an API returns them."""
    records, length, i = [], 2, 0
    while length < size:
        record = json.dumps(
            {"id": i, "path": f"/srv/app/src/module_{i % 97}/file_{(i * 2654435761) % 16777216:06x}.rs",
             "size": (i * 7919) % 100_000, "modified": f"2026-11-{i % 28 + 1:02}T10:{i % 60:02}:00Z",
             "tags": ["rust", "src"]},
            separators=(",", ":"),
        )
        records.append(record)
        length += len(record) + 1
        i += 1
    return "[" + ",".join(records) + "]"


def binary_base64() -> str:
    """This machine's own binaries in base64, as a tool returns a file it cannot show as text."""
    data = b"".join(path.read_bytes() for path in sorted(Path("/usr/bin").iterdir())[:400] if path.is_file())
    return base64.b64encode(data).decode()


def sized(text: str, size: int) -> str:
    """`text` repeated or cut to `size` bytes (UTF-8), on a character boundary."""
    data = (text * (size // max(len(text.encode()), 1) + 1)).encode()[:size]
    return data.decode("utf-8", "ignore")


def texts() -> list[tuple[str, str]]:
    import conftest

    kinds = [
        ("listing (`find /usr`)", conftest.usr_listing()),
        ("prose (licences)", read_all(Path("/usr/share/common-licenses").glob("*"))),
        ("code (`/usr/include`)", read_all(Path("/usr/include").glob("*.h"))),
        ("minified JSON", minified_json(10_000_000)),
        ("CJK prose (Vim, GnuPG, systemd)", read_all(CJK_FILES)),
        ("base64 (`/usr/bin`)", binary_base64()),
    ]
    return [(f"{label} {what}", sized(text, size)) for size, label in SIZES for what, text in kinds if text]


def engine(name: str, vocabulary: Path):
    """The count of `name`: the binding's, gigatoken's or tiktoken's, on o200k_base, the last two
    from the `vocabulary` file (tiktoken's from TIKTOKEN_CACHE_DIR, which holds it)."""
    if name == "toc":
        import tool_output_cap as toc

        return toc.count
    if name == "gigatoken":
        import gigatoken

        tokenizer = gigatoken.Tokenizer.from_tiktoken(vocabulary)
        return lambda text: len(tokenizer.encode(text))
    import tiktoken

    encoding = tiktoken.get_encoding("o200k_base")
    return lambda text: len(encoding.encode_ordinary(text))


def warm(counts, text: str) -> list[tuple[float, int]]:
    """The median seconds of each count of `text`, taking turns, and the count: about a second
    each at most, at least 5 turns."""
    started = time.perf_counter()
    tokens = [count(text) for count in counts]
    turns = max(5, min(100, int(len(counts) / max(time.perf_counter() - started, 1e-6))))
    seconds = [[] for _ in counts]
    for _ in range(turns):
        for times, count in zip(seconds, counts):
            started = time.perf_counter()
            count(text)
            times.append(time.perf_counter() - started)
    return [(statistics.median(times), n) for times, n in zip(seconds, tokens)]


def cold(name: str, path: Path, vocabulary: Path) -> tuple[float, int]:
    """The least seconds of the first count of the text at `path` by `name` in a fresh process."""
    runs = []
    for _ in range(COLD_RUNS):
        printed = subprocess.run(
            [sys.executable, str(HERE), "--cold", name, str(path), str(vocabulary)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        seconds, tokens = printed.split()
        runs.append((float(seconds), int(tokens)))
    return min(runs)


def cold_child(name: str, path: str, vocabulary: str) -> None:
    text = Path(path).read_text(encoding="utf-8")
    count = engine(name, Path(vocabulary))
    # Loaded: what an engine reads or builds on its first use, its vocabulary, is read now.
    count("a")
    started = time.perf_counter()
    tokens = count(text)
    print(time.perf_counter() - started, tokens)


DIFFERENT = []


def cells(timed: list[tuple[float, int]]) -> str:
    """Each engine's milliseconds, then the binding's speed against gigatoken's and tiktoken's
    (above 1: the binding is faster); a count that differs from the binding's is noted."""
    tokens = timed[0][1]
    DIFFERENT.extend(t for _, t in timed if t != tokens)
    shown = [f"{s * 1e3:.2f}" + ("" if t == tokens else f" ({t} tokens, not {tokens})") for s, t in timed]
    ratios = [f"{other / timed[0][0]:.2f}" for other, _ in timed[1:]]
    return " | ".join(shown + ratios)


def main(only: str) -> None:
    # One core, for every engine and every process this one starts.
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    try:
        import conftest

        vocabulary = conftest.vocabulary("o200k_base")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(conftest._tiktoken_cache())
        counts = [engine(name, vocabulary) for name in ENGINES]
    except BaseException as error:  # no gigatoken or tiktoken, or no cargo for the vocabulary
        if isinstance(error, KeyboardInterrupt):
            raise
        print(f"toc.count against gigatoken and tiktoken: skipped ({type(error).__name__}: {error})")
        return
    columns = "toc ms | gigatoken ms | tiktoken ms | gigatoken / toc | tiktoken / toc"
    rows = [(what, text) for what, text in texts() if only in what]
    print(f"\n| warm, one core | {columns} |\n| --- |{' ---: |' * 5}")
    for what, text in rows:
        print(f"| {what} | {cells(warm(counts, text))} |", flush=True)
    print(f"\n| cold: a fresh process's first count | {columns} |\n| --- |{' ---: |' * 5}")
    with tempfile.TemporaryDirectory(prefix="tool-output-cap-count-bench-") as scratch:
        for i, (what, text) in enumerate(rows):
            path = Path(scratch) / f"{i}.txt"
            path.write_text(text, encoding="utf-8")
            print(f"| {what} | {cells([cold(name, path, vocabulary) for name in ENGINES])} |", flush=True)
    if DIFFERENT:
        sys.exit(f"{len(DIFFERENT)} counts differ from the binding's: see the rows that say so")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--cold"]:
        cold_child(*sys.argv[2:5])
    else:
        main(" ".join(sys.argv[1:]))
