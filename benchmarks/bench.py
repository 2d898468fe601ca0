"""Benchmark trio_mcp against a raw Trio baseline and the official Python MCP client.

Run ``python benchmarks/bench.py`` (or ``nox -s bench``); ``--quick`` for a
smoke run, ``--json PATH`` to keep the numbers. See benchmarks/README.md.

The machine may be shared and noisy, so only RATIOS measured in one run are
reported. Two layers are measured: trio_mcp's stdio transport
(``StdioTransport.request``) and its client (``client.call_tool``, end to
end). The contenders (trio_mcp, two variants of the raw baseline, see
raw_baseline.py, and, for ``call_tool``, the official ``mcp`` client in a
subprocess, see official_client.py) each talk to their own copy of
echo_server.py, all opened at once; every metric is measured in several
repetitions, with the contenders taking turns (the order reverses on every
repetition). A ratio is the median over repetitions of trio_mcp's result
divided by another contender's result of the same repetition: against the
raw variant that did better on that metric, and against the official client.
Peak memory is measured in fresh subprocesses, one contender each, so that
peaks do not mix.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import trio

try:
    import trio_mcp
except ImportError:  # run from a checkout without installing: use the checkout
    sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
    import trio_mcp

from raw_baseline import WRITE_MODES, open_raw_client

HERE = Path(__file__).resolve().parent
SERVER = HERE / "echo_server.py"
SERVER_ARGV = [sys.executable, str(SERVER)]
OFFICIAL_CLIENT = HERE / "official_client.py"

OURS = "trio_mcp"
RAW_PREFIX = "raw"
OFFICIAL = "official"
#: The start-up metric's raw reference: benchmarks/raw_cli.py, on Trio.
RAW_CLI = "raw (trio)"
#: The release of the official client that the targets are set against (noxfile.py installs it).
OFFICIAL_PIN = "2.3.0"
MIB = 1024 * 1024

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
CallTool = Callable[[str, dict[str, Any]], Awaitable[Any]]
#: Runs one workload once; returns its rate and the CPU time per call it cost.
Measure = Callable[[], Awaitable[tuple[float, float]]]

#: The targets, as ratios of trio_mcp to the raw baseline.
TARGETS = {
    "sequential": 0.85,
    "in_flight": 0.70,
    "big": 0.80,
    "call_tool_sequential": 0.70,
    "call_tool_in_flight": 0.50,
    "memory": 2.0,  # trio_mcp's peak RSS growth over raw's: at most this
    "startup": 1.5,  # a whole `trio-mcp call` process's wall time over raw's: at most this
}
#: The targets of the call_tool metrics, as ratios of trio_mcp to the official client.
OFFICIAL_TARGETS = {
    "call_tool_sequential": 3.0,
    "call_tool_in_flight": 10.0,
}


# ------------------------------------------------------------------ workloads


async def sequential(request: Request, calls: int) -> float:
    """One request at a time; returns calls per second."""
    start = time.perf_counter()
    for i in range(calls):
        await request("echo", {"i": i})
    return calls / (time.perf_counter() - start)


async def in_flight(request: Request, calls: int, width: int) -> float:
    """``width`` tasks each looping on requests; returns calls per second."""
    per_task = calls // width

    async def worker() -> None:
        for i in range(per_task):
            await request("echo", {"i": i})

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(width):
            nursery.start_soon(worker)
    return per_task * width / (time.perf_counter() - start)


async def big(request: Request, size: int, calls: int) -> float:
    """Responses of ``size`` bytes of data, one at a time; returns MiB/s."""
    start = time.perf_counter()
    for _ in range(calls):
        result = await request("big", {"size": size})
        if len(result["data"]) != size:
            raise RuntimeError(f"a 'big' answer had {len(result['data'])} bytes, not {size}")
    return calls * size / (time.perf_counter() - start) / MIB


async def hold(request: Request, count: int) -> None:
    """``count`` requests at once, that the server answers only when it holds them all."""

    async def one() -> None:
        await request("hold", {"n": count})

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(one)


async def check(request: Request) -> None:
    """Make sure that a contender really does round trips before timing it."""
    params = {"text": "héllo\u2028", "n": [1, 2.5, None, True]}
    result = await request("echo", params)
    if result != params:
        raise RuntimeError(f"the echo server answered {result!r} to {params!r}")


# The call_tool workloads. official_client.py runs the same ones (same tool,
# same arguments, same counts) on the official client.


async def call_tool_sequential(call_tool: CallTool, calls: int) -> float:
    """One tool call at a time; returns calls per second."""
    start = time.perf_counter()
    for i in range(calls):
        await call_tool("echo", {"text": f"call {i}"})
    return calls / (time.perf_counter() - start)


async def call_tool_in_flight(call_tool: CallTool, calls: int, width: int) -> float:
    """``width`` tasks each looping on tool calls; returns calls per second."""
    per_task = calls // width

    async def worker() -> None:
        for i in range(per_task):
            await call_tool("echo", {"text": f"call {i}"})

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(width):
            nursery.start_soon(worker)
    return per_task * width / (time.perf_counter() - start)


async def check_call_tool(call_tool: CallTool, text_of: Callable[[Any], str]) -> None:
    """Make sure that a contender really calls the tool before timing it."""
    text = "héllo\u2028"
    result = await call_tool("echo", {"text": text})
    if text_of(result) != text:
        raise RuntimeError(f"the echo tool answered {result!r} to {text!r}")


# ------------------------------------------------------- the official client


class OfficialClient:
    """bench.py's end of ``official_client.py --serve``, running in a subprocess.

    The subprocess opens the official client on its own echo server and
    warms it up; then each `measure` sends it one command line and reads
    back one JSON line with the rate and that process's CPU time per call.
    """

    def __init__(self, process: trio.Process, about: dict[str, Any]) -> None:
        self._process = process
        self.about = about

    @classmethod
    async def start(cls, python: str, width: int) -> OfficialClient:
        argv = [python, str(OFFICIAL_CLIENT), "--serve", "--width", str(width), "--", *SERVER_ARGV]
        process = await trio.lowlevel.open_process(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_child_env()
        )
        client = cls(process, {})
        try:
            with trio.fail_after(120):
                about = await client._read()
        except BaseException:
            with trio.CancelScope(shield=True):
                await client.aclose()
            raise
        if not about.get("ready"):
            await client.aclose()
            raise RuntimeError(f"official_client.py did not start: {about!r}")
        about.pop("ready")
        client.about = about
        return client

    async def _read(self) -> dict[str, Any]:
        stdout = self._process.stdout
        assert stdout is not None
        data = b""
        while not data.endswith(b"\n"):
            chunk = await stdout.receive_some(65536)
            if not chunk:
                raise RuntimeError("official_client.py exited early (its errors are above)")
            data += chunk
        reply: dict[str, Any] = json.loads(data)
        return reply

    async def measure(self, metric: str, calls: int, width: int) -> tuple[float, float]:
        stdin = self._process.stdin
        assert stdin is not None
        await stdin.send_all(f"{metric} {calls} {width}\n".encode())
        with trio.fail_after(600):
            reply = await self._read()
        return reply["rate"], reply["cpu_per_call"]

    async def aclose(self) -> None:
        process = self._process
        with trio.CancelScope(shield=True):
            assert process.stdin is not None
            assert process.stdout is not None
            await process.stdin.aclose()  # end of commands: it closes its client and exits
            with trio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.stdout.aclose()


def find_official(config: argparse.Namespace) -> str | None:
    """Return an interpreter that has the official client (``mcp``), or None.

    ``--official-python`` names one; by default it is this interpreter, as in
    ``nox -s bench``, which installs the pinned release beside trio_mcp.
    """
    if config.no_official:
        return None
    python = config.official_python or sys.executable
    code = "import importlib.metadata as m, mcp; print(m.version('mcp'))"
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    except OSError as exc:
        done = None
        problem = str(exc)
    else:
        problem = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
    if done is None or done.returncode != 0:
        if config.official_python:
            raise SystemExit(f"--official-python {python}: cannot import mcp ({problem})")
        print(
            f"The official client is not installed here (mcp=={OFFICIAL_PIN}; `nox -s bench` installs it):"
            " its metrics are skipped. Use --official-python PATH to name an interpreter that has it.",
            flush=True,
        )
        return None
    version = done.stdout.strip()
    if version != OFFICIAL_PIN:
        print(f"Note: the official client is mcp {version}; the targets are set against {OFFICIAL_PIN}.")
    return python


# ----------------------------------------------------------- throughput run


def in_process(workload: Callable[[Any], Awaitable[float]], target: Any, calls: int) -> Measure:
    """Time ``workload(target)`` in this process: its rate, and this process's CPU time per call."""

    async def measure() -> tuple[float, float]:
        gc.collect()
        start = time.process_time()
        rate = await workload(target)
        return rate, (time.process_time() - start) / calls

    return measure


