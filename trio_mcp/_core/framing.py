"""Newline framing of a byte stream, without I/O.

MCP's stdio transport sends one JSON-RPC message per line. `LineFramer` turns
arbitrary chunks of bytes into lines:

* It splits on LF (``0x0A``) only. ``str.splitlines`` would also split on
  U+2028, U+2029 and U+0085, which may sit unescaped inside a JSON string.
* It is linear in the size of the input whatever the chunking: each byte is
  searched for a newline once, and a line held across chunks is joined once.
* It never holds more than ``max_line`` bytes. A longer line is discarded as it
  streams in; only a bounded head and tail of it are kept, so that the caller
  can try to recover the id of the request it answered.
* `LineFramer.eof` returns a final line that had no newline.

Normalising each line (a trailing CR, a UTF-8 byte order mark, blank lines) is
the job of `clean_line`, so that the framer itself stays a pure splitter.
"""

from __future__ import annotations

from typing import cast

import attrs

__all__ = ["KEEP", "LineFramer", "Oversized", "clean_line"]

#: How many bytes of the start and of the end of a discarded line are kept.
KEEP = 4096

_BOM = b"\xef\xbb\xbf"
_SPACE = (b" ", b"\t", b"\r")


@attrs.frozen
class Oversized:
    """A line longer than the framer's limit, discarded while it streamed in.

    Attributes:
        size: The full length of the line in bytes (without its newline).
        head: Its first `KEEP` bytes.
        tail: Its last `KEEP` bytes (they may overlap ``head``).
        limit: The framer's ``max_line``.
    """

    size: int
    head: bytes
    tail: bytes
    limit: int


class LineFramer:
    """Split a byte stream into lines, with a bound on memory.

    Args:
        max_line: The longest line, in bytes, that is returned whole. Longer
            lines come back as `Oversized` records.
    """

    __slots__ = ("_head", "_max_line", "_parts", "_size", "_tail")

    def __init__(self, max_line: int) -> None:
        if max_line < 1:
            raise ValueError("max_line must be at least 1")
        self._max_line = max_line
        self._parts: list[bytes] = []
        self._size = 0
        # Set while discarding an oversized line: its head and current tail.
        self._head: bytes | None = None
        self._tail = bytearray()

    @property
    def buffered(self) -> int:
        """How many bytes of an unfinished line are held.

        Never more than ``max(max_line, 3 * KEEP)``.
        """
        if self._head is None:
            return self._size
        return len(self._head) + len(self._tail)

    @property
    def max_line(self) -> int:
        """The limit given to the constructor."""
        return self._max_line

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        """Add bytes and return every line they complete, in order.

        Lines are returned without their LF. An empty ``data`` is allowed and
        returns nothing (it does *not* mean end of stream; see `eof`).
        """
        end = len(data)
        max_line = self._max_line
        if self._size == 0 and end <= max_line:
            # Nothing held, and no line of this chunk can be too long: split
            # it at once (the common case, and the cheapest).
            lines = data.split(b"\n")
            rest = lines.pop()
            if rest:
                self._parts.append(rest)
                self._size = len(rest)
            return cast("list[bytes | Oversized]", lines)
        out: list[bytes | Oversized] = []
        start = 0
        while start < end:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._hold(data, start, end)
                break
            if self._size == 0 and nl - start <= max_line:
                # A whole line inside this chunk, nothing held: no bookkeeping.
                out.append(data[start:nl])
            else:
                self._hold(data, start, nl)
                out.append(self._take())
            start = nl + 1
        return out

    def eof(self) -> list[bytes | Oversized]:
        """Signal the end of the stream: return the unterminated last line, if any."""
        if self._size == 0 and self._head is None:
            return []
        return [self._take()]

    def _hold(self, data: bytes, start: int, stop: int) -> None:
        n = stop - start
        if n == 0:
            return
        self._size += n
        if self._head is not None:
            self._keep(data, start, stop)
            return
        if self._size <= self._max_line:
            self._parts.append(data[start:stop] if (start or stop != len(data)) else data)
            return
        # The line just outgrew the limit: keep a head and a tail, drop the rest.
        held = b"".join(self._parts)
        self._parts.clear()
        self._head = b""
        self._tail = bytearray()
        self._keep(held, 0, len(held))
        self._keep(data, start, stop)

    def _keep(self, data: bytes, start: int, stop: int) -> None:
        """Add ``data[start:stop]`` of an oversized line to its head and tail."""
        head = self._head
        assert head is not None
        if len(head) < KEEP:
            self._head = head + data[start : min(stop, start + KEEP - len(head))]
        tail = self._tail
        tail += data[max(start, stop - KEEP) : stop]
        if len(tail) > 2 * KEEP:
            # Trimmed only now and then, so that tiny chunks stay cheap.
            del tail[:-KEEP]

    def _take(self) -> bytes | Oversized:
        size = self._size
        self._size = 0
        if self._head is not None:
            record = Oversized(
                size=size, head=self._head, tail=bytes(self._tail[-KEEP:]), limit=self._max_line
            )
            self._head = None
            self._tail = bytearray()
            return record
        parts = self._parts
        if not parts:
            return b""
        line = parts[0] if len(parts) == 1 else b"".join(parts)
        parts.clear()
        return line


def clean_line(line: bytes) -> bytes:
    """Normalise one framed line: drop a UTF-8 BOM and trailing CR/whitespace.

    Returns ``b""`` for a blank or whitespace-only line, which callers skip.
    A BOM is stripped from every line, not only the first: servers that
    re-open stdout (or wrap it in a new text writer) emit one per write.
    """
    if line[-1:] in _SPACE or line[:1] in _SPACE:
        line = line.strip(b" \t\r")
    while line.startswith(_BOM):
        line = line[3:].lstrip(b" \t\r")
    return line
