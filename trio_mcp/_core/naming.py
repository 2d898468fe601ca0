"""The names a group gives its servers' tools and prompts: unique, stable, and accepted by LLM APIs.

Pure: no Trio, no I/O. The identity of a tool is the pair (server, tool);
`exposed_name` turns the pair into one name that matches
``^[a-zA-Z0-9_-]{1,64}$`` (what the OpenAI, Anthropic and Bedrock APIs
accept). The group keeps the reverse map: a name is never split on its
separator to find the server.

The rule, deterministic and independent of which other servers exist:

* A *plain* pair gives ``SERVER__TOOL``: the server name is made of
  letters, digits, ``-`` and single ``_`` between them (no ``__``, no ``_``
  at either end), the tool name of letters, digits, ``_`` and ``-``, and the
  whole fits in 64 characters. Two different plain pairs never give the
  same name: the first ``__`` of the name ends the server's part.
* Any other pair gives its sanitized form (each other character becomes
  ``_``), cut to 55 characters, then ``_`` and 8 hexadecimal digits of the
  SHA-256 of ``server + "\\0" + tool``: still deterministic, and unique
  unless two hashes collide.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_LENGTH", "SEPARATOR", "exposed_name", "is_valid_name"]

SEPARATOR = "__"
"""Between the server's name and the tool's."""

MAX_LENGTH = 64
"""The longest name LLM APIs accept."""

_DIGITS = 8
_PLAIN_SERVER = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*\Z")
_PLAIN_ITEM = re.compile(r"[A-Za-z0-9_-]+\Z")
_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_OTHER = re.compile(r"[^A-Za-z0-9_-]")


def is_valid_name(name: str) -> bool:
    """Whether ``name`` matches ``^[a-zA-Z0-9_-]{1,64}$``."""
    return _VALID.match(name) is not None


def exposed_name(server: str, item: str) -> str:
    """The group-wide name of the tool (or prompt) ``item`` of ``server``."""
    plain = f"{server}{SEPARATOR}{item}"
    if len(plain) <= MAX_LENGTH and _PLAIN_SERVER.match(server) and _PLAIN_ITEM.match(item):
        return plain
    digest = hashlib.sha256(f"{server}\0{item}".encode("utf-8", "surrogatepass")).hexdigest()[:_DIGITS]
    head = _OTHER.sub("_", server) + SEPARATOR + _OTHER.sub("_", item)
    return f"{head[: MAX_LENGTH - _DIGITS - 1]}_{digest}"
