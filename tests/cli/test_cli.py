"""The ``trio-mcp`` command, end to end.

The command runs as a real process (``python -m trio_mcp ...``) against the
scripted server ``tests/servers/mcp_server.py`` in both protocol eras, and
against the bundled demo server. The independent runs of the era matrix are
started together, once per module, and each test checks one of them. The
progress bar and the interactive questions run in a pseudo-terminal. The
parsing of the command line, the rendering of results and the questions'
validation are also tested in-process, where every case is cheap.

Real processes, real clock: every wait is bounded (``timeout=`` of the
subprocess calls, a deadline on pseudo-terminal reads), and nothing asserts
how long anything took.
"""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import trio
from paths import REPO_ROOT
from terminal_support import Terminal

from trio_mcp import cli
from trio_mcp._models import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ElicitFormParams,
    ElicitUrlParams,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ReadResourceResult,
    ResourceLink,
    ServerCapabilities,
    TextContent,
    TextResourceContents,
    ToolUseContent,
    UnknownContent,
)
from trio_mcp.cli import _console, _forms, _render, _run

ROOT = REPO_ROOT
SERVER = ROOT / "tests" / "servers" / "mcp_server.py"
ERAS = ("modern", "legacy")
#: Seconds one command may take before the test counts it as hung.
LIMIT = 30

TOOL_NAMES = {"echo", "add", "fail", "odd", "slow", "hang", "ask", "sample"}


def env() -> dict[str, str]:
    """The environment of the command: this checkout first on the path, a known width."""
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["COLUMNS"] = "100"
    return environ


def scripted(era: str, *flags: str) -> list[str]:
    return [sys.executable, str(SERVER), "--era", era, *flags]


def run(*args: str, server: list[str] | None = None, timeout: float = LIMIT):
    """Run ``trio-mcp ARGS... [-- SERVER...]`` with stdin not a terminal."""
    argv = [sys.executable, "-m", "trio_mcp", *args]
    if server is not None:
        argv += ["--", *server]
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env(),
        timeout=timeout,
        check=False,
    )


def one_error_line(result, code: int) -> str:
    """Check the exit status and that stderr holds one line and no traceback; return it."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("trio-mcp")
    return lines[0]


# ------------------------------------------------------------------ the era matrix

#: The command lines the era-matrix tests check, by name: those whose
#: behaviour depends on the protocol era run against both eras, those that
#: only show what the client got run against the 2026-07-28 one.
BOTH_ERAS = {
    "info-json": ["--json", "info"],
    "echo": ["call", "echo", "text=hi there"],
    "fail": ["call", "fail"],
    "unknown-tool": ["call", "ech", "text=hi"],
    "missing-argument": ["call", "echo"],
    "read-missing": ["read", "mem://missing"],
    "prompt": ["prompt", "greet", "name=Bob"],
    "ask": ["call", "ask"],
    "slow": ["call", "slow", "steps=3"],
    "log": ["--verbose", "call", "log", "level=info", "message=hello"],
    "quiet-log": ["call", "log", "level=info", "message=hello"],
    "sample": ["call", "sample"],
    "roots": ["call", "roots"],
}
MODERN_ONLY = {
    "info": ["info"],
    "tools": ["tools"],
    "tools-json": ["tools", "--json"],
    "tools-schema": ["tools", "--schema"],
    "prompts": ["prompts"],
    "resources-json": ["--json", "resources"],
    "templates": ["templates"],
    "echo-number": ["call", "echo", "text=123"],
    "add": ["call", "add", "a=1", "b=2"],
    "add-object": ["call", "add", "--json", '{"a": 1, "b": 10}', "b=2", "--json"],
    "fail-json": ["--json", "call", "fail"],
    "odd": ["call", "odd"],
    "unknown-tool-json": ["call", "nope", "--json"],
    "rpc-error": ["call", "needs", "cap=nothing"],
    "rpc-error-json": ["call", "needs", "cap=nothing", "--json"],
    "read": ["read", "mem://a"],
    "read-dir": ["read", "mem://dir"],
    "read-blob": ["read", "mem://blob"],
    "prompt-json": ["prompt", "greet", "--json", '{"name": "Ann"}', "--json"],
    "ask-url": ["call", "ask", "mode=url"],
    "ask-forever": ["call", "endless", "ask=true"],
}


@pytest.fixture(scope="module")
def matrix():
    """The matrix's commands against the scripted server, run a few at a time."""
    runs = [(era, name, args) for era in ERAS for name, args in BOTH_ERAS.items()]
    runs += [("modern", name, args) for name, args in MODERN_ONLY.items()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {(era, name): pool.submit(run, *args, server=scripted(era)) for era, name, args in runs}
        return {key: future.result() for key, future in futures.items()}


#: The era of the tests of `MODERN_ONLY` commands.
modern_only = pytest.mark.parametrize("era", ["modern"])


@pytest.fixture(params=ERAS)
def era(request):
    return request.param


def ok(matrix, era: str, name: str):
    result = matrix[era, name]
    assert result.returncode == cli.EXIT_OK, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result


@pytest.mark.slow
@modern_only
def test_info(matrix, era):
    text = ok(matrix, era, "info").stdout
    assert "mcp-test-server 1.2.3" in text
    assert "tools (listChanged)" in text
    if era == "modern":
        assert "2026-07-28 (2026-07-28 era" in text
        assert "supported:" in text
    else:
        assert "2025-11-25 (initialize era)" in text
        assert "supported:" not in text


def test_info_json(matrix, era):
    info = json.loads(ok(matrix, era, "info-json").stdout)
    assert info["era"] == era
    assert info["protocolVersion"] == ("2026-07-28" if era == "modern" else "2025-11-25")
    assert info["serverInfo"] == {"name": "mcp-test-server", "version": "1.2.3"}
    assert info["capabilities"]["tools"] == {"listChanged": True}
    assert info["instructions"] is None
    assert info["supportedVersions"] == (["2026-07-28"] if era == "modern" else None)


@modern_only
def test_tools(matrix, era):
    text = ok(matrix, era, "tools").stdout
    assert text.startswith("echo - Echo\n    the echo tool\n    arguments: text: string\n")
    assert "add - Adder\n    the add tool\n    hints: read-only" in text
    assert "input schema" not in text


@modern_only
def test_tools_json(matrix, era):
    tools = json.loads(ok(matrix, era, "tools-json").stdout)["tools"]
    names = [tool["name"] for tool in tools]
    assert set(names) >= TOOL_NAMES
    echo = tools[names.index("echo")]
    assert echo["inputSchema"]["required"] == ["text"]
    assert echo["title"] == "Echo"
    # Wire names, unknown fields kept.
    assert tools[names.index("add")]["x-vendor"] == {"kept": True}


@modern_only
def test_tools_schema(matrix, era):
    text = ok(matrix, era, "tools-schema").stdout
    head = text.split("add - Adder")[0]
    assert "    input schema:\n" in head
    assert json.loads(head.split("input schema:\n")[1]) == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }


