"""The Trio session: one JSON-RPC connection over a message channel.

Everything that can be decided without I/O lives in the pure core
(`trio_mcp._core`); moving messages is the channel's job (`trio_mcp._channel`:
a child process, a Trio stream, an in-memory server, HTTP). The session sits
between the two and owns what needs Trio: correlation of answers with the
tasks that wait for them, deadlines and cancellation, the server's requests
and the delivery of notifications. It knows nothing about processes.

* A request is a slot in a table. The caller's own task parks on it; whoever
  reads the answer fills it and wakes the task. The caller's task also runs
  the request's ``on_notification`` callback, so a slow callback delays only
  its own request, never the reader and never anybody else's answer.
* A lone request may read its own answer in its own task (`Channel.read_until`),
  with no task switch at all; while others are in flight the channel's reader
  task reads for everyone.
* One watcher task keeps every request's deadline (no cancel scope per
  request), when the connection-wide ``request_timeout`` is set.
* Server requests run in tasks of their own, at most 64 at once
  (`trio_mcp._session.server_requests`); none starts once the session is closing or failed, and closing
  cancels every one, so that close is bounded whatever the handlers do.
* Closing fails everything in flight with `TransportClosed`, then closes the
  channel, bounded by the channel's grace and by the caller's deadline.
"""

from __future__ import annotations

import logging
import math
import weakref
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeAlias, TypeVar

import attrs
import trio

from .._channel import ANSWER, Outgoing
from .._core.jsonrpc import (
    Answered,
    Connection,
    Diagnostic,
    Event,
    Failed,
    Note,
    Send,
    ServerRequest,
    ServerRequestCancelled,
)
from .._core.limits import LogLimiter
from .._errors import MCPError, SpawnFailed, TransportClosed
from .._options import ConnectionOptions, NotificationCallback, RequestHandler, SessionOptions
from .._trio.nursery import reraise
from .._trio.parking import Parking
from .delivery import Mailbox, NotificationStream, Sink, call_maybe_async, fresh_error
from .server_requests import ServerRequests

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from types import TracebackType

    from .._channel import Channel
    from .._core.framing import Oversized

__all__ = [
    "Attachment",
    "Observer",
    "RequestTimeout",
    "Session",
    "SessionStatistics",
    "attach",
    "new_session",
    "next_request_id",
    "observer_of",
    "report",
    "start_in",
    "start_soon",
    "stop_serving_requests",
]

JSON: TypeAlias = Any

_logger = logging.getLogger("trio_mcp.transport")


class RequestTimeout(MCPError, trio.TooSlowError):
    """A request outlived a budget the library keeps.

    Raised when the connection-wide ``request_timeout`` (off by default) or a
    step the library runs itself (the handshake, ``input_timeout``) runs out
    of time. The connection survives: the request was withdrawn (the server
    was sent ``notifications/cancelled``), a late answer to it is dropped,
    and the next request goes out normally. It is also a `trio.TooSlowError`,
    the error `trio.fail_after` raises, so code that handles Trio timeouts
    handles this one too.

    Attributes:
        method: The method of the request that timed out.
        timeout: The budget it had, in seconds.
        server: Who the request went to, e.g. ``server 'node index.js' (pid 4242)``.
    """

    def __init__(
        self, message: str = "request timed out", *, method: str = "", timeout: float = 0.0, server: str = ""
    ) -> None:
        super().__init__(message)
        self.method = method
        self.timeout = timeout
        self.server = server


@attrs.frozen
class SessionStatistics:
    """A snapshot of a session's counters, from `Session.statistics` (and `Client.statistics`)."""

    pid: int | None
    """The server's process id, or `None` when it is not a local process (or never started)."""
    returncode: int | None
    """The server's exit status once it has been reaped; minus the signal number if a signal ended it."""
    requests_in_flight: int
    """Requests sent and not yet answered."""
    requests_sent: int
    """Requests written since the start."""
    notifications_received: int
    """Notifications the server sent."""
    notifications_dropped: int
    """Notifications not delivered to a full subscriber or callback backlog."""
    messages_dropped: int
    """How many messages from the server were dropped or worked around (unreadable
    lines, answers to no request in flight, broken envelopes), each reported through ``on_log``."""
    stderr_lines: int
    """Lines the server wrote to stderr."""
    server_requests_received: int
    """Requests the server sent us (initialize era)."""


