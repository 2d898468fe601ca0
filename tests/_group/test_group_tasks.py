"""Tasks through a server group (`ServerGroup.tool_task`), against real child processes.

The servers are ``tests/servers/task_server.py`` (the scripted task server:
``die`` makes it exit, ``durable`` keeps its tasks in a file that the next
process reads). Each test runs in both eras.

* a task started by the group's name of a tool runs on the server that
  offers it, and its handle (and its reference) names that server as the
  group does;
* the server dies while the task runs: the task fails with `ServerGone`,
  the group starts the server again, and new tasks run on the new process;
* a server that kept its tasks answers for them after its restart: the
  detached task is resumed by reference on the new process.

Real processes, the real clock, a ``trio.fail_after`` guard on each test.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from paths import SERVERS_DIR

import trio_mcp
from trio_mcp import RestartPolicy, ServerGone, ServerSpec, TaskGone, open_servers

SERVER = SERVERS_DIR / "task_server.py"
GUARD = 60
FAST = RestartPolicy(initial_delay=0.05, max_delay=0.2, max_restarts=3, window=300)


@pytest.fixture(params=["2025-11-25", "auto"], ids=["2025-11-25", "2026-07-28"])
def options(request: pytest.FixtureRequest) -> trio_mcp.ClientOptions:
    return trio_mcp.ClientOptions(protocol=request.param)


def spec(name: str, *flags: str) -> ServerSpec:
    return ServerSpec(name=name, command=sys.executable, args=[str(SERVER), "--tag", name, *flags])


async def pid_of(servers: trio_mcp.ServerGroup, server: str) -> str:
    return (await servers.call_tool(f"{server}__whoami")).text.split()[1]


async def test_a_group_task_runs_on_its_server(options: trio_mcp.ClientOptions) -> None:
    with trio.fail_after(GUARD):
        async with open_servers([spec("a"), spec("b")], options=options, restart=FAST) as servers:
            async with servers.tool_task("b__quick", {"seconds": 0.3}) as task:
                assert not task.ran_synchronously
                assert task.tool == "quick"
                assert task.server == "b"
                assert task.ref is not None
                assert task.ref.server == "b"
                result = await task.result()
            assert result.text == "quick done"
            # The task lives on b: a's client does not know it.
            assert task.task_id is not None
            with pytest.raises(TaskGone):
                await (await servers.client("a")).get_task(task.task_id)
            assert (await (await servers.client("b")).get_task(task.task_id)).status == "completed"


async def test_a_restart_fails_the_running_task_with_server_gone(options: trio_mcp.ClientOptions) -> None:
    with trio.fail_after(GUARD):
        async with open_servers([spec("jobs")], options=options, restart=FAST) as servers:
            before = await pid_of(servers, "jobs")
            async with servers.tool_task("jobs__long") as task:
                await trio.sleep(0.2)
                with pytest.raises(ServerGone):
                    await servers.call_tool("jobs__die")
                with pytest.raises(ServerGone) as caught:
                    await task.result()
            assert "--tag jobs" in str(caught.value)
            await servers.wait_ready("jobs")
            assert await pid_of(servers, "jobs") != before
            async with servers.tool_task("jobs__quick") as again:
                assert (await again.result()).text == "quick done"


async def test_a_server_that_kept_its_tasks_resumes_them_after_a_restart(
    tmp_path: Path, options: trio_mcp.ClientOptions
) -> None:
    state = tmp_path / "tasks.json"
    with trio.fail_after(GUARD):
        async with open_servers(
            [spec("jobs", "--state", str(state))], options=options, restart=FAST
        ) as servers:
            before = await pid_of(servers, "jobs")
            async with servers.tool_task("jobs__durable", {"seconds": 1.5}) as task:
                ref = task.detach()
            assert ref.server == "jobs"
            with pytest.raises(ServerGone):
                await servers.call_tool("jobs__die")
            await servers.wait_ready("jobs")
            after = await pid_of(servers, "jobs")
            assert after != before
            async with servers.resume_task(ref) as resumed:
                assert resumed.task_id == ref.task_id
                assert resumed.server == "jobs"
                result = await resumed.result()
    assert result.text == f"durable done (started by {before}, answered by {after})"