@modern_only
def test_prompts_resources_templates(matrix, era):
    prompts = ok(matrix, era, "prompts").stdout
    assert prompts.startswith(
        "greet\n    say hello\n    arguments: name\nmrtr\n    asks for a name first\np3\n"
    )
    resources = json.loads(ok(matrix, era, "resources-json").stdout)["resources"]
    assert resources[0] == {"uri": "mem://a", "name": "a", "mimeType": "text/plain"}
    assert len(resources) == 5
    templates = ok(matrix, era, "templates").stdout
    assert templates.splitlines()[0] == "mem://items/{id}  (items)"


def test_call_prints_text(matrix, era):
    result = ok(matrix, era, "echo")
    assert result.stdout == "hi there\n"
    assert result.stderr == ""


@modern_only
def test_call_keeps_a_string_argument_a_string(matrix, era):
    # "123" parses as JSON, but echo's schema says text is a string.
    assert ok(matrix, era, "echo-number").stdout == "123\n"


@modern_only
def test_call_prints_structured_content(matrix, era):
    assert ok(matrix, era, "add").stdout == '3\nstructured content:\n{\n  "sum": 3\n}\n'


@modern_only
def test_call_with_a_json_object_and_json_output(matrix, era):
    # --json OBJECT gives the arguments, KEY=VALUE adds to them, --json alone asks for JSON.
    result = json.loads(ok(matrix, era, "add-object").stdout)
    assert result["structuredContent"] == {"sum": 3}
    assert result["content"] == [{"type": "text", "text": "3"}]
    assert result["isError"] is False


def test_tool_error_exits_1_with_the_content_on_stderr(matrix, era):
    line = one_error_line(matrix[era, "fail"], cli.EXIT_TOOL_ERROR)
    assert line == "trio-mcp: the tool 'fail' reported an error: boom"
    assert matrix[era, "fail"].stdout == ""


@modern_only
def test_tool_error_in_json_mode(matrix, era):
    result = matrix[era, "fail-json"]
    one_error_line(result, cli.EXIT_TOOL_ERROR)
    wire = json.loads(result.stdout)
    assert wire["isError"] is True
    assert wire["content"] == [{"type": "text", "text": "boom"}]


@modern_only
def test_unknown_content_and_images(matrix, era):
    text = ok(matrix, era, "odd").stdout
    assert text == (
        "plain\n"
        '[hologram content: {"type":"hologram","payload":{"depth":3}}]\n'
        "[image: image/png, 3 B]\n"
        'structured content:\n{\n  "n": 1\n}\n'
    )


def test_an_unknown_tool_is_refused_before_sending_with_the_closest_names(matrix, era):
    # The server's list says there is no such tool: nothing goes out, exit 2.
    line = one_error_line(matrix[era, "unknown-tool"], cli.EXIT_USAGE)
    assert line == "trio-mcp: the server has no tool 'ech' (did you mean 'echo'?); nothing was sent"


def test_a_missing_required_argument_is_refused_before_sending(matrix, era):
    line = one_error_line(matrix[era, "missing-argument"], cli.EXIT_USAGE)
    assert line == "trio-mcp: the tool 'echo' needs the argument 'text' (text=...); nothing was sent"


@modern_only
def test_rpc_error(matrix, era):
    line = one_error_line(matrix[era, "rpc-error"], cli.EXIT_RPC_ERROR)
    assert line.startswith("trio-mcp: the server answered tools/call with error -32021: ")


@modern_only
def test_an_unknown_tool_in_json_mode(matrix, era):
    result = matrix[era, "unknown-tool-json"]
    one_error_line(result, cli.EXIT_USAGE)
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "usage"
    assert error["exitCode"] == cli.EXIT_USAGE


@modern_only
def test_rpc_error_in_json_mode(matrix, era):
    result = matrix[era, "rpc-error-json"]
    one_error_line(result, cli.EXIT_RPC_ERROR)
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "rpc"
    assert error["exitCode"] == cli.EXIT_RPC_ERROR


@modern_only
def test_read(matrix, era):
    assert ok(matrix, era, "read").stdout == "alpha\n"
    assert (
        ok(matrix, era, "read-dir").stdout == "[resource: mem://dir/1]\none\n[resource: mem://dir/2]\ntwo\n"
    )
    assert ok(matrix, era, "read-blob").stdout == "[resource: mem://blob, binary, 3 B]\n"


def test_read_missing(matrix, era):
    line = one_error_line(matrix[era, "read-missing"], cli.EXIT_RPC_ERROR)
    code = -32602 if era == "modern" else -32002
    assert f"resources/read with error {code}: Resource not found" in line


def test_prompt(matrix, era):
    assert ok(matrix, era, "prompt").stdout == "# a greeting\n[user]\nHello Bob\n"


@modern_only
def test_prompt_in_json_mode(matrix, era):
    result = json.loads(ok(matrix, era, "prompt-json").stdout)
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello Ann"}}]


def test_elicitation_is_declined_when_stdin_is_not_a_terminal(matrix, era):
    result = ok(matrix, era, "ask")
    assert result.stdout.startswith("action decline\n")
    assert result.stderr == (
        'trio-mcp: declined the server\'s request for input ("What is your name?"): stdin is not a terminal\n'
    )


@modern_only
def test_url_elicitation_is_declined_when_stdin_is_not_a_terminal(matrix, era):
    url = ok(matrix, era, "ask-url")
    assert url.stdout.startswith("action decline\n")
    assert '("Sign in"): stdin is not a terminal' in url.stderr


@modern_only
def test_a_question_asked_again_after_a_decline_is_declined_quietly(matrix, era):
    # The server asks the same question in every round, whatever the answer:
    # the decline is said once, and when the rounds run out the command says
    # why it could not give the input.
    result = matrix[era, "ask-forever"]
    assert result.returncode == cli.EXIT_INPUT, result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        'trio-mcp: declined the server\'s request for input ("What is your name?"): stdin is not a terminal',
        (
            "trio-mcp: the server kept asking for input after it was declined (stdin is not a terminal):"
            " tools/call still asked for input after 10 rounds (max_rounds=10)"
        ),
    ]


def test_progress_is_plain_lines_when_stderr_is_not_a_terminal(matrix, era):
    result = ok(matrix, era, "slow")
    assert result.stdout == "3 steps\n"
    assert result.stderr == (
        "progress: 1/3 (33%) step 1\nprogress: 2/3 (67%) step 2\nprogress: 3/3 (100%) step 3\n"
    )


