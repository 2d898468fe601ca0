"""The order of MCP authorization (OAuth 2.1), as a flow without I/O, clock or randomness.

`AuthFlow` is a generator in the manner of httpx's ``Auth.auth_flow``: it
yields what it wants done (`Send`, `SendResource`, `Renew`, `Listen`,
`Browse`, `Sign`, the store's `Restore`, `LoadClient`, `LoadTokens`,
`KeepClient`, `KeepTokens`, `Forget`, `Assertion`) and is sent the answers:
discovery order and fallbacks, registration, the grant, refresh, step-up,
DPoP and every budget. ``trio_mcp.auth`` drives it. What each step decides
from strings, documents and a time (the URLs to try, what to believe, what
to ask for, what came back) is in `trio_mcp._core.oauth`.

Every refusal is an `AuthorizationFailed`, whose message never holds a
token, a code, a secret or a ``state``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from urllib.parse import urlsplit

import attrs

from .._errors import AuthorizationFailed
from .http_wire import parse_challenge, same_origin
from .oauth import (
    JSON,
    REVISIONS,
    AuthServer,
    ClientInfo,
    ProtectedResource,
    Tokens,
    assertion_claims,
    authorization_params,
    authorization_url,
    canonical_resource,
    check_callback,
    check_pkce,
    choose_auth_method,
    client_auth,
    dpop_claims,
    fallback_server,
    initial_scope,
    join_scopes,
    legacy_metadata_url,
    legacy_server,
    parse_registration,
    parse_resource_metadata,
    parse_server_metadata,
    parse_token_error,
    parse_token_response,
    pkce_verifier,
    prm_urls,
    quoted,
    refresh_due,
    refusal,
    registration_body,
    secure_endpoint,
    server_metadata_urls,
    split_scope,
    step_up_scope,
    with_offline_access,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

__all__ = [
    "ASSERTION_TYPE",
    "GRANTS",
    "MAX_LOGINS",
    "MAX_NONCE_RETRIES",
    "MAX_RENEWALS",
    "MAX_STEP_UPS",
    "Answer",
    "Assertion",
    "AuthFlow",
    "AuthorizationFailed",
    "Browse",
    "Challenge",
    "Context",
    "FlowSettings",
    "Forget",
    "KeepClient",
    "KeepTokens",
    "Kept",
    "Listen",
    "LoadClient",
    "LoadTokens",
    "Renew",
    "Restore",
    "Send",
    "SendResource",
    "Sign",
    "covers",
]


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


def shown_url(url: str) -> str:
    """A URL fit for a message: no query, no fragment, no user info."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unreadable URL)"
    return f"{parts.scheme}://{host}{port}{parts.path}"


def covers(resource: str, url: str) -> bool:
    """Whether a login kept for ``resource`` is one for the server at ``url``: same origin, and a prefix of its path."""
    try:
        if not same_origin(resource, url):
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
        return f"<AuthFlow {self.settings.grant} for {shown_url(self.settings.server_url)}>"

    # ------------------------------------------------------------ one MCP request

    def request(self, method: str, url: str, version: str | None = None) -> Generator[Action, Any, None]:
        """The MCP request ``method url``: its headers, and what its answers lead to."""
        if version in REVISIONS:
            self.revision = version
        ours = same_origin(url, self.settings.server_url)
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
                raise refusal(
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
                before = [
                    *split_scope(self.requested),
                    *split_scope(used.scope if used is not None else None),
                ]
                scope = join_scopes([*before, *split_scope(scope)])
        if not renew.may_login or not self.settings.interactive:
            return "none"
        if self.refused:
            raise refusal(
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
            raise refusal(
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
            raise refusal(
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
            raise refusal(
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
            raise refusal(
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
            raise refusal(
                f"the identity provider refused the token exchange (HTTP {answer.status}"
                + (f", {quoted(error[0], 40)})" if error else ")"),
                "token",
                error[0] if error else None,
            )
        try:
            doc = json.loads(answer.body)
        except (ValueError, UnicodeDecodeError):
            doc = None
        assertion = doc.get("access_token") if isinstance(doc, dict) else None
        if not isinstance(assertion, str) or not assertion:
            raise refusal("the identity provider's token exchange gave no assertion", "token")
        return assertion

    def _pin(self, issuer: str, pinned: str | None) -> None:
        """Refuse to send the client's credentials to another authorization server than theirs."""
        bound = pinned or self.bound_issuer
        if bound is None:
            self.bound_issuer = issuer
        elif bound != issuer:
            raise refusal(
                f"the client's credentials are for {shown_url(bound)}, but the server now names {shown_url(issuer)}",
                "registration",
            )

    # ------------------------------------------------------------ discovery

    def _discover(self, challenge: Challenge | None, *, pkce: bool) -> Generator[Action, Any, Context]:
        """The resource and authorization server of the MCP server, found anew."""
        server_url = self.settings.server_url
        headers = {"mcp-protocol-version": self.revision, "accept": "application/json"}
        prm: ProtectedResource | None = None
        hint = challenge.params.get("resource_metadata") if challenge is not None else None
        if hint is not None and not same_origin(hint, server_url) and not hint.startswith("https://"):
            hint = None
        for url in prm_urls(server_url, hint):
            answer: Answer = yield Send("GET", url, headers)
            if answer.status == 200:
                prm = parse_resource_metadata(answer.body, server_url)
                break
            if not 400 <= answer.status < 500:
                raise refusal(
                    f"the protected resource metadata at {shown_url(url)} answered HTTP {answer.status}",
                    "metadata",
                )
        if prm is None:
            context = yield from self._legacy(headers)
        else:
            issuer = prm.authorization_servers[0]
            if not secure_endpoint(issuer):
                raise refusal(
                    f"the authorization server {shown_url(issuer)} is neither https nor on this machine",
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
                raise refusal(
                    f"the authorization server metadata at {shown_url(url)} answered HTTP {answer.status}",
                    "metadata",
                )
        raise refusal(f"the authorization server {shown_url(issuer)} publishes no metadata", "metadata")

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
            raise refusal(
                f"the authorization server metadata at {shown_url(url)} answered HTTP {answer.status}",
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
                raise refusal("DPoP needs the auth extra (pip install 'trio-mcp[auth]')", "no_key")
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
            raise refusal("the token endpoint is neither https nor on this machine", "insecure_endpoint")
        headers: dict[str, str] = {"accept": "application/json"}
        body = dict(form)
        if client is not None:
            method = client.token_endpoint_auth_method
            auth_headers, auth_form = client_auth(method, client.client_id, client.client_secret)
            headers.update(auth_headers)
            body.update(auth_form)
            if method == "private_key_jwt":
                if not self.settings.has_key:
                    raise refusal(
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
