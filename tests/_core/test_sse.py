"""Tests of `EventParser`, the pure ``text/event-stream`` parser.

The unit tests pin down single behaviours, including the event shapes real
MCP servers send; the properties (marked ``property``) check that any bytes
cut anywhere parse or report without raising, that chunking never changes
the result (compared with a whole-stream reference model), that memory stays
bounded, and that no byte is searched twice for the same line end.
"""

from __future__ import annotations

import itertools
import re
import tracemalloc
from collections.abc import Iterable, Iterator

import pytest
from hypothesis import given, settings, strategies as st

from trio_mcp._core.sse import (
    MAX_EVENT,
    BadEncoding,
    Event,
    EventParser,
    EventTooLarge,
    Item,
    Truncated,
)

BOM = b"\xef\xbb\xbf"


# ------------------------------------------------------------------ helpers


def parse(
    chunks: Iterable[bytes], max_event: int = MAX_EVENT, parser: EventParser | None = None
) -> list[Item]:
    """Feed every chunk, then signal end of stream; return every item."""
    parser = parser or EventParser(max_event)
    out: list[Item] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    out.extend(parser.eof())
    return out


def cut(stream: bytes, sizes: list[int]) -> Iterator[bytes]:
    """Cut ``stream`` into chunks whose sizes cycle through ``sizes``."""
    start = 0
    for size in itertools.cycle(sizes):
        if start >= len(stream):
            return
        yield stream[start : start + size]
        start += size


def bytewise(stream: bytes) -> list[bytes]:
    return [stream[i : i + 1] for i in range(len(stream))]


# --------------------------------------------------------------- unit tests


def test_max_event_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_event"):
        EventParser(0)
    assert EventParser(1).max_event == 1
    assert EventParser().max_event == MAX_EVENT == 16 * 1024 * 1024


def test_typescript_server_shape() -> None:
    """LF lines, a priming event (id, empty data), then ``event: message`` with an id."""
    stream = b'id: p1\ndata: \n\nevent: message\nid: e2\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
    parser = EventParser()
    assert parser.feed(stream) == [Event('{"jsonrpc":"2.0","id":1,"result":{}}', "message", "e2")]
    assert parser.last_event_id == "e2"
    assert parser.eof() == []


def test_priming_event_records_the_id_without_dispatch() -> None:
    parser = EventParser()
    assert parser.feed(b"id: 4759\ndata: \n\n") == []
    assert parser.last_event_id == "4759"
    assert parser.feed(b"id: 4760\ndata:\n\n") == []
    assert parser.last_event_id == "4760"


def test_python_server_shape_with_crlf() -> None:
    stream = b'event: message\r\ndata: {"a":1}\r\n\r\n: ping\r\n\r\nevent: message\r\ndata: {"b":2}\r\n\r\n'
    assert parse([stream]) == [Event('{"a":1}'), Event('{"b":2}')]


@pytest.mark.parametrize("ending", [b"\n", b"\r", b"\r\n"])
def test_every_line_ending(ending: bytes) -> None:
    stream = ending.join([b"data: a", b"data: b", b"", b"event: x", b"data: c", b"", b""])
    expected = [Event("a\nb"), Event("c", "x")]
    assert parse([stream]) == expected
    assert parse(bytewise(stream)) == expected


def test_cr_at_chunk_end_and_lf_at_next_start_are_one_line_end() -> None:
    parser = EventParser()
    assert parser.feed(b"data: a\r") == []
    # Were the LF a second line end, it would be a blank line and dispatch now.
    assert parser.feed(b"\n") == []
    assert parser.feed(b"data: b\r") == []
    assert parser.feed(b"\r") == [Event("a\nb")]
    assert parser.feed(b"\n") == []


def test_keep_alives_after_an_id_dispatch_nothing() -> None:
    """The httpx-sse defect: comments and blank lines after an id gave empty events."""
    stream = b"id: 1\ndata: x\n\n" + b": keepalive\n\n" * 5 + b"\n\n\n" + b": ping\r\n\r\n"
    parser = EventParser()
    assert parser.feed(stream) == [Event("x", id="1")]
    assert parser.last_event_id == "1"


def test_leading_bom_is_dropped_once() -> None:
    stream = BOM + b"data: a\n\n" + BOM + b"data: b\n\n"
    # The second BOM is part of a field name, so that line is an unknown field.
    assert parse([stream]) == [Event("a")]
    assert parse(bytewise(stream)) == [Event("a")]
    assert parse([BOM[:1], BOM[1:2], BOM[2:] + b"data: c\n\n"]) == [Event("c")]


