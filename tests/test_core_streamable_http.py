"""The pure Streamable HTTP core (`trio_mcp._core.streamable_http`) and the HTTP+SSE fallback's
state (`trio_mcp._core.http_sse`), without I/O.

Examples first, then Hypothesis properties over arbitrary hostile response sequences:
an answer is only delivered to a call in flight, on the exchange that carried it; no call
is completed twice, no server request handed over twice; at most one renewal is in flight
and a call is sent again at most once; memory stays bounded; nothing raises.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from trio_mcp._channel import Outgoing
from trio_mcp._core import streamable_http as sh
from trio_mcp._core.http_sse import HttpSse
from trio_mcp._core.http_wire import BadLocation, lost_session, redirect_target
from trio_mcp._core.sse import BadEncoding, Event, EventTooLarge
from trio_mcp._errors import AuthRequired, ConnectionFailed, HTTPError, MessageTooLarge, RpcError, ServerBusy

MODERN = "2026-07-28"


def core() -> sh.StreamableHTTP:
    return sh.StreamableHTTP("server 'http://h/mcp'", "http://h/mcp")


def answer(request_id, text="ok"):
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"text": text}}).encode()


def delivered(actions):
    return [json.loads(a.data) for a in actions if isinstance(a, sh.Deliver)]


# ------------------------------------------------------------------ examples


def test_outgoing_records_name_and_revision_without_json():
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}
    about = Outgoing("tools/call", 7, {"name": "echo", **meta})
    assert (about.method, about.request_id, about.name, about.revision) == ("tools/call", 7, "echo", MODERN)
    about = Outgoing("resources/subscribe", None, {"uri": "file:///a"})
    assert (about.name, about.revision, about.request_id) == ("file:///a", None, None)
    assert Outgoing("tools/list", 1).name is None
    assert Outgoing("tools/call", 2, {"name": 3, "_meta": []}).name is None


def test_modern_headers_come_from_the_metadata():
    c = core()
    call = c.open(b"{}", "tools/call", 1, "caf\u00e9", MODERN)
    headers = c.post_headers(call)
    assert headers["mcp-protocol-version"] == MODERN
    assert headers["mcp-method"] == "tools/call"
    assert headers["mcp-name"].startswith("=?base64?")
    assert "mcp-session-id" not in headers


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_a_request_about_one_task_is_named_by_its_id(method):
    # The tasks extension: Mcp-Name is the taskId (a server checks it against the body).
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}
    about = Outgoing(method, 3, {"taskId": "t-1", **meta})
    assert about.name == "t-1"
    c = core()
    call = c.open(b"{}", method, 3, about.name, about.revision)
    assert c.post_headers(call)["mcp-name"] == "t-1"
    assert "mcp-name" not in c.post_headers(c.open(b"{}", "tasks/list", 4, "t-1", MODERN))


def test_an_answer_under_another_calls_id_completes_neither():
    c = core()
    first = c.open(b"{}", "tools/call", 1, "a", MODERN)
    second = c.open(b"{}", "tools/call", 2, "b", MODERN)
    c.post_headers(first)
    c.post_headers(second)
    actions = c.json_body(second, second.exchange, answer(1))
    assert delivered(actions) == []
    assert isinstance(actions[-1], sh.Fail)
    assert not first.answered
    # An id that is no call's (null, "server-error"): this call's answer.
    actions = c.json_body(first, first.exchange, answer(None))
    assert delivered(actions)[0]["id"] == 1
    c.finish(first)
    third = c.open(b"{}", "tools/call", 3, "c", MODERN)
    c.post_headers(third)
    # The id of a call that is over: a stale answer, nobody's.
    assert isinstance(c.json_body(third, third.exchange, answer(1))[-1], sh.Fail)


def test_modern_event_ids_are_per_stream():
    c = core()
    for request_id in (1, 2):
        call = c.open(b"{}", "tools/list", request_id, None, MODERN)
        c.post_headers(call)
        item = Event(data=answer(request_id).decode(), id="1", own_id=True)
        assert delivered(c.event(call, call.exchange, item))[0]["id"] == request_id


def test_lost_session_forms():
    assert lost_session({"code": -32000, "message": "Bad Request: No valid session ID provided"})
    assert lost_session({"code": -32600, "message": "Session not found"})
    assert not lost_session({"code": -32602, "message": "Invalid params: session_name is required"})


def test_one_renewal_for_many_calls_each_resent_once():
    c = core()
    init = c.open(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}', "initialize", 1)
    c.post_headers(init)
    c.response(init, init.exchange, 200, {"content-type": "application/json", "mcp-session-id": "s1"})
    c.json_body(init, init.exchange, answer(1))
    c.finish(init)
    calls = [c.open(b"{}", "tools/call", n, "t", None) for n in range(2, 12)]
    for call in calls:
        c.post_headers(call)
    verdicts = [
        c.refusal(call, call.exchange, 404, {"content-type": "application/json"}, b"{}", 0.0)
        for call in calls
    ]
    assert verdicts == [sh.LOST] * 10
    steps = [c.lost(call) for call in calls]
    assert steps == [sh.RENEW] + [sh.WAIT] * 9
    renewal, _ = c.renewal()
    c.post_headers(renewal)
    c.response(renewal, renewal.exchange, 200, {"content-type": "application/json", "mcp-session-id": "s2"})
    c.json_body(renewal, renewal.exchange, answer(renewal.request_id))
    assert c.renewed(renewal) is None
    assert [c.lost(call) for call in calls] == [sh.RESEND] * 10
    for call in calls:
        assert c.post_headers(call)["mcp-session-id"] == "s2"
        c.refusal(call, call.exchange, 404, {}, b"", 0.0)
        assert isinstance(c.lost(call), sh.Fail)


def test_the_next_step_of_calls_that_found_the_session_lost():
    """`next_step` holds the order: one renewal started, the others wait, a call sent
    meanwhile waits too, each goes once more in the new session, and a second loss fails."""
    c = core()
    init = c.open(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}', "initialize", 1)
    assert c.next_step(init, None) is sh.SEND
    c.post_headers(init)
    c.response(init, init.exchange, 200, {"content-type": "application/json", "mcp-session-id": "s1"})
    c.json_body(init, init.exchange, answer(1))
    c.finish(init)
    calls = [c.open(b"{}", "tools/call", n, "t", None) for n in range(2, 6)]
    for call in calls:
        assert c.next_step(call, None) is sh.SEND
        c.post_headers(call)
    outcomes = [c.refusal(call, call.exchange, 404, {}, b"", 0.0) for call in calls]
    steps = [c.next_step(call, outcome) for call, outcome in zip(calls, outcomes, strict=True)]
    assert [type(step) for step in steps] == [sh.AwaitRenewal] * 4
    assert [step.start for step in steps] == [True, False, False, False]
    assert all(step.then is sh.Next.LOST for step in steps)
    # A call sent while the renewal is in flight waits for it, then goes.
    late = c.open(b"{}", "tools/list", 9, None, None)
    waiting = c.next_step(late, None)
    assert isinstance(waiting, sh.AwaitRenewal)
    assert waiting.then is None
    assert not waiting.start
    renewal, _ = c.renewal()
    c.post_headers(renewal)
    c.response(renewal, renewal.exchange, 200, {"content-type": "application/json", "mcp-session-id": "s2"})
    c.json_body(renewal, renewal.exchange, answer(renewal.request_id))
    assert c.renewed(renewal) is None
    assert c.next_step(late, waiting.then) is sh.SEND
    for call, step in zip(calls, steps, strict=True):
        assert c.next_step(call, step.then) is sh.SEND
        assert c.post_headers(call)["mcp-session-id"] == "s2"
        outcome = c.refusal(call, call.exchange, 404, {}, b"", 0.0)
        assert isinstance(c.next_step(call, outcome), sh.Fail)


def test_a_renewal_that_fails_fails_every_call_that_waited_for_it():
    c = core()
    init = c.open(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}', "initialize", 1)
    c.post_headers(init)
    c.response(init, init.exchange, 200, {"content-type": "application/json", "mcp-session-id": "s1"})
    c.json_body(init, init.exchange, answer(1))
    c.finish(init)
    calls = [c.open(b"{}", "tools/call", n, "t", None) for n in range(2, 4)]
    for call in calls:
        c.post_headers(call)
    steps = [c.next_step(call, c.refusal(call, call.exchange, 404, {}, b"", 0.0)) for call in calls]
    assert [step.start for step in steps] == [True, False]
    renewal, _ = c.renewal()
    c.renewal_failed(renewal, HTTPError("refused"))
    for call, step in zip(calls, steps, strict=True):
        failed = c.next_step(call, step.then)
        assert isinstance(failed, sh.Fail)
        assert "opening a new one failed" in str(failed.error)


def test_a_32022_naming_the_version_asked_is_resent_once():
    c = core()
    call = c.open(b"{}", "server/discover", 1, None, MODERN)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32022, "message": "no", "data": {"supported": [MODERN]}},
        }
    ).encode()
    head = {"content-type": "application/json"}
    c.post_headers(call)
    assert c.refusal(call, call.exchange, 400, head, body, 0.0) == sh.RESEND
    c.post_headers(call)
    assert isinstance(c.refusal(call, call.exchange, 400, head, body, 0.0), sh.Deliver)


def test_a_version_retry_can_still_be_sent_again_once_when_its_post_went_unread():
    """A ``-32022`` retry is the server's request; a kept-alive connection closed under it is
    another cause, allowed once: and a call with side effects is never sent again unread."""
    c = core()
    call = c.open(b"{}", "server/discover", 1, None, MODERN)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32022, "message": "no", "data": {"supported": [MODERN]}},
        }
    ).encode()
    c.post_headers(call)
    assert c.refusal(call, call.exchange, 400, {"content-type": "application/json"}, body, 0.0) == sh.RESEND
    c.post_headers(call)
    assert c.unanswered(call)
    assert not c.unanswered(call)
    tool = c.open(b"{}", "tools/call", 2, "echo", MODERN)
    c.post_headers(tool)
    assert not c.unanswered(tool)


def test_redirect_targets_and_endpoints():
    assert redirect_target("http://h:1/mcp", "/x?y") == "http://h:1/x?y"
    for bad in ("http://[::1/x", "http://h:99999/x", "ftp://h/x"):
        with pytest.raises(BadLocation):
            redirect_target("http://h:1/mcp", bad)
    state = HttpSse("s", "http://h:1/sse", "http://h:1/sse")
    assert isinstance(state.endpoint(Event(data="http://h:99999/m", type="endpoint")), HTTPError)
    assert isinstance(state.endpoint(Event(data="http://other:1/m", type="endpoint")), HTTPError)
    assert state.endpoint(Event(data="/m?s=1", type="endpoint")) == "http://h:1/m?s=1"


def test_http_sse_server_request_replayed_is_dropped():
    state = HttpSse("s", "http://h:1/sse", "http://h:1/sse")
    request = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "roots/list"})
    assert len(delivered(state.event(Event(data=request, id="a", own_id=True)))) == 1
    assert delivered(state.event(Event(data=request, id="b", own_id=True))) == []
    state.sent(1)
    assert len(delivered(state.event(Event(data=answer(1).decode())))) == 1
    assert delivered(state.event(Event(data=answer(1).decode()))) == []


def test_rpc_error_is_not_raised_by_the_core():
    # The core hands errors over as messages; the session makes RpcError of them.
    c = core()
    call = c.open(b"{}", "tools/call", 1, "t", MODERN)
    c.post_headers(call)
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "x"}}).encode()
    actions = c.refusal(call, call.exchange, 500, {"content-type": "application/json"}, body, 0.0)
    assert isinstance(actions, sh.Deliver)
    assert json.loads(actions.data)["id"] == 1
    assert RpcError is not None


# ------------------------------------------------------------------ properties

IDS = st.one_of(st.integers(0, 8), st.sampled_from([None, "server-error", "1", True, 1.5, [1]]))
MESSAGES = st.one_of(
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "result": {}}, IDS),
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "error": {"code": -1, "message": "e"}}, IDS),
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "method": "roots/list"}, IDS),
    st.just({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}),
    st.just({"jsonrpc": "2.0"}),
)
BODIES = st.one_of(
    MESSAGES.map(lambda m: json.dumps(m).encode()),
    st.lists(MESSAGES, max_size=3).map(lambda ms: json.dumps(ms).encode()),
    st.binary(max_size=20),
)
EVENT_IDS = st.sampled_from(["", "1", "2", "3", "x"])
CALL = st.integers(0, 5)
OPS = st.one_of(
    st.tuples(st.just("open"), st.sampled_from(["tools/call", "initialize", "tools/list"]), st.booleans()),
    st.tuples(
        st.just("response"),
        CALL,
        st.sampled_from([200, 202, 204, 400, 404, 500]),
        st.sampled_from(["application/json", "text/event-stream", "text/html", ""]),
        st.booleans(),
    ),
    st.tuples(st.just("json"), CALL, BODIES, st.booleans()),
    st.tuples(st.just("event"), CALL, BODIES, EVENT_IDS, st.booleans(), st.booleans()),
    st.tuples(st.just("get"), BODIES, EVENT_IDS, st.booleans()),
    st.tuples(st.just("refusal"), CALL, st.sampled_from([400, 401, 404, 405, 429, 500]), BODIES),
    st.tuples(st.just("end"), CALL, st.booleans()),
    st.tuples(st.just("lost"), CALL),
    st.tuples(st.just("renewed"), st.booleans()),
    st.tuples(st.just("finish"), CALL),
    st.tuples(st.just("get_end"), st.booleans()),
)


def _key(value):
    return (type(value).__name__, json.dumps(value))


@pytest.mark.property
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPS, max_size=60))
def test_hostile_sequences_keep_every_promise(ops):
    c = core()
    calls: list[sh.Call] = []
    answered: dict[object, int] = {}
    served: set = set()
    generation_served = c.generation
    next_id = 1
    renewal: sh.Call | None = None
    resends: dict[object, int] = {}

    def check(actions, fed: sh.Call | None):
        nonlocal generation_served, served
        if c.generation != generation_served:
            generation_served, served = c.generation, set()
        for action in actions:
            assert isinstance(action, (sh.Deliver, sh.Log, sh.Fail))
            if not isinstance(action, sh.Deliver):
                continue
            message = json.loads(action.data)
            if "method" in message:
                request_id = message.get("id")
                legacy = fed is None or fed.revision is None
                if legacy and isinstance(request_id, (int, str)) and not isinstance(request_id, bool):
                    key = _key(request_id)
                    assert key not in served, "a server request handed over twice"
                    served.add(key)
                continue
            target = action.call
            assert target is not None, "an answer delivered for no call"
            assert c.is_open(target), "an answer delivered to a call not in flight"
            assert message["id"] == target.request_id
            assert fed is None or fed is target, "an answer delivered to a call of another exchange"
            answered[target.request_id] = answered.get(target.request_id, 0) + 1
            assert answered[target.request_id] == 1, "a call completed twice"

    for op in ops:
        kind = op[0]
        if kind == "open":
            _, method, modern = op
            call = c.open(
                b'{"jsonrpc":"2.0","id":%d,"method":"%s"}' % (next_id, method.encode()),
                method,
                next_id,
                "t",
                MODERN if modern else None,
            )
            next_id += 1
            c.post_headers(call)
            calls.append(call)
            continue
        if kind == "renewed":
            if renewal is not None:
                if op[1]:
                    c.response(
                        renewal,
                        renewal.exchange,
                        200,
                        {"content-type": "application/json", "mcp-session-id": f"s{next_id}"},
                    )
                    c.json_body(renewal, renewal.exchange, answer(renewal.request_id))
                c.renewed(renewal)
                renewal = None
            continue
        if kind == "get":
            _, body, event_id, own = op
            check(
                c.get_event(
                    Event(data=body.decode("utf-8", "replace") or "x", id=event_id, own_id=own), None
                ),
                None,
            )
            continue
        if kind == "get_end":
            c.get_ended(op[1])
            continue
        if not calls:
            continue
        call = calls[op[1] % len(calls)]
        if kind == "response":
            _, _, status, ctype, session = op
            headers = {"content-type": ctype} if ctype else {}
            if session:
                headers["mcp-session-id"] = "s-new"
            verdict = c.response(call, call.exchange, status, headers)
            assert isinstance(verdict, (sh.Read, sh.Fail))
        elif kind == "json":
            _, _, body, stale = op
            check(c.json_body(call, call.exchange - stale, body), call)
        elif kind == "event":
            _, _, body, event_id, own, stale = op
            item = Event(data=body.decode("utf-8", "replace") or "x", id=event_id, own_id=own)
            check(c.event(call, call.exchange - stale, item), call)
            check(c.event(call, call.exchange, EventTooLarge(limit=1, id=event_id)), call)
        elif kind == "refusal":
            _, _, status, body = op
            decision = c.refusal(call, call.exchange, status, {"content-type": "application/json"}, body, 0.0)
            if isinstance(decision, sh.Deliver):
                check([decision], call)
            elif decision == sh.RESEND:
                resends[call.request_id] = resends.get(call.request_id, 0) + 1
                assert resends[call.request_id] <= 1, "a call sent again twice"
                c.post_headers(call)
        elif kind == "end":
            step = c.stream_ended(call, call.exchange, "cut" if op[2] else None, 200)
            assert step is None or isinstance(step, (sh.Fail, sh.Resume))
        elif kind == "lost":
            was_renewing = c.renewing
            step = c.next_step(call, sh.Next.LOST)
            if isinstance(step, sh.AwaitRenewal) and step.start:
                assert not was_renewing, "two renewals in flight"
                assert c.renewing
                renewal, _ = c.renewal()
                c.post_headers(renewal)
            elif isinstance(step, sh.AwaitRenewal):
                assert c.renewing, "waiting for a renewal that is not in flight"
            elif step is sh.SEND:
                assert not (call.revision is None and c.renewing), "sent while the session is renewed"
                resends[call.request_id] = resends.get(call.request_id, 0) + 1
                assert resends[call.request_id] <= 1, "a call sent again twice"
                c.post_headers(call)
        elif kind == "finish":
            c.finish(call)
            calls.remove(call)
        # Memory stays bounded whatever came in.
        assert len(c._finished) <= sh.MEMORY
        assert len(c._served) <= sh.MEMORY
        assert len(c._get_seen) <= sh.MEMORY
        assert all(len(open_call.seen) <= sh.CALL_EVENTS for open_call in calls)
        assert c.in_flight <= len(calls) + 1 + len(c._state)


@pytest.mark.property
@given(st.lists(st.tuples(EVENT_IDS, st.booleans(), st.integers(0, 20)), max_size=200))
def test_memory_is_bounded_over_many_events(events):
    c = core()
    for n, (event_id, own, request_id) in enumerate(events):
        message = json.dumps({"jsonrpc": "2.0", "id": request_id + n * 100, "method": "ping"})
        c.get_event(Event(data=message, id=f"{event_id}{n}", own_id=own), None)
    assert len(c._get_seen) <= sh.MEMORY
    assert len(c._served) <= sh.MEMORY


def test_a_stream_that_ends_without_its_answer_names_the_status_of_its_response():
    c = core()
    call = c.open(b"{}", "tools/call", 1, "echo", MODERN)
    c.post_headers(call)
    step = c.stream_ended(call, call.exchange, "the server broke the HTTP protocol", 200)
    assert isinstance(step, sh.Fail)
    assert step.error.status == 200
    assert "ended before its answer" in str(step.error)


@pytest.mark.parametrize(
    ("status", "content_type", "final"),
    [
        (405, None, True),
        (409, None, True),
        (404, None, True),
        (400, "application/json", True),
        (500, None, False),
        (200, "text/html", False),
    ],
)
def test_a_get_stream_refused_says_whether_it_is_given_up_for_good(status, content_type, final):
    refused = core().get_response(status, content_type)
    assert isinstance(refused, sh.GetRefused)
    assert refused.final is final
    assert (
        str(status) in refused.reason or "offers none" in refused.reason or "open already" in refused.reason
    )


def test_an_event_stream_is_read():
    assert core().get_response(200, "text/event-stream; charset=utf-8") is None


def test_verdicts_are_typed_values_not_strings():
    c = core()
    call = c.open(b"{}", "tools/call", 1, "echo", MODERN)
    c.post_headers(call)
    assert c.response(call, call.exchange, 200, {"content-type": "application/json"}) is sh.Read.JSON
    assert c.response(call, call.exchange, 200, {"content-type": "text/event-stream"}) is sh.Read.EVENTS
    assert c.response(call, call.exchange, 500, {}) is sh.Read.REFUSAL
    assert not any(isinstance(member.value, str) for member in (*sh.Read, *sh.Next))


def _session(c, level=True):
    """An initialize-era session s1 with notifications/initialized and a logging/setLevel sent."""
    init = c.open(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}', "initialize", 1)
    c.post_headers(init)
    c.response(init, init.exchange, 200, {"content-type": "application/json", "mcp-session-id": "s1"})
    c.json_body(init, init.exchange, answer(1))
    c.finish(init)
    handshake = c.handshake(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert isinstance(next(handshake), sh.PostMessage)
    assert isinstance(next(handshake), sh.OpenGet)
    handshake.close()
    get = c.get_stream()
    assert isinstance(next(get), sh.GetRequest)
    assert isinstance(get.send(sh.GetHead(200, "text/event-stream")), sh.ReadGet)
    get.close()  # the stream ended with the session: the renewal opens it again
    if level:
        set_level = c.open(b'{"jsonrpc":"2.0","id":2,"method":"logging/setLevel"}', "logging/setLevel", 2)
        c.finish(set_level)
    call = c.open(b"{}", "tools/call", 3, "t", None)
    c.post_headers(call)
    step = c.next_step(call, c.refusal(call, call.exchange, 404, {}, b"", 0.0))
    assert isinstance(step, sh.AwaitRenewal)
    assert step.start
    return call, step


def _answer_private(c, step, session="s2", ok=True):
    call = step.call
    assert call.private
    c.post_headers(call)
    c.response(call, call.exchange, 200, {"content-type": "application/json", "mcp-session-id": session})
    body = (
        answer(call.request_id)
        if ok
        else json.dumps(
            {"jsonrpc": "2.0", "id": call.request_id, "error": {"code": -32603, "message": "no"}}
        ).encode()
    )
    c.json_body(call, call.exchange, body)


def test_the_renewal_script_replays_what_the_session_was_told_in_order():
    c = core()
    call, waiting = _session(c)
    script = c.renew()
    steps = [next(script)]
    assert isinstance(steps[0], sh.Log)
    step = script.send(None)
    assert isinstance(step, sh.PostCall)
    assert json.loads(step.call.data)["method"] == "initialize"
    _answer_private(c, step)
    step = script.send(None)
    assert isinstance(step, sh.PostMessage)
    assert step.data == c.initialized
    step = script.send(None)
    assert isinstance(step, sh.PostCall)
    assert step.call.method == "logging/setLevel"
    _answer_private(c, step, ok=False)  # refused again: said, not fatal
    step = script.send(None)
    assert isinstance(step, sh.Log)
    assert "refused logging/setLevel again" in step.text
    assert isinstance(script.send(None), sh.OpenGet)
    with pytest.raises(StopIteration):
        script.send(None)
    assert c.session_id == "s2"
    assert c.next_step(call, waiting.then) is sh.SEND
    assert c.in_flight == 1  # the renewal's own requests are forgotten


def test_a_renewal_refused_or_interrupted_fails_the_calls_waiting_for_it():
    for how in ("error", "closed"):
        c = core()
        call, waiting = _session(c, level=False)
        script = c.renew()
        next(script)
        step = script.send(None)
        assert isinstance(step, sh.PostCall)
        if how == "error":
            with pytest.raises(StopIteration):
                script.send(HTTPError("refused"))
        else:
            script.close()  # the loop was cancelled half-way
        assert not c.renewing
        assert isinstance(c.next_step(call, waiting.then), sh.Fail)
        assert c.in_flight == 1


def test_the_end_of_a_renewal_never_fails_a_later_one_in_flight():
    """A renewal still telling the new session its state when that session is lost too: a
    second renewal starts; the first one's end must not fail the second's waiters."""
    c = core()
    _call, _ = _session(c)
    first = c.renew()
    next(first)
    step = first.send(None)
    _answer_private(c, step)
    assert isinstance(first.send(None), sh.PostMessage)  # replaying, s2 in place
    later = c.open(b"{}", "tools/call", 7, "t", None)
    assert c.next_step(later, None) is sh.SEND
    c.post_headers(later)
    step = c.next_step(later, c.refusal(later, later.exchange, 404, {}, b"", 0.0))
    assert isinstance(step, sh.AwaitRenewal)
    assert step.start
    second = c.renew()
    next(second)
    first.close()  # the first renewal's task ends
    assert c.renewing
    assert isinstance(c.next_step(later, step.then), sh.AwaitRenewal)
    step = second.send(None)
    _answer_private(c, step, session="s3")
    assert isinstance(second.send(None), sh.PostMessage)
    second.close()
    assert c.next_step(later, sh.Next.LOST) is sh.SEND
    assert c.session_id == "s3"


# ------------------------------------------------------------------ twins of the socket tests
#
# Each rule a socket test (tests/test_http*.py) checks through a real server, checked here
# on the core alone, driven as the channel drives it: a scripted in-memory peer.

INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
SSE = "text/event-stream"


def _initialized(c, session="s1"):
    """An initialize-era session ``session``, its initialize answered."""
    init = c.open(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}', "initialize", 1)
    c.post_headers(init)
    head = {"content-type": "application/json"}
    if session is not None:
        head["mcp-session-id"] = session
    c.response(init, init.exchange, 200, head)
    c.json_body(init, init.exchange, answer(1))
    c.finish(init)
    return init


def _get_stream(c):
    """The GET stream's script, at its first GET."""
    script = c.get_stream()
    step = next(script)
    assert isinstance(step, sh.GetRequest)
    return script, step


