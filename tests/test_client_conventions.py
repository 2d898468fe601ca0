"""Trio conventions and notification rules of the client, against real processes.

* Every async method is a checkpoint, cache hits included
  (`trio.testing.assert_checkpoints`, and a call inside an already
  cancelled scope is cancelled).
* The caller bounds calls with cancel scopes: no per-call ``timeout=``, and
  ``request_timeout`` is off by default (a slow tool is not cut off).
* The user's exception wins over a failure inside the library.
* One client at a time on a session, and a client that left its block
  answers nothing more.
* Notifications: what names a call goes to the call, what names nothing goes
  to the client's ``on_notification``, whatever else is in flight.

The servers are ``tests/servers/mcp_server.py`` (see its docstring) and
small inline scripts; real clock with `trio.fail_after` guards.
"""

from __future__ import annotations

import sys

import pytest
import trio
import trio.testing
from client_support import LIMIT, Collector, open_client, server_args

import trio_mcp
from trio_mcp import TrioMCPInternalError

# ------------------------------------------------------------- checkpoints


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_every_method_checkpoints_cache_hits_included(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, "--ttl", "60000") as client:
            await client.list_tools()
            await client.read_resource("mem://a")
            calls = [
                client.list_tools,
                client.list_prompts,
                client.list_resources,
                client.list_resource_templates,
                lambda: client.read_resource("mem://a"),
                lambda: client.call_tool("echo", {"text": "x"}),
                lambda: client.list_tools_page(),
            ]
            if era == "modern":
                calls.append(client.discover)
            for call in calls:
                # A second time: served from the cache where ttlMs allows.
                with trio.testing.assert_checkpoints():
                    await call()
                with trio.CancelScope() as scope:
                    scope.cancel()
                    await call()
                assert scope.cancelled_caught, call
            async for _ in client.iter_tools():
                pass


async def test_methods_the_era_lacks_checkpoint_before_refusing():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            with trio.CancelScope() as scope:
                scope.cancel()
                await client.ping()
            assert scope.cancelled_caught


async def test_no_per_call_timeout_and_no_default_budget():
    """A tool slower than any default budget finishes; the caller's cancel scope is the bound."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            assert client.session.request_timeout is None
            with pytest.raises(TypeError):
                await client.request("tools/list", timeout=1)  # type: ignore[call-arg]
            with trio.move_on_after(0.3) as scope:
                await client.call_tool("hang")
            assert scope.cancelled_caught
            assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"


# ---------------------------------------------------- the user's exception

#: Answers ``initialize``, says goodbye on stderr when stdin ends.
POLITE_LEGACY = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "polite", "version": "1"}}}), flush=True)
    elif "id" in message:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {
            "code": -32601, "message": "Method not found"}}), flush=True)
sys.stderr.write("goodbye\\n")
sys.stderr.flush()
"""


class Boom(BaseException):
    """A failure inside a background task (raised from a callback the library runs there)."""


def explode(line):
    raise Boom(line)


async def test_the_users_exception_wins_over_a_failure_inside_the_library():
    """The body raises while a background task fails (during the close): the body's error reaches
    the caller, with the internal failure attached, not the other way round."""
    with trio.fail_after(LIMIT), pytest.raises(ValueError, match="mine") as info:
        async with trio_mcp.open_client(
            trio_mcp.ProcessTarget(sys.executable, ["-c", POLITE_LEGACY], on_stderr=explode),
            options=trio_mcp.ClientOptions(protocol="2025-11-25"),
        ):
            raise ValueError("mine")
    error = info.value
    assert any("inside trio_mcp" in note for note in getattr(error, "__notes__", []))
    assert isinstance(error.__context__, TrioMCPInternalError)