def test_bom_prefix_alone_is_a_cut_line() -> None:
    assert parse([BOM[:2]]) == [Truncated(id="")]
    assert parse([BOM]) == []
    assert parse([b"\xef\xbb" + b"data: a\n\n"]) == []  # not a BOM: the field name is "\xef\xbbdata"


@pytest.mark.parametrize(
    ("line", "data"),
    [
        (b"data:x", "x"),
        (b"data: x", "x"),
        (b"data:  x", " x"),
        (b"data: x ", "x "),
        (b"data:x:y", "x:y"),
        (b"data", ""),
    ],
)
def test_field_value_rules(line: bytes, data: str) -> None:
    items = parse([line + b"\ndata: end\n\n"])
    assert items == [Event(f"{data}\nend")]


def test_multi_line_data_is_joined_with_lf() -> None:
    stream = b'data: {"jsonrpc":"2.0",\ndata: "id":1,\ndata: "result":{}}\n\n'
    (event,) = parse([stream])
    assert isinstance(event, Event)
    assert event.data == '{"jsonrpc":"2.0",\n"id":1,\n"result":{}}'


def test_event_type_and_unknown_fields() -> None:
    stream = b"event: endpoint\nfoo: bar\nData: no\nevent\ndata: /message?sessionId=1\n\n"
    # "event" without a colon sets an empty type, which means "message".
    assert parse([stream]) == [Event("/message?sessionId=1", "message")]
    assert parse([b"event: endpoint\ndata: /m\n\ndata: x\n\n"]) == [Event("/m", "endpoint"), Event("x")]


def test_type_resets_even_when_nothing_is_dispatched() -> None:
    assert parse([b"event: endpoint\n\ndata: x\n\n"]) == [Event("x")]


@pytest.mark.parametrize(
    ("value", "retry"),
    [
        (b"3000", 3000),
        (b"0", 0),
        (b"007", 7),
        (b"-5", None),
        (b"+5", None),
        (b" 5", None),
        (b"5 ", None),
        (b"1.5", None),
        (b"", None),
        (b"\xd9\xa3", None),  # ARABIC-INDIC DIGIT THREE: a digit, not an ASCII one
        (b"9" * 18, 10**18 - 1),
        (b"9" * 19, None),
        (b"0" * 40 + b"1", 1),
        (b"9" * 5000, None),  # int() would refuse this many digits
    ],
)
def test_retry_only_takes_ascii_digits(value: bytes, retry: int | None) -> None:
    parser = EventParser()
    assert parser.feed(b"retry: " + value + b"\n\n") == []
    assert parser.retry == retry


def test_retry_keeps_the_last_valid_value() -> None:
    parser = EventParser()
    parser.feed(b"retry: 100\n\nretry: -1\n\nretry: x\n\n")
    assert parser.retry == 100


def test_id_with_nul_is_ignored_and_empty_id_resets() -> None:
    parser = EventParser()
    assert parser.feed(b"id: a\ndata: 1\n\nid: b\x00c\ndata: 2\n\n") == [
        Event("1", id="a"),
        Event("2", id="a"),
    ]
    assert parser.last_event_id == "a"
    assert parser.feed(b"id\ndata: 3\n\n") == [Event("3", id="")]
    assert parser.last_event_id == ""


def test_id_is_kept_across_events_and_streams() -> None:
    parser = EventParser()
    parser.feed(b"id: 7\nretry: 500\ndata: x\n\n")
    assert parser.eof() == []
    assert (parser.last_event_id, parser.retry) == ("7", 500)
    # A reconnection: the BOM is dropped again, the cursor and retry survive.
    assert parser.feed(BOM + b"data: y\n\n") == [Event("y", id="7")]


@pytest.mark.parametrize(
    ("stream", "field"),
    [
        (b"data: \xff\n\n", "data"),
        (b"data: caf\xc3\n\n", "data"),
        (b"data: \xed\xa0\x80\n\n", "data"),  # an encoded surrogate
        (b"event: \xfe\ndata: x\n\n", "event"),
        (b"id: \xc0\x80\ndata: x\n\n", "id"),
        (b"id: \xff\n\n", "id"),
    ],
)
def test_invalid_utf8_is_reported_not_replaced(stream: bytes, field: str) -> None:
    parser = EventParser()
    assert parser.feed(stream + b"data: ok\n\n") == [BadEncoding(field=field, id=""), Event("ok")]
    assert parser.last_event_id == ""


