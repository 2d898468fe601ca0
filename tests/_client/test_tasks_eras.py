"""Every task transition, in both eras, through the client's task handle, against a real process.

``tests/servers/task_server.py`` scripts one transition per tool; the same
test runs once in 2025-11-25 (the client pinned to it: ``initialize``, core
tasks) and once in 2026-07-28 (``protocol="auto"`` finds it: the
``io.modelcontextprotocol/tasks`` extension), unless the transition exists
in one era only. The server writes every message it receives to a log, so
that the tests can see what the client sent (``tasks/cancel``, or not).

* working → completed, with the updates seen once each;
* working → input_required → working → completed, the question answered by
  the client's ordinary ``on_elicitation`` hook, which learns the task id;
* failed with a JSON-RPC error (`TaskFailed`), failed with no error at all
  (`TaskFailed` too, never an empty success), and a tool result flagged
  ``isError`` (returned, as `Client.call_tool` returns it);
* cancelled mid-task (`ToolTask.cancel`, and leaving the block), and a
  detached task left alone;
* a task that vanishes, or expires (`TaskGone`);
* polling intervals that change with every answer;
* status notifications written before the reply that creates the task, and
  twice each;
* a call the server runs synchronously, a tool that requires a task;
* detached, then resumed by reference on a new connection: a new process of
  a server that keeps its tasks (the reference through JSON), and a second
  HTTP client of the demo server (one server process behind HTTP).

Real processes, the real clock, a ``trio.fail_after`` guard on each test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from opening_support import http_client, process_client
from paths import REPO_ROOT, SERVERS_DIR
from task_support import http_demo_command, http_demo_url

from trio_mcp import ProtocolError, TaskCancelled, TaskFailed, TaskGone, TaskRef

LIMIT = 40
SERVER = str(SERVERS_DIR / "task_server.py")
REPO = REPO_ROOT
RELATED = "io.modelcontextprotocol/related-task"

ERAS = [
    pytest.param("2025-11-25", id="2025-11-25"),
    pytest.param("auto", id="2026-07-28"),
]


@pytest.fixture(params=ERAS)
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def client(log: Path | None, protocol: str, *flags: str, **options: Any) -> Any:
    args = [SERVER, *flags]
    if log is not None:
        args += ["--log", str(log)]
    return process_client(sys.executable, args, protocol=protocol, **options)


def received(log: Path) -> list[dict[str, Any]]:
    """The messages the server received, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def methods(log: Path) -> list[str]:
    return [message["method"] for message in received(log) if "method" in message]


def expected_era(protocol: str) -> str:
    return "legacy" if protocol == "2025-11-25" else "modern"


# ------------------------------------------------------------- lifecycles


async def test_working_to_completed(tmp_path: Path, protocol: str) -> None:
    log = tmp_path / "log"
    with trio.fail_after(LIMIT):
        async with client(log, protocol) as c:
            assert c.era == expected_era(protocol)
            async with c.tool_task("quick", {"seconds": 0.5}) as task:
                assert not task.ran_synchronously
                assert task.task_id is not None
                seen = [snapshot async for snapshot in task.updates()]
                result = await task.result()
            assert result.text == "quick done"
            assert seen[0].status == "working"
            assert seen[-1].status == "completed"
            assert [s.status for s in seen].count("completed") == 1
            assert "tasks/get" in methods(log)
            # The block ended with the task: nothing to cancel.
            assert "tasks/cancel" not in methods(log)


