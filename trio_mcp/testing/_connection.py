"""The plumbing of one connection of a `FakeServer`: the server's end, the "process", the client's end.

A fake connection has two ends of a `trio.testing.memory_stream_pair`. On
the server's end, `Connection` runs the package's server core (the demo
server's too) as one server process would, and turns the client's requests
into `FakeRequest` objects for the fake to answer. On the client's end,
`FakeChannel` is the stream channel a process channel would be, whose
"process" is the fake. Over HTTP the front hands each connection its own
stream, and `HTTPProcess` stands in for the process nobody sees.

The fake is given to a connection as a `Host`: what the connection records
and asks, never the whole `FakeServer`; `FakeTarget` (a fake as a target)
makes a `FakeChannel` for each opening and sees the fake as a `Servable`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import attrs
import trio
import trio.testing

from .._core.codec import UnreadableJSON, decode
from .._core.jsonrpc import INTERNAL_ERROR, request_key
from .._errors import RpcError
from .._options import at_least, callable_or_none
from .._serving.http import related_to
from .._serving.server import Server
from .._session import call_maybe_async
from .._targets import Target
from .._transports.memory import MemoryChannel
from .._transports.stream import CLOSE_GRACE
from ._request import FakeRequest, result_body

if TYPE_CHECKING:
    from .._channel import Receiver, TaskStarter
    from .._core.framing import Oversized
    from .._serving.server import Admission, Handler, Request

__all__ = ["MAX_LINE", "Connection", "FakeChannel", "FakeTarget", "HTTPProcess", "Host", "Servable"]

JSON: TypeAlias = Any
FakeHandler: TypeAlias = Callable[[FakeRequest], Any]

#: The longest line the fake reads from the client.
MAX_LINE = 64 * 1024 * 1024


class Host(Protocol):
    """What a connection needs of the fake it serves: its era, and where it records what came."""

    @property
    def era(self) -> Literal["modern", "legacy"]:
        """The era the fake speaks."""
        ...

    @property
    def received(self) -> list[JSON]:
        """Every message the client sent, decoded, over every connection."""
        ...

    @property
    def requests(self) -> list[FakeRequest]:
        """Every request the client sent, over every connection."""
        ...

    @property
    def handler_errors(self) -> list[Exception]:
        """What the handlers raised, over every connection."""
        ...


class Connection:
    """One connection of a `FakeServer`: what one server process would hold.

    The fake's side of the connection is the package's server core
    (`trio_mcp._serving.server.Server`, the demo server's too) over the
    server's end of a memory stream pair: it reads the client's lines
    through the real framing, decodes them, runs the handlers in tasks and
    writes through one writer task. This class is that core's app: it turns
    the client's requests into `FakeRequest` objects and hands them to the
    fake's handlers, rules or test. The client's end is a `MemoryChannel`,
    through which the "process" also writes its stderr and reports its exit.
    """

    def __init__(
        self,
        server: Host,
        channel: MemoryChannel | HTTPProcess,
        stream: trio.abc.Stream,
        *,
        admit: Callable[[Connection, FakeRequest], Admission],
        disconnected: Callable[[Connection], None],
        pid: int,
        make_server: Callable[..., Server] = Server,
    ) -> None:
        self.server = server
        self.pid = pid
        self._admit = admit
        self._disconnected = disconnected
        self.channel = channel
        self.stream = stream
        self.core = make_server(
            self,
            era=server.era,
            task_prefix="fake-server",
            max_line=MAX_LINE,
            # Initialize era: log messages flow until the client sets a level.
            logs_by_default=True,
            on_line=self._record,
        )
        # ping is one of the fake's own rules, which a handler may override.
        self.core.answers_ping = False
        self.requests: dict[tuple[bool, int | str], FakeRequest] = {}
        self._records: dict[tuple[bool, int | str], Request] = {}
        self._cancellations: dict[tuple[bool, int | str], trio.Event] = {}
        self.handler_errors: list[Exception] = []
        self.finished = trio.Event()
        self._line: list[JSON] = []

    @property
    def alive(self) -> bool:
        return self.core.alive

    @property
    def era(self) -> Literal["modern", "legacy"]:
        return self.server.era

    async def wait_cancelled(self, request: Request) -> None:
        if request.cancelled:
            await trio.lowlevel.checkpoint()
            return
        await self._cancellations.setdefault(request.key, trio.Event()).wait()

    def set_log_level(self, request: FakeRequest) -> dict[str, JSON]:
        """Serve ``logging/setLevel`` for ``request`` (initialize era)."""
        return self.core.set_log_level(self._records[request_key(request.id)])

    # ----------------------------------------------------------- process

    async def run(self) -> None:
        """The server "process": serve until the client leaves or the server exits, then close."""
        try:
            await self.core.serve(self.stream, self.stream, eof_grace=0)
        finally:
            self.disconnect("the client disconnected")
            await trio.aclose_forcefully(self.stream)
            self.finished.set()

    def disconnect(self, why: str) -> None:
        """The process is gone: no more sending, handlers stop, the server's requests fail."""
        self.core.stop(why)
        self._disconnected(self)

    def exit(self, code: int | None, signal: int | None) -> None:
        # The exit status first: the end of the stream reports it.
        self.channel.exited(code, signal)
        self.disconnect("the server exited")

    # ----------------------------------------------------------- sending

    def send(self, data: bytes) -> None:
        self.core.send_nowait(data)

    def notify(self, method: str, params: Mapping[str, JSON] | None, related: Request | None = None) -> None:
        line = self.core.notification(method, params)
        if related is None:
            self.core.send_nowait(line)
            return
        with related_to(related):
            self.core.send_nowait(line)

    # -------------------------------------------------- the server core's app

    def _record(self, line: bytes | Oversized) -> None:
        decoded: JSON
        if isinstance(line, bytes):
            try:
                decoded = decode(line)
            except UnreadableJSON:
                decoded = {"unparsable": line}
        else:
            decoded = {"unparsable": line.head}
        self.server.received.append(decoded)
        self._line = decoded if isinstance(decoded, list) else [decoded]

    def _message(self, request: Request) -> dict[str, JSON]:
        """The message of ``request``, as decoded from the line it came in."""
        for message in self._line:
            if (
                isinstance(message, dict)
                and message.get("method") == request.method
                and isinstance(message.get("id"), int | str)
                and request_key(message["id"]) == request.key
            ):
                return message
        rebuilt: dict[str, JSON] = {"jsonrpc": "2.0", "id": request.id, "method": request.method}
        if request.params:
            rebuilt["params"] = request.params
        return rebuilt

    def admit(self, request: Request) -> Admission:
        fake = FakeRequest(self, request, self._message(request))
        self.requests[request.key] = fake
        self._records[request.key] = request
        self.server.requests.append(fake)
        return self._admit(self, fake)

    def notification(self, message: dict[str, JSON]) -> None:
        pass  # kept in FakeServer.received, like every message

    def cancelled(self, request: Request) -> None:
        event = self._cancellations.get(request.key)
        if event is not None:
            event.set()

    def failed(self, request: Request, error: Exception) -> RpcError:
        self.handler_errors.append(error)
        self.server.handler_errors.append(error)
        return RpcError(INTERNAL_ERROR, f"the fake server's handler raised {error!r}")

    def input_ended(self) -> None:
        # The client closed its end: the "process" goes with it.
        self.disconnect("the client disconnected")

    def handler(self, handler: FakeHandler, request: FakeRequest) -> Handler:
        """What the server core runs, in a task of its own, for a request a handler answers."""

        async def run() -> dict[str, JSON] | None:
            try:
                outcome = await call_maybe_async(handler, request)
            except trio.BrokenResourceError:
                if not self.alive:
                    return None  # it answered a client that has gone: no bug of the test's
                raise
            if outcome is None:
                if not request.answered:
                    raise TypeError(f"the handler of {request!r} returned None without answering it")
                return None
            if request.answered:
                raise TypeError(f"the handler of {request!r} answered it and returned a value too")
            if isinstance(outcome, str) and request.method == "tools/call":
                return {"content": [{"type": "text", "text": outcome}]}
            return result_body(outcome)

        return run


class HTTPProcess:
    """The "process" of a fake connection over HTTP: its stderr tail and exit, seen by nobody but the test."""

    def __init__(self, tail_bytes: int = 8 * 1024) -> None:
        self._tail: deque[str] = deque()
        self._size = 0
        self._limit = tail_bytes
        self.status: tuple[int | None, int | None] | None = None

    @property
    def stderr_tail(self) -> str:
        return "".join(line + "\n" for line in self._tail)

    def stderr_line(self, text: str) -> None:
        self._tail.append(text)
        self._size += len(text) + 1
        while self._size > self._limit and self._tail:
            self._size -= len(self._tail.popleft()) + 1

    def exited(self, code: int | None, signal: int | None = None) -> None:
        self.status = (code, signal)


class FakeChannel(MemoryChannel):
    """The client's side of a fake connection: a `MemoryChannel` whose "process" is a `FakeServer`.

    Starting it connects the fake (``connect``, `FakeServer.serve_channel`)
    to the other end of the memory stream pair and starts the fake's server
    task, as a process channel starts its process; closing it disconnects
    the fake (its handlers stop) before the stream is closed. Everything between is the stream channel's own
    framing, reader and writer.
    """

    def __init__(
        self,
        connect: Callable[[MemoryChannel, trio.abc.Stream], Connection],
        name: str,
        max_message_bytes: int,
        *,
        on_stderr: Callable[[str], object] | None,
        stderr_tail_bytes: int,
    ) -> None:
        client_end, self._server_end = trio.testing.memory_stream_pair()
        super().__init__(
            client_end, max_message_bytes, name, on_stderr=on_stderr, stderr_tail_bytes=stderr_tail_bytes
        )
        self._connect = connect
        self.link: Connection | None = None

    @property
    def pid(self) -> int | None:
        # The fake's "process id" of this connection, as a process channel has one.
        return self.link.pid if self.link is not None else None

    async def start(self, start_task: TaskStarter, receiver: Receiver) -> None:
        await trio.lowlevel.checkpoint()
        self.link = link = self._connect(self, self._server_end)
        try:
            await super().start(start_task, receiver)
        except BaseException:
            link.disconnect("the client never connected")
            raise
        start_task(link.run, "fake-server")

    async def aclose(self, deadline: float | None = None) -> None:
        # What the client sent is written, then its end closes: the fake
        # reads the rest and the end of its input and stops, as a process
        # whose stdin closed (at once: nothing in memory takes time).
        await super().aclose(deadline)
        link = self.link
        if link is not None:
            with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_GRACE):
                await link.finished.wait()
            link.disconnect("the client disconnected")


