"""The MCP Apps bridge machine (`trio_mcp._core.app_bridge`), driven by a scripted view."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

from trio_mcp._core.app_bridge import Abandon, BridgeMachine, Closed, Event, Send, Work

HOST = {"name": "host", "version": "1"}
CAPS = {"serverTools": {}, "serverResources": {}, "logging": {}}


def machine(**context: Any) -> BridgeMachine:
    return BridgeMachine(HOST, dict(CAPS), context)


def request(id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def note(method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


INIT = request(
    1,
    "ui/initialize",
    {
        "protocolVersion": "2026-01-26",
        "appInfo": {"name": "v", "version": "0"},
        "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]},
    },
)


def ready(m: BridgeMachine) -> None:
    m.receive(INIT)
    m.receive(note("ui/notifications/initialized"))


def sent(actions: list[Any]) -> list[dict[str, Any]]:
    return [action.message for action in actions if isinstance(action, Send)]


def test_initialize_answers_with_the_hosts_capabilities_identity_and_context() -> None:
    m = machine(theme="dark")
    [answer] = sent(m.receive(INIT))
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "protocolVersion": "2026-01-26",
            "hostCapabilities": CAPS,
            "hostInfo": HOST,
            "hostContext": {"theme": "dark"},
        },
    }
    assert m.app_info == {"name": "v", "version": "0"}
    assert m.state == "initializing"
    [again] = sent(m.receive(INIT))
    assert again["error"]["code"] == -32600


def test_an_unknown_protocol_version_is_answered_with_the_hosts() -> None:
    m = machine()
    [answer] = sent(m.receive(request("a", "ui/initialize", {"protocolVersion": "1999-01-01"})))
    assert answer["result"]["protocolVersion"] == "2026-01-26"


def test_nothing_goes_to_the_view_before_it_is_initialized_then_everything_in_order() -> None:
    m = machine()
    assert m.tool_input({"city": "Paris"}) == []
    m.receive(INIT)
    assert m.tool_result({"content": []}) == []
    assert m.host_context_changed({"theme": "light"}) == []
    actions = m.receive(note("ui/notifications/initialized"))
    assert actions[0] == Event("initialized", {})
    assert [message["method"] for message in sent(actions)] == [
        "ui/notifications/tool-input",
        "ui/notifications/tool-result",
        "ui/notifications/host-context-changed",
    ]
    assert sent(actions)[0]["params"] == {"arguments": {"city": "Paris"}}
    assert m.host_context == {"theme": "light"}
    [partial] = sent(m.tool_input({"c": "P"}, partial=True))
    assert partial["method"] == "ui/notifications/tool-input-partial"


def test_requests_before_initialize_are_refused_except_ping() -> None:
    m = machine()
    [refused] = sent(m.receive(request(5, "tools/call", {"name": "x"})))
    assert refused["error"]["code"] == -32600
    [pong] = sent(m.receive(request(6, "ping")))
    assert pong == {"jsonrpc": "2.0", "id": 6, "result": {}}


def test_proxied_requests_become_work_answered_once() -> None:
    m = machine()
    ready(m)
    [work] = m.receive(request(7, "tools/call", {"name": "refresh"}))
    assert work == Work(7, "tools/call", {"name": "refresh"})
    [reused] = sent(m.receive(request(7, "tools/list")))
    assert reused["error"]["code"] == -32600
    assert sent(m.answer(7, {"content": []})) == [{"jsonrpc": "2.0", "id": 7, "result": {"content": []}}]
    assert m.answer(7, {}) == []
    m.receive(request(8, "resources/read", {"uri": "ui://x"}))
    [failed] = sent(m.fail(8, -32602, "no", {"why": 1}))
    assert failed["error"] == {"code": -32602, "message": "no", "data": {"why": 1}}


def test_what_the_host_does_not_offer_is_method_not_found() -> None:
    m = BridgeMachine(HOST, {}, {})
    ready(m)
    for method in ("tools/call", "resources/read", "ui/open-link", "ui/unknown"):
        [refused] = sent(m.receive(request(9, method, {})))
        assert refused["error"]["code"] == -32601, method
    [work] = m.receive(request(10, "ui/message", {"role": "user", "content": []}))
    assert isinstance(work, Work)


def test_a_display_mode_is_granted_only_when_both_sides_list_it() -> None:
    m = machine(displayMode="inline", availableDisplayModes=["inline", "fullscreen", "pip"])
    ready(m)
    # The view listed inline and fullscreen only: pip is answered with the current mode.
    [answer] = sent(m.receive(request(11, "ui/request-display-mode", {"mode": "pip"})))
    assert answer["result"] == {"mode": "inline"}
    [work] = m.receive(request(12, "ui/request-display-mode", {"mode": "fullscreen"}))
    assert work == Work(12, "ui/request-display-mode", {"mode": "fullscreen"})
    host_only_inline = machine()
    ready(host_only_inline)
    [answer] = sent(host_only_inline.receive(request(13, "ui/request-display-mode", {"mode": "fullscreen"})))
    assert answer["result"] == {"mode": "inline"}


def test_a_withdrawn_request_is_abandoned_and_never_answered() -> None:
    m = machine()
    ready(m)
    m.receive(request("w", "tools/call", {"name": "slow"}))
    assert m.receive(note("notifications/cancelled", {"requestId": "w"})) == [Abandon("w")]
    assert m.answer("w", {}) == []
    assert m.receive(note("notifications/cancelled", {"requestId": "nobody"})) == []


def test_view_notifications_reach_the_host() -> None:
    m = machine()
    assert m.receive(note("ui/notifications/size-changed", {"height": 3}))[0].kind == "ignored"
    ready(m)
    assert m.receive(note("ui/notifications/size-changed", {"height": 300})) == [
        Event("size-changed", {"height": 300})
    ]
    assert m.receive(note("notifications/message", {"level": "info", "data": "hi"})) == [
        Event("log", {"level": "info", "data": "hi"})
    ]
    assert m.receive(note("ui/whatever"))[0].kind == "ignored"


def test_teardown_waits_for_the_views_answer_and_refuses_what_comes_after() -> None:
    m = machine()
    ready(m)
    m.receive(request(20, "tools/call", {"name": "slow"}))
    actions = m.teardown()
    assert actions[0] == Abandon(20)
    [teardown] = sent(actions)
    assert teardown["method"] == "ui/resource-teardown"
    assert m.teardown() == []
    [refused] = sent(m.receive(request(21, "tools/call", {"name": "x"})))
    assert refused["error"]["code"] == -32600
    with pytest.raises(RuntimeError, match="torn down"):
        m.tool_result({})
    assert m.receive({"jsonrpc": "2.0", "id": 999, "result": {}})[0].kind == "ignored"
    assert m.receive({"jsonrpc": "2.0", "id": teardown["id"], "result": {}}) == [Closed()]
    assert m.state == "closed"
    assert m.receive(request(22, "ping"))[0].kind == "ignored"


def test_a_view_that_never_initialized_is_closed_at_once() -> None:
    m = machine()
    m.receive(INIT)
    assert m.teardown() == [Closed()]


def test_malformed_messages_are_ignored() -> None:
    m = machine()
    for bad in (None, [], "x", {"id": 1}, {"jsonrpc": "2.0"}, {"jsonrpc": "1.0", "method": "ping", "id": 1}):
        [event] = m.receive(bad)
        assert isinstance(event, Event)
        assert event.kind == "ignored"
    assert m.receive(request(True, "ping"))[0].kind == "ignored"
    [bad_params] = sent(m.receive(request(1, "ui/initialize", [1])))
    assert bad_params["error"]["code"] == -32602


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
methods = st.sampled_from(
    [
        "ui/initialize",
        "ui/notifications/initialized",
        "tools/call",
        "ping",
        "ui/message",
        "notifications/cancelled",
        "ui/request-display-mode",
        "x",
    ]
)
messages = st.one_of(
    json_values,
    st.builds(
        lambda method, key, params, has_id: {
            "jsonrpc": "2.0",
            "method": method,
            "params": params,
            **({"id": key} if has_id else {}),
        },
        methods,
        st.integers(0, 3) | st.text(max_size=2),
        json_values,
        st.booleans(),
    ),
)


@pytest.mark.property
@given(st.lists(messages, max_size=12), st.integers(0, 12))
def test_the_host_never_speaks_first_whatever_the_view_sends(script: list[Any], at: int) -> None:
    m = machine()
    initialized = False
    for index, message in enumerate(script):
        if index == at:
            queued = m.tool_input({"n": index}) if m.state not in ("tearing_down", "closed") else []
            if not initialized:
                assert queued == []
        for action in m.receive(message):
            if isinstance(action, Event) and action.kind == "initialized":
                initialized = True
            if isinstance(action, Send) and "method" in action.message and not initialized:
                raise AssertionError(f"the host spoke first: {action.message}")
            if isinstance(action, Send) and "id" in action.message and "method" not in action.message:
                assert "result" in action.message or "error" in action.message


def test_only_what_changed_in_the_host_context_is_sent() -> None:
    m = machine(theme="dark", displayMode="inline")
    ready(m)
    assert m.host_context_changed({"theme": "dark"}) == []
    [changed] = sent(m.host_context_changed({"theme": "light", "displayMode": "inline", "locale": "fr-FR"}))
    assert changed["params"] == {"theme": "light", "locale": "fr-FR"}
    assert m.host_context == {"theme": "light", "displayMode": "inline", "locale": "fr-FR"}


def test_list_changes_are_passed_on() -> None:
    m = machine()
    assert m.list_changed("tools") == []
    ready(m)
    [note_sent] = sent(m.list_changed("resources"))
    assert note_sent == {"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {}}
    with pytest.raises(ValueError, match="kind must be"):
        m.list_changed("roots")  # type: ignore[arg-type]
