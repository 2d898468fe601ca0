"""Typed models of MCP data, and their conversion to and from the wire.

The models (`trio_mcp._models.types`) are plain frozen attrs classes; the
wire format lives apart, in one cattrs converter (`trio_mcp._models.codec`)
built on first use. This package re-exports both: the model classes and the
unions, and the functions `structure`, `unstructure` and `to_wire`.
"""

from __future__ import annotations

from . import types
from .codec import (
    structure as structure,
    structure_tool_result as structure_tool_result,
    to_wire as to_wire,
    unstructure as unstructure,
)
from .types import *  # noqa: F403 - the names in types.__all__

__all__ = ["structure", "structure_tool_result", "to_wire", "unstructure"]
__all__ += types.__all__
