"""The command line and logins: ``login``, ``logout``, and the one line of a server that needs a login."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from process_support import ServerProcess, hostile_server, server_process

from trio_mcp.auth import ClientInfo, FileTokenStorage, Tokens
from trio_mcp.cli import EXIT_CODES, EXIT_LOGIN
from trio_mcp.cli._login import resource_covers

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 60


def env(state: Path) -> dict[str, str]:
    environ = {
        k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["XDG_STATE_HOME"] = str(state)
    environ["COLUMNS"] = "100"
    return environ


async def cli(state: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(LIMIT):
        return await trio.run_process(
            [sys.executable, "-m", "trio_mcp", *args],
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
            env=env(state),
            check=False,
        )


def test_the_login_exit_status_is_its_own() -> None:
    assert EXIT_LOGIN == 10
    assert "login" in EXIT_CODES[EXIT_LOGIN]
    assert list(EXIT_CODES).count(EXIT_LOGIN) == 1


@pytest.mark.parametrize(
    ("resource", "url", "covers"),
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/mcp", "https://MCP.example.com:443/mcp/", True),
        ("https://mcp.example.com", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp2", False),
        ("https://mcp.example.com/mcp", "http://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp", "https://mcp.example.com:8443/mcp", False),
        ("https://mcp.example.com/mcp", "https://evil.example.com/mcp", False),
        ("https://mcp.example.com/a/mcp", "https://mcp.example.com/mcp", False),
    ],
)
def test_which_kept_logins_are_a_servers(resource: str, url: str, covers: bool) -> None:
    assert resource_covers(resource, url) is covers


@pytest.mark.slow
async def test_a_server_that_needs_a_login_says_so_in_one_line(tmp_path: Path) -> None:
    with hostile_server(scenario="auth-401", target="all") as server:
        done = await cli(tmp_path, "tools", server.url)
        assert done.returncode == EXIT_LOGIN, done.stderr
        lines = done.stderr.decode().splitlines()
        assert lines == [
            f"trio-mcp: the server needs a login (HTTP 401, resource metadata at https://auth.example.com/.well-known/oauth-protected-resource/mcp): run trio-mcp login {server.url}"
        ]
        assert done.stdout == b""

        done = await cli(tmp_path, "--json", "call", "echo", "text=hi", server.url)
        assert done.returncode == EXIT_LOGIN
        error = json.loads(done.stdout)["error"]
        assert error["kind"] == "login"
        assert error["exitCode"] == EXIT_LOGIN
        assert error["loginCommand"] == f"trio-mcp login {server.url}"

        # With credentials of the caller's own, the line says they were refused.
        done = await cli(tmp_path, "tools", server.url, "--header", "Authorization: Bearer wrong-SECRET")
        assert done.returncode == EXIT_LOGIN
        text = done.stderr.decode()
        assert "refused the Authorization header given" in text
        assert "wrong-SECRET" not in text


@pytest.mark.slow
async def test_a_configured_server_that_needs_a_login_names_the_login_command(tmp_path: Path) -> None:
    with hostile_server(scenario="auth-401", target="all") as server:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"remote": {"url": server.url}}}))
        done = await cli(tmp_path, "--config", str(config), "--server", "remote", "tools")
        assert done.returncode == EXIT_LOGIN, done.stderr
        expected = f"trio-mcp: the server needs a login (HTTP 401, resource metadata at https://auth.example.com/.well-known/oauth-protected-resource/mcp): run trio-mcp login --server remote --config {config}"
        assert done.stderr.decode().splitlines() == [expected]


# ------------------------------------------------------------------ logout


async def _keep_login(
    state: Path, resource: str, issuer: str = "https://auth.example.com"
) -> FileTokenStorage:
    store = FileTokenStorage(state / "trio-mcp" / "auth")
    await store.set_client(resource, issuer, ClientInfo(client_id="c1", issuer=issuer))
    await store.set_tokens(resource, issuer, "c1", Tokens(access_token="at-SECRET"))
    return store


@pytest.mark.slow
async def test_logout_forgets_the_servers_logins_only(tmp_path: Path) -> None:
    url = "https://mcp.example.com/mcp"
    store = await _keep_login(tmp_path, url)
    await _keep_login(tmp_path, url, "https://other-issuer.example.com")
    await _keep_login(tmp_path, "https://other.example.com/mcp")

    done = await cli(tmp_path, "logout", url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == f"logged out of {url}\n"
    assert await store.resources() == [("https://other.example.com/mcp", "https://auth.example.com")]

    # Again: nothing to forget, said on stderr; still a success.
    done = await cli(tmp_path, "--json", "logout", url)
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"logout": {"server": url, "forgotten": []}}


@pytest.mark.slow
async def test_logout_of_a_configured_server(tmp_path: Path) -> None:
    url = "https://mcp.example.com/mcp"
    store = await _keep_login(tmp_path, url)
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"remote": {"url": url}, "local": {"command": "python3", "args": ["x.py"]}}}
        )
    )
    done = await cli(tmp_path, "logout", "--server", "remote", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == "logged out of --server remote\n"
    assert await store.resources() == []

    done = await cli(tmp_path, "logout", "--server", "local", "--config", str(config))
    assert done.returncode == 9
    assert "started as a command" in done.stderr.decode()
    done = await cli(tmp_path, "logout", "--server", "nope", "--config", str(config))
    assert done.returncode == 9
    assert "no server named 'nope'" in done.stderr.decode()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["logout"], "logout needs the server's URL, or --server NAME"),
        (["logout", "--", "python3", "server.py"], "applies to a server reached by URL"),
    ],
)
@pytest.mark.slow
async def test_logout_usage(tmp_path: Path, argv: list[str], message: str) -> None:
    done = await cli(tmp_path, *argv)
    assert done.returncode == 2
    assert message in done.stderr.decode()


# ------------------------------------------------------------------ groups


async def _requests_seen(base: str) -> int:
    import httpx2

    async with httpx2.AsyncClient() as http:
        stats = (await http.get(f"{base}/stats")).json()
    return sum(count for method, count in stats["requests"].items() if method != "GET /stats")


@pytest.mark.slow
async def test_a_group_server_that_needs_a_login_waits_for_it_and_never_loops() -> None:
    from trio_mcp import AuthRequired, RestartPolicy, ServerSpec, open_servers

    events: list[str] = []
    again = trio.Event()

    def on_event(event: object) -> None:
        events.append(event.state)  # type: ignore[attr-defined]
        if events.count("needs-login") == 2:
            again.set()

    with hostile_server(scenario="auth-401", target="all") as server:
        spec = ServerSpec(name="remote", transport="http", url=server.url, startup_timeout=20)
        # A policy that would restart a failed server at once, and forever.
        policy = RestartPolicy(initial_delay=0.01, max_delay=0.01, max_restarts=1000, max_start_failures=1000)
        with trio.fail_after(LIMIT):
            async with open_servers([spec], restart=policy, on_event=on_event) as group:
                [status] = group.statuses()
                assert status.state == "needs-login"
                assert isinstance(status.error, AuthRequired)
                assert status.restarts == 0
                seen = await _requests_seen(server.base)
                await trio.sleep(1.0)  # a restart loop would have tried many times by now
                assert group.statuses()[0].state == "needs-login"
                assert await _requests_seen(server.base) == seen
                with pytest.raises(AuthRequired):
                    await group.client("remote")
                # Once logged in, restart() tries again (here it still needs one).
                group.restart("remote")
                await again.wait()
                assert await _requests_seen(server.base) > seen
    assert "failed" not in events
    assert "restarting" not in events


@pytest.mark.slow
async def test_servers_shows_the_server_that_needs_a_login(tmp_path: Path) -> None:
    with hostile_server(scenario="auth-401", target="all") as server:
        config = tmp_path / "mcp.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "remote": {"url": server.url},
                        "local": {"command": sys.executable, "args": ["-m", "trio_mcp.demo"]},
                    }
                }
            )
        )
        done = await cli(tmp_path, "--config", str(config), "servers")
        assert done.returncode == 0, done.stderr
        rows = {line.split()[0]: line for line in done.stdout.decode().splitlines()[1:]}
        assert rows["local"].split()[1] == "ready"
        assert rows["remote"].split()[1] == "needs-login"
        assert rows["remote"].endswith(f"needs a login: run trio-mcp login --server remote --config {config}")

        done = await cli(tmp_path, "--json", "--config", str(config), "servers")
        records = {record["name"]: record for record in json.loads(done.stdout)["servers"]}
        assert records["remote"]["state"] == "needs-login"
        assert records["remote"]["restarts"] == 0

        done = await cli(tmp_path, "--config", str(config), "tools")
        assert done.returncode == 0, done.stderr
        said = (
            f"trio-mcp: server 'remote' needs a login: run trio-mcp login --server remote --config {config}"
        )
        assert done.stderr.decode().splitlines() == [said + ": its tools are not listed"]
        assert "local__echo" in done.stdout.decode()


# ------------------------------------------------------------------ login, against a real authorization server

AUTH_SERVER = ROOT / "tests" / "servers" / "auth_server.py"
FAKE_BROWSER = ROOT / "tests" / "fake_browser.py"


@contextlib.contextmanager
def auth_server() -> Iterator[ServerProcess]:
    with server_process([sys.executable, str(AUTH_SERVER)], r"^LISTENING (\d+)$", path="/s/ok/mcp") as server:
        yield server


def scenario_url(server: ServerProcess, scenario: str) -> str:
    return f"{server.base}/s/{scenario}/mcp"


async def login_headless(
    state: Path, *args: str, think: float = 0.0
) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """``trio-mcp login --headless ...``, the user opening the printed URL and pasting the address back
    (after ``think`` seconds)."""
    import httpx2

    env_ = env(state)
    with trio.fail_after(LIMIT):
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "trio_mcp", "login", "--headless", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env_,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        err = b""
        while b"\n  http" not in err or not err.rstrip().endswith(b"does not load):"):
            chunk = await process.stderr.receive_some(4096)
            if not chunk:
                break
            err += chunk
        lines = [line.strip() for line in err.decode().splitlines() if line.startswith("  http")]
        pasted = ""
        if lines:
            async with httpx2.AsyncClient(trust_env=False) as browser:
                answer = await browser.get(lines[0], follow_redirects=False)
            pasted = answer.headers.get("location", "")
            await trio.sleep(think)
            await process.stdin.send_all(pasted.encode() + b"\n")
        await process.stdin.aclose()
        out = b""
        async with trio.open_nursery() as nursery:

            async def drain_err() -> None:
                nonlocal err
                async for chunk in process.stderr:  # type: ignore[union-attr]
                    err += chunk

            nursery.start_soon(drain_err)
            async for chunk in process.stdout:
                out += chunk
        code = await process.wait()
    return subprocess.CompletedProcess(process.args, code, out, err), pasted


@pytest.mark.slow
async def test_headless_login_then_every_command_uses_it_then_logout(tmp_path: Path) -> None:
    with auth_server() as server:
        url = scenario_url(server, "ok")
        before = await cli(tmp_path, "call", "echo", "text=hi", url)
        assert before.returncode == EXIT_LOGIN, before.stderr
        assert f"run trio-mcp login {url}" in before.stderr.decode()

        done, pasted = await login_headless(tmp_path, url)
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode() == f"logged in to {url}\n"
        assert "code=" in pasted
        # The code printed nowhere but in the URL the user pasted.
        code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(pasted).query))["code"]
        assert code not in done.stderr.decode()
        assert code not in done.stdout.decode()

        # Kept in the file store, private.
        store = tmp_path / "trio-mcp" / "auth" / "credentials.json"
        assert stat.S_IMODE(os.stat(store).st_mode) == 0o600

        listed = await cli(tmp_path, "tools", url)
        assert listed.returncode == 0, listed.stderr
        assert "echo" in listed.stdout.decode()

        # Calling a tool needs more scope than the first login asked for: one line says which.
        called = await cli(tmp_path, "call", "echo", "text=hi", url)
        assert called.returncode == EXIT_LOGIN, called.stderr
        assert (
            called.stderr.decode().splitlines()[-1].endswith(f"run trio-mcp login {url} --scope tools:call")
        )
        done, _ = await login_headless(tmp_path, url, "--scope", "tools:call")
        assert done.returncode == 0, done.stderr
        called = await cli(tmp_path, "call", "echo", "text=hi", url)
        assert called.returncode == 0, called.stderr
        assert called.stdout.decode().strip() == "hi"

        again = await cli(tmp_path, "login", url)
        assert again.returncode == 0, again.stderr
        assert again.stdout.decode().startswith(f"already logged in to {url}")

        out = await cli(tmp_path, "logout", url)
        assert out.returncode == 0, out.stderr
        after = await cli(tmp_path, "call", "echo", "text=hi", url)
        assert after.returncode == EXIT_LOGIN


@pytest.mark.slow
async def test_loopback_login_through_the_browser(tmp_path: Path) -> None:
    """The browser (``BROWSER``) follows the authorization server back to the command's listener."""
    with auth_server() as server:
        url = scenario_url(server, "ok")
        environ = env(tmp_path)
        environ["BROWSER"] = f"{sys.executable} {FAKE_BROWSER} %s"
        with trio.fail_after(LIMIT):
            done = await trio.run_process(
                [sys.executable, "-m", "trio_mcp", "--json", "login", url],
                stdin=subprocess.DEVNULL,
                capture_stdout=True,
                capture_stderr=True,
                env=environ,
                check=False,
            )
        assert done.returncode == 0, done.stderr
        record = json.loads(done.stdout)["login"]
        assert record["outcome"] == "done"
        assert record["server"] == url
        assert "Opening a browser to log in" in done.stderr.decode()
        called = await cli(tmp_path, "tools", url)
        assert called.returncode == 0, called.stderr
        assert "echo" in called.stdout.decode()


