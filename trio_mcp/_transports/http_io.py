"""The httpx2 side of the HTTP channel: reading bodies, naming network errors, redirects.

Helpers of `trio_mcp._transports.http` that touch httpx2 and nothing of MCP:
bounded reads of a body by cancellation (`consume`, `read_some`), the words
for a network error (`network_error`), the ``Location`` httpx2 may refuse
before the channel sees it (`note_location`, `location_of`), retiring a
connection that is out of step with its requests (`retire_connection`), and
URLs as messages show them (`display_url`).
"""

from __future__ import annotations

import contextlib
import socket
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit, urlunsplit

import httpx2
import trio

from .._errors import MCPError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "LOCATION_KEY",
    "consume",
    "display_url",
    "location_of",
    "lower_headers",
    "network_error",
    "note_location",
    "read_some",
    "retire_connection",
]


def display_url(url: str) -> str:
    """A URL as messages show it: no user info, no query, no fragment (they may hold secrets)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def retire_connection(response: httpx2.Response) -> None:
    """Make sure the connection of ``response`` carries no further request.

    For a connection out of step with its requests (a server left a second
    response behind the first one): its socket is shut down, so that the
    pool finds it closed instead of reading that stale response as the
    answer to the next request.
    """
    stream = response.extensions.get("network_stream")
    get_extra_info = getattr(stream, "get_extra_info", None)
    sock = get_extra_info("socket") if get_extra_info is not None else None
    shutdown = getattr(sock, "shutdown", None)
    if shutdown is not None:
        with contextlib.suppress(OSError):
            shutdown(socket.SHUT_RDWR)


LOCATION_KEY: Final = "trio_mcp.location"


async def note_location(response: httpx2.Response) -> None:
    """Keep a redirect's ``Location`` with its request: httpx2 may refuse it before we see it."""
    location = response.headers.get("location")
    if location is not None and response.is_redirect:
        response.request.extensions[LOCATION_KEY] = location


def location_of(exc: httpx2.HTTPError) -> str | None:
    """The ``Location`` that httpx2 could not read, when that is what ``exc`` is about."""
    if not isinstance(exc, httpx2.RemoteProtocolError) or "location" not in str(exc).lower():
        return None
    try:
        location = exc.request.extensions.get(LOCATION_KEY)
    except RuntimeError:
        return None
    return location if isinstance(location, str) else None


def lower_headers(headers: httpx2.Headers) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


async def read_some(response: httpx2.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of a body (an error page, say); a broken body gives what came."""
    chunks: list[bytes] = []
    size = 0

    def take(chunk: bytes) -> bool:
        nonlocal size
        chunks.append(chunk)
        size += len(chunk)
        return size >= limit

    await consume(response, take)
    return b"".join(chunks)[:limit]


async def consume(response: httpx2.Response, take: Callable[[bytes], bool]) -> tuple[bool, Exception | None]:
    """Hand a body's chunks to ``take`` until it returns `True` (then `True`) or the body ends (`False`).

    Returns the network error that cut the body short, if one did; raises
    what ``take`` raises. Reading stops by cancellation rather than by
    leaving the loop: the body's chain of async generators then runs to its
    end, instead of being left to the garbage collector half-way.
    """
    done = False
    failure: MCPError | None = None
    cause: Exception | None = None
    with trio.CancelScope() as scope:
        try:
            async for chunk in response.aiter_bytes():
                if done or failure is not None:
                    continue
                try:
                    done = take(chunk)
                except MCPError as exc:
                    failure = exc
                if done or failure is not None:
                    scope.cancel()
        except httpx2.HTTPError as exc:
            cause = exc
    if failure is not None:
        raise failure
    return done, cause


def network_error(exc: BaseException | None) -> str:
    if exc is None:
        return "the stream ended"
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect ({text})"
    if isinstance(exc, httpx2.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    if isinstance(exc, httpx2.RemoteProtocolError):
        return f"the server broke the HTTP protocol ({text})"
    return f"{type(exc).__name__}: {text}"
