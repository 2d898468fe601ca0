"""The Trio half of the ``trio-mcp`` command: connect, run the command, show the result.

`trio_mcp.cli` parses the command line (`._args`), and imports this module
(and with it Trio and the client) only when a command is to be run, so that
``--help`` and usage errors come back at once.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Final, TypeVar

import trio

from .._errors import (
    ConnectionFailed,
    HTTPError,
    InputRequestFailed,
    MCPError,
    NotSupported,
    ProtocolError,
    RpcError,
    ServerGone,
    SpawnFailed,
    TransportClosed,
    VersionMismatch,
)
from .._models import GetPromptResult, ReadResourceResult
from .._open import open_http_client, open_stdio_client
from .._session import RequestTimeout
from ._args import (
    EXIT_BROKEN_PIPE,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROTOCOL,
    EXIT_RPC_ERROR,
    EXIT_SERVER_GONE,
    EXIT_SPAWN,
    EXIT_TIMEOUT,
    EXIT_TOOL_ERROR,
    PROG,
    Options,
)
from ._console import Console, isatty
from ._forms import Asker
from ._render import (
    call_result_wire,
    compact,
    info_wire,
    join_lines,
    note_line,
    number,
    pretty_json,
    prompt_lines,
    render_call_result,
    render_info,
    render_prompt_result,
    render_read_result,
    resource_lines,
    template_lines,
    tool_lines,
    wire_json,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from contextlib import AbstractAsyncContextManager

    from .._client import Client
    from .._options import StreamClientKwargs

_Item = TypeVar("_Item")

JSON = Any

#: How long ``--protocol auto`` waits for an answer to its probe, at most.
PROBE_TIMEOUT: Final = 10.0
#: The most stderr lines of a dead server an error message shows.
TAIL_LINES: Final = 10


class _Failure(Exception):
    """An error of the command's own, with its exit status and message."""

    def __init__(
        self, status: int, message: str, /, *, detail: str = "", kind: str = "", **data: JSON
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail
        self.kind = kind
        self.data = data


# ----------------------------------------------------------------- the budget


class Budget:
    """The whole command's time budget: a cancel scope that pauses while a person answers."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.scope = trio.CancelScope()
        self._paused = 0
        self._left = float("inf")

    def start(self) -> None:
        if self.seconds is not None:
            self.scope.deadline = trio.current_time() + self.seconds

    def pause(self) -> None:
        if self._paused == 0:
            self._left = self.scope.deadline - trio.current_time()
            self.scope.deadline = float("inf")
        self._paused += 1

    def resume(self) -> None:
        self._paused -= 1
        if self._paused == 0:
            self.scope.deadline = trio.current_time() + max(self._left, 0.0)


# ----------------------------------------------------------------- the commands


class Session:
    """What the commands share: the options, the console, the client."""

    def __init__(self, options: Options, console: Console) -> None:
        self.options = options
        self.console = console
        self.stage = "starting the server"
        self.client: Client | None = None
        self.stdout_status = EXIT_OK
        """`EXIT_BROKEN_PIPE` once writing the result failed because nobody reads it."""

    def server_name(self) -> str:
        """The server's name for people, quoted (it is the server's own claim)."""
        client = self.client
        if client is not None and client.server_info is not None:
            info = client.server_info
            return repr(info.title or info.name)
        return repr(_command_line(self.options))

    def emit(self, text: str) -> None:
        """Write the result (text ending with a newline, or nothing) to stdout, at once.

        At once: the server may take a while to exit after it (up to its
        grace period), and the result should not wait for that.
        """
        if text and self.stdout_status == EXIT_OK:
            self.stdout_status = _flush_stdout(text)

    def emit_json(self, value: JSON) -> None:
        """Write the result as one JSON document."""
        self.emit(pretty_json(value) + "\n")


async def _info(session: Session, client: Client) -> int:
    await trio.lowlevel.checkpoint()
    if session.options.json_output:
        session.emit_json(info_wire(client))
    else:
        session.emit(render_info(client))
    return EXIT_OK


def _show_list(
    session: Session, key: str, items: Sequence[_Item], nothing: str, describe: Callable[[_Item], list[str]]
) -> int:
    """What a list command prints: ``{key: [...]}`` with --json, else each item's lines."""
    if session.options.json_output:
        session.emit_json({key: [wire_json(item) for item in items]})
        return EXIT_OK
    if not items:
        session.console.say(f"(the server has no {nothing})")
    session.emit(join_lines("\n".join(describe(item)) for item in items))
    return EXIT_OK


