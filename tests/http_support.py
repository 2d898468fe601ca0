"""A tiny scripted HTTP server on Trio sockets, for the HTTP transport's own tests.

Each connection serves one request (``Connection: close``): the request is read
with h11, then the test's handler writes whatever bytes it likes to the socket
(a proper answer, a cut stream, a drip, nothing at all). `McpScript` is a
handler that answers like an MCP server of either era, with hooks per method.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import h11
import trio


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


Handler = Callable[[Request, trio.SocketStream], Awaitable[None]]


def response_bytes(status: int, headers: dict[str, str] | None = None, body: bytes = b"") -> bytes:
    reason = {200: "OK", 202: "Accepted"}.get(status, "Status")
    lines = [f"HTTP/1.1 {status} {reason}"]
    all_headers = {"connection": "close", "content-length": str(len(body))}
    all_headers.update(headers or {})
    lines += [f"{name}: {value}" for name, value in all_headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def send(
    stream: trio.SocketStream, status: int, headers: dict[str, str] | None = None, body: bytes = b""
) -> None:
    await stream.send_all(response_bytes(status, headers, body))


async def send_json(
    stream: trio.SocketStream, message: Any, status: int = 200, headers: dict[str, str] | None = None
) -> None:
    await send(
        stream, status, {"content-type": "application/json", **(headers or {})}, json.dumps(message).encode()
    )


def event(message: Any, event_id: str = "", kind: str = "") -> bytes:
    out = b""
    if kind:
        out += f"event: {kind}\n".encode()
    if event_id:
        out += f"id: {event_id}\n".encode()
    data = message if isinstance(message, str) else json.dumps(message)
    return out + f"data: {data}\n\n".encode()


async def start_sse(stream: trio.SocketStream, headers: dict[str, str] | None = None) -> None:
    """Headers of an event stream with no length: the body runs until the socket closes."""
    lines = [
        "HTTP/1.1 200 OK",
        "content-type: text/event-stream",
        "connection: close",
        "cache-control: no-cache",
    ]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    await stream.send_all(("\r\n".join(lines) + "\r\n\r\n").encode())


class HttpServer:
    """Serves ``handler`` on a loopback port; `requests` records every request read."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.port = 0
        self.open_connections = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def start(self, nursery: trio.Nursery) -> str:
        listeners = await nursery.start(partial(trio.serve_tcp, self._serve, 0, host="127.0.0.1"))
        self.port = listeners[0].socket.getsockname()[1]
        return self.url

    async def _serve(self, stream: trio.SocketStream) -> None:
        self.open_connections += 1
        try:
            request = await _read_request(stream)
            if request is None:
                return
            self.requests.append(request)
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.handler(request, stream)
        finally:
            self.open_connections -= 1
            await trio.aclose_forcefully(stream)

    def posted(self, method: str) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and r.body and r.json.get("method") == method]


async def _read_request(stream: trio.SocketStream) -> Request | None:
    conn = h11.Connection(h11.SERVER)
    request: h11.Request | None = None
    body = b""
    while True:
        try:
            event_ = conn.next_event()
        except h11.RemoteProtocolError:
            return None  # not HTTP/1.1 (a TLS handshake, say)
        if event_ is h11.NEED_DATA:
            try:
                data = await stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return None
            conn.receive_data(data)
            if not data:
                return None
            continue
        if isinstance(event_, h11.Request):
            request = event_
        elif isinstance(event_, h11.Data):
            body += bytes(event_.data)
        elif isinstance(event_, h11.EndOfMessage | h11.ConnectionClosed):
            break
    assert request is not None
    headers = {name.decode().lower(): value.decode() for name, value in request.headers}
    return Request(request.method.decode(), request.target.decode(), headers, body)


DISCOVER = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "1"},
}


def initialize_result(version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1"},
    }


TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


@dataclass
class McpScript:
    """An MCP server over HTTP: ``era`` ``"modern"`` or ``"legacy"``; ``methods`` override per method.

    An override is ``async (request, stream, message) -> None`` and writes the
    whole answer itself.
    """

    era: str = "modern"
    methods: dict[str, Callable[[Request, trio.SocketStream, dict[str, Any]], Awaitable[None]]] = field(
        default_factory=dict
    )
    session: str = "session-1"
    sessions: int = 0
    get: Callable[[Request, trio.SocketStream], Awaitable[None]] | None = None

    async def __call__(self, request: Request, stream: trio.SocketStream) -> None:
        if request.method == "GET":
            if self.get is not None:
                await self.get(request, stream)
            else:
                await send(stream, 405, {"allow": "POST"})
            return
        if request.method == "DELETE":
            await send(stream, 200)
            return
        message = request.json
        method = message.get("method")
        if method in self.methods:
            await self.methods[method](request, stream, message)
            return
        if "id" not in message or method is None:
            await send(stream, 202)
            return
        rid = message["id"]
        if self.era == "modern":
            if method == "server/discover":
                await send_json(stream, {"jsonrpc": "2.0", "id": rid, "result": DISCOVER})
            elif method == "tools/list":
                await send_json(stream, {"jsonrpc": "2.0", "id": rid, "result": TOOLS})
            elif method == "tools/call":
                text = json.dumps(message["params"].get("arguments", {}))
                await send_json(
                    stream,
                    {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}},
                )
            else:
                await send_json(
                    stream, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "nope"}}, 404
                )
            return
        # The initialize era.
        if method == "server/discover":
            await send_json(
                stream,
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32000, "message": "Bad Request: Server not initialized"},
                },
                400,
            )
            return
        if method == "initialize":
            self.sessions += 1
            self.session = f"session-{self.sessions}"
            await send_json(
                stream,
                {"jsonrpc": "2.0", "id": rid, "result": initialize_result()},
                headers={"mcp-session-id": self.session},
            )
            return
        if request.headers.get("mcp-session-id") != self.session:
            await send_json(
                stream,
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}},
                404,
            )
            return
        if method == "tools/list":
            await send_json(stream, {"jsonrpc": "2.0", "id": rid, "result": TOOLS})
        elif method == "tools/call":
            text = json.dumps(message["params"].get("arguments", {}))
            await send_json(
                stream, {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}
            )
        else:
            await send_json(
                stream, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "nope"}}
            )
