"""The pure decisions of MCP authorization (trio_mcp._core.oauth), without a server.

Examples pin the spec's orders and refusals; Hypothesis properties (marked
``property``, fuzzed by fuzz/fuzz_oauth.py) check that nothing a server
sends makes the core raise anything but `AuthorizationFailed`, that no
secret reaches a message, and the algebra of step-up scopes.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import re

import attrs
import pytest
from hypothesis import given, strategies as st

from trio_mcp._core import oauth
from trio_mcp._core.oauth import AuthorizationFailed, AuthServer, ProtectedResource

ISSUER = "https://auth.example.com"


def server(**fields) -> AuthServer:
    base = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
    }
    return AuthServer(**{**base, **fields})


def metadata(**fields) -> bytes:
    doc = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "code_challenge_methods_supported": ["S256"],
    }
    doc.update(fields)
    return json.dumps({k: v for k, v in doc.items() if v is not None}).encode()


# ------------------------------------------------------------------ discovery order


def test_prm_urls_challenge_then_path_then_root():
    assert oauth.prm_urls("https://mcp.example.com/v1/mcp/", "https://mcp.example.com/meta.json") == [
        "https://mcp.example.com/meta.json",
        "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]


def test_prm_urls_of_a_root_server_are_the_root_one_alone():
    assert oauth.prm_urls("https://mcp.example.com/", None) == [
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    ]


def test_server_metadata_urls_of_an_issuer_with_a_path():
    assert oauth.server_metadata_urls("https://a.example/t1") == [
        "https://a.example/.well-known/oauth-authorization-server/t1",
        "https://a.example/.well-known/openid-configuration/t1",
        "https://a.example/t1/.well-known/openid-configuration",
    ]


def test_server_metadata_urls_without_a_path():
    assert oauth.server_metadata_urls("https://a.example") == [
        "https://a.example/.well-known/oauth-authorization-server",
        "https://a.example/.well-known/openid-configuration",
    ]


def test_server_metadata_urls_before_2025_11_25_are_rfc_8414_only():
    assert oauth.server_metadata_urls("https://a.example/t1", "2025-06-18") == [
        "https://a.example/.well-known/oauth-authorization-server/t1"
    ]


def test_legacy_discovery_drops_the_path():
    assert (
        oauth.legacy_metadata_url("https://mcp.example.com/v1/mcp")
        == "https://mcp.example.com/.well-known/oauth-authorization-server"
    )
    fallback = oauth.fallback_server("https://mcp.example.com/v1/mcp")
    assert fallback.issuer == "https://mcp.example.com"
    assert (fallback.authorization_endpoint, fallback.token_endpoint, fallback.registration_endpoint) == (
        "https://mcp.example.com/authorize",
        "https://mcp.example.com/token",
        "https://mcp.example.com/register",
    )


def test_fallback_refuses_plain_http_off_loopback():
    with pytest.raises(AuthorizationFailed) as info:
        oauth.fallback_server("http://mcp.example.com/mcp")
    assert info.value.reason == "insecure_endpoint"


@pytest.mark.parametrize(
    ("url", "secure"),
    [
        ("https://as.example.com/token", True),
        ("http://127.0.0.1:8000/token", True),
        ("http://[::1]:8000/token", True),
        ("http://localhost:3000/token", True),
        ("http://127.5.6.7/token", True),
        ("http://as.example.com/token", False),
        ("http://10.0.0.1/token", False),
        ("ftp://as.example.com/token", False),
        ("javascript:alert(1)", False),
        ("https:///token", False),
    ],
)
def test_secure_endpoint(url, secure):
    assert oauth.secure_endpoint(url) is secure


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("HTTPS://MCP.Example.COM/Mcp/", "https://mcp.example.com/Mcp"),
        ("https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com", "https://mcp.example.com"),
        ("https://user:pw@mcp.example.com:8443/x", "https://mcp.example.com:8443/x"),
    ],
)
def test_canonical_resource(url, canonical):
    assert oauth.canonical_resource(url) == canonical


@pytest.mark.property
@given(
    st.from_regex(
        r"https?://[a-zA-Z0-9.-]{1,20}(:[0-9]{1,5})?(/[a-zA-Z0-9._~-]{0,8}){0,3}/?(#.*)?", fullmatch=True
    )
)
def test_canonical_resource_is_idempotent_and_clean(url):
    once = oauth.canonical_resource(url)
    assert oauth.canonical_resource(once) == once
    assert "#" not in once
    assert not once.endswith("/")


# ------------------------------------------------------------------ metadata checks


def test_resource_metadata_for_another_origin_is_refused():
    body = json.dumps(
        {"resource": "https://evil.example.com/mcp", "authorization_servers": [ISSUER]}
    ).encode()
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_resource_metadata(body, "https://mcp.example.com/mcp")
    assert info.value.reason == "resource_mismatch"


def test_resource_metadata_for_a_sibling_path_is_refused():
    body = json.dumps(
        {"resource": "https://mcp.example.com/other", "authorization_servers": [ISSUER]}
    ).encode()
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_resource_metadata(body, "https://mcp.example.com/mcp")
    assert info.value.reason == "resource_mismatch"


def test_resource_metadata_of_the_origin_covers_the_server_and_is_kept_verbatim():
    body = json.dumps(
        {
            "resource": "https://mcp.example.com",
            "authorization_servers": [ISSUER],
            "scopes_supported": ["a", "b"],
        }
    ).encode()
    prm = oauth.parse_resource_metadata(body, "https://mcp.example.com/mcp")
    assert prm == ProtectedResource("https://mcp.example.com", (ISSUER,), ("a", "b"))


@pytest.mark.parametrize(
    "doc",
    [
        {"resource": "https://mcp.example.com/mcp", "authorization_servers": []},
        {"resource": "https://mcp.example.com/mcp"},
        {"authorization_servers": [ISSUER]},
        [1, 2],
    ],
)
def test_resource_metadata_without_what_it_needs_is_refused(doc):
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_resource_metadata(json.dumps(doc).encode(), "https://mcp.example.com/mcp")
    assert info.value.reason == "metadata"


@pytest.mark.parametrize(
    "given_issuer", [ISSUER + "/", "https://AUTH.example.com", "https://attacker.example", None]
)
def test_server_metadata_issuer_must_be_identical(given_issuer):
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_server_metadata(metadata(issuer=given_issuer), ISSUER)
    assert info.value.reason == "issuer_mismatch"


@pytest.mark.parametrize("methods", [None, ["plain"], []])
def test_server_without_s256_is_refused(methods):
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_server_metadata(metadata(code_challenge_methods_supported=methods), ISSUER)
    assert info.value.reason == "pkce"


def test_server_without_pkce_is_accepted_when_not_required():
    parsed = oauth.parse_server_metadata(
        metadata(code_challenge_methods_supported=None), ISSUER, require_pkce=False
    )
    assert parsed.code_challenge_methods_supported is None


def test_server_with_a_plain_http_endpoint_off_loopback_is_refused():
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_server_metadata(metadata(token_endpoint="http://auth.example.com/token"), ISSUER)
    assert info.value.reason == "insecure_endpoint"


def test_server_metadata_is_read():
    parsed = oauth.parse_server_metadata(
        metadata(
            registration_endpoint=f"{ISSUER}/register",
            scopes_supported=["a", "offline_access"],
            grant_types_supported=["authorization_code", "refresh_token"],
            authorization_response_iss_parameter_supported=True,
            client_id_metadata_document_supported=True,
            dpop_signing_alg_values_supported=["ES256"],
        ),
        ISSUER,
    )
    assert parsed.iss_parameter_supported
    assert parsed.cimd_supported
    assert parsed.dpop_algs == ("ES256",)
    assert parsed.registration_endpoint == f"{ISSUER}/register"


@pytest.mark.property
@given(
    st.binary(max_size=300)
    | st.recursive(
        st.none() | st.booleans() | st.text(max_size=10),
        lambda c: (
            st.lists(c)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "issuer",
                        "token_endpoint",
                        "resource",
                        "authorization_servers",
                        "code_challenge_methods_supported",
                    ]
                ),
                c,
            )
        ),
        max_leaves=8,
    ).map(lambda v: json.dumps(v).encode())
)
def test_metadata_parsers_raise_only_authorization_failed(body):
    for parse in (
        lambda: oauth.parse_server_metadata(body, ISSUER),
        lambda: oauth.parse_resource_metadata(body, "https://mcp.example.com/mcp"),
        lambda: oauth.legacy_server(body, "https://mcp.example.com/mcp"),
    ):
        with contextlib.suppress(AuthorizationFailed):
            parse()


# ------------------------------------------------------------------ scope


def test_initial_scope_prefers_the_challenge_then_every_supported_scope():
    prm = ProtectedResource("r", (ISSUER,), ("mcp:basic", "mcp:read"))
    assert oauth.initial_scope("mcp:write", prm) == "mcp:write"
    assert oauth.initial_scope(None, prm) == "mcp:basic mcp:read"
    assert oauth.initial_scope("  ", prm) == "mcp:basic mcp:read"
    assert oauth.initial_scope(None, ProtectedResource("r", (ISSUER,))) is None
    assert oauth.initial_scope(None, None) is None


def test_offline_access_only_when_the_server_offers_it_and_refresh():
    both = server(
        scopes_supported=("a", "offline_access"),
        grant_types_supported=("authorization_code", "refresh_token"),
    )
    assert oauth.with_offline_access("a", both) == "a offline_access"
    assert oauth.with_offline_access(None, both) == "offline_access"
    no_refresh = server(
        scopes_supported=("a", "offline_access"), grant_types_supported=("authorization_code",)
    )
    assert oauth.with_offline_access("a", no_refresh) == "a"
    not_listed = server(
        scopes_supported=("a",), grant_types_supported=("authorization_code", "refresh_token")
    )
    assert oauth.with_offline_access("a", not_listed) == "a"
    assert oauth.with_offline_access("a", server()) == "a"


SCOPES = st.lists(st.sampled_from(["a", "b", "c", "d", "offline_access"]), max_size=4).map(
    lambda s: " ".join(s) or None
)


@pytest.mark.property
@given(SCOPES, SCOPES, SCOPES)
def test_step_up_is_the_union_or_nothing(requested, granted, challenge):
    result = oauth.step_up_scope(requested, granted, challenge)
    words = lambda s: set(s.split()) if s else set()  # noqa: E731
    before = words(requested) | words(granted)
    if words(challenge) <= before:
        assert result is None
    else:
        assert result is not None
        assert words(result) == before | words(challenge)
        assert len(result.split()) == len(set(result.split()))


def test_step_up_of_the_harness():
    assert oauth.step_up_scope("mcp:basic", "mcp:basic", "mcp:write") == "mcp:basic mcp:write"
    assert oauth.step_up_scope("mcp:basic mcp:admin", None, "mcp:admin") is None


# ------------------------------------------------------------------ registration and client auth


def test_registration_body_is_a_native_client_with_refresh():
    body = oauth.registration_body(client_name="x", redirect_uris=["http://127.0.0.1:1/cb"], server=server())
    assert body["application_type"] == "native"
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert body["response_types"] == ["code"]
    assert body["token_endpoint_auth_method"] == "none"


def test_registration_obeys_the_server():
    asked = {"token_endpoint_auth_method": "client_secret_post", "redirect_uris": ["http://127.0.0.1/cb"]}
    reply = json.dumps(
        {
            "client_id": "id",
            "client_secret": "sec",
            "token_endpoint_auth_method": "client_secret_basic",
            "x": 1,
        }
    ).encode()
    reg = oauth.parse_registration(201, reply, asked)
    assert (reg.client_id, reg.client_secret, reg.token_endpoint_auth_method) == (
        "id",
        "sec",
        "client_secret_basic",
    )
    assert reg.redirect_uris == ("http://127.0.0.1/cb",)
    assert reg.extra["x"] == 1
    assert "s3cr3t-v4lue" not in repr(reg)
    secretless = oauth.parse_registration(201, b'{"client_id": "id"}', asked)
    assert secretless.token_endpoint_auth_method == "none"
    with_secret = oauth.parse_registration(201, b'{"client_id": "id", "client_secret": "s"}', {})
    assert with_secret.token_endpoint_auth_method == "client_secret_basic"


@pytest.mark.parametrize(
    ("status", "body"), [(400, b'{"error": "invalid_client_metadata"}'), (201, b"{}"), (500, b"<html>")]
)
def test_registration_refusals(status, body):
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_registration(status, body, {})
    assert info.value.reason == "registration"


def test_client_secret_basic_encodes_then_puts_nothing_in_the_body():
    headers, form = oauth.client_auth("client_secret_basic", "id:1 é", "p@ss/w+rd")
    assert form == {}
    encoded = base64.b64decode(headers["authorization"].removeprefix("Basic ")).decode()
    assert encoded == "id%3A1%20%C3%A9:p%40ss%2Fw%2Brd"


def test_other_client_auth_methods():
    assert oauth.client_auth("client_secret_post", "id", "s") == (
        {},
        {"client_id": "id", "client_secret": "s"},
    )
    assert oauth.client_auth("none", "id", None) == ({}, {"client_id": "id"})
    assert oauth.client_auth("private_key_jwt", "id", None) == ({}, {})
    with pytest.raises(AuthorizationFailed):
        oauth.client_auth("client_secret_basic", "id", None)


def test_choose_auth_method():
    s = server(token_endpoint_auth_methods_supported=("client_secret_post", "private_key_jwt"))
    assert oauth.choose_auth_method(s, has_secret=True, has_key=False) == "client_secret_post"
    assert oauth.choose_auth_method(s, has_secret=True, has_key=True) == "private_key_jwt"
    assert oauth.choose_auth_method(s, has_secret=False, has_key=False) == "none"
    assert oauth.choose_auth_method(s, has_secret=True, has_key=False, registered="client_secret_basic") == (
        "client_secret_basic"
    )


# ------------------------------------------------------------------ authorization


def test_pkce_challenge_of_rfc_7636_appendix_b():
    assert (
        oauth.pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


@pytest.mark.property
@given(st.binary(min_size=32, max_size=128))
def test_pkce_verifier_has_the_rfc_form_and_all_the_entropy(entropy):
    verifier = oauth.pkce_verifier(entropy)
    assert 43 <= len(verifier) <= 128
    assert re.fullmatch(r"[A-Za-z0-9\-._~]+", verifier)
    if len(entropy) <= 96:
        assert base64.urlsafe_b64decode(verifier + "=" * (-len(verifier) % 4)) == entropy


def test_pkce_verifier_refuses_too_little_entropy():
    with pytest.raises(ValueError, match="32"):
        oauth.pkce_verifier(b"x" * 31)


def test_authorization_params():
    params = oauth.authorization_params(
        client_id="c",
        redirect_uri="http://127.0.0.1/cb",
        state="s",
        verifier="v" * 43,
        resource="https://r",
        scope="a offline_access",
    )
    assert params["code_challenge_method"] == "S256"
    assert params["code_challenge"] == oauth.pkce_challenge("v" * 43)
    assert params["resource"] == "https://r"
    assert params["prompt"] == "consent"
    assert "code_verifier" not in params
    no_scope = oauth.authorization_params(
        client_id="c", redirect_uri="r", state="s", verifier="v" * 43, resource="https://r", scope=None
    )
    assert "scope" not in no_scope
    assert "prompt" not in no_scope
    url = oauth.authorization_url("https://as/authorize?tenant=1", params)
    assert url.startswith("https://as/authorize?tenant=1&response_type=code")


STATE = "the-state-value-0123456789"


def callback(**params):
    return oauth.check_callback(params, state=STATE, issuer=ISSUER, iss_supported=True)


def test_callback_gives_the_code():
    assert callback(code="abc", state=STATE, iss=ISSUER) == "abc"
    assert (
        oauth.check_callback({"code": "abc", "state": STATE}, state=STATE, issuer=ISSUER, iss_supported=False)
        == "abc"
    )


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"code": "abc"}, "state_mismatch"),
        ({"code": "abc", "state": "0ther-st4te", "iss": ISSUER}, "state_mismatch"),
        ({"code": "abc", "state": STATE + "x", "iss": ISSUER}, "state_mismatch"),
        ({"code": "abc", "state": STATE, "iss": ISSUER + "/"}, "iss_mismatch"),
        ({"code": "abc", "state": STATE, "iss": "https://evil.example.com"}, "iss_mismatch"),
        ({"code": "abc", "state": STATE}, "iss_mismatch"),
        ({"error": "access_denied", "state": STATE, "iss": ISSUER}, "authorization_denied"),
        ({"state": STATE, "iss": ISSUER}, "authorization_denied"),
        # A wrong state hides whatever else the redirect says.
        ({"error": "access_denied", "error_description": "SECRET", "state": "x"}, "state_mismatch"),
    ],
)
def test_callback_refusals(params, reason):
    with pytest.raises(AuthorizationFailed) as info:
        callback(**{k: v.replace("abc", "c0de-v4lue") for k, v in params.items()})
    assert info.value.reason == reason
    for secret in (STATE, "c0de-v4lue", "SECRET", "0ther-st4te"):
        assert secret not in str(info.value)


def test_unadvertised_wrong_iss_is_refused_too():
    with pytest.raises(AuthorizationFailed) as info:
        oauth.check_callback(
            {"code": "c", "state": STATE, "iss": "https://x"}, state=STATE, issuer=ISSUER, iss_supported=False
        )
    assert info.value.reason == "iss_mismatch"


# ------------------------------------------------------------------ tokens


def test_token_response_expiry_is_absolute():
    body = json.dumps(
        {"access_token": "AT", "token_type": "bearer", "expires_in": 3600, "refresh_token": "RT"}
    ).encode()
    granted = oauth.parse_token_response(200, body, now=1000.0, requested_scope="a b")
    assert granted.expires_at == 4600.0
    assert granted.token_type == "Bearer"
    assert granted.scope == "a b"  # omitted: as requested
    assert "AT" not in repr(granted)
    assert "RT" not in repr(granted)


def test_token_response_without_expiry_and_with_scope():
    body = b'{"access_token": "AT", "token_type": "DPoP", "scope": "x"}'
    granted = oauth.parse_token_response(200, body, now=5.0, requested_scope="a", proof_sent=True)
    assert (granted.expires_at, granted.scope, granted.token_type, granted.refresh_token) == (
        None,
        "x",
        "DPoP",
        None,
    )


def test_a_dpop_token_to_a_request_without_a_proof_is_refused():
    body = b'{"access_token": "AT", "token_type": "DPoP", "expires_in": 60}'
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_token_response(200, body, now=5.0, requested_scope=None)
    assert info.value.reason == "token"
    assert "AT" not in str(info.value)
    # Bearer to a request with a proof: the server declined to bind it; usable as Bearer.
    body = b'{"access_token": "AT", "token_type": "Bearer"}'
    assert (
        oauth.parse_token_response(200, body, now=5.0, requested_scope=None, proof_sent=True).token_type
        == "Bearer"
    )


@pytest.mark.parametrize(
    "expires_in",
    ["NaN", "Infinity", "-Infinity", "-5", "true", '"12x"', '"99999999999999999999"', "null", '"NaN"'],
)
def test_expires_in_that_is_not_a_lifetime_is_treated_as_absent(expires_in):
    body = ('{"access_token": "AT", "token_type": "Bearer", "expires_in": ' + expires_in + "}").encode()
    granted = oauth.parse_token_response(200, body, now=5.0, requested_scope=None)
    assert granted.expires_at is None
    tokens = oauth.Tokens("AT", expires_at=granted.expires_at, issued_at=granted.issued_at)
    json.dumps(attrs.asdict(tokens), allow_nan=False)  # never a bare NaN


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(10**12), 10**12))
def test_kept_times_are_finite_or_none(value):
    tokens = oauth.Tokens("AT", expires_at=value, issued_at=value)
    for kept in (tokens.expires_at, tokens.issued_at):
        assert kept is None or math.isfinite(kept)


@pytest.mark.parametrize(
    ("status", "body", "reason", "error"),
    [
        (
            400,
            b'{"error": "invalid_grant", "error_description": "code reused"}',
            "invalid_grant",
            "invalid_grant",
        ),
        (401, b'{"error": "invalid_client"}', "token", "invalid_client"),
        (500, b"<html>oops</html>", "token", None),
        (200, b"not json", "token", None),
        (200, b'{"token_type": "Bearer"}', "token", None),
        (200, b'{"access_token": "AT", "token_type": "mac"}', "token", None),
        (200, b'{"access_token": "AT"}', "token", None),
    ],
)
def test_token_refusals(status, body, reason, error):
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_token_response(status, body, now=0.0, requested_scope=None)
    assert info.value.reason == reason
    assert info.value.error == error
    assert "AT" not in str(info.value)


@pytest.mark.property
@given(st.integers(100, 599), st.binary(max_size=200), st.floats(0, 2e9))
def test_token_parser_raises_only_authorization_failed(status, body, now):
    try:
        granted = oauth.parse_token_response(status, body, now=now, requested_scope=None)
    except AuthorizationFailed:
        return
    assert granted.expires_at is None or now <= granted.expires_at <= now + oauth.MAX_EXPIRES_IN


@pytest.mark.property
# Marked at both ends, so that a secret is never a word the message says anyway ("endpoint").
@given(
    st.text(min_size=8, max_size=40, alphabet="abcdefghijklmnopqrstuvwxyz0123456789").map(
        lambda s: f"T0K{s}X9Z"
    )
)
def test_token_values_never_reach_an_error_message(secret):
    body = json.dumps(
        {"error": "invalid_request", "access_token": secret, "token_type": "weird-" + secret}
    ).encode()
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_token_response(400, body, now=0.0, requested_scope=None)
    assert secret not in str(info.value)
    body = json.dumps({"access_token": secret, "token_type": "weird"}).encode()
    with pytest.raises(AuthorizationFailed) as info:
        oauth.parse_token_response(200, body, now=0.0, requested_scope=None)
    assert secret not in str(info.value)


def test_refresh_keeps_the_old_refresh_token_unless_rotated():
    new = oauth.parse_token_response(
        200, b'{"access_token": "A2", "token_type": "Bearer"}', now=0, requested_scope=None
    )
    assert oauth.refreshed(new, "R1", "a").refresh_token == "R1"
    assert oauth.refreshed(new, "R1", "a").scope == "a"
    rotated = oauth.parse_token_response(
        200,
        b'{"access_token": "A2", "token_type": "Bearer", "refresh_token": "R2"}',
        now=0,
        requested_scope=None,
    )
    assert oauth.refreshed(rotated, "R1", None).refresh_token == "R2"


def test_needs_refresh():
    assert not oauth.needs_refresh(None, 10**10)
    assert oauth.needs_refresh(1000.0, 1000.0 - oauth.REFRESH_MARGIN)
    assert not oauth.needs_refresh(1000.0, 1000.0 - oauth.REFRESH_MARGIN - 1)


def test_dpop_claims():
    claims = oauth.dpop_claims(
        method="post", url="https://mcp/x?q=1#f", now=100.9, jti="j", access_token="AT", nonce="n"
    )
    assert claims["htu"] == "https://mcp/x"
    assert claims["htm"] == "POST"
    assert claims["iat"] == 100
    assert claims["nonce"] == "n"
    digest = __import__("hashlib").sha256(b"AT").digest()
    assert claims["ath"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    bare = oauth.dpop_claims(method="GET", url="https://mcp/x", now=0, jti="j", access_token=None, nonce=None)
    assert "ath" not in bare
    assert "nonce" not in bare


def test_assertion_claims():
    claims = oauth.assertion_claims(client_id="c", audience=ISSUER, now=100.0, jti="j")
    assert claims["iss"] == claims["sub"] == "c"
    assert claims["aud"] == ISSUER
    assert claims["exp"] > claims["iat"]
