"""The ``trio-mcp`` commands on configuration files: ``configs``, ``servers``, the lists across servers.

``tools``, ``prompts``, ``resources`` and ``templates`` list what every
server of the configuration offers, and ``shell`` runs its commands across
them (`GroupServers`); a tool or prompt is listed by its name in the
group's catalogue (``SERVER__ITEM``), and found by that name or by
``SERVER.ITEM``.

And the choice of one server (``--server NAME``, ``call SERVER.TOOL``) for
the other commands, which then run as with any server (`._run`).

What is shown of an entry (its command line, its URL) comes from the file
as written, with ``${...}`` references left as they are, so that no
expanded value (a token) is ever printed; a URL shows without its query or
user info.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import sys
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio

from .._config import (
    ConfigError,
    LoadedConfig,
    ServerSpec,
    discover_configs,
    load_config,
)
from .._config.spec import shown_url
from .._errors import AuthRequired, MCPError, ServerGone, TransportClosed
from ._args import (
    EXIT_CONFIG,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    PROG,
    Options,
)
from ._console import Console, isatty
from ._failures import Failure, explain, failure_from, login_command, wanted_scope
from ._names import find_server
from ._render import (
    join_lines,
    note_line,
    pretty_json,
    prompt_lines,
    resource_lines,
    template_lines,
    tool_lines,
    wire_json,
)
from ._run import HANDLERS, PROBE_TIMEOUT, Command, emit_stdout_json, execute, flush_stdout
from ._shell import SHELL_COMMANDS, Catalog, Lines, execute_shell, shell_loop, template_suggestions
from ._tasks import run_tasks

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from .._group import Listed, ServerGroup, ServerStatus
    from ._shell import Lines

JSON = Any

#: The longest detail a table row shows.
DETAIL_MAX: Final = 100
#: The commands that list what every server of a configuration offers.
LIST_COMMANDS: Final = ("tools", "prompts", "resources", "templates")
#: The commands of a shell across the servers of a configuration.
GROUP_SHELL_COMMANDS: Final = (
    *SHELL_COMMANDS[: SHELL_COMMANDS.index("help")],
    "servers",
    "help",
    "exit",
    "quit",
)


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


def _without_entry(error: BaseException) -> str:
    """An error's text without the ``server 'NAME': `` a group puts first (the table's row names it)."""
    text = str(error)
    entry = getattr(error, "entry", None)
    return text.removeprefix(f"server {entry!r}: ") if isinstance(entry, str) else text


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
        return _cut(_without_entry(status.error) if status.error is not None else status.reason)
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
    from .._group import open_servers
    from .._options import ClientOptions
    from ._forms import Asker
    from ._run import Budget

    _route_group_log(options, console)
    timeout = options.timeout
    probe = PROBE_TIMEOUT if timeout is None else min(PROBE_TIMEOUT, timeout / 4)
    output = ""
    budget = Budget(timeout)
    budget.start()
    with budget.scope as scope:
        # The client each server meets is the one of the shell and of
        # --server: it declares elicitation (a server may hide the tools that
        # need it from a client that does not), and answers as they do.
        asker = Asker(
            console, budget, interactive=isatty(sys.stdin), server_name=lambda: "of the configuration"
        )
        client_options = ClientOptions(protocol=options.protocol, probe_timeout=probe, on_elicitation=asker)
        async with open_servers(_capped(loaded.config, timeout), options=client_options) as group:
            _say_unlisted(options, group, loaded, console)
            output = render_listing(options, group, loaded, console)
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


def _say_unlisted(options: Options, group: ServerGroup, loaded: Loaded, console: Console) -> None:
    """Say which servers' items a list leaves out, and why."""
    if options.command not in LIST_COMMANDS:
        return
    what = "resource templates" if options.command == "templates" else options.command
    for status in group.statuses():
        if status.state == "needs-login":
            console.say(
                f"{PROG}: server {status.name!r} {_status_detail(status, loaded, options)}:"
                f" its {what} are not listed"
            )
        elif status.state not in ("ready", "disabled"):
            console.say(
                f"{PROG}: server {status.name!r} is {status.state}"
                f" ({_status_detail(status, loaded, options)}): its {what} are not listed"
            )


