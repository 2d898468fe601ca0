"""What the demo server offers, as plain data and pure functions.

The tool, resource and prompt definitions are written once, in the shape of
the newest revision, and trimmed by `for_version` to what an older
initialize-era revision knows (no ``title`` before 2025-06-18, no tool
``annotations`` before 2025-03-26, ...). Argument checking, resource reading,
prompt filling and completion live here too; nothing in this module does I/O.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any, Final, TypeAlias
from urllib.parse import unquote

import orjson

from .._core.eras import LEGACY_VERSIONS, MODERN_VERSIONS
from .._core.kinds import json_kind
from .._serving.task_rules import TASKS_SINCE, TaskSupport, extension_capability, legacy_capability
from .._version import __version__

JSON: TypeAlias = Any

MODERN: Final = MODERN_VERSIONS[0]
#: The initialize-era revisions the demo speaks, newest first.
LEGACY: Final = LEGACY_VERSIONS

NAME: Final = "trio-mcp-demo"
TITLE: Final = "trio-mcp demo server"

INSTRUCTIONS: Final = (
    "A demo server bundled with trio-mcp, for trying MCP clients. Tools: echo (returns its text), "
    "add (adds two numbers), slow (reports progress), ask (asks the user for their name), "
    "report (long work that can run as a task, and may ask a question), "
    "batch (long work that must run as a task). "
    "Read demo://readme for an overview, or demo://greeting/{name} for a greeting; "
    "the prompt greet asks the model to greet someone."
)

#: How long, in milliseconds, clients may cache lists, reads and discovery
#: (2026-07-28 era): nothing the demo offers ever changes.
TTL_MS: Final = 3_600_000

README_URI: Final = "demo://readme"
GREETING_TEMPLATE: Final = "demo://greeting/{name}"
GREETING_PREFIX: Final = "demo://greeting/"

README: Final = """\
# The trio-mcp demo server

A small MCP server that ships with trio-mcp, so that a client can be tried
without installing anything else. It speaks both protocol eras over stdio:
2026-07-28 (stateless, `server/discover`) and the initialize era (2025-11-25
back to 2024-11-05).

- Tools: `echo` returns its text, `add` adds two numbers (with structured
  output), `slow` reports progress, `ask` asks the user for their name,
  `report` and `batch` run as tasks (`batch` only as one).
- Resources: this text (`demo://readme`) and a greeting for anyone,
  `demo://greeting/{name}`.
- Prompt: `greet`, with completion of its `name` argument.

Run it with `python -m trio_mcp.demo`, or try it with `trio-mcp call echo text=hi`.
"""

#: The names offered when completing the ``name`` of the greet prompt.
NAMES: Final = (
    "Ada",
    "Alan",
    "Alice",
    "Barbara",
    "Bob",
    "Carol",
    "Dave",
    "Edsger",
    "Erin",
    "Grace",
    "Katherine",
    "Linus",
    "Margaret",
    "Niklaus",
)

DEFAULT_QUESTION: Final = "What is your name?"


def server_info(version: str) -> dict[str, JSON]:
    """The demo's ``Implementation`` object at a protocol version."""
    info: dict[str, JSON] = {"name": NAME, "version": __version__}
    if version >= "2025-06-18":
        info["title"] = TITLE
    return info


def capabilities(version: str) -> dict[str, JSON]:
    """The demo's ``ServerCapabilities`` at a protocol version."""
    caps: dict[str, JSON] = {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}
    if version >= "2025-03-26":
        caps["completions"] = {}
    if version == MODERN:
        caps["extensions"] = extension_capability()
    elif version >= TASKS_SINCE:
        caps["tasks"] = legacy_capability()
    return caps


# ------------------------------------------------------------------ tools

