"""The wire check itself: it passes correct traffic and fails on real mistakes.

The other interop tests trust `wiretap` to catch what the client writes
wrong; these show that it does, on made-up lines and through the real tap on
a real transport. They need no peers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio
from wiretap import MODERN, REVISIONS, WireError, WireTap, check_connection, schema_problem

import trio_mcp

WIRE_SERVER = Path(__file__).resolve().parents[1] / "servers" / "wire_server.py"
LEGACY = "2025-11-25"
needs_schemas = pytest.mark.skipif(schema_problem() is not None, reason=f"{schema_problem()}")

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
ENVELOPE = {
    VERSION_KEY: MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
}
ASK = {
    "resultType": "input_required",
    "inputRequests": {
        "name": {
            "method": "elicitation/create",
            "params": {
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        }
    },
    "requestState": "opaque-1",
}


def out(message: dict) -> tuple[str, bytes]:
    return ("out", json.dumps(message).encode() + b"\n")


def into(message: dict) -> tuple[str, bytes]:
    return ("in", json.dumps(message).encode() + b"\n")


def request(request_id, method, params=None, *, meta=None):
    params = dict(params or {})
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def modern(request_id, method, params=None, **meta):
    return request(request_id, method, params, meta={**ENVELOPE, **meta})


def result(request_id, value):
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def greet_call(request_id, **extra):
    return modern(request_id, "tools/call", {"name": "greet", "arguments": {"x": 1}, **extra})


def legacy_start() -> list[tuple[str, bytes]]:
    return [
        out(
            request(
                1,
                "initialize",
                {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
            )
        ),
        into(
            result(
                1,
                {"protocolVersion": LEGACY, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}},
            )
        ),
        out({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]


def modern_mrtr(retry_params: dict, first_id: int = 1) -> list[tuple[str, bytes]]:
    return [
        out(greet_call(first_id)),
        into(result(first_id, ASK)),
        out(greet_call(first_id + 1, **retry_params)),
    ]


GOOD_ANSWER = {"name": {"action": "accept", "content": {"name": "Ada"}}}


def test_the_schemas_are_there():
    """Without the schemas the tap checks only its own rules; this says so (skips) when that happens."""
    problem = schema_problem()
    if problem is not None:
        pytest.skip(f"{problem}; the wire checks of the interop tests skip the schema part")
    for revision in REVISIONS:
        assert check_connection([], revision) == []


@needs_schemas
@pytest.mark.parametrize(
    ("revision", "events"),
    [
        pytest.param(
            MODERN,
            [
                out(modern(1, "server/discover")),
                out(modern(2, "tools/list", progressToken="p")),
                *modern_mrtr({"inputResponses": GOOD_ANSWER, "requestState": "opaque-1"}, first_id=3),
                out({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}),
            ],
            id="modern",
        ),
        pytest.param(
            LEGACY,
            [
                out(modern(0, "server/discover")),  # the probe, before falling back
                *legacy_start(),
                out(request(2, "tools/call", {"name": "x"}, meta={"progressToken": 5})),
                into({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}}),
                out(
                    result(
                        "s1", {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
                    )
                ),
                into({"jsonrpc": "2.0", "id": "s2", "method": "ping"}),
                out(result("s2", {})),
                into({"jsonrpc": "2.0", "id": "s3", "method": "roots/list"}),
                out({"jsonrpc": "2.0", "id": "s3", "error": {"code": -32601, "message": "no roots"}}),
            ],
            id="legacy",
        ),
    ],
)
def test_correct_traffic_passes(revision, events):
    assert check_connection(events, revision) == []


BAD = [
    # (revision, events, a piece of the expected complaint, needs the schemas)
    pytest.param(
        MODERN,
        [out(modern(1, "tools/call", {"arguments": {}}))],
        "not a valid CallToolRequest",
        True,
        id="missing-tool-name",
    ),
    pytest.param(
        MODERN,
        [out(request(1, "tools/list", meta={**ENVELOPE, VERSION_KEY: LEGACY}))],
        "names protocol version '2025-11-25'",
        False,
        id="wrong-version-in-meta",
    ),
    pytest.param(
        MODERN,
        [out(request(1, "tools/list", meta={VERSION_KEY: MODERN}))],
        "lacks io.modelcontextprotocol/clientCapabilities",
        False,
        id="no-capabilities",
    ),
    pytest.param(
        MODERN, [out(modern(1, "ping"))], "ping is not a request a 2026-07-28 client", True, id="ping"
    ),
    pytest.param(
        MODERN,
        [out({"jsonrpc": "2.0", "method": "notifications/initialized"})],
        "not a notification a 2026-07-28 client may send",
        True,
        id="initialized-in-modern",
    ),
    pytest.param(
        MODERN,
        [into({"jsonrpc": "2.0", "id": 9, "method": "roots/list"}), out(result(9, {"roots": []}))],
        "sends no responses",
        False,
        id="modern-response",
    ),
    pytest.param(
        MODERN,
        [out(modern(1, "tools/list")), out(modern(1, "prompts/list"))],
        "request id 1 was used before",
        False,
        id="reused-id",
    ),
    pytest.param(
        MODERN,
        [out(modern(1, "tools/list", progressToken="t")), out(modern(2, "prompts/list", progressToken="t"))],
        "progress token 't' is already used",
        False,
        id="progress-token-in-use",
    ),
    pytest.param(
        MODERN,
        modern_mrtr({"inputResponses": GOOD_ANSWER, "requestState": "opaque-2"}),
        "requestState differs",
        False,
        id="changed-request-state",
    ),
    pytest.param(
        MODERN,
        modern_mrtr({"inputResponses": GOOD_ANSWER}),
        "requestState differs",
        False,
        id="dropped-request-state",
    ),
    pytest.param(
        MODERN,
        modern_mrtr({"inputResponses": {"other": GOOD_ANSWER["name"]}, "requestState": "opaque-1"}),
        "are not the keys asked",
        False,
        id="wrong-key",
    ),
    pytest.param(
        MODERN,
        modern_mrtr({"inputResponses": {"name": {"roots": []}}, "requestState": "opaque-1"}),
        "is not a valid ElicitResult",
        True,
        id="answer-of-the-wrong-kind",
    ),
    pytest.param(
        MODERN,
        modern_mrtr(
            {
                "inputResponses": {"name": {**GOOD_ANSWER["name"], "resultType": "complete"}},
                "requestState": "opaque-1",
            }
        ),
        "carries resultType",
        False,
        id="answer-with-result-type",
    ),
    pytest.param(
        MODERN,
        [
            out(greet_call(1)),
            into(result(1, ASK)),
            out(
                modern(2, "tools/call", {"name": "greet", "arguments": {"x": 2}, "requestState": "opaque-1"})
            ),
        ],
        "no earlier input_required",
        False,
        id="retry-with-other-arguments",
    ),
    pytest.param(
        LEGACY,
        [*legacy_start(), out(request(2, "tools/list", meta=ENVELOPE))],
        "2026-07-28 envelope",
        False,
        id="envelope-on-legacy",
    ),
    pytest.param(
        LEGACY,
        [legacy_start()[0], out(request(2, "tools/list"))],
        "only ping may precede notifications/initialized",
        False,
        id="before-initialized",
    ),
    pytest.param(
        LEGACY,
        [out(request(1, "tools/list"))],
        "must be initialize",
        False,
        id="no-initialize",
    ),
    pytest.param(
        LEGACY,
        [
            legacy_start()[0],
            out({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        ],
        "initialize must never be cancelled",
        False,
        id="cancel-initialize",
    ),
    pytest.param(
        LEGACY,
        [
            *legacy_start(),
            into({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}}),
            out(result(7, {"action": "accept"})),
        ],
        "not a valid CreateMessageResult",
        True,
        id="sampling-answered-wrong",
    ),
    pytest.param(
        LEGACY,
        [*legacy_start(), out(result(7, {}))],
        "answers no request of the server",
        False,
        id="answer-to-nothing",
    ),
    pytest.param(
        LEGACY,
        [*legacy_start(), out(request(2, "tools/call", {"name": "x", "requestState": "s"}))],
        "do not exist before 2026-07-28",
        False,
        id="mrtr-on-legacy",
    ),
    pytest.param(
        LEGACY,
        [
            *legacy_start(),
            ("out", b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'),
        ],
        "one line ending in a single LF",
        False,
        id="no-newline",
    ),
]


@pytest.mark.parametrize(("revision", "events", "complaint", "schemas"), BAD)
def test_mistakes_fail(revision, events, complaint, schemas):
    if schemas and schema_problem() is not None:
        pytest.skip(schema_problem())
    problems = check_connection(events, revision)
    assert any(complaint in problem for problem in problems), problems


async def run_wire_server(answers):
    """A real transport against a server that sends ping and sampling/createMessage at start."""

    async def on_request(method, params):
        return answers[method]

    with trio.fail_after(30):
        async with trio_mcp.open_session(
            trio_mcp.ProcessTarget(sys.executable, [str(WIRE_SERVER)]),
            options=trio_mcp.SessionOptions(on_request=on_request, on_log=lambda _: None),
        ) as transport:
            params = {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            }
            await transport.request("initialize", params)
            await transport.notify("notifications/initialized")
            await transport.request("tools/call", {"name": "echo", "arguments": {}})
            await transport.request("dump")  # by now both server requests were answered
    return transport


SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


async def test_the_tap_records_real_traffic(monkeypatch):
    tap = WireTap.install(monkeypatch)
    transport = await run_wire_server({"ping": {}, "sampling/createMessage": SAMPLED})
    written = tap.written(transport)
    assert {"jsonrpc": "2.0", "id": "s2", "result": SAMPLED} in written
    assert [m.get("method") for m in written if "method" in m] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "dump",
    ]
    if schema_problem() is not None:
        tap.check(LEGACY, transport)  # the rules alone find nothing wrong
        return
    # "dump" is no MCP method: the check says so, and nothing else.
    with pytest.raises(WireError) as failed:
        tap.check(LEGACY, transport)
    assert str(failed.value).startswith("1 problem(s)")
    assert "dump is not a request a 2025-11-25 client may send" in str(failed.value)


@needs_schemas
async def test_the_tap_fails_a_real_mistake(monkeypatch):
    """A wrong answer to a real server request, written by the real transport, fails the check."""
    tap = WireTap.install(monkeypatch)
    transport = await run_wire_server({"ping": {}, "sampling/createMessage": {"text": "hi"}})
    with pytest.raises(WireError, match="not a valid CreateMessageResult"):
        tap.check(LEGACY, transport)


def test_a_connection_without_a_revision_fails():
    tap = WireTap()
    tap.record(object(), "out", json.dumps(request(1, "tools/list")).encode() + b"\n")
    with pytest.raises(WireError, match="never said which revision"):
        tap.check_all()