class Observer(Protocol):
    """What the session tells its telemetry (`trio_mcp._telemetry`), when it has one.

    A session's own requests and notifications are traced by the traced
    session (a subclass); these are the messages that do not pass through
    `Session.request` or `Session.notify`.
    """

    def notified(self, method: str) -> None:
        """The session sent the notification ``method`` by itself (``notifications/cancelled``)."""

    async def serve(self, handler: RequestHandler, event: ServerRequest) -> object:
        """Run ``handler`` on the server's request ``event`` and return what it returns."""


class Attachment:
    """A client layer's hold on a session: its server-request handler and its notification handler.

    Made by `attach`; `detach` gives the session back. One client at
    a time: while it is attached, the server's requests go to its
    ``on_request`` and the notifications no request claims reach its
    ``on_notification`` first.
    """

    def __init__(
        self,
        session: Session,
        on_request: RequestHandler | None,
        on_notification: NotificationCallback | None,
    ) -> None:
        self.session = session
        self.on_request = on_request
        self.on_notification = on_notification

    @property
    def attached(self) -> bool:
        """Whether this attachment still holds its session."""
        return self.session._attachment is self

    def detach(self) -> None:
        """Stop handling the session's requests and notifications; idempotent."""
        if self.session._attachment is self:
            self.session._attachment = None


