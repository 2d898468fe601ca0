"""The supervisor of a group's servers: starting each, watching it, starting it again as the policy says.

One task per server (`Supervisor.supervise`) starts the server within its
``startup_timeout``, subscribes to its list changes and lists what it
offers before it counts as ready, waits for it to stop, and then applies
the `RestartPolicy` (through the server's `RestartTracker`): start again
after a delay, give up (``failed``), or wait for a login. One server's
trouble never leaves its task: it becomes that server's state, and an
event.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import attrs
import trio

from .._client import start_beside
from .._config import ConfigError
from .._errors import (
    AuthRequired,
    MCPError,
    NotSupported,
    RpcError,
    ServerGone,
    SpawnFailed,
    VersionMismatch,
    name_entry,
)
from .._options import ClientOptions
from .._session import RequestTimeout
from .._telemetry import restarting
from .connect import connect, startup_timeout
from .members import Listing, start_helper
from .records import ServerEvent

if TYPE_CHECKING:
    from collections.abc import Awaitable, Iterable

    from .._client import Client
    from .members import Member
    from .records import ServerState

__all__ = ["Publish", "Settings", "Supervisor", "SupervisorOps"]

JSON: TypeAlias = Any

_logger = logging.getLogger("trio_mcp.group")
_server_logger = logging.getLogger("trio_mcp.server")

_LIST_CHANGED = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }
)


@attrs.frozen
class Settings:
    """How every server of a group is started.

    Args:
        options: The client options of every server.
        kill_grace: Each server process's time to exit, or `None` for the
            target's default.
        on_server_stderr: Called with a server's name and each line of its
            stderr, or `None`.
    """

    options: ClientOptions
    kill_grace: float | None = None
    on_server_stderr: Callable[[str, str], object] | None = None


class Publish(Protocol):
    """Takes a server's new listing; ``announce``: the change is an event (not a first listing)."""

    def __call__(self, member: Member, listing: Listing, *, announce: bool) -> None: ...


@attrs.frozen
class SupervisorOps:
    """What the supervisor needs of the rest of the group.

    Args:
        publish: Takes a server's new listing (the catalogue's
            ``publish``); its keyword ``announce`` says whether the change
            is an event.
        emit: Announces an event (the event feed's ``emit``).
    """

    publish: Publish
    emit: Callable[[ServerEvent], None]


