"""The seam between a session and its transport: a message channel.

A `Channel` carries whole JSON-RPC messages between the client and one
server, and says why it ended. It knows nothing of JSON-RPC: it moves lines
(or, for HTTP, message bodies and events). A `trio_mcp.Session` drives one
channel, and receives what it carries through the `Receiver` it gives the
channel when it starts it:

* `Channel.send` hands the channel a message to deliver, with what the
  session knows of it (an `Outgoing`: method, name, our request id, the
  2026-07-28 revision it carries), so that no channel ever reads the JSON it
  sends. It never blocks and never raises for a broken peer: the channel
  queues what it cannot write at once, and reports a peer that is gone
  through `Receiver.channel_ended`.
* Every message from the server arrives through `Receiver.message_received`,
  in order, called from one of the channel's tasks (or from a caller's task
  reading directly, see `Channel.read_until`). Too long a message arrives as
  an `Oversized` record.
* `Receiver.channel_ended` reports, once, why nothing more will come: the
  server exited (`ServerGone`, with its exit status), closed the stream, or
  stopped reading.
* `Channel.aclose` stops the peer, bounded in time; after it returns the
  channel calls its receiver no more.

The channels of this package are the child process (`trio_mcp._transports.process`),
any Trio byte stream (`trio_mcp._transports.stream`), Streamable HTTP
(`trio_mcp._transports.http`), and an in-memory server for tests
(`trio_mcp.testing`). Nothing above the session knows which
one it runs on.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

if TYPE_CHECKING:
    from ._core.framing import Oversized
    from ._errors import MCPError

__all__ = ["ANSWER", "Channel", "Outgoing", "Receiver", "TaskStarter"]

JSON: TypeAlias = Any

#: The protocol-version key of a 2026-07-28 ``_meta`` envelope.
_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
#: Methods whose ``params.name`` names what they act on.
_BY_NAME: Final = frozenset({"tools/call", "prompts/get"})
#: Methods whose ``params.uri`` names what they act on.
_BY_URI: Final = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
#: The requests of the tasks extension that act on one task, named by its ``taskId``.
_BY_TASK: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})

TaskStarter: TypeAlias = Callable[[Callable[[], Awaitable[None]], str], None]
"""Starts a background task of the connection: ``start(fn, name)``. The task
lives until the connection is closed (`Channel.aclose` comes first)."""


class Outgoing:
    """What the session knows of a message it hands to its channel.

    Made from the method and the params the session was given (never from
    the encoded bytes), so that a channel can route a message, set its
    headers and remember it without reading its JSON. Making one costs an
    allocation: `name` and `revision` are read from the params only when a
    channel asks for them. Read-only.

    Args:
        method: The method, or `None` for our answer to a server request.
        request_id: Our id, when the message is one of our requests.
        params: The params the session was given (not copied; not changed).
        headers: Extra HTTP headers of this request, already encoded: the
            ``Mcp-Param-*`` headers of a 2026-07-28 ``tools/call``
            (x-mcp-header). Channels without headers ignore them.

    Attributes:
        method: The method, or `None` for our answer to a server request.
        request_id: Our id, when the message is one of our requests.
        headers: Extra HTTP headers of this request (see Args).
    """

    __slots__ = ("headers", "method", "params", "request_id")

    def __init__(
        self,
        method: str | None,
        request_id: int | None = None,
        params: dict[str, JSON] | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.method = method
        self.request_id = request_id
        self.params = params
        self.headers = headers

    @property
    def name(self) -> str | None:
        """What a request acts on: ``params.name`` of ``tools/call`` and ``prompts/get``,
        ``params.uri`` of ``resources/read``, ``resources/subscribe`` and
        ``resources/unsubscribe``, ``params.taskId`` of ``tasks/get``,
        ``tasks/update`` and ``tasks/cancel``; else `None`."""
        params = self.params
        if params is None:
            return None
        method = self.method
        if method in _BY_NAME:
            name = params.get("name")
        elif method in _BY_URI:
            name = params.get("uri")
        elif method in _BY_TASK:
            name = params.get("taskId")
        else:
            return None
        return name if isinstance(name, str) else None

    @property
    def revision(self) -> str | None:
        """The protocol revision of a 2026-07-28-era message (the version its ``params._meta``
        carries), `None` for a message of the initialize era."""
        params = self.params
        meta = params.get("_meta") if params is not None else None
        revision = meta.get(_VERSION_KEY) if isinstance(meta, dict) else None
        return revision if isinstance(revision, str) else None

    def __repr__(self) -> str:
        return (
            f"Outgoing(method={self.method!r}, request_id={self.request_id!r}, name={self.name!r},"
            f" revision={self.revision!r})"
        )


#: The record of an answer to a server request.
ANSWER: Final = Outgoing(None)


class Receiver(Protocol):
    """What a channel reports to the session that drives it."""

    def message_received(self, message: bytes | Oversized) -> None:
        """One message from the server: its bytes (a line without its LF), or a
        record of one that was too long and was discarded."""
        ...

    def channel_ended(self, error: MCPError) -> None:
        """Nothing more will come or go: ``error`` says why. Called at most once."""
        ...

    def channel_log(self, text: str) -> None:
        """A diagnostic of the channel's own, for the connection's log."""
        ...

    def is_idle(self) -> bool:
        """Whether no request awaits an answer (a channel may then rest its reader)."""
        ...

    def awaits(self, request_id: int) -> bool:
        """Whether our request ``request_id`` still awaits its answer (a channel
        that carries each request on a stream of its own stops reading it then)."""
        ...

    def request_failed(self, request_id: int, error: MCPError) -> None:
        """The channel itself failed request ``request_id`` with ``error`` (an
        HTTP status that is no MCP answer, say); the connection lives on."""
        ...


class Channel(abc.ABC):
    """A transport's side of a connection: moves messages, says why it ended."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Who is on the other end, for error messages and logs, e.g. ``server 'node index.js' (pid 4242)``."""

    @abc.abstractmethod
    async def start(self, start_task: TaskStarter, receiver: Receiver) -> None:
        """Connect (start the process, ...) and start moving messages.

        Raises the transport's error for a failed start (`SpawnFailed` for a
        process); then nothing is left running.
        """

    @abc.abstractmethod
    def send(self, data: bytes, about: Outgoing, *, batch: bool = False) -> None:
        """Deliver one message (a JSON line ending in LF); never blocks.

        Args:
            data: The message.
            about: What the session knows of it: its method, our request id
                when it is one of our requests (so that `withdraw` can find
                it), its name and its 2026-07-28 revision.
            batch: Other messages are likely to follow in the same scheduler
                pass: the channel may hold this one to write them together.
        """

    def withdraw(self, request_id: int) -> bool:
        """The session stopped waiting for request ``request_id``.

        Returns whether the server is known not to need telling: the request
        was still queued here (it is dropped), or the channel itself told the
        server (an HTTP request is aborted, say). `False` (the default) makes
        the session send ``notifications/cancelled``.
        """
        return False

    async def read_until(self, done: Callable[[], bool]) -> bool:
        """Read messages in the caller's task until ``done()`` holds.

        A fast path for a lone request: the caller reads its own answer, with
        no task switch. Messages read go to the receiver as usual. Returns
        `False` at once when the channel cannot read directly now (the caller
        then waits for the channel's own reader), `True` once ``done()``
        holds or the channel has ended. The default cannot.
        """
        return False

    @abc.abstractmethod
    async def aclose(self, deadline: float | None = None) -> None:
        """Stop the peer and release everything; idempotent and bounded.

        Honours ``deadline`` (`trio.current_time` clock; by default the
        caller's effective deadline): with less time left than the grace the
        transport would give the peer, it stops the peer sooner.
        """

    @property
    def pid(self) -> int | None:
        """The server's process id, when it is a local process."""
        return None

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it was reaped (minus the signal number for a signal)."""
        return None

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr, when there is such a thing."""
        return ""

    @property
    def stderr_lines(self) -> int:
        """How many lines the server wrote to stderr."""
        return 0
