"""The MCP client: era negotiation, typed methods, multi round-trip input.

`Client` sits on a `StdioTransport` and speaks MCP over it. Both protocol
eras share one API: the 2026-07-28 revision (stateless, every request carries
its ``_meta`` envelope, input is requested through ``input_required``
results) and the initialize-era revisions (2025-11-25 and older: one
``initialize`` handshake, input is requested by server-to-client requests).
The rules it follows are in `trio_mcp._session`; this module is the Trio
edge that sends, waits and calls hooks.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, Self, TypeAlias, TypeVar, overload

import trio

from ._core.cache import TtlCache
from ._core.eras import (
    CLIENT_CAPABILITIES,
    INPUT_HOOKS,
    LEGACY_VERSIONS,
    MISSING_CLIENT_CAPABILITY,
    MODERN_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
    Hooks,
    capabilities as declare,
    input_problem,
    modern_meta,
    result_type,
    retry_params,
)
from ._core.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, SUBSCRIPTION_ID
from ._core.negotiation import Modern, check_initialize, judge_probe
from ._errors import (
    InputRequestFailed,
    MCPError,
    NotSupported,
    ProtocolError,
    RpcError,
    ServerGone,
    VersionMismatch,
)
from ._models import (
    CallToolResult,
    CompleteResult,
    Completion,
    CreateMessageParams,
    CreateMessageResult,
    DiscoverResult,
    ElicitFormParams,
    ElicitRequestParams,
    ElicitResult,
    ElicitUrlParams,
    GetPromptResult,
    Implementation,
    InitializeResult,
    InputRequest,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ListToolsResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Root,
    ServerCapabilities,
    Tool,
    structure,
    to_wire,
    unstructure,
)
from ._transport import DEFAULT, NotificationStream, RequestTimeout, StdioTransport, _Default
from ._version import __version__

if TYPE_CHECKING:
    import os

    from ._transport import NotificationCallback

__all__ = ["Client", "Pages", "Subscription", "open_client", "open_stdio_client"]

JSON: TypeAlias = Any
T = TypeVar("T")
M = TypeVar("M")

ElicitationHook: TypeAlias = Callable[
    [ElicitFormParams | ElicitUrlParams], Awaitable[ElicitResult | Mapping[str, JSON]]
]
SamplingHook: TypeAlias = Callable[[CreateMessageParams], Awaitable[CreateMessageResult | Mapping[str, JSON]]]
RootsHook: TypeAlias = Callable[[], Awaitable[Sequence[Root | Mapping[str, JSON]] | Mapping[str, JSON]]]
ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], object]
Protocol: TypeAlias = str

#: The most pages a ``list_*`` call follows before it gives up.
MAX_PAGES: Final = 10_000

_logger = logging.getLogger("trio_mcp.client")
_server_logger = logging.getLogger("trio_mcp.server")

_LIST_MODELS: Final = {
    "tools/list": ("tools", ListToolsResult),
    "prompts/list": ("prompts", ListPromptsResult),
    "resources/list": ("resources", ListResourcesResult),
    "resources/templates/list": ("resourceTemplates", ListResourceTemplatesResult),
}


async def _maybe_await(value: object) -> None:
    if inspect.isawaitable(value):
        await value


async def _result_of(value: Any) -> Any:
    """A hook's result, whether the hook is async or a plain function."""
    if inspect.isawaitable(value):
        return await value
    return value


class _ProbeKilledServer(Exception):
    """The server died on the ``server/discover`` probe (it may be legacy)."""

    def __init__(self, gone: ServerGone) -> None:
        super().__init__(str(gone))
        self.gone = gone


class Subscription(NotificationStream):
    """The notifications of one ``subscriptions/listen`` stream (2026-07-28).

    Made by `Client.listen`. Iterate over it with ``async for`` to get each
    notification (a dict, as the server sent it). Iteration ends when the
    server ends the stream, and raises the connection's error (for example
    `ServerGone`) when the connection is lost.

    Attributes:
        acknowledged: The filter the server agreed to honour (the
            ``notifications`` of its ``notifications/subscriptions/acknowledged``),
            which may be narrower than the one asked for.
        dropped: How many notifications were dropped because the consumer
            fell more than ``buffer`` notifications behind.
    """

    def __init__(self, buffer: int) -> None:
        super().__init__(buffer)
        self.acknowledged: dict[str, JSON] = {}
        self._acknowledged_by_server = False
        self._acked = trio.Event()
        self._finished = trio.Event()
        self._scope = trio.CancelScope()

    def _end(self, error: MCPError | None) -> None:
        super()._end(error)
        self._acked.set()


