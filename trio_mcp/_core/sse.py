"""Incremental parsing of a ``text/event-stream`` (server-sent events), without I/O.

The Streamable HTTP transport of MCP answers requests with event streams.
`EventParser` turns arbitrary chunks of such a stream into events, following
the WHATWG HTML standard's "event stream interpretation", with the choices an
MCP client needs:

* Lines end with CRLF, LF or CR, in any chunking (a CR at the end of one chunk
  and an LF at the start of the next are one line end). One leading UTF-8 byte
  order mark is dropped.
* Comment lines (``: keepalive``) and blank lines never produce an event. An
  event whose data is empty is not dispatched either: MCP servers send such
  "priming" events only to set the last event id, which is recorded.
* ``id`` sets `EventParser.last_event_id` unless its value contains NUL;
  ``retry`` sets `EventParser.retry` only when its value is all ASCII digits.
* Each event is decoded as strict UTF-8: invalid bytes in its ``data``,
  ``event`` or ``id`` are reported as `BadEncoding`, never replaced.
* Memory is bounded: an event whose field lines add up to more than
  ``max_event`` bytes is reported as `EventTooLarge` as soon as it crosses the
  limit, and the rest of it is skipped as it streams in. The parser then
  carries on with the next event; a transport may give up on the stream
  instead.
* `EventParser.eof` reports a stream cut in the middle of an event as
  `Truncated` (the partial event is discarded).
* It is linear in the size of the input whatever the chunking: each byte is
  searched for a line end at most twice (once for CR, once for LF), and a line
  held across chunks is copied into one growing buffer, joined once.

Nothing here raises on what a server sends.
"""

from __future__ import annotations

from typing import Final

import attrs

__all__ = [
    "MAX_EVENT",
    "BadEncoding",
    "Event",
    "EventParser",
    "EventTooLarge",
    "Item",
    "Truncated",
]

#: The default limit on one event, in bytes (the field lines of one event).
MAX_EVENT: Final = 16 * 1024 * 1024

#: ``retry`` values longer than this many digits (leading zeros aside) are ignored.
_MAX_RETRY_DIGITS: Final = 18

_BOM: Final = b"\xef\xbb\xbf"
_CR: Final = 0x0D
_LF: Final = 0x0A
_COLON: Final = 0x3A
_SPACE: Final = 0x20


@attrs.frozen
class Event:
    """One dispatched event.

    Attributes:
        data: The event's data: its ``data`` lines joined with LF. Never empty.
        type: The event type (``event`` field), ``"message"`` when none was given.
        id: The last event id when the event was dispatched (``""`` when none).
        own_id: Whether the event set that id itself (an ``id`` line of its
            own), rather than carrying on the last one; not compared.
    """

    data: str
    type: str = "message"
    id: str = ""
    own_id: bool = attrs.field(default=False, eq=False)


@attrs.frozen
class EventTooLarge:
    """An event that outgrew the parser's limit; the rest of it is skipped.

    Attributes:
        limit: The parser's ``max_event``, in bytes.
        id: The last event id when the limit was crossed.
    """

    limit: int
    id: str


@attrs.frozen
class BadEncoding:
    """An event with bytes that are not UTF-8; it is not dispatched.

    Attributes:
        field: The first field found undecodable: ``"id"``, ``"event"`` or ``"data"``.
        id: The last event id (unchanged by an undecodable ``id``).
    """

    field: str
    id: str


@attrs.frozen
class Truncated:
    """The stream ended in the middle of an event (or of a line); it was discarded.

    Attributes:
        id: The last event id when the stream ended.
    """

    id: str


#: What `EventParser.feed` and `EventParser.eof` return.
Item = Event | EventTooLarge | BadEncoding | Truncated


