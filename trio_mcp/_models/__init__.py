"""Typed models of MCP data, and their conversion to and from the wire.

The models (`trio_mcp._models.types`, public as `trio_mcp.types`) are plain
frozen attrs classes; the wire format lives apart, in one cattrs converter
(`trio_mcp._models.codec`). This package re-exports both: the model classes
and the unions, and the functions `structure`, `structure_tool_result`,
`unstructure` and `to_wire`. The codec module is imported when one of those
is first asked for, so that the models, and the options and targets that
name them, come without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import types
from .types import *  # noqa: F403 - the names in types.__all__

if TYPE_CHECKING:
    from .codec import (
        structure as structure,
        structure_tool_result as structure_tool_result,
        to_wire as to_wire,
        unstructure as unstructure,
    )

_CODEC = ("structure", "structure_tool_result", "to_wire", "unstructure")

__all__ = [*_CODEC]
__all__ += types.__all__


def __getattr__(name: str) -> Any:
    if name not in _CODEC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.codec"), name)
    globals()[name] = value
    return value
