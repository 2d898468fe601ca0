"""``trio-mcp shell``: one server, many commands, typed one a line.

The shell connects once, the way every command does, then reads lines and
runs each as the one-shot command of the same words would (``call add a=1
b=2``, ``tools --schema``, ``complete prompt greet name=A``...), against the
same client. A command that fails says why and the shell goes on; a server
that dies ends it, with its last stderr lines and `EXIT_SERVER_GONE`.
Ctrl-C cancels the command running (its request is withdrawn, the server
goes on); at the prompt, it ends the shell with `EXIT_INTERRUPTED`. What
the commands run against is a `Backend`: one server (`OneServer`), or the
servers of a configuration (`._configs.GroupServers`).

Input: on a terminal, lines are read with `input` and readline (history,
Tab completion of command, tool, prompt and argument names), in a worker
thread that Trio abandons when the shell is interrupted; otherwise they
are read from stdin as they come, with no prompt, so that a script can be
piped in. Everything that is not a result goes to stderr.

The completion is `completions`, a pure function of the line typed so far
and a `Catalog` of what the server offers, so that it can be tested
without a terminal.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import trio

from .._core.eras import LOG_LEVELS
from .._errors import MCPError, RpcError, ServerGone, TransportClosed
from ._args import (
    COMMAND_HELP,
    COMMANDS,
    CONFIG_COMMANDS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    LOGIN_COMMANDS,
    PROG,
    TASK_ACTIONS,
    UsageError,
    parse_args,
)
from ._console import isatty
from ._failures import Failure, explain
from ._render import number, pretty_json
from ._run import HANDLERS, Budget, Command, StartAgain, execute
from ._tasks import run_tasks

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator, Mapping

    from .._client import Client
    from ._args import Options

__all__ = [
    "PROMPT",
    "SHELL_COMMANDS",
    "Backend",
    "Catalog",
    "OneServer",
    "completions",
    "execute_shell",
    "history_path",
    "run_shell",
    "server_catalog",
    "shell_loop",
    "template_suggestions",
]

JSON = Any

#: What the shell shows before each line, on a terminal.
PROMPT: Final = f"{PROG}> "
#: The words that end the shell.
EXIT_WORDS: Final = ("exit", "quit")
#: The commands the shell runs (all of the command line's on one server, but
#: itself; logging in and out is done before the shell connects), and its own.
SHELL_COMMANDS: Final = (
    *(
        name
        for name in COMMANDS
        if name not in ("shell", "completion") and name not in CONFIG_COMMANDS + LOGIN_COMMANDS
    ),
    "help",
    *EXIT_WORDS,
)
#: Options a command line takes only when the shell starts (they are the server's).
STARTUP_ONLY: Final = ("--protocol", "--env", "--cwd", "--config", "--server")
#: The most lines the history file keeps.
HISTORY_LENGTH: Final = 1000
#: What a line gives of the `Options` it is run with (the rest is the shell's).
_PER_COMMAND: Final = (
    "command",
    "target",
    "arguments",
    "raw_values",
    "schema",
    "ref",
    "argument",
    "output",
    "output_check",
    "task_action",
    "detach",
)
#: The options each command takes, for completion.
_OPTIONS: Final = ("--json", "--timeout", "--verbose")
#: The options of a line followed by a value.
_VALUED: Final = ("--timeout", "-o", "--output")


# ----------------------------------------------------------------- completion


class Catalog:
    """What the server offers, as Tab completion needs it.

    Replaced whole, never changed in place: the completion reads it from
    readline's thread.
    """

    def __init__(
        self,
        *,
        tools: Mapping[str, JSON] | None = None,
        prompts: Mapping[str, list[str]] | None = None,
        resources: list[str] | None = None,
        templates: list[str] | None = None,
        commands: tuple[str, ...] = SHELL_COMMANDS,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        self.commands = commands
        """The shell's command names."""
        self.tools: Mapping[str, JSON] = dict(tools or {})
        """Each tool's input schema, by name."""
        self.prompts: Mapping[str, list[str]] = dict(prompts or {})
        """Each prompt's argument names, by name."""
        self.resources = list(resources or [])
        """The resources' URIs."""
        self.templates = list(templates or [])
        """The resource templates' URI templates."""
        self.aliases: Mapping[str, str] = dict(aliases or {})
        """Other names of tools, to the name in `tools`: a group's ``SERVER.TOOL``
        (offered once the word has a dot)."""


