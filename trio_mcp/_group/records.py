"""What a server group shows of itself: its servers' states, its events, its catalogue's items.

Plain, immutable records; `ServerGroup` (in ``group``) makes them.
"""

from __future__ import annotations

from typing import Generic, Literal, TypeAlias, TypeVar

import attrs

from .._errors import UnknownName

__all__ = ["Listed", "ServerEvent", "ServerState", "ServerStatus", "UnknownName"]

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
