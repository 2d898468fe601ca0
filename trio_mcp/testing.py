"""Test your Trio application against a scripted, in-memory MCP server.

`FakeServer` plays the server; `open_fake_client` connects the real
`trio_mcp.Client` to it, with no process and no pipes, in the manner of
`trio.testing`'s memory streams. Everything runs in the test's own Trio run,
so it works under ``trio.testing.MockClock(autojump_threshold=0)``: request
timeouts, ``input_timeout`` and your own `trio.fail_after` budgets elapse in
virtual time, at once.

The fake answers the handshake of its protocol era by itself (``era="modern"``
for 2026-07-28, ``era="legacy"`` for the initialize era). Other requests
are answered by the handlers you register (`FakeServer.on_tool`,
`FakeServer.on_request`) or, when none applies, wait for your test to take
them with `FakeServer.receive_request` and answer them with the methods of
`FakeRequest`. Everything the client sent is kept in `FakeServer.received`.

An application test, with the ``autojump_clock`` fixture of pytest-trio::

    import trio
    import trio_mcp
    from trio_mcp.testing import FakeServer, open_fake_client


    # The application under test: it asks the server for a weather report.
    async def forecast(client: trio_mcp.Client, city: str) -> str:
        with trio.move_on_after(5):
            result = await client.call_tool("forecast", {"city": city})
            return result.text
        return "no forecast today"


    async def test_forecast(autojump_clock):
        server = FakeServer(tools=["forecast"])
        server.on_tool("forecast", lambda request: f"sunny in {request.arguments['city']}")
        async with open_fake_client(server) as client:
            assert await forecast(client, "Paris") == "sunny in Paris"
        assert server.requests[-1].arguments == {"city": "Paris"}


    async def test_forecast_gives_up_after_five_seconds(autojump_clock):
        server = FakeServer(tools=["forecast"])
        async with open_fake_client(server) as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(forecast, client, "Paris")
                request = await server.expect_request("tools/call", name="forecast")
                start = trio.current_time()
                await request.wait_cancelled()  # never answered: the app gives up
                assert trio.current_time() - start == 5

The first test answers through a handler; the second takes the request
itself, and waits for the ``notifications/cancelled`` that the application's
`trio.move_on_after` makes the client send: the five seconds pass in no
time at all.

A test drives the multi round-trip exchanges of the 2026-07-28 era with
`FakeRequest.input_required` (the client answers through its hooks and sends
the request again, which arrives as a new `FakeRequest` with
`FakeRequest.input_responses`), and the server-to-client requests of the
initialize era with `FakeServer.send_request`. `FakeServer.exit` makes the
server die (the client raises `trio_mcp.ServerGone`), for testing recovery.
"""

from __future__ import annotations

import inspect
import math
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs
import orjson
import trio