def _template_variables(template: str) -> list[str]:
    """The variable names of a URI template (``{name}``, ``{+path}``, ``{?q,lang}``)."""
    names: list[str] = []
    for expression in re.findall(r"\{([^}]*)\}", template):
        for part in expression.lstrip("+#./;?&").split(","):
            name = part.split(":")[0].rstrip("*")
            if name and name not in names:
                names.append(name)
    return names


def _template_starts(templates: list[str], text: str) -> list[str]:
    """For ``read``: each template's text before its first variable (``demo://greeting/``), to type the rest after.

    A template without variables is a whole URI; once the text goes past
    the fixed start, there is nothing left to offer.
    """
    out: list[str] = []
    for template in templates:
        start, brace, _ = template.partition("{")
        item = start if brace else start + " "
        if start and item.startswith(text) and item != text and item not in out:
            out.append(item)
    return out


def _values_for(schema: JSON) -> list[str]:
    """The values worth offering for an argument: its enum's strings, or true and false."""
    if not isinstance(schema, dict):
        return []
    enum = schema.get("enum")
    if isinstance(enum, list):
        return [value if isinstance(value, str) else pretty_json(value) for value in enum]
    return ["true", "false"] if schema.get("type") == "boolean" else []


def quoted(word: str) -> str:
    """``word`` as the command line reads it back whole: quoted when it holds a space, a quote or a backslash."""
    return shlex.quote(word) if any(char in word for char in " \t\n'\"\\") else word


def unquoted(text: str) -> str:
    """The word being typed as the command will read it: ``location='Los A`` is ``location=Los A``."""
    for closing in ("", "'", '"'):
        with contextlib.suppress(ValueError):
            words = shlex.split(text + closing)
            return words[0] if len(words) == 1 else text
    return text


