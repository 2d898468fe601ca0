"""The authorization flow (trio_mcp.auth) against an authorization server and a protected MCP server of our own.

``tests/servers/auth_server.py`` runs as a real process: an OAuth 2.1
authorization server on one loopback port, a protected MCP server on
another, each behaviour chosen by the URL (``/s/<scenario>/mcp``). The
browser step is headless: the authorization URL is fetched without
following redirects, and the redirect's query is handed back, as a
`RedirectHandler` of an application would.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx2
import pytest
import trio
from process_support import server_process

import trio_mcp
from trio_mcp.auth import (
    AuthorizationFailed,
    ClientCredentials,
    ClientInfo,
    EnterpriseManaged,
    FileTokenStorage,
    JWTBearer,
    MemoryTokenStorage,
    OAuth,
    Tokens,
)

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
import auth_server

AUTH_SERVER = Path(__file__).resolve().parent / "servers" / "auth_server.py"
REDIRECT_URI = "http://127.0.0.1:9/callback"
GUARD = 30


@pytest.fixture(scope="module")
def server():
    with server_process([sys.executable, str(AUTH_SERVER)], r"^LISTENING (\d+)$") as running:
        yield running


def url_of(server, scenario: str) -> str:
    return f"http://127.0.0.1:{server.port}/s/{scenario}/mcp"


async def stats(server) -> dict:
    async with httpx2.AsyncClient(trust_env=False) as http:
        response = await http.get(f"{server.base}/auth-stats")
    return response.json()


def seen(report: dict, scenario: str, what: str) -> int:
    return report["seen"].get(f"{scenario}:{what}", 0)


class Pending:
    def __init__(self, handler: Browser) -> None:
        self._handler = handler
        self.redirect_uri = REDIRECT_URI

    async def complete(self, authorization_url: str) -> Mapping[str, str]:
        return await self._handler.visit(authorization_url)


class Browser:
    """A headless user: follows the authorization URL once and reads the redirect back."""

    def __init__(self, *, tamper=None, hang: bool = False) -> None:
        self.visits: list[str] = []
        self.answers: list[dict[str, str]] = []
        self.listening = 0
        self._tamper = tamper
        self._hang = hang

    @asynccontextmanager
    async def listen(self):
        self.listening += 1
        try:
            yield Pending(self)
        finally:
            self.listening -= 1

    async def visit(self, authorization_url: str) -> Mapping[str, str]:
        self.visits.append(authorization_url)
        if self._hang:
            await trio.sleep_forever()
        async with httpx2.AsyncClient(follow_redirects=False, trust_env=False) as http:
            response = await http.get(authorization_url)
        assert response.status_code == 302, response.text
        answer = dict(parse_qsl(urlsplit(response.headers["location"]).query))
        self.answers.append(answer)
        if self._tamper is not None:
            answer = self._tamper(answer)
        return answer


@asynccontextmanager
async def connected(url: str, auth: httpx2.Auth):
    async with trio_mcp.open_client(trio_mcp.HTTPTarget(url, auth=auth, trust_env=False)) as client:
        yield client


def oauth(url: str, browser: Browser | None = None, **options) -> OAuth:
    return OAuth(url, redirect=browser if browser is not None else Browser(), **options)


# ------------------------------------------------------------------ the flow


async def test_login_calls_and_steps_up(server):
    scenario = "ok"
    url = url_of(server, scenario)
    browser = Browser()
    auth = oauth(url, browser)
    with trio.fail_after(GUARD):
        async with connected(url, auth) as client:
            tools = await client.list_tools()
            assert "echo" in [tool.name for tool in tools]
            result = await client.call_tool("echo", {"text": "hi"})
            assert "hi" in result.text
    report = await stats(server)
    # A login for the challenge's scope, then one step-up for tools:call.
    assert len(browser.visits) == 2
    assert seen(report, scenario, "register") == 1
    first, second = (dict(parse_qsl(urlsplit(v).query)) for v in browser.visits)
    assert first["scope"] == "mcp:basic"
    assert set(second["scope"].split()) == {"mcp:basic", "tools:call"}
    for params in (first, second):
        assert params["code_challenge_method"] == "S256"
        assert params["resource"] == url
        assert len(params["state"]) >= 22
    assert first["state"] != second["state"]
    assert first["code_challenge"] != second["code_challenge"]
    assert browser.listening == 0
    assert auth.tokens is not None
    assert auth.tokens.access_token not in repr(auth)


async def test_concurrent_requests_authorize_once(server):
    scenario = "ok"
    url = url_of(server, scenario)
    browser = Browser()
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, browser)) as client:
            results = []

            async def call(i):
                results.append(await client.call_tool("echo", {"text": f"t{i}"}))

            async with trio.open_nursery() as nursery:
                for i in range(6):
                    nursery.start_soon(call, i)
    assert len(results) == 6
    # One login at connect, one step-up shared by the six calls.
    assert len(browser.visits) == 2


async def test_stored_tokens_serve_another_client_without_a_login(server):
    url = url_of(server, "ok")
    storage = MemoryTokenStorage()
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, Browser(), storage=storage)) as client:
            await client.list_tools()
        again = Browser()
        async with connected(url, oauth(url, again, storage=storage)) as client:
            await client.list_tools()
        # Without any redirect handler too.
        async with connected(url, OAuth(url, storage=storage)) as client:
            await client.list_tools()
    assert again.visits == []


async def test_without_a_redirect_handler_the_server_asks_for_a_login(server):
    url = url_of(server, "ok")
    with trio.fail_after(GUARD), pytest.raises(trio_mcp.AuthRequired) as info:
        async with connected(url, OAuth(url)):
            pass
    assert info.value.status == 401


async def test_pre_registered_client_never_registers(server):
    scenario = "ok+no-dcr"
    url = url_of(server, scenario)
    client_info = ClientInfo(auth_server.MACHINE_ID, auth_server.MACHINE_SECRET, "client_secret_post")
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, client=client_info)) as client:
            await client.list_tools()
    report = await stats(server)
    assert seen(report, scenario, "register") == 0
    assert seen(report, scenario, "granted-authorization_code") == 1


async def test_no_registration_and_no_client_is_refused(server):
    url = url_of(server, "no-dcr")
    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        async with connected(url, oauth(url)):
            pass
    assert info.value.reason == "registration"


@pytest.mark.slow
async def test_refresh_rotates_without_a_new_login(server):
    scenario = "short+offline"
    url = url_of(server, scenario)
    browser = Browser()
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, browser)) as client:
            for _ in range(3):
                await trio.sleep(0.8)  # past the last quarter of the token's second
                await client.list_tools()
    report = await stats(server)
    # Tokens live 1 s: each request refreshed first, each with the newest
    # refresh token (the server revokes the old one on use), and no new login.
    assert len(browser.visits) == 1
    assert seen(report, scenario, "refreshed") >= 2
    assert "offline_access" in dict(parse_qsl(urlsplit(browser.visits[0]).query))["scope"].split()


@pytest.mark.slow
async def test_revoked_refresh_token_means_a_new_login(server):
    scenario = "short+refresh-revoked"
    url = url_of(server, scenario)
    browser = Browser()
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, browser)) as client:
            await trio.sleep(1.2)  # the access token expires at the server
            await client.list_tools()
    assert len(browser.visits) == 2


async def test_absolute_expiry_is_stored(server):
    url = url_of(server, "ok")
    storage = MemoryTokenStorage()
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, storage=storage)) as client:
            await client.list_tools()
    (tokens,) = storage._tokens.values()
    assert isinstance(tokens, Tokens)
    assert tokens.expires_at is not None
    assert tokens.expires_at > 1_000_000_000  # an epoch time, not a lifetime


async def test_an_expiry_of_nan_is_treated_as_absent_and_the_store_stays_json(server, tmp_path):
    url = url_of(server, "nan-expiry")
    storage = FileTokenStorage(tmp_path)
    auth = oauth(url, storage=storage)
    with trio.fail_after(GUARD):
        async with connected(url, auth) as client:
            await client.list_tools()
    assert auth.tokens is not None
    assert auth.tokens.expires_at is None

    def no_constants(name: str) -> None:
        raise AssertionError(f"the store holds a bare {name}")

    document = json.loads(storage.path.read_text(), parse_constant=no_constants)
    assert "NaN" not in json.dumps(document)


async def test_a_dpop_token_to_a_request_without_a_proof_is_refused(server):
    url = url_of(server, "unproven-binding")
    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        async with connected(url, oauth(url)):
            pass
    assert info.value.reason == "token"
    assert "DPoP" in str(info.value)


async def test_a_registration_the_server_forgot_is_made_again_once(server):
    scenario = "ok+forgetful"
    url = url_of(server, scenario)
    browser = Browser()
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, browser)) as client:
            await client.list_tools()
            async with httpx2.AsyncClient(trust_env=False) as http:
                await http.post(f"{server.base}/auth-forget")
            # The kept token is refused, its refresh answers invalid_client: register again, log in again.
            await client.list_tools()
    report = await stats(server)
    assert len(browser.visits) == 2
    assert report["clients"] == 1
    assert seen(report, scenario, "granted-authorization_code") == 2


async def test_step_up_gives_up_when_the_scope_is_never_granted(server):
    scenario = "scope-never"
    url = url_of(server, scenario)
    browser = Browser()
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, browser)) as client:
            with pytest.raises(trio_mcp.AuthRequired) as info:
                await client.call_tool("echo", {"text": "x"})
            assert info.value.status == 403
            assert info.value.error == "insufficient_scope"
            # The connection keeps working.
            await client.list_tools()
    assert len(browser.visits) <= 3


@pytest.mark.parametrize("scenario", ["dpop", "dpop-nonce"])
async def test_dpop_bound_tokens(server, scenario):
    url = url_of(server, scenario)
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url)) as client:
            await client.list_tools()
            await client.call_tool("echo", {"text": "bound"})
    report = await stats(server)
    assert not [r for r in report["refused"] if r.startswith("dpop")]
    assert seen(report, scenario, "mcp-ok") >= 2
    if scenario == "dpop-nonce":
        assert seen(report, scenario, "as-nonce") >= 1
        assert seen(report, scenario, "rs-nonce") >= 1


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "private_key_jwt"])
async def test_client_credentials(server, method):
    scenario = "cc"
    url = url_of(server, scenario)
    if method == "private_key_jwt":
        auth = ClientCredentials(url, client_id=auth_server.MACHINE_ID, private_key=auth_server.TEST_KEY_PEM)
    else:
        auth = ClientCredentials(
            url, client_id=auth_server.MACHINE_ID, client_secret=auth_server.MACHINE_SECRET, method=method
        )
    with trio.fail_after(GUARD):
        async with connected(url, auth) as client:
            await client.list_tools()


async def test_workload_identity_jwt_bearer(server):
    url = url_of(server, "cc")
    with trio.fail_after(GUARD):
        async with connected(url, JWTBearer(url, assertion=auth_server.WORKLOAD_JWT)) as client:
            await client.list_tools()


async def test_workload_identity_refused_is_not_retried(server):
    scenario = "cc"
    url = url_of(server, scenario)
    before = seen(await stats(server), scenario, "token")
    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        async with connected(url, JWTBearer(url, assertion="not-the-workload")):
            pass
    assert info.value.error == "invalid_grant"
    assert seen(await stats(server), scenario, "token") == before + 1


async def test_enterprise_managed_authorization(server):
    scenario = "cc"
    url = url_of(server, scenario)
    issuer = f"http://127.0.0.1:{(await stats(server))['as_port']}/s/{scenario}"
    auth = EnterpriseManaged(
        url,
        id_token=auth_server.ID_TOKEN,
        idp_token_endpoint=f"{issuer}/idp-token",
        client_id=auth_server.MACHINE_ID,
        client_secret=auth_server.MACHINE_SECRET,
    )
    with trio.fail_after(GUARD):
        async with connected(url, auth) as client:
            await client.list_tools()
    assert seen(await stats(server), scenario, "idp-token") == 1


async def test_credentials_never_go_to_another_authorization_server(server):
    scenario = "cc"
    url = url_of(server, scenario)
    before = seen(await stats(server), scenario, "token")
    auth = ClientCredentials(
        url,
        client_id=auth_server.MACHINE_ID,
        client_secret="s3cret-for-another",
        issuer="https://as.example.com",
    )
    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        async with connected(url, auth):
            pass
    assert info.value.reason == "registration"
    assert seen(await stats(server), scenario, "token") == before
    pre = ClientInfo("pre-id", "pre-s3cret", "client_secret_basic", issuer="https://as.example.com")
    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        async with connected(url_of(server, "ok"), oauth(url_of(server, "ok"), client=pre)):
            pass
    assert info.value.reason == "registration"


async def test_client_credentials_with_a_wrong_secret(server):
    url = url_of(server, "cc")
    auth = ClientCredentials(url, client_id=auth_server.MACHINE_ID, client_secret="wrong-s3cret")
    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        async with connected(url, auth):
            pass
    assert info.value.error == "invalid_client"
    assert "wrong-s3cret" not in str(info.value)


# ------------------------------------------------------------------ hostile servers


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        ("wrong-issuer", "issuer_mismatch"),
        ("no-s256", "pkce"),
        ("no-pkce", "pkce"),
        ("resource-mismatch", "resource_mismatch"),
        ("insecure-token", "insecure_endpoint"),
        ("token-error", "token"),
        ("token-garbage", "token"),
        ("token-500", "token"),
        ("token-redirect", "metadata"),
        ("state-mismatch", "state_mismatch"),
        ("iss-wrong", "iss_mismatch"),
        ("denied", "authorization_denied"),
    ],
)
async def test_hostile_authorization_server(server, scenario, reason):
    url = url_of(server, scenario)
    browser = Browser()
    auth = oauth(url, browser)
    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        async with connected(url, auth):
            pass
    assert info.value.reason == reason
    report = await stats(server)
    if reason in ("issuer_mismatch", "pkce", "resource_mismatch", "insecure_endpoint"):
        # Refused before anything is sent to the authorization server.
        assert browser.visits == []
        assert seen(report, scenario, "register") == 0
    if reason in ("state_mismatch", "iss_mismatch", "authorization_denied"):
        # The code never reaches the token endpoint.
        assert seen(report, scenario, "token") == 0
    if reason == "authorization_denied":
        # A login the user refused is not started again (the handshake's next request included).
        assert len(browser.visits) == 1
    text = f"{info.value} {info.value!r}"
    for answer in browser.answers:
        for value in (answer.get("code"), answer.get("state")):
            if value:
                assert value not in text
    assert auth.tokens is None


async def test_a_refusal_is_not_read_and_the_retry_goes_on_a_fresh_connection(server):
    # httpx2 reads a refusal's body before the retry: the flow leaves it
    # unread, so that its connection (possibly closed by the server while a
    # person logged in) is not reused for the retry.
    scenario = "huge-401"
    url = url_of(server, scenario)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with trio.fail_after(GUARD):
        async with httpx2.AsyncClient(auth=oauth(url), trust_env=False) as http:
            response = await http.post(url, json=message)
    assert response.status_code not in (401, 403)
    (refusal,) = response.history
    assert refusal.status_code == 401
    assert refusal.content == b""  # 2 MiB were sent; none kept
    assert seen(await stats(server), scenario, "mcp-ok") == 1


async def test_a_reused_code_is_refused(server):
    url = url_of(server, "ok")
    first = Browser()
    with trio.fail_after(GUARD):
        async with connected(url, oauth(url, first)) as client:
            await client.list_tools()
    old_code = first.answers[0]["code"]

    def replay(answer):
        return {**answer, "code": old_code}

    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        async with connected(url, oauth(url, Browser(tamper=replay))):
            pass
    assert info.value.reason == "invalid_grant"
    assert old_code not in str(info.value)


@pytest.mark.slow
async def test_a_slow_token_endpoint_is_bounded_by_the_callers_scope(server):
    url = url_of(server, "token-slow")
    browser = Browser()
    auth = oauth(url, browser)
    for _ in range(2):  # a cancelled authorization does not block the next one
        with trio.fail_after(GUARD):
            with trio.move_on_after(1.5) as scope:
                async with connected(url, auth):
                    pass
        assert scope.cancelled_caught
    assert len(browser.visits) == 2
    assert browser.listening == 0


@pytest.mark.slow
async def test_a_login_abandoned_by_the_caller_leaves_nothing_listening(server):
    url = url_of(server, "ok")
    hanging = Browser(hang=True)
    auth = oauth(url, hanging)
    with trio.fail_after(GUARD):
        with trio.move_on_after(1) as scope:
            async with connected(url, auth):
                pass
    assert scope.cancelled_caught
    assert hanging.listening == 0
    assert auth.tokens is None


# ------------------------------------------------------------------ what goes where


async def test_tokens_and_secrets_never_reach_the_authorization_server_or_a_url(server):
    # Run last in this module (pytest keeps file order): every flow above has
    # talked to the authorization server by now.
    report = await stats(server)
    assert report["as_bearers"] == 0
    assert report["leaks"] == []
    assert len(report["as_urls"]) > 20


async def test_tokens_go_only_to_the_servers_origin():
    seen_headers = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen_headers.append((request.url.host, request.headers.get("authorization")))
        return httpx2.Response(200, json={})

    # A login kept in the store: the first request carries its token, no 401 needed.
    storage = MemoryTokenStorage()
    await storage.set_client("https://mcp.example.com/mcp", "https://as.example.com", ClientInfo("c"))
    await storage.set_tokens(
        "https://mcp.example.com/mcp", "https://as.example.com", "c", Tokens("AT-secret", "Bearer")
    )
    auth = OAuth("https://mcp.example.com/mcp", storage=storage)
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler), auth=auth) as http:
        await http.get("https://mcp.example.com/mcp")
        await http.get("https://other.example.com/mcp")
        await http.get("http://mcp.example.com/mcp")  # another scheme: another origin
    assert seen_headers == [
        ("mcp.example.com", "Bearer AT-secret"),
        ("other.example.com", None),
        ("mcp.example.com", None),
    ]


def test_the_plain_http_path_does_not_import_the_signing_extra():
    code = textwrap.dedent(
        """
        import sys
        import trio_mcp, trio_mcp.auth
        from trio_mcp._transports import http
        trio_mcp.auth.OAuth("https://mcp.example.com/mcp")
        trio_mcp.auth.ClientCredentials("https://mcp.example.com/mcp", client_id="a", client_secret="b")
        assert "cryptography" not in sys.modules, "cryptography imported"
        print("ok")
        """
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PYTHONPATH": str(root)},
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_sync_clients_are_refused():
    with pytest.raises(RuntimeError, match="AsyncClient"), httpx2.Client(auth=OAuth("https://x/mcp")) as http:
        http.get("https://x/mcp")


async def test_the_flows_own_requests_follow_same_origin_redirects_only():
    """The package's one redirect rule: a moved metadata document is found, another origin is not followed."""
    asked: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        asked.append(str(request.url))
        path = request.url.path
        if request.url.host == "mcp.example.com":
            if path == "/mcp":
                return httpx2.Response(401, headers={"www-authenticate": "Bearer"})
            if path == "/.well-known/oauth-protected-resource/mcp":
                return httpx2.Response(308, headers={"location": "/moved/prm.json"})
            if path == "/moved/prm.json":
                doc = {
                    "resource": "https://mcp.example.com/mcp",
                    "authorization_servers": ["https://as.example.com"],
                }
                return httpx2.Response(200, json=doc)
        if request.url.host == "as.example.com":
            return httpx2.Response(302, headers={"location": "https://elsewhere.example.com/metadata"})
        return httpx2.Response(404)

    transport = httpx2.MockTransport(handler)
    auth = OAuth(
        "https://mcp.example.com/mcp", redirect=Browser(), http_client=httpx2.AsyncClient(transport=transport)
    )
    async with httpx2.AsyncClient(transport=transport, auth=auth) as http:
        with pytest.raises(AuthorizationFailed, match="another origin") as info:
            await http.post("https://mcp.example.com/mcp", json={})
    assert info.value.reason == "metadata"
    assert "https://mcp.example.com/moved/prm.json" in asked
    assert not any("elsewhere" in url for url in asked)
