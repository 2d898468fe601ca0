"""Tests of `Connection`, the sans-io JSON-RPC core: correlation, routing, hostile input.

Every test here is synchronous and runs without a process or an event loop.
The unit tests pin down documented behaviour one case at a time; the
properties (marked ``property``) check the promises that hold for *every*
input: `Connection.receive_line` never raises, requests resolve at most
once and only while in flight, and an answer Python's `json` module writes
reaches its request exactly. (The decoder's own properties are in
``tests/_core/test_codec.py``.)
"""

from __future__ import annotations

import json
import math
import typing
from collections import Counter
from typing import Any

import orjson
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, multiple, rule
from json_support import any_text, json_layouts, json_values, json_writable, same

from trio_mcp._core.codec import WALK_FROM
from trio_mcp._core.framing import KEEP, LineFramer, Oversized, clean_line
from trio_mcp._core.jsonrpc import (
    SUBSCRIPTION_ID,
    Answered,
    Connection,
    Diagnostic,
    Event,
    Failed,
    Note,
    Send,
    ServerRequest,
    ServerRequestCancelled,
    encode,
)
from trio_mcp._errors import MessageTooLarge, ProtocolError, RpcError

EVENT_TYPES: tuple[type, ...] = typing.get_args(Event)
BOM = b"\xef\xbb\xbf"
CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"


# ------------------------------------------------------------------ helpers


def wire(**members: Any) -> bytes:
    """One JSON-RPC message from the server, as the line it would write (without LF)."""
    return orjson.dumps({"jsonrpc": "2.0", **members})


def decode(line: bytes) -> Any:
    """Decode a line the connection wants written, checking that it is exactly one line."""
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    return orjson.loads(line)


def started(n: int, *, wants_notes: bool = False) -> Connection:
    """A connection with requests 1..n in flight."""
    conn = Connection()
    for _ in range(n):
        conn.start_request("tools/list", None, wants_notes=wants_notes)
    return conn


def only_diagnostics(events: list[Event]) -> bool:
    return bool(events) and all(isinstance(e, Diagnostic) for e in events)


def texts(events: list[Event]) -> str:
    return "\n".join(e.text for e in events if isinstance(e, Diagnostic))


def oversized(head: bytes, tail: bytes = b"}}", size: int = 50_000_000) -> Oversized:
    return Oversized(size=size, head=head, tail=tail, limit=1_000_000)


# ------------------------------------------------------------- outgoing lines


def test_ids_are_monotonic_ints_and_never_reused() -> None:
    conn = Connection()
    ids = []
    for i in range(5):
        request_id, line = conn.start_request("tools/list", {"cursor": str(i)})
        assert type(request_id) is int
        assert decode(line) == {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/list",
            "params": {"cursor": str(i)},
        }
        ids.append(request_id)
    assert ids == sorted(set(ids))
    assert ids[0] >= 1
    conn.receive_line(wire(id=ids[0], result={}))
    conn.abandon(ids[1])
    conn.fail_all()
    later, _ = conn.start_request("ping", None)
    assert later > ids[-1]


