"""MCP over any Trio byte stream: a `StreamTarget` opened with `open_client`, `connect_client` and `open_session`.

The same client as over stdio, over three kinds of stream: an in-memory pair
(`trio.testing.memory_stream_pair`), a real TCP socket on the loopback
interface, and the pipes of a real child process stapled into one stream.
The server on the other end is the bundled demo server (its ``serve``
takes any pair of Trio streams).
"""

from __future__ import annotations

import subprocess
import sys
from functools import partial

import pytest
import trio
import trio.testing

import trio_mcp
from trio_mcp import ServerGone, TransportClosed
from trio_mcp._transports.stream import CLOSE_GRACE
from trio_mcp.demo._server import serve

GUARD = 10


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
async def test_a_client_over_an_in_memory_stream(protocol):
    client_end, server_end = trio.testing.memory_stream_pair()
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve, server_end, server_end)
            async with trio_mcp.open_client(
                trio_mcp.StreamTarget(client_end, name="demo"),
                options=trio_mcp.ClientOptions(protocol=protocol),
            ) as client:
                assert client.server_info.name == "trio-mcp-demo"
                assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
                assert client.session.name == "server 'demo'"
                assert client.session.statistics().pid is None
            nursery.cancel_scope.cancel()


async def test_a_client_over_a_tcp_socket():
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:

            async def handler(stream: trio.SocketStream) -> None:
                await serve(stream, stream)

            (listener,) = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
            port = listener.socket.getsockname()[1]
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with trio_mcp.open_client(trio_mcp.StreamTarget(stream)) as client:
                assert client.era == "modern"
                results = {}

                async def add(a: int) -> None:
                    results[a] = (await client.call_tool("add", {"a": a, "b": 1})).text

                async with trio.open_nursery() as calls:
                    for a in range(20):
                        calls.start_soon(add, a)
                assert results == {a: str(a + 1) for a in range(20)}
                assert "SocketStream" in client.session.name
            nursery.cancel_scope.cancel()


async def test_a_client_over_the_pipes_of_a_child_process():
    """A process's pipes as one stream: the process is the caller's, the stream the session's."""
    with trio.fail_after(GUARD):
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "trio_mcp.demo"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            stream = trio.StapledStream(proc.stdin, proc.stdout)
            async with trio_mcp.open_client(trio_mcp.StreamTarget(stream, name="demo child")) as client:
                assert (await client.call_tool("echo", {"text": "piped"})).text == "piped"
            # Closing the stream closed the child's stdin: the demo exits on its own.
            assert await proc.wait() == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def test_connect_client_runs_in_a_nursery_of_yours_and_closes_with_the_client():
    client_end, server_end = trio.testing.memory_stream_pair()
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve, server_end, server_end)
            client = await trio_mcp.connect_client(
                nursery,
                trio_mcp.StreamTarget(client_end),
                options=trio_mcp.ClientOptions(protocol="2025-11-25"),
            )
            assert client.era == "legacy"
            assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
            await client.aclose()
            await client.aclose()  # idempotent
            with pytest.raises(TransportClosed):
                await client.call_tool("echo", {"text": "x"})
            nursery.cancel_scope.cancel()


async def test_the_end_of_the_stream_fails_what_is_in_flight_with_server_gone():
    client_end, server_end = trio.testing.memory_stream_pair()

    async def answer_discover_then_hang_up() -> None:
        # A server that speaks the initialize era, then closes the stream
        # while a call is in flight.
        buffer = b""
        while b"tools/call" not in buffer:
            data = await server_end.receive_some()
            buffer += data
            if b'"server/discover"' in data:
                await server_end.send_all(
                    b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}\n'
                )
            if b'"initialize"' in data:
                await server_end.send_all(
                    b'{"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "2025-11-25",'
                    b' "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}}\n'
                )
        await server_end.aclose()

    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer_discover_then_hang_up)
            async with trio_mcp.open_client(trio_mcp.StreamTarget(client_end, name="short-lived")) as client:
                with pytest.raises(ServerGone, match="'short-lived' closed the connection"):
                    await client.call_tool("echo")
                with pytest.raises(ServerGone):
                    await client.list_tools()


async def test_a_raw_session_over_a_stream():
    client_end, server_end = trio.testing.memory_stream_pair()
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve, server_end, server_end)
            async with trio_mcp.open_session(trio_mcp.StreamTarget(client_end)) as session:
                result = await session.request(
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                )
                assert result["protocolVersion"] == "2025-11-25"
            nursery.cancel_scope.cancel()


async def read_to_end(stream: trio.abc.ReceiveStream) -> bytes:
    data = b""
    while chunk := await stream.receive_some():
        data += chunk
    return data


async def test_closing_writes_what_was_sent_before(autojump_clock):
    client_end, server_end = trio.testing.memory_stream_pair()
    async with trio_mcp.open_session(trio_mcp.StreamTarget(client_end)) as wire:
        await wire.notify("notifications/initialized")
    # The notification was queued for the writer when the block ended: it
    # still reaches the peer, then the end of the stream.
    with trio.fail_after(1):
        assert await read_to_end(server_end) == b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


async def test_closing_gives_up_on_a_peer_that_does_not_read(autojump_clock):
    client_end, server_end = trio.testing.lockstep_stream_pair()
    async with trio_mcp.open_session(trio_mcp.StreamTarget(client_end)) as wire:
        await wire.notify("notifications/initialized")
        start = trio.current_time()
    # Nobody reads the other end: closing waits the close grace, then gives up.
    assert trio.current_time() - start == CLOSE_GRACE
    await server_end.aclose()