def test_twin_the_get_stream_is_open_before_the_first_request():
    """Twin of test_http_defects.test_f_the_get_stream_is_open_before_the_first_request."""
    c = core()
    _initialized(c)
    handshake = c.handshake(INITIALIZED)
    assert isinstance(next(handshake), sh.PostMessage)
    legacy = c.open(b"{}", "tools/list", 2, None, None)
    modern = c.open(b"{}", "tools/list", 3, None, MODERN)
    waiting = c.next_step(legacy, None)
    assert isinstance(waiting, sh.AwaitGate)
    assert c.next_step(modern, None) is sh.SEND  # the 2026-07-28 era has no handshake
    opened = next(handshake)
    assert isinstance(opened, sh.OpenGet)
    assert opened.wait
    assert isinstance(c.next_step(legacy, waiting.then), sh.AwaitGate)
    with pytest.raises(StopIteration):
        next(handshake)  # the GET stream's first response came
    assert c.gate_open
    assert c.next_step(legacy, waiting.then) is sh.SEND


def test_twin_an_unanswered_initialized_does_not_block_past_the_handshake_timeout():
    """Twin of test_http_defects.test_f_an_unanswered_initialized_does_not_block_past_the_handshake_timeout:
    the loop closes the handshake when its time is up; the gate opens however it ends."""
    c = core()
    _initialized(c)
    handshake = c.handshake(INITIALIZED)
    next(handshake)
    call = c.open(b"{}", "tools/list", 2, None, None)
    assert isinstance(c.next_step(call, None), sh.AwaitGate)
    handshake.close()
    assert c.gate_open
    assert c.next_step(call, None) is sh.SEND


