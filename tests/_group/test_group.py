"""Server groups (`open_servers`) against real child processes.

The servers are ``tests/servers/group_server.py`` (scripted by its flags: a
server that crashes at start, hangs at start, dies on request, or changes
its tools) and missing commands, remote entries, disabled and invalid
entries. Each test checks one point: concurrent starts that a broken server
never blocks, the states and events, the restart policy with real
processes (crash loops, a crash of every server at once, the spread of the
restarts), calls in flight and calls during a restart, the catalogue and its
refresh, allow and deny lists, and that nothing leaks.

Everything runs on the real clock, guarded by `trio.fail_after`; no
assertion depends on how fast the machine is: the restart delays are read
from the events (what the policy chose), not measured.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import attrs
import pytest
import trio
import trio.lowlevel
from paths import SERVERS_DIR

import trio_mcp
from trio_mcp import (
    ConfigError,
    LoadedConfig,
    RequestTimeout,
    RestartPolicy,
    ServerGone,
    ServerSpec,
    SpawnFailed,
    UnknownName,
    open_server,
    open_servers,
)

SERVER = SERVERS_DIR / "group_server.py"

#: The guard of a whole test: far above what any step should take.
GUARD = 60
#: Restart quickly, so that the tests do not wait on the default delays.
FAST = RestartPolicy(initial_delay=0.05, max_delay=0.2, max_restarts=3, window=300)
#: The initialize era, without the server/discover probe: faster starts.
PINNED = trio_mcp.ClientOptions(protocol="2025-11-25")


def spec(name: str, *flags: str, **fields) -> ServerSpec:
    return ServerSpec(name=name, command=sys.executable, args=[str(SERVER), "--tag", name, *flags], **fields)


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie awaiting its reaper counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def started_pids(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(line.split()[0]) for line in path.read_text().splitlines()]


def tasks_alive() -> int:
    """How many tasks run in this test's Trio run."""
    count = 0
    stack = [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        count += 1
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return count


async def until(events: trio.MemoryReceiveChannel, predicate) -> trio_mcp.ServerEvent:
    """The next event that satisfies ``predicate``."""
    with trio.fail_after(GUARD):
        async for event in events:
            if predicate(event):
                return event
    raise AssertionError("the events ended")


async def whoami(servers: trio_mcp.ServerGroup, name: str) -> tuple[str, int]:
    result = await servers.call_tool(f"{name}__whoami")
    tag, pid = result.content[0].text.split()
    return tag, int(pid)


# ------------------------------------------------------------ starting


async def test_every_server_starts_and_calls_go_to_the_right_one() -> None:
    specs = [spec("alpha"), spec("beta", "--tools", "extra"), spec("gamma")]
    with trio.fail_after(GUARD):
        async with open_servers(specs, options=PINNED) as servers:
            assert servers.names == ("alpha", "beta", "gamma")
            assert [status.state for status in servers.statuses()] == ["ready"] * 3
            names = [entry.name for entry in servers.tools]
            assert names == [
                f"{server}__{tool}"
                for server, tools in [
                    ("alpha", ["whoami", "die", "add_tool", "sleep"]),
                    ("beta", ["whoami", "die", "add_tool", "sleep", "extra"]),
                    ("gamma", ["whoami", "die", "add_tool", "sleep"]),
                ]
                for tool in tools
            ]
            assert servers.resolve("beta__extra") == ("beta", "extra")
            for name in servers.names:
                tag, pid = await whoami(servers, name)
                assert tag == name
                assert pid == servers.status(name).pid
            assert (await servers.call_tool("beta__extra")).content[0].text.startswith("beta ")
            assert [(entry.name, entry.server) for entry in servers.prompts] == [
                ("alpha__hello", "alpha"),
                ("beta__hello", "beta"),
                ("gamma__hello", "gamma"),
            ]
            client = await servers.client("gamma")
            assert client.protocol_version == "2025-11-25"
            with pytest.raises(UnknownName) as caught:
                await servers.call_tool("delta__whoami")
            assert caught.value.kind == "tool"
            with pytest.raises(UnknownName):
                await servers.client("delta")
    assert [status.state for status in servers.statuses()] == ["stopped"] * 3


async def test_broken_servers_start_alongside_and_never_block_the_others(tmp_path: Path) -> None:
    config = LoadedConfig(
        servers={
            "good": spec("good"),
            "crashes": spec("crashes", "--exit-at-once", "3"),
            "hangs": spec("hangs", "--hang", startup_timeout=1.0),
            "missing": ServerSpec(name="missing", command=str(tmp_path / "no-such-server")),
            "off": spec("off", enabled=False),
        },
        invalid={"wrong": ConfigError("server 'wrong': args must be a list", server="wrong", field="args")},
    )
    policy = RestartPolicy(initial_delay=30, max_delay=30)
    with trio.fail_after(GUARD):
        async with open_servers(config, restart=policy, options=PINNED) as servers:
            states = {status.name: status.state for status in servers.statuses()}
            assert states == {
                "good": "ready",
                "crashes": "restarting",
                "hangs": "restarting",
                "missing": "failed",
                "off": "disabled",
                "wrong": "invalid",
            }
            assert (await whoami(servers, "good"))[0] == "good"
            assert [entry.server for entry in servers.tools] == ["good"] * 4

            crashed = servers.status("crashes")
            assert isinstance(crashed.error, ServerGone)
            assert crashed.exit_code == 3
            assert "crashes: giving up at once" in crashed.stderr_tail
            assert isinstance(servers.status("hangs").error, RequestTimeout)
            assert isinstance(servers.status("missing").error, SpawnFailed)
            assert servers.status("missing").reason == "starting it again cannot help"

            with pytest.raises(ServerGone, match="'missing' failed: starting it again cannot help"):
                await servers.client("missing")
            with pytest.raises(ConfigError, match="disabled") as disabled:
                await servers.client("off")
            assert disabled.value.server == "off"
            with pytest.raises(ConfigError, match="args must be a list"):
                await servers.client("wrong")


async def test_a_server_that_dies_is_restarted_and_calls_in_flight_fail(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    specs = [spec("steady"), spec("fragile", "--starts", str(starts))]
    with trio.fail_after(GUARD):
        async with open_servers(specs, restart=FAST, options=PINNED) as servers:
            events = servers.events()
            _, first = await whoami(servers, "fragile")
            with pytest.raises(ServerGone) as caught:
                await servers.call_tool("fragile__die", {"code": 7})
            assert caught.value.exit_code == 7
            assert "fragile: dying as asked" in caught.value.stderr_tail

            restarting = await until(events, lambda e: e.server == "fragile" and e.state == "restarting")
            assert restarting.previous == "ready"
            assert isinstance(restarting.error, ServerGone)
            assert 0.05 <= restarting.delay <= 0.2
            # A new call waits for the restart, then goes to the new process.
            tag, second = await whoami(servers, "fragile")
            assert (tag, second != first) == ("fragile", True)
            assert started_pids(starts) == [first, second]
            assert not running(first)
            status = servers.status("fragile")
            assert (status.state, status.restarts, status.exit_code) == ("ready", 1, 7)
            # The other server never noticed.
            assert servers.status("steady").restarts == 0
            assert [e.state for e in [restarting, *[await events.receive() for _ in range(2)]]] == [
                "restarting",
                "starting",
                "ready",
            ]
    assert not running(second)


async def test_a_call_during_a_restart_waits_within_the_callers_scope() -> None:
    policy = RestartPolicy(initial_delay=60, max_delay=60)
    with trio.fail_after(GUARD):
        async with open_servers([spec("slowpoke")], restart=policy, options=PINNED) as servers:
            events = servers.events()
            _, first = await whoami(servers, "slowpoke")
            os.kill(first, signal.SIGKILL)
            event = await until(events, lambda e: e.state == "restarting")
            assert event.error.signal == signal.SIGKILL
            with trio.move_on_after(0.2) as scope:
                await servers.call_tool("slowpoke__whoami")
            assert scope.cancelled_caught
            # restart() ends the delay early; the waiting call then succeeds.
            async with trio.open_nursery() as nursery:
                results = []

                async def call() -> None:
                    results.append(await whoami(servers, "slowpoke"))

                nursery.start_soon(call)
                await trio.lowlevel.checkpoint()
                servers.restart("slowpoke")
            assert results[0][0] == "slowpoke"
            assert results[0][1] != first


async def test_a_crash_loop_ends_in_failed_and_restart_revives_it(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    seen: list[trio_mcp.ServerEvent] = []
    with trio.fail_after(GUARD):
        async with open_servers(
            [spec("loop", "--exit-at-once", "5", "--starts", str(starts)), spec("fine")],
            restart=FAST,
            on_event=seen.append,
            options=PINNED,
        ) as servers:
            events = servers.events()
            failed = await until(events, lambda e: e.server == "loop" and e.state == "failed")
            assert failed.restarts == 3
            assert isinstance(failed.error, ServerGone)
            assert failed.error.exit_code == 5
            status = servers.status("loop")
            assert status.reason == "it was restarted 3 times within 300 s"
            assert len(started_pids(starts)) == 4
            with pytest.raises(ServerGone) as caught:
                await servers.client("loop")
            assert caught.value.exit_code == 5
            assert "loop: giving up at once" in caught.value.stderr_tail
            # The healthy server kept working throughout.
            assert (await whoami(servers, "fine"))[0] == "fine"
            servers.restart("loop")
            await until(events, lambda e: e.server == "loop" and e.state == "starting")
            await until(events, lambda e: e.server == "loop" and e.state == "restarting")
    loop_states = [e.state for e in seen if e.server == "loop"]
    assert loop_states[:9] == ["restarting", "starting"] * 3 + ["failed", "starting", "restarting"]
    assert all(not running(pid) for pid in started_pids(starts))


async def test_a_server_that_hangs_at_start_times_out_and_fails(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    policy = RestartPolicy(initial_delay=0.05, max_delay=0.1, max_start_failures=2)
    with trio.fail_after(GUARD):
        async with open_servers(
            [spec("stuck", "--hang", "--starts", str(starts), startup_timeout=0.5)],
            restart=policy,
            options=PINNED,
        ) as servers:
            events = servers.events()
            await until(events, lambda e: e.state == "failed")
            status = servers.status("stuck")
            assert isinstance(status.error, RequestTimeout)
            assert "did not start within 0.5 s" in str(status.error)
            assert status.reason == "it failed to start 2 times in a row"
            pids = started_pids(starts)
            assert len(pids) == 2
    assert all(not running(pid) for pid in pids)


async def test_every_server_crashing_at_once_comes_back_spread_out(tmp_path: Path) -> None:
    count = 8
    starts = tmp_path / "starts"
    policy = RestartPolicy(initial_delay=0.2, max_delay=2)
    specs = [spec(f"s{i}", "--starts", str(starts)) for i in range(count)]
    with trio.fail_after(GUARD):
        async with open_servers([*specs, spec("witness")], restart=policy, seed=1, options=PINNED) as servers:
            events = servers.events()
            first = {f"s{i}": servers.status(f"s{i}").pid for i in range(count)}
            for pid in first.values():
                os.kill(pid, signal.SIGKILL)
            delays = {}
            while len(delays) < count:
                event = await until(events, lambda e: e.state == "restarting")
                delays[event.server] = event.delay
            # No thundering herd: the delays differ, spread over their range.
            assert len(set(delays.values())) == count
            assert all(0.2 <= delay <= 0.6 for delay in delays.values())
            assert max(delays.values()) - min(delays.values()) > 0.1
            # The group stays responsive while they back off.
            assert (await whoami(servers, "witness"))[0] == "witness"
            for name in first:
                tag, pid = await whoami(servers, name)
                assert tag == name
                assert pid != first[name]
            assert len(started_pids(starts)) == 2 * count


class _Steps(trio.abc.Instrument):
    """Counts the steps Trio's scheduler runs (a polling loop is many; a sleep is none)."""

    def __init__(self) -> None:
        self.count = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.count += 1


async def test_backing_off_costs_no_cpu(tmp_path: Path) -> None:
    policy = RestartPolicy(initial_delay=2, max_delay=2, jitter="none")
    specs = [spec(f"c{i}", "--exit-at-once", "1") for i in range(5)]
    with trio.fail_after(GUARD):
        async with open_servers(specs, restart=policy, options=PINNED) as servers:
            assert {status.state for status in servers.statuses()} == {"restarting"}
            steps = _Steps()
            trio.lowlevel.add_instrument(steps)
            try:
                await trio.sleep(1)
            finally:
                trio.lowlevel.remove_instrument(steps)
            assert {status.state for status in servers.statuses()} == {"restarting"}
    # Waiting out the delays is sleeping, not polling: while five servers
    # back off for a second, no task of the group runs (this test's own
    # sleep wakes once; a stray wake-up or two is allowed, a loop is not).
    assert steps.count <= 5


async def test_list_changed_refreshes_the_catalogue() -> None:
    with trio.fail_after(GUARD):
        async with open_servers([spec("shop"), spec("other")], options=PINNED) as servers:
            events = servers.events()
            assert "shop__fresh" not in [entry.name for entry in servers.tools]
            await servers.call_tool("shop__add_tool", {"name": "fresh"})
            event = await until(events, lambda e: e.catalogue)
            assert (event.server, event.state, event.previous) == ("shop", "ready", "ready")
            assert "shop__fresh" in [entry.name for entry in servers.tools]
            assert (await servers.call_tool("shop__fresh")).content[0].text.startswith("shop ")


async def test_the_catalogue_follows_restarts_and_a_down_server_is_absent(tmp_path: Path) -> None:
    policy = RestartPolicy(initial_delay=60, max_delay=60)
    with trio.fail_after(GUARD):
        async with open_servers([spec("up"), spec("down")], restart=policy, options=PINNED) as servers:
            events = servers.events()
            await servers.call_tool("down__add_tool", {"name": "temporary"})
            await until(events, lambda e: e.catalogue)
            assert "down__temporary" in [entry.name for entry in servers.tools]
            os.kill(servers.status("down").pid, signal.SIGKILL)
            await until(events, lambda e: e.state == "restarting")
            assert {entry.server for entry in servers.tools} == {"up"}
            assert {entry.server for entry in servers.prompts} == {"up"}
            servers.restart("down")
            await until(events, lambda e: e.server == "down" and e.state == "ready")
            names = [entry.name for entry in servers.tools]
            # The new process lists what it has: the added tool is gone, and
            # its name is no longer callable.
            assert "down__whoami" in names
            assert "down__temporary" not in names
            with pytest.raises(UnknownName, match="no longer offers"):
                await servers.call_tool("down__temporary")


async def test_allow_and_deny_lists_filter_the_catalogue() -> None:
    specs = [spec("open", tools_deny={"die", "sleep"}), spec("closed", tools_allow={"whoami", "nothing"})]
    with trio.fail_after(GUARD):
        async with open_servers(specs, options=PINNED) as servers:
            assert [entry.name for entry in servers.tools] == [
                "open__whoami",
                "open__add_tool",
                "closed__whoami",
            ]
            for name in ("open__die", "closed__die", "closed__nothing"):
                with pytest.raises(UnknownName):
                    await servers.call_tool(name)
            assert (await whoami(servers, "closed"))[0] == "closed"


async def test_leaving_the_block_stops_everything_and_leaks_nothing(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    before = tasks_alive()
    specs = [
        spec("ready", "--starts", str(starts)),
        spec("looping", "--exit-at-once", "2", "--starts", str(starts)),
        spec("hanging", "--hang", "--starts", str(starts), startup_timeout=0.5),
    ]
    with trio.fail_after(GUARD):
        async with open_servers(specs, restart=FAST, options=PINNED) as servers:
            events = servers.events()
            await whoami(servers, "ready")
        # The events end with the group.
        states = [event.state async for event in events]
    assert states[-3:].count("stopped") == 3
    assert {status.state for status in servers.statuses()} == {"stopped"}
    assert started_pids(starts)
    assert all(not running(pid) for pid in started_pids(starts))
    assert tasks_alive() == before
    with pytest.raises(ServerGone, match="the group is closing"):
        await servers.client("ready")


async def test_an_error_in_the_block_comes_out_unwrapped() -> None:
    with trio.fail_after(GUARD), pytest.raises(KeyError, match="mine"):
        async with open_servers([spec("one"), spec("two")], options=PINNED):
            raise KeyError("mine")


async def test_cancelling_the_start_stops_the_servers(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    with trio.fail_after(GUARD):
        with trio.move_on_after(0.5) as scope:
            async with open_servers([spec("slow", "--hang", "--starts", str(starts))], options=PINNED):
                raise AssertionError("entered although the server never started")
        assert scope.cancelled_caught
    assert all(not running(pid) for pid in started_pids(starts))


async def test_the_era_is_probed_in_auto_mode() -> None:
    with trio.fail_after(GUARD):
        async with open_servers([spec("auto")], options=trio_mcp.ClientOptions()) as servers:
            client = await servers.client("auto")
            assert client.era == "legacy"
            assert (await whoami(servers, "auto"))[0] == "auto"


# ---------------------------------------------------------------- input


def test_bad_configurations_and_options_are_refused() -> None:
    with pytest.raises(TypeError, match="LoadedConfig"):
        open_servers("servers.json")
    with pytest.raises(TypeError, match="ServerSpec"):
        open_servers({"a": {"command": "x"}})
    with pytest.raises(ValueError, match="another name"):
        open_servers({"a": spec("b")})
    with pytest.raises(ValueError, match="two servers are named 'a'"):
        open_servers([spec("a"), spec("a")])
    with pytest.raises(TypeError, match="ClientOptions"):
        open_servers([spec("a")], options={"probe_timeout": 1})
    with pytest.raises(TypeError, match="RestartPolicy"):
        open_servers([spec("a")], restart={"max_restarts": 1})


async def test_open_server_opens_one_entry() -> None:
    entry = spec("single", env={"GREETING": "hi"}, request_timeout=30)
    with trio.fail_after(GUARD):
        async with open_server(entry, options=PINNED) as client:
            assert client.session.request_timeout == 30
            result = await client.call_tool("whoami")
            assert result.content[0].text.startswith("single ")
        with pytest.raises(ConfigError, match="disabled"):
            async with open_server(spec("off", enabled=False)):
                pass
        with pytest.raises(RequestTimeout, match=r"did not start within 0\.3 s"):
            async with open_server(spec("stuck", "--hang", startup_timeout=0.3), options=PINNED):
                pass


async def test_a_listen_stream_survives_restarts() -> None:
    policy = RestartPolicy(initial_delay=60, max_delay=60)
    with trio.fail_after(GUARD):
        async with open_servers([spec("news")], restart=policy, options=PINNED) as servers:
            events = servers.events()
            async with servers.listen("news", tools=True) as notes:
                await servers.call_tool("news__add_tool", {"name": "one"})
                assert (await notes.receive())["method"] == "notifications/tools/list_changed"
                os.kill(servers.status("news").pid, signal.SIGKILL)
                await until(events, lambda e: e.state == "restarting")
                servers.restart("news")
                await until(events, lambda e: e.state == "ready")
                await servers.call_tool("news__add_tool", {"name": "two"})
                assert (await notes.receive())["method"] == "notifications/tools/list_changed"
            with pytest.raises(TypeError, match="single string"):
                async with servers.listen("news", resource_uris="file:///x"):
                    pass
            with pytest.raises(UnknownName):
                async with servers.listen("olds"):
                    pass
        # The group closed: a stream still open ends.
        async with open_servers([spec("brief")], options=PINNED) as servers:
            listening = servers.listen("brief", tools=True)
            notes = await listening.__aenter__()
        assert [note async for note in notes] == []
        await listening.__aexit__(None, None, None)


# ------------------------------------------------------- in a nursery of yours


async def test_connect_servers_runs_the_group_in_the_callers_nursery(tmp_path: Path) -> None:
    # The group's tasks live in the caller's nursery, the servers run until
    # aclose(), which stops them as leaving an open_servers block does:
    # stdin closed, and time to leave by themselves.
    starts = tmp_path / "starts"
    left = tmp_path / "left"
    before = tasks_alive()
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            servers = await trio_mcp.connect_servers(
                nursery,
                [
                    spec("a", "--starts", str(starts)),
                    spec("b", "--linger", str(left), "--starts", str(starts)),
                ],
                restart=FAST,
                options=PINNED,
            )
            # Returned once every first start is over.
            assert [status.state for status in servers.statuses()] == ["ready", "ready"]
            events = servers.events()
            assert (await whoami(servers, "a"))[0] == "a"
            with pytest.raises(RuntimeError, match="entered once, or connected once"):
                await servers.__aenter__()
            await servers.aclose()
            assert {status.state for status in servers.statuses()} == {"stopped"}
            assert [event.state async for event in events] == ["stopped", "stopped"]
            await servers.aclose()  # idempotent
    assert left.read_text(encoding="utf-8") == "left by itself\n"
    assert len(started_pids(starts)) == 2
    assert all(not running(pid) for pid in started_pids(starts))
    assert tasks_alive() == before
    with pytest.raises(ServerGone, match="the group is closing"):
        await servers.client("a")


async def test_aclose_keeps_within_the_callers_deadline(tmp_path: Path) -> None:
    # A server slow to leave gets the grace only the caller's deadline
    # leaves it: here none, so it is signalled, and never writes its file.
    starts = tmp_path / "starts"
    left = tmp_path / "left"
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            servers = await trio_mcp.connect_servers(
                nursery, [spec("slow", "--linger", str(left), "--starts", str(starts))], options=PINNED
            )
            with trio.CancelScope() as scope:
                scope.cancel()
                await servers.aclose()  # shielded: it returns once the server is gone
            assert servers.status("slow").state == "stopped"
    assert all(not running(pid) for pid in started_pids(starts))
    assert not left.exists()  # reaped before it could leave by itself


async def test_cancelling_the_nursery_of_connect_servers_ends_the_group(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            servers = await trio_mcp.connect_servers(
                nursery, [spec("a", "--starts", str(starts))], restart=FAST, options=PINNED, wait=False
            )
            events = servers.events()
            await servers.wait_ready("a")
            nursery.cancel_scope.cancel()
        # Cancelled, the supervisors said nothing: the group says it for them.
        assert servers.status("a").state == "stopped"
        assert [event.state async for event in events][-1] == "stopped"
        with pytest.raises(ServerGone, match="the group is closing"):
            await servers.client("a")
        await servers.wait_started()
    assert started_pids(starts)
    assert all(not running(pid) for pid in started_pids(starts))


async def test_connect_servers_checks_its_arguments_as_open_servers_does() -> None:
    async with trio.open_nursery() as nursery:
        with pytest.raises(TypeError, match=r"connect_servers\(\) takes on_server_stderr="):
            await trio_mcp.connect_servers(nursery, [spec("a")], on_stderr=print)  # type: ignore[call-arg]
        with pytest.raises(ValueError, match="kill_grace"):
            await trio_mcp.connect_servers(nursery, [spec("a")], kill_grace=-1)
        with pytest.raises(TypeError, match="ServerSpec"):
            await trio_mcp.connect_servers(nursery, ["not a spec"])  # type: ignore[list-item]


async def test_a_group_closed_before_it_ran_never_runs() -> None:
    group = open_servers([spec("never")], options=PINNED)
    events = group.events()
    await group.aclose()
    assert group.status("never").state == "stopped"
    assert [event.state async for event in events] == ["stopped"]
    with pytest.raises(RuntimeError, match="entered once"):
        await group.__aenter__()


async def test_a_group_is_entered_once() -> None:
    group = open_servers([spec("once")], options=PINNED)
    with trio.fail_after(GUARD):
        async with group:
            with pytest.raises(RuntimeError, match="entered once"):
                await group.__aenter__()


async def test_an_entry_the_opener_refuses_fails_alone() -> None:
    with pytest.raises(TypeError, match="env: must map strings to strings, got a string to an integer"):
        ServerSpec(name="bad", command=sys.executable, env={"PORT": 8080})
    bad = ServerSpec(name="bad", command=sys.executable, env={"A=B": "x"})
    with trio.fail_after(GUARD):
        async with open_servers([bad, spec("good")], options=PINNED) as servers:
            status = servers.status("bad")
            assert status.state == "failed"
            assert isinstance(status.error, SpawnFailed)
            assert "invalid env name" in str(status.error)
            assert servers.status("good").state == "ready"


async def test_prompts_and_resources_go_to_their_server() -> None:
    demo = ServerSpec(name="demo", command=sys.executable, args=["-m", "trio_mcp.demo"])
    with trio.fail_after(GUARD):
        async with open_servers([demo, spec("other")], options=trio_mcp.ClientOptions()) as servers:
            assert [(entry.name, entry.server) for entry in servers.prompts] == [
                ("demo__greet", "demo"),
                ("other__hello", "other"),
            ]
            assert [entry.item.uri for entry in servers.resources] == ["demo://readme"]
            assert [entry.item.uri_template for entry in servers.resource_templates] == [
                "demo://greeting/{name}"
            ]
            prompt = await servers.get_prompt("demo__greet", {"name": "Ada"})
            assert "Ada" in prompt.messages[0].content.text
            readme = await servers.read_resource("demo", "demo://readme")
            assert readme.contents[0].text
            with pytest.raises(UnknownName) as caught:
                await servers.get_prompt("demo__nothing")
            assert caught.value.kind == "prompt"


async def test_the_callers_on_notification_still_gets_every_notification() -> None:
    seen: list[str] = []

    async def on_notification(note: dict) -> None:
        seen.append(note["method"])

    with trio.fail_after(GUARD):
        async with open_servers(
            [spec("chatty")], options=attrs.evolve(PINNED, on_notification=on_notification)
        ) as servers:
            events = servers.events()
            await servers.call_tool("chatty__add_tool", {"name": "more"})
            await until(events, lambda e: e.catalogue)
            assert "chatty__more" in [entry.name for entry in servers.tools]
    assert seen == ["notifications/tools/list_changed"]


# ------------------------------------------------------------ remote entries


async def test_remote_entries_join_the_group_over_http() -> None:
    """Entries with a ``url`` connect over HTTP, with their headers, beside stdio ones.

    The HTTP server is a real process; it refuses every request without the
    bearer token (``auth-token``), so the entry's headers must reach it. An
    entry it always refuses (``auth-401``) needs a login at once, with the
    challenge, and is not restarted: credentials do not come back by themselves.
    """
    pytest.importorskip("httpx2", reason="remote entries need the http extra")
    from process_support import hostile_server

    with hostile_server(era="dual") as http:
        remote = {"X-Test-Scenario": "auth-token", "X-Test-Target": "all"}
        config = {
            "local": spec("local"),
            "remote": ServerSpec(
                name="remote",
                transport="http",
                url=http.url,
                headers={**remote, "Authorization": "Bearer good-token"},
            ),
            "locked": ServerSpec(name="locked", transport="http", url=http.url, headers=remote),
        }
        with trio.fail_after(GUARD):
            async with open_servers(config, options=PINNED) as servers:
                states = {status.name: status.state for status in servers.statuses()}
                assert states == {"local": "ready", "remote": "ready", "locked": "needs-login"}
                locked = servers.status("locked")
                assert isinstance(locked.error, trio_mcp.AuthRequired)
                assert locked.error.scheme == "Bearer"
                assert locked.restarts == 0
                assert servers.resolve("remote__echo") == ("remote", "echo")
                echoed = await servers.call_tool("remote__echo", {"text": "over http"})
                assert "over http" in echoed.content[0].text
                assert (await whoami(servers, "local"))[0] == "local"
                assert servers.status("remote").pid is None

            async with open_server(config["remote"], options=PINNED) as client:
                assert "echo" in [tool.name for tool in await client.list_tools()]
            with pytest.raises(trio_mcp.AuthRequired):
                async with open_server(config["locked"], options=PINNED):
                    pass


async def test_every_error_the_group_raises_for_a_server_names_its_entry(tmp_path: Path) -> None:
    # Two entries with the same command line: only the entry's name tells them apart.
    twin = [str(SERVER), "--tag", "twin"]
    specs = [
        ServerSpec(name="left", command=sys.executable, args=twin),
        ServerSpec(name="right", command=sys.executable, args=twin),
        ServerSpec(name="stuck", command=sys.executable, args=[*twin, "--hang"], startup_timeout=0.5),
    ]
    never = RestartPolicy(mode="never")
    with trio.fail_after(GUARD):
        async with open_servers(specs, restart=never, options=PINNED) as servers:
            events = servers.events()
            with pytest.raises(ServerGone) as died:
                await servers.call_tool("left__die", {"code": 3})
            assert died.value.entry == "left"
            assert str(died.value).startswith("server 'left': ")
            assert died.value.exit_code == 3
            failed = await until(events, lambda e: e.server == "left" and e.state == "failed")
            assert failed.error.entry == "left"
            assert servers.status("left").error.entry == "left"
            # A call to a failed entry, and the error of one that never started.
            assert (await servers.call_tool("right__whoami")).text.startswith("twin ")
            with pytest.raises(ServerGone) as later:
                await servers.client("left")
            assert later.value.entry == "left"
            assert str(later.value).startswith("server 'left' failed")
            stuck = servers.status("stuck").error
            assert isinstance(stuck, trio_mcp.RequestTimeout)
            assert stuck.entry == "stuck"
            # An error the server answers with names the entry too.
            with pytest.raises(trio_mcp.RpcError) as refused:
                await servers.read_resource("right", "file:///nothing")
            assert refused.value.entry == "right"
            assert "server 'right'" in str(refused.value)
