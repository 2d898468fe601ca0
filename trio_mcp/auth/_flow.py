"""The MCP authorization flow as an `httpx2.Auth`, on Trio.

`OAuth` runs the authorization code flow with PKCE for a user;
`ClientCredentials` and `JWTBearer` obtain tokens for a program. All three
share `_Flow`: the token on every request to the MCP server's origin, and,
when the server answers 401 or 403, discovery, the grant, and one retry.

How it stays Trio-safe:

* The flow overrides ``async_auth_flow`` and never reads the MCP server's
  response body, which may be an endless event stream, nor a refusal's
  (whose connection is then closed, not reused for the retry).
* Its own requests (metadata, registration, tokens) go through a client of
  their own, each with its own timeout, following redirects only on the
  same origin; nothing it holds (a client, a listener, a cancel scope)
  lives across a ``yield``.
* One authorization at a time: the first request that needs one runs it,
  the others wait on a `trio.Event` and retry with its token.
* Tokens and rotated refresh tokens are stored under a shield, so that a
  cancellation cannot lose a grant half-way.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import attrs
import httpx2
import trio

from .._core import oauth
from .._core.http_wire import parse_challenge, same_origin
from .._core.oauth import AuthorizationFailed, AuthServer, ProtectedResource
from .._telemetry import token_refreshed
from ._protocols import ClientInfo, MemoryTokenStorage, RedirectHandler, Tokens, TokenStorage

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping

    from ._jose import SigningKey

__all__ = ["ClientCredentials", "EnterpriseManaged", "JWTBearer", "OAuth"]

#: The default timeout of each request the flow makes itself, in seconds.
DEFAULT_TIMEOUT: Final = 30.0
#: The largest metadata, registration or token response read, in bytes.
MAX_BODY: Final = 256 * 1024
#: Same-origin redirects followed on the flow's own requests.
MAX_REDIRECTS: Final = 3
#: Step-ups (403 ``insufficient_scope``) tried per request.
MAX_STEP_UPS: Final = 1
#: New grants tried per request after a 401.
MAX_RENEWALS: Final = 2
#: Retries with a server's DPoP nonce, per request and per token request.
MAX_NONCE_RETRIES: Final = 2
#: How long storing tokens may take once they are granted (shielded), in seconds.
STORE_TIMEOUT: Final = 10.0

JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class _CannotAuthorize(Exception):
    """Nothing more to try: the refusal goes back to the caller as it is (`AuthRequired`)."""


@attrs.define
class _Challenge:
    status: int
    scheme: str
    params: dict[str, str]

    @classmethod
    def of(cls, response: httpx2.Response) -> _Challenge:
        scheme, params = parse_challenge(response.headers.get("www-authenticate", ""))
        return cls(response.status_code, scheme, params)


class _Unread(httpx2.AsyncByteStream):
    """A refusal's body, left unread: httpx2 reads it (to nothing) before the retry goes out.

    Closing a response before its end closes its connection instead of
    putting it back in the pool. That is the point: the retry may go out
    long after the refusal (a person logged in meanwhile), by when the
    server may have closed that idle connection, and a POST sent on it
    would fail. And a hostile server's endless refusal costs nothing.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __aiter__(self) -> _Unread:
        return self

    async def __anext__(self) -> bytes:
        raise StopAsyncIteration

    async def aclose(self) -> None:
        await self._stream.aclose()


@attrs.define
class _Context:
    """What discovery found for one MCP server."""

    resource: str
    issuer: str
    server: AuthServer
    prm: ProtectedResource | None


