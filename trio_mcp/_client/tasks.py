"""Tool calls that run as tasks: the `ToolTask` handle, and what drives it.

`Client.tool_task` starts a tool as a task and gives a `ToolTask` for the
length of an ``async with`` block. A task of its own in the connection's
nursery (the driver) follows the task until it ends: it polls ``tasks/get``
at the pace the server suggests (within `POLL_FLOOR` and `POLL_CAP`; a
status notification wakes it early), and answers the task's input requests
through the client's ordinary hooks:

* 2025-11-25: once the task asks for input (or ends), the driver opens
  ``tasks/result``, which blocks until the task ends; the server sends its
  ``elicitation/create`` (or sampling) requests while it is open, and the
  client's hooks answer them as they answer any server request;
* 2026-07-28 (the tasks extension): ``tasks/get`` lists the input requests;
  each is answered once (`InputLedger`) and the answers go back with
  ``tasks/update``.

The rules live in the pure core (`trio_mcp._core.tasks`); this module only
moves messages and keeps time.
"""

from __future__ import annotations

import math
from collections import deque
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import trio

from .._core.jsonrpc import INVALID_PARAMS
from .._core.tasks import (
    POLL_FLOOR,
    InputLedger,
    Task,
    TaskRef,
    TaskState,
    created_task,
    decode_polled,
    decode_task,
    failure,
    poll_delay,
    with_related_task,
)
from .._delivery import call_maybe_async
from .._errors import MCPError, RpcError, TaskCancelled, TaskError, TaskGone
from .._models import CallToolResult, InputRequest, structure
from .._session import start_soon

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

    from .._session import Session
    from .notes import ProgressCallback

__all__ = ["TaskOps", "TaskRegistry", "ToolTask", "adopt", "adopt_sync", "following"]

JSON: TypeAlias = Any

#: How long leaving a block waits for the server to take a ``tasks/cancel`` (seconds).
CANCEL_GRACE: Final = 2.0
#: How many status snapshots a handle keeps for `ToolTask.updates` readers that fall behind.
HISTORY: Final = 256
#: Status notifications kept while a task is being created (they may come before its id is known).
EARLY_NOTES: Final = 64


class TaskOps:
    """What a task handle needs of its client: requests, input hooks, output checks, a log.

    Args:
        session: The connection (the driver runs in its nursery).
        era: The connection's protocol era.
        version: Its protocol version.
        send: Sends a ``tasks/*`` request with the era's envelope; returns its result.
            Its third argument says the request may stay open (``tasks/result``).
        answer_all: Answers a round of input requests through the hooks.
        check_output: Checks a final result against the tool's output schema.
        log: Reports a diagnostic.
    """

    def __init__(
        self,
        *,
        session: Session,
        era: Literal["modern", "legacy"],
        version: str,
        send: Callable[[str, dict[str, JSON], bool], Awaitable[dict[str, JSON]]],
        answer_all: Callable[[Mapping[str, InputRequest]], Awaitable[dict[str, JSON]]],
        check_output: Callable[[str, CallToolResult], Awaitable[None]],
        log: Callable[[str], None],
    ) -> None:
        self.session = session
        self.era = era
        self.version = version
        self.send = send
        self.answer_all = answer_all
        self.check_output = check_output
        self.log = log


class TaskRegistry:
    """Routes task status notifications (and progress after creation) to the handles.

    A notification can come before the reply that names its task
    (server-everything sends ``working`` first), and the connection's
    notifications are delivered in a task of their own, which may run after
    the reply is read: while a creation is in flight, status and progress
    notifications that no handle claims are kept (a few), and the handle
    takes its own when it learns its id.
    """

    def __init__(self) -> None:
        self.handles: dict[str, ToolTask] = {}
        self.tokens: dict[int, ToolTask] = {}
        self.creating = 0
        self.early: deque[dict[str, JSON]] = deque(maxlen=EARLY_NOTES)

    def note(self, note: dict[str, JSON]) -> None:
        """Take a notification that no request claimed (sync; wakes handles only)."""
        method = note.get("method")
        params = note.get("params")
        if not isinstance(params, dict):
            return
        if method == "notifications/tasks/status":
            task_id = params.get("taskId")
            handle = self.handles.get(task_id) if isinstance(task_id, str) else None
            if handle is not None:
                handle._status_note(params)
            elif self.creating:
                self.early.append(params)
        elif method == "notifications/progress" and (self.tokens or self.creating):
            token = params.get("progressToken")
            handle = (
                self.tokens.get(token) if isinstance(token, int) and not isinstance(token, bool) else None
            )
            if handle is not None:
                handle._progress_note(params)
            elif self.creating:
                self.early.append(params)

    def begin_creation(self) -> None:
        self.creating += 1

    def end_creation(self) -> None:
        self.creating -= 1
        if not self.creating:
            self.early.clear()

    def register(self, handle: ToolTask, token: int | None) -> None:
        assert handle.task_id is not None
        self.handles[handle.task_id] = handle
        if token is not None:
            self.tokens[token] = handle
        for params in [p for p in self.early if p.get("taskId") == handle.task_id]:
            self.early.remove(params)
            handle._status_note(params)
        if token is not None:
            # Progress read before the reply, and not delivered to the call (the reply came first).
            for params in [p for p in self.early if p.get("progressToken") == token]:
                self.early.remove(params)
                handle._progress_note(params)

    def unregister(self, handle: ToolTask) -> None:
        if handle.task_id is not None and self.handles.get(handle.task_id) is handle:
            del self.handles[handle.task_id]
        for token in [token for token, held in self.tokens.items() if held is handle]:
            del self.tokens[token]


