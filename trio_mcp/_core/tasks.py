"""MCP tasks without I/O: both eras' wire, the state machine, polling and input rules.

Two generations of tasks exist, and they do not share a wire:

* revision 2025-11-25 (the initialize era) has experimental tasks in its
  core: the client asks for one with ``params.task`` when the server
  declares ``tasks.requests.tools.call`` and the tool's
  ``execution.taskSupport`` allows it; the reply wraps the task
  (``{"task": {...}}``, ``ttl`` and ``pollInterval``); ``tasks/result``
  blocks until the task ends and carries the server's requests for input;
* revision 2026-07-28 has the ``io.modelcontextprotocol/tasks`` extension:
  the client only declares it, on every request, and the server decides;
  the reply is flat (``resultType: "task"``, ``ttlMs``, ``pollIntervalMs``);
  ``tasks/get`` inlines the result, the error or the input requests, and
  input is answered with ``tasks/update``.

Everything here reads those replies into one model (`Task`, with `TaskRef`
to come back to a task later) and decides, without a clock or a socket:
whether to ask for a task (`legacy_support`), how long to wait between polls
(`poll_delay`), which snapshot is final (`TaskState`: the first terminal one
wins), which input requests still need an answer (`InputLedger`), and, in
`Follower`, what to do next to follow one task to its end in either era:
the caller reports what happened (a status snapshot, a polled reply, a
result, an RPC error, the answers of the hooks) and asks `Follower.next`
with the time, which says `Poll`, `OpenResult`, `AnswerInput`,
`StopInput`, `SendUpdate`, `SleepUntil` or `Finish`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import attrs

from .._errors import ProtocolError, RpcError, TaskCancelled, TaskFailed, TaskGone
from .._public import publish
from .jsonrpc import INVALID_PARAMS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "EXTENSION",
    "RELATED_TASK",
    "TERMINAL_STATUSES",
    "Action",
    "AnswerInput",
    "Finish",
    "Follower",
    "InputLedger",
    "OpenResult",
    "Poll",
    "Polled",
    "SendUpdate",
    "SleepUntil",
    "StopInput",
    "Task",
    "TaskPage",
    "TaskRef",
    "TaskState",
    "created_task",
    "declare_extension",
    "decode_list",
    "decode_polled",
    "decode_task",
    "failure",
    "gone",
    "legacy_support",
    "needs_extension",
    "poll_delay",
    "related_task_id",
    "unknown_task",
    "with_related_task",
]

JSON: TypeAlias = Any
Era: TypeAlias = Literal["modern", "legacy"]

#: The identifier of the tasks extension of the 2026-07-28 era.
EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: The ``_meta`` key that ties a message to a task.
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"

#: The shortest wait between two polls, whatever the server suggests (seconds).
POLL_FLOOR: Final = 0.1
#: The longest wait between two polls (seconds): a task's end is seen within it.
POLL_CAP: Final = 30.0
#: The wait between polls when the server suggests none (milliseconds).
DEFAULT_POLL_MS: Final = 1000

#: Wire keys of a task that `Task` has fields for, by era; the rest go to ``extra``.
_FIELDS: Final = {
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "ttl",
    "ttlMs",
    "pollInterval",
    "pollIntervalMs",
}
#: Keys of a reply that are not the task's (the envelope, and what ``tasks/get`` inlines).
_NOT_TASK: Final = {"_meta", "resultType", "result", "error", "inputRequests"}


# ------------------------------------------------------------------ the models

#: The statuses a task never leaves.
TERMINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})


@attrs.frozen(kw_only=True)
class Task:
    """One snapshot of a task's status, as the server last reported it.

    The same in both eras: the 2025-11-25 ``Task`` (``ttl``, ``pollInterval``)
    and the 2026-07-28 extension's task (``ttlMs``, ``pollIntervalMs``) are
    both read into it.
    """

    task_id: str
    """The server's identifier of the task (wire ``taskId``)."""
    status: str
    """``"working"``, ``"input_required"``, ``"completed"``, ``"failed"`` or ``"cancelled"``
    (a status this version does not know is kept as it came)."""
    status_message: str | None = None
    """A message for people about the current status (wire ``statusMessage``)."""
    created_at: str | None = None
    """When the task was created, an ISO 8601 timestamp (wire ``createdAt``)."""
    last_updated_at: str | None = None
    """When the server last updated the task (wire ``lastUpdatedAt``); not a sign of change."""
    ttl_ms: int | None = None
    """How long, in milliseconds from creation, the server keeps the task, or `None` for unlimited."""
    poll_interval_ms: int | None = None
    """How often the server suggests polling, in milliseconds, or `None`."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know."""

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (completed, failed or cancelled), so that its status never changes again."""
        return self.status in TERMINAL_STATUSES


@attrs.frozen(kw_only=True)
class TaskRef:
    """What it takes to come back to a task later, perhaps from another process.

    `ToolTask.detach` gives one; `Client.resume_task` takes it, on a new
    connection to the same server. `to_json` and `from_json` turn it into a
    JSON object and back, for storing it.
    """

    task_id: str
    """The server's identifier of the task."""
    tool: str
    """The tool the task runs."""
    era: Literal["modern", "legacy"]
    """The protocol era of the connection that started it."""
    protocol_version: str
    """The protocol revision of that connection, e.g. ``"2025-11-25"``."""
    server: str = ""
    """Which server it runs on, as the connection named it (for people; not checked)."""

    def to_json(self) -> dict[str, Any]:
        """The reference as a JSON object (``{"taskId": ..., "tool": ..., ...}``)."""
        return {
            "taskId": self.task_id,
            "tool": self.tool,
            "era": self.era,
            "protocolVersion": self.protocol_version,
            "server": self.server,
        }

    @classmethod
    def from_json(cls, data: object) -> TaskRef:
        """Read a reference written by `to_json`.

        Raises:
            ValueError: ``data`` is not such an object.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a task reference is a JSON object, not {type(data).__name__}")
        fields = {"taskId": "task_id", "tool": "tool", "protocolVersion": "protocol_version"}
        values: dict[str, str] = {}
        for key, name in fields.items():
            value = data.get(key)
            if not isinstance(value, str) or not value:
                raise ValueError(f"a task reference needs {key!r} as a non-empty string, not {value!r}")
            values[name] = value
        era = data.get("era")
        if era not in ("modern", "legacy"):
            raise ValueError(f"a task reference's 'era' is 'modern' or 'legacy', not {era!r}")
        server = data.get("server", "")
        if not isinstance(server, str):
            raise ValueError(f"a task reference's 'server' is a string, not {server!r}")
        return cls(
            task_id=values["task_id"],
            tool=values["tool"],
            era=era,
            protocol_version=values["protocol_version"],
            server=server,
        )


# ------------------------------------------------------------------ reading


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return min(value, 2**63 - 1)
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return int(value)
    return None


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def decode_task(obj: object, era: Era) -> Task:
    """Read a task object of either era (the ``task`` of a 2025-11-25 reply, or a flat one).

    Optional fields of the wrong type are left out; unknown keys are kept in
    ``extra``.

    Raises:
        ProtocolError: It is not an object, or lacks a string ``taskId`` or ``status``.
    """
    if not isinstance(obj, dict):
        raise ProtocolError(f"a task must be a JSON object, not {type(obj).__name__}")
    task_id = obj.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise ProtocolError(f"a task needs a non-empty string taskId, not {task_id!r}")
    status = obj.get("status")
    if not isinstance(status, str) or not status:
        raise ProtocolError(f"task {task_id} has no status (got {status!r})")
    own, other = ("ttlMs", "ttl") if era == "modern" else ("ttl", "ttlMs")
    ttl = obj.get(own, obj.get(other))
    own, other = ("pollIntervalMs", "pollInterval") if era == "modern" else ("pollInterval", "pollIntervalMs")
    interval = _int_or_none(obj.get(own, obj.get(other)))
    return Task(
        task_id=task_id,
        status=status,
        status_message=_str_or_none(obj.get("statusMessage")),
        created_at=_str_or_none(obj.get("createdAt")),
        last_updated_at=_str_or_none(obj.get("lastUpdatedAt")),
        ttl_ms=_int_or_none(ttl),
        poll_interval_ms=interval if interval else None,
        extra={key: value for key, value in obj.items() if key not in _FIELDS and key not in _NOT_TASK},
    )


def created_task(result: dict[str, JSON], era: Era) -> Task | None:
    """The task a reply to a task-augmented request created, or `None` when it is the result itself.

    A server that did not take the request as a task answers it directly:
    2025-11-25 servers reply without ``task``, 2026-07-28 ones with
    ``resultType`` ``"complete"`` (or ``"input_required"``).

    Raises:
        ProtocolError: The task in the reply is malformed.
    """
    if era == "legacy":
        return decode_task(result["task"], era) if "task" in result else None
    return decode_task(result, era) if result.get("resultType") == "task" else None


@attrs.frozen
class Polled:
    """What one ``tasks/get`` said: the task, and (2026-07-28) what it inlines."""

    task: Task
    result: dict[str, JSON] | None = None
    """The final result, inlined once the task has completed (2026-07-28)."""
    error: dict[str, JSON] | None = None
    """The JSON-RPC error object of a failed task (2026-07-28)."""
    input_requests: dict[str, dict[str, JSON]] = attrs.field(factory=dict)
    """The input requests the task waits on, by key (2026-07-28)."""


def decode_polled(result: dict[str, JSON], era: Era) -> Polled:
    """Read a ``tasks/get`` reply.

    Raises:
        ProtocolError: The task is malformed, a completed 2026-07-28 task
            inlines no result, or an input request is not a request.
    """
    task = decode_task(result, era)
    if era == "legacy":
        return Polled(task)
    inlined = result.get("result")
    error = result.get("error")
    if task.status == "completed" and not isinstance(inlined, dict):
        raise ProtocolError(f"task {task.task_id} completed but tasks/get inlined no result object")
    requests: dict[str, dict[str, JSON]] = {}
    raw = result.get("inputRequests")
    if raw is not None and task.status == "input_required":
        if not isinstance(raw, dict):
            raise ProtocolError(f"the inputRequests of task {task.task_id} must be an object")
        for key, asked in raw.items():
            if not isinstance(asked, dict) or not isinstance(asked.get("method"), str):
                raise ProtocolError(f"input request {key!r} of task {task.task_id} is not a request")
            requests[key] = asked
    return Polled(
        task,
        inlined if task.status == "completed" and isinstance(inlined, dict) else None,
        error if task.status == "failed" and isinstance(error, dict) else None,
        requests,
    )


@attrs.frozen
class TaskPage:
    """One page of ``tasks/list`` (2025-11-25)."""

    tasks: list[Task]
    next_cursor: str | None = None
    """The cursor of the next page, or `None` on the last one."""


def decode_list(result: dict[str, JSON]) -> TaskPage:
    """Read a ``tasks/list`` page (2025-11-25): its tasks and ``nextCursor``.

    Raises:
        ProtocolError: ``tasks`` is missing or holds a malformed task.
    """
    tasks = result.get("tasks")
    if not isinstance(tasks, list):
        raise ProtocolError("a tasks/list result needs a tasks array")
    cursor = result.get("nextCursor")
    return TaskPage(
        [decode_task(item, "legacy") for item in tasks], cursor if isinstance(cursor, str) else None
    )


def failure(task_id: str, error: object, status_message: str | None = None) -> TaskFailed:
    """The `TaskFailed` of a failed task, from its JSON-RPC error object (or none).

    Without an error object, the message is the task's last status message
    (``statusMessage``), when it has one.
    """
    if not isinstance(error, dict):
        said = f": {status_message}" if status_message else ""
        return TaskFailed(-32603, f"the task failed (the server gave no error){said}", task_id=task_id)
    code = error.get("code")
    message = error.get("message")
    return TaskFailed(
        code if isinstance(code, int) and not isinstance(code, bool) else -32603,
        message if isinstance(message, str) else "the task failed",
        error.get("data"),
        task_id=task_id,
    )


def unknown_task(error: RpcError) -> bool:
    """Whether the error answering a request about a task says that the server does not know the task.

    Unknown or expired task ids are ``-32602`` in both eras; on
    ``tasks/cancel`` the same error may also mean that the task has ended
    already (2025-11-25), which a ``tasks/get`` tells apart.
    """
    return error.code == INVALID_PARAMS


def gone(task_id: str, error: RpcError, tool: str | None = None) -> TaskGone | None:
    """The `TaskGone` that a ``-32602`` answer to a request about a task means, or `None` for another error.

    See `unknown_task`.
    """
    if not unknown_task(error):
        return None
    whose = f"task {task_id} of tool {tool!r} is gone" if tool else f"the server does not know task {task_id}"
    found = TaskGone(f"{whose}: {error.message}", task_id=task_id)
    found.__cause__ = error
    return found


# ------------------------------------------------------------ the machine


class TaskState:
    """The statuses one task went through, as snapshots arrive (polls, notifications, cancel replies).

    A task starts ``working`` and ends ``completed``, ``failed`` or
    ``cancelled``; an ended task never changes. Snapshots may arrive out of
    order (a notification racing a poll) or contradict each other (a
    2026-07-28 task cancelled and then completed): the first terminal
    snapshot is final, and a later one that says otherwise is a regression
    to report, never a change.
    """

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.latest: Task | None = None
        """The last snapshot taken (the final one once there is one)."""
        self.final: Task | None = None
        """The first terminal snapshot, or `None` while the task runs."""

    def observe(self, task: Task) -> tuple[bool, str | None]:
        """Take a snapshot.

        Returns whether it is news (a status or message not seen just
        before, which watchers should see), and a problem to report, if any.
        """
        if task.task_id != self.task_id:
            return False, f"a status of task {task.task_id} arrived for task {self.task_id}; ignored"
        final = self.final
        if final is not None:
            if task.status != final.status:
                return False, (
                    f"task {self.task_id} was reported {task.status!r} after it ended {final.status!r};"
                    f" it stays {final.status!r}"
                )
            return False, None
        latest = self.latest
        news = latest is None or (task.status, task.status_message) != (latest.status, latest.status_message)
        self.latest = task
        if task.status in TERMINAL_STATUSES:
            self.final = task
        return news, None


def poll_delay(
    interval_ms: object,
    *,
    floor: float = POLL_FLOOR,
    cap: float = POLL_CAP,
    default_ms: int = DEFAULT_POLL_MS,
) -> float:
    """How long to wait before the next poll, in seconds.

    The server's suggestion (``pollInterval`` or ``pollIntervalMs``, in
    milliseconds) when it is a positive number, else ``default_ms``;
    clamped between ``floor`` and ``cap`` either way.
    """
    ms: float = default_ms
    if isinstance(interval_ms, int) and not isinstance(interval_ms, bool):
        # An integer of any size: JSON has no limit.
        ms = min(interval_ms, 10**12) if interval_ms > 0 else default_ms
    elif isinstance(interval_ms, float) and math.isfinite(interval_ms) and interval_ms > 0:
        ms = interval_ms
    return min(max(ms / 1000.0, floor), cap)


class InputLedger:
    """Which input requests of one task (2026-07-28) have been taken to be answered.

    ``tasks/get`` repeats the pending input requests on every poll; each key
    is unique within the task, so a key once taken is never answered again
    (unless giving its answer failed, see `release`).
    """

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def take(self, requests: Mapping[str, JSON]) -> dict[str, JSON]:
        """The requests not taken before, now taken."""
        fresh = {key: asked for key, asked in requests.items() if key not in self._taken}
        self._taken.update(fresh)
        return fresh

    def release(self, keys: Iterable[str]) -> None:
        """Take these keys back: their answers were not delivered, and may be given again."""
        self._taken.difference_update(keys)

    def __contains__(self, key: object) -> bool:
        return key in self._taken

    def __len__(self) -> int:
        return len(self._taken)


# --------------------------------------------------------- asking for one


def legacy_support(
    server_tasks: Mapping[str, JSON] | None, execution: Mapping[str, JSON] | None
) -> Literal["forbidden", "optional", "required"]:
    """Whether a 2025-11-25 ``tools/call`` may (or must) be sent as a task.

    ``"forbidden"`` unless the server declares ``tasks.requests.tools.call``
    and the tool's ``execution.taskSupport`` is ``"optional"`` or
    ``"required"``, which it then is.
    """
    requests = server_tasks.get("requests") if server_tasks is not None else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    if not isinstance(tools, dict) or not isinstance(tools.get("call"), dict):
        return "forbidden"
    support = execution.get("taskSupport") if execution is not None else None
    if support == "optional":
        return "optional"
    if support == "required":
        return "required"
    return "forbidden"


def declare_extension(caps: Mapping[str, JSON]) -> dict[str, JSON]:
    """Client capabilities that declare the tasks extension, besides ``caps`` (not changed)."""
    out = dict(caps)
    extensions = out.get("extensions")
    out["extensions"] = {**(extensions if isinstance(extensions, dict) else {}), EXTENSION: {}}
    return out


def needs_extension(data: object) -> bool:
    """Whether the ``data`` of a ``-32021`` error asks for the tasks extension."""
    if not isinstance(data, dict):
        return False
    required = data.get("requiredCapabilities")
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return isinstance(extensions, dict) and EXTENSION in extensions


def related_task_id(params: object) -> str | None:
    """The task a message belongs to (``_meta["io.modelcontextprotocol/related-task"].taskId``), if any.

    ``params`` is a message's params object, or a model with a ``meta``
    attribute (such as the params an ``on_elicitation`` hook receives).
    """
    meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    task_id = related.get("taskId") if isinstance(related, dict) else None
    return task_id if isinstance(task_id, str) else None


def with_related_task(params: object, task_id: str) -> JSON:
    """``params`` (an input request's) with the related-task ``_meta`` set, unless it names a task already."""
    if not isinstance(params, dict) or related_task_id(params) is not None:
        return params
    meta = params.get("_meta")
    return {
        **params,
        "_meta": {**(meta if isinstance(meta, dict) else {}), RELATED_TASK: {"taskId": task_id}},
    }


# ------------------------------------------------------------ the follower

#: How many more polls a task said ``completed`` gets to inline its result
#: (2026-07-28) before the follower gives up with a `ProtocolError`.
POLLS_AFTER_END: Final = 3


@attrs.frozen
class Poll:
    """Send ``tasks/get`` now; report its reply (`Follower.polled`) or its error (`Follower.failed`)."""


@attrs.frozen
class OpenResult:
    """2025-11-25: open ``tasks/result`` beside the rest (it blocks until the task ends).

    The server sends its requests for input while it is open. Report its
    reply with `Follower.result_arrived`, or its error with `Follower.failed`.
    """


@attrs.frozen
class AnswerInput:
    """2026-07-28: answer these input requests (by key) through the hooks, beside the rest.

    Each request's params carry the related-task ``_meta``. Report the
    answers with `Follower.answered`.
    """

    requests: dict[str, dict[str, JSON]]


@attrs.frozen
class StopInput:
    """Stop the hooks that are answering the task's input: the task was cancelled, no answer is wanted."""


@attrs.frozen
class SendUpdate:
    """2026-07-28: send ``tasks/update`` with these answers, then report `Follower.update_sent`."""

    answers: dict[str, JSON]


@attrs.frozen
class SleepUntil:
    """Nothing to do before ``deadline`` (``inf``: nothing until something is reported)."""

    deadline: float


@attrs.frozen
class Finish:
    """The task's outcome: its final result (a ``CallToolResult`` on the wire), or the error to raise."""

    result: dict[str, JSON] | None = None
    error: Exception | None = None


#: What `Follower.next` says to do.
Action: TypeAlias = Poll | OpenResult | AnswerInput | StopInput | SendUpdate | SleepUntil | Finish


class Follower:
    """Follows one task to its outcome, in either era: what happened in, what to do next out.

    The caller (one loop for both eras) reports each thing that happens:
    a status snapshot (`snapshot`: a notification, a reply to
    ``tasks/cancel``), a ``tasks/get`` reply (`polled`), the reply of
    ``tasks/result`` (`result_arrived`), a request's error (`failed`), the
    hooks' answers (`answered`), a ``tasks/update`` taken (`update_sent`),
    a cancel asked for (`cancel_requested`). Then it asks `next` with the
    time, and does what it says, until it says `Finish` (which it then
    always says).

    The rules, each in one place:

    * polls follow the interval the server last suggested (`poll_delay`),
      never closer together than the floor, whatever asks for one sooner
      (a cancel, an answer given, a result to confirm);
    * the first terminal snapshot is final (`TaskState`); ``cancelled``
      ends the task at once, ``failed`` never gives a success;
    * 2025-11-25: ``tasks/result`` is opened once, when the task asks for
      input or ends; its reply is the outcome (a poll first says how the
      task ended, when no snapshot has); a failed task whose result is not
      flagged ``isError`` is a `TaskFailed`;
    * 2026-07-28: the outcome is inlined in the ``tasks/get`` that says the
      task ended; a task said ``completed`` without its result is polled
      again (`POLLS_AFTER_END` times: then it is a `ProtocolError`); each input
      request is answered once (`InputLedger`), and polling goes on while
      the hooks answer; after a ``tasks/update`` the next poll comes at
      the floor;
    * ``-32602`` on any ``tasks/*`` request about the task means the
      server no longer knows it (`TaskGone`); on ``tasks/cancel`` it means
      the task ended or vanished, which the next poll tells.
    """

    def __init__(
        self,
        task_id: str,
        tool: str,
        era: Era,
        *,
        floor: float = POLL_FLOOR,
        cap: float = POLL_CAP,
    ) -> None:
        self.task_id = task_id
        self.tool = tool
        self.era: Era = era
        self.state = TaskState(task_id)
        """The task's snapshots (the latest, and the final one)."""
        self.ledger = InputLedger()
        self.outcome: Finish | None = None
        """The outcome, once known."""
        self.problems: list[str] = []
        """Diagnostics to report (a snapshot that contradicts the final one, ...); the caller empties it."""
        self.fresh: list[Task] = []
        """The snapshots that were news (a status or message not seen just before); the caller empties it."""
        self._floor = floor
        self._cap = cap
        self._last_poll = -math.inf
        self._next_poll: float | None = None
        self._poll_soon = False
        self._polls_after_end = 0
        # 2025-11-25: tasks/result.
        self._result_open = False
        self._result: dict[str, JSON] | None = None
        self._result_error: RpcError | None = None
        # 2026-07-28: input.
        self._to_answer: dict[str, dict[str, JSON]] = {}
        self._answering: set[str] = set()
        self._answers: list[dict[str, JSON]] = []
        self._cancelled = False
        self._stop_input = False

    # -------------------------------------------------------- events in

    def snapshot(self, task: Task) -> bool:
        """Take a status snapshot; whether it is news (watchers should see it)."""
        news, problem = self.state.observe(task)
        if problem is not None:
            self.problems.append(problem)
        if news:
            self.fresh.append(task)
        return news

    def polled(self, reply: dict[str, JSON], now: float) -> None:
        """Take the reply of a ``tasks/get``."""
        if self.outcome is not None:
            return
        self._poll_soon = False
        try:
            polled = decode_polled(reply, self.era)
        except ProtocolError as exc:
            self._finish(error=exc)
            return
        self.snapshot(polled.task)
        latest = self.state.latest
        self._next_poll = now + self._delay(latest.poll_interval_ms if latest is not None else None)
        final = self.state.final
        if self.era == "legacy":
            if self._result is not None or self._result_error is not None:
                # tasks/result came back before any snapshot said how the task ended.
                self._settle_legacy()
            return
        if final is not None:
            if final.status == "completed" and polled.result is None:
                # Ended completed on an earlier snapshot; this one says otherwise.
                self._polls_after_end += 1
                if self._polls_after_end >= POLLS_AFTER_END:
                    self._finish(
                        error=ProtocolError(
                            f"task {self.task_id} of tool {self.tool!r} completed, but tasks/get"
                            " never gave its result"
                        )
                    )
                else:
                    self._poll_soon = True
                return
            self._settle_modern(final, polled)
            return
        if self._cancelled:
            return
        fresh = self.ledger.take(polled.input_requests)
        for key, asked in fresh.items():
            params = asked.get("params")
            self._to_answer[key] = {
                **asked,
                "params": with_related_task(params if params is not None else {}, self.task_id),
            }

    def result_arrived(self, result: dict[str, JSON]) -> None:
        """Take the reply of ``tasks/result`` (2025-11-25)."""
        if self.outcome is not None:
            return
        self._result = result
        self._after_result()

    def failed(self, method: str, error: Exception) -> None:
        """Take the error of a request about the task (``tasks/get``, ``tasks/result``, ...)."""
        if self.outcome is not None:
            return
        if not isinstance(error, RpcError):
            self._finish(error=error)
            return
        if method == "tasks/cancel":
            if unknown_task(error):
                # It ended (or vanished) meanwhile: a poll says which.
                self._poll_soon = True
                return
            self._finish(error=error)
            return
        vanished = gone(self.task_id, error, self.tool)
        if vanished is not None:
            self._finish(error=vanished)
            return
        if method == "tasks/result":
            self._result_error = error
            self._after_result()
            return
        self._finish(error=error)

    def crashed(self, error: Exception) -> None:
        """Something outside the protocol failed (a hook, the connection): that is the outcome."""
        if self.outcome is None:
            self._finish(error=error)

    def answered(self, keys: Iterable[str], answers: dict[str, JSON]) -> None:
        """Take the hooks' answers to the input requests of these keys (2026-07-28)."""
        self._answering.difference_update(keys)
        if self.outcome is None and not self._cancelled and answers:
            self._answers.append(answers)

    def update_sent(self, now: float) -> None:
        """``tasks/update`` was taken: poll soon, to see the task go on (at the floor)."""
        soon = now + self._floor
        self._next_poll = soon if self._next_poll is None else min(self._next_poll, soon)

    def cancel_requested(self, reply: dict[str, JSON] | None = None) -> None:
        """``tasks/cancel`` was taken (with its reply): learn how the task ends without waiting."""
        if self.outcome is not None:
            return
        if self.era == "legacy" and reply is not None and "taskId" in reply:
            try:
                self.snapshot(decode_task(reply, "legacy"))
            except ProtocolError as exc:
                self.problems.append(f"cannot read the reply to tasks/cancel of task {self.task_id}: {exc}")
        self._cancelled = True
        self._poll_soon = True
        self._to_answer.clear()
        self._answers.clear()
        if self._answering:
            self._stop_input = True

    # ------------------------------------------------------ actions out

    def next(self, now: float) -> Action:
        """What to do now."""
        if self.outcome is not None:
            return self.outcome
        final = self.state.final
        if final is not None and final.status == "cancelled":
            return self._finish(
                error=TaskCancelled(
                    f"task {self.task_id} of tool {self.tool!r} was cancelled", task_id=self.task_id
                )
            )
        if self._stop_input:
            self._stop_input = False
            self._answering.clear()
            return StopInput()
        if self.era == "legacy":
            latest = self.state.latest
            asks = latest is not None and latest.status == "input_required"
            if not self._result_open and (asks or final is not None):
                self._result_open = True
                return OpenResult()
            if final is not None:
                if self._result is not None or self._result_error is not None:
                    # tasks/result came back, then a snapshot said how the task ended.
                    self._settle_legacy()
                    return self.next(now)
                # tasks/result, open, gives the outcome: no more polls.
                return SleepUntil(math.inf)
        else:
            if self._answers:
                answers: dict[str, JSON] = {}
                for batch in self._answers:
                    answers.update(batch)
                self._answers.clear()
                return SendUpdate(answers)
            if self._to_answer:
                requests, self._to_answer = self._to_answer, {}
                self._answering.update(requests)
                return AnswerInput(requests)
            if final is not None:
                self._poll_soon = True
        if self._next_poll is None:
            latest = self.state.latest
            if self.era == "modern" and latest is not None and latest.status == "input_required":
                self._next_poll = now
            else:
                self._next_poll = now + self._delay(latest.poll_interval_ms if latest is not None else None)
        due = max(now if self._poll_soon else self._next_poll, self._last_poll + self._floor)
        if now >= due:
            self._last_poll = now
            return Poll()
        return SleepUntil(due)

    # --------------------------------------------------------- private

    def _delay(self, interval_ms: object) -> float:
        return poll_delay(interval_ms, floor=self._floor, cap=self._cap)

    def _finish(self, result: dict[str, JSON] | None = None, error: Exception | None = None) -> Finish:
        self.outcome = Finish(result, error)
        self._to_answer.clear()
        self._answers.clear()
        return self.outcome

    def _after_result(self) -> None:
        if self.state.final is not None:
            self._settle_legacy()
        else:
            # The answer means the task ended: a poll says how, as the server sees it.
            self._poll_soon = True

    def _settle_legacy(self) -> None:
        final = self.state.final
        if final is not None and final.status == "cancelled":
            return  # next() says so
        error = self._result_error
        if error is not None:
            self._finish(
                error=failure(
                    self.task_id, {"code": error.code, "message": error.message, "data": error.data}
                )
            )
            return
        result = self._result
        assert result is not None
        if final is not None and final.status == "failed" and result.get("isError") is not True:
            self._finish(error=failure(self.task_id, None, final.status_message))
            return
        self._finish(result=result)

    def _settle_modern(self, final: Task, polled: Polled) -> None:
        if final.status == "cancelled":
            return  # next() says so
        if final.status == "failed":
            self._finish(error=failure(self.task_id, polled.error, final.status_message))
            return
        self._finish(result=polled.result)


publish(globals())