class Session:
    """A JSON-RPC connection to one MCP server, over any message channel.

    For raw JSON-RPC, without the MCP client on top: `open_session` (an
    ``async with`` block owns it) and `connect_session` (in a nursery of
    yours; `aclose` is yours to call) make one over any target, and one sits
    under every `Client` (`Client.session`).

    Everything it raises is an `MCPError`: `ServerGone` when the server dies
    (and for every call after), `TransportClosed` once closed, `RpcError` for
    an error answer, `ProtocolError` for a broken one, `RequestTimeout` for a
    ``request_timeout`` that ran out.

    It is made by the openers, never directly: ``Session(...)`` raises
    `TypeError`.
    """

    request_timeout: float | None
    """The budget of every request, in seconds, or `None` for no budget (the default)."""

    def __init__(self, *args: object) -> None:
        raise TypeError(
            "a Session is made by the openers: open_session(target) or connect_session(nursery, target)"
            " (and every Client has one: Client.session)"
        )

    def _setup(
        self, channel: Channel, options: ConnectionOptions | None = None, *, observer: Observer | None = None
    ) -> None:
        options = options if options is not None else ConnectionOptions()
        self._channel = channel
        self.request_timeout = options.request_timeout
        self._on_log = options.on_log
        self._on_wire = options.on_wire
        self._notification_buffer = options.notification_buffer
        own = options if isinstance(options, SessionOptions) else SessionOptions()
        self._handler = own.on_request
        self._limiter = LogLimiter()
        self._receiver = _Receiver(self)

        self._conn = Connection()
        self._calls: dict[int, Mailbox] = {}
        self._sink: Sink[Attachment] | None = None
        self._sink_running = False
        self._own_sink = own.on_notification
        self._attachment: Attachment | None = None
        self._streams: weakref.WeakSet[NotificationStream] = weakref.WeakSet()

        self._nursery: trio.Nursery | None = None
        self._nursery_manager: Any = None
        self._shield = False
        self._scopes: list[trio.CancelScope] = []
        self._failure: MCPError | None = None
        self._failed: trio.Event | None = None
        self._started = False
        self._running = False
        self._closing = False
        self._closed = trio.Event()

        self._timer = Parking()
        self._timer_wake_at = math.inf
        self._last_deadline = -math.inf
        self._deadlines_ordered = True

        self._observer = observer
        self._server_requests = ServerRequests(
            self._conn, self._send, self._log, None if observer is None else observer.serve
        )

        self._requests_sent = 0
        self._notes_received = 0
        self._notes_dropped = 0
        self._lines_dropped = 0
        self._last_dropped = ""
        self._stray_lines = 0
        self._first_stray = ""

    # ------------------------------------------------------------ lifecycle

    @property
    def name(self) -> str:
        """Who is on the other end, as messages name it, e.g. ``server 'node index.js' (pid 4242)``."""
        return self._channel.name

    @property
    def pid(self) -> int | None:
        """The server's process id, or `None` when it is not a local process (or never started)."""
        return self._channel.pid

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (bounded), when it is a local process."""
        return self._channel.stderr_tail

    async def __aenter__(self) -> Self:
        if self._started:
            raise RuntimeError(f"a {type(self).__name__} can only be entered once")
        manager = trio.open_nursery()
        nursery = await manager.__aenter__()
        try:
            await self._start(nursery, shield=True)
        except BaseException as exc:
            # Nothing was left running: a channel whose start fails cleans up
            # after itself, so the nursery is empty.
            self._nursery = None
            try:
                await manager.__aexit__(None, None, None)
            except BaseExceptionGroup as group:
                reraise(group, exc)
            raise
        self._nursery_manager = manager
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if self._nursery_manager is None:
            return False
        suppress = False
        try:
            await self.aclose()
        finally:
            suppress = await self._exit_nursery(exc_type, exc, tb)
        return suppress

    async def _exit_nursery(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        manager, self._nursery_manager = self._nursery_manager, None
        nursery = self._nursery
        ours = isinstance(exc, trio.Cancelled) and nursery is not None and nursery.cancel_scope.cancel_called
        try:
            if ours:
                # A background task crashed and the nursery cancelled the
                # body: that cancellation is the nursery's to absorb.
                return bool(await manager.__aexit__(exc_type, exc, tb))
            # Otherwise the body's exception is not handed to the nursery:
            # every background task is finished by now, and the user's error
            # must reach the user unwrapped.
            await manager.__aexit__(None, None, None)
        except BaseExceptionGroup as group:
            reraise(group, None if ours else exc)
        return False

    async def _start(self, nursery: trio.Nursery, *, shield: bool) -> None:
        if self._started:
            raise RuntimeError(f"a {type(self).__name__} can only be started once")
        self._started = True
        self._nursery = nursery
        self._shield = shield
        try:
            await self._channel.start(self._start_task, self._receiver)
        except SpawnFailed as exc:
            self._failure = exc
            self._closed.set()
            raise
        except BaseException:
            self._closing = True
            self._closed.set()
            raise
        self._running = True
        self._start_task(self._expire_requests, "expire_requests")
        if self._sink is not None or self._own_sink is not None:
            self._install_sink()

    def _start_task(self, fn: Callable[[], Awaitable[None]], name: str) -> None:
        # Shielded in ``async with`` mode: the caller's cancel scopes surround
        # our nursery, but the background tasks must live until aclose()
        # ends them, so that code the caller shields keeps a working
        # connection.
        scope = trio.CancelScope(shield=self._shield)
        self._scopes.append(scope)

        async def run() -> None:
            with scope:
                await fn()

        assert self._nursery is not None
        self._nursery.start_soon(run, name=f"trio_mcp:{name}")

    async def aclose(self) -> None:
        """Close the connection and stop the server; idempotent and bounded.

        Requests in flight fail with `TransportClosed`, and so does everything
        attempted afterwards; the server's requests still running are
        cancelled. Then the channel is closed: for a child process, its stdin
        is closed (how a well-behaved server is asked to stop) and it gets
        ``kill_grace`` seconds to exit, then its whole process group gets
        SIGTERM and, a second later, SIGKILL, and it is reaped.

        This is shielded from cancellation and bounded in time (about
        ``kill_grace + 3`` seconds at worst), and never takes much longer than
        the caller's own deadline: inside ``trio.move_on_after(1)``, or once
        the caller's scope is cancelled, the server gets correspondingly less
        grace. A second call waits for the first to finish.
        """
        if not self._running:
            await trio.lowlevel.checkpoint()
            return
        if self._closing:
            await self._closed.wait()
            return
        deadline = trio.current_effective_deadline()
        self._closing = True
        with trio.CancelScope(shield=True):
            closed = TransportClosed(f"the connection to {self.name} was closed")
            if self._failure is not None:
                closed.__cause__ = self._failure
            self._fail(closed, quiet_streams=True)
            try:
                await self._channel.aclose(deadline)
            finally:
                for scope in self._scopes:
                    scope.cancel()
                summary = self._limiter.flush(trio.current_time())
                if summary is not None:
                    self._emit(summary)
        self._closed.set()

    @property
    def closing(self) -> bool:
        """Whether `aclose` has begun."""
        return self._closing

    @property
    def failure(self) -> MCPError | None:
        """Why the session can no longer be used (`ServerGone`, `TransportClosed`, ...), or `None`."""
        return self._failure

    async def wait_failed(self) -> MCPError:
        """Wait until the session can no longer carry requests; return why.

        That is `ServerGone` when the server dies (or breaks its end of the
        connection), `TransportClosed` once the session is closed: the
        moment `failure` is set. For supervisors, which start the server
        again when it dies.
        """
        if self._failure is None:
            if self._failed is None:
                self._failed = trio.Event()
            await self._failed.wait()
        else:
            await trio.lowlevel.checkpoint()
        assert self._failure is not None
        return self._failure

    def check_usable(self) -> None:
        """Raise the reason the session cannot carry requests, if there is one.

        Raises:
            ServerGone: The server died.
            TransportClosed: The session was closed.
            SpawnFailed: The server never started.
            RuntimeError: The session was not started.
        """
        if self._failure is not None:
            raise fresh_error(self._failure)
        if not self._running:
            raise RuntimeError(f"use the {type(self).__name__} inside 'async with' (it was not started)")

    # ------------------------------------------------------------ requests

    async def request(
        self,
        method: str,
        params: dict[str, JSON] | None = None,
        *,
        on_notification: NotificationCallback | None = None,
        cancel_on_abandon: bool = True,
        long_lived: bool = False,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> dict[str, JSON]:
        """Send a request and wait for its result.

        Bound the wait the Trio way, with `trio.fail_after` or
        `trio.move_on_after` around the call; ``request_timeout``, off by
        default, is a connection-wide budget on top.

        Args:
            method: The JSON-RPC method, for example ``"tools/list"``.
            params: The params object (a dict that can be written as JSON), or
                `None` to send none. A ``params["_meta"]["progressToken"]``
                ties ``notifications/progress`` to this request.
            on_notification: Called (in this task, before the result is
                returned) with every notification routed to this request; may
                be sync or async. The first callback a session is ever given
                also becomes its connection-wide sink, unless the session has
                one (an ``on_notification`` option, or a client attached). An
                exception it raises abandons the request and propagates.
            cancel_on_abandon: Whether abandoning the request (a cancelled
                caller, a timeout) sends ``notifications/cancelled``. MCP
                forbids cancelling ``initialize``; pass `False` for it.
            long_lived: The request is meant to stay open (a
                ``subscriptions/listen`` stream): ``request_timeout`` does not
                apply to it.
            headers: Extra HTTP headers of this request, for channels that
                have headers (the ``Mcp-Param-*`` headers of a 2026-07-28
                ``tools/call``).

        Returns:
            The ``result`` object of the response.

        Raises:
            RpcError: The server answered with a JSON-RPC error.
            ProtocolError: The answer broke the protocol (`MessageTooLarge`
                when it was longer than ``max_message_bytes``).
            RequestTimeout: No answer within ``request_timeout``, when one
                is set.
            ServerGone: The server died (or died earlier).
            TransportClosed: The session was closed.
            TypeError: ``params`` is not a dict or cannot be written as JSON.

        Cancellation: if the caller's cancel scope cancels the wait, the
        request is abandoned (the server is sent ``notifications/cancelled``
        and a late answer is dropped), and the caller's `trio.Cancelled`
        propagates.
        """
        if self._failure is not None or not self._running:
            await trio.lowlevel.checkpoint()
            self.check_usable()
        if on_notification is not None and self._sink is None:
            self._own_sink = on_notification
            self._install_sink()
        request_id, data = self._conn.start_request(method, params, on_notification is not None)
        timeout = None if long_lived else self.request_timeout
        calls = self._calls
        if timeout is None:
            box = Mailbox(on_notification)
        else:
            # No cancel scope per request: one watcher task keeps every
            # deadline (see _expire_requests).
            deadline = trio.current_time() + timeout
            if deadline < self._last_deadline:
                self._deadlines_ordered = False  # request_timeout was lowered
            else:
                self._last_deadline = deadline
            if deadline < self._timer_wake_at:
                self._timer.wake()
            box = Mailbox(on_notification, deadline)
        calls[request_id] = box
        self._requests_sent += 1
        if self._on_wire is not None:
            self._wire("out", data)
        self._channel.send(data, Outgoing(method, request_id, params, headers), batch=len(calls) > 1)
        try:
            if len(calls) == 1 and not box.done:
                # Alone in flight: read the answer in this task, if the
                # channel can (until a notification for the callback comes,
                # or the request's own deadline: the watcher of deadlines
                # cannot reach a task that reads).
                done = box.is_done if on_notification is None else box.has_news
                if timeout is None:
                    await self._channel.read_until(done)
                else:
                    with trio.move_on_at(box.deadline):
                        await self._channel.read_until(done)
            if on_notification is None:
                while not box.done:
                    await box.wait()
            else:
                await self._wait(box)
        except BaseException:
            self._abandon(request_id, "cancelled by the client", cancel_on_abandon)
            raise
        if box.timed_out:
            self._abandon(request_id, "timed out", cancel_on_abandon)
            raise RequestTimeout(
                f"request {request_id} ({method}) to {self.name} got no answer within {timeout} s"
                f"{self._timeout_hint()}",
                method=method,
                timeout=timeout or 0.0,
                server=self.name,
            )
        if box.error is not None:
            raise box.error
        assert box.result is not None
        return box.result

    async def _wait(self, box: Mailbox) -> None:
        while True:
            if box.timed_out:
                return
            notes = box.notes
            if notes:
                note = notes.popleft()
                assert box.callback is not None
                with trio.CancelScope() as box.scope:
                    await call_maybe_async(box.callback, note)
                box.scope = None
                continue
            if box.done:
                return
            await box.park()

    async def _expire_requests(self) -> None:
        """Time requests out: one task and one cancel scope for all of them.

        A request is inserted in ``_calls`` (a dict keeps insertion order) as
        it starts, with the same ``request_timeout`` as the one before, and
        the clock only goes forward: the deadlines in ``_calls`` never
        decrease, and only the front needs looking at. (Should
        ``request_timeout`` be lowered at run time, ``_deadlines_ordered``
        says so and the whole table is scanned until it empties.)

        The watcher sleeps until the earliest pending deadline; a new request
        wakes it only when its deadline is earlier than that, which in
        practice means when the watcher was idle: once per ``request_timeout``
        at most under steady traffic, however many requests go by.
        """
        while True:
            now = trio.current_time()
            wake_at = math.inf
            ordered = self._deadlines_ordered
            for box in self._calls.values():
                if box.done:
                    continue
                if box.deadline > now:
                    wake_at = min(wake_at, box.deadline)
                    if ordered:
                        break
                    continue
                box.timed_out = True
                box.finish(None, None)
                if box.scope is not None:
                    box.scope.cancel()
            if not self._calls:
                self._deadlines_ordered = True
                self._last_deadline = -math.inf
            self._timer_wake_at = wake_at
            with trio.move_on_at(wake_at):
                await self._timer.park()

    def _timeout_hint(self) -> str:
        # A server that answers with the wrong ids, or garbles its answers,
        # looks like one that never answers: say what was dropped.
        if self._lines_dropped:
            return (
                f" ({self._lines_dropped} lines or responses were dropped so far;"
                f" the last: {self._last_dropped})"
            )
        return ""

    def _abandon(self, request_id: int, reason: str, tell_server: bool = True) -> None:
        self._calls.pop(request_id, None)
        if not self._conn.is_pending(request_id):
            return
        if (
            not tell_server
            or self._closing
            or self._failure is not None
            or self._channel.withdraw(request_id)
        ):
            self._conn.abandon(request_id)
            return
        line = self._conn.abandon(request_id, reason)
        if line is not None:
            if self._observer is not None:
                self._observer.notified("notifications/cancelled")
            self._send(line, Outgoing("notifications/cancelled"))

    async def notify(self, method: str, params: dict[str, JSON] | None = None) -> None:
        """Send a notification (no answer is expected).

        The message is queued for writing and this returns at once (it does
        not wait for the server to read it).

        Raises:
            ServerGone: The server died.
            TransportClosed: The session was closed.
            TypeError: ``params`` is not a dict or cannot be written as JSON.
        """
        await trio.lowlevel.checkpoint()
        self.check_usable()
        self._send(self._conn.notification(method, params), Outgoing(method, None, params))

    def notifications(self, *, buffer: int | None = None) -> NotificationStream:
        """Subscribe to every notification the server sends from now on.

        Whoever else receives a notification, every subscriber sees it too:
        for logging, or a debugging view of the traffic.

        Args:
            buffer: How many notifications may wait for the consumer before
                newer ones are dropped; defaults to ``notification_buffer``.
        """
        stream = NotificationStream(self._notification_buffer if buffer is None else buffer)
        if self._failure is not None:
            stream.end(None if isinstance(self._failure, TransportClosed) else self._failure)
        else:
            self._streams.add(stream)
        return stream

    def statistics(self) -> SessionStatistics:
        """Return a snapshot of the session's counters."""
        channel = self._channel
        return SessionStatistics(
            pid=channel.pid,
            returncode=channel.returncode,
            requests_in_flight=self._conn.in_flight,
            requests_sent=self._requests_sent,
            notifications_received=self._notes_received,
            notifications_dropped=self._notes_dropped,
            messages_dropped=self._lines_dropped,
            stderr_lines=channel.stderr_lines,
            server_requests_received=self._server_requests.received,
        )

    # ------------------------------------------------------ for the client

    def _log(self, message: str) -> None:
        """Report a diagnostic through ``on_log`` (rate-limited like the session's own)."""
        admit, summary = self._limiter.admit(trio.current_time())
        if not admit:
            return
        if summary is not None:
            self._emit(summary)
        self._emit(message)

    def _send(self, data: bytes, about: Outgoing = ANSWER) -> None:
        # Without ``about``: an answer to a server request.
        if self._on_wire is not None:
            self._wire("out", data)
        self._channel.send(data, about)

    def _wire(self, direction: str, data: bytes) -> None:
        callback = self._on_wire
        assert callback is not None
        try:
            callback(direction, data)
        except Exception as exc:
            self._on_wire = None
            self._log(f"on_wire raised {exc!r}; it is called no more")

    def _emit(self, message: str) -> None:
        callback = self._on_log
        try:
            if callback is None:
                _logger.info("%s: %s", self.name, message)
            else:
                callback(message)
        except Exception:
            _logger.exception("on_log raised")

    # ------------------------------------------------- channel: Receiver

    def _message_received(self, message: bytes | Oversized) -> None:
        """The channel read one message: decode it and act on it."""
        if self._on_wire is not None and isinstance(message, bytes):
            self._wire("in", message)
        events = self._conn.receive(message)
        if isinstance(events, tuple):
            # The common case, a plain answer, without an event or a call to _dispatch.
            box = self._calls.pop(events[0], None)
            if box is not None:
                box.finish(events[1], None)
            return
        for event in events:
            if type(event) is Answered:
                box = self._calls.pop(event.request_id, None)
                if box is not None:
                    box.finish(event.result, None)
            else:
                self._dispatch(event)

    def _channel_ended(self, error: MCPError) -> None:
        """The channel can carry nothing more: fail everything with ``error``."""
        if self._closing or self._failure is not None:
            return
        self._log(str(error).split("\n", 1)[0])
        self._fail(error)

    def _channel_log(self, text: str) -> None:
        """A diagnostic of the channel's."""
        self._log(text)

    def _is_idle(self) -> bool:
        """Whether no request awaits an answer (a channel may then rest its reader)."""
        return not self._calls

    def _awaits(self, request_id: int) -> bool:
        """Whether our request ``request_id`` still awaits its answer."""
        return self._conn.is_pending(request_id)

    def _request_failed(self, request_id: int, error: MCPError) -> None:
        """The channel failed our request ``request_id`` itself (an HTTP error, say).

        A late answer to it is dropped; nothing is sent to the server.
        """
        if not self._conn.is_pending(request_id):
            return
        self._conn.abandon(request_id)
        box = self._calls.pop(request_id, None)
        if box is not None:
            box.finish(None, error)

    # ------------------------------------------------------------ dispatch

    def _dispatch(self, event: Event) -> None:
        if isinstance(event, Answered):
            box = self._calls.pop(event.request_id, None)
            if box is not None:
                box.finish(event.result, None)
        elif isinstance(event, Note):
            self._deliver(event)
        elif isinstance(event, Failed):
            box = self._calls.pop(event.request_id, None)
            if box is not None:
                box.finish(None, event.error)
        elif isinstance(event, Diagnostic):
            self._lines_dropped += 1
            self._last_dropped = event.text
            if event.stray is not None:
                self._stray_lines += 1
                if self._stray_lines == 1:
                    self._first_stray = event.stray
            self._log(event.text)
        elif isinstance(event, Send):
            self._send(event.data)
        elif isinstance(event, ServerRequest):
            attachment = self._attachment
            handler = attachment.on_request if attachment is not None else self._handler
            assert self._nursery is not None
            self._server_requests.start(event, handler, self._nursery, shield=self._shield)
        elif isinstance(event, ServerRequestCancelled):
            self._server_requests.cancel(event.request_id)

    def _deliver(self, event: Note) -> None:
        self._notes_received += 1
        note = event.message
        for stream in self._streams:
            if not stream.publish(note):
                self._notes_dropped += 1
                if stream.dropped in (1, 10, 100, 1000) or stream.dropped % 10000 == 0:
                    self._log(
                        f"a notifications() subscriber is full; {stream.dropped} notifications dropped so far"
                    )
        target = event.target
        box = self._calls.get(target) if target is not None else None
        if box is not None:
            if not box.put(note):
                self._notes_dropped += 1
                if box.dropped in (1, 10, 100, 1000) or box.dropped % 10000 == 0:
                    self._log(
                        f"a notification callback is falling behind; {box.dropped} notifications dropped"
                    )
            return
        sink = self._sink
        if sink is not None and not sink.put(note, self._attachment):
            self._notes_dropped += 1
            if sink.dropped in (1, 10, 100, 1000) or sink.dropped % 10000 == 0:
                self._log(f"the notification sink is falling behind; {sink.dropped} notifications dropped")

    def _fail(self, error: MCPError, *, quiet_streams: bool = False) -> None:
        """Fail everything in flight and everything after with ``error``."""
        # The first failure says why the session is unusable: a server that
        # died stays ServerGone after the session is closed.
        if self._failure is None:
            self._failure = error
        if self._failed is not None:
            self._failed.set()
        self._conn.fail_all()
        calls, self._calls = self._calls, {}
        for box in calls.values():
            box.finish(None, fresh_error(error))
        self._server_requests.stop()
        for stream in list(self._streams):
            stream.end(None if quiet_streams else error)
        self._streams.clear()
        if self._sink is not None:
            self._sink.finish()

    # ---------------------------------------------------------------- sink

    def _install_sink(self) -> None:
        if self._sink is None:
            self._sink = Sink()
        if self._running and not self._sink_running:
            self._sink_running = True
            self._start_task(self._run_sink, "sink")

    async def _call_sink(self, note: dict[str, JSON], attachment: Attachment | None) -> None:
        # The client attached when the notification was read gets it, even
        # if it has detached since: nothing read while it was attached is
        # lost.
        if attachment is not None and attachment.on_notification is not None:
            try:
                await call_maybe_async(attachment.on_notification, note)
            except Exception as exc:
                self._log(f"the client's notification handler raised {exc!r} for {note.get('method')!r}")
        own = self._own_sink
        if own is not None:
            try:
                await call_maybe_async(own, note)
            except Exception as exc:
                self._log(f"the on_notification sink raised {exc!r} for {note.get('method')!r}")

    async def _run_sink(self) -> None:
        sink = self._sink
        assert sink is not None
        while True:
            while sink.items:
                await self._call_sink(*sink.items.popleft())
            if sink.done:
                return
            await sink.park()