def test_invalid_utf8_in_comments_and_unknown_fields_is_ignored() -> None:
    assert parse([b": \xff\xfe\n\xff: \xff\ndata: \xc3\xa9\n\n"]) == [Event("\u00e9")]


def test_multibyte_character_split_across_chunks() -> None:
    stream = "data: caf\u00e9 \U0001f600\n\n".encode()
    assert parse(bytewise(stream)) == [Event("caf\u00e9 \U0001f600")]


def test_eof_mid_event_is_truncated() -> None:
    assert parse([b"data: x\n"]) == [Truncated(id="")]
    assert parse([b"id: 3\ndata: {"]) == [Truncated(id="3")]
    assert parse([b"data: a\n\ndata: b"]) == [Event("a"), Truncated(id="")]
    assert parse([b": ping"]) == [Truncated(id="")]


def test_eof_between_events_is_clean() -> None:
    assert parse([b""]) == []
    assert parse([b"data: a\n\n"]) == [Event("a")]
    assert parse([b"data: a\n\n: keepalive\n"]) == [Event("a")]
    assert parse([b"data: a\r"]) == [Truncated(id="")]
    assert parse([b"data: a\r\r"]) == [Event("a")]


def test_event_over_the_limit_is_reported_then_skipped() -> None:
    limit = 64
    big = b"data: " + b"x" * 100 + b"\n"
    stream = b"id: 1\n" + big + b"id: 2\ndata: more\n\n" + b"data: next\n\n"
    expected = [EventTooLarge(limit=limit, id="1"), Event("next", id="1")]
    assert parse([stream], limit) == expected
    assert parse(bytewise(stream), limit) == expected
    assert parse(cut(stream, [7, 1, 30]), limit) == expected


def test_limit_counts_field_lines_without_line_ends() -> None:
    exact = b"data:" + b"y" * 59  # 64 bytes
    assert parse([exact + b"\r\n\r\n"], 64) == [Event("y" * 59)]
    assert parse([exact + b"y\r\n\r\n"], 64) == [EventTooLarge(limit=64, id="")]
    two = b"data:" + b"y" * 27  # 32 bytes each: together exactly 64
    assert parse([two + b"\n" + two + b"\n\n"], 64) == [Event("y" * 27 + "\n" + "y" * 27)]
    assert parse([two + b"\n" + two + b"z\n\n"], 64) == [EventTooLarge(limit=64, id="")]


def test_comments_do_not_count_toward_the_limit_nor_are_held() -> None:
    parser = EventParser(16)
    assert parser.feed(b"data: a\n:" + b"c" * 10_000) == []
    assert parser.buffered <= 16
    assert parser.feed(b"\n: " + b"c" * 100 + b"\ndata: b\n\n") == [Event("a\nb")]


def test_oversized_event_reported_as_soon_as_it_crosses_the_limit() -> None:
    parser = EventParser(1000)
    assert parser.feed(b"data: " + b"x" * 500) == []
    assert parser.feed(b"x" * 500) == [EventTooLarge(limit=1000, id="")]
    for _ in range(100):
        assert parser.feed(b"x" * 10_000) == []
        assert parser.buffered == 0
    assert parser.eof() == []


def test_endless_event_of_short_lines_is_bounded() -> None:
    parser = EventParser(1024)
    out: list[Item] = []
    for _ in range(1000):
        out.extend(parser.feed(b"data: 0123456789\n"))
        assert parser.buffered <= 1024
    assert out == [EventTooLarge(limit=1024, id="")]


def test_large_event_in_big_chunks_within_the_limit() -> None:
    body = b'{"result":"' + b"z" * (3 * 1024 * 1024) + b'"}'
    stream = b"event: message\r\ndata: " + body + b"\r\n\r\n"
    (event,) = parse(cut(stream, [65536]))
    assert isinstance(event, Event)
    assert event.data.encode() == body


