"""The demo server's content, served by the package's server core.

`serve` runs one `~trio_mcp._serving.server.Server` (the core that the fake
server of `trio_mcp.testing` runs too: line framing, decoding with the
sans-io JSON-RPC connection, requests served concurrently, one writer) with
the demo as its app: the era chosen by the first request, and the tools,
resources and prompts of `trio_mcp.demo._features`.
"""

from __future__ import annotations

import traceback
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

import trio

from .._core.eras import (
    CLIENT_CAPABILITIES,
    LOG_LEVEL,
    MISSING_CLIENT_CAPABILITY,
    PROTOCOL_VERSION,
    SERVER_INFO,
)
from .._core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from .._errors import MCPError, RpcError
from .._serving.rules import (
    INVALID_REQUEST,
    Era,
    cache_fields,
    checked_log_level,
    discover_result,
    initialize_refused,
    initialize_result,
    legacy_version,
    unsupported_version,
)
from .._serving.server import DRAIN_GRACE, EOF_GRACE, MAX_LINE, Admission, Request, Server
from .._serving.task_rules import TASKS_SINCE, declares_extension, extension_missing, wants_task
from .._serving.tasks import Tasks
from . import _features as F

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["serve", "serve_connection"]

JSON: TypeAlias = Any
Log: TypeAlias = "Callable[[str], object]"

MCP_PREFIX: Final = "io.modelcontextprotocol/"

RESOURCE_NOT_FOUND: Final = -32002

#: Lines queued for the writer before handlers wait (backpressure).
OUTPUT_BUFFER: Final = 64
#: The polling interval the demo suggests for its tasks, in milliseconds.
POLL_INTERVAL_MS: Final = 200


class _NoAnswer(Exception):
    """A request of ours to the client got no usable answer."""


class _Call:
    """One request being served, with what its era says about it."""

    __slots__ = ("caps", "era", "params", "request", "token", "version")

    def __init__(
        self, request: Request, era: Era, version: str, *, caps: dict[str, JSON] | None = None
    ) -> None:
        self.request = request
        self.params = request.params
        self.era = era
        self.version = version
        self.caps = caps if caps is not None else {}
        self.token = request.progress_token


Handler: TypeAlias = "Callable[[_Call], Awaitable[dict[str, JSON]]]"


class _Context(Protocol):
    """How long work reports progress and asks the user: as a task, or within its request."""

    async def progress(self, progress: float, total: float | None, message: str) -> None: ...

    async def ask(self, method: str, params: dict[str, JSON], *, message: str | None = None) -> JSON: ...


class _Direct:
    """The `_Context` of long work run within its ``tools/call`` (no task)."""

    def __init__(self, demo: _Demo, call: _Call) -> None:
        self._demo = demo
        self._call = call

    async def progress(self, progress: float, total: float | None, message: str) -> None:
        await self._demo._progress(self._call, progress, total, message)

    async def ask(self, method: str, params: dict[str, JSON], *, message: str | None = None) -> JSON:
        if self._call.era == "modern":
            await trio.lowlevel.checkpoint()
            raise _NoAnswer(
                "this question is asked only within a task: declare the io.modelcontextprotocol/tasks"
                " extension in the request's client capabilities"
            )
        await self._demo._initialized.wait()
        return await self._demo._ask_client(method, params)


def _arguments(call: _Call, what: str) -> dict[str, JSON]:
    """The request's ``arguments`` object (none given: an empty one)."""
    arguments = call.params.get("arguments")
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, f"{what} arguments must be an object")
    return arguments


def _text(text: str, *, is_error: bool = False) -> dict[str, JSON]:
    result: dict[str, JSON] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


