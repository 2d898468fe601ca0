"""What ``trio-mcp`` shows: results, lists, capabilities and notifications, as text or JSON.

Pure functions of what the server sent; nothing here writes or waits.

The models are imported by the functions that look into them, not with
this module: the command imports it before it starts the server, and the
models load while the server starts (see ``docs/design.rst``).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .._client import Client
    from .._models import (
        BlobResourceContents,
        CallToolResult,
        ContentBlock,
        GetPromptResult,
        Prompt,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
        ServerCapabilities,
        TextResourceContents,
        Tool,
    )

JSON = Any

#: The most characters a JSON value may take in a one-line message.
SHOW_MAX: Final = 300


def human_size(size: int) -> str:
    """A byte count for people: ``"512 B"``, ``"12.3 KiB"``, ``"4.0 MiB"``."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} TiB"


def base64_size(data: str) -> int:
    """The number of bytes ``data``, base64 text, decodes to (without decoding it)."""
    text = "".join(data.split())
    padding = len(text) - len(text.rstrip("="))
    return max(0, len(text) * 3 // 4 - padding)


def compact(value: JSON, limit: int = SHOW_MAX) -> str:
    """``value`` as one line of JSON, cut to ``limit`` characters (for messages)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def number(value: float) -> str:
    """A number as people write it: ``3``, not ``3.0``; ``0.5``."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def pretty_json(value: JSON) -> str:
    """``value`` as indented JSON text (non-ASCII kept as it is)."""
    return json.dumps(value, ensure_ascii=False, indent=2)


def _joined(*parts: str | None) -> str:
    return ", ".join(part for part in parts if part)


def render_block(block: ContentBlock) -> str:
    """One content block as text for a person.

    Text is itself; images and audio are ``[image: image/png, 12.3 KiB]``;
    a resource link is its name and URI; an embedded text resource is a
    header line and its text, a binary one a header line; anything else is
    one line of JSON.
    """
    from .._models import (
        AudioContent,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        ToolResultContent,
        ToolUseContent,
        UnknownContent,
    )

    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent | AudioContent):
        return f"[{block.type}: {block.mime_type}, {human_size(base64_size(block.data))}]"
    if isinstance(block, ResourceLink):
        size = human_size(block.size) if block.size is not None else None
        name = block.title or block.name
        line = f"[resource link: {name} <{block.uri}>{'' if not (block.mime_type or size) else ', '}"
        line += _joined(block.mime_type, size) + "]"
        if block.description:
            line += f" {block.description}"
        return line
    if isinstance(block, EmbeddedResource):
        return render_contents(block.resource, header=True)
    if isinstance(block, ToolUseContent):
        return f"[tool use {block.id}: {block.name} {compact(block.input)}]"
    if isinstance(block, ToolResultContent):
        inner = "\n".join(render_block(item) for item in block.content)
        return f"[tool result for {block.tool_use_id}]" + (f"\n{inner}" if inner else "")
    assert isinstance(block, UnknownContent)
    return f"[{block.type} content: {compact(block.raw)}]"


def render_contents(item: TextResourceContents | BlobResourceContents, *, header: bool) -> str:
    """A resource's contents: its text (after a header line, if asked), or its type and size."""
    from .._models import TextResourceContents

    if isinstance(item, TextResourceContents):
        if not header:
            return item.text
        return f"[resource: {_joined(item.uri, item.mime_type)}]\n{item.text}"
    size = human_size(base64_size(item.blob))
    return f"[resource: {_joined(item.uri, item.mime_type or 'binary', size)}]"


def _duplicates_text(result: CallToolResult) -> bool:
    """Whether the structured content says what the text blocks say.

    It does when a text block holds it as JSON (servers are asked to send
    both), or, for an object with one member, that member's value: as text
    (filesystem's ``read_text_file``: ``{"content": TEXT}``) or as JSON
    (memory's ``create_entities``: ``{"entities": [...]}`` beside the list).
    """
    from .._models import TextContent

    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    if not texts:
        return False
    structured = result.structured_content
    said: list[JSON] = [structured]
    if isinstance(structured, dict) and len(structured) == 1:
        said.append(next(iter(structured.values())))
    whole = "\n".join(texts)
    for value in said:
        if isinstance(value, str) and value.strip() and value.strip() == whole.strip():
            return True
    for text in texts:
        if text.lstrip()[:1] in ("{", "["):
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            if any(parsed == value for value in said):
                return True
    return False


