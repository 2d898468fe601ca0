"""Every example in the documentation runs: the code blocks of docs/*.rst and README.md.

The code blocks are found in the reStructuredText sources (``.. code-block::``
directives and literal ``::`` blocks), in the docstrings of the modules they
render with ``.. automodule::``, and in README.md (fenced blocks). How each
block is checked depends on its language and on the comment right before it
(reStructuredText ``.. example: KIND``, Markdown ``<!-- example: KIND -->``):

* ``python`` blocks and literal ``::`` blocks are complete programs that call
  ``trio.run`` themselves; each runs as a script in a subprocess of its own
  and must exit with status 0 (marked ``script``, a complete program that
  needs no Trio, such as reading a configuration file). Marked ``client``, a block is a fragment that
  runs inside ``async with trio_mcp.open_stdio_client(...) as client:``,
  connected to the demo server (``client-legacy``: in the initialize era;
  ``transport``: inside ``open_session``, as ``wire``, after the
  initialize handshake; ``listen``: connected to a `trio_mcp.testing.FakeServer`
  that serves ``subscriptions/listen``, which the demo does not). Marked
  ``pytest``, a block is a test module, run by pytest with pytest-trio's
  ``trio_mode``.
* ``console`` blocks are shell sessions: each ``$ COMMAND`` runs with
  ``/bin/sh``, and the lines after it, when there are any, are compared with
  its output (stdout and stderr together). In the expected output a line
  ``...`` stands for any number of lines, and ``...`` inside a line for any
  text. A command must exit with status 0, unless the next one is
  ``echo $?``, which then shows the status expected. Marked ``terminal
  WORD...``, the session runs on a pseudo-terminal, typing each WORD and Enter
  in turn at the command's prompts; marked ``typed-input``, the lines after
  the command are typed into its stdin.
* ``sh`` blocks hold commands, one a line, each of which must exit with
  status 0.
* Installation steps (``pip install``, ``pipx``, ``nox``) are not run in
  either kind of shell block: the package under test is already importable,
  and ``nox`` runs this very suite. A block in which nothing else runs must
  be marked ``not-executed``.
* ``json`` and ``toml`` blocks must parse (a ``json`` block may hold one JSON
  message per line instead of one document).
* A block marked ``expected-output`` is compared with the output (stdout) of
  the example before it; a ``json`` one as JSON.
* ``text`` blocks marked ``frames COMMAND`` show the progress bar: each line
  must be one the command draws on a terminal. Marked ``hierarchy``, a block
  must draw the `trio_mcp.MCPError` class tree. Marked ``layers``, a block
  draws the package's layers as rooms (boxes of ``+``, ``-`` and ``|``)
  naming its modules (``_session``, ``cli``, ...): every module must be in
  one room, every import between rooms must point to a room below, and no
  arrow may point anywhere but down.
* Marked ``http``, a ``python`` (complete program) or ``console`` block runs
  against a local Streamable HTTP server started for it (the demo server,
  ``python -m trio_mcp.demo --http 127.0.0.1:0``, which prints its URL): the
  URL ``http://127.0.0.1:8000/mcp`` in the block is replaced by the server's.
* ``not-executed: REASON`` exempts a block; such blocks are counted and kept
  to a few (`MAX_NOT_EXECUTED`). Any other block that is not run fails its
  test.

Shell commands, and the programs the examples start, find a folder of
stand-ins first on ``PATH``: ``trio-mcp`` runs ``python -m trio_mcp`` with
the Python running the tests, ``python`` and ``python3`` are that Python, and
``npx`` and ``uvx`` start the reference servers that the interop tests
install (tests/interop/peers.py) when they are installed, the demo server
otherwise. An example that starts ``npx -y
@modelcontextprotocol/server-everything stdio`` therefore runs as written,
against the real server or in its place the demo server.

The selected examples run concurrently, once, when the first test asks for
them (some twenty seconds in all, hence the ``slow`` marker); each test then
reports on its own example.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import ast_support
import pytest

import trio_mcp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PEERS_DIR = Path(os.environ.get("TRIO_MCP_PEERS_DIR") or ROOT / ".peers")

#: Seconds one example may take.
LIMIT = 120
#: Blocks marked ``not-executed`` allowed at most: raise it only with a reason.
MAX_NOT_EXECUTED = 4
#: The fewest blocks the documentation holds (the extraction is not broken).
MIN_BLOCKS = 60

PYTHON_LANGS = {"python", "python3", "py"}
CONSOLE_LANGS = {"console", "shell-session"}
SH_LANGS = {"sh", "bash", "shell"}

# ----------------------------------------------------------------- finding the blocks


@dataclass
class Block:
    """One code block of the documentation."""

    source: str
    line: int
    lang: str
    code: str
    kind: str = ""
    args: str = ""
    not_executed: str | None = None
    expected_output: bool = False
    producer: Block | None = None
    markers: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.source}:{self.line}"


RST_DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\. (?:code-block|code|sourcecode)::\s*(?P<lang>\S*)\s*$")
RST_MARKER = re.compile(
    r"^\s*\.\.\s+(?P<name>example|not-executed|expected-output)\b\s*:?\s*(?P<value>.*?)\s*$"
)
MD_FENCE = re.compile(r"^(?P<indent>\s*)```\s*(?P<lang>[\w+-]*)\s*$")
MD_MARKER = re.compile(
    r"^\s*<!--\s*(?P<name>example|not-executed|expected-output)\b\s*:?\s*(?P<value>.*?)\s*-->\s*$"
)
AUTOMODULE = re.compile(r"^\s*\.\. automodule::\s*(\S+)\s*$", re.MULTILINE)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _apply_markers(block: Block, markers: list[tuple[str, str]]) -> Block:
    for name, value in markers:
        block.markers.append(name)
        if name == "example":
            kind, _, args = value.partition(" ")
            block.kind, block.args = kind.strip(), args.strip()
        elif name == "not-executed":
            block.not_executed = value
        else:
            block.expected_output = True
    return block


def parse_rst(text: str, source: str) -> list[Block]:
    """The code blocks of a reStructuredText text, with the markers before each."""
    lines = text.splitlines()
    blocks: list[Block] = []
    markers: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        marker = RST_MARKER.match(line)
        directive = RST_DIRECTIVE.match(line)
        stripped = line.strip()
        literal = (
            stripped.endswith("::")
            and not stripped.startswith("..")
            and not directive
            and any(later.strip() and _indent_of(later) > _indent_of(line) for later in lines[i + 1 : i + 3])
        )
        if marker:
            markers.append((marker["name"], marker["value"]))
            i += 1
            continue
        if not directive and not literal:
            if stripped:
                markers = []
            i += 1
            continue
        indent = _indent_of(line)
        j = i + 1
        while j < len(lines) and lines[j].strip().startswith(":") and _indent_of(lines[j]) > indent:
            j += 1  # the directive's options
        body: list[str] = []
        while j < len(lines) and (not lines[j].strip() or _indent_of(lines[j]) > indent):
            body.append(lines[j])
            j += 1
        code = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
        lang = directive["lang"].lower() if directive else "python"
        blocks.append(_apply_markers(Block(source, i + 1, lang, code), markers))
        markers = []
        i = j
    return blocks


def parse_markdown(text: str, source: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, with the markers (HTML comments) before each."""
    lines = text.splitlines()
    blocks: list[Block] = []
    markers: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        marker = MD_MARKER.match(line)
        fence = MD_FENCE.match(line)
        if marker:
            markers.append((marker["name"], marker["value"]))
            i += 1
            continue
        if not fence:
            if line.strip():
                markers = []
            i += 1
            continue
        j = i + 1
        body: list[str] = []
        while j < len(lines) and lines[j].strip() != "```":
            body.append(lines[j])
            j += 1
        code = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
        blocks.append(_apply_markers(Block(source, i + 1, fence["lang"].lower() or "text", code), markers))
        markers = []
        i = j + 1
    return blocks


