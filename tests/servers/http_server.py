"""A small MCP server over HTTP that misbehaves on request, for the HTTP client tests.

Usage: ``python http_server.py [--era modern|legacy|dual] [--scenario NAME] [--port N]``.
It listens on 127.0.0.1 (port 0: a free one) and prints ``LISTENING <port>``
on stdout once it accepts connections. In a test, `running` serves it in
the test's own Trio run instead.

Without a scenario it is a correct, minimal MCP server on one endpoint,
``/mcp`` (``/mcp2`` too, the target of the redirect scenarios):

* 2026-07-28 (``--era modern`` or ``dual``): a POST whose
  ``MCP-Protocol-Version`` header is ``2026-07-28`` is stateless; the header
  must equal the body's ``_meta`` version, ``Mcp-Method`` the method and
  ``Mcp-Name`` the tool name (``=?base64?...?=`` decoded), else 400
  ``-32020``. ``server/discover``, ``tools/list`` and ``tools/call``; an
  unknown method gets 404 ``-32601``; GET and DELETE get 405.
* The initialize era (``--era legacy`` or ``dual``): a POST without that
  header. ``initialize`` mints an ``Mcp-Session-Id`` (answered on an event
  stream, like the SDKs' servers); every later request needs it (400
  without, 404 for an unknown one). ``notifications/initialized`` and the
  client's answers get 202. GET opens the session's stream of server
  messages (a comment every second), DELETE ends the session.
  A legacy-only server answers a 2026-07-28 request the way the npm
  ``server-everything`` does: 400 ``-32000`` with ``"id": null``.

Tools: ``echo {text}`` (JSON answer), ``slow {steps}`` (an event stream with
a ``notifications/progress`` per step when asked for progress), ``big
{size}`` (a text of ``size`` bytes, as one event), ``ask`` (legacy: an
``elicitation/create`` request on the POST stream, then what the client
said), ``stats`` (what the server saw: see `State.stats`), ``fault``, and
for x-mcp-header (SEP-2243) ``route {region, priority, verbose, note}``,
whose first three arguments are designated for ``Mcp-Param-*`` headers
(checked in the 2026-07-28 era as a server checks them: 400 ``-32020`` on a
mismatch; it answers the ``Mcp-Param-*`` headers it got, as sent), and
``misrouted``, whose annotation is invalid (on a number).

Scenarios. A scenario changes how ``tools/call`` of ``fault`` is answered
(``fault`` answers ``"no fault"`` otherwise), or every request with
``--target all``. The ``X-Test-Scenario`` and ``X-Test-Target`` request
headers choose them per request instead, so that one server process can
serve many tests (a client sends them with its ``headers`` option); the
scenarios in `ONCE` hit only the first matching request of each
``X-Test-Client``. See `SCENARIOS` for the list and what each one does.

``GET /stats`` answers what the server saw, as JSON (see `State.stats`).
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import socket
import sys
import traceback
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from functools import partial
from typing import Any

import h11
import trio

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26")
INFO_KEY = "io.modelcontextprotocol/serverInfo"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO = {"name": "trio-mcp-http-test-server", "version": "1.0.0"}
CAPABILITIES = {"tools": {}}
PATHS = ("/mcp", "/mcp2")
#: How often the GET stream and the endless scenarios send a keep-alive comment.
KEEPALIVE = 1.0

TOOLS = [
    {
        "name": "echo",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {"name": "slow", "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}}}},
    {"name": "big", "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}}},
    {"name": "ask", "inputSchema": {"type": "object"}},
    {"name": "stats", "inputSchema": {"type": "object"}},
    {"name": "fault", "inputSchema": {"type": "object"}},
    # x-mcp-header (SEP-2243): `route` mirrors three arguments into Mcp-Param-* headers and
    # answers the headers it got; `misrouted` carries an invalid annotation (on a number).
    {
        "name": "route",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                "note": {"type": "string"},
            },
        },
    },
    {
        "name": "misrouted",
        "inputSchema": {
            "type": "object",
            "properties": {"score": {"type": "number", "x-mcp-header": "Score"}},
        },
    },
]
#: The Mcp-Param-* headers `route` must get, by argument.
ROUTE_HEADERS = {
    "region": "mcp-param-region",
    "priority": "mcp-param-priority",
    "verbose": "mcp-param-verbose",
}


def dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def text_result(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], **extra}


def rpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def decode_header_value(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode()
        except ValueError:
            return value
    return value


def sse_event(message: Any = None, *, event_id: str | None = None, data: bytes | None = None) -> bytes:
    """One ``event: message`` event (LF line ends, like the TypeScript SDK)."""
    out = b"event: message\n"
    if event_id is not None:
        out += b"id: " + event_id.encode() + b"\n"
    return out + b"data: " + (dumps(message) if data is None else data) + b"\n\n"


# ------------------------------------------------------------------ HTTP plumbing


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    raw_headers: list[tuple[bytes, bytes]]

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class Exchange:
    """The answer to one request, through h11, or raw bytes once ``raw`` is used."""

    def __init__(self, stream: trio.SocketStream, conn: h11.Connection) -> None:
        self.stream = stream
        self.conn = conn
        self.keep = True  # False: close the connection after this exchange
        self.rst = False  # close it with a TCP reset
        self.index = 0  # how many requests the connection carried before this one

    async def _send(self, event: Any) -> None:
        data = self.conn.send(event)
        if data:
            await self.stream.send_all(data)

    async def respond(
        self,
        status: int,
        body: bytes = b"",
        content_type: str | None = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        hs = [(k.encode(), v.encode()) for k, v in headers]
        if content_type is not None:
            hs.append((b"content-type", content_type.encode()))
        hs.append((b"content-length", str(len(body)).encode()))
        await self._send(h11.Response(status_code=status, headers=hs))
        if body:
            await self._send(h11.Data(data=body))
        await self._send(h11.EndOfMessage())

    async def json(self, status: int, message: Any, headers: Sequence[tuple[str, str]] = ()) -> None:
        await self.respond(status, dumps(message), "application/json", headers)

    async def start_stream(
        self,
        status: int = 200,
        content_type: str | None = "text/event-stream",
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        hs = [(k.encode(), v.encode()) for k, v in headers]
        if content_type is not None:
            hs.append((b"content-type", content_type.encode()))
        hs.append((b"cache-control", b"no-cache"))
        await self._send(h11.Response(status_code=status, headers=hs))

    async def write(self, data: bytes) -> None:
        if data:
            await self._send(h11.Data(data=data))

    async def end(self) -> None:
        await self._send(h11.EndOfMessage())

    async def raw(self, data: bytes) -> None:
        """Write bytes past h11 (the connection is closed afterwards)."""
        self.keep = False
        await self.stream.send_all(data)


# ------------------------------------------------------------------ MCP state


@dataclass
class Session:
    id: str
    version: str
    get_send: trio.MemorySendChannel[bytes]
    get_recv: trio.MemoryReceiveChannel[bytes]
    get_open: trio.Event = field(default_factory=trio.Event)
    answers: dict[Any, Any] = field(default_factory=dict)
    answered: dict[Any, trio.Event] = field(default_factory=dict)
    answer_counts: dict[str, int] = field(default_factory=dict)
    # Replayable streams: key -> list of (event id, bytes of the event).
    streams: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)
    # Streams whose replay numbers the events anew (``{key}/n`` becomes ``{key}/rn``).
    renumbered: set[str] = field(default_factory=set)


@dataclass
class Call:
    """One JSON-RPC request being answered."""

    server: State
    exchange: Exchange
    request: Request
    message: dict[str, Any]
    era: str
    session: Session | None
    scenario: str

    @property
    def id(self) -> Any:
        return self.message.get("id")

    @property
    def method(self) -> str:
        return self.message["method"]

    @property
    def params(self) -> dict[str, Any]:
        params = self.message.get("params")
        return params if isinstance(params, dict) else {}

    def result_message(self, result: dict[str, Any]) -> dict[str, Any]:
        if self.era == "modern":
            result = {"resultType": "complete", "_meta": {INFO_KEY: SERVER_INFO}, **result}
        return {"jsonrpc": "2.0", "id": self.id, "result": result}

    async def result(self, result: dict[str, Any]) -> None:
        await self.exchange.json(200, self.result_message(result), self.session_headers())

    async def error(
        self, status: int, code: int, message: str, data: Any = None, request_id: Any = ...
    ) -> None:
        await self.exchange.json(
            status, rpc_error(self.id if request_id is ... else request_id, code, message, data)
        )

    def session_headers(self) -> list[tuple[str, str]]:
        return (
            [("mcp-session-id", self.session.id)]
            if self.session is not None and self.method == "initialize"
            else []
        )


class State:
    """The server: its era, default scenario, sessions and counters."""

    def __init__(self, era: str = "dual", scenario: str = "none", target: str = "fault") -> None:
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}; choose one of: {', '.join(SCENARIOS)}")
        self.era = era
        self.scenario = scenario
        self.target = target
        self.sessions: dict[str, Session] = {}
        self.forgotten: set[str] = set()
        # Clients (X-Test-Client) whose every session is now unknown.
        self.refused_clients: set[str] = set()
        self.counts: dict[str, int] = {}
        self.connections = 0
        self.open = 0
        self.answers: dict[str, int] = {}
        self.bogus_sessions_used = 0
        # (client, scenario) pairs a once-only scenario has hit.
        self.once: set[tuple[str, str]] = set()
        self.server_ids = itertools.count(1)
        # For work that outlives the connection it started on.
        self.nursery: trio.Nursery | None = None
        # Ids of the requests being answered, per X-Test-Client.
        self.inflight: dict[str, set[Any]] = {}
        # What each X-Test-Client's requests did, in order ("GET open", "POST tools/call", ...).
        self.order: dict[str, list[str]] = {}
        # The lost-session barrier: fault calls waiting, per client.
        self.waiting: dict[str, list[trio.Event]] = {}
        # Clients whose next initialize is answered late (a renewal takes its time).
        self.slow_initialize: set[str] = set()

    def stats(self) -> dict[str, Any]:
        """What the ``stats`` tool (and ``GET /stats``) answers: requests by method (GET and
        DELETE included), connections accepted and open, the client's answers to server
        requests (by JSON id), live sessions, and requests that carried a session id the
        server minted on an error answer (a client must never adopt those)."""
        return {
            "requests": dict(self.counts),
            "connections": self.connections,
            "open": self.open,
            "answers": dict(self.answers),
            "sessions": len(self.sessions),
            "bogus_sessions_used": self.bogus_sessions_used,
            "order": {client: list(events) for client, events in self.order.items()},
        }

    # ------------------------------------------------------------ connections

    async def serve_stream(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        self.open += 1
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
        exchange = Exchange(stream, conn)
        served = False
        try:
            while True:
                request = await self._read_request(stream, conn)
                if request is None:
                    return
                index = exchange.index + 1 if served else 0
                served = True
                exchange = Exchange(stream, conn)
                exchange.index = index
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._watch, stream, conn, nursery.cancel_scope)
                    try:
                        await self.handle(request, exchange)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
                        exchange.keep = False
                    except Exception:
                        # A bug of this server: say so, and keep serving the other connections.
                        traceback.print_exc()
                        exchange.keep = False
                    nursery.cancel_scope.cancel()
                if not exchange.keep or conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            return
        finally:
            self.open -= 1
            if exchange.rst:
                stream.socket.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
            with trio.move_on_after(1) as scope:
                scope.shield = True
                await stream.aclose()

    @staticmethod
    async def _watch(stream: trio.SocketStream, conn: h11.Connection, scope: trio.CancelScope) -> None:
        """While a request is answered: notice the client leaving (and keep what it sends next)."""
        try:
            while True:
                data = await stream.receive_some(65536)
                conn.receive_data(data)
                if not data:
                    break
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            pass
        scope.cancel()

    @staticmethod
    async def _read_request(stream: trio.SocketStream, conn: h11.Connection) -> Request | None:
        head: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                headers: dict[str, str] = {}
                for name, value in head.headers:
                    key = name.decode().lower()
                    headers[key] = f"{headers[key]}, {value.decode()}" if key in headers else value.decode()
                return Request(
                    head.method.decode(), head.target.decode(), headers, bytes(body), list(head.headers)
                )
            elif isinstance(event, h11.ConnectionClosed):
                return None

    # ------------------------------------------------------------ routing

    async def handle(self, request: Request, exchange: Exchange) -> None:
        path = request.path.split("?", 1)[0]
        if path == "/stats":
            exchange.keep = False
            await exchange.json(200, self.stats())
            return
        if path not in PATHS:
            await exchange.respond(404, b"<html><body>Not Found</body></html>", "text/html")
            return
        scenario = request.header("x-test-scenario") or self.scenario
        target = request.header("x-test-target") or self.target
        if scenario not in SCENARIOS:
            await exchange.respond(400, f"unknown scenario {scenario}".encode(), "text/plain")
            return
        if request.method in ("GET", "DELETE"):
            self.counts[request.method] = self.counts.get(request.method, 0) + 1
        if request.method == "GET":
            await self.get(request, exchange, scenario)
            return
        if request.method == "DELETE":
            await self.delete(request, exchange)
            return
        if request.method != "POST":
            await exchange.respond(405, headers=[("allow", "GET, POST, DELETE")])
            return
        try:
            message = json.loads(request.body)
        except ValueError:
            await exchange.json(400, rpc_error(None, -32700, "Parse error"))
            return
        if not isinstance(message, dict):
            await exchange.json(400, rpc_error(None, -32600, "Invalid Request"))
            return
        version = request.header("mcp-protocol-version")
        modern = version is not None and version not in LEGACY and version != "2024-11-05"
        if modern and self.era == "legacy":
            await exchange.json(400, rpc_error(None, -32000, "Bad Request: Server not initialized"))
            return
        if not modern and self.era == "modern":
            await exchange.json(400, rpc_error(message.get("id"), -32600, "Bad Request: Missing session ID"))
            return
        era = "modern" if modern else "legacy"
        session = None
        if era == "legacy" and message.get("method") != "initialize":
            session = await self._session(request, exchange)
            if session is None:
                return
        if "method" not in message:
            key = json.dumps(message.get("id"))
            self.answers[key] = self.answers.get(key, 0) + 1
            await self.client_answer(message, session, exchange)
            return
        if "id" not in message:
            self.counts[message["method"]] = self.counts.get(message["method"], 0) + 1
            client = request.header("x-test-client") or ""
            self.order.setdefault(client, []).append(f"POST {message['method']}")
            if message["method"] == "notifications/initialized" and scenario == "initialized-hangs":
                await trio.sleep_forever()
            await exchange.respond(202)
            return
        method = message["method"]
        self.counts[method] = self.counts.get(method, 0) + 1
        client = request.header("x-test-client") or ""
        self.order.setdefault(client, []).append(f"POST {method}")
        call = Call(self, exchange, request, message, era, session, scenario)
        inflight = self.inflight.setdefault(client, set())
        key = json.dumps(message.get("id"))
        inflight.add(key)
        try:
            await self._answer(call, method, target, scenario, request)
        finally:
            inflight.discard(key)

    async def _answer(self, call: Call, method: str, target: str, scenario: str, request: Request) -> None:
        era = call.era
        hits = target == "all" or (method == "tools/call" and call.params.get("name") == "fault")
        if scenario in BAD_ENDPOINTS:
            hits = method == "initialize"
        if scenario in ("reject-version-once", "reject-version-always"):
            hits = era == "modern"
        if hits and scenario in ONCE:
            client = request.header("x-test-client") or ""
            hits = (client, scenario) not in self.once
            self.once.add((client, scenario))
        if hits and scenario != "none":
            await SCENARIOS[scenario](call)
            return
        if era == "modern":
            await self.modern(call)
        else:
            await self.legacy(call)

    async def _session(self, request: Request, exchange: Exchange) -> Session | None:
        session_id = request.header("mcp-session-id")
        if session_id in self.forgotten:
            self.bogus_sessions_used += 1
        if session_id is None:
            await exchange.json(
                400,
                rpc_error("server-error", -32600, "Bad Request: Missing session ID"),
                [("mcp-session-id", uuid.uuid4().hex)],
            )
            return None
        session = self.sessions.get(session_id)
        if session is None or (request.header("x-test-client") or "") in self.refused_clients:
            await exchange.json(404, rpc_error(None, -32600, "Session not found"))
            return None
        return session

    async def client_answer(
        self, message: dict[str, Any], session: Session | None, exchange: Exchange
    ) -> None:
        if session is not None:
            key = json.dumps(message.get("id"))
            session.answer_counts[key] = session.answer_counts.get(key, 0) + 1
            session.answers.setdefault(message.get("id"), message)
            event = session.answered.get(message.get("id"))
            if event is not None:
                event.set()
        await exchange.respond(202)

    # ------------------------------------------------------------ modern

    async def modern(self, call: Call) -> None:
        request = call.request
        meta = call.params.get("_meta")
        if not isinstance(meta, dict) or not isinstance(meta.get(VERSION_KEY), str):
            await call.error(400, -32602, "Invalid params: missing _meta")
            return
        if meta[VERSION_KEY] != request.header("mcp-protocol-version"):
            await call.error(400, -32020, "Header mismatch: MCP-Protocol-Version")
            return
        if request.header("mcp-method") != call.method:
            await call.error(400, -32020, "Header mismatch: Mcp-Method")
            return
        if call.method == "tools/call":
            name = request.header("mcp-name")
            if name is None or decode_header_value(name) != call.params.get("name"):
                await call.error(400, -32020, "Header mismatch: Mcp-Name")
                return
            if call.params.get("name") == "route" and (mismatch := route_mismatch(call)) is not None:
                await call.error(400, -32020, f"Header mismatch: {mismatch}")
                return
        if meta[VERSION_KEY] != MODERN:
            await call.error(
                400,
                -32022,
                "Unsupported protocol version",
                {"supported": [MODERN], "requested": meta[VERSION_KEY]},
            )
            return
        if call.method == "server/discover":
            await call.result(
                {
                    "supportedVersions": [MODERN],
                    "capabilities": CAPABILITIES,
                    "ttlMs": 0,
                    "cacheScope": "public",
                }
            )
        elif call.method in ("tools/list", "tools/call"):
            await self.shared(call)
        else:
            await call.error(404, -32601, "Method not found", call.method)

    # ------------------------------------------------------------ legacy

    async def legacy(self, call: Call) -> None:
        client = call.request.header("x-test-client") or ""
        if call.method == "initialize" and client in self.slow_initialize:
            self.slow_initialize.discard(client)
            await trio.sleep(1.0)
        if call.method == "initialize":
            offered = call.params.get("protocolVersion")
            version = offered if offered in LEGACY else LEGACY[0]
            send, recv = trio.open_memory_channel[bytes](100)
            session = Session(uuid.uuid4().hex, version, send, recv)
            self.sessions[session.id] = session
            call.session = session
            result = {"protocolVersion": version, "capabilities": CAPABILITIES, "serverInfo": SERVER_INFO}
            await call.exchange.start_stream(headers=[("mcp-session-id", session.id)])
            await call.exchange.write(sse_event(call.result_message(result)))
            await call.exchange.end()
        elif call.method == "ping":
            await call.result({})
        elif call.method in ("tools/list", "tools/call"):
            await self.shared(call)
        else:
            await call.error(200, -32601, "Method not found", call.method)

    async def get(self, request: Request, exchange: Exchange, scenario: str) -> None:
        if scenario in BAD_ENDPOINTS:
            await exchange.start_stream()
            await exchange.write(b"event: endpoint\ndata: " + BAD_ENDPOINTS[scenario].encode() + b"\n\n")
            await trio.sleep(30)
            return
        if self.era == "modern" and request.header("mcp-session-id") is None:
            await exchange.respond(405, headers=[("allow", "POST")])
            return
        session = await self._session(request, exchange)
        if session is None:
            return
        if scenario == "get-many-events":
            await self.many_events(session, exchange)
            return
        last = request.header("last-event-id")
        if last is not None:
            await self.replay(session, last, exchange)
            return
        if scenario == "get-405":
            await exchange.respond(405, headers=[("allow", "POST, DELETE")])
            return
        client = request.header("x-test-client") or ""
        if scenario == "slow-get":
            # The head of the GET stream comes late: a request sent meanwhile raced it.
            await trio.sleep(0.5)
        self.order.setdefault(client, []).append("GET open")
        if session.get_open.is_set():
            await exchange.respond(409, b"stream already open", "text/plain")
            return
        session.get_open.set()
        try:
            await exchange.start_stream()
            while True:
                with trio.move_on_after(KEEPALIVE):
                    await exchange.write(await session.get_recv.receive())
                    continue
                await exchange.write(b": keepalive\n\n")
        finally:
            session.get_open = trio.Event()

    async def many_events(self, session: Session, exchange: Exchange) -> None:
        """5000 notifications with ids never used before, then the end of the stream."""
        await exchange.start_stream()
        await exchange.write(b"retry: 20\n\n")
        base = next(self.server_ids) * 10000
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
        chunk = b"".join(sse_event(note, event_id=f"m{base + n}") for n in range(5000))
        await exchange.write(chunk)
        await exchange.end()

    async def replay(self, session: Session, last: str, exchange: Exchange) -> None:
        """Resend every event of the stream ``last`` belongs to (answered ones included), then stay open."""
        key = last.split("/", 1)[0]
        events = session.streams.get(key)
        if events is None:
            await exchange.respond(404, b"unknown event id", "text/plain")
            return
        await exchange.start_stream()
        sent = 0
        while True:
            while sent < len(events):
                data = events[sent][1]
                if key in session.renumbered:
                    data = data.replace(f"id: {key}/".encode(), f"id: {key}/r".encode())
                await exchange.write(data)
                sent += 1
            await trio.sleep(0.05)

    async def delete(self, request: Request, exchange: Exchange) -> None:
        if self.era == "modern":
            await exchange.respond(405, headers=[("allow", "POST")])
            return
        session_id = request.header("mcp-session-id")
        if session_id in self.sessions:
            del self.sessions[session_id]
            await exchange.respond(200, b"", "application/json")
        else:
            await exchange.json(404, rpc_error(None, -32600, "Session not found"))

    # ------------------------------------------------------------ both eras

    async def shared(self, call: Call) -> None:
        if call.method == "tools/list":
            cache = {"ttlMs": 0, "cacheScope": "public"} if call.era == "modern" else {}
            await call.result({"tools": TOOLS, **cache})
            return
        name = call.params.get("name")
        args = call.params.get("arguments") or {}
        if name == "echo":
            await call.result(text_result(str(args.get("text", ""))))
        elif name == "fault":
            await call.result(text_result("no fault"))
        elif name == "route":
            got = {
                key.decode().lower(): value.decode()
                for key, value in call.request.raw_headers
                if key.lower().startswith(b"mcp-param-")
            }
            await call.result(text_result(json.dumps(got), structuredContent=got))
        elif name == "stats":
            await call.result(text_result("stats", structuredContent=self.stats()))
        elif name == "big":
            size = int(args.get("size", 1024))
            await call.exchange.start_stream(headers=call.session_headers())
            body = call.result_message(text_result("x" * size))
            await call.exchange.write(sse_event(body))
            await call.exchange.end()
        elif name == "slow":
            token = (call.params.get("_meta") or {}).get("progressToken")
            await call.exchange.start_stream()
            for step in range(int(args.get("steps", 3))):
                if token is not None:
                    note = {"progressToken": token, "progress": step + 1, "total": args.get("steps", 3)}
                    await call.exchange.write(
                        sse_event({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})
                    )
                await trio.sleep(0.01)
            await call.exchange.write(sse_event(call.result_message(text_result("done"))))
            await call.exchange.end()
        elif name == "ask" and call.session is not None:
            answer = await self.ask(call, call.session)
            await call.exchange.write(sse_event(call.result_message(text_result(describe(answer)))))
            await call.exchange.end()
        else:
            await call.error(200, -32602, f"Unknown tool: {name}")

    async def ask(self, call: Call, session: Session) -> dict[str, Any]:
        """Send ``elicitation/create`` on the call's stream and wait for the client's answer."""
        request_id = next(self.server_ids)
        event = session.answered.setdefault(request_id, trio.Event())
        await call.exchange.start_stream()
        await call.exchange.write(sse_event(elicit_message(request_id)))
        await event.wait()
        return session.answers[request_id]


def route_mismatch(call: Call) -> str | None:
    """What is wrong with the Mcp-Param-* headers of a call of `route`, as a SEP-2243 server checks."""
    args = call.params.get("arguments") or {}
    for argument, header in ROUTE_HEADERS.items():
        value, got = args.get(argument), call.request.header(header)
        if value is None:
            if got is not None:
                return f"{header} sent for an absent or null argument"
            continue
        want = ("true" if value else "false") if isinstance(value, bool) else str(value)
        if got is None or decode_header_value(got) != want:
            return f"{header} is {got!r}, the argument {want!r}"
    return None


def elicit_message(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }


def describe(answer: dict[str, Any]) -> str:
    result = answer.get("result") or {}
    return (
        f"hello {(result.get('content') or {}).get('name')}"
        if result.get("action") == "accept"
        else "declined"
    )


# ------------------------------------------------------------------ scenarios


async def _result_stream(call: Call, body: bytes) -> None:
    """Answer on an event stream whose bytes are ``body`` (the result is appended by the caller)."""
    await call.exchange.start_stream(headers=call.session_headers())
    await call.exchange.write(body)
    await call.exchange.end()


def _answer_event(call: Call, text: str = "fault ok") -> bytes:
    return dumps(call.result_message(text_result(text)))


async def s_crlf_bom_comments(call: Call) -> None:
    """A stream with a BOM, CRLF line ends, comments, a priming event, a ``retry``, a
    foreign event type, ``data:`` without a space and the answer split over three lines."""
    answer = json.dumps(call.result_message(text_result("fault ok")), indent=1).encode().split(b"\n")
    head = b"\xef\xbb\xbf: hello\r\nid: p-0\r\ndata: \r\nretry: 1000\r\n\r\n: ping\r\n\r\n"
    other = b"event: other\r\ndata: not json\r\n\r\n"
    body = b"event: message\r\n" + b"".join(b"data:" + line + b"\r\n" for line in answer) + b"\r\n"
    await _result_stream(call, head + other + body)


async def s_cr_only(call: Call) -> None:
    """CR-only line ends, keep-alive comments after an id, a negative ``retry`` and an
    id with NUL (both ignored)."""
    body = (
        b"id: 1\rdata: \r\r: keepalive\r\r\r: keepalive\r\rretry: -5\rid: a\x00b\r\rdata: "
        + _answer_event(call)
        + b"\r\r"
    )
    await _result_stream(call, body)


async def s_huge_event(call: Call) -> None:
    """One event of 32 MiB: over any sane cap."""
    await call.exchange.start_stream()
    await call.exchange.write(
        b'event: message\ndata: {"jsonrpc":"2.0","id":' + dumps(call.id) + b',"result":"'
    )
    chunk = b"x" * (1024 * 1024)
    for _ in range(32):
        await call.exchange.write(chunk)
    await call.exchange.write(b'"}\n\n')
    await call.exchange.end()


async def s_huge_json(call: Call) -> None:
    """A JSON answer of 32 MiB."""
    body = dumps(call.result_message(text_result("x" * (32 * 1024 * 1024))))
    await call.exchange.respond(200, body, "application/json")


async def s_drip(call: Call) -> None:
    """An event stream that sends one byte every 50 ms and never ends an event."""
    await call.exchange.start_stream()
    await call.exchange.write(b"data: ")
    while True:
        await trio.sleep(0.05)
        await call.exchange.write(b"x")


async def s_silence(call: Call) -> None:
    """Headers of an event stream, then nothing, ever."""
    await call.exchange.start_stream()
    await trio.sleep_forever()


async def s_silence_json(call: Call) -> None:
    """Nothing at all: no status line, ever (a hung handler)."""
    await trio.sleep_forever()


async def s_truncated_chunk(call: Call) -> None:
    """A chunked event stream cut in the middle of a chunk."""
    event = sse_event(call.result_message(text_result("fault ok")))
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    await call.exchange.raw(head + f"{len(event):x}\r\n".encode() + event[: len(event) // 2])


async def s_truncated_json(call: Call) -> None:
    """A JSON answer shorter than its Content-Length."""
    body = _answer_event(call)
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    await call.exchange.raw(head.encode() + body[: len(body) // 2])


async def s_rst(call: Call) -> None:
    """Headers and half an event, then a TCP reset."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    await call.exchange.raw(head + b'8\r\ndata: {"')
    call.exchange.rst = True


