"""One server of a group: its record, what it lists, and the callers' listen streams.

The group (`ServerGroup`) keeps a `Member` for each server of its
configuration: its state, its restart tracker, its client while it runs, and
its last `Listing`; the supervisor (``supervisor``) changes it, the
catalogue (``catalogue``) names what it lists, and it tells its own
`ServerStatus`. A `Listener` is one `ServerGroup.listen` block, which
outlives the server's processes; `start_helper` runs one (or the
supervisor's own helpers) beside the server's client.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import trio

from .._client import start_beside
from .._config import ConfigError, ServerSpec
from .._errors import AuthRequired, MCPError, ServerGone
from .._models import Prompt, Resource, ResourceTemplate, Tool
from .records import ServerStatus

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .._client import Client
    from .._core.restart import RestartTracker
    from .records import Listed, ServerState

__all__ = [
    "Listener",
    "Listing",
    "Member",
    "alive",
    "start_helper",
]

JSON: TypeAlias = Any

logger = logging.getLogger("trio_mcp.group")


@attrs.define
class Listing:
    tools: list[Tool] = attrs.field(factory=list)
    prompts: list[Prompt] = attrs.field(factory=list)
    resources: list[Resource] = attrs.field(factory=list)
    templates: list[ResourceTemplate] = attrs.field(factory=list)


class Member:
    """One server of the group and its supervisor's state."""

    __slots__ = (
        "client",
        "dirty",
        "error",
        "index",
        "listeners",
        "listing",
        "name",
        "prompts",
        "reason",
        "refreshing",
        "scope",
        "settled",
        "spec",
        "state",
        "tools",
        "tracker",
        "wake",
        "watch",
    )

    def __init__(self, spec: ServerSpec, index: int, tracker: RestartTracker) -> None:
        self.spec = spec
        self.name = spec.name
        self.index = index
        self.tracker = tracker
        self.state: ServerState = "starting"
        self.error: BaseException | None = None
        self.reason = ""
        self.client: Client | None = None
        self.wake: trio.Event | None = None
        self.dirty = False
        self.refreshing = False
        self.settled = False
        self.scope: trio.CancelScope | None = None
        self.listing = Listing()
        self.tools: list[Listed[Tool]] = []
        self.prompts: list[Listed[Prompt]] = []
        self.listeners: list[Listener] = []
        self.watch: trio.CancelScope | None = None

    def poke(self) -> None:
        if self.wake is not None:
            self.wake.set()

    async def sleep(self, seconds: float = math.inf) -> None:
        """Sleep until `poke` (or for ``seconds``)."""
        self.wake = trio.Event()
        with trio.move_on_after(seconds):
            await self.wake.wait()
        self.wake = None

    def status(self, *, stopping: bool) -> ServerStatus:
        """A snapshot of the server; ``stopping``: the group is closing."""
        error = self.error
        gone = error if isinstance(error, ServerGone) else None
        exit_code = gone.exit_code if gone else None
        signal = gone.signal if gone else None
        pid = None
        state = self.state
        client = self.client
        if state == "ready" and client is not None:
            stats = client.statistics()
            if alive(client):
                pid = stats.pid
            else:
                # Dead, and its supervisor has not yet been told (the end of
                # its output is still being read): no longer ready.
                code = stats.returncode
                exit_code = code if code is not None and code >= 0 else None
                signal = -code if code is not None and code < 0 else None
                again = self.tracker.would_restart(trio.current_time(), clean=code == 0)
                state = "restarting" if again and not stopping else "failed"
        return ServerStatus(
            name=self.name,
            state=state,
            error=error,
            reason=self.reason,
            restarts=self.tracker.restarts,
            pid=pid,
            exit_code=exit_code,
            signal=signal,
            stderr_tail=gone.stderr_tail if gone else "",
        )

    def shown_state(self, *, stopping: bool) -> ServerState:
        """The state `status` shows: a ready server whose process is dead is no longer ready."""
        if self.state == "ready" and self.client is not None and not alive(self.client):
            return self.status(stopping=stopping).state
        return self.state

    def unavailable(self) -> MCPError:
        """Why the server cannot be used: the error a caller who waits for it gets."""
        if self.state == "invalid" and isinstance(self.error, ConfigError):
            wrong = self.error
            return ConfigError(str(wrong), file=wrong.file, server=wrong.server, field=wrong.field)
        if self.state == "disabled":
            return ConfigError(
                f"server {self.name!r} is disabled in the configuration", server=self.name, field="disabled"
            )
        last = self.error
        if self.state == "needs-login" and isinstance(last, AuthRequired):
            return last
        if self.state == "failed":
            text = f"server {self.name!r} failed: {self.reason}"
        else:
            text = f"server {self.name!r} is stopped: the group is closing"
        if last is not None:
            text += f"; last error: {str(last).splitlines()[0]}"
        gone = last if isinstance(last, ServerGone) else None
        error = ServerGone(
            text,
            exit_code=gone.exit_code if gone else None,
            signal=gone.signal if gone else None,
            stderr_tail=gone.stderr_tail if gone else "",
            server=gone.server if gone else self.name,
            command=self.spec.command_line[0],
            arguments=self.spec.command_line[1:],
            pid=gone.pid if gone else None,
        )
        error.__cause__ = last
        return error


class Listener:
    """One `ServerGroup.listen` block: its filter and its channel, across the server's processes."""

    def __init__(
        self,
        on_drop: Callable[[], None],
        tools: bool,
        prompts: bool,
        resources: bool,
        uris: tuple[str, ...],
        buffer: int,
    ) -> None:
        self.on_drop = on_drop
        self.tools, self.prompts, self.resources, self.uris = tools, prompts, resources, uris
        self.buffer = buffer
        self.wanted = {
            method
            for method, on in [
                ("notifications/tools/list_changed", tools),
                ("notifications/prompts/list_changed", prompts),
                ("notifications/resources/list_changed", resources),
                ("notifications/resources/updated", bool(uris)),
            ]
            if on
        }
        self.send, self.receive = trio.open_memory_channel[dict[str, JSON]](buffer)
        self.scopes: set[trio.CancelScope] = set()

    def offer(self, note: dict[str, JSON]) -> None:
        try:
            self.send.send_nowait(note)
        except trio.WouldBlock:
            self.on_drop()
        except trio.ClosedResourceError:
            pass

    def close(self) -> None:
        for scope in self.scopes:
            scope.cancel()
        self.send.close()

    async def follow(self, client: Client, started: Callable[[], None]) -> None:
        """Subscribe on one process of the server and forward what it sends, until it ends."""
        with trio.CancelScope() as scope:
            self.scopes.add(scope)
            try:
                async with client.listen(
                    tools=self.tools,
                    prompts=self.prompts,
                    resources=self.resources,
                    resource_uris=self.uris,
                    buffer=self.buffer,
                ) as sub:
                    started()
                    async for note in sub:
                        self.offer(note)
            except MCPError as exc:
                logger.debug("%s: a listen stream ended: %s", client.name, exc)
            finally:
                self.scopes.discard(scope)


def alive(client: Client) -> bool:
    """Whether the client's server can still answer: its session works and its process (if any) runs."""
    return client.failure is None and client.statistics().returncode is None


async def start_helper(client: Client, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
    """Run ``fn(*args, started)`` in the session's nursery; return once it calls ``started`` or ends."""
    started = trio.Event()

    async def run() -> None:
        try:
            await fn(*args, started.set)
        finally:
            started.set()

    start_beside(client, run, name="group helper")
    await started.wait()