def _link_outputs(blocks: list[Block]) -> list[Block]:
    for previous, block in itertools.pairwise(blocks):
        if block.expected_output:
            block.producer = previous
    return blocks


def find_blocks() -> list[Block]:
    """Every code block of the documentation, in order."""
    found: list[Block] = []
    modules: list[str] = []
    for path in sorted(DOCS.glob("*.rst")):
        text = path.read_text(encoding="utf-8")
        found += _link_outputs(parse_rst(text, path.relative_to(ROOT).as_posix()))
        modules += AUTOMODULE.findall(text)
    for name in modules:
        doc = importlib.import_module(name).__doc__ or ""
        found += _link_outputs(parse_rst(inspect.cleandoc(doc), f"{name} (docstring)"))
    found += _link_outputs(parse_markdown(README.read_text(encoding="utf-8"), "README.md"))
    return found


BLOCKS = find_blocks()

# ----------------------------------------------------------------- stand-ins on PATH

NODE_PACKAGES = {
    "@modelcontextprotocol/server-everything": "everything",
    "@modelcontextprotocol/server-filesystem": "filesystem",
}
PYTHON_PACKAGES = {"mcp-server-time": "time"}

LAUNCHER = '''\
#!{python}
"""A stand-in for {name}: start an installed reference server, or the demo server."""
import json, os, sys

args = sys.argv[1:]
while args and args[0].startswith("-"):
    args.pop(0)  # npx -y, and the like
package, rest = (args[0], args[1:]) if args else ("", [])
peer = {packages!r}.get(package.rpartition("@")[0] if package.count("@") > 1 else package)
try:
    with open({manifest!r}) as f:
        entry = json.load(f).get(peer) or {{}}
except OSError:
    entry = {{}}
if entry.get("cmd"):
    cmd = entry["cmd"][:{keep}] + rest
    os.execvpe(cmd[0], cmd, {{**os.environ, **entry.get("env", {{}})}})
# Not installed: the demo server, which takes no arguments.
env = dict(os.environ)
env["PYTHONPATH"] = os.pathsep.join(filter(None, [{root!r}, env.get("PYTHONPATH")]))
os.execve(sys.executable, [sys.executable, "-m", "trio_mcp.demo"], env)
'''


