"""The order of a login (trio_mcp._core.oauth_flow.AuthFlow), driven by a scripted server in memory.

`Scripted` is a protected MCP server and its authorization server in one
object: it answers each action the flow yields (its own requests, the MCP
request, the user's part, the store), counts what happened, and can be told
to misbehave. `Driver` plays the Trio side without I/O: a store in a dict,
signatures as readable stand-ins, a clock the test moves. Examples pin the
decisions the issue names; Hypothesis properties check the budgets over
any server behaviour and any sequence of requests and clock steps.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from trio_mcp._core import oauth, oauth_flow
from trio_mcp._core.oauth import AuthorizationFailed, ClientInfo, Tokens
from trio_mcp._core.oauth_flow import AuthFlow, FlowSettings

MCP = "https://mcp.example.com/mcp"
AS = "https://as.example.com"
REDIRECT = "http://127.0.0.1:1234/callback"


@attrs.define
class Scripted:
    """An MCP server and its authorization server, answering the flow's actions."""

    lifetime: float | None = 3600.0
    refresh_tokens: bool = True
    refuse_refresh: bool = False
    forget_clients: bool = False
    tool_scope: str | None = None
    resource_dpop: str = "no"  # "no": Bearer only; "challenge": a DPoP challenge; "metadata": PRM says so
    as_offers_dpop: bool = True
    deny: bool = False
    expires_in: Any = None  # instead of the lifetime, verbatim
    token_type: str | None = None  # instead of the right one
    now: float = 1_000_000.0

    logins: int = 0
    refreshes: int = 0
    registrations: int = 0
    revoked: list[str] = attrs.field(factory=list)
    authorize_scopes: list[set[str]] = attrs.field(factory=list)
    used_refresh: list[str] = attrs.field(factory=list)
    proofs_to_as: int = 0
    statuses: list[int] = attrs.field(factory=list)
    access: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    refresh: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    clients: set[str] = attrs.field(factory=set)
    _serial: int = 0

    def _next(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}-{self._serial}"

    # ------------------------------------------------------------ the MCP server

    def resource(self, headers: dict[str, str], tools_call: bool) -> oauth_flow.Answer:
        answer = self._resource(headers, tools_call)
        self.statuses.append(answer.status)
        return answer

    def _resource(self, headers: dict[str, str], tools_call: bool) -> oauth_flow.Answer:
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        grant = self.access.get(token)
        challenge_scheme = "DPoP" if self.resource_dpop == "challenge" else "Bearer"
        challenge = f'{challenge_scheme} resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="read"'
        if grant is None or (grant["expires"] is not None and grant["expires"] <= self.now):
            return oauth_flow.Answer(401, {"www-authenticate": challenge})
        if grant["dpop"]:
            if scheme != "DPoP" or "dpop" not in headers:
                return oauth_flow.Answer(401, {"www-authenticate": 'DPoP error="invalid_token"'})
        elif scheme != "Bearer":
            return oauth_flow.Answer(401, {"www-authenticate": challenge})
        if grant["dpop"] and self.resource_dpop == "no":
            # A Bearer-only resource refuses a DPoP-bound token.
            return oauth_flow.Answer(401, {"www-authenticate": 'Bearer error="invalid_token"'})
        if tools_call and self.tool_scope and self.tool_scope not in grant["scope"].split():
            return oauth_flow.Answer(
                403, {"www-authenticate": f'Bearer error="insufficient_scope", scope="{self.tool_scope}"'}
            )
        return oauth_flow.Answer(200)

    # ------------------------------------------------------------ the authorization server

    def http(self, action: oauth_flow.Send) -> oauth_flow.Answer:
        path = urlsplit(action.url).path
        if path == "/.well-known/oauth-protected-resource/mcp":
            doc: dict[str, Any] = {
                "resource": MCP,
                "authorization_servers": [AS],
                "scopes_supported": ["read"],
            }
            if self.resource_dpop == "metadata":
                doc["dpop_bound_access_tokens_required"] = True
            return _json(200, doc)
        if path == "/.well-known/oauth-authorization-server":
            doc = {
                "issuer": AS,
                "authorization_endpoint": f"{AS}/authorize",
                "token_endpoint": f"{AS}/token",
                "registration_endpoint": f"{AS}/register",
                "revocation_endpoint": f"{AS}/revoke",
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_methods_supported": ["none"],
            }
            if self.as_offers_dpop:
                doc["dpop_signing_alg_values_supported"] = ["ES256"]
            return _json(200, doc)
        if path == "/register":
            self.registrations += 1
            client_id = self._next("client")
            self.clients.add(client_id)
            body = dict(action.json)
            return _json(201, {**body, "client_id": client_id, "token_endpoint_auth_method": "none"})
        if path == "/token":
            return self.token(dict(action.form or {}), "dpop" in action.headers)
        if path == "/revoke":
            self.revoked.append(dict(action.form or {})["token"])
            return oauth_flow.Answer(200)
        return oauth_flow.Answer(404)

    def authorize(self, url: str) -> dict[str, str]:
        query = dict(parse_qsl(urlsplit(url).query))
        self.logins += 1
        self.authorize_scopes.append(set(query.get("scope", "").split()))
        if self.deny:
            return {"error": "access_denied"}
        if query["client_id"] not in self.clients:
            return {"error": "invalid_request", "state": query["state"]}
        code = self._next("code")
        self.refresh[code] = {"scope": query.get("scope", ""), "client": query["client_id"]}
        return {"code": code, "state": query["state"]}

    def token(self, form: dict[str, str], proof: bool) -> oauth_flow.Answer:
        if proof:
            self.proofs_to_as += 1
        client = form.get("client_id", "")
        if self.forget_clients and client not in self.clients:
            return _json(401, {"error": "invalid_client"})
        if form["grant_type"] == "authorization_code":
            grant = self.refresh.pop(form["code"], None)
        else:
            self.refreshes += 1
            self.used_refresh.append(form["refresh_token"])
            grant = None if self.refuse_refresh else self.refresh.pop(form["refresh_token"], None)
        if grant is None:
            return _json(400, {"error": "invalid_grant"})
        access = self._next("at")
        bound = proof and self.as_offers_dpop
        self.access[access] = {
            "scope": grant["scope"],
            "expires": None if self.lifetime is None else self.now + self.lifetime,
            "dpop": bound,
        }
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": self.token_type or ("DPoP" if bound else "Bearer"),
            "scope": grant["scope"],
        }
        if self.expires_in is not None:
            answer["expires_in"] = self.expires_in
        elif self.lifetime is not None:
            answer["expires_in"] = self.lifetime
        if self.refresh_tokens:
            refresh = self._next("rt")
            self.refresh[refresh] = dict(grant)
            answer["refresh_token"] = refresh
        return _json(200, answer)

    def forget_all_clients(self) -> None:
        self.clients.clear()


