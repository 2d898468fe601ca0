"""MCP authorization (OAuth 2.1) for remote servers.

The types an application meets: the storage of registrations and tokens,
and the redirect handler that takes the user through a login.
"""

from __future__ import annotations

from ._protocols import (
    ClientInfo as ClientInfo,
    MemoryTokenStorage as MemoryTokenStorage,
    PendingRedirect as PendingRedirect,
    RedirectHandler as RedirectHandler,
    Tokens as Tokens,
    TokenStorage as TokenStorage,
)

__all__ = [
    "ClientInfo",
    "MemoryTokenStorage",
    "PendingRedirect",
    "RedirectHandler",
    "TokenStorage",
    "Tokens",
]
