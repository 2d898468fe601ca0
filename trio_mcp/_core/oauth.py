"""The decisions of MCP authorization (OAuth 2.1), without I/O, clock or randomness.

What the client of the MCP authorization spec decides from strings, JSON
documents and a given time lives here, so that it can be tested without a
server:

* where to look: the protected resource metadata URLs (RFC 9728) and the
  authorization server metadata URLs (RFC 8414, OpenID Connect Discovery)
  in the spec's order for each revision, and the 2025-03-26 fallback;
* what to believe: `parse_resource_metadata` (the ``resource`` must be the
  server's, ``authorization_servers`` non-empty), `parse_server_metadata`
  (``issuer`` identical to the one asked for, https endpoints, PKCE S256),
  `check_callback` (``state`` in constant time, then the RFC 9207 ``iss``);
* what to ask for: `initial_scope`, `with_offline_access`, `step_up_scope`,
  `choose_auth_method`, the form of each request (`authorization_params`,
  `registration_body`, `client_auth`);
* what came back: `parse_registration`, `parse_token_response` (an absolute
  expiry), `refreshed` (a refresh keeps the old refresh token when no new
  one comes), `refresh_due` (a margin that scales with the token's lifetime);
* what to sign: `dpop_claims`, `assertion_claims`.

The order of it all, a login as a flow of steps over these rules, is
`trio_mcp._core.oauth_flow`.

Every refusal is an `AuthorizationFailed`, whose message never holds a
token, a code, a secret or a ``state``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final, TypeAlias
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import attrs

from .._errors import AuthorizationFailed

__all__ = [
    "AUTH_METHODS",
    "REVISIONS",
    "AuthServer",
    "AuthorizationFailed",
    "ClientInfo",
    "ProtectedResource",
    "Tokens",
    "authorization_params",
    "canonical_resource",
    "check_callback",
    "choose_auth_method",
    "client_auth",
    "fallback_server",
    "initial_scope",
    "join_scopes",
    "legacy_metadata_url",
    "legacy_server",
    "needs_refresh",
    "parse_registration",
    "parse_resource_metadata",
    "parse_server_metadata",
    "parse_token_error",
    "parse_token_response",
    "pkce_challenge",
    "prm_urls",
    "quoted",
    "refresh_due",
    "refresh_margin",
    "refreshed",
    "refusal",
    "registration_body",
    "secure_endpoint",
    "server_metadata_urls",
    "split_scope",
    "step_up_scope",
    "with_offline_access",
]

JSON: TypeAlias = Any

#: The protocol revisions whose authorization rules differ, oldest first.
REVISIONS: Final = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
#: The token endpoint authentication methods the client can use, in order of preference.
AUTH_METHODS: Final = ("private_key_jwt", "client_secret_basic", "client_secret_post", "none")
#: How long before its expiry an access token is refreshed, in seconds.
REFRESH_MARGIN: Final = 60.0
#: The share of a token's lifetime left when it is refreshed (at most `REFRESH_MARGIN`).
REFRESH_SHARE: Final = 0.25
#: The longest lifetime taken from ``expires_in``, in seconds (ten years).
MAX_EXPIRES_IN: Final = 10 * 365 * 86400.0


def refusal(message: str, reason: str, error: str | None = None) -> AuthorizationFailed:
    """The `AuthorizationFailed` of a refusal: ``reason`` names the step, ``error`` the server's OAuth error code."""
    return AuthorizationFailed(message, reason=reason, error=error)


def quoted(value: object, limit: int = 80) -> str:
    """A server-given string fit for an error message: printable, bounded, quoted."""
    text = value if isinstance(value, str) else repr(value)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


# ------------------------------------------------------------------ what is kept