def _json(status: int, doc: Any) -> oauth_flow.Answer:
    return oauth_flow.Answer(status, {"content-type": "application/json"}, json.dumps(doc).encode())


@attrs.define
class Driver:
    """The Trio side, without I/O: a store in a dict, readable signatures, the scripted server's clock."""

    server: Scripted
    store: dict[tuple[str, ...], Any] = attrs.field(factory=dict)
    dpop_signed: int = 0
    grants: int = 0

    def flow(self, **options: Any) -> AuthFlow:
        options.setdefault("interactive", True)
        counter = iter(range(10**9))
        return AuthFlow(
            FlowSettings(MCP, **options),
            now=lambda: self.server.now,
            random=lambda n: next(counter).to_bytes(n, "big"),
        )

    def request(self, flow: AuthFlow, *, tools_call: bool = False) -> int:
        """One MCP request; its last status."""
        steps = flow.request("POST", MCP)
        answer: Any = None
        status = 0
        while True:
            try:
                action = steps.send(answer)
            except StopIteration:
                return status
            if isinstance(action, oauth_flow.SendResource):
                result = self.server.resource(dict(action.headers), tools_call)
                status = result.status
                answer = result
            elif isinstance(action, oauth_flow.Renew):
                if action.kind != "restore" and flow.tokens is not action.used:
                    answer = "changed"
                else:
                    answer = self.run(flow.grant(action))
            else:
                answer = self.act(action)

    def run(self, steps: Any) -> Any:
        self.grants += 1
        answer: Any = None
        while True:
            try:
                action = steps.send(answer)
            except StopIteration as stop:
                return stop.value
            answer = self.act(action)

    def act(self, action: Any) -> Any:
        store = self.store
        if isinstance(action, oauth_flow.Send):
            return self.server.http(action)
        if isinstance(action, oauth_flow.Sign):
            if action.key == "dpop":
                self.dpop_signed += 1
            return "signed." + json.dumps(dict(action.claims), sort_keys=True)
        if isinstance(action, oauth_flow.Listen):
            return REDIRECT
        if isinstance(action, oauth_flow.Browse):
            return self.server.authorize(action.url)
        if isinstance(action, oauth_flow.LoadClient):
            return store.get(("client", action.resource, action.issuer))
        if isinstance(action, oauth_flow.KeepClient):
            store["client", action.resource, action.issuer] = action.client
            return None
        if isinstance(action, oauth_flow.LoadTokens):
            return store.get(("tokens", action.resource, action.issuer, action.client_id))
        if isinstance(action, oauth_flow.KeepTokens):
            store["tokens", action.resource, action.issuer, action.client_id] = action.tokens
            return None
        if isinstance(action, oauth_flow.Forget):
            for key in [k for k in store if k[1:3] == (action.resource, action.issuer)]:
                del store[key]
            return None
        if isinstance(action, oauth_flow.Restore):
            for key, client in store.items():
                if key[0] == "client" and oauth_flow.covers(key[1], action.server_url):
                    tokens = store.get(("tokens", key[1], key[2], client.client_id))
                    if tokens is not None:
                        return oauth_flow.Kept(key[1], key[2], client, tokens)
            return None
        if isinstance(action, oauth_flow.Assertion):
            return "assertion"
        raise AssertionError(action)


