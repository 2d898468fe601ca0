"""The checks of the ``trio-mcp`` command, as a person meets them.

A result that breaks its tool's ``outputSchema``, an argument name the tool
does not know, a URL without the ``http`` extra, a server that refuses
access, one name for a tool of a configuration's servers, ``log-level``,
``-o FILE``, a server's stderr drawn for a terminal, and every exit status:
each runs the real command (``python -m trio_mcp``) against real server
processes (the bundled demo server, the scripted test server) or a local
HTTP server, with the real clock and a bound on every wait. The pure parts
(cleaning stderr, checking names, finding a server) are tested in-process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import trio
from http_support import HttpServer, send

from trio_mcp import cli
from trio_mcp._core.naming import exposed_name
from trio_mcp.cli._failures import missing_extra
from trio_mcp.cli._names import find_server
from trio_mcp.cli._render import plain_line, plain_stderr
from trio_mcp.cli._run import numbered
from trio_mcp.cli._values import unknown_arguments

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "mcp_server.py"
DEMO = [sys.executable, "-m", "trio_mcp.demo"]
LIMIT = 30

#: Run the command with httpx2 missing, as on an installation without the http extra.
WITHOUT_HTTPX = "import sys; sys.modules['httpx2'] = None; from trio_mcp.cli import main; main()"


def env() -> dict[str, str]:
    environ = {
        k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["COLUMNS"] = "100"
    return environ


def scripted(era: str = "modern") -> list[str]:
    return [sys.executable, str(SERVER), "--era", era]


def run(
    *args: str, server: list[str] | None = None, prefix: list[str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``trio-mcp ARGS... [-- SERVER...]``, stdin not a terminal."""
    argv = [*(prefix or [sys.executable, "-m", "trio_mcp"]), *args]
    if server is not None:
        argv += ["--", *server]
    return subprocess.run(
        argv,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env(),
        timeout=LIMIT,
        check=False,
    )


async def arun(*args: str) -> subprocess.CompletedProcess[bytes]:
    """`run`, from a Trio test (a local HTTP server answers meanwhile)."""
    with trio.fail_after(LIMIT):
        return await trio.run_process(
            [sys.executable, "-m", "trio_mcp", *args],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            env=env(),
            check=False,
        )


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr


# ------------------------------------------------------------------ output schemas


@pytest.mark.slow
def test_a_result_that_breaks_its_output_schema_is_shown_and_said():
    result = run("call", "add", "a=1", "b=2", server=[*DEMO, "--wrong-output"])
    assert result.returncode == cli.EXIT_OUTPUT_SCHEMA, result.stderr
    # The result as it came, on stdout.
    assert result.stdout.startswith("3\n")
    assert '"sum": "3"' in result.stdout
    # The violation on stderr, one line, with the way to skip the check.
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("trio-mcp: the structured output of tool 'add' of server ")
    assert "does not match its outputSchema at $.sum: " in lines[0]
    assert lines[0].endswith("(--no-output-check skips the check)")


@pytest.mark.slow
def test_the_output_check_with_json_output():
    result = run("--json", "call", "add", "a=1", "b=2", server=[*DEMO, "--wrong-output"])
    assert result.returncode == cli.EXIT_OUTPUT_SCHEMA
    assert json.loads(result.stdout)["structuredContent"] == {"sum": "3"}
    assert "does not match its outputSchema at $.sum" in result.stderr


@pytest.mark.slow
def test_no_output_check_skips_it():
    result = run("call", "add", "a=1", "b=2", "--no-output-check", server=[*DEMO, "--wrong-output"])
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stderr == ""
    # {"sum": "3"} says what the text "3" says: printed once.
    assert result.stdout == "3\n"


@pytest.mark.slow
def test_a_result_that_fits_its_output_schema_passes():
    result = run("call", "add", "a=1", "b=2")
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stderr == ""


def test_the_check_works_on_a_plain_install():
    # pip install trio-mcp brings the validator: the check the command makes
    # by default never turns into a notice on each call.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(re.match(r"jsonschema-rs\b", requirement) for requirement in project["dependencies"])