def _text(result: Any) -> str:
    """The text of a tool's answer: a `trio_mcp.CallToolResult`, or the raw result dict."""
    return result["content"][0]["text"] if isinstance(result, dict) else result.text


async def throughput(config: argparse.Namespace, official_python: str | None) -> dict[str, Any]:
    """Measure every throughput metric for every contender, taking turns.

    Returns ``{"rate": ..., "cpu": ..., "official": ..., "client": ...}``;
    the first two are ``{metric: {contender: samples}}``: the rates, and the
    CPU time per call in seconds (user and system, so the client's own cost,
    syscalls included; it is much less sensitive to other load on the
    machine than the rates are) of the process the contender runs in: this
    one, or the official client's own. ``official`` says which official
    client ran (None: none), ``client`` what trio_mcp's client negotiated.
    """
    width = config.width
    transport_workloads: dict[str, tuple[Callable[[Request], Awaitable[float]], int]] = {
        "sequential": (lambda request: sequential(request, config.sequential), config.sequential),
        "in_flight": (
            lambda request: in_flight(request, config.in_flight, width),
            config.in_flight // width * width,
        ),
        "big": (lambda request: big(request, config.big_size, config.big_calls), config.big_calls),
    }
    call_tool_workloads: dict[str, tuple[Callable[[CallTool], Awaitable[float]], int]] = {
        "call_tool_sequential": (
            lambda call_tool: call_tool_sequential(call_tool, config.call_sequential),
            config.call_sequential,
        ),
        "call_tool_in_flight": (
            lambda call_tool: call_tool_in_flight(call_tool, config.call_in_flight, width),
            config.call_in_flight // width * width,
        ),
    }
    # The same workloads, as commands to official_client.py.
    official_commands = {
        "call_tool_sequential": ("sequential", config.call_sequential),
        "call_tool_in_flight": ("in_flight", config.call_in_flight),
    }
    async with (
        open_raw_client(SERVER_ARGV, "send_all") as raw_send_all,
        open_raw_client(SERVER_ARGV, "os.write") as raw_os_write,
        trio_mcp.open_stdio_transport(sys.executable, [str(SERVER)]) as wire,
        trio_mcp.open_stdio_client(sys.executable, [str(SERVER)]) as client,
    ):
        raws = [
            (f"{RAW_PREFIX} ({WRITE_MODES[0]})", raw_send_all),
            (f"{RAW_PREFIX} ({WRITE_MODES[1]})", raw_os_write),
        ]
        requests: list[tuple[str, Request]] = [(name, raw.request) for name, raw in raws]
        requests.append((OURS, wire.request))
        callers: list[tuple[str, CallTool]] = [(name, raw.call_tool) for name, raw in raws]
        callers.append((OURS, client.call_tool))
        for _, request in requests:
            await check(request)
            await sequential(request, 200)
            await in_flight(request, 2 * width, width)
            await big(request, config.big_size, 1)
        for _, call_tool in callers:
            await check_call_tool(call_tool, _text)
            await call_tool_sequential(call_tool, 200)
            await call_tool_in_flight(call_tool, 2 * width, width)
        contenders: dict[str, list[tuple[str, Measure]]] = {}
        for metric, (workload, calls) in transport_workloads.items():
            contenders[metric] = [(name, in_process(workload, request, calls)) for name, request in requests]
        for metric, (workload, calls) in call_tool_workloads.items():
            contenders[metric] = [
                (name, in_process(workload, call_tool, calls)) for name, call_tool in callers
            ]

        samples: dict[str, dict[str, list[float]]] = {}
        cpu: dict[str, dict[str, list[float]]] = {}
        official = await OfficialClient.start(official_python, width) if official_python else None
        try:
            if official is not None:
                for metric, (command, calls) in official_commands.items():
                    contenders[metric].append((OFFICIAL, partial(official.measure, command, calls, width)))
            for metric, runs in contenders.items():
                samples[metric] = {name: [] for name, _ in runs}
                cpu[metric] = {name: [] for name, _ in runs}
                for rep in range(config.reps):
                    for name, measure in runs if rep % 2 == 0 else runs[::-1]:
                        rate, per_call = await measure()
                        samples[metric][name].append(rate)
                        cpu[metric][name].append(per_call)
        finally:
            if official is not None:
                await official.aclose()
        negotiated = {"era": client.era, "protocol_version": client.protocol_version}
    return {
        "rate": samples,
        "cpu": cpu,
        "official": None if official is None else {"python": official_python, **official.about},
        "client": negotiated,
    }


