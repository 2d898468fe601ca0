"""Tasks served by an MCP server, in both protocol eras.

A tool that takes long can run as a *task*: the ``tools/call`` is answered at
once with the task's id, the work goes on in the background, and the client
polls it. The two eras do this differently on the wire:

* **2025-11-25** (initialize era, experimental core tasks): the server
  declares ``capabilities.tasks`` (``list``, ``cancel``,
  ``requests.tools.call``) and each tool its ``execution.taskSupport``; the
  client asks for a task with ``params.task`` (``{"ttl": ...}``), and gets
  ``{"task": Task}``. ``tasks/get`` returns the `Task`, ``tasks/result``
  blocks until the task ends and returns what the call would have returned
  (a tool result flagged ``isError`` makes the task ``failed``),
  ``tasks/list`` pages through the tasks, ``tasks/cancel`` answers with the
  cancelled `Task` (``-32602`` for a task already ended). Questions to the
  user (``elicitation/create``) are sent while a ``tasks/result`` is open,
  marked with the ``io.modelcontextprotocol/related-task`` ``_meta``; every
  change of status is pushed as ``notifications/tasks/status``.
* **2026-07-28**, with the ``io.modelcontextprotocol/tasks`` extension: the
  server lists the extension in ``server/discover`` and decides by itself to
  answer a ``tools/call`` of a client that declares it with a flat
  ``CreateTaskResult`` (``resultType: "task"``). ``tasks/get`` returns the
  task with its ``result`` (``completed``, ``isError`` included), ``error``
  (``failed``: a JSON-RPC error) or ``inputRequests`` (``input_required``),
  answered with ``tasks/update``; ``tasks/cancel`` is an empty
  acknowledgement. A client that does not declare the extension gets
  ``-32021`` on the ``tasks/*`` methods, and on a tool that needs a task.

An unknown task id, or one whose time to live has passed, is ``-32602`` in
both eras.

What each era says is in `trio_mcp._serving.task_rules` (pure); `Tasks` runs
the tasks of one `~trio_mcp._serving.server.Server` in Trio tasks of that
server.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import time
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import trio

from .._core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from .._errors import RpcError
from .task_rules import RELATED_TASK, TERMINAL, iso_time, requested_ttl, task_id_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .rules import Era
    from .server import Request, Server

__all__ = ["PAGE_SIZE", "ServedTask", "TaskContext", "Tasks", "Work"]

JSON: TypeAlias = Any
Work: TypeAlias = "Callable[[TaskContext], Awaitable[dict[str, JSON]]]"
"""What a task runs: returns the tool's result, or raises `RpcError` (the task fails)."""

#: How many tasks one ``tasks/list`` page holds.
PAGE_SIZE: Final = 50
#: The prefix of the opaque ``tasks/list`` cursors.
_CURSOR: Final = "after-"


# ------------------------------------------------------------- the tasks


