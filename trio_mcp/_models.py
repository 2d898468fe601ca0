"""Typed models of MCP data, and their conversion to and from the wire.

The classes here are plain frozen attrs classes with snake_case attributes;
the wire format (camelCase keys, ``_meta``, discriminated unions, defaults)
lives in one cattrs converter, following attrs' own advice that the model and
its serialization format should not be coupled. The converter is built the
first time a model is converted, not at import: ``import trio_mcp`` does not
load cattrs (``tests/test_exports.py`` checks this).

Three functions are the interface to the rest of the package:

* `structure` turns a decoded JSON object from the server into a model. It is
  strict about types (a number where a string belongs is an error, ``true`` is
  not an integer, an integer is a fine number) and lenient about absence: a
  JSON ``null`` for a field that has a default means the default. Whatever
  the shape of the input, it returns a model or raises `ProtocolError` whose
  message names the model and the path of the bad field; no cattrs exception
  or `ExceptionGroup` escapes.
* `unstructure` turns a model back into a wire dict. Fields whose value is
  `None` are left out; every other field is written.
* `to_wire` accepts a model or a wire dict from the caller (hooks may return
  either) and returns the wire dict, raising `TypeError` for anything that
  does not have the model's shape.

Rules that hold for every model:

* Wire names are derived from attribute names (``mime_type`` is
  ``mimeType``); ``_WIRE_NAMES`` lists the exceptions (``meta`` is
  ``_meta``). A field whose wire value needs its own rule (``ttlMs``, the
  ``mode`` of elicitations) names its structure hook in its metadata.
* Keys the model does not know are kept in ``extra`` and written back by
  `unstructure`, so data from a newer revision survives a round trip. The
  exceptions are ``resultType`` on results, which the client consumes, and
  the ``type`` discriminator of content blocks, which is implied by the class.
* Content blocks are told apart by ``type``; a ``type`` this module does not
  know becomes `UnknownContent`, which keeps the whole object. Resource
  contents are told apart by ``text`` or ``blob``, elicitation parameters by
  ``mode`` (missing means form).
* ``ttlMs`` becomes a non-negative integer whatever arrives (the spec says a
  missing or negative value means 0); ``cacheScope`` defaults to
  ``"private"``.

Speed: the generated cattrs functions do the work, with ``detailed
validation`` on (which costs nothing measurable here and tells which field
failed). `structure` looks its hook up in a plain dict, so the hot path,
a `CallToolResult` with one text block, is a handful of function calls.
"""

from __future__ import annotations

import functools
import math
import types
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeAlias, TypeVar, overload

import attrs
import orjson

from ._core.eras import SERVER_INFO
from ._errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Callable

    from cattrs import Converter

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
    "ToolResultContent",
    "ToolUseContent",
    "UnknownContent",
]

_T = TypeVar("_T")

#: Wire keys that are not the camelCase of the attribute name.
_WIRE_NAMES: Final = {"meta": "_meta"}
#: Field metadata: a structure hook ``(value, type) -> value`` for this field only.
_STRUCTURE: Final = "trio_mcp.structure"


# --------------------------------------------------------------------- errors


