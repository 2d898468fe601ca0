"""The typed models of MCP data: frozen attrs classes, nothing about the wire.

Each class mirrors one definition of the MCP schema, with snake_case
attributes (``mime_type`` for the wire's ``mimeType``, ``meta`` for
``_meta``). The wire format, and every rule about what a server may send,
lives in `trio_mcp._models.codec`, following attrs' own advice that a model
and its serialization format should not be coupled; this module imports
neither cattrs nor the codec (``tests/test_models.py`` checks it).

What holds for every class:

* Frozen, keyword-only, compared by value.
* An ``extra`` dict keeps the wire keys the class does not know, so that data
  from a newer revision survives a round trip. `UnknownContent` keeps a whole
  content block of a ``type`` this version does not know.
* A field whose wire value follows a rule of its own names the rule in its
  metadata, under ``WIRE_RULE``: ``"ttl"`` for ``ttlMs`` (a non-negative
  integer whatever arrives), ``"constant"`` for the ``mode`` of
  elicitations (only the default is accepted; missing means the default),
  and ``"server-info"`` for a ``DiscoverResult``'s ``server_info``, read from
  ``_meta`` rather than from a wire field. The codec carries the rules out.

The unions `ContentBlock` and `ElicitRequestParams` are type aliases; the
codec tells their members apart by the wire ``type`` and ``mode``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, TypeAlias

import attrs

from .._public import publish

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

#: Field metadata: the name of the wire rule the codec applies to the field.
WIRE_RULE: Final = "trio_mcp.wire_rule"


# --------------------------------------------------------------------- shared pieces


@attrs.frozen(kw_only=True)
class Annotations:
    """Display hints on content blocks and resources (wire ``Annotations``).

    Hints for the client's user interface and for the model; nothing here is
    binding.
    """

    audience: list[str] | None = None
    """The intended readers, ``"user"`` or ``"assistant"`` or both."""
    priority: float | None = None
    """Importance from 0 (optional) to 1 (effectively required)."""
    last_modified: str | None = None
    """When the data last changed, as an ISO 8601 string (wire ``lastModified``)."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class Icon:
    """An icon for a server, tool, prompt or resource (wire ``Icon``).

    Icons come from the server and are untrusted: fetch ``https:`` and
    ``data:`` sources only, without credentials, and treat SVG as active
    content.
    """

    src: str
    """The image's URI (``https:`` or ``data:``)."""
    mime_type: str | None = None
    """The image's media type, such as ``image/png`` (wire ``mimeType``)."""
    sizes: list[str] | None = None
    """Sizes the image suits, such as ``"48x48"`` or ``"any"``."""
    theme: str | None = None
    """The background the icon is designed for, ``"light"`` or ``"dark"``."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class Implementation:
    """The name and version of an MCP client or server (wire ``Implementation``).

    Self-declared and unverified: fit for display and logs, not for trust
    decisions.
    """

    name: str
    """The programmatic name."""
    version: str
    """The version string."""
    title: str | None = None
    """A human-readable name for display."""
    description: str | None = None
    """What the implementation is."""
    website_url: str | None = None
    """Its home page (wire ``websiteUrl``)."""
    icons: list[Icon] | None = None
    """Icons to show next to it."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class TextResourceContents:
    """The contents of a text resource (wire ``TextResourceContents``)."""

    uri: str
    """The resource's URI."""
    text: str
    """The text."""
    mime_type: str | None = None
    """The text's media type (wire ``mimeType``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class BlobResourceContents:
    """The contents of a binary resource (wire ``BlobResourceContents``)."""

    uri: str
    """The resource's URI."""
    blob: str
    """The bytes, base64-encoded (decode with ``base64.b64decode``)."""
    mime_type: str | None = None
    """The data's media type (wire ``mimeType``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


# --------------------------------------------------------------------- content blocks


@attrs.frozen(kw_only=True)
class TextContent:
    """A block of text (wire ``{"type": "text"}``)."""

    type: ClassVar[str] = "text"
    """The block's wire ``type``."""
    text: str
    """The text."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ImageContent:
    """An image (wire ``{"type": "image"}``)."""

    type: ClassVar[str] = "image"
    """The block's wire ``type``."""
    data: str
    """The image, base64-encoded."""
    mime_type: str
    """The image's media type, such as ``image/png`` (wire ``mimeType``)."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class AudioContent:
    """A piece of audio (wire ``{"type": "audio"}``)."""

    type: ClassVar[str] = "audio"
    """The block's wire ``type``."""
    data: str
    """The audio, base64-encoded."""
    mime_type: str
    """The audio's media type, such as ``audio/wav`` (wire ``mimeType``)."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ResourceLink:
    """A reference to a resource the client may read (wire ``{"type": "resource_link"}``).

    The linked resource need not appear in the server's resource list.
    """

    type: ClassVar[str] = "resource_link"
    """The block's wire ``type``."""
    uri: str
    """The resource's URI."""
    name: str
    """The resource's programmatic name."""
    title: str | None = None
    """A human-readable name for display."""
    description: str | None = None
    """What the resource is."""
    mime_type: str | None = None
    """The resource's media type (wire ``mimeType``)."""
    size: int | None = None
    """The size of the raw content in bytes, if known."""
    icons: list[Icon] | None = None
    """Icons to show next to it."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class EmbeddedResource:
    """The contents of a resource, inline (wire ``{"type": "resource"}``)."""

    type: ClassVar[str] = "resource"
    """The block's wire ``type``."""
    resource: TextResourceContents | BlobResourceContents
    """The contents, text or base64-encoded bytes."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ToolUseContent:
    """A model's request to call a tool, in sampling (wire ``{"type": "tool_use"}``)."""

    type: ClassVar[str] = "tool_use"
    """The block's wire ``type``."""
    id: str
    """Identifies this call; the matching `ToolResultContent` repeats it."""
    name: str
    """The tool to call."""
    input: dict[str, Any]
    """The arguments."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ToolResultContent:
    """The result of a tool call, in sampling (wire ``{"type": "tool_result"}``)."""

    type: ClassVar[str] = "tool_result"
    """The block's wire ``type``."""
    tool_use_id: str
    """The `ToolUseContent.id` this answers (wire ``toolUseId``)."""
    content: list[ContentBlock]
    """What the tool returned."""
    structured_content: Any = None
    """The tool's structured output, if any (wire ``structuredContent``)."""
    is_error: bool | None = None
    """Whether the call failed (wire ``isError``); `None` when not said."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class UnknownContent:
    """A content block of a ``type`` this version of trio_mcp does not know.

    Newer protocol revisions and extensions add block types; such a block is
    kept whole rather than treated as an error, and written back exactly as it
    came.
    """

    type: str
    """The block's wire ``type``."""
    raw: dict[str, Any]
    """The whole wire object, ``type`` included."""