from ._client import Client, open_client
from ._core.eras import (
    LEGACY_VERSIONS,
    LOG_LEVEL,
    LOG_LEVELS,
    MODERN_VERSIONS,
    PROTOCOL_VERSION,
    SERVER_INFO,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from ._core.framing import LineFramer
from ._core.jsonrpc import INTERNAL_ERROR, METHOD_NOT_FOUND, SUBSCRIPTION_ID, _key, encode
from ._errors import RpcError, ServerGone
from ._models import Implementation, InputRequiredResult, unstructure
from ._transport import StdioTransport, _signal_name
from ._version import __version__

if TYPE_CHECKING:
    from types import TracebackType

    from ._client import ElicitationHook, RootsHook, SamplingHook
    from ._transport import NotificationCallback

__all__ = ["FakeRequest", "FakeServer", "open_fake_client", "open_fake_transport"]

JSON: TypeAlias = Any


def _wire(value: object, what: str) -> dict[str, JSON]:
    """A wire dict from a mapping or a trio_mcp model."""
    if isinstance(value, Mapping):
        return dict(value)
    if attrs.has(type(value)):
        try:
            return unstructure(value)
        except TypeError:
            pass
    raise TypeError(f"{what} must be a dict or a trio_mcp model, not {type(value).__name__}")


def _described(items: Sequence[object] | None, what: str, key: str) -> list[dict[str, JSON]] | None:
    if items is None:
        return None
    if isinstance(items, str | bytes | Mapping):
        raise TypeError(f"{what} must be a sequence")
    out: list[dict[str, JSON]] = []
    for item in items:
        if isinstance(item, str):
            entry: dict[str, JSON] = {key: item, "name": item}
            if key == "name" and what == "tools":
                entry["inputSchema"] = {"type": "object"}
            out.append(entry)
        else:
            out.append(_wire(item, f"each of {what}"))
    return out


# ----------------------------------------------------------------- requests


class FakeRequest:
    """One request the client sent to a `FakeServer`, and the means to answer it.

    Every request becomes one, whether a handler, the fake's own rules or your
    test answers it; the ones left for the test come from
    `FakeServer.receive_request`. Answer each once, with `respond`, `error` or
    (2026-07-28 era) `input_required`; before that, `progress`, `log` and
    `notify` send notifications that belong to it.

    Every method that sends raises `trio.BrokenResourceError` once the
    client has disconnected (or the server has "exited", `FakeServer.exit`),
    like a write to a closed pipe.

    Attributes:
        id: The JSON-RPC id the client gave it.
        method: The method, for example ``"tools/call"``.
        params: The params object (empty when the client sent none).
        message: The whole message, as decoded.
        response: The response sent to it so far, or `None`.
    """

    def __init__(self, connection: Any, message: dict[str, JSON]) -> None:
        # (Made by the fake server only; ``connection`` is its _Connection.)
        self._connection: _Connection = connection
        self.message = message
        self.id: int | str = message["id"]
        self.method: str = message["method"]
        params = message.get("params")
        self.params: dict[str, JSON] = params if isinstance(params, dict) else {}
        self.response: dict[str, JSON] | None = None
        self._cancelled = trio.Event()

    def __repr__(self) -> str:
        name = self.name
        what = f" {name!r}" if isinstance(name, str) else ""
        return f"<FakeRequest {self.id!r} {self.method}{what}>"

    # ------------------------------------------------------------- reading

    @property
    def meta(self) -> dict[str, JSON]:
        """The ``_meta`` of the params (empty when there is none)."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str | None:
        """``params["name"]``: the tool of a ``tools/call``, the prompt of a ``prompts/get``."""
        name = self.params.get("name")
        return name if isinstance(name, str) else None

    @property
    def arguments(self) -> dict[str, JSON]:
        """``params["arguments"]`` (empty when there are none)."""
        arguments = self.params.get("arguments")
        return arguments if isinstance(arguments, dict) else {}

    @property
    def input_responses(self) -> dict[str, JSON] | None:
        """The answers to the previous round's input requests (2026-07-28 era), or `None`."""
        answers = self.params.get("inputResponses")
        return answers if isinstance(answers, dict) else None

    @property
    def request_state(self) -> str | None:
        """The ``requestState`` sent back from the previous round (2026-07-28 era), or `None`."""
        state = self.params.get("requestState")
        return state if isinstance(state, str) else None

    @property
    def progress_token(self) -> int | str | None:
        """The ``progressToken`` the client asked progress under, or `None`."""
        token = self.meta.get("progressToken")
        return token if isinstance(token, int | str) and not isinstance(token, bool) else None

    @property
    def log_level(self) -> str | None:
        """The log level this request asked for (2026-07-28 era), or `None`."""
        level = self.meta.get(LOG_LEVEL)
        return level if isinstance(level, str) else None

    @property
    def answered(self) -> bool:
        """Whether a response was sent."""
        return self.response is not None

    @property
    def cancelled(self) -> bool:
        """Whether the client sent ``notifications/cancelled`` for this request."""
        return self._cancelled.is_set()

    async def wait_cancelled(self) -> None:
        """Wait until the client cancels this request (a timeout, a cancel scope, ...)."""
        await self._cancelled.wait()

    # ------------------------------------------------------------- answers

    async def respond(self, result: Mapping[str, JSON] | object = None) -> None:
        """Answer with a result: a dict or a trio_mcp model (`None`: an empty result).

        In the 2026-07-28 era ``"resultType": "complete"`` is added when the
        result has no ``resultType``, and the closing result of a
        ``subscriptions/listen`` gets its subscription id.

        Raises:
            RuntimeError: The request was answered already.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._respond_now(result)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def error(self, code: int, message: str, data: JSON = None) -> None:
        """Answer with a JSON-RPC error (the client raises `trio_mcp.RpcError`).

        Raises:
            RuntimeError: The request was answered already.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._error_now(code, message, data)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def input_required(
        self,
        input_requests: Mapping[str, Mapping[str, JSON] | object] | None = None,
        *,
        request_state: str | None = None,
    ) -> None:
        """Answer with an ``input_required`` result (2026-07-28 era).

        The client answers every input request (through its hooks, or your
        code in manual mode) and sends the request again, with the answers in
        `input_responses` and ``request_state`` unchanged; that round is a
        new `FakeRequest`. ::

            await request.input_required(
                {
                    "name": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "Your name?",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                        },
                    }
                },
                request_state="step-1",
            )

        Args:
            input_requests: By key, each ``{"method": ..., "params": ...}``
                (``elicitation/create``, ``sampling/createMessage`` or
                ``roots/list``), or an `trio_mcp.InputRequest`.
            request_state: Opaque state the client must send back unchanged.

        Raises:
            RuntimeError: The server speaks the initialize era (servers ask
                with `FakeServer.send_request` there), or the request was
                answered already.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._connection.server.era != "modern":
            raise RuntimeError(
                "input_required belongs to the 2026-07-28 era; an initialize-era server asks"
                " with FakeServer.send_request"
            )
        result: dict[str, JSON] = {"resultType": "input_required"}
        if input_requests is not None:
            result["inputRequests"] = {
                key: _wire(value, "each input request") for key, value in input_requests.items()
            }
        if request_state is not None:
            result["requestState"] = request_state
        self._respond_now(result)
        await trio.lowlevel.cancel_shielded_checkpoint()

    # ------------------------------------------------------- notifications

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Send ``notifications/progress`` for this request, if the client asked for progress.

        Returns whether it was sent: like a real server, the fake sends none
        when the request carries no ``progressToken`` (the client passed no
        ``on_progress``).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        token = self.progress_token
        sent = token is not None
        if sent:
            params: dict[str, JSON] = {"progressToken": token, "progress": progress}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            self._connection.send_notification("notifications/progress", params)
        await trio.lowlevel.cancel_shielded_checkpoint()
        return sent

    async def log(self, level: str, data: JSON, *, logger: str | None = None) -> bool:
        """Send a log message (``notifications/message``), if the client asked for it.

        As the protocol says: in the 2026-07-28 era only when this request
        asked for logs (the client's ``log_level``) at ``level`` or below; in
        the initialize era unless the client set a more severe level with
        ``logging/setLevel``. Returns whether it was sent.

        Raises:
            ValueError: ``level`` is not one of ``"debug"``, ``"info"``,
                ``"notice"``, ``"warning"``, ``"error"``, ``"critical"``,
                ``"alert"``, ``"emergency"``.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; the levels are {list(LOG_LEVELS)}")
        if self._connection.server.era == "modern":
            wanted = self.log_level
            sent = wanted is not None
        else:
            wanted = self._connection.log_level
            sent = True
        if wanted is not None and wanted in LOG_LEVELS:
            sent = LOG_LEVELS.index(level) >= LOG_LEVELS.index(wanted)
        if sent:
            params: dict[str, JSON] = {"level": level, "data": data}
            if logger is not None:
                params["logger"] = logger
            self._connection.send_notification("notifications/message", params)
        await trio.lowlevel.cancel_shielded_checkpoint()
        return sent

    async def notify(self, method: str, params: Mapping[str, JSON] | None = None) -> None:
        """Send a notification that belongs to this request.

        For a ``subscriptions/listen`` request the notification carries the
        subscription id in ``_meta``, as the client expects of a listen
        stream (``notifications/tools/list_changed``, ...). Otherwise it is
        sent as given (the client gives it to this request's callback while
        it is the only request in flight).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        body = dict(params) if params is not None else {}
        if self.method == "subscriptions/listen":
            body["_meta"] = {**body.get("_meta", {}), SUBSCRIPTION_ID: self.id}
        self._connection.send_notification(method, body if body or params is not None else None)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def acknowledge(self, notifications: Mapping[str, JSON] | None = None) -> None:
        """Acknowledge a ``subscriptions/listen`` request (2026-07-28 era).

        Args:
            notifications: The filter the server will honour; by default the
                one the client asked for.
        """
        if self.method != "subscriptions/listen":
            raise RuntimeError(f"only a subscriptions/listen request is acknowledged, not {self.method}")
        wanted = self.params.get("notifications")
        honoured = dict(notifications) if notifications is not None else (wanted or {})
        await self.notify("notifications/subscriptions/acknowledged", {"notifications": honoured})

    # ------------------------------------------------------------ internals

    def _respond_now(self, result: object) -> None:
        if isinstance(result, InputRequiredResult):
            body = {**unstructure(result), "resultType": "input_required"}
        else:
            body = {} if result is None else _wire(result, "the result")
        if self._connection.server.era == "modern":
            body.setdefault("resultType", "complete")
            if self.method == "subscriptions/listen":
                meta = body.get("_meta")
                body["_meta"] = {**(meta if isinstance(meta, dict) else {}), SUBSCRIPTION_ID: self.id}
        self._answer({"jsonrpc": "2.0", "id": self.id, "result": body})

    def _error_now(self, code: int, message: str, data: JSON = None) -> None:
        error: dict[str, JSON] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._answer({"jsonrpc": "2.0", "id": self.id, "error": error})

    def _answer(self, response: dict[str, JSON]) -> None:
        if self.response is not None:
            raise RuntimeError(f"{self!r} was answered already")
        self._connection.send_message(response)
        self.response = response


# ------------------------------------------------------------------- server


@attrs.define(eq=False)
class _Reply:
    done: trio.Event = attrs.field(factory=trio.Event)
    result: dict[str, JSON] | None = None
    error: RpcError | None = None
    broken: bool = False


@attrs.frozen
class _Stderr:
    line: str


@attrs.frozen
class _Exit:
    code: int | None
    signal: int | None


_Out: TypeAlias = bytes | _Stderr | _Exit


class _Connection:
    """One connection of a `FakeServer`: what one server process would hold."""

    def __init__(self, server: FakeServer, transport: _FakeTransport) -> None:
        self.server = server
        self.transport = transport
        self.alive = True
        self.outgoing, self.incoming = trio.open_memory_channel[_Out](math.inf)
        self.requests: dict[tuple[bool, int | str], FakeRequest] = {}
        self.tasks: dict[tuple[bool, int | str], trio.CancelScope] = {}
        self.replies: dict[tuple[bool, int | str], _Reply] = {}
        self.next_id = 1
        self.log_level: str | None = None
        self.handler_errors: list[Exception] = []

    # ------------------------------------------------------------- sending

    def send(self, item: _Out) -> None:
        if not self.alive:
            raise trio.BrokenResourceError("the fake server's client has disconnected")
        self.outgoing.send_nowait(item)

    def send_message(self, message: Mapping[str, JSON]) -> None:
        self.send(encode(dict(message)))

    def send_notification(self, method: str, params: Mapping[str, JSON] | None) -> None:
        message: dict[str, JSON] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.send_message(message)

    # ----------------------------------------------------------- receiving

    def receive(self, data: bytes) -> None:
        """Take one line the client wrote (called synchronously by the transport)."""
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.server.received.append({"unparsable": data})
            return
        self.server.received.append(message)
        if not isinstance(message, dict):
            return
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            request = FakeRequest(self, message)
            self.requests[_key(request.id)] = request
            self.server.requests.append(request)
            self.server._dispatch(self, request)
        elif isinstance(method, str):
            if method == "notifications/cancelled":
                params = message.get("params")
                request_id = params.get("requestId") if isinstance(params, dict) else None
                if isinstance(request_id, int | str) and not isinstance(request_id, bool):
                    key = _key(request_id)
                    cancelled = self.requests.get(key)
                    if cancelled is not None:
                        cancelled._cancelled.set()
                    scope = self.tasks.get(key)
                    if scope is not None:
                        scope.cancel()
        else:
            request_id = message.get("id")
            if isinstance(request_id, int | str) and not isinstance(request_id, bool):
                reply = self.replies.pop(_key(request_id), None)
                if reply is not None:
                    error = message.get("error")
                    if isinstance(error, dict):
                        reply.error = RpcError(
                            error.get("code", INTERNAL_ERROR), error.get("message", ""), error.get("data")
                        )
                    else:
                        result = message.get("result")
                        reply.result = result if isinstance(result, dict) else {}
                    reply.done.set()

    # ------------------------------------------------------------ handlers

    def start_handler(self, handler: Callable[[FakeRequest], Any], request: FakeRequest) -> None:
        nursery = self.transport._nursery
        assert nursery is not None
        # Shielded like a process of its own: only the client's cancellation
        # of the request, a disconnection or an exit stop it.
        scope = trio.CancelScope(shield=True)
        self.tasks[_key(request.id)] = scope
        nursery.start_soon(self._run_handler, handler, request, scope, name=f"fake-server:{request.method}")

    async def _run_handler(
        self, handler: Callable[[FakeRequest], Any], request: FakeRequest, scope: trio.CancelScope
    ) -> None:
        with scope:
            try:
                outcome = handler(request)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
                if outcome is None:
                    if not request.answered:
                        raise TypeError(f"the handler of {request!r} returned None without answering it")
                elif request.answered:
                    raise TypeError(f"the handler of {request!r} answered it and returned a value too")
                elif isinstance(outcome, str) and request.method == "tools/call":
                    request._respond_now({"content": [{"type": "text", "text": outcome}]})
                else:
                    request._respond_now(outcome)
            except RpcError as exc:
                if not request.answered and self.alive:
                    request._error_now(exc.code, exc.message, exc.data)
            except Exception as exc:
                if isinstance(exc, trio.BrokenResourceError) and not self.alive:
                    return  # it answered a client that has gone: no bug of the test's
                self.handler_errors.append(exc)
                if not request.answered and self.alive:
                    request._error_now(INTERNAL_ERROR, f"the fake server's handler raised {exc!r}")
        self.tasks.pop(_key(request.id), None)

    # -------------------------------------------------------------- ending

    def stop(self) -> None:
        """The process is gone: no more sending, handlers stop, the server's requests fail."""
        self.alive = False
        for scope in self.tasks.values():
            scope.cancel()
        replies, self.replies = self.replies, {}
        for reply in replies.values():
            reply.broken = True
            reply.done.set()
        self.server._disconnected(self)


class FakeServer:
    """A scripted MCP server in memory, for testing the code that uses a `trio_mcp.Client`.

    Connect a client with `open_fake_client` (or a transport with
    `open_fake_transport`). A fake serves one connection at a time, and may
    be connected again after one ends (a restarted server); `received` and
    `requests` span every connection.

    Answered by the fake itself (a handler registered for the same request
    takes precedence):

    * the handshake: ``server/discover`` (2026-07-28 era: a
      ``DiscoverResult``; initialize era: ``-32601``) and ``initialize``
      (initialize era: an ``InitializeResult`` at the version the client
      offered; 2026-07-28 era: ``-32022``), unless ``handshake=False``;
    * initialize era: ``ping`` and ``logging/setLevel``;
    * ``tools/list``, ``prompts/list``, ``resources/list`` and
      ``resources/templates/list``, in one page, when the constructor was
      given `tools`, `prompts`, `resources` or `resource_templates`
      (lists you may change during the test).

    Other requests are answered by the handlers registered with `on_tool`
    and `on_request`, or else wait for the test: `receive_request`.

    Args:
        era: ``"modern"`` (2026-07-28) or ``"legacy"`` (the initialize era).
        tools: Tools for ``tools/list``: names, wire dicts or
            `trio_mcp.Tool` objects (a name alone gets an empty object
            schema).
        prompts: Prompts for ``prompts/list``: names, dicts or `trio_mcp.Prompt`.
        resources: Resources for ``resources/list``: URIs, dicts or
            `trio_mcp.Resource`.
        resource_templates: For ``resources/templates/list``: URI
            templates, dicts or `trio_mcp.ResourceTemplate`.
        capabilities: The ``ServerCapabilities`` to declare, as a dict or
            `trio_mcp.ServerCapabilities`. By default they follow from the
            description and the handlers: ``tools``, ``prompts``,
            ``resources`` when there is something of the kind, and
            ``logging`` in the initialize era.
        server_info: ``(name, version)``, a dict or an `trio_mcp.Implementation`.
        instructions: The server's instructions, if any.
        protocol_version: The version the server speaks. 2026-07-28 era:
            its only supported version (default ``"2026-07-28"``); initialize
            era: the version ``initialize`` answers with (default: the one the
            client offered, when it is an initialize-era version, else
            ``"2025-11-25"``).
        ttl_ms: The ``ttlMs`` of the fake's own discover and list results
            (2026-07-28 era); 0, the default, means the client caches nothing.
        handshake: Answer the handshake automatically. With `False`,
            ``server/discover`` and ``initialize`` come to the test like any
            other request (run the script in a task of its own, since the
            client's ``async with`` waits for the handshake).

    Attributes:
        era: ``"modern"`` or ``"legacy"``.
        received: Every message the client sent, decoded, in order (requests,
            notifications, answers to `send_request`).
        requests: Every request the client sent, as `FakeRequest` objects,
            in order, whoever answered them.
    """

    def __init__(
        self,
        *,
        era: Literal["modern", "legacy"] = "modern",
        tools: Sequence[str | Mapping[str, JSON] | object] | None = None,
        prompts: Sequence[str | Mapping[str, JSON] | object] | None = None,
        resources: Sequence[str | Mapping[str, JSON] | object] | None = None,
        resource_templates: Sequence[str | Mapping[str, JSON] | object] | None = None,
        capabilities: Mapping[str, JSON] | object | None = None,
        server_info: tuple[str, str] | Mapping[str, JSON] | Implementation = ("fake-server", __version__),
        instructions: str | None = None,
        protocol_version: str | None = None,
        ttl_ms: int = 0,
        handshake: bool = True,
    ) -> None:
        if era not in ("modern", "legacy"):
            raise ValueError(f"era must be 'modern' or 'legacy', not {era!r}")
        self.era: Literal["modern", "legacy"] = era
        self.tools = _described(tools, "tools", "name")
        """The tools ``tools/list`` answers with (wire dicts), or `None` to leave ``tools/list`` to the test."""
        self.prompts = _described(prompts, "prompts", "name")
        """The prompts ``prompts/list`` answers with, or `None`."""
        self.resources = _described(resources, "resources", "uri")
        """The resources ``resources/list`` answers with, or `None`."""
        self.resource_templates = _described(resource_templates, "resource_templates", "uriTemplate")
        """The templates ``resources/templates/list`` answers with, or `None`."""
        self._capabilities = None if capabilities is None else _wire(capabilities, "capabilities")
        if isinstance(server_info, tuple):
            name, version = server_info
            info: dict[str, JSON] = {"name": name, "version": version}
        else:
            info = _wire(server_info, "server_info")
        self.server_info = info
        """The server's ``Implementation``, as a dict."""
        self.instructions = instructions
        """The server's instructions, or `None`."""
        self._version = protocol_version
        self.ttl_ms = ttl_ms
        """The ``ttlMs`` of the fake's own results (2026-07-28 era)."""
        self.handshake = handshake
        """Whether the fake answers ``server/discover`` and ``initialize`` itself."""

        self.received: list[JSON] = []
        self.requests: list[FakeRequest] = []
        self._tool_handlers: dict[str, Callable[[FakeRequest], Any]] = {}
        self._handlers: dict[str, Callable[[FakeRequest], Any]] = {}
        self._queue: deque[FakeRequest] = deque()
        self._arrivals = trio.lowlevel.ParkingLot()
        self._connection: _Connection | None = None
        self._last_log_level: str | None = None

    def __repr__(self) -> str:
        state = "connected" if self.connected else "not connected"
        return f"<FakeServer {self.server_info.get('name')!r} era={self.era} {state}>"

    @property
    def name(self) -> str:
        """The server's name (from ``server_info``)."""
        name = self.server_info.get("name")
        return name if isinstance(name, str) else "fake-server"

    @property
    def connected(self) -> bool:
        """Whether a client is connected (and the server has not exited)."""
        return self._connection is not None and self._connection.alive

    @property
    def log_level(self) -> str | None:
        """The level the client set with ``logging/setLevel`` (initialize era), or `None`."""
        return self._connection.log_level if self._connection is not None else self._last_log_level

    @property
    def capabilities(self) -> dict[str, JSON]:
        """The ``ServerCapabilities`` the handshake declares (see the constructor)."""
        if self._capabilities is not None:
            return dict(self._capabilities)
        caps: dict[str, JSON] = {}
        if self.tools is not None or self._tool_handlers or "tools/call" in self._handlers:
            caps["tools"] = {}
        if self.prompts is not None or "prompts/get" in self._handlers:
            caps["prompts"] = {}
        if (
            self.resources is not None
            or self.resource_templates is not None
            or "resources/read" in self._handlers
        ):
            caps["resources"] = {}
        if "completion/complete" in self._handlers:
            caps["completions"] = {}
        if self.era == "legacy":
            caps["logging"] = {}
        return caps

    # ---------------------------------------------------------- handlers

    def on_tool(self, name: str, handler: Callable[[FakeRequest], Any]) -> None:
        """Answer every ``tools/call`` of tool ``name`` with ``handler``.

        ``handler(request)`` is a function or an async function, run in a
        task of its own for each call. What it returns is the result: a
        dict, a `trio_mcp.CallToolResult`, or a string (a result with that
        one text block). It may instead answer with the request's methods
        (for example `FakeRequest.input_required`) and return `None`, and
        it may send progress and logs first. Raise `trio_mcp.RpcError` to
        answer with an error. Any other exception is taken for a bug in the
        test: the client gets a ``-32603`` error, and the exception is raised
        again when the fake client's ``async with`` block ends.

        The client's ``notifications/cancelled`` for the request cancels the
        handler (a handler that waits on `trio.sleep_forever` is a tool that
        never finishes).
        """
        self._tool_handlers[name] = handler

    def on_request(self, method: str, handler: Callable[[FakeRequest], Any]) -> None:
        """Answer every request of ``method`` with ``handler``, as `on_tool` does.

        Takes precedence over the fake's own answers (the handshake, lists),
        but not over `on_tool` for the tools it names.
        """
        self._handlers[method] = handler

    # ---------------------------------------------------------- scripting

    async def receive_request(self) -> FakeRequest:
        """Wait for the next request that no handler or rule answered, and return it.

        Requests arrive in the order the client sent them. Guard the wait
        with `trio.fail_after` in case the request never comes; under an
        autojumping `trio.testing.MockClock` that costs nothing.
        """
        await trio.lowlevel.checkpoint()
        while not self._queue:
            await self._arrivals.park()
        return self._queue.popleft()

    async def expect_request(self, method: str, *, name: str | None = None) -> FakeRequest:
        """`receive_request`, asserting what comes.

        Raises:
            AssertionError: The next request is not of ``method`` (or, with
                ``name``, not for that tool or prompt).
        """
        request = await self.receive_request()
        if request.method != method or (name is not None and request.name != name):
            wanted = method if name is None else f"{method} {name!r}"
            raise AssertionError(f"expected a {wanted} request, got {request!r}: {request.params!r}")
        return request

    async def notify(self, method: str, params: Mapping[str, JSON] | None = None) -> None:
        """Send the client a notification.

        Raises:
            trio.BrokenResourceError: No client is connected.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._live().send_notification(method, params)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def send_request(self, method: str, params: Mapping[str, JSON] | object = None) -> dict[str, JSON]:
        """Send the client a request and return its answer (initialize era).

        This is how initialize-era servers ask for input: the client answers
        ``elicitation/create``, ``sampling/createMessage`` and ``roots/list``
        through its hooks (or with an error when it has none). ``ping`` is
        answered by the transport. ::

            answer = await server.send_request(
                "elicitation/create",
                {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {}}},
            )

        Cancelling the call withdraws the request: the client is sent
        ``notifications/cancelled`` and sends no answer.

        Args:
            method: The method.
            params: The params: a dict or a trio_mcp model (such as
                `trio_mcp.ElicitFormParams`), or `None` for none.

        Raises:
            trio_mcp.RpcError: The client answered with an error.
            trio.BrokenResourceError: No client is connected, or it
                disconnected before answering.
            RuntimeError: The server speaks the 2026-07-28 era, where servers
                send no requests (use `FakeRequest.input_required`).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self.era == "modern":
            raise RuntimeError(
                "servers send no requests in the 2026-07-28 era; ask for input with"
                " FakeRequest.input_required"
            )
        connection = self._live()
        request_id = connection.next_id
        connection.next_id += 1
        message: dict[str, JSON] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = _wire(params, "params")
        reply = _Reply()
        connection.replies[_key(request_id)] = reply
        connection.send_message(message)
        try:
            await reply.done.wait()
        except BaseException:
            if connection.replies.pop(_key(request_id), None) is not None and connection.alive:
                connection.send_notification(
                    "notifications/cancelled", {"requestId": request_id, "reason": "withdrawn by the server"}
                )
            raise
        if reply.broken:
            raise trio.BrokenResourceError(f"the client disconnected before answering {method}")
        if reply.error is not None:
            raise reply.error
        assert reply.result is not None
        return reply.result

    async def send_message(self, message: Mapping[str, JSON]) -> None:
        """Send the client any JSON-RPC message, as given (for testing odd servers)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        self._live().send_message(message)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def send_raw(self, data: bytes) -> None:
        """Write ``data`` to the client as the server's stdout, byte for byte.

        For testing garbage: a banner line, half a message, a line over
        ``max_message_bytes``. Messages end with ``b"\\n"``.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._live().send(bytes(data))
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def write_stderr(self, text: str) -> None:
        """Write lines to the server's stderr (the client's ``on_stderr``, `trio_mcp.ServerGone`'s tail)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        connection = self._live()
        for line in text.removesuffix("\n").split("\n"):
            connection.send(_Stderr(line))
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def exit(self, code: int | None = 1, *, signal: int | None = None) -> None:
        """Make the server die, with exit status ``code`` or killed by ``signal``.

        What the server wrote before reaches the client first; then every
        request in flight, and every later one, fails with
        `trio_mcp.ServerGone` (its ``exit_code``, ``signal`` and
        ``stderr_tail`` as given). Handlers stop, and the requests of this
        connection can no longer be answered. The fake may then be
        connected again, as a restarted server.

        Raises:
            trio.BrokenResourceError: No client is connected.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        connection = self._live()
        connection.outgoing.send_nowait(_Exit(None if signal is not None else code, signal))
        connection.stop()
        await trio.lowlevel.cancel_shielded_checkpoint()

    # ------------------------------------------------------------ internals

    def _live(self) -> _Connection:
        connection = self._connection
        if connection is None or not connection.alive:
            raise trio.BrokenResourceError("no client is connected to the fake server")
        return connection

    def _connect(self, transport: _FakeTransport) -> _Connection:
        if self._connection is not None and self._connection.alive:
            raise RuntimeError("this FakeServer already has a client; it serves one at a time")
        connection = self._connection = _Connection(self, transport)
        return connection

    def _disconnected(self, connection: _Connection) -> None:
        # Requests nobody took are void: they can no longer be answered.
        self._queue = deque(request for request in self._queue if request._connection is not connection)
        if self._connection is connection:
            self._last_log_level = connection.log_level
            self._connection = None

    def _dispatch(self, connection: _Connection, request: FakeRequest) -> None:
        handler = None
        if request.method == "tools/call" and request.name is not None:
            handler = self._tool_handlers.get(request.name)
        if handler is None:
            handler = self._handlers.get(request.method)
        if handler is not None:
            connection.start_handler(handler, request)
            return
        rule = self._rule(connection, request)
        if rule is not None:
            try:
                result = rule(request)
            except RpcError as exc:
                request._error_now(exc.code, exc.message, exc.data)
            else:
                request._respond_now(result)
            return
        self._queue.append(request)
        self._arrivals.unpark_all()

    def _rule(
        self, connection: _Connection, request: FakeRequest
    ) -> Callable[[FakeRequest], dict[str, JSON]] | None:
        method = request.method
        if self.handshake and method == "server/discover":
            return self._discover
        if self.handshake and method == "initialize":
            return self._initialize
        if self.era == "legacy" and method == "ping":
            return lambda _: {}
        if self.era == "legacy" and method == "logging/setLevel":

            def set_level(request: FakeRequest) -> dict[str, JSON]:
                level = request.params.get("level")
                if level not in LOG_LEVELS:
                    raise RpcError(-32602, f"unknown log level {level!r}")
                connection.log_level = level
                return {}

            return set_level
        listed = {
            "tools/list": ("tools", self.tools),
            "prompts/list": ("prompts", self.prompts),
            "resources/list": ("resources", self.resources),
            "resources/templates/list": ("resourceTemplates", self.resource_templates),
        }.get(method)
        if listed is None or listed[1] is None:
            return None
        key, items = listed[0], listed[1]

        def answer_list(_: FakeRequest) -> dict[str, JSON]:
            return {key: list(items), **self._cache_fields()}

        return answer_list

    def _cache_fields(self) -> dict[str, JSON]:
        if self.era == "modern":
            return {"ttlMs": self.ttl_ms, "cacheScope": "public"}
        return {}

    def _discover(self, request: FakeRequest) -> dict[str, JSON]:
        if self.era == "legacy":
            raise RpcError(METHOD_NOT_FOUND, "Method not found: server/discover")
        supported = [self._version or MODERN_VERSIONS[0]]
        requested = request.meta.get(PROTOCOL_VERSION)
        if requested not in supported:
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": supported, "requested": requested},
            )
        result: dict[str, JSON] = {
            "supportedVersions": supported,
            "capabilities": self.capabilities,
            "_meta": {SERVER_INFO: dict(self.server_info)},
            **self._cache_fields(),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _initialize(self, request: FakeRequest) -> dict[str, JSON]:
        offered = request.params.get("protocolVersion")
        if self.era == "modern":
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": [self._version or MODERN_VERSIONS[0]], "requested": offered},
            )
        if self._version is not None:
            version = self._version
        elif isinstance(offered, str) and offered in LEGACY_VERSIONS:
            version = offered
        else:
            version = LEGACY_VERSIONS[0]
        result: dict[str, JSON] = {
            "protocolVersion": version,
            "capabilities": self.capabilities,
            "serverInfo": dict(self.server_info),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result


# ---------------------------------------------------------------- transport


class _FakeTransport(StdioTransport):
    """A `StdioTransport` whose "process" is a `FakeServer` in memory.

    Only the process I/O differs: lines the client writes go straight to the
    fake (synchronously, in order), and the fake's lines are read by one task
    in the transport's nursery, through the same framing and dispatch as a
    pipe's. Closing stops the fake's handlers and leaves nothing running.
    """

    def __init__(self, server: FakeServer, **options: Any) -> None:
        super().__init__(server.name, **options)
        self._server = server
        self._link: _Connection | None = None

    async def _open_io(self) -> None:
        await trio.lowlevel.checkpoint()
        self._link = self._server._connect(self)

    def _start_io_tasks(self) -> None:
        self._spawn_task(self._read_fake_stdout)

    async def _read_fake_stdout(self) -> None:
        link = self._link
        assert link is not None
        framer = LineFramer(self.max_message_bytes)
        handle = self._handle_line
        async for item in link.incoming:
            if isinstance(item, bytes):
                for line in framer.feed(item):
                    handle(line)
            elif isinstance(item, _Stderr):
                self._stderr_line(item.line.encode())
            else:
                for line in framer.eof():
                    handle(line)
                self._fake_exit(item)
                return

    def _fake_exit(self, end: _Exit) -> None:
        if self._closing or self._failure is not None:
            return
        if end.signal is not None:
            error = ServerGone(
                f"server {self.command!r} was killed by {_signal_name(end.signal)}",
                signal=end.signal,
                stderr_tail=self.stderr_tail,
            )
        else:
            error = ServerGone(
                f"server {self.command!r} exited with code {end.code}",
                exit_code=end.code,
                stderr_tail=self.stderr_tail,
            )
        self._log(str(error).split("\n", 1)[0])
        self._fail(error)

    def _write(self, data: bytes, owner: int | None) -> None:
        link = self._link
        if self._write_broken or link is None or not link.alive:
            return
        link.receive(data.removesuffix(b"\n"))

    async def _terminate(self) -> None:
        self._write_broken = True
        self._queue.clear()
        link = self._link
        if link is not None and link.alive:
            link.stop()
        await trio.lowlevel.checkpoint()

    async def _release_io(self) -> None:
        link = self._link
        if link is not None:
            link.outgoing.close()
            link.incoming.close()
        await trio.lowlevel.checkpoint()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        result = await super().__aexit__(exc_type, exc, tb)
        errors = self._link.handler_errors if self._link is not None else []
        if errors:
            if exc is None:
                raise errors[0]
            for error in errors:
                exc.add_note(f"(a handler of the fake server raised {error!r})")
        return result


def open_fake_transport(
    server: FakeServer,
    *,
    on_stderr: Callable[[str], object] | None = None,
    on_log: Callable[[str], object] | None = None,
    on_notification: NotificationCallback | None = None,
    on_request: Callable[[str, JSON], Awaitable[dict[str, JSON] | None]] | None = None,
    request_timeout: float | None = 60.0,
    max_message_bytes: int = 64 * 1024 * 1024,
    notification_buffer: int = 256,
    stderr_tail_bytes: int = 8 * 1024,
) -> StdioTransport:
    """A `trio_mcp.StdioTransport` connected to ``server`` in memory.

    Use it as `trio_mcp.open_stdio_transport` is used (``async with``), for
    code that takes a transport, or to wrap it in `trio_mcp.open_client`
    yourself. The options are those of `trio_mcp.open_stdio_transport`; the
    process options have no meaning here. Leaving the block disconnects the
    fake; then any exception a handler raised is raised.
    """
    return _FakeTransport(
        server,
        on_stderr=on_stderr,
        on_log=on_log,
        on_notification=on_notification,
        on_request=on_request,
        request_timeout=request_timeout,
        max_message_bytes=max_message_bytes,
        notification_buffer=notification_buffer,
        stderr_tail_bytes=stderr_tail_bytes,
    )


@asynccontextmanager
async def open_fake_client(
    server: FakeServer,
    *,
    on_stderr: Callable[[str], object] | None = None,
    on_log: Callable[[str], object] | None = None,
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
    """Connect a real `trio_mcp.Client` to ``server``; the ``async with`` owns the connection.

    ::

        async with open_fake_client(server, on_elicitation=answer) as client:
            result = await client.call_tool("ask")

    The options are those of `trio_mcp.open_stdio_client`, without the
    process ones: the client negotiates the era with the fake, as with a
    real server, and hooks, timeouts, caching and notifications behave the
    same. Leaving the block disconnects the fake (its handlers stop); then
    an exception raised by one of its handlers, if any, is raised.

    Raises:
        RuntimeError: ``server`` already has a client.
        trio_mcp.VersionMismatch: ``protocol`` names a version of the other era.
    """
    transport = open_fake_transport(
        server,
        on_stderr=on_stderr,
        on_log=on_log,
        request_timeout=request_timeout,
        max_message_bytes=max_message_bytes,
    )
    async with (
        transport,
        open_client(
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
        ) as client,
    ):
        yield client
