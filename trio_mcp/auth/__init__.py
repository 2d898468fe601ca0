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
from ._redirect import (
    HeadlessRedirect as HeadlessRedirect,
    LoopbackRedirect as LoopbackRedirect,
    RedirectError as RedirectError,
)
from ._storage import FileTokenStorage as FileTokenStorage, StorageError as StorageError

__all__ = [
    "ClientInfo",
    "FileTokenStorage",
    "HeadlessRedirect",
    "LoopbackRedirect",
    "MemoryTokenStorage",
    "PendingRedirect",
    "RedirectError",
    "RedirectHandler",
    "StorageError",
    "TokenStorage",
    "Tokens",
]

# Tracebacks, reprs and the docs name them trio_mcp.auth.X, not the private
# module each happens to live in.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
