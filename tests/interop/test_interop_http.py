"""Streamable HTTP (and HTTP+SSE) against the real peers, both eras.

Our ``sdk`` server on the official Python SDK serves both eras on one
endpoint; the npm ``everything`` server speaks the initialize era, over
Streamable HTTP and over the HTTP+SSE transport of 2024-11-05. Every message
the client sends is checked against the negotiated revision's schema (the
``wire`` fixture), and every HTTP request's headers against its body.
"""

from __future__ import annotations

import json

import httpx2
import pytest
import trio
from http_peers import serving

import trio_mcp

TIMEOUT = 60
MODERN = "2026-07-28"


class Recorder:
    """An httpx2 client that records each request's method, headers and body."""

    def __init__(self):
        self.requests = []
        self.client = httpx2.AsyncClient(event_hooks={"request": [self._record]}, trust_env=False)

    async def _record(self, request):
        body = request.content if request.method == "POST" else b""
        self.requests.append((request.method, dict(request.headers), json.loads(body) if body else None))

    def check_headers(self):
        """Modern headers equal the body; initialize-era requests carry the session once it exists."""
        session = None
        for method, headers, body in self.requests:
            if body is None or method != "POST":
                continue
            meta = (body.get("params") or {}).get("_meta") or {}
            version = meta.get("io.modelcontextprotocol/protocolVersion")
            if version is not None:
                assert headers["mcp-protocol-version"] == version
                assert headers["mcp-method"] == body["method"]
                assert "mcp-session-id" not in headers
                name = (body.get("params") or {}).get("name")
                if body["method"] == "tools/call":
                    assert headers["mcp-name"] == name
            elif body.get("method") == "initialize":
                assert "mcp-session-id" not in headers
            elif "mcp-session-id" in headers:
                session = session or headers["mcp-session-id"]
                assert headers["mcp-session-id"] == session
            assert headers["accept"] == "application/json, text/event-stream"


@pytest.fixture
def everything(peers):
    return peers["everything"]


async def test_sdk_modern_over_http(sdk_server, wire, tmp_path):
    recorder = Recorder()
    progress = []
    async with serving(sdk_server, "", tmp_path) as url, recorder.client:
        with trio.fail_after(TIMEOUT):
            async with trio_mcp.open_client(
                trio_mcp.HTTPTarget(url, http_client=recorder.client),
                options=trio_mcp.ClientOptions(
                    on_elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}}
                ),
            ) as client:
                assert client.era == "modern"
                tools = {tool.name for tool in await client.list_tools()}
                assert {"echo", "slow", "greet", "touch"} <= tools
                assert (await client.call_tool("echo", {"text": "hé"})).text == "hé"
                result = await client.call_tool(
                    "slow", {"steps": 2}, on_progress=lambda *a: progress.append(a)
                )
                assert result.text.startswith("slept")
                assert (await client.call_tool("greet")).text == "Hello, Ada!"
                async with client.listen(tools=True) as subscription:
                    await client.call_tool("touch")
                    async for note in subscription:
                        assert note["method"] == "notifications/tools/list_changed"
                        break
                # A cancelled call aborts its POST; the next call goes through.
                with trio.move_on_after(0.2):
                    await client.call_tool("slow", {"steps": 50, "delay": 0.1})
                assert (await client.call_tool("echo", {"text": "after"})).text == "after"
                wire.check(client.protocol_version, client)
        assert not recorder.client.is_closed
    assert [step[0] for step in progress] == [1, 2]
    recorder.check_headers()
    assert {method for method, _, _ in recorder.requests} == {"POST"}
    assert not any(
        body.get("method") == "notifications/cancelled"
        for _, _, body in recorder.requests
        if body is not None
    )


