"""``trio-mcp tasks``: tool calls as tasks, and the tasks a server keeps.

* ``tasks start TOOL [KEY=VALUE...]``: the call runs as a task
  (`Client.tool_task`); its status changes show on stderr, its result on
  stdout, as ``call`` shows it. With ``--detach`` the task's id is printed
  instead (with ``--json``, its `TaskRef`), and the task goes on.
* ``tasks list``: the server's tasks (revision 2025-11-25 has
  ``tasks/list``; the 2026-07-28 extension has none).
* ``tasks status ID``, ``tasks result ID``, ``tasks cancel ID``: one task,
  by its id (``--id=ID`` names an id that begins with ``-``).

The exit statuses are ``call``'s: a task that failed with a JSON-RPC error
is 6, as is a task the server does not know (any more) or one that was
cancelled; a result flagged ``isError`` is 1.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from .._core.tasks import Task, TaskRef
from .._errors import NotSupported, TaskCancelled, TaskGone
from ._args import EXIT_OK, EXIT_RPC_ERROR, Options
from ._failures import Failure
from ._run import Command, arguments_for, execute, show_call_result

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .._client import Client
    from .._models import CallToolResult

__all__ = ["execute_tasks", "run_tasks"]

JSON = Any


def execute_tasks(options: Options) -> int:
    """Run a ``tasks`` command line; return its exit status."""
    return execute(options, run_tasks)


async def run_tasks(session: Command, client: Client) -> int:
    """Run the ``tasks`` command of ``session`` on a connected client (the shell's way in)."""
    return int(await _ACTIONS[session.options.task_action](session, client))


# ----------------------------------------------------------------- shown


def task_wire(task: Task) -> dict[str, JSON]:
    """A task as ``--json`` shows it (the wire's names)."""
    wire: dict[str, JSON] = {"taskId": task.task_id, "status": task.status}
    if task.status_message is not None:
        wire["statusMessage"] = task.status_message
    wire["createdAt"] = task.created_at
    wire["lastUpdatedAt"] = task.last_updated_at
    wire["ttlMs"] = task.ttl_ms
    if task.poll_interval_ms is not None:
        wire["pollIntervalMs"] = task.poll_interval_ms
    return wire


def task_line(task: Task) -> str:
    """One line for a person: the id, the status, the message."""
    line = f"{task.task_id}  {task.status}"
    if task.status_message:
        line += f"  {task.status_message}"
    return line


@contextmanager
def _task_failures() -> Iterator[None]:
    """A task the server no longer knows, or that was cancelled, ends the command (`EXIT_RPC_ERROR`)."""
    try:
        yield
    except (TaskGone, TaskCancelled) as exc:
        kind = "task-gone" if isinstance(exc, TaskGone) else "task-cancelled"
        raise Failure(EXIT_RPC_ERROR, str(exc), kind=kind, taskId=exc.task_id) from None


async def _show_result(session: Command, what: str, result: CallToolResult) -> int:
    """Print a tool's result as ``call`` does; ``what`` names what ran (``the tool 'echo'``)."""
    session.console.clear()
    return await show_call_result(session, result, what=what)


# --------------------------------------------------------------- actions


async def _start(session: Command, client: Client) -> int:
    options = session.options
    console = session.console
    arguments = await arguments_for(session, client)
    session.stage = "tools/call"
    session.mark_stderr()
    with _task_failures():
        async with client.tool_task(options.target, arguments, on_progress=console.progress) as task:
            if task.ran_synchronously:
                console.clear()
                console.say(f"the server ran {options.target!r} at once, not as a task")
                return await _show_result(session, f"the tool {options.target!r}", await task.result())
            assert task.task_id is not None
            if options.detach:
                ref = task.detach()
                console.clear()
                if options.json_output:
                    session.emit_json(ref.to_json())
                else:
                    session.emit(task.task_id + "\n")
                return EXIT_OK
            session.stage = f"task {task.task_id}"
            async for snapshot in task.updates():
                console.clear()
                console.say(f"task {task_line(snapshot)}")
            result = await task.result()
    return await _show_result(session, f"the tool {options.target!r}", result)


async def _list(session: Command, client: Client) -> int:
    session.stage = "tasks/list"
    try:
        tasks = await client.list_tasks()
    except NotSupported:
        raise Failure(
            EXIT_RPC_ERROR,
            f"the server speaks {client.protocol_version}, where tasks cannot be listed"
            " (the tasks extension has no tasks/list): ask for one by its id",
            kind="unsupported",
        ) from None
    if session.options.json_output:
        session.emit_json({"tasks": [task_wire(task) for task in tasks]})
    elif tasks:
        session.emit("".join(task_line(task) + "\n" for task in tasks))
    else:
        # Said on stderr: stdout stays empty, as a script reading the list expects.
        session.console.say("the server has no tasks")
    return EXIT_OK


async def _status(session: Command, client: Client) -> int:
    session.stage = "tasks/get"
    with _task_failures():
        task = await client.get_task(session.options.target)
    _show_task(session, task)
    return EXIT_OK


async def _result(session: Command, client: Client) -> int:
    options = session.options
    assert client.era is not None
    ref = TaskRef(
        task_id=options.target, tool="", era=client.era, protocol_version=client.protocol_version or ""
    )
    session.stage = f"task {options.target}"
    session.mark_stderr()
    with _task_failures():
        async with client.resume_task(ref) as task:
            result = await task.result()
    return await _show_result(session, f"the tool of task {options.target}", result)


async def _cancel(session: Command, client: Client) -> int:
    session.stage = "tasks/cancel"
    with _task_failures():
        task = await client.cancel_task(session.options.target)
    if task is not None:
        _show_task(session, task)
    elif session.options.json_output:
        session.emit_json({"taskId": session.options.target})
    else:
        # 2026-07-28: an acknowledgement; the task ends later (cancelled, or otherwise).
        session.emit(f"{session.options.target}  cancel requested\n")
    return EXIT_OK


def _show_task(session: Command, task: Task) -> None:
    """A task's status on stdout: its line, or its JSON with ``--json``."""
    if session.options.json_output:
        session.emit_json(task_wire(task))
    else:
        session.emit(task_line(task) + "\n")


_ACTIONS: Final[dict[str, Callable[[Command, Client], Any]]] = {
    "start": _start,
    "list": _list,
    "status": _status,
    "result": _result,
    "cancel": _cancel,
}
