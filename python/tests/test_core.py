"""The core: exact counts against independent oracles, every keep at every limit, the manifest,
bad arguments, and the GIL released."""

from __future__ import annotations

import base64
import json
import os
import threading
import time

import pytest

import tool_output_cap as toc
from conftest import note_of, usr_listing

MARKER = "[... cut here ...]"


def hostile() -> dict[str, str]:
    """Texts whose tokens are easy to get wrong."""
    return {
        "usr listing": usr_listing()[:1_000_000],
        "japanese": "東京都の天気は晴れ、明日は雨が降るでしょう。日本語の文章を数えます。\n" * 400,
        "emoji": "👩‍👩‍👧‍👦🇯🇵🏳️‍🌈 ok 🎉🔥\n" * 500,
        "special-token text": "<|endoftext|> <|im_start|>user<|im_end|> <|fim_prefix|>\n" * 300,
        "space run": " " * 100_000,
        "white-space mix": (" \t\n\r\n  \u3000\u00a0" * 5000),
        "base64": base64.b64encode(os.urandom(60_000)).decode(),
    }


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("name", list(hostile()))
def test_count_is_tiktokens(tiktoken_encoding, encoding, name):
    text = hostile()[name]
    assert toc.count(text, encoding) == len(tiktoken_encoding(encoding).encode_ordinary(text))


@pytest.mark.parametrize("name", [n for n in hostile() if n not in ("space run", "white-space mix")])
def test_count_with_a_tokenizer_file_is_hugging_faces(tokenizer_file, name):
    tokenizers = pytest.importorskip("tokenizers", reason="the oracle for tokenizer files")
    oracle = tokenizers.Tokenizer.from_file(str(tokenizer_file))
    oracle.encode_special_tokens = True  # special-token text in an output is text
    text = hostile()[name]
    limits = toc.Limits(tokenizer_file=tokenizer_file)
    assert limits.count(text) == len(oracle.encode(text, add_special_tokens=False).ids)


@pytest.mark.parametrize("text", [" " * 20_000, " \t\n\r\n  \u3000" * 2000, "a" + " " * 3000 + "b"])
def test_white_space_runs_with_a_tokenizer_file(tokenizer_file, text):
    tokenizers = pytest.importorskip("tokenizers", reason="the oracle for tokenizer files")
    oracle = tokenizers.Tokenizer.from_file(str(tokenizer_file))
    limits = toc.Limits(tokenizer_file=tokenizer_file)
    assert limits.count(text) == len(oracle.encode(text, add_special_tokens=False).ids)


LIMITS = [32, 33, 40, 64, 100, 257, 1000, 2048, 5000]


@pytest.mark.parametrize("keep", ["head", "tail", "head_tail"])
@pytest.mark.parametrize("max_tokens", LIMITS)
def test_every_keep_at_every_limit(listing, keep, max_tokens):
    capped = toc.cap(listing, max_tokens=max_tokens, keep=keep)
    truncation = capped.truncation
    assert toc.count(capped.text) <= max_tokens
    dropped = note_of(capped.text)
    assert dropped == truncation.dropped_tokens
    assert truncation.original_tokens == toc.count(listing)
    assert dropped == truncation.original_tokens - truncation.kept_tokens
    assert (truncation.max_tokens, truncation.keep) == (max_tokens, keep)
    # The note is the last line; before it, the kept text and a line break if it had none.
    body = capped.text[: capped.text.rfind("\n") + 1]
    assert listing.endswith("\n")
    if keep == "head":
        assert listing.startswith(body[:-1])
    elif keep == "tail":
        assert listing.endswith(body)
    else:
        head, marker, tail = body.partition(MARKER + "\n")
        assert marker, "no cut marker"
        assert listing.startswith(head[:-1]) and listing.endswith(tail)


@pytest.mark.parametrize("keep", ["head", "tail", "head_tail"])
def test_a_text_within_its_limit_comes_back_unchanged(listing, keep):
    text = listing[:4000]
    capped = toc.cap(text, max_tokens=5000, keep=keep)
    assert capped.truncation is None
    assert capped.text is text