# ------------------------------------------------------------------ examples


def test_a_first_request_logs_in_once_and_later_ones_reuse_the_token():
    server = Scripted()
    driver = Driver(server)
    flow = driver.flow()
    assert driver.request(flow) == 200
    assert driver.request(flow) == 200
    assert (server.logins, server.registrations, server.refreshes) == (1, 1, 0)


def test_a_new_process_sends_the_kept_token_on_its_first_request():
    server = Scripted()
    driver = Driver(server)
    driver.request(driver.flow())
    server.statuses.clear()
    fresh = driver.flow(interactive=False)  # a new process on the same store
    assert driver.request(fresh) == 200
    assert server.statuses == [200]  # no 401 first
    assert server.logins == 1


def test_a_kept_token_refused_is_refreshed_before_anything_else():
    server = Scripted(lifetime=None)  # no expires_in: the client cannot know
    driver = Driver(server)
    driver.request(driver.flow())
    server.access.clear()  # revoked at the server
    fresh = driver.flow(interactive=False)
    assert driver.request(fresh) == 200
    assert (server.logins, server.refreshes) == (1, 1)


def test_a_refused_refresh_leads_to_one_login():
    server = Scripted(lifetime=None)
    driver = Driver(server)
    flow = driver.flow()
    driver.request(flow)
    server.access.clear()
    server.refuse_refresh = True
    assert driver.request(flow) == 200
    assert (server.logins, server.refreshes) == (2, 1)


def test_a_refresh_token_refused_ahead_of_expiry_is_not_presented_by_the_next_process():
    server = Scripted(lifetime=96.0, refuse_refresh=True)
    driver = Driver(server)
    assert driver.request(driver.flow()) == 200
    server.now += 91.0  # due, still valid: the refresh is refused, the access token still serves
    flow = driver.flow()
    assert driver.request(flow) == 200
    assert driver.request(driver.flow()) == 200  # a new process, the same store
    assert len(server.used_refresh) == 1
    assert server.logins == 1


def test_short_tokens_are_refreshed_once_per_lifetime_not_per_request():
    server = Scripted(lifetime=30.0)
    driver = Driver(server)
    flow = driver.flow()
    driver.request(flow)
    for _ in range(20):
        driver.request(flow)
    assert server.refreshes == 0
    server.now += 25.0  # within the last quarter of its 30 s
    for _ in range(20):
        driver.request(flow)
    assert server.refreshes == 1
    assert server.logins == 1


