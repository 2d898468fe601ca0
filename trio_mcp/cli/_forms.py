"""The server's questions (elicitation), asked on the terminal: forms, URLs, consent.

`Asker` is the command's ``on_elicitation`` hook: it asks each field of a
form by its schema, validates the answers, and shows them for confirmation
before they are sent; or declines, when stdin is not a terminal.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

import trio

from ._render import compact, number

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._models import ElicitFormParams, ElicitUrlParams
    from ._console import Console

JSON = Any


class Pausable(Protocol):
    """A time budget that stops running while a person answers."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...


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
    return compact(value, 80)


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
            bounds = f" {number(low) if low is not None else ''}..{number(high) if high is not None else ''}"
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
            value: int | float
            try:
                value = int(text)
            except ValueError:
                if self.kind == "integer":
                    raise _Invalid("expected a whole number") from None
                try:
                    value = float(text)
                except ValueError:
                    raise _Invalid("expected a number") from None
                if value != value or value in (float("inf"), -float("inf")):
                    raise _Invalid("expected a finite number") from None
            low, high = s.get("minimum"), s.get("maximum")
            if isinstance(low, int | float) and value < low:
                raise _Invalid(f"at least {number(low)}")
            if isinstance(high, int | float) and value > high:
                raise _Invalid(f"at most {number(high)}")
            return value
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
    time; the command's time budget is paused meanwhile. When stdin is not
    a terminal, or once its input has ended (Ctrl-D), every request is
    declined without asking: the first time a question comes, saying so on
    stderr; when the server asks it again, quietly (the answer cannot
    change).
    """

    def __init__(
        self,
        console: Console,
        budget: Pausable,
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
        self.declined: str | None = None
        """Why requests were declined without a person's answer (``"stdin is not
        a terminal"``, ``"end of input"``), once one was; else `None`."""
        self._ended = False
        self._said: list[ElicitFormParams | ElicitUrlParams] = []
        self._lock = trio.Lock()

    async def __call__(self, params: ElicitFormParams | ElicitUrlParams) -> dict[str, JSON]:
        from .._models import ElicitUrlParams  # loaded by the client by then

        async with self._lock:
            if not self.interactive or self._ended:
                return self._decline(params, "end of input" if self._ended else "stdin is not a terminal")
            self.budget.pause()
            try:
                if isinstance(params, ElicitUrlParams):
                    return await self._url(params)
                return await self._form(params)
            except _Declined:
                self.console.end_line()
                self.console.error("declined (end of input)")
                self._ended = True
                self._said.append(params)
                self.declined = "end of input"
                return {"action": "decline"}
            finally:
                self.budget.resume()

    def renew(self, budget: Pausable) -> None:
        """Start afresh for the next command of a shell, whose time budget is ``budget``.

        An end of input (Ctrl-D) declined the questions of one command; the
        next command's are asked again.
        """
        self.budget = budget
        if self._ended:
            self._ended = False
            self.declined = None
            self._said.clear()
            self.reader = TerminalInput(self.reader.fd)

    def _decline(self, params: ElicitFormParams | ElicitUrlParams, why: str) -> dict[str, JSON]:
        """Decline without asking; say so unless this very question was declined before."""
        self.declined = why
        if params not in self._said:
            self._said.append(params)
            self.console.error(
                f"declined the server's request for input ({compact(params.message, 120)}): {why}"
            )
        return {"action": "decline"}

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
        summary = "".join(f"  {name}: {compact(value, 200)}\n" for name, value in content.items())
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