class ToolTask:
    """A tool call the server runs as a task: its status, its result, cancelling it.

    Made by `Client.tool_task` (and `Client.resume_task`) for the length of
    an ``async with`` block. Leaving the block while the task runs cancels it
    on the server (``tasks/cancel``, best effort, bounded), unless it was
    detached (`detach`).

    When the server ran the call at once instead (it has no task support,
    or the tool does not take tasks), `task_id` is `None`,
    `ran_synchronously` is true, and `result` gives the result all the same.
    """

    def __init__(self, ops: TaskOps, tool: str, task_id: str | None) -> None:
        self._ops = ops
        self.tool = tool
        """The name of the tool the task runs."""
        self.task_id = task_id
        """The server's identifier of the task, or `None` when the call ran synchronously."""
        self.server = ops.session.name
        """Which server runs the task, as messages (and `ref`) name it; a server group sets its own name."""
        self._state = TaskState(task_id or "")
        self._history: deque[Task] = deque(maxlen=HISTORY)
        self._seen = 0
        self._changed = trio.Event()
        self._poke = trio.Event()
        self._done = trio.Event()
        self._result: CallToolResult | None = None
        self._error: BaseException | None = None
        self._detached = False
        self._poll_now = False
        self._input_scope: trio.CancelScope | None = None
        self._on_progress: ProgressCallback | None = None
        self._progress: deque[dict[str, JSON]] = deque(maxlen=HISTORY)

    # ------------------------------------------------------------ public

    @property
    def ran_synchronously(self) -> bool:
        """Whether the server answered the call at once rather than as a task."""
        return self.task_id is None

    @property
    def status(self) -> Task | None:
        """The latest status snapshot (`None` before the first, and for a synchronous call)."""
        return self._state.latest

    @property
    def done(self) -> bool:
        """Whether the outcome is known (`result` returns or raises at once)."""
        return self._done.is_set()

    async def result(self) -> CallToolResult:
        """Wait for the task to end, and return its result.

        A tool that ran and failed (``is_error``) is a result, as for
        `Client.call_tool`. Cancelling this wait only stops waiting: the
        task goes on (until the block ends).

        Raises:
            TaskFailed: The task failed (an `RpcError` naming the task).
            TaskCancelled: The task was cancelled.
            TaskGone: The server no longer knows the task (expired, or lost).
            InputRequestFailed: An input request of the task could not be answered.
            ServerGone, TransportClosed: The connection ended first.
        """
        await self._done.wait()
        if self._error is not None:
            raise _fresh(self._error)
        assert self._result is not None
        return self._result

    async def updates(self) -> AsyncIterator[Task]:
        """Yield each new status snapshot (a new status or message), ending after the final one.

        Snapshots already seen when iteration starts are yielded first. A
        reader that falls more than a few hundred snapshots behind misses
        the oldest. Ends (without an error) once the outcome is known.
        """
        index = 0
        while True:
            first = self._seen - len(self._history)
            index = max(index, first)
            if index < self._seen:
                snapshot = self._history[index - first]
                index += 1
                yield snapshot
                continue
            if self._done.is_set():
                return
            changed = self._changed
            await changed.wait()

    async def cancel(self) -> None:
        """Ask the server to cancel the task (``tasks/cancel``).

        In revision 2025-11-25 the task is then cancelled and `result`
        raises `TaskCancelled`. With the 2026-07-28 extension the server
        may still finish it: `result` gives whichever end came first.
        A task that has ended already is left as it is.
        """
        if self.task_id is None or self._state.final is not None:
            await trio.lowlevel.checkpoint()
            return
        try:
            reply = await self._ops.send("tasks/cancel", {"taskId": self.task_id}, False)
        except RpcError as exc:
            if exc.code != INVALID_PARAMS:
                raise
            # It ended (or vanished) meanwhile: a poll says which.
            self._poll_now = True
            self._poke_driver()
            return
        if self._ops.era == "legacy" and "taskId" in reply:
            self._observe(decode_task(reply, "legacy"))
        # Learn how it ended (or that it goes on) without waiting for the next poll;
        # a hook still answering the task's input is not needed any more.
        self._poll_now = True
        if self._input_scope is not None:
            self._input_scope.cancel()
        self._poke_driver()

    def detach(self) -> TaskRef:
        """Leave the task running past the block, and return a reference to come back to it.

        Leaving the block then sends no ``tasks/cancel``. Give the
        reference to `Client.resume_task` (on this connection or a new one
        to the same server) to follow the task again.

        Raises:
            RuntimeError: The call ran synchronously: there is no task.
        """
        if self.task_id is None:
            raise RuntimeError(
                f"the call of tool {self.tool!r} ran synchronously: there is no task to detach"
            )
        self._detached = True
        ref = self.ref
        assert ref is not None
        return ref

    @property
    def ref(self) -> TaskRef | None:
        """The task's `TaskRef` (`None` for a synchronous call)."""
        if self.task_id is None:
            return None
        ops = self._ops
        return TaskRef(
            task_id=self.task_id,
            tool=self.tool,
            era=ops.era,
            protocol_version=ops.version,
            server=self.server,
        )

    def __repr__(self) -> str:
        status = self.status.status if self.status is not None else None
        return f"<ToolTask {self.tool!r} task_id={self.task_id!r} status={status!r}>"

    # ---------------------------------------------------------- private

    def _observe(self, task: Task) -> None:
        news, problem = self._state.observe(task)
        if problem is not None:
            self._ops.log(problem)
        if news:
            self._history.append(task)
            self._seen += 1
            self._signal()

    def _signal(self) -> None:
        changed, self._changed = self._changed, trio.Event()
        changed.set()

    def _poke_driver(self) -> None:
        self._poke.set()

    def _status_note(self, params: dict[str, JSON]) -> None:
        try:
            task = decode_task(params, self._ops.era)
        except MCPError as exc:
            self._ops.log(f"ignored a malformed task status notification: {exc}")
            return
        self._observe(task)
        self._poke_driver()

    def _progress_note(self, params: dict[str, JSON]) -> None:
        self._progress.append(params)
        self._poke_driver()

    async def _deliver_progress(self) -> None:
        callback = self._on_progress
        while self._progress:
            params = self._progress.popleft()
            if callback is None:
                continue
            progress = params.get("progress")
            total = params.get("total")
            message = params.get("message")
            try:
                await call_maybe_async(
                    callback,
                    progress if isinstance(progress, int | float) else 0.0,
                    total if isinstance(total, int | float) else None,
                    message if isinstance(message, str) else None,
                )
            except Exception as exc:
                self._ops.log(f"the on_progress callback of task {self.task_id} raised {exc!r}")

    def _finish(self, result: CallToolResult | None, error: BaseException | None) -> None:
        if self._done.is_set():
            return
        self._result = result
        self._error = error
        self._done.set()
        self._signal()
        self._poke_driver()

    async def _wait_until(self, deadline: float) -> None:
        """Sleep until ``deadline``, or less when something happens (a notification, the outcome, a cancel)."""
        if self._poke.is_set():
            await trio.lowlevel.checkpoint()
        else:
            with trio.move_on_at(deadline):
                await self._poke.wait()
        self._poke = trio.Event()

    def _next_poll(self) -> float:
        """When to poll next: after the interval the server last suggested (within bounds)."""
        latest = self._state.latest
        return trio.current_time() + poll_delay(latest.poll_interval_ms if latest is not None else None)


