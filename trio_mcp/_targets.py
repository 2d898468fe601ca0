"""Targets: where a server is, and nothing else.

A target names one MCP server and how to reach it, with explicit, typed,
documented parameters: a child process (`ProcessTarget`), a URL
(`HTTPTarget`), or a Trio byte stream you opened (`StreamTarget`). Every
opener takes one (`trio_mcp.open_client`, `trio_mcp.connect_client`,
`trio_mcp.open_session`, `trio_mcp.connect_session`), as an ``httpx2``
client takes a transport: one client, whatever carries it.

Targets are frozen values, checked as they are built: a bad parameter is a
`TypeError` or `ValueError` there, before anything starts. A target can be
opened many times (each time starts its own process, or its own HTTP
session), except a `StreamTarget`, whose stream can carry one connection.

An entry of a configuration file (`trio_mcp.ServerSpec`) makes its target
with `spec_target`: the one place that decides how a configured server is
reached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ._errors import ConfigError
from ._options import at_least, callable_or_none, command_line, environment, path_or_none, seconds
from ._public import publish

if TYPE_CHECKING:
    import os

    # Only named in annotations, which attrs never evaluates here: httpx2 is
    # an optional extra, imported when a URL is opened.
    import httpx2  # noqa: TC004
    import trio  # noqa: TC004

    from ._channel import Channel
    from ._config import ServerSpec

__all__ = ["HTTPTarget", "ProcessTarget", "StreamTarget", "Target", "make_channel", "spec_target"]


class Target:
    """Where a server is: the base class of `ProcessTarget`, `HTTPTarget` and `StreamTarget`.

    Every opener takes a target. A server that dies on the protocol probe
    (``server/discover``; see :doc:`eras`) is started once more, and sent
    ``initialize`` at once, when its target says it may be
    (`restart_after_probe_death`).
    """

    __slots__ = ()

    @property
    def restart_after_probe_death(self) -> bool:
        """Whether a server that died on the ``server/discover`` probe is started again.

        `False` here: only a child process can be started again.
        """
        return False

    def _make_channel(self, max_message_bytes: int) -> Channel:
        """A fresh channel to the server; for targets of the package's own layers (the fake server)."""
        raise TypeError(f"{type(self).__name__} is not a target the openers know")


def make_channel(target: Target, max_message_bytes: int) -> Channel:
    """The channel of a target that makes its own (`Target._make_channel`)."""
    return target._make_channel(max_message_bytes)


def _arguments(value: Sequence[str]) -> tuple[str, ...]:
    return command_line("", value)[1]


def _command(value: str | os.PathLike[str]) -> str:
    return command_line(value, ())[0]


def _headers(value: Mapping[str, str] | None) -> Mapping[str, str] | None:
    given: object = value
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise TypeError(f"headers must be a mapping of strings to strings, not {type(given).__name__}")
    headers: dict[object, object] = dict(given)
    for key, item in headers.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise TypeError(f"headers must be strings, not {key!r}: {type(item).__name__}")
    from types import MappingProxyType

    return MappingProxyType({str(key): str(item) for key, item in headers.items()})


def _shown_as(value: Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    given: object = value
    if isinstance(given, str | bytes) or not isinstance(given, Sequence):
        raise TypeError("shown_as must be a sequence of strings (a command line), or None")
    items = tuple(given)
    if not items or not all(isinstance(item, str) for item in items):
        raise TypeError("shown_as must be a non-empty sequence of strings (a command line), or None")
    return tuple(str(item) for item in items)


def _url(_: Any, __: Any, value: Any) -> None:
    from urllib.parse import urlsplit

    if not isinstance(value, str):
        raise TypeError(f"url must be a str, not {type(value).__name__}")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"an HTTPTarget needs an http:// or https:// URL, not {value!r}")


def _name_or_none(_: Any, __: Any, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"name must be a str or None, not {type(value).__name__}")


