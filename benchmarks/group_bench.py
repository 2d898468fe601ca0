"""Many servers in one process: a server group against clients opened by hand, and the official SDK's group.

Each contender holds ``--servers`` copies of the echo server (100 by
default) and is measured in a fresh process of its own, taking turns over
``--reps`` repetitions (the medians are reported):

* **group**: ``trio_mcp.open_servers`` over one configuration of N entries
  (concurrent starts, supervision, the catalogue: one ``tools/list`` per
  server, a task that watches each server);
* **by hand**: N ``trio_mcp.open_stdio_client`` blocks, each in a task of one
  nursery, each listing its tools once (what a catalogue needs), as a
  program without groups would write it;
* **official**: the official Python SDK's ``ClientSessionGroup`` (``mcp``,
  as pinned in noxfile.py), its ``connect_to_server`` called for each
  server in turn as its documentation shows (it aggregates the tools of
  each server as it connects), run in a subprocess by an interpreter that
  has ``mcp``.

For each: the time until all N are connected (open), the time to close them
all, and the growth of the client process's resident memory per server
(its children, the servers, are not counted). The target: the group adds
no more than 10% per server over clients opened by hand.

Then the crash loop: N servers that exit as soon as they start, in one
group whose policy never gives up (the default delays otherwise), for
``--crash-seconds`` (30 by default): how many starts that made, and the CPU
time the client process spent (its own, and apart from it the servers').

::

    python benchmarks/group_bench.py                    # 100 servers, 30 s of crashes
    python benchmarks/group_bench.py --quick            # 20 servers, 5 s: a smoke run
    python benchmarks/group_bench.py --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = HERE / "echo_server.py"
CRASH = ["-c", "import sys; sys.exit(1)"]

GROUP = "group (open_servers)"
BY_HAND = "by hand (open_stdio_client x N)"
OFFICIAL = "official (ClientSessionGroup)"


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _child_env() -> dict[str, str]:
    """Our environment, with the checkout's trio_mcp first on the path of child interpreters."""
    root = str(HERE.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


# ----------------------------------------------------------- the contenders


def run_ours(kind: str, count: int) -> dict[str, Any]:
    """Open and close ``count`` servers with trio_mcp, in this fresh process."""
    import trio

    import trio_mcp

    specs = [
        trio_mcp.ServerSpec(name=f"echo{i}", command=sys.executable, args=[str(SERVER)]) for i in range(count)
    ]

    async def by_hand(specs: list[Any]) -> tuple[float, float, int]:
        clients: list[Any] = []
        async with trio.open_nursery() as nursery:
            stop = trio.Event()
            ready = trio.Semaphore(0)

            async def hold(spec: Any) -> None:
                async with trio_mcp.open_stdio_client(spec.command, spec.args) as client:
                    clients.append((client, await client.list_tools()))
                    ready.release()
                    await stop.wait()

            start = time.perf_counter()
            for spec in specs:
                nursery.start_soon(hold, spec)
            for _ in specs:
                await ready.acquire()
            opened = time.perf_counter() - start
            gc.collect()
            rss = _status_kib("VmRSS")
            assert len(clients) == len(specs)
            start = time.perf_counter()
            stop.set()
        return opened, time.perf_counter() - start, rss

    async def group(specs: list[Any]) -> tuple[float, float, int]:
        start = time.perf_counter()
        async with trio_mcp.open_servers(specs) as servers:
            opened = time.perf_counter() - start
            gc.collect()
            rss = _status_kib("VmRSS")
            assert [status.state for status in servers.statuses()] == ["ready"] * len(specs)
            assert {entry.server for entry in servers.tools} == {spec.name for spec in specs}
            start = time.perf_counter()
        return opened, time.perf_counter() - start, rss

    contender = group if kind == GROUP else by_hand

    async def main() -> dict[str, Any]:
        # One server first, so that every module and class is loaded before the baseline.
        await contender(specs[:1])
        gc.collect()
        before = _status_kib("VmRSS")
        opened, closed, rss = await contender(specs)
        return {"open_s": opened, "close_s": closed, "kib_per_server": (rss - before) / count}

    return trio.run(main)


def run_official(count: int) -> dict[str, Any]:
    """Open and close ``count`` servers with the official SDK's ClientSessionGroup, in this fresh process."""
    import anyio
    from mcp import StdioServerParameters
    from mcp.client.session_group import ClientSessionGroup

    current = [0]

    def name_hook(name: str, _server_info: Any) -> str:
        # Every echo server has the same serverInfo: name by connection order.
        return f"echo{current[0]}_{name}"

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])

    async def main() -> dict[str, Any]:
        async with ClientSessionGroup(component_name_hook=name_hook) as warm:
            await warm.connect_to_server(params)
        gc.collect()
        before = _status_kib("VmRSS")
        start = time.perf_counter()
        async with AsyncExitStack() as stack:
            group = await stack.enter_async_context(ClientSessionGroup(component_name_hook=name_hook))
            for i in range(count):
                current[0] = i
                await group.connect_to_server(params)
            opened = time.perf_counter() - start
            gc.collect()
            rss = _status_kib("VmRSS")
            # Every server lists the same tools (the echo server has more than one).
            assert len(group.tools) >= count
            assert len(group.tools) % count == 0
            start = time.perf_counter()
        return {
            "open_s": opened,
            "close_s": time.perf_counter() - start,
            "kib_per_server": (rss - before) / count,
        }

    return anyio.run(main)


