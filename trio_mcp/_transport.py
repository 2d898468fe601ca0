"""The Trio edge: a JSON-RPC transport over a child process's stdin and stdout.

Everything that can be decided without I/O lives in the pure core
(`trio_mcp._framing`, `trio_mcp._protocol`). This module only moves bytes and
wakes tasks:

* One nursery owns four background tasks: the stdout reader, the stdin
  writer, the stderr drainer and the process watcher (plus one task for the
  connection-wide notification sink and one per server-initiated request).
* A request is a slot in a table. The caller's own task parks on it; the
  reader fills it and wakes the task. The caller's task also runs the
  request's ``on_notification`` callback, so a slow callback delays only its
  own request, never the reader and never anybody else's answer.
* Writes are never done under a lock. A lone request writes its line with
  one non-blocking ``write(2)``; while other requests are in flight, lines go
  to the writer task's queue, which joins them into one write. Whatever the
  pipe does not take waits in the queue. A server that stops reading stdin
  therefore blocks only the writer task, which ``aclose`` can always cancel.
* One watcher task keeps every request's deadline (no cancel scope per
  request).
* Death is watched on the process itself (``waitid``/pidfd), not only through
  stdout EOF, so a server whose grandchild keeps stdout open is still seen to
  die.
* Close is bounded and shielded: close stdin, give the server ``kill_grace``
  seconds, then SIGTERM and SIGKILL its whole process group, and reap it.
"""

from __future__ import annotations

import copy
import enum
import inspect
import logging
import math
import os
import select
import signal as signal_module
import subprocess
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Self, TypeAlias

import attrs
import trio

from ._core.framing import LineFramer, Oversized, clean_line
from ._core.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    Answered,
    Connection,
    Diagnostic,
    Event,
    Failed,
    Note,
    Send,
    ServerRequest,
    _key,
)
from ._errors import MCPError, RpcError, ServerGone, SpawnFailed, TransportClosed

__all__ = [
    "NotificationCallback",
    "NotificationStream",
    "RequestHandler",
    "RequestTimeout",
    "StdioTransport",
    "TransportStatistics",
    "open_stdio_transport",
]

JSON: TypeAlias = Any
NotificationCallback: TypeAlias = Callable[[dict[str, JSON]], "Awaitable[None] | None"]
"""A notification callback: called with the whole message; may be sync or async."""


class _Default(enum.Enum):
    """The type of `DEFAULT`: "use the transport's setting"."""

    DEFAULT = "DEFAULT"


DEFAULT: Final = _Default.DEFAULT

RequestHandler: TypeAlias = Callable[[str, JSON], "Awaitable[dict[str, JSON] | None]"]
"""An async handler for server-initiated requests: ``(method, params) -> result``."""

if TYPE_CHECKING:
    from types import TracebackType

_logger = logging.getLogger("trio_mcp.transport")
_server_logger = logging.getLogger("trio_mcp.server")

#: After the process exits (or stdout ends), how long to wait for the rest of
#: its output before failing the requests in flight.
EXIT_DRAIN: Final = 0.5
#: The longest that unread output of a dead server delays `ServerGone`.
EXIT_DRAIN_MAX: Final = 5.0
#: How long the process group gets between SIGTERM and SIGKILL.
TERM_GRACE: Final = 1.0
#: How long to wait for the kernel to reap the process after SIGKILL.
REAP_WAIT: Final = 2.0
#: A stderr "line" without a newline is cut at this many bytes.
STDERR_LINE_MAX: Final = 64 * 1024
#: The server may have this many requests of its own running at once.
MAX_SERVER_REQUESTS: Final = 64
#: Notifications held for one request's callback, or for the sink, before
#: further ones are dropped (and counted).
CALLBACK_BACKLOG: Final = 4096

_READ_SIZE: Final = 256 * 1024


class RequestTimeout(MCPError, trio.TooSlowError):
    """A request outlived the transport's ``request_timeout``.

    The connection survives: the request was abandoned (the server was sent
    ``notifications/cancelled``), a late answer to it is dropped, and the next
    request goes out normally. It is also a `trio.TooSlowError`, the error
    `trio.fail_after` raises, so code that handles Trio timeouts handles this
    one too.

    Attributes:
        method: The method of the request that timed out.
        timeout: The budget it had, in seconds.
    """

    def __init__(self, message: str = "request timed out", *, method: str = "", timeout: float = 0.0) -> None:
        super().__init__(message)
        self.method = method
        self.timeout = timeout


@attrs.frozen
class TransportStatistics:
    """A snapshot of a transport's counters, from `StdioTransport.statistics`."""

    pid: int | None
    """The server's process id, or `None` before it started."""
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
    lines_dropped: int
    """How many stdout lines or messages were dropped or worked around (each reported through ``on_log``)."""
    stderr_lines: int
    """Lines the server wrote to stderr."""
    server_requests: int
    """Requests the server sent us (legacy eras)."""


class _Parking:
    """One task's place to sleep until another task wakes it (cheaper than an Event)."""

    __slots__ = ("task",)

    def __init__(self) -> None:
        self.task: trio.lowlevel.Task | None = None

    def wake(self) -> None:
        task = self.task
        if task is not None:
            self.task = None
            trio.lowlevel.reschedule(task)

    async def park(self) -> None:
        self.task = trio.lowlevel.current_task()

        def abort(_: object) -> trio.lowlevel.Abort:
            self.task = None
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)