@pytest.mark.slow
async def test_a_refused_login_says_why_with_the_login_status(tmp_path: Path) -> None:
    with auth_server() as server:
        url = scenario_url(server, "denied")
        done, _ = await login_headless(tmp_path, url)
        assert done.returncode == EXIT_LOGIN, done.stderr
        lines = done.stderr.decode().splitlines()
        assert lines[-1].startswith(f"trio-mcp: the login to {url} failed:")
        assert "access_denied" in lines[-1] or "refused" in lines[-1] or "denied" in lines[-1]


@pytest.mark.slow
async def test_login_of_a_configured_server_serves_the_group_and_the_commands(tmp_path: Path) -> None:
    with auth_server() as server:
        url = scenario_url(server, "ok")
        config = tmp_path / "mcp.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "remote": {"url": url},
                        "keyed": {"url": url, "headers": {"Authorization": "Bearer my-own"}},
                    }
                }
            )
        )
        table = await cli(tmp_path, "--config", str(config), "servers")
        assert "needs-login" in table.stdout.decode()

        done, _ = await login_headless(tmp_path, "--server", "remote", "--config", str(config))
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode() == "logged in to --server remote\n"

        table = await cli(tmp_path, "--json", "--config", str(config), "servers")
        states = {record["name"]: record["state"] for record in json.loads(table.stdout)["servers"]}
        # The entry with its own Authorization header never uses the kept login.
        assert states == {"remote": "ready", "keyed": "needs-login"}
        called = await cli(tmp_path, "--config", str(config), "--server", "remote", "call", "echo", "text=hi")
        assert called.returncode == EXIT_LOGIN, called.stderr
        wanted = f"run trio-mcp login --server remote --config {config} --scope tools:call"
        assert called.stderr.decode().splitlines()[-1].endswith(wanted)
        done, _ = await login_headless(
            tmp_path, "--server", "remote", "--config", str(config), "--scope", "tools:call"
        )
        assert done.returncode == 0, done.stderr
        called = await cli(tmp_path, "--config", str(config), "call", "remote.echo", "text=hi")
        assert called.returncode == 0, called.stderr
        assert called.stdout.decode().strip() == "hi"

        refused = await cli(tmp_path, "login", "--server", "keyed", "--config", str(config))
        assert refused.returncode == 9
        assert "Authorization header of its own" in refused.stderr.decode()


