"""The command line of ``trio-mcp``, parsed: `Options`, the exit statuses, the help texts.

Nothing here imports Trio or the client, so that ``--help`` and usage
errors come back at once.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, Final, NoReturn

from .._core.eras import LEGACY_VERSIONS, LOG_LEVELS, MODERN_VERSIONS
from .._version import __version__
from ._values import guess_value

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._core.eras import ProtocolChoice

# What the package re-exports (the exit statuses) is listed once, in its __init__.

JSON = Any

EXIT_OK: Final = 0
"""Success."""
EXIT_TOOL_ERROR: Final = 1
"""The tool ran and reported an error (its result has ``isError``)."""
EXIT_USAGE: Final = 2
"""The command line is wrong."""
EXIT_SPAWN: Final = 3
"""The server could not be started (no such command, not executable, a bad ``--cwd``)."""
EXIT_SERVER_GONE: Final = 4
"""The server exited, was killed, or closed its pipes."""
EXIT_TIMEOUT: Final = 5
"""The command outlived ``--timeout``."""
EXIT_RPC_ERROR: Final = 6
"""The server answered with a JSON-RPC error (an unknown tool, bad arguments...), or does not offer
what was asked (completions)."""
EXIT_PROTOCOL: Final = 7
"""The server broke the protocol, or shares no protocol version with the client."""
EXIT_INPUT: Final = 8
"""The server needed input the command does not give (sampling, roots), or kept asking after a decline."""
EXIT_CONFIG: Final = 9
"""The configuration file is wrong, names no such server, or the server's entry cannot be used."""
EXIT_LOGIN: Final = 10
"""The server refused access (HTTP 401 or 403): it needs a login (``trio-mcp login``), a login with
more scope, or refused the credentials given."""
EXIT_OUTPUT_SCHEMA: Final = 11
"""The tool's structured output breaks the ``outputSchema`` it declared (the result is shown all the
same; ``--no-output-check`` skips the check)."""
EXIT_SETUP: Final = 12
"""An optional part of trio-mcp is not installed (an extra: the message gives the command that
installs it)."""
EXIT_INTERNAL: Final = 70
"""A bug in trio-mcp (``--verbose`` prints the traceback)."""
EXIT_INTERRUPTED: Final = 130
"""Interrupted with Ctrl-C."""
EXIT_BROKEN_PIPE: Final = 141
"""Whoever read stdout stopped reading (``| head``)."""

#: Every exit status, with what it means (the ``--help`` text).
EXIT_CODES: Final[Mapping[int, str]] = {
    EXIT_OK: "success",
    EXIT_TOOL_ERROR: "the tool reported an error (its result has isError)",
    EXIT_USAGE: "usage error",
    EXIT_SPAWN: "the server could not be started",
    EXIT_SERVER_GONE: "the server exited or closed its pipes (its last stderr lines are shown)",
    EXIT_TIMEOUT: "timed out (--timeout)",
    EXIT_RPC_ERROR: "the server answered with a JSON-RPC error, or does not offer what was asked",
    EXIT_PROTOCOL: "the server broke the protocol, or no protocol version in common",
    EXIT_INPUT: "the server needed input trio-mcp does not give (sampling, roots), or kept asking after a decline",
    EXIT_CONFIG: "the configuration file is wrong, or has no usable server by that name",
    EXIT_LOGIN: "the server refused access (HTTP 401/403): it needs a login (trio-mcp login), more scope, "
    "or other credentials",
    EXIT_OUTPUT_SCHEMA: "the tool's structured output breaks its outputSchema (the result is still shown)",
    EXIT_SETUP: "an optional part of trio-mcp is not installed (the message says how to install it)",
    EXIT_INTERNAL: "a bug in trio-mcp (--verbose shows the traceback)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "stdout was closed early (| head)",
}

