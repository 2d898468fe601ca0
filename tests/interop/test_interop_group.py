"""One server group holding every real peer: npm and PyPI servers, of both protocol eras.

The configuration names the peers as an application's ``mcpServers`` file
would. They start together in one group; the catalogue lists each one's
tools under its own prefix; calls go to the right server; and when one
peer's process is killed, the group starts it again while calls to the
others keep succeeding.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import trio

from trio_mcp import RestartPolicy, ServerSpec, connect_servers, open_servers
from trio_mcp._core.naming import exposed_name

TIMEOUT = 120


@pytest.fixture
def config(sdk_server, time_server, everything_server, filesystem_server, tmp_path: Path) -> list[ServerSpec]:
    (tmp_path / "a.txt").write_text("alpha\n")
    return [
        ServerSpec(name=peer.name, command=peer.command, args=[*peer.args, *extra], env=peer.env)
        for peer, extra in [
            (sdk_server, []),
            (time_server, []),
            (everything_server, []),
            (filesystem_server, [str(tmp_path)]),
        ]
    ]


async def test_every_peer_in_one_group(config: list[ServerSpec], tmp_path: Path) -> None:
    policy = RestartPolicy(initial_delay=0.2, max_delay=1)
    root = str(tmp_path.resolve())  # noqa: ASYNC240 - before any server starts
    with trio.fail_after(TIMEOUT):
        # The servers' stderr goes to the trio_mcp.server logger, as for any process.
        async with open_servers(config, restart=policy) as servers:
            events = servers.events()
            assert {status.name: status.state for status in servers.statuses()} == dict.fromkeys(
                ["sdk", "time", "everything", "filesystem"], "ready"
            )
            eras = {name: (await servers.client(name)).era for name in servers.names}
            assert eras == {"sdk": "modern", "time": "modern", "everything": "legacy", "filesystem": "legacy"}

            # The catalogue lists every server's tools, each under its prefix.
            for name in servers.names:
                own = await (await servers.client(name)).list_tools()
                listed = [entry for entry in servers.tools if entry.server == name]
                assert [entry.item.name for entry in listed] == [tool.name for tool in own]
                assert [entry.name for entry in listed] == [exposed_name(name, tool.name) for tool in own]
            names = {entry.name for entry in servers.tools}
            assert len(names) == len(servers.tools)
            assert {"sdk__echo", "time__get_current_time", "everything__echo"} <= names

            # Calls go to the right server.
            async def call_everyone() -> None:
                assert (await servers.call_tool("sdk__echo", {"text": "to sdk"})).text == "to sdk"
                assert (
                    "to everything"
                    in (await servers.call_tool("everything__echo", {"message": "to everything"})).text
                )
                now = await servers.call_tool("time__get_current_time", {"timezone": "UTC"})
                assert now.is_error is False
                assert "UTC" in now.text
                allowed = await servers.call_tool("filesystem__list_allowed_directories")
                assert root in allowed.text

            await call_everyone()

            # Kill one peer: it comes back, and the others answer meanwhile.
            victim = servers.status("everything").pid
            assert victim is not None
            os.kill(victim, signal.SIGKILL)
            while True:
                event = await events.receive()
                if event.server == "everything" and event.state == "restarting":
                    break
            assert event.error.signal == signal.SIGKILL
            assert (await servers.call_tool("sdk__echo", {"text": "still here"})).text == "still here"
            assert (await servers.call_tool("time__get_current_time", {"timezone": "UTC"})).is_error is False
            # A call to the restarting server waits for it.
            result = await servers.call_tool("everything__echo", {"message": "back"})
            assert "back" in result.text
            status = servers.status("everything")
            assert (status.state, status.restarts, status.signal) == ("ready", 1, signal.SIGKILL)
            assert status.pid != victim
            assert [status.restarts for status in servers.statuses()] == [0, 0, 1, 0]
            await call_everyone()


async def test_a_modern_peer_refreshes_and_listens_across_a_restart(sdk_server) -> None:
    entry = ServerSpec(name="sdk", command=sdk_server.command, args=sdk_server.args, env=sdk_server.env)
    policy = RestartPolicy(initial_delay=0.2, max_delay=1)
    readme = "test://static/readme"
    with trio.fail_after(TIMEOUT):
        async with open_servers([entry], restart=policy) as servers:
            assert (await servers.client("sdk")).era == "modern"
            events = servers.events()
            async with servers.listen("sdk", resource_uris=[readme]) as notes:
                for round_ in range(2):
                    await servers.call_tool("sdk__touch")
                    note = await notes.receive()
                    assert (note["method"], note["params"]["uri"]) == (
                        "notifications/resources/updated",
                        readme,
                    )
                    # The group's own listen stream saw the list changes, and listed again.
                    while not (event := await events.receive()).catalogue:
                        pass
                    assert event.server == "sdk"
                    if round_ == 0:
                        os.kill(servers.status("sdk").pid, signal.SIGKILL)
                        while (event := await events.receive()).previous != "starting":
                            pass
                        assert event.state == "ready"
            assert servers.status("sdk").restarts == 1


async def test_peers_in_a_group_connected_in_a_nursery_of_ours(time_server, everything_server) -> None:
    # connect_servers: the group's tasks in our nursery, its servers each one's
    # stderr told with the server's name, and aclose() the end of both.
    entries = [
        ServerSpec(name=peer.name, command=peer.command, args=peer.args, env=peer.env)
        for peer in (time_server, everything_server)
    ]
    lines: list[tuple[str, str]] = []
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            servers = await connect_servers(
                nursery, entries, on_server_stderr=lambda name, line: lines.append((name, line))
            )
            pids = [status.pid for status in servers.statuses()]
            assert [status.state for status in servers.statuses()] == ["ready", "ready"]
            now = await servers.call_tool("time__get_current_time", {"timezone": "UTC"})
            assert "UTC" in now.text
            echoed = await servers.call_tool("everything__echo", {"message": "in our nursery"})
            assert "in our nursery" in echoed.text
            await servers.aclose()
        assert {status.state for status in servers.statuses()} == {"stopped"}
    assert all(pid is not None for pid in pids)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # reaped
    # The everything server says on stderr that it starts (the time server says nothing).
    assert any(name == "everything" and "Starting" in line for name, line in lines)
    assert {name for name, _ in lines} <= {"time", "everything"}
