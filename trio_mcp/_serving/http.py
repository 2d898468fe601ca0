"""A Streamable HTTP front for the package's server core, without sockets.

`HTTPFront` serves MCP over Streamable HTTP with the same server core
(`~trio_mcp._serving.server.Server`) and apps that serve a pipe: each MCP
connection is a `Server` fed with the bodies of the POSTs, and each line it
writes goes to the HTTP exchange it belongs to. The front speaks in whole
requests and responses (`HTTPRequest`, `HTTPResponse`), so that one front
serves a socket (`trio_mcp._serving.http_socket`, with h11) and an in-memory
transport (the HTTP fake of `trio_mcp.testing`) alike.

Both eras:

* **2026-07-28** (stateless): a POST without ``Mcp-Session-Id`` goes to one
  connection that serves every such request, from any number of clients
  whose ids overlap (a request whose id is in flight already is known to
  the core by an alias, and its answer carries its own id again); its ``MCP-Protocol-Version``,
  ``Mcp-Method`` and ``Mcp-Name`` headers must agree with the body (else
  400 with ``-32020``). A client that closes its exchange before the answer
  cancels the request (the core is told ``notifications/cancelled``).
  JSON-RPC errors come with the status the era gives them (400 for
  ``-32700``, ``-32600``, ``-32602``, ``-32020``..``-32022``, 404 for
  ``-32601``).
* **The initialize era**: a POST of ``initialize`` starts a connection of its
  own; a successful answer names it with ``Mcp-Session-Id``. Later requests
  carry that id (an unknown one gets 404), the client's answers to the
  server's requests and its notifications get 202, GET opens the standalone
  stream (one per session, 409 for a second), DELETE ends the session.
  Closing an exchange is not a cancellation in this era.

Each request is answered with JSON when its answer comes first, else with an
event stream: what the server sends while serving it (progress, log
messages, its own requests), then the answer. A line belongs to the request
whose handler sent it (a context variable set in the handler's task, or
`related_to`), else to the request named by a progress token or a
subscription id, else to the session's GET stream; a line that belongs
nowhere is dropped, as a real server drops it.

Left out on purpose: event ids and resumption (``Last-Event-ID``), batches,
``Origin`` and ``Host`` checks (a front on loopback, for examples and tests),
and keep-alive comments.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections import deque
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import trio

from .._core.codec import UnreadableJSON, decode, encode
from .._core.eras import (
    HEADER_MISMATCH,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from .._core.http_wire import media_type, modern_headers, modern_version
from .._core.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, SUBSCRIPTION_ID, request_key
from .server import Admission, App, Request, Server

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from .._errors import RpcError

__all__ = [
    "Connect",
    "FrontGone",
    "HTTPFront",
    "HTTPRequest",
    "HTTPResponse",
    "check_modern_headers",
    "related_to",
]

JSON: TypeAlias = Any
Key: TypeAlias = "tuple[bool, int | str]"

Connect: TypeAlias = "Callable[[Callable[..., Server], trio.abc.Stream], Awaitable[None]]"
"""Serves one MCP connection: builds its `Server` with the maker it is given
(which takes `Server`'s arguments) and serves it over the stream it is given,
until the input ends or the server stops."""

#: The longest request body read.
MAX_BODY: Final = 16 * 1024 * 1024

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
#: Errors the 2026-07-28 era answers with 400 (and ``-32601`` with 404).
_BAD_REQUEST_CODES: Final = frozenset(
    {
        PARSE_ERROR,
        INVALID_REQUEST,
        INVALID_PARAMS,
        HEADER_MISMATCH,
        MISSING_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    }
)

_RELATED: ContextVar[Key | None] = ContextVar("trio_mcp_related_request", default=None)


@contextmanager
def related_to(request: Request) -> Iterator[None]:
    """Within this block, what the server sends belongs to ``request``'s exchange.

    The tasks of the core's handlers are related to their request already;
    this is for code that sends for a request from another task.
    """
    token = _RELATED.set(request.key)
    try:
        yield
    finally:
        _RELATED.reset(token)


class FrontGone(Exception):
    """The MCP connection of an exchange ended before answering it (the server "died")."""


# ------------------------------------------------------------ requests


class HTTPRequest:
    """One HTTP request, whole.

    Attributes:
        method: ``GET``, ``POST``, ... (upper case).
        path: The target's path, without the query.
        headers: The header fields, names in lower case, in order.
        body: The body.
    """

    __slots__ = ("body", "headers", "method", "path")

    def __init__(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        self.method = method.upper()
        self.path = path
        self.headers = [(name.lower(), value) for name, value in headers]
        self.body = body

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (`None` when absent; values of a repeated one joined with ``,``)."""
        values = [value for key, value in self.headers if key == name]
        return ", ".join(values) if values else None

    def count(self, name: str) -> int:
        """How many times header ``name`` is given."""
        return sum(1 for key, _ in self.headers if key == name)


class HTTPResponse:
    """One HTTP response: a whole body, or an event stream read with `receive`.

    Attributes:
        status: The status code.
        headers: The header fields (names in lower case).
        body: The whole body (empty for an event stream).
    """

    __slots__ = ("_events", "body", "headers", "status")

    def __init__(
        self,
        status: int,
        headers: list[tuple[str, str]] | None = None,
        body: bytes = b"",
        events: _Exchange | None = None,
    ) -> None:
        self.status = status
        self.headers = headers if headers is not None else []
        self.body = body
        self._events = events

    @property
    def streaming(self) -> bool:
        """Whether the body is an event stream, read with `receive`."""
        return self._events is not None

    async def receive(self) -> bytes | None:
        """The next piece of an event stream (one event), or `None` at its end.

        Raises:
            FrontGone: The connection ended before the stream did: the
                stream is cut, as by a server that died.
        """
        if self._events is None:
            await trio.lowlevel.checkpoint()
            return None
        return await self._events.receive()

    def close(self) -> None:
        """The client is gone: stop the stream (for a 2026-07-28 request not answered yet, cancel it)."""
        if self._events is not None:
            self._events.close()


def _json(status: int, message: JSON, headers: list[tuple[str, str]] | None = None) -> HTTPResponse:
    body = message if isinstance(message, bytes) else encode(message)
    return HTTPResponse(status, [("content-type", "application/json"), *(headers or [])], body)


def _error(status: int, code: int, text: str, request_id: JSON = None) -> HTTPResponse:
    return _json(status, {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})


def _plain(status: int, text: str, headers: list[tuple[str, str]] | None = None) -> HTTPResponse:
    return HTTPResponse(status, [("content-type", "text/plain"), *(headers or [])], text.encode() + b"\n")


def _event(data: bytes) -> bytes:
    return b"event: message\ndata: " + data + b"\n\n"


def _decoded_header(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return value
    return value


def check_modern_headers(request: HTTPRequest, message: dict[str, JSON]) -> str | None:
    """Why the 2026-07-28-era headers of ``request`` disagree with its body ``message`` (`None`: they agree).

    ``MCP-Protocol-Version`` must be the body's ``_meta`` version,
    ``Mcp-Method`` its method, ``Mcp-Name`` the name or URI of a
    ``tools/call``, ``prompts/get`` or ``resources/read``; each given once.
    A name may come in the ``=?base64?...?=`` form.
    """
    version = modern_version(message)
    if version is None:
        return None
    wanted = modern_headers(message, version)
    for name in ("mcp-protocol-version", "mcp-method", "mcp-name"):
        count = request.count(name)
        if count > 1:
            return f"the header {name} is given {count} times"
        got = request.header(name)
        want = wanted.get(name)
        if want is None:
            continue
        if got is None:
            return f"the header {name} is missing"
        if _decoded_header(got) != _decoded_header(want):
            return f"the header {name} ({got!r}) does not match the body ({want!r})"
    return None


# ----------------------------------------------------------- exchanges


class _Exchange:
    """Where the lines of one request go (or of a GET stream), until the client or the connection leaves."""

    __slots__ = ("_lot", "_queue", "answered", "closed", "cut", "ended", "key", "link", "original", "token")

    def __init__(self, link: _Link, key: Key | None, token: Key | None = None) -> None:
        self.link = link
        self.key = key
        self.token = token
        # The client's own id, when the core knows the request by an alias.
        self.original: int | str | None = None
        self._queue: deque[bytes] = deque()
        self._lot = trio.lowlevel.ParkingLot()
        self.answered = False
        self.ended = False
        self.cut = False
        self.closed = False

    def push(self, data: bytes, *, last: bool = False) -> None:
        if self.ended:
            return
        if self.original is not None and self.key is not None:
            data = _restored(data, self.key[1], self.original)
        self._queue.append(data)
        if last:
            self.answered = self.ended = True
        self._lot.unpark_all()

    def sever(self) -> None:
        """The connection is gone: what is queued is still read, then the stream is cut."""
        if not self.ended:
            self.cut = self.ended = True
            self._lot.unpark_all()

    async def first(self) -> bytes:
        """The first line, left in the queue."""
        while not self._queue:
            if self.ended:
                raise FrontGone("the server's connection ended before answering")
            await self._lot.park()
        await trio.lowlevel.checkpoint()
        return self._queue[0]

    async def receive(self) -> bytes | None:
        while not self._queue:
            if self.cut:
                raise FrontGone("the server's connection ended before the stream did")
            if self.ended or self.closed:
                await trio.lowlevel.checkpoint()
                return None
            await self._lot.park()
        await trio.lowlevel.checkpoint()
        return _event(self._queue.popleft())

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._lot.unpark_all()
        self.link.left(self)


def _restored(data: bytes, alias: int | str, original: int | str) -> bytes:
    """A line of the core about the request it knows as ``alias``, with the client's own id back."""
    try:
        message = decode(data)
    except UnreadableJSON:
        return data
    if not isinstance(message, dict):
        return data
    changed = False
    if "method" not in message and message.get("id") == alias:
        message["id"] = original
        changed = True
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get(SUBSCRIPTION_ID) == alias:
        meta[SUBSCRIPTION_ID] = original
        changed = True
    return encode(message) if changed else data


# ---------------------------------------------------------- connections


class _Inbox(trio.abc.Stream):
    """The input of one connection: the bodies the client POSTs, one line each."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._closed = False
        self._lot = trio.lowlevel.ParkingLot()

    def feed(self, line: bytes) -> None:
        if not self._closed:
            self._data += line.rstrip(b"\r\n") + b"\n"
            self._lot.unpark_all()

    def end(self) -> None:
        self._closed = True
        self._lot.unpark_all()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        while not self._data and not self._closed:
            await self._lot.park()
        await trio.lowlevel.checkpoint()
        data = bytes(self._data)
        self._data.clear()
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        # The routed server writes no lines: each goes to its exchange.
        raise trio.BrokenResourceError("a front's connection writes through its exchanges")

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self.end()
        await trio.lowlevel.checkpoint()


class _RelatingApp:
    """An app whose handlers' tasks know the request they serve (the lines they send belong to it)."""

    def __init__(self, app: App) -> None:
        self.app = app

    def admit(self, request: Request) -> Admission:
        admitted = self.app.admit(request)
        if admitted is None or isinstance(admitted, dict):
            return admitted
        handler = admitted

        async def related() -> dict[str, JSON] | None:
            _RELATED.set(request.key)
            return await handler()

        return related

    def notification(self, message: dict[str, JSON]) -> None:
        self.app.notification(message)

    def cancelled(self, request: Request) -> None:
        self.app.cancelled(request)

    def failed(self, request: Request, error: Exception) -> RpcError:
        return self.app.failed(request, error)

    def input_ended(self) -> None:
        self.app.input_ended()


class _RoutedServer(Server):
    """The server core of one front connection: each line goes to the exchange it belongs to."""

    def __init__(self, link: _Link, app: App, **options: Any) -> None:
        super().__init__(_RelatingApp(app), **options)
        self._link = link

    def send_nowait(self, line: bytes) -> None:
        if not self.alive:
            raise trio.BrokenResourceError("the server has stopped")
        for data in line.split(b"\n"):
            if data.strip():
                self._link.route(data, _RELATED.get())


class _Link:
    """One MCP connection behind the front: its server core, its exchanges, its session."""

    def __init__(self, front: HTTPFront, session_id: str | None) -> None:
        self.front = front
        self.session_id = session_id
        self.version: str | None = None
        self.inbox = _Inbox()
        self.exchanges: dict[Key, _Exchange] = {}
        self.tokens: dict[Key, _Exchange] = {}
        self.stream: _Exchange | None = None
        self.gone = False
        self._aliases = 0

    @property
    def stateless(self) -> bool:
        return self.session_id is None

    def make_server(self, app: App, **options: Any) -> Server:
        return _RoutedServer(self, app, **options)

    async def run(self, connect: Connect) -> None:
        try:
            await connect(self.make_server, self.inbox)
        except Exception as exc:
            self.front.log(f"a connection failed: {exc!r}")
        finally:
            self.end()

    def end(self) -> None:
        """The connection is over: every exchange still open is cut."""
        if self.gone:
            return
        self.gone = True
        self.inbox.end()
        for exchange in [*self.exchanges.values(), *([self.stream] if self.stream else [])]:
            exchange.sever()
        self.exchanges.clear()
        self.tokens.clear()
        self.stream = None
        self.front.forget(self)

    # ------------------------------------------------------------ routing

    def open(self, message: dict[str, JSON]) -> _Exchange:
        key = request_key(message["id"])
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        token_key = (
            request_key(token) if isinstance(token, int | str) and not isinstance(token, bool) else None
        )
        exchange = _Exchange(self, key, token_key)
        self.exchanges[key] = exchange
        if token_key is not None and token_key not in self.tokens:
            self.tokens[token_key] = exchange
        return exchange

    def alias(self) -> str:
        """An id that no request in flight has, for a request whose own id another client uses."""
        while True:
            self._aliases += 1
            alias = f"front-{self._aliases}"
            if request_key(alias) not in self.exchanges:
                return alias

    def left(self, exchange: _Exchange) -> None:
        """The client left ``exchange`` (closed its stream, or gave up waiting)."""
        if exchange is self.stream:
            self.stream = None
            return
        if exchange.key is None or self.exchanges.get(exchange.key) is not exchange:
            return
        self._forget(exchange)
        if self.stateless and not exchange.answered and not self.gone:
            # 2026-07-28: a disconnect is the cancellation.
            request_id = exchange.key[1]
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id},
            }
            self.inbox.feed(encode(cancel))

    def _forget(self, exchange: _Exchange) -> None:
        if exchange.key is not None and self.exchanges.get(exchange.key) is exchange:
            del self.exchanges[exchange.key]
        if exchange.token is not None and self.tokens.get(exchange.token) is exchange:
            del self.tokens[exchange.token]

    def route(self, data: bytes, related: Key | None) -> None:
        """Send one line of the server to the exchange it belongs to."""
        try:
            message = decode(data)
        except UnreadableJSON:
            message = None
        if (
            isinstance(message, dict)
            and "method" not in message
            and ("result" in message or "error" in message)
        ):
            request_id = message.get("id")
            exchange = None
            if isinstance(request_id, int | str) and not isinstance(request_id, bool):
                exchange = self.exchanges.get(request_key(request_id))
            if exchange is None:
                self.front.log(f"dropped the answer to {request_id!r}: nobody waits for it")
                return
            self._forget(exchange)
            exchange.push(data, last=True)
            return
        exchange = self.exchanges.get(related) if related is not None else None
        if exchange is None and isinstance(message, dict):
            params = message.get("params")
            if isinstance(params, dict):
                token = params.get("progressToken")
                if isinstance(token, int | str) and not isinstance(token, bool):
                    exchange = self.tokens.get(request_key(token))
                meta = params.get("_meta")
                subscription = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
                if exchange is None and isinstance(subscription, int | str):
                    exchange = self.exchanges.get(request_key(subscription))
        if exchange is None:
            exchange = self.stream
        if exchange is None:
            self.front.log("dropped a message that belongs to no open stream")
            return
        exchange.push(data)