def summarise(samples: dict[str, list[float]]) -> dict[str, Any]:
    """Pick the better raw variant and pair trio_mcp's samples with its samples.

    Where the official client ran too, ``official`` holds the ratios of
    trio_mcp to it, paired the same way.
    """
    raws = {name: values for name, values in samples.items() if name.startswith(RAW_PREFIX)}
    reference = max(raws, key=lambda name: statistics.median(raws[name]))
    ratios = [ours / raw for ours, raw in zip(samples[OURS], raws[reference], strict=True)]
    summary: dict[str, Any] = {
        "reference": reference,
        "medians": {name: statistics.median(values) for name, values in samples.items()},
        "ratios": ratios,
        "ratio": statistics.median(ratios),
    }
    if OFFICIAL in samples:
        official = [ours / theirs for ours, theirs in zip(samples[OURS], samples[OFFICIAL], strict=True)]
        summary["official"] = {"ratios": official, "ratio": statistics.median(official)}
    return summary


# ----------------------------------------------------------------- memory


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the peak resident set size to the current one (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return True


def _maxrss_kib() -> int:
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return value // 1024 if sys.platform == "darwin" else value


def memory_child(name: str, count: int) -> dict[str, Any]:
    """Measure, in this fresh process, the peak RSS growth of ``count`` requests in flight."""

    async def run() -> dict[str, Any]:
        if name == OURS:
            client: Any = trio_mcp.open_stdio_transport(sys.executable, [str(SERVER)])
        else:
            client = open_raw_client(SERVER_ARGV)
        async with client as opened:
            request = opened.request
            await check(request)
            await hold(request, min(count, 256))
            gc.collect()
            exact = _reset_peak()
            before = (_status_kib("VmRSS") if exact else None) or _maxrss_kib()
            start = time.perf_counter()
            await hold(request, count)
            elapsed = time.perf_counter() - start
            peak = (_status_kib("VmHWM") if exact else None) or _maxrss_kib()
        return {
            "contender": name,
            "count": count,
            "before_kib": before,
            "peak_kib": peak,
            "growth_kib": max(0, peak - before),
            "seconds": elapsed,
            "exact": exact,
        }

    return trio.run(run)


def _child_env() -> dict[str, str]:
    """Our environment, with this trio_mcp first on the path of child interpreters."""
    root = str(Path(trio_mcp.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def memory(config: argparse.Namespace) -> dict[str, Any]:
    """Run the memory measurement in fresh subprocesses, taking turns."""
    names = [RAW_PREFIX, OURS]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    env = _child_env()
    for rep in range(config.memory_reps):
        for name in names if rep % 2 == 0 else names[::-1]:
            argv = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--memory-child",
                name,
                "--memory-count",
                str(config.memory_count),
            ]
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"the memory run of {name} failed:\n{done.stderr}")
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    growth = {name: statistics.median(run["growth_kib"] for run in runs[name]) for name in names}
    return {
        "runs": runs,
        "growth_kib": growth,
        "ratio": growth[OURS] / growth[RAW_PREFIX] if growth[RAW_PREFIX] else float("inf"),
        "exact": all(run["exact"] for name in names for run in runs[name]),
    }


# ------------------------------------------------------------ import time


def import_times(reps: int) -> dict[str, Any]:
    """Time imports in fresh interpreters, taking turns.

    ``import trio_mcp`` alone loads the exceptions only; the client (and
    with it Trio, the transport and the models) loads on first use, which
    ``from trio_mcp import open_stdio_client`` measures.
    """
    env = _child_env()
    statements = {
        "trio": "import trio",
        "trio_mcp": "import trio_mcp",
        "client": "from trio_mcp import open_stdio_client",
    }
    times: dict[str, list[float]] = {name: [] for name in statements}
    names = list(statements)
    for rep in range(reps):
        for name in names if rep % 2 == 0 else names[::-1]:
            code = f"import time\nt = time.perf_counter()\n{statements[name]}\nprint(time.perf_counter() - t)"
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True
            )
            times[name].append(float(done.stdout.strip()))
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {"samples": times, "medians": medians, "extra": medians["client"] - medians["trio"]}


