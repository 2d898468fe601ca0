"""Tests of `trio_mcp._core.codec`: lines read exactly as Python's `json` reads them.

`decode` must return what ``json.loads(line.decode("utf-8"))`` returns, with
the same types, while taking orjson's speed on ordinary lines; `encode` must
write integers of any size. The unit tests pin down each kind of value orjson
refuses or changes, each route of the cheap checks that spot an integer
beyond 64 bits, and the lines refused on purpose. The properties (marked
``property``, and fuzzed by ``fuzz/fuzz_protocol.py``) compare `decode` with
`json` on any input, and check that what `encode` writes is one line that
reads back exactly.
"""

from __future__ import annotations

import base64
import json
import math
import sys
from typing import Any

import orjson
import pytest
from hypothesis import given, settings, strategies as st
from json_support import encodable, json_ish_bytes, json_layouts, json_values, json_writable, same

from trio_mcp._core.codec import INVALID_UTF8, NOT_JSON, TOO_DEEP, WALK_FROM, UnreadableJSON, decode, encode
from trio_mcp._core.framing import LineFramer, clean_line


def json_reads(line: bytes) -> Any:
    return json.loads(line.decode("utf-8"))


# ------------------------------------------------------------ what orjson refuses


@pytest.mark.parametrize(
    "line",
    [
        b"NaN",
        b"Infinity",
        b"-Infinity",
        b"1e400",
        b"-1e400",
        b"1.7976931348623159e308",
        b'"\\ud800"',
        b'"\\udcff.txt"',
        b'"\\udc00\\ud800"',
        b'"\\ud800x\\udfff"',
        b'{"\\udcff": [NaN, Infinity, -Infinity, 1e999]}',
        b'{"jsonrpc":"2.0","id":1,"result":{"name":"caf\\udce9.txt","size":NaN}}',
    ],
)
def test_what_orjson_refuses_is_read_as_json_reads_it(line: bytes) -> None:
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(line)
    assert same(decode(line), json_reads(line))


def test_special_floats_are_floats() -> None:
    value = decode(b"[NaN, Infinity, -Infinity, 1e400, -1e400]")
    assert all(type(x) is float for x in value)
    assert math.isnan(value[0])
    assert value[1:] == [math.inf, -math.inf, math.inf, -math.inf]


def test_lone_surrogates_are_kept() -> None:
    assert decode(b'{"name":"\\udcff"}') == {"name": "\udcff"}
    assert decode(b'"\\ud83d"') == "\ud83d"
    # A pair is still one character.
    assert decode(b'"\\ud83d\\ude00"') == "\U0001f600"


# ----------------------------------------------------- integers beyond 64 bits

BIG = [
    2**64,
    2**64 + 1,
    -(2**63) - 1,
    10**30,
    -(10**30),
    123456789012345678901234567890,
    2**200,
    -(2**1000),
]
EDGES = [2**63 - 1, 2**63, 2**64 - 1, -(2**63), 10**19, -(10**18)]


@pytest.mark.parametrize("number", BIG + EDGES)
def test_integers_of_any_size_are_exact_ints(number: int) -> None:
    for line in (
        str(number).encode(),
        b'{"n":%d}' % number,
        b"[ %d ]" % number,
        b'{"a":[1,{"b":%d}]}' % number,
    ):
        value = decode(line)
        assert same(value, json_reads(line))
    assert type(decode(str(number).encode())) is int


def test_orjson_turns_big_integers_into_floats() -> None:
    """The premise of the integer checks: orjson keeps 64 bits and silently rounds the rest."""
    assert orjson.loads(b"18446744073709551615") == 2**64 - 1
    assert type(orjson.loads(b"18446744073709551616")) is float
    assert orjson.loads(b"-9223372036854775808") == -(2**63)
    assert type(orjson.loads(b"-9223372036854775809")) is float


@pytest.mark.parametrize("padding", range(19))
@pytest.mark.parametrize("number", [2**64, -(2**63) - 1])
def test_big_integer_at_every_alignment(padding: int, number: int) -> None:
    """Every ninth byte is sampled: the integer must be found wherever it starts."""
    line = b'{"pad":"%s","n":%d}' % (b"x" * padding, number)
    assert decode(line) == {"pad": "x" * padding, "n": number}


@pytest.mark.parametrize(
    "separator", [b":", b": ", b":\t", b":\n", b":\r\n  "], ids=["compact", "space", "tab", "lf", "crlf"]
)
def test_big_integer_after_white_space(separator: bytes) -> None:
    line = b'{"n"' + separator + b'%d, "m":[\n  %d\n]}' % (10**25, -(10**25))
    assert decode(line) == {"n": 10**25, "m": [-(10**25)]}