async def test_input_required_and_back(tmp_path: Path, protocol: str) -> None:
    asked: list[Any] = []

    def on_elicitation(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    log = tmp_path / "log"
    with trio.fail_after(LIMIT):
        async with (
            client(log, protocol, on_elicitation=on_elicitation) as c,
            c.tool_task("flow") as task,
        ):
            statuses = [snapshot.status async for snapshot in task.updates()]
            result = await task.result()
    assert result.text == "Hello, Ada!"
    assert len(asked) == 1
    assert asked[0].message == "Your name?"
    assert asked[0].meta[RELATED]["taskId"] == task.task_id
    assert statuses[0] == "working"
    assert "input_required" in statuses
    assert statuses[-1] == "completed"
    if protocol == "2025-11-25":
        # The answer went back while tasks/result was open.
        sent = methods(log)
        assert "tasks/result" in sent
        assert "tasks/update" not in sent
    else:
        (update,) = [m for m in received(log) if m.get("method") == "tasks/update"]
        assert update["params"]["taskId"] == task.task_id
        assert update["params"]["inputResponses"] == {
            "name-1": {"action": "accept", "content": {"name": "Ada"}}
        }


async def test_failed_with_an_rpc_error(tmp_path: Path, protocol: str) -> None:
    with trio.fail_after(LIMIT):
        async with client(None, protocol) as c, c.tool_task("rpc_fail") as task:
            with pytest.raises(TaskFailed) as caught:
                await task.result()
            assert task.status is not None
            assert task.status.status == "failed"
    error = caught.value
    assert error.task_id == task.task_id
    assert error.code == -32000
    assert error.message == "the job broke"
    assert error.data == {"why": "scripted"}


async def test_failed_without_an_error_is_never_a_success(protocol: str) -> None:
    """The official SDK v1 fails a task whose work raised with no error and no ``isError``."""
    with trio.fail_after(LIMIT):
        async with client(None, protocol) as c, c.tool_task("quiet_fail") as task:
            with pytest.raises(TaskFailed) as caught:
                await task.result()
            assert task.status is not None
            assert task.status.status == "failed"
    assert caught.value.task_id == task.task_id
    assert "ValueError: the work raised" in str(caught.value)


async def test_a_tool_error_is_a_result(tmp_path: Path, protocol: str) -> None:
    """isError: ``failed`` in 2025-11-25, ``completed`` with the extension; a result either way."""
    with trio.fail_after(LIMIT):
        async with client(None, protocol) as c, c.tool_task("is_error") as task:
            result = await task.result()
            assert task.status is not None
            final = task.status.status
    assert result.is_error
    assert result.text == "tool said no"
    assert final == ("failed" if protocol == "2025-11-25" else "completed")


# ------------------------------------------------------------ cancellation


async def test_cancelled_mid_task(tmp_path: Path, protocol: str) -> None:
    log = tmp_path / "log"
    with trio.fail_after(LIMIT):
        async with client(log, protocol) as c, c.tool_task("long") as task:
            await trio.sleep(0.3)
            await task.cancel()
            with pytest.raises(TaskCancelled) as caught:
                await task.result()
            assert caught.value.task_id == task.task_id
            # The message names the tool, as the other task errors do.
            assert "of tool 'long'" in str(caught.value)
            assert task.status is not None
            assert task.status.status == "cancelled"
    cancels = [m for m in received(log) if m.get("method") == "tasks/cancel"]
    assert [m["params"]["taskId"] for m in cancels] == [task.task_id]


async def test_leaving_the_block_cancels_but_a_detached_task_is_left_alone(
    tmp_path: Path, protocol: str
) -> None:
    log = tmp_path / "log"
    with trio.fail_after(LIMIT):
        async with client(log, protocol) as c:
            async with c.tool_task("long") as left:
                await trio.sleep(0.2)
            async with c.tool_task("long") as kept:
                await trio.sleep(0.2)
                ref = kept.detach()
            assert ref.task_id == kept.task_id
            assert (await c.get_task(kept.task_id)).status == "working"
            await trio.sleep(0.3)
            cancelled = [m["params"]["taskId"] for m in received(log) if m.get("method") == "tasks/cancel"]
            assert cancelled == [left.task_id]
            with pytest.raises(TaskCancelled, match="of tool 'long' was cancelled as its block ended"):
                await left.result()


async def test_cancelling_the_wait_only_stops_waiting(tmp_path: Path, protocol: str) -> None:
    log = tmp_path / "log"
    with trio.fail_after(LIMIT):
        async with client(log, protocol) as c, c.tool_task("quick", {"seconds": 1.0}) as task:
            with trio.move_on_after(0.2):
                await task.result()
            assert "tasks/cancel" not in methods(log)
            assert (await task.result()).text == "quick done"


# ------------------------------------------------------- gone and expired


@pytest.mark.parametrize("tool", ["vanish", "expire"])
async def test_a_task_that_disappears_is_gone(tmp_path: Path, protocol: str, tool: str) -> None:
    with trio.fail_after(LIMIT):
        async with client(None, protocol) as c, c.tool_task(tool) as task:
            with pytest.raises(TaskGone) as caught:
                await task.result()
    assert caught.value.task_id == task.task_id


async def test_an_unknown_task_is_gone(tmp_path: Path, protocol: str) -> None:
    with trio.fail_after(LIMIT):
        async with client(None, protocol) as c:
            with pytest.raises(TaskGone):
                await c.get_task("no-such-task")
            ref = TaskRef(
                task_id="no-such-task", tool="quick", era=c.era, protocol_version=c.protocol_version
            )
            with pytest.raises(TaskGone):
                async with c.resume_task(ref) as task:
                    await task.result()


# ----------------------------------------------------------------- polling


async def test_polling_follows_the_interval_of_each_answer(tmp_path: Path, protocol: str) -> None:
    """Intervals of 100 to 500 ms over 1.5 s: a poller that follows them polls a handful of times.

    The bound holds however slow the machine: a slower client polls less.
    """
    with trio.fail_after(LIMIT):
        async with client(None, protocol) as c, c.tool_task("intervals") as task:
            result = await task.result()
    polls = int(result.text.removeprefix("polls: "))
    assert 1 <= polls <= 10, polls


# ------------------------------------------------------- notifications


async def test_status_notifications_before_the_create_reply() -> None:
    """2025-11-25: the task is created, and completes, before the reply that names it arrives."""
    with trio.fail_after(LIMIT):
        async with client(None, "2025-11-25") as c, c.tool_task("early") as task:
            seen = [snapshot.status async for snapshot in task.updates()]
            result = await task.result()
    assert result.text == "early done"
    assert seen[-1] == "completed"
    assert seen.count("completed") == 1


async def test_duplicate_notifications_are_seen_once(tmp_path: Path) -> None:
    with trio.fail_after(LIMIT):
        async with client(None, "2025-11-25") as c, c.tool_task("dups", {"seconds": 0.3}) as task:
            seen = [(s.status, s.last_updated_at) async for s in task.updates()]
            result = await task.result()
    assert result.text == "dups done"
    assert len(seen) == len(set(seen))
    assert [status for status, _ in seen].count("completed") == 1


# ---------------------------------------------------- synchronous and required


async def test_the_demo_reports_progress_in_both_eras(protocol: str) -> None:
    """The demo's ``report`` sends progress under the call's token after the task is created."""
    seen: list[tuple[float, float | None, str | None]] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with trio.fail_after(LIMIT):
        async with process_client(sys.executable, ["-m", "trio_mcp.demo"], protocol=protocol) as c:
            arguments = {"steps": 3, "delay": 0.2}
            async with c.tool_task("report", arguments, on_progress=on_progress) as task:
                assert not task.ran_synchronously
                assert (await task.result()).text == "Report ready: 3 steps."
    assert [progress for progress, _, _ in seen] == [1, 2, 3]
    assert all(total == 3 for _, total, _ in seen)


async def test_list_tasks_follows_pages_with_the_listings_guards() -> None:
    """A repeated cursor, or one that never ends, is a ProtocolError as for the other listings."""
    with trio.fail_after(LIMIT):
        async with client(None, "2025-11-25", "--list-pages", "repeat") as c:
            with pytest.raises(ProtocolError, match="twice"):
                await c.list_tasks()
        async with client(None, "2025-11-25", "--list-pages", "endless") as c:
            with pytest.raises(ProtocolError, match="pages"):
                await c.list_tasks()
        async with client(None, "2025-11-25") as c:
            async with c.tool_task("quick", {"seconds": 0.2}) as task:
                listed = await c.list_tasks()
                await task.result()
            assert [t.task_id for t in listed] == [task.task_id]


async def test_a_call_the_server_runs_at_once(protocol: str) -> None:
    with trio.fail_after(LIMIT):
        async with client(None, protocol) as c, c.tool_task("sync") as task:
            assert task.ran_synchronously
            assert task.task_id is None
            assert (await task.result()).text == "ran synchronously"


async def test_a_server_without_task_support_runs_the_call_at_once(tmp_path: Path) -> None:
    """2025-11-25 without the ``tasks`` capability: no task asked for, the result all the same."""
    log = tmp_path / "log"
    with trio.fail_after(LIMIT):
        async with client(log, "2025-11-25", "--no-tasks") as c, c.tool_task("quick") as task:
            assert task.ran_synchronously
            assert (await task.result()).text == "quick ran without a task"
    (call,) = [m for m in received(log) if m.get("method") == "tools/call"]
    assert "task" not in call["params"]


async def test_call_tool_runs_a_required_task_as_one(protocol: str) -> None:
    """Listed or not: call_tool learns from the listing that the tool requires a task."""
    with trio.fail_after(LIMIT):
        async with client(None, protocol) as c:
            assert (await c.call_tool("needs_task")).text == "needs_task done"
        async with client(None, protocol) as c:
            await c.list_tools()
            assert (await c.call_tool("needs_task")).text == "needs_task done"


# ---------------------------------------------------------------- resuming


async def test_detach_and_resume_on_a_new_connection(tmp_path: Path, protocol: str) -> None:
    """A server that keeps its tasks (here in a file): a new process answers for the old one's task."""
    state = tmp_path / "tasks.json"
    with trio.fail_after(LIMIT):
        async with client(None, protocol, "--state", str(state)) as first:
            async with first.tool_task("durable", {"seconds": 1.5}) as task:
                saved = json.dumps(task.detach().to_json())
        ref = TaskRef.from_json(json.loads(saved))
        assert ref.task_id == task.task_id
        assert ref.tool == "durable"
        assert ref.era == expected_era(protocol)
        async with (
            client(None, protocol, "--state", str(state)) as second,
            second.resume_task(ref) as resumed,
        ):
            assert resumed.task_id == task.task_id
            result = await resumed.result()
    started, answered = (
        result.text.removeprefix("durable done (started by ").rstrip(")").split(", answered by ")
    )
    assert started != answered, "the same process answered: nothing was resumed"


async def test_detach_and_resume_over_http_on_a_new_client(tmp_path: Path) -> None:
    """Over Streamable HTTP the connection is not the server: a second client resumes the demo's task."""
    pytest.importorskip("httpx2")
    front = await trio.lowlevel.open_process(
        http_demo_command(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        },
    )
    try:
        with trio.fail_after(LIMIT):
            assert front.stdout is not None
            line = b""
            while not line.endswith(b"\n"):
                chunk = await front.stdout.receive_some(1)
                assert chunk, "the HTTP front exited before listening"
                line += chunk
            url = http_demo_url(line.decode())
            async with http_client(url) as first:
                assert first.era == "modern"
                async with first.tool_task("report", {"steps": 3, "delay": 0.3}) as task:
                    ref = task.detach()
            async with http_client(url) as second, second.resume_task(ref) as resumed:
                statuses = [snapshot.status async for snapshot in resumed.updates()]
                result = await resumed.result()
        assert result.text == "Report ready: 3 steps."
        assert statuses[-1] == "completed"
    finally:
        front.kill()
        with trio.CancelScope(shield=True):
            await front.wait()
