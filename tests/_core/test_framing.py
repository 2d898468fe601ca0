"""Tests of `LineFramer` and `clean_line`, the pure newline framing layer.

The unit tests pin down single behaviours; the properties (marked
``property``) compare the framer with a one-line reference model,
``stream.split(b"\\n")``, over arbitrary streams cut at arbitrary points.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

import trio_mcp._core.framing as _framing
from trio_mcp._core.framing import KEEP, LineFramer, Oversized, clean_line

BOM = b"\xef\xbb\xbf"

#: Characters that ``str.splitlines`` treats as line breaks, but LF framing must not.
NOT_NEWLINES = ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


# ------------------------------------------------------------------ helpers


def feed_all(framer: LineFramer, chunks: list[bytes]) -> list[bytes | Oversized]:
    """Feed every chunk, then signal end of stream; return every line."""
    out: list[bytes | Oversized] = []
    for chunk in chunks:
        out.extend(framer.feed(chunk))
    out.extend(framer.eof())
    return out


def reference(stream: bytes, max_line: int, keep: int = KEEP) -> list[bytes | Oversized]:
    """What a framer must return for ``stream``: the model the properties check against."""
    *lines, last = stream.split(b"\n")
    if last:
        lines.append(last)
    return [
        line if len(line) <= max_line else Oversized(len(line), line[:keep], line[-keep:], max_line)
        for line in lines
    ]


def payload(n: int) -> bytes:
    """``n`` bytes without an LF, varied enough that a head or tail in the wrong place shows."""
    return bytes(i % 250 + (i % 250 >= 10) for i in range(n))


def cut(stream: bytes, sizes: list[int]) -> Iterator[bytes]:
    """Cut ``stream`` into chunks whose sizes cycle through ``sizes``."""
    start = 0
    for size in itertools.cycle(sizes):
        if start >= len(stream):
            return
        yield stream[start : start + size]
        start += size


# --------------------------------------------------------------- unit tests


def test_max_line_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_line"):
        LineFramer(0)
    assert LineFramer(1).max_line == 1


def test_splits_on_lf_only() -> None:
    framer = LineFramer(100)
    assert framer.feed(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    assert framer.feed(b"\r\r\n") == [b"\r\r"]
    assert framer.feed(b"") == []
    assert framer.buffered == 0


@pytest.mark.parametrize("char", NOT_NEWLINES)
def test_unicode_line_breaks_do_not_split(char: str) -> None:
    line = f'{{"text":"a{char}b"}}'.encode()
    assert LineFramer(100).feed(line + b"\n") == [line]
    assert clean_line(line) == line


def test_line_split_across_chunks_and_multibyte_character() -> None:
    data = '{"text":"caf\u00e9 \u2028 \U0001f600"}\n'.encode()
    framer = LineFramer(100)
    out: list[bytes | Oversized] = []
    for i in range(len(data)):
        out.extend(framer.feed(data[i : i + 1]))
    assert out == [data[:-1]]


def test_several_lines_in_one_chunk_and_empty_lines() -> None:
    assert LineFramer(10).feed(b"a\n\nb\n\n\n") == [b"a", b"", b"b", b"", b""]


def test_crlf_bom_and_blank_lines_via_clean_line() -> None:
    stream = BOM + b'{"a":1}\r\n\r\n   \n\t\r\n' + BOM + b'{"b":2}\r\n' + BOM + b"\n" + b"{}"
    lines = feed_all(LineFramer(100), [stream])
    cleaned = [clean_line(line) for line in lines if isinstance(line, bytes)]
    assert [line for line in cleaned if line] == [b'{"a":1}', b'{"b":2}', b"{}"]


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        (b"{}", b"{}"),
        (b"{}\r", b"{}"),
        (b"{}\r\r", b"{}"),
        (BOM + b"{}", b"{}"),
        (BOM + b"{}\r", b"{}"),
        (b"  {} \t\r", b"{}"),
        (b"\r{}", b"{}"),
        (b"", b""),
        (b"\r", b""),
        (b" \t \r", b""),
        (BOM, b""),
        (BOM + b" \r", b""),
        (b'{"a":"x\\r"}', b'{"a":"x\\r"}'),
        (b'{"a":"\r"}', b'{"a":"\r"}'),
        ('{"a":"\u2028"}'.encode(), '{"a":"\u2028"}'.encode()),
    ],
)
def test_clean_line(raw: bytes, cleaned: bytes) -> None:
    assert clean_line(raw) == cleaned


def test_final_line_without_newline_comes_from_eof() -> None:
    framer = LineFramer(100)
    assert framer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert framer.feed(b":2}") == []
    assert framer.buffered == len(b'{"b":2}')
    assert framer.eof() == [b'{"b":2}']
    assert framer.buffered == 0
    assert framer.eof() == []


def test_eof_after_newline_or_nothing_returns_nothing() -> None:
    assert LineFramer(10).eof() == []
    framer = LineFramer(10)
    framer.feed(b"abc\n")
    assert framer.eof() == []


def test_eof_returns_lone_cr() -> None:
    framer = LineFramer(10)
    assert framer.feed(b"\r") == []
    assert framer.eof() == [b"\r"]


@pytest.mark.parametrize("max_line", [1, 10, KEEP - 1, KEEP, KEEP + 1, 3 * KEEP])
def test_exact_limit_passes_and_one_more_is_oversized(max_line: int) -> None:
    exact = payload(max_line)
    assert LineFramer(max_line).feed(exact + b"\n") == [exact]
    over = payload(max_line + 1)
    assert LineFramer(max_line).feed(over + b"\n") == [
        Oversized(size=max_line + 1, head=over[:KEEP], tail=over[-KEEP:], limit=max_line)
    ]


def test_oversized_line_over_many_chunks() -> None:
    line = payload(5 * KEEP + 17)
    max_line = KEEP + 5
    framer = LineFramer(max_line)
    out: list[bytes | Oversized] = []
    for chunk in cut(line, [1, 7, 300, KEEP - 1, 2]):
        out.extend(framer.feed(chunk))
        assert framer.buffered <= max(max_line, 3 * KEEP)
    assert out == []
    out.extend(framer.feed(b"\n"))
    assert out == [Oversized(size=len(line), head=line[:KEEP], tail=line[-KEEP:], limit=max_line)]
    assert framer.buffered == 0


def test_oversized_line_fed_byte_by_byte() -> None:
    line = payload(2 * KEEP + 3)
    framer = LineFramer(KEEP)
    for i in range(len(line)):
        assert framer.feed(line[i : i + 1]) == []
    assert framer.buffered <= 3 * KEEP
    assert framer.eof() == [Oversized(size=len(line), head=line[:KEEP], tail=line[-KEEP:], limit=KEEP)]


def test_lines_after_an_oversized_one_are_intact() -> None:
    big = payload(KEEP + 50)
    record = Oversized(size=len(big), head=big[:KEEP], tail=big[-KEEP:], limit=KEEP)
    framer = LineFramer(KEEP)
    assert framer.feed(big + b'\n{"a":1}\n{"b"') == [record, b'{"a":1}']
    assert framer.feed(b":2}\n" + big[:20]) == [b'{"b":2}']
    assert framer.feed(big[20 : KEEP + 10]) == []
    assert framer.feed(big[KEEP + 10 :]) == []
    assert framer.feed(b"\nok\n") == [record, b"ok"]
    assert framer.eof() == []


def test_endless_line_without_newline_stays_bounded() -> None:
    framer = LineFramer(KEEP)
    chunk = payload(256) * 64
    for _ in range(64):
        assert framer.feed(chunk) == []
        assert framer.buffered <= 3 * KEEP
    (record,) = framer.eof()
    assert isinstance(record, Oversized)
    assert record.size == 64 * len(chunk)
    assert record.head == chunk[:KEEP]
    assert record.tail == chunk[-KEEP:]


def test_head_does_not_depend_on_chunking_below_keep() -> None:
    """``Oversized.head`` is the line's first `KEEP` bytes, even with ``max_line < KEEP``.

    Here the line outgrows the limit in its first chunk, and more of it arrives
    later; the head must still hold those later bytes, as it does when the
    whole line comes in one chunk.
    """
    line = b"a" * 11 + b"b" * 5
    whole = LineFramer(10).feed(line + b"\n")
    framer = LineFramer(10)
    assert framer.feed(line[:11]) == []
    split = framer.feed(line[11:] + b"\n")
    assert whole == [Oversized(size=16, head=line, tail=line, limit=10)]
    assert split == whole


# --------------------------------------------------------------- properties

_SPECIAL = st.sampled_from(
    [b"\n", b"\r\n", b"\r", BOM, b"{}", b" ", *(c.encode() for c in NOT_NEWLINES), b"\xff", b"\xe2\x80"]
)


@st.composite
def framing_cases(draw: st.DrawFn) -> tuple[int, int, bytes, list[int]]:
    """Draw ``(keep, max_line, stream, chunk_sizes)``.

    ``keep`` is usually a tiny stand-in for `KEEP`, so that oversized lines,
    heads and tails are cheap to generate and byte-at-a-time feeding is
    affordable; sometimes it is the real `KEEP`, with chunks of at least 16
    bytes (the same code paths, at realistic sizes).
    """
    keep = draw(st.sampled_from([KEEP, 1, 2, 3, 5, 8, 16]))
    scale = keep if keep == KEEP else max(keep, 8)
    max_line = draw(
        st.sampled_from([1, 2, keep - 1 or 1, keep, keep + 1, 2 * keep, 2 * keep + 1])
        | st.integers(1, 3 * scale)
    )
    run = st.builds(
        lambda pattern, n: pattern * n,
        st.binary(min_size=1, max_size=2) | _SPECIAL,
        st.integers(0, 3 * scale),
    )
    piece = st.binary(max_size=12) | _SPECIAL | run
    stream = b"".join(draw(st.lists(piece, max_size=4 if keep == KEEP else 12)))
    low = 16 if keep == KEEP else 1
    sizes = draw(
        st.lists(st.integers(low, low + 8) | st.integers(low, 2 * scale + 2), min_size=1, max_size=8)
    )
    return keep, max_line, stream, sizes


@pytest.mark.property
@settings(deadline=None)
@given(framing_cases())
def test_chunking_invariance_and_bounded_memory(case: tuple[int, int, bytes, list[int]]) -> None:
    """Any cut of a stream gives the reference model's lines, with bounded memory."""
    keep, max_line, stream, sizes = case
    with mock.patch.object(_framing, "KEEP", keep):
        framer = LineFramer(max_line)
        out: list[bytes | Oversized] = []
        for chunk in cut(stream, sizes):
            out.extend(framer.feed(chunk))
            assert framer.buffered <= max(max_line, 3 * keep)
        out.extend(framer.eof())
        assert framer.buffered == 0
    assert out == reference(stream, max_line, keep)


