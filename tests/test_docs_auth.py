"""Every example of docs/auth.rst runs, against servers that need a login.

The page includes its examples from docs/examples/ (``.. literalinclude::``);
each is run here, with what it needs around it: a server that wants a login,
logins kept in a state directory of the test's own. Console sessions run
each ``$ COMMAND`` with ``/bin/sh``, ``trio-mcp`` being ``python -m
trio_mcp`` with the Python running the tests; the lines after a command are
compared with its output (stdout and stderr together), ``...`` inside a line
standing for any text. A command must exit with status 0 unless the next one
is ``echo $?``, which shows the status expected. The URL
``http://127.0.0.1:8000/mcp`` stands for the server started for the example.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from process_support import hostile_server, server_process

from trio_mcp.auth import ClientInfo, FileTokenStorage, Tokens

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGE = DOCS / "auth.rst"
PLACEHOLDER = "http://127.0.0.1:8000/mcp"
AUTH_SERVER = ROOT / "tests" / "servers" / "auth_server.py"
FAKE_BROWSER = ROOT / "tests" / "fake_browser.py"
LIMIT = 60

INCLUDE = re.compile(r"^\.\. literalinclude:: (\S+)\s*$", re.MULTILINE)


def included() -> list[str]:
    return INCLUDE.findall(PAGE.read_text(encoding="utf-8"))


def stand_ins(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    script = folder / "trio-mcp"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m trio_mcp "$@"\n')
    script.chmod(0o755)
    return folder


def example_env(tmp_path: Path) -> dict[str, str]:
    environ = {
        k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    environ["PATH"] = f"{stand_ins(tmp_path / 'bin')}{os.pathsep}{environ.get('PATH', '')}"
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["XDG_STATE_HOME"] = str(tmp_path / "state")
    # The user's browser: it follows the authorization server back to the listener.
    environ["BROWSER"] = f"{sys.executable} {FAKE_BROWSER} %s"
    environ["COLUMNS"] = "100"
    return environ


def output_matches(expected: list[str], actual: str) -> bool:
    """Whether ``actual`` reads as ``expected``: a line ``...`` is any number of lines, ``...`` in a line any text."""
    lines = actual.rstrip("\n").split("\n") if actual.strip() else []

    def line_matches(want: str, got: str) -> bool:
        pattern = ".*".join(re.escape(piece) for piece in want.rstrip().split("..."))
        return re.fullmatch(pattern, got.rstrip()) is not None

    def match(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(lines)
        if expected[i].strip() == "...":
            return any(match(i + 1, k) for k in range(j, len(lines) + 1))
        return j < len(lines) and line_matches(expected[i], lines[j]) and match(i + 1, j + 1)

    return match(0, 0)


def run_console(name: str, env: dict[str, str], url: str) -> None:
    text = (DOCS / name).read_text(encoding="utf-8").replace(PLACEHOLDER, url)
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    status = 0
    for i, (command, expected) in enumerate(steps):
        if command == "echo $?":
            assert [str(status)] == expected, f"{name}: {steps[i - 1][0]!r} exited with {status}"
            continue
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            timeout=LIMIT,
            check=False,
        )
        status = done.returncode
        out = done.stdout.decode()
        assert output_matches(expected, out), f"{name}: {command!r} printed:\n{out}"
        checked = i + 1 < len(steps) and steps[i + 1][0] == "echo $?"
        assert checked or status == 0, f"{name}: {command!r} exited with {status}:\n{out}"


async def keep_login(env: dict[str, str], resource: str) -> None:
    store = FileTokenStorage(Path(env["XDG_STATE_HOME"]) / "trio-mcp" / "auth")
    issuer = "https://auth.example.com"
    await store.set_client(resource, issuer, ClientInfo(client_id="c1", issuer=issuer))
    await store.set_tokens(resource, issuer, "c1", Tokens(access_token="at"))


# ------------------------------------------------------------------ the examples

RUNS: dict[str, str] = {}


def runs(name: str):
    def mark(test):
        RUNS[name] = test.__name__
        return test

    return mark


@runs("examples/login.console")
async def test_login(tmp_path: Path) -> None:
    with server_process([sys.executable, str(AUTH_SERVER)], r"^LISTENING (\d+)$") as server:
        url = f"{server.base}/s/ok/mcp"
        await trio.to_thread.run_sync(run_console, "examples/login.console", example_env(tmp_path), url)


@runs("examples/app_login.py")
async def test_app_login(tmp_path: Path) -> None:
    env = example_env(tmp_path)
    with server_process([sys.executable, str(AUTH_SERVER)], r"^LISTENING (\d+)$") as server:
        url = f"{server.base}/s/ok/mcp"
        program = tmp_path / "app_login.py"
        program.write_text((DOCS / "examples" / "app_login.py").read_text().replace(PLACEHOLDER, url))
        with trio.fail_after(LIMIT):
            done = await trio.run_process(
                [sys.executable, str(program)], capture_stdout=True, capture_stderr=True, env=env, check=False
            )
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode() == "logged in\n"
        # It logged in through the browser (twice: the login, then the step-up for tools/call) ...
        assert done.stderr.decode().count("Opening a browser to log in") == 2
        # ... and the login is the command line's too.
        with trio.fail_after(LIMIT):
            listed = await trio.run_process(
                ["trio-mcp", "call", "echo", "text=shared", url],
                capture_stdout=True,
                capture_stderr=True,
                env=env,
                check=False,
            )
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.decode() == "shared\n"


@runs("examples/needs_login.console")
async def test_needs_login(tmp_path: Path) -> None:
    with hostile_server(scenario="auth-401", target="all") as server:
        await trio.to_thread.run_sync(
            run_console, "examples/needs_login.console", example_env(tmp_path), server.url
        )


@runs("examples/logout.console")
async def test_logout(tmp_path: Path) -> None:
    env = example_env(tmp_path)
    url = "http://127.0.0.1:9/mcp"  # logout reaches no server
    await keep_login(env, url)
    await trio.to_thread.run_sync(run_console, "examples/logout.console", env, url)


@runs("examples/list_logins.py")
async def test_list_logins(tmp_path: Path) -> None:
    env = example_env(tmp_path)
    await keep_login(env, "https://mcp.example.com/mcp")
    with trio.fail_after(LIMIT):
        done = await trio.run_process(
            [sys.executable, str(DOCS / "examples" / "list_logins.py")],
            capture_stdout=True,
            capture_stderr=True,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == "https://mcp.example.com/mcp logged in at https://auth.example.com\n"


def test_every_example_of_the_page_runs() -> None:
    names = included()
    assert names, "the page includes no example"
    assert sorted(names) == sorted(RUNS), "an example of docs/auth.rst that no test runs, or the reverse"
    assert not [path for path in (DOCS / "examples").iterdir() if f"examples/{path.name}" not in names]


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        (["a ... c"], "a b c\n", True),
        (["a ... c"], "a b d\n", False),
        (["x"], "x\ny\n", False),
        ([], "", True),
        (["a", "...", "d"], "a\nb\nc\nd\n", True),
        (["a", "...", "d"], "a\nd\n", True),
        (["a", "...", "d"], "a\nb\n", False),
    ],
)
def test_the_comparison_itself(expected: list[str], actual: str, matches: bool) -> None:
    assert output_matches(expected, actual) is matches
