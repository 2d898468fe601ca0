"""The types of the Model Context Protocol: what a server sends and what the client answers.

Frozen attrs classes, one per definition of the MCP schema, with snake_case
attributes (``mime_type`` for the wire's ``mimeType``, ``meta`` for
``_meta``), and the unions `ContentBlock` and `ElicitRequestParams`. The
client returns them (`Client.call_tool` gives a `CallToolResult`) and its
hooks take and give them (an ``on_sampling`` hook answers
`CreateMessageParams` with a `CreateMessageResult`)::

    from trio_mcp.types import TextContent

    result = await client.call_tool("echo", {"text": "hi"})
    texts = [block.text for block in result.content if isinstance(block, TextContent)]

As ``mcp.types`` is for the official Python SDK. Importing this module loads
attrs and the classes, not the wire format (cattrs comes with the first
conversion).
"""

from __future__ import annotations

from ._models.types import (
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

__all__ = [
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
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
    "InputRequiredResult",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ListRootsResult",
    "ListToolsResult",
    "ModelHint",
    "ModelPreferences",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Resource",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "SamplingMessage",
    "ServerCapabilities",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolChoice",
    "ToolResultContent",
    "ToolUseContent",
    "UnknownContent",
]