def render_listing(
    options: Options, group: ServerGroup, loaded: Loaded, console: Console, server: str | None = None
) -> str:
    """What ``servers``, ``tools``, ``prompts``, ``resources`` or ``templates`` prints across servers
    (or of ``server`` only); an empty list is said on stderr."""
    command = options.command
    if command == "servers":
        return _render_servers(options, group, loaded)
    if command == "tools":
        return _render_tools(options, console, _of(group.tools, server))
    if command == "prompts":
        return _render_prompts(options, console, _of(group.prompts, server))
    if command == "resources":
        return _render_located(options, console, "resources", _of(group.resources, server), resource_lines)
    templates = _of(group.resource_templates, server)
    return _render_located(options, console, "resourceTemplates", templates, template_lines)


def _of(entries: list[Listed[Any]], server: str | None) -> list[Listed[Any]]:
    return entries if server is None else [entry for entry in entries if entry.server == server]


def _nothing(options: Options, console: Console, what: str) -> str:
    console.say(
        f"(no server offers {what})" if options.server_name is None else f"(the server has no {what})"
    )
    return ""


def _render_tools(options: Options, console: Console, listed: list[Listed[Any]]) -> str:
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
        return _nothing(options, console, "tools")
    return join_lines(
        "\n".join(tool_lines(attrs.evolve(entry.item, name=entry.name), options.schema)) for entry in listed
    )


def _render_prompts(options: Options, console: Console, listed: list[Listed[Any]]) -> str:
    if options.json_output:
        prompts = [
            {
                **wire_json(entry.item),
                "name": entry.name,
                "server": entry.server,
                "serverPrompt": entry.item.name,
            }
            for entry in listed
        ]
        return pretty_json({"prompts": prompts}) + "\n"
    if not listed:
        return _nothing(options, console, "prompts")
    return join_lines("\n".join(prompt_lines(attrs.evolve(entry.item, name=entry.name))) for entry in listed)


def _render_located(
    options: Options,
    console: Console,
    key: str,
    listed: list[Listed[Any]],
    describe: Callable[[Any], list[str]],
) -> str:
    """Resources or templates across servers: each one's lines, its server at the end of the first."""
    if options.json_output:
        return (
            pretty_json({key: [{**wire_json(entry.item), "server": entry.server} for entry in listed]}) + "\n"
        )
    if not listed:
        return _nothing(options, console, "resource templates" if key == "resourceTemplates" else "resources")
    out: list[str] = []
    for entry in listed:
        lines = describe(entry.item)
        lines[0] += f"  [{entry.server}]"
        out.append("\n".join(lines))
    return join_lines(out)


# ----------------------------------------------------------------- the shell across servers


def _names_a_tool(options: Options) -> bool:
    """Whether the command's target is a tool (``call TOOL``, ``tasks start TOOL``)."""
    return options.command == "call" or (options.command == "tasks" and options.task_action == "start")


def _template_pattern(template: str) -> re.Pattern[str]:
    """A URI template as a pattern its URIs match (each ``{...}`` any text)."""
    parts = re.split(r"\{[^}]*\}", template)
    return re.compile(".*".join(re.escape(part) for part in parts), re.DOTALL)