_TOOLS: Final[tuple[dict[str, JSON], ...]] = (
    {
        "name": "echo",
        "title": "Echo",
        "description": "Return the given text unchanged.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "title": "Text", "description": "The text to send back."},
            },
            "required": ["text"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "add",
        "title": "Add two numbers",
        "description": "Add two numbers; the sum comes back as text and as structured content.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "number", "title": "First number", "description": "The first term."},
                "b": {"type": "number", "title": "Second number", "description": "The second term."},
            },
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "sum": {"type": "number", "title": "Sum", "description": "a + b"},
            },
            "required": ["sum"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "slow",
        "title": "Slow task",
        "description": (
            "Wait `delay` seconds `steps` times, sending a progress notification after each step "
            "(when the request asks for progress), then say it is done."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "steps": {
                    "type": "integer",
                    "title": "Steps",
                    "description": "How many steps to take.",
                    "minimum": 1,
                    "maximum": 100,
                    "default": 5,
                },
                "delay": {
                    "type": "number",
                    "title": "Delay",
                    "description": "Seconds each step takes.",
                    "minimum": 0,
                    "maximum": 10,
                    "default": 0.2,
                },
            },
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "ask",
        "title": "Ask for a name",
        "description": (
            "Ask the user for their name (an elicitation request, answered by the client) "
            "and greet them by it."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "question": {
                    "type": "string",
                    "title": "Question",
                    "description": f"What to ask the user (default: {DEFAULT_QUESTION!r}).",
                },
            },
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "report",
        "title": "Write a report",
        "description": (
            "Long work that can run as a task: `steps` steps of `delay` seconds, reporting progress "
            "after each; with `ask`, it asks the user who the report is for halfway through."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "steps": {
                    "type": "integer",
                    "title": "Steps",
                    "description": "How many steps to take.",
                    "minimum": 1,
                    "maximum": 100,
                    "default": 3,
                },
                "delay": {
                    "type": "number",
                    "title": "Delay",
                    "description": "Seconds each step takes.",
                    "minimum": 0,
                    "maximum": 60,
                    "default": 0.5,
                },
                "ask": {
                    "type": "boolean",
                    "title": "Ask",
                    "description": "Ask the user who the report is for (an elicitation).",
                    "default": False,
                },
            },
            "additionalProperties": False,
        },
        "execution": {"taskSupport": "optional"},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "batch",
        "title": "Process a batch",
        "description": (
            "Long work that must run as a task: process `items` items of `delay` seconds each; "
            "with `fail_at`, that item fails and the task with it (a JSON-RPC error)."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "items": {
                    "type": "integer",
                    "title": "Items",
                    "description": "How many items to process.",
                    "minimum": 1,
                    "maximum": 1000,
                    "default": 3,
                },
                "delay": {
                    "type": "number",
                    "title": "Delay",
                    "description": "Seconds each item takes.",
                    "minimum": 0,
                    "maximum": 60,
                    "default": 0.2,
                },
                "fail_at": {
                    "type": "integer",
                    "title": "Fail at",
                    "description": "The item that fails (none by default).",
                    "minimum": 1,
                },
            },
            "additionalProperties": False,
        },
        "execution": {"taskSupport": "required"},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
)

TOOL_NAMES: Final = frozenset(tool["name"] for tool in _TOOLS)
_SCHEMAS: Final = {tool["name"]: tool["inputSchema"] for tool in _TOOLS}
#: How each tool may run as a task (``forbidden`` when it has no ``execution``).
TASK_SUPPORT: Final[dict[str, TaskSupport]] = {
    tool["name"]: tool.get("execution", {}).get("taskSupport", "forbidden") for tool in _TOOLS
}
REPORT_QUESTION: Final = "Who is the report for?"


def tools(version: str) -> list[dict[str, JSON]]:
    """The ``Tool`` objects for ``tools/list`` at a protocol version."""
    out = []
    for tool in _TOOLS:
        entry = dict(tool)
        if version < "2025-06-18":
            entry.pop("title")
            entry.pop("outputSchema", None)
        if version < "2025-03-26":
            entry.pop("annotations")
        if version == MODERN or version < TASKS_SINCE:
            # Only 2025-11-25 has Tool.execution; the 2026-07-28 extension has none.
            entry.pop("execution", None)
        out.append(entry)
    return out


class BadArguments(Exception):
    """A tool's arguments break its input schema (reported as an ``isError`` result)."""


