"""OpenTelemetry: the spans and metrics of a connection, by the semantic conventions for MCP.

Against real server processes (``tests/servers/mcp_server.py`` over stdio,
the demo over HTTP), with the SDK's in-memory exporter and metric reader
(`otel_support`). Every test also checks, as its fixture ends, that no span
was left open.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys

import attrs
import pytest
import trio
from client_support import LIMIT, open_client, server_args, wire
from opentelemetry import baggage, context as otel_context, trace
from opentelemetry.trace import SpanKind, StatusCode
from otel_support import finish, record, traceparent
from process_support import server_process

import trio_mcp
from trio_mcp._session import Session
from trio_mcp._telemetry import configured
from trio_mcp._telemetry.otel import DURATION_BUCKETS, TracedSession, _with_meta, safe_url
from trio_mcp.testing import FakeServer, open_fake_client


@pytest.fixture
def otel(monkeypatch):
    recording = record(monkeypatch)
    yield recording
    finish(recording)


OPERATION = "mcp.client.operation.duration"
SESSION = "mcp.client.session.duration"


def sent(lines, method):
    return [message for message in lines if message.get("method") == method]


# ------------------------------------------------------------------ spans


async def test_a_tool_call_is_a_client_span_under_the_callers_span(otel):
    with trio.fail_after(LIMIT):
        async with open_client() as client:
            assert isinstance(client.session, TracedSession)
            with otel.tracer.start_as_current_span("agent step") as step:
                result = await client.call_tool("echo", {"text": "hi"})
            assert result.text == "hi"
            lines = await wire(client)
    call = otel.span("tools/call echo")
    assert call.kind == SpanKind.CLIENT
    assert call.parent is not None
    assert call.parent.span_id == step.get_span_context().span_id
    assert call.context.trace_id == step.get_span_context().trace_id
    assert call.status.status_code == StatusCode.UNSET
    attributes = dict(call.attributes)
    assert attributes == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "jsonrpc.request.id": attributes["jsonrpc.request.id"],
        "network.transport": "pipe",
        "mcp.protocol.version": "2026-07-28",
    }
    # The request carried the span's own context, beside the era's envelope.
    (echo,) = [m for m in sent(lines, "tools/call") if m["params"]["name"] == "echo"]
    assert echo["params"]["_meta"]["traceparent"] == traceparent(call)
    assert "io.modelcontextprotocol/protocolVersion" in echo["params"]["_meta"]
    assert str(echo["id"]) == attributes["jsonrpc.request.id"]
    # The handshake's probe is a span of its own, a root one (no span was active).
    discover = otel.span("server/discover")
    assert discover.parent is None
    assert discover.kind == SpanKind.CLIENT


async def test_the_initialize_era_every_request_and_notification(otel):
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", protocol="2025-11-25") as client:
            await client.get_prompt("greet", {"name": "Ada"})
            await client.read_resource("mem://a")
            await client.subscribe_resource("mem://a")
            await client.list_tools()
            await client.ping()
    names = [span.name for span in otel.spans()]
    for name in (
        "initialize",
        "notifications/initialized",
        "prompts/get greet",
        "resources/read",
        "resources/subscribe",
        "tools/list",
        "ping",
    ):
        assert name in names
    initialized = otel.span("notifications/initialized")
    assert "jsonrpc.request.id" not in initialized.attributes
    assert initialized.kind == SpanKind.CLIENT
    prompt = otel.span("prompts/get greet")
    assert prompt.attributes["gen_ai.prompt.name"] == "greet"
    assert "gen_ai.operation.name" not in prompt.attributes
    assert prompt.attributes["mcp.protocol.version"] == "2025-11-25"
    read = otel.span("resources/read")
    assert read.attributes["mcp.resource.uri"] == "mem://a"
    # No session id over stdio: the conventions' mcp.session.id is HTTP's.
    assert all("mcp.session.id" not in span.attributes for span in otel.spans())


async def test_concurrent_calls_each_under_its_own_tasks_span(otel):
    parents = {}

    async def one(i):
        with otel.tracer.start_as_current_span(f"worker {i}") as span:
            parents[i] = span.get_span_context().span_id
            await client.call_tool("echo", {"text": str(i)})

    with trio.fail_after(LIMIT):
        async with open_client() as client:
            async with trio.open_nursery() as nursery:
                for i in range(40):
                    nursery.start_soon(one, i)
            lines = await wire(client)
    calls = otel.spans("tools/call echo")
    assert len(calls) == 40
    by_parent = {span.parent.span_id: span for span in calls}
    assert set(by_parent) == set(parents.values())
    # Each request carried its own span's context.
    carried = {m["params"]["_meta"]["traceparent"] for m in sent(lines, "tools/call")}
    assert {traceparent(span) for span in calls} <= carried


async def test_the_sessions_own_tasks_never_parent_a_callers_span(otel):
    # The probe runs while the session's reader and sink tasks start: a
    # call made later, under no span, must be a root, whoever reads its answer.
    with trio.fail_after(LIMIT):
        with otel.tracer.start_as_current_span("opening"):
            async with open_client() as client:
                pass
        async with open_client() as client:
            await client.call_tool("echo", {"text": "x"})
            async with trio.open_nursery() as nursery:
                for _ in range(5):
                    nursery.start_soon(client.call_tool, "echo", {"text": "y"})
    # Only the first client's handshake was opened under "opening".
    echo = otel.spans("tools/call echo")
    assert len(echo) == 6
    assert all(span.parent is None for span in echo)


async def test_a_callers_meta_keys_are_kept(otel):
    with trio.fail_after(LIMIT):
        async with open_client() as client:
            with otel.tracer.start_as_current_span("step"):
                await client.call_tool("echo", {"text": "a"}, meta={"traceparent": "mine", "x.example/k": 1})
            lines = await wire(client)
    (echo,) = [m for m in sent(lines, "tools/call") if m["params"]["name"] == "echo"]
    assert echo["params"]["_meta"]["traceparent"] == "mine"
    assert echo["params"]["_meta"]["x.example/k"] == 1


def test_meta_is_merged_into_a_copy():
    params = {"name": "t", "_meta": {"progressToken": 1, "tracestate": "theirs"}}
    carrier = {"traceparent": "00-1-2-01", "tracestate": "ours"}
    merged = _with_meta(params, carrier)
    assert merged == {
        "name": "t",
        "_meta": {"progressToken": 1, "tracestate": "theirs", "traceparent": "00-1-2-01"},
    }
    assert params == {"name": "t", "_meta": {"progressToken": 1, "tracestate": "theirs"}}
    assert _with_meta(None, carrier) == {"_meta": carrier}
    assert _with_meta(params, {}) is params
    odd = {"_meta": "not an object"}
    assert _with_meta(odd, carrier) is odd


async def test_baggage_travels_in_meta(otel):
    with trio.fail_after(LIMIT):
        async with open_client() as client:
            token = otel_context.attach(baggage.set_baggage("user.tier", "gold"))
            try:
                await client.call_tool("echo", {"text": "a"})
            finally:
                otel_context.detach(token)
            lines = await wire(client)
    (echo,) = [m for m in sent(lines, "tools/call") if m["params"]["name"] == "echo"]
    assert echo["params"]["_meta"]["baggage"] == "user.tier=gold"


# ---------------------------------------------------------------- failures


async def test_a_json_rpc_error(otel):
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", protocol="2025-11-25") as client:
            with pytest.raises(trio_mcp.RpcError) as caught:
                await client.read_resource("mem://nowhere")
    span = otel.span("resources/read")
    code = str(caught.value.code)
    assert span.attributes["error.type"] == code
    assert span.attributes["rpc.response.status_code"] == code
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == caught.value.message


async def test_a_tool_result_with_is_error(otel):
    with trio.fail_after(LIMIT):
        async with open_client() as client:
            result = await client.call_tool("fail")
    assert result.is_error
    span = otel.span("tools/call fail")
    assert span.attributes["error.type"] == "tool_error"
    assert "rpc.response.status_code" not in span.attributes
    assert span.status.status_code == StatusCode.ERROR


async def test_a_call_cancelled_by_the_callers_scope(otel):
    with trio.fail_after(LIMIT):
        async with open_client() as client:
            with otel.tracer.start_as_current_span("step"):
                with trio.move_on_after(0.3) as scope:
                    await client.call_tool("hang")
            assert scope.cancelled_caught
            # The span is no longer current once the call is over.
            assert not trace.get_current_span().is_recording()
    span = otel.span("tools/call hang")
    assert span.attributes["error.type"] == "Cancelled"
    assert span.status.status_code == StatusCode.ERROR
    cancelled = otel.span("notifications/cancelled")
    assert cancelled.parent.span_id == span.context.span_id


async def test_no_span_stays_open_whatever_ends_the_calls(otel):
    # Calls that finish, hang, fail or are cancelled at staggered moments,
    # then the server killed with calls in flight: every span ends (the
    # fixture checks it), each with an outcome.
    async def one(i):
        tool = ("echo", "hang", "fail")[i % 3]
        # The hanging calls are given up at staggered moments (now, too).
        with trio.move_on_after(0.05 * (i % 7) if tool == "hang" else math.inf):
            await client.call_tool(tool, {"text": str(i)})

    with trio.fail_after(LIMIT):
        async with open_client() as client:
            async with trio.open_nursery() as nursery:
                for i in range(60):
                    nursery.start_soon(one, i)

            async def hang():
                with pytest.raises(trio_mcp.ServerGone):
                    await client.call_tool("hang")

            async with trio.open_nursery() as nursery:
                for _ in range(10):
                    nursery.start_soon(hang)
                while client.session.statistics().requests_in_flight < 10:  # noqa: ASYNC110
                    await trio.sleep(0.01)
                os.kill(client.pid, signal.SIGKILL)
    calls = [span for span in otel.spans() if span.name.startswith("tools/call")]
    assert len(calls) == 70
    kinds = {span.attributes.get("error.type") for span in calls}
    assert {None, "Cancelled", "tool_error", "ServerGone"} <= kinds


async def test_a_request_timeout(otel, autojump_clock):
    # In memory, under virtual time: the budget runs out on the call, never
    # on the handshake of a slow machine.
    server = FakeServer(tools=["hang"])

    async def hang(request):
        await trio.sleep_forever()

    server.on_tool("hang", hang)
    options = trio_mcp.ClientOptions(request_timeout=0.3)
    with trio.fail_after(LIMIT):
        async with open_fake_client(server, options=options) as client:
            with pytest.raises(trio_mcp.RequestTimeout):
                await client.call_tool("hang")
    span = otel.span("tools/call hang")
    assert span.attributes["error.type"] == "RequestTimeout"
    assert span.status.status_code == StatusCode.ERROR
    assert otel.span("notifications/cancelled").parent.span_id == span.context.span_id


async def test_a_server_that_dies_mid_call(otel):
    with trio.fail_after(LIMIT):
        async with open_client() as client:

            async def kill_soon():
                while client.session.statistics().requests_in_flight < 1:  # noqa: ASYNC110
                    await trio.sleep(0.01)
                os.kill(client.pid, signal.SIGKILL)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(kill_soon)
                with pytest.raises(trio_mcp.ServerGone):
                    await client.call_tool("hang")
            with pytest.raises(trio_mcp.ServerGone):
                await client.call_tool("echo", {"text": "late"})
    hang = otel.span("tools/call hang")
    assert hang.attributes["error.type"] == "ServerGone"
    assert hang.status.status_code == StatusCode.ERROR
    # Never the exception's message: it quotes the server's stderr.
    assert hang.status.description is None
    assert otel.span("tools/call echo").attributes["error.type"] == "ServerGone"
    ((_, point),) = otel.points(SESSION)
    assert point.attributes["error.type"] == "ServerGone"


async def test_a_server_request_is_served_under_a_server_span(otel):
    seen = {}

    async def on_elicitation(params):
        span = trace.get_current_span()
        seen["span"] = span.get_span_context().span_id
        return {"action": "accept", "content": {"name": "Ada"}}

    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "legacy", protocol="2025-11-25", on_elicitation=on_elicitation
        ) as client:
            with otel.tracer.start_as_current_span("step"):
                await client.call_tool("ask", {"mode": "form"})
    served = otel.span("elicitation/create")
    assert served.kind == SpanKind.SERVER
    assert served.context.span_id == seen["span"]
    assert served.attributes["mcp.method.name"] == "elicitation/create"
    assert "jsonrpc.request.id" in served.attributes
    # The server sent no trace context: a trace of its own, never the
    # span of whichever task read the request.
    assert served.parent is None
    assert served.status.status_code == StatusCode.UNSET


async def test_a_failing_hook_fails_its_server_span(otel):
    def on_roots():
        raise trio_mcp.RpcError(-32603, "no roots today")

    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", protocol="2025-11-25", on_roots=on_roots) as client:
            await client.call_tool("roots")
    served = otel.span("roots/list")
    assert served.attributes["error.type"] == "-32603"
    assert served.status.status_code == StatusCode.ERROR


# ----------------------------------------------------------------- metrics


async def test_operation_and_session_durations(otel):
    with trio.fail_after(LIMIT):
        async with open_client() as client:
            await client.call_tool("echo", {"text": "a"})
            await client.call_tool("fail")
        points = otel.points(OPERATION)
        assert points
        metric = points[0][0]
        assert metric.unit == "s"
        by_tool = {p.attributes.get("gen_ai.tool.name"): p for _, p in points}
        echo = by_tool["echo"]
        assert dict(echo.attributes) == {
            "mcp.method.name": "tools/call",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "echo",
            "network.transport": "pipe",
            "mcp.protocol.version": "2026-07-28",
        }
        assert tuple(echo.explicit_bounds) == DURATION_BUCKETS
        assert echo.count == 1
        assert by_tool["fail"].attributes["error.type"] == "tool_error"
        ((session_metric, session),) = otel.points(SESSION)
        assert session_metric.unit == "s"
        assert dict(session.attributes) == {"network.transport": "pipe", "mcp.protocol.version": "2026-07-28"}
        assert tuple(session.explicit_bounds) == DURATION_BUCKETS
        assert session.count == 1


# ---------------------------------------------------------------- switches


async def test_turned_off_the_session_is_a_plain_one(otel):
    with trio.fail_after(LIMIT):
        async with open_client(telemetry=False) as client:
            assert type(client.session) is Session
            await client.call_tool("echo", {"text": "a"})
            lines = await wire(client)
    assert otel.spans() == []
    assert all("traceparent" not in json.dumps(m) for m in lines)


async def test_without_an_sdk_nothing_is_traced(monkeypatch):
    # The fixture's SDK providers are replaced by the API's own: as in a
    # program that installed the API but set up no SDK.
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: trace.ProxyTracerProvider())
    from opentelemetry import metrics

    monkeypatch.setattr(metrics, "get_meter_provider", lambda: metrics.NoOpMeterProvider())
    assert not configured()
    tracer = trace.NoOpTracer()
    with trio.fail_after(LIMIT):
        async with open_client() as client:
            assert type(client.session) is Session
            with tracer.start_as_current_span("nothing"):
                await client.call_tool("echo", {"text": "a"})
            lines = await wire(client)
    assert all("traceparent" not in json.dumps(m) for m in lines)


async def test_a_bare_session_is_traced_too(otel):
    target = trio_mcp.ProcessTarget(sys.executable, server_args("--era", "legacy"))
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_session(target) as session:
            with pytest.raises(trio_mcp.RpcError):
                await session.request("nonsense/method", {})
            await session.notify("notifications/whatever")
    span = otel.span("nonsense/method")
    assert span.attributes["error.type"] == span.attributes["rpc.response.status_code"]
    assert otel.span("notifications/whatever").kind == SpanKind.CLIENT


# ------------------------------------------------------------------ secrets


def test_safe_url_keeps_no_credentials():
    assert safe_url("https://user:pw@example.com:8443/mcp?token=abc#frag") == "https://example.com:8443/mcp"
    assert safe_url("http://[::1]/mcp") == "http://[::1]/mcp"
    assert safe_url("not a url") == ""


# --------------------------------------------------------------------- HTTP


SECRET = "sekrit-token-0123456789"


def everything_recorded(otel) -> str:
    """Every name, attribute, event and status of every span and metric point, as one text."""
    parts = []
    for span in otel.spans():
        parts.append(span.name)
        parts.append(json.dumps(dict(span.attributes), default=str))
        parts.append(str(span.status.description))
        for event in span.events:
            parts.append(event.name)
            parts.append(json.dumps(dict(event.attributes), default=str))
    for metric in (OPERATION, SESSION):
        for _, point in otel.points(metric):
            parts.append(json.dumps(dict(point.attributes), default=str))
    return "\n".join(parts)


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_over_http_with_a_bearer_header(otel, protocol):
    from tests.demo.test_http import demo_http

    async with demo_http() as demo:
        port = int(demo.url.rsplit(":", 1)[1].split("/", 1)[0])
        url = demo.url.replace("http://", f"http://user:{SECRET}@") + f"?key={SECRET}"
        target = trio_mcp.HTTPTarget(url, headers={"Authorization": f"Bearer {SECRET}", "X-Api-Key": SECRET})
        with trio.fail_after(30):
            async with trio_mcp.open_client(
                target, options=trio_mcp.ClientOptions(protocol=protocol)
            ) as client:
                with otel.tracer.start_as_current_span("step") as step:
                    await client.call_tool("echo", {"text": "over http"})
    call = otel.span("tools/call echo")
    assert call.parent.span_id == step.get_span_context().span_id
    attributes = call.attributes
    assert attributes["network.transport"] == "tcp"
    assert attributes["network.protocol.name"] == "http"
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["server.port"] == port
    assert attributes["mcp.protocol.version"] == protocol
    if protocol == "2026-07-28":
        assert "mcp.session.id" not in attributes
    else:
        assert attributes["mcp.session.id"]
    assert "initialize" in [span.name for span in otel.spans()] or protocol == "2026-07-28"
    recorded = everything_recorded(otel)
    assert SECRET not in recorded
    assert "Bearer" not in recorded


async def test_an_oauth_login_and_its_refreshes_leave_no_secret(otel):
    from tests.auth.test_flow import AUTH_SERVER, Browser, url_of
    from trio_mcp.auth import MemoryTokenStorage, OAuth

    kept = []

    class Keeping(MemoryTokenStorage):
        async def set_tokens(self, resource, issuer, client_id, tokens):
            kept.append(tokens)
            await super().set_tokens(resource, issuer, client_id, tokens)

    storage = Keeping()
    with server_process([sys.executable, str(AUTH_SERVER)], r"^LISTENING (\d+)$") as server:
        url = url_of(server, "short+offline")
        auth = OAuth(url, redirect=Browser(), storage=storage)
        with trio.fail_after(30):
            async with trio_mcp.open_client(trio_mcp.HTTPTarget(url, auth=auth, trust_env=False)) as client:
                for _ in range(3):
                    await client.list_tools()
                    await trio.sleep(1.1)  # the tokens live one second: the next call refreshes
    refreshes = [
        (span, event)
        for span in otel.spans()
        for event in span.events
        if event.name == "trio_mcp.auth.token_refresh"
    ]
    # Each call after a sleep refreshes first, under its own span (on a slow
    # machine, a request of the handshake may have needed one too).
    assert len([span for span, _ in refreshes if span.name == "tools/list"]) >= 2
    for span, event in refreshes:
        assert span.kind == SpanKind.CLIENT
        assert event.attributes["trio_mcp.auth.issuer"].startswith("http://127.0.0.1:")
    secrets = {value for tokens in kept for value in (tokens.access_token, tokens.refresh_token) if value}
    assert secrets
    recorded = everything_recorded(otel)
    for secret in secrets:
        assert secret not in recorded
    assert "Bearer" not in recorded


# ------------------------------------------------------------------- groups


async def test_a_group_restart_is_a_span(otel):
    from tests._group.test_group import FAST, PINNED, spec, whoami

    with trio.fail_after(30):
        async with trio_mcp.open_servers([spec("fragile")], restart=FAST, options=PINNED) as servers:
            with pytest.raises(trio_mcp.ServerGone):
                await servers.call_tool("fragile__die", {"code": 7})
            await whoami(servers, "fragile")
    restart = otel.span("trio_mcp.server.restart")
    assert restart.parent is None
    assert restart.attributes["trio_mcp.server.name"] == "fragile"
    assert restart.attributes["trio_mcp.restarts"] == 1
    assert restart.attributes["error.type"] == "ServerGone"
    assert 0.05 <= restart.attributes["trio_mcp.restart.delay"] <= 0.2
    # The dying call's span says so; the call after the restart went through.
    assert otel.span("tools/call die").attributes["error.type"] == "ServerGone"
    whoamis = otel.spans("tools/call whoami")
    assert whoamis[-1].status.status_code == StatusCode.UNSET


async def test_a_group_with_telemetry_off_records_no_restart(otel):
    from tests._group.test_group import FAST, PINNED, spec, whoami

    off = attrs.evolve(PINNED, telemetry=False)
    with trio.fail_after(30):
        async with trio_mcp.open_servers([spec("fragile")], restart=FAST, options=off) as servers:
            with pytest.raises(trio_mcp.ServerGone):
                await servers.call_tool("fragile__die", {"code": 7})
            await whoami(servers, "fragile")
    assert otel.spans() == []


# -------------------------------------------------------------------- tasks


async def test_a_tasks_life_is_told_by_its_spans(otel):
    target = trio_mcp.ProcessTarget(sys.executable, ["-m", "trio_mcp.demo"])
    options = trio_mcp.ClientOptions(protocol="2025-11-25")
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_client(target, options=options) as client:
            async with client.tool_task("report", {"steps": 2, "delay": 0.05}) as task:
                await task.result()
                task_id = task.task_id
    created = otel.span("tools/call report")
    assert created.attributes["trio_mcp.task.id"] == task_id
    assert created.attributes["trio_mcp.task.status"] == "working"
    later = [span for span in otel.spans() if span.name.startswith("tasks/")]
    assert later
    assert all(span.attributes["trio_mcp.task.id"] == task_id for span in later)


async def test_a_commands_arguments_and_environment_stay_out(otel):
    target = trio_mcp.ProcessTarget(
        sys.executable, [*server_args(), "--instructions", SECRET], env={**os.environ, "API_KEY": SECRET}
    )
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_client(target) as client:
            await client.call_tool("echo", {"text": "a"})
            os.kill(client.pid, signal.SIGKILL)
            with pytest.raises(trio_mcp.ServerGone):
                await client.call_tool("echo", {"text": "b"})
    assert otel.spans("tools/call echo")
    assert SECRET not in everything_recorded(otel)


def test_the_transport_attributes_of_each_target():
    from trio_mcp._telemetry.otel import transport_attributes

    assert transport_attributes(trio_mcp.ProcessTarget("server", ["--token", SECRET])) == {
        "network.transport": "pipe"
    }
    assert transport_attributes(trio_mcp.HTTPTarget(f"https://u:{SECRET}@example.com/mcp?k={SECRET}")) == {
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "server.address": "example.com",
        "server.port": 443,
    }
    assert transport_attributes(trio_mcp.HTTPTarget("http://[::1]:8080/mcp"))["server.address"] == "::1"
    assert transport_attributes(trio_mcp.HTTPTarget("http://example.com/mcp"))["server.port"] == 80


def test_error_types():
    from trio_mcp._telemetry.otel import error_type

    assert error_type(trio_mcp.RpcError(-32602, "bad")) == "-32602"
    assert error_type(trio_mcp.ServerGone("gone")) == "ServerGone"
    assert error_type(ExceptionGroup("one", [trio_mcp.RpcError(-1, "x")])) == "-1"
