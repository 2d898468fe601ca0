"""The HTTP channel: MCP over Streamable HTTP, with httpx, on Trio.

Every message the session sends is one POST to the server's endpoint. The
answer to a request comes back on that POST: a JSON body, or an event stream
(``text/event-stream``) that may carry notifications and, in the initialize
era, the server's own requests, before the answer. Each request is one task
of the channel's nursery, owning its POST: cancelling that task aborts the
exchange, which is how a request is cancelled in the 2026-07-28 era.

The era is read off each message, so that headers and body never disagree:

* A message that carries a 2026-07-28 ``_meta`` envelope is sent with
  ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name``, and no session.
* ``initialize`` goes without session or version headers; the session id
  (``Mcp-Session-Id``) is taken only from its successful answer, and every
  later message carries it with the negotiated version. Once
  ``notifications/initialized`` is through, a GET stream carries the
  server's messages that belong to no request, and is reopened (with
  ``Last-Event-ID``) when it drops. A POST stream cut before its answer is
  resumed the same way when its events had ids; replayed events are
  recognised by id and dropped, so that a server request is never answered
  twice. A request refused for an unknown session (404, or the 400 some
  servers send) opens a new session once and is sent again. Closing sends
  ``DELETE``, bounded and shielded.
* When ``initialize`` itself is refused with 400, 404 or 405 and no
  JSON-RPC body, the server may speak the HTTP+SSE transport of 2024-11-05:
  a GET on the URL must then open an event stream whose first event names
  the endpoint to POST to; every answer arrives on that stream.

Nothing here decides the era: the session's negotiation does, over this
channel, exactly as over stdio. HTTP answers that are not MCP messages fail
their request with a typed error (`HTTPError` and subclasses), with the
status, headers and the start of the body; a JSON-RPC error in the body of
an error status is delivered as the server's answer.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson
import trio

from .._channel import Channel
from .._core.codec import UnreadableJSON, decode, encode
from .._core.http_wire import (
    media_type,
    modern_headers,
    modern_version,
    parse_challenge,
    parse_retry_after,
    rpc_error_body,
    same_origin,
    valid_session_id,
)
from .._core.sse import BadEncoding, Event, EventParser, EventTooLarge
from .._errors import (
    AuthRequired,
    ConnectionFailed,
    HTTPError,
    MCPError,
    MessageTooLarge,
    ProtocolError,
    ServerBusy,
    ServerGone,
    SessionExpired,
)
from ._httpx_client import make_client

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping

    from .._channel import Receiver, TaskStarter

__all__ = ["DEFAULT_TIMEOUT", "HTTPChannel"]

JSON: TypeAlias = Any

#: Timeouts of the client the channel makes: none on reading (a slow tool or
#: a ``listen`` stream may be silent for minutes; deadlines are the caller's
#: cancel scopes), bounded connecting, writing and waiting for the pool.
DEFAULT_TIMEOUT: Final = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=30.0)
#: Connections of the client the channel makes: every stream in flight holds one.
DEFAULT_LIMITS: Final = httpx.Limits(max_connections=None, max_keepalive_connections=64)

_ACCEPT: Final = "application/json, text/event-stream"
#: Redirects (307 and 308, same origin) followed for one request.
MAX_REDIRECTS: Final = 5
#: How many times a cut stream is resumed with ``Last-Event-ID``.
MAX_RESUMES: Final = 5
#: How many times in a row the GET stream may fail before it is given up.
MAX_GET_FAILURES: Final = 5
#: The server's ``retry`` is taken within these bounds, in seconds.
RETRY_BOUNDS: Final = (0.0, 60.0)
#: How long closing waits for the ``DELETE`` of a session (and the pool's close).
CLOSE_GRACE: Final = 2.0
#: How many event ids are remembered, to recognise replayed events.
SEEN_EVENTS: Final = 4096
#: How much of an error body is read (and how much an error keeps).
ERROR_BODY_READ: Final = 64 * 1024
ERROR_BODY_KEEP: Final = 1024


class _SessionLost(Exception):
    """The server no longer knows the session a request carried."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def display_url(url: str) -> str:
    """A URL as messages show it: no user info, no query, no fragment (they may hold secrets)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _backoff(failures: int) -> float:
    return float(min(30.0, 1.5 ** max(0, failures - 1)))


class HTTPChannel(Channel):
    """A channel to an MCP server over Streamable HTTP (and HTTP+SSE of 2024-11-05).

    Args:
        url: The server's MCP endpoint, used exactly as given.
        headers: Headers sent with every request (``Authorization``, say).
            The protocol's own headers are set by the channel and cannot be
            replaced.
        auth: An `httpx.Auth` applied to every request (GET and DELETE too).
        http_client: An `httpx.AsyncClient` of yours (proxies, TLS, pool):
            used as it is, and not closed. Without one the channel makes its
            own (`DEFAULT_TIMEOUT`, ``trust_env``) and closes it. A client
            left with httpx's default timeout (5 s on everything) gets
            `DEFAULT_TIMEOUT` per request instead, so that it does not cut
            a slow answer.
        max_message_bytes: The largest message (JSON body or event) accepted.
        trust_env: For the channel's own client: whether the environment's
            proxy variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``,
            ``NO_PROXY``), ``SSL_CERT_FILE`` and ``.netrc`` apply.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_message_bytes: int,
        trust_env: bool = True,
    ) -> None:
        self.url = url
        self._name = f"server {display_url(url)!r}"
        self._user_headers = httpx.Headers(dict(headers) if headers is not None else None)
        self._auth: Any = auth if auth is not None else httpx.USE_CLIENT_DEFAULT
        self._client = http_client
        self._own_client = http_client is None
        self._trust_env = trust_env
        self._timeout: Any = httpx.USE_CLIENT_DEFAULT
        self._max = max_message_bytes
        self._receiver: Receiver | None = None
        self._nursery: trio.Nursery | None = None
        self._ready = trio.Event()
        self._finished = trio.Event()
        self._closing = False
        self._closed = trio.Event()
        self._ended = False
        self._scopes: dict[int, trio.CancelScope] = {}
        self._queued: set[int] = set()
        self._withdrawn: set[int] = set()
        self._modern: dict[int, bool] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        # The initialize era.
        self._session_id: str | None = None
        self._version: str | None = None
        self._initialize: bytes | None = None
        self._initialized: bytes | None = None
        self._gate: trio.Event | None = None
        self._get_started = False
        self._get_running = False
        self._renewing = trio.Lock()
        self._private_ids = 0
        #: What the session was told that a new session must be told again:
        #: the last logging/setLevel, each resources/subscribe in force.
        self._session_state: dict[tuple[str, str], dict[str, JSON]] = {}
        # HTTP+SSE (2024-11-05).
        self._endpoint: str | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def session_id(self) -> str | None:
        """The HTTP session of the initialize era (``Mcp-Session-Id``), or `None`."""
        return self._session_id

    @property
    def transport(self) -> str:
        """``"streamable-http"``, or ``"sse"`` once the server turned out to speak HTTP+SSE (2024-11-05)."""
        return "sse" if self._endpoint is not None else "streamable-http"

    # --------------------------------------------------------------- start

    async def start(self, start_task: TaskStarter, receiver: Receiver) -> None:
        self._receiver = receiver
        if self._client is None:
            self._client = make_client(trust_env=self._trust_env)
        elif self._client.timeout == httpx.Timeout(5.0):
            # httpx's default: 5 s on reads cuts slow tools and every stream.
            self._timeout = DEFAULT_TIMEOUT
        start_task(self._run, "http")
        await self._ready.wait()

    async def _run(self) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._ready.set()
                await trio.sleep_forever()
        finally:
            self._finished.set()

    def _pass_on(self, line: bytes) -> bool:
        """Deliver a message of a stream that carries no answer of ours (it never ends the stream)."""
        assert self._receiver is not None
        self._receiver.message_received(line)
        return False

    def _log(self, text: str) -> None:
        if self._receiver is not None and not self._closing:
            self._receiver.channel_log(text)

    # ------------------------------------------------------------- sending

    def send(self, data: bytes, request_id: int | None = None, *, batch: bool = False) -> None:
        nursery = self._nursery
        if self._closing or self._ended or nursery is None:
            return
        try:
            decoded = decode(data)
        except UnreadableJSON:
            decoded = None
        message: dict[str, JSON] = decoded if isinstance(decoded, dict) else {}
        method = message.get("method")
        if request_id is not None:
            version = modern_version(message)
            self._modern[request_id] = version is not None
            if method == "initialize":
                self._initialize = data
            elif version is None:
                self._remember(method, message)
            self._queued.add(request_id)
            nursery.start_soon(self._run_request, data, message, request_id, version)
            return
        if method == "notifications/initialized":
            self._initialized = data
            if self._gate is None:
                # Requests sent from now on wait until the server has it.
                self._gate = trio.Event()
            nursery.start_soon(self._run_initialized, data, message, self._gate)
            return
        nursery.start_soon(self._run_other, data, message)

    def _remember(self, method: object, message: dict[str, JSON]) -> None:
        """Keep what a renewed session must be told again (initialize era)."""
        params = message.get("params")
        uri = params.get("uri") if isinstance(params, dict) else None
        if method == "logging/setLevel":
            self._session_state[("logging/setLevel", "")] = message
        elif method == "resources/subscribe" and isinstance(uri, str):
            self._session_state[("resources/subscribe", uri)] = message
        elif method == "resources/unsubscribe" and isinstance(uri, str):
            self._session_state.pop(("resources/subscribe", uri), None)

    def withdraw(self, request_id: int) -> bool:
        modern = self._modern.pop(request_id, False)
        scope = self._scopes.get(request_id)
        if scope is not None:
            # Closing the stream: the 2026-07-28 era's cancellation. In the
            # initialize era the session sends notifications/cancelled too.
            scope.cancel()
        elif request_id in self._queued:
            # Not sent yet: it never will be.
            self._withdrawn.add(request_id)
        return modern

    def _headers(self, message: dict[str, JSON], version: str | None) -> httpx.Headers:
        headers = httpx.Headers(self._user_headers)
        headers["accept"] = _ACCEPT
        headers["content-type"] = "application/json"
        for name in ("mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id"):
            headers.pop(name, None)
        if version is not None:
            headers.update(modern_headers(message, version))
        elif message.get("method") != "initialize":
            headers.update(self._session_headers())
        return headers

    def _session_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self._session_id is not None:
            headers["mcp-session-id"] = self._session_id
        if self._version is not None:
            headers["mcp-protocol-version"] = self._version
        return headers

    def _stream_headers(self, last_event_id: str = "") -> httpx.Headers:
        headers = httpx.Headers(self._user_headers)
        headers["accept"] = "text/event-stream"
        for name in ("mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "content-type"):
            headers.pop(name, None)
        headers.update(self._session_headers())
        if last_event_id:
            headers["last-event-id"] = last_event_id
        else:
            headers.pop("last-event-id", None)
        return headers

    @asynccontextmanager
    async def _exchange(
        self, method: str, url: str, headers: httpx.Headers, content: bytes | None = None
    ) -> AsyncIterator[httpx.Response]:
        """One HTTP exchange, streaming, following same-origin 307 and 308 redirects."""
        client = self._client
        assert client is not None
        for hop in range(MAX_REDIRECTS + 1):
            request = client.build_request(
                method, url, headers=headers, content=content, timeout=self._timeout
            )
            try:
                response = await client.send(request, stream=True, auth=self._auth, follow_redirects=False)
            except httpx.HTTPError as exc:
                raise ConnectionFailed(
                    f"{method} {display_url(url)} failed: {_network_error(exc)}", url=display_url(url)
                ) from exc
            status = response.status_code
            location = response.headers.get("location")
            if status in (307, 308) and location is not None and hop < MAX_REDIRECTS:
                target = str(httpx.URL(url).join(location))
                if same_origin(url, target):
                    await response.aclose()
                    url = target
                    continue
            try:
                yield response
            finally:
                await response.aclose()
            return
        raise AssertionError("unreachable")  # pragma: no cover

    # ------------------------------------------------------------ requests

    async def _run_request(
        self, data: bytes, message: dict[str, JSON], request_id: int, version: str | None
    ) -> None:
        receiver = self._receiver
        assert receiver is not None
        self._queued.discard(request_id)
        if request_id in self._withdrawn:
            self._withdrawn.discard(request_id)
            self._modern.pop(request_id, None)
            return
        with trio.CancelScope() as scope:
            self._scopes[request_id] = scope
            try:
                await self._request(data, message, request_id, version)
            except MCPError as exc:
                receiver.request_failed(request_id, exc)
            finally:
                self._scopes.pop(request_id, None)
                self._modern.pop(request_id, None)

    async def _request(
        self, data: bytes, message: dict[str, JSON], request_id: int, version: str | None
    ) -> None:
        gate = self._gate
        if version is None and gate is not None:
            await gate.wait()
        if self._endpoint is not None:
            await self._post_sse(data)
            return
        for attempt in range(2):
            used = self._session_id
            try:
                await self._post_request(data, message, request_id, version)
                return
            except _SessionLost as lost:
                if attempt or used is None or message.get("method") == "initialize":
                    raise SessionExpired(
                        f"{self.name} no longer knows the session (HTTP {lost.status}: {lost.detail})"
                        + (" even after a new one was opened" if attempt else ""),
                        url=display_url(self.url),
                        status=lost.status,
                    ) from None
                await self._renew(used)

    async def _post_request(
        self, data: bytes, message: dict[str, JSON], request_id: int, version: str | None
    ) -> None:
        receiver = self._receiver
        assert receiver is not None
        method = message.get("method")
        headers = self._headers(message, version)
        async with self._exchange("POST", self.url, headers, data) as response:
            status = response.status_code
            if status >= 300:
                error = await self._refusal(response, method, version, request_id)
                if error is not None:
                    if method == "initialize" and status in (400, 404, 405) and await self._try_sse(data):
                        return
                    raise error
                # A JSON-RPC error in the body: the server's answer.
                return
            kind = media_type(response.headers.get("content-type"))
            initialize = method == "initialize"

            def deliver(line: bytes) -> bool:
                if initialize:
                    self._adopt_session(line, response, request_id)
                receiver.message_received(line)
                return not receiver.awaits(request_id)

            if kind == "application/json":
                body = await self._read_body(response, request_id, method)
                if not body.strip():
                    raise self._http_error(response, f"{method} got HTTP {status} with an empty body", b"")
                deliver(body)
                if receiver.awaits(request_id):
                    self._answer_under_our_id(body, request_id, method, status)
                return
            if kind == "text/event-stream":
                await self._read_stream(response, deliver, request_id, method, resumable=version is None)
                return
            if status == 202 and version is None and self._get_running:
                # Servers of old answered on the GET stream; the request
                # stays pending (bounded by the caller's deadline).
                self._log(
                    f"{self.name} accepted request {request_id} ({method}) with 202; its answer may come"
                    " on the stream of server messages"
                )
                return
            if status in (202, 204):
                raise self._http_error(
                    response, f"{method} got HTTP {status}: the server will send no answer", b""
                )
            body = await _read_some(response, ERROR_BODY_READ)
            raise self._http_error(
                response,
                f"{method} got HTTP {status} with content type {kind or 'none'!r}, not JSON or an event stream",
                body,
            )

    def _answer_under_our_id(self, body: bytes, request_id: int, method: object, status: int) -> None:
        """A JSON answer that did not answer: under another id, or not a response at all."""
        receiver = self._receiver
        assert receiver is not None
        try:
            answer = decode(body)
        except UnreadableJSON:
            answer = None
        if isinstance(answer, dict) and ("result" in answer or "error" in answer) and "method" not in answer:
            # One request per POST: whatever id it carries, this is its answer.
            self._log(
                f"the answer to request {request_id} ({method}) came with id {answer.get('id')!r}; taken as its answer"
            )
            answer["id"] = request_id
            receiver.message_received(encode(answer).rstrip(b"\n"))
        if receiver.awaits(request_id):
            raise ProtocolError(
                f"{self.name} answered request {request_id} ({method}) with HTTP {status} and a JSON body that is not its response"
            )

    async def _read_body(self, response: httpx.Response, request_id: int, method: object) -> bytes:
        length = response.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self._max:
            raise MessageTooLarge(
                f"the answer to request {request_id} ({method}) is {length} bytes, over the limit of {self._max} bytes (max_message_bytes)",
                size=int(length),
                limit=self._max,
            )
        chunks: list[bytes] = []
        size = 0

        def take(chunk: bytes) -> bool:
            nonlocal size
            size += len(chunk)
            if size > self._max:
                raise MessageTooLarge(
                    f"the answer to request {request_id} ({method}) is over the limit of {self._max} bytes (max_message_bytes)",
                    size=size,
                    limit=self._max,
                )
            chunks.append(chunk)
            return False

        _, cause = await consume(response, take)
        if cause is not None:
            raise ConnectionFailed(
                f"the answer to request {request_id} ({method}) from {self.name} was cut: {_network_error(cause)}",
                url=display_url(self.url),
                status=response.status_code,
            ) from cause
        return b"".join(chunks)

    def _http_error(self, response: httpx.Response, message: str, body: bytes) -> HTTPError:
        return HTTPError(
            f"{message} ({display_url(str(response.url))})",
            url=display_url(str(response.url)),
            status=response.status_code,
            headers={name.lower(): value for name, value in response.headers.items()},
            body=body[:ERROR_BODY_KEEP].decode("utf-8", "replace"),
        )

    async def _refusal(
        self, response: httpx.Response, method: object, version: str | None, request_id: int
    ) -> MCPError | None:
        """The error for a status of 300 or more; `None` when a JSON-RPC error in the body was delivered instead.

        Raises:
            _SessionLost: The server no longer knows our session.
        """
        receiver = self._receiver
        assert receiver is not None
        status = response.status_code
        body = await _read_some(response, ERROR_BODY_READ)
        headers = {name.lower(): value for name, value in response.headers.items()}
        url = display_url(str(response.url))
        text = body[:ERROR_BODY_KEEP].decode("utf-8", "replace")
        challenge = headers.get("www-authenticate", "")
        if status == 401 or (status == 403 and challenge):
            scheme, params = parse_challenge(challenge)
            what = f" ({params['error']})" if "error" in params else ""
            where = (
                f"; resource metadata: {params['resource_metadata']}" if "resource_metadata" in params else ""
            )
            return AuthRequired(
                f"{self.name} refused {method} with HTTP {status}{what}: authorization required{where}",
                url=url,
                status=status,
                headers=headers,
                body=text,
                www_authenticate=challenge,
                scheme=scheme,
                params=params,
            )
        if status in (429, 503):
            delay = parse_retry_after(headers.get("retry-after"), time.time())
            after = f"; retry after {delay:g} s" if delay is not None else ""
            return ServerBusy(
                f"{self.name} is busy: HTTP {status} to {method}{after}",
                url=url,
                status=status,
                headers=headers,
                body=text,
                retry_after=delay,
            )
        error = (
            rpc_error_body(body) if media_type(headers.get("content-type")) == "application/json" else None
        )
        if version is None and self._session_id is not None and method != "initialize":
            message = str(error.get("message", "")) if error is not None else text
            if status == 404 or (status == 400 and "session" in message.lower()):
                raise _SessionLost(status, message[:200])
        if error is not None:
            # Whatever id the body carries (null, "server-error"): one request per POST.
            receiver.message_received(
                encode({"jsonrpc": "2.0", "id": request_id, "error": error}).rstrip(b"\n")
            )
            return None
        hint = ""
        if 300 <= status < 400:
            hint = f"; redirected to {headers.get('location', '(no location)')!r}, which is not followed"
            hint += " (only 307 and 308 to the same origin are)"
        elif status in (406, 415):
            hint = " (the server refused our headers)"
        error_out = HTTPError(
            f"{self.name} answered {method} with HTTP {status}{hint}",
            url=url,
            status=status,
            headers=headers,
            body=text,
        )
        if method == "server/discover" and 400 <= status < 500:
            # Not an MCP answer: for the era probe, a server of the initialize era.
            broken = ProtocolError(f"server/discover got HTTP {status} without a JSON-RPC error")
            broken.__cause__ = error_out
            return broken
        return error_out

    def _adopt_session(self, line: bytes, response: httpx.Response, request_id: int) -> None:
        """Read the answer to ``initialize``: a success starts the session (its id, its version)."""
        try:
            answer = decode(line)
        except UnreadableJSON:
            return
        if not isinstance(answer, dict) or answer.get("id") != request_id:
            return
        result = answer.get("result")
        if not isinstance(result, dict):
            return
        version = result.get("protocolVersion")
        if isinstance(version, str):
            self._version = version
        session = response.headers.get("mcp-session-id")
        if session is None:
            self._session_id = None
        elif valid_session_id(session):
            self._session_id = session
        else:
            self._log(
                f"{self.name} sent a session id with invalid characters; the session is used without it"
            )

    # ------------------------------------------------------------- streams

    async def _read_stream(
        self,
        response: httpx.Response,
        deliver: Callable[[bytes], bool],
        request_id: int,
        method: object,
        *,
        resumable: bool,
    ) -> None:
        """Read a request's event stream until its answer; resume it when cut, if it can be."""
        parser = EventParser(self._max)
        cause: Exception | None = None
        done, cause = await self._pump(response, parser, deliver)
        resumes = 0
        while not done:
            last = parser.last_event_id
            if not (resumable and last and self._session_id is not None and resumes < MAX_RESUMES):
                how = f": {_network_error(cause)}" if cause is not None else ""
                raise ConnectionFailed(
                    f"the stream of request {request_id} ({method}) from {self.name} ended before its answer{how}",
                    url=display_url(self.url),
                    status=response.status_code,
                ) from cause
            resumes += 1
            await trio.sleep(self._retry_delay(parser, resumes))
            async with self._exchange("GET", self.url, self._stream_headers(last)) as again:
                if (
                    again.status_code != 200
                    or media_type(again.headers.get("content-type")) != "text/event-stream"
                ):
                    raise ConnectionFailed(
                        f"the stream of request {request_id} ({method}) from {self.name} was cut, and resuming it"
                        f" from event {last!r} got HTTP {again.status_code}",
                        url=display_url(self.url),
                        status=again.status_code,
                    )
                done, cause = await self._pump(again, parser, deliver)

    @staticmethod
    def _retry_delay(parser: EventParser, failures: int) -> float:
        retry = parser.retry
        if retry is not None:
            low, high = RETRY_BOUNDS
            return min(high, max(low, retry / 1000))
        return _backoff(failures)

    async def _pump(
        self,
        response: httpx.Response,
        parser: EventParser,
        deliver: Callable[[bytes], bool],
        *,
        strict: bool = True,
    ) -> tuple[bool, Exception | None]:
        """Feed a stream to ``deliver`` until it says done (`True`) or the stream ends (`False`, and why).

        ``strict``: an event that is not JSON fails the stream (a request's
        stream); otherwise it is logged and skipped (the GET stream).
        """

        def take(chunk: bytes) -> bool:
            return any(self._item(item, deliver, strict=strict) for item in parser.feed(chunk))

        done, cause = await consume(response, take)
        if not done:
            parser.eof()
        return done, cause

    def _item(self, item: object, deliver: Callable[[bytes], bool], *, strict: bool = True) -> bool:
        if isinstance(item, Event):
            if item.type != "message":
                self._log(f"{self.name} sent an event of type {item.type!r}; ignored")
                return False
            if item.id:
                if item.id in self._seen:
                    self._log(f"{self.name} sent event {item.id!r} again (a replay); dropped")
                    return False
                self._seen[item.id] = None
                while len(self._seen) > SEEN_EVENTS:
                    self._seen.popitem(last=False)
            data = item.data.encode("utf-8", "surrogatepass")
            if not _may_be_json(data):
                problem = f"{self.name} sent an event whose data is not JSON: {data[:80]!r}"
                if strict:
                    raise ProtocolError(problem)
                self._log(problem + "; skipped")
                return False
            return deliver(data)
        if isinstance(item, EventTooLarge):
            raise MessageTooLarge(
                f"{self.name} sent an event over the limit of {item.limit} bytes (max_message_bytes); the stream is closed",
                size=item.limit,
                limit=item.limit,
            )
        if isinstance(item, BadEncoding):
            raise ProtocolError(f"{self.name} sent an event whose {item.field} is not UTF-8")
        return False

    # --------------------------------------------------- the session's side

    async def _run_initialized(self, data: bytes, message: dict[str, JSON], gate: trio.Event) -> None:
        try:
            await self._run_other(data, message)
        finally:
            gate.set()
            if self._gate is gate:
                self._gate = None
        if self._session_id is not None and self._endpoint is None and not self._get_started:
            self._get_started = True
            assert self._nursery is not None
            self._nursery.start_soon(self._get_stream)

    async def _run_other(self, data: bytes, message: dict[str, JSON]) -> None:
        """POST a notification or an answer to a server request; nothing comes back but 202."""
        what = message.get("method") or f"answer to server request {message.get('id')!r}"
        try:
            if self._endpoint is not None:
                await self._post_sse(data)
                return
            headers = self._headers(message, modern_version(message))
            async with self._exchange("POST", self.url, headers, data) as response:
                if response.status_code >= 300:
                    body = await _read_some(response, ERROR_BODY_KEEP)
                    self._log(
                        f"{self.name} refused our {what} with HTTP {response.status_code}: "
                        f"{body[:200].decode('utf-8', 'replace')!r}"
                    )
        except MCPError as exc:
            self._log(f"could not send our {what}: {exc}")

    async def _private(self, message: dict[str, JSON]) -> tuple[dict[str, JSON], int, str | None]:
        """Send a request of the channel's own (with an id the session never uses).

        Returns its answer (``{}`` when none came), the HTTP status, and the
        ``Mcp-Session-Id`` of the response. Other messages on its stream go to
        the session as usual.
        """
        self._private_ids += 1
        body = {**message, "id": f"trio-mcp-{self._private_ids}"}
        answer: dict[str, JSON] = {}

        def take(line: bytes) -> bool:
            try:
                decoded = decode(line)
            except UnreadableJSON:
                return False
            if isinstance(decoded, dict) and decoded.get("id") == body["id"] and "method" not in decoded:
                answer.update(decoded)
                return True
            assert self._receiver is not None
            self._receiver.message_received(line)
            return False

        headers = self._headers(body, None)
        async with self._exchange("POST", self.url, headers, encode(body)) as response:
            status = response.status_code
            kind = media_type(response.headers.get("content-type"))
            if status < 300 and kind == "text/event-stream":
                await self._pump(response, EventParser(self._max), take)
            elif status < 300 and kind == "application/json":
                take(await self._read_body(response, 0, body.get("method")))
            return answer, status, response.headers.get("mcp-session-id")

    async def _renew(self, lost: str) -> None:
        """Open a new session in place of ``lost``, once however many requests found it gone.

        The new session gets what the session had been told: ``initialize``
        (as first sent), ``notifications/initialized``, the last
        ``logging/setLevel`` and the ``resources/subscribe`` still in force;
        and a GET stream of its own.
        """
        async with self._renewing:
            if self._session_id != lost:
                return  # another request renewed it meanwhile
            self._log(f"{self.name} forgot our session; opening a new one")
            self._session_id = None
            initialize = self._initialize
            if initialize is None:
                raise SessionExpired(f"{self.name} no longer knows the session", url=display_url(self.url))
            answer, status, session = await self._private(decode(initialize))
            if not isinstance(answer.get("result"), dict) or session is None or not valid_session_id(session):
                raise SessionExpired(
                    f"{self.name} forgot our session, and opening a new one failed (HTTP {status})",
                    url=display_url(self.url),
                    status=status,
                )
            self._session_id = session
            if self._initialized is not None:
                await self._run_other(self._initialized, decode(self._initialized))
            for method, message in list(self._session_state.items()):
                try:
                    answer, status, _ = await self._private(message)
                except MCPError as exc:
                    answer, status = {"error": str(exc)}, 0
                if "result" not in answer:
                    self._log(
                        f"the new session refused {method[0]} again (HTTP {status}): {answer.get('error')!r}"
                    )
            if self._get_started and not self._get_running and self._nursery is not None:
                # The old session's stream ended with it: one for the new session.
                self._nursery.start_soon(self._get_stream)

    # ----------------------------------------------------- the GET stream

    async def _get_stream(self) -> None:
        """The initialize era's stream of server messages that belong to no request."""
        self._get_running = True
        try:
            await self._read_server_messages()
        finally:
            self._get_running = False

    async def _read_server_messages(self) -> None:
        parser = EventParser(self._max)
        failures = 0

        while not self._closing:
            try:
                async with self._exchange(
                    "GET", self.url, self._stream_headers(parser.last_event_id)
                ) as response:
                    status = response.status_code
                    kind = media_type(response.headers.get("content-type"))
                    if status in (405, 409) or status in (400, 404):
                        why = {405: "offers none", 409: "says one is open already"}.get(
                            status, f"answered {status}"
                        )
                        self._log(f"no stream of server messages: {self.name} {why}")
                        return
                    if status != 200 or kind != "text/event-stream":
                        failures += 1
                        self._log(
                            f"the stream of server messages got HTTP {status} ({kind or 'no content type'})"
                        )
                    else:
                        before = len(self._seen)
                        _, cause = await self._pump(response, parser, self._pass_on, strict=False)
                        failures = 0 if len(self._seen) != before else failures + 1
                        if cause is not None:
                            self._log(f"the stream of server messages broke: {_network_error(cause)}")
            except MCPError as exc:
                failures += 1
                self._log(f"the stream of server messages failed: {exc}")
            if failures >= MAX_GET_FAILURES:
                self._log(f"the stream of server messages failed {failures} times in a row; given up")
                return
            await trio.sleep(self._retry_delay(parser, failures + 1))

    # -------------------------------------------------- HTTP+SSE (2024-11-05)

    async def _try_sse(self, initialize: bytes) -> bool:
        """Try the HTTP+SSE transport; `True` once ``initialize`` went out over it."""
        assert self._nursery is not None
        try:
            endpoint = await self._nursery.start(self._sse_stream)
        except MCPError as exc:
            self._log(f"{self.name} does not speak the HTTP+SSE transport of 2024-11-05 either: {exc}")
            return False
        self._endpoint = endpoint
        self._log(
            f"{self.name} speaks the HTTP+SSE transport of 2024-11-05 (messages go to {display_url(endpoint)})"
        )
        await self._post_sse(initialize)
        return True

    async def _sse_stream(self, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        receiver = self._receiver
        assert receiver is not None
        headers = httpx.Headers(self._user_headers)
        headers["accept"] = "text/event-stream"
        parser = EventParser(self._max)
        endpoint: str | None = None
        async with self._exchange("GET", self.url, headers) as response:
            kind = media_type(response.headers.get("content-type"))
            if response.status_code != 200 or kind != "text/event-stream":
                raise HTTPError(
                    f"GET {display_url(self.url)} got HTTP {response.status_code} ({kind or 'no content type'})",
                    url=display_url(self.url),
                    status=response.status_code,
                )

            def take(chunk: bytes) -> bool:
                nonlocal endpoint
                for item in parser.feed(chunk):
                    if endpoint is None:
                        if isinstance(item, Event) and item.type == "endpoint":
                            target = str(httpx.URL(self.url).join(item.data.strip()))
                            if not same_origin(self.url, target):
                                raise HTTPError(
                                    f"{self.name} named an endpoint on another origin ({display_url(target)}); refused",
                                    url=display_url(self.url),
                                )
                            endpoint = target
                            task_status.started(target)
                        continue
                    try:
                        self._item(item, self._pass_on, strict=False)
                    except ProtocolError as exc:
                        self._log(str(exc))
                return False

            _, cause = await consume(response, take)
            if endpoint is None:
                raise HTTPError(
                    f"GET {display_url(self.url)} opened an event stream that named no endpoint",
                    url=display_url(self.url),
                    status=response.status_code,
                )
        if not self._closing and not self._ended:
            self._ended = True
            how = f" ({_network_error(cause)})" if cause is not None else ""
            receiver.channel_ended(ServerGone(f"{self.name} closed its event stream{how}", server=self.name))

    async def _post_sse(self, data: bytes) -> None:
        assert self._endpoint is not None
        headers = httpx.Headers(self._user_headers)
        headers["content-type"] = "application/json"
        async with self._exchange("POST", self._endpoint, headers, data) as response:
            status = response.status_code
            body = await _read_some(response, ERROR_BODY_READ)
            if status >= 300:
                raise self._http_error(response, f"{self.name} refused a message with HTTP {status}", body)

    # ---------------------------------------------------------------- close

    async def aclose(self, deadline: float | None = None) -> None:
        if deadline is None:
            deadline = trio.current_effective_deadline()
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        with trio.CancelScope(shield=True):
            if self._nursery is not None:
                self._nursery.cancel_scope.cancel()
                await self._finished.wait()
            grace = max(0.0, min(CLOSE_GRACE, deadline - trio.current_time()))
            with trio.move_on_after(grace):
                if self._session_id is not None and self._endpoint is None and self._client is not None:
                    try:
                        async with self._exchange("DELETE", self.url, self._stream_headers()):
                            pass
                    except MCPError:
                        pass
            if self._own_client and self._client is not None:
                with trio.move_on_after(max(0.0, min(CLOSE_GRACE, deadline - trio.current_time()))):
                    await self._client.aclose()
        self._closed.set()


async def _read_some(response: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of a body (an error page, say); a broken body gives what came."""
    chunks: list[bytes] = []
    size = 0

    def take(chunk: bytes) -> bool:
        nonlocal size
        chunks.append(chunk)
        size += len(chunk)
        return size >= limit

    await consume(response, take)
    return b"".join(chunks)[:limit]


#: Events up to this size are checked to be JSON before they are delivered
#: (larger ones are left to the session, which reads them anyway).
_CHECKED_EVENT: Final = 64 * 1024


def _may_be_json(data: bytes) -> bool:
    """Whether an event's data may be a JSON-RPC message: an object or array that parses (for small ones)."""
    if data.lstrip()[:1] not in (b"{", b"["):
        return False
    if len(data) > _CHECKED_EVENT:
        return True
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            decode(data)  # what orjson refuses and Python's json reads (NaN, huge integers)
        except UnreadableJSON:
            return False
    return True


async def consume(response: httpx.Response, take: Callable[[bytes], bool]) -> tuple[bool, Exception | None]:
    """Hand a body's chunks to ``take`` until it returns `True` (then `True`) or the body ends (`False`).

    Returns the network error that cut the body short, if one did; raises
    what ``take`` raises. Reading stops by cancellation rather than by
    leaving the loop: the body's chain of async generators then runs to its
    end, instead of being left to the garbage collector half-way.
    """
    done = False
    failure: MCPError | None = None
    cause: Exception | None = None
    with trio.CancelScope() as scope:
        try:
            async for chunk in response.aiter_bytes():
                if done or failure is not None:
                    continue
                try:
                    done = take(chunk)
                except MCPError as exc:
                    failure = exc
                if done or failure is not None:
                    scope.cancel()
        except httpx.HTTPError as exc:
            cause = exc
    if failure is not None:
        raise failure
    return done, cause


def _network_error(exc: BaseException | None) -> str:
    if exc is None:
        return "the stream ended"
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({text})"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the server broke the HTTP protocol ({text})"
    return f"{type(exc).__name__}: {text}"
