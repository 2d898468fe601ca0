"""Client extensions: a typed plugin point for what MCP grows beyond its core.

An `Extension` names itself (``prefix/name``), carries its settings, and may
claim result types (`ResultClaim`), observe notifications
(`NotificationBinding`) and answer server requests (`RequestBinding`). Give
extensions to a client in `trio_mcp.ClientOptions.extensions`; the client
declares each under ``capabilities.extensions``: in ``initialize`` in the
initialize era, and on every 2026-07-28 request that needs it, listings
included.

MCP Apps, the first extension built on it, is in `trio_mcp.extensions.apps`.
"""

from __future__ import annotations

from .._core.extensions import (
    ClaimContext as ClaimContext,
    Extension as Extension,
    NotificationBinding as NotificationBinding,
    RequestBinding as RequestBinding,
    ResultClaim as ResultClaim,
    check_identifier as check_identifier,
)

__all__ = [
    "ClaimContext",
    "Extension",
    "NotificationBinding",
    "RequestBinding",
    "ResultClaim",
    "check_identifier",
]

for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