async def _tools(session: Session, client: Client) -> int:
    session.stage = "tools/list"
    tools = await client.list_tools()
    schema = session.options.schema
    return _show_list(session, "tools", tools, "tools", lambda tool: tool_lines(tool, schema))


async def _prompts(session: Session, client: Client) -> int:
    session.stage = "prompts/list"
    return _show_list(session, "prompts", await client.list_prompts(), "prompts", prompt_lines)


async def _resources(session: Session, client: Client) -> int:
    session.stage = "resources/list"
    return _show_list(session, "resources", await client.list_resources(), "resources", resource_lines)


async def _templates(session: Session, client: Client) -> int:
    session.stage = "resources/templates/list"
    templates = await client.list_resource_templates()
    return _show_list(session, "resourceTemplates", templates, "resource templates", template_lines)


def _declares_string(schema: JSON) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "string":
        return True
    enum = schema.get("enum")
    return isinstance(enum, list) and bool(enum) and all(isinstance(v, str) for v in enum)


async def _arguments_for(session: Session, client: Client) -> dict[str, JSON]:
    """The call's arguments, with values read as JSON put back to text where the tool wants a string."""
    options = session.options
    arguments = options.arguments
    if not options.raw_values:
        return arguments
    session.stage = "tools/list"
    tool = None
    async for candidate in client.iter_tools():
        if candidate.name == options.target:
            tool = candidate
            break
    properties = tool.input_schema.get("properties") if tool is not None else None
    if not isinstance(properties, dict):
        return arguments
    strings = {key: raw for key, raw in options.raw_values.items() if _declares_string(properties.get(key))}
    return {**arguments, **strings}


async def _call(session: Session, client: Client) -> int:
    options = session.options
    arguments = await _arguments_for(session, client)
    session.stage = "tools/call"
    result = await client.call_tool(options.target, arguments, on_progress=session.console.progress)
    session.console.clear()
    if options.json_output:
        session.emit_json(call_result_wire(result))
        if result.is_error:
            session.console.error(f"the tool {options.target!r} reported an error")
            return EXIT_TOOL_ERROR
        return EXIT_OK
    text = render_call_result(result)
    if result.is_error:
        body = text.rstrip("\n")
        if "\n" in body or not body:
            session.console.error(f"the tool {options.target!r} reported an error" + (":" if body else ""))
            if body:
                session.console.say(body)
        else:
            session.console.error(f"the tool {options.target!r} reported an error: {body}")
        return EXIT_TOOL_ERROR
    session.emit(text)
    return EXIT_OK


async def _read(session: Session, client: Client) -> int:
    session.stage = "resources/read"
    result = await client.read_resource(session.options.target, on_progress=session.console.progress)
    assert isinstance(result, ReadResourceResult)  # not manual: input is answered through the hooks
    session.console.clear()
    if session.options.json_output:
        session.emit_json(wire_json(result))
    else:
        if not result.contents:
            session.console.say("(the resource is empty)")
        session.emit(render_read_result(result))
    return EXIT_OK


async def _prompt(session: Session, client: Client) -> int:
    options = session.options
    session.stage = "prompts/get"
    result = await client.get_prompt(
        options.target, options.arguments or None, on_progress=session.console.progress
    )
    assert isinstance(result, GetPromptResult)  # not manual: input is answered through the hooks
    session.console.clear()
    if options.json_output:
        session.emit_json(wire_json(result))
    else:
        session.emit(render_prompt_result(result))
    return EXIT_OK


_HANDLERS: Final[dict[str, Callable[[Session, Client], Any]]] = {
    "info": _info,
    "tools": _tools,
    "prompts": _prompts,
    "resources": _resources,
    "templates": _templates,
    "call": _call,
    "read": _read,
    "prompt": _prompt,
}


# ----------------------------------------------------------------- running


