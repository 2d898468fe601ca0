"""The MCP client: typed methods over a session, in whichever era the server speaks.

`Client` talks to the server through a `trio_mcp.Session` and nothing else:
it never knows whether the session runs over a child process, a socket or
HTTP. Both protocol eras share one API: the 2026-07-28 revision (stateless,
every request carries its ``_meta`` envelope, input is requested through
``input_required`` results) and the initialize-era revisions (2025-11-25 and
older: one ``initialize`` handshake, input is requested by server-to-client
requests). The rules it follows are in `trio_mcp._core`; the pieces of its
machinery live beside it: the handshake (`trio_mcp._client.handshake`),
input and rounds (`~trio_mcp._client.input`), notification routing
(`~trio_mcp._client.notes`), pages (`~trio_mcp._client.pages`) and listen
streams (`~trio_mcp._client.listen`).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, overload

import trio

from .._core.cache import TtlCache
from .._core.eras import LOG_LEVELS, MISSING_CLIENT_CAPABILITY
from .._core.extensions import ClaimContext, ExtensionSet
from .._core.tasks import needs_extension
from .._errors import MCPError, ProtocolError, RpcError
from .._models import (
    CallToolResult,
    CompleteResult,
    Completion,
    DiscoverResult,
    GetPromptResult,
    Implementation,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ServerCapabilities,
    Tool,
    unstructure,
)
from .._session import attach, call_maybe_async, report, start_soon
from .handshake import Requests
from .input import InputHandler
from .listen import Subscription, open_legacy_subscription, open_subscription, subscription_filter
from .notes import NotificationRouter
from .outputs import OutputChecks
from .pages import Listings, Pages, ToolHeaders
from .tasks import ClientTasks, TaskHost, ToolTask

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence

    from .._core.eras import LogLevel
    from .._core.tasks import Task, TaskRef
    from .._options import ClientOptions, NotificationCallback
    from .._session import Attachment, Session, SessionStatistics
    from .notes import ProgressCallback

__all__ = ["Client", "handshake", "make_client", "release", "start_beside"]

JSON: TypeAlias = Any


class Client:
    """A connection to one MCP server, in whichever era it speaks.

    Get one from an opener, never by calling the class: `open_client`
    (an ``async with`` block owns the connection) or `connect_client` (in a
    nursery of yours), over any target. Every method may raise the
    connection's errors: `ServerGone`, `TransportClosed`, `ProtocolError`,
    and `RpcError` when the server answers with an error.

    Every method is a checkpoint, and none takes a timeout: bound a call the
    Trio way, with `trio.fail_after` or `trio.move_on_after` around it. A
    cancelled call is withdrawn from the server (``notifications/cancelled``)
    and the connection carries on.

    Attributes:
        session: The `Session` underneath, for raw JSON-RPC.
        era: ``"modern"`` (2026-07-28) or ``"legacy"`` (initialize era).
        protocol_version: The negotiated revision, for example
            ``"2026-07-28"`` or ``"2025-11-25"``.
        server_info: The server's self-description (unverified), or `None`
            when it gave none.
        server_capabilities: What the server says it supports.
        instructions: The server's instructions for the model, or `None`.
    """

    discover_result: DiscoverResult | None
    """The probe's ``DiscoverResult`` (2026-07-28 era), else `None`."""
    options: ClientOptions
    """The options the client was made with."""
    session: Session
    server_info: Implementation | None
    server_capabilities: ServerCapabilities
    instructions: str | None
    _ext: ExtensionSet
    _input: InputHandler
    _cache: TtlCache | None
    _notes: NotificationRouter
    _outputs: OutputChecks
    _requests: Requests
    _tasks: ClientTasks
    _lists: Listings
    _attachment: Attachment

    def __init__(self) -> None:
        raise TypeError(
            "a Client is made by the openers: open_client(target) or connect_client(nursery, target)"
        )

    @classmethod
    def _create(cls, session: Session, options: ClientOptions) -> Client:
        """The openers' constructor (see `make_client`): the client and its collaborators, attached."""
        self = cls.__new__(cls)
        self.session = session
        self.server_info = None
        self.server_capabilities = ServerCapabilities()
        self.instructions = None
        self.discover_result = None
        self.options = options
        client_info = options.client_info
        if isinstance(client_info, Implementation):
            info: dict[str, JSON] = unstructure(client_info)
        else:
            name, version = client_info
            info = {"name": name, "version": version}
        raw = options.capabilities.get("extensions") if options.capabilities else None
        self._ext = ExtensionSet(options.extensions, raw)
        """The client's extensions, folded (the one place the client asks about them)."""
        self._input = InputHandler(
            options,
            server=session.name,
            requests={method: binding.handler for method, (_, binding) in self._ext.requests.items()},
            resolve=self._resolve_claim if self._ext.claims else None,
        )
        self._cache = TtlCache() if options.cache else None
        self._notes = NotificationRouter(
            options.on_notification,
            self._invalidate,
            self._log,
            bindings={method: binding.handler for method, (_, binding) in self._ext.notifications.items()},
        )
        self._outputs = OutputChecks(
            options.validate_output, server=session.name, list_tools=self.list_tools, log=self._log
        )
        headers = ToolHeaders(session.name, self._log)
        self._requests = requests = Requests(
            session,
            client_info=info,
            log_level=options.log_level,
            hooks=self._input.hooks,
            extra_caps=options.capabilities or {},
            extensions=self._ext,
            input=self._input,
            for_call=self._notes.for_call,
            tool_headers=headers.of,
            relist=self._relist_tools,
            log=self._log,
        )
        self._tasks = tasks = ClientTasks(
            TaskHost(
                session=session,
                connection=lambda: (requests.era, requests.version),
                server_tasks=lambda: self.server_capabilities.tasks,
                send=requests.send_task,
                create=requests.create_task,
                run_rounds=self._task_rounds,
                call_tool=self._plain_call,
                list_tools=self.list_tools,
                progress=requests.progress,
                answer_all=self._input.answer_all,
                check_output=self._outputs.check,
                log=self._log,
            )
        )
        self._lists = Listings(
            typed=self._list_page,
            era=lambda: requests.era,
            cache=self._cache,
            outputs=self._outputs.schemas,
            headers=headers,
            saw_tools=tasks.saw_tools,
        )
        self._attachment = attach(
            session, on_request=self._input.serve_request, on_notification=self._notes.connection_note
        )
        return self

    def _log(self, message: str) -> None:
        report(self.session, message)

    @property
    def era(self) -> Literal["modern", "legacy"] | None:
        """``"modern"`` (2026-07-28) or ``"legacy"`` (initialize era); `None` before the handshake."""
        return self._requests.era

    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision, for example ``"2026-07-28"`` or ``"2025-11-25"``."""
        return self._requests.version

    @property
    def client_info(self) -> dict[str, JSON]:
        """The ``Implementation`` the client sends, as a dict."""
        return self._requests.client_info

    @property
    def log_level(self) -> LogLevel | None:
        """The ``logLevel`` every 2026-07-28 request asks for, or `None` for no logs (settable).

        Setting a level MCP does not have raises `ValueError`, as the
        ``log_level`` option does.
        """
        return self._requests.log_level  # type: ignore[return-value]  # checked when set

    @log_level.setter
    def log_level(self, value: LogLevel | None) -> None:
        if value is not None and value not in LOG_LEVELS:
            raise ValueError(f"log_level must be None or one of {list(LOG_LEVELS)}, not {value!r}")
        self._requests.log_level = value

    @property
    def _header_mismatch_retries(self) -> int:
        """How many ``tools/call`` were sent once more after a ``-32020`` (header mismatch)."""
        return self._requests.header_mismatch_retries

    @property
    def name(self) -> str:
        """Who is on the other end, as messages name it, e.g. ``server 'node index.js' (pid 4242)``."""
        return self.session.name

    @property
    def pid(self) -> int | None:
        """The server's process id, or `None` when it is not a local process."""
        return self.session.pid

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (bounded), when it is a local process."""
        return self.session.stderr_tail

    @property
    def failure(self) -> MCPError | None:
        """Why the connection can no longer be used (`ServerGone`, `TransportClosed`, ...), or `None`."""
        return self.session.failure

    async def wait_failed(self) -> MCPError:
        """Wait until the connection can no longer carry requests; return why.

        `ServerGone` when the server dies (or breaks its end of the
        connection), `TransportClosed` once the connection is closed. For
        supervisors, which start a server again when it dies.
        """
        return await self.session.wait_failed()

    def statistics(self) -> SessionStatistics:
        """A snapshot of the connection's counters (see `Session.statistics`)."""
        return self.session.statistics()

    @property
    def max_rounds(self) -> int:
        """The most requests one multi round-trip operation may take."""
        return self._input.max_rounds

    @max_rounds.setter
    def max_rounds(self, value: int) -> None:
        self._input.max_rounds = value

    @property
    def input_timeout(self) -> float | None:
        """The budget, in seconds, of one whole multi round-trip operation, or `None`."""
        return self._input.input_timeout

    @input_timeout.setter
    def input_timeout(self, value: float | None) -> None:
        self._input.input_timeout = value

    # ---------------------------------------------------------- lifecycle

    async def aclose(self) -> None:
        """Close the connection (and stop the server); idempotent and bounded.

        `open_client` does this as its block ends; call it yourself for a
        client from `connect_client`. See `Session.aclose` for how a server
        is stopped.
        """
        self._release()
        await self.session.aclose()

    async def _handshake(self, restarted: bool) -> None:
        options = self.options
        outcome = await self._requests.connect(
            protocol=options.protocol,
            probe_timeout=options.probe_timeout,
            handshake_timeout=options.handshake_timeout,
            restarted=restarted,
        )
        self._outputs.settle(outcome.negotiated.version)
        found = outcome.discover
        if found is not None:
            self.discover_result = found
            self.server_capabilities = found.capabilities
            self.server_info = found.server_info
            self.instructions = found.instructions
            if self._cache is not None:
                self._cache.put("server/discover", "", found, found.ttl_ms, trio.current_time())
        initialized = outcome.initialize
        if initialized is not None:
            self.server_info = initialized.server_info
            self.server_capabilities = initialized.capabilities
            self.instructions = initialized.instructions

    def _release(self) -> None:
        self._attachment.detach()

    async def _resolve_claim(
        self, method: str, params: dict[str, JSON], result: dict[str, JSON]
    ) -> dict[str, JSON]:
        """A result whose ``resultType`` an extension claims, turned into an ordinary one by it."""
        claim = self._ext.claim(method, result)
        if claim is None:
            return result
        context = ClaimContext(method=method, params=params, request=self._claim_request)
        answer = await claim.resolve(result, context)
        if not isinstance(answer, dict):
            raise ProtocolError(
                f"the extension {self._ext.owner_of_claim(claim)!r} resolved a {claim.result_type!r}"
                f" result of {method} to a {type(answer).__name__}, not a result object"
            )
        return answer

    async def _claim_request(self, method: str, params: Mapping[str, JSON]) -> dict[str, JSON]:
        return await self.request(method, params)

    # ------------------------------------------------------------ sending

    async def request(
        self,
        method: str,
        params: Mapping[str, JSON] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        on_notification: NotificationCallback | None = None,
        meta: Mapping[str, JSON] | None = None,
        for_input: bool = False,
    ) -> dict[str, JSON]:
        """Send any request and return its raw result.

        In the 2026-07-28 era the ``_meta`` envelope is added (with the
        hooks' capabilities when ``for_input`` is true, and the extensions
        that ride on ``method`` in any case); ``resultType`` is not
        interpreted. Use it for methods this class has no wrapper for.

        Args:
            method: The JSON-RPC method.
            params: The params object, without ``_meta`` (give ``meta``).
            on_progress: ``(progress, total, message)`` for this request's
                ``notifications/progress``; sync or async.
            on_notification: Called with the notifications that name this
                request other than those ``on_progress`` takes (its progress,
                as dicts, when there is no ``on_progress``); sync or async.
                Everything else goes to the client's ``on_notification``.
            meta: Extra ``_meta`` keys.
            for_input: Declare the hooks' capabilities (2026-07-28 era).
        """
        return await self._requests.request(
            method,
            params,
            on_progress=on_progress,
            on_notification=on_notification,
            meta=meta,
            for_input=for_input,
        )

    # -------------------------------------------------------------- tools

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, JSON] | None = ...,
        *,
        manual: Literal[False] = ...,
        input_responses: Mapping[str, JSON] | None = ...,
        request_state: str | None = ...,
        on_progress: ProgressCallback | None = ...,
        on_notification: NotificationCallback | None = ...,
        meta: Mapping[str, JSON] | None = ...,
    ) -> CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, JSON] | None = ...,
        *,
        manual: Literal[True],
        input_responses: Mapping[str, JSON] | None = ...,
        request_state: str | None = ...,
        on_progress: ProgressCallback | None = ...,
        on_notification: NotificationCallback | None = ...,
        meta: Mapping[str, JSON] | None = ...,
    ) -> CallToolResult | InputRequiredResult: ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, JSON] | None = None,
        *,
        manual: bool = False,
        input_responses: Mapping[str, JSON] | None = None,
        request_state: str | None = None,
        on_progress: ProgressCallback | None = None,
        on_notification: NotificationCallback | None = None,
        meta: Mapping[str, JSON] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """Call a tool and return its result.

        A result with ``is_error`` set is a result, not an exception: the
        tool ran and failed, and the model should see why.

        In the 2026-07-28 era, when the server answers ``input_required``,
        every input request is answered through the hooks (concurrently) and
        the call is sent again with the answers, until the result is
        complete, at most ``max_rounds`` requests in all.

        Args:
            name: The tool's name.
            arguments: The tool's arguments (a JSON object).
            manual: Return an `InputRequiredResult` instead of answering it
                through the hooks; send the answers yourself with
                ``input_responses`` and ``request_state``.
            input_responses: Answers to the previous round's input requests,
                by key (manual mode).
            request_state: The previous round's ``request_state``, unchanged
                (manual mode).
            on_progress: ``(progress, total, message)`` on each progress
                notification; sync or async.
            on_notification: Called with the notifications that name this
                call other than those ``on_progress`` takes.
            meta: Extra ``_meta`` keys to send.

        A tool that must run as a task (its listing says
        ``taskSupport: "required"``, or a 2026-07-28 server asks for the
        tasks extension) is called as one, and its result awaited: see
        `tool_task`.

        Raises:
            RpcError: The server answered with an error (an unknown tool, for
                example).
            InputRequestFailed: An input request could not be answered.
            TaskError: The tool ran as a task, which failed, was cancelled or vanished.
        """
        if (
            not manual
            and self._requests.era == "legacy"
            and self._tasks.may_require(name)
            and await self._tasks.requires(name)
        ):
            return await self._tasks.call_as_task(name, arguments, on_progress)
        if type(arguments) is dict:
            params: dict[str, JSON] = {"name": name, "arguments": arguments}
        else:
            params = {"name": name}
            if arguments is not None:
                params["arguments"] = dict(arguments)
        try:
            result, _ = await self._requests.with_input(
                "tools/call",
                params,
                CallToolResult,
                manual=manual,
                input_responses=input_responses,
                request_state=request_state,
                on_progress=on_progress,
                on_notification=on_notification,
                meta=meta,
            )
        except RpcError as exc:
            if exc.code != MISSING_CLIENT_CAPABILITY or not needs_extension(exc.data) or manual:
                raise
            # The server runs this tool only as a task (2026-07-28 extension).
            return await self._tasks.call_as_task(name, arguments, on_progress)
        if type(result) is CallToolResult and self._outputs.wants(result):
            await self._outputs.check(name, result)
        return result

    # -------------------------------------------------------------- tasks
    # (The task side lives in trio_mcp._client.tasks; these are its operations.)

    async def _task_rounds(
        self, params: dict[str, JSON], send: Callable[[dict[str, JSON]], Awaitable[dict[str, JSON]]]
    ) -> CallToolResult:
        handler = self._input
        round_params, start = handler.first_round(params, None, None)
        first = await send(round_params)
        result, _ = await handler.run_rounds("tools/call", params, CallToolResult, send, first, start)
        assert isinstance(result, CallToolResult)
        return result

    async def _plain_call(
        self, name: str, arguments: Mapping[str, JSON] | None, on_progress: ProgressCallback | None
    ) -> CallToolResult:
        return await self.call_tool(name, arguments, on_progress=on_progress)

    @asynccontextmanager
    async def tool_task(
        self,
        name: str,
        arguments: Mapping[str, JSON] | None = None,
        *,
        ttl_ms: int | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[ToolTask]:
        """Call a tool as a task: ``async with client.tool_task(name, args) as task:``.

        The server runs the call in the background and answers at once with
        a task; `ToolTask.result` waits for its end. While the block lasts,
        the client follows the task (polling at the pace the server
        suggests, within bounds) and answers its input requests through the
        hooks (``on_elicitation``, ...), as for `call_tool`; a hook tells
        which task asks from its params' ``meta``, whose
        ``"io.modelcontextprotocol/related-task"`` entry holds the
        ``taskId``. Leaving the block while the task runs cancels it on the
        server, unless it was detached (`ToolTask.detach`).

        Initialize era (2025-11-25): the call is sent as a task when the
        server declares ``tasks.requests.tools.call`` and the tool's
        ``execution.taskSupport`` allows it (the tools are listed first when
        they were not). 2026-07-28 era: the call declares the tasks
        extension, and the server decides. Either way, a server that answers
        at once gives a handle whose `~ToolTask.ran_synchronously` is true
        and whose `~ToolTask.result` is that answer.

        Args:
            name: The tool's name.
            arguments: The tool's arguments.
            ttl_ms: How long the server should keep the task, in
                milliseconds (initialize era; servers may choose otherwise).
            on_progress: ``(progress, total, message)`` for the call's
                progress notifications, while the block lasts.

        Raises:
            RpcError: The server refused the call.
        """
        async with self._tasks.tool_task(name, arguments, ttl_ms=ttl_ms, on_progress=on_progress) as task:
            yield task

    @asynccontextmanager
    async def resume_task(self, ref: TaskRef) -> AsyncIterator[ToolTask]:
        """Follow again a task started earlier (see `ToolTask.detach`), perhaps on another connection.

        Use as ``async with client.resume_task(ref) as task:``; the block
        owns the task as `tool_task`'s does (leaving it while the task runs
        cancels it, unless detached again).

        Raises:
            NotSupported: The reference is of the other protocol era.
            TaskGone: The server does not know the task (it expired, or is
                another server's).
        """
        async with self._tasks.resume_task(ref) as task:
            yield task

    async def get_task(self, task_id: str) -> Task:
        """The current status of a task (``tasks/get``).

        Raises:
            TaskGone: The server does not know the task (``-32602``).
        """
        return await self._tasks.get_task(task_id)

    async def cancel_task(self, task_id: str) -> Task | None:
        """Ask the server to cancel a task (``tasks/cancel``).

        Returns the task as the server then reports it (initialize era), or
        `None` (2026-07-28: the server acknowledges, and the task ends
        cancelled, or otherwise, later). A task that has ended already is
        left as it is, and returned as `get_task` gives it.

        Raises:
            TaskGone: The server does not know the task (``-32602``), as for
                `get_task`.
        """
        return await self._tasks.cancel_task(task_id)

    async def list_tasks(self) -> list[Task]:
        """Every task the server keeps for this client (``tasks/list``, initialize era), following pages.

        Raises:
            NotSupported: The 2026-07-28 era has no ``tasks/list``.
            ProtocolError: The server sent the same cursor twice (a
                pagination loop), or more than 10,000 pages, as for the other
                listings.
        """
        await self._requests.require("legacy", "tasks/list")
        return await self._tasks.list_tasks()

    # ------------------------------------------------------------ listings

    def _invalidate(self, note: dict[str, JSON]) -> None:
        """Drop what a list-change or update notification says has changed (and tell the tasks)."""
        self._tasks.note(note)
        if self._cache is not None:
            self._cache.invalidate(note)
        if note.get("method") == "notifications/tools/list_changed":
            self._outputs.schemas.forget()

    async def _list_page(
        self, method: str, params: dict[str, JSON], model: type, on_notification: NotificationCallback | None
    ) -> Any:
        return await self._requests.typed(method, params, model, on_notification=on_notification)

    async def _relist_tools(self) -> None:
        await self._lists.relist_tools()

    async def list_tools_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListToolsResult:
        """Fetch one page of the server's tools (``tools/list``); pass its ``next_cursor`` for the next."""
        page: ListToolsResult = await self._lists.page("tools/list", cursor, on_notification)
        return page

    def iter_tools(self) -> Pages[Tool]:
        """Yield every tool, fetching pages as they are needed: ``async for item in client.iter_tools():``."""
        return self._lists.pages("tools/list")

    async def list_tools(self) -> list[Tool]:
        """Return every tool the server has, following ``nextCursor`` to the end."""
        return await self._lists.all("tools/list")

    async def list_prompts_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListPromptsResult:
        """Fetch one page of the server's prompts (``prompts/list``)."""
        page: ListPromptsResult = await self._lists.page("prompts/list", cursor, on_notification)
        return page

    def iter_prompts(self) -> Pages[Prompt]:
        """Yield every prompt, fetching pages as they are needed: ``async for item in client.iter_prompts():``."""
        return self._lists.pages("prompts/list")

    async def list_prompts(self) -> list[Prompt]:
        """Return every prompt, following ``nextCursor`` to the end."""
        return await self._lists.all("prompts/list")

    async def list_resources_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListResourcesResult:
        """Fetch one page of the server's resources (``resources/list``)."""
        page: ListResourcesResult = await self._lists.page("resources/list", cursor, on_notification)
        return page

    def iter_resources(self) -> Pages[Resource]:
        """Yield every resource, fetching pages as they are needed: ``async for item in client.iter_resources():``."""
        return self._lists.pages("resources/list")

    async def list_resources(self) -> list[Resource]:
        """Return every resource, following ``nextCursor`` to the end."""
        return await self._lists.all("resources/list")

    async def list_resource_templates_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListResourceTemplatesResult:
        """Fetch one page of the server's resource templates (``resources/templates/list``)."""
        page: ListResourceTemplatesResult = await self._lists.page(
            "resources/templates/list", cursor, on_notification
        )
        return page

    def iter_resource_templates(self) -> Pages[ResourceTemplate]:
        """Yield every resource template, fetching pages as they are needed: ``async for item in client.iter_resource_templates():``."""
        return self._lists.pages("resources/templates/list")

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Return every resource template, following ``nextCursor`` to the end."""
        return await self._lists.all("resources/templates/list")

    # ------------------------------------------------- prompts, resources

    @overload
    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = ...,
        *,
        manual: Literal[False] = ...,
        input_responses: Mapping[str, JSON] | None = ...,
        request_state: str | None = ...,
        on_progress: ProgressCallback | None = ...,
        on_notification: NotificationCallback | None = ...,
        meta: Mapping[str, JSON] | None = ...,
    ) -> GetPromptResult: ...

    @overload
    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = ...,
        *,
        manual: Literal[True],
        input_responses: Mapping[str, JSON] | None = ...,
        request_state: str | None = ...,
        on_progress: ProgressCallback | None = ...,
        on_notification: NotificationCallback | None = ...,
        meta: Mapping[str, JSON] | None = ...,
    ) -> GetPromptResult | InputRequiredResult: ...

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        manual: bool = False,
        input_responses: Mapping[str, JSON] | None = None,
        request_state: str | None = None,
        on_progress: ProgressCallback | None = None,
        on_notification: NotificationCallback | None = None,
        meta: Mapping[str, JSON] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        """Get a prompt, filled in with ``arguments`` (strings).

        Input requests are answered through the hooks as for `call_tool`,
        whose other arguments this takes too. Returns a `GetPromptResult`
        (or, with ``manual=True``, possibly an `InputRequiredResult`).
        """
        params: dict[str, JSON] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result, _ = await self._requests.with_input(
            "prompts/get",
            params,
            GetPromptResult,
            manual=manual,
            input_responses=input_responses,
            request_state=request_state,
            on_progress=on_progress,
            on_notification=on_notification,
            meta=meta,
        )
        return result

    @overload
    async def read_resource(
        self,
        uri: str,
        *,
        manual: Literal[False] = ...,
        input_responses: Mapping[str, JSON] | None = ...,
        request_state: str | None = ...,
        on_progress: ProgressCallback | None = ...,
        on_notification: NotificationCallback | None = ...,
        meta: Mapping[str, JSON] | None = ...,
    ) -> ReadResourceResult: ...

    @overload
    async def read_resource(
        self,
        uri: str,
        *,
        manual: Literal[True],
        input_responses: Mapping[str, JSON] | None = ...,
        request_state: str | None = ...,
        on_progress: ProgressCallback | None = ...,
        on_notification: NotificationCallback | None = ...,
        meta: Mapping[str, JSON] | None = ...,
    ) -> ReadResourceResult | InputRequiredResult: ...

    async def read_resource(
        self,
        uri: str,
        *,
        manual: bool = False,
        input_responses: Mapping[str, JSON] | None = None,
        request_state: str | None = None,
        on_progress: ProgressCallback | None = None,
        on_notification: NotificationCallback | None = None,
        meta: Mapping[str, JSON] | None = None,
    ) -> ReadResourceResult | InputRequiredResult:
        """Read a resource by URI.

        Returns a `ReadResourceResult` whose ``contents`` are
        `TextResourceContents` or `BlobResourceContents` items (there may be
        several, e.g. for a directory). A resource that does not exist is an
        `RpcError` (``-32002`` from initialize-era servers, ``-32602`` from
        2026-07-28 ones). Input requests are answered as for `call_tool`.
        Fresh results (``ttlMs``) are served from the cache.
        """
        plain = (
            not manual
            and input_responses is None
            and request_state is None
            and on_progress is None
            and on_notification is None
            and not meta
        )
        if plain and self._cache is not None:
            hit = self._cache.get("resources/read", uri, trio.current_time())
            if isinstance(hit, ReadResourceResult):
                await trio.lowlevel.checkpoint()
                return hit
        result, rounds = await self._requests.with_input(
            "resources/read",
            {"uri": uri},
            ReadResourceResult,
            manual=manual,
            input_responses=input_responses,
            request_state=request_state,
            on_progress=on_progress,
            on_notification=on_notification,
            meta=meta,
        )
        if plain and rounds == 1 and self._cache is not None and isinstance(result, ReadResourceResult):
            self._cache.put("resources/read", uri, result, result.ttl_ms, trio.current_time())
        return result

    async def complete(
        self,
        ref: Mapping[str, JSON] | Prompt | ResourceTemplate | Resource,
        argument: tuple[str, str] | Mapping[str, str],
        context: Mapping[str, str] | None = None,
    ) -> Completion:
        """Ask the server to complete an argument value (``completion/complete``).

        Args:
            ref: What is being filled in: a `Prompt`, a `ResourceTemplate`
                (or `Resource`), or the wire form such as
                ``{"type": "ref/prompt", "name": "review"}``.
            argument: The argument being typed, as ``(name, value)`` or
                ``{"name": ..., "value": ...}``.
            context: Values of the arguments already filled in.
        """
        if isinstance(ref, Prompt):
            wire_ref: dict[str, JSON] = {"type": "ref/prompt", "name": ref.name}
        elif isinstance(ref, ResourceTemplate):
            wire_ref = {"type": "ref/resource", "uri": ref.uri_template}
        elif isinstance(ref, Resource):
            wire_ref = {"type": "ref/resource", "uri": ref.uri}
        else:
            wire_ref = dict(ref)
        if isinstance(argument, tuple):
            name, value = argument
            wire_argument: dict[str, JSON] = {"name": name, "value": value}
        else:
            wire_argument = dict(argument)
        params: dict[str, JSON] = {"ref": wire_ref, "argument": wire_argument}
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        result = await self._requests.typed("completion/complete", params, CompleteResult)
        return result.completion

    # ------------------------------------------------------- modern only

    async def discover(self) -> DiscoverResult:
        """Ask the server to describe itself (``server/discover``, 2026-07-28 era).

        Served from the cache while the last answer's ``ttlMs`` lasts.

        Raises:
            NotSupported: The server speaks the initialize era; its
                description is in `server_info`, `server_capabilities` and
                `instructions`.
        """
        await self._requests.require("modern", "server/discover")
        if self._cache is not None:
            hit = self._cache.get("server/discover", "", trio.current_time())
            if isinstance(hit, DiscoverResult):
                return hit
        found = await self._requests.typed("server/discover", None, DiscoverResult)
        if self._cache is not None:
            self._cache.put("server/discover", "", found, found.ttl_ms, trio.current_time())
        return found

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        buffer: int = 256,
    ) -> AsyncIterator[Subscription]:
        """Subscribe to change notifications, in either era.

        Use as ``async with client.listen(tools=True) as sub:`` then
        ``async for note in sub:``. Change notifications also invalidate the
        client's cache.

        2026-07-28 era: a ``subscriptions/listen`` request. Entering waits for
        the server's acknowledgement; leaving ends the subscription
        (``notifications/cancelled`` is sent).

        Initialize era: the notifications the server sends on its own, picked
        by method; ``resource_uris`` are subscribed to with
        ``resources/subscribe`` as the block starts, and unsubscribed as it
        ends. A URI the server refuses is reported through ``on_log`` and
        left out of `Subscription.acknowledged`.

        Args:
            tools: Deliver ``notifications/tools/list_changed``.
            prompts: Deliver ``notifications/prompts/list_changed``.
            resources: Deliver ``notifications/resources/list_changed``.
            resource_uris: Deliver ``notifications/resources/updated`` for
                these URIs (and what is under them).
            buffer: How many notifications may wait for the consumer; more
                are dropped (counted in `Subscription.dropped`).
        """
        if self.era is None:
            await trio.lowlevel.checkpoint()
            raise RuntimeError("use the client inside 'async with open_client(...)'")
        wanted = subscription_filter(tools, prompts, resources, resource_uris)
        self.session.check_usable()
        invalidate = self._invalidate
        if self.era == "legacy":
            async with open_legacy_subscription(
                self.session, wanted, buffer, self.subscribe_resource, self._unsubscribe_quietly
            ) as sub:
                yield sub
            return

        async def send(params: dict[str, JSON], callback: NotificationCallback) -> dict[str, JSON]:
            body = {**params, "_meta": self._requests.plain_meta("subscriptions/listen")}

            async def deliver(note: dict[str, JSON]) -> None:
                invalidate(note)
                await call_maybe_async(callback, note)

            return await self.session.request(
                "subscriptions/listen", body, on_notification=deliver, long_lived=True
            )

        async with open_subscription(self.session, send, wanted, buffer, self._notes.connection_note) as sub:
            yield sub

    # ------------------------------------------------------- legacy only

    async def ping(self) -> None:
        """Check that the server answers (``ping``, initialize era).

        Raises:
            NotSupported: The 2026-07-28 era dropped ``ping``; the process's
                liveness is the transport's business.
        """
        await self._requests.require("legacy", "ping")
        await self.session.request("ping")

    async def set_logging_level(self, level: LogLevel) -> None:
        """Ask the server for log messages at ``level`` and above (``logging/setLevel``).

        Log messages then reach the ``on_notification`` sink. In the
        2026-07-28 era set `log_level` instead (logs are per request there).

        Raises:
            ValueError: ``level`` is not one of the eight syslog levels of MCP
                (``"debug"`` to ``"emergency"``); nothing is sent.
            NotSupported: The server speaks the 2026-07-28 era.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"level must be one of {list(LOG_LEVELS)}, not {level!r}")
        await self._requests.require("legacy", "logging/setLevel")
        await self.session.request("logging/setLevel", {"level": level})

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (initialize era).

        Raises:
            NotSupported: The server speaks the 2026-07-28 era (use `listen`).
        """
        await self._requests.require("legacy", "resources/subscribe")
        await self.session.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop `subscribe_resource` notifications about ``uri``.

        Raises:
            NotSupported: The server speaks the 2026-07-28 era.
        """
        await self._requests.require("legacy", "resources/unsubscribe")
        await self.session.request("resources/unsubscribe", {"uri": uri})

    async def _unsubscribe_quietly(self, uri: str) -> None:
        try:
            await self.session.request("resources/unsubscribe", {"uri": uri})
        except MCPError as exc:
            self._log(f"cannot unsubscribe from {uri!r}: {exc}")

    def invalidate_cache(self) -> None:
        """Forget every cached result (the cache honours ``ttlMs``), and the tools' output schemas."""
        if self._cache is not None:
            self._cache.clear()
        self._outputs.schemas.forget()