def test_request_without_params_has_no_params_member() -> None:
    _, line = Connection().start_request("ping", None)
    assert decode(line) == {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.mark.parametrize("text", ["a\nb", "a\r\nb", "\u2028", "\u2029", "\u0085", "\x00", "\n" * 10, '"\\\n'])
def test_encode_never_contains_a_raw_newline(text: str) -> None:
    message = {"jsonrpc": "2.0", "method": "x", "params": {text: text, "list": [text]}}
    line = encode(message)
    assert line.count(b"\n") == 1
    assert line.endswith(b"\n")
    (framed,) = LineFramer(1000).feed(line)
    assert orjson.loads(framed) == message


def test_notification_line() -> None:
    conn = Connection()
    line = conn.notification("notifications/initialized")
    assert decode(line) == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    line = conn.notification("notifications/roots/list_changed", {"a": 1})
    assert decode(line)["params"] == {"a": 1}
    with pytest.raises(TypeError):
        conn.notification("x", [1])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        conn.notification(5)  # type: ignore[arg-type]


@pytest.mark.parametrize("params", [[1, 2], "x", 5, (1,)])
def test_non_dict_params_raise_type_error(params: Any) -> None:
    conn = Connection()
    with pytest.raises(TypeError):
        conn.start_request("tools/call", params)
    assert conn.in_flight == 0


def test_non_str_method_raises_type_error() -> None:
    conn = Connection()
    with pytest.raises(TypeError):
        conn.start_request(b"ping", None)  # type: ignore[arg-type]
    assert conn.in_flight == 0


@pytest.mark.parametrize(
    "params",
    [{"a": {1, 2}}, {"a": object()}, {1: "x"}, {"a": b"bytes"}, {"a": "\udcff"}, {"a": 10**5000}],
    ids=["set", "object", "int-key", "bytes", "lone-surrogate", "int-too-long-for-str"],
)
def test_unencodable_params_raise_type_error(params: Any) -> None:
    conn = Connection()
    with pytest.raises(TypeError):
        conn.start_request("tools/call", params)
    assert conn.in_flight == 0
    with pytest.raises(TypeError):
        encode({"params": params})


@pytest.mark.parametrize("number", [2**64, -(2**63) - 1, 10**30])
def test_integers_beyond_64_bits_are_written_exactly(number: int) -> None:
    conn = Connection()
    _, line = conn.start_request("tools/call", {"arguments": {"n": number, "ns": [number]}})
    assert json.loads(line)["params"] == {"arguments": {"n": number, "ns": [number]}}
    conn.receive_line(wire(id=1, method="roots/list"))
    answer = conn.respond(1, {"roots": [], "n": number})
    assert answer is not None
    assert json.loads(answer)["result"] == {"roots": [], "n": number}


def test_duplicate_progress_token_in_flight_raises_value_error() -> None:
    conn = Connection()
    first, _ = conn.start_request("a", {"_meta": {"progressToken": "tok"}})
    with pytest.raises(ValueError, match="tok"):
        conn.start_request("b", {"_meta": {"progressToken": "tok"}})
    assert conn.in_flight == 1
    # 5 and "5" are different tokens; so are tokens of finished requests.
    conn.start_request("c", {"_meta": {"progressToken": 5}})
    conn.start_request("d", {"_meta": {"progressToken": "5"}})
    conn.receive_line(wire(id=first, result={}))
    conn.start_request("e", {"_meta": {"progressToken": "tok"}})
    assert conn.in_flight == 3


def test_progress_token_freed_by_abandon_and_fail_all() -> None:
    conn = Connection()
    request_id, _ = conn.start_request("a", {"_meta": {"progressToken": 1}})
    conn.abandon(request_id)
    conn.start_request("a", {"_meta": {"progressToken": 1}})
    conn.fail_all()
    conn.start_request("a", {"_meta": {"progressToken": 1}})


# ----------------------------------------------------------------- responses


def test_result_is_matched_by_id() -> None:
    conn = started(3)
    assert conn.receive_line(wire(id=2, result={"tools": []})) == [Answered(2, {"tools": []})]
    assert conn.in_flight == 2
    assert not conn.is_pending(2)
    assert conn.is_pending(1)
    assert conn.is_pending(3)


@pytest.mark.parametrize("result", [[], None, 5, "x", True, 1.5])
def test_result_must_be_an_object(result: Any) -> None:
    conn = started(1)
    (event,) = conn.receive_line(wire(id=1, result=result))
    assert isinstance(event, Failed)
    assert event.request_id == 1
    assert type(event.error) is ProtocolError
    assert conn.in_flight == 0


def test_error_answer_fails_with_rpc_error() -> None:
    conn = started(2)
    (event,) = conn.receive_line(wire(id=1, error={"code": -32602, "message": "bad", "data": {"x": [1]}}))
    assert isinstance(event, Failed)
    assert event.request_id == 1
    assert isinstance(event.error, RpcError)
    assert (event.error.code, event.error.message, event.error.data) == (-32602, "bad", {"x": [1]})
    (event,) = conn.receive_line(wire(id=2, error={"code": 7, "message": ""}))
    assert isinstance(event, Failed)
    assert isinstance(event.error, RpcError)
    assert event.error.data is None
    assert conn.in_flight == 0


@pytest.mark.parametrize(
    "members",
    [
        {"result": {}, "error": {"code": 1, "message": "m"}},
        {},
        {"error": {"code": "1", "message": "m"}},
        {"error": {"code": 1.5, "message": "m"}},
        {"error": {"code": True, "message": "m"}},
        {"error": {"code": None, "message": "m"}},
        {"error": {"message": "m"}},
        {"error": {"code": 1}},
        {"error": {"code": 1, "message": 5}},
        {"error": "oops"},
        {"error": [1]},
        {"error": None},
    ],
    ids=[
        "both",
        "neither",
        "str-code",
        "float-code",
        "bool-code",
        "null-code",
        "no-code",
        "no-message",
        "int-message",
        "str-error",
        "list-error",
        "null-error",
    ],
)
def test_broken_answer_fails_only_that_request(members: dict[str, Any]) -> None:
    conn = started(2)
    (event,) = conn.receive_line(wire(id=1, **members))
    assert isinstance(event, Failed)
    assert event.request_id == 1
    assert type(event.error) is ProtocolError
    assert conn.in_flight == 1
    assert conn.receive_line(wire(id=2, result={})) == [Answered(2, {})]


@pytest.mark.parametrize(
    "bad_id", [b"true", b"false", b"1.0", b"2.5", b"1e0", b"[1]", b'{"id":1}', b"18446744073709551617"]
)
def test_invalid_response_id_is_a_diagnostic(bad_id: bytes) -> None:
    conn = started(2)
    events = conn.receive_line(b'{"jsonrpc":"2.0","id":' + bad_id + b',"result":{}}')
    assert only_diagnostics(events)
    assert conn.in_flight == 2


def test_null_id_error_is_a_diagnostic_with_the_error_text() -> None:
    conn = started(1)
    events = conn.receive_line(wire(id=None, error={"code": -32700, "message": "Parse error"}))
    assert only_diagnostics(events)
    assert "-32700" in texts(events)
    assert "Parse error" in texts(events)
    assert only_diagnostics(conn.receive_line(wire(error={"code": -32600, "message": "x"})))
    assert only_diagnostics(conn.receive_line(wire(id=None, result={})))
    assert conn.in_flight == 1


def test_string_id_for_an_int_request_is_accepted_with_a_diagnostic() -> None:
    conn = started(5)
    events = conn.receive_line(wire(id="5", result={"ok": True}))
    assert Answered(5, {"ok": True}) in events
    assert [type(e) for e in events].count(Diagnostic) == 1
    assert "'5'" in texts(events)
    assert not conn.is_pending(5)


@pytest.mark.parametrize("raw", ["05", "5 ", " 5", "+5", "5.0", "-5", "\u0665", "", "five"])
def test_non_canonical_string_id_is_unknown(raw: str) -> None:
    conn = started(5)
    events = conn.receive_line(wire(id=raw, result={}))
    assert only_diagnostics(events)
    assert conn.in_flight == 5


@pytest.mark.parametrize("raw", [99, 0, -1, 2**64 - 1, "abc", "99"])
def test_unknown_id_is_a_diagnostic(raw: Any) -> None:
    conn = started(2)
    events = conn.receive_line(wire(id=raw, result={}))
    assert only_diagnostics(events)
    assert "unknown" in texts(events)
    assert conn.in_flight == 2


def test_second_answer_for_one_id_is_dropped() -> None:
    conn = started(1)
    assert conn.receive_line(wire(id=1, result={"n": 1})) == [Answered(1, {"n": 1})]
    events = conn.receive_line(wire(id=1, result={"n": 2}))
    assert only_diagnostics(events)
    events = conn.receive_line(wire(id=1, error={"code": 1, "message": "m"}))
    assert only_diagnostics(events)


def test_abandon_returns_cancelled_line_once() -> None:
    conn = started(2)
    line = conn.abandon(1)
    assert line is not None
    assert decode(line) == {"jsonrpc": "2.0", "method": CANCELLED, "params": {"requestId": 1}}
    assert conn.abandon(1) is None
    assert conn.in_flight == 1
    assert not conn.is_pending(1)
    line = conn.abandon(2, "timed out")
    assert line is not None
    assert decode(line)["params"] == {"requestId": 2, "reason": "timed out"}
    assert conn.abandon(2, "again") is None
    assert conn.abandon(99) is None


def test_abandon_of_an_answered_request_returns_none() -> None:
    conn = started(1)
    conn.receive_line(wire(id=1, result={}))
    assert conn.abandon(1) is None


@pytest.mark.parametrize(
    "members",
    [{"result": {}}, {"error": {"code": 1, "message": "m"}}, {"result": 5}, {}],
    ids=["result", "error", "bad-result", "neither"],
)
def test_late_answer_after_abandon_is_a_diagnostic(members: dict[str, Any]) -> None:
    conn = started(1)
    conn.abandon(1)
    events = conn.receive_line(wire(id=1, **members))
    assert only_diagnostics(events)
    assert "abandoned" in texts(events)


def test_fail_all_forgets_everything() -> None:
    conn = started(3)
    conn.receive_line(wire(id=1, method="roots/list"))
    assert conn.fail_all() == [1, 2, 3]
    assert conn.in_flight == 0
    assert conn.fail_all() == []
    assert only_diagnostics(conn.receive_line(wire(id=2, result={})))
    assert conn.respond(1, {"roots": []}) is None


# ------------------------------------------------------------ hostile lines


def test_batch_is_unpacked() -> None:
    conn = started(3)
    line = orjson.dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "result": {}},
            42,
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}},
            [{"jsonrpc": "2.0", "id": 3, "result": {}}],
            {"jsonrpc": "2.0", "id": 2, "error": {"code": 1, "message": "m"}},
        ]
    )
    events = conn.receive_line(line)
    assert [type(e) for e in events] == [Answered, Diagnostic, Note, Diagnostic, Failed]
    assert conn.in_flight == 1
    assert conn.is_pending(3)