PROG: Final = "trio-mcp"
COMMANDS: Final = (
    "info",
    "tools",
    "prompts",
    "resources",
    "templates",
    "call",
    "read",
    "prompt",
    "complete",
    "log-level",
    "shell",
    "configs",
    "servers",
    "login",
    "logout",
    "tasks",
    "completion",
)
#: What ``complete`` completes the arguments of (and the wire ``ref`` type of each).
REFS: Final = {"prompt": "ref/prompt", "template": "ref/resource"}
#: The commands about configuration files, which take no server command.
CONFIG_COMMANDS: Final = ("configs", "servers")
#: What ``tasks`` does (``._tasks``), and whether each takes a task id.
TASK_ACTIONS: Final = {"start": False, "list": False, "status": True, "result": True, "cancel": True}
#: The commands about the logins kept for remote servers (``._login``).
LOGIN_COMMANDS: Final = ("login", "logout")
PROTOCOLS: Final = ("auto", *MODERN_VERSIONS, *LEGACY_VERSIONS)
DEFAULT_TIMEOUT: Final = 60.0

_EXAMPLES = """\
examples:
  trio-mcp call echo text=hi                   # the bundled demo server
  trio-mcp tools --schema -- npx -y @modelcontextprotocol/server-everything
  trio-mcp call add a=1 b=2 -- python my_server.py
  trio-mcp call add --json '{"a": 1, "b": 2}' -- python my_server.py
  trio-mcp complete prompt greet name=A        # what the server suggests
  trio-mcp shell -- python my_server.py        # one server, many commands
  trio-mcp --json info -- uvx mcp-server-time
  trio-mcp read file:///tmp/notes.txt --env LOG_LEVEL=debug -- ./my-server --stdio
  trio-mcp tools https://example.com/mcp --header 'Authorization: Bearer TOKEN'
  trio-mcp configs                             # the configuration files found here
  trio-mcp --config .mcp.json servers          # start each of its servers, show their state
  trio-mcp --config .mcp.json call github.search_repositories query=trio
"""


def _exit_table() -> str:
    return "exit status:\n" + "".join(f"  {code:<5}{what}\n" for code, what in EXIT_CODES.items())


COMMAND_HELP: Final = {
    "info": "show the protocol version, the server's name, capabilities and instructions",
    "tools": "list the tools (--schema: with their input and output schemas)",
    "prompts": "list the prompts and their arguments",
    "resources": "list the resources",
    "templates": "list the resource templates",
    "call": "call a tool: call TOOL [KEY=VALUE...] [--json OBJECT]",
    "read": "read a resource: read URI",
    "prompt": "get a prompt: prompt NAME [KEY=VALUE...] [--json OBJECT]",
    "complete": "complete an argument: complete prompt NAME|template URI ARG[=PREFIX] [KEY=VALUE...]",
    "log-level": "set the server's log level (logging/setLevel), and show its log messages: log-level LEVEL",
    "shell": "connect once, then type commands (with history and completion)",
    "configs": "list the configuration files found (Claude, Cursor, VS Code...) and their servers",
    "servers": "start every server of the configuration and show each one's state",
    "login": "log in to a remote server, and keep the login: login URL | --server NAME",
    "logout": "forget the login kept for a remote server: logout URL | --server NAME",
    "tasks": "tool calls as tasks: tasks start TOOL [KEY=VALUE...] [--detach] | list | status|result|cancel ID",
    "completion": "print the Tab completion script of a shell: completion bash|zsh|fish",
}

_DESCRIPTION = """\
Inspect and call any MCP server, local (stdio) or remote (HTTP).

The server is the command after "--" (the command and each of its arguments
as separate words); without "--", the bundled demo server
(python -m trio_mcp.demo). It is started for one command and stopped after.
A remote server is its URL (http:// or https://), as the last word or after
"--"; --header adds a header to every request.
With "--config FILE" (an mcpServers or VS Code mcp.json file) or "--server
NAME", the servers are those of the configuration: "tools" and "servers" use
all of them, "call NAME" one (NAME as "tools" shows it, SERVER__TOOL, or
SERVER.TOOL); "servers" and --server without --config read the files
"configs" lists.

commands:
""" + "".join(f"  {name:<10} {what}\n" for name, what in COMMAND_HELP.items())

