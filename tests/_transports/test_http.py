"""The Streamable HTTP transport against a scripted server: both eras and the failure table.

Each test starts `http_support.HttpServer` on a loopback port with a script,
connects with `trio_mcp.open_http_client`, and checks what the client did and
raised. Every test is bounded by `trio.fail_after`: nothing may hang.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import httpx2
import pytest
import trio
from http_support import (
    DISCOVER,
    HttpServer,
    McpScript,
    event,
    initialize_result,
    send,
    send_json,
    start_sse,
)

import trio_mcp
from trio_mcp._core.http_wire import (
    header_value,
    media_type,
    parse_challenge,
    parse_retry_after,
    same_origin,
    valid_session_id,
)

LIMIT = 15
MODERN = "2026-07-28"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    # A proxy in the environment would route loopback through it (httpx2's trust_env).
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


async def serve(nursery, script) -> HttpServer:
    server = HttpServer(script)
    await server.start(nursery)
    return server


def reply(result):
    async def handler(request, stream, message):
        await send_json(stream, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    return handler


# ----------------------------------------------------------------- pure helpers


def test_header_value_plain_and_encoded():
    assert header_value("get_weather") == "get_weather"
    assert header_value("a b") == "a b"
    for raw in ("café", " padded", "line\nbreak", "=?base64?abc?=", "tab\t"):
        encoded = header_value(raw)
        assert encoded.startswith("=?base64?")
        assert encoded.endswith("?=")
        assert base64.b64decode(encoded[9:-2]).decode() == raw


def test_media_type_and_session_ids():
    assert media_type("Application/JSON; charset=utf-8") == "application/json"
    assert media_type(None) == ""
    assert valid_session_id("abc-123")
    assert not valid_session_id("")
    assert not valid_session_id("a b")
    assert not valid_session_id("é")


def test_challenge_and_retry_after():
    scheme, params = parse_challenge(
        'Bearer resource_metadata="https://as.example/.well-known/oauth-protected-resource/mcp", '
        'scope="files:read files:write", error="insufficient_scope"'
    )
    assert scheme == "Bearer"
    assert params == {
        "resource_metadata": "https://as.example/.well-known/oauth-protected-resource/mcp",
        "scope": "files:read files:write",
        "error": "insufficient_scope",
    }
    assert parse_challenge("") == ("", {})
    assert parse_retry_after("7", 0.0) == 7.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", 1445412480.0) == 10.0
    assert parse_retry_after("soon", 0.0) is None
    assert parse_retry_after(None, 0.0) is None
    assert same_origin("http://a:80/x", "http://a/y")
    assert not same_origin("https://a/x", "http://a/x")
    assert not same_origin("http://a/x", "http://b/x")


# ---------------------------------------------------------------- modern era


async def test_modern_era_headers_and_calls():
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern"))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                assert client.era == "modern"
                assert [tool.name for tool in await client.list_tools()] == ["echo"]
                result = await client.call_tool("echo", {"text": "hi"})
                assert json.loads(result.text) == {"text": "hi"}
                await client.call_tool("café", {})
        nursery.cancel_scope.cancel()
    discover = server.posted("server/discover")[0]
    assert discover.headers["mcp-protocol-version"] == MODERN
    assert discover.headers["mcp-method"] == "server/discover"
    assert discover.headers["accept"] == "application/json, text/event-stream"
    assert discover.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in discover.headers
    calls = server.posted("tools/call")
    assert calls[0].headers["mcp-name"] == "echo"
    assert calls[1].headers["mcp-name"] == header_value("café")
    # The header equals the body's _meta version, on every request.
    for request in server.requests:
        assert (
            request.headers["mcp-protocol-version"]
            == request.json["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        )
    # No session in this era: nothing but POSTs, and no DELETE on close.
    assert {request.method for request in server.requests} == {"POST"}


async def test_modern_progress_on_an_event_stream_then_the_answer():
    async def call(request, stream, message):
        token = message["params"]["_meta"]["progressToken"]
        await start_sse(stream)
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1},
        }
        await stream.send_all(b": keepalive\n\n" + event(note))
        answer = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"content": [{"type": "text", "text": "done"}]},
        }
        await stream.send_all(event(answer))
        await trio.sleep_forever()  # a server that never closes the stream after the answer

    seen = []
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                result = await client.call_tool("slow", {}, on_progress=lambda *args: seen.append(args))
        assert result.text == "done"
        assert seen
        assert seen[0][0] == 1
        nursery.cancel_scope.cancel()


async def test_modern_cancellation_aborts_the_post_and_sends_nothing():
    started = trio.Event()
    closed = trio.Event()

    async def call(request, stream, message):
        if message["params"]["name"] != "forever":
            await McpScript("modern")(request, stream)
            return
        await start_sse(stream)
        started.set()
        try:
            while True:
                await stream.send_all(b": ping\n\n")
                await trio.sleep(0.05)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            closed.set()
            raise

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                with trio.move_on_after(0.3) as scope:
                    await client.call_tool("forever", {})
                assert scope.cancelled_caught
                assert started.is_set()
                await closed.wait()  # the server saw the disconnect
                assert json.loads((await client.call_tool("echo", {"a": 1})).text) == {"a": 1}
        nursery.cancel_scope.cancel()
    assert server.posted("notifications/cancelled") == []


async def test_listen_is_a_long_lived_stream_ended_by_closing_it():
    async def listen(request, stream, message):
        rid = message["id"]
        await start_sse(stream)
        meta = {"io.modelcontextprotocol/subscriptionId": rid}
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": meta},
        }
        change = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": meta}}
        await stream.send_all(event(ack) + event(change))
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"subscriptions/listen": listen}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                async with client.listen(tools=True) as subscription:
                    async for note in subscription:
                        assert note["method"] == "notifications/tools/list_changed"
                        break
                assert json.loads((await client.call_tool("echo", {"b": 2})).text) == {"b": 2}
        nursery.cancel_scope.cancel()


# ----------------------------------------------------------- initialize era


async def test_legacy_session_headers_get_stream_and_delete():
    get_seen = trio.Event()

    async def get(request, stream):
        get_seen.set()
        await start_sse(stream)
        await trio.sleep_forever()

    script = McpScript("legacy", get=get)
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, script)
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                assert client.era == "legacy"
                assert [tool.name for tool in await client.list_tools()] == ["echo"]
                await get_seen.wait()
        nursery.cancel_scope.cancel()
    initialize = server.posted("initialize")[0]
    assert "mcp-session-id" not in initialize.headers
    assert "mcp-protocol-version" not in initialize.headers
    listed = server.posted("tools/list")[0]
    assert listed.headers["mcp-session-id"] == "session-1"
    assert listed.headers["mcp-protocol-version"] == "2025-11-25"
    gets = [r for r in server.requests if r.method == "GET"]
    assert gets[0].headers["accept"] == "text/event-stream"
    assert gets[0].headers["mcp-session-id"] == "session-1"
    deletes = [r for r in server.requests if r.method == "DELETE"]
    assert len(deletes) == 1
    assert deletes[0].headers["mcp-session-id"] == "session-1"


async def test_legacy_server_request_answered_by_post():
    async def call(request, stream, message):
        await start_sse(stream)
        ask = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "elicitation/create",
            "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}},
        }
        await stream.send_all(event(ask, "e1"))
        while not server.posted_answers():  # noqa: ASYNC110 - polling the record of a server
            await trio.sleep(0.01)
        answer = server.posted_answers()[0]["result"]["content"]["name"]
        final = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"content": [{"type": "text", "text": f"Hello, {answer}"}]},
        }
        await stream.send_all(event(final, "e2"))

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("legacy", {"tools/call": call}))
        server.posted_answers = lambda: [
            r.json
            for r in server.requests
            if r.method == "POST" and "result" in r.json and r.json.get("id") == 0
        ]
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(
                server.url,
                options=trio_mcp.ClientOptions(
                    on_elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}}
                ),
            ) as client:
                result = await client.call_tool("greet", {})
        nursery.cancel_scope.cancel()
    assert result.text == "Hello, Ada"
    (posted,) = [r for r in server.requests if r.method == "POST" and r.json.get("id") == 0]
    assert posted.headers["mcp-session-id"] == "session-1"


async def test_legacy_stream_cut_is_resumed_and_replayed_request_not_answered_twice():
    async def call(request, stream, message):
        await start_sse(stream)
        ask = {"jsonrpc": "2.0", "id": 5, "method": "roots/list"}
        await stream.send_all(b"retry: 10\n" + event(ask, "s1"))
        # Cut before the answer.

    async def get(request, stream):
        if request.headers.get("last-event-id") != "s1":
            await send(stream, 405)
            return
        await start_sse(stream)
        # The replay resends the request already seen, then the answer; it does not close.
        ask = {"jsonrpc": "2.0", "id": 5, "method": "roots/list"}
        final = {
            "jsonrpc": "2.0",
            "id": call_id[0],
            "result": {"content": [{"type": "text", "text": "resumed"}]},
        }
        await stream.send_all(event(ask, "s1") + event(final, "s2"))
        await trio.sleep_forever()

    call_id = []

    async def tracking_call(request, stream, message):
        call_id.append(message["id"])
        await call(request, stream, message)

    roots_asked = []
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("legacy", {"tools/call": tracking_call}, get=get))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(
                server.url, options=trio_mcp.ClientOptions(on_roots=lambda: roots_asked.append(1) or [])
            ) as client:
                result = await client.call_tool("x", {})
        nursery.cancel_scope.cancel()
    assert result.text == "resumed"
    assert roots_asked == [1]
    answers = [r for r in server.requests if r.method == "POST" and r.json.get("id") == 5]
    assert len(answers) == 1


async def test_legacy_new_session_on_404_then_session_expired():
    script = McpScript("legacy")
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, script)
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                script.session = "forgotten"  # the server restarted
                assert [tool.name for tool in await client.list_tools()] == ["echo"]
                assert len(server.posted("initialize")) == 2
                assert len(server.posted("notifications/initialized")) == 2
                assert server.posted("tools/list")[-1].headers["mcp-session-id"] == "session-2"

                async def always_forget(request, stream, message):
                    script.session = "gone-again"
                    await send_json(
                        stream,
                        {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result()},
                        headers={"mcp-session-id": "fresh"},
                    )

                script.methods["initialize"] = always_forget
                script.session = "forgotten-again"
                with pytest.raises(trio_mcp.SessionExpired) as caught:
                    await client.call_tool("echo", {})
                assert caught.value.status == 404
        nursery.cancel_scope.cancel()


async def test_everything_style_400_for_an_unknown_session_opens_a_new_one():
    script = McpScript("legacy")
    state = {"forgot": False}

    async def tools_list(request, stream, message):
        if request.headers.get("mcp-session-id") != script.session or not state["forgot"]:
            state["forgot"] = True
            await send_json(
                stream,
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"},
                },
                400,
            )
            return
        await send_json(stream, {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}})

    script.methods["tools/list"] = tools_list
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, script)
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(
                server.url, options=trio_mcp.ClientOptions(cache=False)
            ) as client:
                assert await client.list_tools() == []
        nursery.cancel_scope.cancel()
    assert len(server.posted("initialize")) == 2


async def test_answer_on_the_get_stream_is_accepted():
    answered = trio.Event()
    get_open = trio.Event()
    pending = []

    async def call(request, stream, message):
        pending.append(message["id"])
        await send(stream, 202)

    async def get(request, stream):
        await start_sse(stream)
        await stream.send_all(b": open\n\n")
        get_open.set()
        while not pending:  # noqa: ASYNC110 - polling the record of a server
            await trio.sleep(0.01)
        final = {
            "jsonrpc": "2.0",
            "id": pending[0],
            "result": {"content": [{"type": "text", "text": "via GET"}]},
        }
        await stream.send_all(event(final))
        answered.set()
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("legacy", {"tools/call": call}, get=get))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                # A 202 to a request while the GET stream is open: the answer may come there.
                await get_open.wait()
                result = await client.call_tool("x", {})
                assert result.text == "via GET"
        nursery.cancel_scope.cancel()


async def test_probe_404_html_falls_back_to_initialize():
    async def discover(request, stream, message):
        await send(stream, 404, {"content-type": "text/html"}, b"<h1>Not Found</h1>")

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("legacy", {"server/discover": discover}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                assert client.era == "legacy"
        nursery.cancel_scope.cancel()


async def test_fallback_to_http_sse_of_2024_11_05():
    posted = []
    stream_ready = trio.Event()
    outbox: list[bytes] = []
    wake = trio.Event()

    async def handler(request, stream):
        nonlocal wake
        if request.method == "GET" and request.target == "/mcp":
            await start_sse(stream)
            await stream.send_all(event("/messages?sessionId=abc", kind="endpoint"))
            stream_ready.set()
            while True:
                while outbox:
                    await stream.send_all(outbox.pop(0))
                wake = trio.Event()
                await wake.wait()
        if request.method == "POST" and request.target == "/mcp":
            await send(stream, 404, {"content-type": "text/html"}, b"not here")
            return
        if request.method == "POST" and request.target.startswith("/messages"):
            message = request.json
            posted.append(message)
            await send(stream, 202, {}, b"Accepted")
            if message.get("method") == "initialize":
                result = initialize_result("2024-11-05")
            elif message.get("method") == "tools/list":
                result = {"tools": []}
            else:
                return
            outbox.append(event({"jsonrpc": "2.0", "id": message["id"], "result": result}, kind="message"))
            wake.set()
            return
        await send(stream, 400)

    async with trio.open_nursery() as nursery:
        server = HttpServer(handler)
        await server.start(nursery)
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                assert client.protocol_version == "2024-11-05"
                assert client.session._channel.transport == "sse"
                assert await client.list_tools() == []
        nursery.cancel_scope.cancel()
    assert [m.get("method") for m in posted][:2] == ["initialize", "notifications/initialized"]


# ------------------------------------------------------------ failure table


async def test_connection_refused_is_typed_and_not_a_group():
    with trio.socket.socket() as sock:
        await sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with trio.fail_after(LIMIT):
        with pytest.raises(trio_mcp.ConnectionFailed) as caught:
            async with trio_mcp.open_http_client(f"http://127.0.0.1:{port}/mcp"):
                pass
    assert caught.value.status is None
    assert isinstance(caught.value.__cause__, httpx2.ConnectError)


async def test_tls_to_a_plain_server_is_a_connection_failure():
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern"))
        with trio.fail_after(LIMIT), pytest.raises(trio_mcp.ConnectionFailed):
            async with trio_mcp.open_http_client(f"https://127.0.0.1:{server.port}/mcp"):
                pass
        nursery.cancel_scope.cancel()


async def test_401_is_auth_required_with_the_challenge():
    async def handler(request, stream):
        await send(
            stream,
            401,
            {
                "www-authenticate": 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="mcp"'
            },
        )

    async with trio.open_nursery() as nursery:
        server = HttpServer(handler)
        await server.start(nursery)
        with trio.fail_after(LIMIT), pytest.raises(trio_mcp.AuthRequired) as caught:
            async with trio_mcp.open_client(
                trio_mcp.HTTPTarget(server.url, headers={"Authorization": "Bearer old"})
            ):
                pass
        nursery.cancel_scope.cancel()
    error = caught.value
    assert error.status == 401
    assert error.scheme == "Bearer"
    assert error.resource_metadata == "http://127.0.0.1/.well-known/oauth-protected-resource"
    assert error.scope == "mcp"
    assert server.requests[0].headers["authorization"] == "Bearer old"
    # A 401 on the probe is no era verdict: nothing else was tried.
    assert len(server.requests) == 1


async def test_auth_hook_sends_the_token_on_every_request():
    class Token(httpx2.Auth):
        def auth_flow(self, request):
            request.headers["Authorization"] = "Bearer t0k3n"
            yield request

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("legacy"))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_client(trio_mcp.HTTPTarget(server.url, auth=Token())) as client:
                await client.list_tools()
        nursery.cancel_scope.cancel()
    assert {r.headers.get("authorization") for r in server.requests} == {"Bearer t0k3n"}
    assert "DELETE" in {r.method for r in server.requests}


async def test_a_cookie_the_server_sets_comes_back_on_every_later_request():
    """The channel's own client keeps cookies (a sticky load balancer's, say), though its
    POSTs go straight to its pool while it has none."""

    async def discover(request, stream, message):
        headers = {"set-cookie": "route=b2; Path=/"}
        await send_json(stream, {"jsonrpc": "2.0", "id": message["id"], "result": DISCOVER}, headers=headers)

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", methods={"server/discover": discover}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                for text in ("one", "two"):
                    result = await client.call_tool("echo", {"text": text})
                    assert json.loads(result.text) == {"text": text}
        nursery.cancel_scope.cancel()
    first, *later = server.requests
    assert "cookie" not in first.headers
    assert later
    assert {request.headers.get("cookie") for request in later} == {"route=b2"}


@pytest.mark.parametrize("with_auth", [False, True])
async def test_the_channels_own_client_posts_calls_directly_unless_given_an_auth(with_auth, caplog):
    """Without an ``auth``, the channel's own client hands its POSTs to its pool itself
    (httpx2's client, which logs each request it sends, sees none of them); with one, every
    request goes through the client, which applies it."""

    class Token(httpx2.Auth):
        def auth_flow(self, request):
            request.headers["Authorization"] = "Bearer t0k3n"
            yield request

    caplog.set_level("INFO", logger="httpx2")
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern"))
        with trio.fail_after(LIMIT):
            target = trio_mcp.HTTPTarget(server.url, auth=Token() if with_auth else None)
            async with trio_mcp.open_client(target) as client:
                result = await client.call_tool("echo", {"text": "hi"})
                assert json.loads(result.text) == {"text": "hi"}
        nursery.cancel_scope.cancel()
    sent_by_the_client = [record for record in caplog.records if "HTTP Request: POST" in record.getMessage()]
    assert len(sent_by_the_client) == (len(server.requests) if with_auth else 0)
    expected = "Bearer t0k3n" if with_auth else None
    assert {request.headers.get("authorization") for request in server.requests} == {expected}


@pytest.mark.parametrize("status", [429, 503])
async def test_busy_server_says_when_to_retry(status):
    async def call(request, stream, message):
        await send(stream, status, {"retry-after": "7"})

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                with pytest.raises(trio_mcp.ServerBusy) as caught:
                    await client.call_tool("echo", {})
                assert caught.value.retry_after == 7.0
                assert caught.value.status == status
                await client.list_tools()  # the connection lives on
        nursery.cancel_scope.cancel()


async def test_redirects_307_followed_302_refused():
    async def handler(request, stream):
        if request.target == "/old":
            await send(stream, 307, {"location": "/mcp"})
            return
        if request.target == "/found":
            await send(stream, 302, {"location": "/mcp"})
            return
        await McpScript("modern")(request, stream)

    async with trio.open_nursery() as nursery:
        server = HttpServer(handler)
        await server.start(nursery)
        base = f"http://127.0.0.1:{server.port}"
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(base + "/old") as client:
                assert client.era == "modern"
            # The POST kept its method and body through the 307.
            assert [r.method for r in server.requests[:2]] == ["POST", "POST"]
            assert server.requests[1].json["method"] == "server/discover"
            with pytest.raises(trio_mcp.HTTPError, match=r"302.*'/mcp'") as caught:
                async with trio_mcp.open_http_client(
                    base + "/found", options=trio_mcp.ClientOptions(protocol=MODERN)
                ):
                    pass
        nursery.cancel_scope.cancel()
    assert caught.value.__cause__ is not None or caught.value.status == 302


async def test_wrong_content_type_and_empty_bodies():
    async def html(request, stream, message):
        await send(stream, 200, {"content-type": "text/html"}, b"<html>proxy login</html>")

    async def empty(request, stream, message):
        await send(stream, 200, {"content-type": "application/json"})

    async def accepted(request, stream, message):
        await send(stream, 202)

    async with trio.open_nursery() as nursery:
        server = await serve(
            nursery, McpScript("modern", {"tools/call": html, "tools/list": empty, "prompts/list": accepted})
        )
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(
                server.url, options=trio_mcp.ClientOptions(cache=False)
            ) as client:
                with pytest.raises(trio_mcp.HTTPError, match="text/html") as caught:
                    await client.call_tool("echo", {})
                assert caught.value.body == "<html>proxy login</html>"
                with pytest.raises(trio_mcp.HTTPError, match="empty body"):
                    await client.list_tools()
                with pytest.raises(trio_mcp.HTTPError, match="202: the server will send no answer"):
                    await client.list_prompts()
        nursery.cancel_scope.cancel()


async def test_rpc_error_in_an_error_status_is_the_servers_answer():
    async def call(request, stream, message):
        # A foreign id, as Python SDK v1 sends: still this request's answer.
        await send_json(
            stream, {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32602, "message": "bad"}}, 400
        )

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                with pytest.raises(trio_mcp.RpcError) as caught:
                    await client.call_tool("echo", {})
        nursery.cancel_scope.cancel()
    assert caught.value.code == -32602


async def test_stream_cut_mid_event_fails_the_request():
    async def call(request, stream, message):
        await start_sse(stream)
        await stream.send_all(b'event: message\ndata: {"jsonrpc": "2.0", "id": ')

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                with pytest.raises(trio_mcp.ConnectionFailed, match="ended before its answer") as caught:
                    await client.call_tool("echo", {})
                await client.list_tools()
        nursery.cancel_scope.cancel()
    # A response came (its stream was cut short): the error names its status.
    assert caught.value.status == 200


async def test_never_ending_stream_is_bounded_by_the_callers_scope():
    async def call(request, stream, message):
        await start_sse(stream)
        while True:
            await stream.send_all(b"d")  # a drip that never ends an event
            await trio.sleep(0.05)

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                with trio.move_on_after(0.5) as scope:
                    await client.call_tool("drip", {})
                assert scope.cancelled_caught
                await client.list_tools()
            # Nothing left open once the block is over.
            while server.open_connections:  # noqa: ASYNC110 - polling the server's count
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()


async def test_huge_event_is_refused_at_the_cap():
    async def call(request, stream, message):
        await start_sse(stream)
        big = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"content": [{"type": "text", "text": "x" * 200_000}]},
        }
        await stream.send_all(event(big))

    async def body(request, stream, message):
        big = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [], "pad": "x" * 200_000}}
        await send_json(stream, big)

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call, "tools/list": body}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(
                server.url, options=trio_mcp.ClientOptions(max_message_bytes=100_000, cache=False)
            ) as client:
                with pytest.raises(trio_mcp.MessageTooLarge):
                    await client.call_tool("big", {})
                with pytest.raises(trio_mcp.MessageTooLarge):
                    await client.list_tools()
        nursery.cancel_scope.cancel()


async def test_json_answer_under_another_id_is_still_the_answer():
    async def call(request, stream, message):
        await send_json(stream, {"jsonrpc": "2.0", "id": 999, "result": {"content": []}})

    logs = []
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(
                server.url, options=trio_mcp.ClientOptions(on_log=logs.append)
            ) as client:
                result = await client.call_tool("echo", {})
        nursery.cancel_scope.cancel()
    assert result.content == []
    assert any("came with id 999" in line for line in logs)


async def test_bring_your_own_client_is_not_closed_and_gets_no_read_timeout():
    async def call(request, stream, message):
        await trio.sleep(6)  # longer than httpx2's default 5 s timeout
        await send_json(stream, {"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}})

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        async with httpx2.AsyncClient() as http_client:
            with trio.fail_after(LIMIT):
                async with trio_mcp.open_client(
                    trio_mcp.HTTPTarget(server.url, http_client=http_client)
                ) as client:
                    assert (await client.call_tool("slow", {})).content == []
            assert not http_client.is_closed
        nursery.cancel_scope.cancel()


async def test_user_headers_cannot_replace_protocol_headers():
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern"))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_client(
                trio_mcp.HTTPTarget(
                    server.url, headers={"MCP-Protocol-Version": "1999-01-01", "X-Tenant": "t1"}
                )
            ):
                pass
        nursery.cancel_scope.cancel()
    request = server.requests[0]
    assert request.headers["mcp-protocol-version"] == MODERN
    assert request.headers["x-tenant"] == "t1"


def test_bad_urls_are_refused_before_connecting():
    with pytest.raises(ValueError, match="http:// or https://"):
        trio_mcp.open_session(trio_mcp.HTTPTarget("ftp://example.com/mcp"))
    with pytest.raises(TypeError, match="unexpected keyword argument 'kill_grace'"):
        trio_mcp.open_session(
            trio_mcp.HTTPTarget("http://127.0.0.1/mcp"), options=trio_mcp.SessionOptions(kill_grace=1)
        )


def test_import_trio_mcp_and_the_stdio_path_never_import_httpx():
    code = (
        "import sys, trio_mcp, trio_mcp.cli, trio_mcp._open;"
        "trio_mcp.open_stdio_client; trio_mcp.open_http_client;"
        "print('httpx2' in sys.modules, 'httpcore' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]
    # ...and the check would see it.
    code = "import sys, trio_mcp._transports.http; print('httpx2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["True"]


_ = DISCOVER


async def test_many_cancelled_calls_leave_nothing_behind():
    async def call(request, stream, message):
        await start_sse(stream)
        while True:  # until the client goes away
            await stream.send_all(b": ping\n\n")
            await trio.sleep(0.05)

    async with trio.open_nursery() as nursery:
        server = await serve(nursery, McpScript("modern", {"tools/call": call}))
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                channel = client.session._channel
                async with trio.open_nursery() as calls:
                    for _ in range(20):
                        calls.start_soon(client.call_tool, "forever", {})
                    await trio.sleep(0.3)
                    calls.cancel_scope.cancel()
                # Cancelled before or after their POST went out: nothing is kept for them
                # (once their tasks have unwound, however loaded the machine).
                while channel._scopes:  # noqa: ASYNC110 - the channel's own tasks unwinding
                    await trio.sleep(0.05)
                assert channel._scopes == {}
                assert channel._parked == {}
                assert channel._withdrawn == set()
                assert channel._core.in_flight == 0
                await client.list_tools()
            while server.open_connections:  # noqa: ASYNC110 - polling the server's count
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()


async def test_a_new_session_is_told_the_log_level_and_subscriptions_again():
    script = McpScript("legacy")

    async def ok(request, stream, message):
        if request.headers.get("mcp-session-id") != script.session:
            await send_json(
                stream,
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}},
                404,
            )
            return
        await send_json(stream, {"jsonrpc": "2.0", "id": message["id"], "result": {}})

    for method in ("logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        script.methods[method] = ok
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, script)
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(
                server.url, options=trio_mcp.ClientOptions(cache=False)
            ) as client:
                await client.set_logging_level("warning")
                await client.subscribe_resource("file:///a")
                await client.subscribe_resource("file:///b")
                await client.unsubscribe_resource("file:///a")
                script.session = "forgotten"
                assert [tool.name for tool in await client.list_tools()] == ["echo"]
        nursery.cancel_scope.cancel()
    renewed = [r for r in server.requests if r.headers.get("mcp-session-id") == "session-2"]
    told = [(r.json.get("method"), r.json.get("params")) for r in renewed if r.method == "POST"]
    assert told[:3] == [
        ("notifications/initialized", None),
        ("logging/setLevel", {"level": "warning"}),
        ("resources/subscribe", {"uri": "file:///b"}),
    ]
    assert told[3][0] == "tools/list"


# ------------------------------------------------------- -32020 header mismatch

ROUTE_TOOLS = {
    "tools": [
        {
            "name": "route",
            "inputSchema": {
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            },
        }
    ]
}


def header_mismatch_script(always: bool):
    """A 2026-07-28 server whose ``route`` wants ``Mcp-Param-Region`` (``always``: refuses it whatever)."""
    seen = {"tools/call": [], "tools/list": 0}

    async def call(request, stream, message):
        seen["tools/call"].append((message["id"], request.headers.get("mcp-param-region")))
        if always or request.headers.get("mcp-param-region") != message["params"]["arguments"]["region"]:
            error = {"code": -32020, "message": "Mcp-Param-Region header is missing"}
            await send_json(stream, {"jsonrpc": "2.0", "id": message["id"], "error": error}, 400)
            return
        result = {"content": [{"type": "text", "text": "routed"}]}
        await send_json(stream, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def listing(request, stream, message):
        seen["tools/list"] += 1
        await send_json(stream, {"jsonrpc": "2.0", "id": message["id"], "result": ROUTE_TOOLS})

    return McpScript("modern", {"tools/call": call, "tools/list": listing}), seen


async def test_a_header_mismatch_lists_the_tools_again_once_and_resends_once():
    script, seen = header_mismatch_script(always=False)
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, script)
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                assert (await client.call_tool("route", {"region": "eu"})).text == "routed"
                assert client._header_mismatch_retries == 1
        nursery.cancel_scope.cancel()
    assert seen["tools/list"] == 1
    (first_id, first_header), (second_id, second_header) = seen["tools/call"]
    assert (first_header, second_header) == (None, "eu")
    assert first_id != second_id


async def test_a_header_mismatch_that_persists_is_the_callers_error_without_a_loop():
    script, seen = header_mismatch_script(always=True)
    async with trio.open_nursery() as nursery:
        server = await serve(nursery, script)
        with trio.fail_after(LIMIT):
            async with trio_mcp.open_http_client(server.url) as client:
                with pytest.raises(trio_mcp.RpcError) as caught:
                    await client.call_tool("route", {"region": "eu"})
                # The next call is recovered once too, not more.
                with pytest.raises(trio_mcp.RpcError):
                    await client.call_tool("route", {"region": "us"})
                assert client._header_mismatch_retries == 2
        nursery.cancel_scope.cancel()
    assert caught.value.code == -32020
    assert seen["tools/list"] == 2
    assert len(seen["tools/call"]) == 4
