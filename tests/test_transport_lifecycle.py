"""Lifecycle tests of a session over a `ProcessTarget` (`open_session`) against real child processes.

Each test starts ``tests/servers/life_server.py`` (a stdlib script driven by
the request methods and flags described in its docstring) and checks one
point of the lifecycle contract: how the death of the server is reported
(`ServerGone`), request budgets (`RequestTimeout` and the caller's own cancel
scopes), closing (`TransportClosed`, the close sequence and its bounds), and
that nothing leaks and no `ExceptionGroup` reaches the caller.

These tests run on the real clock. Every one is guarded by `trio.fail_after`
with a generous bound, and is built so that a wrong implementation waits for
something long (a ``request_timeout`` of 60 s, a ``kill_grace`` of 30 s, or
forever) and trips the guard, rather than depending on how fast the machine
is. (A close that never ends cannot be cut short by a guard, since closing
is shielded; the servers' own lifetime of a minute bounds that case.)
"""

from __future__ import annotations

import math
import os
import signal
import sys
from pathlib import Path

import pytest
import trio
import trio.testing
from opening_support import process_session

import trio_mcp
from trio_mcp import (
    MCPError,
    RequestTimeout,
    ServerGone,
    SpawnFailed,
    TransportClosed,
)

SERVER = Path(__file__).parent / "servers" / "life_server.py"

#: The guard of a whole test: far above what any step should take.
GUARD = 15
#: The guard of a step that the contract says happens "at once" or "quickly".
QUICK = 5
#: A request payload larger than any pipe buffer.
BIG = {"blob": "x" * (1024 * 1024)}


# ------------------------------------------------------------------ helpers


def life_server(*flags: str, **options):
    """A transport to ``life_server.py`` started with ``flags``."""
    return process_session(sys.executable, [str(SERVER), *flags], **options)


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie awaiting its reaper counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def wait_until(predicate, within: float = QUICK) -> None:
    """Poll ``predicate`` until it holds; fail the test if that takes over ``within`` seconds."""
    with trio.fail_after(within):
        # No Trio event reports a process's state or a log line: poll.
        while not predicate():  # noqa: ASYNC110
            await trio.sleep(0.05)


async def wait_dead(pid: int, within: float = QUICK) -> None:
    """Poll until ``pid`` is gone; fail the test if it outlives ``within`` seconds."""
    await wait_until(lambda: not running(pid), within)


def exited(wire) -> bool:
    """Whether the transport's server has exited and been reaped."""
    return wire.statistics().returncode is not None


def events(path: Path) -> list[str]:
    """What a server started with ``--record path`` recorded (EOF, TERM)."""
    return path.read_text().split() if path.exists() else []


def open_fds() -> int:
    """How many file descriptors this process has open."""
    return len(os.listdir("/proc/self/fd"))


async def seen(wire) -> list[dict]:
    """Every message the server has read so far."""
    return (await wire.request("seen"))["lines"]


def id_of(lines: list[dict], method: str) -> int:
    """The id of the (single) request for ``method`` among ``lines``."""
    (request_id,) = [line["id"] for line in lines if line.get("method") == method and "id" in line]
    return request_id


def cancelled_ids(lines: list[dict]) -> list[int]:
    """The ``requestId`` of every ``notifications/cancelled`` among ``lines``."""
    return [line["params"]["requestId"] for line in lines if line.get("method") == "notifications/cancelled"]


async def assert_abandoned_and_alive(wire, method: str) -> None:
    """The server was told the ``method`` request is cancelled, and the connection still works."""
    lines = await seen(wire)
    assert id_of(lines, method) in cancelled_ids(lines)
    assert await wire.request("echo", {"n": 1}) == {"method": "echo", "params": {"n": 1}}


async def call_collecting(wire, errors: list, method: str, params: dict | None = None) -> None:
    """Send a request that is expected to fail; keep its exception in ``errors``."""
    try:
        await wire.request(method, params)
    except MCPError as exc:
        errors.append(exc)
    else:
        errors.append(None)


# --------------------------------------------------------- the server dies