_CALL_DESCRIPTION = """\
Call a tool and print its result: text as text, images and audio as their type
and size, resources readably, structured content as JSON.

Arguments are KEY=VALUE words, each VALUE read by the type the tool's input
schema gives its argument: a string as it is (text=123 sends "123"), an
integer or a number as a number (n=3), a boolean from true/false (or yes/no,
on/off), null from null, an array or an object as JSON (tags='["a","b"]').
An argument that may be of several types is the first of null, boolean,
number, array, object that VALUE reads as, else a string. An argument the
schema does not describe is read as JSON when it parses, and is a string
otherwise. "--json OBJECT" (a JSON object, '{...}') gives the arguments at
once, as they are; KEY=VALUE words add to it. Given alone, --json asks for
JSON output, as with every command.

When the server asks for input, its form is asked for on the terminal (stdin
must be a terminal; otherwise the request is declined, and said so once).
Progress shows on stderr.
"""

_COMPLETE_DESCRIPTION = """\
Ask the server to complete an argument of a prompt or of a resource template
(completion/complete), and print its suggestions, one a line.

  complete prompt NAME ARG[=PREFIX] [KEY=VALUE...]
  complete template URI_TEMPLATE ARG[=PREFIX] [KEY=VALUE...]

ARG is the argument being typed and PREFIX what is typed of it so far
(nothing: every suggestion); the KEY=VALUE words after it are the arguments
already filled in, which the server may take into account. The server must
offer completions (the "completions" capability).
"""

_SHELL_DESCRIPTION = """\
Start the server once, then read commands, one a line, and run each against
it: info, tools, prompts, resources, templates, call, read, prompt, complete,
with the same words and options as on the command line (--json, --timeout
SECONDS per command). "help" lists them; "exit", "quit" or the end of input
(Ctrl-D) ends the shell, with the status of its last command. Given to the
shell, --timeout bounds connecting and then each command, not the session.

On a terminal, lines are edited with readline: history (kept in
$XDG_STATE_HOME/trio-mcp/shell_history, or the file TRIO_MCP_HISTORY names;
an empty TRIO_MCP_HISTORY keeps none) and Tab completion of commands, tool,
prompt and argument names. Otherwise the lines are read from stdin as they
come, with no prompt, so that a script can be piped in. A server that dies
ends the shell with its last stderr lines and status 4.
"""

_LOGIN_DESCRIPTION = """\
Log in to a remote server that needs a login (the MCP authorization flow,
OAuth 2.1), and keep the login in the user's file store
($XDG_STATE_HOME/trio-mcp/auth), where every later command, configuration
entry and application using that store finds it.

The browser is opened at the authorization server's login page, and the
command waits (up to five minutes) for it to come back to a listener on
127.0.0.1. With --headless, the URL is printed instead: open it anywhere,
log in, and paste back the address the browser ends on (its page does not
load). A server given with --server NAME is the configuration's entry of
that name (its "dpop" field, if any, applies unless --dpop or --no-dpop is
given).

DPoP (tokens bound to a key of the login) is used when the server asks for
it; --dpop uses it always, --no-dpop never. A kept DPoP login is bound to a
key that lives only as long as the command: later commands refresh it or
ask for a new login.
"""

_TASKS_DESCRIPTION = """\
Run a tool as a task (the server answers at once, and the work goes on in
the background), or look after the tasks a server keeps:

  tasks start TOOL [KEY=VALUE...] [--json OBJECT] [--detach]
  tasks list                  (revision 2025-11-25: the server's tasks)
  tasks status ID             the task's status
  tasks result ID             wait for the task's end, and print its result
  tasks cancel ID             cancel it

An id that begins with "-" is given as --id=ID (tasks status --id=-x1).

"start" takes a tool's arguments as "call" does, shows the task's status
changes on stderr, and prints the result; with --detach it prints the task's
id instead and leaves the task running. Tasks live in the server: a server
started for one command takes its tasks with it when it exits, so "list",
"status", "result" and "cancel" are for servers that outlive the command
(remote servers, or servers that keep their tasks).
"""