def test_empty_batch_is_a_diagnostic() -> None:
    conn = started(1)
    events = conn.receive_line(b"[]")
    assert only_diagnostics(events)
    assert "batch" in texts(events)


@pytest.mark.parametrize(
    "line",
    [
        b"Starting server on stdio...",
        b'{"jsonrpc":"2.0","id":',
        b'{"jsonrpc":"2.0","method":"x","params":{"a":',
        b"{'id': 1}",
        b"nan",
        b"\x00",
        b"[" * 100_000,
        b"{" * 100_000,
        b'{"a":' * 100_000,
        b"[" * 2_000 + b"]" * 2_000,
        b"\xff\xfe{}",
        b'{"jsonrpc":"2.0","method":"x","params":{"a":"\xc3"}}',
        b"\xed\xa0\x80",
        b'{"jsonrpc":"2.0","result":{"id":1,"a":' + b"[" * 5000,
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b"[" * 5000,
    ],
    ids=lambda line: repr(line[:24]),
)
def test_non_json_line_is_a_diagnostic(line: bytes) -> None:
    conn = started(1)
    events = conn.receive_line(line)
    assert only_diagnostics(events)
    assert conn.in_flight == 1


def test_invalid_utf8_is_named_in_the_diagnostic() -> None:
    (event,) = started(1).receive_line(b'{"jsonrpc":"2.0","method":"x","params":{"a":"\xff"}}')
    assert isinstance(event, Diagnostic)
    assert "UTF-8" in event.text


def test_diagnostic_says_where_a_line_that_looks_like_json_breaks() -> None:
    line = b'{"jsonrpc":"2.0","method":"x","params":{"a":1,}}'
    (event,) = started(1).receive_line(line)
    assert isinstance(event, Diagnostic)
    at = line.index(b",}") + 1
    assert (
        f"not JSON (Expecting property name enclosed in double quotes: line 1 column {at + 1} (char {at}))"
        in event.text
    )
    (event,) = started(1).receive_line(b"Starting server on stdio...")
    assert isinstance(event, Diagnostic)
    assert event.text == "dropped a stdout line that is not JSON: b'Starting server on stdio...'"


def test_content_length_framing_is_named_in_the_diagnostic() -> None:
    (event,) = Connection().receive_line(b"Content-Length: 52")
    assert isinstance(event, Diagnostic)
    assert "Content-Length" in event.text


@pytest.mark.parametrize(
    "line",
    [
        b"42",
        b'"x"',
        b"null",
        b"true",
        b"{}",
        b'{"level":"info","msg":"hi"}',
        b'{"jsonrpc":"2.0"}',
        b'{"jsonrpc":"2.0","method":5}',
        b'{"jsonrpc":"2.0","method":"x","params":[1]}',
        b'{"jsonrpc":"2.0","method":"x","params":"p"}',
        b"[" * 1_000 + b"]" * 1_000,
        b"NaN",
        b"1e999",
        b"123456789012345678901234567890",
        b'{"a":"\\ud800"}',
    ],
)
def test_json_of_the_wrong_shape_is_a_diagnostic(line: bytes) -> None:
    conn = started(1)
    events = conn.receive_line(line)
    assert only_diagnostics(events)
    assert conn.in_flight == 1


def test_wrong_jsonrpc_version_is_accepted_and_noted_once() -> None:
    conn = started(2)
    events = conn.receive_line(orjson.dumps({"jsonrpc": "1.0", "id": 1, "result": {}}))
    assert [type(e) for e in events] == [Diagnostic, Answered]
    assert conn.receive_line(orjson.dumps({"id": 2, "result": {}})) == [Answered(2, {})]


# ----------------------------------------------------------- server requests


@pytest.mark.parametrize("server_id", [3, "abc", 0, -4])
def test_ping_is_answered_automatically(server_id: Any) -> None:
    conn = started(1)
    events = conn.receive_line(wire(id=server_id, method="ping"))
    assert events == [Send(orjson.dumps({"jsonrpc": "2.0", "id": server_id, "result": {}}) + b"\n")]
    assert conn.in_flight == 1


def test_ping_is_a_request_like_any_other_when_not_answered_automatically() -> None:
    conn = started(1)
    conn.answers_ping = False
    assert conn.receive_line(wire(id=7, method="ping")) == [ServerRequest(7, "ping", None)]
    line = conn.respond_error(7, -32601, "Method not found")
    assert line is not None
    assert orjson.loads(line)["error"]["code"] == -32601


def test_ignored_server_requests_are_never_answered() -> None:
    conn = started(1)
    conn.serves_requests = False
    for method in ("ping", "roots/list"):
        (event,) = conn.receive_line(wire(id=8, method=method))
        assert isinstance(event, Diagnostic)
    assert conn.respond(8, {}) is None


def test_server_request_is_answered_once() -> None:
    conn = started(1)
    events = conn.receive_line(wire(id=1, method="roots/list", params={}))
    assert events == [ServerRequest(1, "roots/list", {})]
    # The server's id 1 is not our request 1.
    assert conn.is_pending(1)
    assert conn.respond("1", {}) is None
    line = conn.respond(1, {"roots": []})
    assert line is not None
    assert decode(line) == {"jsonrpc": "2.0", "id": 1, "result": {"roots": []}}
    assert conn.respond(1, {"roots": []}) is None
    assert conn.respond_error(1, -32603, "late") is None
    assert conn.is_pending(1)


def test_server_request_is_answered_with_an_error_once() -> None:
    conn = Connection()
    assert conn.receive_line(wire(id="s-1", method="sampling/createMessage")) == [
        ServerRequest("s-1", "sampling/createMessage", None)
    ]
    line = conn.respond_error("s-1", -32601, "not supported", {"method": "sampling/createMessage"})
    assert line is not None
    assert decode(line) == {
        "jsonrpc": "2.0",
        "id": "s-1",
        "error": {"code": -32601, "message": "not supported", "data": {"method": "sampling/createMessage"}},
    }
    assert conn.respond_error("s-1", -32601, "again") is None
    assert conn.respond("s-1", {}) is None


