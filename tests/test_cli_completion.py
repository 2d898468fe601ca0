"""Tab completion of ``trio-mcp`` in bash, zsh and fish, end to end.

``trio-mcp completion SHELL`` prints a script; each shell that is installed
loads it and completes real command lines, through ``trio-mcp`` on its
``PATH`` (a small script running ``python -m trio_mcp``) and the bundled
demo server. Where a shell is not installed, its test is skipped. What the
hidden helper offers is also tested in-process, as a pure function.

Real processes, real clock: every wait is bounded, nothing asserts how long
anything took.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from trio_mcp import cli
from trio_mcp.cli._completion import HELPER, candidates, script
from trio_mcp.cli._shell import Catalog

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 60
DEMO = {"command": sys.executable, "args": ["-m", "trio_mcp.demo"]}
#: Some of the demo server's tools.
DEMO_TOOLS = {"add", "ask", "echo", "slow"}

unix_only = pytest.mark.skipif(sys.platform == "win32", reason="the completion scripts are for Unix shells")


def run(*args: str, cwd: Path | None = None, environ: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ if environ is not None else base_env(),
        timeout=LIMIT,
        check=False,
    )


def base_env() -> dict[str, str]:
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    return environ


@pytest.fixture
def on_path(tmp_path):
    """An environment with ``trio-mcp`` on the PATH (this Python's), and a project folder to run in."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "trio-mcp"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trio_mcp "$@"\n')
    command.chmod(command.stat().st_mode | stat.S_IXUSR)
    environ = base_env()
    environ["PATH"] = f"{bin_dir}{os.pathsep}{environ.get('PATH', '')}"
    environ["HOME"] = str(tmp_path / "home")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "mcp.json").write_text(json.dumps({"mcpServers": {"one": DEMO, "two": DEMO}}))
    return environ, project


# ------------------------------------------------------------------ the command


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_script(shell):
    result = run("completion", shell)
    assert result.returncode == 0, result.stderr
    assert result.stdout == script(shell)
    assert f"trio-mcp {HELPER} {shell}" in result.stdout
    assert result.stderr == ""


def test_completion_of_an_unknown_shell_is_a_usage_error():
    result = run("completion", "tcsh")
    assert result.returncode == cli.EXIT_USAGE
    assert "invalid choice: 'tcsh'" in result.stderr


