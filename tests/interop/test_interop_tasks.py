"""Tasks against real task servers: fastmcp-tasks (the 2026-07-28 extension).

``fastmcp-tasks`` 4.1.4 serves the ``io.modelcontextprotocol/tasks``
extension in the 2026-07-28 era (its own virtualenv, ``venv-tasks``, in the
peers' folder; ``tests/interop/servers/fastmcp_tasks_server.py``). It
suggests polling every five seconds, so each of these tests takes a few.

* a task runs to its result, the client polling as the server suggests;
* a tool error in a task is a result (``completed``, ``isError``);
* a task cancelled mid-way;
* an ordinary tool, and a task tool called without the extension, run at once.
"""

from __future__ import annotations

import pytest
import trio

from trio_mcp import TaskCancelled

#: fastmcp's first start compiles its modules: give it time.
LIMIT = 120


@pytest.fixture
def tasks_server(peers):
    return peers["fastmcp-tasks"]


async def test_a_task_runs_to_its_result(tasks_server) -> None:
    with trio.fail_after(LIMIT):
        async with tasks_server.client() as client:
            assert client.era == "modern"
            async with client.tool_task("crunch", {"seconds": 0.5}) as task:
                assert not task.ran_synchronously
                assert task.status is not None
                assert task.status.poll_interval_ms == 5000
                seen = [snapshot.status async for snapshot in task.updates()]
                result = await task.result()
            assert result.text == "crunched for 0.5 s"
            assert seen[0] == "working"
            assert seen[-1] == "completed"
            assert (await client.get_task(task.task_id)).status == "completed"


async def test_a_tool_error_completes_the_task_with_is_error(tasks_server) -> None:
    with trio.fail_after(LIMIT):
        async with tasks_server.client() as client, client.tool_task("fail_job") as task:
            result = await task.result()
            assert task.status is not None
            assert task.status.status == "completed"
    assert result.is_error
    assert "the job broke" in result.text


async def test_a_task_cancelled_midway(tasks_server) -> None:
    with trio.fail_after(LIMIT):
        async with tasks_server.client() as client, client.tool_task("crunch", {"seconds": 60}) as task:
            await task.cancel()
            with pytest.raises(TaskCancelled):
                await task.result()
            assert (await client.get_task(task.task_id)).status == "cancelled"


async def test_tools_that_run_at_once(tasks_server) -> None:
    with trio.fail_after(LIMIT):
        async with tasks_server.client() as client:
            async with client.tool_task("echo", {"text": "hi"}) as task:
                assert task.ran_synchronously
                assert (await task.result()).text == "hi"
            # Without the extension (a plain call), the task tool runs within the call.
            assert (await client.call_tool("crunch", {"seconds": 0.1})).text == "crunched for 0.1 s"