def test_the_hint_ends_the_note(listing):
    capped = toc.cap(listing, max_tokens=500, hint="use a narrower pattern")
    assert capped.text.endswith("refine your query: use a narrower pattern")
    assert toc.count(capped.text) <= 500


def test_lone_surrogates_are_read_as_replacement_characters():
    text = "\ud83d" + "x😀" * 20_000 + "\udc00"
    capped = toc.cap(text, max_tokens=100, keep="head_tail")
    assert capped.text.startswith("\ufffd")
    assert toc.count(capped.text) <= 100
    assert capped.truncation.original_tokens == toc.count(text.replace("\ud83d", "\ufffd").replace("\udc00", "\ufffd"))


def test_each_lone_surrogate_is_one_replacement_character():
    """As the proxy reads a `\\ud800` escape; a pair of them makes its character, as in JSON."""
    assert toc.count("a\ud800 " * 10_000) == toc.count("a\ufffd " * 10_000)
    capped = toc.cap("\udfff" * 30_000, max_tokens=100)
    assert capped.truncation.original_tokens == toc.count("\ufffd" * 30_000)
    assert toc.count("\ud83d\ude00 x") == toc.count("😀 x")


def test_an_ascii_str_is_read_in_place_and_another_keeps_no_copy_of_itself():
    """An ASCII `str` is its own UTF-8; another's is made for the call alone and let go."""
    import sys
    import tracemalloc

    ascii_text = "a b c\n" * 500_000
    toc.count(ascii_text)
    tracemalloc.start()
    try:
        toc.count(ascii_text)
        toc.cap(ascii_text, max_tokens=100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(ascii_text) / 10, f"{peak} bytes allocated for a text of {len(ascii_text)}"
    line = "日本語 a b\n"
    japanese = line * 200_000
    size = sys.getsizeof(japanese)
    assert toc.count(japanese) == 200_000 * toc.count(line), "no piece spans two lines"
    toc.cap(japanese, max_tokens=100)
    assert sys.getsizeof(japanese) == size, "the str keeps a UTF-8 copy of itself"


def test_a_str_of_one_byte_a_character_reads_as_the_same_text_another_way():
    """A `str` CPython holds one byte a character is widened from its Latin-1; a subclass of
    `str` is encoded by `str.encode` instead: both give the same counts and cuts, and the `str`
    keeps no copy of itself."""
    import sys

    class Other(str):
        pass

    every = "".join(map(chr, range(256)))
    for text in (
        every * 500,
        "caf\xe9 na\xefve \xa9 2026, \xbfqu\xe9?\n" * 20_000,
        "a" * 100_000 + "\xff",
        "\xe9" * 300_000,
        "\x00\x80\xa0 \xa0" * 50_000,
    ):
        size = sys.getsizeof(text)
        assert toc.count(text) == toc.count(Other(text))
        for keep in ("head", "tail", "head_tail"):
            capped, other = toc.cap(text, 100, keep=keep), toc.cap(Other(text), 100, keep=keep)
            assert capped.text == other.text and capped.text.endswith("refine your query")
            assert capped.truncation.original_tokens == other.truncation.original_tokens
        assert sys.getsizeof(text) == size, "the str keeps a UTF-8 copy of itself"


def test_megabytes_of_one_character_are_capped():
    for text in ("a" * 4_000_000, "\n" * 2_000_000, "€" * 1_000_000):
        capped = toc.cap(text, max_tokens=64, keep="tail")
        assert toc.count(capped.text) <= 64
        note_of(capped.text)


def test_the_manifest_gives_each_tool_its_limit(tmp_path, listing):
    manifest = tmp_path / "agent.toml"
    manifest.write_text(
        "[worker.tool_output]\n"
        "default_max_tokens = 2000\n"
        "[worker.tool_output.per_tool]\n"
        "Glob = { max_tokens = 300, hint = \"use a narrower pattern\" }\n"
        "Bash = { max_tokens = 400, keep = \"tail\" }\n"
    )
    limits = toc.Limits.from_manifest(manifest)
    glob, bash, read = (limits.cap(tool, listing) for tool in ("Glob", "Bash", "Read"))
    assert (glob.truncation.max_tokens, glob.truncation.keep) == (300, "head")
    assert glob.text.endswith(": use a narrower pattern")
    assert (bash.truncation.max_tokens, bash.truncation.keep) == (400, "tail")
    assert listing.rstrip("\n").endswith(bash.text.rsplit("\n", 1)[0].rstrip("\n"))
    assert read.truncation.max_tokens == 2000
    assert [limits.max_tokens_for(t) for t in ("Glob", "Bash", "Read")] == [300, 400, 2000]


def test_a_bad_manifest_says_file_line_column_and_key(tmp_path):
    manifest = tmp_path / "agent.toml"
    manifest.write_text("[worker.tool_output]\ndefault_max_tokens = 5000\n\n[worker.tool_output.per_tool]\nGrep = 10\n")
    with pytest.raises(toc.ManifestError) as raised:
        toc.Limits.from_manifest(manifest)
    assert str(raised.value) == (
        f"{manifest}:5:8: `worker.tool_output.per_tool.Grep` must be at least 32 tokens "
        "(room for the note), found 10"
    )
    assert isinstance(raised.value, ValueError)
    with pytest.raises(toc.ManifestError, match="cannot read the manifest"):
        toc.Limits.from_manifest(tmp_path / "missing.toml")


def test_limits_from_arguments_match_the_manifest(tmp_path, listing):
    manifest = tmp_path / "agent.toml"
    manifest.write_text(
        "[worker.tool_output]\ndefault_max_tokens = 1500\ndefault_keep = \"head_tail\"\n"
        "encoding = \"cl100k_base\"\n[worker.tool_output.per_tool]\nGrep = 300\n"
        "Bash = { max_tokens = 600, keep = \"tail\", hint = \"grep the log\" }\n"
    )
    from_file = toc.Limits.from_manifest(manifest)
    from_args = toc.Limits(
        default_max_tokens=1500,
        default_keep="head_tail",
        encoding="cl100k_base",
        per_tool={"Grep": 300, "Bash": {"max_tokens": 600, "keep": "tail", "hint": "grep the log"}},
    )
    for tool in ("Grep", "Bash", "Read"):
        a, b = from_file.cap(tool, listing), from_args.cap(tool, listing)
        assert (a.text, a.truncation) == (b.text, b.truncation)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: toc.cap("x", max_tokens=31), "max_tokens must be at least 32 tokens (room for the note), found 31"),
        (lambda: toc.cap("x", max_tokens=-1), "max_tokens must be at least 32 tokens (room for the note), found -1"),
        (lambda: toc.cap("x", keep="middle"), 'keep must be "head", "tail" or "head_tail", found "middle"'),
        (lambda: toc.cap("x", encoding="p50k_base"), 'encoding must be "o200k_base" or "cl100k_base", found "p50k_base"'),
        (lambda: toc.count("x", "gpt2"), 'encoding must be "o200k_base" or "cl100k_base", found "gpt2"'),
        (lambda: toc.cap("x", hint="two\nlines"), "must be one line"),
        (lambda: toc.Limits(default_max_tokens=8), "default_max_tokens must be at least 32"),
        (lambda: toc.Limits(default_keep="end"), 'default_keep must be "head", "tail" or "head_tail", found "end"'),
        (lambda: toc.Limits(per_tool={"Grep": 5}), "per_tool.Grep must be at least 32"),
        (lambda: toc.Limits(per_tool={"Grep": {"max_token": 500}}), "per_tool.Grep.max_token is not a key of a tool's limit"),
        (lambda: toc.Limits(per_tool={"Grep": {"hint": "two\nlines"}}), "per_tool.Grep.hint must be one line"),
        (lambda: toc.Limits(default_max_tokens=12.5), "default_max_tokens must be a whole number of tokens, found float 12.5"),
        (lambda: toc.Limits(max_tokens_per_turn=10), "max_tokens_per_turn must be at least 32"),
        (lambda: toc.Limits(per_tool={"Grep": {"keep": 3}}), 'per_tool.Grep.keep must be "head", "tail" or "head_tail", found 3'),
        (lambda: toc.Limits(per_tool={"Grep": "500"}), 'per_tool.Grep must be a whole number of tokens, found string "500"'),
        (lambda: toc.Limits(tokenizer_file="/nonexistent/tokenizer.json"), "/nonexistent/tokenizer.json: cannot read the tokenizer file"),
        (lambda: toc.Limits(encoding="cl100k_base", tokenizer_file="t.json"), "tokenizer_file cannot be given with `encoding`"),
    ],
)
def test_bad_arguments_raise_value_error_with_the_crates_message(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert message in str(raised.value)


def test_many_threads_capping_at_once_give_what_one_gives(listing):
    texts = [listing[i * 1000 :] for i in range(16)]
    alone = [toc.cap(text, max_tokens=700, keep="head_tail").text for text in texts]
    results = [None] * len(texts)

    def work(i):
        results[i] = toc.cap(texts[i], max_tokens=700, keep="head_tail").text

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == alone


def test_the_gil_is_released_while_counting():
    text = "word " * 8_000_000
    counts = []  # the seconds each count took
    done = threading.Event()

    def count():
        # However fast the machine, count until the loop below has run long enough to tell.
        try:
            while sum(counts) < 0.5:
                began = time.perf_counter()
                toc.count(text)
                counts.append(time.perf_counter() - began)
        finally:
            done.set()  # a count that raises ends the loop below too, not the test run

    gaps = []
    worker = threading.Thread(target=count)
    worker.start()
    last = time.perf_counter()
    while not done.is_set():
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    # Held, the GIL would stop this loop for a whole count at least; released, it runs on.
    shortest = min(counts)
    assert max(gaps) < shortest / 2, f"the loop stopped for {max(gaps):.3f} s; the shortest count took {shortest:.3f} s"


def test_the_examples_in_the_modules_docs_run():
    import doctest
    import importlib
    import importlib.util

    frameworks = {"": None, ".langchain": "langchain", ".pydantic_ai": "pydantic_ai", ".openai_agents": "agents"}
    for adapter, framework in frameworks.items():
        if framework is not None and importlib.util.find_spec(framework) is None:
            continue
        module = importlib.import_module("tool_output_cap" + adapter)
        failed, tried = doctest.testmod(module)
        assert (failed, tried > 0) == (0, True), module.__name__


def test_a_turn_shares_the_manifests_budget(tmp_path, listing):
    manifest = tmp_path / "agent.toml"
    manifest.write_text(
        "[worker.tool_output]\ndefault_max_tokens = 5000\nmax_tokens_per_turn = 6000\n"
        "[worker.tool_output.per_tool]\nRead = 400\n"
    )
    limits = toc.Limits.from_manifest(manifest)
    small = "fn main() {}\n"
    capped = limits.cap_turn([("Glob", listing, False), ("Read", small, False), ("Bash", listing, True)])
    assert capped[1].text == small and capped[1].truncation is None
    assert sum(limits.count(c.text) for c in capped) <= 6000
    assert capped[0].truncation.max_tokens == capped[2].truncation.max_tokens < 3000
    assert capped[0].truncation.keep == "head" and capped[2].truncation.keep == "tail"
    # The same budget given as an argument.
    given = toc.Limits(max_tokens_per_turn=6000, per_tool={"Read": 400})
    again = given.cap_turn([("Glob", listing, False), ("Read", small, False), ("Bash", listing, True)])
    assert [c.text for c in again] == [c.text for c in capped]
    # Without a turn budget, each result is held to its own tool's limit.
    alone = toc.Limits(default_max_tokens=5000).cap_turn([("Glob", listing, False)] * 3)
    assert [c.truncation.max_tokens for c in alone] == [5000] * 3


def test_cap_json_keeps_the_shape_of_a_structure(listing):
    import json

    files = listing.splitlines()
    value = {"root": "/usr", "files": [{"path": path, "size": len(path)} for path in files]}
    text = json.dumps(value)
    limits = toc.Limits(per_tool={"Search": 400})
    capped = limits.cap_json("Search", text)
    assert toc.count(capped.text) <= 400 == capped.truncation.max_tokens
    kept = json.loads(capped.text)
    assert kept["root"] == "/usr"
    items = kept["files"]
    assert 0 < len(items) < len(files)
    assert items[:-1] == value["files"][: len(items) - 1]
    assert note_of(items[-1]["path"]) == capped.truncation.dropped_tokens

    # An error keeps the end of its lists.
    tail = json.loads(limits.cap_json("Search", text, error=True).text)["files"]
    assert 2 < len(tail) < len(files)
    assert tail[1:-1] == value["files"][-(len(tail) - 1) : -1]
    assert tail[-1]["size"] == value["files"][-1]["size"]

    small = json.dumps({"files": files[:3]})
    assert limits.cap_json("Search", small).text is small


@pytest.mark.parametrize("error", [False, True])
def test_cap_json_says_when_no_cut_of_the_shape_fits_and_caps_it_as_text(error):
    import json

    from conftest import no_fit_shapes

    limits = toc.Limits(default_max_tokens=100)
    for shape, value in no_fit_shapes().items():
        text = json.dumps(value, separators=(",", ":"))
        capped = limits.cap_json("Stats", text, error=error)
        assert isinstance(capped, toc.CappedJson)
        assert capped.is_json is False, shape
        assert toc.count(capped.text) <= 100, shape
        assert note_of(capped.text) == capped.truncation.dropped_tokens, shape
        kept = capped.text[: capped.text.rindex("\n")]
        assert (text.endswith(kept) if error else text.startswith(kept)), shape
        with pytest.raises(ValueError):
            json.loads(capped.text)
    # A list shortened keeps the shape, and says so.
    files = json.dumps({"files": [f"src/{i}.rs" for i in range(3000)]})
    kept = limits.cap_json("Search", files)
    assert kept.is_json is True and len(json.loads(kept.text)["files"]) < 3000


def test_cap_json_refuses_text_that_is_not_json():
    with pytest.raises(ValueError, match="json is not JSON: EOF while parsing"):
        toc.Limits().cap_json("Search", '{"files": [')


def test_cap_request_caps_each_apis_tool_results_and_keeps_the_rest(listing):
    import json

    limits = toc.Limits(per_tool={"Glob": {"max_tokens": 3000, "hint": "use a narrower pattern"}})
    body = {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Glob", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": listing}]},
        ],
        "z-unknown": [1, "é"],
    }
    for given in (body, json.dumps(body), json.dumps(body).encode()):
        capped = limits.cap_request("anthropic", given)
        sent = json.loads(capped)
        text = sent["messages"][1]["content"][0]["content"]
        assert limits.count(text) <= 3000
        assert text.endswith("refine your query: use a narrower pattern")
        assert list(sent) == list(body) and sent["z-unknown"] == body["z-unknown"]
        # Capped once, the same bytes after: nothing to cut.
        assert limits.cap_request("anthropic", capped) is None
    chat = {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "Glob", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": listing},
    ]}
    sent = json.loads(limits.cap_request("openai-chat", chat))
    assert limits.count(sent["messages"][1]["content"]) <= 3000
    assert limits.cap_request("openai-responses", {"input": "hi"}) is None
    with pytest.raises(ValueError, match='api must be "anthropic", "openai-chat", "openai-responses" or "gemini", found "openai"'):
        limits.cap_request("openai", body)
    with pytest.raises(ValueError, match="not a JSON object"):
        limits.cap_request("anthropic", b"[1, 2]")
    with pytest.raises(ValueError, match="not UTF-8"):
        limits.cap_request("anthropic", b"\xff{}")
    with pytest.raises(TypeError, match="bytes, str or dict"):
        limits.cap_request("anthropic", 3)