# ------------------------------------------------------- for the openers


# ------------------------------------------------------- for the openers


def make_client(session: Session, options: ClientOptions) -> Client:
    """A client over ``session``, attached to it (its hooks answer the server's requests).

    Raises:
        RuntimeError: The session has a client already.
    """
    return Client._create(session, options)


async def handshake(client: Client, *, restarted: bool = False) -> None:
    """Negotiate the era with the server, then finish the handshake.

    Raises:
        ServerDiedOnProbe: The server died on the ``server/discover`` probe
            (only an opener whose target allows it starts it again).
        VersionMismatch: No protocol version in common.
        RequestTimeout: The handshake ran out of ``handshake_timeout``.
    """
    await client._handshake(restarted)


def release(client: Client) -> None:
    """Give the session back: the hooks and ``on_notification`` stop answering; idempotent."""
    client._release()


def start_beside(client: Client, fn: Callable[..., Awaitable[object]], *args: object, name: str) -> None:
    """Run ``fn(*args)`` beside the connection's own tasks; it ends with the connection.

    For the server group's helpers (listen streams, refreshes). The task is
    not shielded, and must end by itself once the connection fails.

    Raises:
        ServerGone, TransportClosed: The connection can carry nothing more.
    """
    start_soon(client.session, fn, *args, name=name)
