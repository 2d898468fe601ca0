"""Test your Trio application against a scripted, in-memory MCP server.

`FakeServer` plays the server; `open_fake_client` connects the real
`trio_mcp.Client` to it over `trio.testing.memory_stream_pair`, with no
process: the client, its session and the stream channel's framing, reader
and writer are the ones that run over a pipe, and the fake reads and writes
lines with the same server core as the demo server (``python -m
trio_mcp.demo``). Everything runs in the test's own Trio run, so it works
under ``trio.testing.MockClock(autojump_threshold=0)``: request timeouts,
``input_timeout`` and your own `trio.fail_after` budgets elapse in virtual
time, at once.

The fake answers the handshake of its protocol era by itself (``era="modern"``
for 2026-07-28, ``era="legacy"`` for the initialize era), its lists, and
``subscriptions/listen``. Other requests are answered by the handlers you
register (`FakeServer.on_tool`, `FakeServer.on_request`); a call of a tool,
prompt or resource it lists that no handler takes waits for your test to take
it with `FakeServer.receive_request` and answer it with the methods of
`FakeRequest`; anything else is answered as a real server would (an unknown
tool is an error), unless ``manual=True``. Everything the client sent is kept
in `FakeServer.received`.

An application test, with the ``autojump_clock`` fixture of pytest-trio::

    import trio
    import trio_mcp
    from trio_mcp.testing import FakeServer, open_fake_client


    # The application under test: it asks the server for a weather report.
    async def forecast(client: trio_mcp.Client, city: str) -> str:
        with trio.move_on_after(5):
            result = await client.call_tool("forecast", {"city": city})
            return result.text
        return "no forecast today"


    async def test_forecast(autojump_clock):
        server = FakeServer(tools=["forecast"])
        server.on_tool("forecast", lambda request: f"sunny in {request.arguments['city']}")
        async with open_fake_client(server) as client:
            assert await forecast(client, "Paris") == "sunny in Paris"
        assert server.requests[-1].arguments == {"city": "Paris"}


    async def test_forecast_gives_up_after_five_seconds(autojump_clock):
        server = FakeServer(tools=["forecast"])
        async with open_fake_client(server) as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(forecast, client, "Paris")
                request = await server.expect_request("tools/call", name="forecast")
                start = trio.current_time()
                await request.wait_cancelled()  # never answered: the app gives up
                assert trio.current_time() - start == 5

The first test answers through a handler; the second takes the request
itself, and waits for the ``notifications/cancelled`` that the application's
`trio.move_on_after` makes the client send: the five seconds pass in no
time at all.

A test drives the multi round-trip exchanges of the 2026-07-28 era with
`FakeRequest.input_required` (the client answers through its hooks and sends
the request again, which arrives as a new `FakeRequest` with
`FakeRequest.input_responses`), and the server-to-client requests of the
initialize era with `FakeServer.send_request`. `FakeServer.exit` makes the
server die (the client raises `trio_mcp.ServerGone`), for testing recovery:
``await server.exit(signal=signal.SIGKILL)`` is a test's ``kill -9``. A fake's
process id (`FakeServer.pid`) names no real process (`is_fake_pid`), so
application code that signals its servers by pid harms nothing under test.

An application that reaches its servers by URL is tested with
`FakeServer.http_target`: an `trio_mcp.HTTPTarget` whose httpx2 client has a
transport into the fake, through the package's Streamable HTTP front, still
in memory and in virtual time (the ``http`` extra).

Messages cross the in-memory stream as they would a pipe: a client call that
waits for its answer returns once the fake has answered it, but what the
client sends without waiting (a ``notifications/cancelled``, a notification)
reaches the fake a moment later. Wait for it on the fake's side
(`FakeRequest.wait_cancelled`, `FakeServer.receive_request`) before asserting
on `FakeServer.received`; leaving the client's block also lets the fake read
everything the client sent.
"""

from __future__ import annotations

from ._openers import open_fake_client as open_fake_client, open_fake_transport as open_fake_transport
from ._pids import is_fake_pid as is_fake_pid
from ._request import FakeRequest as FakeRequest
from ._server import FakeServer as FakeServer

__all__ = ["FakeRequest", "FakeServer", "is_fake_pid", "open_fake_client", "open_fake_transport"]

# Tracebacks, reprs and the docs name them trio_mcp.testing.X, not the private
# module each happens to live in.
for _obj in (FakeRequest, FakeServer, is_fake_pid, open_fake_client, open_fake_transport):
    _obj.__module__ = __name__
del _obj
