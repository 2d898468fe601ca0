"""The ``trio-mcp`` command: look into any stdio MCP server, and call it, from the shell.

::

    trio-mcp [OPTIONS] COMMAND [ARGS...] [-- SERVER_COMMAND [SERVER_ARGS...]]

The server is the command after ``--``, started as a child process for the
length of one command; without ``--``, the bundled demo server
(``python -m trio_mcp.demo``). The commands:

``info``
    The protocol era and version chosen, the server's name and version, its
    capabilities and instructions.
``tools [--schema]``, ``prompts``, ``resources``, ``templates``
    What the server offers (with ``--schema``, each tool's input and output
    schemas).
``call TOOL [KEY=VALUE...] [--json OBJECT]``
    Call a tool and print its result: text as text, images and audio as
    their type and size, resources readably, structured content as JSON.
    Each value is read by the type the tool's input schema gives its
    argument (``n=3`` a number, ``on=true`` a boolean,
    ``tags='["a","b"]'`` a list, ``text=123`` the string ``"123"``); a
    value the schema does not describe is read as JSON when it parses, and
    is a string otherwise.
    ``--json '{...}'`` gives the arguments as one JSON object, which
    ``KEY=VALUE`` pairs then add to. An argument name the tool's schema
    does not know is refused before sending when the schema forbids other
    names (``additionalProperties: false``), and warned about when it says
    nothing of them. A result whose structured content breaks the tool's
    ``outputSchema`` is shown, and the mismatch said (`EXIT_OUTPUT_SCHEMA`;
    ``--no-output-check`` skips the check).
``read URI``
    Read a resource.
``prompt NAME [KEY=VALUE...] [--json OBJECT]``
    Get a prompt (prompt arguments are strings).
``complete prompt NAME|template URI ARG[=PREFIX] [KEY=VALUE...]``
    The server's suggestions for an argument of a prompt or a resource
    template (``completion/complete``), one a line; the ``KEY=VALUE`` words
    are the arguments filled in already.
``log-level LEVEL``
    Ask the server for its log messages from LEVEL up
    (``logging/setLevel``), and show them on stderr.
``shell``
    Start the server once, then read commands (the ones above), one a
    line, and run each against it; on a terminal with history and Tab
    completion of commands, tool, prompt and argument names.
``configs``
    The configuration files found (Claude Desktop, Claude Code, Cursor,
    VS Code, Windsurf), each with its servers and whether each is usable.
``servers``
    Start every server of the configuration, and show each one's state.
``login URL|--server NAME [--headless] [--scope SCOPE]``, ``logout URL|--server NAME``
    Log in to a remote server that needs a login, keeping the login in the
    user's file store for every later command; forget it.
``completion bash|zsh|fish``
    The script that makes Tab complete these command lines in that shell.

With ``--config FILE`` (repeatable) or ``--server NAME``, the servers are
those of a configuration file (for ``servers`` and ``--server`` without
``--config``, the files ``configs`` lists): ``tools`` lists the tools of all
of them, by the names the server group's catalogue gives them
(``SERVER__TOOL``), ``call NAME`` calls one (also as ``SERVER.TOOL``), and
``--server NAME`` makes every command talk to that server.

Options, before or after the command: ``--json`` (print one JSON document on
stdout, for scripts: the result as the server sent it, or ``{"error": {"kind",
"message", "exitCode", ...}}``), ``-v``/``--verbose`` (the server's stderr as it comes, its log
messages and other notifications, on stderr), ``--timeout SECONDS`` (the
budget of the whole command, time spent answering questions excluded;
default 60, 0 for none), ``--protocol auto|VERSION``, ``--env KEY=VALUE``
(repeatable), ``--cwd DIR``, ``-o FILE`` (write the result to FILE; an
image, audio or binary resource as its bytes).

Input requests: when the server asks for input (elicitation), each field of
its form is asked for on the terminal, by its schema, and the answer is shown
for confirmation before it is sent; end of input (Ctrl-D) declines. A URL is
shown with its domain, and nothing is opened: accepting only tells the server
that you agree to open it yourself. When stdin is not a terminal every request
is declined, saying so on stderr once for each question (a server that asks
again gets the same answer; one that keeps asking until the rounds run out
ends the command with `EXIT_INPUT`). Sampling and roots are not offered (the
command has no language model and no roots): a server that needs them gets
nothing, and the command says why.

Progress notifications show as a live bar on stderr when stderr is a
terminal, and as plain lines otherwise; stdout holds only the result.

Errors are one line on stderr, never a traceback (a server that died adds
the last lines of its stderr; a tool that reported an error, or a server
that answered with one, the lines it wrote to stderr meanwhile), and each
kind has its own exit status; see `EXIT_CODES`.

The Python interface of this package is `main` (the console script) and
`run` (the same, returning the exit status instead of exiting). Parsing the
command line (`._args`) imports neither Trio nor the client; running a
command (`._run`) does, once the command line is known to be right.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, NoReturn

from ._args import (
    COMMANDS as COMMANDS,
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    EXIT_BROKEN_PIPE as EXIT_BROKEN_PIPE,
    EXIT_CODES as EXIT_CODES,
    EXIT_CONFIG as EXIT_CONFIG,
    EXIT_INPUT as EXIT_INPUT,
    EXIT_INTERNAL as EXIT_INTERNAL,
    EXIT_INTERRUPTED as EXIT_INTERRUPTED,
    EXIT_LOGIN as EXIT_LOGIN,
    EXIT_OK as EXIT_OK,
    EXIT_OUTPUT_SCHEMA as EXIT_OUTPUT_SCHEMA,
    EXIT_PROTOCOL as EXIT_PROTOCOL,
    EXIT_RPC_ERROR as EXIT_RPC_ERROR,
    EXIT_SERVER_GONE as EXIT_SERVER_GONE,
    EXIT_SETUP as EXIT_SETUP,
    EXIT_SPAWN as EXIT_SPAWN,
    EXIT_TIMEOUT as EXIT_TIMEOUT,
    EXIT_TOOL_ERROR as EXIT_TOOL_ERROR,
    EXIT_USAGE as EXIT_USAGE,
    LOGIN_COMMANDS,
    PROG,
    Options as Options,
    UsageError,
    parse_args as parse_args,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_CODES",
    "EXIT_CONFIG",
    "EXIT_INPUT",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_LOGIN",
    "EXIT_OK",
    "EXIT_OUTPUT_SCHEMA",
    "EXIT_PROTOCOL",
    "EXIT_RPC_ERROR",
    "EXIT_SERVER_GONE",
    "EXIT_SETUP",
    "EXIT_SPAWN",
    "EXIT_TIMEOUT",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "main",
    "run",
]


def run(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return the exit status.

    Writes the result to stdout and everything else to stderr; never
    raises (but `SystemExit` after ``--help`` and ``--version``).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")
    if args[:1] == ["__complete"]:  # what the completion scripts run on Tab
        from ._completion import complete_command

        return complete_command(args[1:])
    try:
        options = parse_args(args)
    except UsageError as exc:
        prog = PROG
        command = next((word for word in args if word in COMMANDS), None)
        if command is not None:
            prog += f" {command}"
        sys.stderr.write(f"{prog}: error: {exc} (see '{prog} --help')\n")
        return EXIT_USAGE
    if options.command == "completion":
        from ._completion import script

        sys.stdout.write(script(options.target))
        return EXIT_OK
    # Only now, with a command to run: Trio and the client.
    if options.command in LOGIN_COMMANDS:
        try:
            from ._login import execute_login

            return execute_login(options)
        except ImportError as exc:
            return _missing_extra(exc, options)
    if options.uses_configs:
        from ._configs import execute_configs

        return execute_configs(options)
    if options.command == "shell":
        from ._shell import execute_shell

        return execute_shell(options)
    if options.command == "tasks":
        from ._tasks import execute_tasks

        return execute_tasks(options)
    from ._run import execute

    return execute(options)


def _missing_extra(exc: ImportError, options: Options) -> int:
    """Say that an extra is missing (`EXIT_SETUP`), or let the error go on (a bug)."""
    from ._console import Console
    from ._failures import missing_extra, setup_failure
    from ._run import emit_stdout_json

    missing = missing_extra(exc)
    if missing is None:
        raise exc
    return setup_failure(*missing).report(options, Console(), emit_stdout_json)


def main() -> NoReturn:
    """The console script: run the command line and exit with its status."""
    sys.exit(run())