def test_big_integer_in_a_long_line_of_many_values() -> None:
    """A tools/list-like line: the sampling route finds the integer."""
    tools = [{"name": f"tool_{i}", "description": "d" * 40, "schema": {"maximum": i}} for i in range(100)]
    tools[57]["schema"]["maximum"] = 2**70
    line = json.dumps({"tools": tools}, separators=(",", ":")).encode()
    assert len(line) > WALK_FROM
    value = decode(line)
    assert value == {"tools": tools}
    assert type(value["tools"][57]["schema"]["maximum"]) is int


@pytest.mark.parametrize("where", ["before", "after"])
def test_big_integer_next_to_a_long_string(where: str) -> None:
    """An image-like line: the walk over the few values finds the integer."""
    blob = base64.b64encode(bytes(range(256)) * 40).decode()
    members = [f'"data":"{blob}"', f'"size":{2**65}']
    if where == "after":
        members.reverse()
    line = ("{" + ",".join(members) + "}").encode()
    assert len(line) > 4 * WALK_FROM
    assert decode(line) == {"data": blob, "size": 2**65}
    assert type(decode(line)["size"]) is int


def test_long_string_with_escaped_quotes_still_finds_the_integer() -> None:
    text = 'say "hi" ' * 400
    line = json.dumps({"text": text, "n": -(2**70)}).encode()
    assert decode(line) == {"text": text, "n": -(2**70)}


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":"12345678901234567890123"}',
        b'{"a":"x12345678901234567890123","b":1.5}',
        b"[1234567890123456789, -123456789012345678]",
        b"[9223372036854775807, -9223372036854775808, 18446744073709551615]",
        b"[1.2345678901234567890123e5, 12345678901234567890123e-3]",
        b'["-12345678901234567890", " 12345678901234567890"]',
    ],
)
def test_long_digit_runs_that_are_not_big_integers(line: bytes) -> None:
    """Runs of digits in strings, 64-bit integers and floats decode as orjson reads them."""
    assert same(decode(line), json_reads(line))
    assert same(decode(line), orjson.loads(line))


@pytest.mark.parametrize("count", [1, 15, 16, 17, 200])
@pytest.mark.parametrize("last", [2**64 - 1, 2**64, -(2**63), -(2**63) - 1])
def test_many_long_integers(count: int, last: int) -> None:
    numbers = [1234567890123456789, -1234567890123456789] * count + [last]
    for line in (
        json.dumps(numbers).encode(),
        json.dumps({"n": numbers, "s": ["x1234567890123456789"] * count}).encode(),
    ):
        assert same(decode(line), json_reads(line))


def test_floats_of_integer_value_stay_floats() -> None:
    for line in (b"1e19", b"[1.0e30]", b'{"x":-9.3e18}', b"100000000000000000000.0"):
        assert same(decode(line), json_reads(line))
        assert type(json_reads(line)) in (float, list, dict)


# ------------------------------------------------------------ exact types


def test_duplicate_keys_last_wins_in_first_place() -> None:
    value = decode(b'{"a":1,"b":2,"a":3}')
    assert list(value.items()) == [("a", 3), ("b", 2)]
    assert list(decode(b'{"a":NaN,"b":2,"a":3}').items()) == [("a", 3), ("b", 2)]


def test_negative_zero() -> None:
    assert same(decode(b"-0.0"), -0.0)
    assert same(decode(b"-0"), 0)
    assert same(decode(b"-1e-400"), -0.0)


# ------------------------------------------------------------ refused lines


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"a":"\xff"}', INVALID_UTF8),
        (b'"\xed\xa0\x80"', INVALID_UTF8),  # a surrogate encoded in UTF-8
        (b'{"a":"\xc3"}', INVALID_UTF8),
        (b"\xef\xbb\xbf{}", NOT_JSON),  # a byte order mark (the framing strips it first)
        (b"1\x00", NOT_JSON),  # json.loads(bytes) would guess UTF-16 and read 1
        (b"", NOT_JSON),
        (b"nan", NOT_JSON),
        (b"[1,]", NOT_JSON),
        (b'{"jsonrpc":"2.0","id":1,"result":', NOT_JSON),
        (b"{'a': 1}", NOT_JSON),
        (b"1" * 5000, NOT_JSON),  # beyond the digits int() converts
        (b"[" * 100_000, TOO_DEEP),
        (b"[" * 2_000 + b"]" * 2_000, TOO_DEEP),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, TOO_DEEP),
    ],
    ids=lambda x: repr(x[:20]) if isinstance(x, bytes) else x,
)
def test_unreadable_lines_raise_one_error_type(line: bytes, reason: str) -> None:
    with pytest.raises(UnreadableJSON) as info:
        decode(line)
    assert info.value.reason == reason
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(reason)


