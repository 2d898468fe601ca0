"""The Streamable HTTP core as a state machine (Hypothesis `RuleBasedStateMachine`).

A scripted peer drives `StreamableHTTP` through the steps a loop runs: calls
sent through `next_step`, answered (or not) with JSON bodies, event streams,
refusals, lost sessions and cut streams, on their own exchange or on one that
is over; renewals run through the core's `renew` script, answered or refused.
Whatever the peer does, the promises hold:

* an answer is delivered only to a call in flight, on the exchange that
  carries it, and never twice;
* at most one renewal is in flight, and none starts while one runs;
* no initialize-era call is sent while a renewal runs;
* a call is sent again after a lost session at most once;
* memory stays bounded.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from trio_mcp._core import streamable_http as sh
from trio_mcp._core.sse import Event
from trio_mcp._errors import HTTPError

MODERN = "2026-07-28"
JSON = {"content-type": "application/json"}

IDS = st.sampled_from(["own", "other", "null", "foreign", "none"])


class CoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.core = sh.StreamableHTTP("server 'http://h/mcp'", "http://h/mcp")
        self.calls: dict[int, sh.Call] = {}
        self.waiting: dict[int, sh.AwaitRenewal] = {}
        self.delivered: dict[int, int] = {}
        self.resent: dict[int, int] = {}
        self.next_id = 10
        self.script = None
        self.step = None
        self.get = None
        self.get_step = None
        self.get_failures = 0

    # ------------------------------------------------------------ setup

    @initialize(legacy=st.booleans())
    def start(self, legacy: bool) -> None:
        c = self.core
        if legacy:
            init = c.open(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}', "initialize", 1)
            c.post_headers(init)
            c.response(init, init.exchange, 200, {**JSON, "mcp-session-id": "s1"})
            self.take(c.json_body(init, init.exchange, self.answer(1)), init)
            c.finish(init)
            handshake = c.handshake(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            assert isinstance(next(handshake), sh.PostMessage)
            assert isinstance(next(handshake), sh.OpenGet)
            handshake.close()
            self.open_get()
        self.legacy = legacy

    # ------------------------------------------------------------ helpers

    @staticmethod
    def answer(request_id) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {}}).encode()

    def take(self, actions, fed: sh.Call | None) -> None:
        for action in actions:
            assert isinstance(action, (sh.Deliver, sh.Log, sh.Fail))
            if isinstance(action, sh.Deliver) and action.call is not None:
                target = action.call
                assert target is fed, "an answer delivered to a call that did not carry it"
                assert self.core.is_open(target), "an answer to a call that is over"
                assert json.loads(action.data)["id"] == target.request_id
                self.delivered[target.request_id] = self.delivered.get(target.request_id, 0) + 1
                assert self.delivered[target.request_id] == 1, "an answer delivered twice"

    def pick(self, index: int) -> sh.Call | None:
        sendable = [call for call in self.calls.values() if call.request_id not in self.waiting]
        return sendable[index % len(sendable)] if sendable else None

    def advance(self, call: sh.Call, outcome: sh.Next | None) -> None:
        """Run `next_step` as a loop would, up to a POST, a wait, or the end."""
        c = self.core
        was_renewing = c.renewing
        step = c.next_step(call, outcome)
        if isinstance(step, sh.Fail):
            self.drop(call)
        elif isinstance(step, sh.AwaitRenewal):
            if step.start:
                assert not was_renewing, "a second renewal started while one runs"
                if self.script is not None:
                    # The previous renewal is still telling the new session its state:
                    # it ends now (its task is done), the new one goes on.
                    old, self.script = self.script, None
                    old.close()
                    assert c.renewing, "an earlier renewal's end failed the one in flight"
                self.script = c.renew()
                self.step = next(self.script)
            else:
                assert c.renewing, "waiting for a renewal that is not in flight"
            self.waiting[call.request_id] = step
        else:
            assert step is sh.SEND
            assert not (call.revision is None and c.renewing), "sent while the session is renewed"
            if outcome is not None:
                self.resent[call.request_id] = self.resent.get(call.request_id, 0) + 1
                assert self.resent[call.request_id] <= 2, "a call sent again more than twice"
            c.post_headers(call)

    def open_get(self) -> None:
        assert self.get is None, "two GET streams at once"
        self.get = self.core.get_stream()
        self.get_step = next(self.get)
        assert isinstance(self.get_step, sh.GetRequest)

    def drop(self, call: sh.Call) -> None:
        self.core.finish(call)
        self.calls.pop(call.request_id, None)
        self.waiting.pop(call.request_id, None)

    # ------------------------------------------------------------ rules

    @rule(modern=st.booleans(), method=st.sampled_from(["tools/call", "tools/list", "resources/read"]))
    def send(self, modern: bool, method: str) -> None:
        self.next_id += 1
        revision = MODERN if modern or not self.legacy else None
        call = self.core.open(b"{}", method, self.next_id, "x", revision)
        self.calls[call.request_id] = call
        self.advance(call, None)

    @precondition(lambda self: self.calls)
    @rule(index=st.integers(0, 20), which=IDS, stale=st.booleans(), events=st.booleans())
    def answer_it(self, index: int, which: str, stale: bool, events: bool) -> None:
        call = self.pick(index)
        if call is None or call.exchange == 0:
            return
        others = [other for other in self.calls if other != call.request_id]
        ids = {
            "own": call.request_id,
            "other": others[0] if others else 9999,
            "null": None,
            "foreign": "server-error",
            "none": call.request_id + 1000,
        }
        body = self.answer(ids[which])
        exchange = call.exchange - 1 if stale else call.exchange
        if events:
            item = Event(type="message", data=body.decode(), id="")
            self.take(self.core.event(call, exchange, item), call)
        else:
            self.take(self.core.json_body(call, exchange, body), call)
        if call.answered:
            self.drop(call)

    @precondition(lambda self: self.calls)
    @rule(index=st.integers(0, 20), status=st.sampled_from([400, 404, 429, 500]), rpc=st.booleans())
    def refuse(self, index: int, status: int, rpc: bool) -> None:
        call = self.pick(index)
        if call is None or call.exchange == 0:
            return
        body = b""
        if rpc:
            error = {"code": -32600, "message": "Session not found"}
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        decision = self.core.refusal(call, call.exchange, status, JSON if rpc else {}, body, 0.0)
        if isinstance(decision, sh.Deliver):
            self.take([decision], call)
            self.drop(call)
        elif isinstance(decision, sh.Fail):
            self.drop(call)
        else:
            self.advance(call, decision)

    @precondition(lambda self: self.calls)
    @rule(index=st.integers(0, 20), cut=st.booleans())
    def stream_ends(self, index: int, cut: bool) -> None:
        call = self.pick(index)
        if call is None or call.exchange == 0:
            return
        step = self.core.stream_ended(call, call.exchange, "cut" if cut else None, 200)
        if isinstance(step, sh.Fail):
            self.drop(call)

    @precondition(lambda self: self.script is not None)
    @rule(ok=st.booleans(), error=st.booleans())
    def renewal_step(self, ok: bool, error: bool) -> None:
        c = self.core
        step, reply = self.step, None
        if isinstance(step, sh.PostCall):
            if error:
                reply = HTTPError("refused")
            else:
                call = step.call
                c.post_headers(call)
                c.response(call, call.exchange, 200, {**JSON, "mcp-session-id": "s-new"})
                body = (
                    self.answer(call.request_id)
                    if ok
                    else b'{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"no"}}'
                )
                c.json_body(call, call.exchange, body)
        try:
            self.step = self.script.send(reply)
        except StopIteration:
            self.renewal_over()
            return
        if isinstance(self.step, sh.OpenGet):
            self.open_get()

    @precondition(lambda self: self.script is not None)
    @rule()
    def renewal_cut(self) -> None:
        self.script.close()
        self.renewal_over()

    def renewal_over(self) -> None:
        self.script = self.step = None
        assert not self.core.renewing
        for request_id, waiting in list(self.waiting.items()):
            del self.waiting[request_id]
            self.advance(self.calls[request_id], waiting.then)

    @precondition(lambda self: self.get is not None)
    @rule(
        status=st.sampled_from([200, 404, 405, 500]),
        stream=st.booleans(),
        broke=st.booleans(),
        carried=st.booleans(),
    )
    def get_goes_on(self, status: int, stream: bool, broke: bool, carried: bool) -> None:
        """The GET stream's script, answered as a server and a network might."""
        c, step = self.core, self.get_step
        reply: object = None
        if isinstance(step, sh.GetRequest):
            if broke:
                reply = sh.GetFailed("cannot connect")
            else:
                reply = sh.GetHead(status, "text/event-stream" if stream else "text/html")
        elif step is sh.READ_GET:
            if carried:
                ping = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
                actions = c.get_event(Event(data=ping, id=f"g{self.next_id}", own_id=True), None)
                assert all(isinstance(action, (sh.Deliver, sh.Log)) for action in actions)
                self.next_id += 1
            reply = sh.GetEnded("cut" if broke else None)
        else:
            assert isinstance(step, (sh.Sleep, sh.Log)), step
            if isinstance(step, sh.Sleep):
                assert 0 <= step.delay <= 60
        try:
            self.get_step = self.get.send(reply)
        except StopIteration:
            self.get = self.get_step = None

    @precondition(lambda self: self.get is not None)
    @rule()
    def get_closed(self) -> None:
        self.get.close()
        self.get = self.get_step = None

    @precondition(lambda self: self.calls)
    @rule(index=st.integers(0, 20))
    def give_up(self, index: int) -> None:
        call = list(self.calls.values())[index % len(self.calls)]
        self.drop(call)

    # ------------------------------------------------------------ invariants

    @invariant()
    def one_renewal_at_most(self) -> None:
        # Its initialize in flight: the renewal's script is running.
        assert not self.core.renewing or self.script is not None

    @invariant()
    def nobody_waits_without_a_renewal(self) -> None:
        assert not self.waiting or self.script is not None

    @invariant()
    def the_get_stream_is_open_only_while_read(self) -> None:
        assert self.core.get_open == (self.get is not None and self.get_step is sh.READ_GET)
        assert self.core.get_failures <= sh.MAX_GET_FAILURES

    @invariant()
    def memory_is_bounded(self) -> None:
        c = self.core
        assert len(c._finished) <= sh.MEMORY
        assert len(c._served) <= sh.MEMORY
        assert c.in_flight <= len(self.calls) + 1 + len(c._state)


