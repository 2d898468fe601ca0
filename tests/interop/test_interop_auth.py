"""Logging in against real authorization servers nobody here wrote.

* node ``oidc-provider`` 9.x (certified; dynamic registration, PKCE,
  resource indicators, rotating refresh tokens, DPoP offered by default) in
  front of a protected MCP server on the official Python SDK, which takes
  Bearer tokens only and checks them by introspection;
* PyPI ``oidc-provider-mock``, whose refusal of consent comes back without
  ``state``, and whose metadata omits PKCE.

The user's part is headless: `Browser` goes through oidc-provider's login
and consent pages (any login is accepted) without following the last
redirect, and hands its query back, as a `RedirectHandler` would.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from urllib.parse import parse_qsl, quote, urljoin, urlsplit

import attrs
import httpx2
import pytest
import trio
from process_support import server_process

import trio_mcp
from trio_mcp._core import oauth as core
from trio_mcp.auth import (
    AuthorizationFailed,
    FileTokenStorage,
    LoopbackRedirect,
    MemoryTokenStorage,
    OAuth,
    Tokens,
)

REDIRECT_URI = "http://127.0.0.1:9/callback"
GUARD = 60


@contextmanager
def authorization_server(peer, **env: str):
    with server_process(
        list(peer.cmd), r"^ISSUER http://127\.0\.0\.1:(\d+)$", env={**peer.env, **env}, path=""
    ) as running:
        yield running


@contextmanager
def protected_server(peer, issuer: str, *args: str):
    with server_process(
        [*peer.cmd, issuer, *args], r"^LISTENING http://127\.0\.0\.1:(\d+)/mcp$", env=peer.env
    ) as running:
        yield running


@pytest.fixture
def oidc_provider(peers):
    return peers["oidc-provider"]


@pytest.fixture
def provider_mock(peers):
    return peers["oidc-provider-mock"]


@pytest.fixture
def sdk_protected(peers):
    return peers["sdk-protected"]


@pytest.fixture
def stack(oidc_provider, sdk_protected):
    """oidc-provider with its defaults, and the SDK's protected server in front of it."""
    with authorization_server(oidc_provider) as issuer, protected_server(sdk_protected, issuer.base) as mcp:
        yield issuer, mcp


class Pending:
    def __init__(self, browser: Browser) -> None:
        self._browser = browser
        self.redirect_uri = REDIRECT_URI

    async def complete(self, authorization_url: str) -> Mapping[str, str]:
        return await self._browser.visit(authorization_url)


class Browser:
    """A headless user of oidc-provider's development pages: logs in as ``alice`` and consents."""

    def __init__(self) -> None:
        self.visits: list[str] = []

    @asynccontextmanager
    async def listen(self):
        await trio.lowlevel.checkpoint()
        yield Pending(self)

    async def visit(self, authorization_url: str) -> Mapping[str, str]:
        self.visits.append(authorization_url)
        return await drive_login(authorization_url)


async def drive_login(url: str, redirect_uri: str = REDIRECT_URI) -> dict[str, str]:
    """Go through the login and consent pages; the query of the redirect back."""
    async with httpx2.AsyncClient(follow_redirects=False, trust_env=False, timeout=10.0) as http:
        response = await http.get(url)
        for _ in range(20):
            if response.is_redirect:
                location = urljoin(str(response.url), response.headers["location"])
                if location.startswith(redirect_uri):
                    return dict(parse_qsl(urlsplit(location).query))
                response = await http.get(location)
                continue
            assert response.status_code == 200, response.text[:500]
            action = re.search(r'<form[^>]*action="([^"]+)"', response.text)
            assert action is not None, response.text[:500]
            target = urljoin(str(response.url), action.group(1))
            if 'name="login"' in response.text:
                response = await http.post(
                    target, data={"prompt": "login", "login": "alice", "password": "x"}
                )
            else:
                response = await http.post(target, data={"prompt": "consent"})
    raise AssertionError("the login pages never sent the browser back")