class GroupServers:
    """The shell's commands across the servers of a configuration (`.._shell.Backend`).

    The lists are the group's; ``call`` and ``prompt`` take an item's name
    as the lists show it (the group-wide ``SERVER__ITEM``) or ``SERVER.ITEM``;
    ``read`` and ``complete template`` find the server whose resources (or
    templates) have the URI; ``--server NAME`` on a line sends the command
    to that server (``info``, and an item by its server's own name). A
    server that dies is started again by the group, and the shell goes on.
    """

    commands: tuple[str, ...] = GROUP_SHELL_COMMANDS
    server_per_line = True

    def __init__(self, group: ServerGroup, loaded: Loaded) -> None:
        self.group = group
        self.loaded = loaded

    async def run(self, session: Command, options: Options) -> int:
        if options.command in (*LIST_COMMANDS, "servers"):
            await trio.lowlevel.checkpoint()
            if options.server_name is not None:
                self._check_server(options.server_name)
            session.emit(
                render_listing(options, self.group, self.loaded, session.console, options.server_name)
            )
            return EXIT_OK
        server = self._route(options)
        try:
            choose(options, self.loaded)
        except ConfigFailure as exc:
            raise Failure(EXIT_CONFIG, str(exc), kind="config") from None
        try:
            client = await self.group.client(server)
            self._check_offered(options, server)
            session.client = client
            handler = run_tasks if options.command == "tasks" else HANDLERS[options.command]
            code: int = await handler(session, client)
        except (ServerGone, TransportClosed) as exc:
            # The end of this command only: the group starts the server again.
            raise explain(exc, options, session.stage) from None
        except ConfigError as exc:
            raise Failure(EXIT_CONFIG, str(exc), kind="config") from None
        return code

    def _check_offered(self, options: Options, server: str) -> None:
        """A tool or prompt must be one the group lists (its allow and deny lists applied)."""
        command = options.command
        if _names_a_tool(options) or (command in ("prompt", "complete") and options.ref != "template"):
            tool = _names_a_tool(options)
            kind, entries = ("tool", self.group.tools) if tool else ("prompt", self.group.prompts)
            if not any(entry.server == server and entry.item.name == options.target for entry in entries):
                raise Failure(
                    EXIT_USAGE, f"server {server!r} offers no {kind} named {options.target!r}", kind="usage"
                )

    def _check_server(self, name: str) -> None:
        if name not in self.group.names:
            names = ", ".join(map(repr, self.group.names))
            raise Failure(EXIT_USAGE, f"no server named {name!r} (the servers: {names})", kind="usage")

    def _route(self, options: Options) -> str:
        """The server the command goes to (``options.server_name`` set, ``options.target`` its own name)."""
        command = options.command
        named = options.server_name
        if named is not None:
            self._check_server(named)
            return named
        if _names_a_tool(options) or (command in ("prompt", "complete") and options.ref != "template"):
            kind = "tool" if _names_a_tool(options) else "prompt"
            entries = self.group.tools if kind == "tool" else self.group.prompts
            for entry in entries:
                if options.target in (entry.name, f"{entry.server}.{entry.item.name}"):
                    options.server_name = entry.server
                    options.target = entry.item.name
                    return entry.server
            found = find_server(options.target, self.group.names)
            if found is not None and found[1] is not None:  # a server not ready yet, or not listing it
                options.server_name, options.target = found[0], found[1]
                return found[0]
            raise Failure(
                EXIT_USAGE,
                f"no server offers a {kind} named {options.target!r} ('{kind}s' lists them;"
                f" or --server NAME {command} ...)",
                kind="usage",
            )
        if command in ("read", "complete"):
            uri = options.target
            if command == "read":
                servers = [entry.server for entry in self.group.resources if entry.item.uri == uri]
                if not servers:
                    servers = [
                        entry.server
                        for entry in self.group.resource_templates
                        if _template_pattern(entry.item.uri_template).fullmatch(uri)
                    ]
            else:
                servers = [
                    entry.server for entry in self.group.resource_templates if entry.item.uri_template == uri
                ]
            servers = list(dict.fromkeys(servers))
            if len(servers) == 1:
                options.server_name = servers[0]
                return servers[0]
            what = "resource" if command == "read" else "resource template"
            if servers:
                raise Failure(
                    EXIT_USAGE,
                    f"the servers {', '.join(map(repr, servers))} all have the {what} {uri!r}:"
                    f" say which with --server NAME",
                    kind="usage",
                )
            raise Failure(
                EXIT_USAGE,
                f"no server lists the {what} {uri!r} (or say which with --server NAME)",
                kind="usage",
            )
        ready = [status.name for status in self.group.statuses() if status.state == "ready"]
        if len(ready) == 1:
            options.server_name = ready[0]
            return ready[0]
        raise Failure(
            EXIT_USAGE, f"{command!r} talks to one server: say which with --server NAME", kind="usage"
        )

    async def catalog(self) -> Catalog:
        await trio.lowlevel.checkpoint()
        group = self.group
        return Catalog(
            tools={e.name: e.item.input_schema for e in group.tools},
            aliases={f"{e.server}.{e.item.name}": e.name for e in group.tools},
            prompts={e.name: [a.name for a in e.item.arguments or []] for e in group.prompts},
            resources=list(dict.fromkeys(entry.item.uri for entry in group.resources)),
            templates=list(dict.fromkeys(entry.item.uri_template for entry in group.resource_templates)),
            commands=self.commands,
        )

    async def read(self, lines: Lines) -> str | None:
        return await lines.read()

    async def suggest(self, template: str, name: str, typed: str) -> list[str]:
        for entry in self.group.resource_templates:
            if entry.item.uri_template == template:
                try:
                    client = await self.group.client(entry.server)
                except MCPError:
                    continue
                return await template_suggestions(client, template, name, typed)
        return []