class _Receiver:
    """What the channel reports to: the session's private handlers, bound once.

    The channel's callbacks are no part of the session's public face; this
    object carries them (each attribute is the session's bound method, so a
    call costs no more than calling the session directly).
    """

    __slots__ = ("awaits", "channel_ended", "channel_log", "is_idle", "message_received", "request_failed")

    def __init__(self, session: Session) -> None:
        self.message_received = session._message_received
        self.channel_ended = session._channel_ended
        self.channel_log = session._channel_log
        self.is_idle = session._is_idle
        self.awaits = session._awaits
        self.request_failed = session._request_failed


# ------------------------------------------------------ for the layers above

S = TypeVar("S", bound=Session)


def new_session(
    channel: Channel,
    options: ConnectionOptions | None = None,
    *,
    observer: Observer | None = None,
    kind: type[S] = Session,  # type: ignore[assignment]
) -> S:
    """A session over ``channel``, not started yet: the one way to make a `Session` (or a ``kind`` of it).

    For the openers (through `trio_mcp._telemetry.make_session`) and the
    telemetry's traced session; ``Session(...)`` itself refuses.
    """
    session = kind.__new__(kind)
    session._setup(channel, options, observer=observer)
    return session


async def start_in(session: Session, nursery: trio.Nursery) -> None:
    """Connect the session's channel and start its tasks in ``nursery`` (a nursery of the caller's).

    The session then runs until its `Session.aclose`; cancelling ``nursery``
    ends it too.

    Raises:
        SpawnFailed: The server could not be started (process channels).
        RuntimeError: The session was started before.
    """
    await session._start(nursery, shield=False)