class _Watched(bytes):
    """A chunk that records which of its bytes `find` searched, per needle."""

    searched: dict[bytes, list[tuple[int, int]]]

    def find(self, sub, start=None, end=None):  # type: ignore[no-untyped-def, override]
        begin = 0 if start is None else start
        stop = len(self) if end is None else end
        found = super().find(sub, begin, stop)
        self.searched.setdefault(bytes(sub), []).append((begin, stop if found < 0 else found + len(sub)))
        return found


def _watch(raw: bytes) -> _Watched:
    chunk = _Watched(raw)
    chunk.searched = {}
    return chunk


def _assert_searched_once(chunk: _Watched) -> None:
    for needle in (b"\r", b"\n"):
        covered = sorted(chunk.searched.get(needle, []))
        for (_, end), (begin, _) in itertools.pairwise(covered):
            assert end <= begin, (needle, covered)
        assert sum(end - begin for begin, end in covered) <= len(chunk)


def test_many_lf_lines_before_one_cr_do_not_rescan() -> None:
    """A chunk of short LF lines ending with a lone CR: the CR is searched for once."""
    parser = EventParser()
    parser.feed(b"\n")  # past the BOM check, so the next chunk reaches the scanner as is
    chunk = _watch(b"data: a\n" * 1000 + b"\n\r")
    assert parser.feed(chunk) == [Event("\n".join("a" * 1000))]
    assert len(chunk.searched[b"\r"]) == 1
    _assert_searched_once(chunk)


def test_one_byte_chunks_are_searched_once() -> None:
    """An event dripped one byte at a time: every byte is searched once per needle
    (a rescan of the held line per chunk would be quadratic)."""
    stream = b"data: " + b"q" * 100_000 + b"\r\n\r\n"
    parser = EventParser()
    parser.feed(stream[:1])
    searched = 0
    out: list[Item] = []
    for i in range(1, len(stream)):
        chunk = _watch(stream[i : i + 1])
        out.extend(parser.feed(chunk))
        searched += sum(end - begin for spans in chunk.searched.values() for begin, end in spans)
    assert out == [Event("q" * 100_000)]
    assert searched <= 2 * len(stream)


def test_one_byte_chunks_hold_one_growing_buffer() -> None:
    """A 256 KiB event dripped one byte at a time is held in one growing buffer, so
    memory stays near the event's size (a list of one-byte pieces would take over
    30 times that) and each byte is copied a bounded number of times (a re-join per
    chunk would be a million times slower, well past the suite's per-test timeout)."""
    size = 256 * 1024
    stream = b"data: " + b"q" * size + b"\n\n"
    chunks = bytewise(stream)
    parser = EventParser()
    tracemalloc.start()
    try:
        out: list[Item] = []
        for chunk in chunks:
            out.extend(parser.feed(chunk))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out == [Event("q" * size)]
    # The held line, its copy into bytes and the decoded text: a few times the size.
    assert peak < 5 * size


# --------------------------------------------------------------- reference model


_LINE_END = re.compile(rb"\r\n|\r|\n")


def reference(stream: bytes, max_event: int) -> tuple[list[Item], str, int | None]:
    """What a parser must produce for ``stream`` fed whole, then eof.

    Written over the whole stream (split once on line ends), independently of
    the incremental parser's bookkeeping.
    """
    if stream.startswith(BOM):
        stream = stream[3:]
    *lines, last = _LINE_END.split(stream)
    out: list[Item] = []
    last_id = ""
    retry: int | None = None
    data: list[bytes] = []
    kind = b""
    size = 0
    bad: str | None = None
    seen = False
    skipping = False

    def reset() -> None:
        nonlocal data, kind, size, bad, seen, skipping
        data, kind, size, bad, seen, skipping = [], b"", 0, None, False, False

    for line in lines:
        if not line:
            if seen and not skipping:
                if bad:
                    out.append(BadEncoding(bad, last_id))
                elif data and b"\n".join(data):
                    try:
                        t = (kind or b"message").decode()
                    except UnicodeDecodeError:
                        out.append(BadEncoding("event", last_id))
                    else:
                        try:
                            out.append(Event(b"\n".join(data).decode(), t, last_id))
                        except UnicodeDecodeError:
                            out.append(BadEncoding("data", last_id))
            reset()
            continue
        if line.startswith(b":") or skipping:
            continue
        if size + len(line) > max_event:
            out.append(EventTooLarge(max_event, last_id))
            reset()
            skipping = True
            continue
        size += len(line)
        seen = True
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            data.append(value)
        elif name == b"event":
            kind = value
        elif name == b"id" and b"\0" not in value:
            try:
                last_id = value.decode()
            except UnicodeDecodeError:
                bad = bad or "id"
        elif name == b"retry" and re.fullmatch(rb"[0-9]+", value) and len(value.lstrip(b"0")) <= 18:
            retry = int(value.lstrip(b"0") or b"0")
    if last and not last.startswith(b":") and not skipping and size + len(last) > max_event:
        out.append(EventTooLarge(max_event, last_id))
        skipping = True
    if not skipping and (seen or last):
        out.append(Truncated(last_id))
    return out, last_id, retry


