"""The handshake, and the era it settles: how every request of the client is sent.

`negotiate` runs the pure `Negotiator` against a live session: it sends what
the negotiator asks for, bounds each step with the client's own clocks (the
probe timeout for the ``auto`` probe, the handshake timeout otherwise:
steps the library runs itself), and reports what happened, until the era is
settled. A server that died on the probe comes back as `Restart`, for the
opener that can start it again.

`Requests` applies what the handshake settled, and is the one path every
request of the client takes: it adds the era's ``_meta`` envelope
(2026-07-28: protocol version, client capabilities and info, log level,
progress token), sends ``tools/call`` with the ``Mcp-Param-*`` headers of
the tool's listing, and retries once a request refused for a client
capability (``-32021``) that the client has but did not declare, or a
``tools/call`` refused for its headers (``-32020``) after listing the tools
again.
"""

from __future__ import annotations

import itertools
import math
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

import attrs
import trio

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
from .._core.extensions import merge_declarations
from .._core.negotiation import (
    Fail,
    Negotiated,
    Negotiator,
    Restart,
    SendInitialize,
    SendProbe,
)
from .._core.tasks import declare_extension, needs_extension
from .._errors import NotSupported, ProtocolError, RpcError, ServerGone
from .._models import DiscoverResult, InitializeResult, structure
from .._session import RequestTimeout, stop_serving_requests, stray_lines_hint
from .._telemetry import negotiated as telemetry_negotiated
from .input import InputHandler

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from .._core.eras import Hooks
    from .._core.extensions import ExtensionSet
    from .._models import InputRequiredResult
    from .._options import NotificationCallback
    from .._session import Session
    from .notes import ProgressCallback

__all__ = ["Outcome", "Requests", "ServerDiedOnProbe", "negotiate"]

JSON: TypeAlias = Any
M = TypeVar("M")


class ServerDiedOnProbe(Exception):
    """The server died on the ``server/discover`` probe: it may be an
    initialize-era server that cannot cope with an unknown method. Start it
    again and negotiate with ``restarted=True``.

    Attributes:
        gone: How it died.
    """

    def __init__(self, gone: ServerGone) -> None:
        super().__init__(str(gone))
        self.gone = gone


@attrs.frozen
class Outcome:
    """The settled era, with the server's self-description, typed."""

    negotiated: Negotiated
    discover: DiscoverResult | None
    initialize: InitializeResult | None


async def negotiate(
    session: Session,
    *,
    protocol: str,
    client_info: dict[str, JSON],
    declare: Callable[[str], dict[str, JSON]],
    probe_timeout: float,
    handshake_timeout: float | None,
    restarted: bool = False,
) -> Outcome:
    """Settle the protocol era with the server on ``session``.

    Args:
        session: The connection.
        protocol: The client's ``protocol`` option.
        client_info: The ``Implementation`` to send, as a dict.
        declare: The ``ClientCapabilities`` to declare at a version.
        probe_timeout: How long an ``auto`` probe waits for an answer.
        handshake_timeout: The budget of ``initialize`` and of a pinned
            probe (`None`: none).
        restarted: The server was started again after it died on the probe.

    Raises:
        ServerDiedOnProbe: The server died on the probe; start it again and
            call again with ``restarted=True``.
        VersionMismatch: No protocol version in common.
        RequestTimeout: The handshake ran out of time.
        ServerGone: The server died.
        RpcError, ProtocolError: ``initialize`` failed.
    """
    negotiator = Negotiator(protocol, restarted=restarted)
    step = negotiator.start()
    discover: DiscoverResult | None = None
    # One budget for the whole handshake, the probe included.
    deadline = math.inf if handshake_timeout is None else trio.current_time() + handshake_timeout
    while True:
        if isinstance(step, SendProbe):
            probe_deadline = min(trio.current_time() + probe_timeout, deadline) if step.timed else deadline
            probe: dict[str, JSON] = {"_meta": modern_meta(step.version, {}, client_info)}
            try:
                with trio.move_on_at(probe_deadline) as scope:
                    result = await session.request("server/discover", probe)
            except (RpcError, ProtocolError) as exc:
                step = negotiator.probe_failed(exc)
                continue
            except ServerGone as exc:
                step = negotiator.probe_killed_server(exc)
                if isinstance(step, Restart):
                    raise ServerDiedOnProbe(exc) from exc
                continue
            if scope.cancelled_caught:
                if step.timed and probe_deadline < deadline:
                    step = negotiator.probe_timed_out()
                    continue
                raise _timed_out(session, "server/discover", handshake_timeout)
            try:
                discover = structure(result, DiscoverResult)
            except ProtocolError as exc:
                step = negotiator.probe_failed(exc)
                continue
            step = negotiator.probe_answered(result)
        elif isinstance(step, SendInitialize):
            params: dict[str, JSON] = {
                "protocolVersion": step.version,
                "capabilities": declare(step.version),
                "clientInfo": client_info,
            }
            try:
                with trio.move_on_at(deadline) as scope:
                    # MCP forbids cancelling initialize: a timeout withdraws
                    # it without telling the server.
                    result = await session.request("initialize", params, cancel_on_abandon=False)
            except (RpcError, ProtocolError) as exc:
                step = negotiator.initialize_failed(exc)
                continue
            if scope.cancelled_caught:
                raise _timed_out(session, "initialize", handshake_timeout)
            step = negotiator.initialize_answered(result)
            if isinstance(step, Negotiated):
                return Outcome(step, None, structure(result, InitializeResult))
        elif isinstance(step, Negotiated):
            return Outcome(step, discover if step.discover is not None else None, None)
        else:
            assert isinstance(step, Fail)
            raise step.error