class Servable(Protocol):
    """What a target needs of its fake: a name for the channel, and a connection for each opening."""

    @property
    def name(self) -> str:
        """The server's name."""
        ...

    def serve_channel(self, channel: MemoryChannel, stream: trio.abc.Stream) -> Connection:
        """Serve the client whose channel is ``channel`` over ``stream``."""
        ...


@attrs.frozen(eq=False)
class FakeTarget(Target):
    """A `FakeServer` as a target: each opening connects it over a fresh memory stream pair."""

    server: Servable
    on_stderr: Callable[[str], object] | None = attrs.field(
        default=None, validator=callable_or_none("on_stderr")
    )
    stderr_tail_bytes: int = attrs.field(default=8 * 1024, validator=at_least("stderr_tail_bytes", 0))
    channels: list[FakeChannel] = attrs.field(factory=list, init=False)

    @property
    def restart_after_probe_death(self) -> bool:
        # As for a process: a fake that dies on the server/discover probe is
        # connected again and sent initialize straight away.
        return True

    def _make_channel(self, max_message_bytes: int) -> FakeChannel:
        channel = FakeChannel(
            self.server.serve_channel,
            self.server.name,
            max_message_bytes,
            on_stderr=self.on_stderr,
            stderr_tail_bytes=self.stderr_tail_bytes,
        )
        self.channels.append(channel)
        return channel

    def handler_errors(self) -> list[BaseException]:
        """What the fake's handlers raised, over every connection made."""
        return [
            error
            for channel in self.channels
            if channel.link is not None
            for error in channel.link.handler_errors
        ]