def execute_group_shell(options: Options, loaded: Loaded) -> int:
    """Run ``trio-mcp --config FILE shell``: start every server, then the shell across them; the exit status."""
    console = Console()
    session = Command(options, console)
    try:
        code = trio.run(_group_shell, session, loaded)
    except Failure as exc:
        console.clear()
        return exc.report(options, console, emit_stdout_json)
    except BaseException as exc:
        console.clear()
        failure = failure_from(exc, options, console, session.stage)
        return EXIT_INTERRUPTED if failure is None else failure.report(options, console, emit_stdout_json)
    console.clear()
    return session.stdout_status if session.stdout_status != EXIT_OK else code


async def _group_shell(session: Command, loaded: Loaded) -> int:
    from .._group import open_servers
    from .._options import ClientOptions
    from ._forms import Asker

    options = session.options
    console = session.console
    asker = Asker(console, session.budget, interactive=isatty(sys.stdin), server_name=session.server_name)
    session.asker = asker
    _route_group_log(options, console)
    timeout = options.timeout
    verbose = options.verbose

    def on_notification(note: dict[str, JSON]) -> None:
        line = note_line(note) if verbose else None
        if line is not None:
            console.say(line)

    client_options = ClientOptions(
        request_timeout=None,
        protocol=options.protocol,
        probe_timeout=PROBE_TIMEOUT if timeout is None else min(PROBE_TIMEOUT, timeout / 4),
        on_elicitation=asker,
        on_notification=on_notification,
        log_level="debug" if verbose else None,
        input_timeout=None,
    )
    session.stage = "starting the servers"
    async with open_servers(loaded.config, options=client_options, wait=False) as group:
        with trio.move_on_after(timeout if timeout is not None else math.inf):
            await group.wait_started()
        for status in group.statuses():
            if status.state not in ("ready", "disabled"):
                console.say(
                    f"{PROG}: server {status.name!r} is {status.state} ({_status_detail(status, loaded, options)})"
                )
        return await shell_loop(session, GroupServers(group, loaded))


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
        if options.command == "shell" and options.server_name is None:
            return execute_group_shell(options, loaded)
        if options.server_name is not None or options.command not in (*LIST_COMMANDS, "servers"):
            if options.command != "call" and options.server_name is None:
                raise ConfigFailure(f"{options.command!r} talks to one server: name it with --server NAME")
            choose(options, loaded)
            if options.command == "shell":
                return execute_shell(options)
            return execute(options)
    except ConfigFailure as exc:
        return _fail(options, console, EXIT_CONFIG, str(exc), "config")
    try:
        code, text = trio.run(_run_group, options, loaded, console)
    except BaseException as exc:
        failure = failure_from(exc, options, console, "starting the servers")
        return EXIT_INTERRUPTED if failure is None else failure.report(options, console, emit_stdout_json)
    return flush_stdout(text) or code
