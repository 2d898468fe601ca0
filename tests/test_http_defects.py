"""Regression tests for defects a first version of the HTTP transport had, one per test,
against ``tests/servers/http_server.py`` run as a real process.

Each names the defect it covers (the letters of the issue that listed them). The
scenarios are chosen per client with the ``X-Test-Scenario`` header; every exchange
runs under a `trio.fail_after` guard.
"""

from __future__ import annotations

import uuid

import httpx2
import pytest
import trio
from opening_support import http_client
from process_support import hostile_server

import trio_mcp

LIMIT = 30


@pytest.fixture(scope="module")
def legacy_server():
    with hostile_server(era="legacy") as running:
        yield running


@pytest.fixture(scope="module")
def modern_server():
    with hostile_server(era="modern") as running:
        yield running


@pytest.fixture(scope="module", params=["modern", "legacy"])
def server(request):
    with hostile_server(era=request.param) as running:
        yield running


def open_client(server, scenario, *, client=None, target=None, **options):
    headers = {"X-Test-Scenario": scenario, "X-Test-Client": client or uuid.uuid4().hex}
    if target is not None:
        headers["X-Test-Target"] = target
    options.setdefault("trust_env", False)
    return http_client(server.url, headers=headers, **options)


async def stats(server):
    async with httpx2.AsyncClient(trust_env=False) as http:
        return (await http.get(server.base + "/stats")).json()


# ------------------------------------------------------------------ a


async def test_a_body_under_the_id_of_another_call_completes_neither(server):
    """a. A POST answered under the id of another call in flight never completes that
    call: the other call gets its own answer, this one fails with a typed error."""
    with trio.fail_after(LIMIT):
        async with open_client(server, "other-call-id") as client:
            results = {}
            in_flight = trio.Event()

            async def slow():
                progress = lambda *_: in_flight.set()  # noqa: E731
                results["slow"] = (await client.call_tool("slow", {"steps": 60}, on_progress=progress)).text

            async with trio.open_nursery() as nursery:
                nursery.start_soon(slow)
                await in_flight.wait()  # the slow call is in flight on the server
                with pytest.raises(trio_mcp.ProtocolError, match="not its response"):
                    await client.call_tool("fault", {})
            assert results["slow"] == "done"
            assert (await client.call_tool("echo", {"text": "after"})).text == "after"


async def test_a_stale_response_on_a_kept_alive_connection_is_no_later_calls_answer(server):
    """a. A second response left on a kept-alive connection never becomes the answer of
    the next call sent on it; the calls after that succeed."""
    with trio.fail_after(LIMIT):
        async with open_client(server, "extra-response") as client:
            assert (await client.call_tool("fault", {})).text == "fault ok"
            try:
                text = (await client.call_tool("echo", {"text": "next"})).text
            except trio_mcp.ProtocolError:
                text = None  # refused: the stale answer was recognised
            assert text in ("next", None)
            # That connection is not used again: the next call goes on another one.
            for _ in range(3):
                assert (await client.call_tool("echo", {"text": "later"})).text == "later"


# ------------------------------------------------------------------ b


async def test_b_every_stream_numbering_its_events_from_one(modern_server):
    """b. 2026-07-28: event ids are per stream; streams that all start at 1 all work."""
    with trio.fail_after(10):
        async with open_client(modern_server, "ids-from-one") as client:
            for _ in range(3):
                assert (await client.call_tool("fault", {})).text == "fault ok"


# ------------------------------------------------------------------ c


