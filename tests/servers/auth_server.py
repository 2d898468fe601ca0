"""An OAuth 2.1 authorization server and a protected MCP server, for the authorization flow tests.

Usage: ``python auth_server.py [--port N]``. It listens on 127.0.0.1 twice:
the MCP server on one port (printed as ``LISTENING <port>``) and the
authorization server on another, so that a token sent to the wrong origin
shows. The MCP side is ``tests/servers/http_server.py`` (both eras) behind a
bearer-token check.

Every behaviour is chosen by the URL, so that one process serves every
test: the MCP server at ``/s/<scenario>/mcp`` publishes its protected
resource metadata at ``/.well-known/oauth-protected-resource/s/<scenario>/mcp``,
naming the issuer ``http://127.0.0.1:<as port>/s/<scenario>``, whose
endpoints (``/authorize``, ``/token``, ``/register``) and metadata carry the
same path. A scenario is a ``+``-separated list of behaviours (see
`BEHAVIOURS`); ``ok`` is a correct server: dynamic registration, PKCE S256
checked, ``iss`` in the redirect, codes used once, refresh tokens rotated
(the old one revoked), tokens bound to the resource and the scope, and
``tools/call`` of ``echo`` needing the scope ``tools:call``.

``GET /auth-stats`` on the MCP port answers, as JSON, what both servers
saw: requests by endpoint and scenario, the query strings and headers the
authorization server received (to check that no token reached it, nor a
secret a URL), grants made and refused.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import secrets
import sys
import time
from collections import defaultdict
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

sys.path.insert(0, str(Path(__file__).resolve().parent))

from http_server import Exchange, Request, State

#: What each behaviour in a scenario does.
BEHAVIOURS = {
    "ok": "a correct server",
    "wrong-issuer": "the AS metadata names another issuer",
    "no-s256": "the AS advertises PKCE with plain only",
    "no-pkce": "the AS metadata has no code_challenge_methods_supported",
    "resource-mismatch": "the PRM names another origin's resource",
    "insecure-token": "the AS metadata's token endpoint is plain http off loopback",
    "token-error": "the token endpoint answers 400 invalid_request",
    "token-garbage": "the token endpoint answers 200 with HTML",
    "token-500": "the token endpoint answers 500 with no JSON",
    "token-slow": "the token endpoint never answers",
    "token-redirect": "the token endpoint redirects (307) to another origin",
    "state-mismatch": "the redirect back carries another state",
    "iss-wrong": "the redirect back carries another iss",
    "denied": "the redirect back carries error=access_denied",
    "short": "access tokens live 1 second",
    "huge-401": "the MCP server's 401 has a 2 MiB body",
    "refresh-revoked": "every refresh token is refused (invalid_grant)",
    "scope-never": "tools/call needs a scope the AS never grants",
    "offline": "the AS offers offline_access",
    "no-dcr": "the AS has no registration endpoint",
    "dpop": "the AS issues DPoP-bound tokens; the MCP server checks the proofs",
    "dpop-nonce": "with dpop: both servers want a nonce first",
    "nan-expiry": "the token endpoint says expires_in: NaN",
    "unproven-binding": "the token endpoint says token_type DPoP to a request without a proof",
    "cc": "the AS grants client_credentials (client 'machine', secret 'machine-secret', or a JWT by TEST_KEY),"
    " and the JWT bearer grant (WORKLOAD_JWT, or an ID-JAG from its IdP at /s/<scenario>/idp-token)",
}

#: The private key whose public half the server trusts for private_key_jwt ('machine').
TEST_KEY = ec.derive_private_key(
    0x7E57_C0DE_0000_0000_0000_0000_0000_0000_0000_0000_0000_0042, ec.SECP256R1()
)
TEST_KEY_PEM = TEST_KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()
MACHINE_ID, MACHINE_SECRET = "machine", "machine-secret"
#: A workload's identity (the JWT bearer grant needs no client), and a user's ID token at the IdP.
WORKLOAD_JWT, ID_TOKEN = "workload-jwt-0123", "user-id-token-0123"
NEED_SCOPE = "tools:call"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_parts(token: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
    head, body, sig = token.split(".")
    return (
        json.loads(b64url_decode(head)),
        json.loads(b64url_decode(body)),
        f"{head}.{body}".encode(),
        b64url_decode(sig),
    )


def verify_es256(public_key: ec.EllipticCurvePublicKey, signed: bytes, signature: bytes) -> bool:
    if len(signature) != 64:
        return False
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        public_key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def jwk_key(jwk: dict[str, str]) -> ec.EllipticCurvePublicKey:
    x = int.from_bytes(b64url_decode(jwk["x"]), "big")
    y = int.from_bytes(b64url_decode(jwk["y"]), "big")
    return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()


def thumbprint(jwk: dict[str, str]) -> str:
    canonical = json.dumps(
        {k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True
    )
    return b64url(hashlib.sha256(canonical.encode()).digest())


@dataclass
class Grant:
    client_id: str
    scope: str
    resource: str
    expires: float
    jkt: str | None = None
    scenario: str = ""


class AuthState(State):
    """Both servers' state: clients, codes, grants, and what was seen."""

    def __init__(self) -> None:
        super().__init__("dual")
        self.as_port = 0
        self.mcp_port = 0
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.used_codes: set[str] = set()
        self.access: dict[str, Grant] = {}
        self.refresh: dict[str, Grant] = {}
        self.seen: dict[str, int] = defaultdict(int)
        self.as_urls: list[str] = []
        self.as_bearers = 0
        self.refused: list[str] = []
        self.jtis: set[str] = set()
        self.id_jags: set[str] = set()

    def auth_stats(self) -> dict[str, Any]:
        return {
            "seen": dict(self.seen),
            "as_urls": self.as_urls,
            "as_bearers": self.as_bearers,
            "refused": self.refused,
            "clients": len(self.clients),
            "leaks": self.leaks(),
            "as_port": self.as_port,
        }

    def leaks(self) -> list[str]:
        """The authorization server's request URLs that hold a token or a client secret."""
        secrets_known = [
            *self.access,
            *self.refresh,
            *(c["secret"] for c in self.clients.values()),
            MACHINE_SECRET,
        ]
        return [url for url in self.as_urls if any(secret in url for secret in secrets_known)]

    def count(self, scenario: str, what: str) -> None:
        self.seen[f"{scenario}:{what}"] += 1

    # ------------------------------------------------------------ routing

    async def serve_as(self, stream: trio.SocketStream) -> None:
        await self.serve_stream(Marked(stream))  # type: ignore[arg-type]

    async def handle(self, request: Request, exchange: Exchange) -> None:
        side_as = isinstance(exchange.stream, Marked)
        path, _, query = request.path.partition("?")
        if side_as:
            await self.handle_as(request, exchange, path, dict(parse_qsl(query)))
            return
        if path == "/auth-stats":
            exchange.keep = False
            await exchange.json(200, self.auth_stats())
            return
        if path == "/auth-forget":
            # As after a restart that lost the registrations and the access tokens (not the refresh tokens).
            exchange.keep = False
            self.clients.clear()
            self.access.clear()
            await exchange.json(200, {})
            return
        if path.startswith("/.well-known/oauth-protected-resource/s/"):
            scenario = path.removeprefix("/.well-known/oauth-protected-resource/s/").removesuffix("/mcp")
            await self.prm(exchange, scenario)
            return
        if path.startswith("/s/") and path.endswith("/mcp"):
            scenario = path[3:-4]
            await self.protected(request, exchange, scenario)
            return
        await exchange.respond(404, b"not found", "text/plain")

    # ------------------------------------------------------------ the MCP side

    def issuer(self, scenario: str) -> str:
        return f"http://127.0.0.1:{self.as_port}/s/{scenario}"

    def mcp_url(self, scenario: str) -> str:
        return f"http://127.0.0.1:{self.mcp_port}/s/{scenario}/mcp"

    async def prm(self, exchange: Exchange, scenario: str) -> None:
        self.count(scenario, "prm")
        flags = scenario.split("+")
        resource = "http://evil.example.com/mcp" if "resource-mismatch" in flags else self.mcp_url(scenario)
        await exchange.json(
            200,
            {
                "resource": resource,
                "authorization_servers": [self.issuer(scenario)],
                "scopes_supported": ["mcp:basic", NEED_SCOPE],
            },
        )

    def challenge(
        self, scenario: str, error: str | None = None, scope: str = "mcp:basic", scheme: str = "Bearer"
    ) -> str:
        prm = f"http://127.0.0.1:{self.mcp_port}/.well-known/oauth-protected-resource/s/{scenario}/mcp"
        parts = [f'resource_metadata="{prm}"', f'scope="{scope}"']
        if "dpop" in scenario.split("+")[0] and scheme == "Bearer":
            # A resource that takes DPoP-bound tokens says so in its challenge (RFC 9449 §7.1).
            scheme = "DPoP"
        if error:
            parts.append(f'error="{error}"')
        return f"{scheme} " + ", ".join(parts)

    async def protected(self, request: Request, exchange: Exchange, scenario: str) -> None:
        flags = scenario.split("+")
        self.count(scenario, "mcp")
        header = request.header("authorization") or ""
        scheme, _, token = header.partition(" ")
        grant = self.access.get(token)
        if grant is None or grant.expires < time.time() or grant.resource != self.mcp_url(scenario):
            self.count(scenario, "mcp-401")
            body = {"error": "invalid_token"}
            if "huge-401" in flags:
                body["padding"] = "x" * (2 * 1024 * 1024)
            await exchange.json(401, body, [("www-authenticate", self.challenge(scenario))])
            return
        if grant.jkt is not None:
            problem, nonce_needed = self.check_rs_proof(request, token, grant, flags)
            if nonce_needed:
                self.count(scenario, "rs-nonce")
                await exchange.json(
                    401,
                    {"error": "use_dpop_nonce"},
                    [("www-authenticate", 'DPoP error="use_dpop_nonce"'), ("dpop-nonce", "rs-nonce-1")],
                )
                return
            if problem is not None or scheme != "DPoP":
                self.refused.append(f"dpop: {problem or 'scheme ' + scheme}")
                await exchange.json(
                    401, {"error": "invalid_token"}, [("www-authenticate", 'DPoP error="invalid_token"')]
                )
                return
        elif scheme != "Bearer":
            await exchange.json(
                401, {"error": "invalid_token"}, [("www-authenticate", self.challenge(scenario))]
            )
            return
        message = json.loads(request.body) if request.body else {}
        if isinstance(message, dict) and message.get("method") == "tools/call":
            need = "never:granted" if "scope-never" in flags else NEED_SCOPE
            if need not in grant.scope.split():
                self.count(scenario, "mcp-403")
                await exchange.json(
                    403,
                    {"error": "insufficient_scope"},
                    [("www-authenticate", self.challenge(scenario, "insufficient_scope", need))],
                )
                return
        request.path = "/mcp"
        self.count(scenario, "mcp-ok")
        await State.handle(self, request, exchange)

    def check_rs_proof(
        self, request: Request, token: str, grant: Grant, flags: list[str]
    ) -> tuple[str | None, bool]:
        proof = request.header("dpop")
        if not proof:
            return "no proof", False
        try:
            header, claims, signed, signature = jwt_parts(proof)
            jwk = header["jwk"]
            if header.get("typ") != "dpop+jwt" or not verify_es256(jwk_key(jwk), signed, signature):
                return "bad signature", False
        except (ValueError, KeyError, TypeError):
            return "malformed", False
        if thumbprint(jwk) != grant.jkt:
            return "key not bound", False
        if claims.get("ath") != b64url(hashlib.sha256(token.encode()).digest()):
            return "ath", False
        if claims.get("jti") in self.jtis:
            return "jti reused", False
        self.jtis.add(claims.get("jti"))
        if (
            claims.get("htm") != request.method
            or urlsplit(claims.get("htu", "")).path != urlsplit(request.path).path
        ):
            return "htm/htu", False
        if "dpop-nonce" in flags and claims.get("nonce") != "rs-nonce-1":
            return None, True
        return None, False

    # ------------------------------------------------------------ the authorization server

    async def handle_as(self, request: Request, exchange: Exchange, path: str, query: dict[str, str]) -> None:
        self.as_urls.append(request.path)
        if (request.header("authorization") or "").lower().startswith(("bearer ", "dpop ")):
            self.as_bearers += 1
        if path.startswith("/.well-known/oauth-authorization-server/s/"):
            await self.as_metadata(exchange, path.removeprefix("/.well-known/oauth-authorization-server/s/"))
            return
        if not path.startswith("/s/"):
            await exchange.respond(404, b"not found", "text/plain")
            return
        scenario, _, endpoint = path[3:].rpartition("/")
        flags = scenario.split("+")
        self.count(scenario, endpoint)
        if endpoint == "authorize":
            await self.authorize(exchange, scenario, flags, query)
        elif endpoint == "token":
            await self.token(request, exchange, scenario, flags)
        elif endpoint == "idp-token":
            await self.idp_token(request, exchange, scenario)
        elif endpoint == "register" and "no-dcr" not in flags:
            await self.register(request, exchange)
        else:
            await exchange.respond(404, b"not found", "text/plain")

    async def as_metadata(self, exchange: Exchange, scenario: str) -> None:
        flags = scenario.split("+")
        self.count(scenario, "as-metadata")
        issuer = self.issuer(scenario)
        doc: dict[str, Any] = {
            "issuer": "http://127.0.0.1:1/elsewhere" if "wrong-issuer" in flags else issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": "http://auth.example.com/token"
            if "insecure-token" in flags
            else f"{issuer}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["plain"] if "no-s256" in flags else ["S256"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
                "none",
                "private_key_jwt",
            ],
            "authorization_response_iss_parameter_supported": True,
            "scopes_supported": [
                "mcp:basic",
                NEED_SCOPE,
                *(["offline_access"] if "offline" in flags else []),
            ],
        }
        if "no-pkce" in flags:
            del doc["code_challenge_methods_supported"]
        if "no-dcr" not in flags:
            doc["registration_endpoint"] = f"{issuer}/register"
        if "dpop" in flags or "dpop-nonce" in flags:
            doc["dpop_signing_alg_values_supported"] = ["ES256"]
        await exchange.json(200, doc)

    async def register(self, request: Request, exchange: Exchange) -> None:
        body = json.loads(request.body)
        client_id = f"client-{len(self.clients) + 1}"
        secret = secrets.token_urlsafe(16)
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        if method == "none":
            method = "client_secret_post"  # the server substitutes (RFC 7591 §3.2.1)
        self.clients[client_id] = {
            "secret": secret,
            "method": method,
            "redirect_uris": body.get("redirect_uris"),
        }
        await exchange.json(
            201,
            {**body, "client_id": client_id, "client_secret": secret, "token_endpoint_auth_method": method},
        )

    async def authorize(
        self, exchange: Exchange, scenario: str, flags: list[str], query: dict[str, str]
    ) -> None:
        redirect = query.get("redirect_uri", "")
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            self.refused.append("authorize without S256")
            await exchange.respond(400, b"PKCE S256 required", "text/plain")
            return
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "challenge": query["code_challenge"],
            "client_id": query.get("client_id"),
            "redirect_uri": redirect,
            "scope": query.get("scope", ""),
            "resource": query.get("resource"),
            "scenario": scenario,
        }
        params = {"code": code, "state": query.get("state", ""), "iss": self.issuer(scenario)}
        if "state-mismatch" in flags:
            params["state"] = "not-the-state"
        if "iss-wrong" in flags:
            params["iss"] = "http://127.0.0.1:1/evil"
        if "denied" in flags:
            params = {
                "error": "access_denied",
                "error_description": "the user said no",
                "state": params["state"],
                "iss": params["iss"],
            }
        await exchange.respond(302, headers=[("location", f"{redirect}?{urlencode(params)}")])

    async def idp_token(self, request: Request, exchange: Exchange, scenario: str) -> None:
        """An identity provider's token exchange: an ID token for an ID-JAG aimed at the issuer."""
        form = dict(parse_qsl(request.body.decode()))
        if (
            form.get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange"
            or form.get("subject_token") != ID_TOKEN
            or form.get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag"
            or form.get("audience") != self.issuer(scenario)
            or form.get("resource") != self.mcp_url(scenario)
        ):
            self.refused.append("token exchange")
            await exchange.json(400, {"error": "invalid_request"})
            return
        id_jag = "id-jag-" + secrets.token_urlsafe(12)
        self.id_jags.add(id_jag)
        await exchange.json(
            200,
            {"access_token": id_jag, "issued_token_type": form["requested_token_type"], "token_type": "N_A"},
        )

    def client_of(self, request: Request, form: dict[str, str], issuer: str) -> str | None:
        header = request.header("authorization") or ""
        if header.startswith("Basic "):
            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
        elif "client_assertion" in form:
            try:
                _, claims, signed, signature = jwt_parts(form["client_assertion"])
            except (ValueError, KeyError):
                return None
            ok = verify_es256(TEST_KEY.public_key(), signed, signature)
            if (
                not ok
                or claims.get("iss") != MACHINE_ID
                or claims.get("sub") != MACHINE_ID
                or claims.get("aud") != issuer
            ):
                return None
            return MACHINE_ID
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        if client_id == MACHINE_ID:
            return client_id if secret == MACHINE_SECRET else None
        known = self.clients.get(client_id)
        return client_id if known is not None and known["secret"] == secret else None

    async def token(self, request: Request, exchange: Exchange, scenario: str, flags: list[str]) -> None:
        form = dict(parse_qsl(request.body.decode()))
        if "token-slow" in flags:
            await trio.sleep_forever()
        if "token-redirect" in flags:
            await exchange.respond(307, headers=[("location", "http://127.0.0.2:9/token")])
            return
        if "token-error" in flags:
            await exchange.json(400, {"error": "invalid_request", "error_description": "no, for testing"})
            return
        if "token-garbage" in flags:
            await exchange.respond(200, b"<html>surprise</html>", "text/html")
            return
        if "token-500" in flags:
            await exchange.respond(500, b"oops", "text/plain")
            return
        jkt = None
        if "dpop" in flags or "dpop-nonce" in flags:
            proof = request.header("dpop")
            if not proof:
                await exchange.json(400, {"error": "invalid_dpop_proof"})
                return
            header, claims, signed, signature = jwt_parts(proof)
            if not verify_es256(jwk_key(header["jwk"]), signed, signature) or claims.get("htm") != "POST":
                await exchange.json(400, {"error": "invalid_dpop_proof"})
                return
            if "dpop-nonce" in flags and claims.get("nonce") != "as-nonce-1":
                self.count(scenario, "as-nonce")
                await exchange.json(400, {"error": "use_dpop_nonce"}, [("dpop-nonce", "as-nonce-1")])
                return
            jkt = thumbprint(header["jwk"])
        client_id = self.client_of(request, form, self.issuer(scenario))
        grant_type = form.get("grant_type")
        if (
            client_id is None
            and grant_type == "urn:ietf:params:oauth:grant-type:jwt-bearer"
            and "client_id" not in form
        ):
            client_id = "workload"
        if client_id is None:
            await exchange.json(401, {"error": "invalid_client"})
            return
        lifetime = 1 if "short" in flags else 3600
        if grant_type == "authorization_code":
            code = form.get("code", "")
            data = self.codes.pop(code, None)
            if data is None or code in self.used_codes:
                self.refused.append("code reused or unknown")
                await exchange.json(
                    400, {"error": "invalid_grant", "error_description": "code reused or unknown"}
                )
                return
            self.used_codes.add(code)
            verifier = form.get("code_verifier", "")
            if b64url(hashlib.sha256(verifier.encode()).digest()) != data["challenge"]:
                self.refused.append("verifier mismatch")
                await exchange.json(400, {"error": "invalid_grant"})
                return
            if form.get("redirect_uri") != data["redirect_uri"] or form.get("resource") != data["resource"]:
                self.refused.append("redirect_uri or resource mismatch")
                await exchange.json(400, {"error": "invalid_grant"})
                return
            scope, resource = data["scope"], data["resource"]
        elif grant_type == "refresh_token":
            old = self.refresh.pop(form.get("refresh_token", ""), None)
            if "refresh-revoked" in flags or old is None or old.client_id != client_id:
                self.refused.append("refresh refused")
                await exchange.json(
                    400, {"error": "invalid_grant", "error_description": "refresh token revoked"}
                )
                return
            self.count(scenario, "refreshed")
            scope, resource = old.scope, form.get("resource", "")
        elif grant_type == "urn:ietf:params:oauth:grant-type:jwt-bearer" and "cc" in flags:
            assertion = form.get("assertion", "")
            if assertion != WORKLOAD_JWT and assertion not in self.id_jags:
                self.refused.append("jwt-bearer assertion")
                await exchange.json(400, {"error": "invalid_grant"})
                return
            self.id_jags.discard(assertion)
            scope, resource = form.get("scope", ""), form.get("resource", "")
        elif grant_type == "client_credentials" and "cc" in flags:
            scope, resource = form.get("scope", ""), form.get("resource", "")
        else:
            await exchange.json(400, {"error": "unsupported_grant_type"})
            return
        if grant_type == "authorization_code":
            scope = " ".join(s for s in scope.split() if s in ("mcp:basic", NEED_SCOPE, "offline_access"))
        access = secrets.token_urlsafe(24)
        grant = Grant(client_id, scope, resource, time.time() + lifetime, jkt, scenario)
        self.access[access] = grant
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "DPoP" if jkt or "unproven-binding" in flags else "Bearer",
            "expires_in": float("nan") if "nan-expiry" in flags else lifetime,
            "scope": scope,
        }
        if grant_type != "client_credentials":
            refresh = secrets.token_urlsafe(24)
            self.refresh[refresh] = grant
            answer["refresh_token"] = refresh
        self.count(scenario, f"granted-{grant_type}")
        await exchange.json(200, answer)


class Marked:
    """A socket stream accepted on the authorization server's port."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


async def _serve(state: AuthState, port: int, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    async with trio.open_nursery() as nursery:
        state.nursery = nursery
        as_listeners = await nursery.start(partial(trio.serve_tcp, state.serve_as, 0, host="127.0.0.1"))
        mcp_listeners = await nursery.start(
            partial(trio.serve_tcp, state.serve_stream, port, host="127.0.0.1")
        )
        state.as_port = as_listeners[0].socket.getsockname()[1]
        state.mcp_port = mcp_listeners[0].socket.getsockname()[1]
        task_status.started()


@asynccontextmanager
async def running():
    """Serve in the current Trio run (for tests that need no process)."""
    state = AuthState()
    async with trio.open_nursery() as nursery:
        await nursery.start(_serve, state, 0)
        try:
            yield state
        finally:
            nursery.cancel_scope.cancel()


async def _main(port: int) -> None:
    state = AuthState()
    async with trio.open_nursery() as nursery:
        await nursery.start(_serve, state, port)
        print(f"AS {state.as_port}", flush=True)
        print(f"LISTENING {state.mcp_port}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        trio.run(_main, args.port)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
