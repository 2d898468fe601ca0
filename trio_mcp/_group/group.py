"""A supervised group of servers, with one catalogue of their tools, prompts and resources.

`open_servers` (an ``async with`` block) and `connect_servers` (in a
nursery of the caller's) make a `ServerGroup`: the public surface over
three collaborators, each given only what it needs. The supervisor
(``supervisor``: one task per server, which starts it, watches it, and
starts it again after an unexpected exit as the `RestartPolicy` says), the
catalogue (``catalogue``: every server's listing, named group-wide, and
the way from a name back to its server), and the event feed
(``records``). One server's trouble never reaches another: the supervisor
turns it into that server's state.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import TYPE_CHECKING, Any, ParamSpec, Self, TypeAlias, TypeVar

import trio

from .._config import ConfigError, LoadedConfig, ServerSpec
from .._core.restart import RestartPolicy, RestartTracker
from .._errors import MCPError, name_entry
from .._options import ClientOptions, callable_or_none, seconds
from .._trio.nursery import reraise
from .catalogue import Catalogue
from .members import Listener, Member, start_helper
from .records import EventFeed, Listed, ServerEvent, ServerState, ServerStatus, UnknownName
from .supervisor import Settings, Supervisor, SupervisorOps

if TYPE_CHECKING:
    from collections.abc import (
        AsyncIterator,
        Awaitable,
        Callable,
        Coroutine,
        Iterator,
        Sequence,
    )
    from contextlib import AbstractAsyncContextManager
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

__all__ = ["ServerGroup", "connect_servers", "open_servers"]

JSON: TypeAlias = Any

P = ParamSpec("P")
R = TypeVar("R")


class ServerGroup:
    """Servers started together, supervised, and offered as one catalogue.

    Made by `open_servers`, whose block owns it, or by `connect_servers`,
    in a nursery of yours. Every method may be called from any task while
    the group runs.
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
        on_server_stderr: Callable[[str, str], object] | None = None,
    ) -> None:
        self.policy = policy
        """The restart policy the group applies."""
        self._wait = wait
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
        self._feed = EventFeed(on_event)
        self._catalogue = Catalogue(self._members.values(), self._feed.emit)
        self._supervisor = Supervisor(
            self._members.values(),
            Settings(options, kill_grace=kill_grace, on_server_stderr=on_server_stderr),
            SupervisorOps(publish=self._catalogue.publish, emit=self._feed.emit),
        )
        self._started = False
        self._own: AbstractAsyncContextManager[trio.Nursery] | None = None
        self._done = trio.Event()

    # ---------------------------------------------------------------- state

    @property
    def names(self) -> tuple[str, ...]:
        """Every server's name, in the configuration's order (invalid entries last)."""
        return tuple(self._members)

    @property
    def events_dropped(self) -> int:
        """How many events (and `listen` notifications) did not fit in a subscriber's buffer."""
        return self._feed.dropped

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
        return self._member(name).status(stopping=self._supervisor.stopping)

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
        return self._feed.subscribe(buffer)

    def restart(self, name: str) -> None:
        """Start a failed server again, with a fresh restart history; end a restart's delay early.

        A server that needs a login is tried again too (call this once the
        user has logged in, with ``trio-mcp login``, say).

        Does nothing to a server that is starting or ready.

        Raises:
            UnknownName: No server has that name.
        """
        self._supervisor.restart(self._member(name))

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
        supervisor = self._supervisor
        while True:
            state = member.shown_state(stopping=supervisor.stopping)
            if state == "ready" and member.client is not None:
                await trio.lowlevel.checkpoint()
                return member.client
            if (state in ("starting", "restarting") or member.state == "ready") and not supervisor.stopping:
                # (A dead server's supervisor is about to say what comes next.)
                await supervisor.next_change()
                continue
            error = member.unavailable()
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
        supervisor = self._supervisor
        while True:
            if member.shown_state(stopping=supervisor.stopping) in states:
                await trio.lowlevel.checkpoint()
                return self.status(name)
            if supervisor.stopping and member.state in ("stopped", "disabled", "invalid"):
                error = member.unavailable()
                name_entry(error, member.name)
                raise error
            await supervisor.next_change()

    async def wait_started(self) -> None:
        """Wait until every server's first start is over: ready, or failed, or not started at all.

        What entering the group waits for unless ``wait=False`` was given to
        `open_servers`.
        """
        await self._supervisor.wait_settled()

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
        listener = Listener(self._feed.count_drop, tools, prompts, resources, tuple(resource_uris), buffer)
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
        return self._catalogue.tools(self._ready())

    @property
    def prompts(self) -> list[Listed[Prompt]]:
        """Every prompt of every ready server."""
        return self._catalogue.prompts(self._ready())

    @property
    def resources(self) -> list[Listed[Resource]]:
        """Every resource of every ready server (read one with `read_resource`)."""
        return self._catalogue.resources(self._ready())

    @property
    def resource_templates(self) -> list[Listed[ResourceTemplate]]:
        """Every resource template of every ready server."""
        return self._catalogue.templates(self._ready())

    def _ready(self) -> list[Member]:
        stopping = self._supervisor.stopping
        return [
            member for member in self._members.values() if member.shown_state(stopping=stopping) == "ready"
        ]

    def resolve(self, name: str) -> tuple[str, str]:
        """The server and the server's own name of a tool's group-wide name.

        Names once listed stay known while their server restarts.

        Raises:
            UnknownName: No tool was ever listed under that name.
        """
        return self._catalogue.tool_route(name)

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
        server, tool, client = await self._tool_client(name)
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
        server, tool, client = await self._tool_client(name)
        async with _named_task(
            server, client.tool_task(tool, arguments, ttl_ms=ttl_ms, on_progress=on_progress)
        ) as task:
            yield task

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
        async with _named_task(name, client.resume_task(ref)) as task:
            yield task

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
        server, prompt = self._catalogue.prompt_route(name)
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

    async def _tool_client(self, name: str) -> tuple[str, str, Client]:
        """The server of a tool's group-wide name, the server's own name of it, and its client once ready."""
        server, tool = self._catalogue.tool_route(name)
        client = await self.client(server)
        self._catalogue.check_offered(self._members[server], tool, name)
        return server, tool, client

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Self:
        self._claim()
        manager = trio.open_nursery()
        nursery = await manager.__aenter__()
        self._own = manager
        try:
            await nursery.start(self._run)
        except BaseException as exc:
            await self._leave(exc)
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._leave(exc)

    async def _leave(self, exc: BaseException | None) -> None:
        """The end of the ``async with`` block: stop every server, then leave the block's nursery."""
        manager, self._own = self._own, None
        if manager is None:
            return
        self._supervisor.stop()
        try:
            await manager.__aexit__(None, None, None)
        except BaseExceptionGroup as group:
            reraise(group, exc)

    async def _start_in(self, nursery: trio.Nursery) -> None:
        """Run the group in ``nursery`` (`connect_servers`)."""
        self._claim()
        await nursery.start(self._run)

    def _claim(self) -> None:
        if self._started:
            raise RuntimeError("a server group can only be entered once, or connected once (connect_servers)")
        self._started = True

    async def _run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The group's life: one supervisor task per server, until every one has stopped.

        Started (``task_status``) once every first start is over, or at once
        without ``wait``.
        """
        try:
            async with trio.open_nursery() as nursery:
                for member in self._members.values():
                    nursery.start_soon(
                        self._supervisor.supervise, member, name=f"trio_mcp:server {member.name}"
                    )
                if self._wait:
                    await self._supervisor.wait_settled()
                task_status.started()
        except BaseExceptionGroup as group:
            reraise(group, None)
        finally:
            self._ended()

    def _ended(self) -> None:
        """Every supervisor has ended: end the event channels and the listen streams."""
        # (Cancelled from outside, they ended without saying so.)
        self._supervisor.ended()
        self._feed.close()
        for member in self._members.values():
            for listener in member.listeners:
                listener.close()
        self._done.set()

    async def aclose(self) -> None:
        """Stop every server, in parallel, and wait until they have; idempotent.

        How a group made by `connect_servers` ends (an `open_servers`
        block ends its own group as it leaves). Each server stops as
        `Client.aclose` stops one: for a process, stdin closed,
        ``kill_grace``, then signals. This is shielded from cancellation,
        bounded in time, and never takes much longer than the caller's own
        deadline (the servers then get less grace). Afterwards, the group's
        servers are ``"stopped"`` and its `events` channels have ended.
        """
        self._supervisor.stop(trio.current_effective_deadline())
        if not self._started:
            # Never run: nothing to wait for, and nothing may run later.
            self._started = True
            self._ended()
        with trio.CancelScope(shield=True):
            await self._done.wait()


@contextmanager
def _naming(entry: str) -> Iterator[None]:
    """An `MCPError` raised within names the group's server ``entry`` (`MCPError.entry`)."""
    try:
        yield
    except MCPError as exc:
        name_entry(exc, entry)
        raise