def test_verbose_shows_log_messages(matrix, era):
    result = ok(matrix, era, "log")
    assert result.stdout == "logged\n"
    assert "server log [info] mcp-test-server: hello\n" in result.stderr
    # Without --verbose no log level is asked for (an initialize-era server
    # logs anyway, until told otherwise), and nothing is shown.
    quiet = ok(matrix, era, "quiet-log")
    assert quiet.stdout == ("not logged\n" if era == "modern" else "logged\n")
    assert quiet.stderr == ""


def test_sampling_is_refused(matrix, era):
    result = matrix[era, "sample"]
    if era == "modern":
        line = one_error_line(result, cli.EXIT_INPUT)
        assert "the server asked for sampling" in line
        assert "trio-mcp has no model and refuses it" in line
    else:
        # The request arrives from the server; the client answers it with an
        # error, and the tool says so.
        assert result.returncode == cli.EXIT_TOOL_ERROR
        assert "error -32601" in result.stderr
        assert "Traceback" not in result.stderr


def test_roots_are_refused(matrix, era):
    result = matrix[era, "roots"]
    if era == "modern":
        line = one_error_line(result, cli.EXIT_INPUT)
        assert "the server asked for roots during tools/call; trio-mcp offers none" in line
    else:
        assert result.returncode == cli.EXIT_TOOL_ERROR
        assert "error -32601" in result.stderr


# ------------------------------------------------------------------ errors and exit codes


def test_missing_server_executable():
    result = run("info", server=["trio-mcp-no-such-server-here"])
    line = one_error_line(result, cli.EXIT_SPAWN)
    assert "cannot start 'trio-mcp-no-such-server-here': command not found" in line


def test_missing_working_directory():
    result = run("info", "--cwd", "/nonexistent/trio-mcp-test", server=scripted("modern"))
    line = one_error_line(result, cli.EXIT_SPAWN)
    assert "working directory '/nonexistent/trio-mcp-test'" in line


def test_server_that_exits_at_once_shows_its_stderr():
    script = "import sys; print('bad config: no token', file=sys.stderr); sys.exit(3)"
    result = run("info", server=[sys.executable, "-c", script])
    assert result.returncode == cli.EXIT_SERVER_GONE
    assert "Traceback" not in result.stderr
    first, *tail = result.stderr.splitlines()
    assert first.startswith("trio-mcp: the server ")
    assert first.endswith("exited with code 3 while connecting; its last stderr lines:")
    assert tail == ["  | bad config: no token"]


def test_server_that_dies_during_a_call(era):
    result = run("--json", "call", "exit", "code=5", server=scripted(era))
    # The exit tool answers, then exits: the answer arrives.
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert json.loads(result.stdout)["content"] == [{"type": "text", "text": "bye"}]


def test_server_gone_in_json_mode():
    result = run("--json", "info", server=[sys.executable, "-c", "import sys; sys.exit(2)"])
    line = one_error_line(result, cli.EXIT_SERVER_GONE)
    assert line.endswith("exited with code 2 while connecting (it wrote nothing to stderr)")
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "server-gone"
    assert error["exitCode"] == cli.EXIT_SERVER_GONE
    assert error["serverExitCode"] == 2
    assert error["stderrTail"] == ""


@pytest.mark.slow
def test_timeout(era):
    result = run("--timeout", "1", "call", "hang", server=scripted(era))
    assert result.returncode == cli.EXIT_TIMEOUT
    lines = result.stderr.splitlines()
    # The hang tool sends one progress notification first.
    assert lines == ["progress: 0", "trio-mcp: timed out after 1 s (tools/call)"]


@pytest.mark.slow
def test_timeout_while_connecting():
    # A server that never answers (and exits when its stdin closes).
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    result = run("--timeout", "1", "--json", "info", server=silent)
    line = one_error_line(result, cli.EXIT_TIMEOUT)
    assert line == "trio-mcp: timed out after 1 s (connecting)"
    assert json.loads(result.stdout)["error"]["kind"] == "timeout"


#: Answers nothing, ignores the end of its stdin and SIGTERM; writes to the file
#: it is given when stdin ended and when SIGTERM came, with the time of each.
STUBBORN = """
import signal, sys, time
path = sys.argv[1]
def note(what):
    with open(path, "a") as f:
        f.write(f"{what} {time.monotonic()}\\n")
signal.signal(signal.SIGTERM, lambda *_: note("TERM"))
sys.stdin.read()
note("EOF")
time.sleep(60)
"""


@pytest.mark.slow
def test_timeout_is_the_budget_of_the_whole_command_closing_included(tmp_path):
    """--timeout bounds the close too: once the budget is spent, a server that ignores the end of
    its stdin gets no grace (the library's default of 2 s): SIGTERM follows stdin's end at once."""
    record = tmp_path / "events"
    result = run("--timeout", "1", "info", server=[sys.executable, "-c", STUBBORN, str(record)])
    assert result.returncode == cli.EXIT_TIMEOUT
    events = dict(line.split() for line in record.read_text().splitlines())
    assert set(events) == {"EOF", "TERM"}
    # With the grace, at least 2 s would pass between the two: anything under
    # it means no grace (a loaded machine can take a second to send the signal).
    assert float(events["TERM"]) - float(events["EOF"]) < 1.9


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_a_program_that_echoes_its_input_is_not_taken_for_a_server(protocol):
    # cat writes back every request it is sent. Each one is recognised as
    # ours, not as a request of the server's, and fails the command at once.
    # With no time budget (--timeout 0), a missed echo would hang the
    # command until the subprocess guard, rather than end it.
    result = run(
        "--timeout", "0", "--protocol", protocol, "--json", "call", "echo", "text=hi", server=["cat"]
    )
    line = one_error_line(result, cli.EXIT_PROTOCOL)
    assert line.startswith("trio-mcp: protocol error while connecting: the server echoed request ")
    assert line.endswith(
        "back instead of answering it; it is probably not an MCP server"
        " (a program that copies its input, such as cat)"
    )
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "protocol"
    assert error["exitCode"] == cli.EXIT_PROTOCOL


@pytest.mark.slow
def test_version_mismatch():
    result = run("--protocol", "2026-07-28", "info", server=scripted("legacy"))
    line = one_error_line(result, cli.EXIT_PROTOCOL)
    assert "no protocol version in common" in line


@pytest.mark.slow
def test_pinned_initialize_era_version():
    result = run("--json", "--protocol", "2025-06-18", "info", server=scripted("dual"))
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert (info["era"], info["protocolVersion"]) == ("legacy", "2025-06-18")