async def _session(options: Options, console: Console) -> tuple[int, Session]:
    session = Session(options, console)
    budget = Budget(options.timeout)
    asker = Asker(console, budget, interactive=isatty(sys.stdin), server_name=session.server_name)
    verbose = options.verbose

    def on_stderr(line: str) -> None:
        if verbose:
            console.say(f"server stderr: {line}")

    def on_log(message: str) -> None:
        if verbose:
            console.say(f"{PROG}: {message}")

    def on_notification(note: dict[str, JSON]) -> None:
        line = note_line(note) if verbose else None
        if line is not None:
            console.say(line)

    code = EXIT_OK
    budget.start()
    try:
        with budget.scope:
            session.stage = "connecting"
            code = await _connect_and_run(session, asker, on_stderr, on_log, on_notification)
    except MCPError as exc:
        raise _explain(exc, options, session.stage, declined=asker.declined) from None
    if budget.scope.cancelled_caught:
        seconds = number(options.timeout or 0)
        raise _Failure(
            EXIT_TIMEOUT,
            f"timed out after {seconds} s ({session.stage})",
            kind="timeout",
            stage=session.stage,
        )
    return code, session


async def _connect_and_run(
    session: Session,
    asker: Asker,
    on_stderr: Callable[[str], None],
    on_log: Callable[[str], None],
    on_notification: Callable[[dict[str, JSON]], None],
) -> int:
    options = session.options
    probe = PROBE_TIMEOUT if options.timeout is None else min(PROBE_TIMEOUT, options.timeout / 2)
    common: StreamClientKwargs = {
        "on_log": on_log,
        "request_timeout": None,
        "protocol": options.protocol,
        "probe_timeout": probe,
        "on_elicitation": asker,
        "on_notification": on_notification,
        "log_level": "debug" if options.verbose else None,
        "input_timeout": None,
    }
    opened: AbstractAsyncContextManager[Client]
    if options.url is not None:
        opened = open_http_client(options.url, headers=options.headers, **common)
    else:
        opened = open_stdio_client(
            options.server[0],
            options.server[1:],
            env=options.env,
            cwd=options.cwd,
            on_stderr=on_stderr,
            **common,
        )
    async with opened as client:
        session.client = client
        code: int = await _HANDLERS[options.command](session, client)
    return code


def _command_line(options: Options) -> str:
    """The server's command line, shortened."""
    if options.demo:
        return "python -m trio_mcp.demo"
    import shlex

    text = shlex.join(options.server)
    return text if len(text) <= 80 else text[:77] + "..."


def _server_words(options: Options) -> str:
    if options.demo:
        return "the demo server (python -m trio_mcp.demo)"
    return f"the server {_command_line(options)}"