ContentBlock: TypeAlias = (
    TextContent
    | ImageContent
    | AudioContent
    | ResourceLink
    | EmbeddedResource
    | ToolUseContent
    | ToolResultContent
    | UnknownContent
)
"""Any content block; the wire ``type`` decides the class."""

#: The content blocks of known ``type``, each with its ``type`` as a class attribute.
CONTENT_CLASSES: Final = (
    TextContent,
    ImageContent,
    AudioContent,
    ResourceLink,
    EmbeddedResource,
    ToolUseContent,
    ToolResultContent,
)


# --------------------------------------------------------------------- tools


@attrs.frozen(kw_only=True)
class ToolAnnotations:
    """Hints about a tool's behaviour (wire ``ToolAnnotations``).

    Hints are **untrusted** unless the server is: never base a safety
    decision on them. When absent, the spec's defaults are: not read-only,
    destructive, not idempotent, open-world.
    """

    title: str | None = None
    """A human-readable name for display."""
    read_only_hint: bool | None = None
    """The tool does not change its environment (wire ``readOnlyHint``)."""
    destructive_hint: bool | None = None
    """The tool may destroy data, rather than only add (wire ``destructiveHint``)."""
    idempotent_hint: bool | None = None
    """Repeating a call with the same arguments has no further effect (wire ``idempotentHint``)."""
    open_world_hint: bool | None = None
    """The tool reaches outside entities, such as the web (wire ``openWorldHint``)."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class Tool:
    """A tool the server offers (wire ``Tool``)."""

    name: str
    """The name to call it by."""
    input_schema: dict[str, Any]
    """The JSON Schema of its arguments (wire ``inputSchema``)."""
    title: str | None = None
    """A human-readable name for display; see `display_name`."""
    description: str | None = None
    """What the tool does, for the model."""
    output_schema: dict[str, Any] | None = None
    """The JSON Schema of `CallToolResult.structured_content`, if it has one (wire ``outputSchema``)."""
    annotations: ToolAnnotations | None = None
    """Untrusted hints about its behaviour."""
    icons: list[Icon] | None = None
    """Icons to show next to it."""
    execution: dict[str, Any] | None = None
    """Execution properties such as ``taskSupport`` (revision 2025-11-25)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""

    @property
    def display_name(self) -> str:
        """The name to show a person.

        The first that is set and not empty of `title`, the annotations' title
        and `name`.
        """
        if self.title:
            return self.title
        if self.annotations is not None and self.annotations.title:
            return self.annotations.title
        return self.name