CoreMachine.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, suppress_health_check=[HealthCheck.too_slow], deadline=None
)
test_the_core_keeps_its_promises_whatever_the_peer_does = pytest.mark.property(CoreMachine.TestCase)


def test_a_renewal_that_ends_after_a_later_one_started_leaves_that_one_running():
    """Found by the state machine: a renewal whose initialize was answered, still telling
    the new session its state when that session was lost too, is closed as the next renewal
    starts; closing it must not end the next one."""
    state = CoreMachine()
    state.start(legacy=True)
    state.get_closed()  # the session's GET stream ended: the renewal opens one again
    state.send(method="tools/call", modern=False)
    state.refuse(index=0, rpc=True, status=400)  # the session is lost: a renewal starts
    state.renewal_step(error=False, ok=False)  # its log line
    state.renewal_step(error=False, ok=True)  # initialize answered: a new session
    state.renewal_step(error=False, ok=False)  # notifications/initialized sent
    state.send(method="tools/call", modern=False)
    # The new session is lost as well, while the first renewal still has its GET to open.
    state.refuse(index=0, rpc=True, status=400)
    assert state.core.renewing
    state.teardown()


def test_a_renewal_never_opens_a_second_get_stream():
    """A renewal while the session's GET stream still runs leaves it be (the loop's stream
    reads on, with the new session's headers at its next reconnection)."""
    state = CoreMachine()
    state.start(legacy=True)
    running = state.get
    state.send(method="tools/call", modern=False)
    state.refuse(index=0, rpc=True, status=400)
    for _ in range(4):
        if state.script is None:
            break
        state.renewal_step(error=False, ok=True)
    assert state.script is None
    assert state.get is running
    state.teardown()
