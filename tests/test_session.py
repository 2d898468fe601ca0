"""Tests of `trio_mcp._session.Session` alone, over a scripted fake channel.

No process and no stream: `channel_support.ScriptedChannel` checks every
message the session sends against a script and plays the server's side of
it, in virtual time (``autojump_clock``), so that deadlines are asserted
exactly. What the session owns is tested here: correlation of answers with
the tasks that wait for them, cancellation and ``request_timeout`` (the
server is told, late answers are dropped, the connection survives), the end
of the channel and closing (every request in flight fails, and every one
after), notification delivery (a request's callback, the connection-wide
sink, subscribers), the server's requests, and the counters. The channels
themselves are tested against real processes and streams elsewhere.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing
from channel_support import (
    ANY,
    Answer,
    End,
    Expect,
    ExpectAnswer,
    ExpectNothing,
    Fail,
    Hang,
    Line,
    Notify,
    ScriptedChannel,
    Sleep,
    scripted_session,
)

import trio_mcp
from trio_mcp._errors import ProtocolError, RpcError, ServerGone, TransportClosed
from trio_mcp._options import SessionOptions
from trio_mcp._session import RequestTimeout, Session, new_session

GUARD = 100  # virtual seconds: a test that waits this long has hung


def cancelled(request_id: int, reason: str) -> Expect:
    return Expect("notifications/cancelled", {"requestId": request_id, "reason": reason}, notification=True)


# ------------------------------------------------------------ requests


async def test_a_request_gets_its_result(autojump_clock):
    script = [Expect("tools/list", None), Sleep(2), Answer({"tools": []})]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, channel):
            assert await session.request("tools/list") == {"tools": []}
            assert trio.current_time() == 2
    assert channel.sent == [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]


async def test_params_are_sent_as_given_and_ids_count_up(autojump_clock):
    params = {"name": "echo", "arguments": {"text": "héllo\u2028", "n": [1, 2.5, None, True]}}
    script = [Expect("tools/call", params), Answer({"a": 1}), Expect("tools/call", params), Answer({"b": 2})]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, channel):
            assert await session.request("tools/call", params) == {"a": 1}
            assert await session.request("tools/call", params) == {"b": 2}
    assert channel.ids == [1, 2]


async def test_answers_reach_their_requests_in_any_order(autojump_clock):
    script = [
        Expect("first"),
        Expect("second"),
        Expect("third"),
        Sleep(1),
        Answer({"n": 3}, to=2),
        Answer({"n": 1}, to=0),
        Sleep(1),
        Answer({"n": 2}, to=1),
    ]
    results: dict[str, tuple[object, float]] = {}

    async def one(session: Session, method: str) -> None:
        results[method] = (await session.request(method), trio.current_time())

    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, _), trio.open_nursery() as nursery:
            for method in ("first", "second", "third"):
                nursery.start_soon(one, session, method)
                await trio.testing.wait_all_tasks_blocked()
    assert results == {"first": ({"n": 1}, 1), "second": ({"n": 2}, 2), "third": ({"n": 3}, 1)}


async def test_an_error_answer_raises_rpc_error_and_the_connection_lives_on(autojump_clock):
    script = [Expect("tools/call"), Fail(-32602, "bad arguments", {"field": "x"}), Expect("ping"), Answer({})]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, _):
            with pytest.raises(RpcError) as caught:
                await session.request("tools/call", {"name": "x"})
            assert (caught.value.code, caught.value.message, caught.value.data) == (
                -32602,
                "bad arguments",
                {"field": "x"},
            )
            assert await session.request("ping") == {}


async def test_a_broken_answer_fails_only_its_request(autojump_clock):
    script = [
        Expect("a"),
        Expect("b"),
        Line(b'{"jsonrpc": "2.0", "id": 1, "result": [1, 2]}'),
        Answer({"ok": True}, to=1),
    ]
    outcome: dict[str, object] = {}

    async def one(session: Session, method: str) -> None:
        try:
            outcome[method] = await session.request(method)
        except ProtocolError as exc:
            outcome[method] = exc

    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, _), trio.open_nursery() as nursery:
            nursery.start_soon(one, session, "a")
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(one, session, "b")
    assert isinstance(outcome["a"], ProtocolError)
    assert "not an object" in str(outcome["a"])
    assert outcome["b"] == {"ok": True}


async def test_unencodable_params_raise_type_error_and_send_nothing(autojump_clock):
    script = [Expect("ping"), Answer({})]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, channel):
            with pytest.raises(TypeError):
                await session.request("tools/call", {"x": {1, 2}})
            with pytest.raises(TypeError):
                await session.request("tools/call", [1, 2])  # type: ignore[arg-type]
            assert await session.request("ping") == {}
    assert [message["method"] for message in channel.sent] == ["ping"]


async def test_notify_sends_a_notification(autojump_clock):
    script = [
        Expect("notifications/initialized", None, notification=True),
        Expect("notifications/roots/list_changed", {"x": 1}, notification=True),
    ]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, _):
            await session.notify("notifications/initialized")
            await session.notify("notifications/roots/list_changed", {"x": 1})
            await trio.testing.wait_all_tasks_blocked()


# ------------------------------------------------- cancellation and timeouts


async def test_a_cancelled_request_tells_the_server_and_drops_the_late_answer(autojump_clock):
    logged: list[str] = []
    script = [
        Expect("slow"),
        cancelled(1, "cancelled by the client"),
        Answer({"late": True}, to=0),
        Expect("next"),
        Answer({"next": True}),
    ]
    with trio.fail_after(GUARD):
        async with scripted_session(script, options=SessionOptions(on_log=logged.append)) as (session, _):
            with trio.move_on_after(3) as scope:
                await session.request("slow")
            assert scope.cancelled_caught
            assert trio.current_time() == 3
            assert await session.request("next") == {"next": True}
            assert session.statistics().messages_dropped == 1
    assert any("late answer to abandoned request 1 (slow)" in line for line in logged)


async def test_request_timeout_withdraws_the_request_at_its_deadline(autojump_clock):
    script = [
        Expect("slow"),
        cancelled(1, "timed out"),
        Expect("next"),
        Answer({"next": True}),
    ]
    options = SessionOptions(request_timeout=5)
    with trio.fail_after(GUARD):
        async with scripted_session(script, options=options) as (session, _):
            with pytest.raises(RequestTimeout) as caught:
                await session.request("slow")
            assert trio.current_time() == 5
            assert isinstance(caught.value, trio.TooSlowError)
            assert (caught.value.method, caught.value.timeout) == ("slow", 5)
            assert "request 1 (slow) to server 'scripted server' got no answer within 5" in str(caught.value)
            assert await session.request("next") == {"next": True}


async def test_request_timeout_expires_each_request_at_its_own_deadline(autojump_clock):
    script = [Expect("a"), Expect("b"), Expect("c"), Hang()]
    expired: dict[str, float] = {}

    async def one(session: Session, method: str) -> None:
        with pytest.raises(RequestTimeout):
            await session.request(method)
        expired[method] = trio.current_time()

    with trio.fail_after(GUARD):
        async with scripted_session(script, options=SessionOptions(request_timeout=5)) as (session, _):
            async with trio.open_nursery() as nursery:
                for method in ("a", "b", "c"):
                    nursery.start_soon(one, session, method)
                    await trio.sleep(1)
    assert expired == {"a": 5, "b": 6, "c": 7}


async def test_an_answer_before_the_deadline_is_not_timed_out(autojump_clock):
    script = [Expect("a"), Sleep(4.5), Answer({"in": "time"}), Expect("b"), Sleep(4.5), Answer({"b": 1})]
    with trio.fail_after(GUARD):
        async with scripted_session(script, options=SessionOptions(request_timeout=5)) as (session, _):
            assert await session.request("a") == {"in": "time"}
            assert await session.request("b") == {"b": 1}
            assert trio.current_time() == 9


async def test_long_lived_requests_have_no_request_timeout(autojump_clock):
    script = [Expect("subscriptions/listen"), Sleep(60), Answer({"done": True})]
    with trio.fail_after(GUARD):
        async with scripted_session(script, options=SessionOptions(request_timeout=1)) as (session, _):
            assert await session.request("subscriptions/listen", {}, long_lived=True) == {"done": True}
            assert trio.current_time() == 60


async def test_cancel_on_abandon_false_sends_no_cancellation(autojump_clock):
    script = [Expect("initialize"), ExpectNothing(10)]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, _):
            with trio.move_on_after(1):
                await session.request("initialize", {}, cancel_on_abandon=False)
            await trio.sleep(10)


# ------------------------------------------------- the end of the connection


async def test_the_end_of_the_channel_fails_every_request_in_flight_and_after(autojump_clock):
    gone = ServerGone("the scripted server exited with code 3", exit_code=3)
    script = [Expect("a"), Expect("b"), Sleep(1), End(gone)]
    errors: list[BaseException] = []

    async def one(session: Session, method: str) -> None:
        with pytest.raises(ServerGone) as caught:
            await session.request(method)
        errors.append(caught.value)

    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, _):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(one, session, "a")
                await trio.testing.wait_all_tasks_blocked()
                nursery.start_soon(one, session, "b")
                assert await session.wait_failed() is gone
            assert trio.current_time() == 1
            assert session.failure is gone
            with pytest.raises(ServerGone) as later:
                await session.request("c")
            with pytest.raises(ServerGone):
                await session.notify("notifications/x")
    assert [error.exit_code for error in errors] == [3, 3]  # type: ignore[attr-defined]
    # Each raise gets its own copy, so that tracebacks do not pile up on one object.
    assert len({id(error) for error in [*errors, later.value]}) == 3


async def test_closing_fails_requests_in_flight_with_transport_closed(autojump_clock):
    script = [Expect("slow"), Hang()]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, channel):
            async with trio.open_nursery() as nursery:

                async def slow() -> None:
                    with pytest.raises(TransportClosed):
                        await session.request("slow")

                nursery.start_soon(slow)
                await trio.testing.wait_all_tasks_blocked()
                await session.aclose()
            assert channel.closed
            assert session.closing
            with pytest.raises(TransportClosed):
                await session.request("after")
            await session.aclose()  # idempotent


def test_a_session_is_made_by_the_openers_as_a_client_is():
    """``Session(...)`` refuses, as ``Client(...)`` does, and names the ways in."""
    for args in ((), (ScriptedChannel([]),), (ScriptedChannel([]), SessionOptions())):
        with pytest.raises(TypeError, match=r"open_session\(target\) or connect_session\(nursery, target\)"):
            Session(*args)
    with pytest.raises(TypeError, match=r"open_client\(target\) or connect_client\(nursery, target\)"):
        trio_mcp.Client()
    assert trio_mcp.Session is Session


async def test_a_session_that_was_not_started_says_so():
    session = new_session(ScriptedChannel([]))
    with pytest.raises(RuntimeError, match="async with"):
        await session.request("ping")


async def test_a_session_is_entered_once(autojump_clock):
    async with scripted_session([]) as (session, _):
        with pytest.raises(RuntimeError, match="only be entered once"):
            await session.__aenter__()


# ------------------------------------------------------------ notifications


async def test_notifications_reach_their_request_the_sink_and_every_subscriber(autojump_clock):
    progress = {"progressToken": "t1", "progress": 1}
    script = [
        Expect("tools/call", {"_meta": {"progressToken": "t1"}}),
        Expect("other"),
        Notify("notifications/progress", progress),
        Notify("notifications/message", {"level": "info", "data": "hello"}),
        Answer({"ok": 1}, to=0),
        Answer({"ok": 2}, to=1),
    ]
    sunk: list[dict] = []
    taken: list[dict] = []
    with trio.fail_after(GUARD):
        async with scripted_session(script, options=SessionOptions(on_notification=sunk.append)) as (
            session,
            _,
        ):
            stream = session.notifications()
            async with trio.open_nursery() as nursery:

                async def call() -> None:
                    result = await session.request(
                        "tools/call", {"_meta": {"progressToken": "t1"}}, on_notification=taken.append
                    )
                    assert result == {"ok": 1}

                nursery.start_soon(call)
                await trio.testing.wait_all_tasks_blocked()
                assert await session.request("other") == {"ok": 2}
            await trio.testing.wait_all_tasks_blocked()
            seen = [stream._receive.receive_nowait() for _ in range(2)]
            statistics = session.statistics()
    assert taken == [{"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}]
    assert sunk == [
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}}
    ]
    assert [note["method"] for note in seen] == ["notifications/progress", "notifications/message"]
    assert statistics.notifications_received == 2
    assert statistics.notifications_dropped == 0


async def test_a_full_subscriber_drops_and_counts(autojump_clock):
    script = [Notify("notifications/message", {"n": n}) for n in range(5)]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, channel):
            stream = session.notifications(buffer=2)
            await trio.testing.wait_all_tasks_blocked()
            assert channel.played == 5
            assert stream.dropped == 3
            assert session.statistics().notifications_dropped == 3
            first = await stream.__anext__()
            assert first["params"] == {"n": 0}


async def test_subscribers_end_when_the_server_goes(autojump_clock):
    script = [Sleep(1), End(ServerGone("gone"))]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, _):
            stream = session.notifications()
            with pytest.raises(ServerGone):
                async for _ in stream:
                    pass


# ---------------------------------------------------------- server requests


async def test_ping_is_answered_by_the_session_itself(autojump_clock):
    script = [Line(b'{"jsonrpc": "2.0", "id": "p1", "method": "ping"}'), ExpectAnswer("p1", {})]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (_, channel):
            await trio.testing.wait_all_tasks_blocked()
            assert channel.played == 2


async def test_server_requests_go_to_the_handler_and_are_answered(autojump_clock):
    asked: list[tuple[str, object]] = []

    async def on_request(method: str, params: object) -> dict:
        asked.append((method, params))
        await trio.sleep(2)
        return {"roots": []}

    script = [
        Line(b'{"jsonrpc": "2.0", "id": 7, "method": "roots/list", "params": {}}'),
        ExpectAnswer(7, {"roots": []}),
        Line(b'{"jsonrpc": "2.0", "id": 8, "method": "sampling/createMessage", "params": {}}'),
        Sleep(1),
        Notify("notifications/cancelled", {"requestId": 8}),
        ExpectNothing(10),
    ]
    with trio.fail_after(GUARD):
        async with scripted_session(script, options=SessionOptions(on_request=on_request)) as (
            session,
            channel,
        ):
            await trio.sleep(20)
            assert channel.played == len(script)
            assert session.statistics().server_requests_received == 2
    assert asked == [("roots/list", {}), ("sampling/createMessage", {})]


async def test_server_requests_without_a_handler_are_refused(autojump_clock):
    script = [
        Line(b'{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}}'),
        ExpectAnswer(1, error=-32601),
    ]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (_, channel):
            await trio.testing.wait_all_tasks_blocked()
            assert channel.played == 2


async def test_a_request_echoed_back_fails_with_a_protocol_error(autojump_clock):
    script = [Expect("tools/list"), Line(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}')]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, _):
            with pytest.raises(ProtocolError, match="echoed request 1"):
                await session.request("tools/list")


# ------------------------------------------------------- hostile lines, log


async def test_hostile_lines_are_dropped_counted_and_logged(autojump_clock):
    logged: list[str] = []
    script = [
        Expect("tools/list"),
        Line(b"Server starting..."),
        Line(b'{"jsonrpc": "2.0", "id": 99, "result": {}}'),
        Line(b"[]"),
        Answer({"tools": []}),
    ]
    with trio.fail_after(GUARD):
        options = SessionOptions(on_log=logged.append)
        async with scripted_session(script, options=options) as (session, _):
            assert await session.request("tools/list") == {"tools": []}
            assert session.statistics().messages_dropped == 3
    assert any("not JSON" in line for line in logged)
    assert any("unknown request id 99" in line for line in logged)
    assert any("empty JSON-RPC batch" in line for line in logged)


async def test_a_timeout_names_what_was_dropped(autojump_clock):
    script = [Expect("slow"), Line(b'{"jsonrpc": "2.0", "id": 5, "result": {}}'), cancelled(1, "timed out")]
    with trio.fail_after(GUARD):
        async with scripted_session(script, options=SessionOptions(request_timeout=1)) as (session, _):
            with pytest.raises(RequestTimeout, match="1 lines or responses were dropped so far"):
                await session.request("slow")


async def test_on_wire_sees_every_line_both_ways(autojump_clock):
    wire: list[tuple[str, bytes]] = []
    script = [Expect("ping"), Answer({}), Notify("notifications/message", {})]
    with trio.fail_after(GUARD):
        options = SessionOptions(on_wire=lambda direction, data: wire.append((direction, data)))
        async with scripted_session(script, options=options) as (session, channel):
            await session.request("ping")
            await trio.testing.wait_all_tasks_blocked()
            assert channel.played == 3
    assert [direction for direction, _ in wire] == ["out", "in", "in"]
    assert wire[0][1] == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


async def test_statistics_count_what_went_by(autojump_clock):
    script = [
        Expect("a"),
        Answer({}),
        Expect("b", ANY),
        Notify("notifications/message", {}),
        Answer({}),
        Line(b'{"jsonrpc": "2.0", "id": "s", "method": "ping"}'),
        ExpectAnswer("s", {}),
    ]
    with trio.fail_after(GUARD):
        async with scripted_session(script) as (session, channel):
            await session.request("a")
            await session.request("b", {})
            await trio.testing.wait_all_tasks_blocked()
            assert channel.played == len(script)
            statistics = session.statistics()
    assert statistics.requests_sent == 2
    assert statistics.requests_in_flight == 0
    assert statistics.notifications_received == 1
    assert statistics.messages_dropped == 0
    assert statistics.pid is None
