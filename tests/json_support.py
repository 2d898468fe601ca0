"""Hypothesis strategies for JSON lines, and an exact equality for what decodes from them.

Shared by the tests of the codec (`trio_mcp._core.codec`) and of the
JSON-RPC connection (`trio_mcp._core.jsonrpc`), which both promise to read
a line exactly as Python's `json` module reads it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import strategies as st

from trio_mcp._core.codec import WALK_FROM

__all__ = [
    "any_ints",
    "any_text",
    "encodable",
    "json_ish_bytes",
    "json_layouts",
    "json_values",
    "json_writable",
    "padding",
    "same",
]


_INT64 = st.integers(-(2**63), 2**64 - 1)

#: JSON values orjson writes and reads unchanged (64-bit integers, finite floats).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | _INT64
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def same(a: Any, b: Any) -> bool:
    """Deep equality with exact types and key order, where NaN equals NaN and -0.0 differs from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return bool(a == b)


#: Integers of any size, with the 64-bit edges and the first values beyond them.
any_ints = (
    st.integers()
    | st.integers(2**64 - 3, 2**64 + 3)
    | st.integers(-(2**63) - 3, -(2**63) + 3)
    | st.integers(-(2**300), 2**300)
)
#: Text of any code points, lone surrogates included.
any_text = st.text(st.characters(exclude_categories=()), max_size=12)
#: Long strings, so that lines reach the routes of the cheap checks for long lines.
padding = st.integers(0, 3 * WALK_FROM).map(lambda n: "x" * n)

#: Values Python's json module can write (allow_nan is its default).
json_writable = st.recursive(
    st.none() | st.booleans() | any_ints | st.floats() | any_text | padding,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(any_text, inner, max_size=5),
    max_leaves=16,
)
json_layouts = st.sampled_from(
    [{}, {"separators": (",", ":")}, {"indent": 2}, {"indent": "\t", "separators": (",", ": ")}]
)

_TOKENS = st.sampled_from(
    [
        *(b"{", b"}", b"[", b"]", b",", b":", b" ", b"\t", b"\n", b'"', b"\\", b"-", b".", b"e", b"+", b"0"),
        *(b"NaN", b"Infinity", b"-Infinity", b"nan", b"true", b"null", b"1e400", b"\\u", b"d800", b"dc00"),
        *(
            b'"a"',
            b'"\\ud800"',
            b'"\\udc00"',
            b"\xff",
            b"\xed\xa0\x80",
            b"\xc3\xa9",
            b"\xef\xbb\xbf",
            b"\x00",
        ),
    ]
)
#: Bytes near JSON: token soup, long digit runs, and valid lines with a fragment spliced in.
json_ish_bytes = st.one_of(
    st.binary(max_size=60),
    st.lists(_TOKENS | any_ints.map(lambda n: str(n).encode()), max_size=30).map(b"".join),
    st.builds(
        lambda line, at, fragment: line[:at] + fragment + line[at:],
        json_writable.map(lambda v: json.dumps(v).encode()),
        st.integers(0, 200),
        st.lists(_TOKENS, max_size=3).map(b"".join),
    ),
)


#: Values `encode` can write: integers of any size, finite floats, no lone surrogates.
encodable = st.recursive(
    st.none() | st.booleans() | any_ints | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
