"""trio_mcp: a Trio-native client for the Model Context Protocol over stdio."""

from ._errors import (
    MCPError as MCPError,
    MessageTooLarge as MessageTooLarge,
    ProtocolError as ProtocolError,
    RpcError as RpcError,
    ServerGone as ServerGone,
    SpawnFailed as SpawnFailed,
    TransportClosed as TransportClosed,
)
from ._transport import (
    NotificationStream as NotificationStream,
    RequestTimeout as RequestTimeout,
    StdioTransport as StdioTransport,
    TransportStatistics as TransportStatistics,
    TrioMCPInternalError as TrioMCPInternalError,
    open_stdio_transport as open_stdio_transport,
)
from ._version import __version__ as __version__

__all__ = [
    "MCPError",
    "MessageTooLarge",
    "NotificationStream",
    "ProtocolError",
    "RequestTimeout",
    "RpcError",
    "ServerGone",
    "SpawnFailed",
    "StdioTransport",
    "TransportClosed",
    "TransportStatistics",
    "TrioMCPInternalError",
    "open_stdio_transport",
]


def _fixup_module_metadata() -> None:
    # Tracebacks, reprs and the docs say ``trio_mcp.ServerGone``, not the
    # private module the class happens to live in (as trio does).
    for name in __all__:
        obj = globals()[name]
        if getattr(obj, "__module__", "").startswith("trio_mcp."):
            obj.__module__ = "trio_mcp"


_fixup_module_metadata()
del _fixup_module_metadata