def test_json_refuses_the_same_lines() -> None:
    """The refusals above are json's own, for text: only the UTF-8 reading is ours."""
    with pytest.raises(ValueError, match="Exceeds the limit"):
        json.loads("1" * 5000)
    with pytest.raises(RecursionError):
        json.loads("[" * 100_000)
    # Read as bytes, json would guess an encoding; the wire is UTF-8.
    assert json.loads(b"1\x00") == 1
    assert json.loads(b'"\xed\xa0\x80"') == "\ud800"


def test_nesting_orjson_reads_beyond_the_recursion_limit_is_kept() -> None:
    depth = 1020
    assert sys.getrecursionlimit() < depth
    value = decode(b"[" * depth + b"]" * depth)
    for _ in range(depth - 1):
        (value,) = value
    assert value == []


# ------------------------------------------------------------ encoding


@pytest.mark.parametrize("number", BIG)
def test_encode_writes_big_integers_exactly(number: int) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"n": number, "list": [number, (number, 1)], "ok": 2}}
    line = encode(message)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert json.loads(line) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"n": number, "list": [number, [number, 1]], "ok": 2},
    }
    assert decode(line.rstrip(b"\n")) == json.loads(line)


def test_encode_keeps_refusing_what_json_cannot_express() -> None:
    for message in (
        {"a": {1, 2}, "n": 2**64},
        {"a": object()},
        {1: 2**64},
        {"a": "\udcff", "n": 2**64},
        {"n": 10**5000},
    ):
        with pytest.raises(TypeError, match="cannot encode as JSON"):
            encode(message)


def test_encode_big_integer_inside_deep_nesting() -> None:
    value: Any = 2**64
    for _ in range(200):
        value = [value]
    assert json.loads(encode({"v": value})) == {"v": value}
    for _ in range(100):
        value = [value]
    with pytest.raises(TypeError):
        encode({"v": value})


def test_encode_writes_nan_as_null_like_orjson() -> None:
    assert encode({"x": math.nan, "y": [math.inf]}) == b'{"x":null,"y":[null]}\n'


# ----------------------------------------------------------------- properties
#
# The promises of the module for every input: what Python's json writes is
# read back exactly, any bytes are read as json reads them (or refused with
# the one error type), and what `encode` writes is one line that reads back.


@pytest.mark.property
@settings(deadline=None)
@given(value=json_writable, ensure_ascii=st.booleans(), layout=json_layouts)
def test_decode_reads_what_json_writes(value: Any, ensure_ascii: bool, layout: dict[str, Any]) -> None:
    """Whatever Python's json writes, `decode` reads back as json does: same values, same types."""
    text = json.dumps(value, ensure_ascii=ensure_ascii, **layout)
    try:
        line = text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates written raw (ensure_ascii=False): no UTF-8 line can
        # carry them; as bytes smuggled through anyway, the line is refused.
        with pytest.raises(UnreadableJSON) as info:
            decode(text.encode("utf-8", "surrogatepass"))
        assert info.value.reason == INVALID_UTF8
        return
    assert same(decode(line), json.loads(text))


def exact_decode_or_error(line: bytes) -> Any:
    try:
        return decode(line)
    except UnreadableJSON as exc:
        return exc


@pytest.mark.property
@settings(deadline=None)
@given(line=json_ish_bytes)
def test_decode_agrees_with_json_on_any_bytes(line: bytes) -> None:
    """On any bytes, `decode` returns json's value for the UTF-8 text, or raises `UnreadableJSON` only."""
    try:
        expected = json.loads(line.decode("utf-8"))
    except RecursionError:
        # Deeper than json's recursion allows: orjson may still read it exactly.
        outcome: Any = exact_decode_or_error(line)
        assert not isinstance(outcome, UnreadableJSON) or outcome.reason == TOO_DEEP
        return
    except ValueError:  # UnicodeDecodeError included
        with pytest.raises(UnreadableJSON):
            decode(line)
        return
    assert same(decode(line), expected)


@pytest.mark.property
@given(message=st.dictionaries(st.text(), encodable, max_size=6))
def test_encode_writes_any_integer_exactly(message: dict[str, Any]) -> None:
    """`encode` writes integers of any size as their digits; json and `decode` read them back."""
    line = encode(message)
    assert line.count(b"\n") == 1
    assert line.endswith(b"\n")
    assert same(json.loads(line), message)
    assert same(decode(line[:-1]), message)


@pytest.mark.property
@given(message=st.dictionaries(st.text(), json_values, max_size=6))
def test_encode_is_one_line_that_round_trips(message: dict[str, Any]) -> None:
    """`encode` output is exactly one line, which frames and decodes back to the message."""
    line = encode(message)
    assert line.count(b"\n") == 1
    assert line.endswith(b"\n")
    framer = LineFramer(len(line))
    (framed,) = framer.feed(line)
    assert isinstance(framed, bytes)
    assert orjson.loads(clean_line(framed)) == message
