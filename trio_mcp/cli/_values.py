"""``KEY=VALUE`` words, read by the tool's input schema: `convert_arguments`.

A word's value is text; what it means depends on what the tool declares.
Pure functions of the text and the schema: nothing here does I/O, and
nothing here imports Trio or the client.

The rules, for each value:

* The argument's schema names its JSON type(s): ``type`` (a name or a list
  of names), ``enum`` or ``const`` (the types of their values),
  ``anyOf``/``oneOf`` (any of theirs), ``allOf`` (the first that names
  one), a local ``$ref`` (``#/$defs/...``, followed to a bounded depth),
  and ``properties`` or ``items`` without a ``type`` (an object, an
  array).
* A string argument takes the text as it is, whatever it looks like
  (``text=123`` sends ``"123"``).
* ``integer`` and ``number`` take a JSON number (``n=3``, ``x=-1.5e3``;
  an integer also ``3.0``); ``boolean`` takes ``true``/``false`` (or
  ``yes``/``no``, ``on``/``off``, in any case); ``null`` takes ``null``
  (alone, also the empty text); ``array`` and ``object`` take JSON text
  (``tags=["a","b"]``, ``point={"x":1}``).
* An argument that may be of several types takes the first of null,
  boolean, integer, number, array, object that the text reads as, and is
  a string otherwise, when a string is allowed: ``integer | string``
  reads ``3`` as a number and ``three`` as text.
* An argument the schema says nothing about (unknown to it, or with no
  type information) is read as JSON when it parses, and is a string
  otherwise.

A value that fits none of its types is an `ArgumentValueError` naming the
argument and what was expected. Constraints beyond the type (bounds,
patterns, the values of an ``enum``) are the server's to check.

The names of the arguments are checked too (`unknown_arguments`): a name
the schema does not know (not one of its ``properties``, nor matching one of
its ``patternProperties``) is refused when the schema forbids other names
(``additionalProperties: false``, or ``unevaluatedProperties: false``
without ``additionalProperties``), with the closest known names; it is
only warned about when the schema names its arguments but says nothing of
others (JSON Schema then allows any name), and passes silently when the
schema allows other names (``additionalProperties: true`` or a schema) or
names no argument at all (``{"type": "object"}``).
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any, Final

from .._core.kinds import json_type

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "KINDS",
    "ArgumentValueError",
    "UnknownArgument",
    "argument_kinds",
    "convert_arguments",
    "convert_value",
    "describe_kinds",
    "guess_value",
    "unknown_arguments",
]

JSON = Any

#: The JSON types a value can be read as, in the order a union tries them
#: (``string`` last: it takes anything).
KINDS: Final = ("null", "boolean", "integer", "number", "array", "object", "string")

#: How deep ``$ref``, ``anyOf`` and the like are followed, and how many
#: schemas one argument's may lead to in all (a recursive or enormous schema
#: stops there, and then says nothing).
MAX_DEPTH: Final = 16
MAX_NODES: Final = 1000

_TRUE: Final = frozenset({"true", "yes", "on"})
_FALSE: Final = frozenset({"false", "no", "off"})

_ARTICLES: Final = {
    "null": "null",
    "boolean": "a boolean (true or false)",
    "integer": "an integer",
    "number": "a number",
    "array": 'a JSON array (like ["a", "b"])',
    "object": 'a JSON object (like {"key": "value"})',
    "string": "a string",
}


class ArgumentValueError(ValueError):
    """A ``KEY=VALUE`` value does not fit the type the tool declares for it.

    Attributes:
        name: The argument's name.
        value: The value, as typed.
        expected: The JSON types it could have been.
    """

    def __init__(self, name: str, value: str, expected: frozenset[str]) -> None:
        self.name = name
        self.value = value
        self.expected = expected
        shown = value if len(value) <= 60 else value[:57] + "..."
        super().__init__(f"argument {name!r}: expected {describe_kinds(expected)}, got {shown!r}")


def describe_kinds(kinds: frozenset[str]) -> str:
    """The types for people: ``"an integer or null"``."""
    ordered = [_ARTICLES[kind] for kind in KINDS if kind in kinds]
    if len(ordered) <= 1:
        return ordered[0] if ordered else "nothing"
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]


def _resolve(ref: str, root: JSON) -> JSON:
    """A local ``$ref`` (``#/...``, a JSON pointer) in ``root``; `None` if it points nowhere."""
    if not ref.startswith("#"):
        return None
    node = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def argument_kinds(schema: JSON, root: JSON = None) -> frozenset[str] | None:
    """The JSON types an argument's schema allows, or `None` when it does not say.

    Args:
        schema: The argument's schema (a property of the tool's input schema).
        root: The whole input schema, where local ``$ref`` pointers lead
            (default: ``schema`` itself).
    """
    budget = [MAX_NODES]
    return _kinds(schema, schema if root is None else root, 0, budget)


def _kinds(schema: JSON, root: JSON, depth: int, budget: list[int]) -> frozenset[str] | None:
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH or not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, str) and kind in KINDS:
        return frozenset({kind})
    if isinstance(kind, list):
        named = {item for item in kind if isinstance(item, str) and item in KINDS}
        if named:
            return frozenset(named)
    for key in ("enum", "const"):
        if key not in schema:
            continue
        values = schema[key] if key == "enum" else [schema[key]]
        if isinstance(values, list) and values:
            return frozenset(json_type(value) for value in values)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            kinds: set[str] = set()
            for option in options:
                inner = _kinds(option, root, depth + 1, budget)
                if inner is None:
                    return None  # one alternative takes anything (or says nothing)
                kinds |= inner
            return frozenset(kinds)
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _kinds(_resolve(ref, root), root, depth + 1, budget)
    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        for part in all_of:
            inner = _kinds(part, root, depth + 1, budget)
            if inner is not None:
                return inner
    if "properties" in schema:
        return frozenset({"object"})
    if "items" in schema:
        return frozenset({"array"})
    return None