_LOGOUT_DESCRIPTION = """\
Forget every login kept for a remote server (in the user's file store),
whichever authorization server it was made at.
"""

_LOG_LEVEL_DESCRIPTION = """\
Ask the server to send its log messages from LEVEL up (logging/setLevel in the
initialize era; the logLevel of the request in 2026-07-28), and show those it
sends meanwhile on stderr. Useful in the shell, where the level then holds for
the next commands. The server must offer logging (the "logging" capability).
"""

_PROMPT_DESCRIPTION = """\
Get a prompt, filled in with arguments, and print its messages.

Arguments are KEY=VALUE words; prompt arguments are strings, so VALUE is
taken as it is. "--json OBJECT" gives them as one JSON object (values that
are not strings are sent as their JSON text).
"""


# ----------------------------------------------------------------- errors


class UsageError(Exception):
    """The command line is wrong; the message says how."""


class _ArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (and a `UsageError`, not an exit)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


# ----------------------------------------------------------------- options


class Options:
    """The parsed command line."""

    def __init__(
        self,
        *,
        command: str,
        server: list[str],
        json_output: bool = False,
        verbose: bool = False,
        timeout: float | None = DEFAULT_TIMEOUT,
        protocol: ProtocolChoice = "auto",
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        target: str = "",
        arguments: dict[str, JSON] | None = None,
        schema: bool = False,
        ref: str = "",
        argument: tuple[str, str] = ("", ""),
        headers: dict[str, str] | None = None,
        config: list[str] | None = None,
        server_name: str | None = None,
    ) -> None:
        self.command = command
        """The command word (``"call"``...)."""
        self.server = server
        """The server's command and arguments."""
        self.demo = False
        """Whether ``server`` is the bundled demo server (no ``--`` given)."""
        self.json_output = json_output
        self.verbose = verbose
        self.timeout = timeout
        """The whole command's budget in seconds, or `None`."""
        self.protocol = protocol
        self.env = env or {}
        self.cwd = cwd
        self.target = target
        """The tool, prompt or URI the command is about."""
        self.arguments = arguments if arguments is not None else {}
        """The tool's or prompt's arguments."""
        self.raw_values: dict[str, str] = {}
        """The ``KEY=VALUE`` values of ``call``, as typed (read by the tool's schema when it runs)."""
        self.schema = schema
        self.ref = ref
        """What ``complete`` completes an argument of: ``"prompt"`` or ``"template"``."""
        self.argument = argument
        """The argument ``complete`` completes: its name and what is typed of it."""
        self.headers = headers or {}
        """Headers for every HTTP request (``--header``), for a server given by URL."""
        self.config = config or []
        """The ``--config`` files, most general first."""
        self.server_name = server_name
        """The ``--server`` name: the configuration's server to talk to."""
        self.headless = False
        """``login --headless``: print the URL and read the redirect back."""
        self.scope: str | None = None
        """``login --scope``: the scopes to ask for (a new login)."""
        self.dpop: bool | None = None
        """``login --dpop`` / ``--no-dpop``: bind the tokens with DPoP, or never; `None`: as the server asks."""
        self.task_action = ""
        """What ``tasks`` does (one of `TASK_ACTIONS`); `target` is then the tool or the task id."""
        self.detach = False
        """``tasks start --detach``: leave the task running and print its id."""
        self.spec: Any = None
        """The configuration entry of the server, once chosen (a `ServerSpec`)."""
        self.output: str | None = None
        """``-o FILE``: where the result goes instead of stdout."""
        self.output_check = True
        """Whether ``call`` checks the result's structured content (``--no-output-check``: no)."""
        self.catalogue_name: str | None = None
        """A hashed catalogue name ``call`` was given, to find among the chosen server's tools."""

    @property
    def uses_configs(self) -> bool:
        """Whether the servers come from configuration files rather than ``--`` or the demo."""
        return bool(self.config) or self.server_name is not None or self.command in CONFIG_COMMANDS

    @property
    def url(self) -> str | None:
        """The remote server's URL, when the server is one."""
        return self.server[0] if len(self.server) == 1 and is_url(self.server[0]) else None


