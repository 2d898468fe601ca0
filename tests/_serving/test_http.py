"""The Streamable HTTP front of the server core (`trio_mcp._serving.http`), driven request by request.

No socket and no httpx2: `HTTPFront.handle` takes whole requests, and the
connections behind it are a small scripted app on the real server core, so
that where each line of the server goes (JSON answer, event stream, GET
stream, nowhere) is seen exactly. The header rule of the 2026-07-28 era is
a Hypothesis property over arbitrary methods and names.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, strategies as st

from trio_mcp._core.http_wire import modern_headers
from trio_mcp._errors import RpcError
from trio_mcp._serving.http import FrontGone, HTTPFront, HTTPRequest, HTTPResponse, check_modern_headers
from trio_mcp._serving.server import Request, Server

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN}


# ------------------------------------------------------------- the header rule


@given(method=st.text(min_size=1), name=st.text(), version=st.text(min_size=1))
def test_headers_built_from_the_body_always_agree(method, name, version):
    message = {"method": method, "params": {"name": name, "uri": name, "_meta": {**META}}}
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = version
    headers = list(modern_headers(message, version).items())
    assert check_modern_headers(HTTPRequest("POST", "/mcp", headers), message) is None


@given(name=st.text(), other=st.text())
def test_a_name_that_differs_is_a_mismatch(name, other):
    message = {"method": "tools/call", "params": {"name": name, "_meta": META}}
    headers = dict(modern_headers(message, MODERN))
    headers["mcp-name"] = modern_headers({"method": "tools/call", "params": {"name": other}}, MODERN)[
        "mcp-name"
    ]
    problem = check_modern_headers(HTTPRequest("POST", "/mcp", list(headers.items())), message)
    assert (problem is None) == (name == other)


def test_a_repeated_header_is_a_mismatch():
    message = {"method": "tools/list", "params": {"_meta": META}}
    headers = [*modern_headers(message, MODERN).items(), ("Mcp-Method", "tools/list")]
    assert "2 times" in (check_modern_headers(HTTPRequest("POST", "/mcp", headers), message) or "")


def test_an_initialize_era_message_has_no_header_rule():
    assert check_modern_headers(HTTPRequest("POST", "/mcp", []), {"method": "tools/list"}) is None


# ------------------------------------------------------------ a scripted app


class Script:
    """An app whose ``tools/call`` runs the handler the test gives, by tool name."""

    def __init__(self) -> None:
        self.server: Server | None = None
        self.tools: dict[str, Any] = {}
        self.cancellations: list[Any] = []
        self.connections = 0

    async def connect(self, make_server, stream) -> None:
        self.connections += 1
        self.server = server = make_server(self, era="modern")
        await server.serve(stream, stream, eof_grace=0)

    def admit(self, request: Request):
        if request.method != "tools/call":
            raise RpcError(-32601, f"no {request.method}")
        tool = self.tools[request.params["name"]]
        return lambda: tool(self.server, request)

    def notification(self, message):
        pass

    def cancelled(self, request: Request) -> None:
        self.cancellations.append(request.id)

    def failed(self, request, error):
        return RpcError(-32603, repr(error))

    def input_ended(self) -> None:
        pass


def call(request_id: int, name: str, **meta: Any) -> HTTPRequest:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
    message["params"] = {"name": name, "_meta": {**META, **meta}}
    headers = [("content-type", "application/json"), *modern_headers(message, MODERN).items()]
    return HTTPRequest("POST", "/mcp", headers, json.dumps(message).encode())


async def events(response: HTTPResponse) -> list[dict[str, Any]]:
    out = []
    while (chunk := await response.receive()) is not None:
        assert chunk.startswith(b"event: message\ndata: ")
        out.append(json.loads(chunk.split(b"data: ", 1)[1]))
    return out


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


async def test_each_line_goes_to_the_request_whose_handler_sent_it(autojump_clock):
    script = Script()

    async def chatty(server: Server, request: Request):
        for _ in range(3):
            await server.send(
                server.notification("notifications/message", {"level": "info", "data": request.id})
            )
            await trio.sleep(1)
        return text(f"done {request.id}")

    script.tools["chatty"] = chatty
    script.tools["quick"] = lambda server, request: _quick()
    front = HTTPFront(script.connect)
    got: dict[int, list[Any]] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(front.run)

        async def one(request_id: int) -> None:
            response = await front.handle(call(request_id, "chatty"))
            assert response.headers == [("content-type", "text/event-stream")]
            got[request_id] = await events(response)

        async with trio.open_nursery() as calls:
            calls.start_soon(one, 1)
            calls.start_soon(one, 2)
        quick = await front.handle(call(3, "quick"))
        assert (quick.status, quick.streaming) == (200, False)
        assert json.loads(quick.body)["result"]["content"][0]["text"] == "quick"
        nursery.cancel_scope.cancel()
    for request_id in (1, 2):
        *notes, answer = got[request_id]
        assert [note["params"]["data"] for note in notes] == [request_id] * 3
        assert answer["id"] == request_id
    assert script.connections == 1  # one connection serves every stateless request


async def _forever(server: Server, request: Request) -> None:
    await trio.sleep_forever()


async def _quick() -> dict[str, Any]:
    await trio.lowlevel.checkpoint()
    return text("quick")


async def test_closing_a_2026_exchange_cancels_its_request(autojump_clock):
    script = Script()
    started = trio.Event()

    async def forever(server: Server, request: Request):
        started.set()
        await trio.sleep_forever()

    script.tools["forever"] = forever
    front = HTTPFront(script.connect)
    async with trio.open_nursery() as nursery:
        await nursery.start(front.run)
        with trio.move_on_after(5):
            await front.handle(call(1, "forever"))
        assert started.is_set()
        await trio.testing.wait_all_tasks_blocked()
        assert script.cancellations == [1]
        nursery.cancel_scope.cancel()


async def test_a_connection_that_ends_cuts_its_exchanges(autojump_clock):
    script = Script()

    async def dies(server: Server, request: Request):
        await server.send(server.notification("notifications/message", {"level": "info", "data": "x"}))
        await trio.sleep(1)
        server.stop("died")
        await trio.sleep_forever()

    script.tools["dies"] = dies
    front = HTTPFront(script.connect)
    async with trio.open_nursery() as nursery:
        await nursery.start(front.run)
        response = await front.handle(call(1, "dies"))
        assert response.streaming
        # What was sent before is read, then the stream is cut.
        first = await response.receive()
        assert first is not None
        with pytest.raises(FrontGone):
            await response.receive()
        # The next request gets a new connection.
        script.tools["quick"] = lambda server, request: _quick()
        quick = await front.handle(call(2, "quick"))
        assert json.loads(quick.body)["result"]["content"][0]["text"] == "quick"
        assert script.connections == 2
        nursery.cancel_scope.cancel()


async def test_clients_whose_ids_overlap_each_get_their_own_answers(autojump_clock):
    # Every stateless client numbers from 1: the same id twice at once is two
    # clients, not a mistake. Each gets its answer, its lines and its
    # cancellation, under its own id.
    script = Script()

    async def echo(server: Server, request: Request):
        await server.send(
            server.notification("notifications/progress", {"progressToken": 1, "progress": 1}),
        )
        await trio.sleep(float(request.params["_meta"]["wait"]))
        return text(str(request.params["_meta"]["wait"]))

    script.tools["echo"] = echo
    script.tools["forever"] = _forever
    front = HTTPFront(script.connect)
    got: dict[int, list[Any]] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(front.run)

        async def one(wait: int) -> None:
            response = await front.handle(call(7, "echo", wait=wait, progressToken=1))
            got[wait] = await events(response)

        async with trio.open_nursery() as calls:
            for wait in (3, 1, 2):
                calls.start_soon(one, wait)
        for wait in (1, 2, 3):
            progress, answer = got[wait]
            assert progress["params"] == {"progressToken": 1, "progress": 1}
            assert answer["id"] == 7
            assert answer["result"]["content"][0]["text"] == str(wait)
        # A client that gives up on its request 5 cancels its own, not another's 5.
        async with trio.open_nursery() as calls:
            calls.start_soon(front.handle, call(5, "forever"))
            await trio.sleep(1)
            with trio.move_on_after(1):
                await front.handle(call(5, "forever"))
            await trio.testing.wait_all_tasks_blocked()
            # The core knew the second 5 by an alias: that one is cancelled.
            assert len(script.cancellations) == 1
            assert script.cancellations[0] != 5
            calls.cancel_scope.cancel()
        nursery.cancel_scope.cancel()
    assert script.connections == 1


async def test_a_front_that_is_not_running_says_so():
    front = HTTPFront(Script().connect)
    with pytest.raises(RuntimeError, match="not running"):
        await front.handle(call(1, "x"))
