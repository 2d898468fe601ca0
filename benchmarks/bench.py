"""Benchmark trio_mcp against a raw Trio baseline and the official Python MCP client.

Run ``python benchmarks/bench.py`` (or ``nox -s bench``); ``--quick`` for a
smoke run, ``--json PATH`` to keep the numbers. See benchmarks/README.md.

The machine may be shared and noisy, so only RATIOS measured in one run are
reported. Two layers are measured: trio_mcp's stdio transport
(``Session.request``, over a ``ProcessTarget``) and its client (``client.call_tool``, end to
end). The contenders (trio_mcp; the raw baselines of raw_baseline.py: the
single-task client, on the sequential metrics only, and the writer+reader
client in its two write modes; and, for ``call_tool``, the official ``mcp``
client in a subprocess, see official_client.py) each talk to their own copy
of echo_server.py, all opened at once; every metric is measured in several
repetitions, with the contenders taking turns (the order reverses on every
repetition). A ratio is the median over repetitions of trio_mcp's result
divided by another contender's result of the same repetition: against the
raw variant that did better on that metric, and against the official client.

Cancellation is measured as the time from cancelling K requests in flight at
once (or from their connection-wide ``request_timeout`` expiring at once) to
every task done, at two sizes K: the time per request should not grow with
K. Peak memory is measured in fresh subprocesses, one contender each, so that
peaks do not mix. The start-up metric runs whole processes.
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
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import trio

try:
    import trio_mcp
except ImportError:  # run from a checkout without installing: use the checkout
    sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
    import trio_mcp

from raw_baseline import WRITE_MODES, open_raw_client, open_sequential_client

from trio_mcp._core.outputs import compile_schema

HERE = Path(__file__).resolve().parent
SERVER = HERE / "echo_server.py"
SERVER_ARGV = [sys.executable, str(SERVER)]
#: While the throughput is measured, the clients run on this CPU and every
#: echo server on the other (see `pinned`).
CLIENT_CPU, SERVER_CPU = 0, 1
OFFICIAL_CLIENT = HERE / "official_client.py"

OURS = "trio_mcp"
RAW_PREFIX = "raw"
#: The single-task raw client (raw_baseline.SequentialClient): a baseline of the sequential metrics only.
RAW_ONE_TASK = f"{RAW_PREFIX} (one task)"
#: The metrics that make one request at a time: every raw variant competes on them, the single-task one included.
SEQUENTIAL_METRICS = frozenset({"sequential", "big", "call_tool_sequential"})
OFFICIAL = "official"
#: The start-up metric's raw reference: benchmarks/raw_cli.py, on Trio.
RAW_CLI = "raw (trio)"
#: The release of the official client that the targets are set against (noxfile.py installs it).
OFFICIAL_PIN = "2.3.0"
MIB = 1024 * 1024

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
CallTool = Callable[[str, dict[str, Any]], Awaitable[Any]]
#: Runs one workload once; returns its rate, the CPU time per call it cost, and
#: how many times per call the process blocked and was preempted (voluntary and
#: involuntary context switches) with the server's CPU time per call (None where
#: it cannot be read); None where none of this can be counted.
Measure = Callable[[], Awaitable[tuple[float, float, tuple[float, float, float | None] | None]]]

#: Below this many blocks per call, the strict raw client one at a time seldom
#: waited for its server: see SHARED_CPU_NOTE.
SHARED_CPU_BELOW = 0.5
SHARED_CPU_NOTE = (
    "    NOTE: the strict raw client seldom blocked: its server mostly ran on the client's own CPU, during\n"
    "    the client's write (the other CPU was busy, or the kernel put them together), and the answer was\n"
    "    there at its first read. The wall ratios one at a time then measure how the kernel shared one CPU,\n"
    "    not the clients; the cpu column still compares them. Measure again on a quiet machine."
)

#: The targets, as ratios of trio_mcp to the raw baseline (the throughput
#: metrics: at least this), and the others.
TARGETS = {
    "sequential": 0.90,
    "in_flight": 0.85,
    "big": 0.90,
    "call_tool_sequential": 0.90,
    "call_tool_in_flight": 0.75,
    "memory": 2.0,  # trio_mcp's peak RSS growth over raw's: at most this
    "startup": 1.3,  # a whole `trio-mcp call` process's wall time over raw's: at most this
    # call_tool of a tool with an outputSchema, checked (validate_output="warn",
    # the default) over not checked ("off"): the time per call, at most this.
    "validation": 1.10,
    # Cancelling (or timing out) K requests at once: the time per request at the
    # largest K over the time per request at the smallest, at most this (linear: about 1).
    "cancel": 1.5,
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
    async def start(cls, python: str, width: int, server_argv: list[str] = SERVER_ARGV) -> OfficialClient:
        argv = [python, str(OFFICIAL_CLIENT), "--serve", "--width", str(width), "--", *server_argv]
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

    async def measure(
        self, metric: str, calls: int, width: int
    ) -> tuple[float, float, tuple[float, float, float | None] | None]:
        stdin = self._process.stdin
        assert stdin is not None
        await stdin.send_all(f"{metric} {calls} {width}\n".encode())
        with trio.fail_after(600):
            reply = await self._read()
        return reply["rate"], reply["cpu_per_call"], None

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


def _run_time(pid: int | None) -> float | None:
    """The CPU time process ``pid`` has run, in seconds (Linux's schedstat), or None."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/schedstat") as stat:
            return int(stat.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def in_process(
    workload: Callable[[Any], Awaitable[float]], target: Any, calls: int, server: int | None
) -> Measure:
    """Time ``workload(target)`` (``calls`` calls) in this process: its rate, this process's CPU time per
    call, and the CPU time per call of the server, process ``server``."""

    async def measure() -> tuple[float, float, tuple[float, float, float | None] | None]:
        gc.collect()
        start = time.process_time()
        served = _run_time(server)
        before = resource.getrusage(resource.RUSAGE_SELF)
        rate = await workload(target)
        after = resource.getrusage(resource.RUSAGE_SELF)
        served_after = _run_time(server)
        blocked = (after.ru_nvcsw - before.ru_nvcsw) / calls
        preempted = (after.ru_nivcsw - before.ru_nivcsw) / calls
        serving = None if served is None or served_after is None else (served_after - served) / calls
        return rate, (time.process_time() - start) / calls, (blocked, preempted, serving)

    return measure


def _turns(config: argparse.Namespace, metric: str) -> int:
    """Into how many turns each repetition of ``metric`` is cut (each contender's calls shared out)."""
    if metric == "big":
        return config.big_calls  # one 10 MiB answer a turn
    return config.turns


def _text(result: Any) -> str:
    """The text of a tool's answer: a `trio_mcp.types.CallToolResult`, or the raw result dict."""
    return result["content"][0]["text"] if isinstance(result, dict) else result.text


@contextmanager
def pinned(enabled: bool) -> Iterator[list[str]]:
    """Keep this process (and the official client's, which it starts) on `CLIENT_CPU`, and every echo
    server on `SERVER_CPU`; yield the server's extra arguments (none when not pinned).

    One call at a time, a call's wall time depends on where the kernel runs
    the server: on another CPU, the server works while the client waits for
    it, and each of them is woken from idle once per call; on the client's
    own CPU (the other one busy, or the kernel putting them together), the
    server runs during the client's write and its answer is there at the
    first read. Which happens changes from run to run and from server to
    server, so that two contenders measured in turns could each be in a
    different case. Pinned, every contender is in the first case: the one
    of a machine with a core to spare, in every run.
    """
    if not enabled or not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2:
        yield []
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {CLIENT_CPU})
    try:
        yield ["--cpu", str(SERVER_CPU)]
    finally:
        os.sched_setaffinity(0, before)


async def throughput(config: argparse.Namespace, official_python: str | None) -> dict[str, Any]:
    with pinned(not config.no_pin) as extra:
        return await _throughput(config, official_python, [*SERVER_ARGV, *extra])


async def _throughput(
    config: argparse.Namespace, official_python: str | None, server_argv: list[str]
) -> dict[str, Any]:
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
    # Each repetition is cut into turns (see below): the calls of one turn.
    share = {
        "sequential": config.sequential // config.turns,
        "in_flight": config.in_flight // config.turns // width * width,
        "big": config.big_calls // _turns(config, "big"),
        "call_tool_sequential": config.call_sequential // config.turns,
        "call_tool_in_flight": config.call_in_flight // config.turns // width * width,
    }
    transport_workloads: dict[str, tuple[Callable[[Request], Awaitable[float]], int]] = {
        "sequential": (lambda request: sequential(request, share["sequential"]), share["sequential"]),
        "in_flight": (lambda request: in_flight(request, share["in_flight"], width), share["in_flight"]),
        "big": (lambda request: big(request, config.big_size, share["big"]), share["big"]),
    }
    call_tool_workloads: dict[str, tuple[Callable[[CallTool], Awaitable[float]], int]] = {
        "call_tool_sequential": (
            lambda call_tool: call_tool_sequential(call_tool, share["call_tool_sequential"]),
            share["call_tool_sequential"],
        ),
        "call_tool_in_flight": (
            lambda call_tool: call_tool_in_flight(call_tool, share["call_tool_in_flight"], width),
            share["call_tool_in_flight"],
        ),
    }
    # The same workloads, as commands to official_client.py.
    official_commands = {
        "call_tool_sequential": ("sequential", share["call_tool_sequential"]),
        "call_tool_in_flight": ("in_flight", share["call_tool_in_flight"]),
    }
    # Each repetition of a metric is cut into turns (`turns`): in every
    # turn each contender runs its share of the calls, one after the
    # other, in an order that alternates from turn to turn. A turn's
    # contenders run within a fraction of a second of each other, so a
    # change of load on the machine hits them alike; the ratio of a
    # repetition is the median of its turns' ratios.
    turns = {metric: _turns(config, metric) for metric in (*transport_workloads, *call_tool_workloads)}
    samples: dict[str, dict[str, list[float]]] = {}
    cpu: dict[str, dict[str, list[float]]] = {}
    by_turn: dict[str, dict[str, list[list[float]]]] = {}
    switches: dict[str, dict[str, list[float]]] = {}
    preemptions: dict[str, dict[str, list[float]]] = {}
    serving: dict[str, dict[str, list[float]]] = {}
    loads: dict[str, float] = {}
    about: dict[str, Any] | None = None
    negotiated: dict[str, Any] = {}

    async def repetition(rep: int) -> None:
        """One repetition of every metric, over contenders (and servers) of its own.

        Every repetition starts every contender afresh, each with a new echo
        server: the same server code runs measurably faster in one process
        than in another (by up to a fifth, one at a time), and a contender
        measured against one server process only would keep its luck in
        every repetition.
        """
        nonlocal about, negotiated
        # trio_mcp is opened with its defaults: nothing here depends on its request_timeout.
        async with (
            open_sequential_client(server_argv) as raw_one_task,
            open_raw_client(server_argv, "send_all") as raw_send_all,
            open_raw_client(server_argv, "os.write") as raw_os_write,
            trio_mcp.open_session(trio_mcp.ProcessTarget(server_argv[0], server_argv[1:])) as wire,
            trio_mcp.open_stdio_client(server_argv[0], server_argv[1:]) as client,
        ):
            pipelined = [
                (f"{RAW_PREFIX} ({WRITE_MODES[0]})", raw_send_all),
                (f"{RAW_PREFIX} ({WRITE_MODES[1]})", raw_os_write),
            ]
            # (name, request, call_tool, whether it runs pipelined workloads, the servers of request and call_tool)
            everyone: list[tuple[str, Request, CallTool, bool, tuple[int | None, int | None]]] = [
                (RAW_ONE_TASK, raw_one_task.request, raw_one_task.call_tool, False, (raw_one_task.pid,) * 2),
                *[(name, raw.request, raw.call_tool, True, (raw.pid,) * 2) for name, raw in pipelined],
                (OURS, wire.request, client.call_tool, True, (wire.pid, client.pid)),
            ]
            for _, request, call_tool, many, _ in everyone:
                await check(request)
                await sequential(request, 200)
                await big(request, config.big_size, 1)
                await check_call_tool(call_tool, _text)
                await call_tool_sequential(call_tool, 200)
                if many:
                    await in_flight(request, 2 * width, width)
                    await call_tool_in_flight(call_tool, 2 * width, width)
            contenders: dict[str, list[tuple[str, Measure]]] = {}
            for metric, (workload, calls) in transport_workloads.items():
                contenders[metric] = [
                    (name, in_process(workload, request, calls, servers[0]))
                    for name, request, _, many, servers in everyone
                    if many or metric in SEQUENTIAL_METRICS
                ]
            for metric, (call_workload, calls) in call_tool_workloads.items():
                contenders[metric] = [
                    (name, in_process(call_workload, call_tool, calls, servers[1]))
                    for name, _, call_tool, many, servers in everyone
                    if many or metric in SEQUENTIAL_METRICS
                ]
            official = (
                await OfficialClient.start(official_python, width, server_argv) if official_python else None
            )
            try:
                if official is not None:
                    about = official.about
                    for metric, (command, calls) in official_commands.items():
                        contenders[metric].append(
                            (OFFICIAL, partial(official.measure, command, calls, width))
                        )
                for metric, runs in contenders.items():
                    if metric not in samples:
                        loads[metric] = os.getloadavg()[0]
                        samples[metric] = {name: [] for name, _ in runs}
                        cpu[metric] = {name: [] for name, _ in runs}
                        by_turn[metric] = {name: [] for name, _ in runs}
                        switches[metric] = {name: [] for name, _ in runs}
                        preemptions[metric] = {name: [] for name, _ in runs}
                        serving[metric] = {name: [] for name, _ in runs}
                    seconds = {name: 0.0 for name, _ in runs}
                    used = {name: 0.0 for name, _ in runs}
                    blocks: dict[str, list[float]] = {name: [] for name, _ in runs}
                    preempts: dict[str, list[float]] = {name: [] for name, _ in runs}
                    served: dict[str, list[float]] = {name: [] for name, _ in runs}
                    rates: dict[str, list[float]] = {name: [] for name, _ in runs}
                    for turn in range(turns[metric]):
                        for name, measure in runs if (rep + turn) % 2 == 0 else runs[::-1]:
                            rate, per_call, counted = await measure()
                            if counted is not None:
                                blocks[name].append(counted[0])
                                preempts[name].append(counted[1])
                                if counted[2] is not None:
                                    served[name].append(counted[2])
                            rates[name].append(rate)
                            seconds[name] += 1 / rate
                            used[name] += per_call
                    for name, _ in runs:
                        # The repetition's rate: all its calls over all their time.
                        samples[metric][name].append(turns[metric] / seconds[name])
                        cpu[metric][name].append(used[name] / turns[metric])
                        by_turn[metric][name].append(rates[name])
                        if blocks[name]:
                            switches[metric][name].append(statistics.median(blocks[name]))
                            preemptions[metric][name].append(statistics.median(preempts[name]))
                        if served[name]:
                            serving[metric][name].append(statistics.median(served[name]))
            finally:
                if official is not None:
                    await official.aclose()
            negotiated = {"era": client.era, "protocol_version": client.protocol_version}

    for rep in range(config.reps):
        await repetition(rep)
    return {
        "rate": samples,
        "cpu": cpu,
        "turns": by_turn,
        "blocks": switches,
        "preemptions": preemptions,
        "serving": serving,
        "load": loads,
        "official": None if about is None else {"python": official_python, **about},
        "client": negotiated,
    }


# ---------------------------------------------------------- output validation


VALIDATED = "validate_output=warn"
UNVALIDATED = "validate_output=off"


async def validation(config: argparse.Namespace) -> dict[str, Any]:
    """What checking structured output against its outputSchema adds to ``call_tool``.

    Two clients of trio_mcp, alike but for ``validate_output`` (``"warn"``,
    the default, and ``"off"``), each with its own echo server, call
    ``forecast`` (a tool with a typical outputSchema) one call at a time.
    Both listed the tools first, so the checked one knows the schema (and
    compiles it once, on its first call). Within each repetition the two
    take turns every 50 calls, so that a change of load on the machine hits
    both alike. A repetition's ratio is the median, over its turns, of the
    checked client's time for its 50 calls over the unchecked one's; the
    ratio is the median over repetitions.

    The check is also timed alone, in this process, on the result of a real
    call: ``check_seconds`` is its cost per call, and ``check_share`` that
    cost as a share of an unchecked call.
    """
    chunk = 50
    chunks = max(1, config.call_sequential // chunk)
    seconds: dict[str, list[float]] = {VALIDATED: [], UNVALIDATED: []}
    cpu: dict[str, list[float]] = {VALIDATED: [], UNVALIDATED: []}
    logged: list[str] = []

    async def forecasts(client: Any, count: int) -> None:
        for i in range(count):
            await client.call_tool("forecast", {"city": f"city {i}"})

    async with (
        trio_mcp.open_stdio_client(
            sys.executable, [str(SERVER)], options=trio_mcp.ClientOptions(on_log=logged.append)
        ) as checked,
        trio_mcp.open_stdio_client(
            sys.executable, [str(SERVER)], options=trio_mcp.ClientOptions(validate_output="off")
        ) as unchecked,
    ):
        runs = [(VALIDATED, checked), (UNVALIDATED, unchecked)]
        for _, client in runs:
            await client.list_tools()
            result = await client.call_tool("forecast", {"city": "warm-up"})
            assert result.structured_content["city"] == "warm-up", result
            await forecasts(client, 200)
        ratios: list[float] = []
        cpu_ratios: list[float] = []
        for rep in range(config.reps):
            wall = {name: [] for name in seconds}
            used = {name: [] for name in cpu}
            for turn in range(chunks):
                gc.collect()
                for name, client in runs if (rep + turn) % 2 == 0 else runs[::-1]:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    await forecasts(client, chunk)
                    wall[name].append(time.perf_counter() - start)
                    used[name].append(time.process_time() - start_cpu)
            for name in seconds:
                seconds[name].append(sum(wall[name]) / (chunks * chunk))
                cpu[name].append(sum(used[name]) / (chunks * chunk))
            # Each turn's two chunks ran back to back: their ratio is little
            # touched by a change of load, and the median over the turns
            # leaves out the turns that a burst of load hit anyway.
            ratios.append(
                statistics.median(
                    on / off for on, off in zip(wall[VALIDATED], wall[UNVALIDATED], strict=True)
                )
            )
            cpu_ratios.append(
                statistics.median(
                    on / off for on, off in zip(used[VALIDATED], used[UNVALIDATED], strict=True)
                )
            )
        # The check alone, on a real result: the tool's compiled output schema
        # judging the structured content, as the client does for each result.
        (tool,) = [tool for tool in await checked.list_tools() if tool.name == "forecast"]
        compiled = compile_schema(tool.output_schema)
        assert not isinstance(compiled, str), compiled
        structured = result.structured_content
        reps = 20_000
        start = time.perf_counter()
        for _ in range(reps):
            if compiled.first_error(structured) is not None:
                raise RuntimeError("the result does not match its output schema")
        check_seconds = (time.perf_counter() - start) / reps
    if logged:
        raise RuntimeError(f"the checked client reported: {logged[0]}")
    per_call = statistics.median(seconds[UNVALIDATED])
    return {
        "seconds_per_call": seconds,
        "cpu_per_call": cpu,
        "ratios": ratios,
        "ratio": statistics.median(ratios),
        "cpu_ratio": statistics.median(cpu_ratios),
        "medians": {name: 1 / statistics.median(values) for name, values in seconds.items()},
        "check_seconds": check_seconds,
        "check_share": check_seconds / per_call,
    }


def _paired(ours: list[list[float]], theirs: list[list[float]]) -> list[float]:
    """The ratio of each repetition: the median of its turns' ratios (ours over theirs, turn by turn)."""
    return [
        statistics.median(a / b for a, b in zip(our_turns, their_turns, strict=True))
        for our_turns, their_turns in zip(ours, theirs, strict=True)
    ]


def summarise(samples: dict[str, list[float]], turns: dict[str, list[list[float]]]) -> dict[str, Any]:
    """Pick the better raw variant and pair trio_mcp's turns with its turns.

    ``samples`` holds each contender's rate per repetition, ``turns`` its
    rate in each turn of each repetition. The reference is the raw variant
    with the best median rate (the strictest baseline); ``reader`` is the
    same for the raw variants that read the server's output in a task of
    their own all the time, as trio_mcp does (on the one-at-a-time metrics,
    where the one-task client competes too). Where the official client ran,
    ``official`` holds the ratios of trio_mcp to it, paired the same way.
    """
    raws = {name: values for name, values in samples.items() if name.startswith(RAW_PREFIX)}
    reference = max(raws, key=lambda name: statistics.median(raws[name]))
    ratios = _paired(turns[OURS], turns[reference])
    summary: dict[str, Any] = {
        "reference": reference,
        "medians": {name: statistics.median(values) for name, values in samples.items()},
        "ratios": ratios,
        "ratio": statistics.median(ratios),
    }
    readers = {name: values for name, values in raws.items() if name != RAW_ONE_TASK}
    if RAW_ONE_TASK in raws and readers:
        reader = max(readers, key=lambda name: statistics.median(readers[name]))
        reader_ratios = _paired(turns[OURS], turns[reader])
        summary["reader"] = {
            "reference": reader,
            "ratios": reader_ratios,
            "ratio": statistics.median(reader_ratios),
        }
    if OFFICIAL in samples:
        official = _paired(turns[OURS], turns[OFFICIAL])
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
            client: Any = trio_mcp.open_session(trio_mcp.ProcessTarget(sys.executable, [str(SERVER)]))
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


def _child_env(*, bytecode: bool = False) -> dict[str, str]:
    """Our environment, with this trio_mcp first on the path of child interpreters.

    With ``bytecode``, children may write the ``.pyc`` files of what they
    import (``PYTHONDONTWRITEBYTECODE`` dropped), as an installed package has
    them: the process metrics then time imports, not compiling the sources
    again in every run, once a first, uncounted run has written them.
    """
    root = str(Path(trio_mcp.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
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
    ratios = [
        ours["growth_kib"] / raw["growth_kib"] if raw["growth_kib"] else float("inf")
        for ours, raw in zip(runs[OURS], runs[RAW_PREFIX], strict=True)
    ]
    return {
        "runs": runs,
        "growth_kib": growth,
        "ratios": ratios,
        "ratio": growth[OURS] / growth[RAW_PREFIX] if growth[RAW_PREFIX] else float("inf"),
        "exact": all(run["exact"] for name in names for run in runs[name]),
    }


# ------------------------------------------------------------ cancellation

#: The cancellation contenders: trio_mcp's requests cancelled by the caller's
#: scope, trio_mcp's requests expiring on a connection-wide request_timeout,
#: and bare Trio tasks asleep (the floor: what cancelling K tasks costs at all).
CANCEL = "trio_mcp, cancelled"
TIMEOUT = "trio_mcp, request_timeout"
FLOOR = "trio tasks (floor)"


def _has_request_timeout() -> bool:
    """Whether a session takes a connection-wide ``request_timeout``."""
    try:
        trio_mcp.SessionOptions(request_timeout=1.0)
    except TypeError:
        return False
    return True


def _pause_gc() -> None:
    """Collect garbage, then pause the cyclic collector until `gc.enable`.

    The cancellation runs time their span without it: CPython's collector
    alone makes cancelling K bare Trio tasks superlinear (each pass over the
    older generations scans every live task, and the more tasks, the more
    passes), about 1.5x the time per task at 8,000 tasks than at 1,000.
    Paused, the floor is linear, and the runs time the work of the code under
    test.
    """
    gc.collect()
    gc.disable()


async def cancel_all(request: Request | None, count: int) -> tuple[float, float]:
    """Put ``count`` requests in flight at once, then cancel them all at once.

    Each request is a task of one nursery, in ``request("never", ...)``,
    which the echo server never answers. Once every task has sent its
    request (a last ``echo`` request, answered after the server has read all
    of them, says so), the nursery's scope is cancelled. Returns the seconds
    from the cancel to every task done, and this process's CPU time over the
    same span. With no ``request``, each task sleeps forever instead: the
    cost of cancelling ``count`` Trio tasks at all (the floor), which is
    linear in ``count``. The garbage collector is paused over the timed span
    (see `_pause_gc`).
    """
    started = 0
    all_started = trio.Event()

    async def one() -> None:
        nonlocal started
        started += 1
        if started == count:
            all_started.set()
        if request is None:
            await trio.sleep_forever()
        else:
            await request("never", {})

    try:
        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(one)
            await all_started.wait()
            if request is not None:
                await request("echo", {})  # the server has read every request before this one
            _pause_gc()
            cpu = time.process_time()
            start = time.perf_counter()
            nursery.cancel_scope.cancel()
        return time.perf_counter() - start, time.process_time() - cpu
    finally:
        gc.enable()


async def expire_all(count: int, budget: float) -> tuple[float, float] | None:
    """Let ``count`` requests in flight expire at once, on a ``request_timeout`` of ``budget`` seconds.

    As in `cancel_all`, each request is a task in ``request("never", ...)``.
    Once all are sent, this blocks the whole event loop (``time.sleep``)
    until the last request's deadline has passed, so that every deadline is
    already due when the loop resumes. Returns the seconds from then to
    every task done (each ends in `trio_mcp.RequestTimeout`), and this
    process's CPU time over the same span (the garbage collector paused, see
    `_pause_gc`); None if ``budget`` was too short (a deadline passed before
    every request was sent: retry with a longer one).
    """
    started = 0
    timed_out = 0
    all_started = trio.Event()
    last_start = 0.0

    async def one() -> None:
        nonlocal started, timed_out, last_start
        started += 1
        if started == count:
            last_start = trio.current_time()
            all_started.set()
        try:
            await wire.request("never", {})
        except trio_mcp.RequestTimeout:
            timed_out += 1

    async with trio_mcp.open_session(
        trio_mcp.ProcessTarget(sys.executable, [str(SERVER)]),
        options=trio_mcp.SessionOptions(request_timeout=budget),
    ) as wire:
        await check(wire.request)
        first_start = trio.current_time()
        try:
            async with trio.open_nursery() as nursery:
                for _ in range(count):
                    nursery.start_soon(one)
                await all_started.wait()
                try:
                    await wire.request("echo", {})  # the server has read every request before this one
                except trio_mcp.RequestTimeout:
                    # On a loaded machine even this one can outlive the
                    # budget: too short, as below.
                    nursery.cancel_scope.cancel()
                    return None
                if trio.current_time() >= first_start + budget:
                    nursery.cancel_scope.cancel()
                    return None
                _pause_gc()
                # Block the loop (on purpose) until every deadline, at most
                # last_start + budget, has passed.
                time.sleep(max(0.0, last_start + budget + 0.01 - trio.current_time()))  # noqa: ASYNC251
                cpu = time.process_time()
                start = time.perf_counter()
            elapsed, cpu_spent = time.perf_counter() - start, time.process_time() - cpu
        finally:
            gc.enable()
    if timed_out != count:
        raise RuntimeError(f"{count - timed_out} of {count} requests did not time out")
    return elapsed, cpu_spent


async def cancellation(config: argparse.Namespace) -> dict[str, Any]:
    """Time cancelling, and timing out, K requests in flight at once, for each K of ``config.cancel_counts``.

    Every measurement opens a fresh transport (not timed), so that what one
    leaves behind cannot slow the next; the contenders take turns.
    """
    counts: list[int] = config.cancel_counts
    names = [FLOOR, CANCEL]
    if _has_request_timeout():
        names.append(TIMEOUT)
    seconds: dict[str, dict[int, list[float]]] = {name: {k: [] for k in counts} for name in names}
    cpu: dict[str, dict[int, list[float]]] = {name: {k: [] for k in counts} for name in names}
    timeouts: dict[int, float] = {}

    async def measure(name: str, count: int) -> tuple[float, float]:
        if name == FLOOR:
            return await cancel_all(None, count)
        if name == CANCEL:
            async with trio_mcp.open_session(trio_mcp.ProcessTarget(sys.executable, [str(SERVER)])) as wire:
                await check(wire.request)
                return await cancel_all(wire.request, count)
        # The budget must outlast sending every request: a second, doubled
        # (for this count, from then on) whenever that was too short.
        while True:
            timeout = timeouts.setdefault(count, 1.0)
            result = await expire_all(count, timeout)
            if result is not None:
                return result
            timeouts[count] = timeout * 2

    for rep in range(config.cancel_reps):
        order = [(name, count) for count in counts for name in names]
        for name, count in order if rep % 2 == 0 else order[::-1]:
            elapsed, spent = await measure(name, count)
            seconds[name][count].append(elapsed)
            cpu[name][count].append(spent)
    small, large = min(counts), max(counts)
    summary: dict[str, Any] = {}
    for name in names:
        per_request = {k: statistics.median(seconds[name][k]) / k for k in counts}
        summary[name] = {
            "per_request": per_request,
            "cpu_per_request": {k: statistics.median(cpu[name][k]) / k for k in counts},
            "ratio": per_request[large] / per_request[small],
            # Of each run, the sizes paired in turn order.
            "ratios": [
                (big_run / large) / (small_run / small)
                for big_run, small_run in zip(seconds[name][large], seconds[name][small], strict=True)
            ],
        }
    return {
        "counts": counts,
        "seconds": seconds,
        "cpu": cpu,
        "summary": summary,
        "request_timeouts": timeouts,
    }


# ------------------------------------------------------------ import time


def import_times(reps: int) -> dict[str, Any]:
    """Time imports in fresh interpreters, taking turns.

    ``import trio_mcp`` alone loads the exceptions only; the client (and
    with it Trio, the transport and the models) loads on first use, which
    ``from trio_mcp import open_stdio_client`` measures.
    """
    env = _child_env(bytecode=True)
    statements = {
        "trio": "import trio",
        "trio_mcp": "import trio_mcp",
        "client": "from trio_mcp import open_stdio_client",
    }
    times: dict[str, list[float]] = {name: [] for name in statements}
    names = list(statements)
    for rep in range(reps + 1):
        for name in names if rep % 2 == 0 else names[::-1]:
            code = f"import time\nt = time.perf_counter()\n{statements[name]}\nprint(time.perf_counter() - t)"
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True
            )
            if rep:  # the first round warms the file cache and writes the .pyc files
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
    env = _child_env(bytecode=True)
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


def _duration(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:,.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.1f} ms"
    return f"{seconds * 1e6:,.1f} us"


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

    def row(
        label: str,
        against: str,
        theirs: str,
        ours: str,
        ratio: float,
        spread: list[float],
        target: str,
        met: bool,
        cpu: str = "",
    ) -> None:
        nonlocal missed
        missed += not met
        span = f"{min(spread):.2f}..{max(spread):.2f}" if spread else ""
        verdict = "met" if met else "MISSED"
        rows.append((label, against, theirs, ours, f"{ratio:.2f}x", span, target, verdict, cpu))

    for metric, (label, unit) in labels.items():
        summary = results["throughput"][metric]
        medians = summary["medians"]
        cpu = results["cpu_per_call"][metric]
        ours = _rate(medians[OURS], unit)
        ratio = summary["ratio"]
        target = TARGETS[metric]
        reference = summary["reference"]
        row(
            label,
            reference,
            _rate(medians[reference], unit),
            ours,
            ratio,
            summary["ratios"],
            f">= {target:.2f}x",
            ratio >= target,
            f"{statistics.median(cpu[reference]) / statistics.median(cpu[OURS]):.2f}x",
        )
        reader = summary.get("reader")
        if reader is not None and reader["reference"] != reference:
            name = reader["reference"]
            spread = reader["ratios"]
            rows.append(
                (
                    label,
                    name,
                    _rate(medians[name], unit),
                    ours,
                    f"{reader['ratio']:.2f}x",
                    f"{min(spread):.2f}..{max(spread):.2f}",
                    "like for like",
                    "",
                    f"{statistics.median(cpu[name]) / statistics.median(cpu[OURS]):.2f}x",
                )
            )
        if metric not in OFFICIAL_TARGETS:
            continue
        target = OFFICIAL_TARGETS[metric]
        official = summary.get("official")
        if official is None:
            unmeasured += 1
            rows.append((label, OFFICIAL, "-", ours, "-", "", f">= {target:.0f}x", "n/a", ""))
            continue
        row(
            label,
            OFFICIAL,
            _rate(medians[OFFICIAL], unit),
            ours,
            official["ratio"],
            official["ratios"],
            f">= {target:.0f}x",
            official["ratio"] >= target,
            f"{statistics.median(cpu[OFFICIAL]) / statistics.median(cpu[OURS]):.2f}x",
        )
    checks = results["validation"]
    row(
        "call_tool + outputSchema check, sequential",
        "validate_output=off",
        _rate(checks["medians"][UNVALIDATED], "calls/s"),
        _rate(checks["medians"][VALIDATED], "calls/s"),
        checks["ratio"],
        checks["ratios"],
        f"<= {TARGETS['validation']:.2f}x",
        checks["ratio"] <= TARGETS["validation"],
        f"{checks['cpu_ratio']:.2f}x",
    )
    cancel = results["cancel"]
    small, large = min(cancel["counts"]), max(cancel["counts"])
    for name, label in ((CANCEL, "cancel K in flight at once"), (TIMEOUT, "request_timeout for K at once")):
        if name not in cancel["summary"]:
            rows.append((label, "-", "-", "-", "-", "", "linear", "n/a", ""))  # no request_timeout option
            continue
        summary = cancel["summary"][name]
        per_request = summary["per_request"]
        cpu_per_request = summary["cpu_per_request"]
        row(
            f"{label}, per request, K={large:,}",
            f"K={small:,}",
            _duration(per_request[small]),
            _duration(per_request[large]),
            summary["ratio"],
            summary["ratios"],
            f"<= {TARGETS['cancel']:.1f}x",
            summary["ratio"] <= TARGETS["cancel"],
            f"{cpu_per_request[large] / cpu_per_request[small]:.2f}x",
        )
    mem = results["memory"]
    row(
        f"peak RSS growth, {config.memory_count:,} in flight",
        f"{RAW_PREFIX} ({WRITE_MODES[0]})",
        f"{mem['growth_kib'][RAW_PREFIX] / 1024:,.1f} MiB",
        f"{mem['growth_kib'][OURS] / 1024:,.1f} MiB",
        mem["ratio"],
        mem["ratios"],
        f"<= {TARGETS['memory']:.1f}x",
        mem["ratio"] <= TARGETS["memory"],
    )
    startup = results["startup"]
    row(
        "trio-mcp call echo, whole process",
        "raw_cli.py",
        f"{startup['medians'][RAW_CLI] * 1000:,.0f} ms",
        f"{startup['medians'][OURS] * 1000:,.0f} ms",
        startup["ratio"],
        startup["ratios"],
        f"<= {TARGETS['startup']:.1f}x",
        startup["ratio"] <= TARGETS["startup"],
    )
    header = ("metric", "vs", "them", "trio_mcp", "ratio", "range", "target", "", "cpu")
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
        "them and trio_mcp are medians. ratio: for throughput and the whole process, the median of the"
        " ratios of each repetition (the contenders take turns in every one), otherwise the ratio of the"
        " medians; range: the min..max of the ratios of each repetition; cpu: the same ratio for the"
        " medians of CPU time per call (per request in the cancel rows), much less sensitive to other"
        " load on the machine. What the ratios compare:"
    )
    print(
        "* throughput: trio_mcp / them (higher is better); them is the fastest raw variant on that metric"
        " (named under vs: the sequential rows race all three, the in-flight rows the writer+reader"
        " client's two write modes) or the official client;"
    )
    print(
        "* cancel and request_timeout: trio_mcp's time per request from the cancel (or the expiry) to every"
        f" task done, at K={large:,} over K={small:,} (lower is better; linear: about 1, quadratic:"
        f" {large / small:.0f});"
    )
    print("* memory and whole process: trio_mcp / raw (lower is better).")
    print(
        "* outputSchema check: the time per call_tool with validate_output='warn' over 'off' (lower is"
        " better); its cpu column is the same for the CPU time per call."
    )
    print(
        "* one at a time, two raw baselines: the strictest (the one-task client, which the targets are set"
        " against) and, like for like, the better of the writer+reader clients. The one-task client writes"
        " its request and reads its answer in the caller's task, and reads the server's output only while"
        " it waits for its own answer: a notification or a request the server sends between calls stays"
        " unread until the next call, so it is no general MCP client. trio_mcp, like the writer+reader"
        " client, reads the server all the time in a task of its own and hands each answer to the caller:"
        " one more task switch per call, which the gap between the two raw clients' CPU per call shows"
        " (below, 'hand-off'). At 256 in flight every contender reads in a task of its own."
    )
    print(
        "* one at a time, a call's wall time is the client's CPU plus its wait for the server and for both"
        " processes to be woken, which is the same for every contender: on a quiet machine that wait"
        " pulls the wall ratio towards 1 (the slower the server, the more), on a loaded one the wake-ups"
        " scatter it (see the range); the cpu column is the client's own cost, and the details give each"
        " contender's split, and how many times per call its process blocked (each a wake-up to wait for:"
        " a loaded machine makes each one longer) and was preempted (by its server, when both share one CPU,"
        " or by other work)."
    )
    print(
        "* each repetition is cut into turns, every contender running its share of the calls in each"
        " turn, in an order that alternates from turn to turn; a repetition's ratio is the median of its"
        " turns' ratios, so that a change of load hits both sides of a ratio alike."
    )
    print(
        "trio_mcp is Session.request in the transport rows and client.call_tool in the call_tool"
        " rows; the raw clients send tools/call with the modern _meta envelope; the official client is"
        f" mcp=={OFFICIAL_PIN} (anyio on asyncio, in its own process)."
    )
    print()
    print(
        "Details (median, the range over repetitions, and the CPU time per call of the contender's process):"
    )
    for metric, (label, unit) in labels.items():
        summary = results["throughput"][metric]
        print(f"  {label} (load average {results['load'][metric]:.2f} as it started):")
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
        if metric in SEQUENTIAL_METRICS and unit == "calls/s":
            # A call's wall time is the client's CPU plus what it waits for: the server's
            # work and the wake-ups of both processes, the same for every contender.
            print(
                "    wall per call = the client's CPU + waiting (server, wake-ups); times per call the process"
                " blocked, and was preempted; the server's CPU per call:"
            )
            preempted_of = results.get("preemptions_per_call", {}).get(metric, {})
            serving_of = results.get("server_cpu_per_call", {}).get(metric, {})
            for name, values in results["samples"][metric].items():
                wall = 1 / statistics.median(values)
                used = statistics.median(results["cpu_per_call"][metric][name])
                blocked = results["blocks_per_call"][metric][name]
                times = f"{statistics.median(blocked):.2f}" if blocked else "-"
                preempted = preempted_of.get(name)
                taken = f"{statistics.median(preempted):.2f}" if preempted else "-"
                served = serving_of.get(name)
                server = _duration(statistics.median(served)) if served else "-"
                print(
                    f"      {name:<16} {_duration(wall):>9} = cpu {_duration(used):>9} + {_duration(wall - used):>9};"
                    f" blocked {times}, preempted {taken}; server {server}"
                )
            strict = results["blocks_per_call"][metric].get(RAW_ONE_TASK)
            if strict and statistics.median(strict) < SHARED_CPU_BELOW:
                print(SHARED_CPU_NOTE)
        reader = summary.get("reader")
        if reader is not None and reader["reference"] != summary["reference"]:
            ratios = reader["ratios"]
            cpu_of = results["cpu_per_call"][metric]
            handoff = statistics.median(cpu_of[reader["reference"]]) - statistics.median(cpu_of[RAW_ONE_TASK])
            print(
                f"    ratio to {reader['reference']} per repetition: {', '.join(f'{r:.2f}' for r in ratios)}"
            )
            print(
                f"    hand-off (raw reader client's CPU per call over the one-task client's): {_duration(handoff)}"
            )
        if summary.get("official") is not None:
            ratios = summary["official"]["ratios"]
            print(f"    ratio to the official client per repetition: {', '.join(f'{r:.2f}' for r in ratios)}")
    print(
        f"  K requests in flight at once, all cancelled (or expired) at once; fresh transport each, {config.cancel_reps} runs:"
    )
    for name, runs in cancel["seconds"].items():
        summary = cancel["summary"][name]
        print(f"    {name}:")
        for count, values in runs.items():
            print(
                f"      K={count:<6,} {_duration(statistics.median(values)):>9} in all"
                f"  [{_duration(min(values))} .. {_duration(max(values))}]"
                f"  = {_duration(summary['per_request'][count])}/request"
                f"  (cpu {_duration(summary['cpu_per_request'][count])}/request)"
            )
        print(f"      per request, K={large:,} over K={small:,}: {summary['ratio']:.2f}x")
    if cancel["request_timeouts"]:
        budgets = ", ".join(f"K={k:,}: {t:g} s" for k, t in cancel["request_timeouts"].items())
        print(f"    (request_timeout: {budgets}; the loop is blocked until every deadline has passed)")
    checks = results["validation"]
    print("  call_tool of a tool with an outputSchema, checked (validate_output='warn') and not ('off'):")
    for name in (VALIDATED, UNVALIDATED):
        per_call = statistics.median(checks["seconds_per_call"][name])
        cpu_per_call = statistics.median(checks["cpu_per_call"][name])
        print(f"    {name}: {_duration(per_call)} per call, CPU {_duration(cpu_per_call)} per call")
    print(
        f"    the check alone: {_duration(checks['check_seconds'])} per call,"
        f" {checks['check_share']:.1%} of an unchecked call"
    )
    print(f"    ratio per repetition: {', '.join(f'{r:.2f}' for r in checks['ratios'])}")
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
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run (about a minute)")
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write the results as JSON to PATH")
    parser.add_argument(
        "--reps",
        type=int,
        help="repetitions of each throughput metric, and of the cancellation runs (default 5; quick: 5 and 3)",
    )
    parser.add_argument(
        "--official-python",
        metavar="PATH",
        help=f"an interpreter that has the official client, mcp=={OFFICIAL_PIN} (default: this one)",
    )
    parser.add_argument("--no-official", action="store_true", help="leave the official client out")
    parser.add_argument(
        "--no-pin",
        action="store_true",
        help="measure the throughput without keeping the clients and the servers on CPUs of their own",
    )
    parser.add_argument("--memory-child", choices=[RAW_PREFIX, OURS], help=argparse.SUPPRESS)
    parser.add_argument("--memory-count", type=int, default=10_000, help="requests in flight for peak RSS")
    config = parser.parse_args(argv)
    config.width = 256
    config.big_size = 10 * MIB
    config.turns = 5 if config.quick else 10
    explicit = config.reps is not None
    if config.quick:
        config.sequential, config.in_flight, config.big_calls = 2_000, 10_240, 2
        config.call_sequential, config.call_in_flight = 500, 2_560
        config.reps = config.reps or 5
        config.memory_reps, config.import_reps, config.startup_reps = 1, 5, 3
        config.cancel_counts, config.cancel_reps = [500, 4_000], config.reps if explicit else 3
    else:
        # Eight 10 MiB answers a repetition (each its own turn): with two, one
        # slow turn of two made the repetition's ratio, and the ratios of a
        # run spread from 0.5 to 1.1.
        config.sequential, config.in_flight, config.big_calls = 5_000, 20_480, 8
        config.call_sequential, config.call_in_flight = 5_000, 20_480
        config.reps = config.reps or 5
        config.memory_reps, config.import_reps, config.startup_reps = 3, 5, 9
        config.cancel_counts, config.cancel_reps = [1_000, 8_000], config.reps
    return config


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    if config.memory_child:
        print(json.dumps(memory_child(config.memory_child, config.memory_count)))
        return 0
    print(
        f"trio_mcp {trio_mcp.__version__}, trio {trio.__version__}, Python {platform.python_version()}"
        f" on {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs,"
        f" load average {', '.join(f'{load:.2f}' for load in os.getloadavg())} (1, 5, 15 minutes)"
    )
    print(f"{config.reps} repetitions{' (quick run)' if config.quick else ''}; measuring...", flush=True)
    if config.no_pin:
        print("Throughput: clients and servers run wherever the kernel puts them (--no-pin).")
    else:
        print(
            f"Throughput: the clients run on CPU {CLIENT_CPU} and every echo server on CPU {SERVER_CPU}"
            " (see pinned(); --no-pin to leave them to the kernel)."
        )
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
        "blocks_per_call": measured["blocks"],
        "preemptions_per_call": measured["preemptions"],
        "server_cpu_per_call": measured["serving"],
        "throughput": {
            metric: summarise(values, measured["turns"][metric]) for metric, values in samples.items()
        },
        "load": measured["load"],
        "validation": trio.run(validation, config),
        "cancel": trio.run(cancellation, config),
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
