"""Tool calls that run as tasks: the `ToolTask` handle, and the loop that follows it.

`Client.tool_task` starts a tool as a task and gives a `ToolTask` for the
length of an ``async with`` block. A task of its own in the connection's
nursery (the driver) follows the task until it ends, in either era, by
doing what the pure `trio_mcp._core.tasks.Follower` says: poll
``tasks/get`` (at the pace the server suggests, within `POLL_FLOOR` and
`POLL_CAP`; a status notification wakes it early), open ``tasks/result``
(2025-11-25: the server sends its requests for input while it is open, and
the client's hooks answer them as they answer any server request), answer
the input requests ``tasks/get`` lists through the hooks and send the
answers with ``tasks/update`` (2026-07-28), sleep, finish. The rules are
the follower's; this module only moves messages and keeps time.
"""

from __future__ import annotations

from collections import deque
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypeVar

import trio

from .._core.eras import result_type
from .._core.tasks import (
    POLL_CAP,
    POLL_FLOOR,
    AnswerInput,
    Finish,
    Follower,
    OpenResult,
    Poll,
    SendUpdate,
    SleepUntil,
    StopInput,
    Task,
    TaskPage,
    TaskRef,
    created_task,
    decode_list,
    decode_polled,
    decode_task,
    gone,
    legacy_support,
    unknown_task,
)
from .._errors import MCPError, NotSupported, RpcError, TaskCancelled, TaskError, TaskGone
from .._models import CallToolResult, InputRequest, structure
from .._session import call_maybe_async, start_soon
from .pages import Pages

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence

    from .._models import Tool
    from .._options import NotificationCallback
    from .._session import Session
    from .notes import ProgressCallback

__all__ = [
    "POLL_CAP",
    "POLL_FLOOR",
    "ClientTasks",
    "TaskHost",
    "TaskOps",
    "TaskRegistry",
    "ToolTask",
    "adopt",
    "adopt_sync",
    "following",
]

JSON: TypeAlias = Any
E = TypeVar("E", bound=BaseException)

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
        self._follower = Follower(task_id or "", tool, ops.era)
        self._history: deque[Task] = deque(maxlen=HISTORY)
        self._seen = 0
        self._changed = trio.Event()
        self._poke = trio.Event()
        self._done = trio.Event()
        self._result: CallToolResult | None = None
        self._error: BaseException | None = None
        self._detached = False
        self._input_scopes: set[trio.CancelScope] = set()
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
        return self._follower.state.latest

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
        follower = self._follower
        if self.task_id is None or follower.state.final is not None or follower.outcome is not None:
            await trio.lowlevel.checkpoint()
            return
        try:
            reply = await self._ops.send("tasks/cancel", {"taskId": self.task_id}, False)
        except RpcError as exc:
            if not unknown_task(exc):
                raise
            follower.failed("tasks/cancel", exc)
        else:
            # Learn how it ended (or that it goes on) without waiting for the next poll;
            # a hook still answering the task's input is not needed any more.
            follower.cancel_requested(reply)
        self._drain()
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
        self._follower.snapshot(task)
        self._drain()

    def _drain(self) -> None:
        """Report the follower's problems, and show its news to `updates` readers."""
        follower = self._follower
        for problem in follower.problems:
            self._ops.log(problem)
        follower.problems.clear()
        if follower.fresh:
            self._history.extend(follower.fresh)
            self._seen += len(follower.fresh)
            follower.fresh.clear()
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


def _fresh(error: E) -> E:
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
    follower = handle._follower
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch_session, handle)
        try:
            await _follow(handle, nursery)
        except Exception as exc:
            follower.crashed(exc)
            outcome = follower.outcome
            assert outcome is not None
            handle._finish(None, outcome.error)
        nursery.cancel_scope.cancel()


async def _follow(handle: ToolTask, nursery: trio.Nursery) -> None:
    """Do what the follower says until it says `Finish`."""
    follower = handle._follower
    ops = handle._ops
    task_id = follower.task_id
    while True:
        handle._drain()
        await handle._deliver_progress()
        action = follower.next(trio.current_time())
        if isinstance(action, Finish):
            await _conclude(handle, action)
            return
        if isinstance(action, SleepUntil):
            await handle._wait_until(action.deadline)
        elif isinstance(action, Poll):
            try:
                reply = await ops.send("tasks/get", {"taskId": task_id}, False)
            except MCPError as exc:
                follower.failed("tasks/get", exc)
            else:
                follower.polled(reply, trio.current_time())
        elif isinstance(action, OpenResult):
            nursery.start_soon(_open_result, handle)
        elif isinstance(action, AnswerInput):
            nursery.start_soon(_answer, handle, action.requests)
        elif isinstance(action, StopInput):
            for scope in handle._input_scopes:
                scope.cancel()
        else:
            assert isinstance(action, SendUpdate)
            try:
                await ops.send("tasks/update", {"taskId": task_id, "inputResponses": action.answers}, False)
            except MCPError as exc:
                follower.failed("tasks/update", exc)
            else:
                follower.update_sent(trio.current_time())


