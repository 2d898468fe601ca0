"""The HTTP soak: trio_mcp against a chaos server, many calls, every answer checked.

    python benchmarks/soak.py [--calls 200000] [--width 16] [--max-seconds 2700] [--seed 1]

Two chaos servers (``tests/servers/chaos_server.py``, one process per era, on 127.0.0.1),
one trio_mcp client on each: 2026-07-28 and the initialize era (2025-11-25).
On each, ``--width`` tasks call ``echo`` with a text of their own, until
``--calls`` calls in all (half per era) or ``--max-seconds``. Every call
ends in one of:

* **right**: the answer's text is the call's own;
* **wrong**: an answer, with another text (or an error result): never allowed;
* **typed**: an exception of trio_mcp's (`trio_mcp.MCPError`), which the
  chaos earns (a cut connection, a 5xx, a 429, ...); counted by type;
* **untyped**: any other exception: never allowed;
* **hang**: no end within ``--hang`` seconds (60): never allowed.

A client that ends for good (`TransportClosed`, `ServerGone`) is opened again,
and counted. Every tenth of the run it samples the soak process's open file
descriptors and Trio tasks, and each server's open connections: they must
stay flat (the last third no higher than the first third, plus a little).

It prints the counts and exits 1 if any call was wrong, untyped or hung, if
fewer calls than asked for were made, or if resources grew.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

import trio_mcp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CHAOS = ROOT / "tests" / "servers" / "chaos_server.py"
ERAS = {"2026-07-28": "2026-07-28", "2025-11-25": "2025-11-25"}
#: Growth allowed between the first and the last third of the samples.
SLACK = {"fds": 8, "tasks": 16, "server connections": 8}

if importlib.util.find_spec("trio_mcp") is None:  # a checkout, not installed
    sys.path.insert(0, str(ROOT))


class Server:
    def __init__(self, seed: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(CHAOS), "--seed", str(seed)], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("LISTENING "):
            self.close()
            raise RuntimeError(f"the chaos server did not start (it said {line!r})")
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"
        self.url = self.base + "/mcp"

    async def stats(self) -> dict[str, Any]:
        import httpx2

        async with httpx2.AsyncClient(trust_env=False) as http:
            return (await http.get(self.base + "/stats")).json()  # type: ignore[no-any-return]

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class Tally:
    era: str
    right: int = 0
    wrong: list[str] = field(default_factory=list)
    typed: Counter[str] = field(default_factory=Counter)
    typed_samples: dict[str, str] = field(default_factory=dict)
    untyped: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    reopened: int = 0
    started: int = 0

    @property
    def done(self) -> int:
        return self.right + len(self.wrong) + sum(self.typed.values()) + len(self.untyped) + len(self.hangs)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else -1


def trio_tasks() -> int:
    count, stack = 0, [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        count += 1
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return count


async def soak_era(url: str, protocol: str, tally: Tally, quota: int, config: argparse.Namespace) -> None:
    rng = random.Random(config.seed)

    async def call(client: trio_mcp.Client, worker: int) -> bool:
        """One call; `False` when the client is gone for good."""
        tally.started += 1
        text = f"{tally.era}/{worker}/{tally.started}/{rng.getrandbits(40):010x}"
        with trio.move_on_after(config.hang) as scope:
            try:
                result = await client.call_tool("echo", {"text": text})
            except (trio_mcp.TransportClosed, trio_mcp.ServerGone) as exc:
                tally.typed[type(exc).__name__] += 1
                tally.typed_samples.setdefault(type(exc).__name__, str(exc)[:300])
                return False
            except trio_mcp.MCPError as exc:
                tally.typed[type(exc).__name__] += 1
                tally.typed_samples.setdefault(type(exc).__name__, str(exc)[:300])
                return True
            except Exception as exc:
                tally.untyped.append(f"{text}: {''.join(traceback.format_exception(exc))[-2000:]}")
                return True
            if result.is_error or result.text != text:
                tally.wrong.append(f"asked {text!r}, got {result.text!r} (error result: {result.is_error})")
            else:
                tally.right += 1
        if scope.cancelled_caught:
            tally.hangs.append(f"{text}: no end after {config.hang} s")
        return True

    while tally.started < quota:
        alive = True
        try:
            async with trio_mcp.open_client(
                trio_mcp.HTTPTarget(url, trust_env=False), options=trio_mcp.ClientOptions(protocol=protocol)
            ) as client:

                async def worker(number: int, client: trio_mcp.Client = client) -> None:
                    nonlocal alive
                    while alive and tally.started < quota:
                        if not await call(client, number):
                            alive = False

                async with trio.open_nursery() as nursery:
                    for number in range(config.width):
                        nursery.start_soon(worker, number)
        except trio_mcp.MCPError as exc:
            tally.typed[f"open: {type(exc).__name__}"] += 1
            tally.typed_samples.setdefault(f"open: {type(exc).__name__}", str(exc)[:300])
        except Exception as exc:
            tally.untyped.append(f"open/close: {''.join(traceback.format_exception(exc))[-2000:]}")
        if tally.started < quota:
            tally.reopened += 1


async def run(config: argparse.Namespace) -> int:
    servers = {era: Server(config.seed + i) for i, era in enumerate(ERAS)}
    tallies = {era: Tally(era) for era in ERAS}
    samples: list[dict[str, int]] = []
    start = time.monotonic()
    try:
        quota = config.calls // len(ERAS)

        async def sampler() -> None:
            step = max(1, config.calls // 10)
            mark = step
            while True:
                await trio.sleep(0.5)
                if sum(t.done for t in tallies.values()) >= mark:
                    mark += step
                    connections = sum([(await s.stats())["open"] for s in servers.values()])
                    samples.append(
                        {"fds": open_fds(), "tasks": trio_tasks(), "server connections": connections}
                    )
                    done = sum(t.done for t in tallies.values())
                    print(
                        f"  {done:>8} calls, {time.monotonic() - start:6.0f} s: {samples[-1]}",
                        flush=True,
                    )

        with trio.move_on_after(config.max_seconds) as overall:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(sampler)
                async with trio.open_nursery() as eras:
                    for era, server in servers.items():
                        eras.start_soon(soak_era, server.url, ERAS[era], tallies[era], quota, config)
                nursery.cancel_scope.cancel()
        await trio.sleep(1.0)
        after = {era: await server.stats() for era, server in servers.items()}
    finally:
        for server in servers.values():
            server.close()
    return report(config, tallies, samples, after, time.monotonic() - start, overall.cancelled_caught)


def report(
    config: argparse.Namespace,
    tallies: dict[str, Tally],
    samples: list[dict[str, int]],
    after: dict[str, dict[str, Any]],
    elapsed: float,
    timed_out: bool,
) -> int:
    ok = not timed_out
    total = sum(t.done for t in tallies.values())
    print(
        f"\nHTTP soak: {total} calls in {elapsed:.0f} s ({'stopped at --max-seconds' if timed_out else 'all made'})"
    )
    for era, tally in tallies.items():
        print(
            f"  {era}: {tally.done} calls: right {tally.right}, wrong {len(tally.wrong)}, "
            f"typed {sum(tally.typed.values())}, untyped {len(tally.untyped)}, hangs {len(tally.hangs)}, "
            f"clients reopened {tally.reopened}"
        )
        for name, count in sorted(tally.typed.items()):
            print(f"      {name}: {count}   e.g. {tally.typed_samples[name]!r}")
        server = after[era]
        print(f"      server: {json.dumps(server['counts'], sort_keys=True)}")
        print(
            f"      server after close: {server['open']} connections open, {server['asks pending']} requests unanswered"
        )
        for kind, items in (("WRONG", tally.wrong), ("UNTYPED", tally.untyped), ("HANG", tally.hangs)):
            for item in items[:5]:
                print(f"    {kind}: {item}")
            ok &= not items
        ok &= server["open"] == 0
    ok &= total >= config.calls
    third = max(1, len(samples) // 3)
    if len(samples) >= 3:
        for key, slack in SLACK.items():
            early = max(s[key] for s in samples[:third])
            late = max(s[key] for s in samples[-third:])
            flat = late <= early + slack
            ok &= flat
            print(
                f"  {key}: first third at most {early}, last third at most {late}: {'flat' if flat else 'GREW'}"
            )
    print(f"\nsoak: {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000, help="calls in all (half per era)")
    parser.add_argument("--width", type=int, default=16, help="calls in flight per era")
    parser.add_argument("--max-seconds", type=float, default=2700.0, help="the soak's bound in time")
    parser.add_argument("--hang", type=float, default=60.0, help="a call taking longer has hung")
    parser.add_argument("--seed", type=int, default=1)
    config = parser.parse_args(argv)
    if importlib.util.find_spec("httpx2") is None:
        print("HTTP soak skipped: httpx2 is not installed (pip install 'trio-mcp[http]')")
        return 0
    with contextlib.suppress(KeyboardInterrupt):
        return trio.run(run, config)
    return 1


if __name__ == "__main__":
    sys.exit(main())