@pytest.mark.slow
def test_without_the_validator_the_notice_comes_once_per_process():
    # An install without the package's dependencies (pip install --no-deps).
    prefix = [sys.executable, "-c", WITHOUT_HTTPX.replace("httpx2", "jsonschema_rs")]
    notice = (
        "trio-mcp: structured output is not checked against the tools' outputSchema:"
        " jsonschema-rs is not installed (pip install jsonschema-rs)\n"
    )
    result = run("call", "add", "a=1", "b=2", server=[*DEMO, "--wrong-output"], prefix=prefix)
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stdout == "3\n"
    assert result.stderr == notice
    # A whole shell session says it once, however many calls it makes.
    calls = "call add a=1 b=2\ncall add a=3 b=4\ncall add a=5 b=6\n"
    result = run("shell", server=[*DEMO, "--wrong-output"], prefix=prefix, stdin=calls)
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stderr == notice
    # A tool without an outputSchema has nothing to check, and nothing is said.
    quiet = run("call", "echo", "text=x", prefix=prefix)
    assert (quiet.returncode, quiet.stderr) == (cli.EXIT_OK, "")


# ------------------------------------------------------------------ argument names


@pytest.mark.slow
def test_an_unknown_argument_is_refused_when_the_schema_forbids_others():
    # The demo's tools say additionalProperties: false.
    result = run("call", "echo", "txt=hello")
    assert result.returncode == cli.EXIT_USAGE
    assert result.stdout == ""
    assert result.stderr == (
        "trio-mcp: the tool 'echo' has no argument 'txt' (did you mean 'text'?); nothing was sent\n"
    )
    far = run("call", "slow", "duraton=1", "--json", '{"stepz": 2}')
    assert far.returncode == cli.EXIT_USAGE
    assert far.stderr == (
        "trio-mcp: the tool 'slow' has no arguments 'stepz' (did you mean 'steps'?),"
        " 'duraton' (its arguments: delay, steps); nothing was sent\n"
    )
    as_json = run("--json", "call", "echo", "txt=hello")
    error = json.loads(as_json.stdout)["error"]
    assert error == {
        "kind": "usage",
        "message": "the tool 'echo' has no argument 'txt' (did you mean 'text'?); nothing was sent",
        "exitCode": cli.EXIT_USAGE,
        "argument": "txt",
        "suggestions": ["text"],
    }


@pytest.mark.slow
def test_an_unknown_argument_is_sent_with_a_warning_when_the_schema_says_nothing():
    # The scripted server's echo names 'text', and says nothing of other names.
    result = run("call", "echo", "text=hi", "txet=1", server=scripted())
    assert result.returncode == cli.EXIT_OK, result.stderr
    assert result.stderr == (
        "trio-mcp: the tool 'echo' does not declare the argument 'txet' (did you mean 'text'?);"
        " sent all the same, as its input schema does not forbid other names\n"
    )
    assert result.stdout == "hi\n"


def test_unknown_arguments_by_the_schema():
    strict = {"type": "object", "properties": {"duration": {}, "steps": {}}, "additionalProperties": False}
    [item] = unknown_arguments(["duraton", "steps"], strict)
    assert (item.name, item.close, item.forbidden) == ("duraton", ["duration"], True)
    unsaid = {"type": "object", "properties": {"duration": {}}}
    [item] = unknown_arguments(["duraton"], unsaid)
    assert (item.close, item.forbidden) == (["duration"], False)
    # Allowed: additionalProperties true or a schema, or no properties named at all.
    assert unknown_arguments(["x"], {**unsaid, "additionalProperties": True}) == []
    assert unknown_arguments(["x"], {**unsaid, "additionalProperties": {"type": "string"}}) == []
    assert unknown_arguments(["x"], {"type": "object"}) == []
    assert unknown_arguments(["x"], None) == []
    # Forbidden: unevaluatedProperties false too; a pattern makes a name known.
    [item] = unknown_arguments(["x"], {**unsaid, "unevaluatedProperties": False})
    assert item.forbidden
    patterned = {**strict, "patternProperties": {"^x-": {}, "[": {}}}
    assert [i.name for i in unknown_arguments(["x-a", "y"], patterned)] == ["y"]
    # A tool that takes nothing and says so.
    [item] = unknown_arguments(["a"], {"type": "object", "additionalProperties": False})
    assert item.forbidden
    assert item.describe([]) == "'a' (it takes none)"


# ------------------------------------------------------------------ a missing extra, access refused