def _show(value: Any) -> str:
    """A short rendering of a wire value for an error message."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Bad(Exception):
    """A value of the wrong shape; ``at`` is a path below the value, if any."""

    def __init__(self, message: str, at: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.at = at

    @classmethod
    def expected(cls, what: str, value: Any, at: str = "") -> _Bad:
        return cls(f"expected {what}, got {_show(value)}", at)


class _At(Exception):
    """The element ``segment`` (``[3]``, ``["key"]``) of a list or object failed."""

    def __init__(self, segment: str, cause: BaseException) -> None:
        super().__init__(segment)
        self.segment = segment
        self.cause = cause


def _explain(exc: BaseException) -> str:
    """Turn the failure of a structure hook into ``"path: what is wrong"``."""
    from cattrs.errors import AttributeValidationNote, ClassValidationError

    path: list[str] = []
    while True:
        if isinstance(exc, _At):
            path.append(exc.segment)
            exc = exc.cause
        elif isinstance(exc, ClassValidationError) and exc.exceptions:
            inner = exc.exceptions[0]
            for note in getattr(inner, "__notes__", ()):
                if isinstance(note, AttributeValidationNote):
                    path.append("." + _wire_name_of(exc.cl, note.name))
                    break
            exc = inner
        else:
            break
    if isinstance(exc, _Bad):
        path.append(exc.at)
        message = exc.message
    elif isinstance(exc, KeyError):
        # The generated code reads ``o["key"]`` for a required field.
        message = "required field missing"
    elif isinstance(exc, RecursionError):
        message = "nested too deeply"
    else:  # pragma: no cover - a bug in a hook; say what it was
        message = f"{type(exc).__name__}: {exc}"
    where = "".join(path).lstrip(".")
    return f"{where}: {message}" if where else message


# --------------------------------------------------------------------- field helpers


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _wire_name(field: attrs.Attribute[Any]) -> str:
    wire = _WIRE_NAMES.get(field.name)
    return wire if wire is not None else _camel(field.name)


def _wire_name_of(cls: type, name: str) -> str:
    try:
        return _wire_name(attrs.fields_dict(cls)[name])
    except (KeyError, TypeError):  # pragma: no cover - not one of our fields
        return name


def _structure_ttl(value: Any, _: Any) -> int:
    """``ttlMs``: missing, negative or not a number is 0; a fraction is floored."""
    if type(value) is int:
        return value if value > 0 else 0
    if type(value) is float and 0 < value < math.inf:
        return math.floor(value)
    return 0


def _constant(expected: str) -> Callable[[Any, Any], str]:
    def structure_constant(value: Any, _: Any) -> str:
        if value is None or value == expected:
            return expected
        raise _Bad.expected(_show(expected), value)

    return structure_constant


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

_CONTENT_CLASSES: Final = (
    TextContent,
    ImageContent,
    AudioContent,
    ResourceLink,
    EmbeddedResource,
    ToolUseContent,
    ToolResultContent,
)
_ResourceContents: TypeAlias = TextResourceContents | BlobResourceContents
_SamplingContent: TypeAlias = ContentBlock | list[ContentBlock]


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
    `RpcError`.
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
    ttl_ms: int = attrs.field(default=0, metadata={_STRUCTURE: _structure_ttl})
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
    ttl_ms: int = attrs.field(default=0, metadata={_STRUCTURE: _structure_ttl})
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
    ttl_ms: int = attrs.field(default=0, metadata={_STRUCTURE: _structure_ttl})
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
    ttl_ms: int = attrs.field(default=0, metadata={_STRUCTURE: _structure_ttl})
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
    ttl_ms: int = attrs.field(default=0, metadata={_STRUCTURE: _structure_ttl})
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
    mode: str = attrs.field(default="form", metadata={_STRUCTURE: _constant("form")})
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
    mode: str = attrs.field(default="url", metadata={_STRUCTURE: _constant("url")})
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
    """Tools the model may call."""
    tool_choice: dict[str, Any] | None = None
    """How the model should use `tools`, as ``{"mode": "auto"}``, ``"required"`` or ``"none"`` (wire ``toolChoice``)."""
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
    ttl_ms: int = attrs.field(default=0, metadata={_STRUCTURE: _structure_ttl})
    """How long, in milliseconds from receipt, the answer stays fresh (wire ``ttlMs``; 0 when absent)."""
    cache_scope: str = "private"
    """``"public"`` (shareable across users) or ``"private"`` (wire ``cacheScope``)."""
    meta: dict[str, Any] | None = None
    """The ``_meta`` object, if any."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know, written back unchanged."""

    @property
    def server_info(self) -> Implementation | None:
        """The server's self-description from ``_meta``, or `None` if absent or malformed."""
        if self.meta is None or SERVER_INFO not in self.meta:
            return None
        try:
            return structure(self.meta[SERVER_INFO], Implementation)
        except ProtocolError:
            return None


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