def test_unencodable_answers_degrade() -> None:
    conn = Connection()
    conn.receive_line(wire(id=1, method="roots/list"))
    conn.receive_line(wire(id=2, method="roots/list"))
    line = conn.respond(1, {"roots": {1, 2}})
    assert line is not None
    assert decode(line)["error"]["code"] == -32603
    line = conn.respond_error(2, -32000, "failed", {"bad": {1, 2}})
    assert line is not None
    assert decode(line) == {"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "failed"}}


def test_server_request_with_list_params() -> None:
    events = Connection().receive_line(wire(id=1, method="x", params=[1, 2]))
    assert events == [ServerRequest(1, "x", [1, 2])]


def test_server_request_with_non_object_params_is_refused() -> None:
    conn = Connection()
    events = conn.receive_line(wire(id=9, method="roots/list", params=5))
    assert [type(e) for e in events] == [Send, Diagnostic]
    send = events[0]
    assert isinstance(send, Send)
    assert decode(send.data)["error"]["code"] == -32602
    assert decode(send.data)["id"] == 9
    assert conn.respond(9, {}) is None


@pytest.mark.parametrize("bad_id", [True, None, 1.5, [1], {}], ids=repr)
def test_server_request_with_invalid_id_is_a_diagnostic(bad_id: Any) -> None:
    events = Connection().receive_line(wire(id=bad_id, method="roots/list"))
    assert only_diagnostics(events)
    events = Connection().receive_line(wire(id=bad_id, method="ping"))
    assert only_diagnostics(events)


def test_cancelled_server_request_is_withdrawn() -> None:
    conn = started(1, wants_notes=True)
    conn.receive_line(wire(id=1, method="sampling/createMessage", params={}))
    message = {"jsonrpc": "2.0", "method": CANCELLED, "params": {"requestId": 1, "reason": "x"}}
    events = conn.receive_line(orjson.dumps(message))
    # The server's request 1 is withdrawn; our own request 1 is not named.
    assert events == [ServerRequestCancelled(1), Note(message, None)]
    assert conn.respond(1, {}) is None
    assert conn.respond_error(1, -32603, "x") is None
    assert conn.is_pending(1)


@pytest.mark.parametrize("method", ["server/discover", "initialize", "ping", "tools/call"])
@pytest.mark.parametrize("era", ["before", "legacy", "modern"])
def test_our_own_request_echoed_back_fails_it(method: str, era: str) -> None:
    # A program that copies its input to its output (cat) sends each request
    # back: the same id, the same method. It is not the server asking.
    conn = Connection()
    if era == "modern":
        conn.serves_requests = False
        conn.answers_ping = False
    elif era == "legacy":
        conn.start_request("initialize", {})  # an earlier request, answered
        conn.receive_line(wire(id=1, result={}))
    other, _ = conn.start_request("tools/list", None)
    request_id, line = conn.start_request(method, {"_meta": {"progressToken": "p"}})
    events = conn.receive_line(line.rstrip(b"\n"))
    assert [type(event) for event in events] == [Failed, Diagnostic]
    failed = events[0]
    assert isinstance(failed, Failed)
    assert failed.request_id == request_id
    assert isinstance(failed.error, ProtocolError)
    assert str(failed.error) == (
        f"the server echoed request {request_id} ({method}) back instead of answering it;"
        " it is probably not an MCP server (a program that copies its input, such as cat)"
    )
    assert f"our request {request_id} ({method}) back" in texts(events)
    # Not taken for a request of the server's: nothing to answer, and the
    # request is no longer in flight (its progress token is free again).
    assert conn.respond(request_id, {}) is None
    assert not conn.is_pending(request_id)
    assert conn.is_pending(other)
    conn.start_request("tools/call", {"_meta": {"progressToken": "p"}})
    # Echoed again (it was in flight no longer): a request of the server's now.
    again = conn.receive_line(line.rstrip(b"\n"))
    assert not any(isinstance(event, Failed) for event in again)


def test_a_server_request_with_one_of_our_ids_is_not_an_echo() -> None:
    # The server numbers its requests itself; the same id with another method
    # is its own request, and the same method with another id too.
    conn = Connection()
    ours, _ = conn.start_request("ping", None)
    assert conn.receive_line(wire(id=ours, method="roots/list")) == [ServerRequest(ours, "roots/list", None)]
    assert conn.receive_line(wire(id=str(ours), method="ping")) == [
        Send(orjson.dumps({"jsonrpc": "2.0", "id": str(ours), "result": {}}) + b"\n")
    ]
    assert conn.receive_line(wire(id=ours + 1, method="ping"))[0] == Send(
        orjson.dumps({"jsonrpc": "2.0", "id": ours + 1, "result": {}}) + b"\n"
    )
    assert conn.is_pending(ours)


# ------------------------------------------------------- notification routing


def note(conn: Connection, method: str, params: dict[str, Any] | None = None) -> int | None:
    """Deliver one notification and return the request it was routed to."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    events = conn.receive_line(orjson.dumps(message))
    assert len(events) == 1
    (event,) = events
    assert isinstance(event, Note)
    assert event.message == message
    return event.target


@pytest.mark.parametrize("token", ["tok", 7, ""], ids=repr)
def test_progress_token_routes_to_its_request(token: Any) -> None:
    conn = Connection()
    conn.start_request("a", None, wants_notes=True)
    mine, _ = conn.start_request("b", {"_meta": {"progressToken": token}}, wants_notes=True)
    conn.start_request("c", {"_meta": {"progressToken": "other"}}, wants_notes=True)
    assert note(conn, PROGRESS, {"progressToken": token, "progress": 1}) == mine


def test_progress_token_type_must_match() -> None:
    conn = Connection()
    conn.start_request("a", {"_meta": {"progressToken": 7}}, wants_notes=True)
    # "7" names a token no request holds: the sink, not the only request.
    assert note(conn, PROGRESS, {"progressToken": "7", "progress": 1}) is None


def test_subscription_id_routes_to_its_request() -> None:
    conn = started(3, wants_notes=True)
    params = {"uri": "file:///x", "_meta": {SUBSCRIPTION_ID: 2}}
    assert note(conn, "notifications/resources/updated", params) == 2


def test_cancelled_request_id_routes_to_its_request() -> None:
    conn = started(3, wants_notes=True)
    assert note(conn, CANCELLED, {"requestId": 3}) == 3


def test_single_request_in_flight_takes_unnamed_notifications() -> None:
    conn = started(1, wants_notes=True)
    assert note(conn, "notifications/message", {"level": "info", "data": "x"}) == 1
    assert note(conn, "notifications/tools/list_changed") == 1


def test_several_requests_in_flight_send_unnamed_notifications_to_the_sink() -> None:
    conn = started(2, wants_notes=True)
    assert note(conn, "notifications/message", {"level": "info", "data": "x"}) is None


def test_no_request_in_flight_sends_notifications_to_the_sink() -> None:
    assert note(Connection(), "notifications/message", {"level": "info"}) is None


@pytest.mark.parametrize(
    "params",
    [
        {"progressToken": "finished", "progress": 1},
        {"progressToken": 99, "progress": 1},
        {"_meta": {SUBSCRIPTION_ID: 1}},
        {"_meta": {SUBSCRIPTION_ID: 99}},
    ],
    ids=["finished-token", "unknown-token", "finished-subscription", "unknown-subscription"],
)
def test_named_request_not_in_flight_goes_to_the_sink(params: dict[str, Any]) -> None:
    conn = Connection()
    conn.start_request("a", {"_meta": {"progressToken": "finished"}}, wants_notes=True)
    conn.receive_line(wire(id=1, result={}))
    conn.start_request("b", None, wants_notes=True)
    assert conn.in_flight == 1
    assert note(conn, PROGRESS, params) is None


def test_cancelled_naming_a_request_not_in_flight_goes_to_the_sink() -> None:
    conn = started(2, wants_notes=True)
    conn.receive_line(wire(id=1, result={}))
    assert note(conn, CANCELLED, {"requestId": 1}) is None
    assert note(conn, CANCELLED, {"requestId": 42}) is None


def test_request_without_wants_notes_gets_no_notifications() -> None:
    conn = Connection()
    conn.start_request("a", {"_meta": {"progressToken": "t"}}, wants_notes=False)
    assert note(conn, PROGRESS, {"progressToken": "t", "progress": 1}) is None
    assert note(conn, "notifications/message", {"level": "info"}) is None
    assert note(conn, CANCELLED, {"requestId": 1}) is None
    assert note(conn, "x", {"_meta": {SUBSCRIPTION_ID: 1}}) is None


# --------------------------------------------------------- oversized answers


def test_oversized_answer_fails_its_request() -> None:
    conn = started(7)
    events = conn.receive_line(
        oversized(b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"')
    )
    failed = [e for e in events if isinstance(e, Failed)]
    assert len(failed) == 1
    assert failed[0].request_id == 7
    error = failed[0].error
    assert isinstance(error, MessageTooLarge)
    assert (error.size, error.limit) == (50_000_000, 1_000_000)
    assert any(isinstance(e, Diagnostic) for e in events)
    assert not conn.is_pending(7)
    assert conn.in_flight == 6


@pytest.mark.parametrize(
    "head",
    [
        b'{"id":7,"jsonrpc":"2.0","result":{',
        b'  {"jsonrpc" : "2.0" , "id" : 7 , "result":{',
        BOM + b'{"jsonrpc":"2.0","id":7,"result":{',
        b'{"jsonrpc":"2.0","id":"7","result":{',
    ],
)
def test_oversized_answer_id_found_in_head(head: bytes) -> None:
    events = started(7).receive_line(oversized(head))
    assert [e.request_id for e in events if isinstance(e, Failed)] == [7]


@pytest.mark.parametrize("tail", [b'"}]},"id":7}', b'"}]}, "id" : 7 }\r', b'"}]},"id":"7"}  '])
def test_oversized_answer_id_found_in_tail(tail: bytes) -> None:
    head = b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"'
    events = started(7).receive_line(oversized(head, tail))
    assert [e.request_id for e in events if isinstance(e, Failed)] == [7]


@pytest.mark.parametrize(
    ("head", "tail"),
    [
        (b'{"jsonrpc":"2.0","result":{"id":7,"content":[', b'"}]}}'),
        (b'{"jsonrpc":"2.0","result":{"items":[{"id":7}', b'{"id":7}]}}'),
        (b'{"jsonrpc":"2.0","result":{"content":"', b'"},"x":{"id":7}}'),
        (b'["jsonrpc","id":7,', b"]"),
        (b'{"text":"a,\\"id\\":7,","result":{', b"}}"),
        (b"not json at all", b"still not"),
    ],
)
def test_oversized_nested_id_is_not_taken_for_the_answer_id(head: bytes, tail: bytes) -> None:
    conn = started(7)
    events = conn.receive_line(oversized(head, tail))
    assert only_diagnostics(events)
    assert conn.in_flight == 7


def test_oversized_answer_for_unknown_or_abandoned_id_is_a_diagnostic() -> None:
    conn = started(2)
    assert only_diagnostics(conn.receive_line(oversized(b'{"jsonrpc":"2.0","id":99,"result":{')))
    conn.abandon(2)
    events = conn.receive_line(oversized(b'{"jsonrpc":"2.0","id":2,"result":{'))
    assert only_diagnostics(events)
    assert "abandoned" in texts(events)
    assert conn.in_flight == 1


@pytest.mark.parametrize("value", [b"7.5", b"7e3", b"7E+1", b"7.0"])
def test_oversized_answer_with_a_non_integer_id_fails_nothing(value: bytes) -> None:
    """A float id is invalid (as on a normal line); its integer prefix is not an id."""
    conn = started(7)
    events = conn.receive_line(oversized(b'{"jsonrpc":"2.0","id":' + value + b',"result":{'))
    assert only_diagnostics(events)
    assert conn.in_flight == 7


def test_oversized_answer_id_cut_off_by_the_head_is_not_trusted() -> None:
    """The head ends inside the id (123): its first digits must not be read as id 12."""
    prefix = b'{"jsonrpc":"2.0","padding":"'
    suffix = b'","id":12'
    head = prefix + b"x" * (KEEP - len(prefix) - len(suffix)) + suffix
    assert len(head) == KEEP
    conn = started(12)
    events = conn.receive_line(oversized(head, b'{"a":1}}'))
    assert only_diagnostics(events)
    assert conn.is_pending(12)


@pytest.mark.parametrize(
    ("head", "tail"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[', b'"}}]}}'),
        (b'{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"messages":[', b'"}}]},"id":7}'),
    ],
    ids=["id-in-head", "id-in-tail"],
)
def test_oversized_server_request_does_not_fail_our_request(head: bytes, tail: bytes) -> None:
    """Server request ids are the server's namespace: its id 7 is not our request 7."""
    conn = started(7)
    events = conn.receive_line(oversized(head, tail))
    assert not any(isinstance(e, Failed) for e in events)
    assert conn.is_pending(7)


# ------------------------------------------------- answers Python's json writes


def answered(line: bytes, request_id: int = 1) -> dict[str, Any]:
    """Feed ``line`` to a connection with requests 1..3 in flight; return the result it answered."""
    conn = started(3)
    events = conn.receive_line(line)
    assert [type(e) for e in events] == [Answered]
    (event,) = events
    assert isinstance(event, Answered)
    assert event.request_id == request_id
    assert conn.in_flight == 2
    return event.result


def python_answer(result: dict[str, Any], **options: Any) -> bytes:
    """The line a server using Python's json module writes for ``result``."""
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, **options).encode()