def start_soon(session: Session, fn: Callable[..., Awaitable[object]], *args: object, name: str) -> None:
    """Run ``fn(*args)`` in the session's nursery, beside its own tasks.

    For the client (its ``listen`` streams): the task is not shielded, and
    must end by itself before the session's block ends.

    Raises:
        ServerGone, TransportClosed: The session can carry nothing more.
    """
    session.check_usable()
    assert session._nursery is not None
    session._nursery.start_soon(fn, *args, name=f"trio_mcp:{name}")


def attach(
    session: Session, *, on_request: RequestHandler | None, on_notification: NotificationCallback | None
) -> Attachment:
    """Hand the server's requests and the unclaimed notifications to a client.

    While attached, server requests go to ``on_request`` (instead of the
    session's own), and every notification that no request claims reaches
    ``on_notification`` (in the sink's task), before the session's own sink,
    if any. `Attachment.detach` ends it.

    Raises:
        RuntimeError: Another client is attached.
    """
    if session._attachment is not None:
        raise RuntimeError(f"the connection to {session.name} already has a client; one at a time")
    attachment = Attachment(session, on_request, on_notification)
    session._attachment = attachment
    if session._sink is None and on_notification is not None:
        session._install_sink()
    return attachment


def stop_serving_requests(session: Session) -> None:
    """Answer no request of the server's any more (the 2026-07-28 era, where servers send none).

    One that comes anyway is ignored (never answered), ``ping`` included.
    """
    session._conn.serves_requests = False


def next_request_id(session: Session) -> int:
    """The JSON-RPC id the session's next request will have (for the telemetry's span)."""
    return session._conn.next_id


def observer_of(session: Session) -> Observer | None:
    """The session's telemetry, or `None` when it has none."""
    return session._observer


def report(session: Session, message: str) -> None:
    """Report a diagnostic through the session's ``on_log`` (rate-limited like its own)."""
    session._log(message)


def stray_lines_hint(session: Session) -> str:
    """What the server wrote instead of messages, for an error that says it never answered.

    ``""`` when it wrote nothing of the kind, else, say, ``"; it wrote 2
    lines that are not JSON-RPC messages, the first: 'Listening...'"``.
    """
    count = session._stray_lines
    if not count:
        return ""
    lines = (
        "1 line that is not a JSON-RPC message"
        if count == 1
        else f"{count} lines that are not JSON-RPC messages"
    )
    return f"; it wrote {lines}, the first: {session._first_stray}"