@pytest.mark.slow
def test_env_and_cwd_reach_the_server(tmp_path):
    script = (
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        "        r = {'protocolVersion': '2025-11-25', 'capabilities': {}, 'serverInfo': {'name': 's', 'version': '1'}}\n"
        "    elif m.get('method') == 'tools/call':\n"
        "        text = os.environ['GREETING'] + ' from ' + os.getcwd()\n"
        "        r = {'content': [{'type': 'text', 'text': text}]}\n"
        "    elif 'id' in m:\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32601, 'message': 'no'}}), flush=True)\n"
        "        continue\n"
        "    else:\n"
        "        continue\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
    )
    (tmp_path / "server.py").write_text(script)
    result = run(
        "call", "x", "--env", "GREETING=hello", "--cwd", str(tmp_path), server=[sys.executable, "server.py"]
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"hello from {tmp_path}\n"


@pytest.mark.slow
def test_verbose_shows_server_stderr_and_dropped_lines():
    script = (
        "import json, sys\n"
        "print('starting up', file=sys.stderr, flush=True)\n"
        "print('not json', flush=True)\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        "        r = {'protocolVersion': '2025-11-25', 'capabilities': {}, 'serverInfo': {'name': 's', 'version': '1'}}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
        "    elif 'id' in m:\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32601, 'message': 'no'}}), flush=True)\n"
    )
    result = run("-v", "--protocol", "2025-11-25", "info", server=[sys.executable, "-c", script])
    assert result.returncode == 0, result.stderr
    assert "server stderr: starting up\n" in result.stderr
    assert "trio-mcp: dropped a stdout line that is not JSON" in result.stderr
    quiet = run("--protocol", "2025-11-25", "info", server=[sys.executable, "-c", script])
    assert quiet.returncode == 0
    assert quiet.stderr == ""


@pytest.mark.slow
def test_interrupt_exits_130_and_says_so():
    argv = [sys.executable, "-m", "trio_mcp", "call", "hang", "--", *scripted("modern")]
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()
    ) as proc:
        try:
            # The hang tool's progress notification: the call is in flight.
            assert proc.stderr.readline() == b"progress: 0\n"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=LIMIT)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == cli.EXIT_INTERRUPTED
    assert out == b""
    assert err == b"trio-mcp: interrupted (tools/call): the request was cancelled and the server stopped\n"


@pytest.mark.slow
def test_broken_pipe_is_quiet():
    argv = [sys.executable, "-m", "trio_mcp", "tools", "--schema", "--", *scripted("modern")]
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()
    ) as proc:
        proc.stdout.close()  # nobody reads the result
        err = proc.stderr.read()
        proc.wait(timeout=LIMIT)
    assert proc.returncode == cli.EXIT_BROKEN_PIPE
    assert err == b""


# ------------------------------------------------------------------ usage


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "trio-mcp: error: missing command"),
        (["bogus"], "trio-mcp: error: unknown command 'bogus'"),
        (["call"], "trio-mcp call: error: missing the tool's name"),
        (["call", "echo", "text"], "trio-mcp call: error: expected an argument as KEY=VALUE, got 'text'"),
        (["call", "echo", "=x"], "trio-mcp call: error: expected an argument as KEY=VALUE, got '=x'"),
        (["call", "echo", "--json", "{nope"], "trio-mcp call: error: --json: not valid JSON"),
        (["call", "echo", "--json=[1]"], "trio-mcp call: error: --json: the arguments must be a JSON object"),
        (["info", "--json", "{}"], "trio-mcp info: error: --json with a JSON object gives arguments"),
        (["read"], "trio-mcp read: error: the following arguments are required: URI"),
        (["info", "--timeout", "soon"], "trio-mcp info: error: argument --timeout: not a number of seconds"),
        (
            ["info", "--timeout", "-1"],
            "trio-mcp info: error: argument --timeout: not a number of seconds >= 0",
        ),
        (["info", "--protocol", "1999-01-01"], "trio-mcp info: error: argument --protocol: invalid choice"),
        (["info", "--env", "NOEQUALS"], "trio-mcp info: error: expected --env as KEY=VALUE"),
        (["info", "--bogus"], "trio-mcp info: error: unrecognized arguments: --bogus"),
        (["info", "--"], 'trio-mcp info: error: no server command after "--"'),
    ],
)
def test_usage_errors(args, message):
    result = run(*args)
    line = one_error_line(result, cli.EXIT_USAGE)
    assert line.startswith(message), line
    assert result.stdout == ""


@pytest.mark.slow
def test_help_documents_commands_and_exit_codes():
    result = run("--help")
    assert result.returncode == 0
    for command in cli.COMMANDS:
        assert f"\n  {command} " in result.stdout
    for code, what in cli.EXIT_CODES.items():
        assert f"  {code:<5}{what}\n" in result.stdout
    call_help = run("call", "--help")
    assert call_help.returncode == 0
    assert "KEY=VALUE" in call_help.stdout
    assert "--json OBJECT" in call_help.stdout
    assert "exit status:" in call_help.stdout


def test_version():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("trio-mcp ")


def test_exit_codes_are_distinct():
    assert len(set(cli.EXIT_CODES)) == len(cli.EXIT_CODES)
    assert {
        cli.EXIT_TOOL_ERROR,
        cli.EXIT_USAGE,
        cli.EXIT_SPAWN,
        cli.EXIT_SERVER_GONE,
        cli.EXIT_TIMEOUT,
        cli.EXIT_RPC_ERROR,
        cli.EXIT_PROTOCOL,
        cli.EXIT_INPUT,
        cli.EXIT_INTERRUPTED,
    } <= set(cli.EXIT_CODES)


# ------------------------------------------------------------------ parsing, in-process


def test_parse_values_as_json_or_strings():
    options = cli.parse_args(
        ["call", "t", "n=3", "x=1.5", "on=true", "none=null", "tags=[1,2]", "text=hi", "q=a=b", "empty="]
    )
    assert options.command == "call"
    assert options.target == "t"
    assert options.arguments == {
        "n": 3,
        "x": 1.5,
        "on": True,
        "none": None,
        "tags": [1, 2],
        "text": "hi",
        "q": "a=b",
        "empty": "",
    }
    # Every value is remembered as typed, for the tool's schema to read when the command runs.
    assert options.raw_values == {
        "n": "3",
        "x": "1.5",
        "on": "true",
        "none": "null",
        "tags": "[1,2]",
        "text": "hi",
        "q": "a=b",
        "empty": "",
    }


