"""trio_mcp: a Trio-native client for the Model Context Protocol.

The exceptions are imported with the package; everything else (the client,
the models, the sessions and transports) on first use, so that a program
that only needs part of the package, such as the bundled demo server,
starts fast.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from . import _errors
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
        open_server as open_server,
        open_servers as open_servers,
    )
    from ._models import (
        Annotations as Annotations,
        AudioContent as AudioContent,
        BlobResourceContents as BlobResourceContents,
        CallToolResult as CallToolResult,
        CompleteResult as CompleteResult,
        Completion as Completion,
        ContentBlock as ContentBlock,
        CreateMessageParams as CreateMessageParams,
        CreateMessageResult as CreateMessageResult,
        DiscoverResult as DiscoverResult,
        ElicitFormParams as ElicitFormParams,
        ElicitRequestParams as ElicitRequestParams,
        ElicitResult as ElicitResult,
        ElicitUrlParams as ElicitUrlParams,
        EmbeddedResource as EmbeddedResource,
        GetPromptResult as GetPromptResult,
        Icon as Icon,
        ImageContent as ImageContent,
        Implementation as Implementation,
        InitializeResult as InitializeResult,
        InputRequest as InputRequest,
        InputRequiredResult as InputRequiredResult,
        ListPromptsResult as ListPromptsResult,
        ListResourcesResult as ListResourcesResult,
        ListResourceTemplatesResult as ListResourceTemplatesResult,
        ListRootsResult as ListRootsResult,
        ListToolsResult as ListToolsResult,
        ModelHint as ModelHint,
        ModelPreferences as ModelPreferences,
        Prompt as Prompt,
        PromptArgument as PromptArgument,
        PromptMessage as PromptMessage,
        ReadResourceResult as ReadResourceResult,
        Resource as Resource,
        ResourceLink as ResourceLink,
        ResourceTemplate as ResourceTemplate,
        Root as Root,
        SamplingMessage as SamplingMessage,
        ServerCapabilities as ServerCapabilities,
        TextContent as TextContent,
        TextResourceContents as TextResourceContents,
        Tool as Tool,
        ToolAnnotations as ToolAnnotations,
        ToolChoice as ToolChoice,
        ToolResultContent as ToolResultContent,
        ToolUseContent as ToolUseContent,
        UnknownContent as UnknownContent,
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

#: Where each name that is imported on first use lives.
_LAZY: dict[str, str] = {
    "Client": "_client",
    "Pages": "_client",
    "Subscription": "_client",
    "ToolTask": "_client",
    "Listed": "_group",
    "RestartPolicy": "_group",
    "ServerEvent": "_group",
    "ServerGroup": "_group",
    "ServerStatus": "_group",
    "open_server": "_group",
    "open_servers": "_group",
    "connect_client": "_open",
    "connect_session": "_open",
    "open_client": "_open",
    "open_http_client": "_open",
    "open_session": "_open",
    "open_stdio_client": "_open",
    "ClientOptions": "_options",
    "SessionOptions": "_options",
    "HTTPTarget": "_targets",
    "ProcessTarget": "_targets",
    "StreamTarget": "_targets",
    "Target": "_targets",
    "ConfigSource": "_config",
    "DiscoveredConfig": "_config",
    "LoadedConfig": "_config",
    "ServerSpec": "_config",
    "discover_configs": "_config",
    "load_config": "_config",
    "parse_config": "_config",
    "NotificationStream": "_session",
    "RequestTimeout": "_session",
    "Session": "_session",
    "SessionStatistics": "_session",
    "Annotations": "_models",
    "AudioContent": "_models",
    "BlobResourceContents": "_models",
    "CallToolResult": "_models",
    "CompleteResult": "_models",
    "Completion": "_models",
    "ContentBlock": "_models",
    "CreateMessageParams": "_models",
    "CreateMessageResult": "_models",
    "DiscoverResult": "_models",
    "ElicitFormParams": "_models",
    "ElicitRequestParams": "_models",
    "ElicitResult": "_models",
    "ElicitUrlParams": "_models",
    "EmbeddedResource": "_models",
    "GetPromptResult": "_models",
    "Icon": "_models",
    "ImageContent": "_models",
    "Implementation": "_models",
    "InitializeResult": "_models",
    "InputRequest": "_models",
    "InputRequiredResult": "_models",
    "ListPromptsResult": "_models",
    "ListResourcesResult": "_models",
    "ListResourceTemplatesResult": "_models",
    "ListRootsResult": "_models",
    "ListToolsResult": "_models",
    "ModelHint": "_models",
    "ModelPreferences": "_models",
    "Prompt": "_models",
    "PromptArgument": "_models",
    "PromptMessage": "_models",
    "ReadResourceResult": "_models",
    "Resource": "_models",
    "ResourceLink": "_models",
    "ResourceTemplate": "_models",
    "Root": "_models",
    "SamplingMessage": "_models",
    "ServerCapabilities": "_models",
    "Task": "_core.tasks",
    "TaskRef": "_core.tasks",
    "TextContent": "_models",
    "TextResourceContents": "_models",
    "Tool": "_models",
    "ToolAnnotations": "_models",
    "ToolChoice": "_models",
    "ToolResultContent": "_models",
    "ToolUseContent": "_models",
    "UnknownContent": "_models",
}


__all__ = sorted([*_errors.__all__, *_LAZY])

_published: set[str] = set()


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'trio_mcp' has no attribute {name!r}")
    importlib.import_module(f"trio_mcp.{module_name}")
    # The module may have imported others (the client imports the models):
    # publish everything loaded, so that annotations name trio_mcp.X.
    for loaded in sorted(set(_LAZY.values())):
        module = sys.modules.get(f"trio_mcp.{loaded}")
        if module is not None and loaded not in _published:
            _published.add(loaded)
            _publish(loaded, module)
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _publish(module_name: str, module: Any) -> None:
    # Tracebacks, reprs and the docs say ``trio_mcp.Client``, not the private
    # module the class happens to live in (as trio does). The models' string
    # annotations are resolved first, in their own module, since attrs and
    # cattrs would look them up in __module__.
    import attrs

    for name, home in _LAZY.items():
        if home != module_name:
            continue
        obj = getattr(module, name)
        if module_name == "_models" and isinstance(obj, type) and attrs.has(obj):
            attrs.resolve_types(obj)
        if getattr(obj, "__module__", "").startswith("trio_mcp."):
            obj.__module__ = "trio_mcp"
        globals()[name] = obj


for _name in _errors.__all__:
    getattr(_errors, _name).__module__ = "trio_mcp"
del _name
