"""The Trio half of the ``trio-mcp`` command: connect, run the command, show the result.

`trio_mcp.cli` parses the command line (`._args`), and imports this module
(and with it Trio and the client) only when a command is to be run, so that
``--help`` and usage errors come back at once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Final, TypeVar

import trio

from .._client import open_stdio_client
from .._errors import (
    InputRequestFailed,
    MCPError,
    NotSupported,
    ProtocolError,
    RpcError,
    ServerGone,
    SpawnFailed,
    TransportClosed,
    VersionMismatch,
)
from .._models import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ElicitFormParams,
    ElicitUrlParams,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    ReadResourceResult,
    ResourceLink,
    ServerCapabilities,
    TextContent,
    TextResourceContents,
    ToolResultContent,
    ToolUseContent,
    UnknownContent,
    unstructure,
)
from .._transport import RequestTimeout
from ._args import (
    EXIT_BROKEN_PIPE,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROTOCOL,
    EXIT_RPC_ERROR,
    EXIT_SERVER_GONE,
    EXIT_SPAWN,
    EXIT_TIMEOUT,
    EXIT_TOOL_ERROR,
    PROG,
    Options,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from .._client import Client
    from .._models import ContentBlock, Prompt, Resource, ResourceTemplate, Tool

_Item = TypeVar("_Item")

JSON = Any

#: How long ``--protocol auto`` waits for an answer to its probe, at most.
PROBE_TIMEOUT: Final = 10.0
#: The most stderr lines of a dead server an error message shows.
TAIL_LINES: Final = 10
#: The least time between two frames of the progress bar, in seconds (the
#: first and the last frames are always drawn).
FRAME = 1 / 30
#: The most characters a JSON value may take in a one-line message.
SHOW_MAX: Final = 300


class _Failure(Exception):
    """An error of the command's own, with its exit status and message."""

    def __init__(
        self, status: int, message: str, /, *, detail: str = "", kind: str = "", **data: JSON
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail
        self.kind = kind
        self.data = data


# ----------------------------------------------------------------- rendering


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


def _compact(value: JSON, limit: int = SHOW_MAX) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        return f"[tool use {block.id}: {block.name} {_compact(block.input)}]"
    if isinstance(block, ToolResultContent):
        inner = "\n".join(render_block(item) for item in block.content)
        return f"[tool result for {block.tool_use_id}]" + (f"\n{inner}" if inner else "")
    assert isinstance(block, UnknownContent)
    return f"[{block.type} content: {_compact(block.raw)}]"


def render_contents(item: TextResourceContents | BlobResourceContents, *, header: bool) -> str:
    """A resource's contents: its text (after a header line, if asked), or its type and size."""
    if isinstance(item, TextResourceContents):
        if not header:
            return item.text
        return f"[resource: {_joined(item.uri, item.mime_type)}]\n{item.text}"
    size = human_size(base64_size(item.blob))
    return f"[resource: {_joined(item.uri, item.mime_type or 'binary', size)}]"


def _duplicates_text(result: CallToolResult) -> bool:
    """Whether the structured content is also one of the text blocks, as JSON."""
    for block in result.content:
        if isinstance(block, TextContent) and block.text.lstrip()[:1] in ("{", "["):
            try:
                if json.loads(block.text) == result.structured_content:
                    return True
            except ValueError:
                continue
    return False


def render_call_result(result: CallToolResult) -> str:
    """A tool's result as text: each block, then the structured content as JSON.

    The structured content is left out when a text block already holds it
    as JSON (servers are asked to send both). Ends with a newline unless
    there is nothing to show.
    """
    parts = [render_block(block) for block in result.content]
    if result.structured_content is not None and not _duplicates_text(result):
        if parts:
            parts.append("structured content:")
        parts.append(pretty_json(result.structured_content))
    return _lines(parts)


def render_read_result(result: ReadResourceResult) -> str:
    """A resource's contents; with several items, each after a header line."""
    many = len(result.contents) > 1
    return _lines(
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
    return _lines(parts)


def _lines(parts: Iterable[str]) -> str:
    text = "\n".join(parts)
    return text + "\n" if text and not text.endswith("\n") else text


def _schema_type(schema: JSON) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(_compact(v, 40) for v in schema["enum"][:8]) + (
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


def _indent(text: str, prefix: str = "    ") -> str:
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


# ----------------------------------------------------------------- the console


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Console:
    """Everything the command writes to stderr: messages, the progress bar, questions.

    The progress bar lives on the last line of stderr when stderr is a
    terminal; every other message clears it first and redraws it after.
    """

    def __init__(self, err: Any = None) -> None:
        self.err = err if err is not None else sys.stderr
        """The stream written to (default: ``sys.stderr``)."""
        self.tty = _isatty(self.err)
        """Whether it is a terminal (a bar is drawn, rather than lines written)."""
        self.open_line = False
        """Whether the last question ended without a newline (the answer is typed after it)."""
        self._bar = ""
        self._last_frame = -float("inf")
        self._last_plain = ""
        self._unicode = (getattr(self.err, "encoding", "") or "").lower().replace("-", "") in ("utf8",)
        self._spin = 0

    def _write(self, text: str) -> None:
        try:
            self.err.write(text)
            self.err.flush()
        except (OSError, ValueError):
            pass

    def say(self, line: str) -> None:
        """Write one message line to stderr, around the progress bar."""
        if self._bar:
            self._write("\r\x1b[K" + line + "\n" + self._bar)
        else:
            self._write(line + "\n")

    def error(self, line: str) -> None:
        """Write an error line, prefixed with the program's name."""
        self.say(f"{PROG}: {line}")

    def clear(self) -> None:
        """Remove the progress bar (at the end, or before asking a question)."""
        if self._bar:
            self._bar = ""
            self._write("\r\x1b[K")

    def _width(self) -> int:
        """The terminal's width: ``COLUMNS``, else what the terminal says, else 80."""
        try:
            columns = int(os.environ.get("COLUMNS", ""))
        except ValueError:
            columns = 0
        if columns <= 0:
            try:
                columns = os.get_terminal_size(self.err.fileno()).columns
            except (AttributeError, ValueError, OSError):
                columns = 0
        return columns if columns > 0 else 80

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Show a progress notification: redraw the bar, or write a plain line."""
        amount = _number(progress)
        if total is not None and total > 0:
            fraction = min(max(progress / total, 0.0), 1.0)
            amount = f"{amount}/{_number(total)}"
        else:
            fraction = None
        if not self.tty:
            line = f"progress: {amount}" + (f" ({fraction:.0%})" if fraction is not None else "")
            line += f" {message}" if message else ""
            if line != self._last_plain:
                self._last_plain = line
                self._write(line + "\n")
            return
        now = time.monotonic()
        if now - self._last_frame < FRAME and fraction != 1.0:
            return
        self._last_frame = now
        width = max(self._width() - 1, 10)
        if fraction is not None:
            cells = 20 if width >= 50 else 10
            done = round(fraction * cells)
            full, empty = ("\u2588", "\u2591") if self._unicode else ("#", "-")
            bar = f"[{full * done}{empty * (cells - done)}] {fraction:4.0%} {amount}"
        else:
            frames = "|/-\\"
            self._spin += 1
            bar = f"{frames[self._spin % 4]} {amount}"
        if message:
            bar += f" {message}"
        self._bar = "\r" + bar[:width] + "\x1b[K"
        self._write(self._bar)

    def ask(self, text: str) -> None:
        """Write (part of) a question for the terminal; it may end without a newline."""
        self.clear()
        # Before the write: a Ctrl-C right after it must still end the line.
        self.open_line = not text.endswith("\n")
        self._write(text)

    def end_line(self) -> None:
        """End a line a question left open (when interrupted while waiting for the answer)."""
        if self.open_line:
            self.open_line = False
            self._write("\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# ----------------------------------------------------------------- the budget


class Budget:
    """The whole command's time budget: a cancel scope that pauses while a person answers."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.scope = trio.CancelScope()
        self._paused = 0
        self._left = float("inf")

    def start(self) -> None:
        if self.seconds is not None:
            self.scope.deadline = trio.current_time() + self.seconds

    def pause(self) -> None:
        if self._paused == 0:
            self._left = self.scope.deadline - trio.current_time()
            self.scope.deadline = float("inf")
        self._paused += 1

    def resume(self) -> None:
        self._paused -= 1
        if self._paused == 0:
            self.scope.deadline = trio.current_time() + max(self._left, 0.0)


# ----------------------------------------------------------------- questions


class TerminalInput:
    """Lines typed on the terminal at stdin, read without blocking Trio.

    The file descriptor is left in blocking mode (it is shared with the
    shell): Trio waits until it is readable, then one ``read`` takes what
    the terminal's line discipline has.
    """

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False

    async def readline(self) -> str | None:
        """The next line without its newline, or `None` at end of input (Ctrl-D)."""
        while b"\n" not in self._buffer and not self._eof:
            await trio.lowlevel.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, 4096)
            except BlockingIOError:  # pragma: no cover - someone else read it first
                continue
            except OSError:
                chunk = b""
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True
        if b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
        elif self._buffer:
            line, self._buffer = self._buffer, b""
        else:
            return None
        return line.decode("utf-8", "replace").rstrip("\r")


class _Declined(Exception):
    """End of input while asking: decline."""


class _Invalid(ValueError):
    """The answer to one field is not valid; the message says why."""


def _choices(schema: dict[str, JSON]) -> list[tuple[JSON, str]] | None:
    """The ``(value, label)`` pairs of an enum field (single or multiple choice), if it is one."""
    source = schema.get("items") if schema.get("type") == "array" else schema
    if not isinstance(source, dict):
        return None
    enum = source.get("enum")
    if isinstance(enum, list):
        names = source.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(enum) else enum
        return [(value, str(label)) for value, label in zip(enum, labels, strict=True)]
    for key in ("oneOf", "anyOf"):
        options = source.get(key)
        if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
            return [(o["const"], str(o.get("title", o["const"]))) for o in options]
    return None


def _show_value(value: JSON) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    return _compact(value, 80)


class FormField:
    """One field of an elicitation form: its schema, and how to read an answer to it."""

    def __init__(self, name: str, schema: JSON, required: bool) -> None:
        self.name = name
        self.schema: dict[str, JSON] = schema if isinstance(schema, dict) else {}
        self.required = required
        kind = self.schema.get("type")
        self.choices = _choices(self.schema)
        if kind == "array":
            self.kind = "multi"
        elif self.choices is not None:
            self.kind = "choice"
        elif kind in ("boolean", "integer", "number"):
            self.kind = str(kind)
        else:
            self.kind = "string"
        self.default: JSON = self.schema.get("default")

    @property
    def label(self) -> str:
        title = self.schema.get("title")
        return title if isinstance(title, str) and title else self.name

    def hint(self) -> str:
        """What the prompt shows between brackets: type, limits, default."""
        parts: list[str] = []
        s = self.schema
        if self.kind == "boolean":
            parts.append("y/n")
        elif self.kind in ("integer", "number"):
            low, high = s.get("minimum"), s.get("maximum")
            bounds = (
                f" {_number(low) if low is not None else ''}..{_number(high) if high is not None else ''}"
            )
            parts.append(self.kind + (bounds if low is not None or high is not None else ""))
        elif self.kind == "choice":
            parts.append(f"1-{len(self.choices or ())}")
        elif self.kind == "multi":
            parts.append("numbers or values, comma-separated")
        elif isinstance(s.get("format"), str):
            parts.append(s["format"])
        if self.kind == "string" and ("minLength" in s or "maxLength" in s):
            parts.append(f"{s.get('minLength', 0)}..{s.get('maxLength', '')} characters")
        if self.default is not None:
            parts.append(f"default {self._default_text()}")
        elif self.required:
            parts.append("required")
        else:
            parts.append("optional, Enter skips")
        return ", ".join(parts)

    def _default_text(self) -> str:
        if self.choices is not None and self.kind == "choice":
            for value, label in self.choices:
                if value == self.default:
                    return label
        if isinstance(self.default, list):
            return ",".join(_show_value(v) for v in self.default)
        return _show_value(self.default)

    def _choice(self, text: str) -> JSON:
        assert self.choices is not None
        if text.isdigit() and 1 <= int(text) <= len(self.choices):
            return self.choices[int(text) - 1][0]
        for value, label in self.choices:
            if text == str(value) or text == label:
                return value
        for value, label in self.choices:
            if text.casefold() in (str(value).casefold(), label.casefold()):
                return value
        raise _Invalid(f"choose one of 1-{len(self.choices)}, or a value")

    def parse(self, text: str) -> JSON:
        """The value for the answer ``text`` (not empty); raises `ValueError` saying what is wrong."""
        s = self.schema
        if self.kind == "boolean":
            answer = text.strip().casefold()
            if answer in ("y", "yes", "true", "1", "on"):
                return True
            if answer in ("n", "no", "false", "0", "off"):
                return False
            raise _Invalid("answer y or n")
        if self.kind in ("integer", "number"):
            number: int | float
            try:
                number = int(text)
            except ValueError:
                if self.kind == "integer":
                    raise _Invalid("expected a whole number") from None
                try:
                    number = float(text)
                except ValueError:
                    raise _Invalid("expected a number") from None
                if number != number or number in (float("inf"), -float("inf")):
                    raise _Invalid("expected a finite number") from None
            low, high = s.get("minimum"), s.get("maximum")
            if isinstance(low, int | float) and number < low:
                raise _Invalid(f"at least {_number(low)}")
            if isinstance(high, int | float) and number > high:
                raise _Invalid(f"at most {_number(high)}")
            return number
        if self.kind == "choice":
            return self._choice(text.strip())
        if self.kind == "multi":
            picked: list[JSON] = []
            for part in text.split(","):
                if part.strip():
                    value = self._choice(part.strip())
                    if value not in picked:
                        picked.append(value)
            low, high = s.get("minItems"), s.get("maxItems")
            if isinstance(low, int) and len(picked) < low:
                raise _Invalid(f"choose at least {low}")
            if isinstance(high, int) and len(picked) > high:
                raise _Invalid(f"choose at most {high}")
            return picked
        low, high = s.get("minLength"), s.get("maxLength")
        if isinstance(low, int) and len(text) < low:
            raise _Invalid(f"at least {low} characters")
        if isinstance(high, int) and len(text) > high:
            raise _Invalid(f"at most {high} characters")
        _check_format(s.get("format"), text)
        return text


def _check_format(fmt: JSON, text: str) -> None:
    if fmt == "email":
        local, at, domain = text.rpartition("@")
        if not at or not local or "." not in domain or any(c.isspace() for c in text):
            raise _Invalid("expected an email address")
    elif fmt == "uri":
        from urllib.parse import urlsplit

        if not urlsplit(text).scheme or any(c.isspace() for c in text):
            raise _Invalid("expected a URI, such as https://example.com/")
    elif fmt in ("date", "date-time"):
        import datetime as dt

        try:
            if fmt == "date":
                dt.date.fromisoformat(text)
            else:
                dt.datetime.fromisoformat(text)
        except ValueError:
            example = "2025-12-31" if fmt == "date" else "2025-12-31T23:59:00Z"
            raise _Invalid(f"expected a {fmt}, such as {example}") from None


class Asker:
    """Answers the server's elicitation requests on the terminal, or declines them.

    Questions go to stderr and answers come from stdin, one request at a
    time; the command's time budget is paused meanwhile.
    """

    def __init__(
        self,
        console: Console,
        budget: Budget,
        *,
        interactive: bool,
        server_name: Callable[[], str],
        reader: TerminalInput | None = None,
    ) -> None:
        self.console = console
        self.budget = budget
        self.interactive = interactive
        self.server_name = server_name
        self.reader = reader if reader is not None else TerminalInput()
        self._lock = trio.Lock()

    async def __call__(self, params: ElicitFormParams | ElicitUrlParams) -> dict[str, JSON]:
        if not self.interactive:
            self.console.error(
                f"declined the server's request for input ({_compact(params.message, 120)}):"
                " stdin is not a terminal"
            )
            return {"action": "decline"}
        async with self._lock:
            self.budget.pause()
            try:
                if isinstance(params, ElicitUrlParams):
                    return await self._url(params)
                return await self._form(params)
            except _Declined:
                self.console.end_line()
                self.console.error("declined (end of input)")
                return {"action": "decline"}
            finally:
                self.budget.resume()

    async def _line(self, question: str) -> str:
        self.console.ask(question)
        line = await self.reader.readline()
        if line is None:
            raise _Declined
        # The terminal echoed the answer and its newline.
        self.console.open_line = False
        return line

    async def _yes(self, question: str) -> bool:
        while True:
            answer = (await self._line(question)).strip().casefold()
            if answer in ("y", "yes"):
                return True
            if answer in ("", "n", "no"):
                return False
            self.console.ask("  answer y or n\n")

    async def _form(self, params: ElicitFormParams) -> dict[str, JSON]:
        schema = params.requested_schema
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        needed = set(required) if isinstance(required, list) else set()
        fields = [FormField(name, prop, name in needed) for name, prop in properties.items()]
        self.console.ask(
            f"The server {self.server_name()} asks: {params.message}\n"
            "(Enter takes the default; Ctrl-D declines; do not enter secrets)\n"
        )
        content: dict[str, JSON] = {}
        for field in fields:
            description = field.schema.get("description")
            if isinstance(description, str) and description:
                self.console.ask(f"  {field.label}: {description}\n")
            if field.choices is not None:
                self.console.ask(
                    "".join(f"    {n}) {label}\n" for n, (_, label) in enumerate(field.choices, start=1))
                )
            while True:
                text = await self._line(f"  {field.label} [{field.hint()}]: ")
                if not text.strip():
                    if field.default is not None:
                        content[field.name] = field.default
                    elif field.required:
                        self.console.ask("    required\n")
                        continue
                    break
                try:
                    content[field.name] = field.parse(text)
                except _Invalid as exc:
                    self.console.ask(f"    {exc}\n")
                    continue
                break
        summary = "".join(f"  {name}: {_compact(value, 200)}\n" for name, value in content.items())
        self.console.ask(f"About to send to {self.server_name()}:\n" + (summary or "  (nothing)\n"))
        if await self._yes("Send it? [y/N] "):
            return {"action": "accept", "content": content}
        return {"action": "decline"}

    async def _url(self, params: ElicitUrlParams) -> dict[str, JSON]:
        from urllib.parse import urlsplit

        try:
            host = urlsplit(params.url).hostname or "?"
        except ValueError:
            host = "?"
        lines = [
            f"The server {self.server_name()} asks you to open a URL: {params.message}",
            f"  {params.url}",
            f"  domain: {host}",
        ]
        if "xn--" in host:
            lines.append("  warning: the domain is punycode (xn--); it may imitate another")
        self.console.ask("\n".join(lines) + "\n")
        if await self._yes("Will you open it yourself (trio-mcp does not open it)? [y/N] "):
            return {"action": "accept"}
        return {"action": "decline"}


# ----------------------------------------------------------------- the commands


class Session:
    """What the commands share: the options, the console, the client."""

    def __init__(self, options: Options, console: Console) -> None:
        self.options = options
        self.console = console
        self.stage = "starting the server"
        self.client: Client | None = None
        self.stdout_status = EXIT_OK
        """`EXIT_BROKEN_PIPE` once writing the result failed because nobody reads it."""

    def server_name(self) -> str:
        """The server's name for people, quoted (it is the server's own claim)."""
        client = self.client
        if client is not None and client.server_info is not None:
            info = client.server_info
            return repr(info.title or info.name)
        return repr(_command_line(self.options))

    def emit(self, text: str) -> None:
        """Write the result (text ending with a newline, or nothing) to stdout, at once.

        At once: the server may take a while to exit after it (up to its
        grace period), and the result should not wait for that.
        """
        if text and self.stdout_status == EXIT_OK:
            self.stdout_status = _flush_stdout(text)

    def emit_json(self, value: JSON) -> None:
        """Write the result as one JSON document."""
        self.emit(pretty_json(value) + "\n")


def _wire(model: Any) -> dict[str, JSON]:
    wire = unstructure(model)
    wire.pop("resultType", None)
    return wire


def _call_result_wire(result: CallToolResult) -> dict[str, JSON]:
    """The result's wire JSON; plain text results are built by hand (no converter to load)."""
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
    return _wire(result)


async def _info(session: Session, client: Client) -> int:
    await trio.lowlevel.checkpoint()
    discover = client.discover_result
    info = client.server_info
    if session.options.json_output:
        session.emit_json(
            {
                "era": client.era,
                "protocolVersion": client.protocol_version,
                "supportedVersions": discover.supported_versions if discover is not None else None,
                "serverInfo": unstructure(info) if info is not None else None,
                "capabilities": unstructure(client.server_capabilities),
                "instructions": client.instructions,
            }
        )
        return EXIT_OK
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
        text += "instructions:\n" + _indent(client.instructions.rstrip("\n"), "  ") + "\n"
    session.emit(text)
    return EXIT_OK


def _show_list(
    session: Session, key: str, items: Sequence[_Item], nothing: str, describe: Callable[[_Item], list[str]]
) -> int:
    """What a list command prints: ``{key: [...]}`` with --json, else each item's lines."""
    if session.options.json_output:
        session.emit_json({key: [_wire(item) for item in items]})
        return EXIT_OK
    if not items:
        session.console.say(f"(the server has no {nothing})")
    session.emit(_lines("\n".join(describe(item)) for item in items))
    return EXIT_OK


def _tool_lines(tool: Tool, schema: bool) -> list[str]:
    lines = [_heading(tool.name, tool.display_name)]
    if tool.description:
        lines.append(_indent(tool.description.strip()))
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
        lines.append(_indent(pretty_json(tool.input_schema), "      "))
        if tool.output_schema is not None:
            lines.append("    output schema:")
            lines.append(_indent(pretty_json(tool.output_schema), "      "))
    elif signature:
        lines.append(f"    arguments: {signature}")
    return lines


def _prompt_lines(prompt: Prompt) -> list[str]:
    lines = [_heading(prompt.name, prompt.title)]
    if prompt.description:
        lines.append(_indent(prompt.description.strip()))
    if prompt.arguments:
        described = [
            f"{arg.name}{'' if arg.required else '?'}" + (f" ({arg.description})" if arg.description else "")
            for arg in prompt.arguments
        ]
        lines.append(f"    arguments: {', '.join(described)}")
    return lines


def _resource_lines(resource: Resource) -> list[str]:
    size = human_size(resource.size) if resource.size is not None else None
    details = _joined(resource.title or resource.name, resource.mime_type, size)
    lines = [f"{resource.uri}  ({details})"]
    if resource.description:
        lines.append(_indent(resource.description.strip()))
    return lines


def _template_lines(template: ResourceTemplate) -> list[str]:
    details = _joined(template.title or template.name, template.mime_type)
    lines = [f"{template.uri_template}  ({details})"]
    if template.description:
        lines.append(_indent(template.description.strip()))
    return lines


async def _tools(session: Session, client: Client) -> int:
    session.stage = "tools/list"
    tools = await client.list_tools()
    schema = session.options.schema
    return _show_list(session, "tools", tools, "tools", lambda tool: _tool_lines(tool, schema))


async def _prompts(session: Session, client: Client) -> int:
    session.stage = "prompts/list"
    return _show_list(session, "prompts", await client.list_prompts(), "prompts", _prompt_lines)


async def _resources(session: Session, client: Client) -> int:
    session.stage = "resources/list"
    return _show_list(session, "resources", await client.list_resources(), "resources", _resource_lines)


async def _templates(session: Session, client: Client) -> int:
    session.stage = "resources/templates/list"
    templates = await client.list_resource_templates()
    return _show_list(session, "resourceTemplates", templates, "resource templates", _template_lines)


def _declares_string(schema: JSON) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "string":
        return True
    enum = schema.get("enum")
    return isinstance(enum, list) and bool(enum) and all(isinstance(v, str) for v in enum)


async def _arguments_for(session: Session, client: Client) -> dict[str, JSON]:
    """The call's arguments, with values read as JSON put back to text where the tool wants a string."""
    options = session.options
    arguments = options.arguments
    if not options.raw_values:
        return arguments
    session.stage = "tools/list"
    tool = None
    async for candidate in client.iter_tools():
        if candidate.name == options.target:
            tool = candidate
            break
    properties = tool.input_schema.get("properties") if tool is not None else None
    if not isinstance(properties, dict):
        return arguments
    strings = {key: raw for key, raw in options.raw_values.items() if _declares_string(properties.get(key))}
    return {**arguments, **strings}


async def _call(session: Session, client: Client) -> int:
    options = session.options
    arguments = await _arguments_for(session, client)
    session.stage = "tools/call"
    result = await client.call_tool(options.target, arguments, on_progress=session.console.progress)
    session.console.clear()
    if options.json_output:
        session.emit_json(_call_result_wire(result))
        if result.is_error:
            session.console.error(f"the tool {options.target!r} reported an error")
            return EXIT_TOOL_ERROR
        return EXIT_OK
    text = render_call_result(result)
    if result.is_error:
        body = text.rstrip("\n")
        if "\n" in body or not body:
            session.console.error(f"the tool {options.target!r} reported an error" + (":" if body else ""))
            if body:
                session.console.say(body)
        else:
            session.console.error(f"the tool {options.target!r} reported an error: {body}")
        return EXIT_TOOL_ERROR
    session.emit(text)
    return EXIT_OK


async def _read(session: Session, client: Client) -> int:
    session.stage = "resources/read"
    result = await client.read_resource(session.options.target, on_progress=session.console.progress)
    assert isinstance(result, ReadResourceResult)  # not manual: input is answered through the hooks
    session.console.clear()
    if session.options.json_output:
        session.emit_json(_wire(result))
    else:
        if not result.contents:
            session.console.say("(the resource is empty)")
        session.emit(render_read_result(result))
    return EXIT_OK


async def _prompt(session: Session, client: Client) -> int:
    options = session.options
    session.stage = "prompts/get"
    result = await client.get_prompt(
        options.target, options.arguments or None, on_progress=session.console.progress
    )
    assert isinstance(result, GetPromptResult)  # not manual: input is answered through the hooks
    session.console.clear()
    if options.json_output:
        session.emit_json(_wire(result))
    else:
        session.emit(render_prompt_result(result))
    return EXIT_OK


_HANDLERS: Final[dict[str, Callable[[Session, Client], Any]]] = {
    "info": _info,
    "tools": _tools,
    "prompts": _prompts,
    "resources": _resources,
    "templates": _templates,
    "call": _call,
    "read": _read,
    "prompt": _prompt,
}


# ----------------------------------------------------------------- running


def _show_note(session: Session, note: dict[str, JSON]) -> None:
    """Write a server notification to stderr (``--verbose``)."""
    method = note.get("method")
    params = note.get("params")
    params = params if isinstance(params, dict) else {}
    if method == "notifications/message":
        level = params.get("level", "?")
        logger = params.get("logger")
        data = params.get("data")
        text = data if isinstance(data, str) else _compact(data)
        session.console.say(
            f"server log [{level}]{' ' + str(logger) if isinstance(logger, str) else ''}: {text}"
        )
    elif method == "notifications/progress":
        return
    else:
        shown = {k: v for k, v in params.items() if k != "_meta"}
        session.console.say(f"server notification {method}" + (f" {_compact(shown)}" if shown else ""))


async def _session(options: Options, console: Console) -> tuple[int, Session]:
    session = Session(options, console)
    budget = Budget(options.timeout)
    asker = Asker(console, budget, interactive=_isatty(sys.stdin), server_name=session.server_name)
    verbose = options.verbose

    def on_stderr(line: str) -> None:
        if verbose:
            console.say(f"server stderr: {line}")

    def on_log(message: str) -> None:
        if verbose:
            console.say(f"{PROG}: {message}")

    def on_notification(note: dict[str, JSON]) -> None:
        if verbose:
            _show_note(session, note)

    code = EXIT_OK
    budget.start()
    try:
        with budget.scope:
            session.stage = "connecting"
            code = await _connect_and_run(session, asker, on_stderr, on_log, on_notification)
    except MCPError as exc:
        raise _explain(exc, options, session.stage) from None
    if budget.scope.cancelled_caught:
        seconds = _number(options.timeout or 0)
        raise _Failure(
            EXIT_TIMEOUT,
            f"timed out after {seconds} s ({session.stage})",
            kind="timeout",
            stage=session.stage,
        )
    return code, session


async def _connect_and_run(
    session: Session,
    asker: Asker,
    on_stderr: Callable[[str], None],
    on_log: Callable[[str], None],
    on_notification: Callable[[dict[str, JSON]], None],
) -> int:
    options = session.options
    probe = PROBE_TIMEOUT if options.timeout is None else min(PROBE_TIMEOUT, options.timeout / 2)
    async with open_stdio_client(
        options.server[0],
        options.server[1:],
        env=options.env,
        cwd=options.cwd,
        on_stderr=on_stderr,
        on_log=on_log,
        request_timeout=None,
        protocol=options.protocol,
        probe_timeout=probe,
        on_elicitation=asker,
        on_notification=on_notification,
        log_level="debug" if options.verbose else None,
        input_timeout=None,
    ) as client:
        session.client = client
        code: int = await _HANDLERS[options.command](session, client)
    return code


def _command_line(options: Options) -> str:
    """The server's command line, shortened."""
    if options.demo:
        return "python -m trio_mcp.demo"
    import shlex

    text = shlex.join(options.server)
    return text if len(text) <= 80 else text[:77] + "..."


def _server_words(options: Options) -> str:
    if options.demo:
        return "the demo server (python -m trio_mcp.demo)"
    return f"the server {_command_line(options)}"


def _explain(exc: BaseException, options: Options, stage: str) -> _Failure:
    """The exit status and message for an error of the library."""
    where = "while connecting" if stage == "connecting" else f"during {stage}"
    if isinstance(exc, SpawnFailed):
        return _Failure(EXIT_SPAWN, str(exc), kind="spawn")
    if isinstance(exc, ServerGone):
        if exc.exit_code is not None:
            what = f"exited with code {exc.exit_code}"
        elif exc.signal is not None:
            what = f"was killed by signal {exc.signal}"
        else:
            what = str(exc).split("\n", 1)[0]
            prefix = f"server {options.server[0]!r} "
            what = what[len(prefix) :] if what.startswith(prefix) else what
        tail = exc.stderr_tail.rstrip("\n").splitlines()[-TAIL_LINES:]
        message = f"{_server_words(options)} {what} {where}"
        if not tail:
            message += " (it wrote nothing to stderr)"
        return _Failure(
            EXIT_SERVER_GONE,
            message,
            detail="\n".join("  | " + line for line in tail),
            kind="server-gone",
            serverExitCode=exc.exit_code,
            serverSignal=exc.signal,
            stderrTail=exc.stderr_tail,
        )
    if isinstance(exc, TransportClosed):
        return _Failure(EXIT_SERVER_GONE, f"the connection closed {where}: {exc}", kind="server-gone")
    if isinstance(exc, RequestTimeout):
        return _Failure(EXIT_TIMEOUT, f"timed out {where}: {exc}", kind="timeout")
    if isinstance(exc, RpcError):
        message = f"the server answered {stage} with error {exc.code}: {exc.message}"
        data = exc.data
        if (
            exc.code == -32021
            and isinstance(data, dict)
            and isinstance(data.get("requiredCapabilities"), dict)
        ):
            wanted = ", ".join(data["requiredCapabilities"])
            message += f" (it needs {wanted}; {PROG} offers elicitation only: no sampling, no roots)"
        elif exc.code == -32042 and isinstance(data, dict) and isinstance(data.get("elicitations"), list):
            urls = [e.get("url") for e in data["elicitations"] if isinstance(e, dict)]
            message += f" (open {', '.join(str(u) for u in urls)} and try again)"
        elif data is not None:
            message += f" (data: {_compact(data, 200)})"
        return _Failure(EXIT_RPC_ERROR, message, kind="rpc", code=exc.code, data=exc.data)
    if isinstance(exc, InputRequestFailed):
        if exc.method == "sampling/createMessage":
            message = (
                f"the server asked for sampling (a language model's completion) {where};"
                f" {PROG} has no model and refuses it"
            )
        elif exc.method == "roots/list":
            message = f"the server asked for roots {where}; {PROG} offers none"
        else:
            message = f"{exc} ({where})"
        return _Failure(EXIT_INPUT, message, kind="input", method=exc.method)
    if isinstance(exc, VersionMismatch):
        return _Failure(EXIT_PROTOCOL, f"no protocol version in common: {exc}", kind="version")
    if isinstance(exc, ProtocolError | NotSupported):
        return _Failure(EXIT_PROTOCOL, f"protocol error {where}: {exc}", kind="protocol")
    if isinstance(exc, MCPError):  # pragma: no cover - every MCPError is handled above
        return _Failure(EXIT_PROTOCOL, f"{exc} ({where})", kind="protocol")
    return _Failure(EXIT_INTERNAL, f"unexpected error: {type(exc).__name__}: {exc}", kind="internal")


def _leaf(exc: BaseException) -> BaseException:
    """The one exception inside nested single-exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _interrupted(exc: BaseException) -> bool:
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(_interrupted(inner) for inner in exc.exceptions)
    return False


def _flush_stdout(text: str) -> int:
    """Write the result to stdout; `EXIT_BROKEN_PIPE` if nobody reads it."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Whoever read it left (`| head`): exit quietly, with stdout out of the way.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    return EXIT_OK


def execute(options: Options) -> int:
    """Run the parsed command line: the result to stdout, the rest to stderr; the exit status.

    Never raises (but `SystemExit`): every error is a message and an exit
    status.
    """
    console = Console()
    session: Session | None = None
    failure: _Failure | None = None
    code = EXIT_OK
    try:
        code, session = trio.run(_session, options, console)
    except _Failure as exc:
        failure = exc
    except BaseException as exc:
        console.clear()
        if _interrupted(exc):
            console.end_line()
            return EXIT_INTERRUPTED
        if isinstance(exc, SystemExit):
            raise
        leaf = _leaf(exc)
        if isinstance(leaf, _Failure):
            failure = leaf
        else:
            failure = _explain(leaf, options, "connecting")
            if failure.status == EXIT_INTERNAL and options.verbose:
                import traceback

                traceback.print_exception(exc)
    console.clear()
    if failure is not None:
        if options.json_output:
            error: dict[str, JSON] = {
                "kind": failure.kind,
                "message": failure.message,
                "exitCode": failure.status,
            }
            error.update({key: value for key, value in failure.data.items() if value is not None})
            _flush_stdout(pretty_json({"error": error}) + "\n")
        console.error(failure.message + ("; its last stderr lines:" if failure.detail else ""))
        if failure.detail:
            console.say(failure.detail)
        return failure.status
    assert session is not None
    return session.stdout_status if session.stdout_status != EXIT_OK else code