@pytest.mark.slow
def test_the_helper_says_nothing_on_stderr_even_when_the_server_cannot_start(tmp_path):
    result = run(HELPER, "bash", " ", "trio-mcp call -- /no/such/server ", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "space\n"  # after "--": the server's words, the shell's own completion
    # A server (after the cursor) that starts, then dies: nothing offered, nothing said.
    dying = f" -- {sys.executable} -c 'import sys; sys.exit(3)'"
    result = run(HELPER, "bash", " ", "trio-mcp call ", dying, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "space\n", "")
    result = run(HELPER, "bash", " ", "trio-mcp --config missing.json call ", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "space\n", "")


# ------------------------------------------------------------------ bash


def bash_complete(environ: dict[str, str], cwd: Path, line: str, after: str = "") -> list[str]:
    """What bash offers for ``line`` (the cursor at its end, ``after`` after it), the script loaded
    as a user would."""
    program = f"""
source <(trio-mcp completion bash)
complete -p trio-mcp >/dev/null || exit 3
COMP_LINE={_bash_quote(line + after)}
COMP_POINT={len(line)}
read -r -a COMP_WORDS <<< "${{COMP_LINE:0:COMP_POINT}}"
[[ "${{COMP_LINE:0:COMP_POINT}}" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_trio_mcp_complete trio-mcp "${{COMP_WORDS[COMP_CWORD]}}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    result = subprocess.run(
        ["bash", "-c", program],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        timeout=LIMIT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line]


def _bash_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


@needs_bash
@unix_only
def test_bash_accepts_the_script(tmp_path):
    path = tmp_path / "trio-mcp.bash"
    path.write_text(script("bash"))
    result = subprocess.run(
        ["bash", "-n", str(path)], capture_output=True, text=True, timeout=LIMIT, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.slow
@needs_bash
@unix_only
def test_bash_completes_commands_tools_arguments_and_uris(on_path):
    environ, project = on_path
    assert bash_complete(environ, project, "trio-mcp c") == ["call", "complete", "configs", "completion"]
    assert bash_complete(environ, project, "trio-mcp --js") == ["--json"]
    assert bash_complete(environ, project, "trio-mcp completion ") == ["bash", "zsh", "fish"]
    # The demo server's tools: it is started to ask.
    tools = bash_complete(environ, project, "trio-mcp call ")
    assert set(tools) >= DEMO_TOOLS
    assert tools == sorted(tools)
    assert bash_complete(environ, project, "trio-mcp call ad") == ["add"]
    assert bash_complete(environ, project, "trio-mcp call add a=1 ") == ["b="]
    # bash takes "demo:" as two words: what it is offered is the rest of the URI.
    assert bash_complete(environ, project, "trio-mcp read demo:") == ["//readme", "//greeting/"]
    assert bash_complete(environ, project, "trio-mcp prompt greet ") == ["name="]
    # A template's variable: the server's suggestions (completion/complete).
    assert bash_complete(environ, project, "trio-mcp read demo://greeting/A") == [
        "//greeting/Ada",
        "//greeting/Alan",
        "//greeting/Alice",
    ]
    # A configuration's servers, and their tools by the names the lists show.
    assert bash_complete(environ, project, "trio-mcp --config mcp.json --server ") == ["one", "two"]
    assert bash_complete(environ, project, "trio-mcp --config mcp.json call two__e") == ["two__echo"]
    assert bash_complete(environ, project, "trio-mcp --config mcp.json --server one call e") == ["echo"]
    # The server after the cursor: its tools, not the demo server's.
    scripted = f" -- {sys.executable} {ROOT / 'tests' / 'servers' / 'mcp_server.py'}"
    tools = bash_complete(environ, project, "trio-mcp call ", scripted)
    assert {"hang", "stats", "odd"} <= set(tools)
    assert bash_complete(environ, project, "trio-mcp call ha", scripted) == ["hang"]
    # A configuration named after the cursor, too.
    assert bash_complete(environ, project, "trio-mcp call one__e", " --config mcp.json") == ["one__echo"]
    # A value with a space is inserted quoted (bash takes "location=" as a word of its own).
    enum = f" -- {sys.executable} {ROOT / 'tests' / 'servers' / 'enum_server.py'}"
    assert bash_complete(environ, project, "trio-mcp call weather location=Lo", enum) == ["'Los Angeles'"]


# ------------------------------------------------------------------ zsh


needs_zsh = pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")


@needs_zsh
@unix_only
def test_zsh_accepts_the_script(tmp_path):
    path = tmp_path / "_trio-mcp"
    path.write_text(script("zsh"))
    result = subprocess.run(
        ["zsh", "-n", str(path)], capture_output=True, text=True, timeout=LIMIT, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")


def zsh_complete(environ: dict[str, str], cwd: Path, line: str, after: str = "") -> list[str]:
    """What zsh's completion function adds for ``line``, with ``compadd`` and ``compdef`` stood in for."""
    program = f"""
compdef() {{ print -r -- "compdef $*" }}
compadd() {{ print -r -- "compadd $*" }}
source <(trio-mcp completion zsh)
BUFFER={_bash_quote(line + after)}
CURSOR={len(line)}
_trio_mcp_complete
"""
    result = subprocess.run(
        ["zsh", "-f", "-c", program],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        timeout=LIMIT,
        check=False,
    )
    return result.stdout.splitlines()


@pytest.mark.slow
@needs_zsh
@unix_only
def test_zsh_completes_commands_tools_and_arguments(on_path):
    environ, project = on_path
    lines = zsh_complete(environ, project, "trio-mcp c")
    assert lines == ["compdef _trio_mcp_complete trio-mcp", "compadd -Q -- call complete configs completion"]
    added = zsh_complete(environ, project, "trio-mcp call ")[-1]
    assert added.startswith("compadd -Q -- ")
    assert set(added.split()[3:]) >= DEMO_TOOLS
    # NAME= goes on without a space; a URI is one word in zsh.
    assert zsh_complete(environ, project, "trio-mcp call add ")[-1] == "compadd -Q -S  -- a= b="
    assert zsh_complete(environ, project, "trio-mcp read demo://r")[-1] == "compadd -Q -- demo://readme"
    scripted = f" -- {sys.executable} {ROOT / 'tests' / 'servers' / 'mcp_server.py'}"
    assert zsh_complete(environ, project, "trio-mcp call ha", scripted)[-1] == "compadd -Q -- hang"


@pytest.mark.slow
@needs_zsh
@unix_only
def test_zsh_completes_with_the_script_autoloaded_from_fpath(on_path, tmp_path):
    environ, project = on_path
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_trio-mcp").write_text(script("zsh"))
    program = f"""
compdef() {{ print -r -- "compdef $*" }}
compadd() {{ print -r -- "compadd $*" }}
fpath=({_bash_quote(str(functions))} $fpath)
autoload -U _trio-mcp
BUFFER='trio-mcp comp'
CURSOR=${{#BUFFER}}
_trio-mcp
"""
    result = subprocess.run(
        ["zsh", "-f", "-c", program],
        capture_output=True,
        text=True,
        env=environ,
        cwd=project,
        timeout=LIMIT,
        check=False,
    )
    # The first Tab completes at once (no compdef needed then).
    assert result.stdout.splitlines() == ["compadd -Q -- complete completion"], result.stderr


# ------------------------------------------------------------------ fish


needs_fish = pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")


@needs_fish
@unix_only
def test_fish_accepts_the_script(tmp_path):
    path = tmp_path / "trio-mcp.fish"
    path.write_text(script("fish"))
    result = subprocess.run(
        ["fish", "--no-execute", str(path)], capture_output=True, text=True, timeout=LIMIT, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")


def fish_complete(environ: dict[str, str], cwd: Path, line: str) -> list[str]:
    program = f"trio-mcp completion fish | source; complete -C {_fish_quote(line)}"
    result = subprocess.run(
        ["fish", "--no-config", "-c", program],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        timeout=LIMIT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [line.split("\t")[0] for line in result.stdout.splitlines()]


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@pytest.mark.slow
@needs_fish
@unix_only
def test_fish_completes_commands_tools_and_arguments(on_path):
    environ, project = on_path
    assert fish_complete(environ, project, "trio-mcp c") == ["call", "complete", "completion", "configs"]
    assert set(fish_complete(environ, project, "trio-mcp call ")) >= DEMO_TOOLS
    assert fish_complete(environ, project, "trio-mcp call add a=1 ") == ["b="]
    assert fish_complete(environ, project, "trio-mcp read demo://r") == ["demo://readme"]


# ------------------------------------------------------------------ what is offered, in-process

CATALOG = Catalog(
    tools={"add": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}},
    prompts={"greet": ["name"]},
    resources=["demo://readme"],
    templates=["demo://greeting/{name}"],
)


@pytest.mark.parametrize(
    ("line", "expected", "space"),
    [
        ("", [*cli.COMMANDS], True),
        ("sh", ["shell"], True),
        ("--timeout 5 c", ["call", "complete", "configs", "completion"], True),
        ("--protocol 2025-1", ["2025-11-25"], True),
        ("--timeout ", [], True),
        ("--cwd ", [], True),
        ("call ", ["add"], True),
        ("--json call add ", ["a=", "b="], False),
        ("call add --timeout 3 a=1 ", ["b="], False),
        ("call add -", ["--json", "--verbose", "--help"], True),
        ("tools --s", ["--server", "--schema"], True),
        ("read ", ["demo://readme", "demo://greeting/"], False),
        ("read demo://r", ["demo://readme"], True),
        ("prompt greet ", ["name="], False),
        ("complete template demo://greeting/{name} ", ["name="], False),
        ("call add -- python server.py ", [], True),
        ("info ", [], True),
        ("completion b", ["bash"], True),
        ("log-level w", ["warning"], True),
        ("tasks st", ["start", "status"], True),
        ("tasks start ", ["add"], True),
        ("call -o ", [], True),
        ("call -o out.txt a", ["add"], True),
        ("call add --no-o", ["--no-output-check"], True),
        ("completion bash ", [], True),
        ('call "ad', ["add"], True),
    ],
)
def test_candidates(line, expected, space):
    offered, spaced = candidates(line, CATALOG)
    assert offered[: len(expected)] == expected if line.endswith("-") else offered == expected
    assert spaced is space


def test_candidates_with_the_servers_suggestions():
    asked = []

    def suggest(template, name, typed):
        asked.append((template, name, typed))
        return ["Ada", "Bob"]

    assert candidates("read demo://greeting/", CATALOG, suggest) == (
        ["demo://greeting/Ada", "demo://greeting/Bob"],
        True,
    )
    assert asked == [("demo://greeting/{name}", "name", "")]
    assert candidates("read demo://greeting/A", CATALOG, suggest) == (["demo://greeting/Ada"], True)


@pytest.mark.slow
@needs_bash
@unix_only
def test_bash_completion_starts_only_the_server_the_word_names(on_path, tmp_path):
    # "call one__" or "call one.": only "one" is started, not every server
    # of the configuration (the spy leaves a mark when it starts).
    environ, project = on_path
    mark = tmp_path / "spy-started"
    spy = {
        "command": sys.executable,
        "args": ["-c", f"import pathlib; pathlib.Path({str(mark)!r}).touch()"],
    }
    (project / "mcp.json").write_text(json.dumps({"mcpServers": {"one": DEMO, "spy": spy}}))
    assert bash_complete(environ, project, "trio-mcp --config mcp.json call one__e") == ["one__echo"]
    assert bash_complete(environ, project, "trio-mcp --config mcp.json call one.e") == ["one.echo"]
    assert bash_complete(environ, project, "trio-mcp --config mcp.json call one.add a=1 ") == ["b="]
    assert not mark.exists()
    # A word that names no server: every server is asked.
    assert "one__echo" in bash_complete(environ, project, "trio-mcp --config mcp.json call ")
    assert mark.exists()