def test_twin_the_get_stream_is_opened_once_and_only_with_a_session():
    """Twin of test_http.test_legacy_session_headers_get_stream_and_delete (one GET, its
    headers) and of test_http.test_fallback_to_http_sse_of_2024_11_05 (none over HTTP+SSE)."""
    assert c_gates("notifications/initialized", None)
    assert not c_gates("notifications/initialized", MODERN)
    assert not c_gates("notifications/cancelled", None)
    for session, fell_back, opens in ((None, False, False), ("s1", True, False), ("s1", False, True)):
        c = core()
        _initialized(c, session)
        c.fell_back = fell_back
        steps = list(c.handshake(INITIALIZED))
        assert [type(step) for step in steps] == [sh.PostMessage] + [sh.OpenGet] * opens
    c = core()
    _initialized(c)
    assert len(list(c.handshake(INITIALIZED))) == 2
    assert len(list(c.handshake(INITIALIZED))) == 1  # the GET stream was opened already
    _, step = _get_stream(c)
    assert step.headers == {
        "accept": "text/event-stream",
        "mcp-session-id": "s1",
    }
    assert c.session_headers() == {"mcp-session-id": "s1"}


def c_gates(method, revision):
    return core().gates(method, revision)


@pytest.mark.parametrize(("status", "content_type"), [(405, None), (409, None), (404, None)])
def test_twin_a_get_stream_refused_for_good_is_not_retried(status, content_type):
    """Twin of test_http_failures.test_get_stream_refused_with_405_is_not_retried."""
    c = core()
    _initialized(c)
    script, _ = _get_stream(c)
    step = script.send(sh.GetHead(status, content_type))
    assert isinstance(step, sh.Log)
    assert "no stream of server messages" in step.text
    with pytest.raises(StopIteration):
        next(script)
    assert not c.get_open