def test_by_default_dpop_is_not_used_when_only_the_authorization_server_offers_it():
    server = Scripted(as_offers_dpop=True, resource_dpop="no")
    driver = Driver(server)
    flow = driver.flow()
    assert driver.request(flow) == 200
    assert (server.logins, driver.dpop_signed, server.proofs_to_as) == (1, 0, 0)


@pytest.mark.parametrize("how", ["challenge", "metadata"])
def test_dpop_is_used_when_the_resource_asks_for_it(how):
    server = Scripted(resource_dpop=how)
    driver = Driver(server)
    flow = driver.flow()
    assert driver.request(flow) == 200
    assert flow.tokens is not None
    assert flow.tokens.token_type == "DPoP"
    assert server.logins == 1


def test_a_resource_that_refuses_dpop_tokens_gets_bearer_ones_without_a_second_login():
    server = Scripted(resource_dpop="no")
    driver = Driver(server)
    flow = driver.flow(dpop=None)
    flow.rs_wants_dpop = True  # as if a DPoP challenge had been seen before
    assert driver.request(flow) == 200
    assert flow.tokens is not None
    assert flow.tokens.token_type == "Bearer"
    assert server.logins == 1
    assert server.refreshes == 1


def test_dpop_asked_for_and_refused_by_the_resource_is_a_clear_failure():
    server = Scripted(resource_dpop="no")
    driver = Driver(server)
    with pytest.raises(AuthorizationFailed) as info:
        driver.request(driver.flow(dpop=True))
    assert info.value.reason == "dpop"
    assert server.logins == 1


def test_dpop_off_is_never_used():
    server = Scripted(resource_dpop="challenge")
    driver = Driver(server)
    flow = driver.flow(dpop=False)
    driver.request(flow)
    assert (driver.dpop_signed, server.proofs_to_as) == (0, 0)


def test_a_denied_login_is_not_started_again_by_the_flow():
    server = Scripted(deny=True)
    driver = Driver(server)
    flow = driver.flow()
    with pytest.raises(AuthorizationFailed) as info:
        driver.request(flow)
    assert info.value.reason == "authorization_denied"
    with pytest.raises(AuthorizationFailed, match="does not ask again") as again:
        driver.request(flow)
    assert again.value.reason == "authorization_denied"
    assert server.logins == 1


def test_a_registration_the_server_forgot_is_made_again_once():
    server = Scripted(lifetime=None, forget_clients=True)
    driver = Driver(server)
    flow = driver.flow()
    driver.request(flow)
    server.forget_all_clients()
    server.access.clear()
    assert driver.request(flow) == 200
    assert (server.registrations, server.logins) == (2, 2)


def test_step_up_asks_for_the_union():
    server = Scripted(tool_scope="write")
    driver = Driver(server)
    flow = driver.flow()
    assert driver.request(flow, tools_call=True) == 200
    assert server.authorize_scopes == [{"read"}, {"read", "write"}]


def test_nan_expires_in_is_treated_as_absent():
    server = Scripted(expires_in=float("nan"))
    driver = Driver(server)
    flow = driver.flow()
    driver.request(flow)
    assert flow.tokens is not None
    assert flow.tokens.expires_at is None
    for value in driver.store.values():
        if isinstance(value, Tokens):
            json.dumps(attrs.asdict(value), allow_nan=False)


def test_a_dpop_token_without_a_proof_is_refused():
    server = Scripted(token_type="DPoP")
    driver = Driver(server)
    with pytest.raises(AuthorizationFailed) as info:
        driver.request(driver.flow())
    assert info.value.reason == "token"


def test_revocation_revokes_the_refresh_token_then_the_access_token():
    server = Scripted()
    driver = Driver(server)
    flow = driver.flow()
    driver.request(flow)
    tokens = flow.tokens
    assert tokens is not None
    assert tokens.refresh_token is not None
    assert driver.run(flow.revoke(AS, ClientInfo("client-1"), tokens)) is True
    assert server.revoked == [tokens.refresh_token, tokens.access_token]


# ------------------------------------------------------------------ properties

