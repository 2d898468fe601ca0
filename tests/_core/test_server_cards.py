"""The pure rules of server-card discovery: URLs, redirects, documents, catalogs, cards, remotes, comparison.

No I/O: every rule is a function over values. The properties (marker
``property``, fuzzed by ``fuzz/fuzz_server_cards.py``) feed any JSON value,
any bytes, any redirect and any variables to the readers: each gives its
value or a `ServerCardError`, never another exception.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from trio_mcp._core.server_cards import (
    CARD_MEDIA_TYPE,
    CARD_SCHEMA,
    MAX_REDIRECTS,
    Catalog,
    HeaderInput,
    Input,
    Remote,
    ServerCard,
    catalog_urls,
    check_media_type,
    check_url,
    compare_card,
    decode_document,
    follow_redirect,
    origin_of,
    parse_catalog,
    parse_server_card,
    pick_remote,
    resolve_remote,
)
from trio_mcp._errors import MCPError, ServerCardError

CATALOG = "https://example.com/.well-known/ai-catalog.json"


def card_json(**more):
    base = {
        "$schema": CARD_SCHEMA,
        "name": "com.example/weather",
        "version": "1.2.0",
        "description": "Forecasts.",
    }
    base.update(more)
    return base


def remote(**more):
    return {"type": "streamable-http", "url": "https://example.com/mcp", **more}


def fails(reason, call, *args, **kwargs):
    with pytest.raises(ServerCardError) as info:
        call(*args, **kwargs)
    assert info.value.reason == reason, str(info.value)
    assert isinstance(info.value, MCPError)
    return info.value


# --- where a domain's catalog is -----------------------------------------------------------


def test_a_domain_is_https_and_both_catalog_locations_are_tried_in_order():
    assert catalog_urls("example.com") == (
        "https://example.com/.well-known/ai-catalog.json",
        "https://example.com/.well-known/mcp/catalog.json",
    )
    assert catalog_urls("Example.COM:8443")[0] == "https://Example.COM:8443/.well-known/ai-catalog.json"
    assert catalog_urls("https://example.com/")[1] == "https://example.com/.well-known/mcp/catalog.json"


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8000", "http://localhost:1", "http://[::1]:9"])
def test_plain_http_is_allowed_for_loopback_only(origin):
    assert catalog_urls(origin)[0] == origin + "/.well-known/ai-catalog.json"


@pytest.mark.parametrize(
    "domain",
    [
        "",
        "http://example.com",
        "https://example.com/x",
        "example.com/path",
        "https://u:p@example.com",
        "https://example.com?q=1",
        "ftp://example.com",
        "https://example.com:99999",
    ],
)
def test_what_is_not_a_domain_is_the_callers_value_error(domain):
    with pytest.raises(ValueError):  # noqa: PT011 (the message is checked below for one)
        catalog_urls(domain)


def test_http_elsewhere_says_to_use_https():
    with pytest.raises(ValueError, match="use https"):
        catalog_urls("http://example.com")
    with pytest.raises(TypeError):
        catalog_urls(b"example.com")  # type: ignore[arg-type]


# --- URLs and redirects --------------------------------------------------------------------


def test_urls_are_resolved_against_their_base_and_checked():
    assert check_url("/cards/w", base=CATALOG) == "https://example.com/cards/w"
    assert check_url("https://example.com/a#frag") == "https://example.com/a"
    assert check_url("https://example.com") == "https://example.com/"
    fails("insecure", check_url, "http://example.com/card")
    fails("invalid", check_url, "file:///etc/passwd")
    fails("invalid", check_url, "https://exa mple.com/")
    fails("invalid", check_url, "https://example.com/\r\nX: y")
    fails("invalid", check_url, "https://exa\u00admple.com/")
    fails("invalid", check_url, "https:///nohost")
    fails("invalid", check_url, "https://user:pass@example.com/card")


def test_origins_make_the_default_port_explicit():
    assert origin_of("https://Example.com/x") == origin_of("https://example.com:443/y")
    assert origin_of("http://127.0.0.1/") != origin_of("https://127.0.0.1/")


def test_a_redirect_is_followed_to_the_same_origin_only():
    url = "https://example.com/a"
    assert follow_redirect(url, 301, "/b", [url]) == "https://example.com/b"
    error = fails("redirect", follow_redirect, url, 302, "https://evil.example/b", [url])
    assert error.status == 302
    assert "another origin" in str(error)
    fails("redirect", follow_redirect, url, 307, "http://example.com/b", [url])  # a downgrade, too
    fails("redirect", follow_redirect, url, 308, None, [url])
    fails("redirect", follow_redirect, url, 308, "javascript:alert(1)", [url])


def test_a_redirect_loop_and_a_long_chain_are_refused():
    url = "https://example.com/a"
    fails("loop", follow_redirect, "https://example.com/b", 302, "/a", [url, "https://example.com/b"])
    catalog = "https://example.com/catalog"
    fails("loop", follow_redirect, url, 302, "/catalog", [url], avoid=[catalog])
    assert follow_redirect(url, 302, "/c", [url], avoid=[catalog]) == "https://example.com/c"
    chain = [f"https://example.com/{index}" for index in range(MAX_REDIRECTS)]
    assert follow_redirect(chain[-1], 302, "/next", chain) == "https://example.com/next"
    chain.append(f"https://example.com/{MAX_REDIRECTS}")
    error = fails("redirect", follow_redirect, chain[-1], 302, "/next", chain)
    assert f"more than {MAX_REDIRECTS}" in str(error)


# --- responses -----------------------------------------------------------------------------


def test_the_media_type_must_be_one_accepted():
    check_media_type("application/mcp-server-card+json; charset=utf-8", (CARD_MEDIA_TYPE,), "https://h/", 200)
    check_media_type("Application/JSON", ("application/json",), "https://h/", 200)
    error = fails(
        "content_type", check_media_type, "text/html", (CARD_MEDIA_TYPE,), "https://h/c?token=s", 200
    )
    assert "text/html" in str(error)
    assert "token" not in str(error)
    assert error.url == "https://h/c"
    fails("content_type", check_media_type, None, (CARD_MEDIA_TYPE,), "https://h/", 200)


@pytest.mark.parametrize(
    "body",
    [b"\xff\xfe{}", b"{", b"<html>", b'{"a": NaN}', b"[" * 100_000 + b"]" * 100_000, b""],
)
def test_a_body_that_is_not_json_is_a_typed_error(body):
    fails("not_json", decode_document, body, "https://h/c")


def test_json_that_is_not_an_object_is_invalid():
    assert decode_document(b'{"a": 1}', "https://h/") == {"a": 1}
    error = fails("invalid", decode_document, b"[1, 2]", "https://h/")
    assert error.field == "$"


# --- cards ---------------------------------------------------------------------------------


def test_a_minimal_card_is_read():
    card = parse_server_card(card_json(), url="https://example.com/mcp/server-card")
    assert card == ServerCard(
        name="com.example/weather",
        version="1.2.0",
        description="Forecasts.",
        url="https://example.com/mcp/server-card",
    )
    assert card.short_name == "weather"
    assert card.tools is None


def test_a_card_with_a_templated_remote_is_read_whole():
    card = parse_server_card(
        card_json(
            title="Weather",
            websiteUrl="https://example.com",
            repository={"url": "https://github.com/example/weather", "source": "github", "id": "42"},
            icons=[
                {
                    "src": "https://example.com/i.png",
                    "mimeType": "image/png",
                    "sizes": ["48x48"],
                    "theme": "dark",
                }
            ],
            remotes=[
                {
                    "type": "streamable-http",
                    "url": "https://{tenant}.example.com/mcp",
                    "headers": [
                        {
                            "name": "Authorization",
                            "isRequired": True,
                            "isSecret": True,
                            "value": "Bearer {token}",
                            "variables": {"token": {"isRequired": True, "isSecret": True}},
                        }
                    ],
                    "variables": {"tenant": {"isRequired": True, "default": "default"}},
                    "supportedProtocolVersions": ["2025-11-25", "2026-07-28"],
                }
            ],
            _meta={"com.example/tier": "free"},
            vendorThing=[1],
        )
    )
    assert card.title == "Weather"
    assert card.repository is not None
    assert card.repository.id == "42"
    assert card.icons[0].theme == "dark"
    (only,) = card.remotes
    assert only.known
    assert only.variables["tenant"].default == "default"
    assert only.headers[0].name == "Authorization"
    assert only.headers[0].variables["token"].is_secret
    assert only.supported_protocol_versions == ("2025-11-25", "2026-07-28")
    assert card.meta == {"com.example/tier": "free"}
    assert card.extra == {"vendorThing": [1]}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": "no-slash-in-name"}, "$.name"),
        ({"name": "a/b/c"}, "$.name"),
        (
            {"$schema": "https://static.modelcontextprotocol.io/schemas/2025-11-25/server-card.schema.json"},
            "$.$schema",
        ),
        ({"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server.schema.json"}, "$.$schema"),
        ({"$schema": None}, "$.$schema"),
        ({"version": "^1.2.3"}, "$.version"),
        ({"version": "1.x"}, "$.version"),
        ({"version": 1}, "$.version"),
        ({"description": ""}, "$.description"),
        ({"description": "x" * 101}, "$.description"),
        ({"title": ""}, "$.title"),
        ({"remotes": {}}, "$.remotes"),
        ({"remotes": [remote(url="ftp://x")]}, "$.remotes[0].url"),
        ({"remotes": [remote(url="https://a b")]}, "$.remotes[0].url"),
        ({"remotes": [{"url": "https://x"}]}, "$.remotes[0].type"),
        ({"remotes": [remote(headers=[{"name": "Bad Name"}])]}, "$.remotes[0].headers[0].name"),
        ({"remotes": [remote(variables={"v": {"format": "date"}})]}, "$.remotes[0].variables.v.format"),
        (
            {"remotes": [remote(variables={"v": {"isRequired": "yes"}})]},
            "$.remotes[0].variables.v.isRequired",
        ),
        ({"remotes": [remote(supportedProtocolVersions=[1])]}, "$.remotes[0].supportedProtocolVersions[0]"),
        ({"remotes": [remote()] * 65}, "$.remotes"),
        ({"icons": [{"src": "x", "theme": "blue"}]}, "$.icons[0].theme"),
        ({"repository": {"url": "https://x"}}, "$.repository.source"),
        ({"_meta": []}, "$._meta"),
    ],
)
def test_a_card_broken_against_the_draft_names_the_field(change, field):
    document = card_json(**{key: value for key, value in change.items() if key != "$schema"})
    if "$schema" in change:
        if change["$schema"] is None:
            del document["$schema"]
        else:
            document["$schema"] = change["$schema"]
    error = fails("invalid", parse_server_card, document, url="https://example.com/card")
    assert error.field == field
    assert field in str(error)
    assert error.url == "https://example.com/card"


@pytest.mark.parametrize("missing", ["$schema", "name", "version", "description"])
def test_each_required_member_is_required(missing):
    document = card_json()
    del document[missing]
    error = fails("invalid", parse_server_card, document)
    assert error.field == f"$.{missing}"
    assert "missing" in str(error)


def test_an_unknown_transport_is_kept_and_refused_only_when_used():
    card = parse_server_card(card_json(remotes=[remote(type="websocket", url="https://example.com/ws")]))
    assert not card.remotes[0].known
    error = fails("transport", pick_remote, card)
    assert "'websocket'" in str(error)
    fails("transport", resolve_remote, card.remotes[0])


def test_tools_of_an_earlier_revision_are_read_when_well_formed():
    card = parse_server_card(card_json(tools=[{"name": "a"}, "b"]))
    assert card.tools == ("a", "b")
    assert parse_server_card(card_json(tools="dynamic")).tools is None
    assert parse_server_card(card_json(tools=[{"title": "x"}])).tools is None


# --- catalogs ------------------------------------------------------------------------------


def test_a_catalog_keeps_its_card_entries_and_counts_the_rest():
    catalog = parse_catalog(
        {
            "specVersion": "1.0",
            "entries": [
                {
                    "identifier": "urn:air:example.com:mcp:weather",
                    "type": CARD_MEDIA_TYPE,
                    "url": "/weather/card",
                },
                {
                    "identifier": "urn:air:example.com:a2a:agent",
                    "type": "application/a2a-agent-card+json",
                    "url": "x",
                },
                {
                    "identifier": "urn:air:example.com:mcp:inline",
                    "type": CARD_MEDIA_TYPE,
                    "data": card_json(),
                },
            ],
        },
        url=CATALOG,
    )
    assert catalog.spec_version == "1.0"
    assert catalog.skipped == 1
    assert [entry.identifier for entry in catalog.entries] == [
        "urn:air:example.com:mcp:weather",
        "urn:air:example.com:mcp:inline",
    ]
    assert catalog.entries[0].url == "https://example.com/weather/card"
    assert catalog.entries[1].card is not None
    assert catalog.entries[1].index == 2
    assert catalog.invalid == {}


def test_a_bad_entry_never_hides_the_good_ones():
    good = {"identifier": "g", "type": CARD_MEDIA_TYPE, "url": "/card"}
    catalog = parse_catalog(
        {
            "entries": [
                {"identifier": "off", "type": CARD_MEDIA_TYPE, "url": "https://elsewhere.example/card"},
                {"identifier": "self", "type": CARD_MEDIA_TYPE, "url": "/.well-known/ai-catalog.json"},
                {"identifier": "both", "type": CARD_MEDIA_TYPE, "url": "/c", "data": card_json()},
                {"identifier": "neither", "type": CARD_MEDIA_TYPE},
                {"identifier": "plain", "type": CARD_MEDIA_TYPE, "url": "http://example.com/card"},
                {"identifier": "broken", "type": CARD_MEDIA_TYPE, "data": {"name": "x"}},
                {"type": CARD_MEDIA_TYPE, "url": "/c"},
                "not an object",
                good,
            ]
        },
        url=CATALOG,
    )
    assert [entry.identifier for entry in catalog.entries] == ["g"]
    reasons = {index: error.reason for index, error in catalog.invalid.items()}
    assert reasons == {
        0: "off_origin",
        1: "loop",
        2: "invalid",
        3: "invalid",
        4: "insecure",
        5: "invalid",
        6: "invalid",
        7: "invalid",
    }
    assert catalog.invalid[0].field == "$.entries[0].url"
    assert "allow_other_origins" in str(catalog.invalid[0])


def test_an_entry_on_the_catalogs_origin_is_recognised_however_written():
    entries = [
        {"identifier": "port", "type": CARD_MEDIA_TYPE, "url": "https://EXAMPLE.com:443/card"},
        {"identifier": "relative", "type": CARD_MEDIA_TYPE, "url": "../card2"},
        {"identifier": "scheme-relative", "type": CARD_MEDIA_TYPE, "url": "//evil.example/card"},
        {"identifier": "userinfo", "type": CARD_MEDIA_TYPE, "url": "https://example.com@evil.example/card"},
    ]
    catalog = parse_catalog({"entries": entries}, url=CATALOG)
    assert [entry.identifier for entry in catalog.entries] == ["port", "relative"]
    assert catalog.entries[1].url == "https://example.com/card2"
    assert {index: error.reason for index, error in catalog.invalid.items()} == {
        2: "off_origin",
        3: "invalid",
    }


def test_other_origins_are_followed_when_allowed_but_never_insecurely():
    catalog = parse_catalog(
        {
            "entries": [
                {"identifier": "a", "type": CARD_MEDIA_TYPE, "url": "https://saas.example/acme/card"},
                {"identifier": "b", "type": CARD_MEDIA_TYPE, "url": "http://saas.example/acme/card"},
            ]
        },
        url=CATALOG,
        allow_other_origins=True,
    )
    assert [entry.url for entry in catalog.entries] == ["https://saas.example/acme/card"]
    assert catalog.invalid[1].reason == "insecure"


@pytest.mark.parametrize(
    "document", [{}, {"entries": {}}, {"entries": None}, {"specVersion": 1, "entries": []}, []]
)
def test_what_is_not_a_catalog_is_invalid(document):
    fails("invalid", parse_catalog, document, url=CATALOG)


def test_a_catalog_of_too_many_cards_is_refused_before_any_is_followed():
    entry = {"identifier": "x", "type": CARD_MEDIA_TYPE, "url": "/c"}
    assert len(parse_catalog({"entries": [entry] * 3}, url=CATALOG, max_cards=3).entries) == 3
    error = fails("too_many", parse_catalog, {"entries": [entry] * 4}, url=CATALOG, max_cards=3)
    assert "max_cards" in str(error)
    # Entries of other types do not count.
    other = {"identifier": "y", "type": "application/other+json", "url": "/o"}
    assert parse_catalog({"entries": [other] * 50}, url=CATALOG, max_cards=3).skipped == 50


def test_an_empty_catalog_is_a_catalog():
    assert parse_catalog({"specVersion": "draft", "entries": []}, url=CATALOG) == Catalog(
        url=CATALOG, spec_version="draft"
    )


# --- remotes -------------------------------------------------------------------------------


def templated():
    return parse_server_card(
        card_json(
            remotes=[
                {
                    "type": "streamable-http",
                    "url": "https://{tenant}.example.com/{region}/mcp",
                    "variables": {
                        "tenant": {"isRequired": True},
                        "region": {"default": "eu", "choices": ["eu", "us"]},
                    },
                    "headers": [
                        {
                            "name": "Authorization",
                            "isRequired": True,
                            "value": "Bearer {token}",
                            "variables": {"token": {"isRequired": True, "isSecret": True}},
                        },
                        {"name": "X-Client", "default": "trio"},
                        {"name": "X-Optional"},
                    ],
                }
            ]
        ),
        url="https://example.com/card",
    ).remotes[0]


def test_variables_fill_the_url_and_the_headers():
    made = resolve_remote(templated(), variables={"tenant": "acme", "token": "s3cret"})
    assert made.transport == "http"
    assert made.url == "https://acme.example.com/eu/mcp"
    assert dict(made.headers) == {"Authorization": "Bearer s3cret", "X-Client": "trio"}
    assert "s3cret" not in repr(made)


def test_given_headers_win_and_extra_ones_are_sent():
    made = resolve_remote(
        templated(),
        variables={"tenant": "acme", "region": "us"},
        headers={"authorization": "Bearer mine", "X-Extra": "1"},
    )
    assert made.url == "https://acme.example.com/us/mcp"
    assert dict(made.headers) == {"Authorization": "Bearer mine", "X-Client": "trio", "X-Extra": "1"}


def test_what_a_remote_lacks_is_a_typed_error_that_hides_values():
    error = fails("variable", resolve_remote, templated(), variables={"token": "s3cret"})
    assert "{tenant}" in str(error)
    fails("variable", resolve_remote, templated(), variables={"tenant": "a", "region": "mars", "token": "t"})
    error = fails("variable", resolve_remote, templated(), variables={"tenant": "acme"})
    assert "{token}" in str(error)
    error = fails(
        "header",
        resolve_remote,
        templated(),
        variables={"tenant": "a", "token": "t"},
        headers={"X-Client": "a\r\nb"},
    )
    assert "a\r\nb" not in str(error)
    fails(
        "header",
        resolve_remote,
        templated(),
        variables={"tenant": "a", "token": "t"},
        headers={"Bad Name": "v"},
    )
    fails("header", resolve_remote, templated(), variables={"tenant": "a", "token": "caf\u00e9"})
    fails(
        "insecure",
        resolve_remote,
        Remote(type="sse", url="{base}/sse"),
        variables={"base": "http://example.com"},
    )
    fails("invalid", resolve_remote, Remote(type="sse", url="{base}/sse"), variables={"base": "/relative"})


def test_a_required_header_without_a_value_is_named():
    bare = Remote(
        type="sse",
        url="https://example.com/sse",
        headers=(
            parse_server_card(card_json(remotes=[remote(headers=[{"name": "X-Key", "isRequired": True}])]))
            .remotes[0]
            .headers
        ),
    )
    error = fails("header", resolve_remote, bare)
    assert "'X-Key'" in str(error)
    made = resolve_remote(bare, headers={"X-Key": "k"})
    assert made.transport == "sse"


def test_streamable_http_is_preferred_over_sse():
    card = parse_server_card(
        card_json(remotes=[remote(type="sse", url="https://e.com/sse"), remote(type="x"), remote()])
    )
    assert pick_remote(card).url == "https://example.com/mcp"
    fails("no_remote", pick_remote, parse_server_card(card_json()))


# --- comparison ----------------------------------------------------------------------------


def test_a_card_that_agrees_has_no_mismatch():
    card = parse_server_card(
        card_json(title="Weather", remotes=[remote(supportedProtocolVersions=["2026-07-28"])])
    )
    for name in ("weather", "com.example/weather"):
        assert (
            compare_card(
                card,
                server_name=name,
                server_version="1.2.0",
                server_title="Weather",
                protocol_version="2026-07-28",
                remote=card.remotes[0],
            )
            == ()
        )


def test_each_disagreement_is_reported_with_both_sides():
    card = parse_server_card(
        card_json(
            title="Weather",
            tools=["forecast", "alerts"],
            remotes=[remote(supportedProtocolVersions=["2025-11-25"])],
        )
    )
    found = compare_card(
        card,
        server_name="climate",
        server_version="2.0.0",
        server_title="Climate",
        server_description="Something else.",
        protocol_version="2026-07-28",
        remote=card.remotes[0],
        tool_names=["forecast", "delete_everything"],
    )
    by_field = {mismatch.field: mismatch for mismatch in found}
    assert set(by_field) == {"name", "version", "title", "description", "protocol_version", "tools"}
    assert by_field["name"].card == "com.example/weather"
    assert by_field["name"].server == "climate"
    assert by_field["version"].server == "2.0.0"
    assert "not served: alerts" in by_field["tools"].message
    assert "not on the card: delete_everything" in by_field["tools"].message


def test_a_server_that_says_nothing_is_one_mismatch():
    card = parse_server_card(card_json())
    (only,) = compare_card(card, server_name=None, server_version=None)
    assert only.field == "server_info"


# --- properties (fuzzed by fuzz/fuzz_server_cards.py) -------------------------------------


def outcome(call, *args, **kwargs):
    """What a reader gives: its value, or the `ServerCardError` it raised (anything else escapes)."""
    try:
        return call(*args, **kwargs)
    except ServerCardError as exc:
        return exc


_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_urls = st.sampled_from(
    [
        "https://example.com/mcp",
        "https://{t}.example.com/x",
        "{base}/mcp",
        "http://127.0.0.1:1/m",
        "http://example.com/m",
        "ftp://x",
        "https://a b",
        "",
        "/rel",
    ]
) | st.text(max_size=20)
_inputs = st.fixed_dictionaries(
    {},
    optional={
        "isRequired": st.booleans() | _scalars,
        "isSecret": st.booleans(),
        "default": st.text(max_size=8) | _scalars,
        "value": st.sampled_from(["Bearer {t}", "{base}", "x"]) | _scalars,
        "choices": st.lists(st.text(max_size=4), max_size=3) | _scalars,
        "format": st.sampled_from(["string", "number", "date"]),
    },
)
_remotes = st.fixed_dictionaries(
    {"type": st.sampled_from(["streamable-http", "sse", "websocket"]) | _scalars, "url": _urls | _scalars},
    optional={
        "headers": st.lists(
            _inputs.flatmap(
                lambda base: st.fixed_dictionaries(
                    {"name": st.sampled_from(["Authorization", "X-K", "Bad Name", ""]) | _scalars},
                    optional={"variables": st.dictionaries(st.sampled_from(["t", "base"]), _inputs | _json)},
                ).map(lambda header: {**base, **header})
            ),
            max_size=3,
        )
        | _json,
        "variables": st.dictionaries(st.sampled_from(["t", "base", "x"]), _inputs | _json, max_size=3)
        | _json,
        "supportedProtocolVersions": st.lists(st.text(max_size=10), max_size=3) | _json,
    },
)
_cards = st.fixed_dictionaries(
    {
        "$schema": st.just(CARD_SCHEMA) | _scalars,
        "name": st.sampled_from(["com.example/weather", "x/y", "no-slash"]) | _scalars,
        "version": st.sampled_from(["1.0.0", "^1", "1.x"]) | _scalars,
        "description": st.text(max_size=120) | _scalars,
    },
    optional={
        "title": st.text(max_size=4) | _scalars,
        "remotes": st.lists(_remotes | _json, max_size=3) | _json,
        "icons": st.lists(st.fixed_dictionaries({"src": st.text(max_size=5)}) | _json, max_size=2) | _json,
        "repository": st.fixed_dictionaries({"url": st.text(max_size=5), "source": st.text(max_size=5)})
        | _json,
        "_meta": _json,
        "tools": _json,
    },
)
_entries = st.fixed_dictionaries(
    {
        "identifier": st.text(max_size=6) | _scalars,
        "type": st.just(CARD_MEDIA_TYPE) | st.text(max_size=8) | _scalars,
    },
    optional={
        "url": _urls | st.sampled_from(["/.well-known/ai-catalog.json", "https://o.example/c"]),
        "data": _cards | _json,
    },
)
_catalogs = st.fixed_dictionaries(
    {"entries": st.lists(_entries | _json, max_size=6) | _json},
    optional={"specVersion": st.text(max_size=4) | _scalars},
)


@pytest.mark.property
@settings(deadline=None)
@given(_cards | _json)
def test_any_card_document_gives_a_card_or_a_card_error(document):
    card = outcome(parse_server_card, document, url="https://example.com/card")
    if isinstance(card, ServerCardError):
        assert card.reason == "invalid"
        assert card.field is not None
        assert card.field.startswith("$")
        str(card)
        return
    assert isinstance(card, ServerCard)
    assert card.name.count("/") == 1
    assert 1 <= len(card.description) <= 100
    repr(card)


@pytest.mark.property
@settings(deadline=None)
@given(_catalogs | _json, st.booleans(), st.integers(min_value=1, max_value=5))
def test_any_catalog_document_gives_a_catalog_or_a_card_error(document, other_origins, max_cards):
    catalog = outcome(
        parse_catalog, document, url=CATALOG, allow_other_origins=other_origins, max_cards=max_cards
    )
    if isinstance(catalog, ServerCardError):
        assert catalog.reason in ("invalid", "too_many")
        str(catalog)
        return
    assert len(catalog.entries) + len(catalog.invalid) <= max_cards
    positions = [entry.index for entry in catalog.entries] + list(catalog.invalid)
    assert len(positions) == len(set(positions))
    for entry in catalog.entries:
        assert (entry.url is None) != (entry.card is None)
        if entry.url is not None:
            assert entry.url.startswith(("https://", "http://127.0.0.1"))
            assert entry.url != CATALOG
            if not other_origins:
                assert origin_of(entry.url) == origin_of(CATALOG)
    for error in catalog.invalid.values():
        assert isinstance(error, ServerCardError)


@pytest.mark.property
@settings(deadline=None)
@given(st.binary(max_size=200) | _json.map(lambda value: json.dumps(value).encode()))
def test_any_body_gives_an_object_or_a_card_error(body):
    value = outcome(decode_document, body, "https://example.com/c")
    if isinstance(value, ServerCardError):
        assert value.reason in ("not_json", "invalid")
        return
    assert isinstance(value, dict)


@pytest.mark.property
@settings(deadline=None)
@given(
    _remotes,
    st.dictionaries(st.sampled_from(["t", "base", "x"]), st.text(max_size=12), max_size=3),
    st.dictionaries(
        st.sampled_from(["Authorization", "X-K", "x-k", "Bad Name"]),
        st.text(max_size=6).map(lambda text: "\u00a7" + text),
        max_size=2,
    ),
)
def test_any_remote_gives_a_checked_url_and_headers_or_a_card_error(document, variables, headers):
    card = outcome(parse_server_card, card_json(remotes=[document]))
    if isinstance(card, ServerCardError):
        return
    made = outcome(resolve_remote, card.remotes[0], variables=variables, headers=headers)
    if isinstance(made, ServerCardError):
        assert made.reason in ("transport", "variable", "header", "insecure", "invalid")
        for value in headers.values():  # a header's value is never shown
            assert value not in str(made) or value in str(document) or value in str(variables)
        return
    assert made.url.startswith(("https://", "http://"))
    for name, value in made.headers.items():
        assert name
        assert not any(char in value for char in "\r\n\0")


_secrets = (st.text(max_size=8) | st.text("abc\r\n\0 ", max_size=8)).map(lambda text: "~~" + text)


@pytest.mark.property
@given(
    _secrets,
    st.dictionaries(
        st.sampled_from(["Authorization", "X-Key", "x-key", "Bad Name", "X-Other"]), _secrets, max_size=3
    ),
)
def test_no_value_given_for_a_remote_reaches_a_message(token, headers):
    secret_remote = Remote(
        type="streamable-http",
        url="https://example.com/mcp",
        headers=(
            HeaderInput(
                name="Authorization", value="Bearer {token}", variables={"token": Input(is_required=True)}
            ),
            HeaderInput(name="X-Key", is_required=True, is_secret=True),
        ),
    )
    made = outcome(resolve_remote, secret_remote, variables={"token": token}, headers=headers)
    if isinstance(made, ServerCardError):
        assert made.reason == "header"
        assert "~~" not in str(made)
        return
    assert made.headers["Authorization"] == headers.get(
        "Authorization", headers.get("authorization", f"Bearer {token}")
    )
    assert "~~" not in repr(made)


@pytest.mark.property
@settings(deadline=None)
@given(st.integers(min_value=300, max_value=399), st.none() | _urls | st.text(max_size=30), st.integers(0, 8))
def test_any_redirect_stays_on_its_origin_or_is_refused(status, location, hops):
    url = "https://example.com/a"
    visited = [url] + [f"https://example.com/{index}" for index in range(hops)]
    target = outcome(follow_redirect, url, status, location, visited)
    if isinstance(target, ServerCardError):
        assert target.reason in ("redirect", "loop")
        return
    assert origin_of(target) == origin_of(url)
    assert target not in visited
    assert len(visited) <= MAX_REDIRECTS + 1
