"""A trace crosses the process boundary: the official SDK's server joins the trace of our client span.

The server (``servers/sdk_otel_server.py``, the official Python SDK 2.3.0
with OpenTelemetry's SDK recording) writes its spans to a file; our client
records its own with the in-memory exporter. The server's span of a request
must be the child of our span of that request (the ``traceparent`` we put in
``params._meta``), and a request the server sends back (an elicitation) must
be served under our SERVER span, the child of the server's span that sent it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import trio
from opentelemetry.trace import SpanKind
from otel_support import finish, record

import trio_mcp

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "sdk_otel_server.py"
LIMIT = 30


@pytest.fixture
def otel_python(sdk_server):
    python = sdk_server.command
    found = subprocess.run([python, "-c", "import opentelemetry.sdk"], capture_output=True, check=False)
    if found.returncode != 0:
        reason = "the peers' virtualenv has no opentelemetry-sdk: install the peers again (nox -s peers)"
        if os.environ.get("TRIO_MCP_REQUIRE_PEERS") == "1":
            pytest.fail(f"{reason} (and TRIO_MCP_REQUIRE_PEERS=1)", pytrace=False)
        pytest.skip(reason)
    return python


@pytest.fixture
def otel(monkeypatch):
    recording = record(monkeypatch)
    yield recording
    finish(recording)


def read_spans(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def hex_ids(span) -> tuple[str, str]:
    context = span.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_the_servers_span_is_the_child_of_ours(otel, otel_python, tmp_path, protocol):
    spans_file = tmp_path / "spans.jsonl"
    target = trio_mcp.ProcessTarget(otel_python, [str(SERVER), str(spans_file)])
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_client(target, options=trio_mcp.ClientOptions(protocol=protocol)) as client:
            with otel.tracer.start_as_current_span("agent step"):
                result = await client.call_tool("echo", {"text": "across"})
            assert "across" in result.text
    ours = otel.span("tools/call echo")
    trace_id, span_id = hex_ids(ours)
    theirs = [s for s in read_spans(spans_file) if s["kind"] == "SERVER" and s["name"] == "tools/call echo"]
    assert len(theirs) == 1, read_spans(spans_file)
    assert theirs[0]["trace_id"] == trace_id
    assert theirs[0]["parent_span_id"] == span_id
    assert theirs[0]["attributes"]["gen_ai.tool.name"] == "echo"


async def test_a_request_of_the_servers_joins_the_same_trace(otel, otel_python, tmp_path):
    spans_file = tmp_path / "spans.jsonl"
    target = trio_mcp.ProcessTarget(otel_python, [str(SERVER), str(spans_file)])

    def on_elicitation(params):
        return {"action": "accept", "content": {"name": "Ada"}}

    options = trio_mcp.ClientOptions(protocol="2025-11-25", on_elicitation=on_elicitation)
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_client(target, options=options) as client:
            with otel.tracer.start_as_current_span("agent step"):
                result = await client.call_tool("greet")
            assert "Ada" in result.text
    call = otel.span("tools/call greet")
    served = otel.span("elicitation/create")
    assert served.kind == SpanKind.SERVER
    trace_id, call_id = hex_ids(call)
    theirs = read_spans(spans_file)
    (tool,) = [s for s in theirs if s["kind"] == "SERVER" and s["name"] == "tools/call greet"]
    assert tool["parent_span_id"] == call_id
    # The server sent its elicitation from within its tool's span, carrying
    # that context: our SERVER span's parent is the server's span that sent it.
    senders = {s["span_id"]: s for s in theirs if s["trace_id"] == trace_id}
    assert served.context.trace_id == call.context.trace_id
    assert f"{served.parent.span_id:016x}" in senders
    assert served.parent.is_remote
