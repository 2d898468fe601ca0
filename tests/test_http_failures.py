"""The HTTP failure table, row by row, against a misbehaving server run as a real process.

Each test provokes one row of the table (a scenario of
``tests/servers/http_server.py``, chosen per client with the
``X-Test-Scenario`` header) on a ``tools/call`` of the ``fault`` tool, in the
eras where the row exists. It checks the typed error (or the answer, where
the row says the client copes), then that the same client still works, and,
once the client is closed, that it left no connection open on the server.
Every exchange runs under a `trio.fail_after` guard: nothing may hang.
"""

from __future__ import annotations

import uuid
from contextlib import asynccontextmanager
from email.utils import formatdate

import httpx2
import pytest
import trio
from opening_support import http_client
from process_support import hostile_server

import trio_mcp

#: The guard around each test's exchanges, in seconds (generous: machines are noisy).
LIMIT = 30
RESOURCE_METADATA = "https://auth.example.com/.well-known/oauth-protected-resource/mcp"


# ------------------------------------------------------------------ in-process


@pytest.mark.parametrize(("protocol", "era"), [("auto", "modern"), ("2025-11-25", "legacy")])
async def test_in_process_server_happy_path(http_server, protocol, era):
    """The same server, in the test's own Trio run: both eras work, the initialize era
    opens one session, a GET stream, and deletes the session on close."""
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_client(
            trio_mcp.HTTPTarget(http_server.url, trust_env=False),
            options=trio_mcp.ClientOptions(protocol=protocol),
        ) as client:
            assert client.era == era
            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
            assert (await client.call_tool("slow", {"steps": 2})).text == "done"
    counts = http_server.state.counts
    if era == "legacy":
        assert (counts["initialize"], counts["GET"], counts["DELETE"]) == (1, 1, 1)
        assert not http_server.state.sessions
    else:
        assert "initialize" not in counts
        assert "GET" not in counts
        assert "DELETE" not in counts


# ------------------------------------------------------------------ real processes


@pytest.fixture(scope="module", params=["modern", "legacy"])
def server(request):
    """The misbehaving server in one era (a modern-only or a legacy-only server)."""
    with hostile_server(era=request.param) as running:
        running.era = request.param
        yield running


@pytest.fixture(scope="module")
def legacy_server():
    with hostile_server(era="legacy") as running:
        running.era = "legacy"
        yield running


@pytest.fixture(scope="module")
def modern_server():
    with hostile_server(era="modern") as running:
        running.era = "modern"
        yield running


def open_client(server, scenario, *, target=None, **options):
    headers = {"X-Test-Scenario": scenario, "X-Test-Client": uuid.uuid4().hex}
    if target is not None:
        headers["X-Test-Target"] = target
    options.setdefault("trust_env", False)
    return http_client(server.url, headers=headers, **options)


async def server_stats(server):
    async with httpx2.AsyncClient(trust_env=False) as http:
        response = await http.get(server.base + "/stats")
    return response.json()


async def assert_no_connection_left(server):
    """Every connection the client opened is closed (the /stats request itself aside)."""
    with trio.fail_after(10):
        while (await server_stats(server))["open"] > 1:  # noqa: ASYNC110 - another process
            await trio.sleep(0.05)


@asynccontextmanager
async def row(server, scenario, **options):
    """A client for one row: checks it still works afterwards and leaves nothing open."""
    with trio.fail_after(LIMIT):
        async with open_client(server, scenario, **options) as client:
            yield client
            result = await client.call_tool("echo", {"text": "still working"})
            assert result.text == "still working"
    await assert_no_connection_left(server)


async def fault(client):
    return await client.call_tool("fault", {})


# ------------------------------------------------------------------ framing


@pytest.mark.parametrize(
    "scenario",
    [
        "crlf-bom-comments",
        "cr-only",
        "endpoint-event",
        "json-charset",
        "sse-charset",
        "wrong-id-first",
        "json-other-id",
    ],
)
async def test_well_formed_oddities_are_read(server, scenario):
    """BOM, CRLF or CR line ends, comments, priming events, a negative retry, an id
    with NUL, foreign event types, media types with parameters, a stray answer to an
    unknown id on a stream, a JSON answer under a foreign id: all read."""
    async with row(server, scenario) as client:
        assert (await fault(client)).text == "fault ok"


async def test_huge_event_over_the_cap(server):
    async with row(server, "huge-event", max_message_bytes=1 << 20) as client:
        with pytest.raises(trio_mcp.MessageTooLarge):
            await fault(client)