class _Flow(httpx2.Auth):
    """The part every grant shares: tokens on requests, discovery, token requests, single flight."""

    def __init__(
        self,
        server_url: str,
        *,
        storage: TokenStorage | None,
        scope: str | None,
        timeout: float,
        http_client: httpx2.AsyncClient | None,
        dpop: bool | None,
    ) -> None:
        self._server_url = server_url
        self._storage: TokenStorage = storage if storage is not None else MemoryTokenStorage()
        self._scope = scope
        self._timeout = timeout
        self._http = http_client
        self._dpop = dpop
        self._tokens: Tokens | None = None
        self._context: _Context | None = None
        self._client: ClientInfo | None = None
        self._requested: str | None = None
        self._busy: trio.Event | None = None
        self._dpop_key: SigningKey | None = None
        #: A grant that signs its client assertions sets this; `_signing_key` loads it.
        self._private_key: str | bytes | None = None
        self._key: SigningKey | None = None
        self._rs_nonce: str | None = None
        self._as_nonce: str | None = None
        self._revision: str = oauth.REVISIONS[-1]
        self._bound_issuer: str | None = None

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} for {self._server_url!r}: {'a token' if self._tokens else 'no token'}>"
        )

    @property
    def tokens(self) -> Tokens | None:
        """The tokens in use, or `None` before the first grant."""
        return self._tokens

    # ------------------------------------------------------------ httpx2

    def sync_auth_flow(self, request: httpx2.Request) -> Any:
        """Not supported: the flow runs on an `httpx2.AsyncClient` only."""
        raise RuntimeError(f"{type(self).__name__} needs an httpx2.AsyncClient")

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """Send ``request`` with a token; on a 401 or 403, obtain one and send it again."""
        version = request.headers.get("mcp-protocol-version")
        if version in oauth.REVISIONS:
            self._revision = version
        await self._ready()
        used = self._apply(request)
        response = yield request
        renewals = step_ups = nonces = 0
        while response.status_code in (401, 403):
            challenge = _Challenge.of(response)
            try:
                if (
                    challenge.status == 401
                    and challenge.params.get("error") == "use_dpop_nonce"
                    and response.headers.get("dpop-nonce")
                    and used is not None
                    and nonces < MAX_NONCE_RETRIES
                ):
                    nonces += 1
                    self._rs_nonce = response.headers["dpop-nonce"]
                elif challenge.status == 403:
                    if challenge.params.get("error") != "insufficient_scope" or step_ups >= MAX_STEP_UPS:
                        return
                    step_ups += 1
                    await self._renew(used, challenge, step_up=True)
                elif renewals < MAX_RENEWALS:
                    renewals += 1
                    await self._renew(used, challenge, step_up=False, reuse=renewals == 1)
                else:
                    return
            except _CannotAuthorize:
                return
            response.stream = _Unread(response.stream)
            used = self._apply(request)
            response = yield request

    # ------------------------------------------------------------ tokens on requests

    def _apply(self, request: httpx2.Request) -> Tokens | None:
        """Put the token (and a DPoP proof) on ``request``, if it goes to the MCP server's origin."""
        tokens = self._tokens
        if tokens is None or not same_origin(str(request.url), self._server_url):
            return None
        if tokens.token_type == "DPoP" and self._dpop_key is not None:
            request.headers["authorization"] = f"DPoP {tokens.access_token}"
            request.headers["dpop"] = self._proof(
                request.method, str(request.url), tokens.access_token, self._rs_nonce
            )
        else:
            request.headers["authorization"] = f"Bearer {tokens.access_token}"
        return tokens

    async def _ready(self) -> None:
        """Wait for an authorization under way; refresh a token about to expire."""
        while self._busy is not None:
            await self._busy.wait()
        tokens = self._tokens
        if (
            tokens is not None
            and tokens.refresh_token is not None
            and oauth.needs_refresh(tokens.expires_at, time.time())
        ):
            # On failure the request goes out with what there is; a 401 starts over.
            with contextlib.suppress(AuthorizationFailed, _CannotAuthorize):
                await self._single_flight(tokens, lambda http: self._refresh_only(http))
        else:
            await trio.lowlevel.checkpoint()

    async def _renew(
        self, used: Tokens | None, challenge: _Challenge, *, step_up: bool, reuse: bool = True
    ) -> None:
        await self._single_flight(used, lambda http: self._obtain(http, used, challenge, step_up, reuse))

    async def _single_flight(
        self, used: Tokens | None, run: Callable[[httpx2.AsyncClient], Awaitable[None]]
    ) -> None:
        """Run ``run`` unless another task is already renewing ``used``; then just take its result."""
        while self._busy is not None:
            await self._busy.wait()
            if self._tokens is not used:
                return
        if self._tokens is not used:
            await trio.lowlevel.checkpoint()
            return
        busy = self._busy = trio.Event()
        try:
            if self._http is not None:
                await run(self._http)
            else:
                async with httpx2.AsyncClient(
                    follow_redirects=False, timeout=self._timeout, verify=_ssl_context()
                ) as http:
                    await run(http)
        finally:
            self._busy = None
            busy.set()

    async def _obtain(
        self, http: httpx2.AsyncClient, used: Tokens | None, challenge: _Challenge, step_up: bool, reuse: bool
    ) -> None:
        raise NotImplementedError

    async def _refresh_only(self, http: httpx2.AsyncClient) -> None:
        context, client, tokens = self._context, self._client, self._tokens
        if context is None or client is None or tokens is None or tokens.refresh_token is None:
            raise _CannotAuthorize
        await self._refresh(http, context, client, tokens)

    # ------------------------------------------------------------ HTTP

    async def _send(
        self,
        http: httpx2.AsyncClient,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        data: Mapping[str, str] | None = None,
        json: Any = None,
    ) -> httpx2.Response:
        """One request of the flow's own, body read (capped), same-origin redirects followed."""
        for _ in range(MAX_REDIRECTS + 1):
            request = http.build_request(
                method,
                url,
                headers=headers,
                data=data,
                json=json,
                timeout=httpx2.Timeout(self._timeout),
            )
            try:
                response = await http.send(request, stream=True, follow_redirects=False)
            except httpx2.HTTPError as exc:
                raise AuthorizationFailed(
                    f"{method} {_where(url)} failed: {type(exc).__name__}", reason="metadata"
                ) from None
            try:
                location = response.headers.get("location")
                redirect = response.status_code in (307, 308) or (
                    method == "GET" and response.status_code in (301, 302, 303)
                )
                if redirect and location is not None:
                    target = str(httpx2.URL(url).join(location))
                    if not same_origin(url, target):
                        raise AuthorizationFailed(
                            f"{method} {_where(url)} was redirected to another origin; not followed",
                            reason="metadata",
                        )
                    url = target
                    continue
                body = bytearray()
                async for chunk in response.aiter_raw():
                    body += chunk
                    if len(body) > MAX_BODY:
                        raise AuthorizationFailed(
                            f"{method} {_where(url)} answered with over {MAX_BODY} bytes", reason="metadata"
                        )
                return httpx2.Response(
                    response.status_code, headers=response.headers, content=bytes(body), request=request
                )
            finally:
                await response.aclose()
        raise AuthorizationFailed(f"{method} {_where(url)}: too many redirects", reason="metadata")

    # ------------------------------------------------------------ discovery

    async def _discover(
        self, http: httpx2.AsyncClient, challenge: _Challenge | None, *, pkce: bool
    ) -> _Context:
        """The resource and authorization server of the MCP server, found anew."""
        server_url = self._server_url
        headers = {"mcp-protocol-version": self._revision}
        prm: ProtectedResource | None = None
        hint = challenge.params.get("resource_metadata") if challenge is not None else None
        if hint is not None and not same_origin(hint, server_url) and not hint.startswith("https://"):
            hint = None
        for url in oauth.prm_urls(server_url, hint):
            response = await self._send(http, "GET", url, headers=headers)
            if response.status_code == 200:
                prm = oauth.parse_resource_metadata(response.content, server_url)
                break
            if not 400 <= response.status_code < 500:
                raise AuthorizationFailed(
                    f"the protected resource metadata at {_where(url)} answered HTTP {response.status_code}",
                    reason="metadata",
                )
        if prm is None:
            return await self._legacy(http, headers)
        issuer = prm.authorization_servers[0]
        if not oauth.secure_endpoint(issuer):
            raise AuthorizationFailed(
                f"the authorization server {_where(issuer)} is neither https nor on this machine",
                reason="insecure_endpoint",
            )
        for url in oauth.server_metadata_urls(issuer, self._revision):
            response = await self._send(http, "GET", url, headers=headers)
            if response.status_code == 200:
                server = oauth.parse_server_metadata(
                    response.content, issuer, require_pkce=pkce and self._revision >= "2025-11-25"
                )
                if pkce and server.code_challenge_methods_supported is not None:
                    oauth.check_pkce(server)
                return _Context(prm.resource, issuer, server, prm)
            if not 400 <= response.status_code < 500:
                raise AuthorizationFailed(
                    f"the authorization server metadata at {_where(url)} answered HTTP {response.status_code}",
                    reason="metadata",
                )
        raise AuthorizationFailed(
            f"the authorization server {_where(issuer)} publishes no metadata", reason="metadata"
        )

    async def _legacy(self, http: httpx2.AsyncClient, headers: Mapping[str, str]) -> _Context:
        """The 2025-03-26 discovery: metadata at the server's origin, else the default endpoints."""
        url = oauth.legacy_metadata_url(self._server_url)
        response = await self._send(http, "GET", url, headers=headers)
        if response.status_code == 200:
            server = oauth.legacy_server(response.content, self._server_url)
            if server.code_challenge_methods_supported is not None:
                oauth.check_pkce(server)
        elif 400 <= response.status_code < 500:
            server = oauth.fallback_server(self._server_url)
        else:
            raise AuthorizationFailed(
                f"the authorization server metadata at {_where(url)} answered HTTP {response.status_code}",
                reason="metadata",
            )
        return _Context(oauth.canonical_resource(self._server_url), server.issuer, server, None)

    # ------------------------------------------------------------ token requests

    def _use_dpop(self, server: AuthServer) -> bool:
        """Whether to bind tokens with DPoP: asked for, or (by default) offered with ES256 and signable here."""
        if self._dpop is False:
            return False
        offered = "ES256" in server.dpop_algs
        if self._dpop is None and not offered:
            return False
        if self._dpop_key is None:
            try:
                from ._jose import generate_ec_key
            except ImportError:
                if self._dpop is None:
                    return False
                raise AuthorizationFailed(
                    "DPoP needs the auth extra (pip install 'trio-mcp[auth]')", reason="no_key"
                ) from None
            self._dpop_key = generate_ec_key("ES256")
        return True

    def _proof(self, method: str, url: str, access_token: str | None, nonce: str | None) -> str:
        key = self._dpop_key
        assert key is not None
        claims = oauth.dpop_claims(
            method=method,
            url=url,
            now=time.time(),
            jti=secrets.token_urlsafe(16),
            access_token=access_token,
            nonce=nonce,
        )
        return key.sign(claims, typ="dpop+jwt", jwk=key.public_jwk())

    async def _token_request(
        self,
        http: httpx2.AsyncClient,
        context: _Context,
        form: dict[str, str],
        *,
        client: ClientInfo | None,
        signing_key: SigningKey | None = None,
        scope: str | None = None,
    ) -> Tokens:
        """POST ``form`` to the token endpoint with the client's authentication; the tokens granted."""
        server = context.server
        if not oauth.secure_endpoint(server.token_endpoint):
            raise AuthorizationFailed(
                "the token endpoint is neither https nor on this machine", reason="insecure_endpoint"
            )
        headers: dict[str, str] = {"accept": "application/json"}
        if client is not None:
            method = client.token_endpoint_auth_method
            auth_headers, auth_form = oauth.client_auth(method, client.client_id, client.client_secret)
            headers.update(auth_headers)
            form = {**form, **auth_form}
            if method == "private_key_jwt":
                if signing_key is None:
                    raise AuthorizationFailed(
                        "the client authenticates with private_key_jwt but has no private key",
                        reason="no_key",
                    )
                claims = oauth.assertion_claims(
                    client_id=client.client_id,
                    audience=context.issuer,
                    now=time.time(),
                    jti=secrets.token_urlsafe(16),
                )
                form["client_assertion_type"] = ASSERTION_TYPE
                form["client_assertion"] = signing_key.sign(claims, typ="JWT")
        dpop = self._use_dpop(server)
        for attempt in range(MAX_NONCE_RETRIES + 1):
            if dpop:
                headers["dpop"] = self._proof("POST", server.token_endpoint, None, self._as_nonce)
            response = await self._send(http, "POST", server.token_endpoint, headers=headers, data=form)
            nonce = response.headers.get("dpop-nonce")
            if dpop and nonce and response.status_code in (400, 401) and attempt < MAX_NONCE_RETRIES:
                error = oauth.parse_token_error(response.content)
                if error is not None and error[0] == "use_dpop_nonce":
                    self._as_nonce = nonce
                    continue
            if dpop and nonce:
                self._as_nonce = nonce
            granted = oauth.parse_token_response(
                response.status_code, response.content, now=time.time(), requested_scope=scope
            )
            return Tokens(
                granted.access_token,
                granted.token_type,
                granted.refresh_token,
                granted.scope,
                granted.expires_at,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    async def _keep(self, context: _Context, client_id: str, tokens: Tokens) -> None:
        """Use ``tokens`` from now on, and store them; a cancellation cannot stop the store half-way."""
        self._tokens = tokens
        with trio.CancelScope(shield=True), trio.move_on_after(STORE_TIMEOUT):
            await self._storage.set_tokens(context.resource, context.issuer, client_id, tokens)

    async def _refresh(
        self, http: httpx2.AsyncClient, context: _Context, client: ClientInfo, tokens: Tokens
    ) -> None:
        """A refresh grant; the new tokens (the old refresh token kept unless rotated) are stored first."""
        assert tokens.refresh_token is not None
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token,
            "resource": context.resource,
        }
        new = await self._token_request(
            http, context, form, client=client, signing_key=self._signing_key(), scope=tokens.scope
        )
        new = attrs.evolve(
            new,
            refresh_token=new.refresh_token if new.refresh_token is not None else tokens.refresh_token,
            scope=new.scope if new.scope is not None else tokens.scope,
        )
        await self._keep(context, client.client_id, new)
        token_refreshed(context.issuer)

    def _signing_key(self) -> SigningKey | None:
        """The client's private key (``private_key_jwt``), loaded once, when a flow first signs."""
        if self._private_key is None:
            return None
        if self._key is None:
            from ._jose import load_private_key

            self._key = load_private_key(self._private_key)
        return self._key

    def _pin(self, issuer: str, pinned: str | None) -> None:
        """Refuse to send the client's credentials to another authorization server than theirs.

        Credentials given without an issuer belong to the first one they are
        used with: a protected resource that names another later (a hostile
        one, say) does not get them.
        """
        bound = pinned or self._bound_issuer
        if bound is None:
            self._bound_issuer = issuer
        elif bound != issuer:
            raise AuthorizationFailed(
                f"the client's credentials are for {_where(bound)}, but the server now names {_where(issuer)}",
                reason="registration",
            )

    async def _stored(self, context: _Context, client: ClientInfo) -> Tokens | None:
        return await self._storage.get_tokens(context.resource, context.issuer, client.client_id)