@pytest.mark.property
@given(
    max_line=st.integers(1, 64) | st.sampled_from([KEEP, KEEP + 1]),
    chunks=st.lists(st.binary(max_size=300)),
    eof=st.booleans(),
)
def test_feed_never_raises(max_line: int, chunks: list[bytes], eof: bool) -> None:
    """Whatever bytes come in, the framer returns well-formed lines and records."""
    framer = LineFramer(max_line)
    out: list[bytes | Oversized] = []
    for chunk in chunks:
        out.extend(framer.feed(chunk))
        assert framer.buffered <= max(max_line, 3 * KEEP)
    if eof:
        out.extend(framer.eof())
    for item in out:
        if isinstance(item, Oversized):
            assert item.size > max_line
            assert item.limit == max_line
            assert len(item.head) <= KEEP
            assert len(item.tail) <= KEEP
            assert b"\n" not in item.head + item.tail
        else:
            assert isinstance(item, bytes)
            assert len(item) <= max_line
            assert b"\n" not in item
        assert isinstance(clean_line(item if isinstance(item, bytes) else item.head), bytes)


class _Watched(bytes):
    """A chunk that records which of its bytes `find` searched."""

    searched: list[tuple[int, int]]

    def find(self, sub, start=None, end=None):  # type: ignore[no-untyped-def, override]
        begin = 0 if start is None else start
        stop = len(self) if end is None else end
        found = super().find(sub, begin, stop)
        self.searched.append((begin, stop if found < 0 else found + len(sub)))
        return found


@pytest.mark.property
@given(
    chunks=st.lists(st.lists(st.binary(max_size=6) | st.just(b"\n"), max_size=20).map(b"".join), max_size=10),
    max_line=st.integers(1, 40),
)
def test_each_byte_is_searched_once(chunks: list[bytes], max_line: int) -> None:
    """The framer never rescans: each byte of a chunk is searched for LF at most once.

    This is the part of linear time that can be asserted without a clock. It
    also shows that a chunk's lines are found in one pass, not by restarting
    the search from the start of the chunk for every line.
    """
    framer = LineFramer(max_line)
    for raw in chunks:
        chunk = _Watched(raw)
        chunk.searched = []
        framer.feed(chunk)
        covered = sorted(chunk.searched)
        for (_, end), (begin, _) in itertools.pairwise(covered):
            assert end <= begin
        assert sum(end - begin for begin, end in covered) <= len(raw)