async def test_exit_fails_every_outstanding_request_at_once():
    """ServerGone: a server exiting with code 3 fails all concurrent requests in flight, at once."""
    errors: list = []
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            with trio.fail_after(QUICK):
                async with trio.open_nursery() as nursery:
                    for _ in range(3):
                        nursery.start_soon(call_collecting, wire, errors, "hang")
                    await trio.testing.wait_all_tasks_blocked()
                    nursery.start_soon(call_collecting, wire, errors, "exit", {"code": 3})
    assert len(errors) == 4
    for exc in errors:
        assert type(exc) is ServerGone
        assert exc.exit_code == 3
        assert exc.signal is None


async def test_requests_after_death_fail_at_once_without_writing():
    """ServerGone: every later request (and notification) fails immediately, and nothing is sent."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            with pytest.raises(ServerGone):
                await wire.request("exit", {"code": 3})
            sent = wire.statistics().requests_sent
            with trio.fail_after(QUICK):
                for _ in range(3):
                    with pytest.raises(ServerGone) as info:
                        await wire.request("echo")
                    assert info.value.exit_code == 3
                with pytest.raises(ServerGone):
                    await wire.notify("notifications/initialized")
            assert wire.statistics().requests_sent == sent


async def test_server_gone_is_an_mcp_error_with_a_useful_message():
    """ServerGone: an MCPError whose message gives the command, the exit code and the last stderr line."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            with pytest.raises(ServerGone) as info:
                await wire.request("exit", {"code": 3, "last_words": "fatal: no configuration file"})
    exc = info.value
    assert isinstance(exc, MCPError)
    text = str(exc)
    # The command by its file name (the arguments' long paths shortened), and the pid.
    assert f"server '{os.path.basename(sys.executable)} " in text
    assert "life_server.py" in text
    assert f"(pid {wire.pid})" in text
    assert exc.command == sys.executable
    assert "3" in text
    assert "fatal: no configuration file" in text
    assert exc.stderr_tail.endswith("fatal: no configuration file\n")


async def test_killed_by_signal_reports_the_signal():
    """ServerGone: a server killed by SIGKILL has signal == 9 and exit_code None, and says so."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            with trio.fail_after(QUICK), pytest.raises(ServerGone) as info:
                await wire.request("kill")
    exc = info.value
    assert exc.signal == signal.SIGKILL == 9
    assert exc.exit_code is None
    assert "SIGKILL" in str(exc)


async def test_stderr_tail_is_bounded_and_holds_the_last_lines():
    """ServerGone.stderr_tail: after 100 KiB of stderr it holds at most ~8 KiB, the last lines in order."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            with pytest.raises(ServerGone) as info:
                await wire.request("exit", {"code": 1, "stderr_bytes": 100 * 1024, "last_words": "the end"})
    tail = info.value.stderr_tail
    assert len(tail.encode()) <= 8 * 1024 + 128
    lines = tail.splitlines()
    assert lines[-1] == "the end"
    # The server writes numbered 100-byte lines: 1024 of them for 100 KiB.
    numbers = [int(line.split()[2]) for line in lines[:-1] if line.startswith("stderr line ")]
    assert len(numbers) >= 10
    assert numbers == list(range(numbers[0], 1025))


@pytest.mark.slow
async def test_death_is_seen_although_a_grandchild_holds_the_pipes():
    """Death is seen at once: a grandchild keeping stdout/stderr open does not delay ServerGone."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60, kill_grace=0.5) as wire:
            await wire.request("spawn", {"inherit": True})
            with trio.fail_after(QUICK), pytest.raises(ServerGone) as info:
                await wire.request("exit", {"code": 7})
    assert info.value.exit_code == 7


@pytest.mark.slow
async def test_grandchild_holding_the_pipes_dies_with_the_block():
    """Death is seen at once: after the block, the grandchild that held the pipes is dead too."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60, kill_grace=0.5) as wire:
            grandchild = (await wire.request("spawn", {"inherit": True}))["pid"]
            assert running(grandchild)
            with pytest.raises(ServerGone):
                await wire.request("exit", {"code": 7})
        await wait_dead(grandchild)


