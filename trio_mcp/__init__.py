"""trio_mcp: a Trio-native client for the Model Context Protocol.

The package holds the openers, the targets, the options, the client and the
session, server groups, configuration files and the errors; the protocol's
types (the models) are in `trio_mcp.types`. The exceptions are imported
with the package; everything else on first use, so that a program that only
needs part of the package, such as the bundled demo server, starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

from . import _errors, _public
from ._errors import (
    AuthRequired as AuthRequired,
    ConfigError as ConfigError,
    ConnectionFailed as ConnectionFailed,
    HTTPError as HTTPError,
    InputRequestFailed as InputRequestFailed,
    MCPError as MCPError,
    MessageTooLarge as MessageTooLarge,
    NotSupported as NotSupported,
    OutputValidationError as OutputValidationError,
    ProtocolError as ProtocolError,
    RpcError as RpcError,
    ServerBusy as ServerBusy,
    ServerGone as ServerGone,
    SessionExpired as SessionExpired,
    SpawnFailed as SpawnFailed,
    TaskCancelled as TaskCancelled,
    TaskError as TaskError,
    TaskFailed as TaskFailed,
    TaskGone as TaskGone,
    TransportClosed as TransportClosed,
    TrioMCPInternalError as TrioMCPInternalError,
    UnknownName as UnknownName,
    VersionMismatch as VersionMismatch,
)

if TYPE_CHECKING:
    from ._client import (
        Client as Client,
        Pages as Pages,
        Subscription as Subscription,
        ToolTask as ToolTask,
    )
    from ._config import (
        ConfigSource as ConfigSource,
        DiscoveredConfig as DiscoveredConfig,
        LoadedConfig as LoadedConfig,
        ServerSpec as ServerSpec,
        discover_configs as discover_configs,
        load_config as load_config,
        parse_config as parse_config,
    )
    from ._core.tasks import (
        Task as Task,
        TaskRef as TaskRef,
    )
    from ._group import (
        Listed as Listed,
        RestartPolicy as RestartPolicy,
        ServerEvent as ServerEvent,
        ServerGroup as ServerGroup,
        ServerStatus as ServerStatus,
        connect_servers as connect_servers,
        open_server as open_server,
        open_servers as open_servers,
    )
    from ._open import (
        connect_client as connect_client,
        connect_session as connect_session,
        open_client as open_client,
        open_http_client as open_http_client,
        open_session as open_session,
        open_stdio_client as open_stdio_client,
    )
    from ._options import (
        ClientOptions as ClientOptions,
        SessionOptions as SessionOptions,
    )
    from ._session import (
        NotificationStream as NotificationStream,
        RequestTimeout as RequestTimeout,
        Session as Session,
        SessionStatistics as SessionStatistics,
    )
    from ._targets import (
        HTTPTarget as HTTPTarget,
        ProcessTarget as ProcessTarget,
        StreamTarget as StreamTarget,
        Target as Target,
    )

from ._version import __version__ as __version__

#: Where each name that is imported on first use lives (`trio_mcp._public`).
_LAZY: Final = _public.ROOT

__all__ = sorted([*_errors.__all__, *_LAZY])


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is not None:
        # The module's own `publish` has given its names their public module.
        value = getattr(importlib.import_module(f"trio_mcp.{home}"), name)
        globals()[name] = value
        return value
    if name == "types":
        return importlib.import_module("trio_mcp.types")
    if name in _public.TYPES:
        # Kept for a deprecation period: the models moved to trio_mcp.types.
        import warnings

        warnings.warn(
            f"trio_mcp.{name} is deprecated: the protocol's types moved to trio_mcp.types,"
            f" use trio_mcp.types.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("trio_mcp.types"), name)
    raise AttributeError(f"module 'trio_mcp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "types"})
