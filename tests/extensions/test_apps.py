"""`trio_mcp.extensions.apps` on a live client, against the in-memory fake: what a real server seldom sends.

The content's metadata winning over the listing's, HTML sent as a blob,
empty or broken reads; the interop tests run the rest against a real server.
"""

from __future__ import annotations

import base64

import pytest

import trio_mcp
import trio_mcp.types
from trio_mcp.extensions.apps import (
    APP_MIME_TYPE,
    AppCallRefused,
    AppServer,
    Csp,
    UIResourceError,
    app_from_read,
    apps_extension,
    fetch_app,
)
from trio_mcp.testing import FakeServer, open_fake_client

TOOL = {"name": "show", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://x/app"}}}
LISTED = {
    "uri": "ui://x/app",
    "name": "app",
    "mimeType": APP_MIME_TYPE,
    "_meta": {
        "ui": {
            "csp": {"connectDomains": ["https://listing.example"]},
            "domain": "listing.example",
            "prefersBorder": True,
        }
    },
}


def read_answer(content: dict) -> dict:
    return {"contents": [content]}


async def test_the_contents_metadata_wins_over_the_listings(autojump_clock) -> None:
    server = FakeServer(tools=[TOOL], resources=[LISTED])
    content = {
        "uri": "ui://x/app",
        "mimeType": APP_MIME_TYPE,
        "text": "<html></html>",
        "_meta": {"ui": {"csp": {"resourceDomains": ["https://content.example"]}, "prefersBorder": False}},
    }
    server.on_request("resources/read", lambda request: read_answer(content))
    async with open_fake_client(server) as client:
        app = await fetch_app(client, "show")
    assert app.meta.csp == Csp(resource_domains=("https://content.example",))
    assert app.meta.prefers_border is False
    assert app.meta.domain == "listing.example"
    assert "connect-src 'none'" in app.csp
    assert "https://listing.example" not in app.csp


async def test_the_listings_metadata_and_mime_type_serve_when_the_content_has_none(autojump_clock) -> None:
    server = FakeServer(tools=[TOOL], resources=[LISTED])
    html = "<html>été</html>"
    blob = base64.b64encode(html.encode()).decode()
    server.on_request("resources/read", lambda request: read_answer({"uri": "ui://x/app", "blob": blob}))
    async with open_fake_client(server) as client:
        app = await fetch_app(client, "show")
    assert app.html == html
    assert app.mime_type == APP_MIME_TYPE
    assert "connect-src https://listing.example" in app.csp


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ({"uri": "ui://x/app", "mimeType": APP_MIME_TYPE, "blob": "%%%"}, "not base64 UTF-8 HTML"),
        (
            {"uri": "ui://x/app", "mimeType": APP_MIME_TYPE, "blob": base64.b64encode(b"\xff").decode()},
            "UTF-8",
        ),
        ({"uri": "ui://x/app", "mimeType": "text/plain", "text": "hi"}, "'text/plain', not"),
        ({"uri": "ui://x/app", "text": "hi"}, "None, not"),
    ],
)
async def test_content_that_cannot_be_rendered_is_refused(autojump_clock, content: dict, error: str) -> None:
    server = FakeServer(tools=[TOOL], resources=[])
    server.on_request("resources/read", lambda request: read_answer(content))
    async with open_fake_client(server) as client:
        with pytest.raises(UIResourceError, match=error) as caught:
            await fetch_app(client, "show")
    assert caught.value.uri == "ui://x/app"


async def test_a_read_without_content_is_refused(autojump_clock) -> None:
    server = FakeServer(tools=[TOOL], resources=[])
    server.on_request("resources/read", lambda request: {"contents": []})
    async with open_fake_client(server) as client:
        with pytest.raises(UIResourceError, match="returned no content"):
            await fetch_app(client, "show")


def test_only_ui_uris_are_apps() -> None:
    result = trio_mcp.types.ReadResourceResult(
        contents=[trio_mcp.types.TextResourceContents(uri="https://x", text="<p>", mime_type=APP_MIME_TYPE)]
    )
    with pytest.raises(UIResourceError, match="only ui:// resources are apps"):
        app_from_read("https://x", result)


async def test_a_view_call_refused_sends_nothing(autojump_clock) -> None:
    hidden = {"name": "secret", "inputSchema": {"type": "object"}, "_meta": {"ui": {"visibility": ["model"]}}}
    server = FakeServer(tools=[TOOL, hidden])
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(extensions=[apps_extension()])
    ) as client:
        view = AppServer(client)
        with pytest.raises(AppCallRefused):
            await view.call_tool("secret")
    assert not [request for request in server.requests if request.method == "tools/call"]


def test_the_extension_option() -> None:
    ext = apps_extension(["text/html;profile=mcp-app", "text/html;profile=mcp-app"])
    assert ext.identifier == "io.modelcontextprotocol/ui"
    assert ext.settings == {"mimeTypes": ["text/html;profile=mcp-app"]}
    with pytest.raises(ValueError, match="at least one"):
        apps_extension([])
    with pytest.raises(TypeError, match="single string"):
        apps_extension("text/html;profile=mcp-app")
    with pytest.raises(TypeError, match="non-empty strings"):
        apps_extension([""])
