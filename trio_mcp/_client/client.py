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

import itertools
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypeVar, overload

import attrs
import trio

from .._core.cache import TtlCache
from .._core.eras import (
    CLIENT_CAPABILITIES,
    HEADER_MISMATCH,
    MISSING_CLIENT_CAPABILITY,
    MODERN_VERSIONS,
    MRTR_METHODS,
    capabilities as declare,
    modern_meta,
    result_type,
)
from .._core.extensions import ClaimContext, ExtensionSet, merge_declarations
from .._core.outputs import OutputSchemas, validator_available
from .._core.param_headers import HeaderParam, param_headers, screen_tools
from .._core.tasks import (
    declare_extension,
    needs_extension,
)
from .._errors import MCPError, NotSupported, OutputValidationError, ProtocolError, RpcError
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
    structure,
    structure_tool_result,
    unstructure,
)
from .._session import attach, call_maybe_async, report, start_soon, stop_serving_requests
from .._telemetry import negotiated as telemetry_negotiated
from .handshake import negotiate
from .input import InputHandler
from .listen import Subscription, open_legacy_subscription, open_subscription
from .notes import NotificationRouter
from .pages import Pages
from .tasks import ClientTasks, TaskHost, ToolTask

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence

    from .._core.tasks import Task, TaskRef
    from .._models import InputRequest
    from .._options import ClientOptions, NotificationCallback
    from .._session import Attachment, Session, SessionStatistics
    from .handshake import Outcome
    from .notes import ProgressCallback

__all__ = ["Client", "handshake", "make_client", "release", "start_beside"]

JSON: TypeAlias = Any
M = TypeVar("M")