async def s_rst_before_response(call: Call) -> None:
    """The request is read, then the connection is reset without a byte of answer."""
    call.exchange.keep = False
    call.exchange.rst = True


async def s_eof_before_response(call: Call) -> None:
    """An event stream that ends cleanly with a notification but no answer."""
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "bye"}}
    await _result_stream(call, sse_event(note))


async def s_cut_mid_event(call: Call) -> None:
    """An event stream that ends cleanly in the middle of the answer's event."""
    await _result_stream(call, b"event: message\ndata: " + _answer_event(call)[:10])


async def s_html_200(call: Call) -> None:
    """A proxy's login page: 200 text/html."""
    await call.exchange.respond(200, b"<html><body>Please sign in</body></html>", "text/html; charset=utf-8")


async def s_text_plain(call: Call) -> None:
    """The JSON answer, labelled text/plain."""
    await call.exchange.respond(200, _answer_event(call), "text/plain")


async def s_no_content_type(call: Call) -> None:
    """The JSON answer with no Content-Type at all."""
    await call.exchange.respond(200, _answer_event(call))


async def s_json_charset(call: Call) -> None:
    """The JSON answer as ``Application/JSON; charset=utf-8`` (valid)."""
    await call.exchange.respond(200, _answer_event(call), "Application/JSON; charset=utf-8")