def _fresh(error: BaseException) -> BaseException:
    """A copy of a stored error to raise (each raise gets its own traceback)."""
    try:
        copy = type(error).__new__(type(error))
        copy.__dict__.update(error.__dict__)
        copy.args = error.args
        copy.__cause__ = error.__cause__
    except Exception:
        return error
    return copy


# ------------------------------------------------------------- driving


def adopt_sync(ops: TaskOps, tool: str, result: CallToolResult) -> ToolTask:
    """A handle for a call the server answered at once."""
    handle = ToolTask(ops, tool, None)
    handle._finish(result, None)
    return handle


def adopt(ops: TaskOps, tool: str, reply: dict[str, JSON]) -> ToolTask | None:
    """A handle for the task a creation reply names, or `None` when the reply is the result itself."""
    task = created_task(reply, ops.era)
    if task is None:
        return None
    handle = ToolTask(ops, tool, task.task_id)
    handle._observe(task)
    return handle


async def drive(handle: ToolTask) -> None:
    """Follow the task until its outcome is known; never raises (the outcome holds any error)."""
    try:
        if handle._ops.era == "legacy":
            await _drive_legacy(handle)
        else:
            await _drive_modern(handle)
    except RpcError as exc:
        task_id = handle.task_id or ""
        if exc.code == INVALID_PARAMS:
            error: BaseException = TaskGone(
                f"task {task_id} of tool {handle.tool!r} is gone: {exc.message}", task_id=task_id
            )
            error.__cause__ = exc
            handle._finish(None, error)
        else:
            handle._finish(None, exc)
    except Exception as exc:
        handle._finish(None, exc)