_MODELS: Final[tuple[type, ...]] = (
    Annotations,
    Icon,
    Implementation,
    TextResourceContents,
    BlobResourceContents,
    *_CONTENT_CLASSES,
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
    CreateMessageParams,
    CreateMessageResult,
    InputRequest,
    InputRequiredResult,
    ServerCapabilities,
    DiscoverResult,
    InitializeResult,
)
_MODEL_SET: Final = frozenset(_MODELS)
#: What `structure` and `unstructure` take: the classes above, `UnknownContent`
#: (whose hooks are written by hand) and a few unions.
_CONVERTIBLE: Final = _MODEL_SET | {UnknownContent}

#: Results: their ``resultType`` is for the client, and never kept in ``extra``.
_RESULTS: Final = frozenset(
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

#: The unions `structure` accepts besides the model classes, by name.
_UNIONS: Final[dict[Any, str]] = {
    ContentBlock: "ContentBlock",
    ElicitRequestParams: "ElicitRequestParams",
    _ResourceContents: "TextResourceContents | BlobResourceContents",
}


# --------------------------------------------------------------------- the converter


def _structure_str(value: Any, _: Any) -> str:
    if type(value) is str:
        return value
    raise _Bad.expected("a string", value)


def _structure_int(value: Any, _: Any) -> int:
    if type(value) is int:
        return value
    raise _Bad.expected("an integer", value)


def _structure_float(value: Any, _: Any) -> float:
    if type(value) is float or type(value) is int:
        return value
    raise _Bad.expected("a number", value)


def _structure_bool(value: Any, _: Any) -> bool:
    if type(value) is bool:
        return value
    raise _Bad.expected("a boolean", value)


def _structure_object(value: Any, _: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    raise _Bad.expected("an object", value)


#: What each primitive field accepts (by exact type: ``True`` is not an integer).
_PRIMITIVES: Final[dict[type, tuple[str, frozenset[type]]]] = {
    str: ("a string", frozenset({str})),
    int: ("an integer", frozenset({int})),
    float: ("a number", frozenset({float, int})),
    bool: ("a boolean", frozenset({bool})),
}


def _identity(value: Any) -> Any:
    return value


def _origin(t: Any) -> Any:
    return getattr(t, "__origin__", None)


@functools.cache
def _converter() -> Converter:
    """Build the one converter, on first use (cattrs is not imported before)."""
    import cattrs

    c = cattrs.Converter(detailed_validation=True)
    for primitive, hook in (
        (str, _structure_str),
        (int, _structure_int),
        (float, _structure_float),
        (bool, _structure_bool),
    ):
        c.register_structure_hook(primitive, hook)
    c.register_structure_hook_factory(_is_optional, lambda t: _optional_hook(c, t))
    c.register_structure_hook_factory(lambda t: _origin(t) is list, lambda t: _list_hook(c, t))
    c.register_structure_hook_factory(lambda t: _origin(t) is dict, lambda t: _dict_hook(c, t))
    c.register_structure_hook_func(lambda t: t == ContentBlock, _content_hook(c))
    c.register_structure_hook_func(lambda t: t == _SamplingContent, _sampling_content_hook(c))
    c.register_structure_hook_func(lambda t: t == _ResourceContents, _resource_contents_hook(c))
    c.register_structure_hook_func(lambda t: t == ElicitRequestParams, _elicit_params_hook(c))
    c.register_structure_hook(UnknownContent, _structure_unknown_content)
    c.register_structure_hook_factory(lambda t: t in _MODEL_SET, lambda t: _model_structure_hook(c, t))

    # JSON values are written back as they are: no copying, no walking.
    c.register_unstructure_hook_func(lambda t: t is Any or t == dict[str, Any], _identity)
    c.register_unstructure_hook(UnknownContent, lambda content: content.raw)
    c.register_unstructure_hook_factory(lambda t: t in _MODEL_SET, lambda t: _model_unstructure_hook(c, t))
    return c


def _is_optional(t: Any) -> bool:
    return isinstance(t, types.UnionType) and len(t.__args__) == 2 and type(None) in t.__args__


def _optional_hook(c: Converter, t: Any) -> Callable[[Any, Any], Any]:
    # cattrs' own hook looks the inner hook up on every call.
    (inner_type,) = (arg for arg in t.__args__ if arg is not type(None))
    if inner_type in _PRIMITIVES:
        what, allowed = _PRIMITIVES[inner_type]

        def structure_optional_primitive(value: Any, _: Any) -> Any:
            if value is None or type(value) in allowed:
                return value
            raise _Bad.expected(what, value)

        return structure_optional_primitive
    inner_hook = c.get_structure_hook(inner_type)

    def structure_optional(value: Any, _: Any) -> Any:
        return None if value is None else inner_hook(value, inner_type)

    return structure_optional


def _list_hook(c: Converter, t: Any) -> Callable[[Any, Any], list[Any]]:
    (item_type,) = t.__args__
    item_hook = c.get_structure_hook(item_type)

    def structure_list(value: Any, _: Any) -> list[Any]:
        if type(value) is not list:
            raise _Bad.expected("an array", value)
        out: list[Any] = []
        append = out.append
        try:
            for item in value:
                append(item_hook(item, item_type))
        except Exception as exc:
            raise _At(f"[{len(out)}]", exc) from None
        return out

    return structure_list


def _dict_hook(c: Converter, t: Any) -> Callable[[Any, Any], dict[str, Any]]:
    _, value_type = t.__args__
    if value_type is Any:
        return _structure_object
    value_hook = c.get_structure_hook(value_type)

    def structure_dict(value: Any, _: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        out: dict[str, Any] = {}
        key = None
        try:
            for key, item in value.items():
                out[key] = value_hook(item, value_type)
        except Exception as exc:
            raise _At(f"[{_show(key)}]", exc) from None
        return out

    return structure_dict


def _content_hook(c: Converter) -> Callable[[Any, Any], Any]:
    by_type = {cls.type: cls for cls in _CONTENT_CLASSES}
    hooks: dict[str, Callable[[Any, Any], Any]] = {}

    def structure_content(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        kind = value.get("type")
        hook = hooks.get(kind) if type(kind) is str else None
        if hook is not None:
            return hook(value, None)
        if type(kind) is not str:
            if "type" not in value:
                raise _Bad("required field missing", at=".type")
            raise _Bad.expected("a string", kind, at=".type")
        cls = by_type.get(kind)
        if cls is None:
            return UnknownContent(type=kind, raw=value)
        hook = hooks[kind] = c.get_structure_hook(cls)
        return hook(value, cls)

    return structure_content


def _sampling_content_hook(c: Converter) -> Callable[[Any, Any], Any]:
    one = c.get_structure_hook(ContentBlock)
    many = c.get_structure_hook(list[ContentBlock])

    def structure_sampling_content(value: Any, _: Any) -> Any:
        if type(value) is list:
            return many(value, None)
        return one(value, None)

    return structure_sampling_content


def _resource_contents_hook(c: Converter) -> Callable[[Any, Any], Any]:
    def structure_resource_contents(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        if "text" in value:
            return c.get_structure_hook(TextResourceContents)(value, TextResourceContents)
        if "blob" in value:
            return c.get_structure_hook(BlobResourceContents)(value, BlobResourceContents)
        raise _Bad('resource contents need a "text" or a "blob" member')

    return structure_resource_contents


def _elicit_params_hook(c: Converter) -> Callable[[Any, Any], Any]:
    def structure_elicit_params(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        mode = value.get("mode")
        if mode is None or mode == "form":
            return c.get_structure_hook(ElicitFormParams)(value, ElicitFormParams)
        if mode == "url":
            return c.get_structure_hook(ElicitUrlParams)(value, ElicitUrlParams)
        raise _Bad.expected('"form" or "url"', mode, at=".mode")

    return structure_elicit_params


def _structure_unknown_content(value: Any, _: Any) -> UnknownContent:
    if not isinstance(value, dict):
        raise _Bad.expected("an object", value)
    kind = value.get("type")
    if type(kind) is not str:
        raise _Bad.expected("a string", kind, at=".type")
    return UnknownContent(type=kind, raw=value)


def _null_means_default(hook: Callable[[Any, Any], Any], default: Any) -> Callable[[Any, Any], Any]:
    make: Callable[[], Any] = default.factory if isinstance(default, attrs.Factory) else lambda: default  # type: ignore[arg-type]

    def structure_or_default(value: Any, t: Any) -> Any:
        return make() if value is None else hook(value, t)

    return structure_or_default


def _model_structure_hook(c: Converter, cls: type) -> Callable[[Any, Any], Any]:
    from cattrs.gen import make_dict_structure_fn, override

    attrs.resolve_types(cls)
    overrides: dict[str, Any] = {}
    known = set()
    kind: str | None = getattr(cls, "type", None) if cls in _CONTENT_CLASSES else None
    if kind is not None:
        known.add("type")
    if cls in _RESULTS:
        known.add("resultType")
    for field in attrs.fields(cls):
        if field.name == "extra":
            overrides[field.name] = override(omit=True)
            continue
        wire = _wire_name(field)
        known.add(wire)
        hook = field.metadata.get(_STRUCTURE)
        if hook is None and field.default is not None and field.default is not attrs.NOTHING:
            hook = _null_means_default(c.get_structure_hook(field.type), field.default)
        overrides[field.name] = override(rename=wire, struct_hook=hook)
    generated: Callable[[Any, Any], Any] = make_dict_structure_fn(
        cls, c, _cattrs_forbid_extra_keys=False, _cattrs_detailed_validation=True, **overrides
    )
    known_keys = frozenset(known)

    def structure_model(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        obj = generated(value, cls)
        if not known_keys.issuperset(value):
            # Frozen, but not yet seen by anyone: fill in the unknown keys.
            object.__setattr__(obj, "extra", {k: v for k, v in value.items() if k not in known_keys})
        return obj

    if kind is None:
        return structure_model

    def structure_content_block(value: Any, _: Any) -> Any:
        if isinstance(value, dict) and value.get("type") != kind:
            if "type" not in value:
                raise _Bad("required field missing", at=".type")
            raise _Bad.expected(_show(kind), value["type"], at=".type")
        return structure_model(value, _)

    return structure_content_block


def _model_unstructure_hook(c: Converter, cls: type) -> Callable[[Any], dict[str, Any]]:
    from cattrs.gen import make_dict_unstructure_fn, override

    attrs.resolve_types(cls)
    overrides: dict[str, Any] = {}
    for field in attrs.fields(cls):
        if field.name == "extra":
            overrides[field.name] = override(omit=True)
        else:
            overrides[field.name] = override(rename=_wire_name(field), omit_if_default=field.default is None)
    generated: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(cls, c, **overrides)
    kind: str | None = getattr(cls, "type", None) if cls in _CONTENT_CLASSES else None

    def unstructure_model(obj: Any) -> dict[str, Any]:
        wire: dict[str, Any] = generated(obj) if kind is None else {"type": kind, **generated(obj)}
        for key, value in obj.extra.items():
            wire.setdefault(key, value)
        return wire

    return unstructure_model


# --------------------------------------------------------------------- the interface

_structurers: dict[Any, Callable[[Any, Any], Any]] = {}
_unstructurers: dict[type, Callable[[Any], dict[str, Any]]] = {}


def _name(cls: Any) -> str:
    name = _UNIONS.get(cls)
    return name if name is not None else getattr(cls, "__name__", repr(cls))


def _structurer(cls: Any) -> Callable[[Any, Any], Any]:
    hook = _structurers.get(cls)
    if hook is None:
        if cls not in _CONVERTIBLE and cls not in _UNIONS:
            raise TypeError(f"{cls!r} is not a trio_mcp model")
        hook = _structurers[cls] = _converter().get_structure_hook(cls)
    return hook


@overload
def structure(data: Any, cls: type[_T]) -> _T: ...
@overload
def structure(data: Any, cls: Any) -> Any: ...
def structure(data: Any, cls: Any) -> Any:
    """Build the model ``cls`` from ``data``, a decoded JSON object from the server.

    ``cls`` is a model class or one of the unions `ContentBlock` and
    `ElicitRequestParams`. Raises `ProtocolError` if ``data`` does not have
    the model's shape, naming the model and the path of the bad field, and
    `TypeError` if ``cls`` is not a model.
    """
    if cls is CallToolResult:
        fast = _plain_call_tool_result(data)
        if fast is not None:
            return fast
    try:
        hook = _structurers[cls]
    except KeyError:
        hook = _structurer(cls)
    try:
        return hook(data, cls)
    except Exception as exc:
        raise ProtocolError(f"bad {_name(cls)} from the server: {_explain(exc)}") from None


_PLAIN_RESULT_KEYS: Final = frozenset({"content", "resultType", "isError", "structuredContent", "_meta"})


def _plain_call_tool_result(data: Any) -> CallToolResult | None:
    """The common tool result, text blocks only, built without the converter.

    Returns `None` for anything else (the converter then does the work and
    the checking): unknown keys, other blocks, fields of the wrong type.
    """
    if type(data) is not dict or not _PLAIN_RESULT_KEYS.issuperset(data):
        return None
    content = data.get("content", ())
    if type(content) is not list:
        return None
    blocks: list[ContentBlock] = []
    for block in content:
        if type(block) is not dict or len(block) != 2 or block.get("type") != "text":
            return None
        text = block.get("text")
        if type(text) is not str:
            return None
        blocks.append(TextContent(text=text))
    is_error = data.get("isError")
    meta = data.get("_meta")
    if (is_error is not None and type(is_error) is not bool) or (meta is not None and type(meta) is not dict):
        return None
    return CallToolResult(
        content=blocks, structured_content=data.get("structuredContent"), is_error=bool(is_error), meta=meta
    )


def _unstructurer(cls: type) -> Callable[[Any], dict[str, Any]]:
    hook = _unstructurers.get(cls)
    if hook is None:
        if cls not in _CONVERTIBLE:
            raise TypeError(f"{cls.__name__} is not a trio_mcp model")
        hook = _unstructurers[cls] = _converter().get_unstructure_hook(cls)
    return hook


def unstructure(obj: Any) -> dict[str, Any]:
    """The wire dict of the model ``obj``; raises `TypeError` for anything else.

    JSON values held by the model (``_meta``, schemas, ``extra`` values) are
    shared with the result, not copied.
    """
    try:
        hook = _unstructurers[type(obj)]
    except KeyError:
        hook = _unstructurer(type(obj))
    return hook(obj)


def to_wire(value: Any, cls: Any) -> dict[str, Any]:
    """The wire dict of ``value``: a model of ``cls``, or a wire dict of its shape.

    A dict is checked by structuring it as ``cls`` and returned as given. A
    bad shape, or a value of any other type, raises `TypeError` naming
    ``cls``: the value comes from the caller, not from the server.
    """
    hook = _structurer(cls)
    if isinstance(value, dict):
        try:
            hook(value, cls)
        except Exception as exc:
            raise TypeError(f"not a valid {_name(cls)}: {_explain(exc)}") from None
        return value
    if isinstance(value, cls):
        return unstructure(value)
    raise TypeError(f"expected a model or wire dict of {_name(cls)}, got {type(value).__name__}")