@pytest.mark.slow
def test_a_url_without_the_http_extra_is_a_setup_error():
    prefix = [sys.executable, "-c", WITHOUT_HTTPX]
    result = run("tools", "http://127.0.0.1:9/mcp", prefix=prefix)
    assert result.returncode == cli.EXIT_SETUP
    no_traceback(result)
    assert result.stderr == (
        "trio-mcp: a remote server (a URL) needs the http extra, which is not installed"
        " (no module 'httpx2'): pip install 'trio-mcp[http]'\n"
    )
    as_json = run("--json", "tools", "http://127.0.0.1:9/mcp", prefix=prefix)
    assert json.loads(as_json.stdout)["error"]["kind"] == "setup"
    login = run("login", "--headless", "http://127.0.0.1:9/mcp", prefix=prefix)
    assert login.returncode == cli.EXIT_SETUP
    no_traceback(login)
    assert "pip install 'trio-mcp[http]'" in login.stderr


@pytest.mark.slow
def test_a_configuration_url_without_the_http_extra_is_a_setup_error(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"remote": {"url": "http://127.0.0.1:9/mcp"}}}))
    prefix = [sys.executable, "-c", WITHOUT_HTTPX]
    result = run("--config", str(config), "--server", "remote", "tools", prefix=prefix)
    assert result.returncode == cli.EXIT_SETUP, result.stderr
    no_traceback(result)
    assert "pip install 'trio-mcp[http]'" in result.stderr
    # In a group the remote server fails alone, saying why; the others are served.
    result = run("--config", str(config), "--json", "servers", prefix=prefix)
    assert result.returncode == 0, result.stderr
    no_traceback(result)
    (status,) = json.loads(result.stdout)["servers"]
    assert status["state"] == "failed"
    assert "pip install 'trio-mcp[http]'" in status["error"]


def test_missing_extra_is_found_through_groups_and_causes():
    error = ModuleNotFoundError("no httpx2", name="httpx2")
    assert missing_extra(error) == ("httpx2", "http")
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = BaseExceptionGroup("tasks", [ValueError(), ModuleNotFoundError(name="jsonschema_rs")])
    assert missing_extra(wrapped) == ("jsonschema_rs", "validation")
    assert missing_extra(ModuleNotFoundError(name="nope")) is None
    assert missing_extra(ValueError()) is None


@pytest.mark.parametrize(
    ("status", "headers", "words"),
    [
        (401, {"www-authenticate": 'Bearer resource_metadata="http://x/prm"'}, "needs a login (HTTP 401"),
        (401, {}, "needs a login (HTTP 401"),
        (403, {"www-authenticate": 'Bearer error="insufficient_scope", scope="b"'}, "login with more scope"),
        (403, {}, "refused access (HTTP 403)"),
    ],
)
@pytest.mark.slow
async def test_access_refused_exits_with_the_login_status(status, headers, words):
    async def handler(request, stream):
        await send(stream, status, headers)

    async with trio.open_nursery() as nursery:
        server = HttpServer(handler)
        await server.start(nursery)
        refused = await arun("tools", server.url)
        nursery.cancel_scope.cancel()
    assert refused.returncode == cli.EXIT_LOGIN, refused.stderr
    lines = refused.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert words in lines[0]


def test_a_kept_login_that_fails_is_the_login_status():
    from trio_mcp.auth import AuthorizationFailed
    from trio_mcp.cli._failures import explain

    options = cli.parse_args(["tools", "https://example.com/mcp"])
    failure = explain(
        AuthorizationFailed("the refresh token was refused", reason="invalid_grant"), options, "tools/list"
    )
    assert failure.status == cli.EXIT_LOGIN
    assert failure.message == (
        "the login kept for the server failed during tools/list: the refresh token was refused;"
        " log in again: trio-mcp login https://example.com/mcp"
    )


# ------------------------------------------------------------------ one name for a tool


def write_config(tmp_path: Path) -> Path:
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "trio_mcp.demo"]}
    config.write_text(json.dumps({"mcpServers": {"demo": server, "my.demo": server}}))
    return config