def make_stand_ins(folder: Path) -> None:
    python = sys.executable
    scripts = {
        "trio-mcp": f'#!/bin/sh\nexec "{python}" -m trio_mcp "$@"\n',
        "python": f'#!/bin/sh\nexec "{python}" "$@"\n',
        "python3": f'#!/bin/sh\nexec "{python}" "$@"\n',
        "npx": LAUNCHER.format(
            python=python,
            name="npx",
            packages=NODE_PACKAGES,
            manifest=str(PEERS_DIR / "peers.json"),
            keep=2,  # node and the package's script
            root=str(ROOT),
        ),
        "uvx": LAUNCHER.format(
            python=python,
            name="uvx",
            packages=PYTHON_PACKAGES,
            manifest=str(PEERS_DIR / "peers.json"),
            keep=1,  # the package's executable
            root=str(ROOT),
        ),
    }
    for name, text in scripts.items():
        path = folder / name
        path.write_text(text)
        path.chmod(0o755)


def example_env(stand_ins: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(stand_ins), env.get("PATH", os.defpath)])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "80"
    for name in ("PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "NO_COLOR", "FORCE_COLOR"):
        env.pop(name, None)
    return env


# ----------------------------------------------------------------- running


@dataclass
class Outcome:
    """What running one block gave."""

    problems: list[str] = field(default_factory=list)
    output: str | None = None
    skipped: str | None = None


def run_process(
    args: list[str], *, cwd: Path, env: dict[str, str], stdin: str | None = None, merge: bool = False
):
    """Run a command in a session of its own; kill the whole session if it outlives `LIMIT`."""
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err
    return proc.returncode, out, err or ""


PRELUDE = """\
import base64
import json
import logging
import sys

import trio
import trio_mcp

DEMO = [sys.executable, "-m", "trio_mcp.demo"]
log = logging.getLogger("example")
"""

FRAGMENTS = {
    "client": PRELUDE
    + """
async def main():
    async with trio_mcp.open_stdio_client(DEMO[0], DEMO[1:]) as client:
{code}

trio.run(main)
""",
    "client-legacy": PRELUDE
    + """
async def main():
    options = trio_mcp.ClientOptions(protocol="2025-11-25")
    async with trio_mcp.open_stdio_client(DEMO[0], DEMO[1:], options) as client:
        assert client.era == "legacy"
{code}

trio.run(main)
""",
    "transport": PRELUDE
    + """
async def main():
    async with trio_mcp.open_session(trio_mcp.ProcessTarget(DEMO[0], DEMO[1:])) as wire:
        await wire.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "example", "version": "0"},
            },
        )
        await wire.notify("notifications/initialized")
{code}

trio.run(main)
""",
    "listen": PRELUDE
    + """
from trio_mcp.testing import FakeServer, open_fake_client


async def main():
    server = FakeServer(tools=["echo"])

    async def listen(request):
        await request.acknowledge()
        await trio.sleep(0.1)
        await request.notify("notifications/tools/list_changed")
        await trio.sleep_forever()

    server.on_request("subscriptions/listen", listen)
    async with open_fake_client(server) as client:
{code}

trio.run(main)
""",
}

INSTALL_STEP = re.compile(r"^\s*(?:python3?\s+-m\s+)?(?:pip3?|pipx|nox)\b")


def _python_program(block: Block) -> tuple[str | None, str | None]:
    """The program to run for a Python block, or a problem."""
    if block.kind in FRAGMENTS:
        body = textwrap.indent(block.code, " " * 8)
        return FRAGMENTS[block.kind].replace("{code}", body.rstrip("\n")), None
    if block.kind == "script":
        return block.code, None
    if block.kind:
        return None, f"unknown example kind {block.kind!r} for a Python block"
    if "trio.run(" not in block.code:
        return None, (
            "a Python block must be a complete program that calls trio.run(...), or be marked"
            " as a fragment (.. example: client) or .. not-executed: REASON"
        )
    return block.code, None


def run_python(block: Block, workdir: Path, env: dict[str, str]) -> Outcome:
    try:
        ast_support.parse(block.code)
    except SyntaxError as exc:
        if block.kind not in FRAGMENTS:  # fragments may hold top-level await
            return Outcome([f"not valid Python: {exc}"])
    if block.kind == "pytest":
        (workdir / "pytest.ini").write_text("[pytest]\ntrio_mode = true\n")
        (workdir / "test_example.py").write_text(block.code)
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"]
    else:
        program, problem = _python_program(block)
        if program is None:
            return Outcome([problem or "cannot run"])
        (workdir / "example.py").write_text(program)
        args = [sys.executable, "example.py"]
    status, out, err = run_process(args, cwd=workdir, env=env)
    if status != 0:
        what = "timed out" if status is None else f"exited with status {status}"
        return Outcome([f"{what}\n--- stdout:\n{out}\n--- stderr:\n{err}"], output=out)
    return Outcome(output=out)


def _commands(code: str) -> list[tuple[str, list[str]]]:
    """The ``$ COMMAND`` lines of a console block, each with the output lines after it."""
    session: list[tuple[str, list[str]]] = []
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].lstrip("> ").strip()
            session.append((command, []))
        elif session:
            session[-1][1].append(line)
        elif line.strip():
            session.append(("", [line]))
        i += 1
    return session


