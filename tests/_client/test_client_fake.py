"""Client edge cases that need precise control of the server, run against the in-memory fake.

Every test takes pytest-trio's ``autojump_clock``: waits cost no real time.
"""

from __future__ import annotations

import pytest
import trio

import trio_mcp
from trio_mcp import RequestTimeout, ServerGone
from trio_mcp.testing import FakeServer, open_fake_client


def listen_tasks(client) -> list[str]:
    return [task.name for task in client.session._nursery.child_tasks if task.name == "trio_mcp:listen"]


async def test_cancelling_the_caller_before_the_acknowledgement_withdraws_the_listen(autojump_clock):
    server = FakeServer(tools=["a"], manual=True)
    async with open_fake_client(server) as client:
        with trio.move_on_after(5) as scope:
            async with client.listen(tools=True):
                pytest.fail("never acknowledged, so never entered")
        assert scope.cancelled_caught
        (request,) = [r for r in server.requests if r.method == "subscriptions/listen"]
        with trio.fail_after(1):
            await request.wait_cancelled()  # the withdrawal crosses the stream
        assert client.session._conn.in_flight == 0
        assert listen_tasks(client) == []
        (listen,) = [m for m in server.received if m.get("method") == "subscriptions/listen"]
        cancels = [m for m in server.received if m.get("method") == "notifications/cancelled"]
        assert [m["params"]["requestId"] for m in cancels] == [listen["id"]]


async def test_a_listen_never_acknowledged_times_out_and_is_withdrawn(autojump_clock):
    server = FakeServer(tools=["a"], manual=True)
    async with open_fake_client(server, options=trio_mcp.ClientOptions(request_timeout=3)) as client:
        with pytest.raises(RequestTimeout, match="not acknowledged"):
            async with client.listen(tools=True):
                pytest.fail("never acknowledged, so never entered")
        assert client.session._conn.in_flight == 0
        assert listen_tasks(client) == []


async def test_a_failing_on_notification_does_not_break_a_listen(autojump_clock):
    """A notification that is not the subscription's goes to on_notification; its errors are only logged."""
    logged: list[str] = []

    def broken(note):
        raise ValueError("application bug")

    server = FakeServer(tools=["a"], manual=True)
    server.on_tool("a", lambda request: "done")
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(on_notification=broken, on_log=logged.append)
    ) as client:
        got: list[str] = []
        async with trio.open_nursery() as nursery:

            async def app():
                async with client.listen(tools=True) as subscription:
                    got.extend([note["method"] async for note in subscription])

            nursery.start_soon(app)
            listen = await server.expect_request("subscriptions/listen")
            await listen.acknowledge()
            # Alone in flight, the listen request is offered this untagged log.
            await server.notify("notifications/message", {"level": "info", "data": "x"})
            await listen.notify("notifications/tools/list_changed")
            await listen.respond()
        assert got == ["notifications/tools/list_changed"]
        assert any("application bug" in line for line in logged)
        assert (await client.call_tool("a")).text == "done"


async def test_an_empty_acknowledgement_is_an_acknowledgement(autojump_clock):
    """The server may honour none of the filter: ``{}`` still acknowledges; a later death ends the iteration."""
    server = FakeServer(tools=["a"], manual=True)
    async with open_fake_client(server) as client:
        async with trio.open_nursery() as nursery:
            entered = trio.Event()

            async def app():
                async with client.listen(tools=True) as subscription:
                    assert subscription.acknowledged == {}
                    entered.set()
                    with pytest.raises(ServerGone):
                        async for _ in subscription:
                            pass

            nursery.start_soon(app)
            listen = await server.expect_request("subscriptions/listen")
            await listen.acknowledge({})
            await entered.wait()
            await server.exit(1)


async def test_a_request_refused_before_it_is_sent_leaves_no_request_behind(autojump_clock):
    server = FakeServer(tools=["a"])
    async with open_fake_client(server) as client:
        for bad in ({"x": {1, 2}}, {"x": object()}, {"x": b"bytes"}):
            with pytest.raises(TypeError, match="JSON"):
                await client.request("tools/list", bad)
        assert client.session.statistics().requests_in_flight == 0
        # The next request is the first the server sees, and is answered.
        assert [tool["name"] for tool in (await client.request("tools/list"))["tools"]] == ["a"]
    assert [m.get("method") for m in server.received] == ["server/discover", "tools/list"]
