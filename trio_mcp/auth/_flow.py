"""The MCP authorization flow as an `httpx2.Auth`, on Trio.

`OAuth` runs the authorization code flow with PKCE for a user;
`ClientCredentials`, `JWTBearer` and `EnterpriseManaged` obtain tokens for a
program. Every decision of the flow (discovery order and fallbacks,
registration, the grant, refresh, step-up, DPoP, every budget) is made by
the pure `trio_mcp._core.oauth_flow.AuthFlow`; this module only carries its
actions out:

* the MCP request goes out with the headers the flow gives; its response
  body is never read (it may be an endless event stream), nor a refusal's
  (whose connection is then closed, not reused for the retry);
* the flow's own requests (metadata, registration, tokens) go through a
  client of their own, each bounded by one deadline (``request_timeout``),
  following redirects only on the same origin; nothing it holds (a client,
  a listener, a cancel scope) lives across a ``yield``;
* one grant at a time: the first request that needs one runs it, the
  others wait on a `trio.Event` and retry with its token;
* tokens and rotated refresh tokens are stored under a shield, so that a
  cancellation cannot lose a grant half-way.
"""

from __future__ import annotations

import contextlib
import importlib.util
import secrets
import time
from typing import TYPE_CHECKING, Any, Final

import attrs
import httpx2
import trio

from .._core import oauth, oauth_flow, redirects
from .._core.oauth import AuthorizationFailed
from .._core.oauth_flow import FlowSettings
from .._telemetry import token_refreshed
from ._protocols import ClientInfo, MemoryTokenStorage, RedirectHandler, Tokens, TokenStorage

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncGenerator, Awaitable, Callable, Generator

    from ._jose import SigningKey

__all__ = ["ClientCredentials", "EnterpriseManaged", "JWTBearer", "OAuth"]

#: The default deadline of each request the flow makes itself, in seconds.
DEFAULT_TIMEOUT: Final = 30.0
#: The largest metadata, registration or token response read, in bytes.
MAX_BODY: Final = 256 * 1024
#: How long storing tokens may take once they are granted (shielded), in seconds.
STORE_TIMEOUT: Final = 10.0


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


def _can_sign() -> bool:
    """Whether the ``auth`` extra is there (looked for, not imported: the plain path never loads it)."""
    return importlib.util.find_spec("cryptography") is not None


