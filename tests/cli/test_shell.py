"""``trio-mcp complete``, ``trio-mcp shell``, schema-typed arguments and the server's stderr, end to end.

The commands run as real processes (``python -m trio_mcp ...``) against the
bundled demo server, the scripted server ``tests/servers/mcp_server.py``,
and ``tests/servers/stderr_server.py``, which talks on stderr. The shell is
driven with piped stdin, one command a line, and once on a pseudo-terminal
(Tab completion and the history file). Tab completion's choices and the
history file's place are also tested in-process, as pure functions.

Real processes, real clock: every wait is bounded, nothing asserts how long
anything took.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import REPO_ROOT, SERVERS_DIR
from terminal_support import Terminal

from trio_mcp import cli
from trio_mcp.cli._shell import Catalog, _template_variables, completions, history_path

ROOT = REPO_ROOT
SCRIPTED = ROOT / "tests" / "servers" / "mcp_server.py"
STDERR_SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "stderr_server.py")]
LIMIT = 60

TRACEBACK = [
    "  | Traceback (most recent call last):",
    '  |   File "server.py", line 12, in handle',
    "  | ValueError: the database is locked",
]


def env(**extra: str) -> dict[str, str]:
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["COLUMNS"] = "100"
    environ["TRIO_MCP_HISTORY"] = ""
    environ.update(extra)
    return environ


def run(*args: str, server: list[str] | None = None, stdin: str | None = None):
    """Run ``trio-mcp ARGS... [-- SERVER...]``, with ``stdin`` piped in (default: nothing)."""
    argv = [sys.executable, "-m", "trio_mcp", *args]
    if server is not None:
        argv += ["--", *server]
    return subprocess.run(
        argv,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env(),
        timeout=LIMIT,
        check=False,
    )


def shell(*lines: str, server: list[str] | None = None, args: tuple[str, ...] = ()):
    return run(*args, "shell", server=server, stdin="".join(line + "\n" for line in lines))


def no_traceback_of_ours(result) -> None:
    assert (
        "trio_mcp" not in result.stderr or "Traceback (most recent call last):\n  File" not in result.stderr
    )


# ------------------------------------------------------------------ complete


@pytest.mark.slow
def test_complete_a_prompt_argument():
    result = run("complete", "prompt", "greet", "name=A")
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stdout == "Ada\nAlan\nAlice\n"
    assert result.stderr == ""


@pytest.mark.slow
def test_complete_a_template_argument_with_every_suggestion_and_json_output():
    result = run("complete", "template", "demo://greeting/{name}", "name")
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stdout.splitlines()[:3] == ["Ada", "Alan", "Alice"]
    assert len(result.stdout.splitlines()) == 14
    result = run("--json", "complete", "template", "demo://greeting/{name}", "name=ed")
    assert json.loads(result.stdout) == {"values": ["Edsger"], "total": 1, "hasMore": False}


@pytest.mark.slow
def test_complete_says_when_there_are_no_suggestions():
    result = run("complete", "prompt", "greet", "name=Zz")
    assert result.returncode == cli.EXIT_OK
    assert result.stdout == ""
    assert result.stderr == "(no suggestions)\n"


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_complete_sends_the_reference_argument_and_context(era):
    # The scripted server suggests names starting with the value; context is part of the request.
    server = [sys.executable, str(SCRIPTED), "--era", era]
    result = run("--json", "complete", "prompt", "greet", "name=b", "other=x", server=server)
    assert result.returncode == cli.EXIT_OK, result.stderr
    completion = json.loads(result.stdout)
    assert completion["values"]
    assert all(value.lower().startswith("b") for value in completion["values"])


@pytest.mark.slow
def test_complete_without_the_capability_is_a_clear_error():
    # The demo declares completions from 2025-03-26 on: not in 2024-11-05.
    result = run("--protocol", "2024-11-05", "complete", "prompt", "greet", "name=A")
    assert result.returncode == cli.EXIT_RPC_ERROR
    assert result.stderr == (
        "trio-mcp: the server 'trio-mcp-demo' does not offer completions"
        " (its capabilities have no 'completions', at protocol version 2024-11-05)\n"
    )
    result = run("--json", "--protocol", "2024-11-05", "complete", "prompt", "greet", "name=A")
    error = json.loads(result.stdout)["error"]
    assert (error["kind"], error["capability"], error["exitCode"]) == ("unsupported", "completions", 6)


@pytest.mark.slow
def test_complete_an_unknown_prompt_is_the_servers_error():
    result = run("complete", "prompt", "nope", "name=A")
    assert result.returncode == cli.EXIT_RPC_ERROR
    assert "the server answered completion/complete with error -32602: unknown prompt 'nope'" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["complete"], "missing what to complete: 'prompt NAME' or 'template URI'"),
        (["complete", "tool", "x", "a"], "expected 'prompt NAME' or 'template URI' to complete, got 'tool'"),
        (["complete", "prompt"], "missing the prompt's name"),
        (["complete", "template"], "missing the template's URI template"),
        (["complete", "prompt", "greet"], "missing the argument to complete, as ARG or ARG=PREFIX"),
        (["complete", "prompt", "greet", "=x"], "expected the argument to complete as ARG or ARG=PREFIX"),
        (["complete", "prompt", "greet", "name=A", "ctx"], "expected an argument as KEY=VALUE, got 'ctx'"),
    ],
)
def test_complete_usage_errors(args, message, capsys):
    assert cli.run(args) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err


def test_parse_complete():
    options = cli.parse_args(["complete", "template", "u://{a}/{b}", "b=x=y", "a=1", "--json", '{"c": 2}'])
    assert (options.command, options.ref, options.target) == ("complete", "template", "u://{a}/{b}")
    assert options.argument == ("b", "x=y")
    assert options.arguments == {"c": "2", "a": "1"}


# ------------------------------------------------------------------ arguments by schema


@pytest.mark.slow
def test_call_arguments_are_read_by_the_schema():
    result = run("--json", "call", "add", "a=2", "b=0.5")
    assert json.loads(result.stdout)["structuredContent"] == {"sum": 2.5}
    result = run("call", "echo", "text=true")
    assert result.stdout == "true\n"


@pytest.mark.slow
def test_a_value_that_does_not_convert_is_a_usage_error_naming_it():
    result = run("call", "add", "a=1", "b=two")
    assert result.returncode == cli.EXIT_USAGE
    assert result.stderr == "trio-mcp: argument 'b': expected a number, got 'two' (the tool 'add')\n"
    result = run("--json", "call", "add", "a=1", "b=two")
    error = json.loads(result.stdout)["error"]
    assert (error["kind"], error["argument"], error["exitCode"]) == ("usage", "b", cli.EXIT_USAGE)


# ------------------------------------------------------------------ the server's stderr


@pytest.mark.slow
def test_a_tool_error_shows_what_the_server_wrote_to_stderr_meanwhile():
    result = run("call", "broken", server=STDERR_SERVER)
    assert result.returncode == cli.EXIT_TOOL_ERROR
    assert result.stderr.splitlines() == [
        "trio-mcp: the tool 'broken' reported an error: Error executing tool",
        "the server's stderr meanwhile (its last lines):",
        *TRACEBACK,
    ]


@pytest.mark.slow
def test_a_tool_that_succeeds_shows_no_stderr():
    result = run("call", "ok", server=STDERR_SERVER)
    assert (result.returncode, result.stdout, result.stderr) == (0, "fine\n", "")


@pytest.mark.slow
def test_an_rpc_error_shows_what_the_server_wrote_to_stderr_meanwhile():
    result = run("call", "refuse", server=STDERR_SERVER)
    assert result.returncode == cli.EXIT_RPC_ERROR
    assert result.stderr.splitlines() == [
        "trio-mcp: the server answered tools/call with error -32603: Internal error; its last stderr lines:",
        "  | refusing: no licence",
    ]


@pytest.mark.slow
def test_the_stderr_of_an_rpc_error_stops_at_the_answer():
    # The demo, verbose, says on stderr why it refused; and "end of input" once stopped, which is not shown.
    result = run("read", "demo://nope", server=[sys.executable, "-m", "trio_mcp.demo", "--verbose"])
    assert result.returncode == cli.EXIT_RPC_ERROR
    first, *tail = result.stderr.splitlines()
    assert first.endswith("; its last stderr lines:")
    assert len(tail) == 1
    assert tail[0].startswith("  | trio-mcp-demo: resources/read (id ")
    assert tail[0].endswith(") failed: resource not found: demo://nope")


@pytest.mark.slow
def test_verbose_streams_stderr_and_does_not_repeat_it():
    result = run("--verbose", "call", "broken", server=STDERR_SERVER)
    assert result.returncode == cli.EXIT_TOOL_ERROR
    lines = result.stderr.splitlines()
    assert "server stderr: starting up" in lines
    assert "server stderr: ValueError: the database is locked" in lines
    assert "the server's stderr meanwhile (its last lines):" not in lines
    assert lines[-1] == "trio-mcp: the tool 'broken' reported an error: Error executing tool"


@pytest.mark.slow
def test_a_server_that_crashes_during_a_call_shows_its_tail():
    result = run("call", "crash", server=STDERR_SERVER)
    assert result.returncode == cli.EXIT_SERVER_GONE
    first, *tail = result.stderr.splitlines()
    assert first.endswith("exited with code 1 during tools/call; its last stderr lines:")
    assert tail == ["  | starting up", *TRACEBACK]


# ------------------------------------------------------------------ the shell, piped


@pytest.mark.slow
def test_shell_runs_commands_against_one_server():
    result = shell(
        "tools",
        "call add a=1 b=2",
        "  # a comment, then an empty line",
        "",
        "call echo text=123 --json",
        "complete prompt greet name=Bo",
        "prompt greet name=Ada",
        "read demo://greeting/Bo",
        "info --json",
    )
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert out.startswith("echo - Echo\n")
    assert '3\nstructured content:\n{\n  "sum": 3\n}\n' in out
    assert '"text": "123"' in out
    assert "\nBob\n# A greeting for Ada\n[user]\n" in out
    assert "Hello, Bo!\n" in out
    assert out.endswith("}\n")


@pytest.mark.slow
def test_shell_starts_the_server_once(tmp_path):
    record = tmp_path / "record"
    server = [sys.executable, str(SCRIPTED), "--era", "modern", "--record", str(record)]
    result = shell("call echo text=a", "call echo text=b", "call add a=1 b=2", server=server)
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stdout.startswith("a\nb\n")
    starts = [line for line in record.read_text().splitlines() if line.startswith("#start")]
    assert len(starts) == 1


@pytest.mark.slow
def test_shell_goes_on_after_errors_and_exits_with_the_last_status():
    result = shell(
        "bogus",
        "call add a=1 b=x",
        "call nope",
        'call echo "unterminated',
        "call --protocol 2025-11-25 echo text=hi",
        "call echo text=hi -- other-server",
        "shell",
        "--json shell",
        "call add a=1 b=2",
        "call add a=1",
        "read demo://nope",
        "call slow steps=0",
    )
    assert result.returncode == cli.EXIT_TOOL_ERROR
    assert result.stdout.startswith("3\n")
    assert result.stderr.splitlines() == [
        (
            "trio-mcp: unknown command 'bogus' (one of info, tools, prompts, resources, templates, call, read,"
            " prompt, complete, log-level, tasks, help, exit, quit)"
        ),
        "trio-mcp: argument 'b': expected a number, got 'x' (the tool 'add')",
        (
            "trio-mcp: the server has no tool 'nope' (its tools: echo, add, slow, ask, report, batch);"
            " nothing was sent"
        ),
        "trio-mcp: cannot read the line: No closing quotation",
        "trio-mcp call: error: --protocol is an option of the shell, given when it starts",
        "trio-mcp call: error: the server is given when the shell starts, not to each command",
        (
            "trio-mcp: unknown command 'shell' (one of info, tools, prompts, resources, templates, call, read,"
            " prompt, complete, log-level, tasks, help, exit, quit)"
        ),
        "trio-mcp: error: this is the shell already",
        "trio-mcp: the tool 'add' needs the argument 'b' (b=...); nothing was sent",
        (
            "trio-mcp: the server answered resources/read with error -32602: resource not found: demo://nope"
            ' (data: {"uri":"demo://nope"})'
        ),
        "trio-mcp: the tool 'slow' reported an error: Invalid arguments for the slow tool: 'steps' must be at least 1, not 0.",
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("last", "status"), [("exit", cli.EXIT_RPC_ERROR), ("quit 0", 0), ("exit 3", 3)])
def test_shell_exit(last, status):
    result = shell("read demo://nope", last, "call echo text=never")
    assert result.returncode == status, result.stderr
    assert "never" not in result.stdout


@pytest.mark.slow
def test_shell_exit_with_a_bad_status_is_a_usage_error():
    result = shell("exit x", "exit")
    assert result.returncode == cli.EXIT_USAGE
    assert result.stderr == "trio-mcp: usage: exit [STATUS]\n"


@pytest.mark.slow
def test_shell_help():
    result = shell("help", "call --help")
    assert result.returncode == cli.EXIT_OK
    assert "  complete   complete an argument" in result.stdout
    assert "  exit       end the shell" in result.stdout
    assert "usage: trio-mcp call [OPTIONS] TOOL [KEY=VALUE...]" in result.stdout


@pytest.mark.slow
def test_shell_timeout_is_per_command_and_the_shell_goes_on():
    result = shell("call slow steps=3 delay=10 --timeout 1", "call echo text=after", args=("--timeout", "20"))
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert "trio-mcp: timed out after 1 s (tools/call)" in result.stderr.splitlines()
    assert result.stdout == "after\n"


@pytest.mark.slow
def test_shell_options_given_at_start_apply_to_every_command():
    result = shell("call add a=1 b=2", "tools", args=("--json",))
    assert result.returncode == cli.EXIT_OK, result.stderr
    decoder = json.JSONDecoder()
    first, end = decoder.raw_decode(result.stdout)
    assert first["structuredContent"] == {"sum": 3}
    second, _ = decoder.raw_decode(result.stdout[end:].lstrip())
    assert [tool["name"] for tool in second["tools"]][:2] == ["echo", "add"]


@pytest.mark.slow
def test_shell_server_that_dies_mid_session():
    result = shell("call ok", "call broken", "call crash", "call ok", server=STDERR_SERVER)
    assert result.returncode == cli.EXIT_SERVER_GONE
    assert result.stdout == "fine\n"
    no_traceback_of_ours(result)
    lines = result.stderr.splitlines()
    assert lines[:5] == [
        "trio-mcp: the tool 'broken' reported an error: Error executing tool",
        "the server's stderr meanwhile (its last lines):",
        *TRACEBACK,
    ]
    assert lines[5].startswith("trio-mcp: the server ")
    assert lines[5].endswith("exited with code 1 during tools/call; its last stderr lines:")
    assert lines[-3:] == TRACEBACK


@pytest.mark.slow
def test_shell_server_that_exits_between_commands():
    server = [sys.executable, str(SCRIPTED), "--era", "legacy"]
    result = shell("call exit code=5", "tools", server=server)
    assert result.returncode == cli.EXIT_SERVER_GONE
    assert result.stdout == "bye\n"
    assert "exited with code 5" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_shell_ends_when_the_server_dies_while_it_waits_for_a_line():
    # stdin stays open: the shell ends because the server died, not because the input did.
    server = [sys.executable, str(SCRIPTED), "--era", "legacy"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "trio_mcp", "shell", "--", *server],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write("call exit code=7\n")
        proc.stdin.flush()
        assert proc.wait(timeout=LIMIT) == cli.EXIT_SERVER_GONE
        assert proc.stdout is not None
        assert proc.stderr is not None
        assert proc.stdout.read() == "bye\n"
        error = proc.stderr.read()
        assert error.startswith("trio-mcp: the server ")
        assert error.endswith(" exited with code 7 while idle (it wrote nothing to stderr)\n")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.slow
def test_shell_that_cannot_start_its_server():
    result = shell("tools", server=["trio-mcp-no-such-server-here"])
    assert result.returncode == cli.EXIT_SPAWN
    assert "command not found" in result.stderr


@pytest.mark.slow
def test_shell_with_no_input_exits_at_once():
    result = shell()
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


# ------------------------------------------------------------------ the shell, on a terminal


@pytest.mark.slow
def test_shell_on_a_terminal_completes_and_keeps_history(tmp_path):
    pytest.importorskip("readline", reason="this Python has no readline")
    history = tmp_path / "state" / "trio-mcp" / "shell_history"
    environ = env(XDG_STATE_HOME=str(tmp_path / "state"))
    del environ["TRIO_MCP_HISTORY"]
    terminal = Terminal("shell", environ=environ)
    terminal.expect("trio-mcp> ")
    # Command, tool and argument names, each by Tab.
    terminal.send("ca\tad\ta\t1 b\t2\r")
    terminal.expect("3\r\n")
    terminal.expect_count("trio-mcp> ", 2)
    terminal.send("exit\r")
    code, output = terminal.finish()
    assert code == 0, output
    assert "call add a=1 b=2" in output
    assert history.read_text().splitlines()[-2:] == ["call add a=1 b=2", "exit"]
    # The next shell reads it: the up arrow brings the call back.
    terminal = Terminal("shell", environ=environ)
    terminal.expect("trio-mcp> ")
    terminal.send("\x1b[A\x1b[A\r")
    terminal.expect("3\r\n")
    terminal.expect_count("trio-mcp> ", 2)
    terminal.send("\x04")  # Ctrl-D
    code, output = terminal.finish()
    assert code == 0, output


def test_shell_on_a_terminal_quotes_the_enum_values_it_completes():
    # Tab inserts "location='Los Angeles'": the line the shell reads back is
    # one argument, not "location=Los" and a stray "Angeles".
    pytest.importorskip("readline", reason="this Python has no readline")
    server = [sys.executable, str(SERVERS_DIR / "enum_server.py")]
    terminal = Terminal("shell", "--", *server, environ=env())
    terminal.expect("trio-mcp> ")
    terminal.send("call weather location=Lo\t\r")
    terminal.expect("weather in Los Angeles\r\n")
    terminal.expect_count("trio-mcp> ", 2)
    terminal.send("call weather location=O\t\r")
    terminal.expect("weather in O'Hare\r\n")
    terminal.expect_count("trio-mcp> ", 3)
    terminal.send("exit\r")
    code, output = terminal.finish()
    assert code == 0, output


@pytest.mark.slow
def test_shell_on_a_terminal_completes_resource_uris_and_templates():
    pytest.importorskip("readline", reason="this Python has no readline")
    terminal = Terminal("shell", environ=env())
    terminal.expect("trio-mcp> ")
    # "demo://" is common to the resource and the template: Tab fills it in, and the
    # second Tab after it lists both.
    terminal.send("read d\t\t\t")
    terminal.expect("demo://greeting/")
    terminal.expect("demo://readme")
    # "g": the template's start, to type the rest after.
    terminal.send("g\tAda\r")
    terminal.expect("Hello, Ada!")
    terminal.expect_count("trio-mcp> ", 3)  # the prompt redrawn after the list, then the next one
    # In the variable: the names the server suggests for it (completion/complete).
    terminal.send("read demo://greeting/Ka\t\r")
    terminal.expect("Hello, Katherine!")
    terminal.expect_count("trio-mcp> ", 4)
    terminal.send("exit\r")
    code, output = terminal.finish()
    assert code == 0, output
    assert "read demo://greeting/Ada" in output


@pytest.mark.slow
def test_shell_on_a_terminal_with_an_unwritable_history(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    terminal = Terminal("shell", environ=env(TRIO_MCP_HISTORY=str(blocker / "sub" / "history")))
    terminal.expect("trio-mcp> ")
    terminal.send("call echo text=hi\r")
    terminal.expect("hi\r\n")
    terminal.expect_count("trio-mcp> ", 2)
    terminal.send("exit\r")
    code, output = terminal.finish()
    assert code == 0, output
    assert "Traceback" not in output


@pytest.mark.slow
def test_shell_on_a_terminal_asks_again_after_a_question_was_declined_with_ctrl_d():
    terminal = Terminal("shell", environ=env())
    terminal.expect("trio-mcp> ")
    terminal.send("call ask\r")
    terminal.expect("Name [1.. characters, required]: ")
    terminal.send("\x04")  # Ctrl-D: this question is declined
    terminal.expect("trio-mcp: declined (end of input)")
    terminal.expect_count("trio-mcp> ", 2)
    terminal.send("call ask\r")  # the next command's question is asked
    terminal.expect_count("Name [1.. characters, required]: ", 2)
    terminal.send("Ada\r")
    terminal.expect("Send it? [y/N] ")
    terminal.send("y\r")
    terminal.expect("Hello, Ada!")
    terminal.expect_count("trio-mcp> ", 3)
    terminal.send("exit\r")
    code, output = terminal.finish()
    assert code == 0, output


@pytest.mark.slow
def test_shell_on_a_terminal_interrupted_at_the_prompt():
    terminal = Terminal("shell", environ=env())
    terminal.expect("trio-mcp> ")
    # Ctrl-C: the terminal sends SIGINT to the foreground process group (here, the shell's session).
    os.killpg(terminal.proc.pid, signal.SIGINT)
    code, output = terminal.finish()
    assert code == cli.EXIT_INTERRUPTED, output
    assert "Traceback" not in output
    assert output.endswith("trio-mcp> \r\n")


needs_a_terminal = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(os, "setsid"), reason="needs a Unix pseudo-terminal"
)


@pytest.mark.slow
@needs_a_terminal
def test_shell_on_a_terminal_ctrl_c_cancels_the_command_only():
    terminal = Terminal("shell", environ=env(), controlling=True)
    terminal.expect("trio-mcp> ")
    terminal.send("call slow steps=100 delay=0.5\r")
    terminal.expect("/100")  # the progress bar: the call is under way
    terminal.send("\x03")  # Ctrl-C, typed
    terminal.expect("trio-mcp: interrupted (tools/call); the server goes on")
    terminal.expect_count("trio-mcp> ", 2)
    # The same server answers the next command.
    terminal.send("call add a=2 b=3\r")
    terminal.expect("5\r\n")
    terminal.expect_count("trio-mcp> ", 3)
    terminal.send("\x03")  # at the prompt: the shell ends
    code, output = terminal.finish()
    assert code == cli.EXIT_INTERRUPTED, output
    assert "Traceback" not in output
    assert "done" not in output.split("interrupted", 1)[1]  # the slow call did not finish


@needs_a_terminal
def test_shell_on_a_terminal_ctrl_c_withdraws_the_request_from_the_server(tmp_path):
    record = tmp_path / "record"
    server = [sys.executable, str(SCRIPTED), "--record", str(record)]
    terminal = Terminal("shell", "--", *server, environ=env(), controlling=True)
    terminal.expect("trio-mcp> ")
    terminal.send("call hang\r")
    deadline = time.monotonic() + LIMIT
    while '"tools/call"' not in (record.read_text() if record.exists() else ""):
        assert time.monotonic() < deadline, "the call never reached the server"
        time.sleep(0.05)
    terminal.send("\x03")
    terminal.expect("trio-mcp: interrupted (tools/call); the server goes on")
    terminal.expect_count("trio-mcp> ", 2)
    terminal.send("call echo text=still-here\r")
    terminal.expect("still-here\r\n")
    terminal.expect_count("trio-mcp> ", 3)
    terminal.send("\x04")  # Ctrl-D: the shell ends
    code, output = terminal.finish()
    assert code == 0, output
    messages = [json.loads(line) for line in record.read_text().splitlines() if not line.startswith("#")]
    starts = [line for line in record.read_text().splitlines() if line.startswith("#start")]
    assert len(starts) == 1  # one server process throughout
    calls = [m for m in messages if m.get("method") == "tools/call"]
    assert [m["params"]["name"] for m in calls] == ["hang", "echo"]
    cancelled = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [calls[0]["id"]]
    # Withdrawn before the next call was sent.
    assert messages.index(cancelled[0]) < messages.index(calls[1])


@pytest.mark.slow
@needs_a_terminal
def test_shell_across_servers_on_a_terminal(tmp_path):
    pytest.importorskip("readline", reason="this Python has no readline")
    demo = {"command": sys.executable, "args": ["-m", "trio_mcp.demo"]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"one": demo, "two": demo}}))
    terminal = Terminal("--config", str(config), "shell", environ=env(), controlling=True)
    terminal.expect("trio-mcp> ")
    # Tab completes the catalogue's names.
    terminal.send("call two__e\ttext=hi\r")
    terminal.expect("hi\r\n")
    terminal.expect_count("trio-mcp> ", 2)
    terminal.send("call one.slow steps=100 delay=0.5\r")
    terminal.expect("/100")
    terminal.send("\x03")  # Ctrl-C: that call only
    terminal.expect("trio-mcp: interrupted (tools/call); the server goes on")
    terminal.expect_count("trio-mcp> ", 3)
    terminal.send("call one__add a=2 b=3\r")
    terminal.expect("5\r\n")
    terminal.expect_count("trio-mcp> ", 4)
    terminal.send("servers --json\r")
    terminal.expect_count("trio-mcp> ", 5)
    terminal.send("\x03")
    code, output = terminal.finish()
    assert code == cli.EXIT_INTERRUPTED, output
    assert "call two__echo text=hi" in output
    listing = output.split("servers --json\r\n", 1)[1].split("trio-mcp> ", 1)[0]
    # Both ready, and neither started again.
    servers = json.loads(listing.replace("\r\n", "\n"))["servers"]
    assert [(s["name"], s["state"], s["restarts"]) for s in servers] == [
        ("one", "ready", 0),
        ("two", "ready", 0),
    ]
    assert "Traceback" not in output


@pytest.mark.slow
def test_shell_across_servers_goes_on_when_a_server_dies(tmp_path):
    config = tmp_path / "mcp.json"
    scripted = {"command": sys.executable, "args": [str(SCRIPTED)]}
    config.write_text(json.dumps({"mcpServers": {"mem": scripted}}))
    terminal = Terminal("--config", str(config), "shell", environ=env())
    terminal.expect("trio-mcp> ")
    terminal.send("call mem__exit code=3\r")  # answered, then the process exits
    terminal.expect_count("trio-mcp> ", 2)
    # The group starts it again: a call fails while the death is noticed, then works.
    prompts = 2
    # The answer on a line of its own (the terminal's echo of the command ends "text=back-again").
    while b"\nback-again\r\n" not in terminal.output:
        terminal.send("call mem__echo text=back-again\r")
        prompts += 1
        terminal.expect_count("trio-mcp> ", prompts)
    terminal.send("servers --json\r")
    terminal.expect_count("trio-mcp> ", prompts + 1)
    terminal.send("exit 0\r")
    code, output = terminal.finish()
    assert code == 0, output
    listing = output.rsplit("servers --json\r\n", 1)[1].split("trio-mcp> ", 1)[0]
    (server,) = json.loads(listing.replace("\r\n", "\n"))["servers"]
    assert (server["state"], server["restarts"]) == ("ready", 1)
    assert "Traceback" not in output


@pytest.mark.slow
@needs_a_terminal
def test_shell_on_a_terminal_ctrl_c_while_a_question_is_asked():
    terminal = Terminal("shell", environ=env(), controlling=True)
    terminal.expect("trio-mcp> ")
    terminal.send("call ask\r")
    terminal.expect("Name [1.. characters, required]: ")
    terminal.send("\x03")
    terminal.expect("trio-mcp: interrupted")
    terminal.expect_count("trio-mcp> ", 2)
    # The next line goes to the shell, not to the question that was interrupted.
    terminal.send("call echo text=next\r")
    terminal.expect("next\r\n")
    terminal.expect_count("trio-mcp> ", 3)
    terminal.send("exit\r")
    code, output = terminal.finish()
    assert code == 0, output


# ------------------------------------------------------------------ completion, in-process

CATALOG = Catalog(
    tools={
        "add": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
        "echo": {"type": "object", "properties": {"text": {"type": "string"}}},
        "paint": {
            "type": "object",
            "properties": {"color": {"enum": ["red", "green"]}, "glossy": {"type": "boolean"}},
        },
        "bare": {"type": "object"},
    },
    prompts={"greet": ["name", "tone"]},
    resources=["demo://readme"],
    templates=["demo://greeting/{name}", "file:///{+path}{?lang,depth}"],
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "",
            [
                "info ",
                "tools ",
                "prompts ",
                "resources ",
                "templates ",
                "call ",
                "read ",
                "prompt ",
                "complete ",
                "log-level ",
                "tasks ",
                "help ",
                "exit ",
                "quit ",
            ],
        ),
        ("c", ["call ", "complete "]),
        ("pro", ["prompts ", "prompt "]),
        ("call ", ["add ", "bare ", "echo ", "paint "]),
        ("call e", ["echo "]),
        ("call add ", ["a=", "b="]),
        ("call add a=1 ", ["b="]),
        ("call add --json a=1 --timeout 5 ", ["b="]),
        ("call add --timeout ", []),
        (
            "--json ",
            [
                "info ",
                "tools ",
                "prompts ",
                "resources ",
                "templates ",
                "call ",
                "read ",
                "prompt ",
                "complete ",
                "log-level ",
                "tasks ",
                "help ",
                "exit ",
                "quit ",
            ],
        ),
        ("--timeout 5 call a", ["add "]),
        ("--j", ["--json "]),
        ("call bare ", []),
        ("call nope ", []),
        ("call paint color=", ["color=red ", "color=green "]),
        ("call paint color=g", ["color=green "]),
        ("call paint glossy=", ["glossy=true ", "glossy=false "]),
        ("call add a=", []),
        ("call add --j", ["--json "]),
        ("tools --", ["--json ", "--timeout ", "--verbose ", "--schema "]),
        ("prompt ", ["greet "]),
        ("prompt greet t", ["tone="]),
        ("read ", ["demo://readme ", "demo://greeting/", "file:///"]),
        ("call -o out.txt a", ["add "]),
        ("call add -o ", []),
        ("log-level i", ["info "]),
        ("tasks ", ["start ", "list ", "status ", "result ", "cancel "]),
        ("tasks start a", ["add "]),
        ("tasks start add --detach a=1 ", ["b="]),
        ("tasks status ", []),
        ("log-level info ", []),
        ("read demo://g", ["demo://greeting/"]),
        ("read demo://greeting/", []),
        ("read f", ["file:///"]),
        ("read demo://readme ", []),
        ("complete ", ["prompt ", "template "]),
        ("complete prompt ", ["greet "]),
        ("complete prompt greet ", ["name=", "tone="]),
        ("complete template ", ["demo://greeting/{name} ", "file:///{+path}{?lang,depth} "]),
        ("complete template demo://greeting/{name} ", ["name="]),
        ("complete template file:///{+path}{?lang,depth} path=x ", ["lang=", "depth="]),
        ('call "unterminated ', []),
        ("info ", []),
    ],
)
def test_completions(line, expected):
    before, _, text = line.rpartition(" ")
    before = before + " " if line.endswith(" ") or before else before
    if not line.endswith(" ") and " " not in line:
        before, text = "", line
    assert completions(before, text, CATALOG) == expected


def test_completions_of_a_template_variable_ask_the_server():
    asked = []

    def suggest(template, name, typed):
        asked.append((template, name, typed))
        return {"demo://greeting/{name}": ["Ada", "Alan", "Bob"]}.get(template, [])

    templates = Catalog(templates=["demo://greeting/{name}", "x://{a}/{b}", "file:///{+path}"])
    assert completions("read ", "demo://greeting/A", templates, suggest) == [
        "demo://greeting/Ada ",
        "demo://greeting/Alan ",
    ]
    assert asked == [("demo://greeting/{name}", "name", "A")]
    assert completions("read ", "demo://greeting/x/", templates, suggest) == []  # past the variable
    asked.clear()
    assert completions("read ", "x://q", templates, suggest) == []
    assert asked == [("x://{a}/{b}", "a", "q")]  # a reserved expansion ({+path}) is not asked about
    assert completions("read ", "demo://greeting/A", templates) == []  # no server to ask


def test_template_variables():
    assert _template_variables("demo://greeting/{name}") == ["name"]
    assert _template_variables("x://{a}/{+b}/{#c}{?d,e*,f:3}{&d}") == ["a", "b", "c", "d", "e", "f"]
    assert _template_variables("no variables") == []


def test_history_path(monkeypatch):
    assert history_path({"TRIO_MCP_HISTORY": "/x/h"}) == Path("/x/h")
    assert history_path({"TRIO_MCP_HISTORY": ""}) is None
    if sys.platform != "win32":
        assert history_path({"XDG_STATE_HOME": "/s"}) == Path("/s/trio-mcp/shell_history")
        monkeypatch.setenv("HOME", "/home/someone")
        assert history_path({}) == Path("/home/someone/.local/state/trio-mcp/shell_history")


@pytest.mark.slow
def test_shell_on_a_terminal_offers_to_start_a_dead_server_again():
    # The server dies under a call: the shell says why, asks, and goes on
    # with a new process; declined, it ends with the death's status.
    pytest.importorskip("readline", reason="this Python has no readline")
    server = [sys.executable, str(SCRIPTED), "--era", "legacy"]
    terminal = Terminal("shell", "--", *server, environ=env())
    terminal.expect("trio-mcp> ")
    terminal.send("call exit code=3\r")
    terminal.expect("start the server again? [Y/n] ")
    terminal.send("\r")
    terminal.expect_count("trio-mcp> ", 2)
    terminal.send("call echo text=back\r")
    terminal.expect("back\r\n")
    terminal.expect_count("trio-mcp> ", 3)
    terminal.send("call exit code=5\r")
    terminal.expect_count("start the server again? [Y/n] ", 2)
    terminal.send("n\r")
    code, output = terminal.finish()
    assert code == cli.EXIT_SERVER_GONE, output
    assert output.count("exited with code 3") == 1
    assert "exited with code 5" in output


def test_a_groups_server_dot_tool_names_are_completed_once_the_word_has_a_dot():
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    catalog = Catalog(tools={"one__echo": schema}, aliases={"one.echo": "one__echo"})
    assert completions("call ", "", catalog) == ["one__echo "]
    assert completions("call ", "one.", catalog) == ["one.echo "]
    assert completions("call one.echo ", "t", catalog) == ["text="]