# ----------------------------------------------------------------- front


class HTTPFront:
    """MCP over Streamable HTTP, for the server core: one `Connect` per connection.

    Run it (`run`, in a nursery) and hand it each request (`handle`).

    Args:
        connect: Serves one MCP connection (see `Connect`); called for the
            2026-07-28 era's connection and for each ``initialize``.
        path: The endpoint's path; other paths get 404.
        log: Called with diagnostics.
    """

    def __init__(
        self,
        connect: Connect,
        *,
        path: str = "/mcp",
        log: Callable[[str], object] | None = None,
    ) -> None:
        self._connect = connect
        self.path = path
        self.log: Callable[[str], object] = log if log is not None else _quiet
        self._nursery: trio.Nursery | None = None
        self._stateless: _Link | None = None
        self._sessions: dict[str, _Link] = {}

    @property
    def sessions(self) -> list[str]:
        """The initialize-era sessions open now."""
        return list(self._sessions)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve connections until cancelled; every exchange still open is then cut."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                await trio.sleep_forever()
        finally:
            self._nursery = None
            self.end_all()

    def end_all(self) -> None:
        """End every connection now: exchanges are cut, sessions forgotten."""
        for link in [*self._sessions.values(), *([self._stateless] if self._stateless else [])]:
            link.end()

    def forget(self, link: _Link) -> None:
        if self._stateless is link:
            self._stateless = None
        if link.session_id is not None and self._sessions.get(link.session_id) is link:
            del self._sessions[link.session_id]

    def _start(self, session_id: str | None) -> _Link:
        if self._nursery is None:
            raise RuntimeError("the HTTP front is not running")
        link = _Link(self, session_id)
        self._nursery.start_soon(link.run, self._connect, name=f"mcp-connection:{session_id or 'stateless'}")
        return link

    # ------------------------------------------------------------ requests

    async def handle(self, request: HTTPRequest) -> HTTPResponse:
        """Answer ``request``. Cancelled while it waits, the exchange is left as by a client that hung up.

        Raises:
            FrontGone: The connection ended before answering.
        """
        await trio.lowlevel.checkpoint()
        if request.path != self.path:
            return _plain(404, f"not found (the MCP endpoint is {self.path})")
        if request.method == "POST":
            return await self._post(request)
        if request.method == "GET":
            return self._get(request)
        if request.method == "DELETE":
            return self._delete(request)
        return _plain(405, "method not allowed", [("allow", "GET, POST, DELETE")])

    def _session(self, request: HTTPRequest) -> tuple[_Link | None, HTTPResponse | None]:
        session_id = request.header("mcp-session-id")
        if session_id is None:
            return None, _error(400, INVALID_REQUEST, "Bad Request: Missing session ID")
        link = self._sessions.get(session_id)
        if link is None:
            return None, _error(404, INVALID_REQUEST, "Session not found")
        version = request.header("mcp-protocol-version")
        if version is not None and link.version is not None and version != link.version:
            return None, _error(
                400, INVALID_REQUEST, f"Bad Request: this session speaks {link.version}, not {version}"
            )
        return link, None

    async def _post(self, request: HTTPRequest) -> HTTPResponse:
        if media_type(request.header("content-type")) != "application/json":
            return _plain(415, "Unsupported Media Type: the body must be application/json")
        accept = (request.header("accept") or "*/*").lower()
        if "*/*" not in accept and not ("application/json" in accept and "text/event-stream" in accept):
            return _plain(406, "Not Acceptable: accept application/json and text/event-stream")
        try:
            message = decode(request.body)
        except UnreadableJSON as exc:
            return _error(400, PARSE_ERROR, f"Parse error: {exc}")
        if not isinstance(message, dict):
            return _error(400, INVALID_REQUEST, "Invalid Request: one JSON-RPC message per POST")
        method = message.get("method")
        request_id = message.get("id")
        is_request = isinstance(method, str) and "id" in message
        if is_request and (not isinstance(request_id, int | str) or isinstance(request_id, bool)):
            return _error(400, INVALID_REQUEST, "Invalid Request: bad id")
        line = encode(message)
        if request.header("mcp-session-id") is None:
            if is_request and method == "initialize":
                return await self._initialize(message, line)
            if not isinstance(method, str):
                return _error(400, INVALID_REQUEST, "Invalid Request: a response without a session")
            problem = check_modern_headers(request, message) if is_request else None
            if problem is not None:
                return _error(400, HEADER_MISMATCH, f"Header mismatch: {problem}", request_id)
            link = self._stateless
            if link is None or link.gone:
                link = self._stateless = self._start(None)
        else:
            found, refusal = self._session(request)
            if refusal is not None:
                return refusal
            assert found is not None
            link = found
        if not is_request:
            link.inbox.feed(line)
            return HTTPResponse(202)
        return await self._exchange(link, message, line, [])

    async def _initialize(self, message: dict[str, JSON], line: bytes) -> HTTPResponse:
        session_id = secrets.token_hex(16)
        link = self._start(session_id)
        self._sessions[session_id] = link
        response = await self._exchange(link, message, line, [("mcp-session-id", session_id)])
        if response.streaming:
            return response  # the answer comes in the stream: the session stands
        answer = decode(response.body)
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict):
            link.inbox.end()  # no session: the connection ends
            self.forget(link)
            response.headers = [(name, value) for name, value in response.headers if name != "mcp-session-id"]
            return response
        version = result.get("protocolVersion")
        link.version = version if isinstance(version, str) else None
        return response

    async def _exchange(
        self, link: _Link, message: dict[str, JSON], line: bytes, headers: list[tuple[str, str]]
    ) -> HTTPResponse:
        key = request_key(message["id"])
        original: int | str | None = None
        if key in link.exchanges:
            if not link.stateless:
                # A session's ids are its one client's: a repeat is that client's mistake.
                return _error(
                    400, INVALID_REQUEST, "Invalid Request: a request with this id is in progress", key[1]
                )
            # 2026-07-28: every client without a session shares one connection,
            # and each numbers its requests from 1. Ids belong to one client's
            # exchange: the core knows this request by an alias, and what it
            # sends about it carries the client's own id again.
            original = message["id"]
            message = {**message, "id": link.alias()}
            line = encode(message)
        exchange = link.open(message)
        exchange.original = original
        link.inbox.feed(line)
        streaming = False
        try:
            first = await exchange.first()
            if not exchange.answered or len(exchange._queue) > 1:
                streaming = True
                return HTTPResponse(200, [("content-type", "text/event-stream"), *headers], events=exchange)
            exchange._queue.clear()
        finally:
            if not streaming:
                exchange.close()
        status = 200
        if link.stateless:
            try:
                answer = decode(first)
            except UnreadableJSON:
                answer = None
            error = answer.get("error") if isinstance(answer, dict) else None
            code = error.get("code") if isinstance(error, dict) else None
            if code in _BAD_REQUEST_CODES:
                status = 400
            elif code == METHOD_NOT_FOUND:
                status = 404
        return _json(status, first + b"\n", headers)

    def _get(self, request: HTTPRequest) -> HTTPResponse:
        accept = (request.header("accept") or "").lower()
        if "text/event-stream" not in accept and "*/*" not in accept:
            return _plain(406, "Not Acceptable: accept text/event-stream")
        link, refusal = self._session(request)
        if refusal is not None:
            return refusal
        assert link is not None
        if link.stream is not None:
            return _error(409, INVALID_REQUEST, "Conflict: this session's stream is open already")
        link.stream = _Exchange(link, None)
        return HTTPResponse(200, [("content-type", "text/event-stream")], events=link.stream)

    def _delete(self, request: HTTPRequest) -> HTTPResponse:
        link, refusal = self._session(request)
        if refusal is not None:
            return refusal
        assert link is not None
        # The input ends: requests in flight get the core's grace, then the connection ends.
        self.forget(link)
        link.inbox.end()
        return HTTPResponse(200)


def _quiet(text: str) -> None:
    pass