class _Flow(httpx2.Auth):
    """The part every grant shares: the driver of the pure flow, single flight, storage."""

    def __init__(
        self,
        settings: FlowSettings,
        *,
        storage: TokenStorage | None,
        request_timeout: float,
        http_client: httpx2.AsyncClient | None,
        redirect: RedirectHandler | None = None,
        private_key: str | bytes | None = None,
        alg: str | None = None,
        kid: str | None = None,
        signer: Callable[[bytes], bytes] | None = None,
    ) -> None:
        if request_timeout <= 0:
            raise ValueError("request_timeout must be positive")
        if signer is not None and private_key is not None:
            raise ValueError("give a private_key or a signer, not both")
        if signer is not None and alg is None:
            raise ValueError("a signer needs its algorithm (alg=)")
        self._private_key = private_key
        self._alg = alg
        self._kid = kid
        self._signer = signer
        self._key: SigningKey | None = None
        if private_key is not None:
            self._client_key()  # a bad key is the caller's error, said at once
        has_key = private_key is not None or signer is not None
        self._core = oauth_flow.AuthFlow(
            attrs.evolve(settings, has_key=has_key, can_dpop=_can_sign()),
            now=time.time,
            random=secrets.token_bytes,
        )
        self._server_url = settings.server_url
        self._storage: TokenStorage = storage if storage is not None else MemoryTokenStorage()
        self._request_timeout = request_timeout
        self._http = http_client
        self._redirect = redirect
        self._busy: trio.Event | None = None
        self._dpop_key: SigningKey | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} for {self._server_url!r}: {'a token' if self.tokens else 'no token'}>"

    @property
    def tokens(self) -> Tokens | None:
        """The tokens in use, or `None` before the first grant."""
        return self._core.tokens

    # ------------------------------------------------------------ httpx2

    def sync_auth_flow(self, request: httpx2.Request) -> Any:
        """Not supported: the flow runs on an `httpx2.AsyncClient` only."""
        raise RuntimeError(f"{type(self).__name__} needs an httpx2.AsyncClient")

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """Send ``request`` with a token; on a 401 or 403, obtain one and send it again."""
        steps = self._core.request(
            request.method, str(request.url), request.headers.get("mcp-protocol-version")
        )
        answer: Any = None
        response: httpx2.Response | None = None
        while True:
            try:
                action = steps.send(answer)
            except StopIteration:
                return
            if isinstance(action, oauth_flow.SendResource):
                for name in ("authorization", "dpop"):
                    if name in request.headers:
                        del request.headers[name]
                request.headers.update(action.headers)
                if response is not None:
                    response.stream = _Unread(response.stream)
                response = yield request
                answer = oauth_flow.Answer(response.status_code, _headers(response.headers))
            elif isinstance(action, oauth_flow.Sign):
                answer = self._sign(action)
                await trio.lowlevel.checkpoint()
            elif isinstance(action, oauth_flow.Renew):
                answer = await self._single_flight(action)
            else:  # pragma: no cover - the request flow yields nothing else
                raise AssertionError(f"unexpected action {action!r}")

    # ------------------------------------------------------------ one grant at a time

    async def _single_flight(self, renew: oauth_flow.Renew) -> str:
        """Run the grant ``renew`` asks for, unless another task replaced ``renew.used`` meanwhile."""
        while self._busy is not None:
            await self._busy.wait()
            if self._core.tokens is not renew.used:
                return "changed"
        if self._core.tokens is not renew.used:
            await trio.lowlevel.checkpoint()
            return "changed"
        busy = self._busy = trio.Event()
        try:
            outcome: str
            if self._http is not None:
                outcome = await self._drive(self._core.grant(renew), self._http)
            else:
                async with httpx2.AsyncClient(
                    follow_redirects=False, timeout=self._request_timeout, verify=_ssl_context()
                ) as http:
                    outcome = await self._drive(self._core.grant(renew), http)
        finally:
            self._busy = None
            busy.set()
        return outcome

    async def _drive(self, steps: Generator[oauth_flow.Action, Any, Any], http: httpx2.AsyncClient) -> Any:
        """Carry out a grant's actions; its result."""
        async with contextlib.AsyncExitStack() as stack:
            pending: Any = None
            answer: Any = None
            while True:
                try:
                    action = steps.send(answer)
                except StopIteration as stop:
                    return stop.value
                if isinstance(action, oauth_flow.Send):
                    answer = await self._send(http, action)
                elif isinstance(action, oauth_flow.Sign):
                    answer = self._sign(action)
                    await trio.lowlevel.checkpoint()
                elif isinstance(action, oauth_flow.Listen):
                    if self._redirect is None:  # pragma: no cover - the flow knows it is not interactive
                        raise AuthorizationFailed("no redirect handler to log in with", reason="no_redirect")
                    pending = await stack.enter_async_context(self._redirect.listen())
                    answer = pending.redirect_uri
                elif isinstance(action, oauth_flow.Browse):
                    answer = await pending.complete(action.url)
                else:
                    answer = await self._store(action)

    async def _store(self, action: oauth_flow.Action) -> Any:
        storage = self._storage
        if isinstance(action, oauth_flow.KeepTokens):
            # A cancellation cannot stop the store half-way: a rotated refresh token must not be lost.
            with trio.CancelScope(shield=True), trio.move_on_after(STORE_TIMEOUT):
                await storage.set_tokens(action.resource, action.issuer, action.client_id, action.tokens)
            if action.refreshed:
                token_refreshed(action.issuer)
            return None
        if isinstance(action, oauth_flow.KeepClient):
            with trio.CancelScope(shield=True), trio.move_on_after(STORE_TIMEOUT):
                await storage.set_client(action.resource, action.issuer, action.client)
            return None
        if isinstance(action, oauth_flow.Forget):
            with trio.CancelScope(shield=True), trio.move_on_after(STORE_TIMEOUT):
                await storage.forget(action.resource, action.issuer)
            return None
        if isinstance(action, oauth_flow.LoadClient):
            return await storage.get_client(action.resource, action.issuer)
        if isinstance(action, oauth_flow.LoadTokens):
            return await storage.get_tokens(action.resource, action.issuer, action.client_id)
        if isinstance(action, oauth_flow.Restore):
            return await kept_login(storage, action.server_url)
        if isinstance(action, oauth_flow.Assertion):
            return await self._assertion(action.kind)
        raise AssertionError(f"unexpected action {action!r}")  # pragma: no cover

    async def _assertion(self, kind: str) -> str:
        raise AuthorizationFailed(f"this flow has no {kind}", reason="token")

    # ------------------------------------------------------------ signing

    def _client_key(self) -> SigningKey | None:
        """The client's private key (``private_key_jwt``), loaded once."""
        if self._private_key is None:
            return None
        if self._key is None:
            from ._jose import load_private_key

            self._key = load_private_key(self._private_key, self._alg, kid=self._kid)
        return self._key

    def _sign(self, action: oauth_flow.Sign) -> str:
        claims = dict(action.claims)
        if action.key == "dpop":
            if self._dpop_key is None:
                from ._jose import generate_ec_key

                self._dpop_key = generate_ec_key("ES256")
            return self._dpop_key.sign(claims, **action.header, jwk=self._dpop_key.public_jwk())
        if self._signer is not None:
            from ._jose import sign_with

            assert self._alg is not None
            return sign_with(self._signer, self._alg, claims, kid=self._kid, **action.header)
        key = self._client_key()
        if key is None:  # pragma: no cover - the flow knows there is no key
            raise AuthorizationFailed("the client has no private key", reason="no_key")
        return key.sign(claims, **action.header)

    # ------------------------------------------------------------ HTTP

    async def _send(self, http: httpx2.AsyncClient, action: oauth_flow.Send) -> oauth_flow.Answer:
        """One request of the flow's own, within one deadline: redirects, body and all."""
        with trio.move_on_after(self._request_timeout) as deadline:
            return await self._exchange(http, action)
        assert deadline.cancelled_caught
        raise AuthorizationFailed(
            f"{action.method} {oauth_flow.shown_url(action.url)} took over {self._request_timeout:g} s"
            " (the flow's request_timeout)",
            reason="timeout",
        )

    async def _exchange(self, http: httpx2.AsyncClient, action: oauth_flow.Send) -> oauth_flow.Answer:
        method, url, hops = action.method, action.url, 0
        while True:
            request = http.build_request(
                method,
                url,
                headers=dict(action.headers),
                data=dict(action.form) if action.form is not None else None,
                json=action.json,
                timeout=httpx2.Timeout(self._request_timeout),
            )
            try:
                response = await http.send(request, stream=True, follow_redirects=False)
            except httpx2.HTTPError as exc:
                raise AuthorizationFailed(
                    f"{method} {oauth_flow.shown_url(url)} failed: {type(exc).__name__}", reason="metadata"
                ) from None
            try:
                # The package's one rule: the same origin only, and so many in a row.
                decision = redirects.follow(
                    url,
                    method,
                    response.status_code,
                    response.headers.get("location"),
                    hops,
                )
                if isinstance(decision, redirects.Follow):
                    url, hops = decision.url, decision.hops
                    continue
                if isinstance(decision, redirects.NotFollowed):
                    raise AuthorizationFailed(
                        f"{method} {oauth_flow.shown_url(url)} was redirected, not followed: {decision.reason}",
                        reason="metadata",
                    )
                return oauth_flow.Answer(
                    response.status_code, _headers(response.headers), await self._body(response, method, url)
                )
            finally:
                with trio.CancelScope(shield=True):
                    await response.aclose()

    async def _body(self, response: httpx2.Response, method: str, url: str) -> bytes:
        """The body of one of the flow's own responses, at most `MAX_BODY` bytes."""
        too_big = AuthorizationFailed(
            f"{method} {oauth_flow.shown_url(url)} answered with over {MAX_BODY} bytes", reason="metadata"
        )
        body = bytearray()
        try:
            async for chunk in response.aiter_raw():
                body += chunk
                if len(body) > MAX_BODY:
                    raise too_big
        except httpx2.StreamConsumed:
            # A transport that hands back a response already read (httpx2.MockTransport).
            body = bytearray(response.content[: MAX_BODY + 1])
            if len(body) > MAX_BODY:
                raise too_big from None
        except httpx2.HTTPError as exc:
            raise AuthorizationFailed(
                f"{method} {oauth_flow.shown_url(url)} failed: {type(exc).__name__}", reason="metadata"
            ) from None
        return bytes(body)