@asynccontextmanager
async def connected(url: str, auth: httpx2.Auth):
    options = trio_mcp.ClientOptions(probe_timeout=GUARD, handshake_timeout=GUARD)
    async with trio_mcp.open_client(
        trio_mcp.HTTPTarget(url, auth=auth, trust_env=False), options=options
    ) as client:
        yield client


async def tool_names(url: str, auth: httpx2.Auth) -> list[str]:
    async with connected(url, auth) as client:
        return [tool.name for tool in await client.list_tools()]


# ------------------------------------------------------------------ 1: DPoP offered, Bearer taken


async def test_a_default_login_works_where_dpop_is_offered_and_bearer_is_taken(stack):
    _, mcp = stack
    browser = Browser()
    auth = OAuth(mcp.url, redirect=browser)
    with trio.fail_after(GUARD):
        assert "echo" in await tool_names(mcp.url, auth)
    assert len(browser.visits) == 1
    assert auth.tokens is not None
    assert auth.tokens.token_type == "Bearer"


async def test_dpop_asked_for_against_a_bearer_only_server_fails_clearly_after_one_login(stack):
    _, mcp = stack
    browser = Browser()
    with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
        await tool_names(mcp.url, OAuth(mcp.url, redirect=browser, dpop=True))
    assert info.value.reason == "dpop"
    assert len(browser.visits) == 1


class Recording(MemoryTokenStorage):
    """The memory store, noting the type of each token kept."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list[str] = []

    async def set_tokens(self, resource: str, issuer: str, client_id: str, tokens: Tokens) -> None:
        self.kept.append(tokens.token_type)
        await super().set_tokens(resource, issuer, client_id, tokens)


async def test_dpop_asked_for_by_the_resource_then_refused_falls_back_to_bearer_without_a_second_login(
    oidc_provider, sdk_protected
):
    """The resource's metadata asks for DPoP, but it takes Bearer only (a misconfigured server)."""
    with (
        authorization_server(oidc_provider) as issuer,
        protected_server(sdk_protected, issuer.base, "--dpop") as mcp,
    ):
        browser = Browser()
        storage = Recording()
        auth = OAuth(mcp.url, redirect=browser, storage=storage)
        with trio.fail_after(GUARD):
            assert "echo" in await tool_names(mcp.url, auth)
    # DPoP first, as the metadata asked; then a Bearer token by a refresh, not by a login.
    assert storage.kept == ["DPoP", "Bearer"]
    assert len(browser.visits) == 1


# ------------------------------------------------------------------ 2: a kept login refreshed


