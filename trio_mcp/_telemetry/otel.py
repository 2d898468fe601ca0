"""The spans and metrics of a connection, on the OpenTelemetry API (imported only when in use).

One `Telemetry` per connection holds what every span of it carries (the
transport, the server's address, the protocol revision); a `TracedSession`
makes one CLIENT span per request and notification, in the caller's task,
so that its parent is the span the caller has active, and injects the span's
trace context into the message's ``params._meta`` (SEP-414: ``traceparent``,
``tracestate`` and ``baggage`` as top-level keys, the caller's own keys
kept). Requests the server sends are served under a SERVER span whose parent
is the context the server put in their ``_meta``.

Only the conventions' attributes are recorded, and none of them can hold a
secret: no headers, no tokens, no arguments or environment of a command, no
exception message (a `ServerGone` quotes the server's stderr), and URLs
without their user, password, query or fragment.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from opentelemetry import context as otel_context, metrics, propagate, trace
from opentelemetry.trace import SpanKind, StatusCode

from .._errors import RpcError, TransportClosed
from .._session import Session, call_maybe_async, next_request_id, observer_of
from .._targets import HTTPTarget, ProcessTarget
from .._version import __version__

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.util.types import AttributeValue

    from .._channel import Channel
    from .._core.jsonrpc import ServerRequest
    from .._options import NotificationCallback, RequestHandler
    from .._targets import Target

__all__ = ["DURATION_BUCKETS", "Telemetry", "TracedSession", "add_event", "error_type", "safe_url"]

JSON = Any

#: The name and version of the instrumentation scope.
SCOPE: Final = "trio_mcp"
#: The bucket boundaries the conventions advise for both duration histograms, in seconds.
DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
#: Methods whose ``params.uri`` is a resource's URI (``mcp.resource.uri``).
_BY_URI: Final = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
#: The ``error.type`` of a tool result with ``isError``, as the conventions name it.
TOOL_ERROR: Final = "tool_error"
#: The methods whose answer is a tool's result (``isError``) or says a task's state.
_WATCHED: Final = frozenset({"tools/call", "tasks/get", "tasks/update", "tasks/cancel", "tasks/result"})

_Attributes = dict[str, "AttributeValue"]


def safe_url(url: str) -> str:
    """``url`` without its user, password, query and fragment (which may hold credentials)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return ""
    if not parts.scheme or not host:
        return ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _resource_uri(uri: str) -> str:
    """A resource's URI without the user and password its authority may carry."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return uri
    if "@" not in parts.netloc:
        return uri
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def transport_attributes(target: Target) -> _Attributes:
    """What the conventions record of the transport (see "Recording MCP transport")."""
    if isinstance(target, ProcessTarget):
        return {"network.transport": "pipe"}
    if isinstance(target, HTTPTarget):
        attributes: _Attributes = {"network.transport": "tcp", "network.protocol.name": "http"}
        try:
            parts = urlsplit(target.url)
            host, port = parts.hostname, parts.port
        except ValueError:
            return attributes
        if host:
            attributes["server.address"] = host
            attributes["server.port"] = port if port is not None else 443 if parts.scheme == "https" else 80
        return attributes
    return {}


def error_type(exc: BaseException) -> str:
    """The ``error.type`` of a failure: the JSON-RPC code of an error answer, else the exception's class."""
    if isinstance(exc, RpcError):
        return str(exc.code)
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return error_type(exc.exceptions[0])
    return type(exc).__qualname__


def add_event(name: str, attributes: dict[str, Any]) -> None:
    """Add an event to the span active in this task, when one records."""
    span = trace.get_current_span()
    if span.is_recording():
        span.add_event(name, attributes)


def restart_span(server: str, restarts: int, reason: BaseException, delay: float) -> None:
    """The span of a group's restart of one member (see `trio_mcp._telemetry.restarting`)."""
    tracer = trace.get_tracer_provider().get_tracer(SCOPE, __version__)
    attributes: _Attributes = {
        "trio_mcp.server.name": server,
        "trio_mcp.restarts": restarts,
        "trio_mcp.restart.delay": delay,
        "error.type": error_type(reason),
    }
    span = tracer.start_span(
        "trio_mcp.server.restart",
        context=otel_context.Context(),
        kind=SpanKind.INTERNAL,
        attributes=attributes,
    )
    span.end()


class _Instruments:
    """The two histograms, made once per meter provider (an SDK warns about duplicates)."""

    provider: object = None
    operation: metrics.Histogram
    session: metrics.Histogram

    @classmethod
    def of(cls, provider: metrics.MeterProvider) -> type[_Instruments]:
        if cls.provider is not provider:
            meter = provider.get_meter(SCOPE, __version__)
            cls.operation = meter.create_histogram(
                "mcp.client.operation.duration",
                unit="s",
                description="The duration of the MCP request or notification as observed on the sender"
                " from the time it was sent until the response or ack is received.",
                explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
            )
            cls.session = meter.create_histogram(
                "mcp.client.session.duration",
                unit="s",
                description="The duration of the MCP session as observed on the MCP client.",
                explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
            )
            cls.provider = provider
        return cls


