"""The ``trio-mcp`` commands on configuration files: ``configs``, ``servers``, ``tools`` across servers.

And the choice of one server (``--server NAME``, ``call SERVER.TOOL``) for
the other commands, which then run as with any server (`._run`).

What is shown of an entry (its command line, its URL) comes from the file
as written, with ``${...}`` references left as they are, so that no
expanded value (a token) is ever printed; a URL shows without its query or
user info.
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING, Any, Final

import attrs

from .._config import (
    ConfigError,
    LoadedConfig,
    ServerSpec,
    discover_configs,
    load_config,
)
from .._config.spec import shown_url
from .._errors import AuthRequired
from ._args import EXIT_CONFIG, EXIT_INTERRUPTED, EXIT_OK, EXIT_TIMEOUT, PROG, Options
from ._console import Console
from ._names import find_server
from ._render import join_lines, pretty_json, tool_lines, wire_json
from ._run import (
    PROBE_TIMEOUT,
    Failure,
    emit_stdout_json,
    execute,
    failure_from,
    flush_stdout,
    login_command,
    wanted_scope,
)
from ._shell import execute_shell

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._group import ServerGroup, ServerStatus

JSON = Any

#: The longest detail a table row shows.
DETAIL_MAX: Final = 100


class ConfigFailure(Exception):
    """The configuration cannot be used for the command; the message says why."""


@attrs.frozen
class Loaded:
    """A configuration as used (``config``) and as shown (``shown``: references unexpanded)."""

    config: LoadedConfig
    shown: LoadedConfig
    files: tuple[str, ...]
    skipped: tuple[str, ...] = ()


def _keep_input(input_id: str, definition: Mapping[str, Any]) -> str:
    return f"${{input:{input_id}}}"


def _load(paths: Sequence[str], *, shown: bool) -> LoadedConfig:
    workspace = os.getcwd()
    if shown:
        return load_config(
            *paths, environ={}, on_missing="keep", resolve_input=_keep_input, workspace=workspace
        )
    return load_config(*paths, workspace=workspace)


def load(options: Options, console: Console) -> Loaded:
    """The configuration of the command: the ``--config`` files, or the files discovered here.

    Discovered files that are wrong as a whole are skipped, with a note;
    a ``--config`` file that is wrong fails the command.

    Raises:
        ConfigFailure: No file, or a ``--config`` file is wrong.
    """
    if options.config:
        paths = list(options.config)
        try:
            config = _load(paths, shown=False)
        except ConfigError as exc:
            raise ConfigFailure(str(exc)) from None
        return Loaded(config, _load(paths, shown=True), tuple(config.sources))
    found = [str(place.path) for place in discover_configs() if place.exists]
    good: list[str] = []
    skipped: list[str] = []
    for path in found:
        try:
            _load([path], shown=False)
        except ConfigError as exc:
            skipped.append(str(exc))
        else:
            good.append(path)
    for message in skipped:
        console.say(f"{PROG}: skipped {message}")
    if not good:
        raise ConfigFailure(
            "no configuration file found here (see 'trio-mcp configs'); name one with --config FILE"
        )
    config = _load(good, shown=False)
    return Loaded(config, _load(good, shown=True), tuple(good), tuple(skipped))


def shown_command(spec: ServerSpec | None) -> str:
    """What a table shows of an entry: its command line, or its URL."""
    if spec is None:
        return ""
    if spec.transport == "stdio":
        return shlex.join([spec.command or "", *spec.args])
    return f"{spec.transport} {shown_url(spec.url)}"


def _cut(text: str, limit: int = DETAIL_MAX) -> str:
    text = text.strip().splitlines()[0] if text.strip() else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_error(error: ConfigError) -> str:
    """An entry's error without the file and server it starts with (the listing shows those)."""
    text = str(error)
    prefix = ""
    if error.file is not None:
        prefix += f"{error.file}: "
    if error.server is not None:
        prefix += f"server {error.server!r}: "
    return text[len(prefix) :] if prefix and text.startswith(prefix) else text


# ----------------------------------------------------------------- choosing one server


def choose(options: Options, loaded: Loaded) -> None:
    """Point ``options`` at the one server the command talks to (``--server``, or ``call SERVER.TOOL``).

    Raises:
        ConfigFailure: No such server, or its entry is invalid or disabled.
    """
    config = loaded.config
    names = [*config.servers, *config.invalid]
    name = options.server_name
    if name is None:
        # call NAME, as 'tools' lists it (SERVER__TOOL), or SERVER.TOOL.
        target = options.target
        found = find_server(target, names)
        if found is None:
            raise ConfigFailure(
                f"{target!r} names no server of the configuration: call SERVER__TOOL (the name"
                " 'tools' shows), SERVER.TOOL, or --server NAME call TOOL, with SERVER one of:"
                f" {', '.join(map(repr, names)) or 'none'}"
            )
        name, tool = found
        options.target = tool if tool is not None else target
        options.catalogue_name = None if tool is not None else target
    if name in config.invalid:
        raise ConfigFailure(str(config.invalid[name]))
    spec = config.servers.get(name)
    if spec is None:
        raise ConfigFailure(
            f"the configuration has no server named {name!r} (it has: {', '.join(map(repr, names)) or 'none'})"
        )
    where = f" in {spec.source.path}" if spec.source.path else ""
    if not spec.enabled:
        raise ConfigFailure(f"server {name!r} is disabled{where}")
    if options.env or options.cwd is not None:
        spec = attrs.evolve(spec, env={**spec.env, **options.env}, cwd=options.cwd or spec.cwd)
    options.spec = spec
    options.demo = False
    shown = loaded.shown.servers.get(name)
    options.server = [f"{name!r} ({shown_command(shown)})" if shown is not None else repr(name)]