def _headers(headers: httpx2.Headers) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


async def kept_login(storage: TokenStorage, server_url: str) -> oauth_flow.Kept | None:
    """The login ``storage`` keeps for the server at ``server_url``, if it can list what it keeps.

    A storage with a ``resources()`` method (`FileTokenStorage`,
    `MemoryTokenStorage`) is asked; the resource nearest the server's URL
    (the longest that covers it) wins.
    """
    listing: Callable[[], Awaitable[list[tuple[str, str]]]] | None = getattr(storage, "resources", None)
    if listing is None:
        await trio.lowlevel.checkpoint()
        return None
    found = [(r, i) for r, i in await listing() if oauth_flow.covers(r, server_url)]
    for resource, issuer in sorted(found, key=lambda pair: len(pair[0]), reverse=True):
        client = await storage.get_client(resource, issuer)
        if client is None:
            continue
        tokens = await storage.get_tokens(resource, issuer, client.client_id)
        if tokens is not None:
            return oauth_flow.Kept(resource, issuer, client, tokens)
    return None


_SSL_CONTEXT: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    """The TLS context of the flow's own clients, made once: loading the CA bundle is the costly part of a client."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        _SSL_CONTEXT = httpx2.create_ssl_context()
    return _SSL_CONTEXT


class OAuth(_Flow):
    """The MCP authorization flow for a user: authorization code with PKCE, as an `httpx2.Auth`.

    Give it to a `trio_mcp.HTTPTarget` (``auth=``). The first request carries
    the token kept in ``storage`` for the server, if any; when the server
    answers 401, the flow finds the server's authorization server
    (protected resource metadata, then authorization server metadata, or
    the 2025-03-26 fallback), refreshes the tokens when it can, and
    otherwise registers the client (pre-registered, a Client ID Metadata
    Document, or dynamic registration) and sends the user to log in through
    ``redirect``, once per request. A 403 ``insufficient_scope`` asks once
    for the union of the scopes. A login the user refused is not started
    again by the same flow.

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
        dpop: Whether to bind tokens to a key of this flow with DPoP (RFC
            9449): `None` (the default) when the MCP server asks for it (its
            metadata says ``dpop_bound_access_tokens_required``, or it
            challenges with ``DPoP``), `True` always, `False` never. Needs
            the ``auth`` extra.
        request_timeout: The deadline of each request the flow makes itself
            (metadata, registration, token), in seconds, from the first byte
            sent to the last byte read; past it, `AuthorizationFailed`
            (reason ``"timeout"``).
        http_client: An `httpx2.AsyncClient` for those requests (proxies,
            TLS); not closed. By default one is made for each grant (it
            honours the proxy variables of the environment).
        private_key: A PEM private key for ``private_key_jwt`` (needs the
            ``auth`` extra): EC P-256, P-384 or P-521, RSA of 2048 bits or
            more, or Ed25519.
        alg: The algorithm it signs with, instead of the key's default
            (ES256, ES384, ES512 by curve; RS256 for RSA, or RS384, RS512,
            PS256, PS384, PS512; Ed25519, or EdDSA).
        kid: The key's identifier, put in the assertion's header.
        signer: Instead of ``private_key``, for a key kept elsewhere (a
            key store, a hardware key): a function of the JWS signing input
            (bytes) that returns the signature in JWS form (for ECDSA, ``r``
            then ``s``); give ``alg`` with it.
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
        alg: str | None = None,
        kid: str | None = None,
        signer: Callable[[bytes], bytes] | None = None,
        dpop: bool | None = None,
        request_timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        settings = FlowSettings(
            server_url,
            "authorization_code",
            scope=scope,
            dpop=dpop,
            interactive=redirect is not None,
            client=client,
            client_issuer=(client.issuer or None) if client is not None else None,
            cimd=client_metadata_url,
            client_name=client_name,
        )
        super().__init__(
            settings,
            storage=storage,
            request_timeout=request_timeout,
            http_client=http_client,
            redirect=redirect,
            private_key=private_key,
            alg=alg,
            kid=kid,
            signer=signer,
        )

    async def logout(self) -> list[str]:
        """Forget the logins kept for the server, revoking their tokens where the authorization server offers revocation (RFC 7009).

        Returns the resources forgotten. Revocation is best effort: a
        server that refuses it, or cannot be reached within
        ``request_timeout``, does not keep the login from being forgotten.
        """
        forgotten: list[str] = []
        listing = getattr(self._storage, "resources", None)
        pairs: list[tuple[str, str]] = list(await listing()) if listing is not None else []
        for resource, issuer in pairs:
            if not oauth_flow.covers(resource, self._server_url):
                continue
            client = await self._storage.get_client(resource, issuer)
            tokens = (
                None if client is None else await self._storage.get_tokens(resource, issuer, client.client_id)
            )
            if client is not None and tokens is not None and oauth.secure_endpoint(issuer):
                with contextlib.suppress(AuthorizationFailed):
                    async with (
                        httpx2.AsyncClient(
                            follow_redirects=False, timeout=self._request_timeout, verify=_ssl_context()
                        )
                        if self._http is None
                        else contextlib.nullcontext(self._http) as http
                    ):
                        await self._drive(self._core.revoke(issuer, client, tokens), http)
            with trio.CancelScope(shield=True), trio.move_on_after(STORE_TIMEOUT):
                await self._storage.forget(resource, issuer)
            forgotten.append(resource)
        self._core.tokens = None
        return sorted(set(forgotten))


