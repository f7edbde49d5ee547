"""What the LiteLLM guardrail adds to a request, in one run, as ratios (this machine is shared and
noisy): the same 1 MB history sent to two real LiteLLM proxies on 127.0.0.1, one with
python/README.md's config.yaml and one with that config without its `guardrails` section, both
in front of one fake Anthropic API that answers at once. Requests alternate between the two, so
that they share the machine's noise.

- a history sent again (each result cut before, taken from the guardrail's cache), as every
  turn of a session sends it;
- a history whose results are all new (each request's differ), the most the guardrail does;
- the peak RSS (VmHWM) of each proxy after both;
- and the guardrail's hook alone, called in this process on the same two histories: where the
  time goes.

    python python/bench/litellm_proxy.py
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

REPO = Path(__file__).resolve().parents[2]
ROUNDS = 15
RESULTS, RESULT_BYTES = 8, 125_000  # 8 results of the incident's size: 1 MB
KEY = "sk-bench"
ANSWER = json.dumps({
    "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
    "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1},
}).encode()


class Model(http.server.BaseHTTPRequestHandler):
    """A model API that reads the request and answers at once."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args) -> None:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proxy:
    """A LiteLLM proxy started with `config`, stopped with its process group."""

    def __init__(self, home: Path, config: str, name: str, model_url: str) -> None:
        (home / f"{name}.yaml").write_text(config)
        self.port = free_port()
        env = {**os.environ, "HOME": str(home), "LITELLM_MASTER_KEY": KEY,
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ANTHROPIC_API_KEY": "sk-bench",
               "ANTHROPIC_API_BASE": model_url}
        env.pop("TOOL_OUTPUT_CAP_MANIFEST", None)  # the defaults: 5000 tokens
        litellm = Path(sys.executable).parent / "litellm"
        self.process = subprocess.Popen(
            [str(litellm), "--config", f"{name}.yaml", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=home, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        for _ in range(480):
            try:
                self.post("/health/liveliness", None, "GET")
                return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"the {name} proxy did not start")

    def post(self, route: str, body: bytes | None, method: str = "POST") -> bytes:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {"content-type": "application/json", "authorization": f"Bearer {KEY}"}
        connection.request(method, route, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        connection.close()
        if response.status != 200:
            raise OSError(f"{route}: {response.status} {answer[:300]!r}")
        return answer

    def peak_rss_mb(self) -> float:
        """The peak RSS of the proxy's processes, summed, in MB."""
        pids = [self.process.pid] + [
            int(p) for p in subprocess.run(["pgrep", "-s", str(self.process.pid)],
                                           capture_output=True, text=True).stdout.split()
            if int(p) != self.process.pid]
        total = 0
        for pid in pids:
            status = Path(f"/proc/{pid}/status").read_text()
            total += int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
        return total / 1024

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=30)


def history(listing: str, tag: str) -> bytes:
    """A Messages request whose history holds RESULTS Glob results of RESULT_BYTES each, their
    first line `tag`."""
    messages = [{"role": "user", "content": "List the files."}]
    for i in range(RESULTS):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "Glob", "input": {"pattern": "*"}}]})
        result = f"{tag} {i}\n" + listing[i * 1000:][:RESULT_BYTES]
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": result}]})
    return json.dumps({"model": "claude-bench", "max_tokens": 100, "messages": messages}).encode()


def timed(proxy: Proxy, body: bytes) -> float:
    started = time.perf_counter()
    proxy.post("/v1/messages", body)
    return time.perf_counter() - started


def hook_alone(sent_again: bytes, listing: str) -> None:
    """The median time of the guardrail's hook on the history sent again, and on new ones."""
    import asyncio
    from types import SimpleNamespace

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from tool_output_cap.litellm import ToolOutputCapGuardrail

    guard = ToolOutputCapGuardrail(guardrail_name="bench", event_hook="pre_call", default_on=True)
    key = SimpleNamespace(request_route=None)

    def hook(body: bytes) -> float:
        data = json.loads(body)
        started = time.perf_counter()
        asyncio.run(guard.async_pre_call_hook(key, None, data, "anthropic_messages"))
        return time.perf_counter() - started

    hook(sent_again)
    again = statistics.median(hook(sent_again) for _ in range(ROUNDS))
    new = statistics.median(hook(history(listing, f"hook {n}")) for n in range(ROUNDS))
    print(f"  the hook alone, in this process: {again * 1000:.1f} ms sent again, "
          f"{new * 1000:.1f} ms all new")


def main() -> None:
    import conftest

    readme = (REPO / "python/README.md").read_text()
    config = re.search(r"```yaml\n# config\.yaml\n(.*?)```", readme, re.S).group(1)
    plain = config[: config.index("\nguardrails:")] + "\n"
    listing = conftest.usr_listing()
    sent_again = history(listing, "a history")
    print(f"request: {len(sent_again)} bytes, {RESULTS} Glob results of {RESULT_BYTES} bytes, "
          f"each cut to 5000 tokens")

    model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    model_url = f"http://127.0.0.1:{model.server_address[1]}"
    with tempfile.TemporaryDirectory() as home:
        capped = Proxy(Path(home), config, "capped", model_url)
        try:
            bare = Proxy(Path(home), plain, "bare", model_url)
        except BaseException:
            capped.stop()
            model.shutdown()
            raise
        try:
            for proxy in (capped, bare):  # warm: routes, connections, and the cut cache
                for _ in range(2):
                    timed(proxy, sent_again)
            again = {"capped": [], "bare": []}
            new = {"capped": [], "bare": []}
            for n in range(ROUNDS):
                fresh = history(listing, f"request {n}")
                for name, proxy in (("capped", capped), ("bare", bare)):
                    again[name].append(timed(proxy, sent_again))
                    new[name].append(timed(proxy, fresh))
            for what, times in (("sent again", again), ("all new", new)):
                with_, without = (statistics.median(times[k]) for k in ("capped", "bare"))
                print(f"{what:>10}: {with_ * 1000:7.1f} ms with the guardrail, {without * 1000:7.1f} ms "
                      f"without: {(with_ - without) * 1000:+.1f} ms, ratio {with_ / without:.2f}")
            rss = capped.peak_rss_mb(), bare.peak_rss_mb()
            print(f"  peak RSS: {rss[0]:.0f} MB with the guardrail, {rss[1]:.0f} MB without: "
                  f"ratio {rss[0] / rss[1]:.2f}")
        finally:
            capped.stop()
            bare.stop()
            model.shutdown()
    hook_alone(sent_again, listing)


if __name__ == "__main__":
    main()