def check_arguments(tool: str, arguments: dict[str, JSON]) -> dict[str, JSON]:
    """Check ``arguments`` against the tool's input schema; return them with defaults filled in.

    Only what the demo's own schemas use is checked: required properties, no
    unknown properties, ``string``/``number``/``integer``/``boolean`` types and
    ``minimum``/``maximum``.

    Raises:
        BadArguments: Saying what is wrong, for the model to correct.
    """
    schema = _SCHEMAS[tool]
    properties: dict[str, dict[str, JSON]] = schema["properties"]
    problems = [f"unknown argument {key!r}" for key in arguments if key not in properties]
    problems += [f"missing argument {key!r}" for key in schema.get("required", ()) if key not in arguments]
    checked: dict[str, JSON] = {}
    for key, spec in properties.items():
        if key not in arguments:
            if "default" in spec:
                checked[key] = spec["default"]
            continue
        value = arguments[key]
        wanted = spec["type"]
        if wanted == "string":
            ok = isinstance(value, str)
        elif wanted == "boolean":
            ok = isinstance(value, bool)
        elif wanted == "integer":
            ok = (isinstance(value, int) and not isinstance(value, bool)) or (
                isinstance(value, float) and value.is_integer()
            )
            if ok:
                value = int(value)
        else:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok:
            problems.append(
                f"{key!r} must be {'an' if wanted == 'integer' else 'a'} {wanted}, not {json_kind(value)}"
            )
            continue
        if "minimum" in spec and value < spec["minimum"]:
            problems.append(f"{key!r} must be at least {spec['minimum']}, not {value}")
        elif "maximum" in spec and value > spec["maximum"]:
            problems.append(f"{key!r} must be at most {spec['maximum']}, not {value}")
        else:
            checked[key] = value
    if problems:
        raise BadArguments(f"Invalid arguments for the {tool} tool: {'; '.join(problems)}.")
    return checked


def add(a: JSON, b: JSON) -> JSON:
    """The sum, if JSON can carry it.

    Raises:
        BadArguments: The sum is not finite, or an integer beyond 64 bits.
    """
    total = a + b
    if isinstance(total, int) and not -(2**63) <= total < 2**63:
        raise BadArguments(f"The sum {total} does not fit in a 64-bit integer.")
    if isinstance(total, float) and not math.isfinite(total):
        raise BadArguments("The sum is too large to represent.")
    return total


def number_text(value: float) -> str:
    """A number as JSON writes it (``3``, ``0.5``, ``1e+100``)."""
    return orjson.dumps(value).decode()


# ------------------------------------------------------- the ask tool's state

_STATE_TAG: Final = "ask1."


def ask_state(question: str) -> str:
    """The opaque ``requestState`` of an ``ask`` round (2026-07-28 era).

    It records which question was asked; the server keeps nothing between
    rounds. A real server would sign or encrypt it, since the client could
    change it.
    """
    body = orjson.dumps({"question": question})
    return _STATE_TAG + base64.urlsafe_b64encode(body).decode().rstrip("=")


def read_ask_state(state: object) -> str | None:
    """The question an `ask_state` records, or `None` if ``state`` is not one."""
    if not isinstance(state, str) or not state.startswith(_STATE_TAG):
        return None
    body = state[len(_STATE_TAG) :]
    try:
        decoded = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError):
        return None
    question = decoded.get("question") if isinstance(decoded, dict) else None
    return question if isinstance(question, str) else None


def elicitation(question: str, version: str) -> dict[str, JSON]:
    """The params of the ``elicitation/create`` request that asks for a name."""
    params: dict[str, JSON] = {
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "title": "Name",
                    "description": "Your name, as you like to be greeted.",
                    "minLength": 1,
                },
            },
            "required": ["name"],
        },
    }
    if version >= "2025-11-25":
        params = {"mode": "form", **params}
    return params


def can_elicit_form(capabilities: object) -> bool:
    """Whether declared ``ClientCapabilities`` allow a form-mode elicitation."""
    if not isinstance(capabilities, dict):
        return False
    declared = capabilities.get("elicitation")
    if not isinstance(declared, dict):
        return False
    # ``{}`` means form mode only; otherwise form mode must be listed.
    return not declared or isinstance(declared.get("form"), dict)


