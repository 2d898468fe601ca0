"""The names a group gives its servers' tools and prompts: unique, stable, and accepted by LLM APIs.

Pure: no Trio, no I/O. The identity of a tool is the pair (server, tool);
`exposed_name` turns the pair into one name that matches
``^[a-zA-Z0-9_-]{1,64}$`` (what the OpenAI, Anthropic and Bedrock APIs
accept), and `assign_names` gives every pair of a catalogue its own name.
The group keeps the reverse map: a name is never split on its separator to
find the server.

The rule, deterministic and independent of which other servers exist:

* A *plain* pair gives ``SERVER__TOOL``: the server name is made of
  letters, digits, ``-`` and single ``_`` between them (no ``__``, no ``_``
  at either end), the tool name of letters, digits, ``_`` and ``-``, the
  whole fits in 64 characters, and it does not end as a hashed name does
  (``_`` and 8 lowercase hexadecimal digits). Two different plain pairs
  never give the same name: the first ``__`` of the name ends the server's
  part.
* Any other pair gives its *hashed* form: the sanitized pair (each other
  character becomes ``_``), cut to 55 characters, then ``_`` and 8
  hexadecimal digits of the SHA-256 of ``server + "\\0" + tool``.

A hashed name always ends with ``_`` and 8 hexadecimal digits and a plain
name never does, so the two kinds never meet. Two hashed names meet only
when 32 bits of two hashes do; `assign_names` then gives the later pair
the name of its next *salt* (the hash of ``server + "\\0" + tool + "\\0" +
salt``), so that within one catalogue no two pairs ever share a name.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["MAX_LENGTH", "SEPARATOR", "assign_names", "exposed_name", "is_hashed", "is_valid_name"]

SEPARATOR = "__"
"""Between the server's name and the tool's."""

MAX_LENGTH = 64
"""The longest name LLM APIs accept."""

_DIGITS = 8
_PLAIN_SERVER = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*\Z")
_PLAIN_ITEM = re.compile(r"[A-Za-z0-9_-]+\Z")
_HASHED_END = re.compile(r"_[0-9a-f]{8}\Z")
_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_OTHER = re.compile(r"[^A-Za-z0-9_-]")

Pair = tuple[str, str]


def is_valid_name(name: str) -> bool:
    """Whether ``name`` matches ``^[a-zA-Z0-9_-]{1,64}$``."""
    return _VALID.match(name) is not None


def is_hashed(name: str) -> bool:
    """Whether ``name`` has the form of a hashed name (ends with ``_`` and 8 hexadecimal digits)."""
    return _HASHED_END.search(name) is not None


def exposed_name(server: str, item: str, salt: int = 0) -> str:
    """The group-wide name of the tool (or prompt) ``item`` of ``server``.

    ``salt`` (for `assign_names`) picks another hashed name for a pair whose
    first one is taken; a plain pair ignores it.
    """
    plain = f"{server}{SEPARATOR}{item}"
    if (
        len(plain) <= MAX_LENGTH
        and _PLAIN_SERVER.match(server)
        and _PLAIN_ITEM.match(item)
        and not _HASHED_END.search(plain)
    ):
        return plain
    key = f"{server}\0{item}" if not salt else f"{server}\0{item}\0{salt}"
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGITS]
    head = _OTHER.sub("_", server) + SEPARATOR + _OTHER.sub("_", item)
    return f"{head[: MAX_LENGTH - _DIGITS - 1]}_{digest}"


def assign_names(
    pairs: Iterable[Pair], *, name: Callable[[str, str, int], str] = exposed_name
) -> dict[Pair, str]:
    """A name for each pair, none shared, in the order given (the first pair keeps a contested name).

    Each pair gets `exposed_name` of it, unless an earlier pair has that
    name already (two hashes met): then the first salt that gives a free
    name. A pair given twice keeps its first name.

    Args:
        pairs: The (server, item) pairs, earliest first (the group gives
            them in the configuration's order).
        name: The naming rule (for tests).
    """
    names: dict[Pair, str] = {}
    taken: set[str] = set()
    for pair in pairs:
        if pair in names:
            continue
        salt = 0
        exposed = name(pair[0], pair[1], salt)
        while exposed in taken:
            salt += 1
            again = name(pair[0], pair[1], salt)
            if again == exposed:
                # Never for exposed_name: a plain name is never taken twice.
                raise RuntimeError(
                    f"the naming rule gives {pair!r} the taken name {exposed!r} whatever the salt"
                )
            exposed = again
        names[pair] = exposed
        taken.add(exposed)
    return names