def _is_install(command: str) -> bool:
    parts = [part for part in command.split("&&") if part.strip()]
    return bool(parts) and all(INSTALL_STEP.match(part) for part in parts)


def _runnable(command: str) -> str:
    """The command without its installation steps (``pip install . && trio-mcp ...``)."""
    return " && ".join(part.strip() for part in command.split("&&") if not INSTALL_STEP.match(part))


def output_matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is ``expected``, where ``...`` is a wildcard (a whole line: any lines)."""
    pattern = ""
    for line in expected.rstrip("\n").split("\n"):
        line = line.rstrip()
        if line.strip() == "...":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            pattern += re.escape(line).replace(re.escape("..."), r"[^\n]*") + r"[ \t]*\n"
    text = "".join(line.rstrip() + "\n" for line in actual.rstrip("\n").split("\n"))
    return re.fullmatch(pattern, text) is not None


def run_console(block: Block, workdir: Path, env: dict[str, str]) -> Outcome:
    if block.kind == "terminal":
        return run_terminal(block, workdir, env)
    session = _commands(block.code)
    outcome = Outcome()
    ran = 0
    last_status: int | None = 0
    for n, (command, expected) in enumerate(session):
        if not command:
            outcome.problems.append(f"output before any command: {expected[0]!r}")
            continue
        if command.strip() == "echo $?":
            if expected and expected[0].strip() != str(last_status):
                outcome.problems.append(f"the exit status is {last_status}, not {expected[0].strip()}")
            continue
        if _is_install(command):
            continue  # an installation step
        runnable = _runnable(command)
        typed = "\n".join(expected) + "\n" if block.kind == "typed-input" else None
        status, out, _ = run_process(
            ["/bin/sh", "-c", runnable], cwd=workdir, env=env, stdin=typed, merge=True
        )
        ran += 1
        following = session[n + 1][0].strip() if n + 1 < len(session) else ""
        last_status = status
        if status is None:
            outcome.problems.append(f"$ {command}\ntimed out; output:\n{out}")
            continue
        if status != 0 and following != "echo $?":
            outcome.problems.append(f"$ {command}\nexited with status {status}; output:\n{out}")
        if block.kind == "typed-input":
            for line in out.splitlines():
                answer = json.loads(line)
                if "error" in answer:
                    outcome.problems.append(f"$ {command}\nanswered with an error: {line}")
        elif expected and not output_matches("\n".join(expected), out):
            shown = "\n".join(expected)
            outcome.problems.append(f"$ {command}\nthe output differs; expected:\n{shown}\ngot:\n{out}")
        outcome.output = out
    if not ran and not outcome.problems:
        outcome.problems.append("nothing in this block runs: mark it .. not-executed: REASON")
    return outcome


def run_sh(block: Block, workdir: Path, env: dict[str, str]) -> Outcome:
    outcome = Outcome()
    lines = block.code.replace("\\\n", " ").splitlines()
    ran = 0
    for command in lines:
        if not command.strip() or command.lstrip().startswith("#"):
            continue
        if _is_install(command):
            continue  # an installation step
        status, out, _ = run_process(["/bin/sh", "-c", _runnable(command)], cwd=workdir, env=env, merge=True)
        ran += 1
        if status != 0:
            outcome.problems.append(f"$ {command}\nexited with status {status}; output:\n{out}")
    if not ran:
        outcome.problems.append("nothing in this block runs: mark it .. not-executed: REASON")
    return outcome


# ----------------------------------------------------------------- on a terminal


def _screen_lines(raw: str) -> list[str]:
    """What a terminal shows for ``raw``: ``\\r`` returns to the line's start, ``ESC[K`` clears the rest."""
    shown: list[str] = []
    for physical in raw.replace("\r\n", "\n").split("\n"):
        line, cursor = "", 0
        for part in re.split(r"(\r|\x1b\[K)", physical):
            if part == "\r":
                cursor = 0
            elif part == "\x1b[K":
                line = line[:cursor]
            elif part:
                line = line[:cursor] + part + line[cursor + len(part) :]
                cursor += len(part)
        shown.append(line)
    return shown