# ----------------------------------------------------------------- configs


def _listing(options: Options) -> tuple[list[dict[str, JSON]], list[str]]:
    """Each file's record (for --json), and the paths looked at."""
    if options.config:
        places = [(os.path.abspath(path), "", "", os.path.isfile(path)) for path in options.config]
    else:
        places = [(str(d.path), d.client, d.scope, d.exists) for d in discover_configs()]
    records: list[dict[str, JSON]] = []
    for path, client, scope, exists in places:
        record: dict[str, JSON] = {"path": path, "client": client or None, "scope": scope or None}
        record["exists"] = exists
        if not exists:
            records.append(record)
            continue
        try:
            config = _load([path], shown=False)
            shown = _load([path], shown=True)
        except ConfigError as exc:
            record["error"] = str(exc)
            records.append(record)
            continue
        servers: list[dict[str, JSON]] = []
        for name in [*config.servers, *config.invalid]:
            spec = config.servers.get(name)
            entry: dict[str, JSON] = {"name": name}
            if spec is None:
                entry["state"] = "invalid"
                entry["error"] = _short_error(config.invalid[name])
            else:
                entry["state"] = "enabled" if spec.enabled else "disabled"
                entry["transport"] = spec.transport
            display = shown.servers.get(name)
            if display is not None:
                entry["command"] = shown_command(display)
            servers.append(entry)
        record["servers"] = servers
        records.append(record)
    return records, [path for path, *_ in places]


def _configs(options: Options, console: Console) -> tuple[int, str]:
    records, looked = _listing(options)
    if options.json_output:
        return EXIT_OK, pretty_json({"configs": records}) + "\n"
    lines: list[str] = []
    for record in records:
        if not record["exists"]:
            if options.config:
                lines.append(f"{record['path']}: not found")
            continue
        about = ", ".join(str(record[key]) for key in ("client", "scope") if record.get(key))
        lines.append(record["path"] + (f" ({about})" if about else ""))
        if "error" in record:
            lines.append(f"  not usable: {record['error']}")
            continue
        if not record["servers"]:
            lines.append("  (no servers)")
        width = max((len(entry["name"]) for entry in record["servers"]), default=0)
        for entry in record["servers"]:
            if entry["state"] == "invalid":
                detail = f"invalid: {entry['error']}"
            else:
                detail = entry.get("command", "")
                if entry["state"] == "disabled":
                    detail += "  (disabled)"
            lines.append(f"  {entry['name']:<{width}}  {detail}")
    if not lines:
        console.say(f"{PROG}: no configuration file found; looked for:")
        for path in looked:
            console.say(f"  {path}")
    return EXIT_OK, join_lines(lines)


# ----------------------------------------------------------------- servers, tools


def _capped(config: LoadedConfig, seconds: float | None) -> LoadedConfig:
    """The configuration with each start budget within the command's (so the table always shows)."""
    if seconds is None:
        return config
    cap = max(seconds * 0.75, 0.1)
    servers = {
        name: attrs.evolve(spec, startup_timeout=min(spec.startup_timeout, cap))
        for name, spec in config.servers.items()
    }
    return LoadedConfig(
        servers=servers, invalid=config.invalid, warnings=config.warnings, sources=config.sources
    )


def _status_detail(status: ServerStatus, loaded: Loaded, options: Options) -> str:
    if status.state == "needs-login":
        scope = wanted_scope(status.error) if isinstance(status.error, AuthRequired) else None
        return f"needs a login: run {login_command(options, status.name, scope)}"
    if status.state == "invalid" and isinstance(status.error, ConfigError):
        return _short_error(status.error)
    if status.state in ("failed", "restarting", "starting") and (status.reason or status.error):
        return _cut(str(status.error) if status.error is not None else status.reason)
    return shown_command(loaded.shown.servers.get(status.name))