async def test_a_new_process_refreshes_a_kept_login_whose_token_the_server_refuses(
    oidc_provider, sdk_protected, tmp_path
):
    """The access token expires at the server, but the store cannot know (no expires_in was kept)."""
    state = tmp_path / "trio-mcp" / "auth"
    storage = FileTokenStorage(state)
    with (
        authorization_server(oidc_provider, ACCESS_TTL="2") as issuer,
        protected_server(sdk_protected, issuer.base) as mcp,
        trio.fail_after(GUARD),
    ):
        await tool_names(mcp.url, OAuth(mcp.url, redirect=Browser(), storage=storage))
        (resource, kept_issuer), *_ = await storage.resources()
        client = await storage.get_client(resource, kept_issuer)
        assert client is not None
        tokens = await storage.get_tokens(resource, kept_issuer, client.client_id)
        assert tokens is not None
        assert tokens.refresh_token is not None
        unknown = attrs.evolve(tokens, expires_at=None, issued_at=None)
        await storage.set_tokens(resource, kept_issuer, client.client_id, unknown)
        await trio.sleep(2.5)  # the server's clock: the token is gone there
        # A new process: no browser, the file store only (as every command but login).
        done = await trio.run_process(
            [sys.executable, "-m", "trio_mcp", "tools", mcp.url],
            capture_stdout=True,
            capture_stderr=True,
            env={**_env(), "XDG_STATE_HOME": str(tmp_path)},
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert b"echo" in done.stdout
    refreshed = await storage.get_tokens(resource, kept_issuer, client.client_id)
    assert refreshed is not None
    assert refreshed.refresh_token not in (None, tokens.refresh_token)  # rotated, and kept


def _env() -> dict[str, str]:
    environ = {
        k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    # The trio_mcp these tests import, in the child too.
    environ["PYTHONPATH"] = str(Path(trio_mcp.__file__).resolve().parents[1])
    return environ


# ------------------------------------------------------------------ 3: short tokens


async def test_a_short_lived_token_is_not_refreshed_on_every_request(oidc_provider, sdk_protected):
    with (
        authorization_server(oidc_provider, ACCESS_TTL="30") as issuer,
        protected_server(sdk_protected, issuer.base) as mcp,
    ):
        auth = OAuth(mcp.url, redirect=Browser())
        with trio.fail_after(GUARD):
            async with connected(mcp.url, auth) as client:
                await client.list_tools()
                assert auth.tokens is not None
                first = auth.tokens.refresh_token
                async with trio.open_nursery() as nursery:
                    for _ in range(20):
                        nursery.start_soon(client.list_tools)
                assert auth.tokens.refresh_token == first  # rotated on each refresh: none happened


# ------------------------------------------------------------------ 4: one deadline per flow request


DRIBBLER = r"""
import socket, sys, threading, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
port = srv.getsockname()[1]
print(f"LISTENING {port}", flush=True)
def serve(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    if data.startswith(b"POST"):
        body = b'{"error":"invalid_token"}'
        head = ("HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
                f'www-authenticate: Bearer resource_metadata="http://127.0.0.1:{port}/prm"\r\n'
                f"content-length: {len(body)}\r\n\r\n").encode()
        conn.sendall(head + body)
    else:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n")
        while True:
            conn.sendall(b" ")
            time.sleep(0.3)
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""


async def test_a_metadata_endpoint_that_dribbles_ends_in_authorization_failed_at_the_deadline():
    with server_process([sys.executable, "-c", DRIBBLER], r"^LISTENING (\d+)$") as slow:
        auth = OAuth(slow.url, redirect=Browser(), request_timeout=1.5)
        with trio.fail_after(20), pytest.raises(AuthorizationFailed) as info:
            await tool_names(slow.url, auth)
    assert info.value.reason == "timeout"
    assert "request_timeout" in str(info.value)


# ------------------------------------------------------------------ 7: a refusal without state


@pytest.fixture
def mock_server(provider_mock):
    with server_process(
        [*provider_mock.cmd, "--port", "0"], r"(?i)running on http://127\.0\.0\.1:(\d+)", path=""
    ) as running:
        yield running


async def test_a_refused_consent_without_state_ends_the_login_at_once(mock_server):
    """oidc-provider-mock answers a denied consent with ``error=access_denied`` and no ``state``."""
    issuer = mock_server.base
    opened: list[str] = []

    def deny(url: str) -> bool:
        # The user's browser: the consent page, "deny", then where the server sends it.
        opened.append(url)
        query = urlsplit(url).query
        with httpx2.Client(follow_redirects=False, trust_env=False, timeout=10.0) as http:
            refused = http.post(f"{issuer}/oauth2/authorize?{query}", data={"action": "deny"})
            location = refused.headers["location"]
            assert "state=" not in location
            http.get(location)
        return True

    handler = LoopbackRedirect(open_browser=deny, output=io.StringIO())
    state = "S" * 43
    with trio.fail_after(GUARD):
        async with handler.listen() as pending:
            async with httpx2.AsyncClient(trust_env=False) as http:
                registered = await http.post(
                    f"{issuer}/oauth2/clients",
                    json={"redirect_uris": [pending.redirect_uri], "token_endpoint_auth_method": "none"},
                )
            params = core.authorization_params(
                client_id=registered.json()["client_id"],
                redirect_uri=pending.redirect_uri,
                state=state,
                verifier=core.pkce_verifier(b"v" * 32),
                resource="http://127.0.0.1/mcp",
                scope="openid",
            )
            answer = await pending.complete(core.authorization_url(f"{issuer}/oauth2/authorize", params))
    with pytest.raises(AuthorizationFailed) as info:
        core.check_callback(answer, state=state, issuer=issuer, iss_supported=False)
    assert info.value.reason == "authorization_denied"
    assert info.value.error == "access_denied"
    assert len(opened) == 1


async def test_the_mock_without_pkce_in_its_metadata_is_refused(mock_server, sdk_protected):
    with protected_server(sdk_protected, mock_server.base) as mcp:
        browser = Browser()
        with trio.fail_after(GUARD), pytest.raises(AuthorizationFailed) as info:
            await tool_names(mcp.url, OAuth(mcp.url, redirect=browser))
    assert info.value.reason == "pkce"
    assert browser.visits == []


# ------------------------------------------------------------------ logout revokes


async def test_logout_revokes_at_the_authorization_server(stack, tmp_path):
    issuer, mcp = stack
    storage = FileTokenStorage(tmp_path)
    auth = OAuth(mcp.url, redirect=Browser(), storage=storage)
    with trio.fail_after(GUARD):
        await tool_names(mcp.url, auth)
        (resource, kept_issuer), *_ = await storage.resources()
        client = await storage.get_client(resource, kept_issuer)
        assert client is not None
        tokens = await storage.get_tokens(resource, kept_issuer, client.client_id)
        assert tokens is not None
        assert await OAuth(mcp.url, storage=storage).logout() == [resource]
        assert await storage.resources() == []
        async with httpx2.AsyncClient(trust_env=False) as http:
            for token in (tokens.refresh_token, tokens.access_token):
                seen = await http.post(
                    f"{issuer.base}/token/introspection", data={"token": token}, auth=("mcp-rs", "rs-secret")
                )
                assert seen.json()["active"] is False


# ------------------------------------------------------------------ the command line


async def _cli_login(url: str, state: Path, *flags: str) -> tuple[int, str, int]:
    """``trio-mcp login --headless``, the user going through the pages: exit status, stderr, logins."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "trio_mcp", "login", "--headless", *flags, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**_env(), "XDG_STATE_HOME": str(state)},
    )
    assert process.stdin is not None
    assert process.stderr is not None
    seen = b""
    logins = 0
    try:
        while True:
            chunk = await process.stderr.receive_some(65536)
            if not chunk:
                break
            seen += chunk
            found = re.search(rb"\n  (http://\S+)\n", seen)
            if found is not None and b"paste here" in seen[found.end() :]:
                logins += 1
                answer = await drive_login(found.group(1).decode(), "http://127.0.0.1/callback")
                back = "http://127.0.0.1/callback?" + "&".join(f"{k}={quote(v)}" for k, v in answer.items())
                await process.stdin.send_all(back.encode() + b"\n")
                seen = seen[found.end() :].replace(b"paste here", b"pasted")
        await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()
    return process.returncode, seen.decode(errors="replace"), logins


@pytest.mark.parametrize(
    ("flags", "status", "token_type"), [((), 0, "Bearer"), (("--no-dpop",), 0, "Bearer")]
)
async def test_the_login_command_logs_in_once_by_default(stack, tmp_path, flags, status, token_type):
    _, mcp = stack
    with trio.fail_after(GUARD):
        code, stderr, logins = await _cli_login(mcp.url, tmp_path, *flags)
    assert (code, logins) == (status, 1), stderr
    storage = FileTokenStorage(tmp_path / "trio-mcp" / "auth")
    (resource, issuer), *_ = await storage.resources()
    client = await storage.get_client(resource, issuer)
    assert client is not None
    tokens = await storage.get_tokens(resource, issuer, client.client_id)
    assert tokens is not None
    assert tokens.token_type == token_type


async def test_the_login_command_with_dpop_against_a_bearer_only_server_says_why(stack, tmp_path):
    _, mcp = stack
    with trio.fail_after(GUARD):
        code, stderr, logins = await _cli_login(mcp.url, tmp_path, "--dpop")
    assert (code, logins) == (10, 1), stderr
    assert "DPoP" in stderr