def test_twin_the_get_stream_is_reopened_however_many_events_it_carried():
    """Twin of test_http_defects.test_e_the_get_stream_is_reopened_however_many_events_it_carried:
    every connection that carried an event resets the count of failures; it resumes from the
    last event id; five failures in a row give it up."""
    c = core()
    _initialized(c)
    script, _ = _get_stream(c)
    for round_ in range(8):
        assert script.send(sh.GetHead(200, SSE)) is sh.READ_GET
        assert c.get_open
        ping = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": round_}})
        assert len(delivered(c.get_event(Event(data=ping, id=f"e{round_}", own_id=True), None))) == 1
        step = script.send(sh.GetEnded("cut", f"e{round_}", None))
        assert isinstance(step, sh.Log)
        assert "broke: cut" in step.text
        step = next(script)
        assert isinstance(step, sh.Sleep)
        assert step.delay == 1.5  # one failure: never given up
        step = next(script)
        assert isinstance(step, sh.GetRequest)
        assert step.headers["last-event-id"] == f"e{round_}"
    assert c.get_failures == 1  # the last connection carried an event, then broke
    for failures in range(2, sh.MAX_GET_FAILURES):
        step = script.send(sh.GetFailed("cannot connect"))
        assert isinstance(step, sh.Log)
        step = next(script)
        assert isinstance(step, sh.Sleep)
        assert isinstance(next(script), sh.GetRequest)
        assert c.get_failures == failures
    assert isinstance(script.send(sh.GetHead(500, None)), sh.Log)  # an error page: not a stream
    step = next(script)
    assert isinstance(step, sh.Log)
    assert "given up" in step.text
    with pytest.raises(StopIteration):
        next(script)