async def _conclude(handle: ToolTask, finish: Finish) -> None:
    """Settle the handle: the error, or the result once read and checked against the output schema."""
    if finish.error is not None or finish.result is None:
        handle._finish(None, finish.error)
        return
    try:
        result = structure(finish.result, CallToolResult)
        if not result.is_error:
            await handle._ops.check_output(handle.tool, result)
    except Exception as exc:
        handle._finish(None, exc)
        return
    handle._finish(result, None)


async def _open_result(handle: ToolTask) -> None:
    """2025-11-25: ``tasks/result``, which blocks until the task ends (beside the polls)."""
    follower = handle._follower
    try:
        raw = await handle._ops.send("tasks/result", {"taskId": follower.task_id}, True)
    except Exception as exc:
        follower.failed("tasks/result", exc)
    else:
        follower.result_arrived(raw)
    handle._poke_driver()


async def _answer(handle: ToolTask, asked: dict[str, dict[str, JSON]]) -> None:
    """2026-07-28: answer a round of input requests through the hooks (beside the polls)."""
    follower = handle._follower
    answers: dict[str, JSON] = {}
    with trio.CancelScope() as scope:
        handle._input_scopes.add(scope)
        try:
            requests = {key: structure(request, InputRequest) for key, request in asked.items()}
            answers = await handle._ops.answer_all(requests)
        except Exception as exc:
            follower.crashed(exc)
        finally:
            handle._input_scopes.discard(scope)
    follower.answered(asked, answers)
    handle._poke_driver()


async def _watch_session(handle: ToolTask) -> None:
    """The connection's end is the task's: a hook still answering its input is stopped at once."""
    failure = await handle._ops.session.wait_failed()
    handle._follower.crashed(_fresh(failure))
    handle._poke_driver()


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
                None,
                TaskError(
                    f"task {task_id} of tool {handle.tool!r} was detached; resume it to follow it",
                    task_id=task_id,
                ),
            )
        else:
            handle._finish(
                None,
                TaskCancelled(
                    f"task {task_id} of tool {handle.tool!r} was cancelled as its block ended",
                    task_id=task_id,
                ),
            )


async def _cancel_unfinished(handle: ToolTask) -> None:
    ops = handle._ops
    if (
        handle._detached
        or handle._follower.state.final is not None
        or isinstance(handle._error, TaskGone)
        or ops.session.failure is not None
    ):
        return
    with trio.move_on_after(CANCEL_GRACE):
        try:
            await ops.send("tasks/cancel", {"taskId": handle.task_id}, False)
        except RpcError as exc:
            if not unknown_task(exc):
                ops.log(f"tasks/cancel of task {handle.task_id} failed as its block ended: {exc}")
        except MCPError as exc:
            ops.log(f"tasks/cancel of task {handle.task_id} failed as its block ended: {exc}")


# ----------------------------------------------------- the client's tasks


class TaskHost:
    """What the client's task side needs of the client: narrow operations, read when used.

    Args:
        session: The connection.
        connection: The negotiated ``(era, protocol_version)``, or ``(None, None)`` before it.
        server_tasks: The server's ``tasks`` capability (initialize era), or `None`.
        send: Sends a ``tasks/*`` request with the era's envelope (see `TaskOps`).
        create: Sends one ``tools/call`` that asks for a task (the progress token,
            and a callback for the notifications that name the call); returns its reply.
        run_rounds: Runs a 2026-07-28 request to completion, answering its input requests.
        call_tool: Calls a tool the ordinary way (for a call that takes no task).
        list_tools: Lists the tools (their listing says which take tasks).
        progress: A fresh progress token, and the callback for a call's notifications.
        answer_all: Answers a round of input requests through the hooks.
        check_output: Checks a final result against the tool's output schema.
        log: Reports a diagnostic.
    """

    def __init__(
        self,
        *,
        session: Session,
        connection: Callable[[], tuple[Literal["modern", "legacy"] | None, str | None]],
        server_tasks: Callable[[], Mapping[str, JSON] | None],
        send: Callable[[str, dict[str, JSON], bool], Awaitable[dict[str, JSON]]],
        create: Callable[
            [dict[str, JSON], int | None, NotificationCallback | None], Awaitable[dict[str, JSON]]
        ],
        run_rounds: Callable[
            [dict[str, JSON], Callable[[dict[str, JSON]], Awaitable[dict[str, JSON]]]],
            Awaitable[CallToolResult],
        ],
        call_tool: Callable[
            [str, Mapping[str, JSON] | None, ProgressCallback | None], Awaitable[CallToolResult]
        ],
        list_tools: Callable[[], Awaitable[object]],
        progress: Callable[[ProgressCallback | None], tuple[int | None, NotificationCallback | None]],
        answer_all: Callable[[Mapping[str, InputRequest]], Awaitable[dict[str, JSON]]],
        check_output: Callable[[str, CallToolResult], Awaitable[None]],
        log: Callable[[str], None],
    ) -> None:
        self.session = session
        self.connection = connection
        self.server_tasks = server_tasks
        self.send = send
        self.create = create
        self.run_rounds = run_rounds
        self.call_tool = call_tool
        self.list_tools = list_tools
        self.progress = progress
        self.answer_all = answer_all
        self.check_output = check_output
        self.log = log