async def test_a_failure_inside_the_library_while_the_body_waits_is_reported_not_escaped():
    """Without an exception of the user's, the internal failure is raised as a bug report (and the
    cancellation it caused never escapes the block)."""
    with trio.fail_after(LIMIT), pytest.raises(TrioMCPInternalError):
        async with trio_mcp.open_session(
            trio_mcp.ProcessTarget(
                sys.executable,
                ["-c", "import sys; sys.stderr.write('x\\n'); sys.stderr.flush(); sys.stdin.read()"],
                on_stderr=explode,
            )
        ):
            await trio.sleep(LIMIT)


# ------------------------------------------------------- built by the openers


def test_a_client_is_made_by_the_openers_only():
    with pytest.raises(TypeError, match=r"open_client\(target\)"):
        trio_mcp.Client()


async def test_a_client_hook_answers_the_server_while_the_client_lives():
    asked = []

    async def on_elicitation(params):
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    options = trio_mcp.ClientOptions(protocol="2025-11-25", on_elicitation=on_elicitation)
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_stdio_client(
            sys.executable, server_args("--era", "legacy"), options=options
        ) as client:
            answered = await client.call_tool("ask")
            assert answered.structured_content["answer"]["action"] == "accept"
    assert len(asked) == 1
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_session(
            trio_mcp.ProcessTarget(sys.executable, server_args("--era", "legacy"))
        ) as session:
            # A bare session runs no handshake of its own, and has no hooks:
            # the server's request gets "method not found".
            hello = {"name": "raw", "version": "0"}
            await session.request(
                "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": hello}
            )
            await session.notify("notifications/initialized")
            raw = await session.request("tools/call", {"name": "ask"})
            assert "error" in raw["structuredContent"]


# ---------------------------------------------------------- notifications


async def test_progress_goes_to_its_own_call_whatever_else_is_in_flight():
    updates: dict[str, list] = {"a": [], "b": []}

    async def call(client, name, steps):
        await client.call_tool("slow", {"steps": steps}, on_progress=lambda *u: updates[name].append(u[0]))

    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call, client, "a", 3)
                nursery.start_soon(call, client, "b", 2)
    assert updates == {"a": [1, 2, 3], "b": [1, 2]}


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_notification_naming_no_call_never_reaches_a_calls_callback(era):
    """A list change sent while one call, with callbacks of its own, is alone in flight goes to
    the client's on_notification (and the cache), not to that call."""
    connection = Collector()
    per_call = Collector()
    progress = []
    flags = ("--era", era, "--ttl", "60000")
    with trio.fail_after(LIMIT):
        async with open_client(*flags, on_notification=connection.append) as client:
            first = await client.list_tools()
            await client.call_tool(
                "touch",
                {"tools": True, "stray": True},
                on_notification=per_call.append,
                on_progress=lambda *u: progress.append(u),
            )
            await connection.wait_until(
                lambda notes: "notifications/tools/list_changed" in [n["method"] for n in notes]
            )
            stats_before = (await client.call_tool("stats")).structured_content
            again = await client.list_tools()
            stats_after = (await client.call_tool("stats")).structured_content
    assert per_call == []
    assert progress == []
    assert [tool.name for tool in again] == [tool.name for tool in first]
    # The cache was invalidated by the list change: the listing was fetched again.
    assert stats_after.get("tools/list", 0) == stats_before.get("tools/list", 0) + 1


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_failing_client_callback_fails_no_call(era):
    """The client's on_notification raising is reported to on_log, even for a notification that
    reached a call's callback for being alone in flight: the call itself succeeds."""
    logs = []

    def on_notification(note):
        raise ValueError("the application's bug")

    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", era, log_level="info", on_notification=on_notification, on_log=logs.append
        ) as client:
            if era == "legacy":
                await client.set_logging_level("info")
            result = await client.call_tool(
                "log", {"level": "warning", "message": "hi"}, on_progress=lambda *_: None
            )
            assert result.text == "logged"
            with trio.move_on_after(LIMIT / 2):
                while not any("the application's bug" in line for line in logs):  # noqa: ASYNC110
                    await trio.sleep(0.01)
    assert any("raised ValueError" in line and "the application's bug" in line for line in logs)