def test_parse_json_object_then_pairs():
    options = cli.parse_args(["call", "t", "--json", '{"a": 1, "b": {"c": 2}}', "a=5"])
    assert options.arguments == {"a": 5, "b": {"c": 2}}
    assert not options.json_output
    options = cli.parse_args(["--json", "call", "--json", ' {"a": 1}', "t"])
    assert options.json_output
    assert options.target == "t"
    assert options.arguments == {"a": 1}


def test_parse_prompt_arguments_are_strings():
    options = cli.parse_args(["prompt", "p", "n=3", "--json", '{"m": 4, "s": "x"}'])
    assert options.arguments == {"n": "3", "m": "4", "s": "x"}


def test_parse_options_anywhere_and_the_server_command():
    options = cli.parse_args(
        [
            "--timeout",
            "5",
            "tools",
            "-v",
            "--schema",
            "--env",
            "A=1",
            "--env",
            "B=x=y",
            "--",
            "srv",
            "--json",
            "-v",
        ]
    )
    assert options.command == "tools"
    assert options.timeout == 5
    assert options.verbose
    assert options.schema
    assert options.env == {"A": "1", "B": "x=y"}
    assert options.server == ["srv", "--json", "-v"]
    assert not options.json_output
    assert not options.demo


def test_parse_defaults_to_the_demo_server():
    options = cli.parse_args(["info"])
    assert options.demo
    assert options.server == [sys.executable, "-m", "trio_mcp.demo"]
    assert options.timeout == cli.DEFAULT_TIMEOUT
    assert options.protocol == "auto"
    assert cli.parse_args(["info", "--timeout", "0"]).timeout is None


# ------------------------------------------------------------------ rendering, in-process


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("size", "text"), [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (12_595, "12.3 KiB")]
)
def test_human_size(size, text):
    assert _render.human_size(size) == text
    assert _render.base64_size(b64(b"x" * size)) == size


def test_render_blocks():
    render = _render.render_block
    assert render(TextContent(text="hi")) == "hi"
    assert (
        render(ImageContent(data=b64(b"x" * 12_595), mime_type="image/png")) == "[image: image/png, 12.3 KiB]"
    )
    assert render(AudioContent(data=b64(b"x" * 10), mime_type="audio/wav")) == "[audio: audio/wav, 10 B]"
    link = ResourceLink(uri="file:///a.txt", name="a", title="The A", mime_type="text/plain", size=2048)
    assert render(link) == "[resource link: The A <file:///a.txt>, text/plain, 2.0 KiB]"
    assert render(ResourceLink(uri="x://y", name="y", description="why")) == "[resource link: y <x://y>] why"
    text = EmbeddedResource(
        resource=TextResourceContents(uri="mem://t", text="inside", mime_type="text/plain")
    )
    assert render(text) == "[resource: mem://t, text/plain]\ninside"
    blob = EmbeddedResource(resource=BlobResourceContents(uri="mem://b", blob=b64(b"abc")))
    assert render(blob) == "[resource: mem://b, binary, 3 B]"
    assert render(ToolUseContent(id="u1", name="calc", input={"x": 1})) == '[tool use u1: calc {"x":1}]'
    assert (
        render(UnknownContent(type="holo", raw={"type": "holo", "d": 3}))
        == '[holo content: {"type":"holo","d":3}]'
    )


def test_render_call_result_skips_structured_content_already_in_the_text():
    result = CallToolResult(content=[TextContent(text='{"sum": 3}')], structured_content={"sum": 3})
    assert _render.render_call_result(result) == '{"sum": 3}\n'
    only = CallToolResult(structured_content={"sum": 3})
    assert _render.render_call_result(only) == '{\n  "sum": 3\n}\n'
    assert _render.render_call_result(CallToolResult()) == ""


def test_a_result_whose_structured_content_says_what_its_text_says_is_printed_once():
    # filesystem's read_text_file: {"content": TEXT} beside the text.
    text = CallToolResult(content=[TextContent(text="hello\n")], structured_content={"content": "hello\n"})
    assert _render.render_call_result(text) == "hello\n"
    # memory's create_entities: the list as JSON text, and {"entities": [...]}.
    entities = [{"name": "Ada", "entityType": "person", "observations": []}]
    listed = CallToolResult(
        content=[TextContent(text=json.dumps(entities, indent=2))], structured_content={"entities": entities}
    )
    assert _render.render_call_result(listed) == json.dumps(entities, indent=2) + "\n"
    # Content that says something else is still shown.
    other = CallToolResult(content=[TextContent(text="done")], structured_content={"content": "hello"})
    assert _render.render_call_result(other) == 'done\nstructured content:\n{\n  "content": "hello"\n}\n'
    two = CallToolResult(content=[TextContent(text="hello")], structured_content={"content": "hello", "n": 1})
    assert "structured content:" in _render.render_call_result(two)


def test_render_read_and_prompt_results():
    single = ReadResourceResult(contents=[TextResourceContents(uri="a://1", text="one\n")])
    assert _render.render_read_result(single) == "one\n"
    prompt = GetPromptResult(
        description="d",
        messages=[
            PromptMessage(role="user", content=TextContent(text="hi")),
            PromptMessage(role="assistant", content=ImageContent(data="AAAA", mime_type="image/png")),
        ],
    )
    assert _render.render_prompt_result(prompt) == "# d\n[user]\nhi\n[assistant]\n[image: image/png, 3 B]\n"


def test_render_capabilities():
    caps = ServerCapabilities(
        tools={"listChanged": True}, logging={}, extensions={"io.x/y": {}}, extra={"custom": {}}
    )
    assert _render.render_capabilities(caps) == "tools (listChanged), logging, extensions: io.x/y, custom"
    assert _render.render_capabilities(ServerCapabilities()) == "none"