class Telemetry:
    """What one connection reports: its spans' common attributes, its tracer and histograms.

    Made by `trio_mcp._telemetry.make_session` when the application has set
    up an SDK; the global providers are read once, as the connection opens.
    """

    def __init__(self, target: Target, channel: Channel) -> None:
        self._channel = channel
        self._tracer = trace.get_tracer_provider().get_tracer(SCOPE, __version__)
        instruments = _Instruments.of(metrics.get_meter_provider())
        self._operation = instruments.operation
        self._session = instruments.session
        self.common: _Attributes = transport_attributes(target)
        """The attributes of every span and measurement of this connection."""
        self.session_id: str | None = None
        """The ``Mcp-Session-Id`` of an initialize-era HTTP connection (spans only: not a metric's)."""
        self._started = time.perf_counter()
        self._ended = False

    def negotiated(self, version: str) -> None:
        """The handshake chose revision ``version`` (and, over HTTP in the initialize era, a session)."""
        self.common = {**self.common, "mcp.protocol.version": version}
        session_id = getattr(self._channel, "session_id", None)
        self.session_id = session_id if isinstance(session_id, str) and session_id else None

    # ------------------------------------------------------------ requests

    def start(self, method: str, params: dict[str, JSON] | None, request_id: int | None) -> _Operation:
        """Start the CLIENT span of a request (``request_id``) or a notification (`None`).

        The span is the child of the span active in this task; its context
        is injected into a copy of ``params`` (`_Operation.params`).
        """
        attributes: _Attributes = {"mcp.method.name": method}
        measured: _Attributes = {"mcp.method.name": method}
        name = method
        if type(params) is dict:
            if method == "tools/call":
                attributes["gen_ai.operation.name"] = measured["gen_ai.operation.name"] = "execute_tool"
                tool = params.get("name")
                if type(tool) is str:
                    attributes["gen_ai.tool.name"] = measured["gen_ai.tool.name"] = tool
                    name = f"{method} {tool}"
            elif method == "prompts/get":
                prompt = params.get("name")
                if type(prompt) is str:
                    attributes["gen_ai.prompt.name"] = measured["gen_ai.prompt.name"] = prompt
                    name = f"{method} {prompt}"
            elif method in _BY_URI:
                uri = params.get("uri")
                if type(uri) is str:
                    attributes["mcp.resource.uri"] = _resource_uri(uri)
            elif method in _WATCHED:
                task_id = params.get("taskId")
                if type(task_id) is str:
                    attributes["trio_mcp.task.id"] = task_id
        if request_id is not None:
            attributes["jsonrpc.request.id"] = str(request_id)
        common = self.common
        attributes.update(common)
        measured.update(common)
        if self.session_id is not None:
            attributes["mcp.session.id"] = self.session_id
        span = self._tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        ctx = trace.set_span_in_context(span)
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=ctx)
        return _Operation(self, span, ctx, _with_meta(params, carrier), measured, method)

    def notified(self, method: str) -> None:
        """The session sent notification ``method`` by itself: a span of no duration."""
        self.start(method, None, None).finish(None)

    # ------------------------------------------------------ server requests

    async def serve(self, handler: RequestHandler, event: ServerRequest) -> object:
        """Run ``handler`` on the server's request under a SERVER span.

        Its parent is the trace context the server sent in ``params._meta``,
        or none (a new trace): never the span of whichever task happened to
        read the request.
        """
        params = event.params
        meta = params.get("_meta") if type(params) is dict else None
        parent = otel_context.Context()
        if type(meta) is dict:
            extracted = propagate.extract({k: v for k, v in meta.items() if type(v) is str})
            if trace.get_current_span(extracted).get_span_context().is_valid:
                parent = extracted
        attributes: _Attributes = {
            "mcp.method.name": event.method,
            "jsonrpc.request.id": str(event.request_id),
        }
        attributes.update(self.common)
        if self.session_id is not None:
            attributes["mcp.session.id"] = self.session_id
        span = self._tracer.start_span(
            event.method, context=parent, kind=SpanKind.SERVER, attributes=attributes
        )
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        try:
            result = await call_maybe_async(handler, event.method, event.params)
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            otel_context.detach(token)
            span.end()
        return result

    # -------------------------------------------------------------- session

    def closed(self, failure: BaseException | None) -> None:
        """The connection closed (``failure``: why it could no longer be used): record its duration, once."""
        if self._ended:
            return
        self._ended = True
        attributes = dict(self.common)
        if failure is not None and not isinstance(failure, TransportClosed):
            attributes["error.type"] = error_type(failure)
        self._session.record(time.perf_counter() - self._started, attributes)