def _finite(value: float | None) -> float | None:
    """A time kept in `Tokens`: a finite number, or `None` (never ``NaN`` nor an infinity)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _string_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _frozen_mapping(value: Mapping[str, object]) -> Mapping[str, object]:
    return MappingProxyType(dict(value))


@attrs.frozen
class ClientInfo:
    """A client's registration at one authorization server.

    Attributes:
        client_id: The client identifier (for a Client ID Metadata Document,
            the document's HTTPS URL).
        client_secret: The client secret, or `None` for a public client.
            Never shown in the ``repr``.
        token_endpoint_auth_method: How the client authenticates at the token
            endpoint: ``"none"``, ``"client_secret_basic"``,
            ``"client_secret_post"`` or ``"private_key_jwt"``.
        redirect_uris: The redirect URIs registered for the client.
        issuer: The issuer of the authorization server the registration
            belongs to.
        extra: Any other fields the registration response carried (values
            the server substituted or added, RFC 7591 §3.2.1).
    """

    client_id: str
    client_secret: str | None = attrs.field(default=None, repr=False)
    token_endpoint_auth_method: str = "none"
    redirect_uris: tuple[str, ...] = attrs.field(default=(), converter=_string_tuple)
    issuer: str = ""
    extra: Mapping[str, object] = attrs.field(
        factory=dict, converter=_frozen_mapping, repr=False, eq=False, hash=False
    )


@attrs.frozen
class Tokens:
    """What a token endpoint granted.

    Attributes:
        access_token: The access token. Never shown in the ``repr``.
        token_type: ``"Bearer"`` or ``"DPoP"``.
        refresh_token: The refresh token, or `None`. Never shown in the ``repr``.
        scope: The scope granted (space-separated), or `None` when the server
            did not say (then it is the scope requested).
        expires_at: When the access token expires, in seconds since the epoch
            (wall clock, absolute), or `None` when the server did not say.
        issued_at: When it was granted (same clock), or `None` if unknown:
            with ``expires_at``, its lifetime, which sets how early it is
            refreshed.
    """

    access_token: str = attrs.field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = attrs.field(default=None, repr=False)
    scope: str | None = None
    expires_at: float | None = attrs.field(default=None, converter=_finite)
    issued_at: float | None = attrs.field(default=None, converter=_finite)


# ------------------------------------------------------------------ URLs


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def canonical_resource(server_url: str) -> str:
    """The canonical URI of an MCP server: no fragment or query, scheme and host in lower case, no trailing ``/``.

    It is the ``resource`` the client sends when the protected resource
    metadata gives none (with metadata, its ``resource`` is sent verbatim).
    """
    parts = urlsplit(server_url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = netloc.rsplit("@", 1)[1]
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), netloc.lower(), path, "", ""))


def secure_endpoint(url: str) -> bool:
    """Whether an authorization server endpoint may be used: ``https``, or ``http`` on a loopback host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if not host or parts.scheme not in ("https", "http"):
        return False
    if parts.scheme == "https":
        return True
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def prm_urls(server_url: str, resource_metadata: str | None) -> list[str]:
    """Where to look for the protected resource metadata of ``server_url``, in order (RFC 9728 §3.1, §5.1).

    The challenge's ``resource_metadata`` first; then the well-known URI
    with the server's path inserted (when it has one), then the root one.
    """
    parts = urlsplit(server_url)
    origin = _origin(server_url)
    urls: list[str] = []
    if resource_metadata:
        urls.append(resource_metadata)
    path = parts.path.rstrip("/")
    if path:
        urls.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{origin}/.well-known/oauth-protected-resource")
    return list(dict.fromkeys(urls))


def server_metadata_urls(issuer: str, revision: str = REVISIONS[-1]) -> list[str]:
    """Where to look for the metadata of the authorization server ``issuer``, in the spec's order.

    An issuer with a path (``https://a/t1``): RFC 8414's path insertion, then
    OpenID Connect Discovery with the path inserted, then appended. Without
    a path: RFC 8414, then OpenID Connect Discovery. Before 2025-11-25 only
    RFC 8414's form is defined.
    """
    parts = urlsplit(issuer)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    path = parts.path.rstrip("/")
    oauth = f"{origin}/.well-known/oauth-authorization-server{path}"
    if revision < "2025-11-25":
        return [oauth]
    if path:
        return [
            oauth,
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    return [oauth, f"{origin}/.well-known/openid-configuration"]


def legacy_metadata_url(server_url: str) -> str:
    """The 2025-03-26 authorization server metadata URL: at the MCP server's origin (its path dropped)."""
    return f"{_origin(server_url)}/.well-known/oauth-authorization-server"


# ------------------------------------------------------------------ metadata


@attrs.frozen
class ProtectedResource:
    """What the protected resource metadata (RFC 9728) of an MCP server says.

    Attributes:
        resource: The resource identifier, verbatim (the ``resource`` sent
            to the authorization server).
        authorization_servers: The issuers of its authorization servers.
        scopes_supported: The scopes it names, or `None`.
        dpop_required: Whether it takes DPoP-bound tokens only
            (``dpop_bound_access_tokens_required``, RFC 9449 §5.2).
    """

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    dpop_required: bool = False


def _strings(value: JSON) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _document(body: bytes, what: str, reason: str = "metadata") -> dict[str, JSON]:
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise refusal(f"the {what} is not JSON", reason) from None
    if not isinstance(doc, dict):
        raise refusal(f"the {what} is not a JSON object", reason)
    return doc


def _covers(resource: str, server_url: str) -> bool:
    """Whether ``resource`` names the server at ``server_url``: the same origin, and a prefix of its path."""
    a, b = urlsplit(resource), urlsplit(server_url)
    if (a.scheme.lower(), (a.hostname or "").lower(), a.port) != (
        b.scheme.lower(),
        (b.hostname or "").lower(),
        b.port,
    ):
        return False
    prefix = a.path.rstrip("/")
    path = b.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def parse_resource_metadata(body: bytes, server_url: str) -> ProtectedResource:
    """The protected resource metadata of ``server_url``, checked.

    Refused (`AuthorizationFailed`, reason ``"resource_mismatch"``) when its
    ``resource`` is not the server's (another origin, or a path that does
    not cover the server's): a hostile document must not send the client to
    an authorization server of its choosing for another resource.
    """
    doc = _document(body, "protected resource metadata")
    resource = doc.get("resource")
    if not isinstance(resource, str) or not resource:
        raise refusal("the protected resource metadata has no resource", "metadata")
    if not _covers(resource, server_url):
        raise refusal(
            f"the protected resource metadata is for {quoted(resource)}, not for this server",
            "resource_mismatch",
        )
    servers = _strings(doc.get("authorization_servers"))
    if not servers:
        raise refusal("the protected resource metadata names no authorization server", "metadata")
    return ProtectedResource(
        resource,
        servers,
        _strings(doc.get("scopes_supported")),
        doc.get("dpop_bound_access_tokens_required") is True,
    )


@attrs.frozen
class AuthServer:
    """What the metadata of an authorization server (RFC 8414) says, checked.

    Attributes:
        issuer: The issuer identifier, exactly as the metadata gives it.
        authorization_endpoint, token_endpoint: The endpoints (``https``, or
            ``http`` on loopback).
        registration_endpoint: The dynamic client registration endpoint, or `None`.
        scopes_supported: The scopes it names, or `None`.
        grant_types_supported: The grant types (RFC 8414's default when absent).
        code_challenge_methods_supported: The PKCE methods, or `None` when absent.
        token_endpoint_auth_methods_supported: The client authentication methods.
        iss_parameter_supported: Whether it sends ``iss`` with the
            authorization response (RFC 9207).
        cimd_supported: Whether it accepts a Client ID Metadata Document URL
            as ``client_id``.
        dpop_algs: The DPoP signing algorithms it accepts (empty: no DPoP).
        revocation_endpoint: Where tokens are revoked (RFC 7009), or `None`.
    """

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] = ("authorization_code", "implicit")
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] = ("client_secret_basic",)
    iss_parameter_supported: bool = False
    cimd_supported: bool = False
    dpop_algs: tuple[str, ...] = ()
    revocation_endpoint: str | None = None


