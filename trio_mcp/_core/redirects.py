"""Which redirects an MCP client follows: the same origin only, without I/O.

One rule for every HTTP request the package makes itself (the Streamable
HTTP channel's, a login's metadata and token requests): `follow` reads a
response's status and ``Location`` and says where to send the request again
(`Follow`), or why not (`NotFollowed`), or that the response is no redirect
(`None`). The caller sends and reads; this module only decides.

* 307 and 308 are followed for every method (the method and the body stay
  the same); 301, 302 and 303 only for ``GET`` and ``HEAD`` (a client would
  turn any other request into a ``GET`` without its body).
* Only to the same origin (scheme, host and port): headers such as
  ``Authorization`` or ``Mcp-Session-Id`` never go to another server, and
  ``https`` never falls back to ``http``.
* At most `MAX_REDIRECTS` in a row.
* A ``Location`` that is no usable http(s) URL is never followed, and says so.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

import attrs

from .http_wire import BadLocation, redirect_target, same_origin

__all__ = ["MAX_REDIRECTS", "Follow", "NotFollowed", "follow"]

#: How many redirects in a row are followed for one request.
MAX_REDIRECTS: Final = 5
#: Statuses that redirect only a ``GET`` (or ``HEAD``) as it is.
_GET_ONLY: Final = frozenset({301, 302, 303})
#: Statuses that redirect any request as it is: same method, same body.
_ANY_METHOD: Final = frozenset({307, 308})


@attrs.frozen
class Follow:
    """Send the request again, the same method and body, to ``url``."""

    url: str
    """The absolute URL to send it to."""
    hops: int
    """How many redirects this request has followed, this one included."""


@attrs.frozen
class NotFollowed:
    """A redirect that is not followed: the response stands as the answer, or fails the request."""

    reason: str
    """Why, for messages (the target's origin at most: never its path or query)."""
    unusable: bool = False
    """Whether the ``Location`` is no usable http(s) URL at all (else: another origin, a method
    that a 301, 302 or 303 would change, or too many redirects)."""


def follow(
    url: str, method: str, status: int, location: str | None, hops: int, *, limit: int = MAX_REDIRECTS
) -> Follow | NotFollowed | None:
    """Whether the response to ``method url`` (``status``, ``Location``) is a redirect to follow.

    Args:
        url: The URL the request went to.
        method: Its method (upper case).
        status: The response's status.
        location: Its ``Location`` header, if any.
        hops: How many redirects the request followed before this one.
        limit: How many redirects in a row are followed.

    Returns:
        `None` when the response is no redirect (not a 301, 302, 303, 307 or
        308 with a ``Location``), else `Follow` or `NotFollowed`.
    """
    if location is None or (status not in _ANY_METHOD and status not in _GET_ONLY):
        return None
    if status in _GET_ONLY and method not in ("GET", "HEAD"):
        return NotFollowed(f"a {status} redirect would turn the {method} into a GET without its body")
    try:
        target = redirect_target(url, location)
    except BadLocation as exc:
        return NotFollowed(f"the Location is not a usable URL: {exc}", unusable=True)
    if not same_origin(url, target):
        return NotFollowed(
            f"the Location is on another origin ({_origin(target)}); only the same origin is followed"
        )
    if hops >= limit:
        return NotFollowed(f"more than {limit} redirects in a row")
    return Follow(target, hops + 1)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