async def _poll(handle: ToolTask) -> dict[str, JSON]:
    assert handle.task_id is not None
    reply = await handle._ops.send("tasks/get", {"taskId": handle.task_id}, False)
    await handle._deliver_progress()
    return reply


def _ended(handle: ToolTask, final: Task) -> bool:
    """Settle a task that ended cancelled (or failed without result, modern); whether it settled."""
    if final.status == "cancelled":
        handle._finish(
            None,
            TaskCancelled(
                f"task {final.task_id} of tool {handle.tool!r} was cancelled", task_id=final.task_id
            ),
        )
        return True
    return False


async def _drive_legacy(handle: ToolTask) -> None:
    error: Exception | None = None
    async with trio.open_nursery() as nursery:
        try:
            await _follow_legacy(handle, nursery)
        except Exception as exc:
            # Raised from here, not from the nursery, which would wrap it in a group.
            error = exc
        nursery.cancel_scope.cancel()
    if error is not None:
        raise error


async def _follow_legacy(handle: ToolTask, nursery: trio.Nursery) -> None:
    state = handle._state
    opened = False
    next_poll = handle._next_poll()
    while not handle._done.is_set():
        latest = state.latest
        final = state.final
        if final is not None and _ended(handle, final):
            return
        if not opened and latest is not None and (latest.status == "input_required" or final is not None):
            # tasks/result blocks until the task ends; the server sends its
            # requests for input while it is open.
            opened = True
            nursery.start_soon(_legacy_result, handle)
        await handle._deliver_progress()
        if final is not None:
            # Ended: tasks/result, open, gives the outcome; no more polls.
            await handle._wait_until(math.inf)
            continue
        # A notification wakes the driver (its snapshot is taken already);
        # only the clock, or a cancel, makes it poll.
        await handle._wait_until(-math.inf if handle._poll_now else next_poll)
        if handle._done.is_set() or not (handle._poll_now or trio.current_time() >= next_poll):
            continue
        handle._poll_now = False
        handle._observe(decode_task(await _poll(handle), "legacy"))
        next_poll = handle._next_poll()


async def _legacy_result(handle: ToolTask) -> None:
    assert handle.task_id is not None
    task_id = handle.task_id
    try:
        raw = await handle._ops.send("tasks/result", {"taskId": task_id}, True)
    except RpcError as exc:
        final = handle._state.final
        if final is not None and final.status == "cancelled":
            _ended(handle, final)
        elif exc.code == INVALID_PARAMS:
            gone = TaskGone(f"task {task_id} of tool {handle.tool!r} is gone: {exc.message}", task_id=task_id)
            gone.__cause__ = exc
            handle._finish(None, gone)
        else:
            handle._finish(
                None, failure(task_id, {"code": exc.code, "message": exc.message, "data": exc.data})
            )
        return
    except Exception as exc:
        handle._finish(None, exc)
        return
    try:
        result = structure(raw, CallToolResult)
        if not result.is_error:
            await handle._ops.check_output(handle.tool, result)
    except Exception as exc:
        handle._finish(None, exc)
        return
    if handle._state.final is None:
        # The answer means the task ended; say how, as the server sees it.
        try:
            handle._observe(decode_task(await _poll(handle), "legacy"))
        except MCPError as exc:
            handle._ops.log(f"cannot read the final status of task {task_id}: {exc}")
    final = handle._state.final
    if final is not None and final.status == "cancelled":
        _ended(handle, final)
        return
    handle._finish(result, None)


