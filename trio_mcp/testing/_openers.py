"""The openers of `trio_mcp.testing`: a `FakeServer` as a target, and the real client or session connected to it.

`open_fake_client` and `open_fake_transport` open a `FakeTarget` through the
package's one way in (`trio_mcp.open_client`, `trio_mcp.open_session`), as
a process target is opened; each opening makes a `FakeChannel` that
connects the fake anew. What the fake's handlers raised is raised when the
block ends.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from .._open import keyword_options, open_client, open_session
from .._options import ClientOptions, SessionOptions
from ._connection import FakeTarget

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from .._client import Client
    from .._session import Session
    from ._server import FakeServer

__all__ = ["open_fake_client", "open_fake_transport"]


def raise_handler_errors(target: FakeTarget, exc: BaseException | None) -> None:
    errors = target.handler_errors()
    if not errors:
        return
    if exc is None:
        raise errors[0]
    for error in errors:
        exc.add_note(f"(a handler of the fake server raised {error!r})")


@keyword_options(SessionOptions)
@asynccontextmanager
async def open_fake_transport(
    server: FakeServer,
    *,
    options: SessionOptions | None = None,
    on_stderr: Callable[[str], object] | None = None,
    stderr_tail_bytes: int = 8 * 1024,
) -> AsyncIterator[Session]:
    """A `trio_mcp.Session` connected to ``server`` in memory; the ``async with`` block owns it.

    As `trio_mcp.open_session` over a real server, for code that takes a
    session. The session is the real one, over a
    `trio.testing.memory_stream_pair`: what it sends and reads goes through
    the same framing, reader and writer as over a pipe. Leaving the block
    disconnects the fake; then any exception a handler raised is raised.

    Args:
        server: The fake to connect to.
        options: The session's options (`trio_mcp.SessionOptions`).
        on_stderr: Called with each line the fake writes to stderr, as
            `trio_mcp.ProcessTarget.on_stderr`.
        stderr_tail_bytes: As `trio_mcp.ProcessTarget.stderr_tail_bytes`.

    Raises:
        TypeError, ValueError: A bad value; an option of `trio_mcp.SessionOptions`
            given as a keyword of its own, or ``options`` by position (the
            message says how to pass it).
    """
    target = FakeTarget(server, on_stderr=on_stderr, stderr_tail_bytes=stderr_tail_bytes)
    try:
        async with open_session(target, options=options) as session:
            yield session
    except BaseException as exc:
        raise_handler_errors(target, exc)
        raise
    raise_handler_errors(target, None)


@keyword_options(ClientOptions)
@asynccontextmanager
async def open_fake_client(
    server: FakeServer,
    *,
    options: ClientOptions | None = None,
    on_stderr: Callable[[str], object] | None = None,
    stderr_tail_bytes: int = 8 * 1024,
) -> AsyncIterator[Client]:
    """Connect a real `trio_mcp.Client` to ``server``; the ``async with`` owns the connection.

    ::

        async with open_fake_client(server, options=trio_mcp.ClientOptions(on_elicitation=answer)) as client:
            result = await client.call_tool("ask")

    The client negotiates the era with the fake, as with a real server, and
    hooks, timeouts, caching and notifications behave the same: the client,
    its session and the stream channel's reader and writer are the real
    ones, over in-memory streams. Leaving the block disconnects the fake
    (its handlers stop); then an exception raised by one of its handlers, if
    any, is raised.

    Args:
        server: The fake to connect to.
        options: The client's options (`trio_mcp.ClientOptions`).
        on_stderr: Called with each line the fake writes to stderr, as
            `trio_mcp.ProcessTarget.on_stderr`.
        stderr_tail_bytes: As `trio_mcp.ProcessTarget.stderr_tail_bytes`.

    Raises:
        RuntimeError: ``server`` already has a client.
        trio_mcp.VersionMismatch: ``protocol`` names a version of the other era.
        TypeError, ValueError: A bad value; an option of `trio_mcp.ClientOptions`
            given as a keyword of its own, or ``options`` by position (the
            message says how to pass it).
    """
    target = FakeTarget(server, on_stderr=on_stderr, stderr_tail_bytes=stderr_tail_bytes)
    try:
        async with open_client(target, options=options) as client:
            yield client
    except BaseException as exc:
        raise_handler_errors(target, exc)
        raise
    raise_handler_errors(target, None)
