"""The HTTP channel: MCP over Streamable HTTP, with httpx2, on Trio.

A thin I/O loop over the pure core (`trio_mcp._core.streamable_http`), as
httpcore is over h11: the core holds the session, the exchanges, the event
ids, the renewals, and decides; this module moves bytes with httpx2 and does
what the core says.

Every message the session sends is one POST to the server's endpoint. The
answer to a request comes back on that POST: a JSON body, or an event stream
(``text/event-stream``) that may carry notifications and, in the initialize
era, the server's own requests, before the answer. Each request is one task
of the channel's nursery, owning its POST: cancelling that task aborts the
exchange, which is how a request is cancelled in the 2026-07-28 era. The
channel never reads the JSON it sends: the session tells it each message's
method, name, id and revision (`trio_mcp._channel.Outgoing`).

* A 2026-07-28-era message is sent with ``MCP-Protocol-Version``,
  ``Mcp-Method`` and ``Mcp-Name``, and no session.
* ``initialize`` goes without session or version headers; the session id
  (``Mcp-Session-Id``) is taken only from its successful answer, and every
  later message carries it with the negotiated version. Once
  ``notifications/initialized`` is through, a GET stream carries the
  server's messages that belong to no request; later requests wait until it
  is open (or refused), so that nothing the server sends on it at once is
  lost. It is reopened (with ``Last-Event-ID``) when it drops. A POST
  stream cut before its answer is resumed the same way when its events had
  ids. A request refused for an unknown session opens a new session, once
  however many requests found it lost, and is sent again once. Closing
  sends ``DELETE``, bounded and shielded.
* When ``initialize`` itself is refused with 400, 404 or 405 and no
  JSON-RPC body, the server may speak the HTTP+SSE transport of 2024-11-05
  (`trio_mcp._transports.http_sse`, over `trio_mcp._core.http_sse`).

Nothing here decides the era: the session's negotiation does, over this
channel, exactly as over stdio. HTTP answers that are not MCP messages fail
their request with a typed error (`HTTPError` and subclasses).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import httpx2
import trio

from .._channel import Channel, Outgoing
from .._core.sse import EventParser
from .._core.streamable_http import (
    READ_GET,
    Action,
    AwaitRenewal,
    Call,
    Deliver,
    Fail,
    GetEnded,
    GetFailed,
    GetHead,
    GetRequest,
    Log,
    Next,
    OpenGet,
    PostCall,
    PostMessage,
    Read,
    Send,
    SendSse,
    Sleep,
    StreamableHTTP,
)
from .._errors import ConnectionFailed, MCPError, ServerGone
from ._httpx_client import DEFAULT_TIMEOUT, DirectSend, own_client
from .http_io import (
    display_url,
    exchange,
    lower_headers,
    network_error,
    note_location,
    pump,
    read_body,
    read_some,
    retire_connection,
)
from .http_sse import SseLink, SseOps

if TYPE_CHECKING:
    from collections.abc import Generator, Mapping
    from contextlib import AbstractAsyncContextManager

    from .._channel import Receiver, TaskStarter
    from .._core.sse import Item

__all__ = ["DEFAULT_TIMEOUT", "HTTPChannel"]

#: How long closing waits for the ``DELETE`` of a session (and the pool's close).
CLOSE_GRACE: Final = 2.0
#: How long closing lets the notifications and answers in flight finish.
OTHERS_GRACE: Final = 0.5
#: How much of an error body is read.
ERROR_BODY_READ: Final = 64 * 1024
#: The protocol's own headers, which the user's headers cannot set.
_OWN_HEADERS: Final = (
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
)


class HTTPChannel(Channel):
    """A channel to an MCP server over Streamable HTTP (and HTTP+SSE of 2024-11-05).

    Args:
        url: The server's MCP endpoint, used exactly as given.
        headers: Headers sent with every request (``Authorization``, say).
            The protocol's own headers are set by the channel and cannot be
            replaced.
        auth: An `httpx2.Auth` applied to every request (GET and DELETE too).
            An exception it raises fails the request with an `HTTPError`
            whose ``__cause__`` it is.
        http_client: An `httpx2.AsyncClient` of yours (proxies, TLS, pool):
            used as it is, and not closed. Without one the channel makes its
            own (`DEFAULT_TIMEOUT`, ``trust_env``) and closes it. A client
            left with httpx2's default timeout (5 s on everything) gets
            `DEFAULT_TIMEOUT` per request instead, so that it does not cut
            a slow answer.
        max_message_bytes: The largest message (JSON body or event) accepted.
        trust_env: For the channel's own client: whether the environment's
            proxy variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``,
            ``NO_PROXY``), ``SSL_CERT_FILE`` and ``.netrc`` apply.
        handshake_timeout: How long requests after ``notifications/initialized``
            may wait for it (and for the GET stream to open) before they go
            anyway; `None`: 60 s.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
        http_client: httpx2.AsyncClient | None = None,
        max_message_bytes: int,
        trust_env: bool = True,
        handshake_timeout: float | None = None,
    ) -> None:
        self.url = url
        self._name = f"server {display_url(url)!r}"
        self._core = StreamableHTTP(self._name, display_url(url))
        self._user_headers = httpx2.Headers(dict(headers) if headers is not None else None)
        for name in _OWN_HEADERS:
            self._user_headers.pop(name, None)
        self._user_items = self._user_headers.multi_items()
        #: For the channel's own client: the requests it sends itself (`DirectSend`).
        self._direct: DirectSend | None = None
        self._auth: Any = auth if auth is not None else httpx2.USE_CLIENT_DEFAULT
        self._client = http_client
        self._own_client = http_client is None
        self._trust_env = trust_env
        self._timeout: Any = httpx2.USE_CLIENT_DEFAULT
        self._max = max_message_bytes
        self._gate_limit = 60.0 if handshake_timeout is None else handshake_timeout
        self._receiver: Receiver | None = None
        self._nursery: trio.Nursery | None = None
        self._ready = trio.Event()
        self._finished = trio.Event()
        self._closing = False
        self._closed = trio.Event()
        self._ended = False
        self._scopes: dict[int | str, trio.CancelScope] = {}
        self._withdrawn: set[int] = set()
        self._parked: dict[int | str, trio.Event] = {}
        #: Set (and replaced) whenever a renewal or the handshake ends: calls waiting ask again.
        self._settled = trio.Event()
        #: Set once the GET stream's first response came (or failed).
        self._get_ready = trio.Event()
        self._sse: SseLink | None = None
        #: Notification and answer POSTs in flight, which closing lets finish (briefly).
        self._others = 0
        self._others_done = trio.Event()

    @property
    def name(self) -> str:
        return self._name

    @property
    def session_id(self) -> str | None:
        """The HTTP session of the initialize era (``Mcp-Session-Id``), or `None`."""
        return self._core.session_id

    @property
    def transport(self) -> str:
        """``"streamable-http"``, or ``"sse"`` once the server turned out to speak HTTP+SSE (2024-11-05)."""
        return "sse" if self._sse is not None else "streamable-http"

    # --------------------------------------------------------------- start

    async def start(self, start_task: TaskStarter, receiver: Receiver) -> None:
        self._receiver = receiver
        if self._client is None:
            self._client, transport = own_client(trust_env=self._trust_env)
            if transport is not None and self._auth is httpx2.USE_CLIENT_DEFAULT:
                self._direct = DirectSend(self._client, transport, self.url, self._user_headers, _OWN_HEADERS)
        elif self._client.timeout == httpx2.Timeout(5.0):
            # httpx2's default: 5 s on reads cuts slow tools and every stream.
            self._timeout = DEFAULT_TIMEOUT
        start_task(self._run, "http")
        try:
            await self._ready.wait()
        except BaseException:
            # Cancelled while starting: end what was started, then say so.
            self._closing = True
            with trio.CancelScope(shield=True):
                with trio.move_on_after(CLOSE_GRACE):
                    await self._ready.wait()
                if self._nursery is not None:
                    self._nursery.cancel_scope.cancel()
                    with trio.move_on_after(CLOSE_GRACE):
                        await self._finished.wait()
                if self._own_client and self._client is not None:
                    with trio.move_on_after(CLOSE_GRACE):
                        await self._client.aclose()
            self._closed.set()
            raise

    async def _run(self) -> None:
        if self._own_client and self._client is not None:
            # Keep a redirect's Location with its request: httpx2 may refuse it first.
            self._client.event_hooks["response"].append(note_location)
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._ready.set()
                await trio.sleep_forever()
        finally:
            self._finished.set()

    def _log(self, text: str) -> None:
        if self._receiver is not None and not self._closing:
            self._receiver.channel_log(text)

    def _act(self, actions: list[Action]) -> None:
        """Do what the core decided: deliver, log, or fail (raise) the call."""
        receiver = self._receiver
        assert receiver is not None
        for action in actions:
            if isinstance(action, Deliver):
                receiver.message_received(action.data)
                call = action.call
                if call is not None:
                    event = self._parked.get(call.request_id)
                    if event is not None:
                        event.set()
                    scope = self._scopes.get(call.request_id) if action.ends_exchange else None
                    if scope is not None:
                        scope.cancel()
            elif isinstance(action, Log):
                self._log(action.text)
            else:
                raise action.error

    # ------------------------------------------------------------- sending

    def send(self, data: bytes, about: Outgoing, *, batch: bool = False) -> None:
        nursery = self._nursery
        if self._closing or self._ended or nursery is None:
            return
        request_id = about.request_id
        method = about.method
        if request_id is not None and method is not None:
            call = self._core.open(data, method, request_id, about.name, about.revision, about.headers)
            nursery.start_soon(self._run_request, call, request_id)
            return
        if self._core.gates(method, about.revision):
            # Started now: requests sent from now on wait until the server has it.
            script = self._core.handshake(data)
            nursery.start_soon(self._run_handshake, script, next(script), about)
            return
        # Counted now, not when its task first runs: a close that follows at
        # once (a call given up, then the block left) still lets it out.
        self._others += 1
        nursery.start_soon(self._run_other, data, about, True)

    def withdraw(self, request_id: int) -> bool:
        call = self._core.find(request_id)
        modern = call is not None and call.revision is not None
        scope = self._scopes.get(request_id)
        if scope is not None:
            # Closing the stream: the 2026-07-28 era's cancellation. In the
            # initialize era the session sends notifications/cancelled too.
            scope.cancel()
        elif call is not None:
            # Not sent yet: it never will be.
            self._withdrawn.add(request_id)
        if self._sse is not None:
            self._sse.withdrawn(request_id)
        return modern

    def _headers(self, protocol: Mapping[str, str]) -> list[tuple[str, str]]:
        """The user's headers, then the protocol's (no name in both: the user's lost theirs)."""
        return [*self._user_items, *protocol.items()]

    def _exchange(
        self,
        method: str,
        url: str,
        headers: httpx2.Headers | list[tuple[str, str]],
        content: bytes | None = None,
        protocol: Mapping[str, str] | None = None,
    ) -> AbstractAsyncContextManager[httpx2.Response]:
        """One HTTP exchange, streaming, following redirects to the same origin (`trio_mcp._transports.http_io.exchange`).

        ``protocol``: the request's protocol headers, when the channel's own
        client may have it sent directly (`DirectSend`).
        """
        assert self._client is not None
        client, timeout = self._client, self._timeout
        direct = (self._direct, protocol) if self._direct is not None and protocol is not None else None
        return exchange(
            client,
            method,
            url,
            headers,
            content,
            auth=self._auth,
            request_timeout=timeout,
            name=self.name,
            direct=direct,
        )

    # ------------------------------------------------------------ requests

    async def _run_request(self, call: Call, request_id: int) -> None:
        receiver = self._receiver
        assert receiver is not None
        try:
            if request_id in self._withdrawn:
                return
            with trio.CancelScope() as scope:
                self._scopes[request_id] = scope
                try:
                    await self._request(call)
                except MCPError as exc:
                    if self._sse is not None:
                        self._sse.withdrawn(request_id)
                    receiver.request_failed(request_id, exc)
        finally:
            self._withdrawn.discard(request_id)
            self._scopes.pop(request_id, None)
            self._parked.pop(request_id, None)
            self._core.finish(call)

    async def _request(self, call: Call) -> None:
        """Run ``call`` as the core orders it (`StreamableHTTP.next_step`)."""
        core = self._core
        step = core.next_step(call, None)
        while True:
            if isinstance(step, Send):
                outcome = await self._post(call)
                if outcome is None:
                    return
                step = core.next_step(call, outcome)
            elif isinstance(step, SendSse):
                assert self._sse is not None
                await self._sse.post(call.data, call.request_id)
                return
            elif isinstance(step, Fail):
                raise step.error
            else:  # AwaitGate, AwaitRenewal: wait until a script ends, then ask again
                settled = self._settled
                if isinstance(step, AwaitRenewal) and step.start:
                    assert self._nursery is not None
                    self._nursery.start_soon(self._renew)
                await settled.wait()
                step = core.next_step(call, step.then)

    async def _post(self, call: Call) -> Next | None:
        """POST ``call`` once and read its answer: `None` when done, or `Next.LOST` / `Next.RESEND`."""
        core = self._core
        protocol = core.post_headers(call)
        exchange = call.exchange
        answered = False
        try:
            async with self._exchange(
                "POST", self.url, self._headers(protocol), call.data, protocol
            ) as response:
                answered = True
                outcome = await self._read_post(call, response, exchange)
        except ConnectionFailed:
            # No response at all (a kept-alive connection the server had just
            # closed): a method without side effects goes once more.
            if answered or not core.unanswered(call):
                raise
            self._log(f"{call.method} got no response from {self.name}; sending it once more")
            return Next.RESEND
        if isinstance(outcome, Read):  # Read.PARKED
            # The answer comes on the GET stream (it may have come already),
            # or never (the caller's deadline).
            event = self._parked.setdefault(call.request_id, trio.Event())
            if not call.answered:
                await event.wait()
            return None
        return outcome

    async def _read_post(
        self, call: Call, response: httpx2.Response, exchange: int
    ) -> Next | Literal[Read.PARKED] | None:
        """Read the response to ``call``'s POST: `None` when done, or `Next.LOST`, `Next.RESEND`,
        `Read.PARKED`."""
        core = self._core
        status = response.status_code
        head = lower_headers(response.headers)
        verdict = core.response(call, exchange, status, head)
        if isinstance(verdict, Fail):
            raise verdict.error
        if verdict is Read.JSON:
            what = f"the answer to request {call.request_id!r} ({call.method})"
            body = await read_body(response, self._max, what, self.name, core.url)
            actions = core.json_body(call, exchange, body, status)
            if any(isinstance(action, Fail) and action.out_of_step for action in actions):
                retire_connection(response)
            self._act(actions)
            return None
        if verdict is Read.EVENTS:
            await self._read_events(call, response, exchange)
            return None
        if verdict is Read.PARKED:
            self._log(
                f"{self.name} accepted request {call.request_id!r} ({call.method}) with 202; its answer"
                " may come on the stream of server messages"
            )
            return Read.PARKED
        body = await read_some(response, ERROR_BODY_READ)
        decision = core.refusal(call, exchange, status, head, body, time.time())
        if isinstance(decision, Deliver):
            self._act([decision])
            return None
        if isinstance(decision, Fail):
            raise decision.error
        if decision is Next.FALL_BACK:
            why = await self._try_sse(call)
            if why is None:
                return None
            raise core.fallback_failed(call, status, head, body, why).error
        return decision

    async def _read_events(self, call: Call, response: httpx2.Response, exchange: int) -> None:
        """Read a request's event stream until its answer; resume it when cut, if it can be."""
        core = self._core
        parser = EventParser(self._max)

        def on_item(item: Item) -> bool:
            core.stream_position(call, parser.last_event_id, parser.retry)
            self._act(core.event(call, call.exchange, item))
            return call.answered

        done, cause = await pump(response, parser, on_item)
        status = response.status_code
        while not done:
            # A priming event (an id, no data) delivers no item: the parser has its id.
            core.stream_position(call, parser.last_event_id, parser.retry)
            step = core.stream_ended(
                call, call.exchange, network_error(cause) if cause is not None else None, status
            )
            if step is None:
                return
            if isinstance(step, Fail):
                raise step.error from cause
            await trio.sleep(step.delay)
            async with self._exchange("GET", self.url, self._headers(step.headers)) as again:
                failed = core.resumed(
                    call, call.exchange, again.status_code, again.headers.get("content-type")
                )
                if failed is not None:
                    raise failed.error
                status = again.status_code
                done, cause = await pump(again, parser, on_item)

    # --------------------------------------------------- the session's side

    def _settle(self) -> None:
        """A renewal or the handshake ended: the calls waiting for it ask the core again."""
        self._settled.set()
        self._settled = trio.Event()

    def _open_get(self) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(self._get_stream)

    async def _run_handshake(
        self,
        script: Generator[PostMessage | OpenGet, None, None],
        step: PostMessage | OpenGet | None,
        about: Outgoing,
    ) -> None:
        """Run the core's handshake (`StreamableHTTP.handshake`), bounded by the handshake's timeout."""
        try:
            with trio.move_on_after(self._gate_limit):
                while step is not None:
                    if isinstance(step, PostMessage):
                        await self._run_other(step.data, about)
                    else:
                        self._open_get()
                        await self._get_ready.wait()
                    step = _advance(script)
        finally:
            script.close()
            self._settle()

    async def _run_other(self, data: bytes, about: Outgoing, counted: bool = False) -> None:
        """POST a notification or an answer to a server request; nothing comes back but 202.

        ``counted``: `send` has counted it among the posts a close waits for.
        """
        what = about.method or "answer to a server request"
        if not counted:
            self._others += 1
        try:
            if self._sse is not None:
                await self._sse.post(data, None)
                return
            protocol = self._core.message_headers(about.method, about.revision)
            async with self._exchange("POST", self.url, self._headers(protocol), data, protocol) as response:
                if response.status_code >= 300:
                    body = await read_some(response, 1024)
                    self._log(
                        f"{self.name} refused our {what} with HTTP {response.status_code}: "
                        f"{body[:200].decode('utf-8', 'replace')!r}"
                    )
        except MCPError as exc:
            self._log(f"could not send our {what}: {exc}")
        finally:
            self._others -= 1
            if not self._others:
                self._others_done.set()
                self._others_done = trio.Event()

    async def _renew(self) -> None:
        """Run the core's renewal of a lost session (`StreamableHTTP.renew`), once however many
        requests found it lost; the calls waiting ask again when it is over, however it ends."""
        script = self._core.renew()
        try:
            step = _advance(script)
            while step is not None:
                reply: MCPError | None = None
                if isinstance(step, Log):
                    self._log(step.text)
                elif isinstance(step, PostCall):
                    try:
                        await self._post(step.call)
                    except MCPError as exc:
                        reply = exc
                elif isinstance(step, PostMessage):
                    await self._run_other(step.data, _INITIALIZED)
                else:
                    self._open_get()
                step = _advance(script, reply)
        finally:
            script.close()
            self._settle()

    # ----------------------------------------------------- the GET stream

    async def _get_stream(self) -> None:
        """Run the initialize era's stream of server messages (`StreamableHTTP.get_stream`)."""
        core = self._core
        script = core.get_stream()
        parser = EventParser(self._max)

        def on_item(item: Item) -> bool:
            self._act(core.get_event(item, parser.retry))
            return False

        try:
            step = _advance(script)
            while step is not None:
                if isinstance(step, GetRequest):
                    head = False
                    try:
                        async with self._exchange("GET", self.url, self._headers(step.headers)) as response:
                            head = True
                            kind = response.headers.get("content-type")
                            step = _advance(script, GetHead(response.status_code, kind))
                            self._get_ready.set()
                            if step is READ_GET:
                                _, cause = await pump(response, parser, on_item)
                                why = network_error(cause) if cause is not None else None
                                step = _advance(script, GetEnded(why, parser.last_event_id, parser.retry))
                    except MCPError as exc:
                        why = str(exc)
                        failed: GetEnded | GetFailed = GetEnded(why) if head else GetFailed(why)
                        step = _advance(script, failed)
                    self._get_ready.set()
                    continue
                if isinstance(step, Sleep):
                    await trio.sleep(step.delay)
                elif isinstance(step, Log):
                    self._log(step.text)
                step = _advance(script)
        finally:
            script.close()
            self._get_ready.set()

    # -------------------------------------------------- HTTP+SSE (2024-11-05)

    async def _try_sse(self, call: Call) -> MCPError | None:
        """Try the HTTP+SSE transport: `None` once ``initialize`` went out over it, else why not."""
        assert self._nursery is not None
        link = SseLink(
            SseOps(
                name=self._name,
                url=self.url,
                headers=lambda: httpx2.Headers(self._user_headers),
                exchange=self._exchange,
                act=self._act,
                ended=self._sse_ended,
                max_message_bytes=self._max,
            )
        )
        try:
            endpoint = await self._nursery.start(link.run)
        except MCPError as exc:
            self._log(f"{self.name} does not speak the HTTP+SSE transport of 2024-11-05 either: {exc}")
            return exc
        self._sse = link
        self._core.fell_back = True
        self._log(
            f"{self.name} speaks the HTTP+SSE transport of 2024-11-05 (messages go to {display_url(endpoint)})"
        )
        await link.post(call.data, call.request_id)
        return None

    def _sse_ended(self, error: ServerGone) -> None:
        if not self._closing and not self._ended and self._receiver is not None:
            self._ended = True
            self._receiver.channel_ended(error)

    # ---------------------------------------------------------------- close

    async def aclose(self, deadline: float | None = None) -> None:
        if deadline is None:
            deadline = trio.current_effective_deadline()
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        with trio.CancelScope(shield=True):
            if self._others:
                # A notifications/cancelled just sent, say: let it reach the server.
                with trio.move_on_after(max(0.0, min(OTHERS_GRACE, deadline - trio.current_time()))):
                    while self._others:
                        await self._others_done.wait()
            if self._nursery is not None:
                self._nursery.cancel_scope.cancel()
                await self._finished.wait()
            grace = max(0.0, min(CLOSE_GRACE, deadline - trio.current_time()))
            delete = self._core.delete_headers()
            with trio.move_on_after(grace):
                if delete is not None and self._client is not None:
                    try:
                        async with self._exchange("DELETE", self.url, self._headers(delete)):
                            pass
                    except MCPError:
                        pass
            if self._own_client and self._client is not None:
                with trio.move_on_after(max(0.0, min(CLOSE_GRACE, deadline - trio.current_time()))):
                    await self._client.aclose()
        self._closed.set()


#: The record of ``notifications/initialized`` (sent again to a renewed session).
_INITIALIZED: Final = Outgoing("notifications/initialized")


_Step = TypeVar("_Step")


def _advance(script: Generator[_Step, Any, None], reply: object = None) -> _Step | None:
    """The core script's next step after ``reply`` (`None` when it is over)."""
    try:
        return script.send(reply)
    except StopIteration:
        return None