@pytest.mark.slow
def test_tools_lists_the_catalogue_names_and_call_takes_them(tmp_path):
    config = str(write_config(tmp_path))
    listed = run("--config", config, "tools")
    assert listed.returncode == 0, listed.stderr
    names = re.findall(r"^(\S+) - ", listed.stdout, re.MULTILINE)
    hashed = exposed_name("my.demo", "echo")
    assert "demo__echo" in names
    assert hashed in names
    assert not [name for name in names if "." in name]
    as_json = run("--config", config, "--json", "tools")
    assert {tool["name"] for tool in json.loads(as_json.stdout)["tools"]} == set(names)
    # Each name 'tools' shows is one 'call' takes; SERVER.TOOL too.
    for target in ("demo__echo", hashed, "demo.echo", "my.demo.echo"):
        called = run("--config", config, "call", target, f"text={target}")
        assert called.returncode == 0, (target, called.stderr)
        assert called.stdout == f"{target}\n"


@pytest.mark.slow
def test_a_name_of_no_server_says_both_forms(tmp_path):
    config = str(write_config(tmp_path))
    result = run("--config", config, "call", "other__echo")
    assert result.returncode == cli.EXIT_CONFIG
    assert "call SERVER__TOOL (the name 'tools' shows), SERVER.TOOL" in result.stderr
    gone = run("--config", config, "call", exposed_name("my.demo", "nope"))
    assert gone.returncode == cli.EXIT_CONFIG
    assert "has no tool named" in gone.stderr


def test_find_server():
    servers = ["demo", "my.demo", "a.b", "a"]
    assert find_server("demo__echo", servers) == ("demo", "echo")
    assert find_server("demo.echo", servers) == ("demo", "echo")
    assert find_server("a.b.c", servers) == ("a.b", "c")  # the longest server name
    assert find_server("a.x", servers) == ("a", "x")
    assert find_server(exposed_name("my.demo", "echo"), servers) == ("my.demo", None)
    assert find_server("nobody__echo", servers) is None
    assert find_server("x.echo", servers) is None
    # A tool name that is not plain: hashed, found by its server.
    assert find_server(exposed_name("demo", "a b"), servers) == ("demo", None)
    # Two servers whose hashed names may meet: not guessed.
    assert find_server(exposed_name("a.b", "t"), ["a.b", "a_b"]) is None


# ------------------------------------------------------------------ log-level, -o FILE


@pytest.mark.slow
def test_log_level_in_the_shell_shows_the_server_logs():
    for protocol in ("auto", "2025-11-25"):
        result = run("--protocol", protocol, "shell", stdin="log-level info\ncall slow steps=1 delay=0\n")
        assert result.returncode == 0, result.stderr
        assert "log level: info" in result.stdout
        assert "server log [info] trio-mcp-demo: slow: 1 steps of 0 s each" in result.stderr, (
            protocol,
            result.stderr,
        )


@pytest.mark.slow
def test_log_level_one_shot():
    result = run("--protocol", "2025-11-25", "--json", "log-level", "warning")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"level": "warning", "method": "logging/setLevel"}
    bad = run("log-level", "loud")
    assert bad.returncode == cli.EXIT_USAGE
    assert "invalid choice: 'loud'" in bad.stderr


NO_LOGGING = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    if m.get('method') == 'initialize':\n"
    "        result = {'protocolVersion': '2025-11-25', 'capabilities': {'tools': {}},"
    " 'serverInfo': {'name': 'nolog', 'version': '1'}}\n"
    "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': result}), flush=True)\n"
    "    elif 'id' in m:\n"
    "        sys.stderr.write('asked ' + m['method'] + '\\n')\n"
)


@pytest.mark.slow
def test_log_level_needs_the_logging_capability():
    result = run("--protocol", "2025-11-25", "log-level", "debug", server=[sys.executable, "-c", NO_LOGGING])
    assert result.returncode == cli.EXIT_RPC_ERROR
    assert result.stderr == (
        "trio-mcp: the server 'nolog' does not offer logging (its capabilities have no 'logging',"
        " at protocol version 2025-11-25)\n"
    )