@pytest.mark.slow
async def test_closed_stdout_fails_outstanding_and_later_requests():
    """ServerGone: a server that closes stdout but keeps running fails requests in flight and later ones."""
    errors: list = []
    with trio.fail_after(GUARD):
        async with life_server("--ignore-eof", request_timeout=60, kill_grace=0.5) as wire:
            with trio.fail_after(QUICK):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(call_collecting, wire, errors, "hang")
                    await trio.testing.wait_all_tasks_blocked()
                    nursery.start_soon(call_collecting, wire, errors, "close_stdout")
                with pytest.raises(ServerGone):
                    await wire.request("echo")
    assert len(errors) == 2
    assert all(type(exc) is ServerGone for exc in errors)


@pytest.mark.slow
async def test_closed_stdout_server_is_stopped():
    """ServerGone: a server that closed stdout (and ignores stdin EOF) is stopped, even inside the block."""
    with trio.fail_after(GUARD):
        async with life_server("--ignore-eof", request_timeout=60, kill_grace=0.5) as wire:
            pid = wire.pid
            with pytest.raises(ServerGone):
                await wire.request("close_stdout")
            await wait_until(lambda: exited(wire), GUARD)
    assert not running(pid)


# ---------------------------------------------------------------- timeouts


async def test_request_timeout_raises_request_timeout():
    """RequestTimeout: an unanswered request fails after request_timeout; it is a TooSlowError and an MCPError."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=0.5) as wire:
            with pytest.raises(RequestTimeout) as info:
                await wire.request("hang")
    exc = info.value
    assert isinstance(exc, trio.TooSlowError)
    assert isinstance(exc, MCPError)
    assert exc.method == "hang"
    assert exc.timeout == 0.5


async def test_request_timeout_tells_the_server_and_the_connection_survives():
    """RequestTimeout: the server gets notifications/cancelled for that id; the next request succeeds."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=0.5) as wire:
            with pytest.raises(RequestTimeout):
                await wire.request("hang")
            await assert_abandoned_and_alive(wire, "hang")


@pytest.mark.slow
async def test_late_answer_after_timeout_is_dropped_and_logged():
    """RequestTimeout: an answer arriving after the timeout is dropped and reported through on_log."""
    log: list[str] = []
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=0.5, on_log=log.append) as wire:
            with pytest.raises(RequestTimeout):
                await wire.request("late", {"delay": 1.5})
            request_id = id_of(await seen(wire), "late")
            await wait_until(lambda: any("late answer" in message for message in log))
            assert await wire.request("echo") == {"method": "echo", "params": {}}
    (message,) = [message for message in log if "late answer" in message]
    assert str(request_id) in message


@pytest.mark.slow
async def test_request_timeout_none_disables_the_budget():
    """RequestTimeout: with request_timeout=None an unanswered request waits until the caller gives up."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=None) as wire:
            with trio.move_on_after(1.5) as scope:
                await wire.request("hang")
            assert scope.cancelled_caught
            await assert_abandoned_and_alive(wire, "hang")


async def test_many_unanswered_requests_all_time_out():
    """RequestTimeout: every one of many concurrent unanswered requests times out, and the next works."""
    failures: list[BaseException] = []

    async def ask(wire) -> None:
        try:
            await wire.request("hang")
        except RequestTimeout as exc:
            failures.append(exc)

    with trio.fail_after(GUARD):
        async with life_server(request_timeout=0.5) as wire:
            async with trio.open_nursery() as nursery:
                for _ in range(200):
                    nursery.start_soon(ask, wire)
            assert len(failures) == 200
            assert wire.statistics().requests_in_flight == 0
            assert await wire.request("echo") == {"method": "echo", "params": {}}


async def test_lowered_request_timeout_applies_to_later_requests():
    """RequestTimeout: lowering request_timeout while a long-budget request waits still times the new one out."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire, trio.open_nursery() as nursery:
            nursery.start_soon(wire.request, "hang")
            await trio.testing.wait_all_tasks_blocked()
            wire.request_timeout = 0.3
            with pytest.raises(RequestTimeout):
                await wire.request("hang")
            assert wire.statistics().requests_in_flight == 1
            nursery.cancel_scope.cancel()