def greet_answer(answer: object) -> tuple[str, bool]:
    """The ``ask`` tool's text for an ``ElicitResult``, and whether it is an error."""
    if not isinstance(answer, dict):
        return "The client's answer to the question was not an elicitation result.", True
    action = answer.get("action")
    if action == "accept":
        content = answer.get("content")
        name = content.get("name") if isinstance(content, dict) else None
        if isinstance(name, str) and name.strip():
            return f"Hello, {name.strip()}!", False
        return "The user accepted the question but gave no name.", True
    if action == "decline":
        return "The user declined to give their name.", False
    if action == "cancel":
        return "The user dismissed the question without answering.", False
    return f"The client answered the question with an unknown action {action!r}.", True


def report_text(steps: int, answer: object = None) -> tuple[str, bool]:
    """The ``report`` tool's text, given the answer to its question if it asked one, and whether it is an error."""
    done = f"Report ready: {steps} step{'s' if steps != 1 else ''}"
    if answer is None:
        return done + ".", False
    if not isinstance(answer, dict):
        return "The client's answer to the question was not an elicitation result.", True
    if answer.get("action") != "accept":
        return f"{done}, for nobody in particular.", False
    content = answer.get("content")
    name = content.get("name") if isinstance(content, dict) else None
    if not isinstance(name, str) or not name.strip():
        return "The user accepted the question but gave no name.", True
    return f"{done}, for {name.strip()}.", False


# --------------------------------------------------------------- resources


def resources(version: str) -> list[dict[str, JSON]]:
    """The ``Resource`` objects for ``resources/list``."""
    entry: dict[str, JSON] = {
        "uri": README_URI,
        "name": "readme",
        "title": "About the demo server",
        "description": "What this demo server offers and how to run it.",
        "mimeType": "text/markdown",
    }
    if version < "2025-06-18":
        del entry["title"]
    return [entry]


def resource_templates(version: str) -> list[dict[str, JSON]]:
    """The ``ResourceTemplate`` objects for ``resources/templates/list``."""
    entry: dict[str, JSON] = {
        "uriTemplate": GREETING_TEMPLATE,
        "name": "greeting",
        "title": "A greeting",
        "description": "A one-line greeting for the name in the URI.",
        "mimeType": "text/plain",
    }
    if version < "2025-06-18":
        del entry["title"]
    return [entry]


def read(uri: str) -> dict[str, JSON] | None:
    """The ``TextResourceContents`` at ``uri``, or `None` when there is none."""
    if uri == README_URI:
        return {"uri": uri, "mimeType": "text/markdown", "text": README}
    if uri.startswith(GREETING_PREFIX):
        try:
            name = unquote(uri[len(GREETING_PREFIX) :], errors="strict")
        except UnicodeDecodeError:
            return None
        if name and "/" not in name:
            return {"uri": uri, "mimeType": "text/plain", "text": f"Hello, {name}!"}
    return None


# ------------------------------------------------------------------ prompts


def prompts(version: str) -> list[dict[str, JSON]]:
    """The ``Prompt`` objects for ``prompts/list``."""
    argument: dict[str, JSON] = {
        "name": "name",
        "title": "Name",
        "description": "Who to greet.",
        "required": True,
    }
    prompt: dict[str, JSON] = {
        "name": "greet",
        "title": "Greet someone",
        "description": "Ask the model for a short, warm greeting for someone.",
        "arguments": [argument],
    }
    if version < "2025-06-18":
        del prompt["title"], argument["title"]
    return [prompt]


def greet_prompt(name: str) -> dict[str, JSON]:
    """The ``GetPromptResult`` of the greet prompt for ``name``."""
    return {
        "description": f"A greeting for {name}",
        "messages": [
            {
                "role": "user",
                "content": {"type": "text", "text": f"Please write a short, warm greeting for {name}."},
            }
        ],
    }


def complete_name(prefix: str) -> dict[str, JSON]:
    """The ``completion`` object for a ``name`` argument starting with ``prefix``."""
    folded = prefix.casefold()
    values = [name for name in NAMES if name.casefold().startswith(folded)]
    return {"values": values, "total": len(values), "hasMore": False}
