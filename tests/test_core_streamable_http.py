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
from trio_mcp._core.sse import Event, EventTooLarge
from trio_mcp._errors import HTTPError, RpcError

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
