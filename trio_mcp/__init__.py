"""trio_mcp: a Trio-native client for the Model Context Protocol over stdio."""

from ._client import (
    Client as Client,
    Pages as Pages,
    Subscription as Subscription,
    open_client as open_client,
    open_stdio_client as open_stdio_client,
)
from ._errors import (
    InputRequestFailed as InputRequestFailed,
    MCPError as MCPError,
    MessageTooLarge as MessageTooLarge,
    NotSupported as NotSupported,
    ProtocolError as ProtocolError,
    RpcError as RpcError,
    ServerGone as ServerGone,
    SpawnFailed as SpawnFailed,
    TransportClosed as TransportClosed,
    VersionMismatch as VersionMismatch,
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
    ToolResultContent as ToolResultContent,
    ToolUseContent as ToolUseContent,
    UnknownContent as UnknownContent,
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
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "Client",
    "CompleteResult",
    "Completion",
    "ContentBlock",
    "CreateMessageParams",
    "CreateMessageResult",
    "DiscoverResult",
    "ElicitFormParams",
    "ElicitRequestParams",
    "ElicitResult",
    "ElicitUrlParams",
    "EmbeddedResource",
    "GetPromptResult",
    "Icon",
    "ImageContent",
    "Implementation",
    "InitializeResult",
    "InputRequest",
    "InputRequestFailed",
    "InputRequiredResult",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ListRootsResult",
    "ListToolsResult",
    "MCPError",
    "MessageTooLarge",
    "ModelHint",
    "ModelPreferences",
    "NotSupported",
    "NotificationStream",
    "Pages",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ProtocolError",
    "ReadResourceResult",
    "RequestTimeout",
    "Resource",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "RpcError",
    "SamplingMessage",
    "ServerCapabilities",
    "ServerGone",
    "SpawnFailed",
    "StdioTransport",
    "Subscription",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolResultContent",
    "ToolUseContent",
    "TransportClosed",
    "TransportStatistics",
    "TrioMCPInternalError",
    "UnknownContent",
    "VersionMismatch",
    "open_client",
    "open_stdio_client",
    "open_stdio_transport",
]


def _fixup_module_metadata() -> None:
    # Tracebacks, reprs and the docs say ``trio_mcp.ServerGone``, not the
    # private module the class happens to live in (as trio does).
    # The models' string annotations are resolved first, in their own
    # module, since attrs and cattrs would look them up in __module__.
    import attrs

    for name in __all__:
        obj = globals()[name]
        if isinstance(obj, type) and attrs.has(obj):
            attrs.resolve_types(obj)
        if getattr(obj, "__module__", "").startswith("trio_mcp."):
            obj.__module__ = "trio_mcp"


_fixup_module_metadata()
del _fixup_module_metadata