async def s_sse_charset(call: Call) -> None:
    """An event stream as ``Text/Event-Stream; charset=utf-8`` (valid)."""
    await call.exchange.start_stream(content_type="Text/Event-Stream; charset=utf-8")
    await call.exchange.write(sse_event(data=_answer_event(call)))
    await call.exchange.end()


async def s_empty_200(call: Call) -> None:
    """200 application/json with an empty body."""
    await call.exchange.respond(200, b"", "application/json")


async def s_not_jsonrpc(call: Call) -> None:
    """200 application/json with JSON that is no JSON-RPC message."""
    await call.exchange.respond(200, b'{"status":"ok"}', "application/json")


async def s_bad_json_event(call: Call) -> None:
    """An event whose data is not JSON."""
    await _result_stream(call, b"event: message\ndata: {not json\n\n")


async def s_invalid_utf8(call: Call) -> None:
    """An event whose data is not UTF-8."""
    await _result_stream(
        call, b'event: message\ndata: {"jsonrpc":"2.0","id":' + dumps(call.id) + b',"result":"\xff"}\n\n'
    )


async def s_status_202(call: Call) -> None:
    """202 Accepted to a request: no answer will follow."""
    await call.exchange.respond(202)


async def s_status_202_get_open(call: Call) -> None:
    """Legacy: 202 to a request once the session's GET stream is open (where an old
    server would send the answer; this one never does)."""
    if call.session is not None:
        with trio.move_on_after(10):
            await call.session.get_open.wait()
    await call.exchange.respond(202)