def _timed_out(session: Session, method: str, handshake_timeout: float | None) -> RequestTimeout:
    """The handshake ran out of its budget: say what the server wrote instead of answering."""
    budget = handshake_timeout or 0.0
    return RequestTimeout(
        f"{session.name} did not answer {method} within {budget:g} s (handshake_timeout)"
        + stray_lines_hint(session),
        method=method,
        timeout=budget,
        server=session.name,
    )


class Requests:
    """The client's requests, in the era the handshake settled: the one path every request takes.

    Args:
        session: The connection.
        client_info: The ``Implementation`` to send, as a dict.
        log_level: The ``logLevel`` every 2026-07-28 request asks for (`None`: no logs).
        hooks: Which input hooks the client has (they declare capabilities).
        extra_caps: Capabilities the options declare on top.
        extensions: The client's extensions, folded.
        input: The input handler (its rounds of 2026-07-28 input).
        for_call: A call's session-level callback, from its progress token and callbacks.
        tool_headers: The ``Mcp-Param-*`` headers of a ``tools/call`` body (from its tool's listing).
        relist: Lists the tools again, afresh (after a ``-32020`` header mismatch).
        log: Reports a diagnostic.
    """

    def __init__(
        self,
        session: Session,
        *,
        client_info: dict[str, JSON],
        log_level: str | None,
        hooks: Hooks,
        extra_caps: Mapping[str, JSON],
        extensions: ExtensionSet,
        input: InputHandler,
        for_call: Callable[
            [int | None, ProgressCallback | None, NotificationCallback | None], NotificationCallback | None
        ],
        tool_headers: Callable[[Mapping[str, JSON]], tuple[tuple[str, str], ...]],
        relist: Callable[[], Awaitable[object]],
        log: Callable[[str], None],
    ) -> None:
        self.session = session
        self.client_info = client_info
        self.log_level = log_level
        """The ``logLevel`` every 2026-07-28 request asks for, or `None`."""
        self.era: Literal["modern", "legacy"] | None = None
        self.version: str | None = None
        self.header_mismatch_retries = 0
        """How many 2026-07-28 ``tools/call`` refused with ``-32020`` (header mismatch) were sent
        once more after listing the tools again (each call at most once)."""
        self._hooks = hooks
        self._extra_caps = dict(extra_caps)
        self._ext = extensions
        self._input = input
        self._for_call = for_call
        self._tool_headers = tool_headers
        self._relist = relist
        self._log = log
        self._tokens = itertools.count(1)
        self._input_caps: dict[str, JSON] = {}

    # ----------------------------------------------------------- handshake

    async def connect(
        self, *, protocol: str, probe_timeout: float, handshake_timeout: float | None, restarted: bool
    ) -> Outcome:
        """Negotiate the era, settle it, and finish the handshake (see `negotiate`)."""
        outcome = await negotiate(
            self.session,
            protocol=protocol,
            client_info=self.client_info,
            declare=self.declared,
            probe_timeout=probe_timeout,
            handshake_timeout=handshake_timeout,
            restarted=restarted,
        )
        negotiated = outcome.negotiated
        self.settle(negotiated)
        telemetry_negotiated(self.session, negotiated.version)
        if negotiated.era == "modern":
            stop_serving_requests(self.session)
            await trio.lowlevel.checkpoint()
            return outcome
        # The initialize era's last steps: notifications/initialized, then the log level.
        await self.session.notify("notifications/initialized")
        initialized = outcome.initialize
        assert initialized is not None
        if self.log_level is not None and initialized.capabilities.logging is not None:
            # The initialize era sets the level once, for the whole session.
            await self.session.request("logging/setLevel", {"level": self.log_level})
        return outcome

    def settle(self, negotiated: Negotiated) -> None:
        """Take the era and version the handshake settled: every request from now on is of that era."""
        self.era = negotiated.era
        self.version = version = negotiated.version
        self._input.version = version
        self._input_caps = self.declared(version)

    def declared(self, version: str) -> dict[str, JSON]:
        """Every ``ClientCapabilities`` the client has, at ``version``."""
        caps = {**declare(self._hooks, version), **self._extra_caps}
        if self._ext.extensions:
            caps = merge_declarations(caps, self._ext.declared)
        return caps

    def _plain_caps(self, method: str) -> dict[str, JSON]:
        """What a 2026-07-28 request that asks for no input declares: the extensions it needs."""
        if not self._ext:
            return {}
        extensions = self._ext.for_method(method)
        return {"extensions": extensions} if extensions else {}

    def plain_meta(self, method: str) -> dict[str, JSON]:
        """The ``_meta`` of a 2026-07-28 ``method`` that asks for no input, and no logs."""
        assert self.version is not None
        return modern_meta(self.version, self._plain_caps(method), self.client_info)

    async def require(self, era: Literal["modern", "legacy"], method: str) -> None:
        """Check that ``method`` exists in the connection's era (a checkpoint).

        Raises:
            NotSupported: It does not.
        """
        await trio.lowlevel.checkpoint()
        if self.era is None:
            raise RuntimeError("use the client inside 'async with open_stdio_client(...)'")
        if self.era != era:
            raise NotSupported(
                f"{method} does not exist in protocol version {self.version} (the {self.era} era)",
                method=method,
                era=self.era,
            )

    def progress(
        self, on_progress: ProgressCallback | None
    ) -> tuple[int | None, NotificationCallback | None]:
        """A fresh progress token (when there is a callback), and the call's session-level callback."""
        token = next(self._tokens) if on_progress is not None else None
        return token, self._for_call(token, on_progress, None)

    # ------------------------------------------------------------ requests

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
        """`Client.request`: send ``method`` with the era's envelope; return the raw result."""
        era = self.era
        if era is None:
            await trio.lowlevel.checkpoint()
            raise RuntimeError("use the client inside 'async with open_stdio_client(...)'")
        if on_progress is None and on_notification is None:
            token = callback = None
        else:
            token = next(self._tokens)
            callback = self._for_call(token, on_progress, on_notification)
        if era == "modern":
            return await self._modern(method, params, token, callback, meta, for_input)
        body: dict[str, JSON] = dict(params) if params else {}
        extra: dict[str, JSON] = dict(meta) if meta else {}
        if token is not None:
            extra["progressToken"] = token
        if extra:
            body["_meta"] = {**body.get("_meta", {}), **extra}
        return await self.session.request(
            method, body if body or params is not None else None, on_notification=callback
        )

    async def _modern(
        self,
        method: str,
        params: Mapping[str, JSON] | None,
        token: int | None,
        callback: NotificationCallback | None,
        meta: Mapping[str, JSON] | None,
        for_input: bool,
    ) -> dict[str, JSON]:
        """A 2026-07-28 request: its envelope, its headers, and its retries."""
        body = self._body(method, params, token, meta, for_input)
        try:
            return await self.session.request(
                method, body, on_notification=callback, headers=self._headers(method, body)
            )
        except RpcError as exc:
            error = exc
        return await self._refused(method, body, callback, for_input, error)

    def _body(
        self,
        method: str,
        params: Mapping[str, JSON] | None,
        token: int | None,
        meta: Mapping[str, JSON] | None,
        for_input: bool,
    ) -> dict[str, JSON]:
        """The params of a 2026-07-28 request, with their ``_meta`` envelope.

        A new dict: the channel may still hold it once sent, so nothing changes it afterwards.
        """
        assert self.version is not None
        caps = self._input_caps if for_input else self._plain_caps(method)
        envelope = modern_meta(
            self.version, caps, self.client_info, log_level=self.log_level, progress_token=token, extra=meta
        )
        return {**params, "_meta": envelope} if params else {"_meta": envelope}

    def _headers(self, method: str, body: Mapping[str, JSON]) -> tuple[tuple[str, str], ...]:
        """The extra headers of a request: the ``Mcp-Param-*`` headers of a ``tools/call``."""
        return self._tool_headers(body) if method == "tools/call" else ()

    async def _refused(
        self,
        method: str,
        body: dict[str, JSON],
        callback: NotificationCallback | None,
        for_input: bool,
        error: RpcError,
    ) -> dict[str, JSON]:
        """A 2026-07-28 request the server refused: sent once more where the refusal allows it.

        ``-32020`` (a ``tools/call``'s headers do not match): the tools are
        listed again, and the call sent with the new listing's headers.
        ``-32021`` (a client capability missing) naming capabilities the
        client has: they are declared, and the request sent once more.
        Anything else is the caller's.
        """
        if error.code == HEADER_MISMATCH and method == "tools/call":
            try:
                return await self._after_mismatch(body, callback, error)
            except RpcError as exc:
                error = exc
        envelope = body["_meta"]
        caps = envelope[CLIENT_CAPABILITIES]
        if error.code != MISSING_CLIENT_CAPABILITY or not self.can_declare(error.data, caps, method):
            raise error
        # Declare what we do support and try once more.
        everything = self.declared(self.version or MODERN_VERSIONS[0])
        if method not in MRTR_METHODS and needs_extension(error.data):
            everything = declare_extension(everything)
        body = {**body, "_meta": {**envelope, CLIENT_CAPABILITIES: everything}}
        if method == "tools/call":
            return await self._tools_call(body, callback)
        return await self.session.request(method, body, on_notification=callback)

    async def typed(
        self,
        method: str,
        params: dict[str, JSON] | None,
        model: type[M],
        *,
        on_progress: ProgressCallback | None = None,
        on_notification: NotificationCallback | None = None,
        meta: Mapping[str, JSON] | None = None,
    ) -> M:
        """A request whose result is ``model`` (its ``resultType`` checked in the 2026-07-28 era)."""
        result = await self.request(
            method, params, on_progress=on_progress, on_notification=on_notification, meta=meta
        )
        if self.era == "modern":
            result_type(method, result)
        return structure(result, model)

    async def with_input(
        self,
        method: str,
        params: dict[str, JSON],
        model: type[M],
        *,
        manual: bool = False,
        input_responses: Mapping[str, JSON] | None = None,
        request_state: str | None = None,
        on_progress: ProgressCallback | None = None,
        on_notification: NotificationCallback | None = None,
        meta: Mapping[str, JSON] | None = None,
    ) -> tuple[M | InputRequiredResult, int]:
        """A request that may ask for input: its result (or, ``manual``, the input asked for) and
        how many requests it took (0 in the initialize era, which asks by requests of its own)."""
        era = self.era
        if era == "legacy":
            InputHandler.refuse_legacy_rounds(method, input_responses, request_state)
            typed = await self.typed(
                method, params, model, on_progress=on_progress, on_notification=on_notification, meta=meta
            )
            return typed, 0

        if era is None:
            await trio.lowlevel.checkpoint()
            raise RuntimeError("use the client inside 'async with open_stdio_client(...)'")

        round_params, start = self._input.first_round(params, input_responses, request_state)
        if on_progress is None and on_notification is None:
            # The common call's first round goes from here straight to the session: a coroutine
            # frame fewer for every resume while it waits (measured: calls in flight).
            body = self._body(method, round_params, None, meta, True)
            refused: RpcError | None = None
            try:
                first: dict[str, JSON] | None = await self.session.request(
                    method, body, headers=self._headers(method, body)
                )
            except RpcError as exc:
                first, refused = None, exc
            if refused is not None:
                first = await self._refused(method, body, None, True, refused)
            assert first is not None
        else:
            first = await self.request(
                method,
                round_params,
                on_progress=on_progress,
                on_notification=on_notification,
                meta=meta,
                for_input=True,
            )
        # The common answer, complete at once, is typed here: no coroutine of
        # the rounds, no sender made for rounds that never come.
        complete = self._input.complete(method, model, first)
        if complete is not None:
            return complete, 1
        send = partial(
            self.request,
            method,
            on_progress=on_progress,
            on_notification=on_notification,
            meta=meta,
            for_input=True,
        )
        return await self._input.run_rounds(method, params, model, send, first, start, manual)

    async def _tools_call(
        self, body: dict[str, JSON], callback: NotificationCallback | None
    ) -> dict[str, JSON]:
        """Send one 2026-07-28 ``tools/call`` (``body`` has its ``_meta``) with its ``Mcp-Param-*`` headers.

        A server that refuses it with ``-32020`` (header mismatch: the tool
        was never listed, or its schema changed since) gets ``tools/list``
        again once, and the call once more (a new request, with the headers
        of the new listing); a second refusal is the caller's `RpcError`.
        """
        try:
            return await self.session.request(
                "tools/call", body, on_notification=callback, headers=self._tool_headers(body)
            )
        except RpcError as exc:
            if exc.code != HEADER_MISMATCH:
                raise
            error = exc
        return await self._after_mismatch(body, callback, error)

    async def _after_mismatch(
        self, body: dict[str, JSON], callback: NotificationCallback | None, error: RpcError
    ) -> dict[str, JSON]:
        """A ``tools/call`` refused for its headers (``-32020``): list the tools again, send it once more."""
        session = self.session
        self.header_mismatch_retries += 1
        self._log(
            f"{session.name} refused tools/call of {body.get('name')!r} for its headers ({error.message});"
            " listing the tools again and sending it once more"
        )
        await self._relist()
        return await session.request(
            "tools/call", body, on_notification=callback, headers=self._tool_headers(body)
        )

    def can_declare(self, data: object, declared: dict[str, JSON], method: str = "") -> bool:
        """Whether a ``-32021`` refusal (its ``data``) names capabilities the client has but did not declare."""
        if not isinstance(data, dict) or not isinstance(data.get("requiredCapabilities"), dict):
            return False
        ours = self.declared(self.version or MODERN_VERSIONS[0])
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

    # --------------------------------------------------------------- tasks

    async def send_task(self, method: str, params: dict[str, JSON], long_lived: bool) -> dict[str, JSON]:
        """Send a ``tasks/*`` request: as it is (initialize era), or with the envelope declaring the extension."""
        session = self.session
        if self.era == "legacy":
            return await session.request(method, params, long_lived=long_lived)
        assert self.version is not None
        caps = declare_extension(self._input_caps)
        envelope = modern_meta(self.version, caps, self.client_info, log_level=self.log_level)
        try:
            return await session.request(method, {**params, "_meta": envelope}, long_lived=long_lived)
        except RpcError as exc:
            if exc.code != MISSING_CLIENT_CAPABILITY or not self.can_declare(exc.data, caps, method):
                raise
        everything = declare_extension(self.declared(self.version))
        envelope = {**envelope, CLIENT_CAPABILITIES: everything}
        return await session.request(method, {**params, "_meta": envelope}, long_lived=long_lived)

    async def create_task(
        self, params: dict[str, JSON], token: int | None, callback: NotificationCallback | None
    ) -> dict[str, JSON]:
        """Send one ``tools/call`` that asks for a task (2026-07-28: declaring the extension)."""
        if self.era == "legacy":
            body = params if token is None else {**params, "_meta": {"progressToken": token}}
            return await self.session.request("tools/call", body, on_notification=callback)
        assert self.version is not None
        caps = declare_extension(self._input_caps)
        envelope = modern_meta(
            self.version, caps, self.client_info, log_level=self.log_level, progress_token=token
        )
        return await self._tools_call({**params, "_meta": envelope}, callback)
