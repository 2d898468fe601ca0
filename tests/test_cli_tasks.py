"""``trio-mcp tasks``, run as a person runs it: a process per command, stdin not a terminal.

* ``tasks start`` against the demo server in both eras: the status changes
  on stderr, the result on stdout; a task that fails (exit 6), a result
  flagged ``isError`` (exit 1), a tool the server runs at once, ``--detach``
  (the id, or with ``--json`` the reference);
* ``tasks list``: the 2025-11-25 server's tasks; none in 2026-07-28 (exit 6);
* ``tasks status``, ``result``, ``cancel`` by id, each in a command of its own:
  against the demo server over HTTP (one server process outlives the
  commands), and over stdio
  against ``tests/servers/task_server.py``, which keeps its tasks in a file;
* usage errors (exit 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from task_support import http_demo_command, http_demo_url

ROOT = Path(__file__).resolve().parents[1]
TASK_SERVER = ROOT / "tests" / "servers" / "task_server.py"
LIMIT = 60
ERAS = [pytest.param("auto", id="2026-07-28"), pytest.param("2025-11-25", id="2025-11-25")]


def env() -> dict[str, str]:
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["COLUMNS"] = "100"
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        environ.pop(name, None)
    return environ


def run(*args: str, server: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "trio_mcp", *args]
    if server is not None:
        argv += ["--", *server]
    return subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env(), timeout=LIMIT, check=False
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result


def failed(result: subprocess.CompletedProcess[str], code: int) -> str:
    """Check the exit status, and that stderr ends with one ``trio-mcp`` error line; return it."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("trio-mcp"), result.stderr
    return last


# ------------------------------------------------------------ tasks start


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ERAS)
def test_start_shows_the_status_and_prints_the_result(protocol: str) -> None:
    result = ok(run("--protocol", protocol, "tasks", "start", "report", "steps=2", "delay=0.3"))
    assert result.stdout == "Report ready: 2 steps.\n"
    lines = [line for line in result.stderr.splitlines() if line.startswith("task ")]
    assert lines[0].split()[2] == "working"
    assert lines[-1].split()[2] == "completed"
    assert len({line.split()[1] for line in lines}) == 1  # one task


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ERAS)
def test_start_a_task_that_fails(protocol: str) -> None:
    result = run("--protocol", protocol, "tasks", "start", "batch", "fail_at=1", "delay=0")
    line = failed(result, 6)
    assert "error -32603: item 1 of 3 failed" in line
    assert result.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ERAS)
def test_start_a_task_whose_result_is_an_error(protocol: str) -> None:
    result = run("--protocol", protocol, "tasks", "start", "report", "--json", '{"steps": 0}')
    line = failed(result, 1)
    assert line.startswith("trio-mcp: the tool 'report' reported an error: Invalid arguments")


@pytest.mark.slow
def test_start_checks_argument_names_as_call_does() -> None:
    # A name the tool's schema forbids is refused, with the closest one, and no task starts.
    line = failed(run("tasks", "start", "report", "stpes=1", "delay=0"), 2)
    assert (
        line
        == "trio-mcp: the tool 'report' has no argument 'stpes' (did you mean 'steps'?); nothing was sent"
    )


@pytest.mark.slow
def test_start_a_tool_the_server_runs_at_once() -> None:
    result = ok(run("tasks", "start", "echo", "text=hi"))
    assert result.stdout == "hi\n"
    assert "the server ran 'echo' at once, not as a task" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ERAS)
def test_start_detached_prints_the_id_or_the_reference(protocol: str) -> None:
    plain = ok(run("--protocol", protocol, "tasks", "start", "report", "--detach"))
    assert len(plain.stdout.strip()) == 32
    as_json = json.loads(
        ok(run("--protocol", protocol, "--json", "tasks", "start", "report", "--detach")).stdout
    )
    assert as_json["tool"] == "report"
    assert as_json["era"] == ("modern" if protocol == "auto" else "legacy")
    assert len(as_json["taskId"]) == 32


@pytest.mark.slow
def test_an_empty_list_says_so_and_prints_nothing() -> None:
    result = ok(run("--protocol", "2025-11-25", "tasks", "list"))
    assert result.stdout == ""
    assert "the server has no tasks" in result.stderr


@pytest.mark.slow
def test_list_has_nothing_to_list_in_2026() -> None:
    line = failed(run("tasks", "list"), 6)
    assert "tasks cannot be listed" in line


# ------------------------------------------------------------ by id