def test_cap_request_with_cuts_gives_each_cuts_figures(listing):
    limits = toc.Limits(per_tool={"Glob": 3000})
    body = {"messages": [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Glob", "input": {}},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": listing},
            {"type": "tool_result", "tool_use_id": "t2", "content": listing, "is_error": True},
            {"type": "tool_result", "tool_use_id": "gone", "content": listing},
        ]},
    ]}
    capped = limits.cap_request_with_cuts("anthropic", body)
    assert capped.body == limits.cap_request("anthropic", body)
    assert [(c.tool, c.error, c.truncation.max_tokens) for c in capped.cuts] == [
        ("Glob", False, 3000), ("Bash", True, 5000), (None, False, 5000)]
    assert all(c.truncation.original_tokens == limits.count(listing) for c in capped.cuts)
    assert [c.cached for c in capped.cuts] == [False, False, False]
    again = limits.cap_request_with_cuts("anthropic", body)
    assert again.body == capped.body and [c.cached for c in again.cuts] == [True, True, True]
    assert toc.Limits().cap_request_with_cuts("anthropic", {"messages": []}).cuts == []


def test_a_rate_limit_learns_from_headers_and_cap_request_keeps_within_its_share(listing):
    limits = toc.Limits(rate_limit_share=0.5)
    messages = [{"role": "user", "content": "go"}]
    for turn in range(6):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{turn}", "name": "Glob", "input": {}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{turn}", "content": listing}]})
    body = {"messages": messages}
    tokens = lambda sent: sum(limits.count(m["content"][0]["content"]) for m in json.loads(sent)["messages"][2::2])
    rate_limit = toc.RateLimit()
    assert rate_limit.limit is None and repr(rate_limit) == "RateLimit(limit=None)"
    assert tokens(limits.cap_request("anthropic", body, rate_limit)) > 15_000
    assert rate_limit.learn({"content-type": "application/json"}) is None
    assert rate_limit.learn({"x-ratelimit-limit-tokens": 90000}) == 90000
    assert rate_limit.learn({"llm_provider-anthropic-ratelimit-input-tokens-limit": "30000"}) == 30000
    assert rate_limit.limit == 30000
    capped = limits.cap_request_with_cuts("anthropic", body, rate_limit=rate_limit)
    assert tokens(capped.body) <= 15_000 and capped.cuts[0].elided
    with pytest.raises(TypeError):
        limits.cap_request("anthropic", body, 30000)
    with pytest.raises(toc.ManifestError, match="rate_limit_share"):
        toc.Limits(rate_limit_share=2)


