"""Tab completion of ``trio-mcp`` in bash, zsh and fish: ``trio-mcp completion SHELL``.

The script each shell loads is small: on Tab it runs the hidden command
``trio-mcp __complete SHELL WORDBREAKS LINE AFTER`` (``LINE``: the command
line up to the cursor; ``AFTER``: the rest) and offers what it prints. That command knows the rest:
command names, options, the servers of the configuration files after
``--server``, and, for ``call``, ``prompt``, ``read`` and ``complete``, the
server's own tools, prompts, resources and templates, with each tool's
argument names and values, as the shell's Tab does (`._shell.completions`).
For those it starts the server (or, with ``--config``, every server of the
configuration), within `SERVER_BUDGET` seconds; it never prints an error,
and offers nothing when the server cannot tell.

Its output: a first line, ``space`` or ``nospace`` (whether the shell
should add a space after the word chosen: not after ``NAME=``), then one
candidate a line.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shlex
import sys
from typing import TYPE_CHECKING, Final

from .._core.eras import LOG_LEVELS
from ._args import COMMANDS, PROG

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractAsyncContextManager

    from .._client import Client
    from ._args import Options
    from ._console import Console
    from ._shell import Backend, Catalog

__all__ = ["HELPER", "SHELLS", "candidates", "complete_command", "script"]

#: The hidden command the scripts run.
HELPER: Final = "__complete"
#: The shells a script is written for.
SHELLS: Final = ("bash", "zsh", "fish")
#: How long completing may take to start the server and list what it offers, in seconds.
SERVER_BUDGET: Final = 5.0
#: The options of every command, those that take a value first.
VALUED_OPTIONS: Final = ("--timeout", "--protocol", "--env", "--cwd", "--header", "--config", "--server")
FLAG_OPTIONS: Final = ("--json", "--verbose", "--help")
#: Options of some commands only (a value follows ``-o``, ``--output`` and ``--scope``).
COMMAND_OPTIONS: Final = {
    "tools": ("--schema",),
    "call": ("--output", "--no-output-check"),
    "read": ("--output",),
    "prompt": ("--output",),
    "login": ("--headless", "--scope", "--dpop", "--no-dpop"),
    "tasks": ("--detach",),
}
#: The options of one command that take a value (a file, scopes).
COMMAND_VALUED: Final = ("-o", "--output", "--scope")
#: The commands whose words name what a server offers.
SERVER_WORDS: Final = ("call", "prompt", "read", "complete", "tasks")
#: What ``--protocol`` takes.
PROTOCOL_WORDS: Final = ("auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

_BASH: Final = """\
# bash completion for {prog} (load it with: source <({prog} completion bash))
_trio_mcp_complete() {{
    local IFS=$'\\n'
    local reply
    reply=($(command {prog} {helper} bash "$COMP_WORDBREAKS" "${{COMP_LINE:0:COMP_POINT}}" \\
        "${{COMP_LINE:COMP_POINT}}" 2>/dev/null))
    if [[ "${{reply[0]}}" == nospace ]]; then
        compopt -o nospace 2>/dev/null
    fi
    COMPREPLY=("${{reply[@]:1}}")
}}
complete -o default -F _trio_mcp_complete {prog}
"""

_ZSH: Final = """\
#compdef {prog}
# zsh completion for {prog} (load it with: source <({prog} completion zsh), after compinit)
_trio_mcp_complete() {{
    local -a reply
    reply=("${{(@f)$(command {prog} {helper} zsh '' "${{BUFFER[1,CURSOR]}}" "${{BUFFER[CURSOR+1,-1]}}" 2>/dev/null)}}")
    local mode=${{reply[1]}}
    shift reply
    (( ${{#reply}} )) || return 1
    if [[ $mode == nospace ]]; then
        compadd -Q -S '' -- "${{reply[@]}}"
    else
        compadd -Q -- "${{reply[@]}}"
    fi
}}
if [[ ${{funcstack[1]}} == _{prog} ]]; then
    _trio_mcp_complete "$@"  # autoloaded from $fpath, as _{prog}: complete now
else
    compdef _trio_mcp_complete {prog}
fi
"""

_FISH: Final = """\
# fish completion for {prog} (load it with: {prog} completion fish | source)
function __trio_mcp_complete
    set -l before (commandline -cp)
    set -l after (string sub -s (math (string length -- "$before") + 1) -- (commandline -p))
    command {prog} {helper} fish '' "$before" "$after" 2>/dev/null | tail -n +2
end
complete -c {prog} -f -a '(__trio_mcp_complete)'
"""


def script(shell: str, prog: str = PROG) -> str:
    """The completion script of ``shell`` (one of `SHELLS`) for the command ``prog``."""
    template = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}[shell]
    return template.format(prog=prog, helper=HELPER)


# ----------------------------------------------------------------- what to offer


def _split(line: str) -> tuple[list[str], str]:
    """The words before the cursor's, and the cursor's (as typed so far)."""
    with contextlib.suppress(ValueError):
        words = shlex.split(line)
        if line and not line[-1].isspace():
            return words[:-1], words[-1] if words else ""
        return words, ""
    # An open quote: the cursor's word starts at it.
    try:
        words = shlex.split(line + '"')
    except ValueError:
        words = shlex.split(line + "'")
    return words[:-1], words[-1] if words else ""


class _Line:
    """What the words before the cursor say: the command, the server, the command's own words."""

    def __init__(self, words: list[str]) -> None:
        self.command: str | None = None
        self.global_words: list[str] = []
        """The options that say which server (``--config``, ``--server``, ``--protocol``...)."""
        self.own: list[str] = []
        """The command's words, and its own options (what the shell's completion reads)."""
        self.after_dashes = False
        self.server: list[str] = []
        i = 0
        while i < len(words):
            word = words[i]
            if word == "--":
                self.after_dashes = True
                self.server = words[i + 1 :]
                break
            if word in VALUED_OPTIONS or word in COMMAND_VALUED:
                if word in ("--timeout", *COMMAND_VALUED):
                    self.own += words[i : i + 2]
                else:
                    self.global_words += words[i : i + 2]
                i += 2
                continue
            if word.startswith("-"):
                if word.partition("=")[0] in VALUED_OPTIONS:
                    self.global_words.append(word)
                else:
                    self.own.append(word)
            elif self.command is None:
                self.command = word
            else:
                self.own.append(word)
            i += 1


def _no_input(input_id: str, definition: Mapping[str, object]) -> str:
    return ""


def _config_servers(global_words: list[str]) -> list[str]:
    """The server names of the configuration the words give (``--config``, else the files found)."""
    from .._config import ConfigError, discover_configs, load_config

    paths = [global_words[i + 1] for i, word in enumerate(global_words[:-1]) if word == "--config"]
    paths += [word.partition("=")[2] for word in global_words if word.startswith("--config=")]
    if not paths:
        paths = [str(place.path) for place in discover_configs() if place.exists]
    names: list[str] = []
    for path in paths:
        try:
            loaded = load_config(path, environ={}, on_missing="keep", resolve_input=_no_input)
        except ConfigError:
            continue
        names += [name for name in loaded.servers if name not in names]
    return names


def candidates(
    line: str, catalog: Catalog | None = None, suggest: Callable[[str, str, str], list[str]] | None = None
) -> tuple[list[str], bool]:
    """What Tab offers at the end of ``line`` (the command line after the program's name), and
    whether a space should follow the word chosen.

    ``catalog`` is what the server offers (for ``call``, ``prompt``,
    ``read`` and ``complete``), and ``suggest`` its values for a
    template's variable (see `._shell.completions`); `complete_command`
    asks the server for them when they are needed.
    """
    from ._shell import Catalog, completions

    words, text = _split(line)
    parsed = _Line(words)
    if parsed.after_dashes:
        return [], True  # the server's command line: the shell's own completion of files
    previous = words[-1] if words else ""
    if previous in COMMAND_VALUED:
        return [], True  # a file, scopes: the shell's default
    if previous in VALUED_OPTIONS:
        if previous == "--server":
            return _whole(_config_servers(parsed.global_words), text)
        if previous == "--protocol":
            return _whole(list(PROTOCOL_WORDS), text)
        return [], True  # a file, a number...: the shell's default
    if text.startswith("-"):
        own = COMMAND_OPTIONS.get(parsed.command or "", ())
        return _whole([*FLAG_OPTIONS, *VALUED_OPTIONS, *own, "--"], text)
    if parsed.command is None:
        return _whole(COMMANDS, text)
    given = [word for word in parsed.own if not word.startswith("-")]
    if parsed.command == "completion":
        return _whole(list(SHELLS), text) if not given else ([], True)
    if parsed.command == "log-level":
        return _whole(list(LOG_LEVELS), text) if not given else ([], True)
    if parsed.command not in SERVER_WORDS:
        return [], True
    before = shlex.join([parsed.command, *parsed.own])
    offered = completions(before + " ", text, catalog if catalog is not None else Catalog(), suggest)
    return [item.rstrip(" ") for item in offered], all(item.endswith(" ") for item in offered)


def _whole(names: Sequence[str], text: str) -> tuple[list[str], bool]:
    return [name for name in dict.fromkeys(names) if name.startswith(text)], True


def _needs_server(line: str) -> bool:
    words, text = _split(line)
    parsed = _Line(words)
    previous = words[-1] if words else ""
    return (
        parsed.command in SERVER_WORDS
        and not parsed.after_dashes
        and not text.startswith("-")
        and previous not in VALUED_OPTIONS
        and previous not in COMMAND_VALUED
    )


def _words_after(after: str) -> list[str]:
    """The whole words after the cursor (not the end of the word it is in)."""
    try:
        words = shlex.split(after)
    except ValueError:
        return []
    return words if not after[:1].strip() else words[1:]


async def _offer(line: str, after: str = "") -> tuple[list[str], bool]:
    """`candidates`, with what the server of the command line offers (nothing, if it cannot be had in time).

    The server and the configuration may be given after the cursor
    (``call <Tab> -- python server.py``): ``after`` is the rest of the line.
    """
    import trio

    from ._args import UsageError, parse_args

    words, _ = _split(line)
    parsed = _Line(words + _words_after(after))
    argv = [*parsed.global_words, "tools"]
    if parsed.after_dashes:
        argv += ["--", *parsed.server]
    try:
        options = parse_args(argv)
    except (UsageError, SystemExit):
        return candidates(line)
    with trio.move_on_after(SERVER_BUDGET):
        if options.uses_configs and options.server_name is None:
            return await _offer_group(line, options)
        return await _offer_server(line, options)
    return candidates(line)


async def _offer_from(line: str, backend: Backend) -> tuple[list[str], bool]:
    """`candidates`, with the catalogue and the suggestions of ``backend``."""
    catalog = await backend.catalog()
    asked: list[tuple[str, str, str]] = []

    def ask(template: str, name: str, typed: str) -> list[str]:
        asked.append((template, name, typed))
        return []

    candidates(line, catalog, ask)  # which suggestions the line needs
    answers = {key: await backend.suggest(*key) for key in asked}
    return candidates(line, catalog, lambda *key: answers.get(key, []))


async def _offer_server(line: str, options: Options) -> tuple[list[str], bool]:
    from .._errors import MCPError
    from .._open import open_client
    from .._options import ClientOptions
    from .._targets import HTTPTarget, ProcessTarget
    from ._shell import OneServer

    client_options = ClientOptions(
        protocol=options.protocol, probe_timeout=SERVER_BUDGET / 2, on_elicitation=_decline
    )
    opened: AbstractAsyncContextManager[Client]
    try:
        if options.server_name is not None:
            from .._group.connect import open_spec
            from ._configs import ConfigFailure, choose, load

            try:
                choose(options, load(options, _quiet()))
            except ConfigFailure:
                return candidates(line)
            opened = open_spec(options.spec, client_options)
        elif options.url is not None:
            from ..auth._storage import stored_login

            auth = stored_login(options.url, options.headers)
            opened = open_client(
                HTTPTarget(options.url, headers=options.headers, auth=auth), options=client_options
            )
        else:
            local = ProcessTarget(options.server[0], options.server[1:], env=options.env, cwd=options.cwd)
            opened = open_client(local, options=client_options)
        async with opened as client:
            return await _offer_from(line, OneServer(client))
    except (MCPError, OSError):
        return candidates(line)


async def _offer_group(line: str, options: Options) -> tuple[list[str], bool]:
    import logging

    import attrs

    from .._group import open_servers
    from .._options import ClientOptions
    from ._configs import ConfigFailure, GroupServers, load

    try:
        loaded = load(options, _quiet())
    except ConfigFailure:
        return candidates(line)
    logging.getLogger("trio_mcp.group").addHandler(logging.NullHandler())
    client_options = ClientOptions(
        protocol=options.protocol, probe_timeout=SERVER_BUDGET / 2, on_elicitation=_decline
    )
    config = loaded.config
    named = _named_server(line, list(config.servers))
    if named is not None:
        # The word names its server (SERVER__ or SERVER.): only that one is started.
        config = attrs.evolve(config, servers={named: config.servers[named]}, invalid={})
    async with open_servers(config, options=client_options) as group:
        return await _offer_from(line, GroupServers(group, loaded))


def _named_server(line: str, servers: list[str]) -> str | None:
    """The server the line's tool names by its prefix (``SERVER__``, ``SERVER.``), if one does."""
    words, text = _split(line)
    # The word being typed, or the tool a call already names (its arguments being typed).
    typed = [text]
    for before, after in itertools.pairwise(words):
        if before == "call" or (before == "start" and "tasks" in words):
            typed.append(after)
    named = [name for name in servers for word in typed if word.startswith((f"{name}__", f"{name}."))]
    return max(named, key=len) if named else None


async def _decline(params: object) -> dict[str, str]:
    """The elicitation hook of completion: it lists, calls nothing, and never asks (declared, as
    the commands declare it, so that the servers list what they list to them)."""
    import trio

    await trio.lowlevel.checkpoint()
    return {"action": "decline"}


def _quiet() -> Console:
    """A console that says nothing (completion never writes to the terminal)."""
    import io

    from ._console import Console

    return Console(err=io.StringIO())


def complete_command(argv: Sequence[str]) -> int:
    """Run ``trio-mcp __complete SHELL WORDBREAKS LINE [AFTER]``: print what Tab offers; always status 0.

    ``LINE`` is the command line up to the cursor, ``AFTER`` the rest. For
    bash, each candidate loses what bash takes as earlier words of the line
    (up to the last of ``WORDBREAKS`` in the word: ``=``, ``:``).
    """
    if len(argv) not in (3, 4) or argv[0] not in SHELLS:
        sys.stderr.write(f"usage: {PROG} {HELPER} {{{','.join(SHELLS)}}} WORDBREAKS LINE [AFTER]\n")
        return 0
    shell, breaks, line = argv[:3]
    after = argv[3] if len(argv) == 4 else ""
    # Without the program's own name, as typed (nothing to offer while it is being typed).
    named = re.match(r"\s*\S+\s(.*)\Z", line, re.DOTALL)
    if named is None:
        sys.stdout.write("space\n")
        return 0
    line = named.group(1).lstrip()
    offered, space = candidates(line)
    if _needs_server(line):
        import trio

        with contextlib.suppress(Exception):
            offered, space = trio.run(_offer, line, after)
    if shell == "fish":
        # fish quotes what it inserts itself: the words as the command reads them.
        from ._shell import unquoted

        offered = [unquoted(item) for item in offered]
    if shell == "bash":
        _, text = _split(line)
        cut = max((text.rfind(char) for char in breaks if char not in " \t\n"), default=-1)
        offered = [item[cut + 1 :] for item in offered]
    output = "\n".join(["space" if space else "nospace", *offered]) + "\n"
    with contextlib.suppress(OSError):
        os.write(sys.stdout.fileno(), output.encode("utf-8", "backslashreplace"))
    return 0