#: A tool that may take a task, to ask whether the server runs tools as tasks at all.
_OPTIONAL: Final = {"taskSupport": "optional"}


class ClientTasks:
    """The client's task side: creating tasks, following them, the ``tasks/*`` requests.

    `Client.tool_task`, `Client.resume_task`, `Client.get_task`,
    `Client.cancel_task` and `Client.list_tasks` are this, and `Client.call_tool`
    asks it whether a tool must run as a task.
    """

    def __init__(self, host: TaskHost) -> None:
        self._host = host
        self._registry = TaskRegistry()
        self._support: dict[str, str] = {}
        """The ``taskSupport`` of each tool, from its latest listing (initialize era)."""
        self._required: set[str] = set()
        """The tools whose listing says they must be called as tasks (initialize era)."""
        self._listed = False
        """Whether the tools were listed (to learn their task support) since they last changed."""

    # ------------------------------------------------------- the client's

    def note(self, note: dict[str, JSON]) -> None:
        """Take a notification no request claimed: task status and progress; a change of the tools."""
        self._registry.note(note)
        if note.get("method") == "notifications/tools/list_changed":
            self._listed = False

    def saw_tools(self, tools: Sequence[Tool]) -> None:
        """Remember each listed tool's task support (initialize era)."""
        server_tasks = self._host.server_tasks()
        for tool in tools:
            support = legacy_support(server_tasks, tool.execution)
            self._support[tool.name] = support
            if support == "required":
                self._required.add(tool.name)
            else:
                self._required.discard(tool.name)

    def may_require(self, name: str) -> bool:
        """Whether tool ``name`` may have to run as a task (initialize era; no I/O): see `requires`."""
        return name in self._required or self._support_unknown(name)

    async def requires(self, name: str) -> bool:
        """Whether tool ``name`` must be called as a task (initialize era).

        Its listing says so: the tools are listed first when the server runs
        tools as tasks and this one was not listed since they last changed.
        """
        if self._support_unknown(name):
            try:
                await self._host.list_tools()
            except MCPError as exc:
                self._host.log(
                    f"cannot list the tools of {self._host.session.name} to learn which need a task: {exc}"
                )
            # Once per change of the tools: a tool not in the listing takes no task.
            self._listed = True
        return name in self._required

    async def call_as_task(
        self, name: str, arguments: Mapping[str, JSON] | None, on_progress: ProgressCallback | None
    ) -> CallToolResult:
        """Run a tool as a task, and wait for its result (`Client.call_tool` of a tool that needs one)."""
        async with self.tool_task(name, arguments, on_progress=on_progress) as task:
            return await task.result()

    def _support_unknown(self, name: str) -> bool:
        # On every initialize-era call_tool: the cheap tests first.
        if self._listed or name in self._support:
            return False
        server_tasks = self._host.server_tasks()
        return server_tasks is not None and legacy_support(server_tasks, _OPTIONAL) != "forbidden"

    def _ops(self) -> TaskOps:
        host = self._host
        era, version = host.connection()
        assert era is not None
        assert version is not None
        return TaskOps(
            session=host.session,
            era=era,
            version=version,
            send=host.send,
            answer_all=host.answer_all,
            check_output=host.check_output,
            log=host.log,
        )

    async def _connected(self) -> Literal["modern", "legacy"]:
        era, _ = self._host.connection()
        if era is None:
            await trio.lowlevel.checkpoint()
            raise RuntimeError("use the client inside 'async with open_client(...)'")
        return era

    # ---------------------------------------------------------- creating

    @asynccontextmanager
    async def tool_task(
        self,
        name: str,
        arguments: Mapping[str, JSON] | None = None,
        *,
        ttl_ms: int | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[ToolTask]:
        """`Client.tool_task`."""
        era = await self._connected()
        ops = self._ops()
        params: dict[str, JSON] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        token, callback = self._host.progress(on_progress)
        registry = self._registry
        registry.begin_creation()
        try:
            if era == "legacy":
                handle = await self._create_legacy(ops, params, ttl_ms, token, callback, on_progress)
            else:
                handle = await self._create_modern(ops, params, token, callback)
            if handle.task_id is not None:
                handle._on_progress = on_progress
                registry.register(handle, token)
        finally:
            registry.end_creation()
        async with following(handle, registry) as followed:
            yield followed

    async def _create_legacy(
        self,
        ops: TaskOps,
        params: dict[str, JSON],
        ttl_ms: int | None,
        token: int | None,
        callback: NotificationCallback | None,
        on_progress: ProgressCallback | None,
    ) -> ToolTask:
        name = params["name"]
        # Whether the tool takes a task is in its listing.
        await self.requires(name)
        if self._support.get(name, "forbidden") == "forbidden":
            # Not to be sent as a task: the server answers at once.
            result = await self._host.call_tool(name, params.get("arguments"), on_progress)
            return adopt_sync(ops, name, result)
        body = {**params, "task": {} if ttl_ms is None else {"ttl": ttl_ms}}
        reply = await self._host.create(body, token, callback)
        handle = adopt(ops, name, reply)
        if handle is None:
            # A server that ignores the task asked for: the reply is the result.
            done = structure(reply, CallToolResult)
            if not done.is_error:
                await ops.check_output(name, done)
            return adopt_sync(ops, name, done)
        return handle

    async def _create_modern(
        self,
        ops: TaskOps,
        params: dict[str, JSON],
        token: int | None,
        callback: NotificationCallback | None,
    ) -> ToolTask:
        name = params["name"]
        created: list[dict[str, JSON]] = []

        async def send(round_params: dict[str, JSON]) -> dict[str, JSON]:
            reply = await self._host.create(round_params, token, callback)
            if result_type("tools/call", reply, tasks=True) == "task":
                created.append(reply)
                raise _Created
            return reply

        try:
            result = await self._host.run_rounds(params, send)
        except _Created:
            handle = adopt(ops, name, created[0])
            assert handle is not None
            return handle
        if not result.is_error:
            await ops.check_output(name, result)
        return adopt_sync(ops, name, result)

    # --------------------------------------------------------- following

    @asynccontextmanager
    async def resume_task(self, ref: TaskRef) -> AsyncIterator[ToolTask]:
        """`Client.resume_task`."""
        era = await self._connected()
        if ref.era != era:
            await trio.lowlevel.checkpoint()
            raise NotSupported(
                f"task {ref.task_id} was started in the {ref.era} era; this connection speaks the {era} era",
                method="tasks/get",
                era=era,
            )
        snapshot = await self.get_task(ref.task_id)
        handle = ToolTask(self._ops(), ref.tool, ref.task_id)
        handle._observe(snapshot)
        self._registry.register(handle, None)
        async with following(handle, self._registry) as followed:
            yield followed

    async def get_task(self, task_id: str) -> Task:
        """`Client.get_task`."""
        era = await self._connected()
        try:
            reply = await self._host.send("tasks/get", {"taskId": task_id}, False)
        except RpcError as exc:
            vanished = gone(task_id, exc)
            if vanished is None:
                raise
            raise vanished from exc
        return decode_polled(reply, era).task

    async def cancel_task(self, task_id: str) -> Task | None:
        """`Client.cancel_task`."""
        era = await self._connected()
        try:
            reply = await self._host.send("tasks/cancel", {"taskId": task_id}, False)
        except RpcError as exc:
            if not unknown_task(exc):
                raise
            # Unknown, or (2025-11-25) ended already: its status says which.
            return await self.get_task(task_id)
        if era == "legacy" and "taskId" in reply:
            return decode_task(reply, "legacy")
        return None

    async def list_tasks(self) -> list[Task]:
        """`Client.list_tasks` (the era is checked by the client)."""
        session = self._host.session

        async def fetch(cursor: str | None) -> TaskPage:
            return decode_list(
                await session.request("tasks/list", {} if cursor is None else {"cursor": cursor})
            )

        tasks: Pages[Task] = Pages(fetch, "tasks/list", "tasks")
        return await tasks.collect()


class _Created(Exception):
    """A task-augmented ``tools/call`` was answered with a task (leaves the rounds of input)."""