_SSL_CONTEXT: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    """The TLS context of the flow's own clients, made once: loading the CA bundle is the costly part of a client."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        _SSL_CONTEXT = httpx2.create_ssl_context()
    return _SSL_CONTEXT


def _where(url: str) -> str:
    """A URL fit for a message: no query, no fragment, no user info."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unreadable URL)"
    return f"{parts.scheme}://{host}{port}{parts.path}"


class OAuth(_Flow):
    """The MCP authorization flow for a user: authorization code with PKCE, as an `httpx2.Auth`.

    Give it to a `trio_mcp.HTTPTarget` (``auth=``). The first request goes out
    without a token; when the server answers 401, the flow finds the
    server's authorization server (protected resource metadata, then
    authorization server metadata, or the 2025-03-26 fallback), reuses the
    tokens in ``storage`` or refreshes them, and otherwise registers the
    client (pre-registered, a Client ID Metadata Document, or dynamic
    registration) and sends the user to log in through ``redirect``. A 403
    ``insufficient_scope`` asks once for the union of the scopes.

    The login runs within the request that needed it, under that request's
    cancel scope: give it time for a person to log in, or log in beforehand
    (``trio-mcp login`` keeps the tokens in a file store that later
    processes share). The first request of a connection is the era probe,
    bounded by the client's ``probe_timeout`` (10 s by default), and then
    ``initialize``, bounded by ``handshake_timeout``: when a person may have
    to log in on connecting, give both the time it takes.

    Args:
        server_url: The MCP server's URL (the same as the target's).
        redirect: The user's part of the login: a `RedirectHandler`. Without
            one the flow uses stored or refreshed tokens only, and a server
            that needs a login raises `trio_mcp.AuthRequired` as without the flow.
        storage: Where registrations and tokens are kept; a
            `MemoryTokenStorage` by default.
        client: A pre-registered client (its ``issuer`` empty, or the
            authorization server's); the flow never registers another.
        client_metadata_url: The HTTPS URL of a Client ID Metadata Document
            of yours, used as the ``client_id`` where the authorization
            server supports them.
        client_name: The name a dynamic registration gives.
        scope: The scope to ask for, instead of the spec's choice (the
            challenge's, else every scope the server names).
        private_key: A PEM private key for ``private_key_jwt`` (needs the
            ``auth`` extra).
        dpop: Whether to bind tokens with DPoP (RFC 9449): `None` (the
            default) when the authorization server supports ES256; needs the
            ``auth`` extra.
        timeout: The timeout of each request the flow makes itself, in seconds.
        http_client: An `httpx2.AsyncClient` for those requests (proxies,
            TLS); not closed. By default one is made for each grant (it
            honours the proxy variables of the environment).
    """

    def __init__(
        self,
        server_url: str,
        *,
        redirect: RedirectHandler | None = None,
        storage: TokenStorage | None = None,
        client: ClientInfo | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "trio-mcp",
        scope: str | None = None,
        private_key: str | bytes | None = None,
        dpop: bool | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            server_url, storage=storage, scope=scope, timeout=timeout, http_client=http_client, dpop=dpop
        )
        self._redirect = redirect
        self._preregistered = client
        self._cimd = client_metadata_url
        self._client_name = client_name
        self._private_key = private_key

    async def _obtain(
        self, http: httpx2.AsyncClient, used: Tokens | None, challenge: _Challenge, step_up: bool, reuse: bool
    ) -> None:
        previous = self._context
        context = self._context = await self._discover(http, challenge, pkce=True)
        moved = previous is not None and previous.issuer != context.issuer
        if moved:
            self._client = None
        if not step_up and reuse:
            client = self._client or await self._known_client(context)
            if client is not None:
                self._client = client
                stored = await self._stored(context, client)
                if (
                    stored is not None
                    and stored != used
                    and not oauth.needs_refresh(stored.expires_at, time.time())
                ):
                    self._tokens = stored
                    return
                current = stored if stored is not None else used
                if current is not None and current.refresh_token is not None and not moved:
                    try:
                        await self._refresh(http, context, client, current)
                        return
                    except AuthorizationFailed as exc:
                        if exc.reason not in ("invalid_grant", "token"):
                            raise
        if step_up:
            granted = used.scope if used is not None else None
            scope = oauth.step_up_scope(self._requested, granted, challenge.params.get("scope"))
            if scope is None:
                raise _CannotAuthorize
        else:
            scope = self._scope or oauth.initial_scope(challenge.params.get("scope"), context.prm)
        await self._authorize(http, context, oauth.with_offline_access(scope, context.server))

    async def _known_client(self, context: _Context) -> ClientInfo | None:
        pre = self._preregistered
        if pre is not None:
            self._pin(context.issuer, pre.issuer or None)
            return attrs.evolve(pre, issuer=context.issuer)
        return await self._storage.get_client(context.resource, context.issuer)

    async def _authorize(self, http: httpx2.AsyncClient, context: _Context, scope: str | None) -> None:
        """The authorization code grant: the user logs in through the redirect handler."""
        if self._redirect is None:
            raise _CannotAuthorize
        server = context.server
        if not oauth.secure_endpoint(server.authorization_endpoint):
            raise AuthorizationFailed(
                "the authorization endpoint is neither https nor on this machine", reason="insecure_endpoint"
            )
        verifier = oauth.pkce_verifier(secrets.token_bytes(32))
        state = secrets.token_urlsafe(32)
        async with self._redirect.listen() as pending:
            redirect_uri = pending.redirect_uri
            client = await self._client_for(http, context, redirect_uri, scope)
            params = oauth.authorization_params(
                client_id=client.client_id,
                redirect_uri=redirect_uri,
                state=state,
                verifier=verifier,
                resource=context.resource,
                scope=scope,
            )
            self._requested = scope
            answer = await pending.complete(oauth.authorization_url(server.authorization_endpoint, params))
        code = oauth.check_callback(
            answer, state=state, issuer=server.issuer, iss_supported=server.iss_parameter_supported
        )
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": context.resource,
        }
        tokens = await self._token_request(
            http, context, form, client=client, signing_key=self._signing_key(), scope=scope
        )
        await self._keep(context, client.client_id, tokens)

    async def _client_for(
        self, http: httpx2.AsyncClient, context: _Context, redirect_uri: str, scope: str | None
    ) -> ClientInfo:
        """The client to authorize as: pre-registered, known, a metadata document, or registered now."""
        client = self._client or await self._known_client(context)
        if client is not None and (
            self._preregistered is not None
            or client.client_id == self._cimd
            or not client.redirect_uris
            or redirect_uri in client.redirect_uris
        ):
            self._client = client
            return client
        server = context.server
        if self._cimd is not None and server.cimd_supported:
            client = ClientInfo(self._cimd, None, "none", (redirect_uri,), context.issuer)
        elif server.registration_endpoint is not None:
            client = await self._register(http, context, redirect_uri, scope)
        else:
            raise AuthorizationFailed(
                "the authorization server offers no registration and no client is configured; give a"
                " pre-registered client",
                reason="registration",
            )
        self._client = client
        with trio.CancelScope(shield=True), trio.move_on_after(STORE_TIMEOUT):
            await self._storage.set_client(context.resource, context.issuer, client)
        return client

    async def _register(
        self, http: httpx2.AsyncClient, context: _Context, redirect_uri: str, scope: str | None
    ) -> ClientInfo:
        server = context.server
        assert server.registration_endpoint is not None
        methods = server.token_endpoint_auth_methods_supported
        method = next(
            (m for m in ("client_secret_basic", "client_secret_post", "none") if m in methods), "none"
        )
        if self._private_key is not None and "private_key_jwt" in methods:
            method = "private_key_jwt"
        body = oauth.registration_body(
            client_name=self._client_name,
            redirect_uris=[redirect_uri],
            server=server,
            scope=scope,
            method=method,
        )
        response = await self._send(http, "POST", server.registration_endpoint, json=body)
        registered = oauth.parse_registration(response.status_code, response.content, body)
        return ClientInfo(
            registered.client_id,
            registered.client_secret,
            registered.token_endpoint_auth_method,
            registered.redirect_uris,
            context.issuer,
            registered.extra,
        )


