"""Where notifications and answers wait for the task that takes them.

The pieces of delivery a `~trio_mcp.Session` is built from: a mailbox per
request (the caller's own task parks on it), the connection-wide sink (one
task runs its callbacks, in order), and `NotificationStream`, a subscriber's
bounded view of every notification. Each is bounded: what does not fit is
dropped and counted, never waited for.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections import deque
from typing import TYPE_CHECKING, Any, Final, Generic, Self, TypeAlias, TypeVar

import trio

from .._trio.parking import Parking

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from .._errors import MCPError
    from .._options import NotificationCallback

__all__ = ["CALLBACK_BACKLOG", "Mailbox", "NotificationStream", "Sink", "call_maybe_async", "fresh_error"]

JSON: TypeAlias = Any
T = TypeVar("T")

#: Notifications held for one request's callback, or for the sink, before
#: further ones are dropped (and counted).
CALLBACK_BACKLOG: Final = 4096


class Mailbox(Parking):
    """Where the reader leaves work for one parked task (a request or the sink)."""

    __slots__ = ("callback", "deadline", "done", "dropped", "error", "notes", "result", "scope", "timed_out")

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

    def is_done(self) -> bool:
        return self.done

    def has_news(self) -> bool:
        """Whether the request is done, or a notification waits for its callback."""
        return self.done or bool(self.notes)

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


class Sink(Parking, Generic[T]):
    """The connection-wide notifications, each with its owner when it was read (the client attached then)."""

    __slots__ = ("done", "dropped", "items")

    def __init__(self) -> None:
        self.task = None
        self.items: deque[tuple[dict[str, JSON], T | None]] = deque()
        self.done = False
        self.dropped = 0

    def put(self, note: dict[str, JSON], owner: T | None) -> bool:
        if len(self.items) >= CALLBACK_BACKLOG:
            self.dropped += 1
            return False
        self.items.append((note, owner))
        self.wake()
        return True

    def finish(self) -> None:
        self.done = True
        self.wake()


async def call_maybe_async(callback: Callable[..., Any], *args: Any) -> Any:
    """Call a callback that may be a plain or an async function; return its result."""
    outcome = callback(*args)
    if inspect.isawaitable(outcome):
        return await outcome
    return outcome


def fresh_error(exc: MCPError) -> MCPError:
    """A copy of a shared error, so that each raise gets its own traceback."""
    new = copy.copy(exc)
    new.__cause__ = exc.__cause__
    new.__traceback__ = None
    return new


class NotificationStream:
    """Every notification the server sends, from the moment of subscription.

    Returned by `Session.notifications`. Iterate it with ``async for``; the
    loop ends when the session is closed, and raises `ServerGone` when the
    server dies. It holds at most ``buffer`` notifications: when the consumer
    falls behind, newer ones are dropped (counted in `dropped` and reported
    through ``on_log``) rather than stalling the connection.

    It is also an async context manager; leaving it unsubscribes.
    """

    def __init__(self, buffer: int) -> None:
        self._send, self._receive = trio.open_memory_channel[dict[str, JSON]](buffer)
        self._error: MCPError | None = None
        self.dropped = 0
        """How many notifications this subscriber missed because its buffer was full."""

    @property
    def error(self) -> MCPError | None:
        """The error the stream ended with (iteration raises it), or `None`."""
        return self._error

    def publish(self, note: dict[str, JSON]) -> bool:
        """Offer one notification; `False` when the buffer was full (it is dropped and counted)."""
        try:
            self._send.send_nowait(note)
        except trio.WouldBlock:
            self.dropped += 1
            return False
        except trio.ClosedResourceError:
            return True
        return True

    def end(self, error: MCPError | None) -> None:
        """End the stream: iteration stops, or raises ``error`` once the buffer is empty."""
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
                raise fresh_error(self._error) from None
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
