"""Server cards (experimental) against real processes: a loopback web site and the demo over HTTP.

The site (``tests/servers/card_server.py``, a child process) serves a
catalog and cards whose remote is the demo server (``python -m
trio_mcp.demo --http``, another child process): from the domain to a
connected client to the advisory comparison, then every bad answer a site
can give, each a typed error within its bounds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

import trio_mcp
from trio_mcp import server_cards
from trio_mcp._version import __version__
from trio_mcp.server_cards import CARD_MEDIA_TYPE, CARD_SCHEMA, ServerCardError

LIMIT = 30
REPO = Path(trio_mcp.__file__).resolve().parents[1]
ENV = {
    **{name: value for name, value in os.environ.items() if name.lower() not in ("http_proxy", "all_proxy")},
    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
}
SITE = Path(__file__).parent / "servers" / "card_server.py"
AI_CATALOG = "/.well-known/ai-catalog.json"
MCP_CATALOG = "/.well-known/mcp/catalog.json"
JSON = {"Content-Type": "application/json"}
CARD_TYPE = {"Content-Type": CARD_MEDIA_TYPE}


async def _first_line(process: trio.Process) -> str:
    assert process.stdout is not None
    line = b""
    with trio.fail_after(LIMIT):
        while not line.endswith(b"\n"):
            chunk = await process.stdout.receive_some(1)
            assert chunk, "the child exited before printing its address"
            line += chunk
    return line.decode().strip()


@asynccontextmanager
async def child(argv: list[str]):
    process = await trio.lowlevel.open_process(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV
    )
    try:
        yield process, await _first_line(process)
    finally:
        process.kill()
        with trio.fail_after(LIMIT):
            await process.wait()
        assert process.stdout is not None
        await process.stdout.aclose()


class Site:
    """The web site: its origin, and its routes (written to the file it reads on each request)."""

    def __init__(self, routes_file: Path, port: int) -> None:
        self.file = routes_file
        self.port = port
        self.origin = f"http://127.0.0.1:{port}"
        self.routes: dict[str, Any] = {}

    def serve(self, path: str, **response: Any) -> None:
        self.routes[path] = response
        self.file.write_text(json.dumps(self.routes))

    async def log(self) -> list[dict[str, Any]]:
        import httpx2

        async with httpx2.AsyncClient(trust_env=False) as client:
            found: list[dict[str, Any]] = (await client.get(self.origin + "/_log")).json()
            return found


@pytest.fixture
async def site(tmp_path):
    routes = tmp_path / "routes.json"
    routes.write_text("{}")
    async with child([sys.executable, str(SITE), str(routes)]) as (_, port):
        yield Site(routes, int(port))


@pytest.fixture
async def demo_url():
    async with child([sys.executable, "-m", "trio_mcp.demo", "--http", "127.0.0.1:0"]) as (_, url):
        assert url.startswith("http://127.0.0.1:")
        yield url


def card(url: str, **more: Any) -> dict[str, Any]:
    return {
        "$schema": CARD_SCHEMA,
        "name": "dev.trio-mcp/trio-mcp-demo",
        "version": __version__,
        "description": "The demo server of trio-mcp.",
        "title": "trio-mcp demo server",
        "remotes": [
            {"type": "streamable-http", "url": url, "supportedProtocolVersions": ["2026-07-28", "2025-11-25"]}
        ],
        **more,
    }


def entry(identifier: str, url: str) -> dict[str, str]:
    return {"identifier": identifier, "type": CARD_MEDIA_TYPE, "url": url}


def catalog(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"specVersion": "1.0", "entries": list(entries)}


async def discover(site: Site, **kwargs: Any) -> server_cards.Discovery:
    with trio.fail_after(LIMIT):
        return await server_cards.discover(site.origin, trust_env=False, **kwargs)


async def catalog_error(site: Site, **kwargs: Any) -> ServerCardError:
    with pytest.raises(ServerCardError) as info:
        await discover(site, **kwargs)
    return info.value


# --------------------------------------------------------------- the whole flow


async def test_from_a_domain_to_a_connected_client_and_a_card_that_agrees(site, demo_url):
    site.serve(
        AI_CATALOG,
        headers={"Content-Type": "application/ai-catalog+json"},
        json=catalog(
            entry("urn:air:127.0.0.1:mcp:demo", "/demo/server-card"),
            {"identifier": "urn:air:127.0.0.1:a2a:agent", "type": "application/a2a+json", "url": "/agent"},
        ),
    )
    site.serve("/demo/server-card", headers=CARD_TYPE, json=card(demo_url))
    found = await discover(site)
    assert found.failures == {}
    assert found.catalog.skipped == 1
    demo = found.cards["urn:air:127.0.0.1:mcp:demo"]
    assert demo.url == site.origin + "/demo/server-card"
    assert demo.remotes[0].url == demo_url
    # The card was asked for with its media type.
    requests = await site.log()
    assert {"path": "/demo/server-card", "accept": CARD_MEDIA_TYPE} in requests
    assert "/agent" not in [request["path"] for request in requests]

    with trio.fail_after(LIMIT):
        async with trio_mcp.open_client(server_cards.card_target(demo, trust_env=False)) as client:
            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
            assert await server_cards.check_card(demo, client) == ()


async def test_a_card_that_lies_is_reported_and_decides_nothing(site, demo_url):
    lying = card(
        demo_url,
        name="com.example/weather",
        version="9.9.9",
        tools=[{"name": "echo"}, {"name": "forecast"}],
    )
    lying["remotes"][0]["supportedProtocolVersions"] = ["2024-11-05"]
    site.serve(AI_CATALOG, headers=JSON, json=catalog(entry("weather", "/card")))
    site.serve("/card", headers=JSON, json=lying)
    found = await discover(site)
    weather = found.cards["weather"]
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_client(server_cards.card_target(weather, trust_env=False)) as client:
            mismatches = {item.field: item for item in await server_cards.check_card(weather, client)}
            # The client keeps working: the card is advice, not a gate.
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"sum": 3}
    assert set(mismatches) == {"name", "version", "protocol_version", "tools"}
    assert mismatches["name"].server == "trio-mcp-demo"
    assert mismatches["version"].server == __version__
    assert "not served: forecast" in mismatches["tools"].message
    assert "not on the card: add" in mismatches["tools"].message


async def test_the_comparison_in_the_initialize_era(site, demo_url):
    modern_only = card(demo_url)
    modern_only["remotes"][0]["supportedProtocolVersions"] = ["2026-07-28"]
    site.serve(AI_CATALOG, headers=JSON, json=catalog(entry("demo", "/card")))
    site.serve("/card", headers=CARD_TYPE, json=modern_only)
    demo = (await discover(site)).cards["demo"]
    options = trio_mcp.ClientOptions(protocol="2025-11-25")
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_client(
            server_cards.card_target(demo, trust_env=False), options=options
        ) as client:
            assert client.era == "legacy"
            (mismatch,) = await server_cards.check_card(demo, client)
    assert mismatch.field == "protocol_version"
    assert mismatch.server == "2025-11-25"
    assert mismatch.card == ("2026-07-28",)


async def test_a_card_becomes_a_configuration_entry_of_a_group(site, demo_url):
    site.serve(MCP_CATALOG, headers=JSON, json={"specVersion": "draft", "entries": [entry("demo", "/card")]})
    site.serve("/card", headers=CARD_TYPE, json=card(demo_url))
    found = await discover(site)  # the earlier draft's location, after a 404 on the current one
    assert found.catalog.url == site.origin + MCP_CATALOG
    spec = server_cards.card_spec(found.cards["demo"], headers={"X-Trace": "1"})
    assert spec.name == "trio-mcp-demo"
    assert spec.transport == "http"
    assert spec.source.dialect == "server-card"
    assert spec.source.path == site.origin + "/card"
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_servers([spec]) as servers:
            assert "trio-mcp-demo__echo" in [listed.name for listed in servers.tools]
            result = await servers.call_tool("trio-mcp-demo__echo", {"text": "from a card"})
    assert result.text == "from a card"


async def test_an_inline_card_and_a_repeated_url_cost_no_extra_fetch(site, demo_url):
    site.serve(
        AI_CATALOG,
        headers=JSON,
        json=catalog(
            {"identifier": "inline", "type": CARD_MEDIA_TYPE, "data": card(demo_url)},
            entry("a", "/card"),
            entry("b", "/card"),
            entry("a", "/card"),
        ),
    )
    site.serve("/card", headers=JSON, json=card(demo_url))
    found = await discover(site)
    assert list(found.cards) == ["inline", "a", "b"]
    assert found.cards["inline"].url is None
    assert found.failures[3].reason == "invalid"  # type: ignore[attr-defined]
    assert "repeats the identifier" in str(found.failures[3])
    assert [request["path"] for request in await site.log()].count("/card") == 1


# --------------------------------------------------------------- bad answers


async def test_no_catalog_at_either_location(site):
    error = await catalog_error(site)
    assert error.reason == "no_catalog"
    assert error.status == 404
    paths = [request["path"] for request in await site.log()]
    assert paths == [AI_CATALOG, MCP_CATALOG]


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ({"status": 500, "headers": JSON, "body": "{}"}, "status"),
        ({"headers": {"Content-Type": "text/html"}, "body": "<html>an app shell</html>"}, "content_type"),
        ({"headers": JSON, "body": "{not json"}, "not_json"),
        ({"headers": JSON, "body": "[1, 2]"}, "invalid"),
        ({"headers": JSON, "json": {"entries": "none"}}, "invalid"),
        ({"headers": JSON, "body": "[" * 300_000}, "too_large"),
        ({"headers": JSON, "body": " " * 1000, "repeat": 100_000}, "too_large"),
        ({"status": 302, "headers": {"Location": "https://elsewhere.example/catalog"}}, "redirect"),
        ({"status": 302, "headers": {"Location": "http://localhost:{port}/x"}}, "redirect"),
        ({"status": 301, "headers": {"Location": AI_CATALOG}}, "loop"),
    ],
)
async def test_a_bad_catalog_is_a_typed_error(site, response, reason):
    site.serve(AI_CATALOG, **response)
    error = await catalog_error(site)
    assert error.reason == reason, str(error)
    assert isinstance(error, trio_mcp.MCPError)


async def test_a_long_body_is_not_read_past_the_bound(site):
    # 100 MB offered without a length; the reader stops at its bound.
    site.serve(AI_CATALOG, headers=JSON, body="x" * 10_000, repeat=10_000)
    with trio.fail_after(LIMIT):
        error = await catalog_error(site, max_bytes=4096)
    assert error.reason == "too_large"
    assert "4096" in str(error)


async def test_a_same_origin_redirect_is_followed_and_a_loop_is_not(site, demo_url):
    site.serve(AI_CATALOG, status=307, headers={"Location": "/moved"})
    site.serve("/moved", status=308, headers={"Location": "/catalog"})
    site.serve("/catalog", headers=JSON, json=catalog(entry("demo", "/card"), entry("loop", "/loop1")))
    site.serve("/card", headers=JSON, json=card(demo_url))
    site.serve("/loop1", status=302, headers={"Location": "/loop2"})
    site.serve("/loop2", status=302, headers={"Location": "/loop1"})
    found = await discover(site)
    assert found.catalog.url == site.origin + "/catalog"
    assert list(found.cards) == ["demo"]
    assert found.failures[1].reason == "loop"  # type: ignore[attr-defined]


async def test_a_slow_document_is_given_up_after_its_time(site):
    site.serve(AI_CATALOG, headers=JSON, json=catalog(), delay=5)
    with trio.fail_after(LIMIT):
        error = await catalog_error(site, document_timeout=0.3)
    assert error.reason == "timeout"  # not the document, which comes five seconds late


async def test_no_server_is_a_connection_failure():
    with socket_port() as port, pytest.raises(trio_mcp.ConnectionFailed):
        with trio.fail_after(LIMIT):
            await server_cards.discover(f"http://127.0.0.1:{port}", trust_env=False)


class socket_port:
    """A loopback port with nothing listening on it (bound, never listened to)."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        port: int = self.sock.getsockname()[1]
        return port

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


