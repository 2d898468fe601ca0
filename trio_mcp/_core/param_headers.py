"""Tool arguments mirrored into HTTP headers (``x-mcp-header``, SEP-2243), without I/O.

A 2026-07-28 server may mark a property of a tool's ``inputSchema`` with
``"x-mcp-header": "Region"``; a client then sends that argument of each
``tools/call`` again as the header ``Mcp-Param-Region``, so that gateways and
load balancers can route on it without reading the body. This module holds
the rules, as pure functions:

* `header_params`: the headers a tool's ``inputSchema`` designates, or
  `InvalidAnnotation` naming the rule an annotation breaks (a client drops
  such a tool from its listings: calling it could only fail);
* `screen_tools`: one listing's tools, the invalid ones set apart;
* `param_headers`: the ``Mcp-Param-*`` headers of one call's arguments.

The rules: an annotation is a non-empty HTTP token (RFC 9110: letters,
digits and ``!#$%&'*+-.^_`|~``), unique within the tool whatever its case,
on a property of type ``string``, ``integer`` or ``boolean`` (never
``number``) that is reached from the schema's root through ``properties``
alone (never under ``items``, ``anyOf``, ``oneOf``, ``allOf``, ``not``,
``if``/``then``/``else``, ``$ref`` or any other keyword). A value is sent as
a string as is, an integer in decimal, a boolean as ``true`` or ``false``;
a string that is not plain visible ASCII is sent as ``=?base64?...?=``; an
absent or null argument sends no header.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar

import attrs

__all__ = [
    "MAX_SAFE_INTEGER",
    "HeaderParam",
    "InvalidAnnotation",
    "header_params",
    "param_headers",
    "screen_tools",
]

#: The annotation keyword in a property's schema.
KEYWORD: Final = "x-mcp-header"
#: The prefix of every header this module makes.
PREFIX: Final = "Mcp-Param-"
#: Integers beyond this magnitude cannot be mirrored: JSON peers (JavaScript
#: among them) would not read the body's number as the header's.
MAX_SAFE_INTEGER: Final = 2**53 - 1

_TCHAR: Final = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_TYPES: Final = frozenset({"string", "integer", "boolean"})
#: Keywords whose values are subschemas (or lists or maps of them), other
#: than ``properties``: an annotation reached through one of them is misplaced.
_SUBSCHEMA_KEYWORDS: Final = frozenset(
    {
        "items",
        "prefixItems",
        "additionalItems",
        "contains",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "dependentSchemas",
        "dependencies",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "$defs",
        "definitions",
    }
)
#: Keywords whose value is a map of names to subschemas.
_SCHEMA_MAPS: Final = frozenset(
    {"patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions", "properties"}
)


@attrs.frozen
class HeaderParam:
    """One argument a tool's schema designates for a header."""

    header: str
    """The token ``T`` of ``"x-mcp-header": "T"``; the header is ``Mcp-Param-T``."""
    path: tuple[str, ...]
    """Where the argument is: property names from the root of the arguments."""
    type: str
    """``"string"``, ``"integer"`` or ``"boolean"``."""

    @property
    def name(self) -> str:
        """The header's name, ``Mcp-Param-<header>``."""
        return PREFIX + self.header