async def test_sdk_initialize_era_over_http(sdk_server, wire, tmp_path):
    recorder = Recorder()
    async with serving(sdk_server, "", tmp_path) as url, recorder.client:
        with trio.fail_after(TIMEOUT):
            async with trio_mcp.open_client(
                trio_mcp.HTTPTarget(url, http_client=recorder.client),
                options=trio_mcp.ClientOptions(
                    protocol="2025-11-25",
                    on_elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}},
                ),
            ) as client:
                assert client.era == "legacy"
                assert client.session._channel.session_id
                assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
                # The server asks on the POST's stream; the answer is POSTed.
                assert (await client.call_tool("greet")).text == "Hello, Ada!"
                wire.check(client.protocol_version, client)
    recorder.check_headers()
    methods = [method for method, _, _ in recorder.requests]
    assert "GET" in methods
    assert methods[-1] == "DELETE"


async def test_everything_streamable_http(everything, wire, tmp_path):
    async with serving(everything, "streamableHttp", tmp_path) as url:
        with trio.fail_after(TIMEOUT):
            async with trio_mcp.open_http_client(
                url,
                options=trio_mcp.ClientOptions(
                    on_sampling=lambda params: {
                        "role": "assistant",
                        "content": {"type": "text", "text": "fine"},
                        "model": "test-model",
                    },
                    on_roots=list,
                ),
            ) as client:
                assert client.era == "legacy"
                assert client.session._channel.transport == "streamable-http"
                assert (await client.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
                result = await client.call_tool("trigger-sampling-request", {"prompt": "x", "maxTokens": 5})
                assert "test-model" in result.text
                wire.check(client.protocol_version, client)


async def test_everything_http_sse_of_2024_11_05(everything, wire, tmp_path):
    async with serving(everything, "sse", tmp_path) as url:
        with trio.fail_after(TIMEOUT):
            async with trio_mcp.open_http_client(url) as client:
                assert client.era == "legacy"
                assert client.session._channel.transport == "sse"
                assert (await client.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
                wire.check(client.protocol_version, client)


async def test_everything_new_session_after_delete(everything, wire, tmp_path):
    """everything answers 400 (not 404) for a session it no longer knows: a new one is opened."""
    async with serving(everything, "streamableHttp", tmp_path) as url:
        with trio.fail_after(TIMEOUT):
            async with trio_mcp.open_http_client(url, options=trio_mcp.ClientOptions(cache=False)) as client:
                channel = client.session._channel
                first = channel.session_id
                async with httpx2.AsyncClient(trust_env=False) as other:
                    response = await other.delete(url, headers={"mcp-session-id": first})
                    assert response.status_code == 200
                assert (await client.call_tool("echo", {"message": "again"})).text == "Echo: again"
                assert channel.session_id not in (None, first)
                wire.check(client.protocol_version, client)


async def test_sdk_a_header_mismatch_is_recovered_by_listing_the_tools_again_once(sdk_server, tmp_path):
    """The first call of a tool whose argument travels as an Mcp-Param-* header, before
    any listing: the official SDK's server refuses it with -32020; the client lists the
    tools once and sends the call once more, with the header."""
    recorder = Recorder()
    logs = []
    async with serving(sdk_server, "", tmp_path) as url, recorder.client:
        with trio.fail_after(TIMEOUT):
            async with trio_mcp.open_client(
                trio_mcp.HTTPTarget(url, http_client=recorder.client),
                options=trio_mcp.ClientOptions(on_log=logs.append),
            ) as client:
                assert client.era == "modern"
                result = await client.call_tool("route", {"region": "eu-west", "text": "hi"})
                assert result.text == "eu-west: hi"
                assert client._header_mismatch_retries == 1
                # Listed now: the next call carries its header at once.
                assert (
                    await client.call_tool("route", {"region": "us", "text": "again"})
                ).text == "us: again"
                assert client._header_mismatch_retries == 1
    posts = [(headers, body) for method, headers, body in recorder.requests if body is not None]
    methods = [body["method"] for _, body in posts]
    assert methods[-4:] == ["tools/call", "tools/list", "tools/call", "tools/call"]
    first, _, resent, second = posts[-4:]
    assert "mcp-param-region" not in first[0]
    assert resent[0]["mcp-param-region"] == "eu-west"
    assert resent[1]["id"] != first[1]["id"]
    assert second[0]["mcp-param-region"] == "us"
    assert any("listing the tools again" in line for line in logs)