def test_console_progress_bar_and_plain_lines(monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(_console, "FRAME", 0)  # draw every frame

    class Tty(io.StringIO):
        encoding = "utf-8"

        def isatty(self):
            return True

    tty = Tty()
    console = _console.Console(err=tty)
    console.progress(1, 4, "one")
    console.say("a message")
    console.progress(4, 4, "done")
    console.progress(7, None, None)
    console.clear()
    out = tty.getvalue()
    assert out.startswith("\r[" + "\u2588" * 5 + "\u2591" * 15 + "]  25% 1/4 one\x1b[K")
    # A message clears the bar, then the bar comes back.
    assert "\r\x1b[Ka message\n\r[" in out
    assert "] 100% 4/4 done\x1b[K" in out
    assert out.endswith(" 7\x1b[K\r\x1b[K")
    plain = io.StringIO()
    console = _console.Console(err=plain)
    console.progress(1, 4, "one")
    console.progress(1, 4, "one")
    console.progress(2.5, None, None)
    assert plain.getvalue() == "progress: 1/4 (25%) one\nprogress: 2.5\n"


# ------------------------------------------------------------------ questions, in-process


class Lines:
    """A `TerminalInput` stand-in: the given lines, then end of input."""

    def __init__(self, *lines):
        self.lines = list(lines)

    async def readline(self):
        await trio.lowlevel.checkpoint()
        return self.lines.pop(0) if self.lines else None


def asker(*lines):
    err = io.StringIO()
    budget = _run.Budget(None)
    ask = _forms.Asker(
        _console.Console(err=err),
        budget,
        interactive=True,
        server_name=lambda: "'srv'",
        reader=Lines(*lines),
    )
    return ask, err


FORM = ElicitFormParams(
    message="Tell me",
    requested_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
            "size": {
                "type": "string",
                "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            },
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
            "subscribe": {"type": "boolean", "default": False},
            "email": {"type": "string", "format": "email"},
            "ratio": {"type": "number"},
        },
        "required": ["name", "age"],
    },
)


async def test_form_asks_each_field_validates_and_confirms():
    ask, err = asker(
        "x",  # too short
        "Ada",
        "old",  # not an integer
        "200",  # above the maximum
        "36",
        "",  # the default: green
        "large",  # a choice by its title, any case
        "1,c,a,b",  # too many
        "1, c",
        "maybe",
        "yes",
        "",  # optional: skipped
        "0.5",
        "y",
    )
    answer = await ask(FORM)
    assert answer == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "age": 36,
            "color": "green",
            "size": "l",
            "tags": ["a", "c"],
            "subscribe": True,
            "ratio": 0.5,
        },
    }
    text = err.getvalue()
    assert text.startswith("The server 'srv' asks: Tell me\n")
    assert "  Name [0..  characters, required]: " not in text
    assert "    at least 2 characters\n" in text
    assert "    expected a whole number\n" in text
    assert "    at most 150\n" in text
    assert "    1) red\n    2) green\n    3) blue\n" in text
    assert "  color [1-3, default green]: " in text
    assert "    choose at most 2\n" in text
    assert "    answer y or n\n" in text
    assert "  email [email, optional, Enter skips]: " in text
    assert "About to send to 'srv':\n  name: \"Ada\"\n  age: 36\n" in text


async def test_form_rejects_bad_formats_and_requires_required_fields():
    params = ElicitFormParams(
        message="m",
        requested_schema={
            "type": "object",
            "properties": {
                "mail": {"type": "string", "format": "email"},
                "site": {"type": "string", "format": "uri"},
                "day": {"type": "string", "format": "date"},
            },
            "required": ["mail", "site", "day"],
        },
    )
    ask, err = asker(
        "", "not-an-address", "a@b.io", "example.com", "https://example.com/", "31/12", "2025-12-31", "y"
    )
    assert await ask(params) == {
        "action": "accept",
        "content": {"mail": "a@b.io", "site": "https://example.com/", "day": "2025-12-31"},
    }
    text = err.getvalue()
    assert "    required\n" in text
    assert "    expected an email address\n" in text
    assert "    expected a URI" in text
    assert "    expected a date, such as 2025-12-31\n" in text


async def test_form_declined_at_the_confirmation_or_at_end_of_input():
    ask, _ = asker("Ada", "1", "", "", "", "", "", "", "n")
    assert await ask(FORM) == {"action": "decline"}
    assert ask.declined is None  # a person's answer
    ask, err = asker("Ada")
    assert await ask(FORM) == {"action": "decline"}
    assert err.getvalue().endswith("\ntrio-mcp: declined (end of input)\n")
    assert ask.declined == "end of input"
    # Input has ended: later questions are declined without asking, the
    # same one quietly.
    asked = err.getvalue()
    assert await ask(FORM) == {"action": "decline"}
    assert err.getvalue() == asked
    other = ElicitFormParams(message="Again?", requested_schema={"type": "object", "properties": {}})
    assert await ask(other) == {"action": "decline"}
    assert err.getvalue() == asked + (
        'trio-mcp: declined the server\'s request for input ("Again?"): end of input\n'
    )


async def test_url_elicitation_asks_for_consent():
    params = ElicitUrlParams(message="Sign in", url="https://xn--exmple-cua.com/login?x=1")
    ask, err = asker("y")
    assert await ask(params) == {"action": "accept"}
    text = err.getvalue()
    assert "asks you to open a URL: Sign in\n  https://xn--exmple-cua.com/login?x=1\n" in text
    assert "  domain: xn--exmple-cua.com\n" in text
    assert "punycode" in text
    ask, _ = asker("")
    assert await ask(params) == {"action": "decline"}


async def test_not_interactive_declines_at_once():
    err = io.StringIO()
    ask = _forms.Asker(
        _console.Console(err=err), _run.Budget(None), interactive=False, server_name=lambda: "s"
    )
    assert ask.declined is None
    assert await ask(FORM) == {"action": "decline"}
    assert ask.declined == "stdin is not a terminal"
    # The same question again: the same answer, not said again; another question is said.
    assert await ask(FORM) == {"action": "decline"}
    url = ElicitUrlParams(message="Sign in", url="https://example.com/")
    assert await ask(url) == {"action": "decline"}
    assert err.getvalue() == (
        'trio-mcp: declined the server\'s request for input ("Tell me"): stdin is not a terminal\n'
        'trio-mcp: declined the server\'s request for input ("Sign in"): stdin is not a terminal\n'
    )


async def test_budget_pauses_while_asking():
    budget = _run.Budget(5)
    budget.start()
    deadline = budget.scope.deadline
    budget.pause()
    budget.pause()
    assert budget.scope.deadline == float("inf")
    await trio.sleep(0.01)
    budget.resume()
    assert budget.scope.deadline == float("inf")
    budget.resume()
    # What was left is given back, counted from now.
    assert budget.scope.deadline > deadline


# ------------------------------------------------------------------ in a pseudo-terminal


@pytest.mark.slow
def test_progress_bar_redraws_one_line_on_a_terminal(era):
    terminal = Terminal("call", "slow", "steps=4", "--", *scripted(era), environ=env())
    code, output = terminal.finish()
    assert code == 0, output
    # The first and the last frame are always drawn; each starts with a
    # carriage return and clears the rest of the line, and the bar is
    # wiped before the result is printed.
    assert "\r[" + "\u2588" * 5 + "\u2591" * 15 + "]  25% 1/4 step 1\x1b[K" in output
    assert "\r[" + "\u2588" * 20 + "] 100% 4/4 step 4\x1b[K" in output
    assert output.endswith("\r\x1b[K4 steps\r\n")
    assert "progress:" not in output


