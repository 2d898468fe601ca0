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
* the order of it all: `AuthFlow`, a generator in the manner of httpx's
  ``Auth.auth_flow`` that yields what it wants done (`Send`, `SendResource`,
  `Renew`, `Listen`, `Browse`, `Sign`, the store's `Restore`, `LoadClient`,
  `LoadTokens`, `KeepClient`, `KeepTokens`, `Forget`, `Assertion`) and is
  sent the answers: discovery order and fallbacks, registration, the grant,
  refresh, step-up, DPoP and every budget. ``trio_mcp.auth`` drives it.

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
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import attrs

from .._errors import AuthorizationFailed
from .http_wire import parse_challenge

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

__all__ = [
    "AUTH_METHODS",
    "REVISIONS",
    "Answer",
    "AuthFlow",
    "AuthServer",
    "AuthorizationFailed",
    "Browse",
    "Challenge",
    "ClientInfo",
    "Context",
    "FlowSettings",
    "Kept",
    "ProtectedResource",
    "Renew",
    "Send",
    "SendResource",
    "Sign",
    "Tokens",
    "authorization_params",
    "canonical_resource",
    "check_callback",
    "choose_auth_method",
    "client_auth",
    "fallback_server",
    "initial_scope",
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
    "refresh_due",
    "refresh_margin",
    "refreshed",
    "registration_body",
    "secure_endpoint",
    "server_metadata_urls",
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


def _fail(message: str, reason: str, error: str | None = None) -> AuthorizationFailed:
    return AuthorizationFailed(message, reason=reason, error=error)


def _safe(value: object, limit: int = 80) -> str:
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
        raise _fail(f"the {what} is not JSON", reason) from None
    if not isinstance(doc, dict):
        raise _fail(f"the {what} is not a JSON object", reason)
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
        raise _fail("the protected resource metadata has no resource", "metadata")
    if not _covers(resource, server_url):
        raise _fail(
            f"the protected resource metadata is for {_safe(resource)}, not for this server",
            "resource_mismatch",
        )
    servers = _strings(doc.get("authorization_servers"))
    if not servers:
        raise _fail("the protected resource metadata names no authorization server", "metadata")
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
        raise _fail(f"the authorization server metadata has no {name}", "metadata")
    if not secure_endpoint(value):
        raise _fail(
            f"the authorization server's {name} {_safe(value)} is neither https nor on this machine",
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
        raise _fail(
            f"the authorization server metadata names issuer {_safe(given)}, not {_safe(issuer)}",
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
        raise _fail(
            "the authorization server does not advertise PKCE with S256 (code_challenge_methods_supported);"
            " refusing to authorize without it",
            "pkce",
        )


def fallback_server(server_url: str) -> AuthServer:
    """The 2025-03-26 default endpoints of a server without metadata: ``/authorize``, ``/token``, ``/register`` at its origin."""
    origin = _origin(server_url)
    if not secure_endpoint(origin):
        raise _fail(f"the server {_safe(origin)} is neither https nor on this machine", "insecure_endpoint")
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
        raise _fail(
            f"the authorization server metadata at the server's origin names issuer {_safe(given)}",
            "issuer_mismatch",
        )
    return _server_from(doc, issuer)


# ------------------------------------------------------------------ scope


def _split(scope: str | None) -> list[str]:
    return scope.split() if scope else []


def _join(scopes: Iterable[str]) -> str | None:
    joined = " ".join(dict.fromkeys(scopes))
    return joined or None


def initial_scope(challenge_scope: str | None, resource: ProtectedResource | None) -> str | None:
    """The scope of a first authorization: the challenge's, else every scope the resource names, else none."""
    if challenge_scope and challenge_scope.strip():
        return _join(_split(challenge_scope))
    if resource is not None and resource.scopes_supported:
        return _join(resource.scopes_supported)
    return None


def with_offline_access(scope: str | None, server: AuthServer) -> str | None:
    """``scope`` plus ``offline_access`` when the authorization server offers it and the refresh grant (SEP-2207)."""
    if (
        server.scopes_supported is not None
        and "offline_access" in server.scopes_supported
        and "refresh_token" in server.grant_types_supported
    ):
        return _join([*_split(scope), "offline_access"])
    return scope


def step_up_scope(requested: str | None, granted: str | None, challenge: str | None) -> str | None:
    """The scope to ask for after a 403 ``insufficient_scope``: the union of what was asked, granted and challenged.

    `None` when the union adds nothing to what was asked and granted: a new
    authorization would get the same token, so the flow stops there.
    """
    before = [*_split(requested), *_split(granted)]
    union = [*before, *_split(challenge)]
    if set(union) <= set(before):
        return None
    return _join(union)


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
        raise _fail(
            f"the authorization server refused to register the client (HTTP {status}"
            + (f", {_safe(error[0])}" if error else "")
            + ")",
            "registration",
            error[0] if error else None,
        )
    doc = _document(body, "registration response", "registration")
    client_id = doc.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise _fail("the registration response has no client_id", "registration")
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
        raise _fail(
            f"the login was refused ({_safe(error, 40)}; the answer carried no state, so nothing else in it is"
            " trusted)",
            "authorization_denied",
            error if error.isascii() and error.replace("_", "").isalnum() and len(error) <= 40 else None,
        )
    if not isinstance(got, str) or not hmac.compare_digest(got.encode("utf-8"), state.encode("utf-8")):
        raise _fail("the redirect back does not carry the state of this authorization", "state_mismatch")
    iss = params.get("iss")
    if iss is not None:
        if iss != issuer:
            raise _fail(
                "the redirect back names another authorization server (iss), not the one asked",
                "iss_mismatch",
            )
    elif iss_supported:
        raise _fail(
            "the authorization server said it sends iss but the redirect back has none", "iss_mismatch"
        )
    if error is not None:
        description = params.get("error_description")
        raise _fail(
            f"authorization refused: {_safe(error, 40)}"
            + (f" ({_safe(description)})" if description else ""),
            "authorization_denied",
            error,
        )
    code = params.get("code")
    if not code:
        raise _fail("the redirect back carries no authorization code", "authorization_denied")
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
            raise _fail("client_secret_basic needs a client secret", "registration")
        pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
        return {"authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}, {}
    if method == "client_secret_post":
        if client_secret is None:
            raise _fail("client_secret_post needs a client secret", "registration")
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
        detail = f", {_safe(code, 40)}" if code else ""
        if error and error[1]:
            detail += f": {_safe(error[1])}"
        raise _fail(f"the token endpoint refused (HTTP {status}{detail})", reason, code)
    doc = _document(body, "token response", "token")
    access = doc.get("access_token")
    if not isinstance(access, str) or not access:
        raise _fail("the token response has no access_token", "token")
    token_type = doc.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() not in ("bearer", "dpop"):
        raise _fail(f"the token response has token_type {_safe(token_type, 20)}, not Bearer or DPoP", "token")
    if token_type.lower() == "dpop" and not proof_sent:
        raise _fail(
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


# ------------------------------------------------------------------ the flow
#
# The order of a login, as a generator in the manner of httpx's
# ``Auth.auth_flow``: it yields what it wants done (a request of its own, the
# MCP request with its headers, the user's part, a signature, a look into the
# store) and is sent the answer; it ends with an outcome or raises
# `AuthorizationFailed`. Every budget and counter lives here; the driver only
# carries bytes, time and the store, and runs one grant at a time.

#: Step-ups (403 ``insufficient_scope``) tried per request.
MAX_STEP_UPS: Final = 1
#: New tokens tried per request after a 401.
MAX_RENEWALS: Final = 2
#: Logins (the user's part) started per request after a 401; a step-up may add one.
MAX_LOGINS: Final = 1
#: Retries with a server's DPoP nonce, per request and per token request.
MAX_NONCE_RETRIES: Final = 2
#: The grants a flow can run.
GRANTS: Final = ("authorization_code", "client_credentials", "jwt_bearer", "enterprise")

JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"


@attrs.frozen
class Send:
    """Send a request of the flow's own (metadata, registration, token, revocation); answered with an `Answer`.

    The driver follows same-origin redirects, reads the body (bounded),
    bounds the whole exchange by one deadline, and raises
    `AuthorizationFailed` when it cannot.
    """

    method: str
    url: str
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    form: Mapping[str, str] | None = attrs.field(default=None, repr=False)
    json: JSON = attrs.field(default=None, repr=False)


@attrs.frozen
class Answer:
    """A response: its status, its headers (names in lower case) and, for the flow's own requests, its body."""

    status: int
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    body: bytes = attrs.field(default=b"", repr=False)


@attrs.frozen
class SendResource:
    """Send the MCP request with these headers (``authorization``, ``dpop``; none when empty).

    Answered with an `Answer` whose body is never read (it may be an
    endless event stream).
    """

    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)


@attrs.frozen
class Challenge:
    """A 401 or 403 of the MCP server: its status and its first ``WWW-Authenticate`` challenge."""

    status: int
    scheme: str = ""
    params: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def scope(self) -> str | None:
        return self.params.get("scope")

    @property
    def error(self) -> str | None:
        return self.params.get("error")


@attrs.frozen
class Renew:
    """Get new tokens: the driver runs `AuthFlow.grant` with this, one grant at a time, and sends back its outcome.

    When another request's grant replaced ``used`` meanwhile, the driver
    answers ``"changed"`` without running it. Outcomes: ``"none"`` (nothing
    new: the server's refusal stands), ``"tokens"`` (new tokens, no login),
    ``"login"`` (new tokens from a login), ``"changed"``.

    Attributes:
        kind: ``"restore"`` (what the store keeps, before the first request),
            ``"refresh"`` (ahead of expiry), ``"renew"`` (after a 401),
            ``"step_up"`` (after a 403 ``insufficient_scope``).
        used: The tokens the request carried, or `None`.
        challenge: The server's challenge, for ``"renew"`` and ``"step_up"``.
        may_login: Whether the request's budget allows a login.
        presented: Whether ``used`` went on the request (a DPoP-bound token
            kept by another process cannot: its key is gone).
    """

    kind: str
    used: Tokens | None = None
    challenge: Challenge | None = None
    may_login: bool = False
    presented: bool = True


@attrs.frozen
class Kept:
    """A login kept in the store for a resource that covers the server's URL."""

    resource: str
    issuer: str
    client: ClientInfo | None
    tokens: Tokens | None


@attrs.frozen
class Restore:
    """Look in the store for a login kept for ``server_url``; answered with a `Kept` or `None`."""

    server_url: str


@attrs.frozen
class LoadClient:
    """The registration kept for ``resource`` at ``issuer``; answered with a `ClientInfo` or `None`."""

    resource: str
    issuer: str


@attrs.frozen
class LoadTokens:
    """The tokens kept for ``resource``, ``issuer`` and ``client_id``; answered with `Tokens` or `None`."""

    resource: str
    issuer: str
    client_id: str


@attrs.frozen
class KeepClient:
    """Store ``client`` as the registration for ``resource`` at ``issuer``."""

    resource: str
    issuer: str
    client: ClientInfo


@attrs.frozen
class KeepTokens:
    """Store ``tokens``; the driver does it whole, a cancellation notwithstanding (a rotated refresh token must not be lost).

    ``refreshed``: the tokens come from a refresh (telemetry records it).
    """

    resource: str
    issuer: str
    client_id: str
    tokens: Tokens = attrs.field(repr=False)
    refreshed: bool = False


@attrs.frozen
class Forget:
    """Drop what is kept for ``resource`` at ``issuer`` (a registration the server forgot, a logout)."""

    resource: str
    issuer: str


@attrs.frozen
class Listen:
    """Prepare to receive the user's redirect back; answered with the redirect URI.

    The driver keeps listening until the grant ends.
    """


@attrs.frozen
class Browse:
    """Send the user to ``url``; answered with the parameters of the redirect back."""

    url: str = attrs.field(repr=False)


@attrs.frozen
class Sign:
    """Sign ``claims``; answered with a compact JWS.

    ``key`` is ``"client"`` (the client's key, for ``private_key_jwt``) or
    ``"dpop"`` (the flow's DPoP key; the driver adds its public ``jwk`` to
    the header).
    """

    key: str
    claims: Mapping[str, JSON] = attrs.field(repr=False)
    header: Mapping[str, JSON] = attrs.field(factory=dict)


@attrs.frozen
class Assertion:
    """The caller's assertion (``"assertion"``, a workload's JWT) or ID token (``"id_token"``); answered with a string."""

    kind: str


Action: TypeAlias = (
    Send
    | SendResource
    | Renew
    | Restore
    | LoadClient
    | LoadTokens
    | KeepClient
    | KeepTokens
    | Forget
    | Listen
    | Browse
    | Sign
    | Assertion
)


@attrs.frozen
class Context:
    """What discovery found for one MCP server: the resource to name and its authorization server."""

    resource: str
    issuer: str
    server: AuthServer
    prm: ProtectedResource | None = None


@attrs.frozen
class FlowSettings:
    """What the application chose for a flow.

    Attributes:
        server_url: The MCP server's URL.
        grant: One of `GRANTS`.
        scope: The scope to ask for, instead of the spec's choice.
        dpop: `True`, `False`, or `None`: DPoP when the protected resource
            asks for it (its metadata, or a ``DPoP`` challenge).
        can_dpop: Whether the driver can make DPoP proofs (the ``auth`` extra).
        interactive: Whether a user can log in (a redirect handler is given).
        client: Pre-registered credentials (or a program's, for
            ``client_credentials``).
        client_issuer: The issuer those credentials are for, if known.
        method: The token endpoint authentication method, instead of the choice.
        cimd: A Client ID Metadata Document URL to use as ``client_id``.
        client_name: The name a dynamic registration gives.
        has_key: Whether the driver holds a client key (``private_key_jwt``).
        idp_token_endpoint: The identity provider's token endpoint (``enterprise``).
        idp_client_id: The client's identifier there.
    """

    server_url: str
    grant: str = "authorization_code"
    scope: str | None = None
    dpop: bool | None = None
    can_dpop: bool = True
    interactive: bool = False
    client: ClientInfo | None = None
    client_issuer: str | None = None
    method: str | None = None
    cimd: str | None = None
    client_name: str = "trio-mcp"
    has_key: bool = False
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _where(url: str) -> str:
    """A URL fit for a message: no query, no fragment, no user info."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unreadable URL)"
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _same_origin(a: str, b: str) -> bool:
    defaults = {"http": 80, "https": 443}
    try:
        first, second = urlsplit(a), urlsplit(b)
        port_a = first.port or defaults.get(first.scheme.lower())
        port_b = second.port or defaults.get(second.scheme.lower())
    except ValueError:
        return False
    return (
        first.scheme.lower() == second.scheme.lower()
        and (first.hostname or "") == (second.hostname or "")
        and port_a == port_b
    )


def covers(resource: str, url: str) -> bool:
    """Whether a login kept for ``resource`` is one for the server at ``url``: same origin, and a prefix of its path."""
    try:
        if not _same_origin(resource, url):
            return False
        prefix = urlsplit(resource).path.rstrip("/")
        path = urlsplit(url).path.rstrip("/")
    except ValueError:
        return False
    return path == prefix or path.startswith(prefix + "/")


class AuthFlow:
    """The MCP authorization flow of one server, without I/O: every decision, budget and counter.

    The driver runs `request` for each MCP request and `grant` for each
    `Renew` it yields (one at a time), doing what each action says and
    sending back the answer. ``now`` and ``random`` are the only outside
    inputs: the wall clock in seconds, and ``n`` random octets.

    What it decides:

    * before a new process's first request, what the store keeps is used
      (the request carries the kept token);
    * a token due (see `refresh_margin`) is refreshed once before a request;
      a refresh that fails is not tried again for that token;
    * a 401 on a token with a refresh token refreshes before anything else;
      a refused refresh leads to one login at most;
    * logins per request: `MAX_LOGINS` after a 401, plus `MAX_STEP_UPS`
      after a 403; the scope of a step-up is the union, never less, and a
      union that adds nothing ends there;
    * a login the user refused is not started again by this flow;
    * DPoP is used when asked for (``dpop=True``), or when the protected
      resource asks for it; a resource that refuses a DPoP-bound token with
      a ``Bearer`` challenge gets Bearer tokens from then on, by a refresh
      when one works (no second login);
    * a registration the authorization server forgot (``invalid_client``)
      is made again, once.
    """

    def __init__(
        self, settings: FlowSettings, *, now: Callable[[], float], random: Callable[[int], bytes]
    ) -> None:
        if settings.grant not in GRANTS:
            raise ValueError(f"unknown grant {settings.grant!r}")
        self.settings = settings
        self.now = now
        self.random = random
        self.tokens: Tokens | None = None
        self.context: Context | None = None
        self.client: ClientInfo | None = None
        self.revision: str = REVISIONS[-1]
        self.requested: str | None = None
        self.restored = False
        self.refused = False
        self.rs_nonce: str | None = None
        self.as_nonce: str | None = None
        self.bearer_only = False
        self.rs_wants_dpop = False
        self.dpop_keyed = False
        self.reregistered = False
        self.assertion_failed = False
        self.bound_issuer: str | None = None
        self.refresh_failed: Tokens | None = None
        self.keys: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"<AuthFlow {self.settings.grant} for {_where(self.settings.server_url)}>"

    # ------------------------------------------------------------ one MCP request

    def request(self, method: str, url: str, version: str | None = None) -> Generator[Action, Any, None]:
        """The MCP request ``method url``: its headers, and what its answers lead to."""
        if version in REVISIONS:
            self.revision = version
        ours = _same_origin(url, self.settings.server_url)
        if ours and not self.restored and self.settings.grant == "authorization_code":
            yield Renew("restore")
        tokens = self.tokens
        if (
            ours
            and tokens is not None
            and tokens.refresh_token is not None
            and tokens is not self.refresh_failed
            and refresh_due(tokens, self.now())
        ):
            yield Renew("refresh", tokens)
        used = self.tokens if ours else None
        answer: Answer = yield SendResource((yield from self._resource_headers(method, url, used)))
        renewals = step_ups = nonces = logins = 0
        while ours and answer.status in (401, 403):
            challenge = _challenge_of(answer)
            nonce = answer.headers.get("dpop-nonce")
            if (
                answer.status == 401
                and challenge.error == "use_dpop_nonce"
                and nonce
                and used is not None
                and used.token_type == "DPoP"
                and nonces < MAX_NONCE_RETRIES
            ):
                nonces += 1
                self.rs_nonce = nonce
            elif answer.status == 403:
                if challenge.error != "insufficient_scope" or step_ups >= MAX_STEP_UPS:
                    return
                step_ups += 1
                presented = used is not None and self._presentable(used)
                outcome = yield Renew("step_up", used, challenge, may_login=True, presented=presented)
                if outcome == "none":
                    return
            elif renewals < MAX_RENEWALS:
                renewals += 1
                presented = used is not None and self._presentable(used)
                outcome = yield Renew(
                    "renew", used, challenge, may_login=logins < MAX_LOGINS, presented=presented
                )
                if outcome == "none":
                    return
                if outcome == "login":
                    logins += 1
            else:
                return
            used = self.tokens
            answer = yield SendResource((yield from self._resource_headers(method, url, used)))

    def _presentable(self, tokens: Tokens) -> bool:
        """Whether ``tokens`` can go on a request: a DPoP-bound token needs this flow's key."""
        return tokens.token_type != "DPoP" or self.dpop_keyed

    def _resource_headers(
        self, method: str, url: str, tokens: Tokens | None
    ) -> Generator[Action, Any, dict[str, str]]:
        if tokens is None or not self._presentable(tokens):
            return {}
        if tokens.token_type != "DPoP":
            return {"authorization": f"Bearer {tokens.access_token}"}
        proof = yield self._proof(method, url, tokens.access_token, self.rs_nonce)
        return {"authorization": f"DPoP {tokens.access_token}", "dpop": proof}

    def _proof(self, method: str, url: str, access_token: str | None, nonce: str | None) -> Sign:
        claims = dpop_claims(
            method=method,
            url=url,
            now=self.now(),
            jti=_b64url(self.random(16)),
            access_token=access_token,
            nonce=nonce,
        )
        return Sign("dpop", claims, {"typ": "dpop+jwt"})

    # ------------------------------------------------------------ grants

    def grant(self, renew: Renew) -> Generator[Action, Any, str]:
        """New tokens, as ``renew`` asks; the outcome (see `Renew`)."""
        if renew.kind == "restore":
            return (yield from self._restore())
        if renew.kind == "refresh":
            return (yield from self._refresh_ahead(renew))
        challenge = renew.challenge if renew.challenge is not None else Challenge(401)
        scheme = challenge.scheme.lower()
        if scheme == "dpop":
            self.rs_wants_dpop = True
        used = renew.used
        if (
            used is not None
            and renew.presented
            and used.token_type == "DPoP"
            and challenge.status == 401
            and scheme == "bearer"
        ):
            # The resource takes Bearer tokens only.
            if self.settings.dpop is True:
                raise _fail(
                    "the server refuses DPoP-bound tokens and asks for Bearer ones, but DPoP was asked for"
                    " (dpop=True)",
                    "dpop",
                )
            self.bearer_only = True
        if self.settings.grant == "authorization_code":
            return (yield from self._user_grant(renew, challenge))
        return (yield from self._program_grant(renew, challenge))

    def _restore(self) -> Generator[Action, Any, str]:
        if self.restored:
            return "changed"
        self.restored = True
        kept: Kept | None = yield Restore(self.settings.server_url)
        if kept is None or kept.tokens is None or self.tokens is not None:
            return "none"
        pre = self.settings.client
        if pre is not None and (
            (kept.client is not None and kept.client.client_id != pre.client_id)
            or (self.settings.client_issuer not in (None, kept.issuer))
        ):
            return "none"
        self.keys = (kept.resource, kept.issuer)
        if kept.client is not None and self.client is None:
            self.client = kept.client
        self.tokens = kept.tokens
        return "tokens"

    def _refresh_ahead(self, renew: Renew) -> Generator[Action, Any, str]:
        used = renew.used
        if used is None or used.refresh_token is None:
            return "none"
        try:
            context = self.context
            if context is None:
                context = yield from self._discover(None, pkce=self.settings.grant == "authorization_code")
            client = self.client
            if client is None:
                return "none"
            yield from self._refresh(context, client, used)
        except AuthorizationFailed:
            # The request goes out with what there is; a 401 starts over.
            self.refresh_failed = used
            return "none"
        return "tokens"

    def _user_grant(self, renew: Renew, challenge: Challenge) -> Generator[Action, Any, str]:
        previous = self.context
        context = yield from self._discover(challenge, pkce=True)
        moved = previous is not None and previous.issuer != context.issuer
        if not moved and self.keys is not None and self.keys[1] != context.issuer:
            moved = True
        if moved:
            self.client = None
        used = renew.used
        if renew.kind == "step_up":
            granted = used.scope if used is not None else None
            scope = step_up_scope(self.requested, granted, challenge.scope)
            if scope is None:
                return "none"
        else:
            client = self.client or (yield from self._known_client(context))
            if client is not None:
                self.client = client
                outcome = yield from self._reuse(context, client, used, moved)
                if outcome is not None:
                    return outcome
            scope = self.settings.scope or initial_scope(challenge.scope, context.prm)
            if scope and not moved:
                # Scopes only grow: a login after a step-up asks for no less than before.
                before = [*_split(self.requested), *_split(used.scope if used is not None else None)]
                scope = _join([*before, *_split(scope)])
        if not renew.may_login or not self.settings.interactive:
            return "none"
        if self.refused:
            raise _fail(
                "the login was refused; this flow does not ask again by itself (a new flow, or"
                " trio-mcp login, logs in again)",
                "authorization_denied",
            )
        yield from self._authorize(context, with_offline_access(scope, context.server))
        return "login"

    def _reuse(
        self, context: Context, client: ClientInfo, used: Tokens | None, moved: bool
    ) -> Generator[Action, Any, str | None]:
        """Tokens without a login: the store's, if others than those refused, else a refresh. `None`: none."""
        if moved:
            return None
        stored: Tokens | None = yield LoadTokens(context.resource, context.issuer, client.client_id)
        now = self.now()
        if (
            stored is not None
            and (used is None or stored.access_token != used.access_token)
            and self._presentable(stored)
            and not (self.bearer_only and stored.token_type == "DPoP")
            and not refresh_due(stored, now)
        ):
            self.tokens = stored
            return "tokens"
        current = stored if stored is not None else used
        if current is None or current.refresh_token is None or current is self.refresh_failed:
            return None
        try:
            yield from self._refresh(context, client, current)
        except AuthorizationFailed as exc:
            self.refresh_failed = current
            if exc.error == "invalid_client":
                yield from self._forget_client(context, client)
                return None
            if exc.reason not in ("invalid_grant", "token"):
                raise
            return None
        return "tokens"

    def _forget_client(self, context: Context, client: ClientInfo) -> Generator[Action, Any, None]:
        """The server forgot ``client`` (``invalid_client``): drop it, to register again, once."""
        if self.reregistered or self.settings.client is not None or client.client_id == self.settings.cimd:
            raise _fail(
                "the authorization server does not know the client (invalid_client)",
                "registration",
                "invalid_client",
            )
        self.reregistered = True
        self.client = None
        self.tokens = None
        yield Forget(context.resource, context.issuer)

    def _known_client(self, context: Context) -> Generator[Action, Any, ClientInfo | None]:
        pre = self.settings.client
        if pre is not None:
            self._pin(context.issuer, pre.issuer or self.settings.client_issuer)
            return attrs.evolve(pre, issuer=context.issuer)
        client: ClientInfo | None = yield LoadClient(context.resource, context.issuer)
        return client

    def _authorize(self, context: Context, scope: str | None) -> Generator[Action, Any, None]:
        """The authorization code grant: the user logs in, the code is exchanged."""
        server = context.server
        if not secure_endpoint(server.authorization_endpoint):
            raise _fail(
                "the authorization endpoint is neither https nor on this machine", "insecure_endpoint"
            )
        verifier = pkce_verifier(self.random(32))
        state = _b64url(self.random(32))
        redirect_uri: str = yield Listen()
        client = yield from self._client_for(context, redirect_uri, scope)
        params = authorization_params(
            client_id=client.client_id,
            redirect_uri=redirect_uri,
            state=state,
            verifier=verifier,
            resource=context.resource,
            scope=scope,
        )
        self.requested = scope
        answer: Mapping[str, str] = yield Browse(authorization_url(server.authorization_endpoint, params))
        try:
            code = check_callback(
                answer, state=state, issuer=server.issuer, iss_supported=server.iss_parameter_supported
            )
        except AuthorizationFailed as exc:
            if exc.reason == "authorization_denied":
                self.refused = True
            raise
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": context.resource,
        }
        try:
            tokens = yield from self._token_request(context, form, client=client, scope=scope)
        except AuthorizationFailed as exc:
            if exc.error == "invalid_client" and not self.reregistered:
                yield from self._forget_client(context, client)
            raise
        yield from self._keep(context, client.client_id, tokens)

    def _client_for(
        self, context: Context, redirect_uri: str, scope: str | None
    ) -> Generator[Action, Any, ClientInfo]:
        """The client to authorize as: pre-registered, known, a metadata document, or registered now."""
        client = self.client or (yield from self._known_client(context))
        if client is not None and (
            self.settings.client is not None
            or client.client_id == self.settings.cimd
            or not client.redirect_uris
            or redirect_uri in client.redirect_uris
        ):
            self.client = client
            return client
        server = context.server
        if self.settings.cimd is not None and server.cimd_supported:
            client = ClientInfo(self.settings.cimd, None, "none", (redirect_uri,), context.issuer)
        elif server.registration_endpoint is not None:
            client = yield from self._register(context, redirect_uri, scope)
        else:
            raise _fail(
                "the authorization server offers no registration and no client is configured; give a"
                " pre-registered client",
                "registration",
            )
        self.client = client
        yield KeepClient(context.resource, context.issuer, client)
        return client

    def _register(
        self, context: Context, redirect_uri: str, scope: str | None
    ) -> Generator[Action, Any, ClientInfo]:
        server = context.server
        assert server.registration_endpoint is not None
        methods = server.token_endpoint_auth_methods_supported
        method = next(
            (m for m in ("client_secret_basic", "client_secret_post", "none") if m in methods), "none"
        )
        if self.settings.has_key and "private_key_jwt" in methods:
            method = "private_key_jwt"
        body = registration_body(
            client_name=self.settings.client_name,
            redirect_uris=[redirect_uri],
            server=server,
            scope=scope,
            method=method,
        )
        answer: Answer = yield Send(
            "POST", server.registration_endpoint, {"accept": "application/json"}, json=body
        )
        registered = parse_registration(answer.status, answer.body, body)
        return ClientInfo(
            registered.client_id,
            registered.client_secret,
            registered.token_endpoint_auth_method,
            registered.redirect_uris,
            context.issuer,
            registered.extra,
        )

    def _program_grant(self, renew: Renew, challenge: Challenge) -> Generator[Action, Any, str]:
        """A grant without a user: client credentials, a workload's JWT, or the enterprise's identity provider."""
        settings = self.settings
        if renew.kind == "step_up" or self.assertion_failed:
            return "none"
        context = yield from self._discover(challenge, pkce=False)
        scope = settings.scope or initial_scope(challenge.scope, context.prm)
        self.requested = scope
        if settings.grant == "client_credentials":
            credentials = settings.client
            assert credentials is not None
            self._pin(context.issuer, settings.client_issuer)
            method = choose_auth_method(
                context.server,
                has_secret=credentials.client_secret is not None,
                has_key=settings.has_key,
                registered=settings.method,
            )
            program = attrs.evolve(credentials, token_endpoint_auth_method=method, issuer=context.issuer)
            self.client = program
            form = {"grant_type": "client_credentials", "resource": context.resource}
            if scope:
                form["scope"] = scope
            tokens = yield from self._token_request(context, form, client=program, scope=scope)
            yield from self._keep(context, program.client_id, tokens)
            return "tokens"
        self._pin(context.issuer, None)
        credentials = settings.client
        try:
            if settings.grant == "enterprise":
                assertion = yield from self._id_jag(context, scope)
            else:
                assertion = yield Assertion("assertion")
            form = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": context.resource}
            if scope:
                form["scope"] = scope
            client: ClientInfo | None = None
            if credentials is not None and credentials.client_secret is not None:
                client = attrs.evolve(credentials, token_endpoint_auth_method="client_secret_basic")
            elif credentials is not None:
                form["client_id"] = credentials.client_id
            tokens = yield from self._token_request(context, form, client=client, scope=scope)
        except AuthorizationFailed:
            self.assertion_failed = True
            raise
        yield from self._keep(context, credentials.client_id if credentials is not None else "", tokens)
        return "tokens"

    def _id_jag(self, context: Context, scope: str | None) -> Generator[Action, Any, str]:
        """The ID-JAG, from the identity provider's token exchange (SEP-990)."""
        endpoint = self.settings.idp_token_endpoint
        if endpoint is None or not secure_endpoint(endpoint):
            raise _fail(
                "the identity provider's token endpoint is neither https nor on this machine",
                "insecure_endpoint",
            )
        id_token: str = yield Assertion("id_token")
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "subject_token": id_token,
            "subject_token_type": ID_TOKEN,
            "audience": context.issuer,
            "resource": context.resource,
        }
        if scope:
            form["scope"] = scope
        if self.settings.idp_client_id is not None:
            form["client_id"] = self.settings.idp_client_id
        answer: Answer = yield Send("POST", endpoint, {"accept": "application/json"}, form=form)
        if answer.status != 200:
            error = parse_token_error(answer.body)
            raise _fail(
                f"the identity provider refused the token exchange (HTTP {answer.status}"
                + (f", {_safe(error[0], 40)})" if error else ")"),
                "token",
                error[0] if error else None,
            )
        try:
            doc = json.loads(answer.body)
        except (ValueError, UnicodeDecodeError):
            doc = None
        assertion = doc.get("access_token") if isinstance(doc, dict) else None
        if not isinstance(assertion, str) or not assertion:
            raise _fail("the identity provider's token exchange gave no assertion", "token")
        return assertion

    def _pin(self, issuer: str, pinned: str | None) -> None:
        """Refuse to send the client's credentials to another authorization server than theirs."""
        bound = pinned or self.bound_issuer
        if bound is None:
            self.bound_issuer = issuer
        elif bound != issuer:
            raise _fail(
                f"the client's credentials are for {_where(bound)}, but the server now names {_where(issuer)}",
                "registration",
            )

    # ------------------------------------------------------------ discovery

    def _discover(self, challenge: Challenge | None, *, pkce: bool) -> Generator[Action, Any, Context]:
        """The resource and authorization server of the MCP server, found anew."""
        server_url = self.settings.server_url
        headers = {"mcp-protocol-version": self.revision, "accept": "application/json"}
        prm: ProtectedResource | None = None
        hint = challenge.params.get("resource_metadata") if challenge is not None else None
        if hint is not None and not _same_origin(hint, server_url) and not hint.startswith("https://"):
            hint = None
        for url in prm_urls(server_url, hint):
            answer: Answer = yield Send("GET", url, headers)
            if answer.status == 200:
                prm = parse_resource_metadata(answer.body, server_url)
                break
            if not 400 <= answer.status < 500:
                raise _fail(
                    f"the protected resource metadata at {_where(url)} answered HTTP {answer.status}",
                    "metadata",
                )
        if prm is None:
            context = yield from self._legacy(headers)
        else:
            issuer = prm.authorization_servers[0]
            if not secure_endpoint(issuer):
                raise _fail(
                    f"the authorization server {_where(issuer)} is neither https nor on this machine",
                    "insecure_endpoint",
                )
            context = yield from self._server_metadata(issuer, prm, headers, pkce)
        self.context = context
        return context

    def _server_metadata(
        self, issuer: str, prm: ProtectedResource, headers: Mapping[str, str], pkce: bool
    ) -> Generator[Action, Any, Context]:
        for url in server_metadata_urls(issuer, self.revision):
            answer: Answer = yield Send("GET", url, headers)
            if answer.status == 200:
                server = parse_server_metadata(
                    answer.body, issuer, require_pkce=pkce and self.revision >= "2025-11-25"
                )
                if pkce and server.code_challenge_methods_supported is not None:
                    check_pkce(server)
                return Context(prm.resource, issuer, server, prm)
            if not 400 <= answer.status < 500:
                raise _fail(
                    f"the authorization server metadata at {_where(url)} answered HTTP {answer.status}",
                    "metadata",
                )
        raise _fail(f"the authorization server {_where(issuer)} publishes no metadata", "metadata")

    def _legacy(self, headers: Mapping[str, str]) -> Generator[Action, Any, Context]:
        """The 2025-03-26 discovery: metadata at the server's origin, else the default endpoints."""
        server_url = self.settings.server_url
        url = legacy_metadata_url(server_url)
        answer: Answer = yield Send("GET", url, headers)
        if answer.status == 200:
            server = legacy_server(answer.body, server_url)
            if server.code_challenge_methods_supported is not None:
                check_pkce(server)
        elif 400 <= answer.status < 500:
            server = fallback_server(server_url)
        else:
            raise _fail(
                f"the authorization server metadata at {_where(url)} answered HTTP {answer.status}",
                "metadata",
            )
        return Context(canonical_resource(server_url), server.issuer, server, None)

    # ------------------------------------------------------------ token requests

    def use_dpop(self, context: Context) -> bool:
        """Whether the next token request binds its tokens with DPoP.

        Asked for (``dpop=True``); or, by default, when the protected
        resource asks for DPoP (``dpop_bound_access_tokens_required`` in its
        metadata, or a ``DPoP`` challenge) and the authorization server
        takes ES256 (or names no algorithm). Not after the resource refused
        a DPoP-bound token, nor with ``dpop=False``: an authorization server
        that merely offers DPoP does not turn it on, as a resource that
        takes Bearer tokens only would refuse every token it granted.
        """
        choice = self.settings.dpop
        if choice is False or (self.bearer_only and choice is not True):
            return False
        if not self.settings.can_dpop:
            if choice is True:
                raise _fail("DPoP needs the auth extra (pip install 'trio-mcp[auth]')", "no_key")
            return False
        if choice is True:
            return True
        wanted = self.rs_wants_dpop or (context.prm is not None and context.prm.dpop_required)
        algs = context.server.dpop_algs
        return wanted and (not algs or "ES256" in algs)

    def _token_request(
        self, context: Context, form: Mapping[str, str], *, client: ClientInfo | None, scope: str | None
    ) -> Generator[Action, Any, Tokens]:
        """POST ``form`` to the token endpoint with the client's authentication; the tokens granted."""
        server = context.server
        if not secure_endpoint(server.token_endpoint):
            raise _fail("the token endpoint is neither https nor on this machine", "insecure_endpoint")
        headers: dict[str, str] = {"accept": "application/json"}
        body = dict(form)
        if client is not None:
            method = client.token_endpoint_auth_method
            auth_headers, auth_form = client_auth(method, client.client_id, client.client_secret)
            headers.update(auth_headers)
            body.update(auth_form)
            if method == "private_key_jwt":
                if not self.settings.has_key:
                    raise _fail(
                        "the client authenticates with private_key_jwt but has no private key", "no_key"
                    )
                claims = assertion_claims(
                    client_id=client.client_id,
                    audience=context.issuer,
                    now=self.now(),
                    jti=_b64url(self.random(16)),
                )
                body["client_assertion_type"] = ASSERTION_TYPE
                body["client_assertion"] = yield Sign("client", claims, {"typ": "JWT"})
        dpop = self.use_dpop(context)
        for attempt in range(MAX_NONCE_RETRIES + 1):
            if dpop:
                headers["dpop"] = yield self._proof("POST", server.token_endpoint, None, self.as_nonce)
            answer: Answer = yield Send("POST", server.token_endpoint, dict(headers), form=body)
            nonce = answer.headers.get("dpop-nonce")
            if dpop and nonce and answer.status in (400, 401) and attempt < MAX_NONCE_RETRIES:
                error = parse_token_error(answer.body)
                if error is not None and error[0] == "use_dpop_nonce":
                    self.as_nonce = nonce
                    continue
            if dpop and nonce:
                self.as_nonce = nonce
            granted = parse_token_response(
                answer.status, answer.body, now=self.now(), requested_scope=scope, proof_sent=dpop
            )
            if granted.token_type == "DPoP":
                self.dpop_keyed = True
            return Tokens(
                granted.access_token,
                granted.token_type,
                granted.refresh_token,
                granted.scope,
                granted.expires_at,
                granted.issued_at,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _keep(
        self, context: Context, client_id: str, tokens: Tokens, *, refreshed: bool = False
    ) -> Generator[Action, Any, None]:
        self.tokens = tokens
        self.keys = (context.resource, context.issuer)
        yield KeepTokens(context.resource, context.issuer, client_id, tokens, refreshed)

    def _refresh(self, context: Context, client: ClientInfo, tokens: Tokens) -> Generator[Action, Any, None]:
        """A refresh grant; the new tokens (the old refresh token kept unless rotated) are kept."""
        assert tokens.refresh_token is not None
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token,
            "resource": context.resource,
        }
        try:
            new = yield from self._token_request(context, form, client=client, scope=tokens.scope)
        except AuthorizationFailed as exc:
            if exc.reason == "invalid_grant":
                # The refresh token is dead: the store forgets it (the access token stays while it
                # lasts), so that no later flow, in this process or the next, presents it again.
                yield from self._keep(context, client.client_id, attrs.evolve(tokens, refresh_token=None))
            raise
        new = attrs.evolve(
            new,
            refresh_token=new.refresh_token if new.refresh_token is not None else tokens.refresh_token,
            scope=new.scope if new.scope is not None else tokens.scope,
        )
        yield from self._keep(context, client.client_id, new, refreshed=True)

    # ------------------------------------------------------------ logout

    def revoke(self, issuer: str, client: ClientInfo, tokens: Tokens) -> Generator[Action, Any, bool]:
        """Revoke ``tokens`` at ``issuer`` (RFC 7009), when it offers revocation: whether it was done.

        The refresh token first (revoking it ends the grant), then the
        access token. Best effort: a refusal or an unreachable server is
        no reason to keep a login the user wants gone.
        """
        headers = {"mcp-protocol-version": self.revision, "accept": "application/json"}
        server: AuthServer | None = None
        for url in server_metadata_urls(issuer, self.revision):
            answer: Answer = yield Send("GET", url, headers)
            if answer.status == 200:
                server = parse_server_metadata(answer.body, issuer, require_pkce=False)
                break
        if server is None or server.revocation_endpoint is None:
            return False
        done = False
        for token, hint in ((tokens.refresh_token, "refresh_token"), (tokens.access_token, "access_token")):
            if not token:
                continue
            auth_headers, auth_form = client_auth(
                client.token_endpoint_auth_method
                if client.token_endpoint_auth_method != "private_key_jwt"
                else "none",
                client.client_id,
                client.client_secret,
            )
            form = {"token": token, "token_type_hint": hint, **auth_form}
            answer = yield Send("POST", server.revocation_endpoint, {**headers, **auth_headers}, form=form)
            done = done or answer.status == 200
        return done


def _challenge_of(answer: Answer) -> Challenge:
    scheme, params = parse_challenge(answer.headers.get("www-authenticate", ""))
    return Challenge(answer.status, scheme, params)