async def test_each_bad_card_fails_alone(site, demo_url):
    site.serve(
        AI_CATALOG,
        headers=JSON,
        json=catalog(
            entry("good", "/good"),
            entry("html", "/html"),
            entry("huge", "/huge"),
            entry("gone", "/gone"),
            entry("broken", "/broken"),
            entry("away", "https://elsewhere.example/card"),
            entry("self", AI_CATALOG),
            entry("escape", "/escape"),
            entry("back", "/back"),
            entry("websocket", "/websocket"),
        ),
    )
    site.serve("/good", headers=CARD_TYPE, json=card(demo_url))
    site.serve("/html", headers={"Content-Type": "text/html"}, body="<html></html>")
    site.serve("/huge", headers=CARD_TYPE, body="x" * 300_000)
    site.serve("/broken", headers=CARD_TYPE, json={**card(demo_url), "name": "no-slash"})
    site.serve("/escape", status=301, headers={"Location": "https://elsewhere.example/card"})
    site.serve("/back", status=302, headers={"Location": AI_CATALOG})
    websocket = card(demo_url)
    websocket["remotes"] = [{"type": "websocket", "url": "https://example.com/ws"}]
    site.serve("/websocket", headers=CARD_TYPE, json=websocket)
    found = await discover(site)
    reasons = {index: getattr(error, "reason", None) for index, error in found.failures.items()}
    assert reasons == {
        1: "content_type",
        2: "too_large",
        3: "status",
        4: "invalid",
        5: "off_origin",
        6: "loop",
        7: "redirect",
        8: "loop",
    }
    assert list(found.cards) == ["good", "websocket"]
    # A card of an unknown transport is read; only making a target from it fails.
    with pytest.raises(ServerCardError) as info:
        server_cards.card_target(found.cards["websocket"])
    assert info.value.reason == "transport"
    paths = [request["path"] for request in await site.log()]
    assert "/card" not in paths  # nothing was fetched from another origin


