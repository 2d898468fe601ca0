"""The httpx client the HTTP channel makes for itself, and the connection pool under it.

Every request of the HTTP channel is one exchange on a connection of its own
(HTTP/1.1: one exchange at a time per connection), so with many calls in
flight the client holds as many connections. httpcore's own pool
(``httpcore.AsyncConnectionPool``, what ``httpx.AsyncClient`` uses by
default) does poorly there: each time a request starts or ends it walks every
queued request against every connection (and, for each idle connection,
every connection again), and it hands one idle connection to every request
queued at that moment, all but one of which then find it taken and go round
again. With 64 calls in flight that is thousands of checks per call, and the
HTTP stack costs twice the CPU per call that it costs one call at a time.

`LeanTransport` keeps what a client of one MCP server needs instead: per
origin, a stack of idle connections. A request takes the most recently used
idle connection that is still good (not expired, not closed by the server),
or opens a new one; it owns that connection alone until its response is
closed, which hands the connection back if it can carry another exchange
(and closes it otherwise). Taking and giving back are constant time, and no
request ever waits for another's connection. The connections themselves are
httpcore's (``httpcore.AsyncHTTPConnection``: connecting, TLS, h11), so the
bytes on the wire, the timeouts of each request and the errors raised are
exactly httpx's.

HTTP/2 would multiplex every call over one connection, but it needs the
``h2`` package, its framing costs more CPU per call than h11 does, and the
servers MCP clients meet on loopback and behind proxies speak HTTP/1.1
(cleartext HTTP/2 needs prior knowledge): it is left out.

httpx applies the environment's proxies (``trust_env``) only to a client
without a transport of its own: when the environment sets a proxy, the
client keeps httpx's own pool, so that proxies apply exactly as httpx
applies them.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final, Self, TypeAlias
from urllib.request import getproxies

import h11
import httpcore
import httpx
import trio

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncIterator, Callable, Mapping
    from types import TracebackType

__all__ = ["DEFAULT_TIMEOUT", "KEEPALIVE_EXPIRY", "MAX_IDLE", "LeanTransport", "make_client"]

#: Timeouts of the client the channel makes: none on reading (a slow tool or
#: a ``listen`` stream may be silent for minutes; deadlines are the caller's
#: cancel scopes), bounded connecting, writing and waiting for the pool.
DEFAULT_TIMEOUT: Final = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=30.0)
#: How many idle connections are kept per origin (more are closed when handed back).
MAX_IDLE: Final = 64
#: How long an idle connection is kept, in seconds: below the 5 s after which
#: common servers (Node, uvicorn) close an idle connection themselves, so that
#: a request is not written on a connection the server is closing.
KEEPALIVE_EXPIRY: Final = 4.0

#: Where a connection goes: scheme, host, port.
_Origin: TypeAlias = tuple[bytes, bytes, int]

#: httpcore's exceptions and the httpx exceptions they become, the most specific first.
_ERRORS: Final[tuple[tuple[type[Exception], type[httpx.HTTPError]], ...]] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


def _as_httpx(exc: Exception) -> Exception:
    """The httpx exception for an httpcore one (anything else as it is)."""
    for theirs, ours in _ERRORS:
        if isinstance(exc, theirs):
            return ours(str(exc))
    return exc


def make_client(
    *, trust_env: bool, event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None
) -> httpx.AsyncClient:
    """The `httpx.AsyncClient` the HTTP channel makes when it is given none.

    Timeouts `DEFAULT_TIMEOUT`, no redirects followed (the channel follows
    307 and 308 to the same origin itself), direct connections through a
    `LeanTransport`; ``trust_env`` as httpx takes it (proxies from the
    environment, ``SSL_CERT_FILE``, ``.netrc``); ``event_hooks`` as httpx
    takes them. With ``trust_env`` and a proxy set in the environment
    (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``), the client keeps
    httpx's own pool: httpx applies the environment's proxies only then.
    """
    if trust_env and getproxies():
        # httpx applies the environment's proxies only to a client without a
        # transport of its own: keep its pool then, so that they apply as ever.
        return httpx.AsyncClient(
            timeout=DEFAULT_TIMEOUT,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=MAX_IDLE),
            trust_env=True,
            follow_redirects=False,
            event_hooks=event_hooks,
        )
    return httpx.AsyncClient(
        timeout=DEFAULT_TIMEOUT,
        trust_env=trust_env,
        follow_redirects=False,
        transport=LeanTransport(trust_env=trust_env),
        event_hooks=event_hooks,
    )


class LeanTransport(httpx.AsyncBaseTransport):
    """An httpx transport over httpcore connections, with a stack of idle ones per origin.

    Args:
        trust_env: Whether ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` apply to
            the TLS context (made on the first ``https`` request).
        max_idle: How many idle connections are kept per origin.
        keepalive_expiry: How long, in seconds, an idle connection is kept.
    """

    def __init__(
        self, *, trust_env: bool = True, max_idle: int = MAX_IDLE, keepalive_expiry: float = KEEPALIVE_EXPIRY
    ) -> None:
        self._trust_env = trust_env
        self._max_idle = max_idle
        self._keepalive_expiry = keepalive_expiry
        self._ssl_context: ssl.SSLContext | None = None
        #: Per origin, the idle connections and when each was handed back, oldest first.
        self._idle: dict[_Origin, deque[tuple[httpcore.AsyncHTTPConnection, float]]] = {}
        self._open: set[httpcore.AsyncHTTPConnection] = set()
        self._closed = False
        # trio_mcp runs on Trio only: no detection per connection.
        self._backend = httpcore.TrioBackend()

    @property
    def connections(self) -> int:
        """How many connections are open (idle or carrying an exchange)."""
        return len(self._open)

    @property
    def idle_connections(self) -> int:
        """How many of them are idle, kept for the next request."""
        return sum(len(stack) for stack in self._idle.values())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise httpx.ConnectError("the connection pool is closed", request=request)
        url = request.url
        scheme = url.raw_scheme
        if scheme not in (b"http", b"https"):
            raise httpx.UnsupportedProtocol(f"Request URL has an unsupported protocol '{url.scheme}://'.")
        assert isinstance(request.stream, httpx.AsyncByteStream)
        origin = (scheme, url.raw_host, url.port or (443 if scheme == b"https" else 80))
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        connection = await self._take(origin)
        try:
            response = await connection.handle_async_request(core_request)
        except BaseException as exc:
            await self._give_back(origin, connection)
            if isinstance(exc, Exception) and (mapped := _as_httpx(exc)) is not exc:
                raise mapped from exc
            raise
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(self, origin, connection, response),
            extensions=response.extensions,
        )

    async def _take(self, origin: _Origin) -> httpcore.AsyncHTTPConnection:
        """The most recently used good idle connection to ``origin``, or a new one."""
        stack = self._idle.get(origin)
        while stack:
            connection, _ = stack.pop()
            if connection.is_idle() and not connection.has_expired():
                return connection
            await self._close(connection)
        scheme, host, port = origin
        if scheme == b"https" and self._ssl_context is None:
            self._ssl_context = httpx.create_ssl_context(trust_env=self._trust_env)
        connection = httpcore.AsyncHTTPConnection(
            httpcore.Origin(scheme, host, port),
            ssl_context=self._ssl_context if scheme == b"https" else None,
            keepalive_expiry=self._keepalive_expiry,
            network_backend=self._backend,
        )
        self._open.add(connection)
        return connection

    async def _give_back(self, origin: _Origin, connection: httpcore.AsyncHTTPConnection) -> None:
        """Keep ``connection`` for the next request if it can carry one; close it otherwise."""
        # Whether the server closed it meanwhile is checked when it is taken again.
        if self._closed or not connection.is_idle() or _unread_bytes(connection):
            await self._close(connection)
            return
        now = time.monotonic()
        stack = self._idle.setdefault(origin, deque())
        # The oldest go when there are too many, or when they have been idle too
        # long (with the most recent taken first, they would otherwise wait here).
        while stack and (len(stack) >= self._max_idle or stack[0][1] + self._keepalive_expiry < now):
            await self._close(stack.popleft()[0])
        stack.append((connection, now))

    async def _close(self, connection: httpcore.AsyncHTTPConnection) -> None:
        self._open.discard(connection)
        with trio.CancelScope(shield=True):
            with contextlib.suppress(Exception):  # a connection that fails to close is closed
                await connection.aclose()

    async def aclose(self) -> None:
        self._closed = True
        connections, self._open = list(self._open), set()
        self._idle.clear()
        for connection in connections:
            await self._close(connection)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()


def _unread_bytes(connection: httpcore.AsyncHTTPConnection) -> bool:
    """Whether the server sent bytes past the end of the last response, or that cannot be told.

    h11 keeps such bytes for the next exchange, where they would be read as
    the answer to a request they do not answer (a second response, a body
    longer than its ``Content-Length``): such a connection is never reused.
    httpcore does not show them; its HTTP/1.1 connection's h11 state does.
    """
    http11 = getattr(connection, "_connection", None)
    state = getattr(http11, "_h11_state", None)
    if not isinstance(state, h11.Connection):
        return True
    return bool(state.trailing_data[0])


class _Body(httpx.AsyncByteStream):
    """A response body: httpcore's, with its errors as httpx's; closing it hands the connection back."""

    def __init__(
        self,
        transport: LeanTransport,
        origin: _Origin,
        connection: httpcore.AsyncHTTPConnection,
        response: httpcore.Response,
    ) -> None:
        self._transport = transport
        self._origin = origin
        self._connection = connection
        self._response = response
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_stream():
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
        try:
            with trio.CancelScope(shield=True):
                await self._response.aclose()
        except Exception as exc:
            mapped = _as_httpx(exc)
            if mapped is exc:
                raise
            raise mapped from exc
        finally:
            await self._transport._give_back(self._origin, self._connection)