class ClientCredentials(_Flow):
    """Tokens for a program, without a user: the client credentials grant (SEP-1046), as an `httpx2.Auth`.

    The client authenticates with its secret (``client_secret_basic`` or
    ``client_secret_post``, as the authorization server supports) or with a
    private key (``private_key_jwt``: give ``private_key``, which needs the
    ``auth`` extra). A 403 ``insufficient_scope`` is returned as it is.

    Args:
        server_url: The MCP server's URL.
        client_id: The client's identifier at the authorization server.
        client_secret: Its secret, or `None` with ``private_key``.
        private_key: A PEM private key (EC P-256 signs ES256, RSA RS256).
        method: The authentication method, instead of the flow's choice.
        issuer: The issuer of the authorization server the credentials are
            for; by default the first one the server names. They are never
            sent to another.
        scope: The scope to ask for (by default the challenge's, else every
            scope the server names).
        storage, timeout, http_client, dpop: As for `OAuth`.
    """

    def __init__(
        self,
        server_url: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        private_key: str | bytes | None = None,
        method: str | None = None,
        issuer: str | None = None,
        scope: str | None = None,
        storage: TokenStorage | None = None,
        dpop: bool | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            server_url, storage=storage, scope=scope, timeout=timeout, http_client=http_client, dpop=dpop
        )
        self._issuer = issuer
        if client_secret is None and private_key is None:
            raise ValueError("client credentials need a client_secret or a private_key")
        self._client_id = client_id
        self._secret = client_secret
        self._private_key = private_key
        self._method = method

    async def _obtain(
        self, http: httpx2.AsyncClient, used: Tokens | None, challenge: _Challenge, step_up: bool, reuse: bool
    ) -> None:
        if step_up:
            raise _CannotAuthorize
        context = self._context = await self._discover(http, challenge, pkce=False)
        self._pin(context.issuer, self._issuer)
        method = oauth.choose_auth_method(
            context.server,
            has_secret=self._secret is not None,
            has_key=self._private_key is not None,
            registered=self._method,
        )
        client = self._client = ClientInfo(self._client_id, self._secret, method, (), context.issuer)
        scope = self._scope or oauth.initial_scope(challenge.params.get("scope"), context.prm)
        form = {"grant_type": "client_credentials", "resource": context.resource}
        if scope:
            form["scope"] = scope
        self._requested = scope
        tokens = await self._token_request(
            http, context, form, client=client, signing_key=self._signing_key(), scope=scope
        )
        await self._keep(context, client.client_id, tokens)