async def s_json_other_id(call: Call) -> None:
    """A JSON answer under an id the client never sent (only one request per POST)."""
    message = call.result_message(text_result("fault ok"))
    message["id"] = "not-the-id-you-sent"
    await call.exchange.json(200, message)


def _status(status: int, body: bytes) -> Callable[[Call], Awaitable[None]]:
    async def answer(call: Call) -> None:
        await call.exchange.respond(status, body, "text/plain")

    answer.__doc__ = f"{status} with a text body: {body.decode()}"
    return answer


async def s_status_204(call: Call) -> None:
    """204 No Content to a request."""
    await call.exchange.respond(204)


def _redirect(status: int, location: str | None = None) -> Callable[[Call], Awaitable[None]]:
    async def redirect(call: Call) -> None:
        target = location
        if target is None:
            target = (
                "/mcp2"
                if call.request.path.startswith("/mcp") and not call.request.path.startswith("/mcp2")
                else "/mcp"
            )
        if call.request.path.startswith("/mcp2") and location is None:
            # The redirected request: answer it.
            await (call.server.modern(call) if call.era == "modern" else call.server.legacy(call))
            return
        await call.exchange.respond(status, b"", "text/plain", [("location", target)])

    redirect.__doc__ = f"{status} to {location or '/mcp2'} (then answered there)"
    return redirect


