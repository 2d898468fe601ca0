"""A supervised group of servers, with one catalogue of their tools, prompts and resources.

`open_servers` starts every server of a configuration concurrently in one
nursery, each under a supervisor task of its own that starts it, watches
it, and starts it again after an unexpected exit as the `RestartPolicy`
says. One server's trouble never reaches another: the supervisor turns it
into that server's state.
"""

from __future__ import annotations

import logging
import math
import random
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import TYPE_CHECKING, Any, Self, TypeAlias

import attrs
import trio

from .._client import start_beside
from .._config import ConfigError, LoadedConfig, ServerSpec
from .._core.apps import model_visible
from .._core.naming import assign_names, exposed_name
from .._core.restart import RestartPolicy, RestartTracker
from .._errors import AuthRequired, MCPError, ServerGone, name_entry
from .._options import ClientOptions, callable_or_none, seconds
from .._session import RequestTimeout
from .._telemetry import restarting
from .._trio.nursery import reraise
from .connect import connect, startup_timeout
from .members import (
    Listener,
    Listing,
    Member,
    alive,
    clean_exit,
    list_all,
    retryable,
    specs_of,
    start_helper,
    unique,
)
from .records import Listed, ServerEvent, ServerState, ServerStatus, UnknownName

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
    from types import TracebackType

    from .._client import Client
    from .._client.notes import ProgressCallback
    from .._client.tasks import ToolTask
    from .._core.tasks import TaskRef
    from .._models import (
        CallToolResult,
        GetPromptResult,
        Prompt,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
        Tool,
    )
    from .._options import NotificationCallback

__all__ = ["ServerGroup", "open_servers"]

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