@attrs.frozen(repr=False)
class ProcessTarget(Target):
    """A server that runs as a child process, spoken to over its stdin and stdout.

    ::

        target = trio_mcp.ProcessTarget("npx", ["-y", "@modelcontextprotocol/server-everything"])
        async with trio_mcp.open_client(target) as client:
            ...

    Each opening starts a process of its own; leaving the opener's block
    closes it (stdin closed, then ``kill_grace``, then signals to its process
    group), bounded.

    Args:
        command: The program to run. It is executed directly, never through
            a shell, and looked up on ``PATH`` unless it contains a slash.
        args: Its arguments, each passed as one argument whatever it
            contains.
    """

    command: str = attrs.field(converter=_command)
    """The program to run (a path is turned into a string)."""
    args: tuple[str, ...] = attrs.field(default=(), converter=_arguments)
    """Its arguments."""
    env: dict[str, str] | None = attrs.field(default=None, converter=environment, kw_only=True)
    """Environment variables for the server, layered over the inherited
    environment (unless ``inherit_env`` is false)."""
    inherit_env: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool), kw_only=True)
    """`False` gives the server exactly ``env`` and nothing else."""
    cwd: str | None = attrs.field(default=None, converter=path_or_none, kw_only=True)
    """The server's working directory; by default, ours."""
    on_stderr: Callable[[str], object] | None = attrs.field(
        default=None, validator=callable_or_none("on_stderr"), kw_only=True
    )
    """Called with each line the server writes to stderr, decoded leniently,
    without its newline. stderr is always drained, so a chatty server never
    blocks. Default: the ``trio_mcp.server`` logger at DEBUG. Keep it quick:
    it runs in the draining task."""
    kill_grace: float = attrs.field(default=2.0, validator=seconds("kill_grace", zero=True), kw_only=True)
    """Seconds the server gets to exit after its stdin is closed, before its
    process group is terminated. Closing never takes longer than the caller's
    own deadline either: a close inside ``trio.move_on_after(1)`` is over in
    about a second."""
    stderr_tail_bytes: int = attrs.field(
        default=8 * 1024, validator=at_least("stderr_tail_bytes", 0), kw_only=True
    )
    """How much of the end of stderr `ServerGone` carries."""
    shown_as: tuple[str, ...] | None = attrs.field(default=None, converter=_shown_as, kw_only=True)
    """The command line that messages, logs and errors show instead of the
    real one, which may hold a secret (a configuration entry's command and
    arguments as written, before ``${VAR}`` expansion). Default: the real
    command line."""
    restart_after_probe_death: bool = attrs.field(
        default=True, validator=attrs.validators.instance_of(bool), kw_only=True
    )
    """Whether a server that dies on the ``server/discover`` probe is started
    once more and sent ``initialize`` straight away (an initialize-era server
    may exit on a method it does not know). `False` makes that death the
    opener's error."""

    def __repr__(self) -> str:
        shown = self.shown_as if self.shown_as is not None else (self.command, *self.args)
        return f"ProcessTarget({shown[0]!r}, {len(shown) - 1} args)"


def _httpx2(kind: str) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    """A validator: `None`, or an object of httpx2's ``kind`` (a `TypeError` names the old httpx line)."""

    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None:
            from ._http_objects import require_httpx2

            require_httpx2(value, attribute.name, kind)

    return check