async def test_request_timeout_interrupts_a_slow_notification_callback():
    """RequestTimeout: the budget also bounds the request's own on_notification callback."""
    entered = trio.Event()

    async def stuck(note) -> None:
        entered.set()
        await trio.sleep_forever()

    with trio.fail_after(GUARD):
        async with life_server(request_timeout=0.5) as wire:
            with pytest.raises(RequestTimeout):
                await wire.request("notify_then_hang", on_notification=stuck)
            assert entered.is_set()
            assert await wire.request("echo") == {"method": "echo", "params": {}}


# ------------------------------------------------- the caller's own scopes


async def test_caller_fail_after_abandons_the_request():
    """Caller's scope: fail_after raises plain TooSlowError, the server is told, the connection survives."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            with pytest.raises(trio.TooSlowError) as info, trio.fail_after(0.5):
                await wire.request("hang")
            assert type(info.value) is trio.TooSlowError
            await assert_abandoned_and_alive(wire, "hang")


async def test_caller_move_on_after_abandons_the_request():
    """Caller's scope: move_on_after just moves on, the server is told, the connection survives."""
    result = "unset"
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            with trio.move_on_after(0.5) as scope:
                result = await wire.request("hang")
            assert scope.cancelled_caught
            assert result == "unset"
            await assert_abandoned_and_alive(wire, "hang")


async def test_nursery_cancellation_abandons_the_request():
    """Caller's scope: cancelling the nursery of a request's task tells the server; the connection survives."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(wire.request, "hang")
                await trio.testing.wait_all_tasks_blocked()
                nursery.cancel_scope.cancel()
            await assert_abandoned_and_alive(wire, "hang")


async def test_outer_cancellation_leaves_the_transport_working_for_shielded_code():
    """Caller's scope: an outer cancellation does not stop the transport; a shielded request is answered."""
    with trio.fail_after(GUARD):
        with trio.CancelScope() as scope:
            async with life_server(request_timeout=60) as wire:
                scope.cancel()
                with trio.CancelScope(shield=True), trio.fail_after(QUICK):
                    assert await wire.request("echo") == {"method": "echo", "params": {}}
                await trio.sleep_forever()
    assert scope.cancelled_caught


# ------------------------------------------------------------- aclose


async def test_aclose_fails_a_request_in_flight_in_another_task():
    """TransportClosed: a request waiting in another task when aclose() runs fails with TransportClosed."""
    errors: list = []
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call_collecting, wire, errors, "hang")
                await trio.testing.wait_all_tasks_blocked()
                await wire.aclose()
    assert len(errors) == 1
    assert type(errors[0]) is TransportClosed


async def test_everything_after_aclose_raises_transport_closed():
    """TransportClosed: requests and notifications after aclose() fail with it; leaving the block is fine."""
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            await wire.aclose()
            with pytest.raises(TransportClosed):
                await wire.request("echo")
            with pytest.raises(TransportClosed):
                await wire.notify("notifications/initialized")
    with pytest.raises(TransportClosed):
        await wire.request("echo")


async def test_a_dead_servers_transport_says_server_gone_even_after_aclose():
    """ServerGone: the first failure stays the reason, whether or not the transport was closed since.

    (It used to turn into TransportClosed once closed, so a client kept
    across a group's restart raised one or the other depending on timing.)
    """
    with trio.fail_after(GUARD):
        async with life_server(request_timeout=60) as wire:
            with pytest.raises(ServerGone):
                await wire.request("exit", {"code": 3})
            await wire.aclose()
            with pytest.raises(ServerGone) as caught:
                await wire.request("echo")
            assert caught.value.exit_code == 3


