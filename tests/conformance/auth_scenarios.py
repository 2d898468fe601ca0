"""The auth scenarios of the conformance client: trio_mcp.auth under the official harness.

Each scenario is what an application would write: a flow from
``trio_mcp.auth`` given to `open_http_client`. The login's browser step is
headless, as the harness expects: the authorization URL is fetched without
following redirects, and ``code``, ``state`` and ``iss`` are read from the
``Location`` of the answer; the redirect URI is never listened on.

Scenarios in which a correct client must refuse (a wrong issuer, a resource
of another server) succeed when the flow refuses for that reason, and fail
when it does anything else.

Run alone: ``python auth_scenarios.py <server url>`` with
``MCP_CONFORMANCE_SCENARIO`` (and ``MCP_CONFORMANCE_CONTEXT``) set.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2
import trio

import trio_mcp
from trio_mcp.auth import (
    AuthorizationFailed,
    ClientCredentials,
    ClientInfo,
    EnterpriseManaged,
    JWTBearer,
    OAuth,
)

#: The harness runs a whole suite at once: on a small machine a client may wait
#: long for its turn on a core, well within the harness's own timeout.
STEP_TIMEOUT = 60.0
REDIRECT_URI = "http://localhost:3000/callback"
CIMD_URL = "https://conformance-test.local/client-metadata.json"

Scenario = Callable[[str, dict[str, Any]], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


class HeadlessPending:
    """The browser step without a browser: GET the authorization URL, read the redirect's query."""

    redirect_uri = REDIRECT_URI

    async def complete(self, authorization_url: str) -> Mapping[str, str]:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10.0) as http:
            response = await http.get(authorization_url)
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or location is None:
            raise RuntimeError(
                f"the authorization endpoint answered HTTP {response.status_code}, not a redirect"
            )
        return dict(parse_qsl(urlsplit(location).query))


class HeadlessRedirect:
    @asynccontextmanager
    async def listen(self) -> AsyncIterator[HeadlessPending]:
        await trio.lowlevel.checkpoint()
        yield HeadlessPending()


async def use(url: str, auth: httpx2.Auth, *, call: str | None = "test-tool") -> None:
    with trio.fail_after(STEP_TIMEOUT):
        # The login runs within the first request, the era probe: its budget
        # must leave room for it (10 s by default, too short on a loaded machine).
        options = trio_mcp.ClientOptions(probe_timeout=STEP_TIMEOUT, handshake_timeout=STEP_TIMEOUT)
        async with trio_mcp.open_client(trio_mcp.HTTPTarget(url, auth=auth), options=options) as client:
            tools = await client.list_tools()
            names = [tool.name for tool in tools]
            if call is not None and call in names:
                await client.call_tool(call, {})


async def refused(url: str, auth: httpx2.Auth, *reasons: str) -> None:
    """The flow must refuse, for one of ``reasons``."""
    try:
        await use(url, auth)
    except AuthorizationFailed as exc:
        if exc.reason not in reasons:
            raise
        print(f"refused as expected: {exc.reason}: {exc}", file=sys.stderr)
        return
    raise AssertionError(f"the flow went on; expected a refusal ({', '.join(reasons)})")


def oauth(url: str, **options: Any) -> OAuth:
    return OAuth(url, redirect=HeadlessRedirect(), client_name="trio-mcp conformance", **options)


@scenario(
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/dpop",
    "auth/dpop-nonce",
)
async def authorization_code(url: str, context: dict[str, Any]) -> None:
    await use(url, oauth(url))


@scenario("auth/basic-cimd")
async def basic_cimd(url: str, context: dict[str, Any]) -> None:
    await use(url, oauth(url, client_metadata_url=CIMD_URL))


@scenario("auth/pre-registration")
async def pre_registration(url: str, context: dict[str, Any]) -> None:
    client = ClientInfo(
        context["client_id"], context["client_secret"], "client_secret_basic", (REDIRECT_URI,)
    )
    await use(url, oauth(url, client=client))


@scenario("auth/scope-retry-limit")
async def scope_retry_limit(url: str, context: dict[str, Any]) -> None:
    try:
        await use(url, oauth(url))
    except trio_mcp.AuthRequired as exc:
        print(f"stopped as expected: {exc}", file=sys.stderr)
        return
    raise AssertionError("the server never granted the scope, yet the call succeeded")


@scenario("auth/resource-mismatch")
async def resource_mismatch(url: str, context: dict[str, Any]) -> None:
    await refused(url, oauth(url), "resource_mismatch")


@scenario("auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized")
async def iss_refused(url: str, context: dict[str, Any]) -> None:
    await refused(url, oauth(url), "iss_mismatch")


@scenario("auth/metadata-issuer-mismatch")
async def metadata_issuer_mismatch(url: str, context: dict[str, Any]) -> None:
    await refused(url, oauth(url), "issuer_mismatch")


@scenario("auth/client-credentials-jwt")
async def client_credentials_jwt(url: str, context: dict[str, Any]) -> None:
    auth = ClientCredentials(
        url, client_id=context["client_id"], private_key=context["private_key_pem"], method="private_key_jwt"
    )
    await use(url, auth)


@scenario("auth/client-credentials-basic")
async def client_credentials_basic(url: str, context: dict[str, Any]) -> None:
    auth = ClientCredentials(
        url,
        client_id=context["client_id"],
        client_secret=context["client_secret"],
        method="client_secret_basic",
    )
    await use(url, auth)


@scenario("auth/wif-jwt-bearer")
async def wif_jwt_bearer(url: str, context: dict[str, Any]) -> None:
    await use(url, JWTBearer(url, assertion=context["valid_jwt"]))


@scenario("auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow")
async def enterprise_managed(url: str, context: dict[str, Any]) -> None:
    auth = EnterpriseManaged(
        url,
        id_token=context["idp_id_token"],
        idp_token_endpoint=context["idp_token_endpoint"],
        client_id=context["client_id"],
        client_secret=context["client_secret"],
        idp_client_id=context.get("idp_client_id"),
    )
    await use(url, auth)


async def run(url: str, name: str, context: dict[str, Any]) -> int:
    fn = SCENARIOS.get(name)
    if fn is None:
        print(f"unknown scenario {name!r}", file=sys.stderr)
        return 2
    await fn(url, context)
    return 0


def main() -> None:
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    sys.exit(trio.run(run, sys.argv[-1], name, context))


if __name__ == "__main__":
    main()