def _positionals(words: list[str]) -> list[str]:
    """The words that are not options (nor an option's value)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif not word.startswith("-"):
            out.append(word)
    return out


def _names(arguments: list[str], given: list[str], text: str) -> list[str]:
    """``NAME=`` for each argument name starting with ``text`` and not given yet."""
    taken = {word.partition("=")[0] for word in given}
    return [f"{name}=" for name in arguments if name.startswith(text) and name not in taken]


def _template_values(
    templates: list[str], text: str, suggest: Callable[[str, str, str], list[str]]
) -> list[str]:
    """For ``read``: whole URIs for the text typed into a template's first variable, from the server's suggestions.

    Only a simple variable (``{name}``) is completed; the URI ends with a
    space when the template has no other variable.
    """
    out: list[str] = []
    for template in templates:
        start, brace, rest = template.partition("{")
        expression, _, after = rest.partition("}")
        if not brace or not text.startswith(start) or not expression or expression[0] in "+#./;?&":
            continue
        typed = text[len(start) :]
        if "/" in typed or (after and after[0] in typed):
            continue  # past the variable
        fixed, more, _ = after.partition("{")
        name = expression.split(",")[0].split(":")[0].rstrip("*")
        for value in suggest(template, name, typed):
            item = start + value + fixed
            if item.startswith(text):
                item = item if more else f"{quoted(item)} "
                if item not in out:
                    out.append(item)
    return out


def completions(
    before: str, text: str, catalog: Catalog, suggest: Callable[[str, str, str], list[str]] | None = None
) -> list[str]:
    """What Tab offers for the word ``text``, after ``before`` on the line.

    Command names first, then by command: tool, prompt, resource and
    template names (for ``read``, the resources' URIs and the start of each
    template's, up to its first variable); ``NAME=`` for the arguments not given yet (a tool's from
    its input schema, a prompt's, a template's variables); after ``NAME=``,
    the values of an enum or a boolean; options after ``-``. A whole word
    (a command or a name) ends with a space; ``NAME=`` does not.

    ``suggest``, when given, asks the server for the values of a
    template's variable: ``read demo://greeting/A`` offers the names the
    server suggests for ``{name}``.
    """
    try:
        words = shlex.split(before)
    except ValueError:
        return []
    if words and words[-1] in _VALUED:
        return []
    positionals = _positionals(words)
    if not positionals:
        if text.startswith("-"):
            return [f"{option} " for option in _OPTIONS if option.startswith(text)]
        return [f"{name} " for name in catalog.commands if name.startswith(text)]
    command, positionals = positionals[0], positionals[1:]
    if text.startswith("-"):
        options = (*_OPTIONS, "--schema") if command == "tools" else _OPTIONS
        return [f"{option} " for option in options if option.startswith(text)]

    # What is inserted is quoted as the command line reads it back (a value
    # with a space, a quote); what was typed is compared unquoted.
    typed = unquoted(text)

    def whole(candidates: list[str]) -> list[str]:
        return [f"{quoted(item)} " for item in candidates if item.startswith(typed)]

    if command == "tasks":
        if not positionals:
            return whole(list(TASK_ACTIONS))
        if positionals[0] != "start":
            return []
        command, positionals = "call", positionals[1:]  # tasks start TOOL [KEY=VALUE...]: as call
    if command == "call":
        if not positionals:
            return whole(sorted(catalog.tools) + (sorted(catalog.aliases) if "." in typed else []))
        schema = catalog.tools.get(catalog.aliases.get(positionals[0], positionals[0]))
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            return []
        name, sep, value = typed.partition("=")
        if sep:
            return [
                f"{name}={quoted(item)} "
                for item in _values_for(properties.get(name))
                if item.startswith(value)
            ]
        return _names(list(properties), positionals[1:], typed)
    if command == "log-level":
        return whole(list(LOG_LEVELS)) if not positionals else []
    if command == "prompt":
        if not positionals:
            return whole(sorted(catalog.prompts))
        return _names(catalog.prompts.get(positionals[0], []), positionals[1:], typed)
    if command == "read":
        if positionals:
            return []
        offered = [*whole(catalog.resources), *_template_starts(catalog.templates, typed)]
        if suggest is not None:
            offered += [
                item for item in _template_values(catalog.templates, typed, suggest) if item not in offered
            ]
        return offered
    if command == "complete":
        if not positionals:
            return whole(["prompt", "template"])
        if len(positionals) == 1:
            return whole(sorted(catalog.prompts) if positionals[0] == "prompt" else catalog.templates)
        if positionals[0] == "prompt":
            arguments = catalog.prompts.get(positionals[1], [])
        else:
            arguments = _template_variables(positionals[1])
        return _names(arguments, positionals[2:], typed)
    return []


async def server_catalog(client: Client) -> Catalog:
    """What the server offers, for completion; what cannot be listed is left out."""
    tools: dict[str, JSON] = {}
    prompts: dict[str, list[str]] = {}
    resources: list[str] = []
    templates: list[str] = []
    caps = client.server_capabilities
    with contextlib.suppress(MCPError):
        if caps.tools is not None:
            tools = {tool.name: tool.input_schema for tool in await client.list_tools()}
    with contextlib.suppress(MCPError):
        if caps.prompts is not None:
            prompts = {p.name: [a.name for a in p.arguments or []] for p in await client.list_prompts()}
    with contextlib.suppress(MCPError):
        if caps.resources is not None:
            resources = [resource.uri for resource in await client.list_resources()]
            templates = [template.uri_template for template in await client.list_resource_templates()]
    return Catalog(tools=tools, prompts=prompts, resources=resources, templates=templates)


# ----------------------------------------------------------------- input


def history_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where the shell keeps its history: ``TRIO_MCP_HISTORY`` (empty: nowhere), else the user's state folder.

    The state folder is ``$XDG_STATE_HOME`` (default ``~/.local/state``), or
    ``%LOCALAPPDATA%`` on Windows; the file is ``trio-mcp/shell_history`` in it.
    """
    env = os.environ if environ is None else environ
    explicit = env.get("TRIO_MCP_HISTORY")
    if explicit is not None:
        return Path(explicit) if explicit else None
    if sys.platform == "win32" and env.get("LOCALAPPDATA"):
        base = Path(env["LOCALAPPDATA"])
    elif env.get("XDG_STATE_HOME"):
        base = Path(env["XDG_STATE_HOME"])
    else:
        base = Path.home() / ".local" / "state"
    return base / "trio-mcp" / "shell_history"