def run_crash_loop(count: int, seconds: float) -> dict[str, Any]:
    """``count`` servers crashing at start in one group, for ``seconds``: starts and CPU."""
    import trio

    import trio_mcp

    specs = [trio_mcp.ServerSpec(name=f"crash{i}", command=sys.executable, args=CRASH) for i in range(count)]
    # The default delays, but never giving up: the loop goes on for the whole run.
    policy = trio_mcp.RestartPolicy(max_restarts=10**9, max_start_failures=0)
    starts = [0]

    def on_event(event: Any) -> None:
        if event.state == "starting":
            starts[0] += 1

    async def main() -> dict[str, Any]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        with trio.move_on_after(seconds):
            async with trio_mcp.open_servers(
                specs,
                restart=policy,
                on_event=on_event,
                options=trio_mcp.ClientOptions(protocol="2025-11-25"),
            ):
                await trio.sleep_forever()
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_SELF)
        after_children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
        servers_cpu = (after_children.ru_utime - children.ru_utime) + (
            after_children.ru_stime - children.ru_stime
        )
        return {
            "seconds": wall,
            "starts": starts[0] + count,
            "client_cpu_s": cpu,
            "client_cpu_share": cpu / wall,
            "servers_cpu_s": servers_cpu,
            "client_cpu_ms_per_start": 1000 * cpu / max(1, starts[0] + count),
        }

    return trio.run(main)


# ------------------------------------------------------------------ driver


