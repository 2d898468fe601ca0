"""The Trio half of the ``trio-mcp`` command: connect, run the command, show the result.

`trio_mcp.cli` parses the command line (`._args`), and imports this module
(and with it Trio and the client) only when a command is to be run, so that
``--help`` and usage errors come back at once. This module imports what
starts the server; the client and the models it returns load once the
server is starting, their import overlapping with its start-up (the
functions that look into the models import them; see ``docs/design.rst``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import deque
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import attrs
import trio

from .._core.outputs import validator_available
from .._errors import (
    MCPError,
    OutputValidationError,
    RpcError,
)
from .._open import open_client
from .._options import ClientOptions
from .._targets import HTTPTarget, ProcessTarget
from ._args import (
    EXIT_BROKEN_PIPE,
    EXIT_CONFIG,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT_SCHEMA,
    EXIT_PROTOCOL,
    EXIT_RPC_ERROR,
    EXIT_TIMEOUT,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    PROG,
    REFS,
    Options,
)
from ._console import Console, isatty
from ._failures import Failure, command_line, explain, failure_from, tail
from ._forms import Asker
from ._render import (
    binary_parts,
    call_result_wire,
    info_wire,
    join_lines,
    note_line,
    number,
    plain_line,
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
from ._values import ArgumentValueError, convert_arguments, known_names, unknown_arguments

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from contextlib import AbstractAsyncContextManager

    from .._client import Client
    from .._core.eras import LogLevel
    from .._models import CallToolResult, ReadResourceResult, Tool

_Item = TypeVar("_Item")

JSON = Any
#: How long ``--protocol auto`` waits for an answer to its probe, at most.
PROBE_TIMEOUT: Final = 10.0
#: How many of the server's last stderr lines are kept, to show those written
#: while a command that failed ran.
KEPT_LINES: Final = 200
#: How long a failed command waits for the server's stderr lines written
#: just before its answer, which come through another pipe, in seconds.
STDERR_SETTLE: Final = 0.05


# ----------------------------------------------------------------- the budget


#: How long a server gets to leave after Ctrl-C on a one-shot command, in seconds.
INTERRUPT_GRACE: Final = 0.9


class StartAgain(Exception):
    """Raised by a command's handler (the shell's) to connect to the server anew and run it again."""


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


async def _no_handler(session: Command, client: Client) -> int:  # pragma: no cover - replaced
    raise AssertionError("no command to run")


class Command:
    """One run of a command: what its steps share (the options, the console, the client)."""

    def __init__(self, options: Options, console: Console) -> None:
        self.options = options
        self.console = console
        self.stage = "starting the server"
        self.client: Client | None = None
        self.stdout_status = EXIT_OK
        """`EXIT_BROKEN_PIPE` once writing the result failed because nobody reads it."""
        self.budget = Budget(options.timeout)
        """The command's time budget."""
        self.asker: Asker | None = None
        """Who answers the server's questions."""
        self.stderr: deque[str] = deque(maxlen=KEPT_LINES)
        """The server's last stderr lines."""
        self.stderr_count = 0
        """How many lines the server wrote to stderr in all."""
        self.stderr_mark = 0
        """`stderr_count` when the command's request was sent."""
        self.shown_stderr = False
        """Whether the lines since `stderr_mark` were shown already."""
        self.handler: Callable[[Command, Client], Any] = _no_handler
        """What runs once connected."""
        self.error_stderr = ""
        """What the server wrote to stderr while the command ran, when it answered with an error."""
        self.show_logs = False
        """Whether the server's log messages show on stderr without ``--verbose`` (after ``log-level``)."""

    def stderr_line(self, line: str) -> None:
        """Keep one line the server wrote to stderr; show it at once with ``--verbose``."""
        self.stderr.append(line)
        self.stderr_count += 1
        if self.options.verbose:
            self.console.say(f"server stderr: {plain_line(line)}")

    def mark_stderr(self) -> None:
        """Note that the command's request goes now: later stderr lines are its."""
        self.stderr_mark = self.stderr_count
        self.shown_stderr = False

    def stderr_since_mark(self) -> list[str]:
        """The last lines (at most `TAIL_LINES`) the server wrote to stderr since `mark_stderr`,
        as plain text (`plain_stderr`: no colours, no frames)."""
        count = min(self.stderr_count - self.stderr_mark, len(self.stderr))
        kept = list(self.stderr)[len(self.stderr) - count :] if count > 0 else []
        return tail(kept)

    async def stderr_detail(self) -> str:
        """After a failure, what the server wrote to stderr meanwhile, as ``  | `` lines.

        Nothing with ``--verbose`` (the lines were shown as they came), nor
        when they were shown already.
        """
        if self.options.verbose or self.shown_stderr:
            return ""
        # The lines written just before the answer come through their own pipe.
        await trio.sleep(STDERR_SETTLE)
        self.shown_stderr = True
        return "\n".join("  | " + line for line in self.stderr_since_mark())

    async def show_stderr(self) -> None:
        """After a tool's error, show what the server wrote to stderr meanwhile (see `stderr_detail`)."""
        detail = await self.stderr_detail()
        if detail:
            self.console.say("the server's stderr meanwhile (its last lines):")
            self.console.say(detail)

    def server_name(self) -> str:
        """The server's name for people, quoted (it is the server's own claim)."""
        client = self.client
        if client is not None and client.server_info is not None:
            info = client.server_info
            return repr(info.title or info.name)
        return repr(command_line(self.options))

    def emit(self, text: str) -> None:
        """Write the result (text ending with a newline, or nothing) to stdout, at once.

        At once: the server may take a while to exit after it (up to its
        grace period), and the result should not wait for that. With ``-o
        FILE``, to the file instead.
        """
        if self.options.output is not None:
            write_file(self.options.output, text.encode("utf-8"), self.console)
            return
        if text and self.stdout_status == EXIT_OK:
            self.stdout_status = flush_stdout(text)

    def emit_json(self, value: JSON) -> None:
        """Write the result as one JSON document."""
        self.emit(pretty_json(value) + "\n")