@attrs.frozen(kw_only=True)
class CallToolResult:
    """The result of calling a tool (wire ``CallToolResult``).

    A tool that failed while running (bad input values, an API error, a
    business rule) says so with `is_error`; pass the content to the model so
    that it can correct itself. Failures to call the tool at all (an unknown
    tool, a malformed request) are JSON-RPC errors instead, raised as
    `~trio_mcp.RpcError`.
    """

    content: list[ContentBlock] = attrs.field(factory=list)
    """What the tool returned, for the model (empty when the server sent none)."""
    structured_content: Any = None
    """The tool's structured output, any JSON value, if it sent one (wire ``structuredContent``).

    It should match the tool's `Tool.output_schema`.
    """
    is_error: bool = False
    """Whether the tool failed (wire ``isError``, false when absent)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""

    @property
    def text(self) -> str:
        """The text of every `TextContent` block, joined with newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


@attrs.frozen(kw_only=True)
class ListToolsResult:
    """One page of the server's tools (wire ``ListToolsResult``)."""

    tools: list[Tool]
    """The tools on this page."""
    next_cursor: str | None = None
    """The cursor for the next page; `None` on the last page (wire ``nextCursor``)."""
    ttl_ms: int = attrs.field(default=0, metadata={WIRE_RULE: "ttl"})
    """How long, in milliseconds from receipt, the page stays fresh (wire ``ttlMs``; 0 when absent)."""
    cache_scope: str = "private"
    """``"public"`` (shareable across users) or ``"private"`` (wire ``cacheScope``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


# --------------------------------------------------------------------- prompts


@attrs.frozen(kw_only=True)
class PromptArgument:
    """An argument a prompt takes (wire ``PromptArgument``)."""

    name: str
    """The argument's name."""
    title: str | None = None
    """A human-readable name for display."""
    description: str | None = None
    """What the argument is for."""
    required: bool | None = None
    """Whether the prompt needs it."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class Prompt:
    """A prompt template the server offers (wire ``Prompt``)."""

    name: str
    """The name to get it by."""
    title: str | None = None
    """A human-readable name for display."""
    description: str | None = None
    """What the prompt is for."""
    arguments: list[PromptArgument] | None = None
    """The arguments it takes."""
    icons: list[Icon] | None = None
    """Icons to show next to it."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class PromptMessage:
    """One message of a prompt (wire ``PromptMessage``)."""

    role: str
    """``"user"`` or ``"assistant"``."""
    content: ContentBlock
    """The message's single content block."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class GetPromptResult:
    """A prompt, filled in with its arguments (wire ``GetPromptResult``)."""

    messages: list[PromptMessage]
    """The messages."""
    description: str | None = None
    """What the prompt is for."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ListPromptsResult:
    """One page of the server's prompts (wire ``ListPromptsResult``)."""

    prompts: list[Prompt]
    """The prompts on this page."""
    next_cursor: str | None = None
    """The cursor for the next page; `None` on the last page (wire ``nextCursor``)."""
    ttl_ms: int = attrs.field(default=0, metadata={WIRE_RULE: "ttl"})
    """How long, in milliseconds from receipt, the page stays fresh (wire ``ttlMs``; 0 when absent)."""
    cache_scope: str = "private"
    """``"public"`` (shareable across users) or ``"private"`` (wire ``cacheScope``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


# --------------------------------------------------------------------- resources


@attrs.frozen(kw_only=True)
class Resource:
    """A resource the server offers (wire ``Resource``)."""

    uri: str
    """The URI to read it by."""
    name: str
    """Its programmatic name."""
    title: str | None = None
    """A human-readable name for display."""
    description: str | None = None
    """What the resource is."""
    mime_type: str | None = None
    """Its media type (wire ``mimeType``)."""
    size: int | None = None
    """The size of the raw content in bytes, if known."""
    annotations: Annotations | None = None
    """Display hints."""
    icons: list[Icon] | None = None
    """Icons to show next to it."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ResourceTemplate:
    """A family of resources, named by an RFC 6570 URI template (wire ``ResourceTemplate``)."""

    uri_template: str
    """The URI template (wire ``uriTemplate``)."""
    name: str
    """Its programmatic name."""
    title: str | None = None
    """A human-readable name for display."""
    description: str | None = None
    """What the resources are."""
    mime_type: str | None = None
    """The media type of every matching resource, if they share one (wire ``mimeType``)."""
    annotations: Annotations | None = None
    """Display hints."""
    icons: list[Icon] | None = None
    """Icons to show next to it."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ReadResourceResult:
    """The contents of a resource (wire ``ReadResourceResult``).

    There may be several items (a directory, say); an empty list is a valid
    answer, not "not found".
    """

    contents: list[TextResourceContents | BlobResourceContents]
    """The items read."""
    ttl_ms: int = attrs.field(default=0, metadata={WIRE_RULE: "ttl"})
    """How long, in milliseconds from receipt, the contents stay fresh (wire ``ttlMs``; 0 when absent)."""
    cache_scope: str = "private"
    """``"public"`` (shareable across users) or ``"private"`` (wire ``cacheScope``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ListResourcesResult:
    """One page of the server's resources (wire ``ListResourcesResult``)."""

    resources: list[Resource]
    """The resources on this page."""
    next_cursor: str | None = None
    """The cursor for the next page; `None` on the last page (wire ``nextCursor``)."""
    ttl_ms: int = attrs.field(default=0, metadata={WIRE_RULE: "ttl"})
    """How long, in milliseconds from receipt, the page stays fresh (wire ``ttlMs``; 0 when absent)."""
    cache_scope: str = "private"
    """``"public"`` (shareable across users) or ``"private"`` (wire ``cacheScope``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ListResourceTemplatesResult:
    """One page of the server's resource templates (wire ``ListResourceTemplatesResult``)."""

    resource_templates: list[ResourceTemplate]
    """The templates on this page (wire ``resourceTemplates``)."""
    next_cursor: str | None = None
    """The cursor for the next page; `None` on the last page (wire ``nextCursor``)."""
    ttl_ms: int = attrs.field(default=0, metadata={WIRE_RULE: "ttl"})
    """How long, in milliseconds from receipt, the page stays fresh (wire ``ttlMs``; 0 when absent)."""
    cache_scope: str = "private"
    """``"public"`` (shareable across users) or ``"private"`` (wire ``cacheScope``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


# --------------------------------------------------------------------- completion


@attrs.frozen(kw_only=True)
class Completion:
    """Suggested values for a prompt or resource-template argument (wire ``completion``)."""

    values: list[str]
    """The suggestions, at most 100, best first."""
    total: int | None = None
    """How many suggestions exist in all, if the server knows."""
    has_more: bool | None = None
    """Whether there are more than `values` holds (wire ``hasMore``)."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class CompleteResult:
    """The answer to ``completion/complete`` (wire ``CompleteResult``)."""

    completion: Completion
    """The suggestions."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


# --------------------------------------------------------------------- input requests


@attrs.frozen(kw_only=True)
class Root:
    """A directory or file the client lets the server work in (wire ``Root``).

    Roots are guidance, not access control.
    """

    uri: str
    """The root's URI; ``file://`` in practice."""
    name: str | None = None
    """A human-readable name for display."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ListRootsResult:
    """The client's answer to ``roots/list`` (wire ``ListRootsResult``)."""

    roots: list[Root]
    """The roots."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ElicitFormParams:
    """The server asks the user to fill in a form (``elicitation/create``, form mode).

    The form is flat: `requested_schema` is a JSON Schema object whose
    properties are strings, numbers, booleans or enums. Show which server is
    asking, let the user review what is sent, and never use a form for
    secrets.
    """

    message: str
    """What to tell the user."""
    requested_schema: dict[str, Any]
    """The JSON Schema of the answer (wire ``requestedSchema``)."""
    mode: str = attrs.field(default="form", metadata={WIRE_RULE: "constant"})
    """Always ``"form"`` (a missing wire ``mode`` means form)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ElicitUrlParams:
    """The server asks the user to visit a URL (``elicitation/create``, URL mode).

    Show the whole URL with its domain highlighted, and open it only after
    the user agrees, somewhere the client and the model cannot observe.
    Accepting means consent to open it, not that the interaction finished.
    """

    message: str
    """What to tell the user."""
    url: str
    """The URL to open."""
    elicitation_id: str | None = None
    """Identifies the elicitation (revision 2025-11-25 only; wire ``elicitationId``)."""
    mode: str = attrs.field(default="url", metadata={WIRE_RULE: "constant"})
    """Always ``"url"``."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


ElicitRequestParams: TypeAlias = ElicitFormParams | ElicitUrlParams
"""The parameters of ``elicitation/create``; the wire ``mode`` decides the class."""


@attrs.frozen(kw_only=True)
class ElicitResult:
    """The user's answer to an elicitation (wire ``ElicitResult``)."""

    action: str
    """``"accept"``, ``"decline"`` (an explicit no) or ``"cancel"`` (dismissed)."""
    content: dict[str, Any] | None = None
    """The form's values, for an accepted form only."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class SamplingMessage:
    """One message of a conversation the server wants completed (wire ``SamplingMessage``)."""

    role: str
    """``"user"`` or ``"assistant"``."""
    content: ContentBlock | list[ContentBlock]
    """One content block, or a list of them."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ModelHint:
    """A model the server would like used (wire ``ModelHint``)."""

    name: str | None = None
    """A full or partial model name; the client maps it to a model it has."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ModelPreferences:
    """What the server would like from the model chosen for sampling (wire ``ModelPreferences``).

    Advisory: the client picks the model. Priorities go from 0 to 1.
    """

    hints: list[ModelHint] | None = None
    """Models to consider, in order of preference."""
    cost_priority: float | None = None
    """How much a low cost matters (wire ``costPriority``)."""
    speed_priority: float | None = None
    """How much a low latency matters (wire ``speedPriority``)."""
    intelligence_priority: float | None = None
    """How much capability matters (wire ``intelligencePriority``)."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class ToolChoice:
    """How the model may use the tools a sampling request offers (wire ``ToolChoice``, 2025-11-25 on)."""

    mode: str | None = None
    """``"auto"`` (the model decides; the default when absent), ``"required"``
    (it must use at least one tool) or ``"none"`` (it must use none)."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class CreateMessageParams:
    """The server asks the client's model for a completion (``sampling/createMessage``).

    The client chooses the model and may change or ignore the system prompt,
    the context, the temperature and the rest; keep a person in the loop
    before and after generation.
    """

    messages: list[SamplingMessage]
    """The conversation so far."""
    max_tokens: int
    """The most tokens to generate; must be respected (wire ``maxTokens``)."""
    model_preferences: ModelPreferences | None = None
    """What the server would like from the model (wire ``modelPreferences``)."""
    system_prompt: str | None = None
    """A system prompt the server suggests (wire ``systemPrompt``)."""
    include_context: str | None = None
    """``"none"``, ``"thisServer"`` or ``"allServers"`` (the last two deprecated; wire ``includeContext``)."""
    temperature: float | None = None
    """The sampling temperature."""
    stop_sequences: list[str] | None = None
    """Sequences that end generation (wire ``stopSequences``)."""
    metadata: dict[str, Any] | None = None
    """Provider-specific parameters."""
    tools: list[Tool] | None = None
    """Tools the model may call (2025-11-25 on; only to a client that declared
    ``sampling.tools``, see the ``sampling_tools`` option). The model asks
    for a call by answering with `ToolUseContent`; the server runs it and
    sends the conversation again with a `ToolResultContent`."""
    tool_choice: ToolChoice | None = None
    """How the model should use `tools` (wire ``toolChoice``); `None` means ``"auto"``."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class CreateMessageResult:
    """The client's completion for ``sampling/createMessage`` (wire ``CreateMessageResult``)."""

    role: str
    """Who wrote it, normally ``"assistant"``."""
    content: ContentBlock | list[ContentBlock]
    """One content block, or a list of them."""
    model: str
    """The name of the model that generated it."""
    stop_reason: str | None = None
    """Why generation stopped, such as ``"endTurn"``, ``"stopSequence"``, ``"maxTokens"`` or ``"toolUse"`` (wire ``stopReason``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class InputRequest:
    """Input a server needs before it can finish a request (one entry of ``inputRequests``).

    The ``method`` is ``elicitation/create``, ``sampling/createMessage`` or
    ``roots/list``; `params` is kept as the wire object, since what it holds
    depends on the method.
    """

    method: str
    """The kind of input wanted."""
    params: dict[str, Any] | None = None
    """The request's parameters, as sent."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class InputRequiredResult:
    """The server needs input before it can answer (wire ``InputRequiredResult``).

    Sent instead of the result of ``tools/call``, ``prompts/get`` or
    ``resources/read`` (revision 2026-07-28): the client gathers the input and
    repeats the request with the answers and `request_state`.
    """

    input_requests: dict[str, InputRequest] | None = None
    """What the server wants, by a key the answer must repeat (wire ``inputRequests``)."""
    request_state: str | None = None
    """Opaque state to send back unchanged with the retry (wire ``requestState``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


# --------------------------------------------------------------------- server identity


@attrs.frozen(kw_only=True)
class ServerCapabilities:
    """What the server supports (wire ``ServerCapabilities``).

    Each attribute is the capability's wire object (such as
    ``{"listChanged": true}``), or `None` when the server does not have it.
    """

    experimental: dict[str, Any] | None = None
    """Non-standard capabilities, by name."""
    logging: dict[str, Any] | None = None
    """The server sends log messages."""
    completions: dict[str, Any] | None = None
    """The server answers ``completion/complete``."""
    prompts: dict[str, Any] | None = None
    """The server offers prompts."""
    resources: dict[str, Any] | None = None
    """The server offers resources."""
    tools: dict[str, Any] | None = None
    """The server offers tools."""
    tasks: dict[str, Any] | None = None
    """Task support (revision 2025-11-25)."""
    extensions: dict[str, Any] | None = None
    """Extensions the server supports, by identifier (revision 2026-07-28)."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class DiscoverResult:
    """The answer to ``server/discover`` (revision 2026-07-28; wire ``DiscoverResult``)."""

    supported_versions: list[str]
    """The protocol revisions the server speaks (wire ``supportedVersions``)."""
    capabilities: ServerCapabilities
    """What the server supports."""
    instructions: str | None = None
    """How to use the server, for the model."""
    ttl_ms: int = attrs.field(default=0, metadata={WIRE_RULE: "ttl"})
    """How long, in milliseconds from receipt, the answer stays fresh (wire ``ttlMs``; 0 when absent)."""
    cache_scope: str = "private"
    """``"public"`` (shareable across users) or ``"private"`` (wire ``cacheScope``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    server_info: Implementation | None = attrs.field(default=None, metadata={WIRE_RULE: "server-info"})
    """The server's self-description, read from ``_meta`` (its
    ``io.modelcontextprotocol/serverInfo``), or `None` when absent or
    malformed. It is not a wire field of its own."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