@pytest.mark.slow
def test_output_file_text(tmp_path):
    out = tmp_path / "echo.txt"
    result = run("call", "echo", "text=into a file", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert out.read_text() == "into a file\n"
    assert result.stderr == f"trio-mcp: wrote 12 bytes to {out}\n"
    # In the shell, for one command.
    second = tmp_path / "second.txt"
    shell = run("shell", stdin=f"call echo text=one -o {second}\ncall echo text=two\n")
    assert shell.returncode == 0, shell.stderr
    assert second.read_text() == "one\n"
    assert shell.stdout == "two\n"


@pytest.mark.slow
def test_output_file_binary(tmp_path):
    image = tmp_path / "odd.png"
    result = run("call", "odd", "-o", str(image), server=scripted())
    assert result.returncode == 0, result.stderr
    assert image.read_bytes() == b"\x00\x00\x00"  # AAAA, decoded
    assert f"wrote 3 bytes (image/png) to {image}" in result.stderr
    assert result.stdout.startswith("plain\n")  # the rest of the result
    blob = tmp_path / "blob.bin"
    read = run("read", "mem://blob", "--output", str(blob), server=scripted())
    assert read.returncode == 0, read.stderr
    assert blob.read_bytes() == b"\x00\x01\xff"
    nowhere = run("call", "echo", "text=x", "-o", str(tmp_path / "no" / "such" / "dir"))
    assert nowhere.returncode == cli.EXIT_USAGE
    assert "cannot write" in nowhere.stderr


def test_numbered_files():
    assert numbered("out.png", 1) == "out.png"
    assert numbered("out.png", 2) == "out-2.png"
    assert numbered("dir.d/out", 3) == "dir.d/out-3"
    assert numbered(".hidden", 2) == ".hidden-2"


# ------------------------------------------------------------------ stderr without decorations

RICH_TRACEBACK = [
    "\x1b[31m╭───────────────────── Traceback (most recent call last) ─────────────────────╮\x1b[0m",
    "\x1b[31m│\x1b[0m /srv/server.py:10 in main                                                   \x1b[31m│\x1b[0m",
    "│                                                                             │",
    '│ ❱ 10 │   raise ValueError("no API key")                                       │',
    "│ ╭──── locals ────╮                                                          │",
    "│ │ key = None     │                                                          │",
    "│ ╰────────────────╯                                                          │",
    "╰─────────────────────────────────────────────────────────────────────────────╯",
    "\x1b[1;31mValueError: \x1b[0mno API key",
]


def test_plain_stderr_cuts_frames_to_their_text():
    assert plain_stderr(RICH_TRACEBACK) == [
        "Traceback (most recent call last)",
        "/srv/server.py:10 in main",
        '❱ 10 │   raise ValueError("no API key")',
        "locals",
        "key = None",
        "ValueError: no API key",
    ]


@pytest.mark.parametrize(
    ("line", "plain"),
    [
        ("\x1b[1;32mok\x1b[0m", "ok"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # a hyperlink
        ("\x1b]0;title\x07text", "text"),
        ("10%\r50%\r100%", "100%"),
        ("bell\x07 and nul\x00", "bell and nul"),
        ("tab\tkept  ", "tab\tkept"),
        ("+---+ ascii stays", "+---+ ascii stays"),
    ],
)
def test_plain_line(line, plain):
    assert plain_line(line) == plain


def test_plain_stderr_keeps_empty_lines_and_drops_decorations_only():
    assert plain_stderr(["a", "", "\x1b[0m", "────────", "b"]) == ["a", "", "b"]
    assert plain_stderr([]) == []


@pytest.mark.slow
def test_a_dead_server_shows_its_rich_traceback_as_text(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(
        f"import sys\nlines = {RICH_TRACEBACK!r}\nsys.stderr.write('\\n'.join(lines) + '\\n')\nsys.exit(1)\n",
        encoding="utf-8",
    )
    result = run("tools", server=[sys.executable, str(script)])
    assert result.returncode == cli.EXIT_SERVER_GONE
    assert "\x1b" not in result.stderr
    assert result.stderr.splitlines()[1:] == [
        "  | Traceback (most recent call last)",
        "  | /srv/server.py:10 in main",
        '  | ❱ 10 │   raise ValueError("no API key")',
        "  | locals",
        "  | key = None",
        "  | ValueError: no API key",
    ]


# ------------------------------------------------------------------ every exit status


def documented_statuses() -> dict[int, str]:
    """The exit statuses of the table in docs/cli.rst, with their first line."""
    text = (ROOT / "docs" / "cli.rst").read_text(encoding="utf-8")
    table = text.split("Each kind of error has its own exit status:", 1)[1].split("From Python", 1)[0]
    return {int(code): what for code, what in re.findall(r"\* - ``(\d+)``\n\s+- (.+)", table)}


def test_every_exit_status_is_in_the_documented_table_and_the_help():
    assert set(documented_statuses()) == set(cli.EXIT_CODES)
    assert set(STATUS_CASES) | {cli.EXIT_LOGIN, cli.EXIT_INTERRUPTED, cli.EXIT_BROKEN_PIPE} == set(
        cli.EXIT_CODES
    )


INTERNAL_BUG = (
    "import sys, trio_mcp.cli._run as run\n"
    "async def broken(session, client):\n"
    "    raise RuntimeError('a bug')\n"
    "run.HANDLERS['info'] = broken\n"
    "from trio_mcp.cli import main\n"
    "main()\n"
)

#: For each exit status (but those that need a local HTTP server, a signal
#: or a closed pipe, tested below), a command that ends with it.
STATUS_CASES: dict[int, tuple[list[str], list[str] | None, list[str] | None]] = {
    cli.EXIT_OK: (["call", "echo", "text=hi"], None, None),
    cli.EXIT_TOOL_ERROR: (["call", "fail"], scripted(), None),
    cli.EXIT_USAGE: (["call"], None, None),
    cli.EXIT_SPAWN: (["info"], ["no-such-server-command-anywhere"], None),
    cli.EXIT_SERVER_GONE: (["info"], [sys.executable, "-c", "import sys; sys.exit('no API key')"], None),
    cli.EXIT_TIMEOUT: (["--timeout", "1", "call", "slow", "steps=2", "delay=10"], None, None),
    cli.EXIT_RPC_ERROR: (["read", "demo://nope"], None, None),
    cli.EXIT_PROTOCOL: (["--protocol", "2026-07-28", "info"], scripted("legacy"), None),
    cli.EXIT_INPUT: (["call", "sample"], scripted(), None),
    cli.EXIT_CONFIG: (["--config", "/nonexistent/mcp.json", "tools"], None, None),
    cli.EXIT_OUTPUT_SCHEMA: (["call", "add", "a=1", "b=2"], [*DEMO, "--wrong-output"], None),
    cli.EXIT_SETUP: (["tools", "http://127.0.0.1:9/mcp"], None, [sys.executable, "-c", WITHOUT_HTTPX]),
    cli.EXIT_INTERNAL: (["info"], None, [sys.executable, "-c", INTERNAL_BUG]),
}


@pytest.mark.slow
@pytest.mark.parametrize("status", sorted(STATUS_CASES))
def test_each_exit_status(status):
    args, server, prefix = STATUS_CASES[status]
    result = run(*args, server=server, prefix=prefix)
    assert result.returncode == status, (result.stdout, result.stderr)
    no_traceback(result)
    if status != cli.EXIT_OK:
        assert result.stderr.startswith("trio-mcp"), result.stderr


@pytest.mark.slow
async def test_exit_status_login():
    async def handler(request, stream):
        await send(stream, 401, {"www-authenticate": "Bearer"})

    async with trio.open_nursery() as nursery:
        server = HttpServer(handler)
        await server.start(nursery)
        result = await arun("info", server.url)
        nursery.cancel_scope.cancel()
    assert result.returncode == cli.EXIT_LOGIN


@pytest.mark.slow
def test_exit_status_interrupted_and_broken_pipe():
    argv = [sys.executable, "-m", "trio_mcp", "call", "slow", "steps=100", "delay=1"]
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()
    ) as proc:
        try:
            assert proc.stderr is not None
            assert proc.stderr.readline().startswith(b"progress: 1/100")
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=LIMIT)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == cli.EXIT_INTERRUPTED
    argv = [sys.executable, "-m", "trio_mcp", "tools", "--schema"]
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdout.close()
        proc.stderr.read()
        proc.wait(timeout=LIMIT)
    assert proc.returncode == cli.EXIT_BROKEN_PIPE


def test_the_extras_messages_name_what_needs_them():
    # Every extra the command can miss says what it is for.
    from trio_mcp.cli._failures import EXTRA_MODULES, WHAT_EXTRAS

    assert set(EXTRA_MODULES.values()) <= set(WHAT_EXTRAS)