class Pages(Generic[T]):
    """An async iterator over every item of a paginated list.

    Returned by `Client.iter_tools` and its siblings. It fetches a page when
    the previous one is used up, following ``nextCursor`` until the server
    sends none. Breaking out of the loop early is fine: nothing is left open.

    Raises:
        ProtocolError: The server sent the same cursor twice (a pagination
            loop), or more than 10,000 pages.
    """

    def __init__(self, client: Client, method: str, attribute: str) -> None:
        self._client = client
        self._method = method
        self._attribute = attribute
        self._items: list[T] = []
        self._index = 0
        self._cursor: str | None = None
        self._seen: set[str] = set()
        self._pages = 0
        self._done = False
        self._error: ProtocolError | None = None

    def __aiter__(self) -> Self:
        return self

    async def aclose(self) -> None:
        """Stop early (optional: nothing is held open between pages)."""
        await trio.lowlevel.checkpoint()
        self._done = True
        self._items = []

    async def __anext__(self) -> T:
        while self._index >= len(self._items):
            if self._done:
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            if self._pages >= MAX_PAGES:
                raise ProtocolError(f"{self._method}: more than {MAX_PAGES} pages")
            page = await self._client._page(self._method, self._cursor, {})
            self._pages += 1
            self._items = getattr(page, self._attribute)
            self._index = 0
            cursor = page.next_cursor
            if cursor is None:
                self._done = True
            elif cursor in self._seen:
                # This page's items still count; the loop ends the listing.
                self._done = True
                self._error = ProtocolError(
                    f"{self._method}: the server sent the cursor {cursor!r} twice (a pagination loop)"
                )
            else:
                self._seen.add(cursor)
                self._cursor = cursor
        item = self._items[self._index]
        self._index += 1
        return item


