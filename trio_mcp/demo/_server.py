"""The demo server's engine: one connection, both eras, requests served concurrently.

`serve` reads lines from a receive stream, feeds them to the sans-io
`~trio_mcp._protocol.Connection` (used here from the server's side: the
client's requests arrive as ``ServerRequest`` events), and runs each request
in its own task. Everything written goes through one writer task, so that
lines never interleave and a cancelled handler never leaves half a line.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import trio

from .._core.eras import (
    CLIENT_CAPABILITIES,
    LOG_LEVEL,
    LOG_LEVELS,
    MISSING_CLIENT_CAPABILITY,
    PROTOCOL_VERSION,
    SERVER_INFO,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from .._core.framing import LineFramer, Oversized, clean_line
from .._core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Answered,
    Connection,
    Diagnostic,
    Failed,
    Note,
    Send,
    ServerRequest,
    ServerRequestCancelled,
    encode,
)
from . import _features as F

if TYPE_CHECKING:
    from .._core.jsonrpc import RequestId

__all__ = ["serve"]

JSON: TypeAlias = Any
Era: TypeAlias = Literal["modern", "legacy"]
Log: TypeAlias = Callable[[str], object]

MCP_PREFIX: Final = "io.modelcontextprotocol/"

INVALID_REQUEST: Final = -32600
RESOURCE_NOT_FOUND: Final = -32002

#: The longest line read whole; longer ones are dropped.
MAX_LINE: Final = 16 * 1024 * 1024
#: Seconds in-flight requests get to finish once the input ends.
EOF_GRACE: Final = 2.0
#: Seconds the answers still queued get to be written at the end.
DRAIN_GRACE: Final = 2.0
#: Lines queued for the writer before handlers wait (backpressure).
OUTPUT_BUFFER: Final = 64


def _quiet(text: str) -> None:
    pass


class RpcFailure(Exception):
    """Answer the request with this JSON-RPC error."""

    def __init__(self, code: int, message: str, data: JSON = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class _NoAnswer(Exception):
    """A request of ours to the client got no usable answer."""


class _Reply:
    """The answer to one of our requests to the client, once it comes."""

    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.result: dict[str, JSON] = {}
        self.error: str | None = None


class _Call:
    """One request being served, with what its era says about it."""

    __slots__ = ("caps", "era", "log_floor", "method", "params", "request_id", "token", "version")

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        params: dict[str, JSON],
        era: Era,
        version: str,
        *,
        caps: dict[str, JSON] | None = None,
        log_floor: int | None = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params
        self.era = era
        self.version = version
        self.caps = caps if caps is not None else {}
        self.log_floor = log_floor
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        valid = (isinstance(token, int) and not isinstance(token, bool)) or isinstance(token, str)
        self.token: int | str | None = token if valid else None


Handler: TypeAlias = Callable[[_Call], Awaitable[dict[str, JSON]]]


def _key(request_id: RequestId) -> tuple[bool, RequestId]:
    # 1 and "1" are different ids.
    return (isinstance(request_id, str), request_id)


def _arguments(call: _Call, what: str) -> dict[str, JSON]:
    """The request's ``arguments`` object (none given: an empty one)."""
    arguments = call.params.get("arguments")
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise RpcFailure(INVALID_PARAMS, f"{what} arguments must be an object")
    return arguments


def _text(text: str, *, is_error: bool = False) -> dict[str, JSON]:
    result: dict[str, JSON] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