# ------------------------------------------------------------ start-up

#: The official client doing the same one call, as a whole process (for reference).
OFFICIAL_ONE_CALL = """
import sys
import anyio
from mcp import Client, StdioServerParameters

async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["-m", "trio_mcp.demo"])
    async with Client(server) as client:
        result = await client.call_tool("echo", {"text": "hi"})
    print(result.content[0].text)

anyio.run(main)
"""


def startup_commands(official_python: str | None) -> dict[str, list[str]]:
    """The whole-process contenders of the start-up metric; each prints ``hi``."""
    raw = str(Path(__file__).with_name("raw_cli.py"))
    commands = {
        OURS: [sys.executable, "-m", "trio_mcp", "call", "echo", "text=hi"],
        RAW_CLI: [sys.executable, raw],
        "raw (stdlib)": [sys.executable, raw, "--stdlib"],
    }
    if official_python is not None:
        commands["official"] = [official_python, "-c", OFFICIAL_ONE_CALL, sys.executable]
    return commands


def startup_times(reps: int, official_python: str | None) -> dict[str, Any]:
    """Time whole ``call echo`` processes against the demo server, taking turns."""
    env = _child_env()
    commands = startup_commands(official_python)
    names = list(commands)
    times: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(reps + 1):
        for name in names if rep % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            done = subprocess.run(
                commands[name], env=env, capture_output=True, text=True, timeout=120, check=False
            )
            elapsed = time.perf_counter() - start
            if done.returncode != 0 or done.stdout.strip() != "hi":
                raise RuntimeError(
                    f"{name} failed ({done.returncode}): {done.stdout!r} {done.stderr[-500:]!r}"
                )
            if rep:  # the first round warms the file cache and .pyc files
                times[name].append(elapsed)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratios = [ours / raw for ours, raw in zip(times[OURS], times[RAW_CLI], strict=True)]
    return {"samples": times, "medians": medians, "ratio": statistics.median(ratios), "ratios": ratios}