class Lines:
    """The shell's lines: readline on a terminal, stdin as it comes otherwise."""

    def __init__(
        self, catalog: Callable[[], Catalog], suggest: Callable[[str, str, str], list[str]] | None = None
    ) -> None:
        self.terminal = isatty(sys.stdin)
        self.readline: Any = None
        self.history: Path | None = None
        self._termios: Any = None
        if self.terminal and isatty(sys.stdout):
            try:
                import readline
            except ImportError:  # pragma: no cover - Python without readline
                readline = None  # type: ignore[assignment]
            self.readline = readline
        if self.readline is not None:
            self._start_readline(catalog, suggest)
        # A read left waiting (its caller cancelled: the server died at the
        # prompt): the next read takes its line, rather than a second thread
        # racing it for stdin.
        self._pending: tuple[trio.Event, list[Any]] | None = None

    def _start_readline(
        self, catalog: Callable[[], Catalog], suggest: Callable[[str, str, str], list[str]] | None
    ) -> None:
        readline = self.readline
        with contextlib.suppress(ImportError, OSError, ValueError):
            import termios

            # readline, abandoned in its thread on Ctrl-C, leaves the terminal as it set it.
            self._termios = (termios, termios.tcgetattr(sys.stdin.fileno()))
        matches: list[str] = []

        def complete(text: str, state: int) -> str | None:
            if state == 0:
                line = readline.get_line_buffer()
                matches[:] = completions(line[: readline.get_begidx()], text, catalog(), suggest)
            return matches[state] if state < len(matches) else None

        readline.set_completer(complete)
        readline.set_completer_delims(" \t\n")
        if "libedit" in (readline.__doc__ or ""):  # pragma: no cover - macOS's Python
            readline.parse_and_bind("bind ^I rl_complete")
        else:
            readline.parse_and_bind("tab: complete")
        readline.set_history_length(HISTORY_LENGTH)
        self.history = history_path()
        if self.history is not None:
            with contextlib.suppress(OSError, ValueError):
                readline.read_history_file(str(self.history))

    @property
    def waiting(self) -> bool:
        """Whether a read is still waiting for its line (the prompt is showing)."""
        return self._pending is not None

    async def read(self, prompt: str = PROMPT) -> str | None:
        """The next line, without its newline; `None` at the end of input.

        Cancelled, the read goes on in its thread, and the next call gets
        its line (whose prompt was shown already).
        """
        if self._pending is None:
            if self.readline is not None:
                self._pending = self._start(lambda: _input(prompt))
            else:
                self._pending = self._start(lambda: self._plain(prompt))
        done, box = self._pending
        await done.wait()
        self._pending = None
        line: str | None = box[0].unwrap()
        return line

    def _plain(self, prompt: str) -> str | None:
        if self.terminal:
            sys.stderr.write(prompt)
            sys.stderr.flush()
        line = sys.stdin.readline()
        return line.rstrip("\r\n") if line else None

    @staticmethod
    def _start(read: Callable[[], str | None]) -> tuple[trio.Event, list[Any]]:
        token = trio.lowlevel.current_trio_token()
        done = trio.Event()
        box: list[Any] = []

        def deliver(outcome: Any) -> None:
            def finish() -> None:
                box.append(outcome)
                done.set()

            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(finish)

        trio.lowlevel.start_thread_soon(read, deliver, name="trio-mcp shell input")
        return done, box

    def close(self) -> None:
        """Save the history (if it can be: never an error) and give the terminal back as it was."""
        if self.readline is not None and self.history is not None:
            with contextlib.suppress(OSError, ValueError):
                self.history.parent.mkdir(parents=True, exist_ok=True)
                self.readline.write_history_file(str(self.history))
        if self._termios is not None:
            termios, saved = self._termios
            with contextlib.suppress(OSError, ValueError):
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, saved)


def _input(prompt: str = PROMPT) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


# ----------------------------------------------------------------- the loop


class Backend(Protocol):
    """What the shell's commands run against: one server, or a group of them."""

    commands: tuple[str, ...]
    """The commands the shell takes (``help`` and ``exit`` among them)."""
    server_per_line: bool
    """Whether a line may say which server it goes to (``--server NAME``)."""

    async def run(self, session: Command, options: Options) -> int:
        """Run one command (``options.command``); its exit status.

        Raises `ServerGone` or `TransportClosed` only to end the shell.
        """

    async def catalog(self) -> Catalog:
        """What Tab completes."""

    async def read(self, lines: Lines) -> str | None:
        """The next line (`None` at the end of input), or the error that ends the shell."""

    async def suggest(self, template: str, name: str, typed: str) -> list[str]:
        """The server's values for a variable of a resource template (``completion/complete``), or none."""