class _Demo:
    """The demo as the app of a `Server`: what it offers, in each era."""

    def __init__(
        self, log: Log, *, wrong_output: bool = False, make_server: Callable[..., Server] = Server
    ) -> None:
        self._log = log
        self._wrong_output = wrong_output
        self.server = make_server(
            self,
            log=log,
            max_line=MAX_LINE,
            output_buffer=OUTPUT_BUFFER,
            task_prefix="demo",
            result_meta={SERVER_INFO: F.server_info(F.MODERN)},
        )
        # Initialize era: the negotiated version and the client's capabilities.
        self._version = F.MODERN
        self._client_caps: dict[str, JSON] = {}
        self._initialized = trio.Event()
        self.tasks = Tasks(self.server, poll_interval_ms=POLL_INTERVAL_MS, log=log)
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
        self._modern: dict[str, Handler] = {
            **common,
            "server/discover": self._discover,
            "tasks/get": self._task_get,
            "tasks/update": self._task_update,
            "tasks/cancel": self._task_cancel,
        }
        self._legacy: dict[str, Handler] = {
            **common,
            "logging/setLevel": self._set_level,
            "tasks/get": self._task_get,
            "tasks/result": self._task_result,
            "tasks/list": self._task_list,
            "tasks/cancel": self._task_cancel,
        }

    # ------------------------------------------------------ the app's side

    def notification(self, message: dict[str, JSON]) -> None:
        method = message.get("method")
        if method == "notifications/initialized" and self.server.era == "legacy":
            self._initialized.set()
        else:
            self._log(f"ignored the notification {method!r}")

    def cancelled(self, request: Request) -> None:
        pass

    def failed(self, request: Request, error: Exception) -> RpcError:
        self._log(f"{request.method} failed:\n{''.join(traceback.format_exception(error))}")
        return RpcError(INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}")

    def input_ended(self) -> None:
        # An ask waiting for notifications/initialized now fails at once.
        self._initialized.set()

    # --------------------------------------------------------- admission

    def admit(self, request: Request) -> Admission:
        """Decide, in arrival order, how a request is served; the first one chooses the era.

        Returns the handler to run, or the result itself for ``initialize``.
        """
        method = request.method
        params = request.params
        meta = request.meta
        envelope = PROTOCOL_VERSION in meta
        era = self.server.era
        if method == "initialize":
            if era == "modern":
                raise initialize_refused(params.get("protocolVersion"), [F.MODERN])
            if era == "legacy":
                raise RpcError(INVALID_REQUEST, "initialize was already done on this connection")
            return self._initialize(params)
        if era is None:
            if envelope:
                era = self.server.era = "modern"
                self.server.answers_ping = False  # this era has no ping: -32601 like any unknown method
                self._log(f"protocol era: {F.MODERN} (the first request carries its _meta envelope)")
            elif method == "server/discover" or any(key.startswith(MCP_PREFIX) for key in meta):
                raise RpcError(INVALID_PARAMS, f"missing required _meta key {PROTOCOL_VERSION!r}")
            else:
                raise RpcError(
                    INVALID_REQUEST,
                    "send initialize first (initialize era), or give every request the _meta envelope"
                    f" of protocol version {F.MODERN}",
                )
        if era == "modern":
            call = self._modern_call(request, meta)
            handler = self._modern.get(method)
        else:
            if envelope:
                raise RpcError(
                    INVALID_REQUEST,
                    f"this connection uses the initialize era (protocol version {self._version});"
                    f" requests may not carry the {F.MODERN} _meta envelope",
                )
            call = _Call(request, "legacy", self._version)
            handler = self._legacy.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
        return partial(handler, call)

    def _modern_call(self, request: Request, meta: dict[str, JSON]) -> _Call:
        missing = [key for key in (PROTOCOL_VERSION, CLIENT_CAPABILITIES) if key not in meta]
        if missing:
            raise RpcError(INVALID_PARAMS, f"missing required _meta key(s): {', '.join(missing)}")
        version = meta[PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise RpcError(INVALID_PARAMS, f"{PROTOCOL_VERSION} must be a string")
        if version != F.MODERN:
            raise unsupported_version(version, [F.MODERN])
        caps = meta[CLIENT_CAPABILITIES]
        if not isinstance(caps, dict):
            raise RpcError(INVALID_PARAMS, f"{CLIENT_CAPABILITIES} must be an object")
        if LOG_LEVEL in meta:
            checked_log_level(meta[LOG_LEVEL])
        return _Call(request, "modern", F.MODERN, caps=caps)

    def _initialize(self, params: dict[str, JSON]) -> dict[str, JSON]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RpcError(INVALID_PARAMS, "initialize needs a protocolVersion (a string)")
        version = legacy_version(requested)
        caps = params.get("capabilities")
        self.server.era = "legacy"
        self._version = version
        self._client_caps = caps if isinstance(caps, dict) else {}
        self._log(f"protocol era: initialize, version {version} (the client asked for {requested!r})")
        return initialize_result(version, F.capabilities(version), F.server_info(version), F.INSTRUCTIONS)

    # ----------------------------------------------------------- helpers

    def _cacheable(self, call: _Call, result: dict[str, JSON]) -> dict[str, JSON]:
        if call.era == "modern":
            result.update(cache_fields(F.TTL_MS))
        return result

    async def _notify(self, method: str, params: dict[str, JSON]) -> None:
        await self.server.send(self.server.notification(method, params))

    async def _log_message(self, call: _Call, level: str, text: str) -> None:
        """Send a log message, if the request (2026-07-28) or the session asked for this level."""
        if self.server.log_wanted(call.request, level):
            await self._notify("notifications/message", {"level": level, "logger": F.NAME, "data": text})

    async def _progress(self, call: _Call, progress: float, total: float | None, message: str) -> None:
        if call.token is None:
            await trio.lowlevel.checkpoint()
            return
        params: dict[str, JSON] = {"progressToken": call.token, "progress": progress}
        if total is not None:
            params["total"] = total
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
        try:
            return await self.server.request(
                method, params, withdraw="the request that needed the answer was cancelled"
            )
        except (MCPError, trio.BrokenResourceError) as exc:
            raise _NoAnswer(str(exc)) from None

    # ---------------------------------------------------------- methods

    async def _discover(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        result = discover_result(
            [F.MODERN], F.capabilities(F.MODERN), F.server_info(F.MODERN), F.INSTRUCTIONS
        )
        return self._cacheable(call, result)

    async def _set_level(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        return self.server.set_log_level(call.request)

    async def _listing(self, call: _Call, field: str, items: list[dict[str, JSON]]) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        if "cursor" in call.params:
            # Every list fits in one page, so no cursor was ever handed out.
            raise RpcError(INVALID_PARAMS, f"invalid cursor {call.params['cursor']!r}")
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
            raise RpcError(INVALID_PARAMS, "resources/read needs a uri (a string)")
        contents = F.read(uri)
        if contents is None:
            code = INVALID_PARAMS if call.era == "modern" else RESOURCE_NOT_FOUND
            raise RpcError(code, f"resource not found: {uri}", {"uri": uri})
        return self._cacheable(call, {"contents": [contents]})

    async def _get_prompt(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        name = call.params.get("name")
        if name != "greet":
            raise RpcError(INVALID_PARAMS, f"unknown prompt {name!r}; this server has 'greet'")
        who = _arguments(call, "prompt").get("name")
        if not isinstance(who, str) or not who.strip():
            raise RpcError(INVALID_PARAMS, "the greet prompt needs the argument 'name'")
        return F.greet_prompt(who.strip())

    async def _complete(self, call: _Call) -> dict[str, JSON]:
        await trio.lowlevel.checkpoint()
        ref = call.params.get("ref")
        argument = call.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise RpcError(INVALID_PARAMS, "completion/complete needs a ref and an argument (objects)")
        name = argument.get("name")
        value = argument.get("value")
        if not isinstance(name, str) or not isinstance(value, str):
            raise RpcError(INVALID_PARAMS, "the argument to complete needs a name and a value (strings)")
        kind = ref.get("type")
        if kind == "ref/prompt":
            if ref.get("name") != "greet":
                raise RpcError(INVALID_PARAMS, f"unknown prompt {ref.get('name')!r}; this server has 'greet'")
        elif kind == "ref/resource":
            if ref.get("uri") not in (F.GREETING_TEMPLATE, F.README_URI):
                raise RpcError(INVALID_PARAMS, f"unknown resource or template {ref.get('uri')!r}")
            if ref.get("uri") == F.README_URI:
                name = ""
        else:
            raise RpcError(INVALID_PARAMS, f"unknown reference type {kind!r}")
        if name == "name":
            return {"completion": F.complete_name(value)}
        return {"completion": {"values": [], "total": 0, "hasMore": False}}

    # ------------------------------------------------------------- tasks

    def _tasks_allowed(self, call: _Call) -> None:
        """Refuse ``tasks/*`` where the era has no tasks, or the client did not declare them."""
        if call.era == "modern":
            if not declares_extension(call.caps):
                raise extension_missing(call.request.method)
        elif call.version < TASKS_SINCE:
            raise RpcError(
                METHOD_NOT_FOUND, f"method not found: {call.request.method} (tasks came in {TASKS_SINCE})"
            )

    async def _task_get(self, call: _Call) -> dict[str, JSON]:
        self._tasks_allowed(call)
        return await self.tasks.get(call.request, call.era)

    async def _task_result(self, call: _Call) -> dict[str, JSON]:
        self._tasks_allowed(call)
        return await self.tasks.result(call.request)

    async def _task_list(self, call: _Call) -> dict[str, JSON]:
        self._tasks_allowed(call)
        return await self.tasks.list(call.request)

    async def _task_cancel(self, call: _Call) -> dict[str, JSON]:
        self._tasks_allowed(call)
        return await self.tasks.cancel(call.request, call.era)

    async def _task_update(self, call: _Call) -> dict[str, JSON]:
        self._tasks_allowed(call)
        return await self.tasks.update(call.request)

    async def _long_work(
        self, call: _Call, name: str, arguments: dict[str, JSON], context: _Context
    ) -> dict[str, JSON]:
        """``report`` or ``batch``, as a task or within the request."""
        try:
            checked = F.check_arguments(name, arguments)
        except F.BadArguments as exc:
            await trio.lowlevel.checkpoint()
            return _text(str(exc), is_error=True)
        if name == "report":
            return await self._report(call, context, checked["steps"], checked["delay"], checked["ask"])
        return await self._batch(context, checked["items"], checked["delay"], checked.get("fail_at"))

    async def _report(
        self, call: _Call, context: _Context, steps: int, delay: float, ask: bool
    ) -> dict[str, JSON]:
        answer: JSON = None
        for step in range(1, steps + 1):
            await trio.sleep(delay)
            await context.progress(step, steps, f"Step {step} of {steps}")
            if ask and step == (steps + 1) // 2:
                caps = call.caps if call.era == "modern" else self._client_caps
                if not F.can_elicit_form(caps):
                    return _text(
                        "The client did not declare the elicitation capability (form mode),"
                        " so the server cannot ask who the report is for.",
                        is_error=True,
                    )
                params = F.elicitation(F.REPORT_QUESTION, call.version)
                try:
                    answer = await context.ask("elicitation/create", params, message=F.REPORT_QUESTION)
                except (MCPError, _NoAnswer) as exc:
                    return _text(f"The question got no answer: {exc}.", is_error=True)
        text, is_error = F.report_text(steps, answer)
        return _text(text, is_error=is_error)

    async def _batch(
        self, context: _Context, items: int, delay: float, fail_at: int | None
    ) -> dict[str, JSON]:
        for item in range(1, items + 1):
            await trio.sleep(delay)
            if item == fail_at:
                raise RpcError(INTERNAL_ERROR, f"item {item} of {items} failed", {"item": item})
            await context.progress(item, items, f"Item {item} of {items} done")
        return _text(f"Processed {items} item{'s' if items != 1 else ''}.")

    # ------------------------------------------------------------- tools

    async def _call_tool(self, call: _Call) -> dict[str, JSON]:
        name = call.params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "tools/call needs the tool's name (a string)")
        if name not in F.TOOL_NAMES:
            raise RpcError(INVALID_PARAMS, f"unknown tool {name!r}; this server has {sorted(F.TOOL_NAMES)}")
        arguments = _arguments(call, "tool")
        if F.TASK_SUPPORT[name] != "forbidden":
            as_task = wants_task(
                era=call.era,
                version=call.version,
                tool=name,
                support=F.TASK_SUPPORT[name],
                params=call.params,
                capabilities=call.caps,
            )
            if as_task:

                async def work(context: _Context) -> dict[str, JSON]:
                    return await self._long_work(call, name, arguments, context)

                await trio.lowlevel.checkpoint()
                return self.tasks.create(call.request, call.era, work, name=name)
            return await self._long_work(call, name, arguments, _Direct(self, call))
        if "task" in call.params and call.era == "legacy" and call.version >= TASKS_SINCE:
            wants_task(era="legacy", version=call.version, tool=name, support="forbidden", params=call.params)
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
                    # With --wrong-output the sum breaks the tool's outputSchema (a string).
                    result["structuredContent"] = {
                        "sum": F.number_text(total) if self._wrong_output else total
                    }
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
                raise RpcError(INVALID_PARAMS, "requestState is missing or was not issued by this server")
            if responses is not None and not isinstance(responses, dict):
                raise RpcError(INVALID_PARAMS, "inputResponses must be an object")
            answer = responses.get("name") if responses is not None else None
            if answer is not None:
                text, is_error = F.greet_answer(answer)
                action = answer.get("action") if isinstance(answer, dict) else None
                await self._log_message(call, "info", f"ask: the user answered ({action})")
                return _text(text, is_error=is_error)
        # First round, or a retry without the answer: ask (again).
        if not F.can_elicit_form(call.caps):
            raise RpcError(
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


async def serve(
    receive_stream: trio.abc.ReceiveStream,
    send_stream: trio.abc.SendStream,
    *,
    log: Callable[[str], object] | None = None,
    eof_grace: float = EOF_GRACE,
    wrong_output: bool = False,
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
        wrong_output: Make ``add``'s structured output break its
            ``outputSchema`` (the sum as a string), as a faulty server would.
    """
    demo = _Demo(log if log is not None else _quiet, wrong_output=wrong_output)
    await demo.server.serve(receive_stream, send_stream, eof_grace=eof_grace, drain_grace=DRAIN_GRACE)


async def serve_connection(
    make_server: Callable[..., Server],
    stream: trio.abc.Stream,
    *,
    log: Callable[[str], object] | None = None,
    wrong_output: bool = False,
) -> None:
    """Serve the demo on one connection of an HTTP front (`trio_mcp._serving.http.Connect`).

    As `serve`, with the server core built by ``make_server``.
    """
    demo = _Demo(log if log is not None else _quiet, wrong_output=wrong_output, make_server=make_server)
    await demo.server.serve(stream, stream, eof_grace=EOF_GRACE, drain_grace=DRAIN_GRACE)


def _quiet(text: str) -> None:
    pass