async def _info(session: Command, client: Client) -> int:
    await trio.lowlevel.checkpoint()
    if session.options.json_output:
        session.emit_json(info_wire(client))
    else:
        session.emit(render_info(client))
    return EXIT_OK


def _show_list(
    session: Command, key: str, items: Sequence[_Item], nothing: str, describe: Callable[[_Item], list[str]]
) -> int:
    """What a list command prints: ``{key: [...]}`` with --json, else each item's lines."""
    if session.options.json_output:
        session.emit_json({key: [wire_json(item) for item in items]})
        return EXIT_OK
    if not items:
        session.console.say(f"(the server has no {nothing})")
    session.emit(join_lines("\n".join(describe(item)) for item in items))
    return EXIT_OK


async def _tools(session: Command, client: Client) -> int:
    session.stage = "tools/list"
    tools = await client.list_tools()
    schema = session.options.schema
    return _show_list(session, "tools", tools, "tools", lambda tool: tool_lines(tool, schema))


async def _prompts(session: Command, client: Client) -> int:
    session.stage = "prompts/list"
    return _show_list(session, "prompts", await client.list_prompts(), "prompts", prompt_lines)


async def _resources(session: Command, client: Client) -> int:
    session.stage = "resources/list"
    return _show_list(session, "resources", await client.list_resources(), "resources", resource_lines)


async def _templates(session: Command, client: Client) -> int:
    session.stage = "resources/templates/list"
    templates = await client.list_resource_templates()
    return _show_list(session, "resourceTemplates", templates, "resource templates", template_lines)


async def find_tool(session: Command, client: Client, name: str) -> Tool | None:
    """The tool called ``name``, from the server's list (`None` when it has none such)."""
    session.stage = "tools/list"
    async for candidate in client.iter_tools():
        if candidate.name == name:
            return candidate
    return None


async def _listed_tools(session: Command, client: Client) -> list[Tool] | None:
    """The server's tools, or `None` when it lists none at all (no ``tools`` capability, or no ``tools/list``)."""
    if client.server_capabilities.tools is None:
        return None
    session.stage = "tools/list"
    try:
        return [tool async for tool in client.iter_tools()]
    except RpcError:
        return None