class OneServer:
    """The shell's commands on one server: the command line's own, against one client."""

    commands: tuple[str, ...] = SHELL_COMMANDS
    server_per_line = False
    restartable = True
    """Whether the shell may offer to start the server again when it dies (`StartAgain`)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def run(self, session: Command, options: Options) -> int:
        handler = run_tasks if options.command == "tasks" else HANDLERS[options.command]
        code: int = await handler(session, self.client)
        return code

    async def catalog(self) -> Catalog:
        return await server_catalog(self.client)

    async def read(self, lines: Lines) -> str | None:
        return await _read_watching(lines, self.client)

    async def suggest(self, template: str, name: str, typed: str) -> list[str]:
        return await template_suggestions(self.client, template, name, typed)


#: How long Tab waits for the server's suggestions, in seconds.
SUGGEST_BUDGET: Final = 2.0


async def template_suggestions(client: Client, template: str, name: str, typed: str) -> list[str]:
    """What the server suggests for a variable of a template (nothing if it cannot say within `SUGGEST_BUDGET`)."""
    if client.server_capabilities.completions is None:
        await trio.lowlevel.checkpoint()
        return []
    with trio.move_on_after(SUGGEST_BUDGET), contextlib.suppress(MCPError):
        completion = await client.complete({"type": "ref/resource", "uri": template}, (name, typed))
        return list(completion.values)
    return []


class _Exit(Exception):
    """``exit [STATUS]``."""

    def __init__(self, status: int | None) -> None:
        super().__init__(status)
        self.status = status


def _help(backend: Backend) -> str:
    lines = ["commands (the words and options of the command line; --json, --timeout per command):"]
    lines += [f"  {name:<10} {what}" for name, what in COMMAND_HELP.items() if name in backend.commands]
    lines += [
        f"  {'help':<10} this list ('COMMAND --help': a command's own)",
        f"  {'exit':<10} end the shell (also 'quit', or Ctrl-D), with the status of the last command",
        "Ctrl-C cancels the command running; at the prompt, it ends the shell",
    ]
    if backend.server_per_line:
        lines.append("--server NAME on a line sends that command to one server of the configuration")
    return "\n".join(lines) + "\n"


class Shell:
    """The shell's state: the session of the one-shot commands, reused for each line."""

    def __init__(self, session: Command, backend: Backend) -> None:
        self.session = session
        self.backend = backend
        self.startup = session.options
        self.catalog = Catalog(commands=backend.commands)
        """What Tab completes (filled in when lines are read with readline)."""
        self.completing = False
        """Whether lines are read with readline (and `catalog` is kept up to date)."""
        self.status = EXIT_OK
        """The exit status of the last command."""
        self.command_scope: trio.CancelScope | None = None
        """The scope of the command running, which Ctrl-C cancels."""
        self.leave = trio.CancelScope()
        """The scope of the whole loop, which Ctrl-C at the prompt cancels."""

    def _options(self, words: list[str]) -> Options:
        """The options of one line: its own, on top of the shell's."""
        if "--" in words:
            raise UsageError("the server is given when the shell starts, not to each command")
        startup_only: tuple[str, ...] = STARTUP_ONLY
        if self.backend.server_per_line:
            startup_only = tuple(option for option in STARTUP_ONLY if option != "--server")
        for word in words:
            if word.partition("=")[0] in startup_only:
                raise UsageError(f"{word.partition('=')[0]} is an option of the shell, given when it starts")
        line = parse_args(words)
        if line.command == "shell":
            raise UsageError("this is the shell already")
        if line.command not in self.backend.commands:
            raise UsageError(f"{line.command!r} is not a command of this shell")
        # The shell's options (how the server was reached, among them), with the line's on top.
        options = copy.copy(self.startup)
        for name in _PER_COMMAND:
            setattr(options, name, getattr(line, name))
        if self.backend.server_per_line:
            options.server_name = line.server_name
        options.verbose = line.verbose or self.startup.verbose
        options.json_output = line.json_output or self.startup.json_output
        if any(word == "--timeout" or word.startswith("--timeout=") for word in words):
            options.timeout = line.timeout
        return options

    async def run_line(self, line: str) -> None:
        """Run one line: a command, ``help``, ``exit``, or nothing."""
        session = self.session
        console = session.console
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            console.error(f"cannot read the line: {exc}")
            self.status = EXIT_USAGE
            return
        if not words:
            return
        if words[0] in EXIT_WORDS:
            if len(words) > 2 or (len(words) == 2 and not words[1].isdigit()):
                console.error(f"usage: {words[0]} [STATUS]")
                self.status = EXIT_USAGE
                return
            raise _Exit(int(words[1]) if len(words) == 2 else None)
        if words[0] == "help":
            session.emit(_help(self.backend))
            return
        commands = self.backend.commands
        if words[0] not in commands and not words[0].startswith("-"):
            console.error(f"unknown command {words[0]!r} (one of {', '.join(commands)})")
            self.status = EXIT_USAGE
            return
        try:
            options = self._options(words)
        except UsageError as exc:
            prog = PROG + (f" {words[0]}" if words[0] in COMMANDS else "")
            console.say(f"{prog}: error: {exc}")
            self.status = EXIT_USAGE
            return
        except SystemExit:  # "call --help": printed
            self.status = EXIT_OK
            return
        self.status = await self._run(options)
        if options.command in ("tools", "prompts", "resources", "templates", "servers") and self.completing:
            await self.refresh_catalog(options)

    async def refresh_catalog(self, options: Options) -> None:
        """List what the server offers again, for completion (within the command's time budget; Ctrl-C skips it)."""
        with trio.move_on_after(options.timeout if options.timeout is not None else float("inf")) as scope:
            self.command_scope = scope
            try:
                self.catalog = await self.backend.catalog()
            finally:
                self.command_scope = None

    async def watch_interrupts(self, signals: AsyncIterator[int]) -> None:
        """Ctrl-C: cancel the command running; at the prompt (or once more while it stops), leave."""
        async for _ in signals:
            scope = self.command_scope
            if scope is not None and not scope.cancel_called:
                scope.cancel(reason="Ctrl-C")
            else:
                self.leave.cancel(reason="Ctrl-C at the prompt")

    async def _run(self, options: Options) -> int:
        """Run one command, with a time budget of its own; its exit status."""
        session = self.session
        session.options = options
        session.stage = options.command
        budget = Budget(options.timeout)
        assert session.asker is not None
        session.asker.renew(budget)
        budget.start()
        failure: Failure | None = None
        code = EXIT_OK
        # Ctrl-C cancels this scope: the request is withdrawn (notifications/cancelled), the server goes on.
        with trio.CancelScope() as interrupt:
            self.command_scope = interrupt
            try:
                with budget.scope:
                    code = await self.backend.run(session, options)
            except (ServerGone, TransportClosed):
                raise  # the end of the shell, said by the command line's own rules
            except MCPError as exc:
                failure = explain(exc, options, session.stage, declined=session.asker.declined)
                if isinstance(exc, RpcError):
                    failure.detail = await session.stderr_detail()
            except Failure as exc:
                failure = exc
            finally:
                self.command_scope = None
        session.console.clear()
        if interrupt.cancelled_caught:
            if session.console.tty:
                session.console.say("")  # after the ^C the terminal echoed
            failure = Failure(
                EXIT_INTERRUPTED,
                f"interrupted ({session.stage}); the server goes on",
                kind="interrupted",
            )
        elif budget.scope.cancelled_caught:
            failure = Failure(
                EXIT_TIMEOUT,
                f"timed out after {number(options.timeout or 0)} s ({session.stage})",
                kind="timeout",
            )
        if failure is None:
            return code
        return failure.report(options, session.console, session.emit_json)


