"""The httpx2 side of the HTTP channel: exchanges, reading bodies, naming network errors, redirects.

Helpers of `trio_mcp._transports.http` that touch httpx2 and little of MCP:
one exchange following same-origin redirects, its failures typed
(`exchange`), bounded reads of a body by cancellation (`consume`,
`read_some`, `read_body`), an event stream fed to its parser (`pump`), the words
for a network error (`network_error`), the ``Location`` httpx2 may refuse
before the channel sees it (`note_location`, `location_of`), retiring a
connection that is out of step with its requests (`retire_connection`), and
URLs as messages show them (`display_url`).
"""

from __future__ import annotations

import contextlib
import socket
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpx2
import trio

from .._core.redirects import Follow, NotFollowed, follow
from .._errors import ConnectionFailed, HTTPError, MCPError, MessageTooLarge

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping

    from .._core.sse import EventParser, Item
    from ._httpx_client import DirectSend

__all__ = [
    "LOCATION_KEY",
    "consume",
    "display_url",
    "exchange",
    "location_of",
    "lower_headers",
    "network_error",
    "note_location",
    "pump",
    "read_body",
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


@asynccontextmanager
async def exchange(
    client: httpx2.AsyncClient,
    method: str,
    url: str,
    headers: httpx2.Headers | list[tuple[str, str]],
    content: bytes | None = None,
    *,
    auth: Any,
    request_timeout: Any,
    name: str,
    direct: tuple[DirectSend, Mapping[str, str]] | None = None,
) -> AsyncIterator[httpx2.Response]:
    """One HTTP exchange, streaming, following redirects to the same origin (`trio_mcp._core.redirects`).

    Yields the response that is no followed redirect (the caller's core
    reads it); closes it after. No response is a `ConnectionFailed`; a
    redirect that cannot be followed, or an exception of the user's
    ``auth``, is an `HTTPError` (``name``: the server, for messages).
    ``direct``: the channel's `DirectSend` and the request's protocol
    headers, for a request it may send itself (``headers`` are the user's
    and those, for the client).
    """
    hops = 0
    while True:
        try:
            if direct is not None and content is not None and direct[0].ready(url):
                response = await direct[0].send(method, direct[1], content)
            else:
                request = client.build_request(
                    method, url, headers=headers, content=content, timeout=request_timeout
                )
                response = await client.send(request, stream=True, auth=auth, follow_redirects=False)
        except httpx2.HTTPError as exc:
            location = location_of(exc)
            if location is not None:
                raise HTTPError(
                    f"{name} redirected {method} to a Location that is not a usable URL: {location!r} ({exc})",
                    url=display_url(url),
                ) from exc
            raise ConnectionFailed(
                f"{method} {display_url(url)} failed: {network_error(exc)}", url=display_url(url)
            ) from exc
        except MCPError:
            # Already one of ours (trio_mcp.auth's flows raise typed errors): as it is.
            raise
        except Exception as exc:
            # The user's httpx2.Auth (or transport) raised: that request fails, with it as cause.
            raise HTTPError(
                f"{method} {display_url(url)} failed: {type(exc).__name__}: {exc}", url=display_url(url)
            ) from exc
        step = follow(url, method, response.status_code, response.headers.get("location"), hops)
        if isinstance(step, Follow):
            await response.aclose()
            url, hops = step.url, step.hops
            continue
        if isinstance(step, NotFollowed) and step.unusable:
            await response.aclose()
            raise HTTPError(
                f"{name} redirected {method}, but {step.reason}",
                url=display_url(url),
                status=response.status_code,
                headers=lower_headers(response.headers),
            )
        # Not a redirect, or one not followed: the core reads it as the answer.
        try:
            yield response
        finally:
            await response.aclose()
        return


async def read_body(response: httpx2.Response, limit: int, what: str, name: str, url: str) -> bytes:
    """A whole JSON body of at most ``limit`` bytes (``what`` it is, from server ``name``).

    Raises:
        MessageTooLarge: Declared or found longer than ``limit``: not read further.
        ConnectionFailed: The body was cut (with the response's status).
    """
    length = response.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise MessageTooLarge(
            f"{what} is {length} bytes, over the limit of {limit} bytes (max_message_bytes)",
            size=int(length),
            limit=limit,
        )
    chunks: list[bytes] = []
    size = 0

    def take(chunk: bytes) -> bool:
        nonlocal size
        size += len(chunk)
        if size > limit:
            raise MessageTooLarge(
                f"{what} is over the limit of {limit} bytes (max_message_bytes)", size=size, limit=limit
            )
        chunks.append(chunk)
        return False

    _, cause = await consume(response, take)
    if cause is not None:
        raise ConnectionFailed(
            f"{what} from {name} was cut: {network_error(cause)}", url=url, status=response.status_code
        ) from cause
    return b"".join(chunks)


async def pump(
    response: httpx2.Response, parser: EventParser, on_item: Callable[[Item], bool]
) -> tuple[bool, Exception | None]:
    """Feed a stream's items to ``on_item`` until it says done (`True`) or the stream ends (`False`, and why)."""

    def take(chunk: bytes) -> bool:
        return any(on_item(item) for item in parser.feed(chunk))

    done, cause = await consume(response, take)
    if not done:
        for item in parser.eof():
            on_item(item)
    return done, cause