#: Each listing: its result model, and the attribute that holds its items.
_LISTS: Final[dict[str, tuple[type, str]]] = {
    "tools/list": (ListToolsResult, "tools"),
    "prompts/list": (ListPromptsResult, "prompts"),
    "resources/list": (ListResourcesResult, "resources"),
    "resources/templates/list": (ListResourceTemplatesResult, "resource_templates"),
}


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
    log_level: str | None
    """The ``logLevel`` every 2026-07-28 request asks for, or `None` for no logs."""

    def __init__(self) -> None:
        raise TypeError(
            "a Client is made by the openers: open_client(target) or connect_client(nursery, target)"
        )

    def _setup(self, session: Session, options: ClientOptions) -> None:
        self.session = session
        self.era: Literal["modern", "legacy"] | None = None
        self.protocol_version: str | None = None
        self.server_info: Implementation | None = None
        self.server_capabilities = ServerCapabilities()
        self.instructions: str | None = None
        self.discover_result = None
        self.options = options
        client_info = options.client_info
        if isinstance(client_info, Implementation):
            self.client_info: dict[str, JSON] = unstructure(client_info)
        else:
            name, version = client_info
            self.client_info = {"name": name, "version": version}
        self.log_level = options.log_level
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
        self._validate_output = options.validate_output
        self._outputs = OutputSchemas()
        self._checks_output = False
        """Whether results of this connection are checked (a mode other than off, a revision with outputSchema)."""
        self._output_reports: set[tuple[str, str]] = set()
        self._reports_generation = 0
        self._listing_tried = -1
        self._told_no_validator = False
        self._listing_lock = trio.Lock()
        self._param_headers: dict[str, tuple[HeaderParam, ...]] = {}
        """The x-mcp-header parameters of each tool, from its latest listing (2026-07-28 era)."""
        self._header_mismatch_retries = 0
        """How many 2026-07-28 ``tools/call`` refused with ``-32020`` (header mismatch) were sent
        once more after listing the tools again (each call at most once)."""
        self._tokens = itertools.count(1)
        self._input_caps: dict[str, JSON] = {}
        self._envelope: dict[str, JSON] | None = None
        self._envelope_level: str | None = None
        self._extra_caps = dict(options.capabilities) if options.capabilities else {}
        self._attachment: Attachment | None = None
        self._tasks = ClientTasks(
            TaskHost(
                session=session,
                connection=lambda: (self.era, self.protocol_version),
                server_tasks=lambda: self.server_capabilities.tasks,
                send=self._task_send,
                create=self._task_call,
                run_rounds=self._task_rounds,
                call_tool=self._plain_call,
                list_tools=self.list_tools,
                progress=self._task_progress,
                answer_all=self._answer_inputs,
                check_output=self._task_output,
                log=self._log,
            )
        )

    def _log(self, message: str) -> None:
        report(self.session, message)

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
        release(self)
        await self.session.aclose()

    async def _connect(self, restarted: bool) -> None:
        options = self.options
        outcome = await negotiate(
            self.session,
            protocol=options.protocol,
            client_info=self.client_info,
            declare=self._declared,
            probe_timeout=options.probe_timeout,
            handshake_timeout=options.handshake_timeout,
            restarted=restarted,
        )
        self._apply(outcome)
        await self._finish_handshake()

    def _apply(self, outcome: Outcome) -> None:
        """Take the result of the handshake."""
        negotiated = outcome.negotiated
        self.era = negotiated.era
        self.protocol_version = negotiated.version
        telemetry_negotiated(self.session, negotiated.version)
        self._input.version = negotiated.version
        self._input_caps = self._declared(negotiated.version)
        # outputSchema and structuredContent came with 2025-06-18.
        self._checks_output = self._validate_output != "off" and negotiated.version >= "2025-06-18"
        if negotiated.era == "modern":
            stop_serving_requests(self.session)
            found = outcome.discover
            if found is not None:
                self.discover_result = found
                self.server_capabilities = found.capabilities
                self.server_info = found.server_info
                self.instructions = found.instructions
                if self._cache is not None:
                    self._cache.put("server/discover", "", found, found.ttl_ms, trio.current_time())
        else:
            initialized = outcome.initialize
            assert initialized is not None
            self.server_info = initialized.server_info
            self.server_capabilities = initialized.capabilities
            self.instructions = initialized.instructions

    async def _finish_handshake(self) -> None:
        """The initialize era's last steps: ``notifications/initialized``, then the log level."""
        if self.era != "legacy":
            await trio.lowlevel.checkpoint()
            return
        await self.session.notify("notifications/initialized")
        if self.log_level is not None and self.server_capabilities.logging is not None:
            # The initialize era sets the level once, for the whole session.
            await self.session.request("logging/setLevel", {"level": self.log_level})

    def _declared(self, version: str) -> dict[str, JSON]:
        caps = {**declare(self._input.hooks, version), **self._extra_caps}
        if self._ext.extensions:
            caps = merge_declarations(caps, self._ext.declared)
        return caps

    def _plain_caps(self, method: str) -> dict[str, JSON]:
        """What a 2026-07-28 request that asks for no input declares: the extensions it needs."""
        if not self._ext:
            return {}
        extensions = self._ext.for_method(method)
        return {"extensions": extensions} if extensions else {}

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

    def _input_envelope(self) -> dict[str, JSON]:
        """The ``_meta`` of a plain request that may ask for input (shared; never mutated)."""
        if self._envelope is None or self._envelope_level != self.log_level:
            assert self.protocol_version is not None
            self._envelope_level = self.log_level
            self._envelope = modern_meta(
                self.protocol_version, self._input_caps, self.client_info, log_level=self.log_level
            )
        return self._envelope

    async def _require(self, era: Literal["modern", "legacy"], method: str) -> None:
        await trio.lowlevel.checkpoint()
        if self.era is None:
            raise RuntimeError("use the client inside 'async with open_stdio_client(...)'")
        if self.era != era:
            raise NotSupported(
                f"{method} does not exist in protocol version {self.protocol_version} (the {self.era} era)",
                method=method,
                era=self.era,
            )

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
        if self.era is None:
            await trio.lowlevel.checkpoint()
            raise RuntimeError("use the client inside 'async with open_stdio_client(...)'")
        body: dict[str, JSON] = dict(params) if params else {}
        token = next(self._tokens) if on_progress is not None or on_notification is not None else None
        callback = self._notes.for_call(token, on_progress, on_notification)
        session = self.session
        if self.era == "legacy":
            extra: dict[str, JSON] = dict(meta) if meta else {}
            if token is not None:
                extra["progressToken"] = token
            if extra:
                body["_meta"] = {**body.get("_meta", {}), **extra}
            return await session.request(
                method, body if body or params is not None else None, on_notification=callback
            )
        assert self.protocol_version is not None
        caps = self._input_caps if for_input else self._plain_caps(method)
        envelope = modern_meta(
            self.protocol_version,
            caps,
            self.client_info,
            log_level=self.log_level,
            progress_token=token,
            extra=meta,
        )
        body["_meta"] = envelope
        retried = False
        while True:
            try:
                if method == "tools/call":
                    return await self._tools_call(body, on_notification=callback)
                return await session.request(method, body, on_notification=callback)
            except RpcError as exc:
                if (
                    exc.code == MISSING_CLIENT_CAPABILITY
                    and not retried
                    and self._can_declare(exc.data, caps, method)
                ):
                    # Declare what we do support and try once more.
                    retried = True
                    everything = self._declared(self.protocol_version)
                    if method not in MRTR_METHODS and needs_extension(exc.data):
                        everything = declare_extension(everything)
                    envelope[CLIENT_CAPABILITIES] = everything
                    continue
                raise

    def _can_declare(self, data: object, declared: dict[str, JSON], method: str = "") -> bool:
        if not isinstance(data, dict) or not isinstance(data.get("requiredCapabilities"), dict):
            return False
        ours = self._declared(self.protocol_version or MODERN_VERSIONS[0])
        if method not in MRTR_METHODS:
            # The tasks extension is ours to declare, except where a task
            # would come back in place of the result (call_tool asks for one
            # itself).
            ours = declare_extension(ours)
        wanted = data["requiredCapabilities"]
        if not wanted:
            return False
        missing = False
        for key, value in wanted.items():
            if key not in ours:
                return False
            if key == "extensions":
                if not isinstance(value, dict) or not all(name in ours["extensions"] for name in value):
                    return False
                have = declared.get("extensions")
                missing = missing or any(not isinstance(have, dict) or name not in have for name in value)
            else:
                missing = missing or key not in declared
        return missing

    async def _typed(
        self, method: str, params: dict[str, JSON] | None, model: type[M], options: dict[str, Any]
    ) -> M:
        result = await self.request(method, params, **options)
        if self.era == "modern":
            result_type(method, result)
        return structure(result, model)

    async def _with_input(
        self,
        method: str,
        params: dict[str, JSON],
        model: type[M],
        *,
        manual: bool,
        input_responses: Mapping[str, JSON] | None,
        request_state: str | None,
        options: dict[str, Any],
        first_result: dict[str, JSON] | None = None,
        started: float | None = None,
    ) -> tuple[M | InputRequiredResult, int]:
        if self.era == "legacy":
            InputHandler.refuse_legacy_rounds(method, input_responses, request_state)
            return await self._typed(method, params, model, options), 0

        async def send(round_params: dict[str, JSON]) -> dict[str, JSON]:
            return await self.request(method, round_params, for_input=True, **options)

        return await self._input.run_rounds(
            method,
            params,
            model,
            send,
            manual=manual,
            input_responses=input_responses,
            request_state=request_state,
            first_result=first_result,
            started=started,
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
            and self.era == "legacy"
            and self._tasks.may_require(name)
            and await self._tasks.requires(name)
        ):
            return await self._tasks.call_as_task(name, arguments, on_progress)
        try:
            if type(arguments) is dict:
                params: dict[str, JSON] = {"name": name, "arguments": arguments}
            else:
                params = {"name": name}
                if arguments is not None:
                    params["arguments"] = dict(arguments)
            first: dict[str, JSON] | None = None
            started: float | None = None
            if (
                not manual
                and input_responses is None
                and request_state is None
                and on_progress is None
                and on_notification is None
                and meta is None
            ):
                # The common case, flat: one request, no callbacks. (Until tools
                # are listed, no output schema is known, and only "strict" has
                # anything to check: it lists them first.)
                era = self.era
                if era == "legacy":
                    done = structure_tool_result(await self.session.request("tools/call", params))
                    if (
                        self._checks_output
                        and not done.is_error
                        and (self._outputs.known or self._validate_output == "strict")
                    ):
                        await self._check_output(name, done)
                    return done
                if era == "modern":
                    if self._input.input_timeout is not None:
                        started = trio.current_time()
                    envelope = self._envelope
                    if envelope is None or self._envelope_level != self.log_level:
                        envelope = self._input_envelope()
                    # A -32021 needs no retry here: tools/call already declares
                    # every capability the client has.
                    # (No Mcp-Param-* headers before a listing names some.)
                    if self._param_headers:
                        first = await self._tools_call({**params, "_meta": envelope})
                    else:
                        # This dict goes out as it is (and is never changed
                        # afterwards: the channel may still hold it).
                        params["_meta"] = envelope
                        first = await self._tools_call(params)
                    kind = first.get("resultType")
                    if kind is None or kind == "complete":
                        done = structure_tool_result(first)
                        if (
                            self._checks_output
                            and not done.is_error
                            and (self._outputs.known or self._validate_output == "strict")
                        ):
                            await self._check_output(name, done)
                        return done
                    # Input required: the rounds below send params with envelopes of their own.
                    params = {key: value for key, value in params.items() if key != "_meta"}
            result, _ = await self._with_input(
                "tools/call",
                params,
                CallToolResult,
                manual=manual,
                input_responses=input_responses,
                request_state=request_state,
                options={"on_progress": on_progress, "on_notification": on_notification, "meta": meta},
                first_result=first,
                started=started,
            )
            if self._checks_output and isinstance(result, CallToolResult) and not result.is_error:
                await self._check_output(name, result)
            return result
        except RpcError as exc:
            if exc.code != MISSING_CLIENT_CAPABILITY or not needs_extension(exc.data) or manual:
                raise
        # The server runs this tool only as a task (2026-07-28 extension).
        return await self._tasks.call_as_task(name, arguments, on_progress)

    # -------------------------------------------------------------- tasks
    # (The task side lives in trio_mcp._client.tasks; these are its operations.)

    async def _answer_inputs(self, requests: Mapping[str, InputRequest]) -> dict[str, JSON]:
        return await self._input.answer_all(requests)

    async def _task_output(self, name: str, result: CallToolResult) -> None:
        if self._checks_output and (self._outputs.known or self._validate_output == "strict"):
            await self._check_output(name, result)
        else:
            await trio.lowlevel.checkpoint()

    async def _task_send(self, method: str, params: dict[str, JSON], long_lived: bool) -> dict[str, JSON]:
        """Send a ``tasks/*`` request: as it is (initialize era), or with the envelope declaring the extension."""
        if self.era == "legacy":
            return await self.session.request(method, params, long_lived=long_lived)
        assert self.protocol_version is not None
        caps = declare_extension(self._input_caps)
        envelope = modern_meta(self.protocol_version, caps, self.client_info, log_level=self.log_level)
        try:
            return await self.session.request(method, {**params, "_meta": envelope}, long_lived=long_lived)
        except RpcError as exc:
            if exc.code != MISSING_CLIENT_CAPABILITY or not self._can_declare(exc.data, caps, method):
                raise
        envelope[CLIENT_CAPABILITIES] = declare_extension(self._declared(self.protocol_version))
        return await self.session.request(method, {**params, "_meta": envelope}, long_lived=long_lived)

    async def _task_call(
        self, params: dict[str, JSON], token: int | None, callback: NotificationCallback | None
    ) -> dict[str, JSON]:
        """Send one ``tools/call`` that asks for a task (2026-07-28: declaring the extension)."""
        if self.era == "legacy":
            body = params if token is None else {**params, "_meta": {"progressToken": token}}
            return await self.session.request("tools/call", body, on_notification=callback)
        assert self.protocol_version is not None
        caps = declare_extension(self._input_caps)
        envelope = modern_meta(
            self.protocol_version, caps, self.client_info, log_level=self.log_level, progress_token=token
        )
        return await self._tools_call({**params, "_meta": envelope}, on_notification=callback)

    async def _task_rounds(
        self, params: dict[str, JSON], send: Callable[[dict[str, JSON]], Awaitable[dict[str, JSON]]]
    ) -> CallToolResult:
        result, _ = await self._input.run_rounds(
            "tools/call", params, CallToolResult, send, manual=False, input_responses=None, request_state=None
        )
        assert isinstance(result, CallToolResult)
        return result

    async def _plain_call(
        self, name: str, arguments: Mapping[str, JSON] | None, on_progress: ProgressCallback | None
    ) -> CallToolResult:
        return await self.call_tool(name, arguments, on_progress=on_progress)

    def _task_progress(
        self, on_progress: ProgressCallback | None
    ) -> tuple[int | None, NotificationCallback | None]:
        token = next(self._tokens) if on_progress is not None else None
        return token, self._notes.for_call(token, on_progress, None)

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
        await self._require("legacy", "tasks/list")
        return await self._tasks.list_tasks()

    # ----------------------------------------------------- output schemas

    def _invalidate(self, note: dict[str, JSON]) -> None:
        """Drop what a list-change or update notification says has changed (and tell the tasks)."""
        self._tasks.note(note)
        if self._cache is not None:
            self._cache.invalidate(note)
        if note.get("method") == "notifications/tools/list_changed":
            self._outputs.forget()

    def _report_once(self, tool: str, kind: str, message: str) -> None:
        """Report through ``on_log``, once per listing for each tool and kind of problem."""
        generation = self._outputs.generation
        if self._reports_generation != generation:
            self._reports_generation = generation
            self._output_reports.clear()
        key = (tool, kind)
        if key not in self._output_reports:
            self._output_reports.add(key)
            self._log(message)

    async def _learn_tools(self) -> None:
        """List the tools once, to learn their output schemas (strict mode, nothing listed yet)."""
        async with self._listing_lock:
            outputs = self._outputs
            if outputs.known or self._listing_tried == outputs.generation:
                return
            try:
                await self.list_tools()
            except MCPError as exc:
                # Not again until the tools change: each call would pay for it.
                self._listing_tried = outputs.generation
                self._report_once(
                    "",
                    "listing",
                    f"cannot list the tools of {self.session.name} to learn their output schemas: {exc}",
                )

    async def _check_output(self, name: str, result: CallToolResult) -> None:
        """Check a result's structured content against its tool's output schema (``validate_output``)."""
        strict = self._validate_output == "strict"
        outputs = self._outputs
        if strict and not outputs.known:
            await self._learn_tools()
        if outputs.declares(name) and not validator_available():
            if strict:
                raise OutputValidationError(
                    f"cannot check the output of tool {name!r}: validate_output='strict' needs the"
                    " validation extra (pip install 'trio-mcp[validation]')",
                    tool=name,
                    result=result,
                )
            if not self._told_no_validator:
                self._told_no_validator = True
                self._log(
                    "structured tool output is not checked: the validation extra is not installed"
                    " (pip install 'trio-mcp[validation]', or validate_output='off' to silence this)"
                )
            return
        structured = result.structured_content
        kind, path, reason = outputs.judge(name, structured, present=structured is not None)
        if kind == "ok":
            return
        server = self.session.name
        if kind == "unlisted":
            self._report_once(
                name,
                kind,
                f"tool {name!r} of {server} is not in its tool listing: its structured output is not checked",
            )
            return
        if kind == "unusable":
            self._report_once(
                name,
                kind,
                f"the outputSchema of tool {name!r} of {server} cannot be used, so its output is not"
                f" checked: {reason}",
            )
            return
        if kind == "missing":
            message = (
                f"tool {name!r} of {server} declared an outputSchema but its result has no structuredContent"
            )
        else:
            message = f"the structured output of tool {name!r} of {server} does not match its outputSchema at {path}: {reason}"
        if strict:
            raise OutputValidationError(message, tool=name, path=path, reason=reason, result=result)
        self._log(message)

    # ------------------------------------------------------------ listings

    async def _page(self, method: str, cursor: str | None, options: dict[str, Any]) -> Any:
        params: dict[str, JSON] = {} if cursor is None else {"cursor": cursor}
        model = _LISTS[method][0]
        cacheable = self._cache is not None and not any(options.values())
        key = "" if cursor is None else "\0" + cursor
        if cacheable:
            assert self._cache is not None
            hit = self._cache.get(method, key, trio.current_time())
            if hit is not None:
                await trio.lowlevel.checkpoint()
                if isinstance(hit, ListToolsResult):
                    self._outputs.saw_page(hit, hit.tools, first=cursor is None)
                return hit
        page: Any = await self._typed(method, params, model, options)
        if method == "tools/list" and self.era == "modern":
            page = self._screen_tools(page)
        if cacheable and self.era == "modern":
            assert self._cache is not None
            self._cache.put(method, key, page, page.ttl_ms, trio.current_time())
        if method == "tools/list":
            self._outputs.saw_page(page, page.tools, first=cursor is None)
            if self.era == "legacy":
                self._tasks.saw_tools(page.tools)
        return page

    def _screen_tools(self, page: ListToolsResult) -> ListToolsResult:
        """Leave out the tools whose ``x-mcp-header`` annotations are invalid (SEP-2243), saying why."""
        kept, params, dropped = screen_tools(page.tools, lambda tool: (tool.name, tool.input_schema))
        for tool in page.tools:
            self._param_headers.pop(tool.name, None)
        self._param_headers.update(params)
        for tool, error in dropped:
            self._log(
                f"tool {tool.name!r} of {self.session.name} is left out of the listing, as it cannot be"
                f" called: its x-mcp-header breaks the rule {error.rule!r} ({error})"
            )
        return attrs.evolve(page, tools=kept) if dropped else page

    async def _tools_call(
        self, body: dict[str, JSON], *, on_notification: NotificationCallback | None = None
    ) -> dict[str, JSON]:
        """Send one 2026-07-28 ``tools/call`` (``body`` has its ``_meta``) with its ``Mcp-Param-*`` headers.

        A server that refuses it with ``-32020`` (header mismatch: the tool
        was never listed, or its schema changed since) gets ``tools/list``
        again once, and the call once more (a new request, with the headers
        of the new listing); a second refusal is the caller's `RpcError`.
        """
        session = self.session
        try:
            return await session.request(
                "tools/call", body, on_notification=on_notification, headers=self._tool_headers(body)
            )
        except RpcError as exc:
            if exc.code != HEADER_MISMATCH:
                raise
            self._header_mismatch_retries += 1
            self._log(
                f"{session.name} refused tools/call of {body.get('name')!r} for its headers ({exc.message});"
                " listing the tools again and sending it once more"
            )
        if self._cache is not None:
            self._cache.invalidate({"method": "notifications/tools/list_changed"})
        await self.list_tools()
        return await session.request(
            "tools/call", body, on_notification=on_notification, headers=self._tool_headers(body)
        )

    def _tool_headers(self, params: Mapping[str, JSON]) -> tuple[tuple[str, str], ...]:
        """The ``Mcp-Param-*`` headers of a 2026-07-28 ``tools/call`` (x-mcp-header), from the tool's
        latest listing; none for a tool never listed."""
        name = params.get("name")
        found = self._param_headers.get(name) if isinstance(name, str) else None
        return tuple(param_headers(found, params.get("arguments"))) if found else ()

    def _pages(self, method: str) -> Pages[Any]:
        async def fetch(cursor: str | None) -> Any:
            return await self._page(method, cursor, {})

        return Pages(fetch, method, _LISTS[method][1])

    async def list_tools_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListToolsResult:
        """Fetch one page of the server's tools (``tools/list``); pass its ``next_cursor`` for the next."""
        page: ListToolsResult = await self._page("tools/list", cursor, {"on_notification": on_notification})
        return page

    def iter_tools(self) -> Pages[Tool]:
        """Yield every tool, fetching pages as they are needed: ``async for item in client.iter_tools():``."""
        return self._pages("tools/list")

    async def list_tools(self) -> list[Tool]:
        """Return every tool the server has, following ``nextCursor`` to the end."""
        return await self._pages("tools/list").collect()

    async def list_prompts_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListPromptsResult:
        """Fetch one page of the server's prompts (``prompts/list``)."""
        page: ListPromptsResult = await self._page(
            "prompts/list", cursor, {"on_notification": on_notification}
        )
        return page

    def iter_prompts(self) -> Pages[Prompt]:
        """Yield every prompt, fetching pages as they are needed: ``async for item in client.iter_prompts():``."""
        return self._pages("prompts/list")

    async def list_prompts(self) -> list[Prompt]:
        """Return every prompt, following ``nextCursor`` to the end."""
        return await self._pages("prompts/list").collect()

    async def list_resources_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListResourcesResult:
        """Fetch one page of the server's resources (``resources/list``)."""
        page: ListResourcesResult = await self._page(
            "resources/list", cursor, {"on_notification": on_notification}
        )
        return page

    def iter_resources(self) -> Pages[Resource]:
        """Yield every resource, fetching pages as they are needed: ``async for item in client.iter_resources():``."""
        return self._pages("resources/list")

    async def list_resources(self) -> list[Resource]:
        """Return every resource, following ``nextCursor`` to the end."""
        return await self._pages("resources/list").collect()

    async def list_resource_templates_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListResourceTemplatesResult:
        """Fetch one page of the server's resource templates (``resources/templates/list``)."""
        page: ListResourceTemplatesResult = await self._page(
            "resources/templates/list", cursor, {"on_notification": on_notification}
        )
        return page

    def iter_resource_templates(self) -> Pages[ResourceTemplate]:
        """Yield every resource template, fetching pages as they are needed: ``async for item in client.iter_resource_templates():``."""
        return self._pages("resources/templates/list")

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Return every resource template, following ``nextCursor`` to the end."""
        return await self._pages("resources/templates/list").collect()

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
        result, _ = await self._with_input(
            "prompts/get",
            params,
            GetPromptResult,
            manual=manual,
            input_responses=input_responses,
            request_state=request_state,
            options={"on_progress": on_progress, "on_notification": on_notification, "meta": meta},
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
        options = {"on_progress": on_progress, "on_notification": on_notification, "meta": meta}
        plain = not manual and input_responses is None and request_state is None and not any(options.values())
        if plain and self._cache is not None:
            hit = self._cache.get("resources/read", uri, trio.current_time())
            if isinstance(hit, ReadResourceResult):
                await trio.lowlevel.checkpoint()
                return hit
        result, rounds = await self._with_input(
            "resources/read",
            {"uri": uri},
            ReadResourceResult,
            manual=manual,
            input_responses=input_responses,
            request_state=request_state,
            options=options,
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
        result = await self._typed("completion/complete", params, CompleteResult, {})
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
        await self._require("modern", "server/discover")
        if self._cache is not None:
            hit = self._cache.get("server/discover", "", trio.current_time())
            if isinstance(hit, DiscoverResult):
                return hit
        found = await self._typed("server/discover", None, DiscoverResult, {})
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
        wanted: dict[str, JSON] = {}
        if tools:
            wanted["toolsListChanged"] = True
        if prompts:
            wanted["promptsListChanged"] = True
        if resources:
            wanted["resourcesListChanged"] = True
        if resource_uris:
            if isinstance(resource_uris, str):
                raise TypeError("resource_uris must be a sequence of URIs, not a single string")
            wanted["resourceSubscriptions"] = list(resource_uris)
        self.session.check_usable()
        invalidate = self._invalidate
        if self.era == "legacy":
            async with open_legacy_subscription(
                self.session, wanted, buffer, self.subscribe_resource, self._unsubscribe_quietly
            ) as sub:
                yield sub
            return

        async def send(params: dict[str, JSON], callback: NotificationCallback) -> dict[str, JSON]:
            assert self.protocol_version is not None
            body = {
                **params,
                "_meta": modern_meta(
                    self.protocol_version, self._plain_caps("subscriptions/listen"), self.client_info
                ),
            }

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
        await self._require("legacy", "ping")
        await self.session.request("ping")

    async def set_logging_level(self, level: str) -> None:
        """Ask the server for log messages at ``level`` and above (``logging/setLevel``).

        Log messages then reach the ``on_notification`` sink. In the
        2026-07-28 era set `log_level` instead (logs are per request there).

        Raises:
            NotSupported: The server speaks the 2026-07-28 era.
        """
        await self._require("legacy", "logging/setLevel")
        await self.session.request("logging/setLevel", {"level": level})

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (initialize era).

        Raises:
            NotSupported: The server speaks the 2026-07-28 era (use `listen`).
        """
        await self._require("legacy", "resources/subscribe")
        await self.session.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop `subscribe_resource` notifications about ``uri``.

        Raises:
            NotSupported: The server speaks the 2026-07-28 era.
        """
        await self._require("legacy", "resources/unsubscribe")
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
        self._outputs.forget()


# ------------------------------------------------------- for the openers


def make_client(session: Session, options: ClientOptions) -> Client:
    """A client over ``session``, attached to it (its hooks answer the server's requests).

    Raises:
        RuntimeError: The session has a client already.
    """
    client = Client.__new__(Client)
    client._setup(session, options)
    client._attachment = attach(
        session, on_request=client._input.serve_request, on_notification=client._notes.connection_note
    )
    return client


async def handshake(client: Client, *, restarted: bool = False) -> None:
    """Negotiate the era with the server, then finish the handshake.

    Raises:
        ServerDiedOnProbe: The server died on the ``server/discover`` probe
            (only an opener whose target allows it starts it again).
        VersionMismatch: No protocol version in common.
        RequestTimeout: The handshake ran out of ``handshake_timeout``.
    """
    await client._connect(restarted)


def release(client: Client) -> None:
    """Give the session back: the hooks and ``on_notification`` stop answering; idempotent."""
    attachment = client._attachment
    if attachment is not None:
        attachment.detach()


def start_beside(client: Client, fn: Callable[..., Awaitable[object]], *args: object, name: str) -> None:
    """Run ``fn(*args)`` beside the connection's own tasks; it ends with the connection.

    For the server group's helpers (listen streams, refreshes). The task is
    not shielded, and must end by itself once the connection fails.

    Raises:
        ServerGone, TransportClosed: The connection can carry nothing more.
    """
    start_soon(client.session, fn, *args, name=name)