class InvalidAnnotation(ValueError):
    """An ``x-mcp-header`` annotation breaks a rule of SEP-2243.

    Attributes:
        rule: Which one: ``"not-empty"``, ``"charset"``, ``"unique"``,
            ``"primitive-only"`` or ``"placement"``.
        where: The property, as a path (``region``, ``options.region``), or
            the schema location of a misplaced annotation.
    """

    def __init__(self, rule: str, where: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.where = where


def _primitive_type(schema: Mapping[str, Any]) -> str | None:
    """The property's type if a header may carry it (a nullable one too), else `None`."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared if declared in _TYPES else None
    if isinstance(declared, list):
        kinds = [kind for kind in declared if kind != "null"]
        if len(kinds) == 1 and isinstance(kinds[0], str) and kinds[0] in _TYPES:
            return kinds[0]
    return None


def _check(annotation: object, schema: Mapping[str, Any], where: str) -> str:
    """Return the valid annotation of the property at ``where``, or raise `InvalidAnnotation`."""
    if not isinstance(annotation, str) or not annotation:
        raise InvalidAnnotation(
            "not-empty", where, f"x-mcp-header of {where} must be a non-empty string, not {annotation!r}"
        )
    if not set(annotation) <= _TCHAR:
        raise InvalidAnnotation(
            "charset",
            where,
            f"x-mcp-header {annotation!r} of {where} is not an HTTP token"
            " (letters, digits and !#$%&'*+-.^_`|~ only)",
        )
    if _primitive_type(schema) is None:
        raise InvalidAnnotation(
            "primitive-only",
            where,
            f"x-mcp-header {annotation!r} is on {where} of type {schema.get('type')!r}:"
            " only a string, integer or boolean property can be a header",
        )
    return annotation


def header_params(input_schema: object) -> tuple[HeaderParam, ...]:
    """Return the header parameters an ``inputSchema`` designates, in schema order.

    Raises:
        InvalidAnnotation: An annotation breaks a rule (the first one found).
    """
    if not isinstance(input_schema, Mapping):
        return ()
    found: list[HeaderParam] = []
    seen: dict[str, str] = {}
    # (schema, path of property names, reached through `properties` alone, location)
    stack: list[tuple[Any, tuple[str, ...], bool, str]] = [(input_schema, (), True, "the input schema")]
    while stack:
        schema, path, direct, location = stack.pop()
        if not isinstance(schema, Mapping):
            continue
        if KEYWORD in schema:
            if not path or not direct:
                raise InvalidAnnotation(
                    "placement",
                    location,
                    f"x-mcp-header at {location} is not on a property reached through `properties` alone",
                )
            where = ".".join(path)
            header = _check(schema[KEYWORD], schema, where)
            other = seen.get(header.lower())
            if other is not None:
                raise InvalidAnnotation(
                    "unique",
                    where,
                    f"x-mcp-header {header!r} of {where} repeats that of {other} (case aside)",
                )
            seen[header.lower()] = where
            primitive = _primitive_type(schema)
            assert primitive is not None
            found.append(HeaderParam(header, path, primitive))
        children: list[tuple[Any, tuple[str, ...], bool, str]] = []
        for keyword, value in schema.items():
            if keyword == "properties" and isinstance(value, Mapping):
                children.extend(
                    (child, (*path, str(name)), direct, f"{location}.properties.{name}")
                    for name, child in value.items()
                )
            elif keyword in _SCHEMA_MAPS and isinstance(value, Mapping):
                children.extend(
                    (child, path, False, f"{location}.{keyword}.{name}") for name, child in value.items()
                )
            elif keyword in _SUBSCHEMA_KEYWORDS and isinstance(value, list):
                children.extend(
                    (child, path, False, f"{location}.{keyword}[{index}]")
                    for index, child in enumerate(value)
                )
            elif keyword in _SUBSCHEMA_KEYWORDS:
                children.append((value, path, False, f"{location}.{keyword}"))
        # Depth first, in the schema's own order.
        stack.extend(reversed(children))
    return tuple(found)


T = TypeVar("T")


def screen_tools(
    tools: Iterable[T], schema_of: Callable[[T], tuple[str, object]]
) -> tuple[list[T], dict[str, tuple[HeaderParam, ...]], list[tuple[T, InvalidAnnotation]]]:
    """Split one listing's tools by their annotations.

    Args:
        tools: The tools, in the listing's order.
        schema_of: ``(tool) -> (name, inputSchema)``.

    Returns:
        The valid tools (in order), the header parameters of each valid tool
        that has some (by name), and each invalid tool with why.
    """
    kept: list[T] = []
    params: dict[str, tuple[HeaderParam, ...]] = {}
    dropped: list[tuple[T, InvalidAnnotation]] = []
    for tool in tools:
        name, schema = schema_of(tool)
        try:
            found = header_params(schema)
        except InvalidAnnotation as exc:
            dropped.append((tool, exc))
            continue
        kept.append(tool)
        if found:
            params[name] = found
    return kept, params, dropped


def _header_text(param: HeaderParam, value: object) -> str:
    where = ".".join(param.path)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(
                f"argument {where} = {value} goes in header {param.name}, and is beyond ±(2**53 - 1)"
            )
        return str(value)
    if isinstance(value, str):
        # Only a string goes through HTTP's header encoding: the HTTP wire
        # (and the email parser behind it) stays out of a stdio client.
        from .http_wire import header_value

        return header_value(value)
    raise ValueError(
        f"argument {where} goes in header {param.name}, so it must be a string, an integer or a boolean,"
        f" not {type(value).__name__}"
    )


def param_headers(params: Sequence[HeaderParam], arguments: object) -> list[tuple[str, str]]:
    """The ``Mcp-Param-*`` headers of one call: ``[(name, value), ...]``.

    An argument that is absent or null sends no header.

    Raises:
        ValueError: A designated argument cannot be a header: an object, a
            list, a fraction, or an integer beyond ±(2**53 - 1).
    """
    headers: list[tuple[str, str]] = []
    for param in params:
        value: object = arguments
        for key in param.path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is not None:
            headers.append((param.name, _header_text(param, value)))
    return headers
