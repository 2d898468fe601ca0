"""What a server group shows of itself: its servers' states, its events, its catalogue's items.

Plain, immutable records, and the `EventFeed` that hands the events out:
the supervisor (``supervisor``) and the catalogue (``catalogue``) emit
them, `ServerGroup` (``group``) subscribes its callers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Generic, Literal, TypeAlias, TypeVar

import attrs
import trio

from .._errors import UnknownName

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["EventFeed", "Listed", "ServerEvent", "ServerState", "ServerStatus", "UnknownName"]

_logger = logging.getLogger("trio_mcp.group")

T = TypeVar("T")

ServerState: TypeAlias = Literal[
    "starting", "ready", "restarting", "failed", "needs-login", "stopped", "disabled", "invalid"
]
"""Where a server of a group is in its life."""


@attrs.frozen
class Listed(Generic[T]):
    """One item of a group's catalogue: a tool, prompt, resource or template, and whose it is.

    Attributes:
        name: The group-wide name (``SERVER__ITEM``, see :doc:`groups`):
            unique, stable, and matching ``^[a-zA-Z0-9_-]{1,64}$``. Give it
            to a model, and back to `ServerGroup.call_tool`.
        server: The server's name in the configuration.
        item: What the server listed (a `Tool`, `Prompt`, `Resource` or
            `ResourceTemplate`), its own name unchanged.
    """

    name: str
    server: str
    item: T


@attrs.frozen
class ServerStatus:
    """A snapshot of one server of a group.

    Attributes:
        name: The server's name in the configuration.
        state: ``"starting"``, ``"ready"``, ``"restarting"`` (waiting out a
            delay before starting again), ``"failed"`` (given up on:
            `reason` says why), ``"needs-login"`` (a remote server that
            wants a login first: `error` is its `AuthRequired`; the group
            waits for `ServerGroup.restart` and never retries by itself),
            ``"stopped"`` (the group closed),
            ``"disabled"`` (marked so in the configuration) or ``"invalid"``
            (its entry is wrong: `error` is the `ConfigError`).
        error: The error of the last stop or failed start (`ServerGone`
            carries the exit status and the stderr tail), or `None`.
        reason: Why the server was given up on, when ``failed``.
        restarts: How many times the group restarted it.
        pid: The process id while it runs, else `None`.
        exit_code: The last exit status, when it exited on its own.
        signal: The signal that ended it last, if one did.
        stderr_tail: The end of what it last wrote to stderr.
    """

    name: str
    state: ServerState
    error: BaseException | None = None
    reason: str = ""
    restarts: int = 0
    pid: int | None = None
    exit_code: int | None = None
    signal: int | None = None
    stderr_tail: str = ""


@attrs.frozen
class ServerEvent:
    """A change in a group: a server changed state, or its catalogue changed.

    Attributes:
        server: The server's name.
        state: Its state now.
        previous: Its state before (the same as `state` for a change of
            catalogue).
        time: When, on Trio's clock (`trio.current_time`).
        error: What stopped it, for ``restarting`` and ``failed``.
        delay: For ``restarting``: the seconds until it starts again.
        restarts: How many times the group has restarted it so far.
        catalogue: `True` when the event says the server's tools, prompts
            or resources changed (after ``list_changed``), not its state.
    """

    server: str
    state: ServerState
    previous: ServerState
    time: float
    error: BaseException | None = None
    delay: float | None = None
    restarts: int = 0
    catalogue: bool = False


class EventFeed:
    """Where a group's events go: every subscriber's channel, then the ``on_event`` callback.

    An event never waits: past a subscriber's buffer it is dropped for that
    subscriber and counted in `dropped`.
    """

    def __init__(self, on_event: Callable[[ServerEvent], object] | None) -> None:
        self._on_event = on_event
        self._subscribers: list[trio.MemorySendChannel[ServerEvent]] = []
        self._closed = False
        self.dropped = 0
        """How many events (and listen-stream notifications) found a full buffer."""

    def subscribe(self, buffer: int) -> trio.MemoryReceiveChannel[ServerEvent]:
        """A channel of every event from now on; already ended once the feed is closed."""
        send, receive = trio.open_memory_channel[ServerEvent](buffer)
        if self._closed:
            send.close()
        else:
            self._subscribers.append(send)
        return receive

    def count_drop(self) -> None:
        """One more item did not fit in a consumer's buffer."""
        self.dropped += 1

    def emit(self, event: ServerEvent) -> None:
        for send in list(self._subscribers):
            try:
                send.send_nowait(event)
            except trio.WouldBlock:
                self.dropped += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._subscribers.remove(send)
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:
                _logger.exception("the group's on_event callback raised")

    def close(self) -> None:
        """End every subscriber's channel; later subscribers get an ended one."""
        self._closed = True
        for send in self._subscribers:
            send.close()
        self._subscribers.clear()