async def test_aclose_is_idempotent_and_concurrent_calls_wait_for_the_first():
    """aclose: two concurrent calls both return only once the server is reaped; a third call is harmless."""
    returncodes: list = []

    async def close(wire) -> None:
        await wire.aclose()
        returncodes.append(wire.statistics().returncode)

    with trio.fail_after(GUARD):
        async with life_server("--ignore-eof", kill_grace=0.5) as wire:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(close, wire)
                nursery.start_soon(close, wire)
            await wire.aclose()
    assert returncodes == [-signal.SIGTERM, -signal.SIGTERM]


# ------------------------------------------------------------- closing


async def test_close_lets_a_polite_server_exit_with_code_0(tmp_path):
    """close: stdin is closed, and a server that exits on EOF is gone quickly with code 0, never signalled."""
    record = tmp_path / "events"
    with trio.fail_after(GUARD):
        async with life_server("--record", str(record), kill_grace=30) as wire:
            await wire.request("echo")
    assert wire.statistics().returncode == 0
    assert events(record) == ["EOF"]


async def test_close_terminates_a_server_ignoring_eof(tmp_path):
    """close: a server that ignores stdin EOF gets SIGTERM after kill_grace and dies of it."""
    record = tmp_path / "events"
    with trio.fail_after(GUARD):
        async with life_server("--record", str(record), "--ignore-eof", kill_grace=0.5) as wire:
            await wire.request("echo")
    assert wire.statistics().returncode == -signal.SIGTERM
    assert events(record)[-1] == "TERM"


@pytest.mark.slow
async def test_close_kills_a_server_ignoring_sigterm_within_bounds(tmp_path):
    """close: a server ignoring EOF and SIGTERM is SIGKILLed; the whole close stays bounded."""
    record = tmp_path / "events"
    with trio.fail_after(GUARD):
        async with life_server(
            "--record", str(record), "--ignore-eof", "--ignore-term", kill_grace=0.5
        ) as wire:
            pid = wire.pid
            await wire.request("echo")
    assert wire.statistics().returncode == -signal.SIGKILL
    assert "TERM" in events(record)
    assert not running(pid)


@pytest.mark.slow
async def test_close_kills_the_whole_process_group():
    """close: a child the server started in its process group, which ignores EOF, dies too."""
    with trio.fail_after(GUARD):
        async with life_server(kill_grace=0.5) as wire:
            child = (await wire.request("spawn"))["pid"]
            assert running(child)
        await wait_dead(child)


@pytest.mark.slow
async def test_close_is_shielded_from_an_already_cancelled_scope():
    """close: leaving the block under a cancelled scope still kills and reaps a stubborn server."""
    with trio.fail_after(GUARD):
        with trio.CancelScope() as scope:
            async with life_server("--ignore-eof", "--ignore-term", kill_grace=0.5) as wire:
                pid = wire.pid
                await wire.request("echo")
                scope.cancel()
                await trio.sleep_forever()
    assert scope.cancelled_caught
    assert wire.statistics().returncode == -signal.SIGKILL
    assert not running(pid)


async def test_entering_under_a_cancelled_scope_leaves_nothing_running():
    """close: entering and leaving inside an already-expired move_on_after(0) leaves no process behind."""
    transport = None
    with trio.fail_after(GUARD):
        with trio.move_on_after(0) as scope:
            async with life_server("--ignore-eof", kill_grace=0.5) as transport:
                await trio.sleep_forever()
    assert scope.cancelled_caught
    if transport is not None and transport.pid is not None:
        assert transport.statistics().returncode is not None
        assert not running(transport.pid)


@pytest.mark.slow
async def test_close_is_safe_after_the_server_died_long_ago():
    """close: leaving the block of a server that exited long before raises nothing."""
    with trio.fail_after(GUARD):
        async with life_server("--exit-at-once", "4") as wire:
            await wait_until(lambda: exited(wire))
            await trio.sleep(1)
    assert wire.statistics().returncode == 4


# --------------------------------------------------------------- writes


@pytest.mark.slow
async def test_request_to_a_server_not_reading_times_out():
    """Writes: a 1 MiB request to a server that never reads fails with RequestTimeout instead of hanging."""
    with trio.fail_after(GUARD):
        async with life_server("--no-read", request_timeout=0.5, kill_grace=0.5) as wire:
            with pytest.raises(RequestTimeout):
                await wire.request("echo", BIG)


