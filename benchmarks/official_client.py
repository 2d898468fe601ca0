"""The official Python MCP client (``mcp``, pinned to 2.3.0) on the call_tool workloads.

bench.py runs this script in a subprocess, with an interpreter that has
``mcp`` installed (``nox -s bench`` installs it; it is never a dependency of
trio_mcp), so that the official client runs exactly as its users run it: on
anyio's default backend, asyncio, with ``mcp.Client`` and its defaults
(``mode="auto"``: a ``server/discover`` probe, then the modern era).

It opens one client on the echo server named after ``--``, checks that a
call round-trips and warms up (the first ``call_tool`` also lists the tools,
to learn their output schemas), then runs the workloads:

* sequential: ``--sequential`` calls of ``call_tool("echo", {"text": ...})``,
  one after another;
* in flight: ``--width`` tasks in one anyio task group, each making
  ``--in-flight // --width`` calls.

Each result is a JSON object on stdout: the rate in calls per second and
this process's CPU time per call (user plus system), as bench.py measures
its own contenders. Standalone, it runs ``--reps`` repetitions and prints
one JSON document::

    python benchmarks/official_client.py --sequential 2000 -- python benchmarks/echo_server.py

``--url URL`` connects to an echo server over Streamable HTTP instead
(``mcp.Client(URL)``), as ``http_bench.py`` does.

With ``--serve`` (how bench.py uses it) it prints ``{"ready": ...}`` once
warmed up, then reads one command per line on stdin, ``sequential N`` or
``in_flight N WIDTH``, and answers each with one JSON line, until stdin
closes: bench.py can then take turns between it and the other contenders.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import sys
import time

import anyio
import anyio.to_thread
from mcp import Client, StdioServerParameters


async def sequential(client: Client, calls: int) -> float:
    """One call at a time; returns calls per second."""
    call_tool = client.call_tool
    start = time.perf_counter()
    for i in range(calls):
        await call_tool("echo", {"text": f"call {i}"})
    return calls / (time.perf_counter() - start)


async def in_flight(client: Client, calls: int, width: int) -> float:
    """``width`` tasks each looping on calls; returns calls per second."""
    call_tool = client.call_tool
    per_task = calls // width

    async def worker() -> None:
        for i in range(per_task):
            await call_tool("echo", {"text": f"call {i}"})

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(width):
            tg.start_soon(worker)
    return per_task * width / (time.perf_counter() - start)


async def measure(client: Client, metric: str, calls: int, width: int) -> dict[str, float]:
    """Run one workload; return its rate and this process's CPU time per call."""
    gc.collect()
    start = time.process_time()
    if metric == "sequential":
        rate = await sequential(client, calls)
        done = calls
    elif metric == "in_flight":
        rate = await in_flight(client, calls, width)
        done = calls // width * width
    else:
        raise ValueError(f"unknown metric {metric!r}")
    return {"rate": rate, "cpu_per_call": (time.process_time() - start) / done}


async def check(client: Client) -> None:
    """Make sure that the client really does round trips before timing it."""
    text = "héllo\u2028"
    result = await client.call_tool("echo", {"text": text})
    got = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    if result.is_error or got != [text]:
        raise RuntimeError(f"the echo tool answered {result!r} to {text!r}")


async def run(config: argparse.Namespace) -> None:
    if config.url:
        server: StdioServerParameters | str = config.url
    else:
        server = StdioServerParameters(command=config.server[0], args=config.server[1:])
    async with Client(server) as client:
        await check(client)
        await sequential(client, 200)
        await in_flight(client, 2 * config.width, config.width)
        about = {
            "mcp": importlib.metadata.version("mcp"),
            "protocol_version": client.protocol_version,
            "python_version": sys.version.split()[0],
        }
        if config.serve:
            print(json.dumps({"ready": True, **about}), flush=True)
            while True:
                line = await anyio.to_thread.run_sync(sys.stdin.readline)
                if not line:
                    break
                words = line.split()
                if not words:
                    continue
                metric, numbers = words[0], [int(word) for word in words[1:]]
                calls = numbers[0]
                width = numbers[1] if len(numbers) > 1 else config.width
                print(json.dumps(await measure(client, metric, calls, width)), flush=True)
            return
        results: dict[str, list[dict[str, float]]] = {"sequential": [], "in_flight": []}
        for _ in range(config.reps):
            results["sequential"].append(await measure(client, "sequential", config.sequential, config.width))
            results["in_flight"].append(await measure(client, "in_flight", config.in_flight, config.width))
        print(json.dumps({**about, "width": config.width, "results": results}, indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help="take commands on stdin (as bench.py does)")
    parser.add_argument("--sequential", type=int, default=5_000, help="calls in the sequential workload")
    parser.add_argument("--in-flight", type=int, default=20_000, help="calls in the in-flight workload")
    parser.add_argument("--width", type=int, default=256, help="tasks in the in-flight workload")
    parser.add_argument("--reps", type=int, default=1, help="repetitions, standalone")
    parser.add_argument("--url", help="an echo server's Streamable HTTP endpoint, instead of a command")
    parser.add_argument("server", nargs="*", help="the echo server's command line, after --")
    config = parser.parse_args(argv)
    if bool(config.url) == bool(config.server):
        parser.error("name the echo server: either --url URL or its command line after --")
    anyio.run(run, config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