def test_twin_the_get_stream_waits_as_long_as_the_server_asks():
    c = core()
    _initialized(c)
    script, _ = _get_stream(c)
    script.send(sh.GetHead(200, SSE))
    assert isinstance(script.send(sh.GetEnded(None, "p1", 2500)), sh.Sleep)  # a clean end, no event
    # (a clean end that carried nothing counts as a failure: a server closing at once is not hammered)
    assert c.get_failures == 1


def test_twin_the_get_stream_state_reads_its_position_even_from_a_priming_event():
    """Twin of test_http_defects.test_a_stream_of_only_a_priming_event_is_resumed, on the GET stream."""
    c = core()
    _initialized(c)
    script, _ = _get_stream(c)
    script.send(sh.GetHead(200, SSE))
    step = script.send(sh.GetEnded(None, "prime-1", 0))
    assert isinstance(step, sh.Sleep)
    assert step.delay == 0.0  # the server's retry: 0 ms
    assert next(script).headers["last-event-id"] == "prime-1"


def test_twin_an_answer_on_the_get_stream_is_accepted_and_ends_the_open_post():
    """Twins of test_http.test_answer_on_the_get_stream_is_accepted,
    test_http_failures.test_answer_on_the_get_stream and
    test_http_failures.test_202_while_the_get_stream_is_open_waits_for_the_deadline."""
    c = core()
    _initialized(c)
    script, _ = _get_stream(c)
    script.send(sh.GetHead(200, SSE))
    open_post = c.open(b"{}", "tools/call", 2, "t", None)
    c.post_headers(open_post)
    parked = c.open(b"{}", "tools/call", 3, "t", None)
    c.post_headers(parked)
    assert c.response(parked, parked.exchange, 202, {}) is sh.Read.PARKED
    for call, ends in ((open_post, True), (parked, False)):
        actions = c.get_event(Event(data=answer(call.request_id).decode()), None)
        (action,) = actions
        assert isinstance(action, sh.Deliver)
        assert action.call is call
        assert action.ends_exchange is ends
        # Never twice.
        assert delivered(c.get_event(Event(data=answer(call.request_id).decode()), None)) == []
    script.close()
    assert not c.get_open
    late = c.open(b"{}", "tools/call", 4, "t", None)
    c.post_headers(late)
    failed = c.response(late, late.exchange, 202, {})  # no GET stream: no answer will come
    assert isinstance(failed, sh.Fail)