def render_call_result(result: CallToolResult, *, structured: bool = False) -> str:
    """A tool's result as text: each block, then the structured content as JSON.

    The structured content is left out when it says what the text says
    (servers are asked to send both): a text block holds it as JSON, or the
    one member of an object, as text or as JSON; ``structured`` shows it
    all the same (a result that broke its schema). Ends with a newline
    unless there is nothing to show.
    """
    parts = [render_block(block) for block in result.content]
    if result.structured_content is not None and (structured or not _duplicates_text(result)):
        if parts:
            parts.append("structured content:")
        parts.append(pretty_json(result.structured_content))
    return join_lines(parts)


def render_read_result(result: ReadResourceResult) -> str:
    """A resource's contents; with several items, each after a header line."""
    from .._models import BlobResourceContents

    many = len(result.contents) > 1
    return join_lines(
        render_contents(item, header=many or isinstance(item, BlobResourceContents))
        for item in result.contents
    )


def render_prompt_result(result: GetPromptResult) -> str:
    """A prompt's description, then each message after a ``[role]`` line."""
    parts: list[str] = []
    if result.description:
        parts.append(f"# {result.description}")
    for message in result.messages:
        parts.append(f"[{message.role}]")
        parts.append(render_block(message.content))
    return join_lines(parts)


def join_lines(parts: Iterable[str]) -> str:
    """The parts, one a line, ending with a newline (unless there is nothing)."""
    text = "\n".join(parts)
    return text + "\n" if text and not text.endswith("\n") else text


def _schema_type(schema: JSON) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(compact(v, 40) for v in schema["enum"][:8]) + (
            " | ..." if len(schema["enum"]) > 8 else ""
        )
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {_schema_type(schema.get('items'))}"
    if isinstance(kind, str):
        return kind
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list):
            return " | ".join(_schema_type(s) for s in schema[union])
    return "any"


def _signature(schema: JSON) -> str:
    """The arguments an input schema describes: ``text: string, n?: integer``."""
    if not isinstance(schema, dict):
        return ""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    return ", ".join(
        f"{name}{'' if name in needed else '?'}: {_schema_type(prop)}" for name, prop in properties.items()
    )


def indent(text: str, prefix: str = "    ") -> str:
    """``text`` with ``prefix`` before each line that is not empty."""
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def _heading(name: str, title: str | None) -> str:
    return f"{name} - {title}" if title and title != name else name


def render_capabilities(caps: ServerCapabilities) -> str:
    """``tools (listChanged), resources (subscribe, listChanged), logging``."""
    shown = []
    for name in ("tools", "prompts", "resources", "completions", "logging", "tasks"):
        value = getattr(caps, name)
        if value is None:
            continue
        flags = [key for key, flag in value.items() if flag is True] if isinstance(value, dict) else []
        shown.append(f"{name} ({', '.join(flags)})" if flags else name)
    for name in ("experimental", "extensions"):
        value = getattr(caps, name)
        if isinstance(value, dict) and value:
            shown.append(f"{name}: {', '.join(value)}")
    shown.extend(caps.extra)
    return ", ".join(shown) if shown else "none"


# ----------------------------------------------------------------- JSON


def wire_json(model: Any) -> dict[str, JSON]:
    """A result or list item as the server sent it, but for its ``resultType``."""
    from .._models import unstructure

    out = unstructure(model)
    out.pop("resultType", None)
    return out


def call_result_wire(result: CallToolResult) -> dict[str, JSON]:
    """The result's wire JSON; plain text results are built by hand (no converter to load)."""
    from .._models import TextContent

    if not result.extra and all(
        type(block) is TextContent and block.annotations is None and block.meta is None and not block.extra
        for block in result.content
    ):
        wire: dict[str, JSON] = {
            "content": [{"type": "text", "text": block.text} for block in result.content]  # type: ignore[union-attr]
        }
        if result.structured_content is not None:
            wire["structuredContent"] = result.structured_content
        wire["isError"] = result.is_error
        if result.meta is not None:
            wire["_meta"] = result.meta
        return wire
    return wire_json(result)