def _explain(exc: BaseException, options: Options, stage: str, *, declined: str | None = None) -> _Failure:
    """The exit status and message for an error of the library.

    ``declined`` is why questions were declined without asking anyone, if
    some were (the server may keep asking them).
    """
    where = "while connecting" if stage == "connecting" else f"during {stage}"
    if isinstance(exc, SpawnFailed):
        return _Failure(EXIT_SPAWN, str(exc), kind="spawn")
    if isinstance(exc, ServerGone):
        if exc.exit_code is not None:
            what = f"exited with code {exc.exit_code}"
        elif exc.signal is not None:
            what = f"was killed by signal {exc.signal}"
        else:
            what = str(exc).split("\n", 1)[0]
            prefix = f"server {options.server[0]!r} "
            what = what[len(prefix) :] if what.startswith(prefix) else what
        tail = exc.stderr_tail.rstrip("\n").splitlines()[-TAIL_LINES:]
        message = f"{_server_words(options)} {what} {where}"
        if not tail:
            message += " (it wrote nothing to stderr)"
        return _Failure(
            EXIT_SERVER_GONE,
            message,
            detail="\n".join("  | " + line for line in tail),
            kind="server-gone",
            serverExitCode=exc.exit_code,
            serverSignal=exc.signal,
            stderrTail=exc.stderr_tail,
        )
    if isinstance(exc, TransportClosed):
        return _Failure(EXIT_SERVER_GONE, f"the connection closed {where}: {exc}", kind="server-gone")
    if isinstance(exc, RequestTimeout):
        return _Failure(EXIT_TIMEOUT, f"timed out {where}: {exc}", kind="timeout")
    if isinstance(exc, RpcError):
        message = f"the server answered {stage} with error {exc.code}: {exc.message}"
        data = exc.data
        if (
            exc.code == -32021
            and isinstance(data, dict)
            and isinstance(data.get("requiredCapabilities"), dict)
        ):
            wanted = ", ".join(data["requiredCapabilities"])
            message += f" (it needs {wanted}; {PROG} offers elicitation only: no sampling, no roots)"
        elif exc.code == -32042 and isinstance(data, dict) and isinstance(data.get("elicitations"), list):
            urls = [e.get("url") for e in data["elicitations"] if isinstance(e, dict)]
            message += f" (open {', '.join(str(u) for u in urls)} and try again)"
        elif data is not None:
            message += f" (data: {compact(data, 200)})"
        return _Failure(EXIT_RPC_ERROR, message, kind="rpc", code=exc.code, data=exc.data)
    if isinstance(exc, InputRequestFailed):
        if exc.method == "sampling/createMessage":
            message = (
                f"the server asked for sampling (a language model's completion) {where};"
                f" {PROG} has no model and refuses it"
            )
        elif exc.method == "roots/list":
            message = f"the server asked for roots {where}; {PROG} offers none"
        elif not exc.method and declined is not None:
            # The rounds ran out: the server asked again whatever the answer.
            message = f"the server kept asking for input after it was declined ({declined}): {exc}"
        else:
            message = f"{exc} ({where})"
        return _Failure(EXIT_INPUT, message, kind="input", method=exc.method)
    if isinstance(exc, HTTPError):
        status = EXIT_SERVER_GONE if isinstance(exc, ConnectionFailed) else EXIT_PROTOCOL
        return _Failure(status, f"{exc} ({where})", kind="http", httpStatus=exc.status)
    if isinstance(exc, VersionMismatch):
        return _Failure(EXIT_PROTOCOL, f"no protocol version in common: {exc}", kind="version")
    if isinstance(exc, ProtocolError | NotSupported):
        return _Failure(EXIT_PROTOCOL, f"protocol error {where}: {exc}", kind="protocol")
    if isinstance(exc, MCPError):  # pragma: no cover - every MCPError is handled above
        return _Failure(EXIT_PROTOCOL, f"{exc} ({where})", kind="protocol")
    return _Failure(EXIT_INTERNAL, f"unexpected error: {type(exc).__name__}: {exc}", kind="internal")


def _leaf(exc: BaseException) -> BaseException:
    """The one exception inside nested single-exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _interrupted(exc: BaseException) -> bool:
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(_interrupted(inner) for inner in exc.exceptions)
    return False


def _flush_stdout(text: str) -> int:
    """Write the result to stdout; `EXIT_BROKEN_PIPE` if nobody reads it."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Whoever read it left (`| head`): exit quietly, with stdout out of the way.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    return EXIT_OK


def execute(options: Options) -> int:
    """Run the parsed command line: the result to stdout, the rest to stderr; the exit status.

    Never raises (but `SystemExit`): every error is a message and an exit
    status.
    """
    console = Console()
    session: Session | None = None
    failure: _Failure | None = None
    code = EXIT_OK
    try:
        code, session = trio.run(_session, options, console)
    except _Failure as exc:
        failure = exc
    except BaseException as exc:
        console.clear()
        if _interrupted(exc):
            console.end_line()
            return EXIT_INTERRUPTED
        if isinstance(exc, SystemExit):
            raise
        leaf = _leaf(exc)
        if isinstance(leaf, _Failure):
            failure = leaf
        else:
            failure = _explain(leaf, options, "connecting")
            if failure.status == EXIT_INTERNAL and options.verbose:
                import traceback

                traceback.print_exception(exc)
    console.clear()
    if failure is not None:
        if options.json_output:
            error: dict[str, JSON] = {
                "kind": failure.kind,
                "message": failure.message,
                "exitCode": failure.status,
            }
            error.update({key: value for key, value in failure.data.items() if value is not None})
            _flush_stdout(pretty_json({"error": error}) + "\n")
        console.error(failure.message + ("; its last stderr lines:" if failure.detail else ""))
        if failure.detail:
            console.say(failure.detail)
        return failure.status
    assert session is not None
    return session.stdout_status if session.stdout_status != EXIT_OK else code