def _endpoint(doc: Mapping[str, JSON], name: str, required: bool) -> str | None:
    value = doc.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise refusal(f"the authorization server metadata has no {name}", "metadata")
    if not secure_endpoint(value):
        raise refusal(
            f"the authorization server's {name} {quoted(value)} is neither https nor on this machine",
            "insecure_endpoint",
        )
    return value


def parse_server_metadata(body: bytes, issuer: str, *, require_pkce: bool = True) -> AuthServer:
    """The metadata of the authorization server ``issuer``, checked.

    Refused (`AuthorizationFailed`) when its ``issuer`` is not identical to
    ``issuer`` (``"issuer_mismatch"``: nothing from it is used), when an
    endpoint is plain ``http`` off this machine (``"insecure_endpoint"``),
    and, with ``require_pkce``, when ``code_challenge_methods_supported`` is
    absent or lacks ``S256`` (``"pkce"``).
    """
    doc = _document(body, "authorization server metadata")
    given = doc.get("issuer")
    if given != issuer:
        raise refusal(
            f"the authorization server metadata names issuer {quoted(given)}, not {quoted(issuer)}",
            "issuer_mismatch",
        )
    server = _server_from(doc, issuer)
    if require_pkce:
        check_pkce(server)
    return server


def _server_from(doc: Mapping[str, JSON], issuer: str) -> AuthServer:
    authorization = _endpoint(doc, "authorization_endpoint", required=False)
    token = _endpoint(doc, "token_endpoint", required=True)
    assert token is not None
    return AuthServer(
        issuer=issuer,
        authorization_endpoint=authorization or "",
        token_endpoint=token,
        registration_endpoint=_endpoint(doc, "registration_endpoint", required=False),
        scopes_supported=_strings(doc.get("scopes_supported")),
        grant_types_supported=_strings(doc.get("grant_types_supported"))
        or ("authorization_code", "implicit"),
        code_challenge_methods_supported=_strings(doc.get("code_challenge_methods_supported")),
        token_endpoint_auth_methods_supported=_strings(doc.get("token_endpoint_auth_methods_supported"))
        or ("client_secret_basic",),
        iss_parameter_supported=doc.get("authorization_response_iss_parameter_supported") is True,
        cimd_supported=doc.get("client_id_metadata_document_supported") is True,
        dpop_algs=_strings(doc.get("dpop_signing_alg_values_supported")) or (),
        revocation_endpoint=_optional_endpoint(doc, "revocation_endpoint"),
    )