async def s_redirect_loop(call: Call) -> None:
    """307 to itself, forever."""
    await call.exchange.respond(307, b"", None, [("location", call.request.path)])


def _busy(status: int, retry_after: str | None) -> Callable[[Call], Awaitable[None]]:
    async def busy(call: Call) -> None:
        headers = [] if retry_after is None else [("retry-after", retry_after)]
        await call.exchange.respond(status, b"slow down", "text/plain", headers)

    busy.__doc__ = f"{status} with Retry-After: {retry_after}"
    return busy


RESOURCE_METADATA = "https://auth.example.com/.well-known/oauth-protected-resource/mcp"


async def s_auth_401(call: Call) -> None:
    """401 with a Bearer challenge naming the resource metadata and a scope."""
    challenge = f'Bearer resource_metadata="{RESOURCE_METADATA}", scope="files:read"'
    await call.exchange.respond(
        401, b'{"error":"invalid_token"}', "application/json", [("www-authenticate", challenge)]
    )


#: The token the ``auth-token`` scenario wants.
TOKEN = "good-token"


async def s_auth_token(call: Call) -> None:
    """401 with a challenge unless the request carries ``Authorization: Bearer good-token``."""
    if call.request.header("authorization") == f"Bearer {TOKEN}":
        await s_none(call)
        return
    await s_auth_401(call)