def is_url(word: str) -> bool:
    """Whether a word names a remote server (``http://`` or ``https://``)."""
    return word.startswith(("http://", "https://"))


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"not a number of seconds >= 0: {text!r}")
    return value


def _add_common(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("options (before or after the command)")
    group.add_argument(
        "--json",
        dest="json_output",
        action="store_true",
        help='print one JSON document on stdout (the result, or {"error": ...}), for scripts',
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the server's stderr, its log messages (all levels) and notifications on stderr",
    )
    group.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="the budget of the whole command, from start to exit, time spent answering the "
        "server's questions excluded (default: %(default)g; 0: none)",
    )
    group.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="auto",
        metavar="VERSION",
        help="the protocol version: 'auto' (default: probe with server/discover, then fall back "
        f"to initialize), or one of {', '.join(PROTOCOLS[1:])}. Name an initialize-era "
        "version for old servers that never answer the probe, to save the wait",
    )
    group.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set an environment variable for the server (repeatable)",
    )
    group.add_argument("--cwd", metavar="DIR", help="the server's working directory")
    group.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="send a header with every request to a server given by URL (repeatable)",
    )
    group.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="read the servers from this configuration file (repeatable, most general first; "
        "default: the files 'configs' lists)",
    )
    group.add_argument(
        "--server", dest="server_name", metavar="NAME", help="talk to this server of the configuration"
    )