@pytest.mark.slow
async def test_concurrent_requests_while_the_pipe_is_full_time_out():
    """Writes: requests sent while the pipe is full each fail with RequestTimeout."""
    errors: list = []
    with trio.fail_after(GUARD):
        async with life_server("--no-read", request_timeout=0.5, kill_grace=0.5) as wire:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call_collecting, wire, errors, "echo", BIG)
                await trio.testing.wait_all_tasks_blocked()
                for n in range(3):
                    nursery.start_soon(call_collecting, wire, errors, "echo", {"n": n})
    assert len(errors) == 4
    assert all(type(exc) is RequestTimeout for exc in errors)


async def test_aclose_completes_while_a_write_is_blocked():
    """Writes: aclose completes while a 1 MiB write to a server that never reads is stuck."""
    errors: list = []
    with trio.fail_after(GUARD):
        async with life_server("--no-read", request_timeout=None, kill_grace=0.5) as wire:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call_collecting, wire, errors, "echo", BIG)
                await trio.testing.wait_all_tasks_blocked()
                await wire.aclose()
    assert len(errors) == 1
    assert type(errors[0]) is TransportClosed


# ---------------------------------------------------------------- leaks


async def run_one(kind: str, tmp_path: Path) -> int | None:
    """Open, use and close one transport in the way ``kind`` names; return the server's pid."""
    if kind == "spawn-failed":
        with pytest.raises(SpawnFailed):
            async with trio_mcp.open_session(trio_mcp.ProcessTarget(str(tmp_path / "no-such-server"))):
                pass
        return None
    flags = {"polite": (), "stubborn": ("--ignore-eof",), "exited": ("--exit-at-once", "2")}.get(kind, ())
    async with life_server(*flags, kill_grace=0.2) as wire:
        if kind == "exited":
            with pytest.raises(ServerGone):
                await wire.request("echo")
        elif kind == "killed":
            with pytest.raises(ServerGone):
                await wire.request("kill")
        else:
            await wire.request("echo")
            if kind == "closed":
                await wire.aclose()
    return wire.pid


@pytest.mark.slow
async def test_no_fd_or_process_left_after_many_transports(tmp_path):
    """No leaks: 20 transports in a row (polite, stubborn, dead, killed, closed, one failing to spawn)."""
    kinds = ["polite", "stubborn", "exited", "killed", "closed"] * 4
    kinds[7] = "spawn-failed"
    before = open_fds()
    with trio.fail_after(60):
        pids = [await run_one(kind, tmp_path) for kind in kinds]
    assert open_fds() == before
    assert [pid for pid in pids if pid is not None and running(pid)] == []


# ------------------------------------------------------ no ExceptionGroup


async def test_user_exception_propagates_unwrapped():
    """No ExceptionGroup: an exception raised in the block reaches the caller as exactly that type."""

    async def body() -> None:
        async with life_server() as wire:
            await wire.request("echo")
            raise KeyError("mine")

    with trio.fail_after(GUARD), pytest.raises(KeyError) as info:
        await body()
    assert type(info.value) is KeyError


async def test_user_exception_propagates_unwrapped_after_server_died():
    """No ExceptionGroup: the user's exception stays unwrapped when the server died and was reported."""

    async def body() -> None:
        async with life_server("--exit-at-once", "1") as wire:
            with pytest.raises(ServerGone):
                await wire.request("echo")
            raise KeyError("mine")

    with trio.fail_after(GUARD), pytest.raises(KeyError) as info:
        await body()
    assert type(info.value) is KeyError


async def test_user_exception_propagates_unwrapped_while_death_is_being_handled():
    """No ExceptionGroup: the user's exception stays unwrapped when raised just as the server exits."""

    async def body() -> None:
        async with life_server("--exit-at-once", "1") as wire:
            await wait_until(lambda: exited(wire))
            raise KeyError("mine")

    with trio.fail_after(GUARD), pytest.raises(KeyError) as info:
        await body()
    assert type(info.value) is KeyError


