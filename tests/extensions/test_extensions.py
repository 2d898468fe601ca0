"""Client extensions (`trio_mcp.extensions`) on a live client: declared in both eras, claims, bindings.

Against the in-memory fake (`trio_mcp.testing`), whose requests keep what the
client sent; the MCP Apps interop tests check the declaration against a real
server too.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

import trio_mcp
from trio_mcp.extensions import ClaimContext, Extension, NotificationBinding, RequestBinding, ResultClaim
from trio_mcp.testing import FakeServer, open_fake_client

NOTES = Extension(identifier="com.example/notes", settings={"version": 2})


def declared(request: Any) -> dict[str, Any] | None:
    caps = request.meta.get("io.modelcontextprotocol/clientCapabilities")
    assert isinstance(caps, dict)
    return caps.get("extensions")


async def test_modern_every_request_declares_the_extension_listings_included(autojump_clock) -> None:
    server = FakeServer(
        tools=["echo"], prompts=["p"], resources=["test://r"], resource_templates=["test://t/{x}"]
    )
    server.on_tool("echo", lambda request: "hi")
    server.on_request("prompts/get", lambda request: {"messages": []})
    server.on_request("resources/read", lambda request: {"contents": []})
    server.on_request("com.example/custom", lambda request: {})
    raw = {"org.raw/flag": {"on": True}}
    options = trio_mcp.ClientOptions(extensions=[NOTES], capabilities={"extensions": raw})
    async with open_fake_client(server, options=options) as client:
        await client.list_tools()
        await client.list_prompts()
        await client.list_resources()
        await client.list_resource_templates()
        await client.call_tool("echo")
        await client.get_prompt("p")
        await client.read_resource("test://r")
        await client.request("com.example/custom", {})
    wanted = {"com.example/notes": {"version": 2}, "org.raw/flag": {"on": True}}
    sent = [r for r in server.requests if r.method != "server/discover"]
    assert [r.method for r in sent] == [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "tools/call",
        "prompts/get",
        "resources/read",
        "com.example/custom",
    ]
    for request in sent:
        assert declared(request) == wanted, request.method


async def test_modern_raw_extensions_alone_ride_on_listings_too(autojump_clock) -> None:
    # The raw option, as before typed extensions: now on tools/list as well.
    server = FakeServer(tools=["echo"])
    options = trio_mcp.ClientOptions(
        capabilities={"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["x"]}}}
    )
    async with open_fake_client(server, options=options) as client:
        await client.list_tools()
    listing = next(r for r in server.requests if r.method == "tools/list")
    assert declared(listing) == {"io.modelcontextprotocol/ui": {"mimeTypes": ["x"]}}


async def test_modern_without_extensions_plain_requests_declare_nothing(autojump_clock) -> None:
    server = FakeServer(tools=["echo"])
    async with open_fake_client(server) as client:
        await client.list_tools()
    listing = next(r for r in server.requests if r.method == "tools/list")
    assert listing.meta["io.modelcontextprotocol/clientCapabilities"] == {}


async def test_an_extension_limited_to_some_methods_rides_on_those(autojump_clock) -> None:
    server = FakeServer(tools=["echo"], prompts=["p"])
    only_tools = Extension(identifier="com.example/tools-only", methods={"tools/list"})
    async with open_fake_client(server, options=trio_mcp.ClientOptions(extensions=[only_tools])) as client:
        await client.list_tools()
        await client.list_prompts()
    by_method = {r.method: r for r in server.requests}
    assert declared(by_method["tools/list"]) == {"com.example/tools-only": {}}
    assert declared(by_method["prompts/list"]) is None


async def test_legacy_initialize_declares_typed_and_raw_extensions(autojump_clock) -> None:
    server = FakeServer(era="legacy", tools=["echo"])
    options = trio_mcp.ClientOptions(
        extensions=[NOTES], capabilities={"extensions": {"org.raw/flag": {}}}, on_roots=list
    )
    async with open_fake_client(server, options=options) as client:
        assert client.era == "legacy"
        await client.list_tools()
    initialize = next(r for r in server.requests if r.method == "initialize")
    caps = initialize.params["capabilities"]
    assert caps["extensions"] == {"org.raw/flag": {}, "com.example/notes": {"version": 2}}
    assert "roots" in caps
    listing = next(r for r in server.requests if r.method == "tools/list")
    assert "_meta" not in listing.params


async def test_a_claimed_result_type_is_resolved_by_its_extension(autojump_clock) -> None:
    seen: list[ClaimContext] = []

    async def resolve(result: dict[str, Any], ctx: ClaimContext) -> dict[str, Any]:
        seen.append(ctx)
        return await ctx.request("com.example/fetch", {"ticket": result["ticket"]})

    later = Extension(
        identifier="com.example/later",
        claims=[ResultClaim(result_type="com.example/deferred", resolve=resolve)],
    )
    server = FakeServer(tools=["slow"])
    server.on_tool("slow", lambda request: {"resultType": "com.example/deferred", "ticket": "t-1"})
    server.on_request(
        "com.example/fetch",
        lambda request: {
            "resultType": "complete",
            "content": [{"type": "text", "text": request.params["ticket"]}],
        },
    )
    async with open_fake_client(server, options=trio_mcp.ClientOptions(extensions=[later])) as client:
        result = await client.call_tool("slow", {"x": 1})
    assert result.text == "t-1"
    assert [ctx.method for ctx in seen] == ["tools/call"]
    assert seen[0].params == {"name": "slow", "arguments": {"x": 1}}
    fetch = next(r for r in server.requests if r.method == "com.example/fetch")
    assert declared(fetch) == {"com.example/later": {}}


async def test_an_unclaimed_result_type_is_still_a_protocol_error(autojump_clock) -> None:
    server = FakeServer(tools=["slow"], prompts=["p"])
    server.on_tool("slow", lambda request: {"resultType": "com.example/deferred"})
    server.on_request("prompts/get", lambda request: {"resultType": "com.example/deferred"})

    async def resolve(result: dict[str, Any], ctx: ClaimContext) -> dict[str, Any]:
        raise AssertionError("not claimed on prompts/get")

    later = Extension(
        identifier="com.example/later",
        claims=[ResultClaim(result_type="com.example/deferred", resolve=resolve)],
    )
    async with open_fake_client(server) as client:
        with pytest.raises(trio_mcp.ProtocolError, match="unknown resultType"):
            await client.call_tool("slow")
    async with open_fake_client(server, options=trio_mcp.ClientOptions(extensions=[later])) as client:
        with pytest.raises(trio_mcp.ProtocolError, match="unknown resultType"):
            await client.get_prompt("p")


async def test_a_resolver_must_answer_with_a_result_object(autojump_clock) -> None:
    async def resolve(result: dict[str, Any], ctx: ClaimContext) -> Any:
        return ["not", "a", "result"]

    later = Extension(
        identifier="com.example/later",
        claims=[ResultClaim(result_type="com.example/deferred", resolve=resolve)],
    )
    server = FakeServer(tools=["slow"])
    server.on_tool("slow", lambda request: {"resultType": "com.example/deferred"})
    async with open_fake_client(server, options=trio_mcp.ClientOptions(extensions=[later])) as client:
        with pytest.raises(trio_mcp.ProtocolError, match=r"'com\.example/later' resolved .* to a list"):
            await client.call_tool("slow")


async def test_claims_are_not_read_in_the_initialize_era(autojump_clock) -> None:
    async def resolve(result: dict[str, Any], ctx: ClaimContext) -> dict[str, Any]:
        raise AssertionError("legacy results have no resultType to claim")

    later = Extension(
        identifier="com.example/later",
        claims=[ResultClaim(result_type="com.example/deferred", resolve=resolve)],
    )
    server = FakeServer(era="legacy", tools=["slow"])
    server.on_tool("slow", lambda request: {"resultType": "com.example/deferred", "content": []})
    async with open_fake_client(server, options=trio_mcp.ClientOptions(extensions=[later])) as client:
        result = await client.call_tool("slow")
    assert result.content == []


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_bound_notifications_go_to_their_extension(autojump_clock, era: str) -> None:
    got: list[dict[str, Any]] = []
    others: list[str] = []
    logs: list[str] = []
    done = trio.Event()

    def observe(params: dict[str, Any]) -> None:
        got.append(params)

    async def fail(params: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    def other(note: dict[str, Any]) -> None:
        others.append(note["method"])
        done.set()

    ext = Extension(
        identifier="com.example/watch",
        notifications=[
            NotificationBinding(method="com.example/changed", handler=observe),
            NotificationBinding(method="com.example/broken", handler=fail),
        ],
    )
    server = FakeServer(era=era, tools=["echo"])  # type: ignore[arg-type]
    options = trio_mcp.ClientOptions(extensions=[ext], on_notification=other, on_log=logs.append)
    async with open_fake_client(server, options=options):
        await server.notify("com.example/changed", {"n": 1})
        await server.notify("com.example/changed")
        await server.notify("com.example/broken", {})
        await server.notify("com.example/unbound", {})
        await done.wait()
    assert got == [{"n": 1}, {}]
    assert others == ["com.example/unbound"]
    assert any("com.example/broken" in line and "boom" in line for line in logs)


async def test_bound_server_requests_are_answered_by_their_extension(autojump_clock) -> None:
    async def answer(params: Any) -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        return {"echo": params}

    ext = Extension(
        identifier="com.example/ask", requests=[RequestBinding(method="com.example/ask", handler=answer)]
    )
    server = FakeServer(era="legacy", tools=["echo"])
    async with open_fake_client(server, options=trio_mcp.ClientOptions(extensions=[ext])):
        assert await server.send_request("com.example/ask", {"q": 1}) == {"echo": {"q": 1}}
        with pytest.raises(trio_mcp.RpcError) as caught:
            await server.send_request("com.example/other", {})
        assert caught.value.code == -32601


async def test_a_missing_capability_error_for_an_extension_is_retried_once_with_it(autojump_clock) -> None:
    # A 2026-07-28 server asking for an extension the client has, on a request
    # that did not carry it (a methods-limited extension), gets it on the retry.
    ext = Extension(identifier="com.example/x", methods={"tools/call"})
    server = FakeServer(prompts=["p"])
    calls: list[Any] = []

    def listing(request: Any) -> dict[str, Any]:
        calls.append(declared(request))
        if declared(request) is None:
            raise trio_mcp.RpcError(
                -32021, "needs it", {"requiredCapabilities": {"extensions": {"com.example/x": {}}}}
            )
        return {"prompts": []}

    server.on_request("prompts/list", listing)
    async with open_fake_client(server, options=trio_mcp.ClientOptions(extensions=[ext])) as client:
        assert await client.list_prompts() == []
    assert calls == [None, {"com.example/x": {}}]