def test_twin_fallback_to_http_sse_is_decided_by_the_core():
    """Twins of test_http.test_fallback_to_http_sse_of_2024_11_05 and
    test_http_failures.test_404_without_an_mcp_body: initialize refused without an MCP body
    falls back; once the link is up, calls go over it; without it the refusal names why."""
    c = core()
    init = c.open(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}', "initialize", 1)
    c.post_headers(init)
    assert c.response(init, init.exchange, 404, {"content-type": "text/html"}) is sh.Read.REFUSAL
    assert c.refusal(init, init.exchange, 404, {"content-type": "text/html"}, b"<html>", 0.0) is sh.FALL_BACK
    failed = c.fallback_failed(init, 404, {}, b"<html>", HTTPError("no endpoint event"))
    assert isinstance(failed.error, HTTPError)
    assert failed.error.status == 404
    assert "nor does it speak HTTP+SSE: no endpoint event" in str(failed.error)
    assert isinstance(failed.error.__cause__, HTTPError)
    c.fell_back = True
    assert c.next_step(c.open(b"{}", "tools/list", 2, None, None), None) is sh.SEND_SSE
    # A renewal's own initialize never falls back.
    c = core()
    _initialized(c)
    c.initialized = INITIALIZED
    private, _ = c.renewal()
    c.post_headers(private)
    refused = c.refusal(private, private.exchange, 404, {}, b"", 0.0)
    assert isinstance(refused, sh.Fail)
    assert refused.error.status == 404


