"""The ``trio-mcp`` command against real servers: ``complete``, schema-typed arguments, ``shell``.

Each test runs the command as a process (``python -m trio_mcp ... --
SERVER``) against a peer: server-everything (TypeScript SDK, initialize
era) and our server on the official Python SDK (both eras); the shell is
driven with piped stdin.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 90
TEMPLATE = "demo://resource/dynamic/text/{resourceId}"


def trio_mcp(peer, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ)
    environ.update(peer.env)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["TRIO_MCP_HISTORY"] = ""
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args, "--", *peer.cmd],
        input=stdin,
        capture_output=True,
        text=True,
        env=environ,
        timeout=LIMIT,
        check=False,
    )


def test_everything_completes_prompt_arguments_with_context(everything_server):
    departments = trio_mcp(everything_server, "complete", "prompt", "completable-prompt", "department")
    assert departments.returncode == 0, departments.stderr
    assert "Engineering" in departments.stdout.splitlines()
    # The department already chosen narrows the names.
    names = trio_mcp(
        everything_server,
        "--json",
        "complete",
        "prompt",
        "completable-prompt",
        "name",
        "department=Engineering",
    )
    assert names.returncode == 0, names.stderr
    engineering = json.loads(names.stdout)["values"]
    sales = trio_mcp(
        everything_server, "--json", "complete", "prompt", "completable-prompt", "name", "department=Sales"
    )
    assert engineering
    assert engineering != json.loads(sales.stdout)["values"]


def test_everything_completes_a_template_argument(everything_server):
    result = trio_mcp(everything_server, "complete", "template", TEMPLATE, "resourceId=1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1\n"


def test_everything_arguments_are_read_by_the_schema(everything_server):
    # get-sum declares numbers; get-annotated-message a boolean; echo a string.
    result = trio_mcp(everything_server, "call", "get-sum", "a=1", "b=2.5")
    assert result.returncode == 0, result.stderr
    assert "3.5" in result.stdout
    result = trio_mcp(everything_server, "call", "echo", "message=42")
    assert result.returncode == 0, result.stderr
    assert "42" in result.stdout
    result = trio_mcp(everything_server, "call", "get-sum", "a=1", "b=many")
    assert result.returncode == 2
    assert result.stderr == "trio-mcp: argument 'b': expected a number, got 'many' (the tool 'get-sum')\n"


def test_everything_unknown_tools_and_missing_arguments_are_refused_before_sending(everything_server):
    # The CLI has the server's list: a typo and a missing required argument
    # never reach the server (which would answer "Unknown tool" without a hint).
    result = trio_mcp(everything_server, "call", "get-summ", "a=1", "b=2")
    assert result.returncode == 2
    assert (
        result.stderr
        == "trio-mcp: the server has no tool 'get-summ' (did you mean 'get-sum'?); nothing was sent\n"
    )
    result = trio_mcp(everything_server, "call", "get-sum", "a=2")
    assert result.returncode == 2
    assert result.stderr == "trio-mcp: the tool 'get-sum' needs the argument 'b' (b=...); nothing was sent\n"


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_sdk_server_completes_in_both_eras(sdk_server, protocol):
    prompt = trio_mcp(sdk_server, "--protocol", protocol, "complete", "prompt", "review", "language=p")
    assert prompt.returncode == 0, prompt.stderr
    assert prompt.stdout == "python\nperl\nphp\n"
    template = trio_mcp(
        sdk_server, "--protocol", protocol, "complete", "template", "test://items/{item_id}", "item_id=1"
    )
    assert template.returncode == 0, template.stderr
    assert template.stdout == "1\n10\n"


def test_everything_in_the_shell(everything_server):
    commands = [
        "call echo message=hello",
        "call get-sum a=2 b=3",
        "call get-sum a=2 b=three",
        f"complete template {TEMPLATE} resourceId=1",
        "prompt args-prompt city=Paris",
        "--json info",
    ]
    result = trio_mcp(everything_server, "shell", stdin="\n".join(commands) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Echo: hello" in out
    assert "The sum of 2 and 3 is 5." in out
    assert "\n1\n" in out
    assert "Paris" in out
    info = json.loads(out[out.rindex("\n{\n") :])
    assert info["serverInfo"]["name"] == "mcp-servers/everything"
    assert result.stderr == "trio-mcp: argument 'b': expected a number, got 'three' (the tool 'get-sum')\n"


def run_config(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["TRIO_MCP_HISTORY"] = ""
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", "--config", str(config), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=environ,
        timeout=LIMIT,
        check=False,
    )


def test_everything_one_shot_commands_across_a_config_see_every_tool(everything_server, tmp_path):
    # server-everything hides the tools that need elicitation from a client
    # that declares no elicitation: "tools" across the configuration must
    # see what "--server everything tools" and the shell see.
    config = tmp_path / "mcp.json"
    entry = {
        "command": everything_server.cmd[0],
        "args": list(everything_server.cmd[1:]),
        "env": everything_server.env,
    }
    config.write_text(json.dumps({"mcpServers": {"everything": entry}}))
    across = run_config(config, "--json", "tools")
    assert across.returncode == 0, across.stderr
    one = run_config(config, "--json", "--server", "everything", "tools")
    assert one.returncode == 0, one.stderr
    across_names = {tool["name"] for tool in json.loads(across.stdout)["tools"]}
    one_names = {tool["name"] for tool in json.loads(one.stdout)["tools"]}
    assert "trigger-elicitation-request" in one_names
    assert across_names == {f"everything__{name}" for name in one_names} or across_names == one_names
    servers = run_config(config, "--json", "servers")
    assert json.loads(servers.stdout)["servers"][0]["tools"] == len(one_names)


def test_filesystem_read_text_file_prints_the_text_once(filesystem_server, tmp_path):
    # Its structured content, {"content": TEXT}, says what its text says.
    (tmp_path / "note.txt").write_text("hello world\n")
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "trio_mcp",
            "call",
            "read_text_file",
            f"path={tmp_path / 'note.txt'}",
            "--",
            *filesystem_server.cmd,
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=environ,
        timeout=LIMIT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello world\n"


def test_everything_ctrl_c_on_a_call_ends_promptly_and_says_so(everything_server):
    # server-everything does not leave when its stdin closes: the command
    # gives it less than a second after Ctrl-C, not the two of a normal close.
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    argv = [
        sys.executable,
        "-m",
        "trio_mcp",
        "call",
        "trigger-long-running-operation",
        "duration=30",
        "steps=10",
    ]
    process = subprocess.Popen(
        [*argv, "--", *everything_server.cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
    )
    try:
        assert process.stderr is not None
        assert "progress" in process.stderr.readline()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=LIMIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    assert stderr == "trio-mcp: interrupted (tools/call): the request was cancelled and the server stopped\n"
