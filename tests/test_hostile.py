"""Regression tests: defects found by driving hostile servers against the client.

Each test runs a real child process (``tests/servers/hostile_server.py``, or
another test server) and pins down one defect that was found and fixed:
close stays bounded whatever the server asks around close time; malformed
answers to the era probe fall back to ``initialize``; withdrawing many
requests is linear; a flood of garbage is reported, not echoed line by line;
errors say which server they are about.

Real clock, with a `trio.fail_after` guard everywhere; a wrong implementation
waits for something long (a 30-second hook, a 60-second server) and trips
the guard. Linearity is checked by counting the lines of trio_mcp that run,
which is deterministic, never by timing.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path

import pytest
import trio
from opening_support import process_client

import trio_mcp
from trio_mcp import RequestTimeout, ServerGone

HOSTILE = Path(__file__).parent / "servers" / "hostile_server.py"
LIFE = Path(__file__).parent / "servers" / "life_server.py"
PACKAGE = Path(trio_mcp.__file__).parent

#: The guard of a whole test: far above what any step should take.
GUARD = 20


def hostile(mode: str, **options):
    options.setdefault("protocol", "2025-11-25")
    return process_client(sys.executable, [str(HOSTILE), mode], **options)


# ------------------------------------------------------ 1. bounded close


async def test_close_is_bounded_when_the_server_asks_something_while_closing():
    """A server request that arrives while close runs is refused: no hook starts, close ends."""
    asked = []

    async def on_elicitation(params):
        asked.append(params)
        await trio.sleep(30)  # a person who never answers
        return {"action": "decline"}

    with trio.fail_after(GUARD):
        async with hostile("request-on-eof", kill_grace=1, on_elicitation=on_elicitation) as client:
            result = await client.call_tool("echo", {"n": 1})
            assert result.text == '{"n": 1}'
    assert asked == []


async def test_a_server_request_reusing_an_id_in_flight_is_dropped_and_close_stays_bounded():
    """Two server requests with one id: the second is dropped (and said), the first's hook is
    cancelled by close, which ends within its bounds."""
    asked = []
    logs = []
    cancelled = []

    async def on_elicitation(params):
        asked.append(params)
        try:
            await trio.sleep(30)
        except trio.Cancelled:
            cancelled.append(True)
            raise
        return {"action": "decline"}

    async def ask(client):
        await client.call_tool("ask")

    with trio.fail_after(GUARD):
        async with hostile(
            "duplicate-ids", kill_grace=1, on_elicitation=on_elicitation, on_log=logs.append
        ) as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ask, client)
                while not any("reusing the id 7" in line for line in logs):  # noqa: ASYNC110
                    await trio.sleep(0.01)
                nursery.cancel_scope.cancel()
            # The call is withdrawn; the server's request is still in flight.
            assert len(asked) == 1
    assert len(asked) == 1
    assert cancelled == [True]


# ------------------------------------------------ 2. malformed probe answers


@pytest.mark.parametrize("mode", ["string-error", "string-code", "no-message", "null-error"])
async def test_a_malformed_error_answer_to_the_probe_falls_back_to_initialize(mode):
    """A legacy server answering server/discover with a broken error works as it does when pinned."""
    with trio.fail_after(GUARD):
        async with hostile(mode, protocol="auto") as client:
            assert client.era == "legacy"
            assert client.protocol_version == "2025-11-25"
            assert (await client.call_tool("echo", {"a": 1})).text == '{"a": 1}'


# ------------------------------------------------- 4. linear withdrawal


def _lines_run_in_trio_mcp(counter: list[int]):
    """A trace function counting the lines of trio_mcp's own code that run."""
    prefix = str(PACKAGE)

    def local(frame, event, arg):
        if event == "line":
            counter[0] += 1
        return local

    def tracer(frame, event, arg):
        if frame.f_code.co_filename.startswith(prefix):
            return local
        return None

    return tracer


async def _withdraw(count: int, *, budget: float | None) -> int:
    """Start ``count`` requests the server never answers, then end them all at once.

    Returns how many lines of trio_mcp ran from the moment they all were in
    flight until all of them had ended.
    """
    counter = [0]
    async with trio_mcp.open_session(
        trio_mcp.ProcessTarget(sys.executable, [str(LIFE)]),
        options=trio_mcp.SessionOptions(request_timeout=budget),
    ) as wire:

        async def one() -> None:
            with contextlib.suppress(RequestTimeout):
                await wire.request("hang")

        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(one)
            while wire.statistics().requests_in_flight < count:  # noqa: ASYNC110
                await trio.sleep(0.01)
            sys.settrace(_lines_run_in_trio_mcp(counter))
            if budget is None:
                nursery.cancel_scope.cancel()
            else:
                await trio.sleep(budget)
        sys.settrace(None)
        assert wire.statistics().requests_in_flight == 0
        # The connection still works.
        assert await wire.request("echo", {"n": 1}) == {"method": "echo", "params": {"n": 1}}
    return counter[0]


