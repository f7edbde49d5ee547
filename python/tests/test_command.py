"""The `tool-output-cap` command that `pip install` puts on the venv's PATH: the Rust command,
run inside the extension module."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import tool_output_cap as toc
from conftest import note_of

COMMAND = shutil.which("tool-output-cap")

pytestmark = pytest.mark.skipif(
    COMMAND is None, reason="tool-output-cap is not on PATH: install the package (pip install ./python)"
)

SERVER = textwrap.dedent(
    """
    import json, os, signal, sys
    listing = open(sys.argv[1]).read()
    if len(sys.argv) > 2:  # a server that outlives its stdin and ignores SIGTERM's default
        open(sys.argv[2], "w").write(str(os.getpid()))
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "listing", "version": "1"}}
        else:
            result = {"content": [{"type": "text", "text": listing}]}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    if len(sys.argv) > 2:
        import time
        time.sleep(60)
    """
)


def test_the_command_is_the_venvs():
    assert Path(COMMAND).parent == Path(sys.executable).parent
    version = subprocess.run([COMMAND, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "tool-output-cap 0.1.0"
    wrong = subprocess.run([COMMAND, "cap", "--keep", "middle"], capture_output=True, text=True)
    assert wrong.returncode == 2 and "--keep" in wrong.stderr


def test_cap_and_count(listing):
    capped = subprocess.run(
        [COMMAND, "cap", "--max-tokens", "300"], input=listing, capture_output=True, text=True, check=True
    ).stdout
    assert capped.endswith(" tokens dropped, refine your query\n")
    assert toc.count(capped) <= 300
    assert note_of(capped[:-1]) == toc.count(listing) - toc.cap(listing, 300).truncation.kept_tokens
    counted = subprocess.run([COMMAND, "count"], input=listing, capture_output=True, text=True, check=True)
    assert int(counted.stdout) == toc.count(listing)


def mcp(listing_file, *server_args):
    return subprocess.Popen(
        [COMMAND, "mcp", "--max-tokens", "1000", "--", sys.executable, "-c", SERVER, str(listing_file), *server_args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def send(proxy, id, method):
    proxy.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": {"name": "Glob"}}) + "\n")
    proxy.stdin.flush()
    return json.loads(proxy.stdout.readline())


def test_mcp_caps_a_servers_tool_result(tmp_path, listing):
    listing_file = tmp_path / "listing.txt"
    listing_file.write_text(listing)
    proxy = mcp(listing_file)
    assert send(proxy, 1, "initialize")["result"]["serverInfo"]["name"] == "listing"
    [block] = send(proxy, 2, "tools/call")["result"]["content"]
    assert toc.count(block["text"]) <= 1000
    note_of(block["text"])
    proxy.stdin.close()
    assert proxy.wait(timeout=10) == 0


def test_sigterm_to_the_command_ends_its_server(tmp_path, listing):
    listing_file, pid_file = tmp_path / "listing.txt", tmp_path / "server.pid"
    listing_file.write_text(listing)
    proxy = mcp(listing_file, pid_file)
    send(proxy, 1, "initialize")
    server = int(pid_file.read_text())
    started = time.monotonic()
    proxy.send_signal(signal.SIGTERM)
    proxy.wait(timeout=10)
    assert time.monotonic() - started < 4.0  # inside an SDK's own 2 s + 2 s
    with pytest.raises(ProcessLookupError):
        os.kill(server, 0)


WHEEL = os.environ.get("TOOL_OUTPUT_CAP_WHEEL")


@pytest.mark.skipif(WHEEL is None, reason="no $TOOL_OUTPUT_CAP_WHEEL: .ci/run builds the wheel")
def test_uvx_and_pipx_run_the_command_from_the_wheel(tmp_path):
    uv, pipx = shutil.which("uv"), shutil.which("pipx")
    if uv is None or pipx is None:
        pytest.skip("uv and pipx are in python/tests/requirements.txt")
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv"), "UV_TOOL_DIR": str(tmp_path / "tools")}
    uvx = subprocess.run(
        [uv, "tool", "run", "--offline", "--no-config", "--from", WHEEL, "tool-output-cap", "count"],
        input="hello world", capture_output=True, text=True, env=env, check=True,
    )
    assert uvx.stdout.strip() == str(toc.count("hello world"))
    env = {**os.environ, "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin")}
    subprocess.run([pipx, "install", WHEEL], capture_output=True, env=env, check=True)
    version = subprocess.run([str(tmp_path / "bin" / "tool-output-cap"), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == "tool-output-cap 0.1.0"
