"""The official MCP schemas, for the tests that check messages against them.

The schemas are read from ``mcp-schema/`` in the folder beside the repository
(``../shared/mcp-schema``), or from the folder named by ``MCP_SCHEMA_DIR``.
Without them (or without jsonschema), `schema_problem` says why; each test
module decides what to skip.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

try:
    import jsonschema
except ImportError:  # pragma: no cover - a test dependency
    jsonschema = None

SCHEMA_DIR = Path(
    os.environ.get("MCP_SCHEMA_DIR", Path(__file__).resolve().parents[2] / "shared" / "mcp-schema")
)
NO_SCHEMAS = f"the MCP schemas are not at {SCHEMA_DIR} (set MCP_SCHEMA_DIR to their folder)"


def schema_problem() -> str | None:
    """Why messages cannot be checked against the schemas, or None when they can."""
    if jsonschema is None:
        return "jsonschema is not installed"
    if not SCHEMA_DIR.is_dir():
        return NO_SCHEMAS
    return None


@cache
def schema(revision: str) -> dict[str, Any]:
    """The whole schema of one revision (``2025-11-25``...)."""
    return json.loads((SCHEMA_DIR / f"{revision}.schema.json").read_text(encoding="utf-8"))


def defs(revision: str) -> dict[str, Any]:
    """The definitions of one revision (``$defs``, or ``definitions`` before 2025-11-25)."""
    found = schema(revision)
    return found["$defs"] if "$defs" in found else found["definitions"]


@cache
def validator(revision: str, definition: str) -> Any:
    """A jsonschema validator of one definition of one revision."""
    root = dict(schema(revision))
    root["$ref"] = f"#/{'$defs' if '$defs' in root else 'definitions'}/{definition}"
    return jsonschema.validators.validator_for(root)(root)


def method_of(definition: dict[str, Any]) -> str | None:
    """The method a request or notification definition fixes, if any."""
    method = definition.get("properties", {}).get("method", {})
    if "const" in method:
        return method["const"]
    enum = method.get("enum")
    return enum[0] if isinstance(enum, list) and len(enum) == 1 else None


def members(revision: str, union: str) -> list[str]:
    """The definitions a union such as ClientRequest stands for (itself if it is not a union)."""
    found = defs(revision).get(union)
    if found is None:
        return []
    refs = found.get("anyOf") or found.get("oneOf")
    if refs is None:
        return [union]
    return [ref["$ref"].rsplit("/", 1)[1] for ref in refs if "$ref" in ref]


def by_method(revision: str, union: str) -> dict[str | None, str]:
    """The members of a union such as ServerNotification, by method."""
    found = defs(revision)
    return {method_of(found[name]): name for name in members(revision, union)}


@cache
def result_definition(revision: str, method: str) -> str:
    """The definition of the result of a request of any direction (``ElicitResult``, ...)."""
    found = defs(revision)
    for name, definition in found.items():
        if name.endswith("Request") and method_of(definition) == method:
            result = name.removesuffix("Request") + "Result"
            if result in found:
                return result
    return "EmptyResult" if "EmptyResult" in found else "Result"


def envelope_definition(revision: str, kind: str) -> str:
    """A JSON-RPC envelope's definition: older revisions name two of them differently."""
    if kind in defs(revision):
        return kind
    return {"JSONRPCErrorResponse": "JSONRPCError", "JSONRPCResultResponse": "JSONRPCResponse"}[kind]
