"""What the process transport's pipe tricks buy: the same session with them and without.

Run ``python benchmarks/pipes_bench.py`` (``nox -s bench`` runs it too);
``--quick`` for a smoke run. See docs/design.rst, "Speed tricks".

Two sessions of trio_mcp, each over its own copy of echo_server.py: one as
the openers make it, and one whose channel has ``pipe_tricks`` off (every
message written by the writer task with ``send_all``, every answer read by
the reader task with ``receive_some``: Trio's own `FdStream`, the plain
way). They take turns (the order reverses every turn), so that a change of
load on the machine hits both alike. Three workloads: one request at a time,
256 in flight, a 10 MiB answer.

For each, two kinds of figures:

* what the scheduler did per request (task steps, and waits for I/O), counted
  with a Trio instrument: exact, and the same on a busy machine as on a quiet
  one;
* the time and the CPU time of a turn, without the tricks over with them
  (above 1: the tricks are faster), the median over turns with its spread.
  The machine may be shared and noisy: the load average is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

try:
    import trio_mcp
except ImportError:  # run from a checkout without installing: use the checkout
    sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
    import trio_mcp
from trio_mcp._session import Session, new_session
from trio_mcp._transports.process import ProcessChannel

SERVER = Path(__file__).resolve().with_name("echo_server.py")
MIB = 1024 * 1024
WIDTH = 256


class PlainProcessChannel(ProcessChannel):
    """The process channel without its pipe tricks."""

    pipe_tricks = False


class Steps(trio.abc.Instrument):
    """Counts task steps and waits for I/O."""

    def __init__(self) -> None:
        self.steps = 0
        self.waits = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps += 1

    def before_io_wait(self, timeout: float) -> None:
        self.waits += 1


async def sequential(session: Session, calls: int) -> None:
    for i in range(calls):
        await session.request("echo", {"i": i})


async def in_flight(session: Session, calls: int) -> None:
    async def worker() -> None:
        for i in range(calls // WIDTH):
            await session.request("echo", {"i": i})

    async with trio.open_nursery() as nursery:
        for _ in range(WIDTH):
            nursery.start_soon(worker)


async def big(session: Session, calls: int) -> None:
    for _ in range(calls):
        result = await session.request("big", {"size": 10 * MIB})
        if len(result["data"]) != 10 * MIB:
            raise RuntimeError("a 'big' answer was cut short")


Workload = Callable[[Session, int], Awaitable[None]]


def _open(channel_class: type[ProcessChannel]) -> Session:
    target = trio_mcp.ProcessTarget(sys.executable, [str(SERVER)])
    channel = channel_class(sys.executable, (str(SERVER),), target, 64 * MIB)
    return new_session(channel)


async def run(config: argparse.Namespace) -> None:
    workloads: list[tuple[str, Workload, int, int]] = [
        ("one at a time", sequential, config.sequential, config.sequential),
        (f"{WIDTH} in flight", in_flight, config.in_flight, config.in_flight // WIDTH * WIDTH),
        ("10 MiB answer", big, config.big, config.big),
    ]
    contenders = {"tricks": ProcessChannel, "plain": PlainProcessChannel}
    async with contextlib.AsyncExitStack() as stack:
        sessions = {name: await stack.enter_async_context(_open(cls)) for name, cls in contenders.items()}
        for session in sessions.values():  # warm up
            await sequential(session, 200)
            await in_flight(session, 2 * WIDTH)
            await big(session, 1)
        print(
            f"{'workload':<16} {'':<7} {'steps/call':>10} {'io waits/call':>13}   plain/tricks: {'time':<18} cpu"
        )
        for label, workload, size, calls in workloads:
            counts = {}
            for name, session in sessions.items():
                steps = Steps()
                trio.lowlevel.add_instrument(steps)
                try:
                    await workload(session, size)
                finally:
                    trio.lowlevel.remove_instrument(steps)
                counts[name] = steps
            times: dict[str, list[float]] = {name: [] for name in sessions}
            cpu: dict[str, list[float]] = {name: [] for name in sessions}
            names = list(sessions)
            for turn in range(config.turns):
                for name in names if turn % 2 == 0 else names[::-1]:
                    gc.collect()
                    wall, process = time.perf_counter(), time.process_time()
                    await workload(sessions[name], size)
                    times[name].append(time.perf_counter() - wall)
                    cpu[name].append(time.process_time() - process)
            ratios = [plain / ours for plain, ours in zip(times["plain"], times["tricks"], strict=True)]
            cpu_ratios = [plain / ours for plain, ours in zip(cpu["plain"], cpu["tricks"], strict=True)]
            for name in names:
                steps = counts[name]
                line = f"{label if name == 'tricks' else '':<16} {name:<7} {steps.steps / calls:>10.2f} {steps.waits / calls:>13.2f}"
                if name == "plain":
                    line += (
                        f"   {statistics.median(ratios):.2f}x ({min(ratios):.2f}..{max(ratios):.2f})"
                        f"   {statistics.median(cpu_ratios):.2f}x"
                    )
                print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument(
        "--turns", type=int, help="turns of each contender per workload (default 15; quick: 5)"
    )
    config = parser.parse_args(argv)
    if config.quick:
        config.sequential, config.in_flight, config.big = 500, 5_120, 1
        config.turns = config.turns or 5
    else:
        config.sequential, config.in_flight, config.big = 2_000, 20_480, 2
        config.turns = config.turns or 15
    print(
        f"The pipe tricks of trio_mcp's process transport, on {os.cpu_count()} CPUs,"
        f" load average {os.getloadavg()[0]:.2f}; {config.turns} turns each"
    )
    started = time.perf_counter()
    trio.run(run, config)
    print(f"({time.perf_counter() - started:.1f} s; load average now {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