async def test_huge_json_answer_over_the_cap(server):
    async with row(server, "huge-json", max_message_bytes=1 << 20) as client:
        with pytest.raises(trio_mcp.MessageTooLarge):
            await fault(client)


async def test_event_that_is_not_utf8(server):
    async with row(server, "invalid-utf8") as client:
        with pytest.raises(trio_mcp.ProtocolError, match="UTF-8"):
            await fault(client)


async def test_event_that_is_not_json(server):
    async with row(server, "bad-json-event") as client:
        with pytest.raises(trio_mcp.MCPError) as caught:
            await fault(client)
        assert isinstance(caught.value, trio_mcp.ProtocolError), repr(caught.value)


# ------------------------------------------------------------------ silence, cuts


@pytest.mark.parametrize("scenario", ["drip", "silence", "silence-json"])
async def test_slow_drip_and_silence_end_at_the_callers_deadline(server, scenario):
    """No read timeout cuts a silent or dripping stream; the caller's scope does, and
    that cancels the request: by closing the stream in 2026-07-28, with
    ``notifications/cancelled`` too in the initialize era."""
    before = (await server_stats(server))["requests"].get("notifications/cancelled", 0)
    async with row(server, scenario) as client:
        with trio.move_on_after(1) as scope:
            await fault(client)
        assert scope.cancelled_caught
    cancelled = (await server_stats(server))["requests"].get("notifications/cancelled", 0) - before
    assert cancelled == (1 if server.era == "legacy" else 0)


async def test_request_timeout_applies_to_a_silent_stream(server):
    async with row(server, "silence", request_timeout=1) as client:
        with pytest.raises(trio_mcp.RequestTimeout):
            await fault(client)


@pytest.mark.parametrize(
    "scenario",
    [
        "truncated-chunk",
        "truncated-json",
        "rst",
        "rst-before-response",
        "eof-before-response",
        "cut-mid-event",
    ],
)
async def test_stream_lost_before_the_answer(server, scenario):
    async with row(server, scenario) as client:
        with pytest.raises(trio_mcp.ConnectionFailed):
            await fault(client)


async def test_stream_that_never_ends_after_the_answer(server):
    async with row(server, "never-ends") as client:
        assert (await fault(client)).text == "fault ok"


# When the race hits while the request body is being written, httpx2 leaves the
# body's async generator unfinished, and its finalizer warns (ResourceWarning).
# The outcome checked here does not depend on it.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_server_closing_kept_alive_connections(server):
    """The server closes each connection right after the answer, without saying so.

    A request written to such a connection before the close is seen may fail:
    that is the keep-alive race, and a ``tools/call`` must not be sent twice
    behind the caller's back. So each call either works or fails as a lost
    connection, and the client goes on.
    """
    async with row(server, "close-keepalive") as client:
        outcomes = []
        for _ in range(10):
            try:
                outcomes.append((await fault(client)).text)
            except trio_mcp.ConnectionFailed as exc:
                outcomes.append(type(exc))
        assert set(outcomes) <= {"fault ok", trio_mcp.ConnectionFailed}
        assert outcomes[0] == "fault ok"  # the first one went on a fresh connection
        # The last close comes unannounced: wait until the server has closed every
        # connection but the GET stream's (initialize era) and the one asking, so that
        # the pool sees it before the next request.
        left = 2 if server.era == "legacy" else 1
        with trio.fail_after(10):
            while (await server_stats(server))["open"] > left:  # noqa: ASYNC110 - another process
                await trio.sleep(0.05)


async def test_connection_refused():
    with socket_port() as port, trio.fail_after(LIMIT), pytest.raises(trio_mcp.ConnectionFailed):
        async with trio_mcp.open_client(trio_mcp.HTTPTarget(f"http://127.0.0.1:{port}/mcp", trust_env=False)):
            pass  # pragma: no cover


class socket_port:
    """A loopback port nobody listens on (bound, never listening, for the test's duration)."""

    def __enter__(self):
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return self.sock.getsockname()[1]

    def __exit__(self, *exc):
        self.sock.close()


# ------------------------------------------------------------------ statuses and types


@pytest.mark.parametrize(
    ("scenario", "status", "match"),
    [
        ("html-200", 200, "text/html"),
        ("text-plain", 200, "text/plain"),
        ("no-content-type", 200, "none"),
        ("empty-200", 200, "empty"),
        ("status-204", 204, "204"),
        ("forbidden-origin", 403, "403"),
        ("error-500-text", 500, "500"),
        ("bad-request-400", 400, "400"),
        ("method-not-allowed-405", 405, "405"),
        ("not-acceptable-406", 406, "406"),
        ("unsupported-type-415", 415, "415"),
        ("misdirected-421", 421, "421"),
        ("too-large-413", 413, "413"),
        ("headers-too-large-431", 431, "431"),
        ("bad-gateway-502", 502, "502"),
        ("gateway-timeout-504", 504, "504"),
    ],
)
async def test_answers_that_are_not_mcp(server, scenario, status, match):
    async with row(server, scenario) as client:
        with pytest.raises(trio_mcp.HTTPError, match=match) as caught:
            await fault(client)
    assert type(caught.value) is trio_mcp.HTTPError
    assert caught.value.status == status
    assert caught.value.url.endswith("/mcp")