def _unknown_tool(name: str, tools: list[Tool]) -> Failure:
    """The refusal of a call of a tool the server does not list, with the closest names."""
    names = [tool.name for tool in tools]
    import difflib  # only to name what was meant, after a mistake

    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        hint = f"did you mean {' or '.join(map(repr, close))}?"
    elif not names:
        hint = "it lists no tools"
    elif len(names) <= 8:
        hint = f"its tools: {', '.join(names)}"
    else:
        hint = f"see '{PROG} tools'"
    return Failure(
        EXIT_USAGE,
        f"the server has no tool {name!r} ({hint}); nothing was sent",
        kind="usage",
        tool=name,
        suggestions=close,
    )


def _missing_arguments(name: str, tool: Tool, given: Iterable[str]) -> Failure | None:
    """The refusal of a call that lacks arguments the tool's input schema requires, or `None`."""
    schema = tool.input_schema
    required = schema.get("required")
    if not isinstance(required, list):
        return None
    have = set(given)
    missing = [item for item in required if isinstance(item, str) and item not in have]
    if not missing:
        return None
    plural = "s" if len(missing) > 1 else ""
    words = " ".join(f"{item}=..." for item in missing)
    unknown = sorted(item for item in have if item not in known_names(schema))
    import difflib  # only to name what was meant, after a mistake

    hints = []
    for item in missing:
        close = difflib.get_close_matches(item, unknown, n=1, cutoff=0.5)
        if close:
            hints.append(f"{item!r} instead of {close[0]!r}")
    hint = f"; did you mean {' and '.join(hints)}?" if hints else ""
    return Failure(
        EXIT_USAGE,
        f"the tool {name!r} needs the argument{plural} {', '.join(map(repr, missing))} ({words}{hint});"
        " nothing was sent",
        kind="usage",
        argument=missing[0],
    )


async def arguments_for(session: Command, client: Client) -> dict[str, JSON]:
    """The call's arguments: the ``KEY=VALUE`` words read by the tool's input schema.

    A tool the server does not list, and a call without an argument the
    tool requires, are refused before anything is sent (`EXIT_USAGE`, with
    the closest names). Names the schema does not know are refused (when it
    forbids them) or warned about (when it says nothing of them): see
    `unknown_arguments`.
    """
    options = session.options
    tools = await _listed_tools(session, client)
    if tools is None:
        return options.arguments  # it lists nothing: the server will say
    tool = next((tool for tool in tools if tool.name == options.target), None)
    if tool is None:
        raise _unknown_tool(options.target, tools)
    unknown = unknown_arguments(options.arguments, tool.input_schema)
    known = known_names(tool.input_schema)
    refused = [item for item in unknown if item.forbidden]
    if refused:
        names = ", ".join(item.describe(known) for item in refused)
        plural = "s" if len(refused) > 1 else ""
        raise Failure(
            EXIT_USAGE,
            f"the tool {options.target!r} has no argument{plural} {names}; nothing was sent",
            kind="usage",
            argument=refused[0].name,
            suggestions=refused[0].close,
        )
    missing = _missing_arguments(options.target, tool, options.arguments)
    if missing is not None:
        raise missing
    for item in unknown:
        session.console.say(
            f"{PROG}: the tool {options.target!r} does not declare the argument {item.describe(known)};"
            " sent all the same, as its input schema does not forbid other names"
        )
    if not options.raw_values:
        return options.arguments
    try:
        converted = convert_arguments(options.raw_values, tool.input_schema)
    except ArgumentValueError as exc:
        raise Failure(
            EXIT_USAGE, f"{exc} (the tool {options.target!r})", kind="usage", argument=exc.name
        ) from None
    return {**options.arguments, **converted}


async def _catalogue_tool(session: Command, client: Client) -> None:
    """Find the tool a hashed catalogue name stands for among the server's tools (``--config``)."""
    from .._core.naming import exposed_name

    options = session.options
    name = options.catalogue_name
    server = options.spec.name
    session.stage = "tools/list"
    async for tool in client.iter_tools():
        if exposed_name(server, tool.name) == name:
            options.target = tool.name
            options.catalogue_name = None
            return
    raise Failure(
        EXIT_CONFIG,
        f"server {server!r} has no tool named {name!r} in the catalogue (see '{PROG} tools')",
        kind="config",
    )