class _Mailbox(_Parking):
    """Where the reader leaves work for one parked task (a request or the sink)."""

    __slots__ = (
        "callback",
        "deadline",
        "done",
        "dropped",
        "error",
        "notes",
        "result",
        "scope",
        "timed_out",
    )

    def __init__(self, callback: NotificationCallback | None, deadline: float = math.inf) -> None:
        self.task = None
        self.callback = callback
        # Created on the first notification: most requests never get one.
        self.notes: deque[dict[str, JSON]] | None = None
        self.result: dict[str, JSON] | None = None
        self.error: BaseException | None = None
        self.done = False
        self.timed_out = False
        self.dropped = 0
        # When the request times out (trio.current_time() clock).
        self.deadline = deadline
        # Set while the owner runs a notification callback, so that a
        # timeout can interrupt it.
        self.scope: trio.CancelScope | None = None

    def put(self, note: dict[str, JSON]) -> bool:
        notes = self.notes
        if notes is None:
            notes = self.notes = deque()
        elif len(notes) >= CALLBACK_BACKLOG:
            self.dropped += 1
            return False
        notes.append(note)
        self.wake()
        return True

    def finish(self, result: dict[str, JSON] | None, error: BaseException | None) -> None:
        if not self.done:
            self.done = True
            self.result = result
            self.error = error
            self.wake()


async def _call(callback: NotificationCallback, note: dict[str, JSON]) -> None:
    outcome = callback(note)
    if inspect.isawaitable(outcome):
        await outcome


def _fresh(exc: MCPError) -> MCPError:
    """A copy of a shared error, so that each raise gets its own traceback."""
    new = copy.copy(exc)
    new.__cause__ = exc.__cause__
    new.__traceback__ = None
    return new