async def test_another_origin_is_followed_only_when_allowed(site, demo_url):
    other = f"http://localhost:{site.port}/card"
    site.serve(AI_CATALOG, headers=JSON, json=catalog(entry("there", other)))
    site.serve("/card", headers=CARD_TYPE, json=card(demo_url))
    found = await discover(site)
    assert found.failures[0].reason == "off_origin"  # type: ignore[attr-defined]
    found = await discover(site, allow_other_origins=True)
    assert found.cards["there"].url == other


async def test_a_url_the_http_client_cannot_request_is_invalid(site):
    site.serve(AI_CATALOG, headers=JSON, json=catalog(entry("snowman", "https://\u2603.example/card")))
    found = await discover(site, allow_other_origins=True)
    assert found.failures[0].reason == "invalid"  # type: ignore[attr-defined]
    assert "cannot be requested" in str(found.failures[0])


async def test_a_card_by_its_url(site, demo_url):
    site.serve("/mcp/server-card", headers=CARD_TYPE, json=card(demo_url))
    with trio.fail_after(LIMIT):
        fetched = await server_cards.fetch_server_card(site.origin + "/mcp/server-card", trust_env=False)
    assert fetched.name == "dev.trio-mcp/trio-mcp-demo"
    with pytest.raises(ServerCardError) as info:
        await server_cards.fetch_server_card("http://example.com/card")
    assert info.value.reason == "insecure"