class Supervisor:
    """Starts, watches and restarts every server of a group; each server's state is its to change.

    Args:
        members: Every server of the group.
        settings: How the servers are started.
        ops: The catalogue and the event feed.
    """

    def __init__(self, members: Iterable[Member], settings: Settings, ops: SupervisorOps) -> None:
        self._members = list(members)
        self._settings = settings
        self._ops = ops
        self.stopping = False
        """Whether the group is closing: no server starts again."""
        self._change = trio.Event()
        self._unsettled = len(self._members)
        self._settled = trio.Event()
        if not self._unsettled:
            self._settled.set()

    # ------------------------------------------------------------ waiting

    async def next_change(self) -> None:
        """Wait until some server's state changes."""
        await self._change.wait()

    async def wait_settled(self) -> None:
        """Wait until every server's first start is over, one way or the other."""
        await self._settled.wait()

    def _changed(self) -> None:
        """Wake every task waiting for some server's state to change."""
        self._change.set()
        self._change = trio.Event()

    def _settle(self, member: Member) -> None:
        """The server's first start is over, one way or the other."""
        if not member.settled:
            member.settled = True
            self._unsettled -= 1
            if not self._unsettled:
                self._settled.set()

    # ---------------------------------------------------- the policy, by hand

    def restart(self, member: Member) -> None:
        """Start a failed server again (a fresh restart history), end a restart's delay, retry a login."""
        if member.state in ("failed", "restarting", "needs-login"):
            if member.state == "failed":
                member.tracker.reset()
            member.poke()

    def stop(self, deadline: float = math.inf) -> None:
        """Stop every server, in parallel: the ready ones leave their client's block normally.

        Each must be closed by ``deadline`` (the closer's own): past it, its
        close is cancelled, and the server gets correspondingly less grace.
        """
        self.stopping = True
        for member in self._members:
            if member.watch is not None:
                # Ready: leave the client's block normally, a graceful close.
                member.watch.cancel()
            elif member.scope is not None:
                member.scope.cancel()
            if member.scope is not None:
                member.scope.deadline = min(member.scope.deadline, deadline)
            member.poke()
        self._changed()

    def ended(self) -> None:
        """The supervisors' tasks are over: a server still shown as running (they were cancelled) is stopped."""
        self.stop()
        for member in self._members:
            self._settle(member)
            if member.state not in ("stopped", "disabled", "invalid"):
                self._set(member, "stopped")

    # ------------------------------------------------------------ one server

    def _set(
        self,
        member: Member,
        state: ServerState,
        *,
        error: BaseException | None = None,
        delay: float | None = None,
        reason: str = "",
    ) -> None:
        previous = member.state
        member.state = state
        if error is not None:
            name_entry(error, member.name)
            member.error = error
        member.reason = reason
        self._changed()
        if state in ("ready", "restarting", "failed", "needs-login"):
            text = f"server {member.name!r}: {previous} -> {state}"
            if error is not None:
                text += f" ({str(error).splitlines()[0]})"
            if delay is not None:
                text += f", starting again in {delay:.2f} s"
            if reason:
                text += f": given up, {reason}"
            _logger.log(logging.WARNING if state == "failed" else logging.INFO, text)
        self._ops.emit(
            ServerEvent(
                member.name,
                state,
                previous,
                trio.current_time(),
                error=error,
                delay=delay,
                restarts=member.tracker.restarts,
            )
        )

    async def supervise(self, member: Member) -> None:
        """The life of one server, until the group closes: start, watch, apply the policy."""
        if member.state in ("disabled", "invalid"):
            self._settle(member)
            return
        while not self.stopping:
            if member.state != "starting":
                self._set(member, "starting")
            error = await self._attempt(member)
            self._settle(member)
            if error is None:
                break
            if isinstance(error, AuthRequired):
                # A login is for a person to do: wait for restart(), never loop.
                self._set(member, "needs-login", error=error)
                await member.sleep()
                continue
            decision = member.tracker.stopped(
                trio.current_time(), clean=_clean_exit(error), retryable=_retryable(error)
            )
            if not decision.restart:
                self._set(member, "failed", error=error, reason=decision.reason)
                await member.sleep()
                continue
            self._set(member, "restarting", error=error, delay=decision.delay)
            if self._settings.options.telemetry:
                restarting(member.name, member.tracker.restarts, error, decision.delay)
            await member.sleep(decision.delay)
        self._set(member, "stopped")

    async def _attempt(self, member: Member) -> BaseException | None:
        """Start the server and serve it until it stops; returns what stopped it (`None`: the group)."""
        death: list[BaseException] = []
        spec = member.spec
        ready = False
        member.dirty = False  # a new process is listed from scratch
        deadline = trio.current_time() + spec.startup_timeout
        # One scope bounds the start (its deadline) and lets the group cancel
        # it; once the server is ready, the deadline goes.
        with trio.CancelScope(deadline=deadline) as member.scope:
            if self.stopping:
                member.scope.cancel()
            try:
                async with connect(
                    spec,
                    self._options_of(member),
                    on_stderr=self._stderr_of(member),
                    kill_grace=self._settings.kill_grace,
                ) as client:
                    member.scope.deadline = math.inf
                    # The helpers (the group's listen stream, refreshes, the
                    # callers' listen streams) run in the session's nursery
                    # and end with it.
                    try:
                        with trio.move_on_at(deadline):
                            await self._prepare(member, client)
                            ready = True
                    except MCPError as exc:
                        death.append(exc)
                    if not ready and not death:
                        death.append(
                            RequestTimeout(
                                f"server {spec.name!r} did not list what it offers within its"
                                f" startup_timeout ({spec.startup_timeout:g} s)",
                                method="tools/list",
                                timeout=spec.startup_timeout,
                                server=client.name,
                            )
                        )
                    if ready:
                        with trio.CancelScope() as member.watch:
                            member.client = client
                            member.tracker.ready(trio.current_time())
                            self._set(member, "ready")
                            self._settle(member)
                            if self.stopping:
                                member.watch.cancel()
                            elif member.dirty:
                                self._start_refresh(member)
                            # This task watches the server until it stops.
                            death.append(await client.wait_failed())
            except MCPError as exc:
                death.append(exc)
            except (TypeError, ValueError, ImportError) as exc:
                if ready:
                    raise
                # An entry the opener refuses (a value of the wrong type), or
                # one this installation cannot serve (a URL without httpx2).
                error = ConfigError(f"server {spec.name!r} cannot be started: {exc}", server=spec.name)
                error.__cause__ = exc
                death.append(error)
            finally:
                member.client = None
                member.watch = None
        if self.stopping:
            return None
        if member.scope.cancelled_caught and not death:
            death.append(startup_timeout(spec))
        return death[0] if death else None

    async def _prepare(self, member: Member, client: Client) -> None:
        """Subscribe to changes, list what the server offers, make the callers' listen streams again."""
        # Subscribed before listing: no change falls between the two.
        await start_helper(client, self._listen, member, client)
        self._publish(member, await _list_all(client), announce=False)
        for listener in list(member.listeners):
            await start_helper(client, listener.follow, client)

    def _publish(self, member: Member, listing: Listing, *, announce: bool) -> None:
        self._ops.publish(member, listing, announce=announce)

    def _stderr_of(self, member: Member) -> Callable[[str], object] | None:
        """The ``on_stderr`` hook of one server's process: the group's, told the server's name."""
        user = self._settings.on_server_stderr
        if user is None:
            return None
        name = member.name
        return lambda line: user(name, line)

    def _options_of(self, member: Member) -> ClientOptions:
        """The opener's options for one server: the group's, with a notification hook of the server's."""
        options = self._settings.options
        user = options.on_notification

        def on_notification(note: dict[str, JSON]) -> Awaitable[None] | None:
            self._note(member, note)
            if user is not None:
                return user(note)
            if note.get("method") == "notifications/message":
                _server_logger.debug("server %r log: %s", member.name, note.get("params"))
            return None

        return attrs.evolve(options, on_notification=on_notification)

    # -------------------------------------------------- changes to its lists

    def _note(self, member: Member, note: dict[str, JSON]) -> None:
        """A notification of the server's: a change to its lists means listing again."""
        if note.get("method") in _LIST_CHANGED:
            member.dirty = True
            self._start_refresh(member)

    def _start_refresh(self, member: Member) -> None:
        """List the server's offer again (once at a time; a change meanwhile means once more)."""
        client = member.client
        if member.refreshing or member.watch is None or client is None:
            return
        try:
            start_beside(client, self._refresh, member, client, name="group refresh")
        except MCPError:
            return  # the server just died
        member.refreshing = True

    async def _refresh(self, member: Member, client: Client) -> None:
        try:
            while member.dirty:
                member.dirty = False
                client.invalidate_cache()
                try:
                    listing = await _list_all(client)
                except MCPError as exc:
                    _logger.info("server %r: listing after a change failed: %s", member.name, exc)
                    continue
                self._publish(member, listing, announce=True)
        finally:
            member.refreshing = False

    async def _listen(self, member: Member, client: Client, started: Callable[[], None]) -> None:
        """The group's own listen stream (2026-07-28 era), where the server's list changes arrive."""
        caps = client.server_capabilities
        # Only the lists the server says can change.
        tools, prompts, resources = (
            bool(capability and capability.get("listChanged"))
            for capability in (caps.tools, caps.prompts, caps.resources)
        )
        try:
            if tools or prompts or resources:
                async with client.listen(tools=tools, prompts=prompts, resources=resources) as sub:
                    started()
                    async for note in sub:
                        self._note(member, note)
        except MCPError as exc:
            _logger.debug("server %r: no change notifications: %s", member.name, exc)


def _retryable(error: BaseException) -> bool:
    """Whether starting the server again might help."""
    return not isinstance(error, SpawnFailed | VersionMismatch | NotSupported | ConfigError | AuthRequired)


def _clean_exit(error: BaseException) -> bool:
    return isinstance(error, ServerGone) and error.exit_code == 0 and error.signal is None


async def _list_all(client: Client) -> Listing:
    """Everything the server offers, every page of it; a listing it refuses is empty."""
    caps = client.server_capabilities
    listing = Listing()
    if caps.tools is not None:
        listing.tools = await _or_empty(client.list_tools)
    if caps.prompts is not None:
        listing.prompts = await _or_empty(client.list_prompts)
    if caps.resources is not None:
        listing.resources = await _or_empty(client.list_resources)
        listing.templates = await _or_empty(client.list_resource_templates)
    return listing


async def _or_empty(fetch: Callable[[], Any]) -> list[Any]:
    try:
        items: list[Any] = await fetch()
    except RpcError:
        return []
    return items