async def test_json_that_is_not_json_rpc(server):
    async with row(server, "not-jsonrpc") as client:
        with pytest.raises((trio_mcp.ProtocolError, trio_mcp.HTTPError)):
            await fault(client)


async def test_202_to_a_request(modern_server):
    async with row(modern_server, "status-202") as client:
        with pytest.raises(trio_mcp.HTTPError, match="202"):
            await fault(client)


async def test_202_while_the_get_stream_is_open_waits_for_the_deadline(legacy_server):
    """An old server may send the answer on the GET stream: the request stays pending,
    bounded by the caller's deadline."""
    async with row(legacy_server, "status-202-get-open") as client:
        with trio.move_on_after(1) as scope:
            await fault(client)
        assert scope.cancelled_caught


async def test_404_without_an_mcp_body(server):
    async with row(server, "not-found-html") as client:
        with pytest.raises(trio_mcp.HTTPError) as caught:
            await fault(client)
    assert caught.value.status == 404


@pytest.mark.parametrize("scenario", ["redirect-307", "redirect-308"])
async def test_same_origin_307_308_are_followed(server, scenario):
    async with row(server, scenario) as client:
        assert (await fault(client)).text == "no fault"


@pytest.mark.parametrize(
    ("scenario", "location"),
    [
        ("redirect-302", "/mcp2"),
        ("redirect-301", "/mcp2"),
        ("redirect-cross-origin", "other.invalid"),
        ("redirect-loop", "/mcp"),
    ],
)
async def test_other_redirects_are_refused_naming_the_location(server, scenario, location):
    async with row(server, scenario) as client:
        with pytest.raises(trio_mcp.HTTPError, match=location) as caught:
            await fault(client)
    assert 300 <= caught.value.status < 400


@pytest.mark.parametrize(
    ("scenario", "status", "retry_after"),
    [("busy-503", 503, 2.0), ("busy-503-bare", 503, None), ("busy-429-date", 429, "date")],
)
async def test_busy_server_says_when_to_retry(server, scenario, status, retry_after):
    async with row(server, scenario) as client:
        with pytest.raises(trio_mcp.ServerBusy) as caught:
            await fault(client)
    assert caught.value.status == status
    if retry_after == "date":
        # An HTTP date (2033-05-18): seconds from now, whatever the cap.
        assert caught.value.retry_after is not None
        assert caught.value.retry_after > 0
        assert caught.value.headers["retry-after"] == formatdate(2_000_000_000, usegmt=True)
    else:
        assert caught.value.retry_after == retry_after


async def test_401_carries_the_challenge(server):
    async with row(server, "auth-401") as client:
        with pytest.raises(trio_mcp.AuthRequired) as caught:
            await fault(client)
    error = caught.value
    assert error.status == 401
    assert error.scheme == "Bearer"
    assert error.resource_metadata == RESOURCE_METADATA
    assert error.scope == "files:read"


async def test_403_insufficient_scope_carries_the_challenge(server):
    async with row(server, "auth-403-scope") as client:
        with pytest.raises(trio_mcp.AuthRequired) as caught:
            await fault(client)
    error = caught.value
    assert error.status == 403
    assert error.error == "insufficient_scope"
    assert error.scope == "files:read files:write"
    assert error.resource_metadata == RESOURCE_METADATA


