"""trio_mcp: a Trio-native client for the Model Context Protocol over stdio."""

from ._errors import MCPError as MCPError
from ._errors import MessageTooLarge as MessageTooLarge
from ._errors import ProtocolError as ProtocolError
from ._errors import RpcError as RpcError
from ._errors import ServerGone as ServerGone
from ._errors import SpawnFailed as SpawnFailed
from ._errors import TransportClosed as TransportClosed
from ._transport import NotificationStream as NotificationStream
from ._transport import RequestTimeout as RequestTimeout
from ._transport import StdioTransport as StdioTransport
from ._transport import TransportStatistics as TransportStatistics
from ._transport import TrioMCPInternalError as TrioMCPInternalError
from ._transport import open_stdio_transport as open_stdio_transport
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
