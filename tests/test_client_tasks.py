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
from pathlib import Path
from typing import Any

import pytest
import trio
from opening_support import process_client

import trio_mcp
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
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            assert client.protocol_version == "2025-11-25"
            async with client.tool_task(RESEARCH, {"topic": "trio"}) as task:
                assert not task.ran_synchronously
                assert task.task_id
                assert task.status is not None
                seen = [snapshot async for snapshot in task.updates()]
                result = await task.result()
            assert "Research Report: trio" in result.text
            assert seen[0].status == "working"
            assert seen[-1].status == "completed"
            # Four stages, each seen once.
            assert len({s.status_message for s in seen if s.status == "working"}) == 4
            assert (await client.get_task(task.task_id)).status == "completed"


async def test_legacy_input_during_tasks_result_reaches_the_hook(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    asked: list[Any] = []
    with trio.fail_after(LIMIT):
        async with process_client(command, args, on_elicitation=clarify(asked)) as client:
            async with client.tool_task(RESEARCH, {"topic": "trio", "ambiguous": True}) as task:
                statuses = [snapshot.status async for snapshot in task.updates()]
                result = await task.result()
    assert "Clarification**: technical" in result.text
    assert "input_required" in statuses
    assert len(asked) == 1
    # The hook can tell which task asks.
    assert asked[0].meta["io.modelcontextprotocol/related-task"]["taskId"] == task.task_id


async def test_a_forbidden_tool_runs_synchronously_through_the_same_handle(
    everything: tuple[str, list[str]],
) -> None:
    command, args = everything
    with trio.fail_after(LIMIT):
        async with (
            process_client(command, args) as client,
            client.tool_task("echo", {"message": "hi"}) as task,
        ):
            assert task.ran_synchronously
            assert task.task_id is None
            assert (await task.result()).text == "Echo: hi"
            assert [s async for s in task.updates()] == []
            with pytest.raises(RuntimeError, match="synchronously"):
                task.detach()


async def test_call_tool_runs_a_tool_that_requires_a_task_as_one(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            await client.list_tools()
            result = await client.call_tool(RESEARCH, {"topic": "x"})
            assert not result.is_error
            assert "Research Report: x" in result.text
            assert any(task.status == "completed" for task in await client.list_tasks())


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
            # The server agrees; cancelling again is refused (-32602), as the spec says.
            assert (await client.get_task(task.task_id)).status == "cancelled"
            with pytest.raises(trio_mcp.RpcError) as refused:
                await client.cancel_task(task.task_id)
            assert refused.value.code == -32602


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


async def test_cancelling_the_wait_only_stops_waiting(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            async with client.tool_task(RESEARCH, {"topic": "trio"}) as task:
                with trio.move_on_after(0.5):
                    await task.result()
                assert not task.done
                result = await task.result()
            assert "Research Report" in result.text


async def test_a_detached_task_runs_on_and_is_resumed_by_ref(everything: tuple[str, list[str]]) -> None:
    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            async with client.tool_task(RESEARCH, {"topic": "later"}) as task:
                ref = task.detach()
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
    """Status notifications are routed by task id, whatever else is in flight."""
    command, args = everything
    with trio.fail_after(LIMIT):
        async with process_client(command, args) as client:
            async with (
                client.tool_task(RESEARCH, {"topic": "a"}) as first,
                client.tool_task(RESEARCH, {"topic": "b"}) as second,
            ):
                async with trio.open_nursery() as nursery:
                    for _ in range(5):
                        nursery.start_soon(client.call_tool, "echo", {"message": "busy"})
                one, two = await first.result(), await second.result()
            assert "Research Report: a" in one.text
            assert "Research Report: b" in two.text