def _optional_endpoint(doc: Mapping[str, JSON], name: str) -> str | None:
    """An endpoint the flow can do without: `None` when absent, malformed or insecure."""
    value = doc.get(name)
    return value if isinstance(value, str) and secure_endpoint(value) else None


def check_pkce(server: AuthServer) -> None:
    """Refuse an authorization server that does not say it supports PKCE with S256."""
    methods = server.code_challenge_methods_supported
    if methods is None or "S256" not in methods:
        raise refusal(
            "the authorization server does not advertise PKCE with S256 (code_challenge_methods_supported);"
            " refusing to authorize without it",
            "pkce",
        )


def fallback_server(server_url: str) -> AuthServer:
    """The 2025-03-26 default endpoints of a server without metadata: ``/authorize``, ``/token``, ``/register`` at its origin."""
    origin = _origin(server_url)
    if not secure_endpoint(origin):
        raise refusal(
            f"the server {quoted(origin)} is neither https nor on this machine", "insecure_endpoint"
        )
    return AuthServer(
        issuer=origin,
        authorization_endpoint=f"{origin}/authorize",
        token_endpoint=f"{origin}/token",
        registration_endpoint=f"{origin}/register",
        grant_types_supported=("authorization_code", "refresh_token"),
        code_challenge_methods_supported=("S256",),
        token_endpoint_auth_methods_supported=("client_secret_basic", "client_secret_post", "none"),
    )


def legacy_server(body: bytes, server_url: str) -> AuthServer:
    """The metadata found at the MCP server's origin (2025-03-26): the issuer is that origin, or as the document says."""
    doc = _document(body, "authorization server metadata")
    given = doc.get("issuer")
    issuer = given if isinstance(given, str) and given else _origin(server_url)
    if _origin(issuer) != _origin(server_url):
        raise refusal(
            f"the authorization server metadata at the server's origin names issuer {quoted(given)}",
            "issuer_mismatch",
        )
    return _server_from(doc, issuer)


# ------------------------------------------------------------------ scope


def split_scope(scope: str | None) -> list[str]:
    """The scopes of a ``scope`` string (none for `None` or an empty one)."""
    return scope.split() if scope else []


def join_scopes(scopes: Iterable[str]) -> str | None:
    """One ``scope`` string of ``scopes``, each once, in order (`None` when there are none)."""
    joined = " ".join(dict.fromkeys(scopes))
    return joined or None


def initial_scope(challenge_scope: str | None, resource: ProtectedResource | None) -> str | None:
    """The scope of a first authorization: the challenge's, else every scope the resource names, else none."""
    if challenge_scope and challenge_scope.strip():
        return join_scopes(split_scope(challenge_scope))
    if resource is not None and resource.scopes_supported:
        return join_scopes(resource.scopes_supported)
    return None


def with_offline_access(scope: str | None, server: AuthServer) -> str | None:
    """``scope`` plus ``offline_access`` when the authorization server offers it and the refresh grant (SEP-2207)."""
    if (
        server.scopes_supported is not None
        and "offline_access" in server.scopes_supported
        and "refresh_token" in server.grant_types_supported
    ):
        return join_scopes([*split_scope(scope), "offline_access"])
    return scope


