"""Benchmark trio_mcp over Streamable HTTP against a raw httpx2 client and the official client.

First against a fast server, ``fast_server.js`` (a Node ``http`` responder
answering the 2026-07-28 echo exchange with plain JSON), so that the client is
the bottleneck: ``call_tool`` sequential and with 64 calls in flight, trio_mcp
against a raw client on Trio on httpx2's own pool and, when the older httpx
line is installed, on httpx's (the faster of the two in each repetition is
the baseline; the same raw client on trio_mcp's pool is shown beside them)
and the official client, with each one's CPU time per call; the ratios are
medians of the repetitions' ratios, measured in one run. Targets: at least 2
times the official client, at least 0.9 times the raw baseline. Skipped
without ``node``. ``--fast-only`` stops there.

Then all contenders talk to the same Python server, a separate process:
``tests/servers/http_server.py --era modern``, a small MCP server on Trio and
h11 (2026-07-28: stateless POSTs answered with JSON, or with one event for
the ``big`` tool). The metrics:

* ``call_tool`` sequential: one ``tools/call`` of ``echo`` at a time;
* ``call_tool`` 64 in flight: 64 tasks, each looping on calls;
* a 10 MiB result as one event: ``big`` answers one ``text/event-stream``
  event holding a 10 MiB text.

The contenders:

* **trio_mcp**: ``client.call_tool`` of ``trio_mcp.open_http_client(url)``,
  end to end (headers from the body, validation, models);
* **raw**: one ``httpx2.AsyncClient`` on Trio posting the same request bodies
  (the ``_meta`` envelope is a constant) with the modern headers, decoding
  the answer with orjson; no validation, no models. For the 10 MiB event it
  reads the whole body and decodes the event's data line;
* **official**: the official Python SDK's ``mcp.Client(url)`` (``mcp==2.3.0``,
  on asyncio), run by ``official_client.py --url`` in a subprocess, when an
  interpreter with ``mcp`` is found (see ``--official-python``).

Each metric is measured ``--reps`` times, contenders taking turns, and the
best rate of each is kept. Targets: trio_mcp at least 0.8 times raw on every
metric; the ratio to the official client is reported.

    python benchmarks/http_bench.py [--quick] [--reps N] [--official-python PATH] [--fast-only]

It needs the ``http`` extra (httpx2) and ``trio_mcp.open_http_client``; without
them it says so and exits cleanly.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import itertools
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import trio

import trio_mcp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVER = ROOT / "tests" / "servers" / "http_server.py"
OFFICIAL_CLIENT = HERE / "official_client.py"
MODERN = "2026-07-28"
WIDTH = 64
BIG = 10 * 1024 * 1024
TARGET = 0.8

if importlib.util.find_spec("trio_mcp") is None:  # a checkout, not installed
    sys.path.insert(0, str(ROOT))


def skip(reason: str) -> int:
    print(f"HTTP benchmarks skipped: {reason}")
    return 0


# ------------------------------------------------------------------ the server


class ServerProcess:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "--era", "modern"], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("LISTENING "):
            self.close()
            raise RuntimeError(f"the benchmark server did not start (it said {line!r})")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ------------------------------------------------------------------ workloads


async def sequential(call, calls: int) -> float:
    start = time.perf_counter()
    for i in range(calls):
        await call(f"call {i}")
    return calls / (time.perf_counter() - start)


async def in_flight(call, calls: int, width: int = WIDTH) -> float:
    per_task = calls // width

    async def worker() -> None:
        for i in range(per_task):
            await call(f"call {i}")

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(width):
            nursery.start_soon(worker)
    return per_task * width / (time.perf_counter() - start)


async def big(fetch, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await fetch()
    return calls / (time.perf_counter() - start)


# ------------------------------------------------------------------ contenders


class TrioMCP:
    name = "trio_mcp"

    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, text: str) -> str:
        result = await self.client.call_tool("echo", {"text": text})
        return result.text

    async def big(self) -> int:
        result = await self.client.call_tool("big", {"size": BIG})
        return len(result.text)


class RawHTTP:
    """The least code that does the same POSTs: httpx2 and orjson, nothing checked."""

    name = "raw"

    def __init__(self, http: Any, url: str) -> None:
        import orjson

        self.http = http
        self.url = url
        self.loads = orjson.loads
        self.dumps = orjson.dumps
        self.ids = itertools.count(1)
        self.meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        }

    def _request(self, name: str, arguments: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
        body = {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": self.meta},
        }
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": name,
        }
        return self.dumps(body), headers

    async def call(self, text: str) -> str:
        body, headers = self._request("echo", {"text": text})
        response = await self.http.post(self.url, content=body, headers=headers)
        return self.loads(response.content)["result"]["content"][0]["text"]

    async def big(self) -> int:
        body, headers = self._request("big", {"size": BIG})
        response = await self.http.post(self.url, content=body, headers=headers)
        content = response.content
        start = content.index(b"data: ") + 6
        message = self.loads(content[start : content.index(b"\n", start)])
        return len(message["result"]["content"][0]["text"])


class Official:
    """``official_client.py --serve --url``: the official client in a subprocess, driven by commands."""

    name = "official"

    def __init__(self, python: str, url: str) -> None:
        self.process = subprocess.Popen(
            [python, str(OFFICIAL_CLIENT), "--serve", "--width", str(WIDTH), "--url", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.about = self._read()
        if not self.about.get("ready"):
            raise RuntimeError(f"official_client.py did not start: {self.about!r}")

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("official_client.py exited early (its errors are above)")
        return json.loads(line)

    async def measure(self, metric: str, calls: int) -> float:
        return (await self.measure_cpu(metric, calls))[0]

    async def measure_cpu(self, metric: str, calls: int) -> tuple[float, float]:
        """The rate of one workload, and the CPU time per call of the official client's process."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{metric} {calls} {WIDTH}\n")
        self.process.stdin.flush()
        reply = await trio.to_thread.run_sync(self._read)
        return float(reply["rate"]), float(reply["cpu_per_call"])

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def find_official(config: argparse.Namespace) -> str | None:
    if config.no_official:
        return None
    candidates = [config.official_python] if config.official_python else [sys.executable]
    for python in candidates:
        found = subprocess.run(
            [python, "-c", "import mcp, importlib.metadata as m; print(m.version('mcp'))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if found.returncode == 0:
            return python
    print("The official client (mcp) is not installed here: its column says n/a (--official-python PATH).")
    return None


# ------------------------------------------------------------ the fast server

FAST_SERVER = HERE / "fast_server.js"
#: Targets against the fast server: trio_mcp's rate over the official client's, and over raw httpx2's.
FAST_TARGETS = {"official": 2.0, "raw": 0.9}


class NodeServer(ServerProcess):
    """``fast_server.js``: a Node ``http`` responder, so that the client is the bottleneck."""

    def __init__(self, node: str) -> None:
        self.version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
        self.process = subprocess.Popen([node, str(FAST_SERVER)], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("LISTENING "):
            self.close()
            raise RuntimeError(f"the fast server did not start (it said {line!r})")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"


async def timed(workload, call, calls: int) -> tuple[float, float]:
    """Run one workload; its rate and this process's CPU time per call."""
    gc.collect()
    start = time.process_time()
    rate = await workload(call, calls)
    done = calls if workload is sequential else calls // WIDTH * WIDTH
    return rate, (time.process_time() - start) / done


async def run_fast(config: argparse.Namespace, python: str | None) -> dict[str, Any] | None:
    """trio_mcp, raw clients (httpx2's pool, trio_mcp's pool, httpx's) and the official client, on the fast server.

    Returns ``{"rate": {metric: {contender: [per repetition]}}, "cpu": ...}``,
    or `None` without Node.js.
    """
    import httpx2

    from trio_mcp._transports._httpx_client import LeanTransport

    node = shutil.which("node")
    if node is None:
        print("Fast-server benchmarks skipped: Node.js (node) is not on PATH.")
        return None
    sizes = (
        {"sequential": 300, "in_flight": 2_560}
        if config.quick
        else {"sequential": 2_000, "in_flight": 12_800}
    )
    workloads = {"sequential": sequential, "in_flight": in_flight}
    server = NodeServer(node)
    official = None
    rates: dict[str, dict[str, list[float]]] = {metric: {} for metric in workloads}
    cpu: dict[str, dict[str, list[float]]] = {metric: {} for metric in workloads}
    try:
        if python is not None:
            official = Official(python, server.url)
        limits = httpx2.Limits(max_connections=WIDTH + 8, max_keepalive_connections=WIDTH + 8)
        timeout = httpx2.Timeout(10.0, read=None)
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(
                trio_mcp.open_client(trio_mcp.HTTPTarget(server.url, trust_env=False))
            )
            stock = await stack.enter_async_context(
                httpx2.AsyncClient(trust_env=False, limits=limits, timeout=timeout)
            )
            lean = await stack.enter_async_context(
                httpx2.AsyncClient(trust_env=False, timeout=timeout, transport=LeanTransport(trust_env=False))
            )
            ours = TrioMCP(client)
            raw_stock, raw_lean = RawHTTP(stock, server.url), RawHTTP(lean, server.url)
            raw_stock.name, raw_lean.name = "raw httpx2", "raw httpx2, lean pool"
            contenders: list[Any] = [ours, raw_stock, raw_lean]
            if importlib.util.find_spec("httpx") is not None:
                # The older line too: the baseline is the faster of the two.
                import httpx

                old = await stack.enter_async_context(
                    httpx.AsyncClient(
                        trust_env=False,
                        limits=httpx.Limits(max_connections=WIDTH + 8, max_keepalive_connections=WIDTH + 8),
                        timeout=httpx.Timeout(10.0, read=None),
                    )
                )
                raw_old = RawHTTP(old, server.url)
                raw_old.name = "raw httpx"
                contenders.append(raw_old)
            for contender in contenders:
                if await contender.call("héllo") != "héllo":
                    raise RuntimeError(f"{contender.name} does not round-trip")
                await sequential(contender.call, 100)
                await in_flight(contender.call, 2 * WIDTH)
            print(f"\nthe fast server (Node {server.version} http, plain JSON): {server.url}")
            if official is not None:
                contenders.append(official)
            for rep in range(config.reps):
                order = contenders if rep % 2 == 0 else contenders[::-1]
                for contender in order:
                    for metric, workload in workloads.items():
                        if contender is official:
                            rate, per_call = await official.measure_cpu(metric, sizes[metric])
                        else:
                            rate, per_call = await timed(workload, contender.call, sizes[metric])
                        rates[metric].setdefault(contender.name, []).append(rate)
                        cpu[metric].setdefault(contender.name, []).append(per_call)
    finally:
        if official is not None:
            official.close()
        server.close()
    return {"rate": rates, "cpu": cpu}


def report_fast(results: dict[str, Any]) -> bool:
    """Print the fast server's table; whether every target was met."""
    labels = {"sequential": "call_tool sequential", "in_flight": f"call_tool {WIDTH} in flight"}
    ok = True
    print(
        f"\n{'metric':24} {'vs':22} {'ratio':>7} {'range':>13} {'target':>7} {'':6} "
        f"{'cpu/call ours':>13} {'theirs':>8} {'cpu ratio':>9}"
    )
    for metric, label in labels.items():
        rates, cpu = results["rate"][metric], results["cpu"][metric]
        ours = rates["trio_mcp"]
        # The strictest raw baseline: whichever raw variant did better in each repetition.
        raw_names = [name for name in rates if name.startswith("raw")]
        # The baseline: a raw client on its library's own pool, httpx2 or httpx,
        # whichever did better in each repetition (the lean pool is trio_mcp's).
        stock = [name for name in raw_names if "lean" not in name]
        best_raw = [max(rates[name][i] for name in stock) for i in range(len(ours))]
        best_raw_cpu = [min(cpu[name][i] for name in stock) for i in range(len(ours))]
        rows: list[tuple[str, list[float], list[float], float | None]] = [
            ("raw (faster of both)", best_raw, best_raw_cpu, FAST_TARGETS["raw"]),
        ]
        rows += [(name, rates[name], cpu[name], None) for name in raw_names]
        if "official" in rates:
            rows.append(("official (mcp)", rates["official"], cpu["official"], FAST_TARGETS["official"]))
        for name, theirs, their_cpu, target in rows:
            ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
            ratio = statistics.median(ratios)
            cpu_ratio = statistics.median(b / a for a, b in zip(cpu["trio_mcp"], their_cpu, strict=True))
            verdict = ""
            if target is not None:
                met = ratio >= target
                ok &= met
                verdict = "met" if met else "MISSED"
            print(
                f"{label:24} {name:22} {ratio:6.2f}x {min(ratios):5.2f}..{max(ratios):5.2f} "
                f"{f'>= {target}' if target else '':>7} {verdict:6} "
                f"{statistics.median(cpu['trio_mcp']) * 1e3:10.3f} ms {statistics.median(their_cpu) * 1e3:5.3f} ms "
                f"{cpu_ratio:8.2f}x"
            )
    print(
        "\nratio: trio_mcp's rate over theirs, median of the repetitions' ratios (range: min..max);"
        "\ncpu ratio: their CPU time per call over trio_mcp's (above 1: trio_mcp spends less)."
    )
    print(f"fast-server targets: {'met' if ok else 'NOT met'}")
    return ok


# ------------------------------------------------------------------ the run


async def run(config: argparse.Namespace) -> int:
    import httpx2

    python = find_official(config)
    fast = await run_fast(config, python)
    if fast is not None:
        report_fast(fast)
    if config.fast_only:
        return 0
    sizes = {"sequential": 200, "in_flight": 1_280, "big": 3} if config.quick else {}
    sizes = {"sequential": 2_000, "in_flight": 12_800, "big": 10} | sizes
    server = ServerProcess()
    official = None
    rates: dict[str, dict[str, float]] = {}
    print(f"\nthe Python server (Trio and h11: it is the bottleneck): {server.url}")
    try:
        if python is not None:
            official = Official(python, server.url)
        limits = httpx2.Limits(max_connections=WIDTH + 8, max_keepalive_connections=WIDTH + 8)
        timeout = httpx2.Timeout(10.0, read=None)
        async with (
            trio_mcp.open_client(trio_mcp.HTTPTarget(server.url, trust_env=False)) as client,
            httpx2.AsyncClient(trust_env=False, limits=limits, timeout=timeout) as http,
        ):
            ours, raw = TrioMCP(client), RawHTTP(http, server.url)
            for contender in (ours, raw):
                if await contender.call("héllo") != "héllo" or await contender.big() != BIG:
                    raise RuntimeError(f"{contender.name} does not round-trip")
                await in_flight(contender.call, 2 * WIDTH)
            print(f"server: {server.url} ({MODERN}); trio_mcp negotiated {client.protocol_version}")
            if official is not None:
                print(f"official: mcp {official.about.get('mcp')} ({official.about.get('protocol_version')})")
            for _ in range(config.reps):
                for contender in (ours, raw):
                    gc.collect()
                    got = {
                        "sequential": await sequential(contender.call, sizes["sequential"]),
                        "in_flight": await in_flight(contender.call, sizes["in_flight"]),
                        "big": await big(contender.big, sizes["big"]),
                    }
                    best = rates.setdefault(contender.name, {})
                    for metric, rate in got.items():
                        best[metric] = max(best.get(metric, 0.0), rate)
                if official is not None:
                    best = rates.setdefault("official", {})
                    for metric in ("sequential", "in_flight"):
                        rate = await official.measure(metric, sizes[metric])
                        best[metric] = max(best.get(metric, 0.0), rate)
    finally:
        if official is not None:
            official.close()
        server.close()
    return report(rates)


def report(rates: dict[str, dict[str, float]]) -> int:
    labels = {
        "sequential": "call_tool sequential (calls/s)",
        "in_flight": f"call_tool {WIDTH} in flight (calls/s)",
        "big": "10 MiB result, one event (calls/s)",
    }
    ok = True
    print(f"\n{'metric':40} {'trio_mcp':>10} {'raw':>10} {'official':>10} {'vs raw':>8} {'vs official':>12}")
    for metric, label in labels.items():
        ours = rates["trio_mcp"][metric]
        raw = rates["raw"][metric]
        official = rates.get("official", {}).get(metric)
        vs_raw = ours / raw
        ok &= vs_raw >= TARGET
        theirs = f"{official:.1f}" if official else "n/a"
        vs_official = f"{ours / official:.2f}x" if official else "n/a"
        print(f"{label:40} {ours:10.1f} {raw:10.1f} {theirs:>10} {vs_raw:7.2f}x {vs_official:>12}")
    print(f"\ntarget: trio_mcp >= {TARGET}x raw on every metric: {'met' if ok else 'NOT met'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts, one repetition")
    parser.add_argument("--reps", type=int, help="repetitions of each metric (3; --quick: 1)")
    parser.add_argument("--official-python", help="an interpreter that has the official client (mcp)")
    parser.add_argument("--no-official", action="store_true", help="leave the official client out")
    parser.add_argument("--fast-only", action="store_true", help="only the fast server's benchmarks")
    config, _ = parser.parse_known_args(argv)
    if config.reps is None:
        config.reps = 1 if config.quick else 3
    if importlib.util.find_spec("httpx2") is None:
        return skip("httpx2 is not installed (pip install 'trio-mcp[http]')")
    if not hasattr(trio_mcp, "open_http_client"):
        return skip("this trio_mcp has no open_http_client")
    return trio.run(run, config)


if __name__ == "__main__":
    sys.exit(main())