# ------------------------------------------------------------------ report


def _rate(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if value >= 100 else f"{value:,.1f} {unit}"


def _labels(config: argparse.Namespace) -> dict[str, tuple[str, str]]:
    in_flight = config.in_flight // config.width * config.width
    call_in_flight = config.call_in_flight // config.width * config.width
    return {
        "sequential": (f"sequential round trips (n={config.sequential})", "calls/s"),
        "in_flight": (f"{config.width} in flight ({in_flight} calls)", "calls/s"),
        "big": (f"{config.big_size // MIB} MiB response (x{config.big_calls} per rep)", "MiB/s"),
        "call_tool_sequential": (f"call_tool sequential (n={config.call_sequential})", "calls/s"),
        "call_tool_in_flight": (f"call_tool, {config.width} in flight ({call_in_flight} calls)", "calls/s"),
    }


def report(config: argparse.Namespace, results: dict[str, Any]) -> bool:
    """Print the table; return whether every target was met (and measured)."""
    rows: list[tuple[str, ...]] = []
    missed = unmeasured = 0
    labels = _labels(config)

    def row(label: str, against: str, theirs: str, ours: str, ratio: float, target: str, met: bool) -> None:
        nonlocal missed
        missed += not met
        rows.append((label, against, theirs, ours, f"{ratio:.2f}x", target, "ok" if met else "MISS"))

    for metric, (label, unit) in labels.items():
        summary = results["throughput"][metric]
        medians = summary["medians"]
        ratio = summary["ratio"]
        target = TARGETS[metric]
        reference = _rate(medians[summary["reference"]], unit)
        row(label, "raw", reference, _rate(medians[OURS], unit), ratio, f">= {target:.2f}x", ratio >= target)
        if metric not in OFFICIAL_TARGETS:
            continue
        target = OFFICIAL_TARGETS[metric]
        official = summary.get("official")
        if official is None:
            unmeasured += 1
            rows.append((label, OFFICIAL, "-", _rate(medians[OURS], unit), "-", f">= {target:.0f}x", "n/a"))
            continue
        ratio = official["ratio"]
        theirs = _rate(medians[OFFICIAL], unit)
        row(label, OFFICIAL, theirs, _rate(medians[OURS], unit), ratio, f">= {target:.0f}x", ratio >= target)
    mem = results["memory"]
    row(
        f"peak RSS growth, {config.memory_count} in flight",
        "raw",
        f"{mem['growth_kib'][RAW_PREFIX] / 1024:,.1f} MiB",
        f"{mem['growth_kib'][OURS] / 1024:,.1f} MiB",
        mem["ratio"],
        f"<= {TARGETS['memory']:.1f}x",
        mem["ratio"] <= TARGETS["memory"],
    )
    startup = results["startup"]
    row(
        "trio-mcp call echo, whole process",
        "raw",
        f"{startup['medians'][RAW_CLI] * 1000:,.0f} ms",
        f"{startup['medians'][OURS] * 1000:,.0f} ms",
        startup["ratio"],
        f"<= {TARGETS['startup']:.1f}x",
        startup["ratio"] <= TARGETS["startup"],
    )
    header = ("metric", "vs", "them", "trio_mcp", "ratio", "target", "")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])] + [
            cell.rjust(width) for cell, width in zip(row[2:], widths[2:], strict=True)
        ]
        return "  ".join(cells).rstrip()

    print()
    print(line(header))
    print(line(tuple("-" * width for width in widths)))
    for each in rows:
        print(line(each))
    print()
    print(
        "Ratios: throughput is trio_mcp / them (higher is better), memory is trio_mcp / raw (lower is better)."
    )
    print(
        "Throughput ratios are medians of per-repetition ratios, against the faster raw variant or the"
        " official client."
    )
    print(
        "trio_mcp is StdioTransport.request in the first three rows and client.call_tool in the call_tool"
        " rows; the raw baseline sends tools/call with the modern _meta envelope; the official client is"
        f" mcp=={OFFICIAL_PIN} (anyio on asyncio, in its own process)."
    )
    print()
    print(
        "Details (median, the range over repetitions, and the CPU time per call of the contender's process):"
    )
    for metric, (label, unit) in labels.items():
        summary = results["throughput"][metric]
        print(f"  {label}:")
        for name, values in results["samples"][metric].items():
            mark = "  <- raw reference" if name == summary["reference"] else ""
            per_call = statistics.median(results["cpu_per_call"][metric][name])
            cost = f"{per_call * 1e3:.1f} ms" if per_call >= 1e-3 else f"{per_call * 1e6:.1f} us"
            print(
                f"    {name:<16} {_rate(statistics.median(values), unit):>15}"
                f"  [{_rate(min(values), unit)} .. {_rate(max(values), unit)}]"
                f"  cpu {cost}/call{mark}"
            )
        print(f"    ratio per repetition: {', '.join(f'{r:.2f}' for r in summary['ratios'])}")
        if summary.get("official") is not None:
            ratios = summary["official"]["ratios"]
            print(f"    ratio to the official client per repetition: {', '.join(f'{r:.2f}' for r in ratios)}")
    print(f"  peak RSS growth, {config.memory_count} requests in flight (fresh process each):")
    for name, runs in mem["runs"].items():
        growth = [run["growth_kib"] / 1024 for run in runs]
        per_request = statistics.median(run["growth_kib"] for run in runs) * 1024 / config.memory_count
        print(
            f"    {name:<18} {statistics.median(growth):>10.1f} MiB   ({per_request:,.0f} bytes/request;"
            f" runs: {', '.join(f'{g:.1f}' for g in growth)} MiB)"
        )
    startup = results["startup"]
    print(
        f"  trio-mcp call echo text=hi against the demo server, whole process, median of {config.startup_reps}:"
    )
    for name, value in startup["medians"].items():
        mark = "  <- raw reference" if name == RAW_CLI else ""
        print(f"    {name:<18} {value * 1000:7.0f} ms{mark}")
    print(f"    ratio per run: {', '.join(f'{r:.2f}' for r in startup['ratios'])}")
    if not mem["exact"]:
        print("    (no /proc/self/clear_refs: growth taken from ru_maxrss, which includes start-up peaks)")
    imports = results["imports"]
    print(f"  import time, fresh interpreter, median of {config.import_reps}:")
    print(
        f"    import trio                             {imports['medians']['trio'] * 1000:7.1f} ms\n"
        f"    import trio_mcp                         {imports['medians']['trio_mcp'] * 1000:7.1f} ms"
        "  (the exceptions; the rest loads on first use)\n"
        f"    from trio_mcp import open_stdio_client  {imports['medians']['client'] * 1000:7.1f} ms"
        f"  (trio_mcp's own share over trio: {imports['extra'] * 1000:+.1f} ms)"
    )
    print()
    if missed:
        print("Some targets were MISSED.")
    elif unmeasured:
        print("Every measured target was met; the official client was not measured.")
    else:
        print("All targets met.")
    return not missed and not unmeasured