@pytest.mark.parametrize("budget", [None, 2.0], ids=["cancelled", "request_timeout"])
async def test_withdrawing_many_requests_at_once_is_linear(budget):
    """Cancelling K requests in flight (or their request_timeout expiring) costs O(K), not O(K^2):
    four times the requests run about four times the lines of trio_mcp, not sixteen."""
    with trio.fail_after(60):
        small = await _withdraw(250, budget=budget)
        large = await _withdraw(1000, budget=budget)
    assert small > 0
    assert large / small < 6, (small, large)


# ---------------------------------------------------- 5. garbage floods


async def test_a_flood_of_garbage_is_reported_then_summarized_not_line_by_line():
    """A server printing ``y`` forever: on_log hears a burst, then a trickle with summaries."""
    logs = []
    with trio.fail_after(GUARD):
        async with hostile("flood", on_log=logs.append) as client:
            start = trio.current_time()
            await trio.sleep(1.5)
            # The connection still answers between the garbage.
            assert (await client.call_tool("echo", {"n": 2})).text == '{"n": 2}'
            elapsed = trio.current_time() - start
    garbage = [line for line in logs if "not JSON" in line]
    summaries = [line for line in logs if "suppressed" in line]
    assert garbage
    assert summaries
    # A burst of 20, then at most 2 a second (plus the summaries between them).
    assert len(logs) <= 20 + 2 * (elapsed + 2) * 2 + 4, len(logs)


# ------------------------------------------------------- 6. which server


async def test_errors_name_the_server_so_that_servers_with_one_command_differ():
    """Three servers that are all ``python`` die alike: their errors and attributes tell them apart."""
    errors = []
    with trio.fail_after(GUARD):
        for tag in ("one", "two", "three"):
            async with trio_mcp.open_session(
                trio_mcp.ProcessTarget(sys.executable, [str(LIFE), "--tag", tag])
            ) as wire:
                with pytest.raises(ServerGone) as info:
                    await wire.request("kill")
                errors.append((info.value, wire.pid))
    messages = [str(error).split("\n")[0] for error, _ in errors]
    assert len(set(messages)) == 3
    for (error, pid), tag in zip(errors, ("one", "two", "three"), strict=True):
        assert f"--tag {tag}" in str(error)
        assert f"pid {pid}" in str(error)
        assert "life_server.py" in error.server
        assert error.command == sys.executable
        assert error.arguments == (str(LIFE), "--tag", tag)
        assert error.pid == pid
        assert error.signal == 9


async def test_request_timeout_and_logs_name_the_server(caplog):
    with trio.fail_after(GUARD):
        async with trio_mcp.open_session(
            trio_mcp.ProcessTarget(sys.executable, [str(LIFE), "--tag", "t1"]),
            options=trio_mcp.SessionOptions(request_timeout=0.2),
        ) as wire:
            with pytest.raises(RequestTimeout) as info:
                await wire.request("hang")
            with caplog.at_level(logging.INFO, logger="trio_mcp.transport"):
                await wire.request("garbage")
    assert "--tag t1" in str(info.value)
    assert f"pid {wire.pid}" in info.value.server
    assert any(
        "--tag t1" in record.getMessage() and "not JSON" in record.getMessage() for record in caplog.records
    )


async def test_a_server_that_dies_on_the_probe_and_again_says_so_with_both_exits():
    """Started twice (the probe rule): the error says so, and shows both exits and both pids."""
    with trio.fail_after(GUARD), pytest.raises(ServerGone) as info:
        async with trio_mcp.open_stdio_client(sys.executable, [str(HOSTILE), "die-on-first-line"]):
            pass
    error = info.value
    first = error.previous
    assert first is not None
    assert first.pid != error.pid
    assert first.exit_code == 3
    assert error.exit_code == 3
    text = str(error)
    assert "after a restart" in text
    assert "server/discover probe" in text
    assert f"pid {first.pid}" in text
    assert f"pid {error.pid}" in text
    assert f"dying {error.pid}" in error.stderr_tail
    assert f"dying {first.pid}" in first.stderr_tail
