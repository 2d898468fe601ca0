"""A tool of a configuration's servers, named as the catalogue names it, or as ``SERVER.TOOL``.

A server group gives each of its servers' tools one name that a language
model accepts (`trio_mcp.exposed_name`: ``SERVER__TOOL``, or a hashed form
for names that do not fit); ``trio-mcp tools`` with ``--config`` lists the
tools by that name, and ``call`` takes it. ``SERVER.TOOL`` (the server's
name, a dot, the tool's own name) is taken too. The two forms never meet:
a catalogue name has no dot.

Pure: no Trio, no I/O.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from .._core.naming import SEPARATOR, exposed_name, is_hashed

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["find_server", "hashed_head"]

_OTHER: Final = re.compile(r"[^A-Za-z0-9_-]")
#: The length of a hashed name's head (the name less ``_`` and 8 digits).
_HEAD: Final = 55


def hashed_head(server: str) -> str:
    """What a hashed catalogue name of ``server``'s tools starts with (as far as it is kept)."""
    return (_OTHER.sub("_", server) + SEPARATOR)[:_HEAD]


def find_server(target: str, servers: Sequence[str]) -> tuple[str, str | None] | None:
    """The server a ``call`` target names, and the tool's own name when the target says it.

    ``SERVER.TOOL``: the longest server name followed by a dot, and the
    rest. A plain catalogue name ``SERVER__TOOL``: the server before the
    first ``__``, when the catalogue names its tool so. A hashed catalogue
    name: the one server whose names it may be, and `None` for the tool,
    to be found among the server's tools (`exposed_name` of each).
    `None` when the target names no server of ``servers``, or (a hashed
    name) could name several.
    """
    dotted = [name for name in servers if target.startswith(name + ".") and len(target) > len(name) + 1]
    if dotted:
        server = max(dotted, key=len)
        return server, target[len(server) + 1 :]
    if "." in target:
        return None
    server, separator, tool = target.partition(SEPARATOR)
    if separator and server in servers and exposed_name(server, tool) == target:
        return server, tool
    if not is_hashed(target):
        return None
    head = target[: -len("_00000000")]
    candidates = [name for name in servers if head.startswith(hashed_head(name))]
    if len(candidates) != 1:
        return None
    return candidates[0], None