@pytest.fixture
def http_demo() -> Iterator[str]:
    """The demo server behind a local HTTP front: one server process for every command."""
    front = subprocess.Popen(
        http_demo_command(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        env=env(),
        text=True,
    )
    try:
        assert front.stdout is not None
        yield http_demo_url(front.stdout.readline())
    finally:
        front.kill()
        front.wait()
        if front.stdout is not None:
            front.stdout.close()


@pytest.mark.slow
def test_status_result_and_cancel_by_id_over_http(http_demo: str) -> None:
    task_id = ok(
        run("tasks", "start", "report", "steps=3", "delay=0.3", "--detach", http_demo)
    ).stdout.strip()
    status = ok(run("tasks", "status", task_id, http_demo)).stdout.split()
    assert status[:2] == [task_id, "working"] or status[:2] == [task_id, "completed"]
    assert ok(run("tasks", "result", task_id, http_demo)).stdout == "Report ready: 3 steps.\n"
    assert (
        json.loads(ok(run("--json", "tasks", "status", task_id, http_demo)).stdout)["status"] == "completed"
    )
    # A long one, cancelled from another command.
    long_id = ok(run("tasks", "start", "batch", "items=100", "delay=1", "--detach", http_demo)).stdout.strip()
    assert ok(run("tasks", "cancel", long_id, http_demo)).stdout == f"{long_id}  cancel requested\n"
    assert ok(run("tasks", "status", long_id, http_demo)).stdout.split()[:2] == [long_id, "cancelled"]
    line = failed(run("tasks", "result", long_id, http_demo), 6)
    assert "cancelled" in line
    assert "does not know task" in failed(run("tasks", "status", "nope", http_demo), 6)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ERAS)
def test_a_stdio_server_that_keeps_its_tasks_answers_later_commands(tmp_path: Path, protocol: str) -> None:
    server = [sys.executable, str(TASK_SERVER), "--state", str(tmp_path / "tasks.json")]
    era = ["--protocol", protocol]
    started = ok(run(*era, "tasks", "start", "durable", "seconds=1", "--detach", server=server))
    task_id = started.stdout.strip()
    assert task_id.startswith("durable-")
    if protocol == "2025-11-25":
        listed = ok(run(*era, "tasks", "list", server=server)).stdout.splitlines()
        assert [line.split()[0] for line in listed] == [task_id]
    result = ok(run(*era, "tasks", "result", task_id, server=server))
    assert result.stdout.startswith("durable done (started by ")
    assert ok(run(*era, "tasks", "status", task_id, server=server)).stdout.split()[:2] == [
        task_id,
        "completed",
    ]


@pytest.mark.slow
def test_a_task_id_that_begins_with_a_dash_is_named_with_id(tmp_path: Path) -> None:
    """``--id=ID`` names any id a server can issue (``--`` introduces the server command)."""
    server = [sys.executable, str(TASK_SERVER), "--state", str(tmp_path / "tasks.json"), "--dash-ids"]
    task_id = ok(run("tasks", "start", "durable", "seconds=1", "--detach", server=server)).stdout.strip()
    assert task_id.startswith("-durable-")
    named = f"--id={task_id}"
    assert ok(run("tasks", "status", named, server=server)).stdout.split()[0] == task_id
    result = ok(run("tasks", "result", named, server=server))
    assert result.stdout.startswith("durable done (started by ")
    assert ok(run("--json", "tasks", "status", named, server=server)).stdout.count(task_id) == 1
    # An id that does not begin with a dash may be given either way.
    assert "does not know task" in failed(run("tasks", "cancel", "--id", "nope", server=server), 6)


# ------------------------------------------------------------ usage


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["tasks"], "expected one of start, list, status, result, cancel after 'tasks'"),
        (["tasks", "start"], "missing the tool's name"),
        (["tasks", "status"], "expected one task id: tasks status ID"),
        (["tasks", "cancel", "a", "b"], "expected one task id: tasks cancel ID"),
        (["tasks", "list", "x"], "unexpected words after 'tasks list': x"),
        (["tasks", "status", "a", "--detach"], "--detach goes with 'tasks start'"),
        (["tasks", "status", "a", "--id=b"], "one task id: tasks status ID"),
        (["tasks", "list", "--id=b"], "--id goes with 'tasks status|result|cancel'"),
        (["--config", "x.json", "tasks", "list"], "'tasks' talks to one server"),
    ],
)
def test_usage_errors(words: list[str], message: str) -> None:
    line = failed(run(*words), 2)
    assert message in line


def test_help_describes_the_actions() -> None:
    result = ok(run("tasks", "--help"))
    for word in ("tasks start TOOL", "tasks list", "tasks status ID", "tasks result ID", "tasks cancel ID"):
        assert word in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ERAS)
def test_in_the_shell_tasks_live_as_long_as_the_server(protocol: str) -> None:
    """One server process for the whole shell: a detached task is followed by id from the next lines."""
    shell = subprocess.Popen(
        [sys.executable, "-m", "trio_mcp", "--protocol", protocol, "shell"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
        text=True,
    )
    try:
        assert shell.stdin is not None
        assert shell.stdout is not None
        shell.stdin.write("tasks start report steps=2 delay=0.3 --detach\n")
        shell.stdin.flush()
        task_id = shell.stdout.readline().strip()
        assert len(task_id) == 32, task_id
        rest = f"tasks status {task_id}\ntasks result {task_id}\n"
        if protocol == "2025-11-25":
            rest += "tasks list\n"
        out, err = shell.communicate(rest, timeout=LIMIT)
    finally:
        shell.kill()
        shell.wait()
    assert shell.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].split()[0] == task_id
    assert lines[1] == "Report ready: 2 steps."
    if protocol == "2025-11-25":
        assert lines[2].split()[:2] == [task_id, "completed"]