def _command_parser(command: str) -> _ArgumentParser:
    kwargs: dict[str, Any] = {
        "prog": f"{PROG} {command}",
        "allow_abbrev": False,
        "formatter_class": argparse.RawDescriptionHelpFormatter,
        "epilog": _exit_table(),
    }
    server = "" if command in CONFIG_COMMANDS else " [-- SERVER_COMMAND [ARG...]]"
    if command == "complete":
        parser = _ArgumentParser(
            usage=f"%(prog)s [OPTIONS] prompt NAME|template URI ARG[=PREFIX] [KEY=VALUE...]{server}",
            description=_COMPLETE_DESCRIPTION,
            **kwargs,
        )
        parser.add_argument(
            "words",
            nargs="*",
            metavar="prompt NAME|template URI ARG[=PREFIX] [KEY=VALUE...]",
            help="what to complete, the argument, then the arguments already filled in",
        )
    elif command in LOGIN_COMMANDS:
        parser = _ArgumentParser(
            usage=f"%(prog)s [OPTIONS]{' [--headless] [--scope SCOPE] [--dpop | --no-dpop]' if command == 'login' else ''}"
            " URL | --server NAME",
            description=_LOGIN_DESCRIPTION if command == "login" else _LOGOUT_DESCRIPTION,
            **kwargs,
        )
        if command == "login":
            parser.add_argument(
                "--scope",
                metavar="SCOPE",
                help="log in again, asking for these scopes (space-separated) on top of those"
                " of the login kept, as a server that answers 403 insufficient_scope says",
            )
            parser.add_argument(
                "--headless",
                action="store_true",
                help="print the URL to open, and read back the address the browser ends on"
                " (for a machine without a browser)",
            )
            dpop = parser.add_mutually_exclusive_group()
            dpop.add_argument(
                "--dpop",
                dest="dpop",
                action="store_const",
                const=True,
                default=None,
                help="bind the tokens to a key of this login (DPoP, RFC 9449); by default, only when"
                " the server asks for it",
            )
            dpop.add_argument(
                "--no-dpop",
                dest="dpop",
                action="store_const",
                const=False,
                help="never use DPoP, even when the server asks for it",
            )
    elif command == "shell":
        parser = _ArgumentParser(
            usage=f"%(prog)s [OPTIONS]{server}", description=_SHELL_DESCRIPTION, **kwargs
        )
    elif command in ("call", "prompt"):
        # The same grammar: a name, then KEY=VALUE arguments.
        name, whose = ("TOOL", "tool") if command == "call" else ("NAME", "prompt")
        parser = _ArgumentParser(
            usage=f"%(prog)s [OPTIONS] {name} [KEY=VALUE...] [--json OBJECT]{server}",
            description=_CALL_DESCRIPTION if command == "call" else _PROMPT_DESCRIPTION,
            **kwargs,
        )
        parser.add_argument(
            "words",
            nargs="*",
            metavar=f"{name} [KEY=VALUE...]",
            help=f"the {whose}'s name, then its arguments",
        )
    elif command == "completion":
        parser = _ArgumentParser(
            usage="%(prog)s bash|zsh|fish",
            description="Print the script that makes Tab complete trio-mcp's command lines in a shell.",
            **kwargs,
        )
        parser.add_argument("target", metavar="SHELL", choices=("bash", "zsh", "fish"), help="the shell")
    elif command == "log-level":
        parser = _ArgumentParser(
            usage=f"%(prog)s [OPTIONS] LEVEL{server}",
            description=_LOG_LEVEL_DESCRIPTION,
            **kwargs,
        )
        parser.add_argument("target", metavar="LEVEL", choices=LOG_LEVELS, help=", ".join(LOG_LEVELS))
    elif command == "tasks":
        parser = _ArgumentParser(
            usage=f"%(prog)s [OPTIONS] start TOOL [KEY=VALUE...] [--detach] | list | status|result|cancel ID{server}",
            description=_TASKS_DESCRIPTION,
            **kwargs,
        )
        parser.add_argument("words", nargs="*", metavar="ACTION [TOOL|ID] [KEY=VALUE...]", help="what to do")
        parser.add_argument(
            "--detach", action="store_true", help="start: print the task's id and leave it running"
        )
        parser.add_argument(
            "--id",
            dest="task_id",
            metavar="ID",
            help="status|result|cancel: the task's id, in place of ID; --id=ID names any id,"
            " even one that begins with '-'",
        )
    elif command == "read":
        parser = _ArgumentParser(
            usage=f"%(prog)s [OPTIONS] URI{server}",
            description="Read a resource and print its contents (binary contents as their type and size).",
            **kwargs,
        )
        parser.add_argument("target", metavar="URI", help="the resource's URI")
    else:
        parser = _ArgumentParser(
            usage=f"%(prog)s [OPTIONS]{' [--schema]' if command == 'tools' else ''}{server}",
            description=COMMAND_HELP[command][0].upper() + COMMAND_HELP[command][1:] + ".",
            **kwargs,
        )
        if command == "tools":
            parser.add_argument(
                "--schema", action="store_true", help="show each tool's input (and output) schema"
            )
    if command == "call":
        parser.add_argument(
            "--no-output-check",
            dest="output_check",
            action="store_false",
            help="do not check the result's structured content against the tool's outputSchema",
        )
    if command in _OUTPUT_COMMANDS:
        parser.add_argument(
            "-o",
            "--output",
            metavar="FILE",
            help="write the result to FILE instead of stdout (an image, audio or binary resource: "
            "its bytes, decoded)",
        )
    _add_common(parser)
    return parser