def _with_meta(params: dict[str, JSON] | None, carrier: dict[str, str]) -> dict[str, JSON] | None:
    """``params`` with the trace context in its ``_meta`` (a copy; the caller's keys win)."""
    if not carrier:
        return params
    if params is None:
        return {"_meta": carrier}
    if type(params) is not dict:
        return params  # the session refuses it, with the caller's TypeError
    meta = params.get("_meta")
    if meta is None:
        return {**params, "_meta": carrier}
    if type(meta) is not dict:
        return params  # not ours to fix: sent as the caller wrote it
    merged = dict(meta)
    for key, value in carrier.items():
        merged.setdefault(key, value)
    return {**params, "_meta": merged}


def _failed(span: trace.Span, exc: BaseException) -> str:
    """End-of-span bookkeeping of a failure: ``error.type``, the status; returns the type."""
    kind = error_type(exc)
    span.set_attribute("error.type", kind)
    if isinstance(exc, RpcError):
        span.set_attribute("rpc.response.status_code", kind)
        span.set_status(StatusCode.ERROR, exc.message)
    else:
        # Never the exception's message: a ServerGone quotes the server's stderr.
        span.set_status(StatusCode.ERROR)
    return kind


class _Operation:
    """One request or notification in flight: its span, and what its measurement carries."""

    __slots__ = ("_ctx", "_measured", "_method", "_span", "_started", "_telemetry", "_token", "params")

    def __init__(
        self,
        telemetry: Telemetry,
        span: trace.Span,
        ctx: otel_context.Context,
        params: dict[str, JSON] | None,
        measured: _Attributes,
        method: str,
    ) -> None:
        self._telemetry = telemetry
        self._span = span
        self._ctx = ctx
        self.params = params
        """The params to send: the caller's, with the trace context in ``_meta``."""
        self._measured = measured
        self._method = method
        self._token: Token[otel_context.Context] | None = None
        self._started = time.perf_counter()

    def enter(self) -> None:
        """Make the span the active one in this task (until `finish` or `fail`)."""
        self._token = otel_context.attach(self._ctx)

    def finish(self, result: dict[str, JSON] | None) -> None:
        """The answer came (``result``; `None` for a notification sent): end the span."""
        if result is not None and self._method in _WATCHED:
            self._read(result)
        self._end()

    def _read(self, result: dict[str, JSON]) -> None:
        """A tool's result with ``isError``, and the task a result creates or reports on."""
        method = self._method
        if result.get("isError") is True and method in ("tools/call", "tasks/result"):
            self._span.set_attribute("error.type", TOOL_ERROR)
            self._span.set_status(StatusCode.ERROR)
            self._measured["error.type"] = TOOL_ERROR
        # Initialize era: {"task": {...}}; 2026-07-28: flat, with resultType "task".
        task = result.get("task")
        if type(task) is not dict:
            if method == "tools/call" and result.get("resultType") != "task":
                return
            task = result
        task_id, status = task.get("taskId"), task.get("status")
        if type(task_id) is str:
            self._span.set_attribute("trio_mcp.task.id", task_id)
        if type(status) is str:
            self._span.set_attribute("trio_mcp.task.status", status)

    def fail(self, exc: BaseException) -> None:
        """The operation failed with ``exc``: end the span with its error.

        Cancellation too: `trio.Cancelled` is a `BaseException`, which
        OpenTelemetry's own context managers do not take for a failure; here
        the span says ``error.type = "Cancelled"``.
        """
        kind = _failed(self._span, exc)
        self._measured["error.type"] = kind
        if isinstance(exc, RpcError):
            self._measured["rpc.response.status_code"] = kind
        self._end()

    def _end(self) -> None:
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None
        self._span.end()
        self._telemetry._operation.record(time.perf_counter() - self._started, self._measured)


class TracedSession(Session):
    """A session that reports every request and notification it sends as a span.

    The span starts and ends in the caller's task (the session's own tasks
    never start one), and is the active span while the request waits, so
    that what the request causes (its ``notifications/cancelled``, the
    callbacks of its notifications) nests under it.
    """

    @property
    def telemetry(self) -> Telemetry:
        """What the spans and metrics of this session are made with."""
        telemetry = observer_of(self)
        assert isinstance(telemetry, Telemetry)
        return telemetry

    async def request(
        self,
        method: str,
        params: dict[str, JSON] | None = None,
        *,
        on_notification: NotificationCallback | None = None,
        cancel_on_abandon: bool = True,
        long_lived: bool = False,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> dict[str, JSON]:
        operation = self.telemetry.start(method, params, next_request_id(self))
        operation.enter()
        try:
            result = await super().request(
                method,
                operation.params,
                on_notification=on_notification,
                cancel_on_abandon=cancel_on_abandon,
                long_lived=long_lived,
                headers=headers,
            )
        except BaseException as exc:
            operation.fail(exc)
            raise
        operation.finish(result)
        return result

    async def notify(self, method: str, params: dict[str, JSON] | None = None) -> None:
        operation = self.telemetry.start(method, params, None)
        try:
            await super().notify(method, operation.params)
        except BaseException as exc:
            operation.fail(exc)
            raise
        operation.finish(None)

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            if self.closing:
                self.telemetry.closed(self.failure)
