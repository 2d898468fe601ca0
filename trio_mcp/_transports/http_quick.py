"""The quick exchange: the HTTP channel's simplest exchange, written and read without h11.

A speed trick of the channel's own client (`trio_mcp._transports._httpx_client`).
Nearly every exchange of the channel is the same: a ``POST`` of one JSON
message to its endpoint, with its whole body, answered by a small response
that says its ``Content-Length`` and arrives in one read. For that exchange,
h11 spends most of its time on rules that cannot apply: checking every
request header against its grammar one by one, and splitting, checking and
interpreting the response's head line by line through its state machine.

This module does the same for that exchange alone, as two pure functions:

* `QuickHead` writes a request's head: the request line and the headers
  that do not change are checked once; each request's own headers are
  checked in one pass. It gives `None` (h11 writes the request) for
  anything outside a plain form stricter than h11's: a header name that is
  not a token, a value that is not visible ASCII with inner spaces, a
  header that changes framing or the connection (``Transfer-Encoding``,
  ``Expect``, ``Upgrade``, ``Connection`` other than ``keep-alive`` ...).
  The bytes are the very bytes h11 writes for the same request.
* `read_whole` reads a response that came whole in one read: an
  ``HTTP/1.1`` status line (200 to 599, but not 204 or 304), plain header
  lines (as above), one ``Content-Length``, no ``Transfer-Encoding``, no
  ``Connection`` other than ``keep-alive``, and exactly that many bytes of
  body, nothing after it. Anything else, a head or body still coming, a
  byte past the body, a line h11 might read otherwise, gives `None`: h11
  reads the response (the pool tells it of the request first), with every
  rule and every error as ever.

So every exchange it takes is one h11 would have read the same way, to the
same status, headers and body, leaving the connection fit for the next
request; the tests check it against h11 itself, on hostile input too.

Measured gain: see the HTTP transport's speed tricks in the design notes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["QuickHead", "QuickResponse", "read_whole"]

_TOKEN: Final = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
#: A header value in its plain form: visible ASCII, with spaces inside only.
_VALUE: Final = rb"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?"
_NAME_RE: Final = re.compile(_TOKEN)
_VALUE_RE: Final = re.compile(_VALUE)
#: A request's own header names, and values, one a line.
_NAMES: Final = re.compile(rb"(?:" + _TOKEN + rb"\n)*" + _TOKEN)
_VALUES: Final = re.compile(rb"(?:" + _VALUE + rb"\n)*" + _VALUE)
_STATUS: Final = re.compile(rb"HTTP/1\.1 ([2-5][0-9][0-9]) (" + _VALUE + rb")\r\n")
#: A response's header lines (optional whitespace around the value, as HTTP allows).
_THEIR_FIELDS: Final = re.compile(rb"(?:" + _TOKEN + rb":[ \t]*" + _VALUE + rb"[ \t]*\r\n)*")
_THEIR_FIELD: Final = re.compile(rb"(" + _TOKEN + rb"):[ \t]*(" + _VALUE + rb")[ \t]*\r\n")
#: Headers that change how a message is framed or what becomes of the
#: connection: a request carrying one of its own goes through h11.
_FRAMING: Final = frozenset(
    {"connection", "content-length", "expect", "host", "te", "trailer", "transfer-encoding", "upgrade"}
)


class QuickHead:
    """The heads of requests to one target, written without h11 when they are plain.

    Args:
        method: The method (``POST``).
        target: The request target (the URL's path and query, as sent).
        base: The headers every request carries, in order: ``Host`` first,
            then the client's and the user's (``Connection: keep-alive``
            allowed, no other framing header).
    """

    __slots__ = ("_start", "usable")

    def __init__(self, method: str, target: bytes, base: Sequence[tuple[bytes, bytes]]) -> None:
        #: Whether the fixed part is plain: if not, `head` always gives `None`.
        self.usable = (
            _NAME_RE.fullmatch(method.encode("ascii", "replace")) is not None
            and re.fullmatch(rb"[\x21-\x7e]+", target) is not None
            and bool(base)
            and base[0][0].lower() == b"host"
            and all(_plain(name, value, first=index == 0) for index, (name, value) in enumerate(base))
        )
        lines = [b"%s %s HTTP/1.1\r\n" % (method.encode("ascii", "replace"), target)]
        lines += [b"%s: %s\r\n" % (name, value) for name, value in base]
        self._start = b"".join(lines)

    def head(self, protocol: Mapping[str, str], length: int) -> bytes | None:
        """The head of a request with ``protocol``'s headers and a body of ``length`` bytes.

        `None` when a header of ``protocol`` is not plain (h11 then writes,
        and refuses, as ever).

        Raises:
            UnicodeEncodeError: A header that is not ASCII (as httpx2 refuses it).
        """
        if not self.usable:
            return None
        if protocol:
            # Names and values each checked in one pass, one a line: as many
            # line breaks as separators means none came from a name or value.
            names = "\n".join(protocol)
            values = "\n".join(protocol.values())
            breaks = len(protocol) - 1
            if (
                names.count("\n") != breaks
                or values.count("\n") != breaks
                or _NAMES.fullmatch(names.encode("ascii")) is None
                or _VALUES.fullmatch(values.encode("ascii")) is None
                or not _FRAMING.isdisjoint(names.lower().split("\n"))
            ):
                return None
        fields = "".join([f"{name}: {value}\r\n" for name, value in protocol.items()])
        return b"%s%sContent-Length: %d\r\n\r\n" % (self._start, fields.encode("ascii"), length)


def _plain(name: bytes, value: bytes, *, first: bool) -> bool:
    if _NAME_RE.fullmatch(name) is None or _VALUE_RE.fullmatch(value) is None:
        return False
    lower = name.lower().decode("ascii")
    if lower == "host":
        return first
    if lower == "connection":
        return value.lower() == b"keep-alive"
    return lower not in _FRAMING


class QuickResponse:
    """A response `read_whole` read: its status, reason, headers (as sent) and whole body."""

    __slots__ = ("body", "headers", "reason", "status_code")

    def __init__(
        self, status_code: int, reason: bytes, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> None:
        self.status_code = status_code
        self.reason = reason
        self.headers = headers
        self.body = body


def read_whole(data: bytes) -> QuickResponse | None:
    """``data``, the first bytes read after a request, as one whole plain response; else `None` (h11 reads it)."""
    status = _STATUS.match(data)
    if status is None:
        return None
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    start, end = status.end(), end + 2
    if start > end or _THEIR_FIELDS.fullmatch(data, start, end) is None:
        return None
    headers: list[tuple[bytes, bytes]] = _THEIR_FIELD.findall(data, start, end)
    length = -1
    for name, value in headers:
        lower = name.lower()
        if lower == b"content-length":
            if length >= 0 or not value.isdigit():
                return None
            length = int(value)
        elif lower == b"transfer-encoding" or (lower == b"connection" and value.lower() != b"keep-alive"):
            return None
    code = int(status[1])
    body_start = end + 2
    if length < 0 or len(data) - body_start != length or code in (204, 304):
        return None
    return QuickResponse(code, status[2], headers, data[body_start:])
