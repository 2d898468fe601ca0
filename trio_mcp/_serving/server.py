"""One connection of an MCP server, over a pair of Trio byte streams.

`Server` is the part every server of this package shares (the demo server
and the fake server of `trio_mcp.testing`); what a server offers is its
`App`. The server:

* reads the client's lines through `~trio_mcp._core.framing.LineFramer` and
  decodes them with the sans-io `~trio_mcp._core.jsonrpc.Connection`, used
  from the server's side (the client's requests arrive as ``ServerRequest``
  events, its answers to our requests as ``Answered`` and ``Failed``);
* asks the app, in arrival order, how each request is served: answered at
  once, run in a task of its own (under a cancel scope that the client's
  ``notifications/cancelled`` cancels), or kept by the app to answer later;
* answers, stamped as the era wants (`~trio_mcp._serving.rules.stamp`);
* sends requests of its own to the client (`Server.request`, initialize
  era) and withdraws them when the caller gives up;
* writes everything through one writer task, in order, joining what piles
  up into one ``send_all``: lines never interleave, and a cancelled handler
  never leaves half a line.

The input ending gives the requests in flight a grace period, then cancels
them; `Server.stop` ends everything at once (the process "dies"), still
writing what was queued before.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

import trio

from .._core.eras import LOG_LEVEL
from .._core.framing import LineFramer, Oversized, clean_line
from .._core.jsonrpc import (
    CANCELLED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Answered,
    Connection,
    Diagnostic,
    Failed,
    Note,
    Send,
    ServerRequest,
    ServerRequestCancelled,
    encode,
    request_key,
)
from .._errors import RpcError
from .._trio.parking import Parking
from .rules import Era, checked_log_level, log_wanted, stamp

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DRAIN_GRACE", "EOF_GRACE", "MAX_LINE", "Admission", "App", "Handler", "Request", "Server"]

JSON: TypeAlias = Any
RequestId: TypeAlias = int | str

#: The longest line read whole; longer ones are dropped.
MAX_LINE: Final = 16 * 1024 * 1024
#: Seconds the requests in flight get to finish once the input ends.
EOF_GRACE: Final = 2.0
#: Seconds what is still queued gets to be written at the end.
DRAIN_GRACE: Final = 2.0

Handler: TypeAlias = Callable[[], Awaitable["dict[str, JSON] | None"]]
"""Serves one request in a task of its own: returns the result, or `None`
when it answered by itself (or means no answer); raises `RpcError` to answer
with that error."""
Admission: TypeAlias = "Handler | dict[str, JSON] | None"
"""What `App.admit` decides: a handler to run, a result to answer with at
once, or `None` (the app answers later, or never)."""


def _quiet(text: str) -> None:
    pass


class Request:
    """One request from the client, as the server sees it.

    Attributes:
        id: The JSON-RPC id the client gave it.
        method: Its method.
        params: Its params object (empty when it had none).
        response: The whole response sent to it, once answered.
        cancelled: Whether the client cancelled it before it was answered.
    """

    __slots__ = ("cancelled", "id", "method", "params", "response")

    def __init__(self, request_id: RequestId, method: str, params: dict[str, JSON]) -> None:
        self.id = request_id
        self.method = method
        self.params = params
        self.response: dict[str, JSON] | None = None
        self.cancelled = False

    @property
    def key(self) -> tuple[bool, RequestId]:
        """The id as a dict key (``1`` and ``"1"`` differ)."""
        return request_key(self.id)

    @property
    def answered(self) -> bool:
        """Whether a response was sent."""
        return self.response is not None

    @property
    def meta(self) -> dict[str, JSON]:
        """The ``_meta`` of the params (empty when there is none)."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def progress_token(self) -> int | str | None:
        """The ``progressToken`` the client asked progress under, or `None`."""
        token = self.meta.get("progressToken")
        return token if isinstance(token, int | str) and not isinstance(token, bool) else None


