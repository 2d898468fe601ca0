"""Tasks against real task servers: fastmcp-tasks (the 2026-07-28 extension), the official SDK v1 (2025-11-25).

``fastmcp-tasks`` 4.1.4 serves the ``io.modelcontextprotocol/tasks``
extension in the 2026-07-28 era (its own virtualenv, ``venv-tasks``, in the
peers' folder; ``tests/interop/servers/fastmcp_tasks_server.py``). It
suggests polling every five seconds, so each of these tests takes a few.

* a task runs to its result, the client polling as the server suggests;
* a tool error in a task is a result (``completed``, ``isError``);
* a task cancelled mid-way;
* an ordinary tool, and a task tool called without the extension, run at once.

The official Python SDK v1 (``mcp`` 1.30.0, its own virtualenv,
``venv-sdk1``; ``tests/interop/servers/sdk_v1_tasks_server.py``) serves the
experimental tasks of 2025-11-25:

* a task runs to its result;
* a task whose work raised ends ``failed`` with no error and no ``isError``
  in its ``tasks/result``: `TaskFailed`, never an empty success.
"""

from __future__ import annotations

import pytest
import trio

from trio_mcp import TaskCancelled, TaskFailed

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


# ---------------------------------------------------------- the official SDK v1


@pytest.fixture
def sdk_v1(peers):
    return peers["sdk-v1"]


async def test_an_sdk_v1_task_runs_to_its_result(sdk_v1) -> None:
    with trio.fail_after(LIMIT):
        async with sdk_v1.client() as client:
            assert client.protocol_version == "2025-11-25"
            async with client.tool_task("work") as task:
                assert not task.ran_synchronously
                result = await task.result()
            assert result.text == "work done"


async def test_an_sdk_v1_task_whose_work_raised_is_task_failed(sdk_v1) -> None:
    with trio.fail_after(LIMIT):
        async with sdk_v1.client() as client, client.tool_task("explode") as task:
            with pytest.raises(TaskFailed) as caught:
                await task.result()
            assert task.status is not None
            assert task.status.status == "failed"
    assert caught.value.task_id == task.task_id
    assert "the work raised" in str(caught.value)
