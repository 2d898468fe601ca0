"""The httpx2 client the HTTP channel makes for itself, and the connection pool under it.

Every request of the HTTP channel is one exchange on a connection of its own
(HTTP/1.1: one exchange at a time per connection), so with many calls in
flight the client holds as many connections. `LeanTransport` keeps what a
client of one MCP server needs: per origin, a stack of idle connections. A
request takes the most recently used idle connection that is still good (not
expired, not closed by the server), or opens a new one; it owns that
connection alone until its response is closed, which hands the connection
back if it can carry another exchange (and closes it otherwise). Taking and
giving back are constant time, and no request ever waits for another's
connection.

Each connection is h11 over a network stream of httpcore2's Trio backend
(connecting, TLS, timeouts), driven here with h11's public API only, so that
one rule httpcore2's pool cannot keep is kept: a connection on which the
server sent bytes past the end of a response (a second, unasked-for
response) is never reused, because h11 would read those bytes as the answer
to the next request (`h11.Connection.trailing_data` says so; httpcore2 does
not show it). The channel's own plain ``POST`` and its whole plain answer
skip h11 altogether (`trio_mcp._transports.http_quick`, the quick exchange);
a whole plain answer to a request h11 wrote is read without it too; h11
reads anything else, told of the request already written.

Measured gain (``benchmarks/http_bench.py --fast-only``: the fast Node
server, raw clients on Trio posting the same bodies and decoding the answers
with orjson, median of 3 repetitions, load average 6-10 on 2 shared cores):
CPU time per call 0.54 ms on this pool against 0.66 ms on httpx2's own pool
one call at a time, and 0.39 ms against 0.83 ms with 64 calls in flight
(httpx 0.29's own pool: 0.85 ms and 1.84 ms).

HTTP/2 would multiplex every call over one connection, but it needs the
``h2`` package, its framing costs more CPU per call than h11 does, and the
servers MCP clients meet on loopback and behind proxies speak HTTP/1.1
(cleartext HTTP/2 needs prior knowledge): it is left out.

httpx2 applies the environment's proxies (``trust_env``) only to a client
without a transport of its own: when the environment sets a proxy, the
client keeps httpx2's own pool, so that proxies apply exactly as httpx2
applies them.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final, Self, TypeAlias
from urllib.request import getproxies

import h11
import httpcore2
import httpx2
import trio

from .http_quick import QuickHead, QuickResponse, read_whole

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncIterator, Callable, Collection, Mapping
    from types import TracebackType

__all__ = [
    "DEFAULT_TIMEOUT",
    "KEEPALIVE_EXPIRY",
    "MAX_IDLE",
    "DirectSend",
    "LeanTransport",
    "make_client",
    "own_client",
    "transport_for",
]

#: Timeouts of the client the channel makes: none on reading (a slow tool or
#: a ``listen`` stream may be silent for minutes; deadlines are the caller's
#: cancel scopes), bounded connecting, writing and waiting for the pool.
DEFAULT_TIMEOUT: Final = httpx2.Timeout(connect=10.0, read=None, write=30.0, pool=30.0)
#: How many idle connections are kept per origin (more are closed when handed back).
MAX_IDLE: Final = 64
#: How long an idle connection is kept, in seconds: below the 5 s after which
#: common servers (Node, uvicorn) close an idle connection themselves, so that
#: a request is not written on a connection the server is closing.
KEEPALIVE_EXPIRY: Final = 4.0

#: Where a connection goes: scheme, host, port.
_Origin: TypeAlias = tuple[bytes, bytes, int]

#: httpcore2's exceptions and the httpx2 exceptions they become, the most specific first.
_ERRORS: Final[tuple[tuple[type[Exception], type[httpx2.HTTPError]], ...]] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.ProxyError, httpx2.ProxyError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
)


def _as_httpx(exc: Exception) -> Exception:
    """The httpx2 exception for an httpcore2 one (anything else as it is)."""
    for theirs, ours in _ERRORS:
        if isinstance(exc, theirs):
            return ours(str(exc))
    return exc


#: How many bytes one read from a connection asks for.
_READ_SIZE: Final = 64 * 1024
#: The largest response head h11 buffers before giving up on it.
_MAX_HEAD: Final = 100 * 1024


def transport_for(*, trust_env: bool) -> LeanTransport | None:
    """The transport of the channel's own client: a `LeanTransport`, or `None` (httpx2's pool).

    `None` when ``trust_env`` holds and the environment sets a proxy
    (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``): httpx2 applies the
    environment's proxies only to a client without a transport of its own.
    """
    if trust_env and getproxies():
        return None
    return LeanTransport(trust_env=trust_env)


def make_client(
    *, trust_env: bool, event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None
) -> httpx2.AsyncClient:
    """The `httpx2.AsyncClient` the HTTP channel makes when it is given none.

    Timeouts `DEFAULT_TIMEOUT`, no redirects followed (the channel follows
    307 and 308 to the same origin itself), connections through the
    transport `transport_for` gives; ``trust_env`` as httpx2 takes it
    (proxies from the environment, ``SSL_CERT_FILE``, ``.netrc``);
    ``event_hooks`` as httpx2 takes them.
    """
    return own_client(trust_env=trust_env, event_hooks=event_hooks)[0]


def own_client(
    *, trust_env: bool, event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None
) -> tuple[httpx2.AsyncClient, LeanTransport | None]:
    """`make_client`'s client, with the `LeanTransport` under it (`None`: httpx2's own pool)."""
    transport = transport_for(trust_env=trust_env)
    if transport is None:
        # Keep httpx2's pool, so that the environment's proxies apply as ever.
        client = httpx2.AsyncClient(
            timeout=DEFAULT_TIMEOUT,
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=MAX_IDLE),
            trust_env=True,
            follow_redirects=False,
            event_hooks=event_hooks,
        )
        return client, None
    client = httpx2.AsyncClient(
        timeout=DEFAULT_TIMEOUT,
        trust_env=trust_env,
        follow_redirects=False,
        transport=transport,
        event_hooks=event_hooks,
    )
    return client, transport


class DirectSend:
    """The speed trick of the channel's own client: a POST handed straight to its `LeanTransport`.

    `httpx2.AsyncClient.send` wraps every request in layers that a client of
    one MCP server, made by the channel itself, does not use: merging the
    client's URL, headers and cookies into a new `httpx2.Request`
    (`httpx2.AsyncClient.build_request`, which checks and encodes every
    header again), an auth flow, a redirect loop (the channel follows
    redirects itself), event hooks, a log line and a timer per request. For
    a request to the channel's endpoint with its whole body, this gives the
    pool the request's parts (`LeanTransport.send_whole`): the endpoint's
    parsed URL, and the headers httpx2 would send (``Host``, the client's
    default headers merged with the user's, encoded once; the protocol's;
    ``Content-Length``), with the client's timeouts.

    It stands aside (`ready` is false, and the client sends as ever) for
    any other URL (a redirect's target), once the client has cookies
    (httpx2 merges them into requests), when the client has an ``auth`` or
    the URL user info (httpx2 turns it into basic auth), and once the
    client is closed. A response that sets cookies has them stored in the
    client's jar, as httpx2 does; from then on the client sends. Only the
    channel's own client on a `LeanTransport`, with no ``auth`` given to
    the channel, gets one: a client of the user's is always used through
    its ``send``.

    What it does not do that the client does: log each request at the
    ``INFO`` level of httpx2's logger, time the response
    (``Response.elapsed``), and tie the response to a `httpx2.Request`
    (``Response.request``) unless it set cookies.

    Measured gain: see the HTTP transport's speed tricks in the design notes.
    """

    __slots__ = ("_base", "_client", "_quick", "_timeouts", "_transport", "_url", "_url_text", "_usable")

    def __init__(
        self,
        client: httpx2.AsyncClient,
        transport: LeanTransport,
        url: str,
        headers: httpx2.Headers,
        protocol_names: Collection[str],
    ) -> None:
        self._client = client
        self._transport = transport
        self._url_text = url
        self._url = httpx2.URL(url)
        # The client's default headers, then the user's; the protocol's own are
        # given per request (and replace any of these of the same name).
        merged = httpx2.Headers(client.headers)
        merged.update(headers)
        for name in protocol_names:
            merged.pop(name, None)
        self._base = [(b"Host", self._url.netloc), *merged.raw]
        self._timeouts = client.timeout.as_dict()
        # The heads of its requests, written without h11 when they are plain (`QuickHead`).
        quick = QuickHead("POST", self._url.raw_path, self._base)
        self._quick = quick if quick.usable else None
        self._usable = client.auth is None and not self._url.userinfo

    def ready(self, url: str) -> bool:
        """Whether a request to ``url`` may be sent directly (else the client must send it)."""
        client = self._client
        return url == self._url_text and self._usable and not client.cookies and not client.is_closed

    async def send(self, method: str, protocol: Mapping[str, str], content: bytes) -> httpx2.Response:
        """Send a request to the endpoint (`ready` said so) with ``protocol``'s headers and its
        body ``content``; its response, streaming.

        Raises:
            httpx2.HTTPError: As httpx2's client raises them (no response).
            UnicodeEncodeError: A header of ``protocol`` that is not ASCII, as httpx2 refuses it.
        """
        headers = [
            *self._base,
            *[(name.encode("ascii"), value.encode("ascii")) for name, value in protocol.items()],
            (b"Content-Length", b"%d" % len(content)),
        ]
        quick = self._quick
        head = quick.head(protocol, len(content)) if quick is not None and method == "POST" else None
        response = await self._transport.send_whole(self._url, method, headers, content, self._timeouts, head)
        if "set-cookie" in response.headers:
            response.request = httpx2.Request(method, self._url, headers=headers, content=content)
            self._client.cookies.extract_cookies(response)
        return response


class LeanTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport over h11 connections, with a stack of idle ones per origin.

    Args:
        trust_env: Whether ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` apply to
            the TLS context (made on the first ``https`` request).
        max_idle: How many idle connections are kept per origin.
        keepalive_expiry: How long, in seconds, an idle connection is kept.
        direct_io: Whether plain (not TLS) connections use `DirectIO`.
        quick_read: Whether a whole plain answer to a request h11 wrote is
            read as the quick exchange reads it
            (`trio_mcp._transports.http_quick`), not through h11.
    """

    def __init__(
        self,
        *,
        trust_env: bool = True,
        max_idle: int = MAX_IDLE,
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
        direct_io: bool = True,
        quick_read: bool = True,
    ) -> None:
        self._trust_env = trust_env
        self._direct_io = direct_io
        self._quick_read = quick_read
        self._max_idle = max_idle
        self._keepalive_expiry = keepalive_expiry
        self._ssl_context: ssl.SSLContext | None = None
        #: Per origin, the idle connections and when each was handed back, oldest first.
        self._idle: dict[_Origin, deque[tuple[_Connection, float]]] = {}
        self._open: set[_Connection] = set()
        self._closed = False
        # trio_mcp runs on Trio only: no detection per connection.
        self._backend = httpcore2.TrioBackend()

    @property
    def connections(self) -> int:
        """How many connections are open (idle or carrying an exchange)."""
        return len(self._open)

    @property
    def idle_connections(self) -> int:
        """How many of them are idle, kept for the next request."""
        return sum(len(stack) for stack in self._idle.values())

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self._closed:
            raise httpx2.ConnectError("the connection pool is closed", request=request)
        url = request.url
        scheme = url.raw_scheme
        if scheme not in (b"http", b"https"):
            raise httpx2.UnsupportedProtocol(f"Request URL has an unsupported protocol '{url.scheme}://'.")
        origin = (scheme, url.raw_host, url.port or (443 if scheme == b"https" else 80))
        timeouts: Mapping[str, float | None] = request.extensions.get("timeout", {})
        return await self._exchange(origin, request.extensions.get("sni_hostname"), timeouts, request, None)

    async def send_whole(
        self,
        url: httpx2.URL,
        method: str,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: Mapping[str, float | None],
        head: bytes | None = None,
    ) -> httpx2.Response:
        """A request given as its parts, with its whole body, for `DirectSend`: its response, streaming.

        ``url`` is ``http`` or ``https``; ``headers`` are all of them
        (``Host`` and ``Content-Length`` too). ``head``: the request's head
        as `QuickHead` wrote it from the same headers, for a quick exchange
        (`_Connection.send_quick`).
        """
        if self._closed:
            raise httpx2.ConnectError("the connection pool is closed")
        scheme = url.raw_scheme
        origin = (scheme, url.raw_host, url.port or (443 if scheme == b"https" else 80))
        return await self._exchange(origin, None, timeouts, None, (method, url.raw_path, headers, body), head)

    async def _exchange(
        self,
        origin: _Origin,
        sni_hostname: object,
        timeouts: Mapping[str, float | None],
        request: httpx2.Request | None,
        parts: tuple[str, bytes, list[tuple[bytes, bytes]], bytes] | None,
        head: bytes | None = None,
    ) -> httpx2.Response:
        connection: _Connection | None = None
        event: h11.Response | QuickResponse
        try:
            connection = await self._take(origin, sni_hostname, timeouts)
            if request is not None:
                event = await connection.send(request, timeouts, self._quick_read)
            else:
                assert parts is not None
                method, target, headers, body = parts
                if head is not None:
                    event = await connection.send_quick(head, method, target, headers, body, timeouts)
                else:
                    event = await connection.send_parts(
                        method, target, headers, body, None, timeouts, self._quick_read
                    )
        except BaseException as exc:
            if connection is not None:
                await self._give_back(origin, connection)
            if isinstance(exc, Exception) and (mapped := _as_httpx(exc)) is not exc:
                raise mapped from exc
            raise
        if isinstance(event, QuickResponse):
            return httpx2.Response(
                status_code=event.status_code,
                headers=event.headers,
                stream=_WholeBody(self, origin, connection, event.body),
                extensions={
                    "http_version": b"HTTP/1.1",
                    "reason_phrase": event.reason,
                    "network_stream": connection.stream,
                },
            )
        return httpx2.Response(
            status_code=event.status_code,
            headers=event.headers.raw_items(),
            stream=_Body(self, origin, connection, timeouts.get("read")),
            extensions={
                "http_version": b"HTTP/" + event.http_version,
                "reason_phrase": event.reason,
                "network_stream": connection.stream,
            },
        )

    async def _take(
        self, origin: _Origin, sni_hostname: object, timeouts: Mapping[str, float | None]
    ) -> _Connection:
        """The most recently used good idle connection to ``origin``, or a new one."""
        stack = self._idle.get(origin)
        now = time.monotonic()
        while stack:
            connection, since = stack.pop()
            if since + self._keepalive_expiry >= now and not connection.readable():
                # Nothing to read on an idle connection: the server has not closed it.
                return connection
            await self._close(connection)
        scheme, host, port = origin
        connect = timeouts.get("connect")
        stream = await self._backend.connect_tcp(host.decode("ascii"), port, timeout=connect)
        if scheme == b"https":
            if self._ssl_context is None:
                self._ssl_context = httpx2.create_ssl_context(trust_env=self._trust_env)
            server_hostname = (
                sni_hostname if isinstance(sni_hostname, str) and sni_hostname else host.decode("ascii")
            )
            try:
                stream = await stream.start_tls(
                    self._ssl_context, server_hostname=server_hostname, timeout=connect
                )
            except BaseException:
                with trio.CancelScope(shield=True), contextlib.suppress(Exception):
                    await stream.aclose()
                raise
        connection = _Connection(stream, DirectIO.of(stream) if self._direct_io else None)
        self._open.add(connection)
        return connection

    async def _give_back(self, origin: _Origin, connection: _Connection) -> None:
        """Keep ``connection`` for the next request if it can carry one; close it otherwise."""
        # Whether the server closed it meanwhile is checked when it is taken again.
        if self._closed or not connection.next_cycle():
            await self._close(connection)
            return
        now = time.monotonic()
        stack = self._idle.setdefault(origin, deque())
        # The oldest go when there are too many, or when they have been idle too
        # long (with the most recent taken first, they would otherwise wait here).
        while stack and (len(stack) >= self._max_idle or stack[0][1] + self._keepalive_expiry < now):
            await self._close(stack.popleft()[0])
        stack.append((connection, now))

    async def _close(self, connection: _Connection) -> None:
        self._open.discard(connection)
        await connection.aclose()

    async def aclose(self) -> None:
        self._closed = True
        connections, self._open = list(self._open), set()
        self._idle.clear()
        for connection in connections:
            await connection.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()


class DirectIO:
    """The speed trick of the pool: a plain connection's bytes moved on its socket's descriptor.

    For each call, httpcore2's Trio stream writes the request through
    ``trio.SocketStream.send_all`` and reads the answer through
    ``receive_some``: a cancel scope each (the timeout), a conflict
    detector, a first ``recv`` that can only fail (the answer is not there
    yet) and a scheduler round after the write that succeeded at once. On a
    plain TCP connection this does the same with the descriptor Trio gives
    (``fileno()`` of the stream's socket, public): one ``os.write`` that
    the kernel takes whole (a request is small; whatever it does not take
    goes through the stream as before), and to read, a wait until the
    socket is readable (`trio.lowlevel.wait_readable`, a checkpoint: every
    read waits there, so cancellation and the caller's scopes work as
    ever), then one ``os.read``. TLS connections, and reads with a timeout
    of their own, keep the stream.

    Measured gain (trio_mcp one call at a time against the fast Node server
    of ``benchmarks/http_bench.py``, the same client with ``direct_io`` on
    and off taking turns, 6 repetitions of 1,500 calls, load average 10-12
    on 2 shared cores): CPU time per call 0.475 ms against 0.649 ms (-27 %);
    the rates, too noisy at that load to be read one by one, 770 against
    312 calls/s (medians).
    """

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def of(cls, stream: httpcore2.AsyncNetworkStream) -> DirectIO | None:
        """For a plain TCP stream, its `DirectIO`; `None` for TLS, or a stream without a socket."""
        if stream.get_extra_info("ssl_object") is not None:
            return None
        socket = stream.get_extra_info("socket")
        fileno = getattr(socket, "fileno", None)
        fd = fileno() if callable(fileno) else -1
        return cls(fd) if isinstance(fd, int) and fd >= 0 else None

    def write(self, data: bytes) -> int:
        """Write what the socket takes now, without waiting: how many bytes it took."""
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            raise httpcore2.WriteError(str(exc) or type(exc).__name__) from exc

    async def read(self, max_bytes: int) -> bytes:
        """Wait until the socket is readable (a checkpoint), then read what is there."""
        while True:
            await trio.lowlevel.wait_readable(self.fd)
            try:
                return os.read(self.fd, max_bytes)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise httpcore2.ReadError(str(exc) or type(exc).__name__) from exc


class _Connection:
    """One HTTP/1.1 connection: h11 over a network stream, one exchange at a time."""

    __slots__ = ("_direct", "_h11", "_quick_done", "stream")

    def __init__(self, stream: httpcore2.AsyncNetworkStream, direct: DirectIO | None = None) -> None:
        #: The network stream (the response's ``network_stream`` extension).
        self.stream = stream
        self._direct = direct
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)
        #: Whether the last exchange was a quick one (h11 idle: untouched, or made afresh).
        self._quick_done = False

    async def _write(self, data: bytes, write_timeout: float | None) -> None:
        direct = self._direct
        if direct is not None and data:
            data = data[direct.write(data) :]
            if not data:
                return
        await self.stream.write(data, timeout=write_timeout)

    async def _read(self, read_timeout: float | None) -> bytes:
        direct = self._direct
        if direct is not None and read_timeout is None:
            return await direct.read(_READ_SIZE)
        return await self.stream.read(_READ_SIZE, timeout=read_timeout)

    def readable(self) -> bool:
        """Whether the socket has something to read (on an idle connection: the server closed it)."""
        return bool(self.stream.get_extra_info("is_readable"))

    async def send(
        self, request: httpx2.Request, timeouts: Mapping[str, float | None], quick: bool = False
    ) -> h11.Response | QuickResponse:
        """Write ``request`` and read the head of its response (the body is left to `receive_body`,
        unless the answer was a quick one: see `send_parts`)."""
        try:
            # One write for a whole small request: the head and a body known in advance.
            body = request.content if isinstance(request.stream, httpx2.ByteStream) else None
        except httpx2.RequestNotRead:  # pragma: no cover - a ByteStream is always read
            body = None
        return await self.send_parts(
            request.method, request.url.raw_path, request.headers.raw, body, request.stream, timeouts, quick
        )

    async def send_parts(
        self,
        method: str,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes | None,
        stream: object,
        timeouts: Mapping[str, float | None],
        quick: bool = False,
    ) -> h11.Response | QuickResponse:
        """`send` a request given as its parts: ``body`` when known in advance, else ``stream``.

        ``quick``: a whole plain answer to a whole request may be read as
        the quick exchange reads it (`read_whole`), not through h11.
        """
        write = timeouts.get("write")
        try:
            data = self._h11.send(h11.Request(method=method, target=target, headers=headers))
        except h11.LocalProtocolError as exc:
            raise httpx2.LocalProtocolError(str(exc)) from exc
        try:
            if body is not None:
                data = (data or b"") + (self._h11.send(h11.Data(data=body)) if body else b"")
                data += self._h11.send(h11.EndOfMessage()) or b""
                await self._write(data, write)
            else:
                await self.stream.write(data or b"", timeout=write)
                assert isinstance(stream, httpx2.AsyncByteStream)
                async for chunk in stream:
                    await self.stream.write(self._h11.send(h11.Data(data=chunk)) or b"", timeout=write)
                await self.stream.write(self._h11.send(h11.EndOfMessage()) or b"", timeout=write)
        except httpcore2.WriteError:
            # The server may have answered (a refusal) and closed before reading
            # the whole request: its answer is read below, as httpcore2 does.
            quick = False
        read = timeouts.get("read")
        connection = self._h11
        if (
            quick
            and body is not None
            and method not in ("HEAD", "CONNECT")
            and connection.our_state is h11.DONE
            and connection.their_state is h11.SEND_RESPONSE
        ):
            # The quick exchange's reading half: a whole plain answer to a
            # request h11 wrote, that left the connection fit to carry another.
            data = await self._read(read)
            if (whole := read_whole(data)) is not None:
                self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)
                self._quick_done = True
                return whole
            self._receive_first(data)
        return await self._response_head(read)

    def _receive_first(self, data: bytes) -> None:
        """Give h11 the first bytes read after a request (not a quick answer)."""
        if not data:
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
        self._h11.receive_data(data)

    async def _response_head(self, read_timeout: float | None) -> h11.Response:
        """Read the final response's head through h11."""
        while True:
            event = await self._next_event(read_timeout)
            if isinstance(event, h11.Response):
                return event
            # Informational (1xx) answers go by: the final one follows.

    async def send_quick(
        self,
        head: bytes,
        method: str,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: Mapping[str, float | None],
    ) -> h11.Response | QuickResponse:
        """The quick exchange (`trio_mcp._transports.http_quick`): write ``head`` (the head of the
        request of ``method``, ``target`` and ``headers``) and ``body``; read the answer.

        The answer is a `QuickResponse` when it came whole and plain in the
        first read; otherwise h11 is told of the request (its bytes are
        already sent) and given what came, and reads the answer's head as
        `send_parts` does: the same rules, the same errors.
        """
        written = True
        try:
            await self._write(head + body, timeouts.get("write"))
        except httpcore2.WriteError:
            # The server may have answered (a refusal) and closed before reading
            # the whole request: its answer is read below, as httpcore2 does.
            written = False
        read = timeouts.get("read")
        data = await self._read(read)
        if written and (whole := read_whole(data)) is not None:
            self._quick_done = True
            return whole
        connection = self._h11
        try:
            connection.send(h11.Request(method=method, target=target, headers=headers))
            if body:
                connection.send(h11.Data(data=body))
            connection.send(h11.EndOfMessage())
        except h11.LocalProtocolError as exc:  # pragma: no cover - QuickHead writes plain heads only
            raise httpx2.LocalProtocolError(str(exc)) from exc
        self._receive_first(data)
        return await self._response_head(read)

    async def receive_body(self, read_timeout: float | None) -> AsyncIterator[bytes]:
        while True:
            event = await self._next_event(read_timeout)
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return

    async def _next_event(self, read_timeout: float | None) -> h11.Event:
        connection = self._h11
        while True:
            try:
                event = connection.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx2.RemoteProtocolError(str(exc)) from exc
            if event is h11.NEED_DATA:
                data = await self._read(read_timeout)
                if not data and connection.their_state is h11.SEND_RESPONSE:
                    raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
                connection.receive_data(data)
                continue
            if event is h11.PAUSED:  # pragma: no cover - a client never pauses mid-response
                raise httpx2.RemoteProtocolError("the connection paused in the middle of a response")
            assert isinstance(event, h11.Event)
            return event

    def next_cycle(self) -> bool:
        """Ready the connection for another exchange: whether it can carry one.

        Not when the exchange did not end cleanly on both sides, when the
        server said it closes, or when it sent bytes past the end of the
        response (h11 would read them as the next request's answer).
        """
        if self._quick_done:
            # A quick exchange ends whole and clean, h11 untouched (still idle).
            self._quick_done = False
            return True
        connection = self._h11
        if connection.our_state is not h11.DONE or connection.their_state is not h11.DONE:
            return False
        if connection.trailing_data[0]:
            return False
        connection.start_next_cycle()
        return True

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True), contextlib.suppress(Exception):
            # A connection that fails to close is closed.
            await self.stream.aclose()


class _Body(httpx2.AsyncByteStream):
    """A response body read through h11; closing it hands the connection back."""

    def __init__(
        self, transport: LeanTransport, origin: _Origin, connection: _Connection, timeout: float | None
    ) -> None:
        self._transport = transport
        self._origin = origin
        self._connection = connection
        self._timeout = timeout
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._connection.receive_body(self._timeout):
                yield chunk
        except Exception as exc:
            mapped = _as_httpx(exc)
            if mapped is exc:
                raise
            raise mapped from exc

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._transport._give_back(self._origin, self._connection)


class _WholeBody(httpx2.AsyncByteStream):
    """The body of a quick exchange's response, read with its head; closing it hands the connection back."""

    def __init__(
        self, transport: LeanTransport, origin: _Origin, connection: _Connection, body: bytes
    ) -> None:
        self._transport = transport
        self._origin = origin
        self._connection: _Connection | None = connection
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._body:
            yield self._body

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await self._transport._give_back(self._origin, connection)