class ServedTask:
    """One task, as the server keeps it.

    Attributes:
        task_id: Its id.
        era: The era of the connection that created it.
        status: ``working``, ``input_required``, ``completed``, ``failed``
            or ``cancelled``.
        status_message: What the server last said about it.
        result: The tool's result, once it has one.
        error: The JSON-RPC error it failed with, if any.
    """

    __slots__ = (
        "_changed",
        "_reader",
        "_updated",
        "created",
        "era",
        "error",
        "expires_at",
        "input_requests",
        "poll_interval_ms",
        "progress_token",
        "readers",
        "responses",
        "result",
        "scope",
        "seq",
        "status",
        "status_message",
        "task_id",
        "ttl_ms",
    )

    def __init__(
        self,
        task_id: str,
        era: Era,
        seq: int,
        *,
        ttl_ms: int | None,
        poll_interval_ms: int,
        progress_token: int | str | None,
    ) -> None:
        self.task_id = task_id
        self.era = era
        self.seq = seq
        self.status = "working"
        self.status_message: str | None = None
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.progress_token = progress_token
        self.created = iso_time(time.time())
        self._updated = self.created
        now = trio.current_time()
        self.expires_at = math.inf if ttl_ms is None else now + ttl_ms / 1000
        self.result: dict[str, JSON] | None = None
        self.error: RpcError | None = None
        self.scope = trio.CancelScope()
        self._changed = trio.Event()
        # Initialize era: how many tasks/result requests wait for this task.
        self.readers = 0
        self._reader = trio.Event()
        # 2026-07-28: the questions asked and not yet answered, and the answers.
        self.input_requests: dict[str, dict[str, JSON]] = {}
        self.responses: dict[str, JSON] = {}

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (it never changes again)."""
        return self.status in TERMINAL

    def touch(self) -> None:
        """Record a change: ``lastUpdatedAt`` moves, and whoever waits for a change wakes."""
        self._updated = iso_time(time.time())
        self._changed.set()
        self._changed = trio.Event()

    def take_answers(self, responses: dict[str, JSON]) -> list[str]:
        """Take the answers to outstanding questions (2026-07-28 ``tasks/update``); return their keys.

        When no question is left outstanding, the task is ``working`` again at
        once: a ``tasks/get`` never sees ``input_required`` without a question.
        """
        taken = [key for key in responses if key in self.input_requests]
        for key in taken:
            del self.input_requests[key]
            self.responses[key] = responses[key]
        if taken:
            if not self.input_requests and self.status == "input_required":
                self.status = "working"
            self.touch()
        return taken

    async def wait_changed(self) -> None:
        """Wait for the next change."""
        await self._changed.wait()

    def add_reader(self) -> None:
        self.readers += 1
        self._reader.set()

    def drop_reader(self) -> None:
        self.readers -= 1
        if not self.readers:
            self._reader = trio.Event()

    async def wait_reader(self) -> None:
        """Wait until a ``tasks/result`` request is open for this task (initialize era)."""
        await self._reader.wait()

    def wire(self) -> dict[str, JSON]:
        """The `Task` object of the era."""
        task: dict[str, JSON] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        task["createdAt"] = self.created
        task["lastUpdatedAt"] = self._updated
        if self.era == "legacy":
            task["ttl"] = self.ttl_ms
            task["pollInterval"] = self.poll_interval_ms
        else:
            task["ttlMs"] = self.ttl_ms
            task["pollIntervalMs"] = self.poll_interval_ms
        return task

    def detailed(self) -> dict[str, JSON]:
        """The ``DetailedTask`` of ``tasks/get`` (2026-07-28): the task with its result, error or questions."""
        task = self.wire()
        if self.status == "completed" and self.result is not None:
            # A CallToolResult of this era, as the call would have returned it.
            task["result"] = {"resultType": "complete", **self.result}
        elif self.status == "failed":
            error = self.error if self.error is not None else RpcError(INTERNAL_ERROR, "the task failed")
            body: dict[str, JSON] = {"code": error.code, "message": error.message}
            if error.data is not None:
                body["data"] = error.data
            task["error"] = body
        elif self.status == "input_required":
            task["inputRequests"] = dict(self.input_requests)
        return task


class TaskContext:
    """What a task's work sees of its task: its id, progress, and questions to the user."""

    def __init__(self, tasks: Tasks, task: ServedTask) -> None:
        self._tasks = tasks
        self._task = task
        self._asked = 0

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self._task.task_id

    @property
    def era(self) -> Era:
        """The era of the connection that created the task."""
        return self._task.era

    async def progress(self, progress: float, total: float | None, message: str) -> None:
        """Report progress: the task's status message, and a progress notification.

        The notification goes under the progress token of the ``tools/call``
        that created the task, if it gave one, in either era, with the
        related-task ``_meta``.
        """
        task = self._task
        task.status_message = message
        task.touch()
        if task.progress_token is not None:
            params: dict[str, JSON] = {"progressToken": task.progress_token, "progress": progress}
            if total is not None:
                params["total"] = total
            params["message"] = message
            params["_meta"] = {RELATED_TASK: {"taskId": task.task_id}}
            await self._tasks.notify("notifications/progress", params)
        else:
            await trio.lowlevel.checkpoint()

    async def ask(self, method: str, params: dict[str, JSON], *, message: str | None = None) -> JSON:
        """Ask the client (``elicitation/create``, ``sampling/createMessage``, ...) and return its answer.

        The task is ``input_required`` meanwhile. Initialize era: the
        request is sent, with the related-task ``_meta``, once the client
        has a ``tasks/result`` open for the task. 2026-07-28: the question is
        one of the task's ``inputRequests`` until a ``tasks/update`` answers
        it.

        Raises:
            RpcError: The client answered with an error (initialize era).
            trio.BrokenResourceError: The connection ended first.
        """
        task = self._task
        self._asked += 1
        before = task.status_message
        if task.era == "legacy":
            await self._tasks.set_status(task, "input_required", message)
            await task.wait_reader()
            meta = {**params.get("_meta", {}), RELATED_TASK: {"taskId": task.task_id}}
            answer = await self._tasks.server.request(method, {**params, "_meta": meta})
        else:
            # The question is in place before the status says there is one: a
            # tasks/get served meanwhile never sees input_required without it.
            key = f"{method.replace('/', '-')}-{self._asked}"
            task.input_requests[key] = {"method": method, "params": params}
            await self._tasks.set_status(task, "input_required", message)
            while key not in task.responses:
                await task.wait_changed()
            answer = task.responses.pop(key)
        if not task.input_requests:
            await self._tasks.set_status(task, "working", before)
        return answer