class _Server:
    def __init__(self, output: trio.MemorySendChannel[bytes], log: Log) -> None:
        self._conn = Connection()
        self._out = output
        self._log = log
        self._era: Era | None = None
        # Initialize era: the negotiated version, the client's capabilities,
        # the session's log level (None: no logs until logging/setLevel).
        self._version = F.MODERN
        self._client_caps: dict[str, JSON] = {}
        self._log_floor: int | None = None
        self._initialized = trio.Event()
        self._handlers: dict[tuple[bool, RequestId], trio.CancelScope] = {}
        self._replies: dict[int, _Reply] = {}
        self._input_closed = False
        common: dict[str, Handler] = {
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "completion/complete": self._complete,
        }
        self._modern: dict[str, Handler] = {**common, "server/discover": self._discover}
        self._legacy: dict[str, Handler] = {**common, "logging/setLevel": self._set_level}

    # ----------------------------------------------------------- reading

    async def run(self, stream: trio.abc.ReceiveStream, eof_grace: float) -> None:
        async with trio.open_nursery() as work:
            framer = LineFramer(MAX_LINE)
            while True:
                try:
                    data = bytes(await stream.receive_some())
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                for line in framer.feed(data) if data else framer.eof():
                    await self._receive(line, work)
                if not data:
                    break
            self._input_ended()
            # Requests in flight get a little time to finish; then they are
            # cancelled (and answer nothing).
            work.cancel_scope.deadline = trio.current_time() + eof_grace

    def _input_ended(self) -> None:
        self._log("end of input")
        self._input_closed = True
        # An ask waiting for notifications/initialized now fails at once.
        self._initialized.set()
        replies, self._replies = self._replies, {}
        for request_id, reply in replies.items():
            self._conn.abandon(request_id)
            reply.error = "the client closed its input before answering"
            reply.done.set()

    async def _receive(self, line: bytes | Oversized, work: trio.Nursery) -> None:
        if isinstance(line, bytes):
            line = clean_line(line)
            if not line:
                return
        for event in self._conn.receive_line(line):
            if isinstance(event, ServerRequest):
                await self._accept(event, work)
            elif isinstance(event, ServerRequestCancelled):
                scope = self._handlers.get(_key(event.request_id))
                if scope is not None:
                    self._log(f"request {event.request_id!r} cancelled by the client")
                    scope.cancel()
            elif isinstance(event, Answered | Failed):
                reply = self._replies.pop(event.request_id, None)
                if reply is not None:
                    if isinstance(event, Answered):
                        reply.result = event.result
                    else:
                        reply.error = str(event.error)
                    reply.done.set()
            elif isinstance(event, Note):
                self._notification(event.message)
            elif isinstance(event, Send):
                await self._emit(event.data)
            else:
                assert isinstance(event, Diagnostic)
                # The core words its diagnostics for a client reading a server's stdout.
                self._log(event.text.replace("a stdout line", "an input line"))

    def _notification(self, message: dict[str, JSON]) -> None:
        method = message.get("method")
        if method == "notifications/initialized" and self._era == "legacy":
            self._initialized.set()
        elif method != "notifications/cancelled":
            self._log(f"ignored the notification {method!r}")

    # --------------------------------------------------------- admission

    async def _accept(self, request: ServerRequest, work: trio.Nursery) -> None:
        key = _key(request.request_id)
        if key in self._handlers:
            self._log(f"ignored request {request.request_id!r}: a request with that id is in progress")
            return
        try:
            admitted = self._admit(request)
        except RpcFailure as failure:
            self._log(f"refused {request.method!r} (id {request.request_id!r}): {failure.message}")
            line = self._conn.respond_error(request.request_id, failure.code, failure.message, failure.data)
            if line is not None:
                await self._emit(line)
            return
        if isinstance(admitted, dict):
            # initialize: answered here, before any later request is read.
            line = self._conn.respond(request.request_id, admitted)
            if line is not None:
                await self._emit(line)
            return
        call, handler = admitted
        scope = trio.CancelScope()
        self._handlers[key] = scope
        work.start_soon(self._serve, call, handler, scope, key, name=f"demo:{request.method}")

    def _admit(self, request: ServerRequest) -> tuple[_Call, Handler] | dict[str, JSON]:
        """Decide, in arrival order, how a request is served; the first one chooses the era.

        Returns the handler to run, or the result itself for ``initialize``.
        """
        method = request.method
        params = request.params if request.params is not None else {}
        if not isinstance(params, dict):
            raise RpcFailure(INVALID_PARAMS, "params must be an object")
        raw_meta = params.get("_meta")
        meta: dict[str, JSON] = raw_meta if isinstance(raw_meta, dict) else {}
        envelope = PROTOCOL_VERSION in meta
        if method == "initialize":
            if self._era == "modern":
                requested = params.get("protocolVersion")
                raise RpcFailure(
                    UNSUPPORTED_PROTOCOL_VERSION,
                    f"this connection speaks protocol version {F.MODERN}, which has no initialize",
                    {"supported": [F.MODERN], "requested": requested if isinstance(requested, str) else ""},
                )
            if self._era == "legacy":
                raise RpcFailure(INVALID_REQUEST, "initialize was already done on this connection")
            return self._initialize(params)
        if self._era is None:
            if envelope:
                self._era = "modern"
                self._conn.answers_ping = False  # this era has no ping: -32601 like any unknown method
                self._log(f"protocol era: {F.MODERN} (the first request carries its _meta envelope)")
            elif method == "server/discover" or any(key.startswith(MCP_PREFIX) for key in meta):
                raise RpcFailure(INVALID_PARAMS, f"missing required _meta key {PROTOCOL_VERSION!r}")
            else:
                raise RpcFailure(
                    INVALID_REQUEST,
                    "send initialize first (initialize era), or give every request the _meta envelope"
                    f" of protocol version {F.MODERN}",
                )
        if self._era == "modern":
            call = self._modern_call(request.request_id, method, params, meta)
            handler = self._modern.get(method)
        else:
            if envelope:
                raise RpcFailure(
                    INVALID_REQUEST,
                    f"this connection uses the initialize era (protocol version {self._version});"
                    f" requests may not carry the {F.MODERN} _meta envelope",
                )
            call = _Call(request.request_id, method, params, "legacy", self._version)
            handler = self._legacy.get(method)
        if handler is None:
            raise RpcFailure(METHOD_NOT_FOUND, f"method not found: {method}")
        return call, handler

    def _modern_call(
        self, request_id: RequestId, method: str, params: dict[str, JSON], meta: dict[str, JSON]
    ) -> _Call:
        missing = [key for key in (PROTOCOL_VERSION, CLIENT_CAPABILITIES) if key not in meta]
        if missing:
            raise RpcFailure(INVALID_PARAMS, f"missing required _meta key(s): {', '.join(missing)}")
        version = meta[PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise RpcFailure(INVALID_PARAMS, f"{PROTOCOL_VERSION} must be a string")
        if version != F.MODERN:
            raise RpcFailure(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"unsupported protocol version {version!r}",
                {"supported": [F.MODERN], "requested": version},
            )
        caps = meta[CLIENT_CAPABILITIES]
        if not isinstance(caps, dict):
            raise RpcFailure(INVALID_PARAMS, f"{CLIENT_CAPABILITIES} must be an object")
        floor: int | None = None
        if LOG_LEVEL in meta:
            level = meta[LOG_LEVEL]
            if level not in F.SEVERITY:
                raise RpcFailure(
                    INVALID_PARAMS, f"unknown log level {level!r}; use one of {list(LOG_LEVELS)}"
                )
            floor = F.SEVERITY[level]
        return _Call(request_id, method, params, "modern", F.MODERN, caps=caps, log_floor=floor)

    def _initialize(self, params: dict[str, JSON]) -> dict[str, JSON]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RpcFailure(INVALID_PARAMS, "initialize needs a protocolVersion (a string)")
        version = requested if requested in F.LEGACY else F.LEGACY[0]
        caps = params.get("capabilities")
        self._era = "legacy"
        self._version = version
        self._client_caps = caps if isinstance(caps, dict) else {}
        self._log(f"protocol era: initialize, version {version} (the client asked for {requested!r})")
        return {
            "protocolVersion": version,
            "capabilities": F.capabilities(version),
            "serverInfo": F.server_info(version),
            "instructions": F.INSTRUCTIONS,
        }

    # ----------------------------------------------------------- serving

    async def _serve(
        self, call: _Call, handler: Handler, scope: trio.CancelScope, key: tuple[bool, RequestId]
    ) -> None:
        try:
            with scope:
                try:
                    result = await handler(call)
                except RpcFailure as failure:
                    self._log(f"{call.method} (id {call.request_id!r}) failed: {failure.message}")
                    line = self._conn.respond_error(
                        call.request_id, failure.code, failure.message, failure.data
                    )
                except Exception as exc:
                    self._log(f"{call.method} failed:\n{''.join(traceback.format_exception(exc))}")
                    line = self._conn.respond_error(
                        call.request_id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}"
                    )
                else:
                    line = self._conn.respond(call.request_id, self._stamp(call, result))
                if line is not None:
                    await self._emit(line)
        finally:
            self._handlers.pop(key, None)

    def _stamp(self, call: _Call, result: dict[str, JSON]) -> dict[str, JSON]:
        """A result as the era wants it: 2026-07-28 results carry resultType and serverInfo."""
        if call.era == "modern":
            result.setdefault("resultType", "complete")
            meta = result.setdefault("_meta", {})
            meta[SERVER_INFO] = F.server_info(F.MODERN)
        return result

    def _cacheable(self, call: _Call, result: dict[str, JSON]) -> dict[str, JSON]:
        if call.era == "modern":
            result["ttlMs"] = F.TTL_MS
            result["cacheScope"] = "public"
        return result

    async def _emit(self, line: bytes) -> None:
        try:
            await self._out.send(line)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            # The output is gone; the whole server is being cancelled.
            await trio.lowlevel.checkpoint()

    async def _notify(self, method: str, params: dict[str, JSON]) -> None:
        await self._emit(encode({"jsonrpc": "2.0", "method": method, "params": params}))

    async def _log_message(self, call: _Call, level: str, text: str) -> None:
        """Send a log message, if the request (2026-07-28) or the session asked for this level."""
        floor = call.log_floor if call.era == "modern" else self._log_floor
        if floor is not None and F.SEVERITY[level] >= floor:
            await self._notify("notifications/message", {"level": level, "logger": F.NAME, "data": text})

    async def _progress(self, call: _Call, progress: int, total: int, message: str) -> None:
        if call.token is None:
            return
        params: dict[str, JSON] = {"progressToken": call.token, "progress": progress, "total": total}
        if call.version >= "2025-03-26":
            params["message"] = message
        await self._notify("notifications/progress", params)

    async def _ask_client(self, method: str, params: dict[str, JSON]) -> dict[str, JSON]:
        """Send a request to the client (initialize era) and return its result.

        Cancelled while waiting, the request is withdrawn with
        ``notifications/cancelled``.

        Raises:
            _NoAnswer: The client answered with an error, or closed its input.
        """
        if self._input_closed:
            raise _NoAnswer("the client closed its input")
        request_id, line = self._conn.start_request(method, params)
        reply = _Reply()
        self._replies[request_id] = reply
        sent = False
        try:
            await self._emit(line)
            sent = True
            await reply.done.wait()
        finally:
            if not reply.done.is_set():
                self._replies.pop(request_id, None)
                withdraw = self._conn.abandon(request_id, "the request that needed the answer was cancelled")
                if sent and withdraw is not None:
                    with contextlib.suppress(
                        trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError
                    ):
                        self._out.send_nowait(withdraw)
        if reply.error is not None:
            raise _NoAnswer(reply.error)
        return reply.result

    # ---------------------------------------------------------- methods

    async def _discover(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        result = {
            "supportedVersions": [F.MODERN],
            "capabilities": F.capabilities(F.MODERN),
            "instructions": F.INSTRUCTIONS,
        }
        return self._cacheable(call, result)

    async def _set_level(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        level = call.params.get("level")
        if level not in F.SEVERITY:
            raise RpcFailure(INVALID_PARAMS, f"unknown log level {level!r}; use one of {list(LOG_LEVELS)}")
        self._log_floor = F.SEVERITY[level]
        return {}

    async def _listing(self, call: _Call, field: str, items: list[dict[str, JSON]]) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        if "cursor" in call.params:
            # Every list fits in one page, so no cursor was ever handed out.
            raise RpcFailure(INVALID_PARAMS, f"invalid cursor {call.params['cursor']!r}")
        return self._cacheable(call, {field: items})

    async def _list_tools(self, call: _Call) -> dict[str, JSON]:
        return await self._listing(call, "tools", F.tools(call.version))

    async def _list_prompts(self, call: _Call) -> dict[str, JSON]:
        return await self._listing(call, "prompts", F.prompts(call.version))

    async def _list_resources(self, call: _Call) -> dict[str, JSON]:
        return await self._listing(call, "resources", F.resources(call.version))

    async def _list_templates(self, call: _Call) -> dict[str, JSON]:
        return await self._listing(call, "resourceTemplates", F.resource_templates(call.version))

    async def _read_resource(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        uri = call.params.get("uri")
        if not isinstance(uri, str):
            raise RpcFailure(INVALID_PARAMS, "resources/read needs a uri (a string)")
        contents = F.read(uri)
        if contents is None:
            code = INVALID_PARAMS if call.era == "modern" else RESOURCE_NOT_FOUND
            raise RpcFailure(code, f"resource not found: {uri}", {"uri": uri})
        return self._cacheable(call, {"contents": [contents]})

    async def _get_prompt(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        name = call.params.get("name")
        if name != "greet":
            raise RpcFailure(INVALID_PARAMS, f"unknown prompt {name!r}; this server has 'greet'")
        who = _arguments(call, "prompt").get("name")
        if not isinstance(who, str) or not who.strip():
            raise RpcFailure(INVALID_PARAMS, "the greet prompt needs the argument 'name'")
        return F.greet_prompt(who.strip())

    async def _complete(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        ref = call.params.get("ref")
        argument = call.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise RpcFailure(INVALID_PARAMS, "completion/complete needs a ref and an argument (objects)")
        name = argument.get("name")
        value = argument.get("value")
        if not isinstance(name, str) or not isinstance(value, str):
            raise RpcFailure(INVALID_PARAMS, "the argument to complete needs a name and a value (strings)")
        kind = ref.get("type")
        if kind == "ref/prompt":
            if ref.get("name") != "greet":
                raise RpcFailure(
                    INVALID_PARAMS, f"unknown prompt {ref.get('name')!r}; this server has 'greet'"
                )
        elif kind == "ref/resource":
            if ref.get("uri") not in (F.GREETING_TEMPLATE, F.README_URI):
                raise RpcFailure(INVALID_PARAMS, f"unknown resource or template {ref.get('uri')!r}")
            if ref.get("uri") == F.README_URI:
                name = ""
        else:
            raise RpcFailure(INVALID_PARAMS, f"unknown reference type {kind!r}")
        if name == "name":
            return {"completion": F.complete_name(value)}
        return {"completion": {"values": [], "total": 0, "hasMore": False}}

    # ------------------------------------------------------------- tools

    async def _call_tool(self, call: _Call) -> dict[str, JSON]:
        name = call.params.get("name")
        if not isinstance(name, str):
            raise RpcFailure(INVALID_PARAMS, "tools/call needs the tool's name (a string)")
        if name not in F.TOOL_NAMES:
            raise RpcFailure(INVALID_PARAMS, f"unknown tool {name!r}; this server has {sorted(F.TOOL_NAMES)}")
        arguments = _arguments(call, "tool")
        try:
            checked = F.check_arguments(name, arguments)
            if name == "echo":
                await trio.lowlevel.checkpoint()
                return _text(checked["text"])
            if name == "add":
                await trio.lowlevel.checkpoint()
                total = F.add(checked["a"], checked["b"])
                result = _text(F.number_text(total))
                if call.version >= "2025-06-18":
                    result["structuredContent"] = {"sum": total}
                return result
            if name == "slow":
                return await self._slow(call, checked["steps"], checked["delay"])
            question = checked.get("question") or F.DEFAULT_QUESTION
            if call.era == "modern":
                return await self._ask_modern(call, question)
            return await self._ask_legacy(call, question)
        except F.BadArguments as exc:
            return _text(str(exc), is_error=True)

    async def _slow(self, call: _Call, steps: int, delay: float) -> dict[str, JSON]:
        await self._log_message(call, "info", f"slow: {steps} steps of {F.number_text(delay)} s each")
        for step in range(1, steps + 1):
            await trio.sleep(delay)
            await self._progress(call, step, steps, f"Step {step} of {steps}")
        await self._log_message(call, "info", f"slow: done after {steps} steps")
        return _text(f"Done: {steps} steps.")

    async def _ask_modern(self, call: _Call, question: str) -> dict[str, JSON]:
        """The 2026-07-28 ``ask``: ``input_required`` first, the greeting on the retry."""
        responses = call.params.get("inputResponses")
        state = call.params.get("requestState")
        if responses is not None or state is not None:
            if F.read_ask_state(state) is None:
                raise RpcFailure(INVALID_PARAMS, "requestState is missing or was not issued by this server")
            if responses is not None and not isinstance(responses, dict):
                raise RpcFailure(INVALID_PARAMS, "inputResponses must be an object")
            answer = responses.get("name") if responses is not None else None
            if answer is not None:
                text, is_error = F.greet_answer(answer)
                action = answer.get("action") if isinstance(answer, dict) else None
                await self._log_message(call, "info", f"ask: the user answered ({action})")
                return _text(text, is_error=is_error)
        # First round, or a retry without the answer: ask (again).
        if not F.can_elicit_form(call.caps):
            raise RpcFailure(
                MISSING_CLIENT_CAPABILITY,
                "the ask tool needs the elicitation capability (form mode)",
                {"requiredCapabilities": {"elicitation": {"form": {}}}},
            )
        await self._log_message(call, "info", "ask: asking the user for their name")
        return {
            "resultType": "input_required",
            "inputRequests": {
                "name": {"method": "elicitation/create", "params": F.elicitation(question, F.MODERN)},
            },
            "requestState": F.ask_state(question),
        }

    async def _ask_legacy(self, call: _Call, question: str) -> dict[str, JSON]:
        """The initialize-era ``ask``: an ``elicitation/create`` request to the client."""
        if call.version < "2025-06-18":
            await trio.lowlevel.checkpoint()
            return _text(
                f"Protocol version {call.version} has no elicitation (it came in 2025-06-18),"
                " so the server cannot ask for a name.",
                is_error=True,
            )
        if not F.can_elicit_form(self._client_caps):
            await trio.lowlevel.checkpoint()
            return _text(
                "The client did not declare the elicitation capability (form mode),"
                " so the server cannot ask for a name.",
                is_error=True,
            )
        # The server may send requests only once the client said it is ready.
        await self._initialized.wait()
        await self._log_message(call, "info", "ask: asking the user for their name")
        try:
            answer = await self._ask_client("elicitation/create", F.elicitation(question, call.version))
        except _NoAnswer as exc:
            return _text(f"The question got no answer: {exc}.", is_error=True)
        text, is_error = F.greet_answer(answer)
        await self._log_message(call, "info", f"ask: the user answered ({answer.get('action')})")
        return _text(text, is_error=is_error)


async def _write_lines(
    lines: trio.MemoryReceiveChannel[bytes],
    stream: trio.abc.SendStream,
    cancel_scope: trio.CancelScope,
    log: Log,
) -> None:
    """Write every queued line, several at a time when they pile up."""
    async with lines:
        async for line in lines:
            batch = [line]
            while len(batch) < OUTPUT_BUFFER:
                try:
                    batch.append(lines.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            try:
                await stream.send_all(b"".join(batch))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                log("the output is closed; stopping")
                cancel_scope.cancel()
                return


async def serve(
    receive_stream: trio.abc.ReceiveStream,
    send_stream: trio.abc.SendStream,
    *,
    log: Callable[[str], object] | None = None,
    eof_grace: float = EOF_GRACE,
) -> None:
    """Serve the demo over a pair of Trio streams, until the input ends.

    This is what ``python -m trio_mcp.demo`` runs over its stdin and stdout;
    with `trio.testing.memory_stream_pair` (or any other streams) it serves
    in-process. The era is chosen by the first request, as the module
    documentation describes; requests are served concurrently.

    It returns once the input has ended and the requests in flight have
    finished (each gets ``eof_grace`` seconds, then is cancelled and answers
    nothing), or as soon as the output breaks. ``send_stream`` is left open.

    Args:
        receive_stream: Where the client's lines come from.
        send_stream: Where the server's lines go (nothing else is written).
        log: Called with diagnostics (dropped lines, refused requests, the
            era chosen); by default they are discarded.
        eof_grace: Seconds requests in flight may still take once the input
            ends.
    """
    out_send, out_recv = trio.open_memory_channel[bytes](OUTPUT_BUFFER)
    say: Log = log if log is not None else _quiet
    server = _Server(out_send, say)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_write_lines, out_recv, send_stream, nursery.cancel_scope, say)
        async with out_send:
            await server.run(receive_stream, eof_grace)
        # What is still queued gets written, within bounds.
        nursery.cancel_scope.deadline = trio.current_time() + DRAIN_GRACE