async def _read_watching(lines: Lines, client: Client) -> str | None:
    """The next line; or, if the server dies first, the error that says so (raised at once)."""
    got: list[str | None] = []
    async with trio.open_nursery() as nursery:

        async def read() -> None:
            got.append(await lines.read())
            nursery.cancel_scope.cancel(reason="a line was read")

        async def watch() -> None:
            # The session's stream of notifications ends when the server is gone.
            with contextlib.suppress(MCPError):
                async with client.session.notifications() as stream:
                    async for _ in stream:
                        pass
            nursery.cancel_scope.cancel(reason="the server is gone")

        nursery.start_soon(read)
        nursery.start_soon(watch)
    if not got:
        client.session.check_usable()  # raises: why the server is gone
    return got[0] if got else None


async def run_shell(session: Command, client: Client) -> int:
    """The shell's loop on one server, once connected (see `shell_loop`).

    When the server dies and a person is at the terminal, the shell says
    why and offers to start the server again (`StartAgain`) rather than
    ending with it.
    """
    return await shell_loop(session, OneServer(client))


async def shell_loop(session: Command, backend: Backend) -> int:
    """The shell's loop: read a line, run it, until ``exit``, the end of input or Ctrl-C.

    Ctrl-C while a command runs cancels that command only; at the prompt,
    it ends the shell with `EXIT_INTERRUPTED`.
    """
    shell = Shell(session, backend)
    lines = Lines(lambda: shell.catalog, _suggester(backend))
    # From here on, each command has a budget of its own; the shell's is kept for the close.
    session.budget.pause()
    error: BaseException | None = None
    try:
        with _interrupts() as signals:
            async with trio.open_nursery() as nursery:
                if signals is not None:
                    nursery.start_soon(shell.watch_interrupts, signals)
                # Kept out of the nursery, so that it is raised as itself, not in a group.
                try:
                    with shell.leave:
                        await _loop(shell, lines)
                except BaseException as exc:  # raised again, below
                    error = exc
                nursery.cancel_scope.cancel(reason="the shell ended")
    finally:
        lines.close()
        session.budget.resume()
    if error is not None:
        raise error
    session.options = shell.startup
    if shell.leave.cancelled_caught:
        session.console.end_line()  # the prompt's line
        return EXIT_INTERRUPTED
    return shell.status