# ----------------------------------------------------------------- lists


def tool_lines(tool: Tool, schema: bool) -> list[str]:
    """A tool: its name and title, description, hints, and arguments (or, with ``schema``, its schemas)."""
    lines = [_heading(tool.name, tool.display_name)]
    if tool.description:
        lines.append(indent(tool.description.strip()))
    signature = _signature(tool.input_schema)
    hints = tool.annotations
    if hints is not None:
        flags = [
            word
            for word, flag in (
                ("read-only", hints.read_only_hint),
                ("destructive", hints.destructive_hint is True and not hints.read_only_hint),
                ("idempotent", hints.idempotent_hint),
            )
            if flag
        ]
        if flags:
            lines.append(f"    hints: {', '.join(flags)} (as the server says)")
    if schema:
        lines.append("    input schema:")
        lines.append(indent(pretty_json(tool.input_schema), "      "))
        if tool.output_schema is not None:
            lines.append("    output schema:")
            lines.append(indent(pretty_json(tool.output_schema), "      "))
    elif signature:
        lines.append(f"    arguments: {signature}")
    return lines


def prompt_lines(prompt: Prompt) -> list[str]:
    """A prompt: its name and title, description and arguments."""
    lines = [_heading(prompt.name, prompt.title)]
    if prompt.description:
        lines.append(indent(prompt.description.strip()))
    if prompt.arguments:
        described = [
            f"{arg.name}{'' if arg.required else '?'}" + (f" ({arg.description})" if arg.description else "")
            for arg in prompt.arguments
        ]
        lines.append(f"    arguments: {', '.join(described)}")
    return lines


def resource_lines(resource: Resource) -> list[str]:
    """A resource: its URI, name, type and size, then its description."""
    size = human_size(resource.size) if resource.size is not None else None
    details = _joined(resource.title or resource.name, resource.mime_type, size)
    lines = [f"{resource.uri}  ({details})"]
    if resource.description:
        lines.append(indent(resource.description.strip()))
    return lines


def template_lines(template: ResourceTemplate) -> list[str]:
    """A resource template: its URI template, name and type, then its description."""
    details = _joined(template.title or template.name, template.mime_type)
    lines = [f"{template.uri_template}  ({details})"]
    if template.description:
        lines.append(indent(template.description.strip()))
    return lines


# ----------------------------------------------------------------- info


def info_wire(client: Client) -> dict[str, JSON]:
    """What ``info --json`` prints: the era, the versions, the server's description of itself."""
    from .._models import unstructure

    discover = client.discover_result
    info = client.server_info
    return {
        "era": client.era,
        "protocolVersion": client.protocol_version,
        "supportedVersions": discover.supported_versions if discover is not None else None,
        "serverInfo": unstructure(info) if info is not None else None,
        "capabilities": unstructure(client.server_capabilities),
        "instructions": client.instructions,
    }


def render_info(client: Client) -> str:
    """What ``info`` prints: one ``key: value`` line each, then the instructions."""
    discover = client.discover_result
    info = client.server_info
    rows: list[tuple[str, str]] = []
    if info is not None:
        rows.append(("server", f"{info.name} {info.version}"))
        if info.title:
            rows.append(("title", info.title))
        if info.description:
            rows.append(("description", info.description))
        if info.website_url:
            rows.append(("website", info.website_url))
    else:
        rows.append(("server", "(it does not say)"))
    era = "2026-07-28 era, stateless" if client.era == "modern" else "initialize era"
    rows.append(("protocol", f"{client.protocol_version} ({era})"))
    if discover is not None:
        rows.append(("supported", ", ".join(discover.supported_versions)))
    rows.append(("capabilities", render_capabilities(client.server_capabilities)))
    text = "".join(f"{key + ':':<14}{value}\n" for key, value in rows)
    if client.instructions:
        text += "instructions:\n" + indent(client.instructions.rstrip("\n"), "  ") + "\n"
    return text