def _status_record(
    status: ServerStatus, group: ServerGroup, loaded: Loaded, options: Options
) -> dict[str, JSON]:
    spec = loaded.config.servers.get(status.name)
    record: dict[str, JSON] = {"name": status.name, "state": status.state}
    if spec is not None:
        record["transport"] = spec.transport
        record["command"] = shown_command(loaded.shown.servers.get(status.name))
    if status.state == "ready":
        record["tools"] = sum(1 for entry in group.tools if entry.server == status.name)
    record["restarts"] = status.restarts
    if status.exit_code is not None:
        record["exitCode"] = status.exit_code
    if status.state not in ("ready", "disabled") and (status.reason or status.error):
        record["error"] = _status_detail(status, loaded, options)
    return record


def _route_group_log(options: Options, console: Console) -> None:
    """The group's log (state changes, restarts): on stderr with ``--verbose``, else nowhere (the table says it)."""
    import logging

    class ToConsole(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            console.say(f"{PROG}: {record.getMessage()}")

    logger = logging.getLogger("trio_mcp.group")
    logger.propagate = False
    if options.verbose:
        logger.setLevel(logging.DEBUG)
        logger.addHandler(ToConsole())
    else:
        logger.addHandler(logging.NullHandler())


async def _run_group(options: Options, loaded: Loaded, console: Console) -> tuple[int, str]:
    import trio

    from .._group import open_servers
    from .._options import ClientOptions

    _route_group_log(options, console)
    timeout = options.timeout
    probe = PROBE_TIMEOUT if timeout is None else min(PROBE_TIMEOUT, timeout / 4)
    output = ""
    with trio.move_on_after(timeout if timeout is not None else float("inf")) as scope:
        client_options = ClientOptions(protocol=options.protocol, probe_timeout=probe)
        async with open_servers(_capped(loaded.config, timeout), options=client_options) as group:
            if options.command == "servers":
                output = _render_servers(options, group, loaded)
            else:
                output = _render_tools(options, group, loaded, console)
    if scope.cancelled_caught:
        raise Failure(
            EXIT_TIMEOUT, f"timed out after {timeout:g} s while starting the servers", kind="timeout"
        ) from TimeoutError()
    return EXIT_OK, output


def _render_servers(options: Options, group: ServerGroup, loaded: Loaded) -> str:
    statuses = group.statuses()
    if options.json_output:
        return pretty_json({"servers": [_status_record(s, group, loaded, options) for s in statuses]}) + "\n"
    rows = [("NAME", "STATE", "TOOLS", "DETAIL")]
    for status in statuses:
        tools = ""
        if status.state == "ready":
            tools = str(sum(1 for entry in group.tools if entry.server == status.name))
        rows.append((status.name, status.state, tools, _status_detail(status, loaded, options)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return join_lines(
        f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]}".rstrip()
        for row in rows
    )


def _render_tools(options: Options, group: ServerGroup, loaded: Loaded, console: Console) -> str:
    for status in group.statuses():
        if status.state == "needs-login":
            console.say(
                f"{PROG}: server {status.name!r} {_status_detail(status, loaded, options)}:"
                " its tools are not listed"
            )
        elif status.state not in ("ready", "disabled"):
            console.say(
                f"{PROG}: server {status.name!r} is {status.state}"
                f" ({_status_detail(status, loaded, options)}): its tools are not listed"
            )
    listed = group.tools
    if options.json_output:
        return (
            pretty_json(
                {
                    "tools": [
                        {
                            **wire_json(entry.item),
                            "name": entry.name,
                            "server": entry.server,
                            "serverTool": entry.item.name,
                        }
                        for entry in listed
                    ]
                }
            )
            + "\n"
        )
    if not listed:
        console.say("(no server offers tools)")
    return join_lines(
        "\n".join(tool_lines(attrs.evolve(entry.item, name=entry.name), options.schema)) for entry in listed
    )


# ----------------------------------------------------------------- the command


def _fail(options: Options, console: Console, status: int, message: str, kind: str) -> int:
    return Failure(status, message, kind=kind).report(options, console, emit_stdout_json)


def execute_configs(options: Options) -> int:
    """Run a command whose servers come from configuration files; the exit status."""
    console = Console()
    if options.command == "configs":
        code, text = _configs(options, console)
        return flush_stdout(text) or code
    try:
        loaded = load(options, console)
        if options.verbose:
            for warning in loaded.config.warnings:
                console.say(f"{PROG}: {warning}")
        if options.server_name is not None or options.command not in ("servers", "tools"):
            if options.command != "call" and options.server_name is None:
                raise ConfigFailure(f"{options.command!r} talks to one server: name it with --server NAME")
            choose(options, loaded)
            if options.command == "shell":
                return execute_shell(options)
            return execute(options)
    except ConfigFailure as exc:
        return _fail(options, console, EXIT_CONFIG, str(exc), "config")
    import trio

    try:
        code, text = trio.run(_run_group, options, loaded, console)
    except BaseException as exc:
        failure = failure_from(exc, options, console, "starting the servers")
        return EXIT_INTERRUPTED if failure is None else failure.report(options, console, emit_stdout_json)
    return flush_stdout(text) or code