async def test_the_callers_mistakes_are_value_errors_before_any_request():
    for domain in ("http://example.com", "example.com/path", ""):
        with pytest.raises(ValueError):  # noqa: PT011
            await server_cards.discover(domain)
    for bad in ({"max_bytes": 0}, {"document_timeout": float("inf")}, {"concurrency": 0}):
        with pytest.raises(ValueError):  # noqa: PT011
            await server_cards.discover("example.com", **bad)


async def test_the_callers_client_is_used_never_follows_a_redirect_itself_and_is_left_open(site):
    import httpx2

    site.serve(AI_CATALOG, status=302, headers={"Location": "http://localhost:{port}/elsewhere"})
    site.serve("/elsewhere", headers=JSON, json=catalog())
    async with httpx2.AsyncClient(follow_redirects=True, trust_env=False) as client:
        with pytest.raises(ServerCardError) as info, trio.fail_after(LIMIT):
            await server_cards.discover(site.origin, http_client=client)
        assert info.value.reason == "redirect"
        assert not client.is_closed
    assert "/elsewhere" not in [request["path"] for request in await site.log()]


async def test_the_callers_cancel_scope_ends_a_discovery_cleanly(site):
    site.serve(AI_CATALOG, headers=JSON, json=catalog(*(entry(f"slow{n}", f"/slow{n}") for n in range(4))))
    for n in range(4):
        site.serve(f"/slow{n}", headers=CARD_TYPE, json={}, delay=5)
    with trio.fail_after(LIMIT):
        with trio.move_on_after(0.5) as scope:
            await server_cards.discover(site.origin, trust_env=False)
    assert scope.cancelled_caught


async def test_a_client_of_the_old_httpx_line_is_refused_with_what_to_use():
    old = pytest.importorskip("httpx", reason="the old httpx line is not installed")
    async with old.AsyncClient() as client:
        with pytest.raises(TypeError, match="httpx2"):
            await server_cards.discover("example.com", http_client=client)  # type: ignore[arg-type]