async def test_c_ten_calls_in_flight_when_the_session_is_forgotten(legacy_server):
    """c. One new session for ten calls that found the session gone, each sent again once;
    calls made while it is being opened wait for it."""
    name = uuid.uuid4().hex
    before = await stats(legacy_server)
    with trio.fail_after(LIMIT):
        async with open_client(legacy_server, "session-lost-in-flight", client=name) as client:
            texts = []

            async def one():
                texts.append((await client.call_tool("fault", {})).text)

            async with trio.open_nursery() as nursery:
                for _ in range(10):
                    nursery.start_soon(one)
                # While the new session is being opened (its initialize, come to the
                # server, takes a second), more calls: they go out in the new session.
                opened = before["requests"].get("initialize", 0) + 2
                while (await stats(legacy_server))["requests"].get("initialize", 0) < opened:  # noqa: ASYNC110
                    await trio.sleep(0.05)
                for _ in range(5):
                    nursery.start_soon(one)
            assert texts == ["fault ok"] * 15
    after = await stats(legacy_server)
    assert after["requests"]["initialize"] - before["requests"].get("initialize", 0) == 2
    assert after["requests"]["tools/call"] - before["requests"].get("tools/call", 0) == 25


# ------------------------------------------------------------------ d


async def test_d_a_400_that_mentions_a_session_is_the_servers_answer(legacy_server):
    """d. A 400 whose error merely mentions "session" is an RpcError, and the tool call
    is never sent twice because of it."""
    before = await stats(legacy_server)
    with trio.fail_after(LIMIT):
        async with open_client(legacy_server, "session-word-400") as client:
            with pytest.raises(trio_mcp.RpcError, match="session_name is required") as caught:
                await client.call_tool("fault", {})
            assert caught.value.code == -32602
    after = await stats(legacy_server)
    assert after["requests"]["tools/call"] - before["requests"].get("tools/call", 0) == 1
    assert after["requests"]["initialize"] - before["requests"].get("initialize", 0) == 1


# ------------------------------------------------------------------ e


async def test_e_the_get_stream_is_reopened_however_many_events_it_carried(legacy_server):
    """e. Each GET carries 5000 events then ends: the stream is reopened every time."""
    before = (await stats(legacy_server))["requests"].get("GET", 0)
    with trio.fail_after(LIMIT):
        async with open_client(legacy_server, "get-many-events") as client:
            await client.call_tool("echo", {"text": "x"})
            while (await stats(legacy_server))["requests"]["GET"] - before < 9:  # noqa: ASYNC110 - another process
                await trio.sleep(0.1)
            assert (await client.call_tool("echo", {"text": "y"})).text == "y"


# ------------------------------------------------------------------ f


async def test_f_the_get_stream_is_open_before_the_first_request(legacy_server):
    """f. After notifications/initialized, the next request waits until the GET stream
    is open (here its head comes 0.5 s late)."""
    name = uuid.uuid4().hex
    with trio.fail_after(LIMIT):
        async with open_client(legacy_server, "slow-get", client=name) as client:
            await client.call_tool("echo", {"text": "x"})
    order = (await stats(legacy_server))["order"][name]
    start = order.index("POST notifications/initialized")
    after = [event for event in order[start + 1 :] if event != "GET open"]
    assert order.index("GET open") < order.index(after[0]), order


async def test_f_an_unanswered_initialized_does_not_block_past_the_handshake_timeout(legacy_server):
    """f. notifications/initialized never answered: later requests go after handshake_timeout."""
    with trio.fail_after(LIMIT):
        async with open_client(legacy_server, "initialized-hangs", handshake_timeout=2) as client:
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"


# ------------------------------------------------------------------ g


class FailingAuth(httpx2.Auth):
    """Raises on the first tools/call it sees."""

    def __init__(self):
        self.raised = False

    def auth_flow(self, request):
        if not self.raised and b'"tools/call"' in request.content:
            self.raised = True
            raise ValueError("the token store is locked")
        yield request


async def test_g_an_exception_of_the_users_auth_reaches_the_caller(server):
    """g. The user's httpx2.Auth raising fails that call with its exception as the cause;
    the connection keeps working."""
    with trio.fail_after(LIMIT):
        async with open_client(server, "none", auth=FailingAuth()) as client:
            with pytest.raises(trio_mcp.HTTPError, match="the token store is locked") as caught:
                await client.call_tool("echo", {"text": "x"})
            assert isinstance(caught.value.__cause__, ValueError)
            assert (await client.call_tool("echo", {"text": "y"})).text == "y"