@attrs.frozen(kw_only=True)
class InitializeResult:
    """The answer to ``initialize`` (legacy revisions; wire ``InitializeResult``)."""

    protocol_version: str
    """The revision the server chose (wire ``protocolVersion``)."""
    capabilities: ServerCapabilities
    """What the server supports."""
    server_info: Implementation
    """The server's self-description (wire ``serverInfo``)."""
    instructions: str | None = None
    """How to use the server, for the model."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""


#: Every model class (`UnknownContent` aside: it has no schema definition).
MODELS: Final[tuple[type, ...]] = (
    Annotations,
    Icon,
    Implementation,
    TextResourceContents,
    BlobResourceContents,
    *CONTENT_CLASSES,
    ToolAnnotations,
    Tool,
    CallToolResult,
    ListToolsResult,
    PromptArgument,
    Prompt,
    PromptMessage,
    GetPromptResult,
    ListPromptsResult,
    Resource,
    ResourceTemplate,
    ReadResourceResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    Completion,
    CompleteResult,
    Root,
    ListRootsResult,
    ElicitFormParams,
    ElicitUrlParams,
    ElicitResult,
    SamplingMessage,
    ModelHint,
    ModelPreferences,
    ToolChoice,
    CreateMessageParams,
    CreateMessageResult,
    InputRequest,
    InputRequiredResult,
    ServerCapabilities,
    DiscoverResult,
    InitializeResult,
)

#: The answers to requests (the schema's ``Result``s); the codec consumes their
#: ``resultType``, which is for the client.
RESULTS: Final = frozenset(
    {
        CallToolResult,
        ListToolsResult,
        GetPromptResult,
        ListPromptsResult,
        ReadResourceResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        CompleteResult,
        ListRootsResult,
        ElicitResult,
        CreateMessageResult,
        InputRequiredResult,
        DiscoverResult,
        InitializeResult,
    }
)


# The classes say trio_mcp.types, where users import them. Their string
# annotations are resolved first, here, since attrs and cattrs would look the
# names up in the module the class names.
for _model in [value for name, value in globals().items() if name in __all__ and attrs.has(value)]:
    attrs.resolve_types(_model)
del _model
publish(globals())