class JWTBearer(_Flow):
    """Tokens for a workload from an identity it already holds: the JWT bearer grant (RFC 7523, SEP-1933).

    The workload's assertion (a JWT from its platform) is exchanged at the
    authorization server's token endpoint; after a refusal the flow neither
    retries nor tries another grant.

    Args:
        server_url: The MCP server's URL.
        assertion: The JWT, or an async function that returns a fresh one.
        client_id: The client's identifier, sent along (or with
            ``client_secret``, as ``client_secret_basic``).
        client_secret: The client's secret, if the server authenticates it.
        scope, storage, timeout, http_client, dpop: As for `OAuth`.
    """

    def __init__(
        self,
        server_url: str,
        *,
        assertion: str | Callable[[], Awaitable[str]],
        client_id: str | None = None,
        client_secret: str | None = None,
        scope: str | None = None,
        storage: TokenStorage | None = None,
        dpop: bool | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            server_url, storage=storage, scope=scope, timeout=timeout, http_client=http_client, dpop=dpop
        )
        self._assertion = assertion
        self._client_id = client_id
        self._secret = client_secret
        self._failed = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} for {self._server_url!r}>"

    async def _get_assertion(self, http: httpx2.AsyncClient, context: _Context, scope: str | None) -> str:
        return self._assertion if isinstance(self._assertion, str) else await self._assertion()

    async def _obtain(
        self, http: httpx2.AsyncClient, used: Tokens | None, challenge: _Challenge, step_up: bool, reuse: bool
    ) -> None:
        if step_up or self._failed:
            raise _CannotAuthorize
        context = self._context = await self._discover(http, challenge, pkce=False)
        self._pin(context.issuer, None)
        scope = self._scope or oauth.initial_scope(challenge.params.get("scope"), context.prm)
        try:
            assertion = await self._get_assertion(http, context, scope)
            form = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": context.resource}
            if scope:
                form["scope"] = scope
            client = None
            if self._client_id is not None and self._secret is not None:
                client = ClientInfo(self._client_id, self._secret, "client_secret_basic", (), context.issuer)
            elif self._client_id is not None:
                form["client_id"] = self._client_id
            tokens = await self._token_request(http, context, form, client=client, scope=scope)
        except AuthorizationFailed:
            self._failed = True
            raise
        await self._keep(context, self._client_id or "", tokens)


TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"


class EnterpriseManaged(JWTBearer):
    """Tokens through the enterprise's identity provider (SEP-990, Enterprise-Managed Authorization).

    The user's ID token from the enterprise's identity provider (IdP) is
    exchanged there (RFC 8693) for an Identity Assertion JWT Authorization
    Grant (ID-JAG) aimed at the MCP server's authorization server, which
    then grants an access token for it (the JWT bearer grant, RFC 7523),
    authenticating the client with ``client_secret_basic``. No browser is
    involved.

    Args:
        server_url: The MCP server's URL.
        id_token: The user's ID token from the IdP, or an async function
            that returns a fresh one.
        idp_token_endpoint: The IdP's token endpoint (``https``, or ``http``
            on loopback).
        client_id, client_secret: The client's registration at the MCP
            server's authorization server.
        idp_client_id: The client's identifier at the IdP, if it wants one.
        scope, storage, timeout, http_client, dpop: As for `OAuth`.
    """

    def __init__(
        self,
        server_url: str,
        *,
        id_token: str | Callable[[], Awaitable[str]],
        idp_token_endpoint: str,
        client_id: str,
        client_secret: str,
        idp_client_id: str | None = None,
        scope: str | None = None,
        storage: TokenStorage | None = None,
        dpop: bool | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            server_url,
            assertion="",
            client_id=client_id,
            client_secret=client_secret,
            scope=scope,
            storage=storage,
            dpop=dpop,
            timeout=timeout,
            http_client=http_client,
        )
        self._id_token = id_token
        self._idp_token_endpoint = idp_token_endpoint
        self._idp_client_id = idp_client_id

    async def _get_assertion(self, http: httpx2.AsyncClient, context: _Context, scope: str | None) -> str:
        """The ID-JAG, from the IdP's token exchange."""
        if not oauth.secure_endpoint(self._idp_token_endpoint):
            raise AuthorizationFailed(
                "the identity provider's token endpoint is neither https nor on this machine",
                reason="insecure_endpoint",
            )
        id_token = self._id_token if isinstance(self._id_token, str) else await self._id_token()
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
        if self._idp_client_id is not None:
            form["client_id"] = self._idp_client_id
        response = await self._send(
            http, "POST", self._idp_token_endpoint, headers={"accept": "application/json"}, data=form
        )
        if response.status_code != 200:
            error = oauth.parse_token_error(response.content)
            raise AuthorizationFailed(
                f"the identity provider refused the token exchange (HTTP {response.status_code}"
                + (f", {error[0][:40]!r})" if error else ")"),
                reason="token",
                error=error[0] if error else None,
            )
        try:
            doc = response.json()
        except ValueError:
            doc = None
        assertion = doc.get("access_token") if isinstance(doc, dict) else None
        if not isinstance(assertion, str) or not assertion:
            raise AuthorizationFailed(
                "the identity provider's token exchange gave no assertion", reason="token"
            )
        return assertion