async def test_spawn_failed_is_unwrapped(tmp_path):
    """No ExceptionGroup: SpawnFailed surfaces as itself from entering the block."""
    with pytest.raises(SpawnFailed) as info:
        async with trio_mcp.open_session(trio_mcp.ProcessTarget(str(tmp_path / "no-such-server"))):
            pass
    assert type(info.value) is SpawnFailed


async def test_server_gone_leaves_the_block_unwrapped():
    """No ExceptionGroup: ServerGone raised in the block leaves it as itself."""
    with trio.fail_after(GUARD):
        with pytest.raises(ServerGone) as info:
            async with life_server(request_timeout=60) as wire:
                await wire.request("exit", {"code": 3})
    assert type(info.value) is ServerGone


async def test_request_timeout_leaves_the_block_unwrapped():
    """No ExceptionGroup: RequestTimeout raised in the block leaves it as itself."""
    with trio.fail_after(GUARD):
        with pytest.raises(RequestTimeout) as info:
            async with life_server(request_timeout=0.5) as wire:
                await wire.request("hang")
    assert type(info.value) is RequestTimeout


async def test_transport_closed_leaves_the_block_unwrapped():
    """No ExceptionGroup: TransportClosed raised in the block leaves it as itself."""

    async def body() -> None:
        async with life_server(request_timeout=60) as wire:
            await wire.aclose()
            await wire.request("echo")

    with trio.fail_after(GUARD), pytest.raises(TransportClosed) as info:
        await body()
    assert type(info.value) is TransportClosed


async def test_outer_cancellation_passes_through_the_block():
    """No ExceptionGroup: a move_on_after around the block cancels it cleanly (cancelled_caught).

    Its deadline has passed when the block closes, so the close is forceful:
    the server gets no grace (SIGTERM at once), and nothing outlives the block.
    """
    with trio.fail_after(GUARD):
        with trio.move_on_after(0.5) as scope:
            async with life_server(request_timeout=60, kill_grace=30) as wire:
                await wire.request("hang")
    assert scope.cancelled_caught
    assert wire.statistics().returncode == -signal.SIGTERM


async def test_close_inside_a_deadline_gives_the_grace_that_fits(tmp_path):
    """Bounded close: a close that starts with 1 s left of the caller's deadline gives a server
    that ignores EOF about that second, not its 30 s kill_grace (the guard would trip)."""
    record = tmp_path / "events"
    with trio.fail_after(GUARD):
        with trio.move_on_after(30):
            async with life_server("--ignore-eof", "--record", str(record), kill_grace=30) as wire:
                await wire.request("echo")
                with trio.move_on_after(1):
                    await wire.aclose()
    assert wire.statistics().returncode == -signal.SIGTERM
    assert "EOF" in events(record)


# ------------------------------------------------------------ validation


@pytest.mark.parametrize("kill_grace", [-1, -0.001, math.nan])
def test_invalid_kill_grace_is_rejected_at_construction(kill_grace):
    """kill_grace policy: a negative (or NaN) kill_grace raises ValueError before anything starts."""
    with pytest.raises(ValueError, match="kill_grace"):
        life_server(kill_grace=kill_grace)


@pytest.mark.parametrize("request_timeout", [0, -1, math.nan])
def test_invalid_request_timeout_is_rejected_at_construction(request_timeout):
    """request_timeout validation: zero, negative or NaN raises ValueError before anything starts."""
    with pytest.raises(ValueError, match="request_timeout"):
        life_server(request_timeout=request_timeout)


def test_boundary_values_are_accepted():
    """kill_grace policy: kill_grace=0 and request_timeout=None are valid choices."""
    assert trio_mcp.ProcessTarget("x", kill_grace=0).kill_grace == 0
    assert trio_mcp.SessionOptions(request_timeout=None).request_timeout is None