def test_nan_and_infinities_are_answered() -> None:
    result = answered(python_answer({"mean": math.nan, "max": math.inf, "min": -math.inf}))
    assert math.isnan(result["mean"])
    assert result["max"] == math.inf
    assert result["min"] == -math.inf
    assert all(type(v) is float for v in result.values())


def test_number_too_large_for_a_float_is_answered_as_infinity() -> None:
    result = answered(b'{"jsonrpc":"2.0","id":1,"result":{"big":1e400,"small":-1e999}}')
    assert result == {"big": math.inf, "small": -math.inf}


def test_lone_surrogate_escapes_are_answered() -> None:
    """A file name that is not UTF-8, as Python lists it (surrogateescape), written by Python's json."""
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    line = python_answer({"files": [name], name: 1})
    assert b"\\udce9" in line
    assert answered(line) == {"files": ["caf\udce9.txt"], "caf\udce9.txt": 1}


@pytest.mark.parametrize("number", [2**64, 10**30, -(2**63) - 1, -(10**30), 2**64 - 1, -(2**63)])
def test_integers_beyond_64_bits_are_answered_exactly(number: int) -> None:
    result = answered(python_answer({"n": number, "nested": [{"n": number}]}))
    assert result == {"n": number, "nested": [{"n": number}]}
    assert type(result["n"]) is int
    assert type(result["nested"][0]["n"]) is int


