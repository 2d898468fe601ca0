"""MCP authorization (OAuth 2.1) for remote servers.

`OAuth` logs a user in (authorization code with PKCE); `ClientCredentials`,
`JWTBearer` and `EnterpriseManaged` obtain tokens without a browser. Each is an `httpx2.Auth`: give it
to a `trio_mcp.HTTPTarget` as ``auth=``. Registrations and tokens live
in a `TokenStorage`; a `RedirectHandler` takes the user through a login.

Signing (``private_key_jwt``, DPoP) needs the ``auth`` extra
(``pip install trio-mcp[auth]``), imported only when a flow signs.
"""

from __future__ import annotations

from .._errors import (
    AuthorizationFailed as AuthorizationFailed,
    RedirectError as RedirectError,
    StorageError as StorageError,
)
from ._flow import (
    ClientCredentials as ClientCredentials,
    EnterpriseManaged as EnterpriseManaged,
    JWTBearer as JWTBearer,
    OAuth as OAuth,
)
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
)
from ._storage import FileTokenStorage as FileTokenStorage

__all__ = [
    "AuthorizationFailed",
    "ClientCredentials",
    "ClientInfo",
    "EnterpriseManaged",
    "FileTokenStorage",
    "HeadlessRedirect",
    "JWTBearer",
    "LoopbackRedirect",
    "MemoryTokenStorage",
    "OAuth",
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