class NotificationStream:
    """Every notification the server sends, from the moment of subscription.

    Returned by `StdioTransport.notifications`. Iterate it with ``async for``;
    the loop ends when the transport is closed, and raises `ServerGone` when
    the server dies. It holds at most ``buffer`` notifications: when the
    consumer falls behind, newer ones are dropped (counted in `dropped` and
    reported through ``on_log``) rather than stalling the transport.

    It is also an async context manager; leaving it unsubscribes.
    """

    def __init__(self, buffer: int) -> None:
        self._send, self._receive = trio.open_memory_channel[dict[str, JSON]](buffer)
        self._error: MCPError | None = None
        self.dropped = 0
        """How many notifications this subscriber missed because its buffer was full."""

    def _publish(self, note: dict[str, JSON]) -> bool:
        try:
            self._send.send_nowait(note)
        except trio.WouldBlock:
            self.dropped += 1
            return False
        except trio.ClosedResourceError:
            return True
        return True

    def _end(self, error: MCPError | None) -> None:
        if self._error is None:
            self._error = error
        self._send.close()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> dict[str, JSON]:
        try:
            return await self._receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            if self._error is not None:
                raise _fresh(self._error) from None
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Unsubscribe; later iteration ends at once."""
        self._send.close()
        await self._receive.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _default_log(message: str) -> None:
    _logger.info("%s", message)


def _default_stderr(line: str) -> None:
    _server_logger.debug("%s", line)


class StdioTransport:
    """A JSON-RPC connection to an MCP server running as a child process.

    Create it with `open_stdio_transport` and use it as an async context
    manager: entering starts the process (and blocks until it is running),
    leaving closes it (see `aclose`). All arguments are described there.
    """

    def __init__(
        self,
        command: str | os.PathLike[str],
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        cwd: str | os.PathLike[str] | None = None,
        on_stderr: Callable[[str], object] | None = None,
        on_log: Callable[[str], object] | None = None,
        on_notification: NotificationCallback | None = None,
        on_request: RequestHandler | None = None,
        kill_grace: float = 2.0,
        request_timeout: float | None = 60.0,
        max_message_bytes: int = 64 * 1024 * 1024,
        notification_buffer: int = 256,
        stderr_tail_bytes: int = 8 * 1024,
    ) -> None:
        if isinstance(args, str | bytes):
            raise TypeError("args must be a sequence of strings, not a single string")
        if not 0 <= kill_grace < math.inf:
            raise ValueError("kill_grace must be a finite number of seconds >= 0")
        if request_timeout is not None and (request_timeout <= 0 or math.isnan(request_timeout)):
            raise ValueError("request_timeout must be > 0 or None")
        if max_message_bytes < 1:
            raise ValueError("max_message_bytes must be >= 1")
        if notification_buffer < 0:
            raise ValueError("notification_buffer must be >= 0")
        self.command = os.fspath(command)
        """The server command, as given."""
        given: list[object] = [self.command, *args]
        if env is not None:
            given += [item for pair in env.items() for item in pair]
        for item in given:
            if not isinstance(item, str):
                raise TypeError(f"the command, args and env must be strings, not {item!r}")
        self.args = tuple(args)
        """The server's arguments, as given."""
        self._env = dict(env) if env is not None else {}
        self._inherit_env = inherit_env
        self._cwd = os.fspath(cwd) if cwd is not None else None
        self._on_stderr = on_stderr if on_stderr is not None else _default_stderr
        self._on_log = on_log if on_log is not None else _default_log
        self._on_request = on_request
        self.kill_grace = kill_grace
        """Seconds the server gets to exit after its stdin is closed."""
        self.request_timeout = request_timeout
        """The budget of every request, in seconds, or `None` for no budget."""
        self.max_message_bytes = max_message_bytes
        """The longest line accepted from the server."""
        self._notification_buffer = notification_buffer
        self._stderr_tail_bytes = stderr_tail_bytes

        self._conn = Connection()
        self._calls: dict[int, _Mailbox] = {}
        self._sink: _Mailbox | None = None
        self._nursery: trio.Nursery | None = None
        if on_notification is not None:
            self._install_sink(on_notification)
        self._streams: weakref.WeakSet[NotificationStream] = weakref.WeakSet()

        self._proc: trio.Process | None = None
        self._nursery_manager: Any = None
        self._scopes: list[trio.CancelScope] = []
        self._failure: MCPError | None = None
        self._started = False
        # Set once the server is running (entering got past _open_io).
        self._opened = False
        self._closing = False
        self._closed = trio.Event()
        self._gone_started = False

        self._exited = trio.Event()
        self._stdout_eof = trio.Event()
        self._stderr_eof = trio.Event()

        self._timer = _Parking()
        self._timer_wake_at = math.inf
        self._last_deadline = -math.inf
        self._deadlines_ordered = True

        self._fd = -1
        self._queue: deque[tuple[int | None, bytes]] = deque()
        self._writing = False
        self._writer = _Parking()
        self._write_broken = False

        self._stderr_tail: deque[str] = deque()
        self._stderr_tail_size = 0
        self._server_tasks: dict[tuple[bool, int | str], trio.CancelScope] = {}

        self._requests_sent = 0
        self._notes_received = 0
        self._notes_dropped = 0
        self._lines_dropped = 0
        self._last_dropped = ""
        self._stderr_lines = 0
        self._server_requests = 0

    # ------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Self:
        if self._started:
            raise RuntimeError("a StdioTransport can only be entered once")
        self._started = True
        try:
            await self._open_io()
        except SpawnFailed as exc:
            self._failure = exc
            self._closed.set()
            raise
        self._opened = True
        self._nursery_manager = trio.open_nursery()
        self._nursery = await self._nursery_manager.__aenter__()
        self._start_io_tasks()
        self._spawn_task(self._expire_requests)
        if self._sink is not None:
            self._spawn_task(self._run_sink)
        return self

    # The three methods below are all that is specific to a child process in
    # the transport's lifecycle (with _write and _terminate); an in-memory
    # transport (``trio_mcp.testing``) overrides them.

    async def _open_io(self) -> None:
        """Start the server process; raises `SpawnFailed`."""
        proc = await self._spawn()
        self._proc = proc
        assert proc.stdin is not None
        self._fd = proc.stdin.fileno()  # type: ignore[attr-defined]

    def _start_io_tasks(self) -> None:
        """Start the tasks that move bytes and watch the process (in our nursery)."""
        self._spawn_task(self._read_stdout)
        self._spawn_task(self._read_stderr)
        self._spawn_task(self._watch_process)
        self._spawn_task(self._write_queued)

    async def _release_io(self) -> None:
        """Close the pipes, once the process is gone and the tasks are cancelled."""
        proc = self._proc
        assert proc is not None
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                await stream.aclose()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if self._nursery_manager is None:
            return False
        try:
            await self.aclose()
        finally:
            manager, self._nursery_manager = self._nursery_manager, None
            try:
                # The body's exception is not handed to the nursery: every
                # background task is finished, and the user's error must reach
                # the user unwrapped.
                await manager.__aexit__(None, None, None)
            except BaseExceptionGroup as group:
                failure = _unexpected(group)
                if failure is not None:
                    raise failure from group
                if exc is None:
                    # Only a cancellation of the caller's: let it through.
                    raise _first_cancelled(group) from None
        return False

    async def _spawn(self) -> trio.Process:
        command = self.command
        argv: list[str] = [command, *self.args]
        for item in argv:
            if "\0" in item:
                raise SpawnFailed(
                    f"cannot start {command!r}: an argument contains a NUL byte", command=command
                )
        for key, value in self._env.items():
            if "\0" in key or "\0" in value:
                raise SpawnFailed(
                    f"cannot start {command!r}: env {key!r} contains a NUL byte", command=command
                )
            if not key or "=" in key:
                raise SpawnFailed(f"cannot start {command!r}: invalid env name {key!r}", command=command)
        if self._cwd is not None and "\0" in self._cwd:
            raise SpawnFailed(f"cannot start {command!r}: cwd contains a NUL byte", command=command)
        env = {**os.environ, **self._env} if self._inherit_env else dict(self._env)
        try:
            return await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self._cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise SpawnFailed(self._spawn_message(exc, env), command=command) from exc

    def _spawn_message(self, exc: OSError, env: Mapping[str, str]) -> str:
        command = self.command
        if self._cwd is not None and exc.filename == self._cwd:
            return f"cannot start {command!r}: working directory {self._cwd!r}: {exc.strerror}"
        if isinstance(exc, FileNotFoundError):
            if os.sep in command:
                return f"cannot start {command!r}: no such file"
            path = env.get("PATH", os.defpath)
            return f"cannot start {command!r}: command not found (searched PATH={path!r})"
        if isinstance(exc, PermissionError):
            return f"cannot start {command!r}: permission denied (not executable?)"
        return f"cannot start {command!r}: {exc.strerror or exc}"

    def _spawn_task(self, fn: Callable[[], Awaitable[None]]) -> None:
        # Shielded: the caller's cancel scopes surround our nursery, but the
        # background tasks must live until aclose() ends them, so that code
        # the caller shields keeps a working connection.
        scope = trio.CancelScope(shield=True)
        self._scopes.append(scope)

        async def run() -> None:
            with scope:
                await fn()

        assert self._nursery is not None
        self._nursery.start_soon(run, name=f"trio_mcp:{fn.__name__}")

    async def aclose(self) -> None:
        """Close the connection and stop the server; idempotent and bounded.

        Requests in flight fail with `TransportClosed`, and so does everything
        attempted afterwards. Then the server's stdin is closed (how a
        well-behaved server is asked to stop) and it gets ``kill_grace``
        seconds to exit; after that its whole process group gets SIGTERM and,
        a second later, SIGKILL, and the process is reaped. Nothing is left
        running and no file descriptor stays open.

        This is shielded from cancellation and bounded in time (about
        ``kill_grace + 3`` seconds at worst). A second call waits for the
        first to finish.
        """
        if self._closing or not self._started or not self._opened:
            if self._started and self._opened:
                await self._closed.wait()
            else:
                await trio.lowlevel.checkpoint()
            return
        self._closing = True
        with trio.CancelScope(shield=True):
            closed = TransportClosed("the transport was closed")
            if self._failure is not None and not isinstance(self._failure, SpawnFailed):
                closed.__cause__ = self._failure
            self._fail(closed, quiet_streams=True)
            await self._terminate()
            for scope in self._scopes:
                scope.cancel()
            await self._release_io()
        self._closed.set()

    async def _terminate(self) -> None:
        """Stop the server: close stdin, wait, SIGTERM the group, wait, SIGKILL, reap."""
        proc = self._proc
        assert proc is not None
        self._write_broken = True
        self._queue.clear()
        if proc.stdin is not None:
            await proc.stdin.aclose()
        if proc.returncode is None:
            with trio.move_on_after(self.kill_grace):
                await proc.wait()
        # Whether or not the leader left politely, what is left of its group
        # (npx's node, uvx's python, ...) is asked to go, then made to.
        if self._signal_group(signal_module.SIGTERM):
            with trio.move_on_after(TERM_GRACE):
                await proc.wait()
                # Group members are not our children: no event tells us they
                # are gone, so poll.
                while self._group_alive():  # noqa: ASYNC110
                    await trio.sleep(0.02)
            self._signal_group(signal_module.SIGKILL)
        if proc.returncode is None:
            proc.kill()
            with trio.move_on_after(REAP_WAIT):
                await proc.wait()
            if proc.returncode is None:
                self._log(f"server process {proc.pid} could not be reaped after SIGKILL; abandoned")

    def _signal_group(self, sig: int) -> bool:
        proc = self._proc
        assert proc is not None
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def _group_alive(self) -> bool:
        proc = self._proc
        assert proc is not None
        return self._signal_group(0) and _group_has_live_member(proc.pid)

    # ------------------------------------------------------------ requests

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise _fresh(self._failure)
        if not self._started or not self._opened:
            raise RuntimeError("use the transport inside 'async with open_stdio_transport(...)'")

    async def request(
        self,
        method: str,
        params: dict[str, JSON] | None = None,
        *,
        on_notification: NotificationCallback | None = None,
        timeout: float | _Default | None = DEFAULT,  # noqa: ASYNC109 - a per-request budget that ends in RequestTimeout and a cancel
        cancel_on_abandon: bool = True,
    ) -> dict[str, JSON]:
        """Send a request and wait for its result.

        Args:
            method: The JSON-RPC method, for example ``"tools/list"``.
            params: The params object (a dict that orjson can serialise), or
                `None` to send none. A ``params["_meta"]["progressToken"]``
                ties ``notifications/progress`` to this request.
            on_notification: Called (in this task, before the result is
                returned) with every notification routed to this request; may
                be sync or async. The first callback a transport is ever given
                also becomes its connection-wide sink, unless the transport
                was opened with ``on_notification``. An exception it raises
                abandons the request and propagates.
            timeout: The budget of this request in seconds, or `None` for
                none; defaults to the transport's ``request_timeout``.
            cancel_on_abandon: Whether abandoning the request (timeout or
                cancellation) sends ``notifications/cancelled``. MCP forbids
                cancelling ``initialize``; pass `False` for it.

        Returns:
            The ``result`` object of the response.

        Raises:
            RpcError: The server answered with a JSON-RPC error.
            ProtocolError: The answer broke the protocol (or was over
                ``max_message_bytes``: `MessageTooLarge`).
            RequestTimeout: No answer within ``request_timeout``.
            ServerGone: The server died (or died earlier).
            TransportClosed: The transport was closed.
            TypeError: ``params`` is not a dict or not JSON-serialisable.

        Cancellation: if the caller's cancel scope cancels the wait, the
        request is abandoned exactly as on a timeout (the server is sent
        ``notifications/cancelled`` and a late answer is dropped), and the
        caller's `trio.Cancelled` propagates.
        """
        if self._failure is not None or not self._started:
            await trio.lowlevel.checkpoint()
            self._check_usable()
        if on_notification is not None and self._sink is None:
            self._install_sink(on_notification)
        if isinstance(timeout, _Default):
            timeout = self.request_timeout
        elif timeout is not None and (timeout <= 0 or math.isnan(timeout)):
            raise ValueError("timeout must be > 0 or None")
        request_id, data = self._conn.start_request(method, params, wants_notes=on_notification is not None)
        # No cancel scope per request: one watcher task keeps every deadline
        # (see _expire_requests).
        deadline = math.inf if timeout is None else trio.current_time() + timeout
        if deadline < self._last_deadline:
            self._deadlines_ordered = False  # request_timeout was lowered
        else:
            self._last_deadline = deadline
        if deadline < self._timer_wake_at:
            self._timer.wake()
        box = _Mailbox(on_notification, deadline)
        self._calls[request_id] = box
        self._requests_sent += 1
        self._write(data, request_id)
        try:
            if on_notification is None:
                while not box.done:
                    await box.park()
            else:
                await self._wait(box)
        except BaseException:
            self._abandon(request_id, "cancelled by the client", cancel_on_abandon)
            raise
        if box.timed_out:
            self._abandon(request_id, "timed out", cancel_on_abandon)
            raise RequestTimeout(
                f"request {request_id} ({method}) got no answer within {timeout} s{self._timeout_hint()}",
                method=method,
                timeout=timeout or 0.0,
            )
        if box.error is not None:
            raise box.error
        assert box.result is not None
        return box.result

    async def _wait(self, box: _Mailbox) -> None:
        while True:
            if box.timed_out:
                return
            notes = box.notes
            if notes:
                note = notes.popleft()
                assert box.callback is not None
                with trio.CancelScope() as box.scope:
                    await _call(box.callback, note)
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
                f" ({self._lines_dropped} stdout lines or responses were dropped so far;"
                f" the last: {self._last_dropped})"
            )
        return ""

    def _abandon(self, request_id: int, reason: str, tell_server: bool = True) -> None:
        self._calls.pop(request_id, None)
        if self._write_broken or not tell_server:
            self._conn.abandon(request_id)
            return
        for index, (owner, _) in enumerate(self._queue):
            if owner == request_id:
                # Never written: no need to tell the server anything.
                del self._queue[index]
                self._conn.abandon(request_id)
                return
        line = self._conn.abandon(request_id, reason)
        if line is not None:
            self._write(line, None)

    async def notify(self, method: str, params: dict[str, JSON] | None = None) -> None:
        """Send a notification (no answer is expected).

        The line is queued for writing and this returns at once (it does not
        wait for the server to read it).

        Raises:
            ServerGone: The server died.
            TransportClosed: The transport was closed.
            TypeError: ``params`` is not a dict or not JSON-serialisable.
        """
        await trio.lowlevel.checkpoint()
        self._check_usable()
        self._write(self._conn.notification(method, params), None)

    def notifications(self, *, buffer: int | None = None) -> NotificationStream:
        """Subscribe to every notification the server sends from now on.

        Args:
            buffer: How many notifications may wait for the consumer before
                newer ones are dropped; defaults to the transport's
                ``notification_buffer``.
        """
        stream = NotificationStream(self._notification_buffer if buffer is None else buffer)
        if self._failure is not None:
            stream._end(None if isinstance(self._failure, TransportClosed) else self._failure)
        else:
            self._streams.add(stream)
        return stream

    def statistics(self) -> TransportStatistics:
        """Return a snapshot of the transport's counters."""
        proc = self._proc
        return TransportStatistics(
            pid=proc.pid if proc is not None else None,
            returncode=proc.returncode if proc is not None else None,
            requests_in_flight=self._conn.in_flight,
            requests_sent=self._requests_sent,
            notifications_received=self._notes_received,
            notifications_dropped=self._notes_dropped,
            lines_dropped=self._lines_dropped,
            stderr_lines=self._stderr_lines,
            server_requests=self._server_requests,
        )

    @property
    def pid(self) -> int | None:
        """The server's process id, or `None` if it never started."""
        return self._proc.pid if self._proc is not None else None

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (bounded)."""
        return "".join(line + "\n" for line in self._stderr_tail)

    # ------------------------------------------------------------- writing

    def _write(self, data: bytes, owner: int | None) -> None:
        if self._write_broken:
            return
        if self._queue or self._writing or len(self._calls) > 1:
            # Other requests are in flight, or lines are queued: leave the
            # line to the writer task, which joins whatever is queued during
            # this scheduler pass into one write.
            self._queue.append((owner, data))
            self._writer.wake()
            return
        try:
            written = os.write(self._fd, data)
        except BlockingIOError:
            written = 0
        except OSError as exc:
            self._broken_pipe(exc)
            return
        if written < len(data):
            self._queue.append((None, data[written:]))
            self._writer.wake()

    async def _write_queued(self) -> None:
        fd = self._fd
        queue = self._queue
        while True:
            while not queue:
                await self._writer.park()
            batch = queue[0][1] if len(queue) == 1 else b"".join([data for _, data in queue])
            queue.clear()
            self._writing = True
            try:
                # Write at once, without waiting: the stream's send_all would
                # first yield for a whole scheduler pass. Wait only when the
                # pipe is full.
                view = memoryview(batch)
                while view:
                    try:
                        view = view[os.write(fd, view) :]
                    except BlockingIOError:
                        await trio.lowlevel.wait_writable(fd)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                self._broken_pipe(exc)
                return
            finally:
                self._writing = False

    def _broken_pipe(self, exc: BaseException) -> None:
        if self._write_broken:
            return
        self._write_broken = True
        self._queue.clear()
        if not self._closing:
            self._log(f"writing to the server failed ({exc!r}); it stopped reading its stdin")
            self._begin_gone()

    # ------------------------------------------------------------- reading

    async def _read_stdout(self) -> None:
        proc = self._proc
        assert proc is not None
        assert proc.stdout is not None
        stdout = proc.stdout
        framer = LineFramer(self.max_message_bytes)
        handle = self._handle_line
        try:
            while True:
                data = await stdout.receive_some(_READ_SIZE)
                if not data:
                    break
                if not isinstance(data, bytes):  # pragma: no cover - pipes give bytes
                    data = bytes(data)
                for line in framer.feed(data):
                    handle(line)
            for line in framer.eof():
                handle(line)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            if not self._closing:
                self._log(f"reading the server's stdout failed: {exc!r}")
        self._stdout_eof.set()
        if not self._closing:
            self._begin_gone()

    def _handle_line(self, line: bytes | Oversized) -> None:
        if isinstance(line, bytes) and not (line[:1] == b"{" and line[-1:] == b"}"):
            line = clean_line(line)
            if not line:
                return
        for event in self._conn.receive_line(line):
            self._dispatch(event)

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
            self._log(event.text)
        elif isinstance(event, Send):
            self._write(event.data, None)
        elif isinstance(event, ServerRequest):
            self._start_server_request(event)
        else:
            scope = self._server_tasks.pop(_key(event.request_id), None)
            if scope is not None:
                scope.cancel()

    def _deliver(self, event: Note) -> None:
        self._notes_received += 1
        note = event.message
        for stream in self._streams:
            if not stream._publish(note):
                self._notes_dropped += 1
                if stream.dropped in (1, 10, 100, 1000) or stream.dropped % 10000 == 0:
                    self._log(
                        f"a notifications() subscriber is full; {stream.dropped} notifications dropped so far"
                    )
        target = event.target
        box = self._calls.get(target) if target is not None else self._sink
        if box is None and target is not None:
            box = self._sink
        if box is not None and not box.put(note):
            self._notes_dropped += 1
            if box.dropped in (1, 10, 100, 1000) or box.dropped % 10000 == 0:
                self._log(f"a notification callback is falling behind; {box.dropped} notifications dropped")

    # -------------------------------------------------------------- stderr

    async def _read_stderr(self) -> None:
        proc = self._proc
        assert proc is not None
        assert proc.stderr is not None
        stderr = proc.stderr
        pending = b""
        try:
            while True:
                data = bytes(await stderr.receive_some(65536))
                if not data:
                    break
                data = pending + data if pending else data
                lines = data.split(b"\n")
                pending = lines.pop()
                for line in lines:
                    self._stderr_line(line)
                while len(pending) > STDERR_LINE_MAX:
                    self._stderr_line(pending[:STDERR_LINE_MAX])
                    pending = pending[STDERR_LINE_MAX:]
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        if pending:
            self._stderr_line(pending)
        self._stderr_eof.set()

    def _stderr_line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        self._stderr_lines += 1
        tail = self._stderr_tail
        tail.append(text)
        self._stderr_tail_size += len(text) + 1
        while self._stderr_tail_size > self._stderr_tail_bytes and len(tail) > 1:
            self._stderr_tail_size -= len(tail.popleft()) + 1
        if self._stderr_tail_size > self._stderr_tail_bytes:
            # One line alone is over the bound: keep its end.
            keep = tail[0][-self._stderr_tail_bytes :]
            tail[0] = keep
            self._stderr_tail_size = len(keep) + 1
        try:
            self._on_stderr(text)
        except Exception as exc:
            self._log(f"on_stderr raised {exc!r}")

    # ---------------------------------------------------------------- death

    async def _watch_process(self) -> None:
        proc = self._proc
        assert proc is not None
        await proc.wait()
        self._exited.set()
        if not self._closing:
            self._begin_gone()

    def _begin_gone(self) -> None:
        if self._gone_started or self._closing or self._failure is not None:
            return
        self._gone_started = True
        self._spawn_task(self._gone)

    async def _gone(self) -> None:
        proc = self._proc
        assert proc is not None
        # Give the pipes a moment: the answers and stderr lines written just
        # before the exit are worth having. A grandchild may hold the pipes
        # open forever, so the wait is bounded; but as long as stdout still
        # has unread bytes (a busy machine, a big last answer) it is
        # extended, up to a hard limit.
        deadline = trio.current_time() + EXIT_DRAIN_MAX
        while True:
            with trio.move_on_after(EXIT_DRAIN):
                await self._exited.wait()
                await self._stdout_eof.wait()
                await self._stderr_eof.wait()
            if self._stdout_eof.is_set() and self._stderr_eof.is_set():
                break
            if trio.current_time() >= deadline or not self._stdout_has_data():
                break
        if self._closing:
            return
        code = proc.returncode
        if code is None:
            if self._stdout_eof.is_set():
                what = "closed its stdout but kept running; it is being stopped"
            else:
                what = "stopped reading its stdin; it is being stopped"
            error = ServerGone(f"server {self.command!r} {what}", stderr_tail=self.stderr_tail)
        elif code < 0:
            error = ServerGone(
                f"server {self.command!r} was killed by {_signal_name(-code)}",
                signal=-code,
                stderr_tail=self.stderr_tail,
            )
        else:
            error = ServerGone(
                f"server {self.command!r} exited with code {code}",
                exit_code=code,
                stderr_tail=self.stderr_tail,
            )
        self._log(str(error).split("\n", 1)[0])
        self._fail(error)
        if code is None:
            with trio.CancelScope(shield=True):
                await self._terminate()

    def _stdout_has_data(self) -> bool:
        proc = self._proc
        assert proc is not None
        assert proc.stdout is not None
        if self._stdout_eof.is_set():
            return False
        poller = select.poll()
        poller.register(proc.stdout.fileno(), select.POLLIN)  # type: ignore[attr-defined]
        return bool(poller.poll(0))

    def _fail(self, error: MCPError, *, quiet_streams: bool = False) -> None:
        """Fail everything in flight and everything after with ``error``."""
        if self._failure is None or isinstance(error, TransportClosed):
            self._failure = error
        self._conn.fail_all()
        calls, self._calls = self._calls, {}
        for box in calls.values():
            box.finish(None, _fresh(error))
        for scope in self._server_tasks.values():
            scope.cancel()
        self._server_tasks.clear()
        for stream in list(self._streams):
            stream._end(None if quiet_streams else error)
        self._streams.clear()
        if self._sink is not None:
            self._sink.finish(None, None)

    # ---------------------------------------------------------------- sink

    def _attach(self, on_request: RequestHandler, on_notification: NotificationCallback) -> None:
        """Hand server requests and unclaimed notifications to a client layer.

        Server requests go to ``on_request`` from now on. ``on_notification``
        sees every notification the sink gets, before a sink the transport
        was opened with.
        """
        self._on_request = on_request
        if self._sink is None:
            self._install_sink(on_notification)
            return
        previous = self._sink.callback
        assert previous is not None

        async def both(note: dict[str, JSON]) -> None:
            await _call(on_notification, note)
            await _call(previous, note)

        self._sink.callback = both

    def _install_sink(self, callback: NotificationCallback) -> None:
        self._sink = _Mailbox(callback)
        self._conn.has_sink = True
        if self._nursery is not None:
            self._spawn_task(self._run_sink)

    async def _run_sink(self) -> None:
        box = self._sink
        assert box is not None
        assert box.callback is not None
        while True:
            while box.notes:
                note = box.notes.popleft()
                try:
                    await _call(box.callback, note)
                except Exception as exc:
                    self._log(f"the on_notification sink raised {exc!r} for {note.get('method')!r}")
            if box.done:
                return
            await box.park()

    # ------------------------------------------------------ server requests

    def _start_server_request(self, event: ServerRequest) -> None:
        self._server_requests += 1
        handler = self._on_request
        if handler is None or len(self._server_tasks) >= MAX_SERVER_REQUESTS or self._nursery is None:
            if handler is None:
                why = "no handler for server requests"
                line = self._conn.respond_error(
                    event.request_id, METHOD_NOT_FOUND, f"Method not found: {event.method}"
                )
            else:
                why = "too many server requests at once"
                line = self._conn.respond_error(
                    event.request_id, INTERNAL_ERROR, "client busy: too many requests"
                )
            self._log(f"refused server request {event.method!r} (id {event.request_id!r}): {why}")
            if line is not None:
                self._write(line, None)
            return
        scope = trio.CancelScope(shield=True)  # ended by the server, _fail or aclose
        self._server_tasks[_key(event.request_id)] = scope
        self._nursery.start_soon(self._serve_request, handler, event, scope, name=f"trio_mcp:{event.method}")

    async def _serve_request(
        self, handler: RequestHandler, event: ServerRequest, scope: trio.CancelScope
    ) -> None:
        line: bytes | None = None
        with scope:
            try:
                result: object = await handler(event.method, event.params)
            except RpcError as exc:
                line = self._conn.respond_error(event.request_id, exc.code, exc.message, exc.data)
            except Exception as exc:
                self._log(f"the handler for server request {event.method!r} raised {exc!r}")
                line = self._conn.respond_error(event.request_id, INTERNAL_ERROR, f"client error: {exc}")
            else:
                if isinstance(result, dict):
                    line = self._conn.respond(event.request_id, result)
                elif result is None:
                    # The handler chose not to answer (a server request in an
                    # era where servers send none is ignored, not answered).
                    self._conn.forget_server_request(event.request_id)
                else:
                    self._log(
                        f"the handler for {event.method!r} returned {type(result).__name__}, not a dict"
                    )
                    line = self._conn.respond_error(
                        event.request_id, INTERNAL_ERROR, "client error: bad result"
                    )
        self._server_tasks.pop(_key(event.request_id), None)
        # A withdrawn request (or a dead connection) gets no answer: the core
        # has forgotten it, so ``line`` is None or the scope was cancelled.
        if line is not None and not scope.cancelled_caught:
            self._write(line, None)

    # ------------------------------------------------------------------ log

    def _log(self, message: str) -> None:
        try:
            self._on_log(message)
        except Exception:
            _logger.exception("on_log raised")


def _group_has_live_member(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running (zombies aside).

    ``kill(-pgid, 0)`` also succeeds for exited children that their new
    parent has not reaped yet; where ``/proc`` exists, look past those.
    """
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        # After the command: state, parent pid, process group.
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