# -------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, for a smoke run (well under a minute)"
    )
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write the results as JSON to PATH")
    parser.add_argument("--reps", type=int, help="repetitions of each throughput metric (default 5)")
    parser.add_argument(
        "--official-python",
        metavar="PATH",
        help=f"an interpreter that has the official client, mcp=={OFFICIAL_PIN} (default: this one)",
    )
    parser.add_argument("--no-official", action="store_true", help="leave the official client out")
    parser.add_argument("--memory-child", choices=[RAW_PREFIX, OURS], help=argparse.SUPPRESS)
    parser.add_argument("--memory-count", type=int, default=10_000, help="requests in flight for peak RSS")
    config = parser.parse_args(argv)
    config.width = 256
    config.big_size = 10 * MIB
    if config.quick:
        config.sequential, config.in_flight, config.big_calls = 2_000, 10_240, 2
        config.call_sequential, config.call_in_flight = 500, 2_560
        config.reps = config.reps or 5
        config.memory_reps, config.import_reps, config.startup_reps = 1, 5, 3
    else:
        config.sequential, config.in_flight, config.big_calls = 5_000, 20_000, 2
        config.call_sequential, config.call_in_flight = 5_000, 20_000
        config.reps = config.reps or 5
        config.memory_reps, config.import_reps, config.startup_reps = 3, 5, 9
    return config


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    if config.memory_child:
        print(json.dumps(memory_child(config.memory_child, config.memory_count)))
        return 0
    print(
        f"trio_mcp {trio_mcp.__version__}, trio {trio.__version__}, Python {platform.python_version()}"
        f" on {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs,"
        f" load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{config.reps} repetitions{' (quick run)' if config.quick else ''}; measuring...", flush=True)
    started = time.perf_counter()
    measured = trio.run(throughput, config, find_official(config))
    samples = measured["rate"]
    official = measured["official"]
    client = measured["client"]
    print(f"trio_mcp's client negotiated the {client['era']} era ({client['protocol_version']}).")
    if official is not None:
        print(
            f"The official client: mcp {official['mcp']} on Python {official['python_version']},"
            f" protocol {official['protocol_version']}."
        )
    results: dict[str, Any] = {
        "samples": samples,
        "cpu_per_call": measured["cpu"],
        "throughput": {metric: summarise(values) for metric, values in samples.items()},
        "memory": memory(config),
        "imports": import_times(config.import_reps),
        "startup": startup_times(config.startup_reps, find_official(config)),
    }
    all_met = report(config, results)
    elapsed = time.perf_counter() - started
    print(f"({elapsed:.1f} s; load average now {os.getloadavg()[0]:.2f})")
    if config.json is not None:
        document = {
            "config": {
                key: (str(value) if isinstance(value, Path) else value) for key, value in vars(config).items()
            },
            "environment": {
                "trio_mcp": trio_mcp.__version__,
                "trio": trio.__version__,
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "client": client,
                "official": official,
            },
            "targets": TARGETS,
            "official_targets": OFFICIAL_TARGETS,
            "all_met": all_met,
            "seconds": elapsed,
            **results,
        }
        config.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