class App(Protocol):
    """What a server offers: `Server` asks it how to serve each message."""

    def admit(self, request: Request) -> Admission:
        """Decide how ``request`` is served; called in arrival order.

        Raise `RpcError` to refuse it (answered at once).
        """
        ...

    def notification(self, message: dict[str, JSON]) -> None:
        """A notification from the client (other than ``notifications/cancelled``)."""
        ...

    def cancelled(self, request: Request) -> None:
        """The client cancelled ``request``, which is not answered yet (its handler is cancelled too)."""
        ...

    def failed(self, request: Request, error: Exception) -> RpcError:
        """A handler raised ``error`` (not an `RpcError`): return the error to answer with."""
        ...

    def input_ended(self) -> None:
        """The client closed its side: nothing more will be read."""
        ...


class _Reply:
    """The answer to one of our requests to the client, once it comes."""

    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.result: dict[str, JSON] = {}
        self.error: BaseException | None = None


class Server:
    """One connection of an MCP server: lines in, lines out, requests served in tasks.

    Args:
        app: What the server offers.
        era: The protocol era, when it is fixed from the start; a server
            that lets the first request choose sets `era` later.
        log: Called with diagnostics (dropped lines, refused requests, ...).
        max_line: The longest line read; a longer one is dropped.
        output_buffer: How many lines may wait for the writer before
            `send` waits (`None`: no limit).
        task_prefix: How the server's tasks are named (``PREFIX:method``).
        result_meta: ``_meta`` keys every 2026-07-28 result carries.
        logs_by_default: Initialize era: whether log messages are sent
            before the client sets a level with ``logging/setLevel``.
        on_line: Called with every line read, before it is decoded.
    """

    def __init__(
        self,
        app: App,
        *,
        era: Era | None = None,
        log: Callable[[str], object] | None = None,
        max_line: int = MAX_LINE,
        output_buffer: int | None = None,
        task_prefix: str = "server",
        result_meta: Mapping[str, JSON] | None = None,
        logs_by_default: bool = False,
        on_line: Callable[[bytes | Oversized], object] | None = None,
    ) -> None:
        self.app = app
        self.era: Era | None = era
        """The protocol era of the connection, once known."""
        self.log_level: str | None = None
        """The level the client set with ``logging/setLevel`` (initialize era)."""
        self.log: Callable[[str], object] = log if log is not None else _quiet
        """Where diagnostics go."""
        self._conn = Connection()
        self._max_line = max_line
        self._limit = output_buffer if output_buffer is not None else math.inf
        self._prefix = task_prefix
        self._result_meta = dict(result_meta) if result_meta else None
        self._logs_by_default = logs_by_default
        self._on_line = on_line

        self._queue: deque[bytes] = deque()
        self._writer = Parking()
        self._room = trio.lowlevel.ParkingLot()
        self._output_done = False
        self._alive = True
        self._input_closed = False
        self._why = ""
        self._work: trio.Nursery | None = None
        self._open: dict[tuple[bool, RequestId], Request] = {}
        self._running: dict[tuple[bool, RequestId], trio.CancelScope] = {}
        self._replies: dict[int, _Reply] = {}

    # ------------------------------------------------------------- state

    @property
    def alive(self) -> bool:
        """Whether the server still sends (false once `stop` was called or the output broke)."""
        return self._alive

    @property
    def answers_ping(self) -> bool:
        """Whether ``ping`` is answered before the app sees it (on by default).

        Off, ``ping`` reaches `App.admit` like any other request: for the
        2026-07-28 era, which has no ``ping``, or for an app that answers it
        itself.
        """
        return self._conn.answers_ping

    @answers_ping.setter
    def answers_ping(self, value: bool) -> None:
        self._conn.answers_ping = value

    def log_wanted(self, request: Request, level: str) -> bool:
        """Whether a log message at ``level`` goes to the client while serving ``request``.

        2026-07-28 era: when the request's ``_meta`` logLevel asks for
        ``level`` or a less severe one. Initialize era: by the level the
        client set with ``logging/setLevel``, or ``logs_by_default`` before
        it set one.
        """
        if self.era == "modern":
            return log_wanted(level, request.meta.get(LOG_LEVEL), default=False)
        return log_wanted(level, self.log_level, default=self._logs_by_default)

    def set_log_level(self, request: Request) -> dict[str, JSON]:
        """Serve ``logging/setLevel`` (initialize era): keep the level, return the empty result.

        Raises:
            RpcError: ``-32602``, the level is unknown.
        """
        self.log_level = checked_log_level(request.params.get("level"))
        return {}

    # ----------------------------------------------------------- serving

    async def serve(
        self,
        receive_stream: trio.abc.ReceiveStream,
        send_stream: trio.abc.SendStream,
        *,
        eof_grace: float = EOF_GRACE,
        drain_grace: float = DRAIN_GRACE,
    ) -> None:
        """Serve until the input ends, the output breaks, or `stop`.

        Once the input ends the requests in flight get ``eof_grace`` seconds
        to finish (then they are cancelled, and answer nothing); what is
        still queued then gets ``drain_grace`` seconds to be written. Neither
        stream is closed.
        """
        async with trio.open_nursery() as outer:
            outer.start_soon(self._write, send_stream, name=f"{self._prefix}:write")
            if self._alive:
                async with trio.open_nursery() as work:
                    self._work = work
                    await self._read(receive_stream)
                    self._end_input("the client closed its input before answering")
                    work.cancel_scope.deadline = trio.current_time() + eof_grace
            self._work = None
            self._finish_output()
            outer.cancel_scope.deadline = trio.current_time() + drain_grace

    def start_soon(self, fn: Callable[..., Awaitable[object]], *args: object, name: str) -> None:
        """Run ``fn(*args)`` beside the requests, for as long as the connection is served.

        It outlives the request that started it (a task's work, for
        example) and is cancelled like the requests in flight: once the
        input has ended and the grace period passed, or at `stop`.

        Raises:
            trio.BrokenResourceError: The connection is not being served.
        """
        if self._work is None or not self._alive:
            raise trio.BrokenResourceError(self._why or "the server is not serving")
        self._work.start_soon(fn, *args, name=f"{self._prefix}:{name}")

    def stop(self, why: str) -> None:
        """End the connection now, as a process that dies.

        Handlers are cancelled, our requests to the client fail with
        `trio.BrokenResourceError` (saying ``why``), and nothing more is
        sent: what was queued before is still written, then `serve` returns.
        """
        if not self._alive:
            return
        self._alive = False
        self._why = why
        self._fail_replies(why)
        if self._work is not None:
            self._work.cancel_scope.cancel()
        self._finish_output()

    async def _read(self, stream: trio.abc.ReceiveStream) -> None:
        framer = LineFramer(self._max_line)
        while True:
            try:
                data = bytes(await stream.receive_some())
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            for line in framer.feed(data) if data else framer.eof():
                await self._receive(line)
            if not data:
                return

    def _end_input(self, why: str) -> None:
        self.log("end of input")
        self._input_closed = True
        self._why = why
        self._fail_replies(why)
        self.app.input_ended()

    def _fail_replies(self, why: str) -> None:
        replies, self._replies = self._replies, {}
        for request_id, reply in replies.items():
            self._conn.abandon(request_id)
            reply.error = trio.BrokenResourceError(why)
            reply.done.set()

    async def _receive(self, line: bytes | Oversized) -> None:
        if isinstance(line, bytes):
            line = clean_line(line)
            if not line:
                return
        if self._on_line is not None:
            self._on_line(line)
        for event in self._conn.receive_line(line):
            if isinstance(event, ServerRequest):
                await self._admit(event)
            elif isinstance(event, ServerRequestCancelled):
                self._cancel(event.request_id)
            elif isinstance(event, Answered | Failed):
                reply = self._replies.pop(event.request_id, None)
                if reply is not None:
                    if isinstance(event, Answered):
                        reply.result = event.result
                    else:
                        reply.error = event.error
                    reply.done.set()
            elif isinstance(event, Note):
                if event.message.get("method") != CANCELLED:
                    self.app.notification(event.message)
            elif isinstance(event, Send):
                await self.send(event.data)
            else:
                assert isinstance(event, Diagnostic)
                # The core words its diagnostics for a client reading a server's stdout.
                self.log(event.text.replace("a stdout line", "an input line"))

    def _cancel(self, request_id: RequestId) -> None:
        key = request_key(request_id)
        request = self._open.get(key)
        if request is not None:
            request.cancelled = True
            self.app.cancelled(request)
        scope = self._running.get(key)
        if scope is not None:
            self.log(f"request {request_id!r} cancelled by the client")
            scope.cancel()

    # --------------------------------------------------------- admission

    async def _admit(self, event: ServerRequest) -> None:
        key = request_key(event.request_id)
        if key in self._open or key in self._running:
            self.log(f"ignored request {event.request_id!r}: a request with that id is in progress")
            return
        params = event.params if event.params is not None else {}
        request = Request(event.request_id, event.method, params if isinstance(params, dict) else {})
        self._open[key] = request
        try:
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            admitted = self.app.admit(request)
        except RpcError as refusal:
            self.log(f"refused {request.method!r} (id {request.id!r}): {refusal.message}")
            await self._send_answer(
                request, self._error(request, refusal.code, refusal.message, refusal.data)
            )
            return
        if admitted is None:
            return
        if isinstance(admitted, dict):
            # Answered here, before any later request is read.
            await self._send_answer(request, self._result(request, admitted))
            return
        assert self._work is not None
        scope = trio.CancelScope()
        self._running[key] = scope
        self._work.start_soon(self._run, request, admitted, scope, name=f"{self._prefix}:{request.method}")

    async def _run(self, request: Request, handler: Handler, scope: trio.CancelScope) -> None:
        try:
            with scope:
                try:
                    result = await handler()
                except RpcError as exc:
                    self.log(f"{request.method} (id {request.id!r}) failed: {exc.message}")
                    answer = self._error(request, exc.code, exc.message, exc.data)
                except Exception as exc:
                    error = self.app.failed(request, exc)
                    answer = self._error(request, error.code, error.message, error.data)
                else:
                    if result is None:
                        return
                    answer = self._result(request, result)
                # A cancelled request answers nothing, and none is answered twice.
                if not scope.cancel_called and not request.answered and self._alive:
                    await self._send_answer(request, answer)
        finally:
            if self._running.get(request.key) is scope:
                del self._running[request.key]
            if not request.answered:
                # Cancelled, or its handler chose not to answer: the id is free
                # again (a late answer can still be sent with `respond`).
                if self._open.get(request.key) is request:
                    del self._open[request.key]
                self._conn.forget_server_request(request.id)

    # --------------------------------------------------------- answering

    def _result(self, request: Request, result: dict[str, JSON]) -> dict[str, JSON]:
        body = stamp(
            result, era=self.era, method=request.method, request_id=request.id, meta=self._result_meta
        )
        return {"jsonrpc": "2.0", "id": request.id, "result": body}

    @staticmethod
    def _error(request: Request, code: int, message: str, data: JSON = None) -> dict[str, JSON]:
        error: dict[str, JSON] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return {"jsonrpc": "2.0", "id": request.id, "error": error}

    def _encode_answer(self, request: Request, message: dict[str, JSON]) -> bytes:
        if request.response is not None:
            raise RuntimeError(f"request {request.id!r} ({request.method}) was answered already")
        if not self._alive:
            raise trio.BrokenResourceError(self._why or "the server has stopped")
        line = encode(message)
        request.response = message
        if self._open.get(request.key) is request:
            del self._open[request.key]
        self._conn.forget_server_request(request.id)
        return line

    async def _send_answer(self, request: Request, message: dict[str, JSON]) -> None:
        try:
            line = self._encode_answer(request, message)
        except TypeError as exc:
            line = self._encode_answer(
                request, self._error(request, INTERNAL_ERROR, f"unencodable result: {exc}")
            )
        await self.send(line)

    def respond(self, request: Request, result: dict[str, JSON]) -> None:
        """Answer ``request`` with ``result`` (stamped for the era), now.

        Answers even a request the client cancelled (it drops a late
        answer, as from any server).

        Raises:
            RuntimeError: It was answered already.
            trio.BrokenResourceError: The server has stopped.
            TypeError: ``result`` cannot be written as JSON.
        """
        self.send_nowait(self._encode_answer(request, self._result(request, result)))

    def respond_error(self, request: Request, code: int, message: str, data: JSON = None) -> None:
        """Answer ``request`` with a JSON-RPC error, now; raises as `respond` does."""
        self.send_nowait(self._encode_answer(request, self._error(request, code, message, data)))

    # ----------------------------------------------------------- sending

    def send_nowait(self, line: bytes) -> None:
        """Queue one line (ending in LF) for the writer.

        Raises:
            trio.BrokenResourceError: The server has stopped.
        """
        if not self._alive:
            raise trio.BrokenResourceError(self._why or "the server has stopped")
        self._queue.append(line)
        self._writer.wake()

    async def send(self, line: bytes) -> None:
        """Queue one line, waiting while ``output_buffer`` lines already wait."""
        await trio.lowlevel.checkpoint_if_cancelled()
        while len(self._queue) >= self._limit and self._alive:
            await self._room.park()
        self.send_nowait(line)
        await trio.lowlevel.cancel_shielded_checkpoint()

    def notification(self, method: str, params: Mapping[str, JSON] | None = None) -> bytes:
        """The line of a notification to the client."""
        return self._conn.notification(method, dict(params) if params is not None else None)

    async def request(
        self, method: str, params: dict[str, JSON] | None = None, *, withdraw: str | None = None
    ) -> dict[str, JSON]:
        """Send the client a request of ours (initialize era) and return its result.

        Cancelled while waiting, the request is withdrawn: the client is sent
        ``notifications/cancelled`` (with ``withdraw`` as its reason).

        Raises:
            RpcError: The client answered with an error (`MCPError` for a
                broken answer).
            trio.BrokenResourceError: The client closed its side, or the
                server stopped, before answering.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._input_closed or not self._alive:
            raise trio.BrokenResourceError(self._why or "the server has stopped")
        request_id, line = self._conn.start_request(method, params)
        reply = _Reply()
        self._replies[request_id] = reply
        sent = False
        try:
            await self.send(line)
            sent = True
            await reply.done.wait()
        finally:
            if not reply.done.is_set():
                self._replies.pop(request_id, None)
                cancel = self._conn.abandon(request_id, withdraw)
                if sent and cancel is not None and self._alive:
                    self.send_nowait(cancel)
        if reply.error is not None:
            raise reply.error
        return reply.result

    # ----------------------------------------------------------- writing

    def _finish_output(self) -> None:
        self._output_done = True
        self._writer.wake()
        self._room.unpark_all()

    async def _write(self, stream: trio.abc.SendStream) -> None:
        """Write every queued line, all that piled up in one ``send_all``."""
        queue = self._queue
        while True:
            while not queue:
                if self._output_done:
                    return
                await self._writer.park()
            batch = b"".join(queue)
            queue.clear()
            self._room.unpark_all()
            try:
                await stream.send_all(batch)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self.log("the output is closed; stopping")
                self.stop("the client closed the connection")
                return