async def s_auth_403_scope(call: Call) -> None:
    """403 with an ``insufficient_scope`` challenge."""
    challenge = f'Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="{RESOURCE_METADATA}"'
    await call.exchange.respond(403, b"", None, [("www-authenticate", challenge)])


async def s_forbidden_origin(call: Call) -> None:
    """403 without a challenge (the Python SDK's Origin check)."""
    await call.exchange.respond(403, b"Invalid Origin header", "text/plain")


async def s_not_found_html(call: Call) -> None:
    """404 with an HTML body (a wrong endpoint)."""
    await call.exchange.respond(404, b"<html><body>Cannot POST /mcp</body></html>", "text/html")


async def s_error_500_json(call: Call) -> None:
    """500 with a JSON-RPC error whose id is null."""
    await call.error(500, -32603, "Internal error: database down", request_id=None)


async def s_error_500_text(call: Call) -> None:
    """500 with a plain text body."""
    await call.exchange.respond(500, b"Internal Server Error", "text/plain")


async def s_error_server_error_id(call: Call) -> None:
    """400 with a JSON-RPC error whose id is ``"server-error"`` (Python SDK v1)."""
    await call.error(400, -32600, "Bad Request: something", request_id="server-error")


async def s_error_200_in_stream(call: Call) -> None:
    """The JSON-RPC error inside an event stream, with status 200."""
    await _result_stream(call, sse_event(rpc_error(call.id, -32603, "failed in stream")))


async def s_session_404(call: Call) -> None:
    """Legacy: the server forgets the session, answering 404 ``Session not found``."""
    if call.session is not None:
        call.server.sessions.pop(call.session.id, None)
    await call.error(404, -32600, "Session not found", request_id=None)


async def s_session_400(call: Call) -> None:
    """Legacy: the server forgets the session, answering like server-everything (400 -32000)."""
    if call.session is not None:
        call.server.sessions.pop(call.session.id, None)
    await call.error(400, -32000, "Bad Request: No valid session ID provided", request_id=None)


async def s_session_404_always(call: Call) -> None:
    """Legacy: from now on every session of this client is unknown (new ones too)."""
    call.server.refused_clients.add(call.request.header("x-test-client") or "")
    await call.error(404, -32600, "Session not found", request_id=None)


async def s_fresh_session_on_error(call: Call) -> None:
    """A 400 JSON-RPC error carrying a freshly minted ``Mcp-Session-Id`` (Python SDKs)."""
    bogus = "minted-on-error-" + uuid.uuid4().hex
    call.server.forgotten.add(bogus)
    await call.exchange.json(400, rpc_error(call.id, -32602, "Invalid params"), [("mcp-session-id", bogus)])


async def s_wrong_id_first(call: Call) -> None:
    """The stream first carries an answer to a request id nobody sent, then the real answer."""
    stray = {"jsonrpc": "2.0", "id": 987654321, "result": {"content": []}}
    await _result_stream(call, sse_event(stray) + sse_event(data=_answer_event(call)))


async def s_two_answers(call: Call) -> None:
    """The stream carries the answer twice (the second differs)."""
    await _result_stream(
        call, sse_event(data=_answer_event(call)) + sse_event(data=_answer_event(call, "second"))
    )


async def s_answer_on_get(call: Call) -> None:
    """Legacy: 202 to the POST, and the answer on the session's GET stream."""
    session = call.session
    if session is None:
        await call.error(400, -32600, "needs a session")
        return
    with trio.move_on_after(10):
        await session.get_open.wait()
    await session.get_send.send(sse_event(data=_answer_event(call)))
    await call.exchange.respond(202)