class Client:
    """A connection to one MCP server, in whichever era it speaks.

    Get one from `open_stdio_client` (which also starts the server) or
    `open_client` (over a transport you opened). Every method may raise the
    transport's errors: `ServerGone`, `TransportClosed`, `RequestTimeout`,
    `ProtocolError`; and `RpcError` when the server answers with an error.

    Attributes:
        transport: The `StdioTransport` underneath.
        era: ``"modern"`` (2026-07-28) or ``"legacy"`` (initialize era).
        protocol_version: The negotiated revision, for example
            ``"2026-07-28"`` or ``"2025-11-25"``.
        server_info: The server's self-description (unverified), or `None`
            when it gave none.
        server_capabilities: What the server says it supports.
        instructions: The server's instructions for the model, or `None`.
    """

    def __init__(
        self,
        transport: StdioTransport,
        *,
        protocol: str = "auto",
        probe_timeout: float = 10.0,
        client_info: tuple[str, str] | Implementation = ("trio-mcp", __version__),
        on_elicitation: ElicitationHook | None = None,
        on_sampling: SamplingHook | None = None,
        on_roots: RootsHook | None = None,
        on_notification: NotificationCallback | None = None,
        log_level: str | None = None,
        max_rounds: int = 10,
        input_timeout: float | None = 600.0,
        cache: bool = True,
        capabilities: Mapping[str, JSON] | None = None,
    ) -> None:
        if protocol not in ("auto", *MODERN_VERSIONS, *LEGACY_VERSIONS):
            raise ValueError(
                f"protocol must be 'auto' or one of {list(MODERN_VERSIONS + LEGACY_VERSIONS)}, not {protocol!r}"
            )
        if not probe_timeout > 0:
            raise ValueError("probe_timeout must be > 0")
        if max_rounds < 1:
            raise ValueError("max_rounds must be >= 1")
        if input_timeout is not None and not input_timeout > 0:
            raise ValueError("input_timeout must be > 0 or None")
        self.transport = transport
        self.era: Literal["modern", "legacy"] | None = None
        self.protocol_version: str | None = None
        self.server_info: Implementation | None = None
        self.server_capabilities = ServerCapabilities()
        self.instructions: str | None = None
        self.discover_result: DiscoverResult | None = None
        """The probe's ``DiscoverResult`` (2026-07-28 era), else `None`."""

        self._protocol = protocol
        self._probe_timeout = probe_timeout
        if isinstance(client_info, Implementation):
            self._client_info: dict[str, JSON] = unstructure(client_info)
        else:
            name, version = client_info
            self._client_info = {"name": name, "version": version}
        self._on_elicitation = on_elicitation
        self._on_sampling = on_sampling
        self._on_roots = on_roots
        self._hooks = Hooks(
            elicitation=on_elicitation is not None,
            sampling=on_sampling is not None,
            roots=on_roots is not None,
        )
        self._on_notification = on_notification
        self.log_level = log_level
        """The ``logLevel`` every 2026-07-28 request asks for, or `None` for no logs."""
        self.max_rounds = max_rounds
        """The most requests one multi round-trip operation may take."""
        self.input_timeout = input_timeout
        """The budget, in seconds, of one whole multi round-trip operation."""
        self._cache = TtlCache() if cache else None
        self._tokens = itertools.count(1)
        self._input_caps: dict[str, JSON] = {}
        self._envelope: dict[str, JSON] | None = None
        self._envelope_level: str | None = None
        if capabilities is not None and not isinstance(capabilities, Mapping):
            raise TypeError("capabilities must be a mapping (a ClientCapabilities object)")
        self._extra_caps = dict(capabilities) if capabilities else {}

    # ---------------------------------------------------------- negotiation

    async def _connect(self, *, skip_probe: bool = False) -> None:
        self.transport._attach(self._serve_request, self._sink)
        protocol = self._protocol
        if protocol in LEGACY_VERSIONS:
            await self._initialize(protocol)
            return
        if skip_probe:
            await self._initialize(LEGACY_VERSIONS[0])
            return
        version = MODERN_VERSIONS[0] if protocol == "auto" else protocol
        for _ in range(2):
            result: dict[str, JSON] | None = None
            error: RpcError | None = None
            try:
                result = await self.transport.request(
                    "server/discover",
                    {"_meta": modern_meta(version, {}, self._client_info)},
                    timeout=self._probe_timeout if protocol == "auto" else DEFAULT,
                )
            except RpcError as exc:
                error = exc
            except RequestTimeout:
                if protocol != "auto":
                    raise
            except ServerGone as exc:
                if protocol == "auto":
                    raise _ProbeKilledServer(exc) from exc
                raise
            verdict = judge_probe(result, error, requested=version)
            if isinstance(verdict, Modern):
                if verdict.retry:
                    version = verdict.version
                    continue
                self._become_modern(verdict.version, verdict.discover)
                return
            if protocol != "auto":
                raise VersionMismatch(
                    f"the server does not speak protocol version {protocol}: {verdict.why}",
                    offered=(protocol,),
                )
            await self._initialize(verdict.version)
            return
        raise VersionMismatch(
            f"the server refused protocol version {version} twice", offered=MODERN_VERSIONS, answered=()
        )

    def _become_modern(self, version: str, discover: dict[str, JSON] | None) -> None:
        self.era = "modern"
        self.protocol_version = version
        self.transport._conn.serves_requests = False
        self._input_caps = self._declared(version)
        if discover is not None:
            found = structure(discover, DiscoverResult)
            self.discover_result = found
            self.server_capabilities = found.capabilities
            self.server_info = found.server_info
            self.instructions = found.instructions
            if self._cache is not None:
                self._cache.put("server/discover", "", found, found.ttl_ms, trio.current_time())

    async def _initialize(self, offer: str) -> None:
        params = {
            "protocolVersion": offer,
            "capabilities": self._declared(offer),
            "clientInfo": self._client_info,
        }
        try:
            result = await self.transport.request("initialize", params, cancel_on_abandon=False)
        except RpcError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            supported = data.get("supported")
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION and self._protocol == "auto":
                # A modern server taken for legacy (it was slow to answer the
                # probe): it says so now.
                listed = supported if isinstance(supported, list) else []
                for version in MODERN_VERSIONS:
                    if version in listed:
                        discover = await self.transport.request(
                            "server/discover", {"_meta": modern_meta(version, {}, self._client_info)}
                        )
                        self._become_modern(version, discover)
                        return
            if isinstance(supported, list):
                raise VersionMismatch(
                    f"the server refused initialize at {offer} ({exc.message}); it supports {supported}",
                    offered=(offer,),
                    answered=tuple(v for v in supported if isinstance(v, str)),
                ) from exc
            raise
        version = check_initialize(result, offer)
        found = structure(result, InitializeResult)
        self.era = "legacy"
        self.protocol_version = version
        self.server_info = found.server_info
        self.server_capabilities = found.capabilities
        self.instructions = found.instructions
        await self.transport.notify("notifications/initialized")
        if self.log_level is not None and self.server_capabilities.logging is not None:
            # The initialize era sets the level once, for the whole session.
            await self.transport.request("logging/setLevel", {"level": self.log_level})

    # ------------------------------------------------------ notifications

    async def _sink(self, note: dict[str, JSON]) -> None:
        if self._cache is not None:
            self._cache.invalidate(note)
        if self._on_notification is not None:
            await _maybe_await(self._on_notification(note))
        elif note.get("method") == "notifications/message":
            _server_logger.debug("server log: %s", note.get("params"))

    def _callback(
        self,
        token: int | None,
        on_progress: ProgressCallback | None,
        on_notification: NotificationCallback | None,
    ) -> NotificationCallback | None:
        if on_progress is None and on_notification is None:
            return None

        async def deliver(note: dict[str, JSON]) -> None:
            if self._cache is not None:
                self._cache.invalidate(note)
            params = note.get("params")
            if (
                on_progress is not None
                and note.get("method") == "notifications/progress"
                and isinstance(params, dict)
                and params.get("progressToken") == token
            ):
                progress = params.get("progress")
                total = params.get("total")
                message = params.get("message")
                await _maybe_await(
                    on_progress(
                        progress if isinstance(progress, int | float) else 0.0,
                        total if isinstance(total, int | float) else None,
                        message if isinstance(message, str) else None,
                    )
                )
            elif on_notification is not None:
                await _maybe_await(on_notification(note))
            elif self._on_notification is not None:
                await _maybe_await(self._on_notification(note))

        return deliver

    # ------------------------------------------------------------ sending

    def _input_envelope(self) -> dict[str, JSON]:
        """The ``_meta`` of a plain request that may ask for input (shared; never mutated)."""
        if self._envelope is None or self._envelope_level != self.log_level:
            assert self.protocol_version is not None
            self._envelope_level = self.log_level
            self._envelope = modern_meta(
                self.protocol_version, self._input_caps, self._client_info, log_level=self.log_level
            )
        return self._envelope

    def _declared(self, version: str) -> dict[str, JSON]:
        """What to declare at ``version``: the hooks' capabilities, then the ``capabilities`` option."""
        return {**declare(self._hooks, version), **self._extra_caps}

    def _require(self, era: Literal["modern", "legacy"], method: str) -> None:
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
        timeout: float | _Default | None = DEFAULT,  # noqa: ASYNC109 - see StdioTransport.request
    ) -> dict[str, JSON]:
        """Send any request and return its raw result.

        In the 2026-07-28 era the ``_meta`` envelope is added (with the
        hooks' capabilities when ``for_input`` is true); ``resultType`` is not
        interpreted. Use it for methods this class has no wrapper for.

        Args:
            method: The JSON-RPC method.
            params: The params object, without ``_meta`` (give ``meta``).
            on_progress: ``(progress, total, message)`` for this request's
                ``notifications/progress``; sync or async.
            on_notification: Called with the other notifications routed to
                this request (logs, in the 2026-07-28 era); otherwise they go
                to the client's ``on_notification``.
            meta: Extra ``_meta`` keys.
            for_input: Declare the hooks' capabilities (2026-07-28 era).
            timeout: This request's budget; defaults to the transport's.
        """
        if self.era is None:
            raise RuntimeError("use the client inside 'async with open_stdio_client(...)'")
        body: dict[str, JSON] = dict(params) if params else {}
        token = next(self._tokens) if on_progress is not None else None
        callback = self._callback(token, on_progress, on_notification)
        if self.era == "legacy":
            extra: dict[str, JSON] = dict(meta) if meta else {}
            if token is not None:
                extra["progressToken"] = token
            if extra:
                body["_meta"] = {**body.get("_meta", {}), **extra}
            return await self.transport.request(
                method,
                body if body or params is not None else None,
                on_notification=callback,
                timeout=timeout,
            )
        assert self.protocol_version is not None
        caps = self._input_caps if for_input else {}
        envelope = modern_meta(
            self.protocol_version,
            caps,
            self._client_info,
            log_level=self.log_level,
            progress_token=token,
            extra=meta,
        )
        body["_meta"] = envelope
        retried = False
        while True:
            try:
                return await self.transport.request(method, body, on_notification=callback, timeout=timeout)
            except RpcError as exc:
                if (
                    exc.code == MISSING_CLIENT_CAPABILITY
                    and not retried
                    and self._can_declare(exc.data, caps)
                ):
                    # Declare what we do support and try once more.
                    retried = True
                    envelope[CLIENT_CAPABILITIES] = self._declared(self.protocol_version)
                    continue
                raise

    def _can_declare(self, data: object, declared: dict[str, JSON]) -> bool:
        if not isinstance(data, dict) or not isinstance(data.get("requiredCapabilities"), dict):
            return False
        ours = self._declared(self.protocol_version or MODERN_VERSIONS[0])
        wanted = data["requiredCapabilities"]
        return (
            bool(wanted) and all(key in ours for key in wanted) and any(key not in declared for key in wanted)
        )

    async def _typed(
        self,
        method: str,
        params: dict[str, JSON] | None,
        model: type[M],
        options: dict[str, Any],
    ) -> M:
        result = await self.request(method, params, **options)
        if self.era == "modern":
            result_type(method, result)
        return structure(result, model)

    # ----------------------------------------------- multi round-trip input

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
            if input_responses is not None or request_state is not None:
                raise NotSupported(
                    "input_responses and request_state belong to the 2026-07-28 era",
                    method=method,
                    era="legacy",
                )
            return await self._typed(method, params, model, options), 0
        budget = self.input_timeout
        start = trio.current_time() if started is None else started
        deadline = start + budget if budget is not None else math.inf
        if first_result is None:
            round_params = (
                retry_params(params, dict(input_responses) if input_responses else None, request_state)
                if input_responses is not None or request_state is not None
                else params
            )
            result = await self.request(method, round_params, for_input=True, **options)
        else:
            result = first_result
        rounds = 1
        if result_type(method, result) == "complete":
            return structure(result, model), rounds
        # Input is needed: from here on the whole operation, hooks included,
        # runs against input_timeout (no cancel scope is paid for when the
        # first answer is complete, by far the common case).
        with trio.move_on_at(deadline) as scope:
            while True:
                asked = structure(result, InputRequiredResult)
                if manual:
                    return asked, rounds
                if not asked.input_requests and asked.request_state is None:
                    raise ProtocolError(
                        f"the server answered {method} with input_required but asked for nothing"
                        " (no inputRequests, no requestState)"
                    )
                if rounds >= self.max_rounds:
                    raise InputRequestFailed(
                        f"{method} still asked for input after {rounds} rounds (max_rounds={self.max_rounds})"
                    )
                answers: dict[str, JSON] | None = None
                if asked.input_requests:
                    answers = await self._answer_all(asked.input_requests)
                elif rounds > 1:
                    # Rounds that carry only state: back off a little.
                    await trio.sleep(min(0.01 * 2 ** (rounds - 2), 1.0))
                round_params = retry_params(params, answers, asked.request_state)
                result = await self.request(method, round_params, for_input=True, **options)
                rounds += 1
                if result_type(method, result) == "complete":
                    return structure(result, model), rounds
        assert scope.cancelled_caught
        raise RequestTimeout(
            f"{method} did not complete within input_timeout={self.input_timeout} s ({rounds} rounds)",
            method=method,
            timeout=self.input_timeout or 0.0,
        )

    async def _answer_all(self, requests: Mapping[str, InputRequest]) -> dict[str, JSON]:
        version = self.protocol_version or MODERN_VERSIONS[0]
        for key, asked in requests.items():
            problem = input_problem(asked.method, asked.params, self._hooks, version)
            if problem is not None:
                raise InputRequestFailed(problem, method=asked.method, key=key)
        answers: dict[str, JSON] = {}
        failure: tuple[str, str, BaseException] | None = None

        async def answer(key: str, asked: InputRequest, cancel_scope: trio.CancelScope) -> None:
            nonlocal failure
            try:
                answers[key] = await self._answer(asked.method, asked.params)
            except Exception as exc:
                if failure is None:
                    failure = (key, asked.method, exc)
                cancel_scope.cancel()

        if len(requests) == 1:
            ((key, asked),) = requests.items()
            await answer(key, asked, trio.CancelScope())
        else:
            async with trio.open_nursery() as nursery:
                for key, asked in requests.items():
                    nursery.start_soon(answer, key, asked, nursery.cancel_scope)
        if failure is not None:
            key, method, exc = failure
            if isinstance(exc, ProtocolError):
                message = f"input request {key!r} ({method}) is malformed: {exc}"
            else:
                message = f"the {INPUT_HOOKS[method]} hook failed on input request {key!r}: {exc!r}"
            raise InputRequestFailed(message, method=method, key=key) from exc
        return answers

    async def _answer(self, method: str, params: JSON) -> dict[str, JSON]:
        """Answer one input request through its hook; the one decision point of both eras."""
        if method == "elicitation/create":
            assert self._on_elicitation is not None
            typed: ElicitFormParams | ElicitUrlParams = structure(params or {}, ElicitRequestParams)
            return to_wire(await _result_of(self._on_elicitation(typed)), ElicitResult)
        if method == "sampling/createMessage":
            assert self._on_sampling is not None
            sampling = structure(params or {}, CreateMessageParams)
            return to_wire(await _result_of(self._on_sampling(sampling)), CreateMessageResult)
        assert method == "roots/list"
        assert self._on_roots is not None
        roots: object = await _result_of(self._on_roots())
        if isinstance(roots, Mapping):
            return to_wire(dict(roots), ListRootsResult)
        if not isinstance(roots, Sequence) or isinstance(roots, str | bytes):
            raise TypeError(f"on_roots must return a list of Root or a dict, not {type(roots).__name__}")
        return {"roots": [to_wire(root, Root) for root in roots]}

    async def _serve_request(self, method: str, params: JSON) -> dict[str, JSON]:
        """Answer a server-to-client request (initialize era; the core drops them in the other)."""
        version = self.protocol_version or LEGACY_VERSIONS[0]
        problem = input_problem(method, params, self._hooks, version)
        if problem is not None:
            # Invalid params for a request we could take in another shape
            # (an undeclared elicitation mode, sampling with tools);
            # otherwise the method is unknown to us.
            known = (
                method == "elicitation/create" and self._hooks.elicitation and version >= "2025-06-18"
            ) or (method == "sampling/createMessage" and self._hooks.sampling)
            code = INVALID_PARAMS if known else METHOD_NOT_FOUND
            raise RpcError(code, problem)
        try:
            return await self._answer(method, params)
        except ProtocolError as exc:
            raise RpcError(INVALID_PARAMS, f"invalid params: {exc}") from exc

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
        complete, at most ``max_rounds`` requests in all and within
        ``input_timeout``.

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
            on_notification: Called with the other notifications routed to
                this call (for example its log messages).
            meta: Extra ``_meta`` keys to send.

        Raises:
            RpcError: The server answered with an error (an unknown tool, for
                example).
            InputRequestFailed: An input request could not be answered.
        """
        params: dict[str, JSON] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments if type(arguments) is dict else dict(arguments)
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
            # The common case, flat: one request, no callbacks.
            if self.era == "legacy":
                return structure(await self.transport.request("tools/call", params), CallToolResult)
            if self.era == "modern":
                started = trio.current_time()
                # A -32021 needs no retry here: tools/call already declares
                # every capability the client has.
                first = await self.transport.request(
                    "tools/call", {**params, "_meta": self._input_envelope()}
                )
                kind = first.get("resultType")
                if kind is None or kind == "complete":
                    return structure(first, CallToolResult)
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
        return result

    # ------------------------------------------------------------ listings

    async def _page(self, method: str, cursor: str | None, options: dict[str, Any]) -> Any:
        params: dict[str, JSON] = {} if cursor is None else {"cursor": cursor}
        model = _LIST_MODELS[method][1]
        cacheable = self._cache is not None and not any(options.values())
        key = "" if cursor is None else "\0" + cursor
        if cacheable:
            assert self._cache is not None
            hit = self._cache.get(method, key, trio.current_time())
            if hit is not None:
                return hit
        page: Any = await self._typed(method, params, model, options)
        if cacheable and self.era == "modern":
            assert self._cache is not None
            self._cache.put(method, key, page, page.ttl_ms, trio.current_time())
        return page

    async def list_tools_page(
        self, cursor: str | None = None, *, on_notification: NotificationCallback | None = None
    ) -> ListToolsResult:
        """Fetch one page of the server's tools (``tools/list``); pass its ``next_cursor`` for the next."""
        page: ListToolsResult = await self._page("tools/list", cursor, {"on_notification": on_notification})
        return page

    def iter_tools(self) -> Pages[Tool]:
        """Yield every tool, fetching pages as they are needed: ``async for item in client.iter_tools():``."""
        return Pages(self, "tools/list", "tools")

    async def list_tools(self) -> list[Tool]:
        """Return every tool the server has, following ``nextCursor`` to the end."""
        return [tool async for tool in self.iter_tools()]

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
        return Pages(self, "prompts/list", "prompts")

    async def list_prompts(self) -> list[Prompt]:
        """Return every prompt, following ``nextCursor`` to the end."""
        return [prompt async for prompt in self.iter_prompts()]

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
        return Pages(self, "resources/list", "resources")

    async def list_resources(self) -> list[Resource]:
        """Return every resource, following ``nextCursor`` to the end."""
        return [resource async for resource in self.iter_resources()]

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
        return Pages(self, "resources/templates/list", "resource_templates")

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Return every resource template, following ``nextCursor`` to the end."""
        return [template async for template in self.iter_resource_templates()]

    # ------------------------------------------------- prompts, resources

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
        self._require("modern", "server/discover")
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
        """Subscribe to change notifications (``subscriptions/listen``, 2026-07-28 era).

        Use as ``async with client.listen(tools=True) as sub:`` then
        ``async for note in sub:``. Entering waits for the server's
        acknowledgement (within the request timeout); leaving ends the
        subscription (``notifications/cancelled`` is sent). Change
        notifications also invalidate the client's cache.

        Args:
            tools: Deliver ``notifications/tools/list_changed``.
            prompts: Deliver ``notifications/prompts/list_changed``.
            resources: Deliver ``notifications/resources/list_changed``.
            resource_uris: Deliver ``notifications/resources/updated`` for
                these URIs (and what is under them).
            buffer: How many notifications may wait for the consumer; more
                are dropped (counted in `Subscription.dropped`).

        Raises:
            NotSupported: The server speaks the initialize era (use
                `subscribe_resource` and the ``on_notification`` sink).
        """
        self._require("modern", "subscriptions/listen")
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
        sub = Subscription(buffer)
        nursery = self.transport._nursery
        if nursery is None or self.transport._failure is not None:
            self.transport._check_usable()
        assert nursery is not None
        nursery.start_soon(self._run_listen, wanted, sub, name="trio_mcp:listen")
        try:
            with trio.move_on_after(self.transport.request_timeout or math.inf):
                await sub._acked.wait()
            if not sub._acked.is_set():
                raise RequestTimeout(
                    "subscriptions/listen was not acknowledged in time",
                    method="subscriptions/listen",
                    timeout=self.transport.request_timeout or 0.0,
                )
            if sub._error is not None and not sub._acknowledged_by_server:
                raise sub._error
            yield sub
        finally:
            # However the block ends (the caller's cancellation included),
            # the listen request is withdrawn before we leave.
            sub._scope.cancel()
            with trio.CancelScope(shield=True):
                await sub._finished.wait()

    async def _run_listen(self, wanted: dict[str, JSON], sub: Subscription) -> None:
        async def deliver(note: dict[str, JSON]) -> None:
            # (Client.request's wrapper has already invalidated the cache.)
            method = note.get("method")
            params = note.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            if method == "notifications/cancelled":
                sub._end(None)
                return
            if not (isinstance(meta, dict) and SUBSCRIPTION_ID in meta):
                # Not ours (it only reached us for being alone in flight): to
                # the connection-wide callback, whose errors are only logged,
                # as they would be in the transport's sink.
                if self._on_notification is not None:
                    try:
                        await _maybe_await(self._on_notification(note))
                    except Exception as exc:
                        self.transport._log(f"the on_notification callback raised {exc!r} for {method!r}")
                return
            if method == "notifications/subscriptions/acknowledged":
                filt = params.get("notifications") if isinstance(params, dict) else None
                sub.acknowledged = filt if isinstance(filt, dict) else {}
                sub._acknowledged_by_server = True
                sub._acked.set()
                return
            sub._publish(note)

        try:
            with sub._scope:
                await self.request(
                    "subscriptions/listen", {"notifications": wanted}, on_notification=deliver, timeout=None
                )
        except MCPError as exc:
            sub._end(exc)
        finally:
            sub._end(None)
            sub._finished.set()

    # ------------------------------------------------------- legacy only

    async def ping(self) -> None:
        """Check that the server answers (``ping``, initialize era).

        Raises:
            NotSupported: The 2026-07-28 era dropped ``ping``; the process's
                liveness is the transport's business.
        """
        self._require("legacy", "ping")
        await self.transport.request("ping")

    async def set_logging_level(self, level: str) -> None:
        """Ask the server for log messages at ``level`` and above (``logging/setLevel``).

        Log messages then reach the ``on_notification`` sink. In the
        2026-07-28 era set `log_level` instead (logs are per request there).

        Raises:
            NotSupported: The server speaks the 2026-07-28 era.
        """
        self._require("legacy", "logging/setLevel")
        await self.transport.request("logging/setLevel", {"level": level})

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (initialize era).

        Raises:
            NotSupported: The server speaks the 2026-07-28 era (use `listen`).
        """
        self._require("legacy", "resources/subscribe")
        await self.transport.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop `subscribe_resource` notifications about ``uri``.

        Raises:
            NotSupported: The server speaks the 2026-07-28 era.
        """
        self._require("legacy", "resources/unsubscribe")
        await self.transport.request("resources/unsubscribe", {"uri": uri})

    def invalidate_cache(self) -> None:
        """Forget every cached result (the cache honours ``ttlMs``)."""
        if self._cache is not None:
            self._cache.clear()


@asynccontextmanager
async def open_client(
    transport: StdioTransport,
    *,
    protocol: str = "auto",
    probe_timeout: float = 10.0,
    client_info: tuple[str, str] | Implementation = ("trio-mcp", __version__),
    on_elicitation: ElicitationHook | None = None,
    on_sampling: SamplingHook | None = None,
    on_roots: RootsHook | None = None,
    on_notification: NotificationCallback | None = None,
    log_level: str | None = None,
    max_rounds: int = 10,
    input_timeout: float | None = 600.0,
    cache: bool = True,
    capabilities: Mapping[str, JSON] | None = None,
) -> AsyncIterator[Client]:
    """Speak MCP over a transport you opened; see `open_stdio_client` for the options.

    The client takes over the transport's server requests (``on_request``)
    and sees its unclaimed notifications first. Leaving the block leaves the
    transport open; it is yours to close. Should the server die on the
    ``server/discover`` probe, `ServerGone` is raised: only
    `open_stdio_client` can start it again.
    """
    client = Client(
        transport,
        protocol=protocol,
        probe_timeout=probe_timeout,
        client_info=client_info,
        on_elicitation=on_elicitation,
        on_sampling=on_sampling,
        on_roots=on_roots,
        on_notification=on_notification,
        log_level=log_level,
        max_rounds=max_rounds,
        input_timeout=input_timeout,
        cache=cache,
        capabilities=capabilities,
    )
    try:
        await client._connect()
    except _ProbeKilledServer as exc:
        raise exc.gone from None
    yield client


@asynccontextmanager
async def open_stdio_client(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    cwd: str | os.PathLike[str] | None = None,
    on_stderr: Callable[[str], object] | None = None,
    on_log: Callable[[str], object] | None = None,
    kill_grace: float = 2.0,
    request_timeout: float | None = 60.0,
    max_message_bytes: int = 64 * 1024 * 1024,
    protocol: str = "auto",
    probe_timeout: float = 10.0,
    client_info: tuple[str, str] | Implementation = ("trio-mcp", __version__),
    on_elicitation: ElicitationHook | None = None,
    on_sampling: SamplingHook | None = None,
    on_roots: RootsHook | None = None,
    on_notification: NotificationCallback | None = None,
    log_level: str | None = None,
    max_rounds: int = 10,
    input_timeout: float | None = 600.0,
    cache: bool = True,
    capabilities: Mapping[str, JSON] | None = None,
) -> AsyncIterator[Client]:
    """Start an MCP server and connect to it; the ``async with`` owns both.

    ::

        async with trio_mcp.open_stdio_client("my-mcp-server", ["--stdio"]) as client:
            result = await client.call_tool("echo", {"text": "hi"})
            print(result.text)

    Entering starts the server, then picks the protocol era: with
    ``protocol="auto"`` it sends the ``server/discover`` probe; an answer (or
    a ``-32022`` naming versions) means the 2026-07-28 era, any other error
    or silence for ``probe_timeout`` seconds means the initialize era, and
    ``initialize`` follows. A server that dies on the probe is started once
    more and sent ``initialize`` straight away. Leaving closes the server
    (stdin closed, ``kill_grace``, then signals), bounded.

    Args:
        command: The server executable (looked up on ``PATH``).
        args: Its arguments.
        env: Extra environment variables (added to this process's
            environment unless ``inherit_env`` is false).
        inherit_env: Start from this process's environment.
        cwd: The server's working directory.
        on_stderr: Called with each line the server writes to stderr.
        on_log: Called with the transport's diagnostics (dropped lines...).
        kill_grace: Seconds the server gets to exit once its stdin closes.
        request_timeout: Every request's budget in seconds (`None`: none).
        max_message_bytes: The longest line accepted from the server.
        protocol: ``"auto"`` (probe), ``"2026-07-28"``, or an initialize-era
            revision such as ``"2025-11-25"`` (offered in ``initialize``;
            the server may choose another initialize-era revision).
        probe_timeout: How long ``auto`` waits for the probe's answer.
        client_info: ``(name, version)`` or an `Implementation`, sent to the
            server.
        on_elicitation: ``async (params) -> ElicitResult | dict``: answers
            elicitation requests (form or URL mode). Giving it declares the
            ``elicitation`` capability.
        on_sampling: ``async (params) -> CreateMessageResult | dict``:
            answers sampling requests with your model's reply; declares
            ``sampling``.
        on_roots: ``async () -> list[Root] | dict``: your roots; declares
            ``roots``. (Each hook may also be a plain function.)
        on_notification: Called (sync or async) with every notification no
            request claims: initialize-era logs and list changes, mostly.
        log_level: The least severe log level wanted (``"debug"``,
            ``"info"``, ...). 2026-07-28 era: the ``logLevel`` every request
            asks for; initialize era: sent once with ``logging/setLevel``
            when the server has the ``logging`` capability. `None`: no logs
            are asked for.
        max_rounds: The most requests one multi round-trip operation may take.
        input_timeout: The budget of one whole multi round-trip operation,
            hooks included (`None`: none); exceeded, `RequestTimeout`.
        cache: Keep list, read and discover results while their ``ttlMs``
            says they are fresh; list-change notifications invalidate them.
        capabilities: ``ClientCapabilities`` to declare on top of those the
            hooks imply, for example ``{"elicitation": {"form": {}}}`` to
            answer input requests yourself in manual mode, or extensions.
            Declared in ``initialize``, and on the requests that may ask for
            input in the 2026-07-28 era.

    Raises:
        SpawnFailed: The server could not be started.
        ServerGone: It died while connecting.
        VersionMismatch: It speaks no protocol version this client speaks.
        RequestTimeout: ``initialize`` got no answer in ``request_timeout``.
    """
    options: dict[str, Any] = {
        "protocol": protocol,
        "probe_timeout": probe_timeout,
        "client_info": client_info,
        "on_elicitation": on_elicitation,
        "on_sampling": on_sampling,
        "on_roots": on_roots,
        "on_notification": on_notification,
        "log_level": log_level,
        "max_rounds": max_rounds,
        "input_timeout": input_timeout,
        "cache": cache,
        "capabilities": capabilities,
    }
    Client(StdioTransport(command), **options)  # check the options before starting anything
    for attempt in range(2):
        transport = StdioTransport(
            command,
            args,
            env=env,
            inherit_env=inherit_env,
            cwd=cwd,
            on_stderr=on_stderr,
            on_log=on_log,
            kill_grace=kill_grace,
            request_timeout=request_timeout,
            max_message_bytes=max_message_bytes,
        )
        async with transport:
            client = Client(transport, **options)
            try:
                await client._connect(skip_probe=attempt == 1)
            except _ProbeKilledServer as exc:
                if attempt == 0:
                    transport._log(
                        f"the server died on the server/discover probe ({exc.gone}); starting it again"
                    )
                    continue
                raise exc.gone from None
            yield client
            return
    raise AssertionError("unreachable")  # pragma: no cover