@pytest.mark.slow
async def test_login_to_a_server_that_needs_none(tmp_path: Path) -> None:
    with hostile_server() as server:
        done = await cli(tmp_path, "login", server.url)
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode() == f"{server.url} needs no login\n"
    assert not (tmp_path / "trio-mcp" / "auth" / "credentials.json").exists()


@pytest.mark.slow
async def test_login_whose_authorization_server_cannot_be_reached_says_why(tmp_path: Path) -> None:
    # The challenge names protected resource metadata on a host that does not answer here.
    with hostile_server(scenario="auth-401", target="all") as server:
        done = await cli(tmp_path, "login", "--headless", server.url)
    assert done.returncode == EXIT_LOGIN, done.stderr
    lines = done.stderr.decode().splitlines()
    assert lines[-1].startswith(f"trio-mcp: the login to {server.url} failed:")
    # Nothing was asked of the user.
    assert "To log in, open this URL" not in done.stderr.decode()


@pytest.mark.slow
async def test_a_person_may_take_longer_than_the_probe_and_the_timeout(tmp_path: Path) -> None:
    """The login runs inside the era probe (bounded at 10 s) and the command's --timeout: neither cuts the person."""
    with auth_server() as server:
        url = scenario_url(server, "ok")
        done, _ = await login_headless(tmp_path, "--timeout", "8", url, think=12.0)
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode() == f"logged in to {url}\n"
        # One authorization, not a second one after a cut first.
        assert done.stderr.decode().count("To log in, open this URL") == 1