async def s_server_request_modern(call: Call) -> None:
    """Modern: a server request on the stream (forbidden), then the answer."""
    ping = {"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}
    await _result_stream(call, sse_event(ping) + sse_event(data=_answer_event(call)))


async def s_never_ends(call: Call) -> None:
    """The answer, then keep-alive comments forever: the stream never closes."""
    await call.exchange.start_stream()
    await call.exchange.write(sse_event(data=_answer_event(call)))
    while True:
        await trio.sleep(KEEPALIVE)
        await call.exchange.write(b": keepalive\n\n")


async def s_close_keepalive(call: Call) -> None:
    """The answer, with no ``Connection: close``, then the connection is closed."""
    body = _answer_event(call)
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    await call.exchange.raw(head.encode() + body)


async def _closing_stream(call: Call) -> None:
    """Start an event stream after which the connection is closed, and say so in its head.

    Closing it without saying so is the keep-alive race (the ``close-keepalive`` row):
    the client's next request, its answer to a server request or the GET resuming the
    stream, may go out on the connection while the server closes it, and be lost.
    """
    call.exchange.keep = False
    await call.exchange.start_stream(headers=[("connection", "close")])


async def s_replay_answered(call: Call, renumber: bool = False) -> None:
    """Legacy: a ``retry``, a priming event and ``elicitation/create``, all with ids, then
    the stream ends before the answer. A GET with ``Last-Event-ID`` replays them (the
    request already answered, as server-everything does), then the answer, and stays
    open. The answer says how many times the client answered the request."""
    session = call.session
    if session is None:
        await call.error(400, -32600, "needs a session")
        return
    request_id = next(call.server.server_ids)
    done = session.answered.setdefault(request_id, trio.Event())
    key = f"s{request_id}"
    events = [
        (f"{key}/0", f"retry: 50\nid: {key}/0\ndata: \n\n".encode()),
        (f"{key}/1", sse_event(elicit_message(request_id), event_id=f"{key}/1")),
    ]
    session.streams[key] = events
    if renumber:
        session.renumbered.add(key)
    await _closing_stream(call)
    await call.exchange.write(b"".join(data for _, data in events))
    await call.exchange.end()

    async def finish() -> None:
        with trio.move_on_after(10):
            await done.wait()
        # Time for a second answer, to the replayed request, to arrive and be counted.
        await trio.sleep(0.3)
        count = session.answer_counts.get(json.dumps(request_id), 0)
        text = f"{describe(session.answers.get(request_id, {}))}; answers={count}"
        events.append((f"{key}/2", sse_event(call.result_message(text_result(text)), event_id=f"{key}/2")))

    assert call.server.nursery is not None
    call.server.nursery.start_soon(finish)


async def s_endpoint_event(call: Call) -> None:
    """An ``event: endpoint`` (HTTP+SSE) on a Streamable HTTP stream, then the answer."""
    await _result_stream(
        call, b"event: endpoint\ndata: /message?sessionId=x\n\n" + sse_event(data=_answer_event(call))
    )


async def s_other_call_id(call: Call) -> None:
    """A JSON answer under the id of *another* request of this client in flight (else a stray id)."""
    client = call.request.header("x-test-client") or ""
    mine = json.dumps(call.id)
    others = sorted(key for key in call.server.inflight.get(client, set()) if key != mine)
    other = json.loads(others[0]) if others else 424242
    await call.exchange.json(200, call.result_message(text_result("answer under another id")) | {"id": other})


async def s_extra_response(call: Call) -> None:
    """The answer, and a second (stale) response right behind it on the kept-alive connection."""
    good = dumps(call.result_message(text_result("fault ok")))
    stale = dumps(call.result_message(text_result("stale")))

    def response(body: bytes) -> bytes:
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        return head.encode() + body

    await call.exchange.raw(response(good) + response(stale))
    await trio.sleep(1.0)


async def s_ids_from_one(call: Call) -> None:
    """Modern: every POST's stream numbers its events from 1 (event ids are per stream)."""
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    body = sse_event(note, event_id="1") + sse_event(data=_answer_event(call), event_id="2")
    await _result_stream(call, body)


async def s_session_lost_in_flight(call: Call) -> None:
    """Legacy: once ten fault calls of this client are in flight, the server forgets the
    session and answers each 404, and answers the next initialize a second late; calls of
    the new session are answered normally."""
    session = call.session
    client = call.request.header("x-test-client") or ""
    if session is None or (client, "lost-done") in call.server.once:
        await call.result(text_result("fault ok"))
        return
    waiting = call.server.waiting.setdefault(client, [])
    release = trio.Event()
    waiting.append(release)
    if len(waiting) >= 10:
        call.server.once.add((client, "lost-done"))
        call.server.slow_initialize.add(client)
        call.server.sessions.pop(session.id, None)
        for event in waiting:
            event.set()
    with trio.move_on_after(20):
        await release.wait()
    await call.error(404, -32600, "Session not found", request_id=None)


async def s_session_word_400(call: Call) -> None:
    """A 400 whose JSON-RPC error mentions a session, and is no lost session."""
    await call.error(400, -32602, "Invalid params: session_name is required")


async def s_replay_renumbered(call: Call) -> None:
    """Legacy: like replay-answered, but the replay numbers its events anew."""
    await s_replay_answered(call, renumber=True)


async def s_reject_version_once(call: Call) -> None:
    """Modern: the first request of each client is refused with -32022, listing the very version asked."""
    await call.error(
        400, -32022, "Unsupported protocol version", {"supported": [MODERN], "requested": MODERN}
    )


async def s_redirect_bad_location(call: Call) -> None:
    """A 307 whose Location is no usable URL."""
    await call.exchange.respond(307, headers=[("location", "http://[::1/broken")])


async def s_refuse_initialize(call: Call) -> None:
    """``initialize`` refused with 404 and no body, as an HTTP+SSE server does."""
    await call.exchange.respond(404, b"", "text/plain")


#: HTTP+SSE scenarios whose GET names an endpoint that is not a usable URL.
BAD_ENDPOINTS = {
    "sse-endpoint-bad-port": "http://127.0.0.1:99999/message",
    "sse-endpoint-bad-host": "http://[::1/message",
}


async def s_priming_only(call: Call) -> None:
    """Legacy: the stream carries a priming event (an id and ``retry``, no data) and ends; a
    GET with ``Last-Event-ID`` gets the answer."""
    session = call.session
    if session is None:
        await call.error(400, -32600, "needs a session")
        return
    key = f"p{next(call.server.server_ids)}"
    priming = f"retry: 50\nid: {key}/0\ndata: \n\n".encode()
    answer = sse_event(call.result_message(text_result("fault ok")), event_id=f"{key}/1")
    session.streams[key] = [(f"{key}/0", priming), (f"{key}/1", answer)]
    await _closing_stream(call)
    await call.exchange.write(priming)
    await call.exchange.end()


async def s_drop_reused(call: Call) -> None:
    """The first ``tools/list`` of a client that is not the first request on its connection:
    the connection is closed unread (a server's keep-alive timer that fired just as the
    request came); else no fault."""
    client = call.request.header("x-test-client") or ""
    if (
        call.exchange.index > 0
        and call.method == "tools/list"
        and (client, "dropped") not in call.server.once
    ):
        call.server.once.add((client, "dropped"))
        call.exchange.keep = False
        call.exchange.rst = True
        return
    await s_none(call)


async def s_none(call: Call) -> None:
    """No fault."""
    await (call.server.modern(call) if call.era == "modern" else call.server.legacy(call))


#: Scenarios that hit only the first matching request of each client (named by the
#: ``X-Test-Client`` header), so that a test can see the client recover.
ONCE = frozenset({"session-404", "session-400", "reject-version-once"})

#: Every scenario, by name: what it does is its docstring.
SCENARIOS: dict[str, Callable[[Call], Awaitable[None]]] = {
    "none": s_none,
    # event-stream framing
    "crlf-bom-comments": s_crlf_bom_comments,
    "cr-only": s_cr_only,
    "endpoint-event": s_endpoint_event,
    "huge-event": s_huge_event,
    "huge-json": s_huge_json,
    "invalid-utf8": s_invalid_utf8,
    "bad-json-event": s_bad_json_event,
    # silence and cuts
    "drip": s_drip,
    "silence": s_silence,
    "silence-json": s_silence_json,
    "truncated-chunk": s_truncated_chunk,
    "truncated-json": s_truncated_json,
    "rst": s_rst,
    "rst-before-response": s_rst_before_response,
    "eof-before-response": s_eof_before_response,
    "cut-mid-event": s_cut_mid_event,
    "never-ends": s_never_ends,
    "close-keepalive": s_close_keepalive,
    # statuses and content types
    "html-200": s_html_200,
    "text-plain": s_text_plain,
    "no-content-type": s_no_content_type,
    "json-charset": s_json_charset,
    "sse-charset": s_sse_charset,
    "empty-200": s_empty_200,
    "not-jsonrpc": s_not_jsonrpc,
    "status-202": s_status_202,
    "status-204": s_status_204,
    "status-202-get-open": s_status_202_get_open,
    "json-other-id": s_json_other_id,
    "bad-request-400": _status(400, b"Bad Request"),
    "method-not-allowed-405": _status(405, b"Method Not Allowed"),
    "not-acceptable-406": _status(406, b"Not Acceptable"),
    "unsupported-type-415": _status(415, b"Unsupported Media Type"),
    "misdirected-421": _status(421, b"Invalid Host header"),
    "too-large-413": _status(413, b"Payload Too Large"),
    "headers-too-large-431": _status(431, b"Request Header Fields Too Large"),
    "bad-gateway-502": _status(502, b"Bad Gateway"),
    "gateway-timeout-504": _status(504, b"Gateway Timeout"),
    "redirect-307": _redirect(307),
    "redirect-308": _redirect(308),
    "redirect-302": _redirect(302),
    "redirect-301": _redirect(301),
    "redirect-cross-origin": _redirect(307, "http://other.invalid:1/mcp"),
    "redirect-loop": s_redirect_loop,
    "busy-503": _busy(503, "2"),
    "busy-429-date": _busy(429, formatdate(2_000_000_000, usegmt=True)),
    "busy-503-bare": _busy(503, None),
    "auth-401": s_auth_401,
    "auth-403-scope": s_auth_403_scope,
    "auth-token": s_auth_token,
    "forbidden-origin": s_forbidden_origin,
    "not-found-html": s_not_found_html,
    "error-500-json": s_error_500_json,
    "error-500-text": s_error_500_text,
    "error-server-error-id": s_error_server_error_id,
    "error-200-in-stream": s_error_200_in_stream,
    # sessions (initialize era)
    "session-404": s_session_404,
    "session-400": s_session_400,
    "session-404-always": s_session_404_always,
    "fresh-session-on-error": s_fresh_session_on_error,
    "get-405": s_none,  # the GET stream gets 405 (see State.get); requests are normal
    # streams carrying the wrong things
    "wrong-id-first": s_wrong_id_first,
    "two-answers": s_two_answers,
    "answer-on-get": s_answer_on_get,
    "server-request-modern": s_server_request_modern,
    "replay-answered": s_replay_answered,
    # the defects of a first version of the client
    "other-call-id": s_other_call_id,
    "extra-response": s_extra_response,
    "ids-from-one": s_ids_from_one,
    "session-lost-in-flight": s_session_lost_in_flight,
    "session-word-400": s_session_word_400,
    "replay-renumbered": s_replay_renumbered,
    "reject-version-once": s_reject_version_once,
    "reject-version-always": s_reject_version_once,  # every modern request, not only the first
    "redirect-bad-location": s_redirect_bad_location,
    "slow-get": s_none,  # the GET stream's head comes late (see State.get)
    "initialized-hangs": s_none,  # notifications/initialized is never answered
    "get-many-events": s_none,  # each GET stream carries 5000 events, then ends
    "priming-only": s_priming_only,
    "drop-reused": s_drop_reused,
    "sse-endpoint-bad-port": s_refuse_initialize,
    "sse-endpoint-bad-host": s_refuse_initialize,
}


# ------------------------------------------------------------------ running


@dataclass
class Running:
    """A server serving in the current Trio run."""

    state: State
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@asynccontextmanager
async def running(era: str = "dual", scenario: str = "none", target: str = "fault") -> AsyncIterator[Running]:
    """Serve on a free loopback port for the duration of the ``async with``."""
    state = State(era, scenario, target)
    async with trio.open_nursery() as nursery:
        state.nursery = nursery
        listeners = await nursery.start(partial(trio.serve_tcp, state.serve_stream, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        try:
            yield Running(state, port)
        finally:
            nursery.cancel_scope.cancel()


async def _main(era: str, scenario: str, target: str, port: int) -> None:
    state = State(era, scenario, target)
    async with trio.open_nursery() as nursery:
        state.nursery = nursery
        listeners = await nursery.start(partial(trio.serve_tcp, state.serve_stream, port, host="127.0.0.1"))
        print(f"LISTENING {listeners[0].socket.getsockname()[1]}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--era", choices=["modern", "legacy", "dual"], default="dual")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="none")
    parser.add_argument("--target", choices=["fault", "all"], default="fault")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        trio.run(_main, args.era, args.scenario, args.target, args.port)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