def test_twin_a_request_of_a_new_session_refused_as_lost_fails_the_renewal():
    """Twin of test_http_failures.test_session_forgotten_again_and_again (the new session's
    own requests find it lost too: no second renewal from inside the first)."""
    c = core()
    _initialized(c)
    set_level = c.open(b'{"jsonrpc":"2.0","id":2,"method":"logging/setLevel"}', "logging/setLevel", 2)
    c.finish(set_level)
    _, state = c.renewal()
    (replay,) = state
    c.post_headers(replay)
    refused = c.refusal(replay, replay.exchange, 404, {}, b"", 0.0)
    assert isinstance(refused, sh.Fail)
    assert "of a new session (HTTP 404)" in str(refused.error)


@pytest.mark.parametrize(
    ("status", "head", "kind"),
    [
        (401, {"www-authenticate": 'Bearer resource_metadata="http://h/.well-known/x"'}, AuthRequired),
        (403, {"www-authenticate": 'Bearer error="insufficient_scope", scope="a b"'}, AuthRequired),
        (429, {"retry-after": "3"}, ServerBusy),
        (503, {}, ServerBusy),
        (500, {"content-type": "text/html"}, HTTPError),
        (302, {"location": "http://elsewhere/"}, HTTPError),
    ],
)
def test_twin_refusals_are_typed(status, head, kind):
    """Twins of test_http.test_401_is_auth_required_with_the_challenge,
    test_http_failures.test_401_carries_the_challenge, test_403_insufficient_scope_carries_the_challenge,
    test_busy_server_says_when_to_retry (both files), test_answers_that_are_not_mcp and
    test_other_redirects_are_refused_naming_the_location."""
    c = core()
    call = c.open(b"{}", "tools/call", 1, "t", MODERN)
    c.post_headers(call)
    assert c.response(call, call.exchange, status, head) is sh.Read.REFUSAL
    failed = c.refusal(call, call.exchange, status, head, b"nope", 0.0)
    assert isinstance(failed, sh.Fail)
    assert type(failed.error) is kind
    assert failed.error.status == status
    if kind is ServerBusy and "retry-after" in head:
        assert failed.error.retry_after == 3
    if status == 302:
        assert "http://elsewhere/" in str(failed.error)


def test_twin_a_json_rpc_error_in_any_status_is_the_servers_answer():
    """Twins of test_http.test_rpc_error_in_an_error_status_is_the_servers_answer,
    test_http_failures.test_json_rpc_error_in_any_status_is_the_servers_answer and
    test_http_defects.test_d_a_400_that_mentions_a_session_is_the_servers_answer."""
    for status, message in ((500, "boom"), (400, "Invalid params: session_name is required")):
        c = core()
        _initialized(c)
        call = c.open(b"{}", "tools/call", 2, "t", None)
        c.post_headers(call)
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": message}})
        answered = c.refusal(
            call, call.exchange, status, {"content-type": "application/json"}, body.encode(), 0.0
        )
        assert isinstance(answered, sh.Deliver)
        assert json.loads(answered.data) == {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32602, "message": message},
        }


def test_twin_wrong_content_types_empty_bodies_and_202s_fail_the_call():
    """Twins of test_http.test_wrong_content_type_and_empty_bodies,
    test_http_failures.test_json_that_is_not_json_rpc and test_202_to_a_request."""
    c = core()
    call = c.open(b"{}", "tools/call", 1, "t", MODERN)
    c.post_headers(call)
    assert c.response(call, call.exchange, 200, {"content-type": "text/plain"}) is sh.Read.REFUSAL
    assert isinstance(
        c.refusal(call, call.exchange, 200, {"content-type": "text/plain"}, b"hi", 0.0), sh.Fail
    )
    assert isinstance(c.json_body(call, call.exchange, b"  ")[-1], sh.Fail)
    assert isinstance(c.json_body(call, call.exchange, b'{"hello": 1}')[-1], sh.Fail)
    assert isinstance(c.json_body(call, call.exchange, b"not json")[-1], sh.Fail)
    for status in (202, 204):
        failed = c.response(call, call.exchange, status, {})
        assert isinstance(failed, sh.Fail)
        assert "will send no answer" in str(failed.error)


def test_twin_a_session_id_on_an_error_answer_is_not_adopted():
    """Twin of test_http_failures.test_session_id_on_an_error_answer_is_not_adopted."""
    c = core()
    init = c.open(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}', "initialize", 1)
    c.post_headers(init)
    c.response(init, init.exchange, 200, {"content-type": "application/json", "mcp-session-id": "bad"})
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "no"}}
    assert delivered(c.json_body(init, init.exchange, json.dumps(error).encode()))
    assert c.session_id is None


def test_twin_the_first_of_two_answers_wins_and_a_replayed_request_is_handed_over_once():
    """Twins of test_http_failures.test_two_answers_the_first_wins,
    test_replayed_request_is_not_answered_twice, test_http.test_legacy_stream_cut_is_resumed_and_replayed_request_not_answered_twice
    and test_http_defects.test_i_a_replay_under_new_event_ids_is_not_answered_twice."""
    c = core()
    _initialized(c)
    call = c.open(b"{}", "tools/call", 2, "t", None)
    c.post_headers(call)
    ask = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}})
    assert len(delivered(c.event(call, call.exchange, Event(data=ask, id="a1", own_id=True)))) == 1
    assert (
        delivered(c.event(call, call.exchange, Event(data=ask, id="a1", own_id=True))) == []
    )  # event replay
    assert delivered(c.event(call, call.exchange, Event(data=ask, id="b9", own_id=True))) == []  # new ids
    assert len(delivered(c.event(call, call.exchange, Event(data=answer(2, "first").decode())))) == 1
    assert delivered(c.event(call, call.exchange, Event(data=answer(2, "second").decode()))) == []


