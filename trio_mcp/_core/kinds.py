"""What kind of JSON value a value is: its JSON Schema type, and the words a message uses for it.

Error messages about a configuration file, a server card, a tool's arguments
or a constructor's arguments name what a value is instead of showing it (it
may be a secret, or huge): ``must be a string, got an array``. They all say
it the same way, with `json_kind`.
"""

from __future__ import annotations

from typing import Final

__all__ = ["json_kind", "json_type"]

_PHRASES: Final = {
    "null": "null",
    "boolean": "a boolean",
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "array": "an array",
    "object": "an object",
}


def json_type(value: object) -> str:
    """The JSON Schema type of a decoded JSON value.

    One of ``"null"``, ``"boolean"``, ``"integer"``, ``"number"``,
    ``"string"``, ``"array"`` (a list) and ``"object"`` (a dict): a
    `bool` is a boolean, never an integer, and a `float` is a number even
    when it is whole (``3.0``). A value JSON cannot hold is named by its
    Python type (``"bytes"``, ``"tuple"``).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_kind(value: object) -> str:
    """What a value is, for a message that must not show the value.

    ``"null"``, ``"a boolean"``, ``"an integer"``, ``"a number"``, ``"a
    string"``, ``"an array"``, ``"an object"``; a value JSON cannot hold, its
    Python type's name (``"bytes"``).
    """
    kind = json_type(value)
    return _PHRASES.get(kind, kind)
