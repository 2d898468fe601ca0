"""Benchmark trio_mcp's stdio transport against a raw Trio baseline.

Run ``python benchmarks/bench.py`` (or ``nox -s bench``); ``--quick`` for a
smoke run, ``--json PATH`` to keep the numbers. See benchmarks/README.md.

The machine may be shared and noisy, so only RATIOS measured in one run are
reported. The contenders (trio_mcp and two variants of the raw baseline, see
raw_baseline.py) each talk to their own copy of echo_server.py, all opened at
once in one process; every metric is measured in several repetitions, with
the contenders taking turns (the order reverses on every repetition). A ratio
is the median over repetitions of trio_mcp's result divided by the raw
result of the same repetition, against the raw variant that did better on
that metric. Peak memory is measured in fresh subprocesses, one contender
each, so that peaks do not mix.
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

OURS = "trio_mcp"
RAW_PREFIX = "raw"
MIB = 1024 * 1024

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]

#: The targets, as ratios of trio_mcp to the raw baseline.
TARGETS = {
    "sequential": 0.85,
    "in_flight": 0.70,
    "big": 0.80,
    "memory": 2.0,  # trio_mcp's peak RSS growth over raw's: at most this
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


# ----------------------------------------------------------- throughput run


async def throughput(config: argparse.Namespace) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Measure every throughput metric for every contender, taking turns.

    Returns ``{"rate": ..., "cpu": ...}``, each ``{metric: {contender: samples}}``:
    the rates, and this process's CPU time per call in seconds (user and
    system, so the client's own cost, syscalls included; it is much less
    sensitive to other load on the machine than the rates are).
    """
    metrics = ("sequential", "in_flight", "big")
    samples: dict[str, dict[str, list[float]]] = {metric: {} for metric in metrics}
    cpu: dict[str, dict[str, list[float]]] = {metric: {} for metric in metrics}
    async with (
        open_raw_client(SERVER_ARGV, "send_all") as raw_send_all,
        open_raw_client(SERVER_ARGV, "os.write") as raw_os_write,
        trio_mcp.open_stdio_transport(sys.executable, [str(SERVER)]) as wire,
    ):
        contenders: list[tuple[str, Request]] = [
            (f"{RAW_PREFIX} ({WRITE_MODES[0]})", raw_send_all.request),
            (f"{RAW_PREFIX} ({WRITE_MODES[1]})", raw_os_write.request),
            (OURS, wire.request),
        ]
        workloads: dict[str, tuple[Callable[[Request], Awaitable[float]], int]] = {
            "sequential": (lambda request: sequential(request, config.sequential), config.sequential),
            "in_flight": (
                lambda request: in_flight(request, config.in_flight, config.width),
                config.in_flight // config.width * config.width,
            ),
            "big": (lambda request: big(request, config.big_size, config.big_calls), config.big_calls),
        }
        for _, request in contenders:
            await check(request)
            await sequential(request, 200)
            await in_flight(request, 2 * config.width, config.width)
            await big(request, config.big_size, 1)
        for metric, (workload, calls) in workloads.items():
            for name, _ in contenders:
                samples[metric][name] = []
                cpu[metric][name] = []
            for rep in range(config.reps):
                order = contenders if rep % 2 == 0 else contenders[::-1]
                for name, request in order:
                    gc.collect()
                    start = time.process_time()
                    samples[metric][name].append(await workload(request))
                    cpu[metric][name].append((time.process_time() - start) / calls)
    return {"rate": samples, "cpu": cpu}


def summarise(samples: dict[str, list[float]]) -> dict[str, Any]:
    """Pick the better raw variant and pair trio_mcp's samples with its samples."""
    raws = {name: values for name, values in samples.items() if name.startswith(RAW_PREFIX)}
    reference = max(raws, key=lambda name: statistics.median(raws[name]))
    ratios = [ours / raw for ours, raw in zip(samples[OURS], raws[reference], strict=True)]
    return {
        "reference": reference,
        "medians": {name: statistics.median(values) for name, values in samples.items()},
        "ratios": ratios,
        "ratio": statistics.median(ratios),
    }


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
    """Time ``import trio`` and ``import trio_mcp`` in fresh interpreters, taking turns."""
    env = _child_env()
    modules = ["trio", "trio_mcp"]
    times: dict[str, list[float]] = {module: [] for module in modules}
    for rep in range(reps):
        for module in modules if rep % 2 == 0 else modules[::-1]:
            code = f"import time\nt = time.perf_counter()\nimport {module}\nprint(time.perf_counter() - t)"
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True
            )
            times[module].append(float(done.stdout.strip()))
    medians = {module: statistics.median(values) for module, values in times.items()}
    return {"samples": times, "medians": medians, "extra": medians["trio_mcp"] - medians["trio"]}


# ------------------------------------------------------------------ report


