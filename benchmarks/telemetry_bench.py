"""What OpenTelemetry costs a call: ``client.call_tool`` with and without telemetry, in one run.

Run ``python benchmarks/telemetry_bench.py --otel MODE`` (``nox -s bench``
runs it in every mode):

``none``
    The program never imports OpenTelemetry (installed or not).
``api``
    The program imports the API and makes a tracer, but sets up no SDK.
``sdk``
    The SDK's tracer and meter providers are set, with a batch span
    processor feeding an exporter that drops everything, and a metric reader
    that is never read: the cost of recording itself.

The contenders, each on its own echo_server.py, take turns in every
repetition (the order reverses on every one): the raw writer+reader client
of raw_baseline.py (os.write), trio_mcp with its defaults, and, in ``sdk``
mode, trio_mcp with ``telemetry=False``. Reported: the median rate and CPU
time per call of each, and the median over repetitions of trio_mcp's rate
over raw's: a ratio that can be compared between runs of two versions of
the package, each normalised by the same raw client on the same machine at
the same time. In ``sdk`` mode, the cost of telemetry per call is the
difference of CPU time per call between the two trio_mcp contenders.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import SERVER_ARGV, call_tool_in_flight, call_tool_sequential, check_call_tool
from raw_baseline import open_raw_client

import trio_mcp

RAW = "raw (os.write)"
OURS = "trio_mcp"
OFF = "trio_mcp, telemetry=False"


def set_up(mode: str) -> None:
    """Make the process look like a program that uses OpenTelemetry as ``mode`` says."""
    if mode == "none":
        return
    from opentelemetry import metrics, trace

    trace.get_tracer("an application")  # the API in use, no SDK
    if mode == "api":
        return
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


def _text(result: Any) -> str:
    return result["content"][0]["text"] if isinstance(result, dict) else result.text


async def run(config: argparse.Namespace) -> dict[str, Any]:
    target = trio_mcp.ProcessTarget(SERVER_ARGV[0], SERVER_ARGV[1:])
    async with contextlib.AsyncExitStack() as stack:
        raw = await stack.enter_async_context(open_raw_client(SERVER_ARGV, "os.write"))
        ours = await stack.enter_async_context(trio_mcp.open_client(target))
        contenders = [(RAW, raw.call_tool), (OURS, ours.call_tool)]
        if config.otel == "sdk":
            options = trio_mcp.ClientOptions(telemetry=False)
            off = await stack.enter_async_context(trio_mcp.open_client(target, options=options))
            contenders.append((OFF, off.call_tool))
        for _, call_tool in contenders:
            await check_call_tool(call_tool, _text)
            await call_tool_sequential(call_tool, 200)
            await call_tool_in_flight(call_tool, 512, 256)
        workloads = {
            "call_tool sequential": (lambda c: call_tool_sequential(c, config.calls), config.calls),
            "call_tool, 256 in flight": (
                lambda c: call_tool_in_flight(c, config.calls * 4, 256),
                config.calls * 4 // 256 * 256,
            ),
        }
        results: dict[str, Any] = {}
        for metric, (workload, calls) in workloads.items():
            rates: dict[str, list[float]] = {name: [] for name, _ in contenders}
            cpu: dict[str, list[float]] = {name: [] for name, _ in contenders}
            for rep in range(config.reps):
                for name, call_tool in contenders if rep % 2 == 0 else contenders[::-1]:
                    gc.collect()
                    started = time.process_time()
                    rates[name].append(await workload(call_tool))
                    cpu[name].append((time.process_time() - started) / calls)
            results[metric] = {"rate": rates, "cpu": cpu}
        results["traced"] = type(ours.session).__name__
    return results


def report(config: argparse.Namespace, results: dict[str, Any]) -> None:
    print(f"mode {config.otel}: trio_mcp's session is a {results.pop('traced')}")
    for metric, measured in results.items():
        rates, cpu = measured["rate"], measured["cpu"]
        print(f"{metric}:")
        for name in rates:
            print(
                f"  {name:28} {statistics.median(rates[name]):>9,.0f} calls/s"
                f"  cpu {statistics.median(cpu[name]) * 1e6:6.1f} us/call"
            )
        per_rep = [ours / raw for ours, raw in zip(rates[OURS], rates[RAW], strict=True)]
        cpu_ratio = statistics.median(cpu[OURS]) / statistics.median(cpu[RAW])
        print(
            f"  trio_mcp / raw: {statistics.median(per_rep):.3f}x"
            f" (per repetition {', '.join(f'{r:.2f}' for r in per_rep)}); cpu {cpu_ratio:.3f}x"
        )
        if OFF in rates:
            cost = statistics.median(cpu[OURS]) - statistics.median(cpu[OFF])
            rate = statistics.median([a / b for a, b in zip(rates[OURS], rates[OFF], strict=True)])
            print(f"  telemetry on / off: rate {rate:.3f}x; cost {cost * 1e6:.1f} us of CPU per call")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--otel", choices=["none", "api", "sdk"], default="none")
    parser.add_argument("--calls", type=int, default=2_000, help="calls per sequential run (in flight: 4x)")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write the results as JSON to PATH")
    config = parser.parse_args(argv)
    set_up(config.otel)
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    results = trio.run(run, config)
    if config.json is not None:
        config.json.write_text(json.dumps({"otel": config.otel, **results}, indent=2) + "\n")
    report(config, results)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
