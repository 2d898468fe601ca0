"""A protected MCP server on the official Python SDK (``mcp`` 2.3.0), for the auth interop tests.

Run it with the Python of the peers' virtualenv, naming its authorization
server (node ``oidc-provider``, ``oidc_provider.mjs``)::

    .peers/venv/bin/python tests/interop/servers/sdk_protected_server.py ISSUER [--dpop]

It listens on 127.0.0.1, a port the system picks, and prints
``LISTENING http://127.0.0.1:PORT/mcp``. It publishes its protected resource
metadata (RFC 9728) and checks each token by introspection at the
authorization server (as client ``mcp-rs``, secret ``RS_SECRET``, default
``rs-secret``): active, issued for this resource, with scope ``mcp:tools``.

It takes Bearer tokens only, as the SDK does: a DPoP-bound token (one with a
``cnf`` confirmation) presented as Bearer is refused (RFC 9449 §7.2). With
``--dpop`` its metadata says ``dpop_bound_access_tokens_required``; it still
checks tokens as Bearer, which is enough to see whether the client asked
for DPoP.

Tools: ``echo`` (its text back) and ``whoami`` (the token's client id).
"""

from __future__ import annotations

import os
import socket
import sys
import warnings

import httpx2
import uvicorn
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)

issuer = sys.argv[1]
dpop_required = "--dpop" in sys.argv[2:]
rs_secret = os.environ.get("RS_SECRET", "rs-secret")

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(128)  # connections wait in the backlog until uvicorn serves
port = sock.getsockname()[1]
url = f"http://127.0.0.1:{port}/mcp"


class Introspection(TokenVerifier):
    """Tokens checked at the authorization server (RFC 7662)."""

    async def verify_token(self, token: str) -> AccessToken | None:
        async with httpx2.AsyncClient(timeout=10.0) as http:
            response = await http.post(
                f"{issuer}/token/introspection", data={"token": token}, auth=("mcp-rs", rs_secret)
            )
        if response.status_code != 200:
            return None
        doc = response.json()
        if not doc.get("active") or doc.get("cnf"):
            return None
        audience = doc.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if url not in audiences:
            return None
        return AccessToken(
            token=token,
            client_id=str(doc.get("client_id", "")),
            scopes=str(doc.get("scope", "")).split(),
            expires_at=doc.get("exp"),
            resource=url,
        )


server = MCPServer(
    name="trio-mcp-protected-test-server",
    version="1.0.0",
    token_verifier=Introspection(),
    auth=AuthSettings(issuer_url=issuer, resource_server_url=url, required_scopes=["mcp:tools"]),
)


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


app = server.streamable_http_app()

if dpop_required:
    # The SDK's metadata has no field for it: add it to the document it serves.
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import JSONResponse

    class _DPoPRequired(BaseHTTPMiddleware):
        async def dispatch(self, request, call_next):  # type: ignore[no-untyped-def]
            response = await call_next(request)
            if request.url.path.startswith("/.well-known/oauth-protected-resource"):
                body = b"".join([chunk async for chunk in response.body_iterator])
                import json

                doc = json.loads(body)
                doc["dpop_bound_access_tokens_required"] = True
                return JSONResponse(doc, status_code=response.status_code)
            return response

    app.add_middleware(_DPoPRequired)

print(f"LISTENING {url}", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])