async def _call(session: Command, client: Client) -> int:
    options = session.options
    if options.catalogue_name is not None and options.spec is not None:
        await _catalogue_tool(session, client)
    arguments = await arguments_for(session, client)
    session.stage = "tools/call"
    session.mark_stderr()
    violation: OutputValidationError | None = None
    try:
        result = await client.call_tool(options.target, arguments, on_progress=session.console.progress)
    except OutputValidationError as exc:
        # The tool ran: its result is shown, and the mismatch said after it.
        from .._models import CallToolResult

        violation = exc
        result = exc.result
        assert isinstance(result, CallToolResult)
    session.console.clear()
    broken = violation is not None and validator_available()  # not merely unchecked
    code = await show_call_result(session, result, broken=broken)
    if violation is None or code != EXIT_OK:
        return code
    if not options.output_check:
        return EXIT_OK
    if not validator_available():
        # Only an install without the package's dependencies gets here
        # (pip install --no-deps): said once per process, not on each call.
        global _told_unchecked
        if not _told_unchecked:
            _told_unchecked = True
            session.console.say(
                f"{PROG}: structured output is not checked against the tools' outputSchema:"
                " jsonschema-rs is not installed (pip install jsonschema-rs)"
            )
        return EXIT_OK
    # stdout holds the result (with --json too); the mismatch is on stderr, and in the status.
    session.console.error(f"{violation} (--no-output-check skips the check)")
    return EXIT_OUTPUT_SCHEMA


#: Whether the command said that it cannot check structured output (once per process).
_told_unchecked = False


async def show_call_result(
    session: Command, result: CallToolResult, *, broken: bool = False, what: str | None = None
) -> int:
    """Show a tool's result (stdout, or ``-o FILE``); `EXIT_TOOL_ERROR` when it is an error.

    ``what`` names what ran, for the error message (default: ``the tool
    'NAME'``, of the command line).
    """
    options = session.options
    if what is None:
        what = f"the tool {options.target!r}"
    if options.json_output:
        session.emit_json(call_result_wire(result))
        if result.is_error:
            session.console.error(f"{what} reported an error")
            await session.show_stderr()
            return EXIT_TOOL_ERROR
        return EXIT_OK
    if options.output is not None and not result.is_error and binary_parts(result):
        write_binary(session, result)
        return EXIT_OK
    # A result that broke its schema shows its structured content, whatever the text says.
    text = render_call_result(result, structured=broken)
    if result.is_error:
        body = text.rstrip("\n")
        if "\n" in body or not body:
            session.console.error(f"{what} reported an error" + (":" if body else ""))
            if body:
                session.console.say(body)
        else:
            session.console.error(f"{what} reported an error: {body}")
        await session.show_stderr()
        return EXIT_TOOL_ERROR
    session.emit(text)
    return EXIT_OK


async def _read(session: Command, client: Client) -> int:
    session.stage = "resources/read"
    session.mark_stderr()
    result = await client.read_resource(session.options.target, on_progress=session.console.progress)
    from .._models import ReadResourceResult

    assert isinstance(result, ReadResourceResult)  # not manual: input is answered through the hooks
    session.console.clear()
    if session.options.json_output:
        session.emit_json(wire_json(result))
    elif session.options.output is not None and binary_parts(result):
        write_binary(session, result)
    else:
        if not result.contents:
            session.console.say("(the resource is empty)")
        session.emit(render_read_result(result))
    return EXIT_OK


def write_binary(session: Command, result: CallToolResult | ReadResourceResult) -> None:
    """``-o FILE`` for a result with binary parts: each part's bytes, decoded, to its file.

    The first part goes to FILE, the next ones beside it (``out.png``,
    ``out-2.png``...); the rest of the result (its text) to stdout.
    """
    import base64
    import binascii

    from .._models import CallToolResult

    path = session.options.output
    assert path is not None
    parts = binary_parts(result)
    for index, (mime, data) in enumerate(parts, 1):
        target = numbered(path, index)
        try:
            content = base64.b64decode("".join(data.split()), validate=True)
        except (binascii.Error, ValueError):
            raise Failure(
                EXIT_PROTOCOL,
                f"the server sent {mime} content that is not valid base64 (part {index} of the result)",
                kind="protocol",
            ) from None
        write_file(target, content, session.console, mime)
    if isinstance(result, CallToolResult):
        rest = [block for block in result.content if not _is_binary(block)]
        text = render_call_result(attrs.evolve(result, content=rest)) if rest else ""
    else:
        text = ""
    if text and session.stdout_status == EXIT_OK:
        session.stdout_status = flush_stdout(text)