def test_cap_request_keeps_a_request_within_max_tokens_per_request(listing):
    import json

    limits = toc.Limits(default_max_tokens=3000, max_tokens_per_request=8000)
    messages = [{"role": "user", "content": "go"}]
    for at in range(6):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{at}", "name": "Glob", "input": {}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{at}", "content": listing}]})
    capped = limits.cap_request_with_cuts("anthropic", {"messages": messages})
    sent = json.loads(capped.body)["messages"]
    results = [sent[2 * at + 2]["content"][0]["content"] for at in range(6)]
    assert sum(toc.count(result) for result in results) <= 8000
    elided = [cut.elided for cut in capped.cuts]
    assert elided[0] and not elided[-1], elided
    assert results[0].startswith("truncated: all ") and results[0].endswith(
        "tokens dropped to fit the request's budget, call Glob again if you need it")
    with pytest.raises(toc.ManifestError, match="max_tokens_per_request must be at least 32"):
        toc.Limits(max_tokens_per_request=10)


def test_cap_request_reads_a_dict_with_lone_surrogates(listing):
    # A dict from json.loads of `\ud800` escapes: written back with them, as JSON holds them; the
    # message that is not cut keeps them, the cut result reads them as U+FFFD.
    limits = toc.Limits(per_tool={"Glob": 3000})
    body = {"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Glob", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "\ud800" + listing}]},
        {"role": "user", "content": "a lone \udfff and 日本語"},
    ]}
    sent = json.loads(limits.cap_request("anthropic", body))
    text = sent["messages"][1]["content"][0]["content"]
    assert text.startswith("\ufffd/") and limits.count(text) <= 3000
    assert sent["messages"][2] == body["messages"][2]