def note_line(note: dict[str, JSON]) -> str | None:
    """A server notification as one line for stderr (``--verbose``); `None` for progress."""
    method = note.get("method")
    params = note.get("params")
    params = params if isinstance(params, dict) else {}
    if method == "notifications/message":
        level = params.get("level", "?")
        logger = params.get("logger")
        data = params.get("data")
        text = data if isinstance(data, str) else compact(data)
        return f"server log [{level}]{' ' + str(logger) if isinstance(logger, str) else ''}: {text}"
    if method == "notifications/progress":
        return None
    shown = {k: v for k, v in params.items() if k != "_meta"}
    return f"server notification {method}" + (f" {compact(shown)}" if shown else "")


# ----------------------------------------------------------------- stderr, without decorations

#: Escape sequences of terminals: CSI (colours, cursor moves), OSC (titles,
#: hyperlinks, ended by BEL or ST), and the other two-character ones.
_ESCAPES: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[@-Z\\-_]"  # the other escapes (Fe)
    r"|\x1b[ -/]*[0-~]?"  # nF and Fp/Fs, or a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
#: Other control characters (tab aside), shown as nothing.
_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: What frames draw: the box-drawing block (U+2500-U+257F), with its
#: heavy and rounded corners.
_BOX: Final = "".join(chr(code) for code in range(0x2500, 0x2580))
_EDGES: Final = frozenset(_BOX) | {" ", "\t"}


def plain_line(line: str) -> str:
    """One line of a server's stderr as plain text: escape sequences and control characters removed.

    A line redrawn with carriage returns (a progress bar) is its last state.
    """
    line = _ESCAPES.sub("", line)
    if "\r" in line:
        parts = [part for part in line.split("\r") if part.strip()]
        line = parts[-1] if parts else ""
    return _CONTROLS.sub("", line).rstrip()


def plain_stderr(lines: Iterable[str]) -> list[str]:
    """A server's stderr lines as plain text, without terminal decorations.

    Escape sequences (colours, cursor moves, hyperlinks) are removed (see
    `plain_line`), and frames drawn with box-drawing characters, as `rich
    <https://github.com/Textualize/rich>`_ draws tracebacks and panels, are
    cut to their text: a line of a frame's top or bottom keeps its title, if
    it has one; a line inside keeps what is between the borders (nested
    frames too). Lines left empty by that are dropped; other empty lines are
    kept. Pure: the same lines always give the same text.
    """
    out: list[str] = []
    for raw in lines:
        line = plain_line(raw)
        if not line.strip():
            if raw.strip() and not line.strip():
                continue  # only escapes
            out.append("")
            continue
        text = line.strip()
        if all(char in _EDGES for char in text):
            continue  # a rule, a frame's empty edge
        if text[0] in _BOX and text[-1] in _BOX:
            # A frame's line: its title (top, bottom), or what is inside its borders.
            text = text.strip(_BOX + " \t")
            if not text:
                continue
            out.append(text)
            continue
        if text[0] in _BOX or text[-1] in _BOX:
            stripped = text.strip(_BOX + " \t")
            if not stripped:
                continue
            out.append(stripped)
            continue
        out.append(line)
    return out


# ----------------------------------------------------------------- binary contents


def binary_parts(result: CallToolResult | ReadResourceResult) -> list[tuple[str, str]]:
    """The binary parts of a result, as (MIME type, base64 data): images, audio, blob resources.

    In the order they came; a tool's embedded blob resources count, its
    resource links do not (they are not contents).
    """
    from .._models import (
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ReadResourceResult,
    )

    parts: list[tuple[str, str]] = []
    if isinstance(result, ReadResourceResult):
        return [
            (item.mime_type or "application/octet-stream", item.blob)
            for item in result.contents
            if isinstance(item, BlobResourceContents)
        ]
    for block in result.content:
        if isinstance(block, ImageContent | AudioContent):
            parts.append((block.mime_type, block.data))
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents):
            parts.append((block.resource.mime_type or "application/octet-stream", block.resource.blob))
    return parts
