"""Tests of `trio_mcp.testing` over HTTP: `FakeServer.http_target`, under an autojumping MockClock.

The fake is reached as a remote server: the client's real Streamable HTTP
transport, an httpx2 client whose transport hands each request to the
package's HTTP front, and the fake's server core, all in the test's Trio
run. Every test takes pytest-trio's ``autojump_clock``: timeouts elapse in
virtual time, and times are asserted exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import trio

import trio_mcp
from trio_mcp.testing import FakeServer

ERAS = ["modern", "legacy"]


@pytest.mark.parametrize("era", ERAS)
async def test_an_application_reaches_the_fake_by_url(autojump_clock, era):
    server = FakeServer(era=era, tools=["forecast"])

    async def forecast(request):
        await request.progress(1, 2)
        await request.log("info", f"forecast for {request.arguments['city']}")
        return f"sunny in {request.arguments['city']}"

    server.on_tool("forecast", forecast)
    notes: list[dict[str, Any]] = []
    progress: list[float] = []
    async with server.http_target("https://weather.example/mcp") as target:
        assert isinstance(target, trio_mcp.HTTPTarget)
        assert target.url == "https://weather.example/mcp"
        options = trio_mcp.ClientOptions(log_level="info", on_notification=notes.append)
        async with trio_mcp.open_client(target, options=options) as client:
            assert client.era == era
            assert [tool.name for tool in await client.list_tools()] == ["forecast"]
            result = await client.call_tool(
                "forecast", {"city": "Paris"}, on_progress=lambda done, total, text: progress.append(done)
            )
            assert result.text == "sunny in Paris"
    assert progress == [1]
    assert [note["params"]["data"] for note in notes if note["method"] == "notifications/message"] == [
        "forecast for Paris"
    ]
    assert server.requests[-1].arguments == {"city": "Paris"}
    # The initialize era ends its session with DELETE: the fake saw its client leave.
    assert not server.connected


@pytest.mark.parametrize("era", ERAS)
async def test_giving_up_takes_virtual_time_and_reaches_the_fake(autojump_clock, era):
    server = FakeServer(era=era, tools=["forecast"])
    async with server.http_target() as target, trio_mcp.open_client(target) as client:
        async with trio.open_nursery() as nursery:

            async def application() -> None:
                with trio.move_on_after(5):
                    await client.call_tool("forecast", {"city": "Paris"})

            nursery.start_soon(application)
            request = await server.expect_request("tools/call", name="forecast")
            start = trio.current_time()
            # 2026-07-28: the client closes the exchange; initialize era: notifications/cancelled.
            await request.wait_cancelled()
            assert trio.current_time() - start == 5
        assert (await client.list_tools())[0].name == "forecast"


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_given_up_just_before_the_client_closes_still_reaches_the_fake(autojump_clock, era):
    # Failed without the fix (initialize era): the notifications/cancelled was
    # counted by the close only once its task ran, so the close cut it off.
    server = FakeServer(era=era, tools=["forecast"])
    async with server.http_target() as target, trio.open_nursery() as nursery:

        async def application() -> None:
            async with trio_mcp.open_client(target) as client:
                with trio.move_on_after(5):
                    await client.call_tool("forecast", {})

        nursery.start_soon(application)
        request = await server.expect_request("tools/call", name="forecast")
        with trio.fail_after(30):
            await request.wait_cancelled()


@pytest.mark.parametrize("era", ERAS)
async def test_what_the_test_sends_for_a_request_goes_to_that_request(autojump_clock, era):
    server = FakeServer(era=era, tools=["slow"])
    got: dict[str, list[Any]] = {"a": [], "b": []}
    async with server.http_target() as target, trio_mcp.open_client(target) as client:
        async with trio.open_nursery() as nursery:

            async def call(key: str) -> None:
                result = await client.call_tool(
                    "slow", {"key": key}, on_progress=lambda done, total, text: got[key].append(text)
                )
                got[key].append(result.text)

            nursery.start_soon(call, "a")
            nursery.start_soon(call, "b")
            first = await server.expect_request("tools/call", name="slow")
            second = await server.expect_request("tools/call", name="slow")
            # Answered from the test's task, crosswise: each message still goes to its own call.
            await second.progress(1, message=f"for {second.arguments['key']}")
            await first.progress(1, message=f"for {first.arguments['key']}")
            for request in (first, second):
                text = f"done {request.arguments['key']}"
                await request.respond({"content": [{"type": "text", "text": text}]})
    assert got == {"a": ["for a", "done a"], "b": ["for b", "done b"]}


async def test_a_server_request_goes_on_the_calls_stream(autojump_clock):
    server = FakeServer(era="legacy", tools=["ask"])

    async def ask(request):
        answer = await server.send_request(
            "elicitation/create",
            {
                "mode": "form",
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {}},
            },
        )
        return f"Hello, {answer['content']['name']}!"

    async def on_elicitation(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    server.on_tool("ask", ask)
    async with server.http_target() as target:
        options = trio_mcp.ClientOptions(on_elicitation=on_elicitation)
        async with trio_mcp.open_client(target, options=options) as client:
            assert (await client.call_tool("ask")).text == "Hello, Ada!"


async def test_list_changes_reach_the_client_in_both_eras(autojump_clock):
    legacy = FakeServer(era="legacy", tools=["a"])
    notes: list[str] = []
    told = trio.Event()

    def on_notification(note: dict[str, Any]) -> None:
        notes.append(note["method"])
        told.set()

    async with legacy.http_target() as target:
        options = trio_mcp.ClientOptions(on_notification=on_notification)
        async with trio_mcp.open_client(target, options=options) as client:
            assert [tool.name for tool in await client.list_tools()] == ["a"]
            await legacy.list_changed("tools", ["b"])  # on the session's GET stream
            with trio.fail_after(1):
                await told.wait()
            assert notes == ["notifications/tools/list_changed"]
            assert [tool.name for tool in await client.list_tools()] == ["b"]

    modern = FakeServer(era="modern", tools=["a"])
    async with modern.http_target() as target, trio_mcp.open_client(target) as client:
        async with client.listen(tools=True) as subscription:  # a long-lived POST of its own
            await modern.list_changed("tools", ["b", "c"])
            async for note in subscription:
                assert note["method"] == "notifications/tools/list_changed"
                break
        assert [tool.name for tool in await client.list_tools()] == ["b", "c"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_death_fails_the_calls_in_flight_and_the_server_comes_back(autojump_clock, era):
    server = FakeServer(era=era, tools=["slow", "echo"])
    server.on_tool("echo", lambda request: request.arguments["text"])
    async with server.http_target() as target, trio_mcp.open_client(target) as client:
        first_pid = server.pid
        failure: list[BaseException] = []
        async with trio.open_nursery() as nursery:

            async def call() -> None:
                try:
                    await client.call_tool("slow")
                except trio_mcp.MCPError as exc:
                    failure.append(exc)

            nursery.start_soon(call)
            await server.expect_request("tools/call", name="slow")
            await server.exit(1)
        (gone,) = failure
        assert isinstance(gone, trio_mcp.ConnectionFailed), repr(gone)  # as when a real server dies
        # As a supervised remote server restarted at once: a new connection
        # (initialize era: a new session, which the client makes by itself).
        assert (await client.call_tool("echo", {"text": "again"})).text == "again"
        assert server.pid not in (None, first_pid)


async def test_a_group_entry_by_url(autojump_clock):
    server = FakeServer(tools=["forecast"])
    server.on_tool("forecast", lambda request: "sunny")
    async with server.http_target() as target:
        config = [trio_mcp.ServerSpec(name="weather", target=target)]
        async with trio_mcp.open_servers(config) as servers:
            assert (await servers.call_tool("weather__forecast", {})).text == "sunny"


async def test_the_front_refuses_what_is_not_mcp(autojump_clock):
    server = FakeServer(tools=["a"])
    async with server.http_target() as target:
        http = target.http_client
        assert http is not None
        assert (await http.get("http://fake-server.test/elsewhere")).status_code == 404
        assert (await http.get(target.url, headers={"accept": "text/event-stream"})).status_code == 400
        broken = await http.post(target.url, content=b"{", headers={"content-type": "application/json"})
        assert (broken.status_code, broken.json()["error"]["code"]) == (400, -32700)
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        }
        mismatch = await http.post(
            target.url, json=call, headers={"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}
        )
        assert (mismatch.status_code, mismatch.json()["error"]["code"]) == (400, -32020)
    # The block owned the httpx2 client: it is closed.
    assert http.is_closed


def test_the_fake_loads_httpx_only_when_asked_for_http():
    code = "import json, sys, trio_mcp.testing; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, timeout=60)
    loaded = json.loads(done.stdout)
    assert [name for name in loaded if name.partition(".")[0] in ("httpx2", "httpcore2", "h11")] == []
    assert "trio_mcp.testing._http" not in loaded