def test_api_for_path_names_the_api_of_a_route():
    assert toc.api_for_path("/v1/messages?beta=true") == "anthropic"
    assert toc.api_for_path("/anthropic/v1/messages") == "anthropic"
    assert toc.api_for_path("/v1/chat/completions") == "openai-chat"
    assert toc.api_for_path("/openai/v1/responses") == "openai-responses"
    assert toc.api_for_path("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse") == "gemini"
    assert toc.api_for_path("/v1/models") is None


def test_manifest_path_is_the_commands(tmp_path, monkeypatch):
    manifest = tmp_path / "agent.toml"
    monkeypatch.setenv("TOOL_OUTPUT_CAP_MANIFEST", str(manifest))
    assert str(toc.manifest_path()) == str(manifest)
    monkeypatch.delenv("TOOL_OUTPUT_CAP_MANIFEST")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert toc.manifest_path() is None
    (tmp_path / "tool-output-cap").mkdir()
    (tmp_path / "tool-output-cap" / "manifest.toml").write_text("[worker.tool_output]\n")
    assert str(toc.manifest_path()) == str(tmp_path / "tool-output-cap" / "manifest.toml")


def test_cap_request_counts_images_and_the_last_give_way():
    # PNG headers of 1568 x 1000: 1640 tokens each at Anthropic's price, its most.
    header = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR" + (1568).to_bytes(4, "big") + (1000).to_bytes(4, "big") + b"\x08\x06\0\0\0"
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(header).decode()}}
    body = {"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "screenshot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [image] * 5}]},
    ]}
    capped = toc.Limits().cap_request_with_cuts("anthropic", body)
    blocks = json.loads(capped.body)["messages"][1]["content"][0]["content"]
    assert blocks[:3] == [image] * 3
    assert blocks[3:] == [{"type": "text", "text": "truncated: 3280 tokens dropped (2 of 5 images), refine your query"}]
    assert capped.cuts[0].truncation.original_tokens == 5 * 1640
    assert capped.cuts[0].truncation.kept_tokens == 3 * 1640