def guess_value(text: str) -> JSON:
    """A value with no schema: its JSON reading when it parses (and is finite), else the text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, float) and not math.isfinite(value):
        return text
    return value


_MISSING: Final = object()


def _read_as(kind: str, text: str, *, alone: bool) -> JSON:
    """``text`` read as ``kind``, or `_MISSING` if it is not one."""
    if kind == "string":
        return text
    folded = text.strip().lower()
    if kind == "null":
        return None if folded == "null" or (alone and not folded) else _MISSING
    if kind == "boolean":
        if folded in _TRUE:
            return True
        return False if folded in _FALSE else _MISSING
    try:
        value = json.loads(text)
    except ValueError:
        return _MISSING
    if kind == "integer":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
        return _MISSING
    if kind == "number":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return value if isinstance(value, float) and math.isfinite(value) else _MISSING
    wanted = list if kind == "array" else dict
    return value if isinstance(value, wanted) else _MISSING


def convert_value(name: str, text: str, kinds: frozenset[str] | None) -> JSON:
    """One ``KEY=VALUE`` value, read as one of ``kinds`` (see the module's rules).

    Raises:
        ArgumentValueError: The text is none of ``kinds``.
    """
    if kinds is None:
        return guess_value(text)
    alone = len(kinds) == 1
    for kind in KINDS:
        if kind in kinds:
            value = _read_as(kind, text, alone=alone)
            if value is not _MISSING:
                return value
    raise ArgumentValueError(name, text, kinds)


def convert_arguments(pairs: Mapping[str, str], input_schema: JSON) -> dict[str, JSON]:
    """The ``KEY=VALUE`` words of a call, each read by its property in the tool's input schema.

    Args:
        pairs: Each argument's name and its value as typed.
        input_schema: The tool's ``inputSchema`` (anything: a schema that is
            not an object with ``properties`` says nothing, and every value is
            read as JSON when it parses).

    Raises:
        ArgumentValueError: A value does not fit its declared type (the
            first such, in the order given).
    """
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    if not isinstance(properties, dict):
        properties = {}
    out: dict[str, JSON] = {}
    for name, text in pairs.items():
        schema = properties.get(name)
        kinds = argument_kinds(schema, input_schema) if schema is not None else None
        out[name] = convert_value(name, text, kinds)
    return out


# ----------------------------------------------------------------- argument names


class UnknownArgument:
    """An argument name the tool's input schema does not know.

    Attributes:
        name: The name given.
        close: The known names closest to it (`difflib`), closest first.
        forbidden: Whether the schema forbids names it does not know
            (``additionalProperties: false``); otherwise it says nothing
            about them, which JSON Schema takes as allowing them.
    """

    def __init__(self, name: str, close: list[str], *, forbidden: bool) -> None:
        self.name = name
        self.close = close
        self.forbidden = forbidden

    def __repr__(self) -> str:
        return f"UnknownArgument({self.name!r}, {self.close!r}, forbidden={self.forbidden})"

    def describe(self, known: Iterable[str]) -> str:
        """``'duraton' (did you mean 'duration'?)``, or with the names known when none is close."""
        if self.close:
            return f"{self.name!r} (did you mean {' or '.join(map(repr, self.close))}?)"
        names = sorted(known)
        return (
            f"{self.name!r} (its arguments: {', '.join(names)})"
            if names
            else f"{self.name!r} (it takes none)"
        )


def known_names(input_schema: JSON) -> list[str]:
    """The argument names a tool's input schema declares (its ``properties``)."""
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    return [name for name in properties if isinstance(name, str)] if isinstance(properties, dict) else []


def _extras(input_schema: dict[str, JSON]) -> str:
    """What the schema says of names it does not declare: ``forbidden``, ``allowed`` or ``unsaid``."""
    extra = input_schema.get("additionalProperties", _MISSING)
    if extra is False:
        return "forbidden"
    if extra is not _MISSING:
        return "allowed"  # true, or a schema every other name must fit
    if input_schema.get("unevaluatedProperties", _MISSING) is False:
        return "forbidden"
    if not isinstance(input_schema.get("properties"), dict) or not input_schema["properties"]:
        return "allowed"  # it names no argument: it says nothing of names
    return "unsaid"


def _matches_pattern(name: str, patterns: JSON) -> bool:
    if not isinstance(patterns, dict):
        return False
    for pattern in patterns:
        try:
            if isinstance(pattern, str) and re.search(pattern, name):
                return True
        except re.error:
            continue
    return False


def unknown_arguments(names: Iterable[str], input_schema: JSON) -> list[UnknownArgument]:
    """The names the tool's input schema does not know, each with the known names closest to it.

    Empty when the schema allows other names (``additionalProperties``
    true or a schema) or is not an object schema at all. Each
    `UnknownArgument` says whether the schema forbids it (see the module's
    rules).
    """
    if not isinstance(input_schema, dict):
        return []
    extras = _extras(input_schema)
    if extras == "allowed":
        return []
    known = known_names(input_schema)
    patterns = input_schema.get("patternProperties")
    found: list[UnknownArgument] = []
    for name in names:
        if name in known or _matches_pattern(name, patterns):
            continue
        import difflib  # only to name what was meant, after a mistake

        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        found.append(UnknownArgument(name, close, forbidden=extras == "forbidden"))
    return found