async def test_token_in_headers_or_from_an_auth_hook(server):
    """The server wants a bearer token: without one the connection fails with the
    challenge; a header carries it; an ``httpx2.Auth`` flow may answer the 401 itself."""
    with trio.fail_after(LIMIT), pytest.raises(trio_mcp.AuthRequired):
        async with open_client(server, "auth-token", target="all"):
            pass  # pragma: no cover

    class TokenOn401(httpx2.Auth):
        def __init__(self):
            self.challenges = []

        def auth_flow(self, request):
            response = yield request
            if response.status_code == 401:
                self.challenges.append(response.headers["www-authenticate"])
                request.headers["Authorization"] = "Bearer good-token"
                yield request

    auth = TokenOn401()
    with trio.fail_after(LIMIT):
        client_headers = {"X-Test-Scenario": "auth-token", "X-Test-Target": "all"}
        async with trio_mcp.open_client(
            trio_mcp.HTTPTarget(
                server.url, headers={**client_headers, "Authorization": "Bearer good-token"}, trust_env=False
            )
        ) as client:
            assert (await client.call_tool("echo", {"text": "with header"})).text == "with header"
        async with trio_mcp.open_client(
            trio_mcp.HTTPTarget(server.url, headers=client_headers, auth=auth, trust_env=False)
        ) as client:
            assert (await client.call_tool("echo", {"text": "with hook"})).text == "with hook"
    assert auth.challenges
    assert f'resource_metadata="{RESOURCE_METADATA}"' in auth.challenges[0]
    await assert_no_connection_left(server)


async def test_401_on_every_request_fails_the_connection(server):
    with trio.fail_after(LIMIT), pytest.raises(trio_mcp.AuthRequired) as caught:
        async with open_client(server, "auth-401", target="all"):
            pass  # pragma: no cover
    assert caught.value.resource_metadata == RESOURCE_METADATA
    await assert_no_connection_left(server)


async def test_html_on_every_request_fails_the_connection(server):
    with trio.fail_after(LIMIT), pytest.raises(trio_mcp.HTTPError, match="text/html"):
        async with open_client(server, "html-200", target="all"):
            pass  # pragma: no cover
    await assert_no_connection_left(server)


@pytest.mark.parametrize(
    ("scenario", "code"),
    [("error-500-json", -32603), ("error-server-error-id", -32600), ("error-200-in-stream", -32603)],
)
async def test_json_rpc_error_in_any_status_is_the_servers_answer(server, scenario, code):
    """Whatever the status, and whatever id the error carries (null, "server-error")."""
    async with row(server, scenario) as client:
        with pytest.raises(trio_mcp.RpcError) as caught:
            await fault(client)
    assert caught.value.code == code


# ------------------------------------------------------------------ sessions (initialize era)


@pytest.mark.parametrize("scenario", ["session-404", "session-400"])
async def test_forgotten_session_is_replaced_once(legacy_server, scenario):
    """404 (the spec) or 400 (server-everything): a new session, and the request again."""
    before = (await server_stats(legacy_server))["requests"].get("initialize", 0)
    async with row(legacy_server, scenario) as client:
        assert (await fault(client)).text == "no fault"
    after = (await server_stats(legacy_server))["requests"].get("initialize", 0)
    assert after - before == 2


async def test_session_forgotten_again_and_again(legacy_server):
    with trio.fail_after(LIMIT):
        async with open_client(legacy_server, "session-404-always") as client:
            with pytest.raises(trio_mcp.SessionExpired):
                await fault(client)
    await assert_no_connection_left(legacy_server)


async def test_session_id_on_an_error_answer_is_not_adopted(server):
    async with row(server, "fresh-session-on-error") as client:
        with pytest.raises(trio_mcp.RpcError):
            await fault(client)
    # The echo after the error went with the session of initialize, if any.
    assert (await server_stats(server))["bogus_sessions_used"] == 0


async def test_get_stream_refused_with_405_is_not_retried(legacy_server):
    before = (await server_stats(legacy_server))["requests"].get("GET", 0)
    async with row(legacy_server, "get-405") as client:
        for _ in range(3):
            assert (await fault(client)).text == "no fault"
        await trio.sleep(0.5)  # time for a (wrong) second attempt to show
    assert (await server_stats(legacy_server))["requests"].get("GET", 0) - before == 1


# ------------------------------------------------------------------ the wrong stream


async def test_answer_on_the_get_stream(legacy_server):
    async with row(legacy_server, "answer-on-get") as client:
        assert (await fault(client)).text == "fault ok"


async def test_two_answers_the_first_wins(server):
    async with row(server, "two-answers") as client:
        assert (await fault(client)).text == "fault ok"


async def test_server_request_in_the_modern_era_is_never_answered(modern_server):
    async with row(modern_server, "server-request-modern") as client:
        assert (await fault(client)).text == "fault ok"
    assert '"srv-1"' not in (await server_stats(modern_server))["answers"]


async def test_replayed_request_is_not_answered_twice(legacy_server):
    """A stream cut after a server request (with ids) is resumed with Last-Event-ID;
    the replay resends the request already answered, then the answer."""
    asked = []

    def on_elicitation(params):
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    async with row(legacy_server, "replay-answered", on_elicitation=on_elicitation) as client:
        assert (await fault(client)).text == "hello Ada; answers=1"
    assert len(asked) == 1
