"""Where one entry of a configuration becomes a connected client.

The entry makes its target (`trio_mcp._targets.spec_target`, the one place
that picks a transport), and the client is opened through the one way in,
`trio_mcp.open_client`; the server group and the command line both come
through here.
"""

from __future__ import annotations

import math
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

import attrs
import trio

from .._errors import ConfigError
from .._open import open_client
from .._options import ClientOptions
from .._session import RequestTimeout
from .._targets import HTTPTarget, ProcessTarget, spec_target

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from .._client import Client
    from .._config import ServerSpec

__all__ = ["connect", "open_server", "open_spec", "startup_timeout"]


@asynccontextmanager
async def open_server(spec: ServerSpec, options: ClientOptions | None = None) -> AsyncIterator[Client]:
    """Start the server one configuration entry describes, and connect to it.

    ::

        async with trio_mcp.open_server(config.servers["github"]) as client:
            print(await client.list_tools())

    The entry makes the target (its command, ``args``, ``env``, ``cwd`` and
    ``inherit_env``; or its ``url`` and ``headers``, with, unless they hold
    an ``Authorization`` header, the user's kept login: ``trio-mcp login``,
    see :doc:`auth`), its ``request_timeout`` (when set) wins over the one
    of ``options``, and the whole start, handshake included, must fit in
    its ``startup_timeout``. The block owns the connection, as with
    `open_client`.

    Args:
        spec: The entry.
        options: The client's options (`ClientOptions`).

    Raises:
        RequestTimeout: The server did not finish starting within its
            ``startup_timeout``.
        ConfigError: The entry is disabled, or has no command (no URL).
        SpawnFailed, ServerGone, VersionMismatch, HTTPError: As `open_client`.
    """
    async with open_spec(spec, options) as client:
        yield client


@asynccontextmanager
async def open_spec(
    spec: ServerSpec, options: ClientOptions | None, *, on_stderr: Callable[[str], object] | None = None
) -> AsyncIterator[Client]:
    """`open_server`, with the server's stderr lines to ``on_stderr`` (for the command line)."""
    if not spec.enabled:
        raise ConfigError(f"server {spec.name!r} is disabled", server=spec.name, field="disabled")
    started = False
    with trio.CancelScope(deadline=trio.current_time() + spec.startup_timeout) as scope:
        async with connect(spec, options, on_stderr=on_stderr) as client:
            # The budget covers the start only; the block is the caller's.
            scope.deadline = math.inf
            started = True
            yield client
    if scope.cancelled_caught and not started:
        raise startup_timeout(spec)


def connect(
    spec: ServerSpec,
    options: ClientOptions | None,
    *,
    on_stderr: Callable[[str], object] | None = None,
    kill_grace: float | None = None,
) -> AbstractAsyncContextManager[Client]:
    """The opener of one entry: `open_client` over the entry's target.

    The entry's ``request_timeout`` wins over the one of ``options``; its
    ``startup_timeout`` is the caller's to apply (as `open_server` and the
    group do).

    Raises:
        ConfigError: A stdio entry without a command, or a remote one
            without a URL.
        TypeError, ValueError: A value of the entry the target refuses.
        ImportError: A remote entry, and the ``http`` extra is not
            installed.
    """
    options = options if options is not None else ClientOptions()
    if spec.request_timeout is not None:
        options = attrs.evolve(options, request_timeout=spec.request_timeout)
    target = spec_target(spec)
    if isinstance(target, ProcessTarget):
        if on_stderr is not None:
            target = attrs.evolve(target, on_stderr=on_stderr)
        if kill_grace is not None:
            target = attrs.evolve(target, kill_grace=kill_grace)
    if isinstance(target, HTTPTarget) and target.auth is None:
        try:
            from ..auth._storage import stored_login
        except ImportError as exc:
            raise ImportError(
                "the http extra is not installed: pip install 'trio-mcp[http]'",
                name=exc.name,
            ) from exc

        # The user's kept login (trio-mcp login), unless the entry sends its own Authorization.
        target = attrs.evolve(target, auth=stored_login(target.url, spec.headers, dpop=spec.dpop))
    return open_client(target, options=options)


def startup_timeout(spec: ServerSpec) -> RequestTimeout:
    """The error of a server that did not start within its ``startup_timeout``."""
    return RequestTimeout(
        f"server {spec.name!r} did not start within {spec.startup_timeout:g} s (its startup_timeout)",
        method="initialize",
        timeout=spec.startup_timeout,
        server=spec.name,
    )