class ServerGroup:
    """Servers started together, supervised, and offered as one catalogue.

    Made by `open_servers`, which owns it. Every method may be called from
    any task inside the block.
    """

    def __init__(
        self,
        specs: list[ServerSpec],
        invalid: Mapping[str, ConfigError],
        policy: RestartPolicy,
        options: ClientOptions,
        on_event: Callable[[ServerEvent], object] | None,
        rng: random.Random,
        wait: bool = True,
        kill_grace: float | None = None,
        on_stderr: Callable[[str, str], object] | None = None,
    ) -> None:
        self.policy = policy
        """The restart policy the group applies."""
        self._wait = wait
        self._kill_grace = kill_grace
        self._on_stderr = on_stderr
        self._options = options
        self._on_event = on_event
        self._members: dict[str, Member] = {}
        for index, spec in enumerate(specs):
            member = Member(spec, index, RestartTracker(policy, rng))
            if not spec.enabled:
                member.state = "disabled"
            self._members[spec.name] = member
        for offset, (name, error) in enumerate(invalid.items()):
            member = Member(ServerSpec(name=name, enabled=False), len(specs) + offset, RestartTracker(policy))
            member.state = "invalid"
            member.error = error
            self._members[name] = member
        self._routes: dict[str, tuple[str, str]] = {}
        self._prompt_routes: dict[str, tuple[str, str]] = {}
        self._subscribers: list[trio.MemorySendChannel[ServerEvent]] = []
        self.events_dropped = 0
        """How many events did not fit in a subscriber's buffer."""
        self._stopping = False
        self._nursery_manager: Any = None
        self._entered = False
        self._nursery: trio.Nursery | None = None
        self._change = trio.Event()
        self._unsettled = len(self._members)
        self._settled = trio.Event()
        if not self._unsettled:
            self._settled.set()

    # ---------------------------------------------------------------- state

    @property
    def names(self) -> tuple[str, ...]:
        """Every server's name, in the configuration's order (invalid entries last)."""
        return tuple(self._members)

    def _member(self, name: str) -> Member:
        member = self._members.get(name)
        if member is None:
            raise UnknownName(f"the group has no server named {name!r}", name=name, kind="server")
        return member

    def status(self, name: str) -> ServerStatus:
        """A snapshot of one server's state.

        Raises:
            UnknownName: No server has that name.
        """
        member = self._member(name)
        error = member.error
        gone = error if isinstance(error, ServerGone) else None
        exit_code = gone.exit_code if gone else None
        signal = gone.signal if gone else None
        pid = None
        state = member.state
        client = member.client
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
                clean = code == 0
                again = member.tracker.would_restart(trio.current_time(), clean=clean)
                state = "restarting" if again and not self._stopping else "failed"
        return ServerStatus(
            name=member.name,
            state=state,
            error=error,
            reason=member.reason,
            restarts=member.tracker.restarts,
            pid=pid,
            exit_code=exit_code,
            signal=signal,
            stderr_tail=gone.stderr_tail if gone else "",
        )

    def _state(self, member: Member) -> ServerState:
        """The state `status` shows: a ready server whose process is dead is no longer ready."""
        if member.state == "ready" and member.client is not None and not alive(member.client):
            return self.status(member.name).state
        return member.state

    def statuses(self) -> list[ServerStatus]:
        """A snapshot of every server, in the order of `names`."""
        return [self.status(name) for name in self._members]

    def events(self, buffer: int = 256) -> trio.MemoryReceiveChannel[ServerEvent]:
        """Subscribe to the group's events: ``async for event in servers.events():``.

        The channel gets every `ServerEvent` from now on, and ends when the
        group closes. Events never wait for a slow consumer: past ``buffer``
        waiting events, newer ones are dropped (and counted in
        `events_dropped`). Close the channel to unsubscribe.
        """
        send, receive = trio.open_memory_channel[ServerEvent](buffer)
        if self._stopping and self._nursery_manager is None:
            send.close()
        else:
            self._subscribers.append(send)
        return receive

    def _dropped(self) -> None:
        self.events_dropped += 1

    def _emit(self, event: ServerEvent) -> None:
        for send in list(self._subscribers):
            try:
                send.send_nowait(event)
            except trio.WouldBlock:
                self.events_dropped += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._subscribers.remove(send)
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:
                _logger.exception("the group's on_event callback raised")

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
        self._emit(
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

    def restart(self, name: str) -> None:
        """Start a failed server again, with a fresh restart history; end a restart's delay early.

        A server that needs a login is tried again too (call this once the
        user has logged in, with ``trio-mcp login``, say).

        Does nothing to a server that is starting or ready.

        Raises:
            UnknownName: No server has that name.
        """
        member = self._member(name)
        if member.state in ("failed", "restarting", "needs-login"):
            if member.state == "failed":
                member.tracker.reset()
            member.poke()

    # ----------------------------------------------------------- the clients

    async def client(self, name: str) -> Client:
        """The client of one server, once it is ready.

        While the server starts or waits to be started again, this waits
        for it, within the caller's cancel scopes (bound the wait with
        `trio.move_on_after`). A client obtained before a restart belongs
        to the process that died: its calls raise `ServerGone`; ask again.

        Raises:
            UnknownName: No server has that name.
            ServerGone: The server failed (the group gave up on it; the
                error says why and carries its last exit status and stderr
                tail), or the group is closing.
            ConfigError: The server is disabled, or its entry is invalid.
            AuthRequired: The server needs a login (state ``"needs-login"``).
        """
        member = self._member(name)
        while True:
            state = self._state(member)
            if state == "ready" and member.client is not None:
                await trio.lowlevel.checkpoint()
                return member.client
            if (state in ("starting", "restarting") or member.state == "ready") and not self._stopping:
                # (A dead server's supervisor is about to say what comes next.)
                await self._change.wait()
                continue
            error = self._unavailable(member)
            name_entry(error, member.name)
            raise error

    async def wait_ready(self, name: str) -> ServerStatus:
        """Wait until the server is ready (at once if it is); its status then.

        As `client` does, this waits while the server starts or waits to be
        started again, within the caller's cancel scopes, and raises at once
        for a server that cannot become ready without your help.

        Raises:
            UnknownName: No server has that name.
            ServerGone: The server failed, or the group is closing.
            ConfigError: The server is disabled, or its entry is invalid.
        """
        await self.client(name)
        return self.status(name)

    async def wait_until(self, name: str, *states: ServerState) -> ServerStatus:
        """Wait until the server is in one of ``states`` (at once if it is); its status then.

        ::

            status = await servers.wait_until("files", "ready", "failed")

        Each change of state wakes the waiters, so an application never
        polls; bound the wait with the caller's cancel scopes. While the
        group closes, every server ends in ``"stopped"``, ``"disabled"`` or
        ``"invalid"``.

        Raises:
            UnknownName: No server has that name.
            ServerGone: The group closed before the server got there.
            ValueError: No state given.
        """
        if not states:
            raise ValueError("wait_until() needs at least one state")
        member = self._member(name)
        while True:
            if self._state(member) in states:
                await trio.lowlevel.checkpoint()
                return self.status(name)
            if self._stopping and member.state in ("stopped", "disabled", "invalid"):
                error = self._unavailable(member)
                name_entry(error, member.name)
                raise error
            await self._change.wait()

    async def wait_started(self) -> None:
        """Wait until every server's first start is over: ready, or failed, or not started at all.

        What entering the group waits for unless ``wait=False`` was given to
        `open_servers`.
        """
        await self._settled.wait()

    def _unavailable(self, member: Member) -> MCPError:
        if member.state == "invalid" and isinstance(member.error, ConfigError):
            wrong = member.error
            return ConfigError(str(wrong), file=wrong.file, server=wrong.server, field=wrong.field)
        if member.state == "disabled":
            return ConfigError(
                f"server {member.name!r} is disabled in the configuration",
                server=member.name,
                field="disabled",
            )
        last = member.error
        if member.state == "needs-login" and isinstance(last, AuthRequired):
            return last
        if member.state == "failed":
            text = f"server {member.name!r} failed: {member.reason}"
        else:
            text = f"server {member.name!r} is stopped: the group is closing"
        if last is not None:
            text += f"; last error: {str(last).splitlines()[0]}"
        gone = last if isinstance(last, ServerGone) else None
        error = ServerGone(
            text,
            exit_code=gone.exit_code if gone else None,
            signal=gone.signal if gone else None,
            stderr_tail=gone.stderr_tail if gone else "",
            server=gone.server if gone else member.name,
            command=member.spec.command_line[0],
            arguments=member.spec.command_line[1:],
            pid=gone.pid if gone else None,
        )
        error.__cause__ = last
        return error

    @asynccontextmanager
    async def listen(
        self,
        name: str,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        buffer: int = 256,
    ) -> AsyncIterator[trio.MemoryReceiveChannel[dict[str, JSON]]]:
        """Change notifications of one server, in either era, across its restarts.

        ``async with servers.listen("files", tools=True) as notes:``, then
        ``async for note in notes:`` gets each notification (a dict, as the
        server sent it). In the 2026-07-28 era this is a
        ``subscriptions/listen`` stream (see `Client.listen`); in the
        initialize era, the list changes the server sends anyway, and
        ``resources/subscribe`` for ``resource_uris``. Entering returns once
        the server has acknowledged the subscription (at once while the
        server is down). Whenever the server is started again, the
        subscription is made again on the new process before the server
        counts as ready; what the server would have sent while it was down
        is lost (the group's events say when that happened). Iteration ends
        when the block or the group ends.

        Args:
            name: The server.
            tools: Deliver ``notifications/tools/list_changed``.
            prompts: Deliver ``notifications/prompts/list_changed``.
            resources: Deliver ``notifications/resources/list_changed``.
            resource_uris: Deliver ``notifications/resources/updated`` for
                these URIs.
            buffer: How many notifications may wait for the consumer; newer
                ones are dropped past that (counted in `events_dropped`).

        Raises:
            UnknownName: No server has that name.
        """
        member = self._member(name)
        if isinstance(resource_uris, str):
            raise TypeError("resource_uris must be a sequence of URIs, not a single string")
        listener = Listener(self._dropped, tools, prompts, resources, tuple(resource_uris), buffer)
        member.listeners.append(listener)
        try:
            client = member.client
            if member.state == "ready" and client is not None:
                # Should the server have just died, its next process subscribes.
                with suppress(MCPError):
                    await start_helper(client, listener.follow, client)
            yield listener.receive
        finally:
            member.listeners.remove(listener)
            listener.close()

    # -------------------------------------------------------- the catalogue

    @property
    def tools(self) -> list[Listed[Tool]]:
        """Every tool of every ready server (allow and deny lists applied), in the configuration's order.

        Tools for MCP Apps views alone (visibility without ``"model"``) are
        left out: this is what a model chooses from.
        """
        return [entry for member in self._ready() for entry in member.tools]

    @property
    def prompts(self) -> list[Listed[Prompt]]:
        """Every prompt of every ready server."""
        return [entry for member in self._ready() for entry in member.prompts]

    @property
    def resources(self) -> list[Listed[Resource]]:
        """Every resource of every ready server (read one with `read_resource`)."""
        return [
            Listed(exposed_name(member.name, item.name), member.name, item)
            for member in self._ready()
            for item in member.listing.resources
        ]

    @property
    def resource_templates(self) -> list[Listed[ResourceTemplate]]:
        """Every resource template of every ready server."""
        return [
            Listed(exposed_name(member.name, item.name), member.name, item)
            for member in self._ready()
            for item in member.listing.templates
        ]

    def _ready(self) -> list[Member]:
        return [member for member in self._members.values() if self._state(member) == "ready"]

    def resolve(self, name: str) -> tuple[str, str]:
        """The server and the server's own name of a tool's group-wide name.

        Names once listed stay known while their server restarts.

        Raises:
            UnknownName: No tool was ever listed under that name.
        """
        route = self._routes.get(name)
        if route is None:
            raise UnknownName(f"the group has no tool named {name!r}", name=name, kind="tool")
        return route

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, JSON] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        on_notification: NotificationCallback | None = None,
        meta: Mapping[str, JSON] | None = None,
    ) -> CallToolResult:
        """Call a tool by its group-wide name (`Listed.name`), on the server that has it.

        When that server is starting again, the call waits for it within
        the caller's cancel scopes (see `client`). A call in flight when the
        server dies fails with `ServerGone` and is never sent again: the
        tool may have run.

        Args:
            name: The tool's group-wide name.
            arguments: Its arguments.
            on_progress: Called with each progress notification of the
                call, as `Client.call_tool` does.
            on_notification: Called with every other notification that
                names the call.
            meta: The request's ``_meta``.

        Input the server asks for during the call goes to the hooks of the
        group's `ClientOptions`. To drive input by hand (``manual=True``),
        call the server's own client: ``await servers.client(server)``.

        Raises:
            UnknownName: No such tool (or the server no longer lists it, or
                its allow and deny lists leave it out).
            ServerGone: The server died during the call, or has failed.
        """
        server, tool = self.resolve(name)
        member = self._members[server]
        client = await self.client(server)
        if tool not in {entry.item.name for entry in member.tools}:
            raise UnknownName(f"server {server!r} no longer offers the tool {tool!r}", name=name, kind="tool")
        with _naming(server):
            result: CallToolResult = await client.call_tool(
                tool, arguments, on_progress=on_progress, on_notification=on_notification, meta=meta
            )
        return result

    @asynccontextmanager
    async def tool_task(
        self,
        name: str,
        arguments: Mapping[str, JSON] | None = None,
        *,
        ttl_ms: int | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[ToolTask]:
        """Call a tool as a task, by its group-wide name: ``async with servers.tool_task(name) as task:``.

        The server's own client runs it (`Client.tool_task`: the same
        handle, the same rules); the handle's `~ToolTask.server`, and the
        `TaskRef` it detaches to, name the server as the group does
        (``"notes"``). When that server is starting again, this
        waits for it within the caller's cancel scopes. If the server dies
        while the task runs, the task is lost with the process: `ToolTask.result`
        raises `ServerGone`. A server that keeps its tasks elsewhere (a
        database, a job queue) answers for them after its restart: detach
        the task (`ToolTask.detach`) and follow it again with `resume_task`.

        Raises:
            UnknownName: No such tool (or the server no longer lists it).
            ServerGone: The server has failed.
            RpcError: The server refused the call.
        """
        server, tool = self.resolve(name)
        member = self._members[server]
        client = await self.client(server)
        if tool not in {entry.item.name for entry in member.tools}:
            raise UnknownName(f"server {server!r} no longer offers the tool {tool!r}", name=name, kind="tool")
        entered = False
        try:
            async with client.tool_task(tool, arguments, ttl_ms=ttl_ms, on_progress=on_progress) as task:
                entered = True
                task.server = server
                yield task
        except MCPError as exc:
            # What the block raises is the caller's: only the start is named here.
            if not entered:
                name_entry(exc, server)
            raise

    @asynccontextmanager
    async def resume_task(self, ref: TaskRef, server: str | None = None) -> AsyncIterator[ToolTask]:
        """Follow a detached task again, on the current process of its server.

        Use as ``async with servers.resume_task(ref) as task:``; see
        `Client.resume_task`. The server is the one the reference names
        (`tool_task` names it as the group does), or ``server``. After a
        restart this works only for a server that kept its tasks: otherwise
        `TaskGone`.

        Raises:
            UnknownName: No server has that name.
            ServerGone: The server has failed.
            TaskGone: The server does not know the task.
        """
        name = server if server is not None else ref.server
        client = await self.client(name)
        entered = False
        try:
            async with client.resume_task(ref) as task:
                entered = True
                task.server = name
                yield task
        except MCPError as exc:
            if not entered:
                name_entry(exc, name)
            raise

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        on_notification: NotificationCallback | None = None,
        meta: Mapping[str, JSON] | None = None,
    ) -> GetPromptResult:
        """Get a prompt by its group-wide name, from the server that has it (waits as `call_tool` does).

        The options are those of `call_tool`.

        Raises:
            UnknownName: No such prompt.
        """
        route = self._prompt_routes.get(name)
        if route is None:
            raise UnknownName(f"the group has no prompt named {name!r}", name=name, kind="prompt")
        server, prompt = route
        client = await self.client(server)
        with _naming(server):
            result: GetPromptResult = await client.get_prompt(
                prompt, arguments, on_progress=on_progress, on_notification=on_notification, meta=meta
            )
        return result

    async def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        """Read a resource of one server (waits as `call_tool` does)."""
        client = await self.client(server)
        with _naming(server):
            result: ReadResourceResult = await client.read_resource(uri)
        return result

    def _publish(self, member: Member, listing: Listing, *, announce: bool) -> None:
        spec = member.spec
        # Tools for MCP Apps views alone (visibility without "model") are
        # never offered where a model chooses tools.
        listing.tools = unique(
            member, [t for t in listing.tools if spec.allows_tool(t.name) and model_visible(t.meta)]
        )
        listing.prompts = unique(member, listing.prompts)
        member.listing = listing
        self._name_all()
        if announce:
            self._emit(
                ServerEvent(
                    member.name,
                    member.state,
                    member.state,
                    trio.current_time(),
                    restarts=member.tracker.restarts,
                    catalogue=True,
                )
            )

    def _name_all(self) -> None:
        """Name every server's tools and prompts again: no two (server, item) pairs share a name.

        Names follow the configuration's order, so that in the (32-bit hash)
        event of two names meeting, the earlier server keeps its name,
        whichever listed first; every other name depends on its pair alone.
        A server's last listing stays named while it restarts.
        """
        members = sorted(self._members.values(), key=lambda member: member.index)
        tools = assign_names((m.name, tool.name) for m in members for tool in m.listing.tools)
        prompts = assign_names((m.name, prompt.name) for m in members for prompt in m.listing.prompts)
        for member in members:
            member.tools = [Listed(tools[member.name, t.name], member.name, t) for t in member.listing.tools]
            member.prompts = [
                Listed(prompts[member.name, p.name], member.name, p) for p in member.listing.prompts
            ]
        # Names once listed stay known (a call then says the tool is gone).
        self._routes.update({name: pair for pair, name in tools.items()})
        self._prompt_routes.update({name: pair for pair, name in prompts.items()})

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Self:
        if self._entered:
            raise RuntimeError("a server group can only be entered once")
        self._entered = True
        manager = trio.open_nursery()
        nursery = await manager.__aenter__()
        self._nursery_manager = manager
        self._nursery = nursery
        for member in self._members.values():
            nursery.start_soon(self._supervise, member, name=f"trio_mcp:server {member.name}")
        try:
            if self._wait:
                await self._settled.wait()
            else:
                await trio.lowlevel.checkpoint()
        except BaseException as exc:
            await self._close(exc)
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._close(exc)

    async def _close(self, exc: BaseException | None) -> None:
        manager, self._nursery_manager = self._nursery_manager, None
        if manager is None:
            return
        self._nursery = None
        self._stopping = True
        for member in self._members.values():
            if member.watch is not None:
                # Ready: leave the client's block normally, a graceful close.
                member.watch.cancel()
            elif member.scope is not None:
                member.scope.cancel()
            member.poke()
        self._changed()
        try:
            await manager.__aexit__(None, None, None)
        except BaseExceptionGroup as group:
            reraise(group, exc)
        finally:
            for send in self._subscribers:
                send.close()
            self._subscribers.clear()
            for member in self._members.values():
                for listener in member.listeners:
                    listener.close()

    # ------------------------------------------------------------ supervision

    async def _supervise(self, member: Member) -> None:
        if member.state in ("disabled", "invalid"):
            self._settle(member)
            return
        while not self._stopping:
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
                trio.current_time(), clean=clean_exit(error), retryable=retryable(error)
            )
            if not decision.restart:
                self._set(member, "failed", error=error, reason=decision.reason)
                await member.sleep()
                continue
            self._set(member, "restarting", error=error, delay=decision.delay)
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
            if self._stopping:
                member.scope.cancel()
            try:
                async with connect(
                    spec,
                    self._options_of(member),
                    on_stderr=self._stderr_of(member),
                    kill_grace=self._kill_grace,
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
                            if self._stopping:
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
        if self._stopping:
            return None
        if member.scope.cancelled_caught and not death:
            death.append(startup_timeout(spec))
        return death[0] if death else None

    async def _prepare(self, member: Member, client: Client) -> None:
        """Subscribe to changes, list what the server offers, make the callers' listen streams again."""
        # Subscribed before listing: no change falls between the two.
        await start_helper(client, self._listen, member, client)
        self._publish(member, await list_all(client), announce=False)
        for listener in list(member.listeners):
            await start_helper(client, listener.follow, client)

    def _stderr_of(self, member: Member) -> Callable[[str], object] | None:
        """The ``on_stderr`` hook of one server: the group's, told the server's name."""
        user = self._on_stderr
        if user is None:
            return None
        name = member.name
        return lambda line: user(name, line)

    def _options_of(self, member: Member) -> ClientOptions:
        """The opener's options for one server: the group's, with a notification hook of the server's."""
        user = self._options.on_notification

        def on_notification(note: dict[str, JSON]) -> Awaitable[None] | None:
            self._note(member, note)
            if user is not None:
                return user(note)
            if note.get("method") == "notifications/message":
                _server_logger.debug("server %r log: %s", member.name, note.get("params"))
            return None

        return attrs.evolve(self._options, on_notification=on_notification)

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
                    listing = await list_all(client)
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


@contextmanager
def _naming(entry: str) -> Iterator[None]:
    """An `MCPError` raised within names the group's server ``entry`` (`MCPError.entry`)."""
    try:
        yield
    except MCPError as exc:
        name_entry(exc, entry)
        raise


def open_servers(
    config: LoadedConfig | Mapping[str, ServerSpec] | Iterable[ServerSpec],
    *,
    restart: RestartPolicy | None = None,
    on_event: Callable[[ServerEvent], object] | None = None,
    seed: int | None = None,
    wait: bool = True,
    options: ClientOptions | None = None,
    kill_grace: float | None = None,
    on_stderr: Callable[[str, str], object] | None = None,
) -> ServerGroup:
    """Start every server of a configuration, supervise them, and offer one catalogue.

    Use the result as an async context manager::

        async with trio_mcp.open_servers(config) as servers:
            for tool in servers.tools:
                print(tool.name)
            result = await servers.call_tool("files__read_file", {"path": "README.md"})

    Entering starts every enabled server concurrently, each within its own
    ``startup_timeout``, and returns once each has either become ready or
    failed its first start (or at once, with ``wait=False``): a slow or
    broken server delays no other, and is never an error for the group. A server that stops without being
    asked to is started again as ``restart`` says. Leaving the block stops
    every server in parallel (each as `open_stdio_client` would: stdin
    closed, ``kill_grace``, then signals), bounded in time.

    Args:
        config: A `LoadedConfig` (its invalid entries show as ``"invalid"``
            servers), a mapping of names to `ServerSpec`, or `ServerSpec`
            objects.
        restart: The restart policy (default: `RestartPolicy()`).
        on_event: Called with every `ServerEvent`, in the task where it
            happens: keep it quick. `ServerGroup.events` is the other way
            to follow them.
        seed: Seeds the jitter of the restart delays, for reproducible runs.
        wait: Whether entering waits for every server's first start (the
            default). With `False` the block begins at once, while the
            servers start; `ServerGroup.wait_ready`, `ServerGroup.client`
            and the calls wait for the server they need, and
            `ServerGroup.wait_started` for all of them.
        options: The client options of every server (`ClientOptions`); an
            entry's ``request_timeout`` wins over the one given here. Where
            each server is, and how its process starts, is its entry's.
        kill_grace: How long each server process is given to exit once its
            stdin is closed, before it is signalled (default: the 2 s of
            `ProcessTarget`). Remote servers have no process.
        on_stderr: Called with the server's name and each line its process
            writes to stderr (default: the lines are kept for the stderr
            tail of errors and statuses, and logged at DEBUG on the
            ``trio_mcp.server`` logger). Keep it quick: it runs in the
            task that drains the server's stderr.

    Raises:
        TypeError: A bad configuration object, or a bad or unknown option.
        ValueError: Two servers with one name, or an option out of range.
    """
    specs, invalid = specs_of(config)
    options = options if options is not None else ClientOptions()
    if not isinstance(options, ClientOptions):
        raise TypeError(f"options must be a ClientOptions, not {type(options).__name__}")
    policy = restart if restart is not None else RestartPolicy()
    if not isinstance(policy, RestartPolicy):
        raise TypeError(f"restart must be a RestartPolicy, not {type(policy).__name__}")
    if not isinstance(wait, bool):
        raise TypeError(f"wait must be True or False, not {type(wait).__name__}")
    seconds("kill_grace", zero=True, none=True)(None, None, kill_grace)
    callable_or_none("on_stderr")(None, None, on_stderr)
    return ServerGroup(
        specs,
        invalid,
        policy,
        options,
        on_event,
        random.Random(seed),
        wait,
        kill_grace=kill_grace,
        on_stderr=on_stderr,
    )
