"""JSON lines in and out, read exactly as Python's `json` module reads them.

`decode` turns one line a server wrote into the value that
``json.loads(line.decode("utf-8"))`` returns, and `encode` writes one
message as a compact line.

Both sides use orjson, which is several times faster than the standard
library, and fall back to slower code only where orjson would refuse the
input or change it:

* orjson refuses ``NaN``, ``Infinity``, ``-Infinity``, numbers too large for a
  float (``1e400``) and escapes of lone surrogates (``"\\udcff"``, which is
  how Python's `json` writes a file name that is not UTF-8). Python's `json`
  reads all of them; `decode` then reads the line again with `json`.
* orjson reads an integer beyond 64 bits (below ``-2**63`` or above
  ``2**64 - 1``) as a float, silently. Such an integer has at least 19
  digits in a row; `decode` looks for that cheaply (the checks are described
  in a comment above it) and, when it cannot rule it out, reads the line
  again with `json`, so the integer comes back exact.
* orjson cannot write an integer beyond 64 bits; `encode` then writes it
  from its decimal digits.

Everything else orjson reads exactly as `json` does (the same floats,
correctly rounded; the same strings; duplicate keys, the last one wins),
which the property tests check against `json` itself.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson

__all__ = ["UnreadableJSON", "decode", "encode"]

#: The reasons an `UnreadableJSON` gives.
INVALID_UTF8: Final = "not valid UTF-8"
TOO_DEEP: Final = "nested too deeply"
NOT_JSON: Final = "not JSON"


class UnreadableJSON(ValueError):
    """A line that Python's `json` module cannot read either.

    Attributes:
        reason: What is wrong, in a few words: ``"not valid UTF-8"``,
            ``"nested too deeply"`` or ``"not JSON"``.
        detail: The decoder's own message (where the line breaks), or ``""``.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason} ({detail})" if detail else reason)
        self.reason = reason
        self.detail = detail


# ------------------------------------------------------------------ decoding
#
# A line orjson reads could still hold an integer beyond 64 bits, which
# orjson turned into a float. Such an integer is a number token of at least
# 19 digits ("-" and 19 digits below -2**63, 20 digits above 2**64 - 1). The
# checks below run from cheapest to most precise, and each one only has to
# be *necessary* for such a token: when one rules it out, orjson's value is
# exact; when the last one cannot, `json` reads the line again.
#
# 1. A long line made of a few big strings (file contents, images in base64)
#    has few values, and orjson reads long strings at memory speed, so
#    sampling its bytes would cost as much again. The value orjson returned
#    is searched instead for a float of 2**63 or more (what a lost integer
#    became). A probe picks this route (the middle of the line is inside a
#    string), and a budget proportional to the line's length bounds it.
# 2. Sampling: a run of 19 digits holds two consecutive multiples of 9, so
#    every ninth byte of the line holds two digits in a row. One strided
#    slice, one `bytes.translate` and one `bytes.find` over a ninth of the
#    line: this settles nearly every other line.
# 3. When the sample does hold two digits in a row: the whole line is
#    searched for runs of 19 digits that start a number token (after "-" or
#    after a byte that may precede a value: ":", ",", "[", white space, or
#    the start of the line), are not followed by a fraction or an exponent,
#    and lie outside the 64-bit range. After a few such runs, reading the
#    line again is cheaper than looking at every one.

_DIGIT: Final = ord("0")
_OTHER: Final = ord(".")
_DELIMITER: Final = ord(":")


def _byte_classes() -> bytes:
    table = bytearray([_OTHER]) * 256
    for byte in b"0123456789":
        table[byte] = _DIGIT
    for byte in b":,[ \t\n\r":
        table[byte] = _DELIMITER
    table[ord("-")] = ord("-")
    return bytes(table)


#: A `bytes.translate` table: digits become "0", delimiters ":", "-" stays, the rest ".".
_CLASSES: Final = _byte_classes()
_EVERY_NINTH: Final = slice(None, None, 9)
_PAIR: Final = b"00"
_RUN: Final = b"0" * 19
_DIGITS: Final = re.compile(rb"[0-9]+")
_FRACTION_OR_EXPONENT: Final = (b".", b"e", b"E")
_MAX_RUNS: Final = 16
#: Lines from this size on may take the route of check 1.
WALK_FROM: Final = 1024
_PROBE: Final = 256
_BACKSLASH: Final = ord("\\")
#: The integers orjson keeps: from -2**63 to 2**64 - 1.
_INT_MIN_MAGNITUDE: Final = 2**63
_UINT_MAX: Final = 2**64 - 1
#: Floats from here on may be integers that orjson could not keep.
_LOSSY: Final = 2.0**63

_loads = orjson.loads
_OrjsonDecodeError = orjson.JSONDecodeError


