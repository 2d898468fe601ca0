"""The demo server over Streamable HTTP, ``python -m trio_mcp.demo --http``, as a real process.

The client of the package in both eras (what the docs' HTTP examples do),
then the HTTP rules of the front by hand with httpx2: the 2026-07-28 headers
checked against the body, the initialize era's session, GET stream and
DELETE, and the refusals (status and JSON-RPC error) of what is not MCP.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import trio

import trio_mcp
from trio_mcp.demo import parse_address, url_of

LIMIT = 30
REPO = Path(trio_mcp.__file__).resolve().parents[1]
ENV = {
    **{name: value for name, value in os.environ.items() if name.lower() not in ("http_proxy", "all_proxy")},
    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
}
DEMO = [sys.executable, "-m", "trio_mcp.demo"]
MODERN = "2026-07-28"
JSON_AND_SSE = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


class Demo:
    def __init__(self, process: trio.Process, url: str) -> None:
        self.process = process
        self.url = url
        self.stderr = b""


@asynccontextmanager
async def demo_http(*args: str):
    """The demo over HTTP on a free port; its stderr (with ``-v``) is kept once it ended."""
    process = await trio.lowlevel.open_process(
        [*DEMO, "--http", "127.0.0.1:0", "-v", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    demo = None
    try:
        line = b""
        with trio.fail_after(LIMIT):
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive_some(1)
                assert chunk, "the demo exited before printing its URL"
                line += chunk
        url = line.decode().strip()
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/mcp")
        demo = Demo(process, url)
        yield demo
    finally:
        process.terminate()
        with trio.fail_after(LIMIT):
            await process.wait()
            stderr = b""
            while chunk := await process.stderr.receive_some():
                stderr += chunk
            await process.stdout.aclose()
            await process.stderr.aclose()
        if demo is not None:
            demo.stderr = stderr


def modern(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}


def headers_of(message: dict[str, Any], **extra: str) -> dict[str, str]:
    headers = {**JSON_AND_SSE, "mcp-protocol-version": MODERN, "mcp-method": message["method"]}
    name = message["params"].get("name")
    if name is not None:
        headers["mcp-name"] = name
    return {**headers, **extra}


# ------------------------------------------------------------------ the client


async def test_the_client_in_the_2026_era_over_http():
    async with demo_http() as demo:
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(demo.url) as client:
                assert client.era == "modern"
                assert [tool.name for tool in await client.list_tools()] == [
                    "echo",
                    "add",
                    "slow",
                    "ask",
                    "report",
                    "batch",
                ]
                assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
                assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"sum": 5}
                progress: list[float] = []
                result = await client.call_tool(
                    "slow",
                    {"steps": 3, "delay": 0},
                    on_progress=lambda done, total, text: progress.append(done),
                )
                assert result.text == "Done: 3 steps."
                assert progress == [1, 2, 3]
                # Concurrent calls each get their own progress, on their own stream.
                seen: dict[str, list[float]] = {"a": [], "b": []}
                async with trio.open_nursery() as nursery:
                    for key in seen:
                        nursery.start_soon(
                            partial_call, client, {"steps": 4, "delay": 0.01}, seen[key].append
                        )
                assert seen == {"a": [1, 2, 3, 4], "b": [1, 2, 3, 4]}
                # Giving up on a call closes its exchange: the server cancels the request.
                with trio.move_on_after(0.5):
                    await client.call_tool("slow", {"steps": 100, "delay": 0.1})
                assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"
    assert b"cancelled by the client" in demo.stderr


async def partial_call(client: trio_mcp.Client, arguments: dict[str, Any], record) -> None:
    result = await client.call_tool("slow", arguments, on_progress=lambda done, total, text: record(done))
    assert result.text == "Done: 4 steps."


async def test_several_clients_at_once_whose_ids_overlap():
    # Every client numbers its requests from 1: the ids of clients used
    # together overlap, and each must still get its own answers, its own
    # progress and its own cancellation.
    async with demo_http() as demo:
        with trio.fail_after(LIMIT):
            async with AsyncExitStack() as stack:
                clients = [
                    await stack.enter_async_context(trio_mcp.open_http_client(demo.url)) for _ in range(4)
                ]
                results: dict[int, list[Any]] = {}

                async def work(index: int, client: trio_mcp.Client) -> None:
                    got = results[index] = []
                    for round_ in range(3):
                        progress: list[float] = []
                        result = await client.call_tool(
                            "slow",
                            {"steps": 3, "delay": 0.02},
                            on_progress=lambda done, total, text, seen=progress: seen.append(done),
                        )
                        text = f"{index}.{round_}"
                        echoed = await client.call_tool("echo", {"text": text})
                        got.append((result.text, progress, echoed.text))

                async with trio.open_nursery() as nursery:
                    for index, client in enumerate(clients):
                        nursery.start_soon(work, index, client)
                # One client gives up on a call while another's call of the same id runs on.
                async with trio.open_nursery() as nursery:

                    async def patient() -> None:
                        result = await clients[1].call_tool("slow", {"steps": 5, "delay": 0.05})
                        results[-1] = [result.text]

                    nursery.start_soon(patient)
                    with trio.move_on_after(0.1):
                        await clients[0].call_tool("slow", {"steps": 100, "delay": 0.05})
    for index in range(4):
        assert results[index] == [("Done: 3 steps.", [1, 2, 3], f"{index}.{r}") for r in range(3)]
    assert results[-1] == ["Done: 5 steps."]
    assert b"in progress" not in demo.stderr


async def test_the_client_in_the_initialize_era_over_http():
    async def answer(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    logs: list[Any] = []
    async with demo_http() as demo:
        with trio.fail_after(LIMIT):
            options = trio_mcp.ClientOptions(
                protocol="2025-11-25", on_elicitation=answer, log_level="info", on_notification=logs.append
            )
            async with trio_mcp.open_client(trio_mcp.HTTPTarget(demo.url), options=options) as client:
                assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
                assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
                # The server's own request goes on the call's stream; the answer comes by POST.
                assert (await client.call_tool("ask", {"question": "name?"})).text == "Hello, Ada!"
                progress: list[float] = []
                result = await client.call_tool(
                    "slow",
                    {"steps": 2, "delay": 0},
                    on_progress=lambda done, total, text: progress.append(done),
                )
                assert (result.text, progress) == ("Done: 2 steps.", [1, 2])
                # Another client is a session of its own, in the other era.
                async with trio_mcp.open_http_client(demo.url) as other:
                    assert other.era == "modern"
                    assert (await other.call_tool("echo", {"text": "other"})).text == "other"
    # The tool's log messages came on its stream, after logging/setLevel.
    assert any(log["method"] == "notifications/message" and "ask" in str(log["params"]) for log in logs)
    assert demo.stderr.count(b"protocol era: initialize") == 1


# ------------------------------------------------------------- the HTTP rules


async def test_2026_headers_must_agree_with_the_body():
    async with demo_http() as demo, httpx2.AsyncClient() as http:
        with trio.fail_after(LIMIT):
            call = modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
            good = await http.post(demo.url, json=call, headers=headers_of(call))
            assert good.status_code == 200
            assert good.headers["content-type"] == "application/json"
            assert good.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
            encoded = await http.post(
                demo.url, json=call, headers=headers_of(call, **{"mcp-name": "=?base64?ZWNobw==?="})
            )
            assert encoded.status_code == 200
            for wrong in (
                {"mcp-method": "tools/list"},
                {"mcp-name": "add"},
                {"mcp-protocol-version": "2025-11-25"},
            ):
                refused = await http.post(demo.url, json=call, headers=headers_of(call, **wrong))
                assert refused.status_code == 400, wrong
                assert refused.json()["error"]["code"] == -32020
                assert refused.json()["id"] == 1
            missing = headers_of(call)
            del missing["mcp-name"]
            refused = await http.post(demo.url, json=call, headers=missing)
            assert (refused.status_code, refused.json()["error"]["code"]) == (400, -32020)
            unknown = modern("no/such/method")
            refused = await http.post(demo.url, json=unknown, headers=headers_of(unknown))
            assert (refused.status_code, refused.json()["error"]["code"]) == (404, -32601)
            # Progress makes the answer an event stream: the notifications, then the answer.
            slow = modern("tools/call", {"name": "slow", "arguments": {"steps": 2, "delay": 0}})
            slow["params"]["_meta"]["progressToken"] = "p"
            streamed = await http.post(demo.url, json=slow, headers=headers_of(slow))
            assert streamed.headers["content-type"] == "text/event-stream"
            events = [
                json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: ")
            ]
            assert [event.get("method") for event in events] == [
                "notifications/progress",
                "notifications/progress",
                None,
            ]
            assert events[-1]["id"] == 1


async def test_the_initialize_era_session_get_stream_and_delete():
    async with demo_http() as demo, httpx2.AsyncClient() as http:
        with trio.fail_after(LIMIT):
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            }
            answer = await http.post(demo.url, json=initialize, headers=JSON_AND_SSE)
            assert answer.status_code == 200
            assert answer.json()["result"]["protocolVersion"] == "2025-11-25"
            session = answer.headers["mcp-session-id"]
            in_session = {**JSON_AND_SSE, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await http.post(demo.url, json=initialized, headers=in_session)).status_code == 202
            listing = await http.post(
                demo.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=in_session
            )
            assert [tool["name"] for tool in listing.json()["result"]["tools"]] == [
                "echo",
                "add",
                "slow",
                "ask",
                "report",
                "batch",
            ]
            wrong_version = {**in_session, "mcp-protocol-version": "2025-06-18"}
            refused = await http.post(
                demo.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=wrong_version
            )
            assert refused.status_code == 400
            again = await http.post(demo.url, json={**initialize, "id": 4}, headers=in_session)
            assert again.json()["error"]["code"] == -32600
            assert "mcp-session-id" not in again.headers
            # One GET stream per session.
            get_headers = {"accept": "text/event-stream", "mcp-session-id": session}
            async with http.stream("GET", demo.url, headers=get_headers) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"] == "text/event-stream"
                second = await http.get(demo.url, headers=get_headers)
                assert second.status_code == 409
            assert (await http.get(demo.url, headers={"accept": "text/event-stream"})).status_code == 400
            assert (await http.delete(demo.url, headers={"mcp-session-id": session})).status_code == 200
            gone = await http.post(
                demo.url, json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, headers=in_session
            )
            assert (gone.status_code, gone.json()["error"]["message"]) == (404, "Session not found")
            assert (await http.delete(demo.url, headers={"mcp-session-id": session})).status_code == 404


async def test_what_is_not_mcp_is_refused():
    async with demo_http() as demo, httpx2.AsyncClient() as http:
        with trio.fail_after(LIMIT):
            call = modern("tools/list")
            base = demo.url.removesuffix("/mcp")
            assert (await http.post(base + "/other", json=call, headers=headers_of(call))).status_code == 404
            put = await http.put(demo.url, json=call, headers=headers_of(call))
            assert (put.status_code, put.headers["allow"]) == (405, "GET, POST, DELETE")
            text = await http.post(
                demo.url, content=json.dumps(call), headers={**headers_of(call), "content-type": "text/plain"}
            )
            assert text.status_code == 415
            json_only = await http.post(
                demo.url, json=call, headers={**headers_of(call), "accept": "application/json"}
            )
            assert json_only.status_code == 406
            broken = await http.post(demo.url, content=b"{", headers=headers_of(call))
            assert (broken.status_code, broken.json()["error"]["code"]) == (400, -32700)
            batch = await http.post(demo.url, json=[call], headers=headers_of(call))
            assert (batch.status_code, batch.json()["error"]["code"]) == (400, -32600)
            answer = await http.post(
                demo.url, json={"jsonrpc": "2.0", "id": 1, "result": {}}, headers=JSON_AND_SSE
            )
            assert answer.status_code == 400
            # The server still serves.
            assert (await http.post(demo.url, json=call, headers=headers_of(call))).status_code == 200


# ---------------------------------------------------------------- the command


@pytest.mark.parametrize(
    ("text", "address"),
    [("8000", ("127.0.0.1", 8000)), ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:0", ("::1", 0))],
)
def test_addresses(text, address):
    assert parse_address(text) == address
    host, port = address
    assert url_of(host, port) == (
        f"http://[{host}]:{port}/mcp" if ":" in host else f"http://{host}:{port}/mcp"
    )


@pytest.mark.parametrize("text", ["", "x", "host:", "1:2:x", "70000", "-1"])
def test_bad_addresses(text):
    with pytest.raises(ValueError, match=r"\[HOST:\]PORT"):
        parse_address(text)
    done = subprocess.run([*DEMO, "--http", text], env=ENV, capture_output=True, text=True, timeout=LIMIT)
    assert done.returncode == 2
    assert "--http" in done.stderr


def test_an_address_in_use_is_a_one_line_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*DEMO, "--http", f"127.0.0.1:{port}"], env=ENV, capture_output=True, text=True, timeout=LIMIT
        )
    assert done.returncode == 2
    assert done.stderr.startswith(f"trio-mcp-demo: cannot listen on http://127.0.0.1:{port}/mcp: ")
    assert done.stdout == ""


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
async def test_a_signal_ends_it(signum, status):
    async with demo_http() as demo:
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(demo.url) as client:
                assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
            demo.process.send_signal(signum)
            assert await demo.process.wait() == status