@asynccontextmanager
async def _named_task(server: str, opening: AbstractAsyncContextManager[ToolTask]) -> AsyncIterator[ToolTask]:
    """A task handle of the server's client, named as the group names the server.

    An `MCPError` of the task's start names the server (`MCPError.entry`);
    what the block raises is the caller's.
    """
    entered = False
    try:
        async with opening as task:
            entered = True
            task.server = server
            yield task
    except MCPError as exc:
        if not entered:
            name_entry(exc, server)
        raise


def _refuses_on_stderr(opener: Callable[P, R]) -> Callable[P, R]:
    """``opener``, with a clear `TypeError` for ``on_stderr=`` (`ProcessTarget`'s one-argument hook)."""

    @functools.wraps(opener)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        _check_spelling(opener.__name__, kwargs)
        return opener(*args, **kwargs)

    return checked


def _refuses_on_stderr_async(opener: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """`_refuses_on_stderr`, for an async opener (which stays one)."""

    @functools.wraps(opener)
    async def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        _check_spelling(opener.__name__, kwargs)
        return await opener(*args, **kwargs)

    return checked


def _check_spelling(opener: str, kwargs: Mapping[str, object]) -> None:
    if "on_stderr" in kwargs:
        raise TypeError(
            f"{opener}() takes on_server_stderr=, called with the server's name and the line,"
            " not on_stderr= (ProcessTarget's hook, called with the line alone)"
        )


def _specs_of(config: object) -> tuple[list[ServerSpec], dict[str, ConfigError]]:
    invalid: dict[str, ConfigError] = {}
    if isinstance(config, LoadedConfig):
        specs = list(config.servers.values())
        invalid = dict(config.invalid)
    elif isinstance(config, Mapping):
        specs = []
        for key, spec in config.items():
            if not isinstance(spec, ServerSpec):
                raise TypeError(
                    f"the group's configuration maps names to ServerSpec, not {type(spec).__name__}"
                )
            if spec.name != key:
                raise ValueError(f"the server {spec.name!r} is listed under another name, {key!r}")
            specs.append(spec)
    elif isinstance(config, Iterable) and not isinstance(config, str | bytes):
        specs = list(config)
        for spec in specs:
            if not isinstance(spec, ServerSpec):
                raise TypeError(
                    f"the group's configuration holds ServerSpec objects, not {type(spec).__name__}"
                )
    else:
        raise TypeError(
            "open_servers() takes a LoadedConfig, a mapping of names to ServerSpec, or ServerSpec objects,"
            f" not {type(config).__name__}"
        )
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen or spec.name in invalid:
            raise ValueError(f"two servers are named {spec.name!r}")
        seen.add(spec.name)
    return specs, invalid


def _group(
    config: LoadedConfig | Mapping[str, ServerSpec] | Iterable[ServerSpec],
    restart: RestartPolicy | None,
    on_event: Callable[[ServerEvent], object] | None,
    seed: int | None,
    wait: bool,
    options: ClientOptions | None,
    kill_grace: float | None,
    on_server_stderr: Callable[[str, str], object] | None,
) -> ServerGroup:
    """A group not yet started, every argument checked."""
    specs, invalid = _specs_of(config)
    options = options if options is not None else ClientOptions()
    if not isinstance(options, ClientOptions):
        raise TypeError(f"options must be a ClientOptions, not {type(options).__name__}")
    policy = restart if restart is not None else RestartPolicy()
    if not isinstance(policy, RestartPolicy):
        raise TypeError(f"restart must be a RestartPolicy, not {type(policy).__name__}")
    if not isinstance(wait, bool):
        raise TypeError(f"wait must be True or False, not {type(wait).__name__}")
    seconds("kill_grace", zero=True, none=True)(None, None, kill_grace)
    callable_or_none("on_server_stderr")(None, None, on_server_stderr)
    return ServerGroup(
        specs,
        invalid,
        policy,
        options,
        on_event,
        random.Random(seed),
        wait,
        kill_grace=kill_grace,
        on_server_stderr=on_server_stderr,
    )


@_refuses_on_stderr
def open_servers(
    config: LoadedConfig | Mapping[str, ServerSpec] | Iterable[ServerSpec],
    *,
    restart: RestartPolicy | None = None,
    on_event: Callable[[ServerEvent], object] | None = None,
    seed: int | None = None,
    wait: bool = True,
    options: ClientOptions | None = None,
    kill_grace: float | None = None,
    on_server_stderr: Callable[[str, str], object] | None = None,
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
    closed, ``kill_grace``, then signals), bounded in time. To run the
    group in a nursery of your own, see `connect_servers`.

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
        on_server_stderr: Called as ``on_server_stderr(name, line)`` with
            the server's name and each line its process writes to stderr
            (default: the lines are kept for the stderr tail of errors and
            statuses, and logged at DEBUG on the ``trio_mcp.server``
            logger). Keep it quick: it runs in the task that drains the
            server's stderr. (`ProcessTarget`'s ``on_stderr`` is called
            with the line alone; ``on_stderr=`` here is a `TypeError`.)

    Raises:
        TypeError: A bad configuration object, or a bad or unknown option.
        ValueError: Two servers with one name, or an option out of range.
    """
    return _group(config, restart, on_event, seed, wait, options, kill_grace, on_server_stderr)


@_refuses_on_stderr_async
async def connect_servers(
    nursery: trio.Nursery,
    config: LoadedConfig | Mapping[str, ServerSpec] | Iterable[ServerSpec],
    *,
    restart: RestartPolicy | None = None,
    on_event: Callable[[ServerEvent], object] | None = None,
    seed: int | None = None,
    wait: bool = True,
    options: ClientOptions | None = None,
    kill_grace: float | None = None,
    on_server_stderr: Callable[[str, str], object] | None = None,
) -> ServerGroup:
    """Start every server of a configuration in a nursery of yours; returns the running group.

    ::

        async with trio.open_nursery() as nursery:
            servers = await trio_mcp.connect_servers(nursery, config)
            nursery.start_soon(serve_requests, servers)
            ...
            await servers.aclose()

    Like `open_servers`, for code that manages lifetimes itself (as
    `connect_client` is to `open_client`): the group's supervisor tasks
    run in ``nursery``, and closing is yours: ``await servers.aclose()``,
    which stops every server gracefully; until then the group keeps
    ``nursery`` open. Cancelling ``nursery`` ends the group too, without
    the grace. Returns once every first start is over (at once with
    ``wait=False``), as entering `open_servers` does. The arguments are
    those of `open_servers`.

    Raises:
        TypeError: A bad configuration object, or a bad or unknown option.
        ValueError: Two servers with one name, or an option out of range.
    """
    group = _group(config, restart, on_event, seed, wait, options, kill_grace, on_server_stderr)
    await group._start_in(nursery)
    return group
