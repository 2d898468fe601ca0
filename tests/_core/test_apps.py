"""The host's rules of MCP Apps (`trio_mcp._core.apps`): tool UI, visibility, resource metadata, the CSP."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from trio_mcp._core.apps import (
    DEFAULT_POLICY,
    Csp,
    Permissions,
    ToolUi,
    UiResourceMeta,
    allow_attribute,
    app_callable,
    content_security_policy,
    is_app_mime_type,
    merge_ui_meta,
    model_visible,
    safe_source,
    tool_ui,
    visibility,
)
from trio_mcp.extensions.apps import UIResourceError


def test_a_tool_without_ui_has_none() -> None:
    assert tool_ui(None) is None
    assert tool_ui({}) is None
    assert tool_ui({"ui": {"visibility": ["app"]}}) is None


def test_the_nested_resource_uri_wins_over_the_deprecated_flat_key() -> None:
    ui = tool_ui({"ui": {"resourceUri": "ui://a/new"}, "ui/resourceUri": "ui://a/old"})
    assert ui == ToolUi("ui://a/new", ("model", "app"), deprecated_key=False)
    old = tool_ui({"ui/resourceUri": "ui://a/old", "ui": {"visibility": ["app"]}})
    assert old == ToolUi("ui://a/old", ("app",), deprecated_key=True)
    assert old.app_only
    assert not old.model_visible
    assert old.app_callable


@pytest.mark.parametrize("uri", ["https://example.com/app", "UI://x", 3, "", "file:///etc/passwd"])
def test_a_resource_that_is_not_a_ui_uri_is_refused(uri: object) -> None:
    with pytest.raises(UIResourceError, match="not a ui:// URI"):
        tool_ui({"ui": {"resourceUri": uri}})
    with pytest.raises(UIResourceError):
        tool_ui({"ui/resourceUri": uri})


@pytest.mark.parametrize(
    ("meta", "model", "app"),
    [
        (None, True, True),
        ({}, True, True),
        ({"ui": {}}, True, True),
        ({"ui": {"visibility": ["model", "app"]}}, True, True),
        ({"ui": {"visibility": ["app"]}}, False, True),
        ({"ui": {"visibility": ["model"]}}, True, False),
        ({"ui": {"visibility": []}}, False, False),
        ({"ui": {"visibility": ["app", "future"]}}, False, True),
        # Malformed visibility says nothing: the default.
        ({"ui": {"visibility": "app"}}, True, True),
        ({"ui": {"visibility": [1]}}, True, True),
        ({"ui": "app"}, True, True),
    ],
)
def test_visibility(meta: object, model: bool, app: bool) -> None:
    assert model_visible(meta) is model  # type: ignore[arg-type]
    assert app_callable(meta) is app  # type: ignore[arg-type]


def test_visibility_keeps_unknown_entries() -> None:
    assert visibility({"ui": {"visibility": ["app", "future"]}}) == ("app", "future")


def test_resource_metadata_is_typed() -> None:
    meta = UiResourceMeta.from_ui(
        {
            "csp": {"connectDomains": ["wss://a.example"], "resourceDomains": ["https://cdn.example"]},
            "permissions": {"camera": {}, "clipboardWrite": {}},
            "domain": "x.example-content.com",
            "prefersBorder": False,
        }
    )
    assert meta.csp == Csp(connect_domains=("wss://a.example",), resource_domains=("https://cdn.example",))
    assert meta.permissions == Permissions(camera=True, clipboard_write=True)
    assert meta.domain == "x.example-content.com"
    assert meta.prefers_border is False
    assert meta.problems == ()


def test_malformed_resource_metadata_is_left_out_and_named() -> None:
    meta = UiResourceMeta.from_ui(
        {
            "csp": {"connectDomains": "https://a", "frameDomains": [1]},
            "permissions": [],
            "domain": 3,
            "prefersBorder": "yes",
        }
    )
    assert meta.csp == Csp()
    assert meta.permissions is None
    assert meta.domain is None
    assert meta.prefers_border is None
    assert len(meta.problems) == 5
    assert UiResourceMeta.from_ui({"csp": "none"}).problems == ("csp is not an object",)
    assert UiResourceMeta.from_ui(None) == UiResourceMeta()


def test_the_contents_metadata_wins_over_the_listings() -> None:
    listing = {
        "ui": {"csp": {"connectDomains": ["https://old.example"]}, "prefersBorder": True, "domain": "d"}
    }
    content = {"ui": {"csp": {"resourceDomains": ["https://new.example"]}, "prefersBorder": False}}
    merged = merge_ui_meta(listing, content)
    assert merged == {
        "csp": {"resourceDomains": ["https://new.example"]},
        "prefersBorder": False,
        "domain": "d",
    }
    assert merge_ui_meta(None, content) == content["ui"]
    assert merge_ui_meta(listing, None) == listing["ui"]
    assert merge_ui_meta({"ui": 3}, {"other": 1}) == {}


@pytest.mark.parametrize(
    "mime",
    [
        "text/html;profile=mcp-app",
        "text/html; profile=mcp-app",
        "TEXT/HTML;Profile=MCP-App",
        'text/html;profile="mcp-app"',
    ],
)
def test_the_app_mime_type(mime: str) -> None:
    assert is_app_mime_type(mime)


@pytest.mark.parametrize(
    "mime", ["text/html", "text/html;profile=other", "text/plain;profile=mcp-app", None, 3]
)
def test_other_mime_types(mime: object) -> None:
    assert not is_app_mime_type(mime)


def test_no_declared_csp_gives_the_restrictive_default() -> None:
    policy, refused = content_security_policy(None)
    assert policy == DEFAULT_POLICY
    assert refused == ()
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["connect-src"] == "'none'"
    assert directives["frame-src"] == "'none'"
    assert directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'self'"


def test_declared_origins_go_only_where_they_were_declared() -> None:
    policy, refused = content_security_policy(
        Csp(
            connect_domains=("wss://rt.example.com",),
            resource_domains=("https://*.cdn.example.com", "https://cdn.example.com:8443/static/"),
            frame_domains=("https://www.youtube.com",),
            base_uri_domains=("https://base.example.com",),
        )
    )
    assert refused == ()
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["connect-src"] == "wss://rt.example.com"
    statics = "https://*.cdn.example.com https://cdn.example.com:8443/static/"
    assert directives["script-src"] == f"'self' 'unsafe-inline' {statics}"
    assert directives["img-src"] == f"'self' data: {statics}"
    assert directives["font-src"] == f"'self' {statics}"
    assert directives["frame-src"] == "https://www.youtube.com"
    assert directives["base-uri"] == "https://base.example.com"
    assert directives["default-src"] == "'none'"
    assert directives["object-src"] == "'none'"


@pytest.mark.parametrize(
    "source",
    [
        "*",
        "https:",
        "https://*",
        "'unsafe-eval'",
        "data:",
        "https://a.example; script-src *",
        "https://a.example,https://b",
        "https://a.example 'unsafe-eval'",
        "javascript://x",
        "https://exa mple.com",
        "https://a.example/'",
        "",
    ],
)
def test_a_source_that_could_loosen_the_policy_is_refused(source: str) -> None:
    assert not safe_source(source)
    policy, refused = content_security_policy(Csp(connect_domains=(source,), resource_domains=(source,)))
    assert refused == (source,)
    assert policy == content_security_policy(Csp())[0]


@pytest.mark.property
@given(st.lists(st.text(max_size=40), max_size=5), st.lists(st.text(max_size=40), max_size=5))
def test_declared_sources_never_add_a_directive_nor_a_keyword(
    connect: list[str], resources: list[str]
) -> None:
    policy, refused = content_security_policy(
        Csp(connect_domains=tuple(connect), resource_domains=tuple(resources))
    )
    parts = [part.strip() for part in policy.split(";")]
    assert [part.split(" ", 1)[0] for part in parts] == [
        "default-src",
        "script-src",
        "style-src",
        "img-src",
        "font-src",
        "media-src",
        "connect-src",
        "frame-src",
        "object-src",
        "base-uri",
    ]
    allowed_keywords = {"'self'", "'unsafe-inline'", "'none'", "data:"}
    for part in parts:
        for value in part.split()[1:]:
            assert value in allowed_keywords or safe_source(value)
            assert value in allowed_keywords or value in connect or value in resources
    assert set(refused) <= set(connect) | set(resources)


def test_the_allow_attribute() -> None:
    assert allow_attribute(None) == ""
    assert allow_attribute(Permissions()) == ""
    assert allow_attribute(Permissions(camera=True, clipboard_write=True)) == "camera; clipboard-write"
    everything = Permissions(camera=True, microphone=True, geolocation=True, clipboard_write=True)
    assert allow_attribute(everything) == "camera; microphone; geolocation; clipboard-write"
