"""What the binding costs, in one run, as ratios (this machine is shared and noisy):

- `toc.cap` on a 125 KB listing against the crate's own cap of the same text, timed in Rust in
  this process (`_crate_cap_seconds`): the cost of the crossings, one copy each way;
- `toc.count` against `tiktoken`'s `encode_ordinary` on the same text, when tiktoken and the
  crate's vocabulary files are at hand (the tests' oracle; see tests/conftest.py);
- how a `str` is read (`src/text.rs`), on 2 MB of this machine's C headers under a `©`, which
  CPython holds one byte a character: widened from its Latin-1, against the same text encoded
  by `str.encode` (a subclass of `str`, which the binding reads that way) and against its ASCII
  alone, read in place.

    python python/bench/perf.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import tool_output_cap as toc
from tool_output_cap import _native

ROUNDS, RUNS = 15, 20


def listing() -> str:
    import conftest

    text = conftest.usr_listing()
    return text[: text.index("\n", 125_000) + 1]


def rounds(*timings) -> list[float]:
    """The median over ROUNDS of each timing's mean seconds per call, the rounds of each
    interleaved with the others' so that they share the machine's noise."""
    seconds = [[] for _ in timings]
    for _ in range(ROUNDS):
        for times, timing in zip(seconds, timings):
            times.append(timing() / RUNS)
    return [statistics.median(times) for times in seconds]


def timed(fn):
    """RUNS calls of `fn`, timed here."""

    def timing() -> float:
        started = time.perf_counter()
        for _ in range(RUNS):
            fn()
        return time.perf_counter() - started

    return timing


def str_reads() -> None:
    class Encoded(str):
        pass

    headers = "".join(path.read_text(errors="replace") for path in sorted(Path("/usr/include").glob("*.h")))
    ascii_text = headers.encode("ascii", "replace").decode()[:2_000_000]
    latin1 = "/* \xa9 */\n" + ascii_text[9:]
    texts = (latin1, Encoded(latin1), ascii_text)
    assert toc.count(latin1) == toc.count(Encoded(latin1)), "the two reads of one text count alike"
    seconds = [[] for _ in texts]
    for _ in range(ROUNDS):
        for times, text in zip(seconds, texts):
            started = time.perf_counter()
            toc.count(text)
            times.append(time.perf_counter() - started)
    widened, encoded, in_place = (statistics.median(times) for times in seconds)
    print(
        f"toc.count, 2 MB held one byte a character: widened {widened * 1e3:.3f} ms, "
        f"by str.encode {encoded * 1e3:.3f} ms (ratio {widened / encoded:.2f}), "
        f"its ASCII in place {in_place * 1e3:.3f} ms (ratio {widened / in_place:.2f})"
    )


def main() -> None:
    str_reads()
    text = listing()
    tokens = toc.count(text)
    print(f"text: {len(text.encode())} bytes of `find /usr -type f`, {tokens} o200k_base tokens")
    binding, crate = rounds(
        timed(lambda: toc.cap(text, 5000)), lambda: _native._crate_cap_seconds(text, 5000, RUNS)
    )
    print(f"toc.cap        {binding * 1e3:8.3f} ms   crate cap {crate * 1e3:8.3f} ms   ratio {binding / crate:.2f}")
    try:
        import conftest
        import tiktoken

        os.environ["TIKTOKEN_CACHE_DIR"] = str(conftest._tiktoken_cache())
        encoding = tiktoken.get_encoding("o200k_base")
    except BaseException as error:  # no tiktoken, or no cargo to find its vocabulary (a skip)
        if isinstance(error, KeyboardInterrupt):
            raise
        print(f"toc.count against tiktoken: skipped ({type(error).__name__}: {error})")
        return
    assert toc.count(text) == len(encoding.encode_ordinary(text))
    ours, theirs = rounds(timed(lambda: toc.count(text)), timed(lambda: encoding.encode_ordinary(text)))
    print(f"toc.count      {ours * 1e3:8.3f} ms   tiktoken  {theirs * 1e3:8.3f} ms   ratio {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