# --------------------------------------------------------------- properties

_PIECES = st.sampled_from(
    [
        b"\n",
        b"\r\n",
        b"\r",
        BOM,
        b":",
        b": ",
        b": keepalive\n\n",
        b"data",
        b"data:",
        b"data: ",
        b"data: {}",
        b"event: ",
        b"event: message",
        b"id",
        b"id: ",
        b"id: 1",
        b"retry: ",
        b"retry: 10",
        b"retry: -5",
        b"\x00",
        b"\xff",
        b"\xc3",
        b"\xa9",
        b"\xe2\x80",
        b"x",
        b"yy",
    ]
)


@st.composite
def sse_cases(draw: st.DrawFn) -> tuple[int, bytes, list[int]]:
    """Draw ``(max_event, stream, chunk_sizes)`` from pieces that hit every rule."""
    max_event = draw(st.integers(1, 40) | st.just(MAX_EVENT))
    piece = _PIECES | st.binary(max_size=8) | st.builds(bytes.__mul__, _PIECES, st.integers(0, 20))
    stream = b"".join(draw(st.lists(piece, max_size=40)))
    sizes = draw(st.lists(st.integers(1, 8) | st.integers(1, 64), min_size=1, max_size=8))
    return max_event, stream, sizes


@pytest.mark.property
@settings(deadline=None)
@given(sse_cases())
def test_chunking_invariance_and_bounded_memory(case: tuple[int, bytes, list[int]]) -> None:
    """Any cut of a stream gives the reference model's items, with bounded memory."""
    max_event, stream, sizes = case
    parser = EventParser(max_event)
    out: list[Item] = []
    for chunk in cut(stream, sizes):
        out.extend(parser.feed(chunk))
        assert parser.buffered <= max_event + 2
    out.extend(parser.eof())
    assert parser.buffered == 0
    assert (out, parser.last_event_id, parser.retry) == reference(stream, max_event)


@pytest.mark.property
@given(
    max_event=st.integers(1, 64) | st.just(MAX_EVENT),
    chunks=st.lists(st.binary(max_size=300)),
    eof=st.booleans(),
)
def test_feed_never_raises(max_event: int, chunks: list[bytes], eof: bool) -> None:
    """Whatever bytes come in, the parser returns well-formed items and stays bounded."""
    parser = EventParser(max_event)
    out: list[Item] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
        assert parser.buffered <= max_event + 2
    if eof:
        out.extend(parser.eof())
        assert parser.buffered == 0
    for item in out:
        if isinstance(item, Event):
            assert item.data
            assert len(item.data.encode()) <= max_event
            assert "\0" not in item.id
        else:
            assert isinstance(item, EventTooLarge | BadEncoding | Truncated)
    assert parser.retry is None or parser.retry >= 0
    assert "\0" not in parser.last_event_id
    # Still usable afterwards.
    after = parser.feed(b"\n\n\ndata: ok\n\n")
    if max_event >= len(b"data: ok"):
        assert after[-1] == Event("ok", id=parser.last_event_id)


@pytest.mark.property
@given(
    chunks=st.lists(
        st.lists(
            st.binary(max_size=6) | st.sampled_from([b"\n", b"\r", b"\r\n", b"data: x"]), max_size=20
        ).map(b"".join),
        max_size=10,
    ),
    max_event=st.integers(1, 40),
)
def test_each_byte_is_searched_once_per_line_end(chunks: list[bytes], max_event: int) -> None:
    """The parser never rescans: each byte of a chunk is searched at most once for CR
    and once for LF, however the line ends are mixed. This is the part of linear time
    that can be asserted without a clock."""
    parser = EventParser(max_event)
    parser.feed(b"\n")
    for raw in chunks:
        chunk = _watch(raw)
        parser.feed(chunk)
        _assert_searched_once(chunk)
