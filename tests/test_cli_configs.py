"""The ``trio-mcp`` commands on configuration files, end to end.

``configs``, ``servers``, ``tools`` across servers, ``call SERVER.TOOL`` and
``--server NAME`` run as real processes (``python -m trio_mcp``) in a
temporary project folder, with a temporary home folder, against the bundled
demo server started from a configuration file. Every wait is bounded
(``timeout=`` of the subprocess calls); nothing asserts how long anything
took.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trio_mcp import cli

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 60
SECRET = "s3cr3t-Tok3n-value"
DEMO = {"command": sys.executable, "args": ["-m", "trio_mcp.demo"]}


@pytest.fixture
def project(tmp_path):
    """A project folder (with ``.git``) and an empty home folder beside it."""
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return folder


def write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def run(project: Path, *args: str, extra_env: dict[str, str] | None = None, stdin: str | None = None):
    environ = {key: value for key, value in os.environ.items() if key not in ("XDG_CONFIG_HOME", "APPDATA")}
    environ["HOME"] = str(project.parent / "home")
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["COLUMNS"] = "200"
    environ.update(extra_env or {})
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        cwd=project,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=environ,
        timeout=LIMIT,
        check=False,
    )


def check(result, code: int = 0):
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result


MIXED = {
    "mcpServers": {
        "demo": DEMO,
        "gone": {"command": "/nonexistent/no-such-server"},
        "old": {"command": "old-server", "args": ["--port", "1"], "disabled": True},
        "broken": {"command": "npx", "args": "-y pkg"},
    }
}


# ------------------------------------------------------------------ configs


@pytest.mark.slow
def test_configs_lists_the_files_found_and_their_servers(project):
    write(project / ".mcp.json", MIXED)
    write(project.parent / "home" / ".cursor" / "mcp.json", {"mcpServers": {"global": DEMO}})
    write(project / ".vscode" / "mcp.json", '{ // comments are fine here\n "servers": {}, }')
    write(project / ".cursor" / "mcp.json", "[1]")
    result = check(run(project, "configs"))
    home = project.parent / "home"
    lines = result.stdout.splitlines()
    assert lines[0] == f"{home / '.cursor' / 'mcp.json'} (cursor, user)"
    assert lines[1].split() == ["global", sys.executable, "-m", "trio_mcp.demo"]
    assert f"{project / '.mcp.json'} (claude-code, project)" in lines
    assert any(line.split()[:2] == ["old", "old-server"] and line.endswith("(disabled)") for line in lines)
    assert any(line.split()[:2] == ["broken", "invalid:"] and "no shell splitting" in line for line in lines)
    assert any(line.split()[:2] == ["gone", "/nonexistent/no-such-server"] for line in lines)
    assert f"{project / '.vscode' / 'mcp.json'} (vscode, project)" in lines
    assert "  (no servers)" in lines
    assert any(line.startswith("  not usable: ") and "must be a JSON object" in line for line in lines)
    assert result.stderr == ""


@pytest.mark.slow
def test_configs_json(project):
    write(project / ".mcp.json", MIXED)
    result = check(run(project, "--json", "configs"))
    configs = json.loads(result.stdout)["configs"]
    by_path = {record["path"]: record for record in configs}
    record = by_path[str(project / ".mcp.json")]
    assert record["exists"]
    assert (record["scope"], record["client"]) == ("project", "claude-code")
    states = {entry["name"]: entry["state"] for entry in record["servers"]}
    assert states == {"demo": "enabled", "gone": "enabled", "old": "disabled", "broken": "invalid"}
    assert not by_path[str(project / ".cursor" / "mcp.json")]["exists"]
    assert {record["scope"] for record in configs} == {"user", "project"}


@pytest.mark.slow
def test_claude_codes_settings_without_servers_are_an_empty_configuration(project):
    write(project.parent / "home" / ".claude.json", {"numStartups": 3, "projects": {}})
    write(project / ".mcp.json", {"mcpServers": {"demo": DEMO}})
    result = check(run(project, "configs"))
    assert (
        f"{project.parent / 'home' / '.claude.json'} (claude-code, user)\n  (no servers)\n" in result.stdout
    )
    result = check(run(project, "servers"))
    assert result.stderr == ""
    write(project.parent / "home" / ".claude.json", {"mcpServers": {"user": DEMO}})
    result = check(run(project, "configs"))
    assert any(line.split()[:1] == ["user"] for line in result.stdout.splitlines())


@pytest.mark.slow
def test_configs_with_nothing_found(project):
    result = check(run(project, "configs"))
    assert result.stdout == ""
    assert "no configuration file found; looked for:" in result.stderr
    assert str(project / ".mcp.json") in result.stderr


@pytest.mark.slow
def test_configs_of_named_files(project):
    write(project / "a.json", {"mcpServers": {"a": DEMO}})
    result = check(run(project, "--config", "a.json", "--config", "missing.json", "configs"))
    assert result.stdout.splitlines()[0] == str(project / "a.json")
    assert f"{project / 'missing.json'}: not found" in result.stdout


@pytest.mark.slow
def test_values_are_shown_as_written_never_expanded(project):
    write(
        project / ".mcp.json",
        {
            "mcpServers": {
                "a": {"command": "tool", "args": ["--token=${TOKEN}"], "env": {"KEY": "${TOKEN}"}},
                "r": {
                    "url": "https://example.com/mcp?key=${TOKEN}",
                    "headers": {"Authorization": "${TOKEN}"},
                },
                "bad": {"command": "x", "env": {"A": SECRET, "B": None}},
            }
        },
    )
    for args in (
        ["configs"],
        ["--json", "configs"],
        ["servers"],
        ["--json", "servers"],
        ["--verbose", "servers"],
    ):
        result = run(project, *args, extra_env={"TOKEN": SECRET})
        assert SECRET not in result.stdout + result.stderr, args
    assert "'--token=${TOKEN}'" in run(project, "configs", extra_env={"TOKEN": SECRET}).stdout


# ------------------------------------------------------------------ servers, tools, call


@pytest.mark.slow
def test_servers_shows_each_state(project):
    write(project / "servers.json", MIXED)
    result = check(run(project, "--config", "servers.json", "servers"))
    header, *lines = result.stdout.splitlines()
    assert header.split() == ["NAME", "STATE", "TOOLS", "DETAIL"]
    cuts = [header.index(word) for word in ("STATE", "TOOLS", "DETAIL")]
    table = {
        line[: cuts[0]].strip(): [
            line[cuts[0] : cuts[1]].strip(),
            line[cuts[1] : cuts[2]].strip(),
            line[cuts[2] :],
        ]
        for line in lines
    }
    assert list(table) == ["demo", "gone", "old", "broken"]
    assert table["demo"] == ["ready", "6", f"{sys.executable} -m trio_mcp.demo"]
    assert table["gone"][:2] == ["failed", ""]
    assert "no-such-server" in table["gone"][2]
    assert table["old"] == ["disabled", "", "old-server --port 1"]
    assert table["broken"][:2] == ["invalid", ""]
    assert table["broken"][2].startswith("args: must be a list of strings")
    assert result.stderr == ""


@pytest.mark.slow
def test_servers_json(project):
    write(project / "servers.json", MIXED)
    result = check(run(project, "--json", "--config", "servers.json", "servers"))
    servers = {record["name"]: record for record in json.loads(result.stdout)["servers"]}
    assert servers["demo"]["state"] == "ready"
    assert servers["demo"]["tools"] == 6
    assert servers["gone"]["state"] == "failed"
    assert "no-such-server" in servers["gone"]["error"]
    assert servers["broken"]["state"] == "invalid"
    assert servers["old"]["state"] == "disabled"


@pytest.mark.slow
def test_a_server_that_hangs_at_start_does_not_hold_the_table(project):
    hang = {"command": sys.executable, "args": ["-c", "import time; time.sleep(120)"]}
    write(project / ".mcp.json", {"mcpServers": {"demo": DEMO, "hang": hang}})
    result = check(run(project, "--json", "--timeout", "4", "servers"))
    servers = {record["name"]: record for record in json.loads(result.stdout)["servers"]}
    assert servers["demo"]["state"] == "ready"
    assert servers["hang"]["state"] in ("restarting", "failed")
    assert "did not start within" in servers["hang"]["error"]


@pytest.mark.slow
def test_servers_reads_the_discovered_files_and_skips_broken_ones(project):
    write(project / ".mcp.json", {"mcpServers": {"demo": DEMO}})
    write(project / ".cursor" / "mcp.json", "not json")
    result = check(run(project, "servers"))
    assert result.stdout.splitlines()[1].split()[:3] == ["demo", "ready", "6"]
    assert f"skipped {project / '.cursor' / 'mcp.json'}: not valid JSON" in result.stderr


@pytest.mark.slow
def test_tools_across_servers(project):
    write(
        project / ".mcp.json", {"mcpServers": {"one": DEMO, "two": DEMO, "gone": MIXED["mcpServers"]["gone"]}}
    )
    result = check(run(project, "--config", ".mcp.json", "tools"))
    names = [line.split(" - ")[0] for line in result.stdout.splitlines() if not line.startswith(" ")]
    assert {"one__echo", "two__echo", "one__add", "two__add"} <= set(names)
    assert "server 'gone' is failed" in result.stderr
    tools = json.loads(check(run(project, "--config", ".mcp.json", "tools", "--json")).stdout)["tools"]
    echo = next(tool for tool in tools if tool["name"] == "two__echo")
    assert echo["server"] == "two"
    assert echo["serverTool"] == "echo"
    assert "inputSchema" in echo


@pytest.mark.slow
def test_call_server_dot_tool(project):
    write(project / ".mcp.json", {"mcpServers": {"demo": DEMO, "demo.v2": DEMO}})
    assert check(run(project, "--config", ".mcp.json", "call", "demo.echo", "text=hi")).stdout == "hi\n"
    # The longest server name wins: "demo.v2" is a server, "echo" its tool.
    assert (
        check(run(project, "--config", ".mcp.json", "call", "demo.v2.echo", "text=there")).stdout == "there\n"
    )
    # Without --config (or --server), "call" talks to the demo server as always.
    result = check(run(project, "call", "demo.echo"), cli.EXIT_USAGE)
    assert "the server has no tool 'demo.echo' (did you mean 'echo'?)" in result.stderr
    result = check(run(project, "--config", ".mcp.json", "call", "demo.add", "a=1", "b=2", "--json"))
    assert json.loads(result.stdout)["structuredContent"] == {"sum": 3}


@pytest.mark.slow
def test_server_option_runs_any_command(project):
    write(project / ".mcp.json", {"mcpServers": {"demo": DEMO}})
    assert check(run(project, "--server", "demo", "call", "echo", "text=hi")).stdout == "hi\n"
    assert "trio-mcp-demo" in check(run(project, "--server", "demo", "info")).stdout
    assert "echo" in check(run(project, "--server", "demo", "tools")).stdout


@pytest.mark.slow
def test_the_shell_on_a_configured_server(project):
    write(project / ".mcp.json", {"mcpServers": {"demo": DEMO}})
    environ = {key: value for key, value in os.environ.items() if key not in ("XDG_CONFIG_HOME", "APPDATA")}
    environ.update(HOME=str(project.parent / "home"), PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "--server", "demo", "shell"],
        cwd=project,
        input="call echo text=hi\nservers\n",
        capture_output=True,
        text=True,
        env=environ,
        timeout=LIMIT,
        check=False,
    )
    assert result.stdout == "hi\n"
    assert "unknown command 'servers'" in result.stderr
    assert "Traceback" not in result.stderr


SCRIPTED = {"command": sys.executable, "args": [str(ROOT / "tests" / "servers" / "mcp_server.py")]}


@pytest.mark.slow
def test_prompts_resources_and_templates_across_servers(project):
    write(
        project / ".mcp.json",
        {"mcpServers": {"demo": DEMO, "mem": SCRIPTED, "gone": {"command": "/no/such"}}},
    )
    prompts = check(run(project, "--config", ".mcp.json", "prompts"))
    assert "demo__greet - Greet someone" in prompts.stdout.splitlines()
    assert "mem__greet" in prompts.stdout
    assert "server 'gone' is failed" in prompts.stderr
    assert "its prompts are not listed" in prompts.stderr
    listed = json.loads(check(run(project, "--config", ".mcp.json", "prompts", "--json")).stdout)["prompts"]
    greet = next(prompt for prompt in listed if prompt["server"] == "demo")
    assert (greet["name"], greet["serverPrompt"]) == ("demo__greet", "greet")
    assert greet["arguments"][0]["name"] == "name"

    resources = check(run(project, "--config", ".mcp.json", "resources")).stdout.splitlines()
    assert any(line.startswith("demo://readme  (") and line.endswith("  [demo]") for line in resources)
    assert any(line.startswith("mem://a  (") and line.endswith("  [mem]") for line in resources)
    templates = json.loads(check(run(project, "--config", ".mcp.json", "templates", "--json")).stdout)
    pairs = {(t["uriTemplate"], t["server"]) for t in templates["resourceTemplates"]}
    assert {("demo://greeting/{name}", "demo"), ("mem://items/{id}", "mem")} <= pairs
    # --server: that server's own list, as for any server.
    one = check(run(project, "--config", ".mcp.json", "--server", "mem", "resources")).stdout
    assert "mem://a" in one
    assert "demo://readme" not in one


@pytest.mark.slow
def test_call_a_tool_by_its_group_wide_name(project):
    write(project / ".mcp.json", {"mcpServers": {"demo": DEMO, "demo.v2": DEMO}})
    assert check(run(project, "--config", ".mcp.json", "call", "demo__echo", "text=hi")).stdout == "hi\n"
    result = check(run(project, "--config", ".mcp.json", "call", "nope__echo"), cli.EXIT_CONFIG)
    assert "'nope__echo' names no server" in result.stderr


SHELL_SCRIPT = """\
tools
call demo.add a=1 b=2
call mem__echo text=by-its-group-name
prompt demo.greet name=Ada
read mem://a
read demo://greeting/Zed
read mem://items/7 --server demo
call nope
call echo text=own-name --server mem
call demo.slow
call slow --server demo
info
info --server demo
servers
"""


@pytest.mark.slow
def test_the_shell_across_servers(project):
    demo = {**DEMO, "disabledTools": ["slow"]}
    write(project / ".mcp.json", {"mcpServers": {"demo": demo, "mem": SCRIPTED}})
    result = run(project, "--config", ".mcp.json", "shell", stdin=SHELL_SCRIPT)
    assert "Traceback" not in result.stderr
    out = result.stdout
    assert "demo__echo - Echo" in out
    assert "mem__echo" in out
    assert "\n3\n" in out
    assert "by-its-group-name\n" in out
    assert "Please write a short, warm greeting for Ada." in out
    assert "alpha\n" in out  # the scripted server's mem://a
    assert "Hello, Zed!" in out  # a template of the demo server only
    assert "own-name\n" in out
    assert "server:       trio-mcp-demo" in out
    assert out.splitlines()[-3].split() == ["NAME", "STATE", "TOOLS", "DETAIL"]
    errors = result.stderr.splitlines()
    assert "no server offers a tool named 'nope'" in result.stderr
    assert any("'info' talks to one server: say which with --server NAME" in line for line in errors)
    # A tool the configuration leaves out is not called, by either name.
    assert "demo__slow" not in out
    assert errors.count("trio-mcp: server 'demo' offers no tool named 'slow'") == 2
    assert "trio-mcp: no server offers a tool named 'demo.slow'" not in errors
    # The demo server is asked for what it does not have: its own error, and the shell goes on.
    assert any("resources/read" in line for line in errors)
    assert result.returncode == cli.EXIT_OK  # the last command's status


@pytest.mark.slow
def test_the_shell_across_servers_says_which_server_a_shared_resource_needs(project):
    write(project / ".mcp.json", {"mcpServers": {"one": DEMO, "two": DEMO}})
    result = run(
        project,
        "--config",
        ".mcp.json",
        "shell",
        stdin="read demo://readme\nread demo://readme --server two\nprompt two__greet name=Bob\nexit 0\n",
    )
    assert result.returncode == 0
    assert "the servers 'one', 'two' all have the resource 'demo://readme': say which with --server NAME" in (
        result.stderr
    )
    assert result.stdout.startswith("# The trio-mcp demo server")
    help_text = run(project, "--config", ".mcp.json", "shell", stdin="help\n").stdout
    assert "  servers    " in help_text
    assert "--server NAME on a line sends that command to one server" in help_text
    assert "greeting for Bob" in result.stdout


@pytest.mark.slow
def test_the_entry_env_file_and_cwd_reach_the_server(project):
    write(project / "sub" / ".env", "GREETING=hello\n")
    (project / "sub" / "work").mkdir()
    script = (
        "import os, sys; sys.exit(os.environ['GREETING'] + ' ' + os.environ['EXTRA'] + ' ' + os.getcwd())"
    )
    write(
        project / "sub" / "mcp.json",
        {
            "mcpServers": {
                "s": {"command": sys.executable, "args": ["-c", script], "envFile": ".env", "cwd": "work"}
            }
        },
    )
    result = check(run(project, "--config", "sub/mcp.json", "--server", "s", "--env", "EXTRA=x", "info"), 4)
    assert f"hello x {project / 'sub' / 'work'}" in result.stderr
    assert result.stderr.startswith(f"trio-mcp: the server 's' ({sys.executable} -c ")


@pytest.mark.slow
def test_a_dying_server_is_named_without_its_expanded_values(project):
    write(
        project / ".mcp.json",
        {
            "mcpServers": {
                "s": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)", "${TOKEN}"]}
            }
        },
    )
    result = check(run(project, "--server", "s", "info", extra_env={"TOKEN": SECRET}), 4)
    assert "exited with code 3" in result.stderr
    assert "${TOKEN}" in result.stderr
    assert SECRET not in result.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--server", "nope", "info"], "no server named 'nope' (it has: 'demo', 'off', 'broken')"),
        (["--server", "broken", "info"], "server 'broken': command: must be a string, got an integer"),
        (["--server", "off", "info"], "server 'off' is disabled in"),
        (
            ["--config", ".mcp.json", "call", "nope.echo"],
            "'nope.echo' names no server of the configuration: call SERVER__TOOL",
        ),
        (["--config", ".mcp.json", "call", "echo"], "'echo' names no server"),
        (["--config", ".mcp.json", "info"], "'info' talks to one server: name it with --server NAME"),
        (["--config", ".mcp.json", "prompts", "--server", "nope"], "no server named 'nope'"),
        (["--config", "missing.json", "servers"], "missing.json: cannot read the file"),
        (["--config", "bad.json", "servers"], "bad.json: not valid JSON"),
    ],
)
@pytest.mark.slow
def test_configuration_errors_exit_9(project, args, words):
    write(
        project / ".mcp.json",
        {"mcpServers": {"demo": DEMO, "off": {"command": "x", "disabled": True}, "broken": {"command": 3}}},
    )
    write(project / "bad.json", "{")
    result = check(run(project, *args), cli.EXIT_CONFIG)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("trio-mcp: ")
    assert words in lines[0]
    assert result.stdout == ""


@pytest.mark.slow
def test_configuration_errors_in_json_mode(project):
    result = check(run(project, "--json", "servers"), cli.EXIT_CONFIG)
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "config"
    assert error["exitCode"] == cli.EXIT_CONFIG
    assert "no configuration file found" in error["message"]


@pytest.mark.slow
def test_a_remote_entry_that_cannot_be_reached_fails_alone(project):
    # Nothing listens on port 1 of this machine: the connection is refused.
    remote = {"url": "http://127.0.0.1:1/mcp?key=${TOKEN}", "headers": {"Authorization": "${TOKEN}"}}
    write(project / ".mcp.json", {"mcpServers": {"demo": DEMO, "remote": remote}})
    result = check(run(project, "--json", "--timeout", "10", "servers", extra_env={"TOKEN": SECRET}))
    servers = {record["name"]: record for record in json.loads(result.stdout)["servers"]}
    assert servers["demo"]["state"] == "ready"
    # (Should the demo server take over a second to start, a busy machine,
    # the remote one is already starting again after its first failure.)
    assert servers["remote"]["state"] in ("failed", "restarting", "starting")
    assert servers["remote"]["transport"] == "http"
    assert servers["remote"]["error"]
    assert SECRET not in result.stdout + result.stderr


# ------------------------------------------------------------------ parsing


def test_parse_config_options():
    options = cli.parse_args(["--config", "a.json", "tools", "--config", "b.json", "--server", "s"])
    assert options.config == ["a.json", "b.json"]
    assert options.server_name == "s"
    assert options.uses_configs
    assert cli.parse_args(["servers"]).uses_configs
    assert cli.parse_args(["configs"]).uses_configs
    assert not cli.parse_args(["tools"]).uses_configs


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--config", "a.json", "tools", "--", "server"], "exclude each other"),
        (["--server", "s", "tools", "--", "server"], "exclude each other"),
        (["servers", "--", "server"], "exclude each other"),
        (["servers", "--server", "s"], "does not take"),
        (["configs", "--server", "s"], "does not take"),
    ],
)
def test_parse_config_usage_errors(args, words):
    with pytest.raises(cli.UsageError, match=words):
        cli.parse_args(args)


@pytest.mark.slow
def test_a_dying_server_in_the_table_is_named_as_written(project):
    # Fails without the fix: the table's detail, the --json error and the
    # 'tools' warning line showed the ServerGone message, which named the
    # server by its expanded command line.
    write(
        project / ".mcp.json",
        {
            "mcpServers": {
                "s": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)", "--key=${TOKEN}"]}
            }
        },
    )
    outputs = []
    for args in (["servers"], ["--json", "servers"], ["tools"], ["--verbose", "--json", "tools"]):
        result = run(project, "--timeout", "20", *args, extra_env={"TOKEN": SECRET})
        outputs.append(result.stdout + result.stderr)
        assert SECRET not in outputs[-1], args
    assert "--key=${TOKEN}" in outputs[0]
    assert "exited with code 3" in outputs[0]
