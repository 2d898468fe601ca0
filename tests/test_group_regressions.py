"""Server groups against real processes and real configuration files: defects found by trying to break them.

Each test is one defect, with the servers and files that showed it: a
secret put into a command line by ``${VAR}`` expansion, an entry with a bad
option, a client kept across a restart, tool names that collided, entering
a group while one server hangs, a dead server still said to be ready.
Everything runs on the real clock, guarded by `trio.fail_after`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import signal
import sys
from pathlib import Path

import pytest
import trio

import trio_mcp
from trio_mcp import ConfigError, RestartPolicy, ServerGone, ServerSpec, load_config, open_servers

SERVER = Path(__file__).parent / "servers" / "group_server.py"
GUARD = 60
PINNED = trio_mcp.ClientOptions(protocol="2025-11-25")
NEVER = RestartPolicy(mode="never")
SECRET = "hunter2-s3cr3t"


def spec(name: str, *flags: str, **fields) -> ServerSpec:
    return ServerSpec(name=name, command=sys.executable, args=[str(SERVER), "--tag", name, *flags], **fields)


def write_config(folder: Path, servers: dict) -> Path:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


# ------------------------------------------------------------------ secrets


async def test_a_secret_expanded_into_the_command_line_is_never_shown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Fails without the fix: ServerGone named the server by its expanded
    # command line, so the secret was in the status, the events and the logs.
    caplog.set_level(logging.DEBUG, logger="trio_mcp")
    path = write_config(
        tmp_path,
        {
            "dies": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)", "--key=${TOKEN}"]},
            "good": {
                "command": sys.executable,
                "args": [str(SERVER), "--tag", "good", "--tools", "${TOKEN}"],
            },
        },
    )
    config = load_config(path, environ={"TOKEN": SECRET, "PATH": os.environ.get("PATH", "")})
    assert config.servers["dies"].args[-1] == f"--key={SECRET}"  # the server gets the value
    seen: list[trio_mcp.ServerEvent] = []
    with trio.fail_after(GUARD):
        async with open_servers(config, restart=NEVER, on_event=seen.append, options=PINNED) as servers:
            dead = servers.status("dies")
            assert dead.state == "failed"
            assert isinstance(dead.error, ServerGone)
            assert "--key=${TOKEN}" in str(dead.error)
            assert dead.error.arguments[-1] == "--key=${TOKEN}"
            good = servers.status("good")
            os.kill(good.pid, signal.SIGKILL)
            with pytest.raises(ServerGone) as caught:
                await (await servers.client("good")).call_tool("whoami")
            gone = servers.status("good").error
            texts = [str(caught.value), str(gone), repr(config.servers["good"])]
            with pytest.raises(ServerGone) as failed:
                await servers.client("dies")
            texts.append(str(failed.value))
    assert "${TOKEN}" in str(caught.value)
    texts += [str(event.error) for event in seen]
    texts += [record.getMessage() for record in caplog.records]
    assert not [text for text in texts if SECRET in text]


# ------------------------------------------------------------------ bad options


@pytest.mark.parametrize("value", ["30", math.nan, -5, 0, math.inf, True, None])
async def test_an_entry_with_a_bad_option_is_invalid_and_the_others_start(tmp_path: Path, value) -> None:
    # Fails without the fix: the value reached the supervisor, whose task
    # crashed and took the group down (the caller got a bare Cancelled), or
    # (overrides) the whole load raised.
    path = write_config(
        tmp_path,
        {
            # (JSON has no NaN nor infinity: the file says -1 then.)
            "bad": {
                "command": sys.executable,
                "args": [str(SERVER)],
                "startup_timeout": value if not isinstance(value, float) or math.isfinite(value) else -1,
            },
            "over": {"command": sys.executable, "args": [str(SERVER)]},
            "good": {"command": sys.executable, "args": [str(SERVER), "--tag", "good"]},
        },
    )
    config = load_config(path, overrides={"over": {"startup_timeout": value}})
    for name in ("bad", "over"):
        error = config.invalid[name]
        assert isinstance(error, ConfigError)
        assert (error.file, error.server, error.field) == (str(path), name, "startup_timeout")
        assert str(error).startswith(f"{path}: server {name!r}: startup_timeout: ")
    with trio.fail_after(GUARD):
        async with open_servers(config, options=PINNED) as servers:
            assert servers.status("good").state == "ready"
            assert servers.status("bad").state == "invalid"
            assert servers.status("over").state == "invalid"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("startup_timeout", "30"),
        ("startup_timeout", math.nan),
        ("startup_timeout", -5),
        ("request_timeout", 0),
        ("request_timeout", "1"),
        ("enabled", "yes"),
        ("inherit_env", 1),
        ("args", "-y pkg"),
        ("env", {"A": 1}),
        ("command", 3),
    ],
)
def test_a_spec_made_in_code_with_a_bad_option_fails_alone(field: str, value: object) -> None:
    # Built by hand, a bad spec is refused at once; given as an override it
    # makes its own entry invalid, never the group.
    with pytest.raises((TypeError, ValueError)):
        ServerSpec(name="bad", command=sys.executable, **{field: value})
    loaded = trio_mcp.parse_config(
        {"mcpServers": {"bad": {"command": sys.executable}, "good": {"command": sys.executable}}},
        overrides={"bad": {field: value}},
    )
    assert loaded.invalid["bad"].field == field
    assert loaded.invalid["bad"].server == "bad"
    assert "good" in loaded.servers


# ------------------------------------------------------------------ names


async def test_two_servers_whose_names_collided_are_both_callable() -> None:
    # Fails without the fix: server "a.b"'s "x" got the hashed name
    # a_b__x_<8 hex>, which is also the plain name of server "a_b"'s tool
    # "x_<8 hex>": one of them was dropped from the catalogue.
    digest = hashlib.sha256(b"a.b\0x").hexdigest()[:8]
    specs = [spec("a.b", "--tools", "x"), spec("a_b", "--tools", f"x_{digest}")]
    with trio.fail_after(GUARD):
        async with open_servers(specs, options=PINNED) as servers:
            pairs = {(entry.server, entry.item.name): entry.name for entry in servers.tools}
            assert ("a.b", "x") in pairs
            assert ("a_b", f"x_{digest}") in pairs
            assert len(set(pairs.values())) == len(pairs)
            for (server, tool), name in pairs.items():
                assert servers.resolve(name) == (server, tool)
            first = await servers.call_tool(pairs["a.b", "x"])
            second = await servers.call_tool(pairs["a_b", f"x_{digest}"])
            assert first.content[0].text.split()[0] == "a.b"
            assert second.content[0].text.split()[0] == "a_b"


# ------------------------------------------------------------------ entering, waiting


def zombie_or_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


async def test_entering_at_once_lets_a_ready_server_work_beside_a_hanging_one() -> None:
    # Fails without the fix: open_servers() knows no wait=False, and entering
    # waited for the hanging server's whole startup_timeout.
    specs = [spec("hangs", "--hang", startup_timeout=GUARD / 2), spec("good")]
    with trio.fail_after(GUARD / 3):
        async with open_servers(specs, restart=NEVER, wait=False, options=PINNED) as servers:
            assert servers.status("hangs").state == "starting"
            status = await servers.wait_ready("good")
            assert status.state == "ready"
            assert status.pid is not None
            assert (await servers.call_tool("good__whoami")).content[0].text.startswith("good ")
            assert servers.status("hangs").state == "starting"
            assert [entry.server for entry in servers.tools] == ["good"] * 4


async def test_state_changes_can_be_awaited() -> None:
    specs = [spec("hangs", "--hang", startup_timeout=0.5), spec("good"), spec("off", enabled=False)]
    with trio.fail_after(GUARD):
        async with open_servers(specs, restart=NEVER, wait=False, options=PINNED) as servers:
            failed = await servers.wait_until("hangs", "failed")
            assert failed.state == "failed"
            assert "startup_timeout" in str(failed.error)
            with pytest.raises(ServerGone):
                await servers.wait_ready("hangs")
            with pytest.raises(ConfigError):
                await servers.wait_ready("off")
            assert (await servers.wait_until("off", "disabled")).state == "disabled"
            await servers.wait_started()
            assert (await servers.wait_until("good", "ready")).state == "ready"
            with pytest.raises(ValueError, match="at least one state"):
                await servers.wait_until("good")
    with pytest.raises(ServerGone):
        await servers.wait_until("good", "ready")


async def test_a_dead_server_stops_saying_ready_at_once() -> None:
    # Fails without the fix: right after the kill, status() said "ready",
    # with the dead process's pid, until the supervisor caught up.
    policy = RestartPolicy(initial_delay=30, max_delay=30)
    with trio.fail_after(GUARD):
        async with open_servers([spec("victim"), spec("other")], restart=policy, options=PINNED) as servers:
            pid = servers.status("victim").pid
            os.kill(pid, signal.SIGKILL)
            deadline = trio.current_time() + GUARD / 2
            while not zombie_or_gone(pid):  # without yielding to Trio: nobody has been told yet
                assert trio.current_time() < deadline
            status = servers.status("victim")
            assert status.state == "restarting"
            assert status.pid is None
            assert status.signal == signal.SIGKILL
            assert "victim" not in {entry.server for entry in servers.tools}
            assert servers.status("other").state == "ready"
            # And once the supervisor knows, it says the same.
            assert (await servers.wait_until("victim", "restarting")).state == "restarting"


# ------------------------------------------------------------------ old clients


async def test_a_client_kept_across_a_restart_raises_server_gone_whenever_used() -> None:
    # Fails without the fix: once the group had closed the dead server's
    # session (to start it again), the old client raised TransportClosed.
    policy = RestartPolicy(initial_delay=0.05, max_delay=0.1)
    with trio.fail_after(GUARD):
        async with open_servers([spec("s")], restart=policy, options=PINNED) as servers:
            events = servers.events()
            old = await servers.client("s")
            first = servers.status("s").pid
            os.kill(first, signal.SIGKILL)
            with pytest.raises(ServerGone) as soon:
                await old.call_tool("whoami")
            async for event in events:
                if event.state == "ready":
                    break
            assert servers.status("s").pid != first
            for _ in range(2):
                with pytest.raises(ServerGone) as late:
                    await old.call_tool("whoami")
                assert late.value.signal == signal.SIGKILL
            assert soon.value.signal == signal.SIGKILL
            new = await servers.client("s")
            assert (await new.call_tool("whoami")).content[0].text.startswith("s ")


# ------------------------------------------------------------------ real-world entries


async def test_a_command_line_given_as_the_command_gets_a_hint_naming_the_fix(tmp_path: Path) -> None:
    # Fails without the fix: only "command not found", with no word of args.
    path = write_config(tmp_path, {"pkg": {"command": "npx -y some-mcp-server"}})
    config = load_config(path)
    fix = '"command": "npx", "args": ["-y", "some-mcp-server"]'
    assert [warning for warning in config.warnings if fix in warning]
    with trio.fail_after(GUARD):
        async with open_servers(config, options=PINNED) as servers:
            status = servers.status("pkg")
            assert status.state == "failed"
            assert isinstance(status.error, trio_mcp.SpawnFailed)
            assert "command 'npx', args ['-y', 'some-mcp-server']" in str(status.error)


async def test_a_command_in_the_home_folder_is_found_as_a_shell_would(tmp_path: Path) -> None:
    # Fails without the fix: ~/bin/srv was joined to the configuration's
    # folder (<folder>/~/bin/srv), which does not exist.
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    server = home / "bin" / "srv"
    server.write_text(f'#!/bin/sh\nexec {sys.executable} {SERVER} --tag home "$@"\n', encoding="utf-8")
    server.chmod(0o755)
    folder = tmp_path / "project"
    folder.mkdir()
    path = write_config(folder, {"home": {"command": "~/bin/srv", "cwd": "~"}})
    config = load_config(path, user_home=home)
    assert config.servers["home"].command == str(server)
    assert config.servers["home"].cwd == str(home)
    with trio.fail_after(GUARD):
        async with open_servers(config, options=PINNED) as servers:
            assert servers.status("home").state == "ready", servers.status("home").error
            tag, _ = (await servers.call_tool("home__whoami")).content[0].text.split()
            assert tag == "home"
            assert "'~/bin/srv'" in repr(config.servers["home"])


# ------------------------------------------------------------------ a fake entry


async def test_a_fake_server_is_an_entry_like_any_other_restarts_included() -> None:
    from trio_mcp.testing import FakeServer

    fake = FakeServer(era="legacy", tools=["forecast"])
    fake.on_tool("forecast", lambda request: f"sunny ({fake.pid})")
    specs = [spec("real"), ServerSpec(name="weather", target=fake.target())]
    policy = RestartPolicy(initial_delay=0.05, max_delay=0.1)
    with trio.fail_after(GUARD):
        async with open_servers(specs, restart=policy, options=PINNED) as servers:
            events = servers.events()
            first = servers.status("weather").pid
            assert first == fake.pid
            assert (await servers.call_tool("weather__forecast")).content[0].text == f"sunny ({first})"
            assert (await servers.call_tool("real__whoami")).content[0].text.startswith("real ")
            await fake.write_stderr("lost the satellite")
            await fake.exit(3)
            gone = await servers.wait_until("weather", "restarting", "starting", "ready")
            async for event in events:
                if event.server == "weather" and event.state == "ready":
                    break
            again = servers.status("weather")
            assert again.pid not in (None, first)
            assert (await servers.call_tool("weather__forecast")).content[0].text == f"sunny ({again.pid})"
    assert gone.state in ("restarting", "starting", "ready")
    assert fake.handler_errors == []


# ------------------------------------------------------ group-wide process options


async def test_group_wide_kill_grace_and_stderr_reach_every_server_process(tmp_path: Path) -> None:
    # The group's kill_grace and on_stderr apply to each stdio server, the
    # line told with its server's name.
    lines: list[tuple[str, str]] = []
    patient = tmp_path / "patient"
    hasty = tmp_path / "hasty"
    with trio.fail_after(GUARD):
        async with open_servers(
            [spec("a", "--linger", str(patient))],
            restart=NEVER,
            options=PINNED,
            kill_grace=30,
            on_server_stderr=lambda *x: lines.append(x),
        ) as servers:
            await servers.call_tool("a__whoami")
        async with open_servers(
            [spec("b", "--linger", str(hasty))], restart=NEVER, options=PINNED, kill_grace=0
        ) as servers:
            await servers.call_tool("b__whoami")
        await trio.sleep(1)  # it would have written its file by now
        assert not hasty.exists()  # signalled at once
        async with open_servers(
            [spec("b", "--linger", str(hasty))], restart=NEVER, options=PINNED
        ) as servers:
            await servers.call_tool("b__whoami")
    assert patient.read_text(encoding="utf-8") == "left by itself\n"
    assert hasty.read_text(encoding="utf-8") == "left by itself\n"  # the default grace (2 s) let it
    lines.clear()
    with trio.fail_after(GUARD):
        async with open_servers(
            [spec("c"), spec("d")], restart=NEVER, options=PINNED, on_server_stderr=lambda *x: lines.append(x)
        ) as servers:
            with pytest.raises(ServerGone) as caught:
                await servers.call_tool("c__die")
    assert ("c", "c: dying as asked") in lines
    assert "c: dying as asked" in caught.value.stderr_tail  # the tail is kept as well
    assert all(name == "c" for name, _ in lines)


def test_group_wide_options_are_checked_when_the_group_is_made() -> None:
    with pytest.raises(ValueError, match="kill_grace"):
        open_servers([spec("a")], kill_grace=-1)
    with pytest.raises(TypeError, match="kill_grace"):
        open_servers([spec("a")], kill_grace="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="on_server_stderr must be callable"):
        open_servers([spec("a")], on_server_stderr="print")  # type: ignore[arg-type]


def test_the_group_stderr_hook_is_named_for_what_it_gets() -> None:
    # ProcessTarget's on_stderr takes the line; the group's hook takes the
    # server's name too, so it has another name, and the old one says which.
    with pytest.raises(
        TypeError, match=r"open_servers\(\) takes on_server_stderr=, called with the server's name"
    ):
        open_servers([spec("a")], on_stderr=print)  # type: ignore[call-arg]


async def test_group_calls_take_the_clients_options_by_name() -> None:
    seen: list[dict] = []
    with trio.fail_after(GUARD):
        async with open_servers([spec("a")], restart=NEVER, options=PINNED) as servers:
            result = await servers.call_tool("a__whoami", meta={"trace": "t1"}, on_notification=seen.append)
            assert result.content[0].text.startswith("a ")
            with pytest.raises(TypeError):
                await servers.call_tool("a__whoami", bogus=1)  # type: ignore[call-arg]


def test_a_remote_entry_without_the_http_extra_fails_alone(tmp_path: Path) -> None:
    # Fails without the fix: the member's ImportError left the group as an
    # internal error and the caller got Cancelled; the stdio server was lost too.
    script = tmp_path / "no_httpx.py"
    script.write_text(
        f"""
import sys
sys.modules["httpx2"] = None  # as on an installation without the http extra
import trio, trio_mcp
from trio_mcp import RestartPolicy, ServerSpec, open_servers

async def main():
    specs = [
        ServerSpec(name="far", transport="http", url="http://127.0.0.1:9/mcp"),
        ServerSpec(name="near", command=sys.executable, args=[{str(SERVER)!r}, "--tag", "near"]),
    ]
    with trio.fail_after({GUARD}):
        async with open_servers(specs, restart=RestartPolicy(mode="always"), options=trio_mcp.ClientOptions(protocol="2025-11-25")) as servers:
            far = servers.status("far")
            print(far.state, type(far.error).__name__, far.error)
            print(servers.status("near").state, (await servers.call_tool("near__whoami")).content[0].text.split()[0])

trio.run(main)
""",
        encoding="utf-8",
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env={**os.environ, "PYTHONPATH": str(Path(trio_mcp.__file__).parent.parent)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    far, near = done.stdout.splitlines()
    assert far.startswith("failed ConfigError server 'far' cannot be started")
    assert "pip install 'trio-mcp[http]'" in far
    assert near == "ready near"