def decode(line: bytes) -> Any:
    """Decode one line exactly as ``json.loads(line.decode("utf-8"))`` would.

    The value has the same types and contents: ``NaN`` and ``Infinity`` are
    floats, an integer of any size is an `int`, a lone surrogate escape is a
    lone surrogate in the `str`, the last of duplicate keys wins. An
    ordinary line costs one ``orjson.loads`` and a look at every ninth byte
    (or, for a long line made of a few long strings, at the few values).

    The line is read as UTF-8, which is what MCP's stdio transport carries,
    and not as ``json.loads(line)`` would read bytes: that guesses UTF-16 or
    UTF-32 from zero bytes, accepts surrogates encoded in UTF-8, and skips
    a byte order mark. Here such a line is refused (the framing strips byte
    order marks before lines get here).

    Two limits of the standard library stay: an integer of more than 4300
    digits is refused (`sys.set_int_max_str_digits`), and so is nesting
    deeper than about a thousand levels (the recursion limit). orjson reads
    up to 1024 levels; a line it reads exactly within that depth is
    returned even where `json` would have run out of recursion.

    Raises:
        UnreadableJSON: Python's `json` module cannot read the line either.
    """
    try:
        value = _loads(line)
    except _OrjsonDecodeError:
        return _decode_stdlib(line)
    size = len(line)
    if size >= WALK_FROM and _walk_rules_out_lost_integers(line, value, size):
        return value
    if line[_EVERY_NINTH].translate(_CLASSES).find(_PAIR) < 0:
        return value
    if _has_long_integer(line):
        return _decode_stdlib(line)
    return value


def _decode_stdlib(line: bytes) -> Any:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableJSON(INVALID_UTF8, str(exc)) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise UnreadableJSON(TOO_DEEP) from None
    except ValueError as exc:
        raise UnreadableJSON(NOT_JSON, str(exc)) from None


def _walk_rules_out_lost_integers(line: bytes, value: object, size: int) -> bool:
    """Check 1: whether ``value`` surely holds no float of 2**63 or more.

    Only for a container whose line has no unescaped quote near its middle
    (the middle is inside a long string), and only within a budget of
    values: `False` means "not ruled out", not "found".
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        return False
    middle = size >> 1
    quote = line.find(b'"', middle, middle + _PROBE)
    if quote >= 0 and line[quote - 1] != _BACKSLASH:
        return False
    budget = 16 + (size >> 10)
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        items = node.values() if type(node) is dict else node
        budget -= len(items)
        if budget < 0:
            return False
        for item in items:
            kind = type(item)
            if kind is float:
                if not -_LOSSY < item < _LOSSY:
                    return False
            elif kind is dict or kind is list:
                stack.append(item)
    return True


def _has_long_integer(line: bytes) -> bool:
    """Check 3: whether ``line`` may have an integer token that orjson turned into a float."""
    classes = line.translate(_CLASSES)
    start = classes.find(_RUN)
    for _ in range(_MAX_RUNS):
        if start < 0:
            return False
        match = _DIGITS.match(line, start)
        assert match is not None
        end = match.end()
        before = classes[start - 1 : start] if start else b":"
        negative = before == b"-"
        if negative:
            before = classes[start - 2 : start - 1] if start > 1 else b":"
        # A token (or a string that looks like one: reading it again is only slower).
        if (
            before == b":"
            and line[end : end + 1] not in _FRACTION_OR_EXPONENT
            and (end - start > 20 or int(line[start:end]) > (_INT_MIN_MAGNITUDE if negative else _UINT_MAX))
        ):
            return True
        start = classes.find(_RUN, end)
    # Many long runs of digits: reading the line again costs less than looking at each.
    return start >= 0


# ------------------------------------------------------------------ encoding

#: orjson refuses to nest deeper than this.
_MAX_DEPTH: Final = 254


def encode(message: dict[str, Any]) -> bytes:
    """Serialise one message as a compact JSON line ending in LF.

    Integers of any size are written exactly. ``NaN`` and infinities are
    written as ``null``, as orjson does.

    Raises:
        TypeError: ``message`` holds something JSON cannot express (a set, an
            object, a non-string key, a lone surrogate, an integer of more
            than 4300 digits, ...).
    """
    try:
        return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError as exc:
        error = exc
    exact, changed = _big_ints_as_fragments(message, 0)
    if changed:
        try:
            return orjson.dumps(exact, option=orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError as exc:
            error = exc
    raise TypeError(f"cannot encode as JSON: {error}") from None


def _big_ints_as_fragments(value: object, depth: int) -> tuple[object, bool]:
    """Copy ``value`` with each integer beyond 64 bits replaced by its digits.

    Returns the copy and whether anything was replaced (if not, ``value``
    itself).
    """
    if isinstance(value, int):
        if -_INT_MIN_MAGNITUDE <= value <= _UINT_MAX:
            return value, False
        try:
            digits = str(int(value))
        except ValueError:  # more digits than int-to-str conversion allows
            return value, False
        return orjson.Fragment(digits), True
    if depth > _MAX_DEPTH:
        return value, False
    if isinstance(value, dict):
        pairs = [(key, _big_ints_as_fragments(item, depth + 1)) for key, item in value.items()]
        if any(changed for _, (_, changed) in pairs):
            return {key: item for key, (item, _) in pairs}, True
    elif isinstance(value, list | tuple):
        items = [_big_ints_as_fragments(item, depth + 1) for item in value]
        if any(changed for _, changed in items):
            return [item for item, _ in items], True
    return value, False
