"""What an `trio_mcp.HTTPTarget` accepts as its HTTP client and its auth: objects of httpx2.

httpx2 is the maintained line of httpx that the MCP ecosystem moved to (the
official Python SDK requires it). Its classes are not the old ``httpx``
line's: an ``httpx.AsyncClient`` or ``httpx.Auth`` handed over by mistake
would fail later, deep in a request, with an error that names neither. It
is refused here, as the target is built, with a `TypeError` that says what
to use instead. httpx2 is imported only when an object is checked (the
stdio path never imports it).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MIGRATION", "require_httpx2"]

#: Where the move from httpx to httpx2 is explained.
MIGRATION: Final = (
    "trio_mcp works on httpx2, the maintained line of httpx that the MCP ecosystem uses "
    "(pip install httpx2; import httpx2 and make the same object from it; "
    "see 'From httpx to httpx2' in the HTTP documentation)"
)


def _old_line(value: object) -> str | None:
    """The name of the old ``httpx`` line's class in ``value``'s ancestry, if any."""
    for cls in type(value).__mro__:
        package = cls.__module__.partition(".")[0]
        if package in ("httpx", "httpcore"):
            return f"{package}.{cls.__qualname__}"
    return None


def require_httpx2(value: Any, field: str, kind: str) -> None:
    """Check that ``value`` (for the target's ``field``) is an ``httpx2.<kind>``.

    Args:
        value: The object given.
        field: The target's parameter, as messages name it.
        kind: ``"AsyncClient"`` or ``"Auth"``.

    Raises:
        TypeError: ``value`` is an object of the old ``httpx`` line, or not
            an ``httpx2.<kind>`` at all.
    """
    old = _old_line(value)
    if old is not None:
        raise TypeError(f"{field} is an {old} of the old httpx line, not an httpx2.{kind}: {MIGRATION}")
    import httpx2

    if not isinstance(value, getattr(httpx2, kind)):
        raise TypeError(f"{field} must be an httpx2.{kind}, not {type(value).__qualname__}")