# ------------------------------------------------------------------ h


@pytest.mark.parametrize("scenario", ["sse-endpoint-bad-port", "sse-endpoint-bad-host"])
async def test_h_an_endpoint_event_that_is_no_usable_url(legacy_server, scenario):
    """h. HTTP+SSE: an endpoint that is not a usable URL is a typed error."""
    with trio.fail_after(LIMIT):
        with pytest.raises(trio_mcp.MCPError) as caught:
            async with open_client(legacy_server, scenario, protocol="2025-11-25"):
                pass
    assert isinstance(caught.value, trio_mcp.HTTPError)
    assert "endpoint that is not a usable URL" in str(caught.value)


async def test_h_an_unparsable_redirect_location_is_named(server):
    """h. A 307 with a Location that is no URL: an HTTPError naming it."""
    with trio.fail_after(LIMIT):
        async with open_client(server, "redirect-bad-location") as client:
            with pytest.raises(trio_mcp.HTTPError, match=r"\[::1/broken"):
                await client.call_tool("fault", {})
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"


# ------------------------------------------------------------------ i


async def test_i_a_replay_under_new_event_ids_is_not_answered_twice(legacy_server):
    """i. Replays are recognised by JSON-RPC id: the server request is answered once."""
    asked = []

    def on_elicitation(params):
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    with trio.fail_after(LIMIT):
        async with open_client(legacy_server, "replay-renumbered", on_elicitation=on_elicitation) as client:
            assert (await client.call_tool("fault", {})).text == "hello Ada; answers=1"
    assert len(asked) == 1


# ------------------------------------------------------------------ j


async def test_j_a_32022_listing_the_version_asked_is_retried_once(modern_server):
    """j. The first request is refused with -32022 listing the very version asked: sent
    again once, and the connection works."""
    with trio.fail_after(LIMIT):
        async with open_client(modern_server, "reject-version-once") as client:
            assert client.era == "modern"
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"


async def test_j_refused_again_the_error_does_not_contradict_itself(modern_server):
    """j. Refused again after the retry: a VersionMismatch that says what happened."""
    with trio.fail_after(LIMIT):
        with pytest.raises(trio_mcp.VersionMismatch) as caught:
            async with open_client(modern_server, "reject-version-always"):
                pass
    assert "which it lists among those it supports" in str(caught.value)


# ------------------------------------------------------------------ start


@pytest.mark.parametrize("after", [0, 0.001, 0.05])
async def test_cancelled_while_connecting_returns(modern_server, after):
    """Cancelled while the channel starts (or connects): opening returns, nothing hangs."""
    with trio.fail_after(10):
        with trio.move_on_after(after):
            async with open_client(modern_server, "none"):
                await trio.sleep_forever()


# ------------------------------------------------------------------ resumption, keep-alive


async def test_a_stream_of_only_a_priming_event_is_resumed(legacy_server):
    """A POST stream that carried only a priming event (an id, ``retry``, no data) before it
    ended is resumed with ``Last-Event-ID`` after the server's ``retry``."""
    with trio.fail_after(LIMIT):
        async with open_client(legacy_server, "priming-only") as client:
            assert (await client.call_tool("fault", {})).text == "fault ok"


async def test_a_list_refused_by_a_closing_kept_alive_connection_is_sent_again(server):
    """A request without side effects, written on a kept-alive connection the server closes
    unread, goes once more on another connection."""
    with trio.fail_after(LIMIT):
        async with open_client(server, "drop-reused", target="all") as client:
            await client.call_tool("echo", {"text": "x"})
            assert "echo" in [tool.name for tool in await client.list_tools()]
    assert (await stats(server))["requests"]["tools/list"] >= 2