def test_cap_blocks_gives_each_block_with_the_place_it_came_from():
    header = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR" + (1568).to_bytes(4, "big") + (1000).to_bytes(4, "big") + b"\x08\x06\0\0\0"
    image = {"type": "image", "data": base64.b64encode(header).decode(), "mimeType": "image/png"}
    listing = "".join(f"src/module_{i}.rs\n" for i in range(3000))
    blocks = [{"type": "text", "text": listing}, image, image, image, image]
    capped = toc.Limits().cap_blocks("screenshot", blocks)
    # The images take 4 x 1640 tokens and do not decode, so cannot be scaled: the first three
    # stay, the last gives way, and the text is cut to what is left.
    assert capped.sources == [0, 1, 2, 3, None]
    assert capped.blocks[1:4] == [image] * 3
    assert capped.blocks[0]["text"].endswith("refine your query")
    assert capped.blocks[4]["text"] == "truncated: 1640 tokens dropped (1 of 4 images), refine your query"
    assert capped.truncation.kept_tokens <= 5000
    assert toc.Limits().cap_blocks("screenshot", blocks[1:2]) is None
    with pytest.raises(ValueError, match="the blocks are not a JSON list"):
        toc.Limits().cap_blocks("screenshot", {"type": "text"})
    assert toc.Limits(image_tokens="gemini").cap_blocks("screenshot", [image] * 3) is None