def test_twin_a_cut_stream_is_resumed_from_its_last_event_then_fails_typed():
    """Twins of test_http.test_legacy_stream_cut_is_resumed..., test_http.test_stream_cut_mid_event_fails_the_request,
    test_http_failures.test_stream_lost_before_the_answer and
    test_http_defects.test_a_stream_of_only_a_priming_event_is_resumed."""
    c = core()
    _initialized(c)
    call = c.open(b"{}", "tools/call", 2, "t", None)
    c.post_headers(call)
    c.stream_position(call, "prime", 250)  # a priming event: an id, no data
    step = c.stream_ended(call, call.exchange, "cut", 200)
    assert isinstance(step, sh.Resume)
    assert step.headers["last-event-id"] == "prime"
    assert step.delay == 0.25
    assert c.resumed(call, call.exchange, 200, SSE) is None
    failed = c.resumed(call, call.exchange, 405, None)
    assert isinstance(failed, sh.Fail)
    assert "resuming it from event 'prime' got HTTP 405" in str(failed.error)
    for _ in range(sh.MAX_RESUMES - 1):
        assert isinstance(c.stream_ended(call, call.exchange, "cut", 200), sh.Resume)
    failed = c.stream_ended(call, call.exchange, "cut", 200)
    assert isinstance(failed, sh.Fail)
    assert isinstance(failed.error, ConnectionFailed)
    # The 2026-07-28 era has no resumption.
    modern = c.open(b"{}", "tools/call", 3, "t", MODERN)
    c.post_headers(modern)
    c.stream_position(modern, "prime", None)
    assert isinstance(c.stream_ended(modern, modern.exchange, "cut", 200), sh.Fail)


def test_twin_oversized_and_unreadable_events_fail_the_call():
    """Twins of test_http.test_huge_event_is_refused_at_the_cap, test_http_failures.test_huge_event_over_the_cap,
    test_event_that_is_not_utf8 and test_event_that_is_not_json."""
    c = core()
    call = c.open(b"{}", "tools/call", 1, "t", MODERN)
    c.post_headers(call)
    (too_large,) = c.event(call, call.exchange, EventTooLarge(limit=10, id=""))
    assert isinstance(too_large, sh.Fail)
    assert isinstance(too_large.error, MessageTooLarge)
    (bad,) = c.event(call, call.exchange, BadEncoding(field="data", id=""))
    assert isinstance(bad, sh.Fail)
    (not_json,) = c.event(call, call.exchange, Event(data="not json"))
    assert isinstance(not_json, sh.Fail)
    assert not call.answered


def test_twin_a_stale_response_on_a_kept_alive_connection_retires_it():
    """Twin of test_http_defects.test_a_stale_response_on_a_kept_alive_connection_is_no_later_calls_answer
    and test_a_body_under_the_id_of_another_call_completes_neither."""
    c = core()
    first = c.open(b"{}", "tools/call", 1, "a", MODERN)
    c.post_headers(first)
    c.json_body(first, first.exchange, answer(1))
    c.finish(first)
    second = c.open(b"{}", "tools/call", 2, "b", MODERN)
    c.post_headers(second)
    failed = c.json_body(second, second.exchange, answer(1))[-1]
    assert isinstance(failed, sh.Fail)
    assert failed.out_of_step


def test_twin_only_a_call_without_side_effects_goes_again_when_no_response_came():
    """Twins of test_http_failures.test_server_closing_kept_alive_connections and
    test_http_defects.test_a_list_refused_by_a_closing_kept_alive_connection_is_sent_again."""
    c = core()
    listing = c.open(b"{}", "tools/list", 1, None, MODERN)
    tool = c.open(b"{}", "tools/call", 2, "t", MODERN)
    assert c.unanswered(listing)
    assert not c.unanswered(listing)  # once
    assert not c.unanswered(tool)


def test_twin_closing_deletes_the_http_session_only_when_there_is_one():
    """Twin of test_http.test_legacy_session_headers_get_stream_and_delete (the DELETE) and of
    test_http.test_modern_era_headers_and_calls (none in the 2026-07-28 era)."""
    c = core()
    assert c.delete_headers() is None
    _initialized(c)
    assert c.delete_headers() == {"accept": "text/event-stream", "mcp-session-id": "s1"}
    c.fell_back = True
    assert c.delete_headers() is None


def test_twin_every_legacy_stream_numbers_its_events_from_one():
    """Twin of test_http_defects.test_b_every_stream_numbering_its_events_from_one."""
    c = core()
    _initialized(c)
    for request_id in (2, 3):
        call = c.open(b"{}", "tools/call", request_id, "t", None)
        c.post_headers(call)
        item = Event(data=answer(request_id).decode(), id="1", own_id=True)
        assert delivered(c.event(call, call.exchange, item))[0]["id"] == request_id


def test_twin_the_era_probe_refused_without_json_rpc_is_an_initialize_era_server():
    """Twin of test_http.test_probe_404_html_falls_back_to_initialize."""
    c = core()
    probe = c.open(b"{}", "server/discover", 1, None, MODERN)
    c.post_headers(probe)
    failed = c.refusal(probe, probe.exchange, 404, {"content-type": "text/html"}, b"<html>", 0.0)
    assert isinstance(failed, sh.Fail)
    assert "without a JSON-RPC error" in str(failed.error)
    assert isinstance(failed.error.__cause__, HTTPError)


def test_twin_answers_and_notifications_carry_the_session_or_the_revision():
    """Twin of test_http.test_legacy_server_request_answered_by_post (the answer's POST) and
    test_http.test_modern_era_headers_and_calls (a notification's)."""
    c = core()
    _initialized(c)
    legacy = c.message_headers(None, None)
    assert legacy["mcp-session-id"] == "s1"
    assert "mcp-method" not in legacy
    modern = c.message_headers("notifications/cancelled", MODERN)
    assert modern["mcp-method"] == "notifications/cancelled"
    assert modern["mcp-protocol-version"] == MODERN
    assert "mcp-session-id" not in modern