async def _drive_modern(handle: ToolTask) -> None:
    assert handle.task_id is not None
    task_id = handle.task_id
    ledger = InputLedger()
    ops = handle._ops
    latest = handle._state.latest
    # The first poll too waits for the interval the server suggested, unless input is wanted.
    asks = latest is not None and latest.status == "input_required"
    next_poll = -math.inf if asks else handle._next_poll()
    while not handle._done.is_set():
        await handle._deliver_progress()
        await handle._wait_until(-math.inf if handle._poll_now else next_poll)
        if handle._done.is_set() or not (handle._poll_now or trio.current_time() >= next_poll):
            continue
        handle._poll_now = False
        polled = decode_polled(await _poll(handle), "modern")
        handle._observe(polled.task)
        next_poll = handle._next_poll()
        final = handle._state.final
        if final is not None:
            if _ended(handle, final):
                return
            if final.status == "failed":
                handle._finish(None, failure(task_id, polled.error))
                return
            if final.status == "completed":
                if polled.result is None:
                    # Ended completed on an earlier snapshot, and this poll says otherwise.
                    continue
                result = structure(polled.result, CallToolResult)
                if not result.is_error:
                    await ops.check_output(handle.tool, result)
                handle._finish(result, None)
                return
            # A terminal status this version does not know.
            handle._finish(None, failure(task_id, {"message": f"the task ended {final.status!r}"}))
            return
        fresh = ledger.take(polled.input_requests)
        if fresh:
            requests = {
                key: structure(
                    {**asked, "params": with_related_task(asked.get("params") or {}, task_id)}, InputRequest
                )
                for key, asked in fresh.items()
            }
            with trio.CancelScope() as handle._input_scope:
                answers = await ops.answer_all(requests)
            handle._input_scope = None
            if handle._poll_now:
                # Cancelled meanwhile (the hooks were stopped): no answers to give.
                continue
            try:
                await ops.send("tasks/update", {"taskId": task_id, "inputResponses": answers}, False)
            except MCPError:
                ledger.release(fresh)
                raise
            # Soon, to see the task go on (never faster than the floor).
            next_poll = trio.current_time() + POLL_FLOOR


@asynccontextmanager
async def following(handle: ToolTask, registry: TaskRegistry) -> AsyncIterator[ToolTask]:
    """Follow ``handle``'s task for the length of a block (its driver runs in the connection's nursery).

    Leaving the block stops the driver, and cancels the task on the server
    (``tasks/cancel``, shielded, within `CANCEL_GRACE` seconds) unless it
    ended or was detached. A handle whose outcome is still unknown then
    raises `TaskCancelled` (or, detached, `TaskError`) from `ToolTask.result`.
    """
    if handle.task_id is None:
        await trio.lowlevel.checkpoint()
        yield handle
        return
    scope = trio.CancelScope()
    stopped = trio.Event()

    async def run() -> None:
        try:
            with scope:
                await drive(handle)
        finally:
            stopped.set()

    try:
        start_soon(handle._ops.session, run, name=f"task {handle.task_id}")
    except BaseException:
        registry.unregister(handle)
        raise
    try:
        yield handle
    finally:
        scope.cancel()
        with trio.CancelScope(shield=True):
            await stopped.wait()
            registry.unregister(handle)
            await _cancel_unfinished(handle)
        task_id = handle.task_id
        if handle._detached:
            handle._finish(
                None, TaskError(f"task {task_id} was detached; resume it to follow it", task_id=task_id)
            )
        else:
            handle._finish(
                None, TaskCancelled(f"task {task_id} was cancelled as its block ended", task_id=task_id)
            )


async def _cancel_unfinished(handle: ToolTask) -> None:
    ops = handle._ops
    if (
        handle._detached
        or handle._state.final is not None
        or isinstance(handle._error, TaskGone)
        or ops.session.failure is not None
    ):
        return
    with trio.move_on_after(CANCEL_GRACE):
        try:
            await ops.send("tasks/cancel", {"taskId": handle.task_id}, False)
        except RpcError as exc:
            if exc.code != INVALID_PARAMS:
                ops.log(f"tasks/cancel of task {handle.task_id} failed as its block ended: {exc}")
        except MCPError as exc:
            ops.log(f"tasks/cancel of task {handle.task_id} failed as its block ended: {exc}")