def _is_binary(block: object) -> bool:
    from .._models import AudioContent, BlobResourceContents, EmbeddedResource, ImageContent

    return isinstance(block, ImageContent | AudioContent) or (
        isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents)
    )


def numbered(path: str, index: int) -> str:
    """The file of the ``index``-th binary part: ``path`` itself, then ``stem-2.suffix``..."""
    if index == 1:
        return path
    head, dot, suffix = path.rpartition(".")
    if not dot or "/" in suffix or os.sep in suffix or not head or head.endswith(("/", os.sep)):
        return f"{path}-{index}"
    return f"{head}-{index}.{suffix}"


def write_file(path: str, content: bytes, console: Console, what: str = "") -> None:
    """Write ``-o FILE``, and say so on stderr.

    Raises:
        Failure: The file cannot be written (`EXIT_USAGE`).
    """
    try:
        with open(path, "wb") as file:
            file.write(content)
    except OSError as exc:
        raise Failure(
            EXIT_USAGE, f"cannot write {path}: {exc.strerror or exc}", kind="usage", path=path
        ) from None
    console.say(f"{PROG}: wrote {len(content)} bytes{f' ({what})' if what else ''} to {path}")


async def _prompt(session: Command, client: Client) -> int:
    options = session.options
    session.stage = "prompts/get"
    session.mark_stderr()
    result = await client.get_prompt(
        options.target, options.arguments or None, on_progress=session.console.progress
    )
    from .._models import GetPromptResult

    assert isinstance(result, GetPromptResult)  # not manual: input is answered through the hooks
    session.console.clear()
    if options.json_output:
        session.emit_json(wire_json(result))
    else:
        session.emit(render_prompt_result(result))
    return EXIT_OK


def _require(session: Command, client: Client, capability: str, declared: object) -> None:
    """Refuse a command whose capability the server did not declare (``declared`` is `None`)."""
    if declared is None:
        raise Failure(
            EXIT_RPC_ERROR,
            f"the server {session.server_name()} does not offer {capability}"
            f" (its capabilities have no {capability!r}, at protocol version {client.protocol_version})",
            kind="unsupported",
            capability=capability,
        )


async def _complete(session: Command, client: Client) -> int:
    options = session.options
    _require(session, client, "completions", client.server_capabilities.completions)
    session.stage = "completion/complete"
    session.mark_stderr()
    ref = {"type": REFS[options.ref]}
    ref["name" if options.ref == "prompt" else "uri"] = options.target
    completion = await client.complete(ref, options.argument, options.arguments or None)
    if options.json_output:
        session.emit_json(wire_json(completion))
        return EXIT_OK
    if not completion.values:
        session.console.say("(no suggestions)")
    elif completion.has_more or (completion.total is not None and completion.total > len(completion.values)):
        total = f" of {completion.total}" if completion.total is not None else ""
        session.console.say(f"({len(completion.values)}{total} suggestions shown; the server has more)")
    session.emit(join_lines(completion.values))
    return EXIT_OK


async def _log_level(session: Command, client: Client) -> int:
    """``log-level LEVEL``: ask for the server's log messages from LEVEL up, and show them."""
    options = session.options
    level = cast("LogLevel", options.target)  # one of the parser's choices
    _require(session, client, "logging", client.server_capabilities.logging)
    session.stage = "logging/setLevel"
    session.mark_stderr()
    if client.era == "legacy":
        await client.set_logging_level(level)
        how = "logging/setLevel"
    else:
        # 2026-07-28: each request asks for its logs (its logLevel); the next ones ask for these.
        await trio.lowlevel.checkpoint()
        client.log_level = level
        how = "logLevel of each request"
    session.show_logs = True
    if options.json_output:
        session.emit_json({"level": level, "method": how})
    else:
        session.emit(f"log level: {level} ({how}); the server's log messages show on stderr\n")
    return EXIT_OK


