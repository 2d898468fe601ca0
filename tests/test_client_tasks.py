"""Tool calls as tasks (`Client.tool_task`), against real servers.

* 2025-11-25: ``@modelcontextprotocol/server-everything``, whose
  ``simulate-research-query`` must run as a task (four one-second stages;
  with ``ambiguous: true`` it asks for an elicitation while ``tasks/result``
  is open), and whose other tools must not;
* 2026-07-28: ``tests/servers/task_wire_server.py``, a scripted server that
  speaks the ``io.modelcontextprotocol/tasks`` extension's wire.

Real processes, the real clock, a ``trio.fail_after`` guard on each test.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio
from opening_support import process_client
from schema_support import by_method, schema_problem, validator

import trio_mcp
import trio_mcp.types
from trio_mcp import TaskCancelled, TaskRef

LIMIT = 40
HERE = Path(__file__).resolve().parent
PEERS_DIR = Path(os.environ.get("TRIO_MCP_PEERS_DIR") or HERE.parent / ".peers")
TASK_SERVER = str(HERE / "servers" / "task_wire_server.py")
RESEARCH = "simulate-research-query"


def _everything() -> tuple[str, list[str]]:
    try:
        entry = json.loads((PEERS_DIR / "peers.json").read_text())["everything"]
    except (FileNotFoundError, KeyError):
        entry = None
    if not entry or not entry.get("cmd") or not Path(entry["cmd"][0]).exists():
        reason = f"server-everything is not installed in {PEERS_DIR} (nox -s peers)"
        if os.environ.get("TRIO_MCP_REQUIRE_PEERS") == "1":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return entry["cmd"][0], list(entry["cmd"][1:])


@pytest.fixture
def everything() -> tuple[str, list[str]]:
    return _everything()


def clarify(asked: list[Any]) -> Any:
    def on_elicitation(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"interpretation": "technical"}}

    return on_elicitation


# ------------------------------------------------------ 2025-11-25, real peer


async def test_a_legacy_task_runs_to_its_result_with_its_updates(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    written: list[dict[str, Any]] = []

    def on_wire(direction: str, data: bytes) -> None:
        if direction == "out":
            written.append(json.loads(data))

    with trio.fail_after(LIMIT):
        async with process_client(command, args, on_wire=on_wire) as client:
            assert client.protocol_version == "2025-11-25"
            async with client.tool_task(RESEARCH, {"topic": "trio"}) as task:
                assert not task.ran_synchronously
                assert task.task_id
                assert task.status is not None
                # Cancelling the wait only stops waiting: the task goes on.
                with trio.move_on_after(0.3):
                    await task.result()
                assert not task.done
                seen = [snapshot async for snapshot in task.updates()]
                result = await task.result()
            assert "Research Report: trio" in result.text
            assert seen[0].status == "working"
            assert seen[-1].status == "completed"
            # Four stages, each seen once.
            assert len({s.status_message for s in seen if s.status == "working"}) == 4
            # Polls follow pollInterval (1 s over about 4 s); the status notifications
            # between them are taken as they come, and make no polls of their own.
            polls = [m for m in written if m.get("method") == "tasks/get"]
            assert 2 <= len(polls) <= 6
            assert (await client.get_task(task.task_id)).status == "completed"


async def test_call_tool_runs_a_tool_that_requires_a_task_without_a_listing_first(
    everything: tuple[str, list[str]],
) -> None:
    """The tools' listing says which must run as tasks: call_tool lists them itself when it must."""
    command, args = everything
    written: list[dict[str, Any]] = []

    def on_wire(direction: str, data: bytes) -> None:
        if direction == "out":
            written.append(json.loads(data))

    with trio.fail_after(LIMIT):
        async with process_client(command, args, on_wire=on_wire) as client:
            result = await client.call_tool(RESEARCH, {"topic": "trio"})
            assert not result.is_error, result.text
            assert "Research Report: trio" in result.text
            # A tool that takes no task runs at once, with no listing again.
            assert (await client.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
    sent = [m.get("method") for m in written if "method" in m]
    assert sent.count("tools/list") == 1
    (call, echo) = [m for m in written if m.get("method") == "tools/call"]
    assert call["params"]["task"] == {}
    assert "task" not in echo["params"]


async def test_legacy_input_during_tasks_result_reaches_the_hook(everything: tuple[str, list[str]]) -> None:
    """The elicitation comes while ``tasks/result`` is open; what the client writes follows the schema."""
    command, args = everything
    asked: list[Any] = []
    written: list[dict[str, Any]] = []

    def on_wire(direction: str, data: bytes) -> None:
        if direction == "out":
            written.append(json.loads(data))

    with trio.fail_after(LIMIT):
        async with process_client(command, args, on_elicitation=clarify(asked), on_wire=on_wire) as client:
            async with client.tool_task(RESEARCH, {"topic": "trio", "ambiguous": True}, ttl_ms=60000) as task:
                statuses = [snapshot.status async for snapshot in task.updates()]
                result = await task.result()
            async with client.tool_task(RESEARCH, {"topic": "trio"}) as cancelled:
                await cancelled.cancel()
            await client.list_tasks()
    assert "Clarification**: technical" in result.text
    assert "input_required" in statuses
    assert len(asked) == 1
    # The hook can tell which task asks.
    assert asked[0].meta["io.modelcontextprotocol/related-task"]["taskId"] == task.task_id
    created = next(m for m in written if m.get("method") == "tools/call")
    assert created["params"]["task"] == {"ttl": 60000}
    methods = {m.get("method") for m in written}
    assert methods >= {"tools/call", "tasks/get", "tasks/result", "tasks/cancel", "tasks/list"}
    if schema_problem() is None:
        requests = by_method("2025-11-25", "ClientRequest")
        for message in written:
            method = message.get("method")
            if method in ("tools/call", "tasks/get", "tasks/result", "tasks/cancel", "tasks/list"):
                validator("2025-11-25", requests[method]).validate(message)
            elif "result" in message:
                validator("2025-11-25", "ElicitResult").validate(message["result"])


async def test_a_forbidden_tool_runs_synchronously_through_the_same_handle(
    everything: tuple[str, list[str]],
) -> None:
    """``echo`` says ``taskSupport: "forbidden"``: it is called plainly (server-everything would run it,
    then lose its result, if asked for a task)."""
    command, args = everything
    written: list[dict[str, Any]] = []

    def on_wire(direction: str, data: bytes) -> None:
        if direction == "out":
            written.append(json.loads(data))

    with trio.fail_after(LIMIT):
        async with (
            process_client(command, args, on_wire=on_wire) as client,
            client.tool_task("echo", {"message": "hi"}) as task,
        ):
            assert task.ran_synchronously
            assert task.task_id is None
            assert task.ref is None
            assert (await task.result()).text == "Echo: hi"
            assert [s async for s in task.updates()] == []
            with pytest.raises(RuntimeError, match="synchronously"):
                task.detach()
    calls = [m for m in written if m.get("method") == "tools/call"]
    assert len(calls) == 1
    assert "task" not in calls[0]["params"]
    # The tools were listed first, to learn that.
    assert any(m.get("method") == "tools/list" for m in written)


async def test_cancelling_a_legacy_task(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            async with client.tool_task(RESEARCH, {"topic": "trio"}) as task:
                await trio.sleep(1.2)
                await task.cancel()
                with pytest.raises(TaskCancelled) as caught:
                    await task.result()
                assert caught.value.task_id == task.task_id
                assert task.status is not None
                assert task.status.status == "cancelled"
                # A second cancel of an ended task is a no-op.
                await task.cancel()
            # The server agrees; cancelling again is refused (-32602), as the spec says:
            # the task is left as it is, and its status returned.
            assert (await client.get_task(task.task_id)).status == "cancelled"
            again = await client.cancel_task(task.task_id)
            assert again is not None
            assert again.status == "cancelled"


async def test_leaving_the_block_unfinished_cancels_the_task(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            async with client.tool_task(RESEARCH, {"topic": "trio"}) as task:
                await trio.sleep(0.3)
            assert (await client.get_task(task.task_id)).status == "cancelled"
            with pytest.raises(TaskCancelled):
                await task.result()
            # The user's exception leaves the block unchanged, and the task is cancelled too.
            with pytest.raises(KeyError):
                async with client.tool_task(RESEARCH, {"topic": "trio"}) as second:
                    raise KeyError("mine")
            assert (await client.get_task(second.task_id)).status == "cancelled"


async def test_a_detached_task_runs_on_and_is_resumed_by_ref(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            async with client.tool_task(RESEARCH, {"topic": "later"}) as task:
                assert task.server == client.name
                task.server = "research"
                ref = task.detach()
            assert ref.server == "research"
            stored = json.dumps(ref.to_json())
            assert (await client.get_task(ref.task_id)).status == "working"
            again = TaskRef.from_json(json.loads(stored))
            async with client.resume_task(again) as resumed:
                result = await resumed.result()
            assert "Research Report: later" in result.text


async def test_a_task_the_server_does_not_know_is_gone(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            with pytest.raises(trio_mcp.TaskGone) as caught:
                await client.get_task("no-such-task")
            assert caught.value.task_id == "no-such-task"
            # The same for a cancel, as for get_task.
            with pytest.raises(trio_mcp.TaskGone) as caught:
                await client.cancel_task("no-such-task")
            assert caught.value.task_id == "no-such-task"
            ref = TaskRef(task_id="no-such-task", tool=RESEARCH, era="legacy", protocol_version="2025-11-25")
            with pytest.raises(trio_mcp.TaskGone):
                async with client.resume_task(ref):
                    pass
            modern = TaskRef(task_id="x", tool=RESEARCH, era="modern", protocol_version="2026-07-28")
            with pytest.raises(trio_mcp.NotSupported):
                async with client.resume_task(modern):
                    pass


async def test_progress_and_status_reach_the_handle_while_other_calls_run(
    everything: tuple[str, list[str]],
) -> None:
    """Status notifications are routed by task id, whatever else is in flight.

    Beside the two handles, `call_tool` runs the tool (whose listing says it
    requires a task) as a task of its own, and returns its result.
    """
    command, args = everything
    required: list[trio_mcp.types.CallToolResult] = []

    async def call_required(client: trio_mcp.Client) -> None:
        required.append(await client.call_tool(RESEARCH, {"topic": "x"}))

    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            await client.list_tools()
            async with (
                client.tool_task(RESEARCH, {"topic": "a"}) as first,
                client.tool_task(RESEARCH, {"topic": "b"}) as second,
            ):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(call_required, client)
                    for _ in range(5):
                        nursery.start_soon(client.call_tool, "echo", {"message": "busy"})
                one, two = await first.result(), await second.result()
            assert "Research Report: a" in one.text
            assert "Research Report: b" in two.text
            assert not required[0].is_error
            assert "Research Report: x" in required[0].text
            listed = await client.list_tasks()
            assert {task.task_id for task in listed} >= {first.task_id, second.task_id}
            assert len(listed) == 3


# ------------------------------------------- 2026-07-28, the extension's wire


def task_server(era: str = "modern", **options: Any) -> Any:
    return process_client(sys.executable, [TASK_SERVER, "--era", era], **options)


def name_hook(asked: list[Any]) -> Any:
    def on_elicitation(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    return on_elicitation


async def dump(client: trio_mcp.Client) -> list[dict[str, Any]]:
    result = await client.call_tool("dump")
    return [json.loads(line) for line in result.structured_content["lines"]]


async def test_a_modern_task_declares_the_extension_and_polls_to_its_result() -> None:
    with trio.fail_after(LIMIT):
        async with task_server() as client:
            assert client.era == "modern"
            async with client.tool_task("slow", {"seconds": 0.5, "say": "hello"}) as task:
                assert task.task_id
                assert task.status is not None
                assert task.status.poll_interval_ms == 100
                seen = [snapshot async for snapshot in task.updates()]
                result = await task.result()
            assert result.text == "hello"
            assert seen[-1].status == "completed"
            sent = await dump(client)
    calls = [
        line
        for line in sent
        if line.get("method", "").startswith("tasks/")
        or (line.get("method") == "tools/call" and line["params"]["name"] == "slow")
    ]
    for line in calls:
        caps = line["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert "io.modelcontextprotocol/tasks" in caps["extensions"], line
    polls = [line for line in calls if line["method"] == "tasks/get"]
    # Paced by pollIntervalMs (100 ms) over about half a second, never a busy loop.
    assert 2 <= len(polls) <= 20
    assert all(line["params"]["taskId"] == task.task_id for line in polls)


async def test_a_modern_failed_task_raises_task_failed_and_an_error_result_is_returned() -> None:
    with trio.fail_after(LIMIT):
        async with task_server() as client:
            async with client.tool_task("fail") as task:
                with pytest.raises(trio_mcp.TaskFailed) as caught:
                    await task.result()
            error = caught.value
            assert isinstance(error, trio_mcp.RpcError)
            assert (error.code, error.message, error.data, error.task_id) == (
                -32050,
                "job failed",
                {"why": "scripted"},
                task.task_id,
            )
            async with client.tool_task("tool_error") as task:
                result = await task.result()
            assert result.is_error
            assert task.status is not None
            assert task.status.status == "completed"


async def test_modern_input_requests_reach_the_hooks_once_and_go_back_with_tasks_update() -> None:
    asked: list[Any] = []
    roots = [trio_mcp.types.Root(uri="file:///work", name="work")]
    with trio.fail_after(LIMIT):
        async with task_server(on_elicitation=name_hook(asked), on_roots=lambda: roots) as client:
            async with client.tool_task("ask_two") as task:
                statuses = [snapshot.status async for snapshot in task.updates()]
                result = await task.result()
            sent = await dump(client)
    answers = json.loads(result.text)
    assert answers[f"{task.task_id}:name"] == {"action": "accept", "content": {"name": "Ada"}}
    assert answers[f"{task.task_id}:roots"] == {"roots": [{"uri": "file:///work", "name": "work"}]}
    assert "input_required" in statuses
    assert statuses[-1] == "completed"
    # Each request was answered once, though every poll repeated it until answered.
    assert len(asked) == 1
    assert asked[0].meta["io.modelcontextprotocol/related-task"]["taskId"] == task.task_id
    updates = [line for line in sent if line.get("method") == "tasks/update"]
    keys = [key for line in updates for key in line["params"]["inputResponses"]]
    assert sorted(keys) == sorted(answers)


async def test_a_failing_hook_fails_the_task_handle_and_the_block_cancels_it() -> None:
    def refuse(params: Any) -> dict[str, Any]:
        raise ValueError("no one is here")

    with trio.fail_after(LIMIT):
        async with task_server(on_elicitation=refuse) as client:
            async with client.tool_task("ask") as task:
                with pytest.raises(trio_mcp.InputRequestFailed, match="no one is here"):
                    await task.result()
            sent = await dump(client)
    assert any(
        line.get("method") == "tasks/cancel" and line["params"]["taskId"] == task.task_id for line in sent
    )


async def test_a_modern_server_that_answers_at_once_gives_the_result_through_the_handle() -> None:
    with trio.fail_after(LIMIT):
        async with task_server() as client:
            async with client.tool_task("quick") as task:
                assert task.ran_synchronously
                assert (await task.result()).text == "at once"


async def test_call_tool_runs_a_tool_the_server_only_runs_as_a_task() -> None:
    """``-32021`` asking for the tasks extension: the call is made again as a task, and awaited."""
    with trio.fail_after(LIMIT):
        async with task_server() as client:
            result = await client.call_tool("needs_task", {"seconds": 0.2, "say": "as a task"})
            assert result.text == "as a task"
            # A plain call does not declare the extension: the server runs it at once.
            assert (await client.call_tool("slow")).text == "slow ran without a task"


async def test_input_before_the_task_exists_is_a_round_of_its_own() -> None:
    with trio.fail_after(LIMIT):
        async with task_server(on_roots=lambda: [trio_mcp.types.Root(uri="file:///r")]) as client:
            async with client.tool_task("mrtr_then_task") as task:
                assert not task.ran_synchronously
                result = await task.result()
    assert json.loads(result.text) == {"pre": {"roots": [{"uri": "file:///r"}]}}


async def test_cancelling_a_modern_task() -> None:
    with trio.fail_after(LIMIT):
        async with task_server() as client:
            async with client.tool_task("forever") as task:
                await task.cancel()
                with pytest.raises(TaskCancelled):
                    await task.result()
            # Eventually consistent: a task may still finish after the cancel, and then that is its end.
            async with client.tool_task("forever", {"finish": True}) as task:
                await task.cancel()
                assert (await task.result()).text == "finished anyway"
            assert (await client.get_task(task.task_id)).status == "completed"
            assert await client.cancel_task(task.task_id) is None


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_vanished_task_is_gone(era: str) -> None:
    with trio.fail_after(LIMIT):
        async with task_server(era) as client:
            async with client.tool_task("vanish", {"seconds": 30}) as task:
                with pytest.raises(trio_mcp.TaskGone) as caught:
                    await task.result()
            assert caught.value.task_id == task.task_id
            assert isinstance(caught.value.__cause__, trio_mcp.RpcError)
            if era == "modern":
                with pytest.raises(trio_mcp.NotSupported):
                    await client.list_tasks()


async def test_a_modern_task_is_resumed_on_a_new_connection() -> None:
    """Over stdio the server is the store: the same process, reached through a new client of its session."""
    with trio.fail_after(LIMIT):
        async with task_server() as client:
            async with client.tool_task("slow", {"seconds": 0.5, "say": "later"}) as task:
                ref = task.detach()
            assert ref.era == "modern"
            async with client.resume_task(TaskRef.from_json(ref.to_json())) as resumed:
                assert (await resumed.result()).text == "later"


# ----------------------------------------------- 2025-11-25, scripted server


async def test_a_legacy_failed_task_is_task_failed_or_its_error_result() -> None:
    with trio.fail_after(LIMIT):
        async with task_server("legacy") as client:
            async with client.tool_task("legacy_fail") as task:
                with pytest.raises(trio_mcp.TaskFailed) as caught:
                    await task.result()
            assert (caught.value.code, caught.value.task_id) == (-32050, task.task_id)
            async with client.tool_task("legacy_error") as task:
                result = await task.result()
            assert result.is_error
            assert task.status is not None
            assert task.status.status == "failed"
            with pytest.raises(trio_mcp.TaskFailed):
                await client.call_tool("legacy_fail")


async def test_a_task_the_server_asks_of_us_is_answered_as_a_plain_request() -> None:
    """We do not declare ``tasks.requests.elicitation``: ``params.task`` is ignored, the answer is plain."""
    asked: list[Any] = []
    with trio.fail_after(LIMIT):
        async with task_server("legacy", on_elicitation=name_hook(asked)) as client:
            result = await client.call_tool("elicit_task")
            sent = await dump(client)
    assert json.loads(result.text) == {"action": "accept", "content": {"name": "Ada"}}
    assert len(asked) == 1
    initialize = next(line for line in sent if line.get("method") == "initialize")
    assert "tasks" not in initialize["params"]["capabilities"]


async def test_progress_goes_on_after_the_task_is_created() -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        await trio.lowlevel.checkpoint()
        seen.append((progress, message))

    with trio.fail_after(LIMIT):
        async with (
            task_server("legacy") as client,
            client.tool_task("legacy_error", {"seconds": 0.6}, on_progress=on_progress) as task,
        ):
            await task.result()
    assert seen
    assert all(message == "polled" for _, message in seen)


async def test_the_missing_capability_retry_declares_the_extension() -> None:
    """A raw ``tasks/get`` sent without the extension gets ``-32021``; the retry declares it."""
    with trio.fail_after(LIMIT):
        async with task_server() as client:
            async with client.tool_task("slow", {"seconds": 0.2}) as task:
                await task.result()
            raw = await client.request("tasks/get", {"taskId": task.task_id})
            assert raw["status"] == "completed"


# ------------------------------------------------------------ the wire, checked


def test_a_status_notification_before_the_creation_reply_reaches_the_handle() -> None:
    """server-everything sends ``working`` before the reply: the registry keeps it until the id is known."""
    from trio_mcp._client.tasks import TaskRegistry, ToolTask

    class Ops:
        era = "legacy"
        session = SimpleNamespace(name="fake")
        logged: list[str] = []  # noqa: RUF012 - one test

        def log(self, message: str) -> None:
            self.logged.append(message)

    registry = TaskRegistry()
    note = {"method": "notifications/tasks/status", "params": {"taskId": "t1", "status": "working"}}
    registry.note(note)  # nobody creates a task: dropped
    registry.begin_creation()
    registry.note(note)
    registry.note({**note, "params": {"taskId": "other", "status": "working"}})
    handle = ToolTask(Ops(), "tool", "t1")  # type: ignore[arg-type]
    registry.register(handle, None)
    registry.end_creation()
    assert handle.status is not None
    assert handle.status.status == "working"
    assert not registry.early
    registry.note({**note, "params": {"taskId": "t1", "status": "completed", "statusMessage": "done"}})
    assert handle.status.status_message == "done"
    registry.unregister(handle)
    assert not registry.handles


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_server_that_dies_fails_its_running_tasks_with_server_gone(era: str) -> None:
    tool = "forever" if era == "modern" else "legacy_error"
    with trio.fail_after(LIMIT):
        async with task_server(era) as client:
            async with client.tool_task(tool, {"seconds": 60}) as task:
                assert client.pid is not None
                os.kill(client.pid, signal.SIGKILL)
                with pytest.raises(trio_mcp.ServerGone):
                    await task.result()
            # After the block too: the outcome was known before it ended.
            with pytest.raises(trio_mcp.ServerGone):
                await task.result()


async def test_cancelling_a_task_while_a_hook_answers_its_input() -> None:
    """The hook is stopped, the task is cancelled, and nothing waits for the answer that never comes."""
    hook_started = trio.Event()
    hook_stopped: list[bool] = []

    async def on_elicitation(params: Any) -> dict[str, Any]:
        hook_started.set()
        try:
            await trio.sleep_forever()
        finally:
            hook_stopped.append(True)
        raise AssertionError("not reached")  # pragma: no cover

    with trio.fail_after(LIMIT):
        async with task_server(on_elicitation=on_elicitation) as client:
            async with client.tool_task("ask") as task:
                await hook_started.wait()
                await task.cancel()
                with pytest.raises(TaskCancelled):
                    await task.result()
            assert hook_stopped == [True]
            sent = await dump(client)
    assert not any(line.get("method") == "tasks/update" for line in sent)


async def test_cancelling_a_legacy_task_while_a_hook_answers_its_input(
    everything: tuple[str, list[str]],
) -> None:
    hook_started = trio.Event()

    async def on_elicitation(params: Any) -> dict[str, Any]:
        hook_started.set()
        await trio.sleep_forever()
        raise AssertionError("not reached")  # pragma: no cover

    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args, on_elicitation=on_elicitation) as client:
            async with client.tool_task(RESEARCH, {"topic": "trio", "ambiguous": True}) as task:
                await hook_started.wait()
                await task.cancel()
                with pytest.raises(TaskCancelled):
                    await task.result()
            assert (await client.get_task(task.task_id)).status == "cancelled"


@pytest.mark.parametrize("protocol", ["2025-11-25", "auto"])
async def test_a_server_that_dies_while_a_hook_answers_ends_the_hook_and_the_task(
    tmp_path: Path, protocol: str
) -> None:
    """A person away from the keyboard holds the hook: the server's death is reported at once all the same."""
    hook_started = trio.Event()
    hook_stopped: list[bool] = []

    async def on_elicitation(params: Any) -> dict[str, Any]:
        hook_started.set()
        try:
            await trio.sleep_forever()
        finally:
            hook_stopped.append(True)
        raise AssertionError("not reached")  # pragma: no cover

    server = str(HERE / "servers" / "task_server.py")
    with trio.fail_after(LIMIT):
        async with process_client(
            sys.executable, [server], protocol=protocol, on_elicitation=on_elicitation
        ) as client:
            async with client.tool_task("flow") as task:
                await hook_started.wait()
                assert client.pid is not None
                os.kill(client.pid, signal.SIGKILL)
                # Not when the hook returns (it never does): now.
                with trio.fail_after(10), pytest.raises(trio_mcp.ServerGone):
                    await task.result()
            assert hook_stopped == [True]