async def test_request_timeout_names_what_was_dropped():
    """RequestTimeout: a server answering with the wrong id times out, and the error says what was dropped."""
    wrong_id = (
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': 0, 'result': {}}), flush=True)\n"
    )
    with trio.fail_after(GUARD):
        async with trio_mcp.open_session(
            trio_mcp.ProcessTarget(sys.executable, ["-c", wrong_id]),
            options=trio_mcp.SessionOptions(request_timeout=0.5),
        ) as wire:
            with pytest.raises(RequestTimeout) as info:
                await wire.request("tools/list")
    assert "unknown request id 0" in str(info.value)


@pytest.mark.parametrize(
    ("args", "env"),
    [
        ("--stdio", None),  # one string, not a list of them
        (["--port", 8080], None),
        ([], {"PORT": 8080}),
        ([], {1: "x"}),
    ],
)
def test_arguments_of_the_wrong_type_are_rejected_at_construction(args, env):
    """Construction: args and env hold strings only; a caller's mistake is a TypeError, before any spawn."""
    with pytest.raises(TypeError):
        trio_mcp.open_session(trio_mcp.ProcessTarget(sys.executable, args, env=env))


# ------------------------------------------------------------ wait_failed


async def test_wait_failed_returns_when_the_server_dies_or_the_session_closes():
    with trio.fail_after(GUARD):
        async with life_server() as wire:
            async with trio.open_nursery() as nursery:
                seen = []

                async def watch():
                    seen.append(await wire.wait_failed())

                nursery.start_soon(watch)
                await trio.testing.wait_all_tasks_blocked()  # the watcher waits
                assert seen == []
                with pytest.raises(ServerGone):
                    await wire.request("exit", {"code": 4})
            assert isinstance(seen[0], ServerGone)
            assert seen[0].exit_code == 4
            # Once failed, it returns at once.
            assert await wire.wait_failed() is seen[0]
        async with life_server() as wire:
            async with trio.open_nursery() as nursery:
                closed = []

                async def watch():
                    closed.append(await wire.wait_failed())

                nursery.start_soon(watch)
                await trio.testing.wait_all_tasks_blocked()  # the watcher waits
                await wire.aclose()
        assert isinstance(closed[0], TransportClosed)


# ------------------------------------------------------------- a death mid-answer

#: Answers the handshake of 2025-11-25, then writes half of its answer to the
#: next request, says why on stderr, and exits with status 7.
DIES_MID_ANSWER = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "half", "version": "1"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()
        continue
    answer = json.dumps({"jsonrpc": "2.0", "id": message["id"],
                         "result": {"content": [{"type": "text", "text": "x" * 1000}]}})
    sys.stdout.write(answer[: len(answer) // 2])
    sys.stdout.flush()
    sys.stderr.write("out of memory, goodbye\n")
    sys.exit(7)
"""


async def test_a_server_that_dies_halfway_through_an_answer_is_gone_not_garbled():
    """ServerGone: a cut last line at death is a symptom of the death, not a protocol error.

    (It used to give the call a ProtocolError, "not JSON", without the exit
    status or the stderr tail.)
    """
    from trio_mcp import open_stdio_client

    with trio.fail_after(GUARD):
        async with open_stdio_client(
            sys.executable, ["-c", DIES_MID_ANSWER], options=trio_mcp.ClientOptions(protocol="2025-11-25")
        ) as client:
            with pytest.raises(ServerGone) as caught:
                await client.call_tool("anything")
    assert caught.value.exit_code == 7
    assert "out of memory, goodbye" in caught.value.stderr_tail


async def test_a_whole_last_message_without_its_newline_is_still_read():
    """A last line that is a whole message, but lacks its newline, is delivered before ServerGone."""
    script = (
        "import sys, json; line = sys.stdin.readline(); message = json.loads(line);"
        "sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': message['id'], 'result': {'ok': 1}}));"
        "sys.stdout.flush(); sys.exit(0)"
    )
    with trio.fail_after(GUARD):
        async with trio_mcp.open_session(trio_mcp.ProcessTarget(sys.executable, ["-c", script])) as wire:
            assert await wire.request("anything") == {"ok": 1}