HANDLERS: Final[dict[str, Callable[[Command, Client], Any]]] = {
    "info": _info,
    "tools": _tools,
    "prompts": _prompts,
    "resources": _resources,
    "templates": _templates,
    "call": _call,
    "read": _read,
    "prompt": _prompt,
    "complete": _complete,
    "log-level": _log_level,
}


# ----------------------------------------------------------------- running


def _keeping_stderr(handler: Callable[[Command, Client], Any]) -> Callable[[Command, Client], Any]:
    """``handler``, keeping what the server wrote to stderr when it answers with an error.

    Kept then, before the server is stopped: what it says while it stops is
    not about the error.
    """

    async def run(session: Command, client: Client) -> int:
        try:
            code: int = await handler(session, client)
        except RpcError:
            session.error_stderr = await session.stderr_detail()
            raise
        return code

    return run


async def _session(
    options: Options, console: Console, handler: Callable[[Command, Client], Any] | None = None
) -> tuple[int, Command]:
    session = Command(options, console)
    budget = session.budget
    asker = Asker(console, budget, interactive=isatty(sys.stdin), server_name=session.server_name)
    session.asker = asker
    session.handler = _keeping_stderr(handler if handler is not None else HANDLERS[options.command])
    verbose = options.verbose
    on_stderr = session.stderr_line

    def on_log(message: str) -> None:
        if verbose:
            console.say(f"{PROG}: {message}")

    def on_notification(note: dict[str, JSON]) -> None:
        shown = verbose or (session.show_logs and note.get("method") == "notifications/message")
        line = note_line(note) if shown else None
        if line is not None:
            console.say(line)

    code = EXIT_OK
    budget.start()
    if options.command in _LISTING_COMMANDS and options.url is None and options.spec is None:
        # A system task: it never fails, and it ends with the run.
        trio.lowlevel.spawn_system_task(prepare_listing)
    try:
        with budget.scope:
            session.stage = "connecting"
            code = await _connect_and_run(session, asker, on_stderr, on_log, on_notification)
    except MCPError as exc:
        failure = explain(exc, options, session.stage, declined=asker.declined)
        if isinstance(exc, RpcError):
            failure.detail = session.error_stderr
        raise failure from None
    if budget.scope.cancelled_caught:
        seconds = number(options.timeout or 0)
        raise Failure(
            EXIT_TIMEOUT,
            f"timed out after {seconds} s ({session.stage})",
            kind="timeout",
            stage=session.stage,
        )
    return code, session


#: The commands that list the server's tools before anything else (`prepare_listing`).
_LISTING_COMMANDS: Final = frozenset({"call", "tools"})


class _Idle(trio.abc.Instrument):
    """Sets an event the first time the run is about to wait with no task ready to run, once ``ready()``."""

    def __init__(self, event: trio.Event, ready: Callable[[], bool]) -> None:
        self.event = event
        self.ready = ready
        self.token = trio.lowlevel.current_trio_token()

    def before_io_wait(self, timeout: float) -> None:
        if timeout > 0 and not self.event.is_set() and self.ready():
            # Nothing to run: the scheduler is about to block. The event is
            # set through the run's wake-up, which cuts the wait short.
            self.token.run_sync_soon(self.event.set, idempotent=True)


def _always() -> bool:
    return True


async def _idle(ready: Callable[[], bool] = _always) -> None:
    """Return once the run is about to wait with no task ready to run, at a moment when ``ready()``.

    ``ready`` is asked at each wait, until it says yes: a wait while it
    says no is left alone, so that waiting for it never keeps the run busy.
    """
    idle = trio.Event()
    instrument = _Idle(idle, ready)
    trio.lowlevel.add_instrument(instrument)
    try:
        await idle.wait()
    finally:
        trio.lowlevel.remove_instrument(instrument)


def _client_loaded() -> bool:
    return _LOADED_WITH_THE_CLIENT in sys.modules


#: The module whose presence says that the client has loaded (`prepare_listing`).
_LOADED_WITH_THE_CLIENT: Final = "trio_mcp._models"


