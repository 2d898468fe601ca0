"""Structured tool output checked against the tool's ``outputSchema``: the pure part.

Two pieces, neither of which does I/O:

* `compile_schema` turns one ``outputSchema`` into a `Check` (or says why
  it cannot): the JSON Schema validator sits behind this one function, so
  that it can be swapped. It is `jsonschema-rs`_, a compiled validator of
  JSON Schema 2020-12 (the protocol's default dialect; a schema's
  ``$schema`` may name draft 4, 6, 7 or 2019-09), installed with the
  ``validation`` extra. It never fetches a remote ``$ref``: a schema that
  needs one is reported as unusable.
* `OutputSchemas` keeps what one client knows: the output schema of each
  tool of the latest listing, each compiled at most once per listing, on
  the first call that needs it; a new listing or a list change forgets the
  old ones.

.. _jsonschema-rs: https://pypi.org/project/jsonschema-rs/
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "MAX_SCHEMA_NODES",
    "MODES",
    "Check",
    "OutputSchemas",
    "Verdict",
    "compile_schema",
    "json_path",
    "validator_available",
]

JSON: TypeAlias = Any

#: The ``validate_output`` modes, the default first.
MODES: Final = ("warn", "strict", "off")

#: The most values (objects, arrays and scalars) an output schema may have
#: before it is reported as too large to compile.
MAX_SCHEMA_NODES: Final = 20_000

_backend: Any = None


def validator_available() -> bool:
    """Whether the validator (the ``validation`` extra) is installed."""
    global _backend
    if _backend is None:
        try:
            _backend = importlib.import_module("jsonschema_rs")
        except ImportError:
            _backend = False
    return _backend is not False


def json_path(parts: Iterable[str | int]) -> str:
    """A location in a JSON value, as ``$``, ``$.a``, ``$.a[1]`` or ``$["odd key"]``."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part.isidentifier():
            out.append(f".{part}")
        else:
            escaped = part.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'["{escaped}"]')
    return "".join(out)


def _refuse_remote(uri: str) -> JSON:
    raise ValueError(f"remote $ref {uri!r} is not fetched")


def _count_nodes(schema: JSON, limit: int) -> int:
    """The number of values in ``schema``, counting no further than ``limit + 1``."""
    count = 0
    stack = [schema]
    while stack:
        value = stack.pop()
        count += 1
        if count > limit:
            break
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count


class Check:
    """One compiled output schema."""

    __slots__ = ("_validator",)

    def __init__(self, validator: Any) -> None:
        self._validator = validator

    def first_error(self, instance: JSON) -> tuple[str, str] | None:
        """The first place ``instance`` breaks the schema, as ``(json_path, message)``, or `None`."""
        validator = self._validator
        if validator.is_valid(instance):
            return None
        for error in validator.iter_errors(instance):
            return json_path(error.instance_path), str(error.message)
        return "$", "does not match the schema"  # pragma: no cover - is_valid said it fails


def compile_schema(schema: JSON) -> Check | str:
    """Compile one ``outputSchema``.

    Returns:
        The `Check`, or a sentence saying why the schema cannot be used (it
        is not a JSON Schema, is too large, needs a remote ``$ref``, names an
        unknown dialect). Never raises for what a server sent.

    Raises:
        RuntimeError: The validator is not installed (see
            `validator_available`).
    """
    if not validator_available():
        raise RuntimeError("the validation extra (jsonschema-rs) is not installed")
    if not isinstance(schema, dict | bool):
        return f"it is not a JSON Schema (a {type(schema).__name__}, not an object)"
    nodes = _count_nodes(schema, MAX_SCHEMA_NODES)
    if nodes > MAX_SCHEMA_NODES:
        return f"it is too large to compile (more than {MAX_SCHEMA_NODES} values)"
    try:
        validator = _backend.validator_for(schema, retriever=_refuse_remote)
    except Exception as exc:  # the validator's own errors, whatever their class
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"it is not a usable JSON Schema: {first_line}"
    return Check(validator)


# ------------------------------------------------------------------ the book


Verdict: TypeAlias = tuple[Literal["ok", "unlisted", "unusable", "missing", "mismatch"], str, str]
"""What `OutputSchemas.judge` found: ``(kind, json_path, message)``.

``ok``: nothing to report (no schema, or the value matches); ``unlisted``:
the tool is not in the listing; ``unusable``: the schema cannot be compiled
(the message says why); ``missing``: the schema exists but the result has no
structured content; ``mismatch``: the value breaks the schema at the path.
"""

_UNCOMPILED: Final = object()


class OutputSchemas:
    """The output schemas of one client's latest tool listing.

    A listing is the first page of ``tools/list`` and the pages that follow
    it; a new first page (not the cached one seen again) starts a new
    listing. Each schema is compiled once per listing, when a result first
    needs it; an unusable schema is reported once per listing.
    """

    def __init__(self) -> None:
        self._schemas: dict[str, JSON] = {}
        self._compiled: dict[str, Any] = {}
        self._first_page: object = None
        self.known = False
        """Whether a listing is known (one was seen and not forgotten since)."""
        self.generation = 0
        """Counts listings and list changes, so that a report can be made once per listing."""

    def saw_page(self, page: object, tools: Iterable[Any], *, first: bool) -> None:
        """Take one page of a tool listing (its `Tool` objects, each with ``name`` and ``output_schema``).

        Args:
            page: The page object itself; the same first page seen again (a
                cache hit) changes nothing.
            tools: The page's tools.
            first: Whether this is the first page of a listing (no cursor).
        """
        if first:
            if page is self._first_page and self.known:
                return
            self._first_page = page
            self._schemas = {}
            self._compiled = {}
            self.generation += 1
        elif not self.known:
            # A later page alone, without its first: still a listing, partial.
            self.generation += 1
        self.known = True
        for tool in tools:
            self._schemas[tool.name] = tool.output_schema
            self._compiled.pop(tool.name, None)

    def forget(self) -> None:
        """Forget the listing (the server said its tools changed)."""
        self._schemas = {}
        self._compiled = {}
        self._first_page = None
        self.known = False
        self.generation += 1

    def declares(self, name: str) -> bool:
        """Whether the listing gives tool ``name`` an output schema."""
        return self._schemas.get(name) is not None

    def judge(self, name: str, structured: JSON, *, present: bool) -> Verdict:
        """Check one result's structured content against the tool's output schema.

        Args:
            name: The tool's name.
            structured: The result's ``structuredContent``.
            present: Whether the result had ``structuredContent`` at all.
        """
        if name not in self._schemas:
            return ("unlisted", "", "") if self.known else ("ok", "", "")
        schema = self._schemas[name]
        if schema is None:
            return "ok", "", ""
        compiled = self._compiled.get(name, _UNCOMPILED)
        if compiled is _UNCOMPILED:
            compiled = self._compiled[name] = compile_schema(schema)
        if isinstance(compiled, str):
            return "unusable", "", compiled
        if not present:
            return "missing", "$", "the tool declared an outputSchema but the result has no structuredContent"
        found = compiled.first_error(structured)
        if found is None:
            return "ok", "", ""
        return "mismatch", found[0], found[1]