servers = st.builds(
    Scripted,
    lifetime=st.one_of(st.none(), st.floats(1.0, 7200.0)),
    refresh_tokens=st.booleans(),
    refuse_refresh=st.booleans(),
    tool_scope=st.sampled_from([None, "read", "write", "admin"]),
    resource_dpop=st.sampled_from(["no", "challenge", "metadata"]),
    as_offers_dpop=st.booleans(),
    deny=st.booleans(),
)
events = st.lists(
    st.one_of(
        st.tuples(st.just("request"), st.booleans()),
        st.tuples(st.just("wait"), st.floats(0.0, 4000.0)),
        st.tuples(st.just("revoke"), st.just(False)),
        st.tuples(st.just("new process"), st.just(False)),
    ),
    max_size=25,
)


def _play(server: Scripted, script: list[tuple[str, Any]], dpop: bool | None) -> Any:
    driver = Driver(server)
    flow = driver.flow(dpop=dpop)
    for kind, value in script:
        if kind == "request":
            logins, refreshes = server.logins, server.refreshes
            with contextlib.suppress(AuthorizationFailed):
                driver.request(flow, tools_call=value)
            yield server.logins - logins, server.refreshes - refreshes, flow
        elif kind == "wait":
            server.now += value
        elif kind == "revoke":
            server.access.clear()
        else:
            flow = driver.flow(dpop=dpop)


@pytest.mark.property
@settings(deadline=None)
@given(servers, events, st.sampled_from([None, True, False]))
def test_logins_per_request_are_bounded(server, script, dpop):
    for logins, _refreshes, _flow in _play(server, script, dpop):
        assert logins <= oauth_flow.MAX_LOGINS + oauth_flow.MAX_STEP_UPS


@pytest.mark.property
@settings(deadline=None)
@given(servers, events, st.sampled_from([None, True, False]))
def test_each_refresh_token_is_presented_once_at_most(server, script, dpop):
    """At most one refresh per expiry: a refresh token, once used (rotated or refused), is not sent again."""
    for _ in _play(server, script, dpop):
        pass
    assert len(server.used_refresh) == len(set(server.used_refresh))


@pytest.mark.property
@settings(deadline=None)
@given(servers, events)
def test_scopes_asked_only_grow(server, script):
    for _ in _play(server, script, None):
        pass
    for before, after in zip(server.authorize_scopes, server.authorize_scopes[1:], strict=False):
        assert before <= after


@pytest.mark.property
@settings(deadline=None)
@given(servers, events, st.sampled_from([None, True, False]))
def test_a_refused_refresh_leads_to_one_login_at_most(server, script, dpop):
    server.refuse_refresh = True
    for logins, refreshes, _flow in _play(server, script, dpop):
        if refreshes:
            assert logins <= 1 + oauth_flow.MAX_STEP_UPS
        assert refreshes <= 1


@pytest.mark.property
@settings(deadline=None)
@given(servers, events)
def test_by_default_dpop_follows_the_resource_not_the_authorization_server(server, script):
    driver_proofs = 0
    for _ in _play(server, script, None):
        driver_proofs = server.proofs_to_as
    if server.resource_dpop == "no":
        assert driver_proofs == 0


@pytest.mark.property
@settings(deadline=None)
@given(st.floats(0.5, 10 * 365 * 86400.0), st.floats(0.0, 2e9))
def test_a_fresh_token_is_never_due(lifetime, now):
    tokens = Tokens("AT", expires_at=now + lifetime, issued_at=now)
    assert not oauth.refresh_due(tokens, now)
    assert oauth.refresh_due(tokens, now + lifetime)
    assert oauth.refresh_margin(tokens) <= min(oauth.REFRESH_MARGIN, lifetime)


def test_a_dpop_login_kept_by_another_process_is_renewed_not_taken_for_a_bearer_only_server():
    server = Scripted(resource_dpop="metadata")
    driver = Driver(server)
    driver.request(driver.flow())
    kept = [v for v in driver.store.values() if isinstance(v, Tokens)]
    assert [t.token_type for t in kept] == ["DPoP"]
    fresh = driver.flow()  # a new process: the key is gone
    assert driver.request(fresh) == 200
    assert not fresh.bearer_only
    assert fresh.tokens is not None
    assert fresh.tokens.token_type == "DPoP"