async def prepare_listing() -> None:
    """Pay a tool listing's one-time costs while the server starts.

    The first listing a process decodes loads the models' converter and
    builds its decoders: tens of milliseconds of CPU, once the answer has
    come. This does that work on a listing of its own as soon as no task is
    ready to run (the command is waiting for the server it started), so
    that it overlaps with the server's start-up: the command's wall time
    drops by as much, its CPU time does not change. The moment is the
    scheduler's own: an instrument (`trio.abc.Instrument.before_io_wait`)
    says when it is about to block; and only once the client (with the
    models) has loaded, which it does once the server is starting: the
    first wait is the spawn itself, whose worker thread must not compete
    with this work for the interpreter. Never fails: a head start only, the
    real listing reports any problem. See docs/design.rst for what it buys.
    """
    await _idle(_client_loaded)
    with contextlib.suppress(Exception):  # a head start only: the real listing reports any problem
        from .._models import ListToolsResult
        from .._models.codec import structure

        structure({"tools": [{"name": "-", "inputSchema": {"type": "object"}}]}, ListToolsResult)


async def _connect_and_run(
    session: Command,
    asker: Asker,
    on_stderr: Callable[[str], None],
    on_log: Callable[[str], None],
    on_notification: Callable[[dict[str, JSON]], None],
) -> int:
    options = session.options
    probe = PROBE_TIMEOUT if options.timeout is None else min(PROBE_TIMEOUT, options.timeout / 2)
    client_options = ClientOptions(
        on_log=on_log,
        request_timeout=None,
        protocol=options.protocol,
        probe_timeout=probe,
        on_elicitation=asker,
        on_notification=on_notification,
        log_level="debug" if options.verbose else None,
        input_timeout=None,
        # A mismatch is an error the call reports itself (`_call`), the result shown all the same.
        validate_output="strict" if options.output_check else "off",
    )
    while True:
        opened: AbstractAsyncContextManager[Client]
        if options.spec is not None:
            # A server of a configuration file (--server NAME, call SERVER.TOOL).
            from .._group.connect import open_spec

            opened = open_spec(options.spec, client_options, on_stderr=on_stderr)
        elif options.url is not None:
            from ..auth._storage import stored_login

            auth = stored_login(options.url, options.headers)  # the login kept by `trio-mcp login`
            opened = open_client(
                HTTPTarget(options.url, headers=options.headers, auth=auth), options=client_options
            )
        else:
            target = ProcessTarget(
                options.server[0], options.server[1:], env=options.env, cwd=options.cwd, on_stderr=on_stderr
            )
            opened = open_client(target, options=client_options)
        # Ctrl-C: the request in flight is withdrawn (notifications/cancelled),
        # and the server gets what is left of a second to leave.
        closing = trio.CancelScope()
        try:
            with closing:
                async with opened as client:
                    session.client = client
                    try:
                        code: int = await session.handler(session, client)
                    except KeyboardInterrupt:
                        closing.deadline = trio.current_time() + INTERRUPT_GRACE
                        session.console.end_line()  # a question's line, left open
                        raise Failure(
                            EXIT_INTERRUPTED,
                            f"interrupted ({session.stage}): the request was cancelled and the server stopped",
                            kind="interrupted",
                        ) from None
            return code
        except StartAgain:
            session.stage = "connecting"
            options = session.options


def flush_stdout(text: str) -> int:
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


def emit_stdout_json(value: JSON) -> None:
    """Write one JSON document to stdout, at once."""
    flush_stdout(pretty_json(value) + "\n")


def execute(options: Options, handler: Callable[[Command, Client], Any] | None = None) -> int:
    """Run the parsed command line: the result to stdout, the rest to stderr; the exit status.

    ``handler`` runs the command once connected (default: the one-shot
    command's). Never raises (but `SystemExit`): every error is a message and
    an exit status.
    """
    console = Console()
    session: Command | None = None
    failure: Failure | None = None
    code = EXIT_OK
    try:
        code, session = trio.run(_session, options, console, handler)
    except Failure as exc:
        failure = exc
    except BaseException as exc:
        console.clear()
        failure = failure_from(exc, options, console, "connecting")
        if failure is None:
            return EXIT_INTERRUPTED
    console.clear()
    if failure is not None:
        return failure.report(options, console, emit_stdout_json)
    assert session is not None
    return session.stdout_status if session.stdout_status != EXIT_OK else code