@pytest.mark.slow
def test_elicitation_answered_on_a_terminal(era):
    terminal = Terminal("call", "ask", "--", *scripted(era), environ=env())
    terminal.expect("The server 'mcp-test-server' asks: What is your name?")
    terminal.expect("  Name [required]: ")
    terminal.send("\n")
    terminal.expect("    required\r\n")
    terminal.send("alice\n")
    terminal.expect("About to send to 'mcp-test-server':\r\n  name: \"alice\"\r\nSend it? [y/N] ")
    terminal.send("y\n")
    code, output = terminal.finish()
    assert code == 0, output
    assert "hello alice\r\n" in output


@pytest.mark.slow
def test_elicitation_declined_with_ctrl_d():
    terminal = Terminal("call", "ask", "--", *scripted("modern"), environ=env())
    terminal.expect("  Name [required]: ")
    terminal.send("\x04")  # Ctrl-D at the start of a line: end of input
    code, output = terminal.finish()
    assert code == 0, output
    assert "trio-mcp: declined (end of input)\r\n" in output
    assert "action decline\r\n" in output


@pytest.mark.slow
def test_questions_after_end_of_input_are_declined_without_asking():
    terminal = Terminal("call", "endless", "ask=true", "--", *scripted("modern"), environ=env())
    terminal.expect("  Name [required]: ")
    terminal.send("\x04")  # Ctrl-D: end of input, for this question and every later one
    code, output = terminal.finish()
    assert code == cli.EXIT_INPUT, output
    assert output.count("asks: What is your name?") == 1
    assert output.count("declined") == 2
    assert output.endswith(
        "trio-mcp: declined (end of input)\r\n"
        "trio-mcp: the server kept asking for input after it was declined (end of input):"
        " tools/call still asked for input after 10 rounds (max_rounds=10)\r\n"
    )


@pytest.mark.slow
def test_interrupted_while_asking():
    terminal = Terminal("call", "ask", "--", *scripted("legacy"), environ=env())
    terminal.expect("  Name [required]: ")
    terminal.proc.send_signal(signal.SIGINT)  # Ctrl-C
    code, output = terminal.finish()
    assert code == cli.EXIT_INTERRUPTED
    # The question's line is ended, so that the shell's prompt starts on a line of its own
    # (and what is said of the interruption, when it is, on one of its own too).
    said = "trio-mcp: interrupted (tools/call): the request was cancelled and the server stopped\r\n"
    assert output.endswith(("  Name [required]: \r\n", "  Name [required]: \r\n" + said))


@pytest.mark.slow
def test_url_elicitation_on_a_terminal():
    terminal = Terminal("call", "ask", "mode=url", "--", *scripted("modern"), environ=env())
    terminal.expect(
        "asks you to open a URL: Sign in\r\n  https://example.com/auth?x=1\r\n  domain: example.com\r\n"
    )
    terminal.expect("[y/N] ")
    terminal.send("y\n")
    code, output = terminal.finish()
    assert code == 0, output
    assert '"action": "accept"' in output


# ------------------------------------------------------------------ the demo server