@attrs.frozen(repr=False)
class HTTPTarget(Target):
    """A remote server, reached over Streamable HTTP (the ``http`` extra).

    ::

        target = trio_mcp.HTTPTarget("https://example.com/mcp", headers={"Authorization": "Bearer ..."})
        async with trio_mcp.open_client(target) as client:
            ...

    The era is chosen as on stdio: the ``server/discover`` probe first, then
    ``initialize`` for a server of the initialize era; a server that refuses
    ``initialize`` too is tried with the HTTP+SSE transport of 2024-11-05.
    See :doc:`http` for what each HTTP answer becomes. No read timeout
    applies: bound calls the Trio way, with `trio.fail_after` around them.

    Args:
        url: The server's MCP endpoint (``http://`` or ``https://``), used
            exactly as given.
    """

    url: str = attrs.field(validator=_url)
    """The server's MCP endpoint."""
    headers: Mapping[str, str] | None = attrs.field(default=None, converter=_headers, kw_only=True)
    """Headers sent with every request, e.g. ``{"Authorization": "Bearer ..."}``.
    The protocol's own headers cannot be replaced."""
    auth: httpx2.Auth | None = attrs.field(default=None, validator=_httpx2("Auth"), kw_only=True)
    """An `httpx2.Auth` for every request (GET and DELETE too): a token
    provider, an OAuth flow. An ``httpx.Auth`` of the old httpx line is a
    `TypeError` (see :ref:`httpx2-migration`)."""
    http_client: httpx2.AsyncClient | None = attrs.field(
        default=None, validator=_httpx2("AsyncClient"), kw_only=True
    )
    """An `httpx2.AsyncClient` of yours, for proxies, TLS settings and
    connection pools: used as it is and not closed (but one left with
    httpx2's default 5 s timeout gets no read timeout instead). Without one,
    the client made has timeouts of 10 s to connect, 30 s to write, none to
    read. An ``httpx.AsyncClient`` of the old httpx line is a `TypeError`
    (see :ref:`httpx2-migration`)."""
    trust_env: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool), kw_only=True)
    """Whether the environment's proxy settings (``HTTP_PROXY``,
    ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``), ``SSL_CERT_FILE`` and
    ``.netrc`` apply to the client made here (never to yours), as httpx2
    does. Loopback URLs go through ``HTTP_PROXY`` too unless ``NO_PROXY``
    covers them."""

    def __repr__(self) -> str:
        from ._config.spec import shown_url

        return f"HTTPTarget({shown_url(self.url)!r})"


@attrs.frozen(eq=False)
class StreamTarget(Target):
    """A server at the other end of a Trio byte stream you opened: one JSON-RPC message per line.

    A socket (`trio.open_tcp_stream`), an SSH channel, a pair of pipes
    (`trio.StapledStream`), or `trio.testing.memory_stream_pair` in a test.
    The connection owns the stream from then on and closes it as it ends, so
    a stream target can be opened once.

    Args:
        stream: The stream to the server.
    """

    stream: trio.abc.Stream
    """The stream to the server."""
    name: str | None = attrs.field(default=None, validator=_name_or_none, kw_only=True)
    """How messages name the server, as ``server 'NAME'`` (default: by the stream's type)."""


def spec_target(spec: ServerSpec) -> Target:
    """The target of one entry of a configuration: the one place that picks its transport.

    A ``stdio`` entry is a child process with the entry's ``command``,
    ``args``, ``env``, ``inherit_env`` and ``cwd``, shown as written in the
    file (before ``${VAR}`` expansion); an ``http`` or ``sse``
    entry is its ``url``, with its ``headers`` (an ``sse`` server is reached
    through the HTTP+SSE fallback of the same opener).

    An entry made in code with a ``target`` is that target.

    Raises:
        ConfigError: A stdio entry without a command, or a remote one
            without a URL.
        TypeError: The entry's ``target`` is not a `Target`.
    """
    if spec.target is not None:
        if not isinstance(spec.target, Target):
            raise TypeError(
                f"the target of server {spec.name!r} is not a Target but {type(spec.target).__name__}"
            )
        return spec.target
    if spec.transport != "stdio":
        if not spec.url:
            raise ConfigError(f"server {spec.name!r} has no url", server=spec.name, field="url")
        return HTTPTarget(spec.url, headers=dict(spec.headers))
    if not spec.command:
        raise ConfigError(f"server {spec.name!r} has no command", server=spec.name, field="command")
    return ProcessTarget(
        spec.command,
        spec.args,
        env=dict(spec.env) if spec.env else None,
        inherit_env=spec.inherit_env,
        cwd=spec.cwd,
        # Messages name the server by its command as written, never expanded.
        shown_as=spec.written or None,
    )


publish(globals())