class ClientCredentials(_Flow):
    """Tokens for a program, without a user: the client credentials grant (SEP-1046), as an `httpx2.Auth`.

    The client authenticates with its secret (``client_secret_basic`` or
    ``client_secret_post``, as the authorization server supports) or with a
    private key (``private_key_jwt``: give ``private_key`` or ``signer``,
    which need the ``auth`` extra). A 403 ``insufficient_scope`` is returned
    as it is.

    Args:
        server_url: The MCP server's URL.
        client_id: The client's identifier at the authorization server.
        client_secret: Its secret, or `None` with a key.
        method: The authentication method, instead of the flow's choice.
        issuer: The issuer of the authorization server the credentials are
            for; by default the first one the server names. They are never
            sent to another.
        scope: The scope to ask for (by default the challenge's, else every
            scope the server names).
        storage, request_timeout, http_client, dpop: As for `OAuth`.
        private_key, alg, kid, signer: The key that signs a
            ``private_key_jwt`` assertion, as for `OAuth`.
    """

    def __init__(
        self,
        server_url: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        private_key: str | bytes | None = None,
        alg: str | None = None,
        kid: str | None = None,
        signer: Callable[[bytes], bytes] | None = None,
        method: str | None = None,
        issuer: str | None = None,
        scope: str | None = None,
        storage: TokenStorage | None = None,
        dpop: bool | None = None,
        request_timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        if client_secret is None and private_key is None and signer is None:
            raise ValueError("client credentials need a client_secret, a private_key or a signer")
        settings = FlowSettings(
            server_url,
            "client_credentials",
            scope=scope,
            dpop=dpop,
            client=ClientInfo(client_id, client_secret),
            client_issuer=issuer,
            method=method,
        )
        super().__init__(
            settings,
            storage=storage,
            request_timeout=request_timeout,
            http_client=http_client,
            private_key=private_key,
            alg=alg,
            kid=kid,
            signer=signer,
        )


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
        scope, storage, request_timeout, http_client, dpop: As for `OAuth`.
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
        request_timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        settings = FlowSettings(
            server_url,
            "jwt_bearer",
            scope=scope,
            dpop=dpop,
            client=ClientInfo(client_id, client_secret) if client_id is not None else None,
        )
        super().__init__(settings, storage=storage, request_timeout=request_timeout, http_client=http_client)
        self._assertion_source = assertion

    def __repr__(self) -> str:
        return f"<{type(self).__name__} for {self._server_url!r}>"

    async def _assertion(self, kind: str) -> str:
        source = self._assertion_source
        if isinstance(source, str):
            await trio.lowlevel.checkpoint()
            return source
        return await source()


class EnterpriseManaged(_Flow):
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
        scope, storage, request_timeout, http_client, dpop: As for `OAuth`.
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
        request_timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        settings = FlowSettings(
            server_url,
            "enterprise",
            scope=scope,
            dpop=dpop,
            client=ClientInfo(client_id, client_secret),
            idp_token_endpoint=idp_token_endpoint,
            idp_client_id=idp_client_id,
        )
        super().__init__(settings, storage=storage, request_timeout=request_timeout, http_client=http_client)
        self._id_token = id_token

    def __repr__(self) -> str:
        return f"<{type(self).__name__} for {self._server_url!r}>"

    async def _assertion(self, kind: str) -> str:
        source = self._id_token
        if isinstance(source, str):
            await trio.lowlevel.checkpoint()
            return source
        return await source()
