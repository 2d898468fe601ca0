"""What each era says about tasks a server serves, without I/O.

The rules behind `trio_mcp._serving.tasks`: the capabilities that announce
tasks (``capabilities.tasks`` in 2025-11-25, the ``io.modelcontextprotocol/tasks``
extension in 2026-07-28), whether a ``tools/call`` runs as a task, the
``-32021`` error for a client without the extension, the params of the
``tasks/*`` requests, and timestamps. Nothing here imports Trio.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from .._core.eras import MISSING_CLIENT_CAPABILITY
from .._core.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND
from .._errors import RpcError

if TYPE_CHECKING:
    from .rules import Era

__all__ = [
    "EXTENSION",
    "RELATED_TASK",
    "TASKS_SINCE",
    "TERMINAL",
    "TaskSupport",
    "declares_extension",
    "extension_capability",
    "extension_missing",
    "iso_time",
    "legacy_capability",
    "requested_ttl",
    "task_id_of",
    "wants_task",
]

JSON: TypeAlias = Any
TaskSupport: TypeAlias = Literal["forbidden", "optional", "required"]

#: The identifier of the 2026-07-28 tasks extension.
EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: The ``_meta`` key tying a message to its task (2025-11-25).
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
#: The first initialize-era revision with tasks.
TASKS_SINCE: Final = "2025-11-25"
#: The statuses a task never leaves.
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})


def legacy_capability() -> dict[str, JSON]:
    """The ``tasks`` server capability (2025-11-25): list, cancel, and tasks for ``tools/call``."""
    return {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


def extension_capability() -> dict[str, JSON]:
    """The ``extensions`` entry of the server capabilities (2026-07-28)."""
    return {EXTENSION: {}}


def declares_extension(capabilities: object) -> bool:
    """Whether a request's client capabilities (2026-07-28) declare the tasks extension."""
    if not isinstance(capabilities, dict):
        return False
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def extension_missing(what: str) -> RpcError:
    """The ``-32021`` error for a client that did not declare the tasks extension."""
    return RpcError(
        MISSING_CLIENT_CAPABILITY,
        f"{what} needs the {EXTENSION} extension: declare it in the request's client capabilities",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def wants_task(
    *,
    era: Era,
    version: str,
    tool: str,
    support: TaskSupport,
    params: dict[str, JSON],
    capabilities: object = None,
) -> bool:
    """Whether a ``tools/call`` runs as a task, by the rules of its era.

    2025-11-25: as the client asked (``params.task``), which must agree
    with the tool's ``taskSupport``; older revisions have no tasks and
    ignore ``params.task``. 2026-07-28: the server decides; this one makes a
    task of every tool that supports one, for a client that declares the
    extension.

    Raises:
        RpcError: ``-32601``: a task for a tool that forbids it, or none for
            a tool that requires one (2025-11-25); ``-32602``: ``params.task``
            is not an object; ``-32021``: a tool that requires a task, called
            by a client without the extension (2026-07-28).
    """
    if era == "legacy":
        if version < TASKS_SINCE:
            return False
        asked = "task" in params
        if asked and not isinstance(params["task"], dict):
            raise RpcError(INVALID_PARAMS, 'task must be an object ({} or {"ttl": milliseconds})')
        if asked and support == "forbidden":
            raise RpcError(
                METHOD_NOT_FOUND, f"the tool {tool!r} cannot run as a task (taskSupport: forbidden)"
            )
        if not asked and support == "required":
            raise RpcError(
                METHOD_NOT_FOUND,
                f"the tool {tool!r} must be called as a task (taskSupport: required): give params.task",
            )
        return asked
    if support == "forbidden":
        return False
    declared = declares_extension(capabilities)
    if not declared and support == "required":
        raise extension_missing(f"the tool {tool!r}")
    return declared


def requested_ttl(params: dict[str, JSON]) -> int | None:
    """The ``ttl`` a 2025-11-25 ``params.task`` asks for, or `None`.

    Raises:
        RpcError: ``-32602``, the ttl is not a non-negative integer.
    """
    task = params.get("task")
    if not isinstance(task, dict) or task.get("ttl") is None:
        return None
    ttl = task["ttl"]
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
        raise RpcError(INVALID_PARAMS, f"task.ttl must be a non-negative integer (milliseconds), not {ttl!r}")
    return ttl


def iso_time(seconds: float) -> str:
    """A POSIX time as an ISO 8601 UTC timestamp, to the millisecond."""
    stamp = datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def task_id_of(params: dict[str, JSON]) -> str:
    """The ``taskId`` param of a ``tasks/*`` request.

    Raises:
        RpcError: ``-32602``, it is missing or not a string.
    """
    task_id = params.get("taskId")
    if not isinstance(task_id, str):
        raise RpcError(INVALID_PARAMS, "taskId is required (a string)")
    return task_id