class EventParser:
    """Parse an event stream fed in chunks, with a bound on memory.

    One parser serves one event source: after `eof`, it is ready for the next
    connection (a reconnection), and `last_event_id` and `retry` carry over.

    Args:
        max_event: The largest event, in bytes, counted over its field lines
            without their line ends (comment lines do not count). Larger events
            come back as `EventTooLarge`.
    """

    __slots__ = (
        "_bad",
        "_comment",
        "_data",
        "_head",
        "_id_set",
        "_last_id",
        "_line",
        "_line_len",
        "_max_event",
        "_open",
        "_retry",
        "_size",
        "_skip_lf",
        "_skipping",
        "_start",
        "_type",
    )

    _bad: str | None
    _type: bytes | None

    def __init__(self, max_event: int = MAX_EVENT) -> None:
        if max_event < 1:
            raise ValueError("max_event must be at least 1")
        self._max_event = max_event
        self._last_id = ""
        self._retry: int | None = None
        self._data: list[bytes] = []
        self._line = bytearray()
        self._reset_stream()

    # ------------------------------------------------------------ state

    @property
    def max_event(self) -> int:
        """The limit given to the constructor."""
        return self._max_event

    @property
    def last_event_id(self) -> str:
        """The last event id the stream set (``""`` when none): the resumption cursor."""
        return self._last_id

    @property
    def retry(self) -> int | None:
        """The reconnection time the server asked for, in milliseconds, or `None`."""
        return self._retry

    @property
    def buffered(self) -> int:
        """How many bytes of the stream are held (partial line and event).

        Never more than ``max_event + 2``.
        """
        held = len(self._head) + len(self._line) + sum(len(part) for part in self._data)
        return held + (len(self._type) if self._type is not None else 0)

    def _reset_stream(self) -> None:
        # Deciding whether the stream starts with a BOM: the bytes seen so far.
        self._start = True
        self._head = b""
        # The previous chunk ended with a CR: an LF at the start of the next ends the same line.
        self._skip_lf = False
        self._line.clear()
        self._line_len = 0
        self._comment = False
        self._reset_event()

    def _reset_event(self) -> None:
        self._data = []
        self._type = None
        self._size = 0
        self._bad = None
        self._open = False
        self._skipping = False
        self._id_set = False

    # ------------------------------------------------------------ input

    def feed(self, data: bytes) -> list[Item]:
        """Add bytes and return every event (or report) they complete, in order.

        An empty ``data`` is allowed and returns nothing (it does *not* mean end
        of stream; see `eof`).
        """
        out: list[Item] = []
        if self._start:
            if self._head:
                data = self._head + data
                self._head = b""
            if len(data) < len(_BOM) and _BOM.startswith(data):
                self._head = data
                return out
            self._start = False
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
        self._scan(data, out)
        return out

    def eof(self) -> list[Item]:
        """Signal the end of the stream; report an event it cut.

        The parser is then ready for a new stream of the same source (a leading
        BOM is dropped again); `last_event_id` and `retry` are kept.
        """
        out: list[Item] = []
        if self._head:
            head = self._head
            self._head = b""
            self._scan(head, out)
        if not self._skipping and (self._open or self._line_len):
            out.append(Truncated(id=self._last_id))
        self._reset_stream()
        return out

    def _scan(self, data: bytes, out: list[Item]) -> None:
        end = len(data)
        pos = 0
        if self._skip_lf and end:
            self._skip_lf = False
            if data[0] == _LF:
                pos = 1
        # The next CR and LF at or after ``pos`` (-1: none in the rest of the
        # chunk; -2: not searched yet). Each is searched for again only once
        # ``pos`` has passed it, so no byte is searched twice for the same one.
        cr = lf = -2
        while pos < end:
            if cr < pos and cr != -1:
                cr = data.find(b"\r", pos)
            if lf < pos and lf != -1:
                lf = data.find(b"\n", pos)
            stop = lf if cr < 0 else cr if lf < 0 or cr < lf else lf
            if stop < 0:
                self._partial(data, pos, end, out)
                return
            self._line_end(data, pos, stop, out)
            pos = stop + 1
            if stop == cr:
                if pos == end:
                    self._skip_lf = True
                elif data[pos] == _LF:
                    pos += 1

    def _partial(self, data: bytes, start: int, stop: int, out: list[Item]) -> None:
        """Hold ``data[start:stop]``, the beginning of a line whose end is still to come."""
        if self._line_len == 0:
            self._comment = data[start] == _COLON
        n = stop - start
        if self._comment or self._skipping:
            self._line_len += n
            return
        if self._size + self._line_len + n > self._max_event:
            self._overflow(out)
            self._line_len += n
            return
        self._line += memoryview(data)[start:stop]
        self._line_len += n

    def _line_end(self, data: bytes, start: int, stop: int, out: list[Item]) -> None:
        """Handle a line whose last piece is ``data[start:stop]``."""
        length = self._line_len + stop - start
        if length == 0:
            self._dispatch(out)
            return
        comment = self._comment if self._line_len else data[start] == _COLON
        held = self._line_len
        self._line_len = 0
        if comment or self._skipping:
            return
        if self._size + length > self._max_event:
            self._overflow(out)
            return
        self._size += length
        if held:
            line = self._line
            line += memoryview(data)[start:stop]
            self._field(line, 0, len(line))
            line.clear()
        else:
            self._field(data, start, stop)

    def _field(self, buf: bytes | bytearray, start: int, stop: int) -> None:
        """Handle the field line ``buf[start:stop]``; its value is copied out once."""
        self._open = True
        colon = buf.find(b":", start, stop)
        if colon < 0:
            name = buf[start:stop]
            value = b""
        else:
            name = buf[start:colon]
            skip = colon + 1
            if skip < stop and buf[skip] == _SPACE:
                skip += 1
            with memoryview(buf) as view:
                value = bytes(view[skip:stop])
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._type = value
        elif name == b"id":
            if b"\x00" not in value:
                try:
                    self._last_id = value.decode()
                    self._id_set = True
                except UnicodeDecodeError:
                    self._bad = self._bad or "id"
        elif name == b"retry" and value.isdigit():
            digits = value.lstrip(b"0")
            if len(digits) <= _MAX_RETRY_DIGITS:
                self._retry = int(digits or b"0")

    def _overflow(self, out: list[Item]) -> None:
        out.append(EventTooLarge(limit=self._max_event, id=self._last_id))
        self._reset_event()
        self._line.clear()
        self._skipping = True

    def _dispatch(self, out: list[Item]) -> None:
        """A blank line: dispatch the event built so far, if it has data."""
        if self._skipping or not self._open:
            self._reset_event()
            return
        if self._bad is not None:
            out.append(BadEncoding(field=self._bad, id=self._last_id))
            self._reset_event()
            return
        parts = self._data
        raw = b"" if not parts else parts[0] if len(parts) == 1 else b"\n".join(parts)
        if raw:
            field = "event"
            try:
                kind = self._type.decode() if self._type else "message"
                field = "data"
                text = raw.decode()
            except UnicodeDecodeError:
                out.append(BadEncoding(field=field, id=self._last_id))
            else:
                out.append(Event(data=text, type=kind, id=self._last_id, own_id=self._id_set))
        self._reset_event()