def step_up_scope(requested: str | None, granted: str | None, challenge: str | None) -> str | None:
    """The scope to ask for after a 403 ``insufficient_scope``: the union of what was asked, granted and challenged.

    `None` when the union adds nothing to what was asked and granted: a new
    authorization would get the same token, so the flow stops there.
    """
    before = [*split_scope(requested), *split_scope(granted)]
    union = [*before, *split_scope(challenge)]
    if set(union) <= set(before):
        return None
    return join_scopes(union)


# ------------------------------------------------------------------ registration


def choose_auth_method(
    server: AuthServer, *, has_secret: bool, has_key: bool, registered: str | None = None
) -> str:
    """How the client authenticates at the token endpoint.

    What its registration says, when it says; else the first of
    `AUTH_METHODS` the server supports and the client can do.
    """
    if registered:
        return registered
    for method in AUTH_METHODS:
        if method not in server.token_endpoint_auth_methods_supported:
            continue
        if method == "private_key_jwt" and not has_key:
            continue
        if method in ("client_secret_basic", "client_secret_post") and not has_secret:
            continue
        return method
    return "none" if not has_secret else "client_secret_basic"


def registration_body(
    *,
    client_name: str,
    redirect_uris: Iterable[str],
    server: AuthServer,
    scope: str | None = None,
    method: str = "none",
) -> dict[str, JSON]:
    """The dynamic client registration request (RFC 7591) of a native MCP client."""
    grants = ["authorization_code", "refresh_token"]
    body: dict[str, JSON] = {
        "client_name": client_name,
        "redirect_uris": list(redirect_uris),
        "grant_types": grants,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    }
    if scope:
        body["scope"] = scope
    return body


@attrs.frozen
class Registration:
    """A registration response, read (RFC 7591 §3.2.1): the server's values win over the ones asked for."""

    client_id: str
    client_secret: str | None = attrs.field(repr=False)
    token_endpoint_auth_method: str
    redirect_uris: tuple[str, ...]
    extra: dict[str, JSON] = attrs.field(repr=False)


def parse_registration(status: int, body: bytes, asked: Mapping[str, JSON]) -> Registration:
    """The client a registration endpoint registered, or `AuthorizationFailed` (``"registration"``)."""
    if status not in (200, 201):
        error = parse_token_error(body)
        raise refusal(
            f"the authorization server refused to register the client (HTTP {status}"
            + (f", {quoted(error[0])}" if error else "")
            + ")",
            "registration",
            error[0] if error else None,
        )
    doc = _document(body, "registration response", "registration")
    client_id = doc.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise refusal("the registration response has no client_id", "registration")
    secret = doc.get("client_secret")
    method = doc.get("token_endpoint_auth_method")
    if not isinstance(method, str):
        asked_method = asked.get("token_endpoint_auth_method")
        if isinstance(secret, str):
            method = asked_method if asked_method not in (None, "none") else "client_secret_basic"
        else:
            method = "none"
    uris = _strings(doc.get("redirect_uris")) or tuple(asked.get("redirect_uris", ()))
    extra = {k: v for k, v in doc.items() if k not in ("client_id", "client_secret")}
    return Registration(client_id, secret if isinstance(secret, str) else None, str(method), uris, extra)


# ------------------------------------------------------------------ authorization


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a PKCE verifier: base64url(SHA-256(verifier)), unpadded (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def pkce_verifier(entropy: bytes) -> str:
    """A PKCE verifier from random octets: base64url, unpadded; 32 octets give 43 characters (RFC 7636 §4.1)."""
    if len(entropy) < 32:
        raise ValueError("a PKCE verifier needs at least 32 random octets")
    verifier = base64.urlsafe_b64encode(entropy).rstrip(b"=").decode("ascii")
    return verifier[:128]


def authorization_params(
    *,
    client_id: str,
    redirect_uri: str,
    state: str,
    verifier: str,
    resource: str,
    scope: str | None,
) -> dict[str, str]:
    """The query of an authorization request: code flow, PKCE S256, the resource indicator, the scope."""
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": pkce_challenge(verifier),
        "code_challenge_method": "S256",
        "resource": resource,
    }
    if scope:
        params["scope"] = scope
        if "offline_access" in scope.split():
            params["prompt"] = "consent"
    return params