def test_a_configuration_entry_chooses_dpop_for_its_login() -> None:
    from trio_mcp import parse_config

    config = parse_config(
        {
            "mcpServers": {
                "off": {"url": "https://a.example/mcp", "dpop": False},
                "on": {"url": "https://b.example/mcp", "dpop": True},
                "default": {"url": "https://c.example/mcp"},
                "local": {"command": "x", "dpop": True},
                "wrong": {"url": "https://d.example/mcp", "dpop": "yes"},
            }
        },
        environ={},
    )
    assert config.servers["off"].dpop is False
    assert config.servers["on"].dpop is True
    assert config.servers["default"].dpop is None
    assert config.servers["local"].dpop is None
    assert any("dpop" in warning for warning in config.warnings)
    assert "dpop" in str(config.invalid["wrong"])


def test_login_takes_dpop_or_no_dpop_but_not_both() -> None:
    from trio_mcp.cli._args import UsageError, parse_args

    assert parse_args(["login", "--no-dpop", "https://x.example/mcp"]).dpop is False
    assert parse_args(["login", "--dpop", "https://x.example/mcp"]).dpop is True
    assert parse_args(["login", "https://x.example/mcp"]).dpop is None
    with pytest.raises((UsageError, SystemExit)):
        parse_args(["login", "--dpop", "--no-dpop", "https://x.example/mcp"])