@pytest.mark.slow
def test_demo_server_echo():
    # The README's main command: no server given, the bundled demo answers.
    result = run("call", "echo", "text=hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hi\n"
    assert result.stderr == ""


@pytest.mark.slow
def test_demo_server_lists_and_calls():
    info = run("--json", "info")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["era"] == "modern"
    tools = run("--json", "tools")
    assert tools.returncode == 0, tools.stderr
    assert {"echo", "add", "slow", "ask"} <= {tool["name"] for tool in json.loads(tools.stdout)["tools"]}
    add = run("--json", "call", "add", "a=1", "b=2.5")
    assert add.returncode == 0, add.stderr
    assert json.loads(add.stdout)["structuredContent"] == {"sum": 3.5}


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_demo_server_ask_declined_when_stdin_is_not_a_terminal(protocol):
    # A decline is an answer: the tool's result is shown once, and the exit
    # status is the result's.
    result = run("--protocol", protocol, "call", "ask")
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stdout == "The user declined to give their name.\n"
    assert result.stderr == (
        'trio-mcp: declined the server\'s request for input ("What is your name?"): stdin is not a terminal\n'
    )


@pytest.mark.slow
def test_demo_server_ask_on_a_terminal():
    terminal = Terminal("call", "ask", environ=env())
    terminal.expect("What is your name?")
    terminal.expect("]: ")
    terminal.send("Ada\n")
    terminal.expect("Send it? [y/N] ")
    terminal.send("y\n")
    code, output = terminal.finish()
    assert code == 0, output
    assert "Hello, Ada!" in output


BANNER = "import sys, time; print('Weather server v1.2 starting...'); print('Listening on stdio'); sys.stdout.flush(); time.sleep(600)"


@pytest.mark.slow
def test_a_server_that_prints_a_banner_and_never_answers_gives_up_after_20_s():
    # By default: the whole handshake in 20 s (not 60 s after a 10 s probe),
    # and the error says what the server printed instead, without -v.
    result = run("tools", server=[sys.executable, "-c", BANNER], timeout=LIMIT + 20)
    line = one_error_line(result, 5)
    assert "within 20 s (handshake_timeout)" in line
    assert (
        "it wrote 2 lines that are not JSON-RPC messages, the first: 'Weather server v1.2 starting...'"
        in line
    )


@pytest.mark.slow
def test_a_typo_of_a_demo_tool_is_refused_with_the_closest_name():
    result = run("call", "ad", "a=1", "b=2")
    assert one_error_line(result, cli.EXIT_USAGE) == (
        "trio-mcp: the server has no tool 'ad' (did you mean 'add'?); nothing was sent"
    )
    result = run("call", "add", "a=1", "bb=2")
    assert one_error_line(result, cli.EXIT_USAGE) == (
        "trio-mcp: the tool 'add' has no argument 'bb' (did you mean 'b'?); nothing was sent"
    )
    # A schema that does not forbid other names: the missing one is named, with the likely typo.
    result = run("call", "echo", "txt=hi", server=scripted("modern"))
    assert result.returncode == cli.EXIT_USAGE
    assert result.stderr.splitlines()[-1] == (
        "trio-mcp: the tool 'echo' needs the argument 'text' (text=...; did you mean 'text' instead of 'txt'?);"
        " nothing was sent"
    )


@pytest.mark.slow
def test_ctrl_c_on_a_call_cancels_it_and_says_so():
    # SIGINT, as Ctrl-C sends it: the request is withdrawn (the server says it
    # was cancelled), the server is stopped, and the command says so, 130.
    argv = [sys.executable, "-m", "trio_mcp", "-v", "call", "slow", "steps=100", "delay=0.1"]
    argv += ["--", sys.executable, "-m", "trio_mcp.demo", "--verbose"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    try:
        assert process.stderr is not None
        seen = ""
        while "progress" not in seen:
            line = process.stderr.readline()
            assert line, "the command ended before its first progress"
            seen += line
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=LIMIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == cli.EXIT_INTERRUPTED
    assert "cancelled by the client" in stderr
    assert stderr.endswith(
        "trio-mcp: interrupted (tools/call): the request was cancelled and the server stopped\n"
    )


def test_a_call_imports_only_its_own_path() -> None:
    """``call`` loads the client and what a call shows, never the other commands' modules.

    The shell, completion, configuration, login and task commands, server
    groups, HTTP and login flows each load only for their own commands; the
    close-name suggestions (``difflib``) only after a mistake.
    """
    code = (
        "import sys, trio_mcp.cli as cli\n"
        "status = cli.run(['call', 'echo', 'text=hi'])\n"
        "print(status, *sorted(sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=LIMIT, check=True
    )
    status, *loaded = out.stdout.splitlines()[-1].split()
    assert status == "0", out.stderr
    assert "trio_mcp.cli._run" in loaded
    unneeded = {
        "trio_mcp.cli._shell",
        "trio_mcp.cli._completion",
        "trio_mcp.cli._configs",
        "trio_mcp.cli._login",
        "trio_mcp.cli._tasks",
        "trio_mcp._group",
        "trio_mcp._config",
        "trio_mcp.auth",
        "trio_mcp._transports.http",
        "httpx2",
        "difflib",
        "readline",
    }
    assert unneeded.isdisjoint(loaded), sorted(unneeded.intersection(loaded))


#: What a call must not load: the HTTP stack (and the HTTP wire's email
#: parser), logins, configuration files and server groups.
HTTP_AND_FRIENDS = (
    "httpx2",
    "httpcore2",
    "h11",
    "email",
    "http",
    "trio_mcp._core.http_wire",
    "trio_mcp._core.streamable_http",
    "trio_mcp._transports.http",
    "trio_mcp.auth",
    "trio_mcp._config",
    "trio_mcp._group",
)

#: What loads once the server is starting, while it starts: the client, the
#: models it returns, and their converter.
AFTER_THE_SPAWN = ("trio_mcp._client", "trio_mcp._models", "cattrs")


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m in names or m.startswith(tuple(f"{name}." for name in names)))


def test_a_call_starts_its_server_before_loading_the_client() -> None:
    """The server starts first; the client and the models load while it starts, the HTTP stack never.

    The speed trick of the command's start (see docs/design.rst): in a fresh
    interpreter, what is loaded at the moment the server is spawned, and
    after the whole call.
    """
    code = (
        "import json, sys, trio\n"
        "spawn = trio.lowlevel.open_process\n"
        "at_spawn = []\n"
        "async def open_process(*args, **kwargs):\n"
        "    at_spawn.append(sorted(sys.modules))\n"
        "    return await spawn(*args, **kwargs)\n"
        "trio.lowlevel.open_process = open_process\n"
        "import trio_mcp.cli as cli\n"
        "status = cli.run(['call', 'echo', 'text=hi'])\n"
        "print(json.dumps([status, at_spawn, sorted(sys.modules)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=LIMIT, check=True
    )
    status, at_spawn, after = json.loads(out.stdout.splitlines()[-1])
    assert status == 0, out.stderr
    assert out.stdout.startswith("hi\n")
    [before] = at_spawn  # one server, started once
    assert "trio_mcp._transports.process" in before
    assert _loaded(before, AFTER_THE_SPAWN) == []
    assert _loaded(after, AFTER_THE_SPAWN) != []
    assert _loaded(after, HTTP_AND_FRIENDS) == []


def test_a_listing_is_prepared_only_once_the_command_waits() -> None:
    """`prepare_listing` does its work only when no task is ready to run.

    In a fresh interpreter (the converter loads once per process): while the
    main task keeps running, the models' converter is not loaded; once the
    main task waits, the preparation runs and loads it.
    """
    code = (
        "import sys, trio\n"
        "import trio_mcp._models  # as the client loads them, once the server is starting\n"
        "from trio_mcp.cli._run import prepare_listing\n"
        "seen = []\n"
        "async def main():\n"
        "    prepared = trio.Event()\n"
        "    async def prepare():\n"
        "        await prepare_listing()\n"
        "        prepared.set()\n"
        "    async with trio.open_nursery() as nursery:\n"
        "        nursery.start_soon(prepare)\n"
        "        for _ in range(200):\n"
        "            await trio.lowlevel.checkpoint()\n"
        "            seen.append('cattrs' in sys.modules)\n"
        "        with trio.fail_after(20):\n"
        "            await prepared.wait()\n"
        "trio.run(main)\n"
        "print(any(seen), 'cattrs' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=LIMIT, check=True
    )
    assert out.stdout.split() == ["False", "True"], out.stderr


def test_a_listing_is_prepared_only_once_the_client_has_loaded() -> None:
    """`prepare_listing` waits for the models, which load with the client once the server is starting.

    The run's first wait is the spawn itself (Trio starts the process from
    a worker thread): work done then would compete with it. In a fresh
    interpreter, the run idles without the models and nothing is prepared;
    once they are loaded, the preparation runs at the next wait.
    """
    code = (
        "import importlib, sys, trio\n"
        "from trio_mcp.cli._run import _idle, prepare_listing\n"
        "seen = []\n"
        "async def main():\n"
        "    prepared = trio.Event()\n"
        "    async def prepare():\n"
        "        await prepare_listing()\n"
        "        prepared.set()\n"
        "    async with trio.open_nursery() as nursery:\n"
        "        nursery.start_soon(prepare)\n"
        "        for _ in range(3):\n"
        "            await _idle()\n"
        "            seen.append(('trio_mcp._models' in sys.modules, 'cattrs' in sys.modules))\n"
        "        importlib.import_module('trio_mcp._models')\n"
        "        with trio.fail_after(20):\n"
        "            await prepared.wait()\n"
        "trio.run(main)\n"
        "print(any(cattrs for _, cattrs in seen), any(models for models, _ in seen), 'cattrs' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=LIMIT, check=True
    )
    assert out.stdout.split() == ["False", "False", "True"], out.stderr


async def test_a_failed_preparation_is_no_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(data: object, cls: object) -> object:
        raise RuntimeError("not today")

    from trio_mcp._models import codec

    monkeypatch.setattr(codec, "structure", broken)
    with trio.fail_after(LIMIT):
        await _run.prepare_listing()  # this test's task waits: the run is idle at once