@pytest.mark.parametrize("size", [WALK_FROM // 2, WALK_FROM * 4, WALK_FROM * 64])
@pytest.mark.parametrize("shape", ["many-values", "one-long-string"])
def test_integers_beyond_64_bits_in_long_answers(size: int, shape: str) -> None:
    """Both routes of the cheap check (sampling, or a walk over few values) find the integer."""
    if shape == "many-values":
        items = [{"name": f"t{i}", "n": i} for i in range(size // 16)]
    else:
        items = [{"name": "blob", "data": "QUJD" * (size // 4)}]
    middle = len(items) // 2
    items.insert(middle, {"n": 10**20})
    result = answered(python_answer({"items": items}, separators=(",", ":")))
    assert result == {"items": items}
    assert type(result["items"][middle]["n"]) is int


def test_every_other_request_is_untouched_by_an_exact_answer() -> None:
    conn = started(3)
    assert conn.receive_line(python_answer({"n": 10**30})) == [Answered(1, {"n": 10**30})]
    assert conn.is_pending(2)
    assert conn.is_pending(3)


def test_ordinary_lines_do_not_reach_the_slow_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only lines orjson refuses, or that may hold an integer beyond 64 bits, are read twice."""
    import trio_mcp._core.codec as codec

    def slow(line: bytes) -> Any:
        raise AssertionError(f"read twice: {line[:60]!r}")

    monkeypatch.setattr(codec, "_decode_stdlib", slow)
    for line in (
        wire(id=1, result={"content": [{"type": "text", "text": "hi 1234567890123456789"}]}),
        wire(id=1, result={"n": [2**63 - 1, -(2**63), 2**64 - 1, 1234567890123456789, 1.5e300]}),
        wire(id=1, result={"tools": [{"name": f"tool_{i}", "n": i * 1000003} for i in range(300)]}),
        wire(id=1, result={"data": "QUJD0123456789" * 5000, "n": 1}),
    ):
        answered(line)


# --------------------------------------------------------- unreadable answers


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"jsonrpc":"2.0","id":2,"result":{"a":' + b"[" * 100_000, "nested too deeply"),
        (
            b'{"jsonrpc":"2.0","id":2,"result":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
            "nested too deeply",
        ),
        (
            b'{"jsonrpc":"2.0","result":{"a":' + b"[" * 5_000 + b"]" * 5_000 + b'},"id":2}',
            "nested too deeply",
        ),
        (
            b'{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m","data":' + b'{"a":' * 50_000,
            "nested too deeply",
        ),
        (b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"cut', "not JSON"),
        (b'{"jsonrpc":"2.0","id":2,"result":{"a":1,}}', "not JSON"),
        (b'{"jsonrpc":"2.0","id":"2","result":{"a":tru}}', "not JSON"),
        (b'{"jsonrpc":"2.0","id":2,"result":{"a":"\xff"}}', "not valid UTF-8"),
        (b'{"jsonrpc":"2.0","id":2,"result":{"a":"\xed\xa0\x80"}}', "not valid UTF-8"),
        (b'{"jsonrpc":"2.0","id":2,"result":{"n":' + b"1" * 5000 + b"}}", "not JSON"),
    ],
    ids=[
        "deep-cut",
        "deep-closed",
        "deep-id-in-tail",
        "deep-error",
        "truncated",
        "trailing-comma",
        "string-id",
        "invalid-utf8",
        "encoded-surrogate",
        "int-too-long",
    ],
)
def test_unreadable_answer_with_a_recoverable_id_fails_at_once(line: bytes, reason: str) -> None:
    conn = started(3)
    events = conn.receive_line(line)
    assert [type(e) for e in events if not isinstance(e, Diagnostic)] == [Failed]
    (failed,) = [e for e in events if isinstance(e, Failed)]
    assert failed.request_id == 2
    assert type(failed.error) is ProtocolError
    assert str(failed.error).startswith(f"the answer to request 2 could not be read: it is {reason}")
    assert reason in texts(events)
    assert "request 2" in texts(events)
    assert not conn.is_pending(2)
    assert conn.is_pending(1)
    assert conn.is_pending(3)
    assert conn.receive_line(wire(id=1, result={})) == [Answered(1, {})]


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 100_000,
        b'{"a":' * 100_000,
        b'{"jsonrpc":"2.0","result":{"id":2,"a":' + b"[" * 100_000,
        b'{"jsonrpc":"2.0","result":{"a":[' + b"[" * 5_000 + b'{"id":2}]}}',
        b'{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":' + b"[" * 100_000,
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"x":'
        + b"[" * 100_000,
        b'{"jsonrpc":"2.0","id":2,"meta":{"a":1},"result":' + b"[" * 100_000,
        b'{"jsonrpc":"2.0","id":2.0,"result":' + b"[" * 100_000,
    ],
    ids=[
        "arrays",
        "objects",
        "nested-id",
        "nested-id-in-tail",
        "server-request",
        "notification",
        "result-after-nesting",
        "float-id",
    ],
)
def test_unreadable_line_without_a_trusted_answer_id_fails_nothing(line: bytes) -> None:
    conn = started(3)
    events = conn.receive_line(line)
    assert only_diagnostics(events)
    assert "could not be read" not in texts(events)
    assert conn.in_flight == 3


def test_unreadable_answer_to_an_abandoned_or_unknown_request_fails_nothing() -> None:
    conn = started(2)
    conn.abandon(2)
    events = conn.receive_line(b'{"jsonrpc":"2.0","id":2,"result":' + b"[" * 100_000)
    assert only_diagnostics(events)
    assert "abandoned" in texts(events)
    events = conn.receive_line(b'{"jsonrpc":"2.0","id":9,"result":' + b"[" * 100_000)
    assert only_diagnostics(events)
    assert "unknown request id 9" in texts(events)
    assert conn.is_pending(1)


# ----------------------------------------------------------------- strategies

_INT64 = st.integers(-(2**63), 2**64 - 1)

ids = st.integers(-1, 6) | st.sampled_from(["1", "2", "05", "x", True, False, None, 1.0, 2**64 - 1, -(2**63)])
tokens = st.sampled_from(["tok", "1", 1, 2, True, None, "other"])
params = (
    st.fixed_dictionaries(
        {},
        optional={
            "progressToken": tokens,
            "requestId": ids,
            "progress": json_values,
            "_meta": st.fixed_dictionaries({}, optional={SUBSCRIPTION_ID: ids, "progressToken": tokens})
            | json_values,
        },
    )
    | json_values
)
errors = (
    st.fixed_dictionaries(
        {},
        optional={
            "code": _INT64 | json_values,
            "message": st.text(max_size=8) | json_values,
            "data": json_values,
        },
    )
    | json_values
)
methods = st.sampled_from(["ping", "roots/list", CANCELLED, PROGRESS, "notifications/message"]) | json_values

#: JSON-RPC-shaped objects: every combination of members, each valid or not.
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | json_values,
        "id": ids | json_values,
        "method": methods,
        "params": params,
        "result": st.dictionaries(st.text(max_size=4), json_values, max_size=3) | json_values,
        "error": errors,
    },
)

_FRAGMENTS = st.sampled_from([b"\n", b"\r\n", BOM, b"[", b"]", b",", b"{", b"}", b'"', b"\xff", b" "])

#: Server output: real messages, batches, garbage and line noise, run together.
streams = st.lists(
    st.one_of(
        messages.map(orjson.dumps).map(lambda line: line + b"\n"),
        st.lists(messages, max_size=3).map(orjson.dumps),
        st.binary(max_size=40),
        _FRAGMENTS,
    ),
    max_size=12,
).map(b"".join)


def check_events(events: list[Event]) -> None:
    """Check the shape of every event, whatever the input was."""
    for event in events:
        assert isinstance(event, EVENT_TYPES)
        if isinstance(event, Send):
            sent = decode(event.data)
            assert sent["jsonrpc"] == "2.0"
            assert "id" in sent
        elif isinstance(event, Diagnostic):
            assert isinstance(event.text, str)
            assert event.text


def loaded_connection() -> Connection:
    """A connection with requests 1..4 in flight, some with progress tokens or notes."""
    conn = Connection()
    conn.start_request("a", None, wants_notes=True)
    conn.start_request("b", {"_meta": {"progressToken": "tok"}}, wants_notes=True)
    conn.start_request("c", {"_meta": {"progressToken": 1}}, wants_notes=False)
    conn.start_request("d", {})
    return conn


# ----------------------------------------------------------------- properties


@pytest.mark.property
@settings(deadline=None)
@given(stream=streams, max_line=st.integers(1, 120) | st.just(1_000_000), chunk=st.integers(1, 64))
def test_error_closure(stream: bytes, max_line: int, chunk: int) -> None:
    """Framer, then `clean_line`, then `receive_line`: events for any bytes, never an exception.

    Along the way, each request resolves at most once, and only while in flight.
    """
    conn = loaded_connection()
    framer = LineFramer(max_line)
    resolved: Counter[int] = Counter()
    lines: list[bytes | Oversized] = []
    for start in range(0, len(stream), chunk):
        lines.extend(framer.feed(stream[start : start + chunk]))
    lines.extend(framer.eof())
    for line in lines:
        if isinstance(line, bytes):
            line = clean_line(line)
            if not line:
                continue
        before = {i for i in range(1, 5) if conn.is_pending(i)}
        events = conn.receive_line(line)
        check_events(events)
        for event in events:
            if isinstance(event, Answered | Failed):
                assert event.request_id in before
                resolved[event.request_id] += 1
            elif isinstance(event, Note) and event.target is not None:
                assert event.target in before
        assert conn.in_flight == len(before) - sum(isinstance(e, Answered | Failed) for e in events)
    assert all(n == 1 for n in resolved.values())


@pytest.mark.property
@given(value=json_values | messages | st.lists(messages, max_size=4))
def test_any_json_value_is_received_without_raising(value: Any) -> None:
    """Any JSON value the server could write becomes events, never an exception."""
    events = loaded_connection().receive_line(orjson.dumps(value))
    check_events(events)
    assert events


# ------------------------------------------------ answers json writes, exactly


@pytest.mark.property
@settings(deadline=None)
@given(result=st.dictionaries(any_text, json_writable, max_size=4), layout=json_layouts)
def test_answer_json_writes_is_answered_exactly(result: dict[str, Any], layout: dict[str, Any]) -> None:
    """A server using Python's json gets its answer through unchanged, however it lays it out."""
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, **layout).encode()
    conn = started(2)
    events = conn.receive_line(line)
    assert [type(e) for e in events] == [Answered]
    (event,) = events
    assert isinstance(event, Answered)
    assert event.request_id == 1
    assert same(event.result, json.loads(line)["result"])
    assert conn.is_pending(2)


# ------------------------------------------------------ correlation machine

PENDING, ANSWERED, ABANDONED, GONE = "pending", "answered", "abandoned", "gone"


class CorrelationMachine(RuleBasedStateMachine):
    """`Connection` against a model: a dict from request id to its state.

    Rules start requests, answer them (once, twice, with errors, oversized,
    unreadable, with the id as a string, or with an id never issued), abandon them, drop
    the connection, and send notifications, checking every event against
    the model.
    """

    requests = Bundle("requests")

    def __init__(self) -> None:
        super().__init__()
        self.conn = Connection()
        self.state: dict[int, str] = {}
        self.wants: dict[int, bool] = {}
        self.token: dict[int, str | None] = {}
        self.resolutions: Counter[int] = Counter()
        self.sent: dict[int, bytes] = {}
        self.last_id = 0

    # -------------------------------------------------------------- model

    def pending(self) -> list[int]:
        return [i for i, s in self.state.items() if s == PENDING]

    def holder(self, token: str) -> int | None:
        return next((i for i in self.pending() if self.token[i] == token), None)

    def receive(self, line: bytes | Oversized) -> list[Event]:
        events = self.conn.receive_line(line)
        check_events(events)
        for event in events:
            if isinstance(event, Answered | Failed):
                self.resolutions[event.request_id] += 1
                assert self.state.get(event.request_id) == PENDING, "only a request in flight resolves"
        return events

    def expect_dropped(self, request_id: int, events: list[Event]) -> None:
        """The answer to a request no longer in flight must be dropped with a diagnostic."""
        assert only_diagnostics(events)
        if self.state[request_id] == ABANDONED:
            assert "abandoned" in texts(events)

    def register(self, request_id: int, line: bytes, token: str | None, wants_notes: bool) -> None:
        assert type(request_id) is int
        self.sent[request_id] = line
        assert request_id > self.last_id
        self.last_id = request_id
        self.state[request_id] = PENDING
        self.wants[request_id] = wants_notes
        self.token[request_id] = token

    # -------------------------------------------------------------- rules

    @rule(target=requests, wants_notes=st.booleans(), with_token=st.booleans())
    def start_request(self, wants_notes: bool, with_token: bool) -> int:
        token = f"t{self.last_id + 1}" if with_token else None
        params = {"_meta": {"progressToken": token}} if token else {}
        request_id, line = self.conn.start_request("tools/call", params, wants_notes=wants_notes)
        assert decode(line)["id"] == request_id
        self.register(request_id, line, token, wants_notes)
        return request_id

    @rule(target=requests, old=requests, wants_notes=st.booleans())
    def reuse_token(self, old: int, wants_notes: bool) -> Any:
        token = self.token[old]
        if token is None:
            return multiple()
        params = {"_meta": {"progressToken": token}}
        if self.holder(token) is not None:
            with pytest.raises(ValueError, match="already used"):
                self.conn.start_request("tools/call", params, wants_notes=wants_notes)
            return multiple()
        request_id, line = self.conn.start_request("tools/call", params, wants_notes=wants_notes)
        self.register(request_id, line, token, wants_notes)
        return request_id

    @rule(request_id=requests, result=st.dictionaries(st.text(max_size=4), st.integers(0, 9), max_size=2))
    def answer(self, request_id: int, result: dict[str, int]) -> None:
        events = self.receive(wire(id=request_id, result=result))
        if self.state[request_id] == PENDING:
            assert events == [Answered(request_id, result)]
            self.state[request_id] = ANSWERED
        else:
            self.expect_dropped(request_id, events)

    @rule(request_id=requests)
    def answer_twice(self, request_id: int) -> None:
        was_pending = self.state[request_id] == PENDING
        first = self.receive(wire(id=request_id, result={}))
        if was_pending:
            assert first == [Answered(request_id, {})]
            self.state[request_id] = ANSWERED
        second = self.receive(wire(id=request_id, result={}))
        self.expect_dropped(request_id, second)

    @rule(request_id=requests)
    def answer_with_string_id(self, request_id: int) -> None:
        events = self.receive(wire(id=str(request_id), result={}))
        if self.state[request_id] == PENDING:
            assert Answered(request_id, {}) in events
            self.state[request_id] = ANSWERED
        else:
            assert only_diagnostics(events)

    @rule(offset=st.integers(1, 2**62), negative=st.booleans())
    def answer_unknown_id(self, offset: int, negative: bool) -> None:
        raw = -offset if negative else self.last_id + offset
        events = self.receive(wire(id=raw, result={}))
        assert only_diagnostics(events)
        assert "unknown" in texts(events)

    @rule(raw=st.text(alphabet="abc-_ .", max_size=4))
    def answer_non_numeric_string_id(self, raw: str) -> None:
        assert only_diagnostics(self.receive(wire(id=raw, result={})))

    @rule(request_id=requests, code=_INT64, message=st.text(max_size=8), data=json_values)
    def error_answer(self, request_id: int, code: int, message: str, data: Any) -> None:
        events = self.receive(wire(id=request_id, error={"code": code, "message": message, "data": data}))
        if self.state[request_id] == PENDING:
            (event,) = events
            assert isinstance(event, Failed)
            assert event.request_id == request_id
            assert isinstance(event.error, RpcError)
            assert (event.error.code, event.error.message, event.error.data) == (code, message, data)
            self.state[request_id] = ANSWERED
        else:
            self.expect_dropped(request_id, events)

    @rule(request_id=requests)
    def oversized_answer(self, request_id: int) -> None:
        head = b'{"jsonrpc":"2.0","id":' + str(request_id).encode() + b',"result":{"content":['
        events = self.receive(oversized(head))
        if self.state[request_id] == PENDING:
            failed = [e for e in events if isinstance(e, Failed)]
            assert [e.request_id for e in failed] == [request_id]
            assert isinstance(failed[0].error, MessageTooLarge)
            self.state[request_id] = ANSWERED
        else:
            self.expect_dropped(request_id, events)

    @rule(request_id=requests)
    def echo(self, request_id: int) -> None:
        """The request's own line comes back: it fails while in flight, else it is a server request."""
        events = self.receive(self.sent[request_id].rstrip(b"\n"))
        if self.state[request_id] == PENDING:
            assert [type(e) for e in events] == [Failed, Diagnostic]
            assert isinstance(events[0], Failed)
            assert isinstance(events[0].error, ProtocolError)
            assert "echoed" in str(events[0].error)
            self.state[request_id] = ANSWERED
        else:
            (event,) = events
            assert isinstance(event, ServerRequest)
            assert (event.request_id, event.method) == (request_id, "tools/call")
            self.conn.forget_server_request(request_id)

    @rule(request_id=requests, how=st.sampled_from(["deep", "truncated", "utf8"]))
    def unreadable_answer(self, request_id: int, how: str) -> None:
        head = b'{"jsonrpc":"2.0","id":' + str(request_id).encode() + b',"result":{"a":'
        line = {"deep": head + b"[" * 3000, "truncated": head + b'"cut', "utf8": head + b'"\xff"}}'}[how]
        events = self.receive(line)
        if self.state[request_id] == PENDING:
            failed = [e for e in events if isinstance(e, Failed)]
            assert [e.request_id for e in failed] == [request_id]
            assert type(failed[0].error) is ProtocolError
            self.state[request_id] = ANSWERED
        else:
            self.expect_dropped(request_id, events)

    @rule(request_id=requests, reason=st.none() | st.text(max_size=6))
    def abandon(self, request_id: int, reason: str | None) -> None:
        line = self.conn.abandon(request_id, reason)
        if self.state[request_id] == PENDING:
            assert line is not None
            sent = decode(line)
            assert sent["method"] == CANCELLED
            assert sent["params"]["requestId"] == request_id
            self.state[request_id] = ABANDONED
        else:
            assert line is None

    @rule()
    def fail_all(self) -> None:
        assert self.conn.fail_all() == self.pending()
        for request_id in self.pending():
            self.state[request_id] = GONE

    @rule(request_id=requests, method=st.sampled_from([PROGRESS, "notifications/message"]))
    def notify(self, request_id: int, method: str) -> None:
        """Progress for a request's token, or, for a request without one, an unnamed notification."""
        token = self.token[request_id]
        params: dict[str, Any] = {"progress": 1}
        if token is not None:
            params["progressToken"] = token
            target = self.holder(token)
        else:
            in_flight = self.pending()
            target = in_flight[0] if len(in_flight) == 1 else None
        if target is not None and not self.wants[target]:
            target = None
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        assert self.receive(orjson.dumps(message)) == [Note(message, target)]

    # --------------------------------------------------------- invariants

    @invariant()
    def table_matches_model(self) -> None:
        assert self.conn.in_flight == len(self.pending())
        for request_id, state in self.state.items():
            assert self.conn.is_pending(request_id) == (state == PENDING)

    @invariant()
    def each_id_resolves_at_most_once(self) -> None:
        assert all(n <= 1 for n in self.resolutions.values())
        assert all(self.state[i] == ANSWERED for i in self.resolutions)


TestCorrelation = pytest.mark.property(CorrelationMachine.TestCase)