def _rate(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if value >= 100 else f"{value:,.1f} {unit}"


def report(config: argparse.Namespace, results: dict[str, Any]) -> bool:
    """Print the table; return whether every target was met."""
    rows: list[tuple[str, str, str, str, str, str]] = []
    all_met = True
    labels = {
        "sequential": (f"sequential round trips (n={config.sequential})", "calls/s"),
        "in_flight": (
            f"{config.width} in flight ({config.in_flight // config.width * config.width} calls)",
            "calls/s",
        ),
        "big": (f"{config.big_size // MIB} MiB response (x{config.big_calls} per rep)", "MiB/s"),
    }
    for metric, (label, unit) in labels.items():
        summary = results["throughput"][metric]
        ratio = summary["ratio"]
        met = ratio >= TARGETS[metric]
        all_met &= met
        raw_value = summary["medians"][summary["reference"]]
        rows.append(
            (
                label,
                _rate(raw_value, unit),
                _rate(summary["medians"][OURS], unit),
                f"{ratio:.2f}x",
                f">= {TARGETS[metric]:.2f}x",
                "ok" if met else "MISS",
            )
        )
    mem = results["memory"]
    met = mem["ratio"] <= TARGETS["memory"]
    all_met &= met
    rows.append(
        (
            f"peak RSS growth, {config.memory_count} in flight",
            f"{mem['growth_kib'][RAW_PREFIX] / 1024:,.1f} MiB",
            f"{mem['growth_kib'][OURS] / 1024:,.1f} MiB",
            f"{mem['ratio']:.2f}x",
            f"<= {TARGETS['memory']:.1f}x",
            "ok" if met else "MISS",
        )
    )
    header = ("metric", "raw", "trio_mcp", "ratio", "target", "")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)
        ]
        return "  ".join(cells).rstrip()

    print()
    print(line(header))
    print(line(tuple("-" * width for width in widths)))
    for row in rows:
        print(line(row))
    print()
    print(
        "Ratios: throughput is trio_mcp / raw (higher is better), memory is trio_mcp / raw (lower is better)."
    )
    print("Throughput ratios are medians of per-repetition ratios against the faster raw variant.")
    print()
    print("Details (median, the range over repetitions, and this process's CPU time per call):")
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
        ratios = summary["ratios"]
        print(f"    ratio per repetition: {', '.join(f'{r:.2f}' for r in ratios)}")
    print(f"  peak RSS growth, {config.memory_count} requests in flight (fresh process each):")
    for name, runs in mem["runs"].items():
        growth = [run["growth_kib"] / 1024 for run in runs]
        per_request = statistics.median(run["growth_kib"] for run in runs) * 1024 / config.memory_count
        print(
            f"    {name:<18} {statistics.median(growth):>10.1f} MiB   ({per_request:,.0f} bytes/request;"
            f" runs: {', '.join(f'{g:.1f}' for g in growth)} MiB)"
        )
    if not mem["exact"]:
        print("    (no /proc/self/clear_refs: growth taken from ru_maxrss, which includes start-up peaks)")
    imports = results["imports"]
    print(f"  import time, fresh interpreter, median of {config.import_reps}:")
    print(
        f"    import trio      {imports['medians']['trio'] * 1000:7.1f} ms\n"
        f"    import trio_mcp  {imports['medians']['trio_mcp'] * 1000:7.1f} ms"
        f"  (trio_mcp's own share: {imports['extra'] * 1000:+.1f} ms)"
    )
    print()
    print("All targets met." if all_met else "Some targets were MISSED.")
    return all_met


# -------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, for a smoke run (well under a minute)"
    )
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write the results as JSON to PATH")
    parser.add_argument(
        "--reps", type=int, help="repetitions of each throughput metric (default 5, --quick 3)"
    )
    parser.add_argument("--memory-child", choices=[RAW_PREFIX, OURS], help=argparse.SUPPRESS)
    parser.add_argument("--memory-count", type=int, default=10_000, help="requests in flight for peak RSS")
    config = parser.parse_args(argv)
    config.width = 256
    config.big_size = 10 * MIB
    if config.quick:
        config.sequential, config.in_flight, config.big_calls = 2_000, 10_240, 2
        config.reps = config.reps or 5
        config.memory_reps, config.import_reps = 1, 5
    else:
        config.sequential, config.in_flight, config.big_calls = 5_000, 20_000, 2
        config.reps = config.reps or 5
        config.memory_reps, config.import_reps = 3, 5
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
    measured = trio.run(throughput, config)
    samples = measured["rate"]
    results: dict[str, Any] = {
        "samples": samples,
        "cpu_per_call": measured["cpu"],
        "throughput": {metric: summarise(values) for metric, values in samples.items()},
        "memory": memory(config),
        "imports": import_times(config.import_reps),
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
            },
            "targets": TARGETS,
            "all_met": all_met,
            "seconds": elapsed,
            **results,
        }
        config.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