def authorization_url(endpoint: str, params: Mapping[str, str]) -> str:
    """``endpoint`` with ``params`` added to its query."""
    parts = urlsplit(endpoint)
    query = urlencode(list(params.items()))
    query = f"{parts.query}&{query}" if parts.query else query
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def check_callback(params: Mapping[str, str], *, state: str, issuer: str, iss_supported: bool) -> str:
    """The authorization code of a redirect back, after the checks of RFC 6749 §10.12 and RFC 9207.

    ``state`` must be there and equal (compared in constant time), else
    ``"state_mismatch"`` and nothing else is read, but for an ``error``
    without any ``state`` (some servers send a refusal so): that ends the
    login (``"authorization_denied"``), naming only the error code; then ``iss``, when
    present, must be exactly ``issuer``, and must be present when the server
    says it sends it (``"iss_mismatch"``); then an ``error`` is the user's
    or the server's refusal (``"authorization_denied"``).
    """
    got = params.get("state")
    error = params.get("error")
    if got is None and isinstance(error, str) and "code" not in params:
        # Some servers send a refusal without the state (RFC 6749 §4.1.2.1 says
        # they must not). Only its error code is shown, nothing else is used:
        # the login ends, as the user or the server wanted (or a forger did,
        # which costs a login and nothing more).
        raise refusal(
            f"the login was refused ({quoted(error, 40)}; the answer carried no state, so nothing else in it is"
            " trusted)",
            "authorization_denied",
            error if error.isascii() and error.replace("_", "").isalnum() and len(error) <= 40 else None,
        )
    if not isinstance(got, str) or not hmac.compare_digest(got.encode("utf-8"), state.encode("utf-8")):
        raise refusal("the redirect back does not carry the state of this authorization", "state_mismatch")
    iss = params.get("iss")
    if iss is not None:
        if iss != issuer:
            raise refusal(
                "the redirect back names another authorization server (iss), not the one asked",
                "iss_mismatch",
            )
    elif iss_supported:
        raise refusal(
            "the authorization server said it sends iss but the redirect back has none", "iss_mismatch"
        )
    if error is not None:
        description = params.get("error_description")
        raise refusal(
            f"authorization refused: {quoted(error, 40)}"
            + (f" ({quoted(description)})" if description else ""),
            "authorization_denied",
            error,
        )
    code = params.get("code")
    if not code:
        raise refusal("the redirect back carries no authorization code", "authorization_denied")
    return code


# ------------------------------------------------------------------ tokens