def _suggester(backend: Backend) -> Callable[[str, str, str], list[str]]:
    """`Backend.suggest` for readline's thread (a worker of Trio's, waiting for the line)."""

    token = trio.lowlevel.current_trio_token()

    def suggest(template: str, name: str, typed: str) -> list[str]:
        try:
            return trio.from_thread.run(backend.suggest, template, name, typed, trio_token=token)
        except (trio.RunFinishedError, trio.Cancelled, RuntimeError):
            return []

    return suggest


@contextlib.contextmanager
def _interrupts() -> Iterator[AsyncIterator[int] | None]:
    """Ctrl-C as a stream of signals, for the shell to decide; `None` where it cannot be caught."""
    if threading.current_thread() is not threading.main_thread():
        yield None  # only the main thread can catch signals
        return
    with trio.open_signal_receiver(signal.SIGINT) as signals:
        yield signals


async def _loop(shell: Shell, lines: Lines) -> None:
    session = shell.session
    if lines.readline is not None:
        shell.completing = True
        await shell.refresh_catalog(session.options)
    while session.stdout_status == EXIT_OK:
        # Interrupted at the prompt, the command line ends the line.
        session.console.open_line = lines.terminal
        session.stage = "idle"
        try:
            line = await shell.backend.read(lines)
        except (ServerGone, TransportClosed) as exc:
            await _offer_restart(shell, lines, exc)
            break
        session.console.open_line = False
        if line is None:
            if lines.terminal:
                session.console.say("")
            break
        try:
            await shell.run_line(line)
        except _Exit as exc:
            if exc.status is not None:
                shell.status = exc.status
            break
        except (ServerGone, TransportClosed) as exc:
            await _offer_restart(shell, lines, exc)
            break


async def _offer_restart(shell: Shell, lines: Lines, gone: MCPError) -> None:
    """The server died: say why, and offer a person at the terminal to start it again.

    Raises `StartAgain` when they accept; ``gone`` itself when nobody is
    there to ask (the command line's rules then end the shell); otherwise
    the shell ends with the death's status.
    """
    session = shell.session
    console = session.console
    if not (getattr(shell.backend, "restartable", False) and lines.terminal and console.tty):
        raise gone
    assert session.asker is not None
    if lines.waiting:
        console.end_line()  # the prompt's line
    failure = explain(gone, session.options, session.stage, declined=session.asker.declined)
    failure.report(session.options, console, session.emit_json)
    question = "start the server again? [Y/n] "
    if lines.waiting:
        console.ask(question)  # the answer is the line the prompt waits for
    answer = await lines.read(question)
    console.open_line = False
    if answer is not None and answer.strip().lower() in ("", "y", "yes"):
        session.options = shell.startup
        raise StartAgain
    if answer is None:
        console.say("")
    shell.status = failure.status


def execute_shell(options: Options) -> int:
    """Run ``trio-mcp shell``: connect as every command does, then `run_shell`; the exit status."""
    return execute(options, run_shell)
