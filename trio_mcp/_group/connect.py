"""Where one entry of a configuration becomes a connected client.

`open_server` is the one place that knows how each transport of a
`~trio_mcp._config.ServerSpec` is opened; the server group and the command
line both go through it.
"""

from __future__ import annotations

import math
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Unpack

import trio

from .._config import ConfigError
from .._errors import NotSupported
from .._open import open_http_client, open_stdio_client
from .._options import ClientOptions, ConnectionOptions, fields_of
from .._session import RequestTimeout

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from .._client import Client
    from .._config import ServerSpec
    from .._options import StdioClientKwargs

__all__ = ["SPEC_OPTIONS", "connect", "open_server", "startup_timeout", "stdio_arguments"]

#: The options a spec sets itself, which the caller of a group cannot give.
SPEC_OPTIONS = frozenset({"env", "inherit_env", "cwd"})


def stdio_arguments(spec: ServerSpec) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    """The command, arguments and options of `open_stdio_client` for a stdio ``spec``.

    ``open_stdio_client(command, args, **options)`` then starts the server
    the entry describes: its ``env`` (on top of the inherited environment
    unless ``inherit_env`` is false), its ``cwd``, and its
    ``request_timeout`` when it sets one. ``startup_timeout`` is not an
    option of the opener: `open_server` applies it.

    Raises:
        NotSupported: The entry names a remote server (``transport`` is not
            ``"stdio"``).
        ConfigError: The entry has no command.
    """
    if spec.transport != "stdio":
        raise _remote_not_supported(spec)
    if not spec.command:
        raise ConfigError(f"server {spec.name!r} has no command", server=spec.name, field="command")
    options: dict[str, Any] = {"inherit_env": spec.inherit_env}
    if spec.written:
        # Messages name the server by its command as written, never expanded.
        options["shown_as"] = spec.written
    if spec.env:
        options["env"] = dict(spec.env)
    if spec.cwd is not None:
        options["cwd"] = spec.cwd
    if spec.request_timeout is not None:
        options["request_timeout"] = spec.request_timeout
    return spec.command, spec.args, options


def _remote_not_supported(spec: ServerSpec) -> NotSupported:
    from .._config.spec import shown_url

    return NotSupported(
        f"server {spec.name!r} is a remote server ({spec.transport} at {shown_url(spec.url)!r}), "
        "which has no command line: connect to it with open_server() or open_http_client()",
        method=spec.transport,
    )


@asynccontextmanager
async def open_server(spec: ServerSpec, **options: Unpack[StdioClientKwargs]) -> AsyncIterator[Client]:
    """Start the server one configuration entry describes, and connect to it.

    ::

        async with trio_mcp.open_server(config.servers["github"]) as client:
            print(await client.list_tools())

    The entry's ``env``, ``cwd`` and ``inherit_env`` go to the process, its
    ``request_timeout`` (when set) to the connection, and the whole start,
    handshake included, must fit in its ``startup_timeout``. The block owns
    the server, as with `open_stdio_client`. An entry with a ``url`` is
    reached with `open_http_client` instead (the ``http`` extra), sending
    the entry's ``headers`` and, unless they hold an ``Authorization``
    header, the user's kept login (``trio-mcp login``, see :doc:`auth`);
    the process options do not apply to it.

    Args:
        spec: The entry.
        **options: Options of `open_stdio_client`, except those the entry
            sets (``env``, ``inherit_env``, ``cwd``); an entry's own
            ``request_timeout`` wins over the one given here.

    Raises:
        RequestTimeout: The server did not finish starting within its
            ``startup_timeout``.
        SpawnFailed, ServerGone, VersionMismatch: As `open_stdio_client`.
        HTTPError: As `open_http_client`, for a remote entry (``url``).
        TypeError: ``env``, ``inherit_env`` or ``cwd`` was given, or an
            unknown option.
    """
    given = sorted(SPEC_OPTIONS & set(options))
    if given:
        raise TypeError(f"open_server() got {given[0]!r}, which the server's entry sets")
    if not spec.enabled:
        raise ConfigError(f"server {spec.name!r} is disabled", server=spec.name, field="disabled")
    started = False
    with trio.CancelScope(deadline=trio.current_time() + spec.startup_timeout) as scope:
        async with connect(spec, dict(options)) as client:
            # The budget covers the start only; the block is the caller's.
            scope.deadline = math.inf
            started = True
            yield client
    if scope.cancelled_caught and not started:
        raise startup_timeout(spec)


def connect(spec: ServerSpec, options: dict[str, Any]) -> AbstractAsyncContextManager[Client]:
    """The opener of one entry: the one place that knows how each transport is opened.

    The entry's own settings win over ``options``. Its ``startup_timeout``
    is the caller's to apply (as `open_server` and the group do).

    A remote entry (``http`` or ``sse``) goes to `open_http_client` with its
    ``url`` and ``headers``; the options that only a child process has
    (``on_stderr``, ``kill_grace``...) are left out for it. An ``sse`` entry
    takes the same path: the opener falls back to the HTTP+SSE transport of
    2024-11-05 when the server refuses the newer ones.

    Raises:
        ConfigError: A stdio entry without a command, or a remote one
            without a URL.
    """
    if spec.transport != "stdio":
        if not spec.url:
            raise ConfigError(f"server {spec.name!r} has no url", server=spec.name, field="url")
        remote = {name: value for name, value in options.items() if name in _REMOTE_OPTIONS}
        if spec.request_timeout is not None:
            remote["request_timeout"] = spec.request_timeout
        from ..auth._storage import stored_login

        # The user's kept login (trio-mcp login), unless the entry sends its own Authorization.
        auth = stored_login(spec.url, spec.headers)
        return open_http_client(spec.url, headers=dict(spec.headers), auth=auth, **remote)
    command, args, own = stdio_arguments(spec)
    return open_stdio_client(command, args, **{**options, **own})


#: The options a remote entry's connection takes (no process options).
_REMOTE_OPTIONS: frozenset[str] = fields_of(ConnectionOptions) | fields_of(ClientOptions)


def startup_timeout(spec: ServerSpec) -> RequestTimeout:
    """The error of a server that did not start within its ``startup_timeout``."""
    return RequestTimeout(
        f"server {spec.name!r} did not start within {spec.startup_timeout:g} s (its startup_timeout)",
        method="initialize",
        timeout=spec.startup_timeout,
        server=spec.name,
    )