def client_auth(
    method: str, client_id: str, client_secret: str | None
) -> tuple[dict[str, str], dict[str, str]]:
    """The headers and form fields that authenticate a client at the token endpoint.

    ``client_secret_basic``: an ``Authorization: Basic`` header of the
    form-encoded id and secret (RFC 6749 §2.3.1), nothing in the body;
    ``client_secret_post``: both in the body; ``none``: the id in the body.
    ``private_key_jwt`` adds its assertion elsewhere; here it gives nothing.
    """
    if method == "client_secret_basic":
        if client_secret is None:
            raise refusal("client_secret_basic needs a client secret", "registration")
        pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
        return {"authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}, {}
    if method == "client_secret_post":
        if client_secret is None:
            raise refusal("client_secret_post needs a client secret", "registration")
        return {}, {"client_id": client_id, "client_secret": client_secret}
    if method == "private_key_jwt":
        return {}, {}
    return {}, {"client_id": client_id}


@attrs.frozen
class Granted:
    """A token response, read."""

    access_token: str = attrs.field(repr=False)
    token_type: str
    refresh_token: str | None = attrs.field(repr=False)
    scope: str | None
    expires_at: float | None
    issued_at: float | None = None


def parse_token_error(body: bytes) -> tuple[str, str | None] | None:
    """The ``error`` and ``error_description`` of an OAuth error response, or `None`."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("error"), str):
        return None
    description = doc.get("error_description")
    return doc["error"], description if isinstance(description, str) else None


def parse_token_response(
    status: int, body: bytes, *, now: float, requested_scope: str | None, proof_sent: bool = False
) -> Granted:
    """The tokens of a token endpoint's answer, with an absolute expiry, or `AuthorizationFailed`.

    An error answer is ``"invalid_grant"`` for that error (the grant is
    gone: authorize again) and ``"token"`` otherwise. An omitted ``scope``
    means the scope requested (RFC 6749 §5.1). ``expires_in`` becomes
    ``now + expires_in`` (see `expiry`). A ``DPoP`` token to a request that
    carried no proof (``proof_sent``) is refused: it could not be presented.
    """
    if status != 200:
        error = parse_token_error(body)
        code = error[0] if error else None
        reason = "invalid_grant" if code == "invalid_grant" else "token"
        detail = f", {quoted(code, 40)}" if code else ""
        if error and error[1]:
            detail += f": {quoted(error[1])}"
        raise refusal(f"the token endpoint refused (HTTP {status}{detail})", reason, code)
    doc = _document(body, "token response", "token")
    access = doc.get("access_token")
    if not isinstance(access, str) or not access:
        raise refusal("the token response has no access_token", "token")
    token_type = doc.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() not in ("bearer", "dpop"):
        raise refusal(
            f"the token response has token_type {quoted(token_type, 20)}, not Bearer or DPoP", "token"
        )
    if token_type.lower() == "dpop" and not proof_sent:
        raise refusal(
            "the token endpoint answered with a DPoP-bound token to a request without a DPoP proof", "token"
        )
    refresh = doc.get("refresh_token")
    scope = doc.get("scope")
    return Granted(
        access_token=access,
        token_type="DPoP" if token_type.lower() == "dpop" else "Bearer",
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        scope=scope if isinstance(scope, str) else requested_scope,
        expires_at=expiry(doc.get("expires_in"), now),
        issued_at=now,
    )


def expiry(expires_in: JSON, now: float) -> float | None:
    """The absolute expiry of a token granted at ``now`` for ``expires_in`` seconds.

    `None` (as if the server had not said) for anything but a finite,
    non-negative number or a string of digits: ``NaN``, infinities,
    booleans and negative numbers are not lifetimes. Capped at ten years.
    """
    number = isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool)
    digits = isinstance(expires_in, str) and expires_in.isdigit() and len(expires_in) <= 12
    seconds = float(expires_in) if number or digits else None
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return None
    return now + min(seconds, MAX_EXPIRES_IN)


def refreshed(new: Granted, old_refresh_token: str | None, old_scope: str | None) -> Granted:
    """A refresh's answer completed: the old refresh token is kept when no new one came (no rotation)."""
    return attrs.evolve(
        new,
        refresh_token=new.refresh_token if new.refresh_token is not None else old_refresh_token,
        scope=new.scope if new.scope is not None else old_scope,
    )


def needs_refresh(expires_at: float | None, now: float, margin: float = REFRESH_MARGIN) -> bool:
    """Whether an access token expiring at ``expires_at`` (absolute) should be refreshed before use."""
    return expires_at is not None and now >= expires_at - margin


def refresh_margin(tokens: Tokens) -> float:
    """How long before its expiry ``tokens`` is refreshed: a quarter of its lifetime, at most a minute.

    A token of unknown lifetime (no ``issued_at``) gets the whole minute.
    Scaled so that a fresh token is never due at once: a 30 s token is
    refreshed 7.5 s before it ends, not on every request.
    """
    if tokens.expires_at is None:
        return 0.0
    if tokens.issued_at is None or tokens.expires_at < tokens.issued_at:
        return REFRESH_MARGIN
    return min(REFRESH_MARGIN, (tokens.expires_at - tokens.issued_at) * REFRESH_SHARE)


def refresh_due(tokens: Tokens, now: float) -> bool:
    """Whether ``tokens`` should be refreshed before a request sent at ``now`` (see `refresh_margin`)."""
    return needs_refresh(tokens.expires_at, now, refresh_margin(tokens))


def dpop_claims(
    *, method: str, url: str, now: float, jti: str, access_token: str | None, nonce: str | None
) -> dict[str, JSON]:
    """The claims of a DPoP proof (RFC 9449 §4.2): ``htu`` without query or fragment, ``ath`` with a token."""
    parts = urlsplit(url)
    claims: dict[str, JSON] = {
        "jti": jti,
        "htm": method.upper(),
        "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
        "iat": int(now),
    }
    if access_token is not None:
        digest = hashlib.sha256(access_token.encode("ascii", "replace")).digest()
        claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    if nonce is not None:
        claims["nonce"] = nonce
    return claims


def assertion_claims(
    *, client_id: str, audience: str, now: float, jti: str, lifetime: float = 300.0
) -> dict[str, JSON]:
    """The claims of a ``private_key_jwt`` client assertion (RFC 7523 §3)."""
    return {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": int(now),
        "exp": int(now + lifetime),
        "jti": jti,
    }