def find_official(config: argparse.Namespace) -> str | None:
    if config.no_official:
        return None
    python = config.official_python or sys.executable
    done = subprocess.run(
        [python, "-c", "import mcp.client.session_group"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        print(
            f"The official SDK is not importable by {python}: its row is left out (--official-python PATH)."
        )
        return None
    return python


def child(argv: list[str], python: str = sys.executable) -> dict[str, Any]:
    done = subprocess.run(
        [python, str(Path(__file__).resolve()), *argv],
        env=_child_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def scale(config: argparse.Namespace, official: str | None) -> dict[str, Any]:
    kinds = [GROUP, BY_HAND] + ([OFFICIAL] if official else [])
    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    for rep in range(config.reps):
        for kind in kinds if rep % 2 == 0 else kinds[::-1]:
            argv = ["--child", kind, "--servers", str(config.servers)]
            python = official if kind == OFFICIAL and official else sys.executable
            runs[kind].append(child(argv, python))
            print(f"  {kind}: {runs[kind][-1]}", flush=True)
    medians = {
        kind: {key: statistics.median(run[key] for run in runs[kind]) for key in runs[kind][0]}
        for kind in kinds
    }
    return {"runs": runs, "medians": medians}


def report(config: argparse.Namespace, results: dict[str, Any]) -> bool:
    medians = results["scale"]["medians"]
    base = medians[BY_HAND]
    count = config.servers
    print()
    print(f"{count} servers in one process (median of {config.reps}; lower is better)")
    header = f"{'contender':<34} {'open':>9} {'close':>9} {'KiB/server':>11}  {'vs by hand (open, close, memory)':>34}"
    print(header)
    print("-" * len(header))
    for kind, row in medians.items():
        ratios = ", ".join(
            f"{row[key] / base[key]:.2f}" if base[key] > 0 else "n/a"
            for key in ("open_s", "close_s", "kib_per_server")
        )
        print(
            f"{kind:<34} {row['open_s']:>8.2f}s {row['close_s']:>8.2f}s {row['kib_per_server']:>11.1f}  {ratios:>34}"
        )
    group = medians[GROUP]
    per_server_open = (group["open_s"] - base["open_s"]) / count
    extra_memory = group["kib_per_server"] / base["kib_per_server"] - 1 if base["kib_per_server"] > 0 else 0.0
    extra_open = group["open_s"] / base["open_s"] - 1
    extra_close = group["close_s"] / base["close_s"] - 1
    print()
    print(
        f"The group over clients by hand: {extra_open:+.0%} open time ({1000 * per_server_open:+.1f} ms per server),"
        f" {extra_close:+.0%} close time, {extra_memory:+.0%} memory per server; target: at most +10% each."
    )
    crash = results["crash"]
    print()
    print(
        f"Crash loop: {count} servers exiting at start, restarted with the default delays for"
        f" {crash['seconds']:.0f} s: {crash['starts']} starts; the client process used"
        f" {crash['client_cpu_s']:.2f} s of CPU ({crash['client_cpu_share']:.1%} of one core,"
        f" {crash['client_cpu_ms_per_start']:.1f} ms per start); the servers {crash['servers_cpu_s']:.2f} s."
    )
    met = max(extra_memory, extra_open, extra_close) <= 0.10
    print("Target met." if met else "Target NOT met (this machine may be loaded: compare the runs above).")
    return met


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=100, help="servers per contender (100)")
    parser.add_argument("--crash-seconds", type=float, default=30.0, help="length of the crash loop (30 s)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of the scale run (3)")
    parser.add_argument("--quick", action="store_true", help="20 servers, 5 s of crashes, 1 repetition")
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write the results as JSON to PATH")
    parser.add_argument("--official-python", metavar="PATH", help="an interpreter that has mcp")
    parser.add_argument("--no-official", action="store_true", help="leave the official SDK out")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    config = parser.parse_args(argv)
    if config.quick:
        config.servers, config.crash_seconds, config.reps = 20, 5.0, 1
    return config


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    if config.child == "crash":
        print(json.dumps(run_crash_loop(config.servers, config.crash_seconds)))
        return 0
    if config.child == OFFICIAL:
        print(json.dumps(run_official(config.servers)))
        return 0
    if config.child:
        print(json.dumps(run_ours(config.child, config.servers)))
        return 0
    official = find_official(config)
    print(f"Opening and closing {config.servers} servers, {config.reps} times per contender:", flush=True)
    results: dict[str, Any] = {"servers": config.servers, "scale": scale(config, official)}
    print(f"Crash loop, {config.crash_seconds:g} s:", flush=True)
    results["crash"] = child(
        ["--child", "crash", "--servers", str(config.servers), "--crash-seconds", str(config.crash_seconds)]
    )
    report(config, results)
    if config.json:
        config.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
