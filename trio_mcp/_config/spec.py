"""The normalized, immutable model of an MCP configuration file.

Every dialect people already write (Claude Desktop, Claude Code's
``.mcp.json``, Cursor, VS Code's ``servers``) is read into the same
`ServerSpec` per entry. The model is pure data: it imports no Trio and does
no I/O, so a server group, the command line and a test can all build specs
by hand as easily as from a file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeAlias

import attrs

from .._core.kinds import json_kind
from .._errors import ConfigError

__all__ = ["ConfigError", "ConfigSource", "LoadedConfig", "ServerSpec", "Transport"]

Transport: TypeAlias = Literal["stdio", "http", "sse"]
"""How a server is reached: a child process, Streamable HTTP, or the deprecated HTTP+SSE."""

_MASK = "***"


@attrs.frozen
class ConfigSource:
    """Where a server entry came from, for error messages and trust decisions.

    Attributes:
        path: The file, or ``None`` when the configuration was a dict or text.
        dialect: The dialect it was read as: ``"mcpServers"`` (Claude Desktop,
            Claude Code, Cursor and most others) or ``"vscode"`` (a
            ``servers`` map, with ``inputs``).
    """

    path: str | None = None
    dialect: str = "mcpServers"


def _masked(mapping: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{key!r}: {_MASK!r}" for key in mapping) + "}"


def shown_url(url: str | None) -> str | None:
    """A URL without what may be a credential: its user info and its query."""
    if url is None:
        return None
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return _MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = _MASK + "@" + netloc.rsplit("@", 1)[1]
    query = _MASK if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    from types import MappingProxyType

    return MappingProxyType(dict(value or {}))


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str | bytes):
        raise TypeError("must be a list of strings, not one string (there is no shell splitting)")
    return tuple(value)


def _names(value: Iterable[str]) -> frozenset[str]:
    if isinstance(value, str | bytes):
        raise TypeError("must be a set of tool names, not one string")
    return frozenset(value)


def _check_strings(_: Any, attribute: Any, value: Any) -> None:
    for item in value:
        if not isinstance(item, str):
            raise TypeError(f"{attribute.name}: every item must be a string, got {json_kind(item)}")


def _check_string_map(_: Any, attribute: Any, value: Any) -> None:
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise TypeError(
                f"{attribute.name}: must map strings to strings, got {json_kind(key)} to {json_kind(item)}"
            )


def _check_optional_string(_: Any, attribute: Any, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{attribute.name}: must be a string or None, got {json_kind(value)}")


def _check_bool(_: Any, attribute: Any, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{attribute.name}: must be True or False, got {json_kind(value)}")


def _check_seconds(_: Any, attribute: Any, value: Any) -> None:
    if value is None and attribute.name == "request_timeout":
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{attribute.name}: must be a number of seconds, got {json_kind(value)}")
    if not 0 < value < math.inf:  # NaN fails this too
        raise ValueError(f"{attribute.name}: must be a positive, finite number of seconds")


def _check_name(_: Any, attribute: Any, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"name: must be a non-empty string, got {json_kind(value)}")


def _check_transport(_: Any, attribute: Any, value: Any) -> None:
    if value not in ("stdio", "http", "sse"):
        raise ValueError("transport: must be 'stdio', 'http' or 'sse'")


def _check_source(_: Any, attribute: Any, value: Any) -> None:
    if not isinstance(value, ConfigSource):
        raise TypeError(f"source: must be a ConfigSource, got {json_kind(value)}")


@attrs.frozen(repr=False)
class ServerSpec:
    """One server of a configuration, normalized and with variables expanded.

    Specs are immutable and compare by value; ``repr`` masks the values of
    `env` and `headers`, and the query and user info of `url`, which often
    hold tokens.

    Attributes:
        name: The entry's key in the file (not the server's own name).
        transport: ``"stdio"`` for a child process; ``"http"`` or ``"sse"``
            for a remote server at `url`.
        command: The program to start (stdio).
        args: Its arguments.
        env: Variables for the child, on top of the inherited environment
            (``envFile`` values already merged, explicit ``env`` keys winning).
        inherit_env: Whether the child inherits this process's environment.
        cwd: The child's working directory, or ``None`` for ours.
        url: The server's endpoint (remote transports).
        headers: Extra HTTP headers (remote transports).
        enabled: ``False`` for an entry marked ``disabled``: it is loaded,
            listed, and never started.
        startup_timeout: Seconds the server has to start and finish its
            handshake before it counts as failed.
        request_timeout: Default per-request timeout in seconds, or ``None``.
        dpop: For a remote server's login, whether its tokens are bound
            with DPoP (RFC 9449): ``True`` always, ``False`` never, ``None``
            (the default) when the server asks for it.
        tools_allow: When not ``None``, only these tools (server-side names)
            are offered.
        tools_deny: Tools (server-side names) never offered.
        source: Where the entry came from.
        extra: Fields the loader did not know, kept as they were.
        target: Where the server is, given in code instead of a command or
            a URL: any `~trio_mcp.Target` (a test's
            `FakeServer.target() <trio_mcp.testing.FakeServer.target>`, or a
            server your code reaches in a way no file describes). The entry
            is then started, supervised and restarted through it like any
            other; `transport`, `command` and `url` are not used.
        written: The command and its arguments as written in the file,
            ``${...}`` references unexpanded (empty for an entry made in
            code): what messages, logs and errors show of the server, never
            the expanded values, which may be secrets. See ``command_line``.
    """

    name: str = attrs.field(validator=_check_name)
    transport: Transport = attrs.field(default="stdio", validator=_check_transport)
    command: str | None = attrs.field(default=None, validator=_check_optional_string)
    args: tuple[str, ...] = attrs.field(default=(), converter=_strings, validator=_check_strings)
    env: Mapping[str, str] = attrs.field(
        factory=dict, converter=_frozen_mapping, validator=_check_string_map, hash=False
    )
    inherit_env: bool = attrs.field(default=True, validator=_check_bool)
    cwd: str | None = attrs.field(default=None, validator=_check_optional_string)
    url: str | None = attrs.field(default=None, validator=_check_optional_string)
    headers: Mapping[str, str] = attrs.field(
        factory=dict, converter=_frozen_mapping, validator=_check_string_map, hash=False
    )
    enabled: bool = attrs.field(default=True, validator=_check_bool)
    startup_timeout: float = attrs.field(default=60.0, validator=_check_seconds)
    request_timeout: float | None = attrs.field(default=None, validator=_check_seconds)
    dpop: bool | None = attrs.field(
        default=None, validator=attrs.validators.optional(_check_bool), kw_only=True
    )
    tools_allow: frozenset[str] | None = attrs.field(
        default=None,
        converter=attrs.converters.optional(_names),
        validator=attrs.validators.optional(_check_strings),
    )
    tools_deny: frozenset[str] = attrs.field(default=frozenset(), converter=_names, validator=_check_strings)
    source: ConfigSource = attrs.field(factory=ConfigSource, validator=_check_source)
    extra: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping, eq=False)
    written: tuple[str, ...] = attrs.field(default=(), converter=_strings, validator=_check_strings, eq=False)
    # A trio_mcp.Target, checked where the entry becomes a target: this
    # model imports nothing of the layers above it.
    target: object | None = attrs.field(default=None, eq=False)

    @property
    def command_line(self) -> tuple[str, ...]:
        """The command line to show: `written` when the entry came from a file, else the command and args."""
        if self.written:
            return self.written
        return (self.command or "", *self.args)

    def __repr__(self) -> str:
        parts = [f"name={self.name!r}", f"transport={self.transport!r}"]
        if self.transport == "stdio":
            command, *args = self.command_line
            parts += [f"command={command!r}", f"args={tuple(args)!r}"]
            if self.env:
                parts.append(f"env={_masked(self.env)}")
            if self.cwd is not None:
                parts.append(f"cwd={self.cwd!r}")
        else:
            parts.append(f"url={shown_url(self.url)!r}")
            if self.headers:
                parts.append(f"headers={_masked(self.headers)}")
        if not self.enabled:
            parts.append("enabled=False")
        return f"ServerSpec({', '.join(parts)})"

    def allows_tool(self, name: str) -> bool:
        """Whether the tool with this server-side name is offered."""
        if name in self.tools_deny:
            return False
        return self.tools_allow is None or name in self.tools_allow


@attrs.frozen(eq=False)
class LoadedConfig:
    """Everything one load produced; a bad entry never hides the good ones.

    Attributes:
        servers: The usable entries by name, in file order (disabled ones
            included, with ``enabled=False``).
        invalid: The entries that could not be used, by name, each with the
            error that says why.
        warnings: Things that were tolerated (unknown fields, numbers in
            ``env``, a shadowed entry), one line each, never showing a value.
        sources: The files read, in order (empty for a dict or text).
    """

    servers: Mapping[str, ServerSpec] = attrs.field(factory=dict, converter=_frozen_mapping)
    invalid: Mapping[str, ConfigError] = attrs.field(factory=dict, converter=_frozen_mapping)
    warnings: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    sources: tuple[str, ...] = attrs.field(default=(), converter=_strings)
