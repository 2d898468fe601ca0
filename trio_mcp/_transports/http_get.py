"""One bounded HTTP GET, and the client that makes it: the HTTP stack of the server-card reader.

Everything `trio_mcp.server_cards` asks of HTTP goes through here: one GET,
no redirect followed (the caller decides, by the rules of its pure core), a
body read up to a bound and never past it, a network failure as a
`ConnectionFailed`. Nothing of the documents' meaning is known here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import httpx2

from .._errors import ConnectionFailed, ServerCardError
from ._httpx_client import make_client
from .http_io import consume, display_url, network_error

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Got", "get_bounded", "make_get_client"]


@attrs.frozen
class Got:
    """What one GET gave.

    Attributes:
        url: The URL asked for.
        status: The response's status.
        content_type: Its ``Content-Type``, or `None`.
        location: Its ``Location``, or `None`.
        body: Its body, at most ``max_bytes`` (empty when `too_large`).
        too_large: Whether the body was longer than ``max_bytes`` (it was
            not read past that).
    """

    url: str
    status: int
    content_type: str | None
    location: str | None
    body: bytes = attrs.field(repr=False)
    too_large: bool = False


def make_get_client(*, trust_env: bool) -> httpx2.AsyncClient:
    """The client made when the caller gives none (the HTTP channel's, redirects not followed)."""
    return make_client(trust_env=trust_env)


async def get_bounded(
    client: httpx2.AsyncClient,
    url: str,
    *,
    accept: str,
    max_bytes: int,
    headers: Mapping[str, str] | None = None,
) -> Got:
    """GET ``url`` with ``Accept: accept``; read at most ``max_bytes`` of the body.

    A redirect is returned as it came (its ``Location`` in `Got.location`),
    never followed. A body longer than ``max_bytes`` (by its
    ``Content-Length`` or as it streams) is dropped at the bound and
    reported by `Got.too_large`.

    Raises:
        ConnectionFailed: No response, or its body broke off.
        ServerCardError: ``"invalid"``: httpx2 cannot make a request of the URL.
    """
    request_headers = {**(headers or {}), "Accept": accept}
    try:
        async with client.stream("GET", url, headers=request_headers, follow_redirects=False) as response:
            status = response.status_code
            content_type = response.headers.get("content-type")
            location = response.headers.get("location")
            declared = response.headers.get("content-length")
            if declared is not None and declared.strip().isdigit() and int(declared) > max_bytes:
                return Got(url, status, content_type, location, b"", too_large=True)
            chunks: list[bytes] = []
            size = 0

            def take(chunk: bytes) -> bool:
                nonlocal size
                size += len(chunk)
                if size > max_bytes:
                    return True
                chunks.append(chunk)
                return False

            over, cause = await consume(response, take)
            if over:
                return Got(url, status, content_type, location, b"", too_large=True)
            if cause is not None:
                raise ConnectionFailed(
                    f"the body from {display_url(url)} broke off: {network_error(cause)}",
                    url=display_url(url),
                    status=status,
                ) from cause
            return Got(url, status, content_type, location, b"".join(chunks))
    except httpx2.InvalidURL as exc:
        raise ServerCardError(
            f"the URL {display_url(url)} cannot be requested ({exc})", reason="invalid", url=display_url(url)
        ) from None
    except httpx2.HTTPError as exc:
        raise ConnectionFailed(
            f"GET {display_url(url)} failed: {network_error(exc)}", url=display_url(url)
        ) from exc