def _main_parser() -> _ArgumentParser:
    parser = _ArgumentParser(
        prog=PROG,
        usage="%(prog)s [OPTIONS] COMMAND [ARGS...] [-- SERVER_COMMAND [ARG...]]",
        description=_DESCRIPTION,
        epilog=_EXAMPLES + "\n" + _exit_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _add_common(parser)
    return parser


#: The commands whose result ``-o FILE`` writes to a file: the first nine, up to ``complete``.
_OUTPUT_COMMANDS: Final = COMMANDS[: COMMANDS.index("complete") + 1]

#: Options that take a value as the next word (to find the command word).
_VALUED: Final = frozenset(
    {
        "--timeout",
        "--protocol",
        "--env",
        "--cwd",
        "--header",
        "--config",
        "--server",
        "--scope",
        "-o",
        "--output",
        "--id",
    }
)


def _key_value(word: str, what: str) -> tuple[str, str]:
    key, sep, value = word.partition("=")
    if not sep or not key:
        raise UsageError(f"expected {what} as KEY=VALUE, got {word!r}")
    return key, value


def _json_object(text: str) -> dict[str, JSON]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--json: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise UsageError("--json: the arguments must be a JSON object, {...}")
    return value


def _complete_words(words: list[str]) -> tuple[str, str, tuple[str, str], list[str]]:
    """``complete``'s words: the kind of reference, its name or URI, the argument, the context."""
    if not words:
        raise UsageError("missing what to complete: 'prompt NAME' or 'template URI'")
    ref, *rest = words
    if ref not in REFS:
        raise UsageError(f"expected 'prompt NAME' or 'template URI' to complete, got {ref!r}")
    if not rest:
        raise UsageError(f"missing the {'prompt' if ref == 'prompt' else 'template'}'s {_REF_NAME[ref]}")
    target, *rest = rest
    if not rest:
        raise UsageError("missing the argument to complete, as ARG or ARG=PREFIX")
    name, _, prefix = rest[0].partition("=")
    if not name:
        raise UsageError(f"expected the argument to complete as ARG or ARG=PREFIX, got {rest[0]!r}")
    return ref, target, (name, prefix), rest[1:]


_REF_NAME: Final = {"prompt": "name", "template": "URI template"}


def _task_words(words: list[str], detach: bool, task_id: str | None = None) -> tuple[str, str, list[str]]:
    """``tasks``'s words: the action, the tool or task id, the tool's arguments.

    ``task_id`` is ``--id``'s, which names an id that looks like an option.
    """
    if not words or words[0] not in TASK_ACTIONS:
        raise UsageError(f"expected one of {', '.join(TASK_ACTIONS)} after 'tasks'")
    action, *rest = words
    if task_id is not None:
        if not TASK_ACTIONS[action]:
            raise UsageError("--id goes with 'tasks status|result|cancel'")
        if not task_id:
            raise UsageError("--id needs the task's id")
        if rest:
            raise UsageError(f"expected one task id: tasks {action} ID (or --id=ID)")
        rest = [task_id]
    if action == "start" and not rest:
        raise UsageError("missing the tool's name: tasks start TOOL [KEY=VALUE...]")
    if TASK_ACTIONS[action] and len(rest) != 1:
        raise UsageError(f"expected one task id: tasks {action} ID")
    if action != "start" and (rest[1:] if TASK_ACTIONS[action] else rest):
        raise UsageError(f"unexpected words after 'tasks {action}': {' '.join(rest)}")
    if detach and action != "start":
        raise UsageError("--detach goes with 'tasks start'")
    return action, rest[0] if rest else "", rest[1:] if action == "start" else []


def _positionals(words: list[str]) -> list[int]:
    """Where the words that are not options (nor the values of options) are."""
    found: list[int] = []
    i = 0
    while i < len(words):
        if words[i] in _VALUED:
            i += 2
            continue
        if not words[i].startswith("-"):
            found.append(i)
        i += 1
    return found


def parse_args(argv: Sequence[str]) -> Options:
    """Turn the command line (without the program name) into `Options`.

    Raises:
        UsageError: The command line is wrong.
        SystemExit: ``--help`` or ``--version`` was asked for (status 0),
            after printing it.
    """
    words = list(argv)
    if "--" in words:
        cut = words.index("--")
        words, server = words[:cut], words[cut + 1 :]
        if not server:
            raise UsageError('no server command after "--"')
        demo = False
    else:
        server = [sys.executable, "-m", "trio_mcp.demo"]
        demo = True

    # "--json {...}" is the arguments object; "--json" alone, the output mode.
    objects: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--json" and i + 1 < len(words) and words[i + 1].lstrip().startswith("{"):
            objects.append(words[i + 1])
            i += 2
            continue
        if word.startswith("--json="):
            objects.append(word[len("--json=") :])
        else:
            rest.append(word)
        i += 1

    command: str | None = None
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in _VALUED:
            i += 2
            continue
        if not word.startswith("-") or word == "-":
            command = word
            del rest[i]
            break
        i += 1
    if command is None:
        parser = _main_parser()
        parser.parse_args(rest)  # --help, --version, or an error
        raise UsageError(f"missing command (one of {', '.join(COMMANDS)})")
    if command not in COMMANDS:
        raise UsageError(f"unknown command {command!r} (one of {', '.join(COMMANDS)})")
    if objects and command not in ("call", "prompt", "complete", "tasks"):
        raise UsageError(f"--json with a JSON object gives arguments, which {command!r} does not take")

    positions = _positionals(rest)
    if demo and positions and is_url(rest[positions[-1]]) and (command != "read" or len(positions) > 1):
        # A remote server, named by its URL as the last word (after the URI, for read).
        server, demo = [rest.pop(positions[-1])], False
    ns = _command_parser(command).parse_intermixed_args(rest)
    target: str = getattr(ns, "target", "")
    pairs: list[str] = []
    action = ""
    ref = ""
    argument = ("", "")
    if command in ("call", "prompt"):
        if not ns.words:
            raise UsageError(f"missing the {'tool' if command == 'call' else 'prompt'}'s name")
        target, *pairs = ns.words
    elif command == "complete":
        ref, target, argument, pairs = _complete_words(ns.words)
    elif command == "tasks":
        action, target, pairs = _task_words(ns.words, ns.detach, ns.task_id)
    env: dict[str, str] = {}
    for item in ns.env:
        key, value = _key_value(item, "--env")
        env[key] = value
    headers: dict[str, str] = {}
    for item in ns.header:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"expected --header as 'NAME: VALUE', got {item!r}")
        headers[name.strip()] = value.strip()
    is_remote = len(server) == 1 and is_url(server[0])
    if headers and not is_remote:
        raise UsageError("--header applies to a server given by URL")
    if is_remote and (env or ns.cwd):
        raise UsageError("--env and --cwd apply to a server command, not to a URL")
    options = Options(
        command=command,
        headers=headers,
        server=server,
        json_output=ns.json_output,
        verbose=ns.verbose,
        timeout=ns.timeout or None,
        protocol=ns.protocol,
        env=env,
        cwd=ns.cwd,
        target=target,
        schema=getattr(ns, "schema", False),
        ref=ref,
        argument=argument,
        config=ns.config,
        server_name=ns.server_name,
    )
    options.demo = demo
    options.output = getattr(ns, "output", None)
    options.output_check = getattr(ns, "output_check", True)
    options.headless = getattr(ns, "headless", False)
    options.scope = getattr(ns, "scope", None)
    options.dpop = getattr(ns, "dpop", None)
    if command == "tasks":
        options.task_action, options.detach = action, ns.detach
    if options.uses_configs and not demo:
        raise UsageError(
            'a server command after "--" and a configuration (--config, --server) exclude each other'
        )
    if command == "tasks" and options.uses_configs:
        raise UsageError("'tasks' talks to one server given by command or URL, not by a configuration")
    if options.server_name is not None and command in CONFIG_COMMANDS:
        raise UsageError(f"--server names one server, which {command!r} does not take")
    arguments: dict[str, JSON] = {}
    for text in objects:
        arguments.update(_json_object(text))
    for pair in pairs:
        key, value = _key_value(pair, "an argument")
        if command not in ("call", "tasks"):
            arguments[key] = value
            continue
        arguments[key] = guess_value(value)
        options.raw_values[key] = value
    if command in ("prompt", "complete"):
        arguments = {
            key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            for key, value in arguments.items()
        }
    options.arguments = arguments
    return options