class Tasks:
    """The tasks of one server: created by ``tools/call``, served by ``tasks/*``.

    The work of each task runs in a Trio task of the server's own
    (`Server.start_soon`), so it outlives the request that created it and
    ends with the connection.

    Args:
        server: The server whose client creates and polls the tasks.
        poll_interval_ms: The polling interval suggested to clients.
        default_ttl_ms: How long a task is kept when the client asks for no
            time to live (and, 2026-07-28, always).
        min_ttl_ms: The shortest time to live granted.
        max_ttl_ms: The longest time to live granted.
        log: Called with diagnostics.
    """

    def __init__(
        self,
        server: Server,
        *,
        poll_interval_ms: int = 500,
        default_ttl_ms: int = 300_000,
        min_ttl_ms: int = 1_000,
        max_ttl_ms: int = 3_600_000,
        log: Callable[[str], object] | None = None,
    ) -> None:
        self.server = server
        self.poll_interval_ms = poll_interval_ms
        self.default_ttl_ms = default_ttl_ms
        self.min_ttl_ms = min_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self._log = log if log is not None else (lambda text: None)
        self._tasks: dict[str, ServedTask] = {}
        self._seq = 0
        # When the first task expires: no look at the others before.
        self._next_expiry = math.inf

    # ------------------------------------------------------------- helpers

    async def notify(self, method: str, params: dict[str, JSON]) -> None:
        """Send a notification to the client, unless the connection has ended."""
        if self.server.alive:
            with contextlib.suppress(trio.BrokenResourceError):
                await self.server.send(self.server.notification(method, params))
        else:
            await trio.lowlevel.checkpoint()

    async def set_status(self, task: ServedTask, status: str, message: str | None = None) -> None:
        """Move a task to ``status`` (never out of a terminal one); initialize era: notify the client."""
        if task.terminal:
            await trio.lowlevel.checkpoint()
            return
        changed = task.status != status
        task.status = status
        task.status_message = message
        task.touch()
        if changed and task.era == "legacy":
            await self.notify("notifications/tasks/status", task.wire())
        else:
            await trio.lowlevel.checkpoint()

    def _granted_ttl(self, asked: int | None) -> int:
        if asked is None:
            return self.default_ttl_ms
        return max(self.min_ttl_ms, min(asked, self.max_ttl_ms))

    def lookup(self, task_id: str) -> ServedTask:
        """The task with this id.

        A task whose time to live has passed is forgotten here (its work, if
        still running, is cancelled).

        Raises:
            RpcError: ``-32602``, no such task, or it has expired.
        """
        self._expire()
        task = self._tasks.get(task_id)
        if task is None:
            raise RpcError(INVALID_PARAMS, f"Failed to retrieve task: Task not found ({task_id!r})")
        return task

    def _expire(self) -> None:
        now = trio.current_time()
        if now < self._next_expiry:
            return
        for task_id, task in list(self._tasks.items()):
            if now >= task.expires_at:
                self._log(f"task {task_id} expired ({task.status})")
                del self._tasks[task_id]
                task.scope.cancel()
                task.touch()
        self._next_expiry = min((task.expires_at for task in self._tasks.values()), default=math.inf)

    # ------------------------------------------------------------- creation

    def create(self, request: Request, era: Era, work: Work, *, name: str = "task") -> dict[str, JSON]:
        """Start ``work`` as a task for ``request`` (a ``tools/call``); return the create result.

        Raises:
            RpcError: ``-32602``, a bad ``params.task``.
        """
        ttl = self._granted_ttl(requested_ttl(request.params) if era == "legacy" else None)
        self._seq += 1
        task_id = secrets.token_hex(16)
        task = ServedTask(
            task_id,
            era,
            self._seq,
            ttl_ms=ttl,
            poll_interval_ms=self.poll_interval_ms,
            progress_token=request.progress_token,
        )
        self._tasks[task_id] = task
        self._next_expiry = min(self._next_expiry, task.expires_at)
        self.server.start_soon(self._run, task, work, name=f"{name}:{task_id[:8]}")
        self._log(f"task {task_id} created for {request.method} (id {request.id!r}), ttl {ttl} ms")
        if era == "legacy":
            return {"task": task.wire()}
        return {"resultType": "task", **task.wire()}

    async def _run(self, task: ServedTask, work: Work) -> None:
        with task.scope:
            try:
                result = await work(TaskContext(self, task))
            except RpcError as exc:
                task.error = exc
                await self.set_status(task, "failed", exc.message)
            except trio.BrokenResourceError:
                # The connection ended: nobody is left to tell.
                return
            except Exception as exc:
                self._log(f"task {task.task_id} failed: {type(exc).__name__}: {exc}")
                task.error = RpcError(INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")
                await self.set_status(task, "failed", task.error.message)
            else:
                task.result = result
                failed = task.era == "legacy" and result.get("isError") is True
                await self.set_status(task, "failed" if failed else "completed", task.status_message)
        self._log(f"task {task.task_id} ended: {task.status}")

    # -------------------------------------------------------------- methods

    async def get(self, request: Request, era: Era) -> dict[str, JSON]:
        """Serve ``tasks/get``: the `Task` (initialize era) or the ``DetailedTask`` (2026-07-28)."""
        await trio.lowlevel.checkpoint()
        task = self.lookup(task_id_of(request.params))
        return task.wire() if era == "legacy" else task.detailed()

    async def result(self, request: Request) -> dict[str, JSON]:
        """Serve ``tasks/result`` (initialize era): wait for the end, then what the call would have returned.

        Raises:
            RpcError: The error the task failed with; ``-32602`` for a
                cancelled task (it has no result), or one gone meanwhile.
        """
        await trio.lowlevel.checkpoint()
        task = self.lookup(task_id_of(request.params))
        task.add_reader()
        try:
            while not task.terminal and task.task_id in self._tasks:
                await task.wait_changed()
                self._expire()
        finally:
            task.drop_reader()
        if not task.terminal:
            raise RpcError(INVALID_PARAMS, f"Failed to retrieve task: Task has expired ({task.task_id!r})")
        if task.status == "cancelled":
            raise RpcError(INVALID_PARAMS, f"the task {task.task_id!r} was cancelled: it has no result")
        if task.result is None:
            error = task.error if task.error is not None else RpcError(INTERNAL_ERROR, "the task failed")
            raise RpcError(error.code, error.message, error.data)
        meta = task.result.get("_meta")
        related = {RELATED_TASK: {"taskId": task.task_id}}
        return {**task.result, "_meta": {**(meta if isinstance(meta, dict) else {}), **related}}

    async def list(self, request: Request) -> dict[str, JSON]:
        """Serve ``tasks/list`` (initialize era), ``PAGE_SIZE`` tasks a page, oldest first."""
        await trio.lowlevel.checkpoint()
        self._expire()
        cursor = request.params.get("cursor")
        after = 0
        if cursor is not None:
            digits = cursor[len(_CURSOR) :] if isinstance(cursor, str) and cursor.startswith(_CURSOR) else ""
            if not digits.isdigit():
                raise RpcError(INVALID_PARAMS, f"invalid cursor {cursor!r}")
            after = int(digits)
        tasks = sorted((task for task in self._tasks.values() if task.seq > after), key=lambda t: t.seq)
        page = tasks[:PAGE_SIZE]
        result: dict[str, JSON] = {"tasks": [task.wire() for task in page]}
        if len(tasks) > PAGE_SIZE:
            result["nextCursor"] = f"{_CURSOR}{page[-1].seq}"
        return result

    async def cancel(self, request: Request, era: Era) -> dict[str, JSON]:
        """Serve ``tasks/cancel``: stop the work, and mark the task ``cancelled``.

        Initialize era: answers with the cancelled `Task`; ``-32602`` for a
        task already ended. 2026-07-28: an empty acknowledgement, whatever
        the task's status.
        """
        task = self.lookup(task_id_of(request.params))
        if task.terminal:
            if era == "legacy":
                raise RpcError(INVALID_PARAMS, f"Cannot cancel task in terminal status: {task.status}")
            await trio.lowlevel.checkpoint()
            return {}
        task.scope.cancel()
        await self.set_status(task, "cancelled", "The client cancelled the task.")
        self._log(f"task {task.task_id} cancelled by the client")
        return task.wire() if era == "legacy" else {}

    async def update(self, request: Request) -> dict[str, JSON]:
        """Serve ``tasks/update`` (2026-07-28): take the answers to the task's outstanding questions.

        Answers to keys that are not outstanding are ignored, as the
        extension says.
        """
        await trio.lowlevel.checkpoint()
        task = self.lookup(task_id_of(request.params))
        responses = request.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "inputResponses is required (an object)")
        taken = task.take_answers(responses)
        ignored = sorted(set(responses) - set(taken))
        if ignored:
            self._log(f"task {task.task_id}: ignored answers to {ignored} (not outstanding)")
        return {}