def _frames(raw: str) -> set[str]:
    """Every line a terminal showed at some point while ``raw`` was drawn."""
    return {piece.replace("\x1b[K", "").rstrip() for piece in re.split(r"\r\n|\r|\n", raw)}


def run_pty(command: str, answers: list[str], workdir: Path, env: dict[str, str]) -> tuple[int | None, str]:
    """Run ``command`` on a pseudo-terminal, typing the answers at its prompts; return status and output."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command],
        cwd=workdir,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    output = b""
    answered_at = 0
    deadline = time.monotonic() + LIMIT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the command has ended
                    break
                if not chunk:
                    break
                output += chunk
            elif answers and len(output) > answered_at and output.endswith((b": ", b"] ")):
                os.write(master, answers.pop(0).encode() + b"\n")
                answered_at = len(output)
        else:
            os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait(timeout=LIMIT), output.decode("utf-8", "replace")
    finally:
        os.close(master)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def run_terminal(block: Block, workdir: Path, env: dict[str, str]) -> Outcome:
    session = _commands(block.code)
    if len(session) != 1 or not session[0][0]:
        return Outcome(["a terminal session shows one command"])
    command, expected = session[0]
    status, raw = run_pty(command, shlex.split(block.args), workdir, env)
    shown = "\n".join(_screen_lines(raw))
    outcome = Outcome(output=shown)
    if status != 0:
        outcome.problems.append(f"exited with status {status}; output:\n{raw!r}")
    if not output_matches("\n".join(expected), shown):
        outcome.problems.append(
            "the terminal shows otherwise; expected:\n{}\ngot:\n{}".format("\n".join(expected), shown)
        )
    return outcome


def run_frames(block: Block, workdir: Path, env: dict[str, str]) -> Outcome:
    command = block.args.removeprefix("$ ")
    if not command:
        return Outcome(["a frames block names its command: .. example: frames COMMAND"])
    status, raw = run_pty(command, [], workdir, env)
    frames = _frames(raw)
    outcome = Outcome(output=raw)
    if status != 0:
        outcome.problems.append(f"{command!r} exited with status {status}: {raw!r}")
    for line in block.code.splitlines():
        if line.strip() and line.rstrip() not in frames:
            outcome.problems.append(f"{command!r} never draws {line!r}; it draws: {sorted(frames)!r}")
    return outcome


# ----------------------------------------------------------------- other blocks


def _error_tree() -> set[tuple[str, str]]:
    for name in trio_mcp.__all__:  # load what is imported lazily, RequestTimeout among them
        getattr(trio_mcp, name)
    edges: set[tuple[str, str]] = set()

    def walk(cls: type) -> None:
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("trio_mcp") and not sub.__name__.startswith("_"):
                edges.add((cls.__name__, sub.__name__))
                walk(sub)

    walk(trio_mcp.MCPError)
    return edges


def check_hierarchy(block: Block) -> Outcome:
    edges: set[tuple[str, str]] = set()
    stack: list[tuple[int, str]] = []
    for line in block.code.splitlines():
        found = re.search(r"[A-Za-z_]\w*", line)
        if not found:
            continue
        depth = found.start()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            edges.add((stack[-1][1], found.group()))
        stack.append((depth, found.group()))
    real = _error_tree()
    if edges != real:
        return Outcome([f"the tree differs from the classes: missing {real - edges}, extra {edges - real}"])
    return Outcome()


@dataclass
class Room:
    """One box of a layer drawing: its lines (top and bottom edges included) and the modules it names."""

    top: int
    bottom: int
    modules: list[str] = field(default_factory=list)


PACKAGE_DIR = ROOT / "trio_mcp"
ROOM_EDGE = re.compile(r"\+-+\+")
#: Modules in no room: the package's façade and its ``python -m`` entry point.
OUTSIDE_ROOMS = {"trio_mcp", "trio_mcp.__main__"}


def _module_file(name: str) -> Path | None:
    """The file of a module of the package (a package's ``__init__.py``), or `None`."""
    path = PACKAGE_DIR.joinpath(*name.split(".")[1:])
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return None


def _package_modules() -> list[str]:
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append(".".join(parts))
    return found


def _imported(module: str) -> set[str]:
    """The package's modules that ``module`` imports, however (``TYPE_CHECKING`` and functions included)."""
    path = _module_file(module)
    assert path is not None
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast_support.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
            source = (
                ".".join([*base, *(node.module.split(".") if node.module else [])])
                if node.level
                else (node.module or "")
            )
            targets.add(source)
            # `from . import name` may read the submodule `name`.
            targets |= {f"{source}.{alias.name}" for alias in node.names}
    return {target for target in targets if target.startswith("trio_mcp") and _module_file(target)}


def _rooms(drawing: str) -> list[Room]:
    """The rooms of a drawing, each with the modules (of this package) named inside it."""
    lines = drawing.splitlines()
    rooms: list[Room] = []
    open_rooms: dict[tuple[int, int], int] = {}
    for number, line in enumerate(lines):
        for edge in ROOM_EDGE.finditer(line):
            key = (edge.start(), edge.end())
            if key in open_rooms:
                top = open_rooms.pop(key)
                room = Room(top, number)
                for inner in lines[top + 1 : number]:
                    text = inner[key[0] + 1 : key[1] - 1]
                    for word in re.findall(r"[A-Za-z_][\w.]*", text):
                        name = "trio_mcp." + word.rstrip(".")
                        if _module_file(name):
                            room.modules.append(name)
                rooms.append(room)
            else:
                open_rooms[key] = number
    assert not open_rooms, f"rooms left open at lines {sorted(open_rooms.values())}"
    return rooms


def check_layers(block: Block) -> Outcome:
    problems: list[str] = []
    if re.search(r"[<>^]", block.code):
        problems.append("an arrow points up or sideways: arrows point down only (v)")
    try:
        rooms = _rooms(block.code)
    except AssertionError as exc:
        return Outcome([str(exc)])
    home: dict[str, Room] = {}
    for module in _package_modules():
        if module in OUTSIDE_ROOMS:
            continue
        # The room naming the module, or the package it belongs to.
        named = [
            (len(name), room)
            for room in rooms
            for name in room.modules
            if module == name or module.startswith(name + ".")
        ]
        if not named:
            problems.append(f"{module} is in no room")
            continue
        longest = max(length for length, _ in named)
        owners = [room for length, room in named if length == longest]
        if len(owners) > 1:
            problems.append(f"{module} is in {len(owners)} rooms")
        home[module] = owners[0]
    for module, room in home.items():
        for target in sorted(_imported(module)):
            other = home.get(target)
            if other is None or other is room:
                continue
            if other.top <= room.bottom:
                problems.append(f"{module} imports {target}, which is not in a room below its own")
    return Outcome(problems)


def parse_json_block(code: str) -> object:
    """The JSON document, or the list of JSON messages (one a line), of a block."""
    try:
        return json.loads(code)
    except ValueError:
        return [json.loads(line) for line in code.splitlines() if line.strip()]


def check_data(block: Block) -> Outcome:
    try:
        if block.lang == "json":
            parse_json_block(block.code)
        else:
            tomllib.loads(block.code)
    except ValueError as exc:
        return Outcome([f"not valid {block.lang}: {exc}"])
    return Outcome()


def check_expected_output(block: Block, outcomes: dict[str, Outcome]) -> Outcome:
    producer = block.producer
    if producer is None or producer.id not in outcomes:
        return Outcome(["expected-output follows no example"])
    made = outcomes[producer.id]
    if made.problems or made.output is None:
        return Outcome([f"the example it shows the output of ({producer.id}) did not run"])
    if block.lang == "json":
        try:
            wanted = parse_json_block(block.code)
            got = parse_json_block(made.output)
        except ValueError as exc:
            return Outcome([f"not JSON: {exc}\n{made.output}"])
        if wanted != got:
            return Outcome([f"the output differs; expected:\n{block.code}\ngot:\n{made.output}"])
    elif not output_matches(block.code, made.output):
        return Outcome([f"the output differs; expected:\n{block.code}\ngot:\n{made.output}"])
    return Outcome()


#: The URL that ``http`` examples name, replaced by the local server's.
HTTP_EXAMPLE_URL = "http://127.0.0.1:8000/mcp"
#: The local HTTP server of ``http`` examples: the demo server over HTTP, on a free port.
HTTP_DEMO = [sys.executable, "-m", "trio_mcp.demo", "--http", "127.0.0.1:0"]


def run_http(block: Block, workdir: Path, env: dict[str, str]) -> Outcome:
    """Run an ``http`` block against a local HTTP server of its own."""
    if HTTP_EXAMPLE_URL not in block.code:
        return Outcome([f"an http example names the server as {HTTP_EXAMPLE_URL}"])
    # A proxy in the environment would take loopback traffic too.
    env = {name: value for name, value in env.items() if name.lower() not in ("http_proxy", "all_proxy")}
    front = subprocess.Popen(
        HTTP_DEMO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        assert front.stdout is not None
        ready, _, _ = select.select([front.stdout], [], [], LIMIT)
        line = front.stdout.readline() if ready else ""
        if not re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp\n", line):
            return Outcome([f"the local HTTP server did not start: {line!r}"])
        url = line.strip()
        local = Block(block.source, block.line, block.lang, block.code.replace(HTTP_EXAMPLE_URL, url))
        outcome = run_block(local, workdir, env)
        if outcome.output:
            outcome.output = outcome.output.replace(url, HTTP_EXAMPLE_URL)
        return outcome
    finally:
        front.kill()
        front.wait()
        if front.stdout is not None:
            front.stdout.close()


def run_block(block: Block, workdir: Path, env: dict[str, str]) -> Outcome:
    """Run or check one block (not the expected-output ones)."""
    if block.not_executed is not None:
        if not block.not_executed:
            return Outcome(["a not-executed block says why: .. not-executed: REASON"])
        return Outcome(skipped=block.not_executed)
    if block.kind == "http" and block.lang in PYTHON_LANGS | CONSOLE_LANGS:
        return run_http(block, workdir, env)
    if block.lang in PYTHON_LANGS:
        return run_python(block, workdir, env)
    if block.lang in CONSOLE_LANGS:
        return run_console(block, workdir, env)
    if block.lang in SH_LANGS:
        return run_sh(block, workdir, env)
    if block.lang == "text" and block.kind == "frames":
        return run_frames(block, workdir, env)
    if block.lang == "text" and block.kind == "hierarchy":
        return check_hierarchy(block)
    if block.lang == "text" and block.kind == "layers":
        return check_layers(block)
    if block.lang in ("json", "toml"):
        return check_data(block)
    return Outcome(
        [
            (
                f"a {block.lang or 'plain'} block that nothing checks: show a program's output"
                " (.. expected-output), or mark it .. not-executed: REASON"
            )
        ]
    )


_OUTCOMES: dict[str, Outcome] = {}


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stand-ins")
    make_stand_ins(folder)
    return folder


@pytest.fixture
def outcomes(request, stand_ins, tmp_path_factory) -> dict[str, Outcome]:
    """The outcome of every selected example; the first call runs them all, concurrently."""
    wanted: dict[str, Block] = {}
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        block = callspec.params.get("block") if callspec is not None else None
        if isinstance(block, Block):
            wanted[block.id] = block
            if block.producer is not None:
                wanted[block.producer.id] = block.producer
    todo = [block for block_id, block in wanted.items() if block_id not in _OUTCOMES]
    todo = [block for block in todo if not block.expected_output or block.kind]
    if todo:
        env = example_env(stand_ins)

        def work(job: tuple[Block, Path]) -> Outcome:
            block, workdir = job
            try:
                return run_block(block, workdir, env)
            except Exception as exc:  # a bug here must still report on its own example
                return Outcome([f"the check itself failed: {exc!r}"])

        # Slow blocks (a real server, a terminal) first, so that they overlap the rest.
        todo.sort(key=lambda block: ("npx" not in block.code and "uvx" not in block.code, block.kind == ""))
        jobs = [(block, tmp_path_factory.mktemp("example")) for block in todo]
        workers = min(16, max(4, 2 * (os.cpu_count() or 2)))
        with ThreadPoolExecutor(workers) as pool:
            for block, outcome in zip(todo, pool.map(work, jobs), strict=True):
                _OUTCOMES[block.id] = outcome
    return _OUTCOMES


# ----------------------------------------------------------------- the tests


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_example(block: Block, outcomes: dict[str, Outcome]):
    if block.expected_output and not block.kind:
        outcome = check_expected_output(block, outcomes)
    else:
        outcome = outcomes[block.id]
    if outcome.skipped is not None:
        pytest.skip(f"not executed: {outcome.skipped}")
    if outcome.problems:
        pytest.fail(f"{block.id} ({block.lang}):\n" + "\n\n".join(outcome.problems), pytrace=False)


def test_the_documentation_has_its_examples():
    sources = {block.source for block in BLOCKS}
    for path in [*DOCS.glob("*.rst"), README]:
        text = path.read_text(encoding="utf-8")
        if ".. code-block::" in text or "```" in text:
            assert path.relative_to(ROOT).as_posix() in sources
    assert len(BLOCKS) >= MIN_BLOCKS, f"only {len(BLOCKS)} code blocks found"
    executed = [block for block in BLOCKS if block.not_executed is None]
    assert len(executed) >= MIN_BLOCKS - MAX_NOT_EXECUTED


def test_few_blocks_are_exempt():
    exempt = {block.id: block.not_executed for block in BLOCKS if block.not_executed is not None}
    assert len(exempt) <= MAX_NOT_EXECUTED, exempt
    assert all(exempt.values()), "each not-executed block says why"


def test_markers_are_known():
    kinds = {
        "",
        *FRAGMENTS,
        "script",
        "pytest",
        "terminal",
        "typed-input",
        "frames",
        "hierarchy",
        "layers",
        "http",
    }
    for block in BLOCKS:
        assert block.kind in kinds, f"{block.id}: unknown example kind {block.kind!r}"


def test_the_cli_page_lists_every_exit_status():
    from trio_mcp import cli

    page = (DOCS / "cli.rst").read_text(encoding="utf-8")
    listed = {int(code) for code in re.findall(r"^\s*\* - ``(\d+)``", page, re.MULTILINE)}
    assert listed == set(cli.EXIT_CODES)


def test_output_matching():
    assert output_matches("a\n...\nd\n", "a\nb\nc\nd\n")
    assert output_matches("a\n...\nb\n", "a\nb\n")
    assert output_matches("server: demo ...\n", "server: demo 1.0\n")
    assert not output_matches("a\nb\n", "a\nc\n")
    assert not output_matches("a\n", "a\nb\n")


def test_parsing_finds_markers_and_blocks():
    text = textwrap.dedent(
        """\
        Title
        =====

        .. example: client

        .. code-block:: python

            print(await client.list_tools())

        Text::

            import trio

        .. not-executed: needs a GPU

        .. code-block:: console

            $ gpu-thing
        """
    )
    client, literal, console = parse_rst(text, "t.rst")
    assert (client.kind, client.lang, client.code) == (
        "client",
        "python",
        "print(await client.list_tools())\n",
    )
    assert (literal.kind, literal.lang, literal.code) == ("", "python", "import trio\n")
    assert console.not_executed == "needs a GPU"
    assert _commands("$ a \\\n  --b\nout\n$ echo $?\n0\n") == [("a --b", ["out"]), ("echo $?", ["0"])]


def test_layer_check_catches_a_wrong_drawing():
    (drawing,) = [block for block in BLOCKS if block.kind == "layers"]
    assert not check_layers(drawing).problems
    assert {module for room in _rooms(drawing.code) for module in room.modules} >= {
        "trio_mcp._session",
        "trio_mcp._client",
    }

    def problems(code: str) -> list[str]:
        return check_layers(Block("t.rst", 1, "text", code, kind="layers")).problems

    # The session drawn above the client, which imports it.
    swapped = (
        drawing.code.replace("_client ", "_TMP___ ")
        .replace("_session", "_client ")
        .replace("_TMP___", "_session")
    )
    assert any(
        "trio_mcp._client" in problem and "not in a room below" in problem for problem in problems(swapped)
    )
    # A module left out, an arrow pointing up, a room left open.
    assert "trio_mcp._trio.parking is in no room" in problems(drawing.code.replace("_trio", "     "))
    assert any("arrow" in problem for problem in problems(drawing.code.replace("       v", "       ^", 1)))
    assert any("open" in problem for problem in problems(drawing.code.rsplit("+", 2)[0]))


def test_the_reference_documents_every_public_name():
    page = (DOCS / "reference.rst").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\.\. auto(?:function|class|exception|data)::\s+(\w+)", page, re.MULTILINE))
    assert documented >= set(trio_mcp.__all__), set(trio_mcp.__all__) - documented


@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.rst"])
def test_a_newcomer_meets_the_one_way_in_first(page):
    """The first program of the README and of the quick start opens a target with `trio_mcp.open_client`."""
    first = next(block for block in BLOCKS if block.source == page and block.lang == "python")
    assert "trio_mcp.open_client(" in first.code
    assert "trio_mcp.ProcessTarget(" in first.code