class TrioMCPInternalError(Exception):
    """A bug in trio_mcp: please report it, with the traceback."""


def _first_cancelled(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first `trio.Cancelled` of a group made only of cancellations."""
    leaf: BaseException = group
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    return leaf


def _unexpected(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """Turn a group from our own nursery into one exception for the caller.

    Returns `None` when the group holds nothing but cancellations.
    """
    leaves: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        elif not isinstance(exc, trio.Cancelled):
            leaves.append(exc)

    walk(group)
    if not leaves:
        return None
    for leaf in leaves:
        if isinstance(leaf, KeyboardInterrupt | SystemExit):
            return leaf
    return TrioMCPInternalError(f"a trio_mcp background task failed: {leaves!r}; please report this bug")


def open_stdio_transport(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    cwd: str | os.PathLike[str] | None = None,
    on_stderr: Callable[[str], object] | None = None,
    on_log: Callable[[str], object] | None = None,
    on_notification: NotificationCallback | None = None,
    on_request: RequestHandler | None = None,
    kill_grace: float = 2.0,
    request_timeout: float | None = 60.0,
    max_message_bytes: int = 64 * 1024 * 1024,
    notification_buffer: int = 256,
    stderr_tail_bytes: int = 8 * 1024,
) -> StdioTransport:
    """Start an MCP server as a child process and talk JSON-RPC to it.

    Use the result as an async context manager::

        async with trio_mcp.open_stdio_transport("my-mcp-server", ["--stdio"]) as wire:
            tools = await wire.request("tools/list", {})

    Entering spawns the process and returns once it is running (it does not
    wait for the server to say anything). Leaving closes it: see
    `StdioTransport.aclose`. Nothing leaks: the process, its process group,
    the pipes and the background tasks all end with the block.

    Args:
        command: The program to run. It is executed directly, never through a
            shell, and looked up on ``PATH`` unless it contains a slash.
        args: Its arguments, each passed as one argument whatever it contains.
        env: Environment variables for the server, layered over the inherited
            environment.
        inherit_env: `False` gives the server exactly ``env`` and nothing else.
        cwd: The server's working directory (default: ours).
        on_stderr: Called with each line the server writes to stderr, decoded
            leniently, without its newline. stderr is always drained, so a
            chatty server never blocks. Default: the ``trio_mcp.server``
            logger at DEBUG. Keep it quick: it runs in the draining task.
        on_log: Called with the transport's own diagnostics (dropped lines,
            late answers, refused requests, ...). Default: the
            ``trio_mcp.transport`` logger at INFO.
        on_notification: The connection-wide sink: called (in a task of its
            own) with every notification that no request claims. May be sync
            or async.
        on_request: ``async (method, params) -> result`` answering requests
            the server sends (legacy eras: sampling, elicitation, roots).
            Raise `RpcError` to answer with an error; return `None` to send
            no answer at all. Without it such requests are answered with
            ``-32601``. ``ping`` is always answered.
        kill_grace: Seconds the server gets to exit after its stdin is closed,
            before its process group is terminated.
        request_timeout: Every request's budget in seconds; `None` for none.
            Tighter budgets are the caller's: use `trio.fail_after` or
            `trio.move_on_after` around the call.
        max_message_bytes: The longest line accepted from the server; longer
            ones are discarded while they stream in.
        notification_buffer: The default buffer of each `StdioTransport.notifications`
            subscriber.
        stderr_tail_bytes: How much of the end of stderr `ServerGone` carries.

    Raises:
        SpawnFailed: On entering, when the server cannot be started.
    """
    return StdioTransport(
        command,
        args,
        env=env,
        inherit_env=inherit_env,
        cwd=cwd,
        on_stderr=on_stderr,
        on_log=on_log,
        on_notification=on_notification,
        on_request=on_request,
        kill_grace=kill_grace,
        request_timeout=request_timeout,
        max_message_bytes=max_message_bytes,
        notification_buffer=notification_buffer,
        stderr_tail_bytes=stderr_tail_bytes,
    )
