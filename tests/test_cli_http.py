"""The command line with a remote server: a URL in place of ``-- COMMAND``, and ``--header``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from http_support import HttpServer, McpScript, send

from trio_mcp.cli import parse_args
from trio_mcp.cli._args import UsageError

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 30


def env() -> dict[str, str]:
    environ = {
        k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ["COLUMNS"] = "100"
    return environ


async def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(LIMIT):
        return await trio.run_process(
            [sys.executable, "-m", "trio_mcp", *args],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            env=env(),
            check=False,
        )


def test_a_url_is_the_server_as_the_last_word_or_after_the_separator():
    options = parse_args(["tools", "https://example.com/mcp", "--header", "Authorization: Bearer x"])
    assert options.url == "https://example.com/mcp"
    assert options.headers == {"Authorization": "Bearer x"}
    assert not options.demo
    options = parse_args(["call", "echo", "text=hi", "--", "http://127.0.0.1:8000/mcp"])
    assert options.url == "http://127.0.0.1:8000/mcp"
    assert options.arguments == {"text": "hi"}
    # read: the first URL is the resource, a second one the server.
    options = parse_args(["read", "https://example.com/doc"])
    assert options.target == "https://example.com/doc"
    assert options.demo
    assert options.url is None
    options = parse_args(["read", "https://example.com/doc", "https://example.com/mcp"])
    assert (options.target, options.url) == ("https://example.com/doc", "https://example.com/mcp")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tools", "--header", "X: 1"], "--header applies to a server given by URL"),
        (["tools", "--header", "no colon", "http://h/mcp"], "expected --header as 'NAME: VALUE'"),
        (["tools", "--env", "A=1", "http://h/mcp"], "--env and --cwd apply to a server command"),
    ],
)
def test_usage_errors(argv, message):
    with pytest.raises(UsageError, match=message):
        parse_args(argv)


@pytest.mark.slow
async def test_tools_and_call_over_http_with_headers():
    async with trio.open_nursery() as nursery:
        server = HttpServer(McpScript("modern"))
        await server.start(nursery)
        listed = await cli("tools", server.url, "--header", "X-Tenant: t1")
        assert listed.returncode == 0, listed.stderr
        assert "echo" in listed.stdout.decode()
        called = await cli("--json", "call", "echo", "text=hi", "--", server.url)
        assert called.returncode == 0, called.stderr
        assert json.loads(json.loads(called.stdout)["content"][0]["text"]) == {"text": "hi"}
        nursery.cancel_scope.cancel()
    assert server.requests[0].headers["x-tenant"] == "t1"


@pytest.mark.slow
async def test_the_shell_talks_to_a_url_over_one_connection():
    async with trio.open_nursery() as nursery:
        server = HttpServer(McpScript("modern"))
        await server.start(nursery)
        with trio.fail_after(LIMIT):
            shell = await trio.run_process(
                [sys.executable, "-m", "trio_mcp", "shell", server.url, "--header", "X-Tenant: t2"],
                stdin=b"tools\ncall echo text=one\ncall echo text=two\n",
                capture_stdout=True,
                capture_stderr=True,
                env=env(),
                check=False,
            )
        nursery.cancel_scope.cancel()
    assert shell.returncode == 0, shell.stderr
    out = shell.stdout.decode()
    assert "echo" in out
    assert '"one"' in out
    assert '"two"' in out
    calls = [r for r in server.requests if b'"tools/call"' in r.body]
    assert len(calls) == 2
    # Connected once: one probe for the three commands.
    assert len([r for r in server.requests if b'"server/discover"' in r.body]) == 1
    assert all(r.headers["x-tenant"] == "t2" for r in server.requests)


@pytest.mark.slow
async def test_http_failures_exit_with_one_line():
    async def handler(request, stream):
        await send(stream, 401, {"www-authenticate": 'Bearer resource_metadata="http://x/prm"'})

    async with trio.open_nursery() as nursery:
        server = HttpServer(handler)
        await server.start(nursery)
        refused = await cli("tools", server.url)
        nursery.cancel_scope.cancel()
    assert refused.returncode != 0
    lines = refused.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert "HTTP 401" in lines[0]
    assert "http://x/prm" in lines[0]


@pytest.mark.slow
def test_the_stdio_path_of_the_command_line_never_imports_httpx():
    code = (
        "import sys, trio_mcp.cli as cli\n"
        "status = cli.run(['tools'])\n"
        "print('httpx2' in sys.modules, 'httpcore2' in sys.modules, status)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=LIMIT, check=True
    )
    assert out.stdout.splitlines()[-1].split() == ["False", "False", "0"]
