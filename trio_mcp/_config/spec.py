"""The normalized, immutable model of an MCP configuration file.

Every dialect people already write (Claude Desktop, Claude Code's
``.mcp.json``, Cursor, VS Code's ``servers``) is read into the same
`ServerSpec` per entry. The model is pure data: it imports no Trio and does
no I/O, so a server group, the command line and a test can all build specs
by hand as easily as from a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeAlias

import attrs

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
    return tuple(value)


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
        tools_allow: When not ``None``, only these tools (server-side names)
            are offered.
        tools_deny: Tools (server-side names) never offered.
        source: Where the entry came from.
        extra: Fields the loader did not know, kept as they were.
    """

    name: str
    transport: Transport = "stdio"
    command: str | None = None
    args: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping, hash=False)
    inherit_env: bool = True
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping, hash=False)
    enabled: bool = True
    startup_timeout: float = 60.0
    request_timeout: float | None = None
    tools_allow: frozenset[str] | None = attrs.field(
        default=None, converter=attrs.converters.optional(frozenset)
    )
    tools_deny: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
    source: ConfigSource = attrs.field(factory=ConfigSource)
    extra: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping, eq=False)

    def __repr__(self) -> str:
        parts = [f"name={self.name!r}", f"transport={self.transport!r}"]
        if self.transport == "stdio":
            parts += [f"command={self.command!r}", f"args={self.args!r}"]
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
