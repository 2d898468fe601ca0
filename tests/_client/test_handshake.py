"""Era negotiation, against real processes of ``tests/servers/mcp_server.py``.

The stdio probe rules: a ``server/discover`` goes first; a result or a
``-32022`` (or another recognised modern error) means the 2026-07-28 era, any
other error or silence for ``probe_timeout`` means the initialize era. Plus
the edge cases: late and id-less answers to the probe, a server that dies on
it, a slow modern server taken for legacy, only legacy versions in common,
``initialize`` answered with a version the client does not speak, pinned
protocols, and ``initialize`` never being cancelled.

Every test uses the real clock, bounded by ``trio.fail_after(LIMIT)``; no test
asserts speed. The probe timeouts are short (0.5 s) on purpose.
"""

from __future__ import annotations

import sys

import pytest
import trio
import trio.testing
from client_support import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LIMIT,
    MODERN,
    PROTOCOL_VERSION,
    Collector,
    notifications,
    open_client,
    recorded,
    requests,
    responses,
    server_args,
    wire,
)

import trio_mcp
from trio_mcp import RequestTimeout, ServerGone, VersionMismatch

CLIENT_INFO_WIRE = {"name": "trio-mcp", "version": trio_mcp.__version__}


async def no_hook(params):
    raise AssertionError("no input request expected")


# ------------------------------------------------------------------ auto


async def test_auto_picks_modern_from_the_discover_result():
    """A ``DiscoverResult`` to the probe: the modern era, described by that result; no initialize."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--instructions", "be nice") as client:
            assert client.era == "modern"
            assert client.protocol_version == MODERN
            assert client.server_info is not None
            assert (client.server_info.name, client.server_info.version) == ("mcp-test-server", "1.2.3")
            assert client.server_capabilities.tools == {"listChanged": True}
            assert client.server_capabilities.completions == {}
            assert client.instructions == "be nice"
            assert client.discover_result is not None
            assert client.discover_result.supported_versions == [MODERN]
            assert client.discover_result.extra["x-vendor"] == {"kept": True}
            sent = await wire(client)
    probe = sent[0]
    assert probe["method"] == "server/discover"
    assert probe["params"] == {
        "_meta": {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, CLIENT_INFO: CLIENT_INFO_WIRE}
    }
    assert not requests(sent, "initialize")
    assert not notifications(sent, "notifications/initialized")


@pytest.mark.parametrize("code", ["-32601", "-32602", "-32600", "-32603", "-32000", "-32004", "-32001"])
async def test_auto_falls_back_to_legacy_on_any_other_error(code):
    """Any error but a recognised modern one means legacy, draft codes (-32004, -32001) included."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", "--discover", code, "--instructions", "old") as client:
            assert client.era == "legacy"
            assert client.protocol_version == "2025-11-25"
            assert client.server_info is not None
            assert client.server_info.name == "mcp-test-server"
            assert client.server_capabilities.resources == {"subscribe": True, "listChanged": True}
            assert client.instructions == "old"
            assert client.discover_result is None
            sent = await wire(client)
    assert [m.get("method") for m in sent[:3]] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
    ]
    init = sent[1]
    assert init["params"] == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": CLIENT_INFO_WIRE,
    }
    assert init["id"] != sent[0]["id"]


async def test_legacy_initialize_declares_the_hooks_capabilities():
    """Giving a hook declares its capability, in the shape of the offered revision."""
    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "legacy", on_elicitation=no_hook, on_sampling=no_hook, on_roots=no_hook
        ) as client:
            sent = await wire(client)
    (init,) = requests(sent, "initialize")
    caps = init["params"]["capabilities"]
    assert caps["sampling"] == {}
    assert "roots" in caps
    assert caps["elicitation"] == {"form": {}, "url": {}}


async def test_silent_probe_falls_back_to_legacy_after_probe_timeout():
    """No answer within ``probe_timeout``: legacy; the probe's id is never used again (edge 14, 15)."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", "--discover", "silence", probe_timeout=0.5) as client:
            assert client.era == "legacy"
            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
            sent = await wire(client)
    ids = [m["id"] for m in requests(sent)]
    assert len(ids) == len(set(ids))
    assert requests(sent)[0]["method"] == "server/discover"


async def test_late_answer_to_the_probe_is_ignored():
    """A legacy server answering the probe after ``initialize`` (edge 14): dropped, nothing breaks."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", "--discover", "late", probe_timeout=0.5) as client:
            assert client.era == "legacy"
            assert (await client.call_tool("echo", {"text": "still fine"})).text == "still fine"
            sent = await wire(client)
    ids = [m["id"] for m in requests(sent)]
    assert len(ids) == len(set(ids))


async def test_probe_error_without_an_id_means_legacy():
    """An error with ``"id": null`` during the probe (edge 10) ends up legacy, not in a failure."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", "--discover", "null-id", probe_timeout=0.5) as client:
            assert client.era == "legacy"
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"


async def test_server_ping_and_log_during_the_probe():
    """A ping from the server while the era is unknown is answered; a log reaches the sink (edge 18)."""
    seen = Collector()
    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "legacy", "--chatty-probe", on_notification=seen.append, probe_timeout=5
        ) as client:
            assert client.era == "legacy"
            await seen.wait_until(lambda notes: "notifications/message" in notes.methods())
            sent = await wire(client)
    (answer,) = [m for m in responses(sent) if m["id"] == 1]
    assert answer["result"] == {}
    (log,) = [n for n in seen if n["method"] == "notifications/message"]
    assert log["params"]["data"] == "probe seen"


async def test_missing_capability_error_on_the_probe_means_modern():
    """``-32021`` is a recognised modern error: modern, without a description until ``discover()``."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--discover", "-32021") as client:
            assert client.era == "modern"
            assert client.protocol_version == MODERN
            assert client.discover_result is None
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
            found = await client.discover()
            assert found.supported_versions == [MODERN]
            assert found.server_info is not None
            sent = await wire(client)
    assert not requests(sent, "initialize")


async def test_unsupported_version_naming_only_unknown_versions():
    """``-32022`` whose ``supported`` shares nothing with us: VersionMismatch naming both sides."""
    with trio.fail_after(LIMIT):
        with pytest.raises(VersionMismatch) as caught:
            async with open_client("--era", "modern", "--supported", "2099-01-01"):
                pytest.fail("connected")  # pragma: no cover
    assert "2099-01-01" in str(caught.value)
    assert MODERN in str(caught.value)
    assert caught.value.answered == ("2099-01-01",)
    assert MODERN in caught.value.offered


@pytest.mark.parametrize(
    ("supported", "expected"),
    [("2025-11-25,2099-01-01", "2025-11-25"), ("2025-06-18", "2025-06-18")],
)
async def test_unsupported_version_with_only_a_legacy_overlap_initializes(tmp_path, supported, expected):
    """``-32022`` listing only legacy versions we speak: ``initialize`` at the newest (edge 19)."""
    record = tmp_path / "wire.jsonl"
    with trio.fail_after(LIMIT):
        async with open_client("--era", "dual", "--supported", supported, "--record", str(record)) as client:
            assert client.era == "legacy"
            assert client.protocol_version == expected
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"
    (run,) = recorded(record)
    assert [m["method"] for m in requests(run)][:2] == ["server/discover", "initialize"]
    assert requests(run, "initialize")[0]["params"]["protocolVersion"] == expected
    assert len(requests(run, "server/discover")) == 1


async def test_discover_listing_only_legacy_versions_initializes():
    """A ``DiscoverResult`` whose ``supportedVersions`` overlap us only in legacy (edge 19)."""
    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "dual", "--discover-versions", "2025-06-18,2099-01-01", on_elicitation=no_hook
        ) as client:
            assert client.era == "legacy"
            assert client.protocol_version == "2025-06-18"
            sent = await wire(client)
    (init,) = requests(sent, "initialize")
    assert init["params"]["protocolVersion"] == "2025-06-18"
    assert init["params"]["capabilities"] == {"elicitation": {}}


async def test_discover_listing_only_unknown_versions_is_a_mismatch():
    with trio.fail_after(LIMIT):
        with pytest.raises(VersionMismatch) as caught:
            async with open_client("--era", "modern", "--discover-versions", "2099-01-01"):
                pytest.fail("connected")  # pragma: no cover
    assert "2099-01-01" in str(caught.value)
    assert caught.value.answered == ("2099-01-01",)


async def test_dual_era_server_is_modern_under_auto():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "dual") as client:
            assert client.era == "modern"
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"


async def test_slow_modern_server_taken_for_legacy_switches_to_modern():
    """The probe times out, ``initialize`` gets ``-32022`` listing 2026-07-28: modern after all (edge 16)."""
    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "modern", "--discover", "late", "--discover-delay", "1.5", probe_timeout=0.3
        ) as client:
            assert client.era == "modern"
            assert client.protocol_version == MODERN
            assert client.discover_result is not None
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"
            sent = await wire(client)
    methods = [m["method"] for m in requests(sent)]
    assert methods[:3] == ["server/discover", "initialize", "server/discover"]
    ids = [m["id"] for m in requests(sent)]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("death", ["exit", "close-stdout"])
async def test_server_dying_on_the_probe_is_started_again_and_initialized(tmp_path, death):
    """A legacy server that exits or closes stdout on the probe: restarted once, ``initialize`` first (edge 17)."""
    record = tmp_path / "wire.jsonl"
    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "legacy", "--discover", death, "--record", str(record), on_log=lambda _: None
        ) as client:
            assert client.era == "legacy"
            assert (await client.call_tool("echo", {"text": "again"})).text == "again"
            sent = await wire(client)
    assert requests(sent)[0]["method"] == "initialize"
    assert not requests(sent, "server/discover")
    first, second = recorded(record)
    assert [m["method"] for m in requests(first)] == ["server/discover"]
    assert requests(second)[0]["method"] == "initialize"


async def test_server_dying_on_every_probe_is_server_gone():
    """A modern server that dies on every ``server/discover``: restarted once, then `ServerGone`."""
    with trio.fail_after(LIMIT):
        with pytest.raises(ServerGone):
            async with open_client("--era", "modern", "--discover", "exit", on_log=lambda _: None):
                pytest.fail("connected")  # pragma: no cover


# ---------------------------------------------------------------- pinned


async def test_pinned_modern_against_a_modern_server():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", protocol=MODERN) as client:
            assert client.era == "modern"
            assert client.protocol_version == MODERN


async def test_pinned_modern_against_a_legacy_server_is_a_mismatch(tmp_path):
    record = tmp_path / "wire.jsonl"
    with trio.fail_after(LIMIT):
        with pytest.raises(VersionMismatch) as caught:
            async with open_client("--era", "legacy", "--record", str(record), protocol=MODERN):
                pytest.fail("connected")  # pragma: no cover
    assert MODERN in str(caught.value)
    assert caught.value.offered == (MODERN,)
    (run,) = recorded(record)
    assert not requests(run, "initialize")


@pytest.mark.slow
async def test_pinned_modern_waits_for_the_probe_as_for_any_request():
    """Pinned modern: a silent server is not taken for legacy; the probe times out like a request."""
    with trio.fail_after(LIMIT):
        with pytest.raises(RequestTimeout):
            async with open_client(
                "--era",
                "legacy",
                "--discover",
                "silence",
                protocol=MODERN,
                probe_timeout=0.2,
                request_timeout=1.0,
            ):
                pytest.fail("connected")  # pragma: no cover


async def test_pinned_legacy_skips_the_probe(tmp_path):
    """A pinned initialize-era revision: ``initialize`` offering it, no probe."""
    with trio.fail_after(LIMIT):
        async with open_client(
            "--era",
            "legacy",
            protocol="2025-06-18",
            on_elicitation=no_hook,
            on_sampling=no_hook,
            on_roots=no_hook,
        ) as client:
            assert client.era == "legacy"
            assert client.protocol_version == "2025-06-18"
            sent = await wire(client)
    assert requests(sent)[0]["method"] == "initialize"
    assert not requests(sent, "server/discover")
    params = requests(sent)[0]["params"]
    assert params["protocolVersion"] == "2025-06-18"
    assert params["capabilities"]["elicitation"] == {}
    assert params["capabilities"]["sampling"] == {}
    assert "roots" in params["capabilities"]


async def test_pinned_2025_03_26_declares_no_elicitation():
    """Elicitation did not exist before 2025-06-18: a hook does not declare it there."""
    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "legacy", protocol="2025-03-26", on_elicitation=no_hook, on_sampling=no_hook
        ) as client:
            assert client.protocol_version == "2025-03-26"
            sent = await wire(client)
    caps = requests(sent, "initialize")[0]["params"]["capabilities"]
    assert "elicitation" not in caps
    assert caps["sampling"] == {}


async def test_pinned_legacy_against_a_modern_server_is_a_mismatch_naming_both_sides():
    """``initialize`` refused with ``-32022`` by a modern server, the protocol pinned to legacy."""
    with trio.fail_after(LIMIT):
        with pytest.raises(VersionMismatch) as caught:
            async with open_client("--era", "modern", protocol="2025-11-25"):
                pytest.fail("connected")  # pragma: no cover
    assert "2025-11-25" in str(caught.value)
    assert MODERN in str(caught.value)
    assert caught.value.offered == ("2025-11-25",)
    assert caught.value.answered == (MODERN,)


async def test_unknown_pinned_protocol_is_refused_before_starting():
    with pytest.raises(ValueError, match="protocol"):
        async with open_client(protocol="1999-01-01"):
            pytest.fail("connected")  # pragma: no cover


@pytest.mark.parametrize("options", [{"probe_timeout": 0}, {"max_rounds": 0}])
async def test_bad_options_are_refused(options):
    with pytest.raises(ValueError, match="must be"):
        async with open_client(**options):
            pytest.fail("connected")  # pragma: no cover


# ------------------------------------------------------- initialize answer


@pytest.mark.parametrize("answered", ["2026-07-28", "1999-01-01", "2025-11-26"])
async def test_initialize_answered_with_an_unknown_version_disconnects(tmp_path, answered):
    """The server picks a version we do not speak in the initialize era (edge 21)."""
    record = tmp_path / "wire.jsonl"
    with trio.fail_after(LIMIT):
        with pytest.raises(VersionMismatch) as caught:
            async with open_client("--era", "legacy", "--init-version", answered, "--record", str(record)):
                pytest.fail("connected")  # pragma: no cover
    assert answered in str(caught.value)
    assert "2025-11-25" in str(caught.value)
    assert caught.value.answered == (answered,)
    (run,) = recorded(record)
    assert not notifications(run, "notifications/initialized")
    assert [m["method"] for m in requests(run)] == ["server/discover", "initialize"]


async def test_initialize_answered_with_an_older_version_is_accepted():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", "--init-version", "2025-03-26") as client:
            assert client.era == "legacy"
            assert client.protocol_version == "2025-03-26"
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"


async def test_initialize_is_never_cancelled_on_timeout(tmp_path):
    """``initialize`` outliving ``request_timeout``: `RequestTimeout`, and no ``notifications/cancelled``."""
    record = tmp_path / "wire.jsonl"
    with trio.fail_after(LIMIT):
        with pytest.raises(RequestTimeout):
            async with open_client(
                "--era", "legacy", "--init-delay", "5", "--record", str(record), request_timeout=0.5
            ):
                pytest.fail("connected")  # pragma: no cover
    (run,) = recorded(record)
    (init,) = requests(run, "initialize")
    cancels = notifications(run, "notifications/cancelled")
    assert init["id"] not in [c["params"].get("requestId") for c in cancels]


async def test_initialize_is_never_cancelled_when_the_caller_gives_up(tmp_path):
    """The caller's scope cancelled during ``initialize``: Cancelled (no ExceptionGroup), no cancel sent."""
    record = tmp_path / "wire.jsonl"
    with trio.fail_after(LIMIT):
        with trio.move_on_after(0.5) as scope:
            async with open_client("--era", "legacy", "--init-delay", "5", "--record", str(record)):
                pytest.fail("connected")  # pragma: no cover
    assert scope.cancelled_caught
    (run,) = recorded(record)
    (init,) = requests(run, "initialize")
    cancels = notifications(run, "notifications/cancelled")
    assert init["id"] not in [c["params"].get("requestId") for c in cancels]


# ------------------------------------------------------------ targets


async def test_a_session_speaks_raw_json_rpc_to_the_same_target():
    """``open_session`` over a target gives a bare session: no handshake, requests as sent."""
    target = trio_mcp.ProcessTarget(sys.executable, server_args("--era", "legacy"))
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_session(target) as session:
            assert session.statistics().requests_sent == 0  # nothing sent on its own
            assert await session.request("ping") == {}
        async with trio_mcp.open_client(target) as client:
            assert client.era == "legacy"
            assert (await client.call_tool("echo", {"text": "mine"})).text == "mine"


async def test_a_target_may_refuse_a_restart_after_a_death_on_the_probe():
    """``restart_after_probe_death=False``: the death on the probe is the opener's error."""
    flags = server_args("--era", "legacy", "--discover", "exit")
    with trio.fail_after(LIMIT):
        target = trio_mcp.ProcessTarget(sys.executable, flags, restart_after_probe_death=False)
        with pytest.raises(ServerGone) as caught:
            async with trio_mcp.open_client(target):
                pytest.fail("connected")  # pragma: no cover
        assert caught.value.previous is None
        # The same server is started again when its target allows it (the default).
        async with trio_mcp.open_client(trio_mcp.ProcessTarget(sys.executable, flags)) as client:
            assert client.era == "legacy"


async def test_a_stream_target_is_never_restarted():
    assert trio_mcp.StreamTarget(trio.testing.memory_stream_pair()[0]).restart_after_probe_death is False
    assert trio_mcp.HTTPTarget("http://127.0.0.1:1/mcp").restart_after_probe_death is False
    assert trio_mcp.ProcessTarget("x").restart_after_probe_death is True


async def test_a_server_that_prints_a_banner_and_never_answers_fails_within_20_s(autojump_clock):
    # The defaults: the whole handshake (the probe and initialize) in 20 s,
    # and the error says what the server wrote instead of answering.
    from trio_mcp.testing import FakeServer, open_fake_client

    server = FakeServer(era="legacy", handshake=False, manual=True)

    async def banner():
        await server.expect_request("server/discover")
        await server.send_raw(b"Weather server v1.2 starting...\n")
        await server.send_raw(b"Listening on stdio\n")
        await server.send_raw(b'{"level": "info", "msg": "ready"}\n')

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(banner)
        with pytest.raises(RequestTimeout) as caught:
            async with open_fake_client(server):
                pass
    assert trio.current_time() - start == 20
    text = str(caught.value)
    assert "within 20 s (handshake_timeout)" in text
    assert "3 lines that are not JSON-RPC messages" in text
    assert "the first: 'Weather server v1.2 starting...'" in text
    assert caught.value.timeout == 20


async def test_the_handshake_timeout_bounds_the_probe_too(autojump_clock):
    from trio_mcp.testing import FakeServer, open_fake_client

    server = FakeServer(era="legacy", handshake=False, manual=True)
    start = trio.current_time()
    options = trio_mcp.ClientOptions(probe_timeout=10, handshake_timeout=4)
    with pytest.raises(RequestTimeout) as caught:
        async with open_fake_client(server, options=options):
            pass
    assert trio.current_time() - start == 4
    assert "server/discover" in str(caught.value)
    assert "not JSON" not in str(caught.value)


# ------------------------------------------------- the requests it settles


class ScriptedSession:
    """Just enough of a `Session` for `Requests`: each request gets the next scripted answer."""

    name = "scripted server"

    def __init__(self, *answers):
        self.answers = list(answers)
        self.sent = []

    async def request(self, method, params=None, *, on_notification=None, headers=(), long_lived=False):
        await trio.lowlevel.checkpoint()
        self.sent.append((method, params, headers))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def settled_requests(session, **options):
    from trio_mcp._client.handshake import Requests
    from trio_mcp._client.input import InputHandler
    from trio_mcp._client.notes import NotificationRouter
    from trio_mcp._core.extensions import ExtensionSet
    from trio_mcp._core.negotiation import Negotiated

    client_options = trio_mcp.ClientOptions(**options)
    handler = InputHandler(client_options, server=session.name)
    logged = []
    requests = Requests(
        session,
        client_info=CLIENT_INFO_WIRE,
        log_level=client_options.log_level,
        hooks=handler.hooks,
        extra_caps={},
        extensions=ExtensionSet(),
        input=handler,
        for_call=NotificationRouter(None, None, logged.append).for_call,
        tool_headers=lambda body: (),
        relist=trio.lowlevel.checkpoint,
        log=logged.append,
    )
    requests.settle(Negotiated("modern", MODERN))
    return requests


async def test_each_request_has_an_envelope_of_its_own():
    """The caller's params are never changed; each request's ``_meta`` is its own dict, with the
    log level of the moment and the caller's ``meta``."""
    session = ScriptedSession(*[{"ok": True}] * 4)
    requests = settled_requests(session, on_sampling=no_hook)
    arguments = {"name": "echo", "arguments": {"text": "a"}}
    await requests.request("tools/call", arguments, for_input=True)
    await requests.request("tools/call", arguments, for_input=True)
    requests.log_level = "info"
    await requests.request("tools/call", arguments, for_input=True, meta={"trace": 1})
    await requests.request("tools/list")
    envelopes = [params["_meta"] for _, params, _ in session.sent]
    assert arguments == {"name": "echo", "arguments": {"text": "a"}}
    assert envelopes[0] is not envelopes[1]
    assert (
        envelopes[0]
        == envelopes[1]
        == {
            PROTOCOL_VERSION: MODERN,
            CLIENT_CAPABILITIES: {"sampling": {}},
            CLIENT_INFO: CLIENT_INFO_WIRE,
        }
    )
    assert envelopes[2] == {**envelopes[0], "io.modelcontextprotocol/logLevel": "info", "trace": 1}
    assert envelopes[3] == {
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: {},
        CLIENT_INFO: CLIENT_INFO_WIRE,
        "io.modelcontextprotocol/logLevel": "info",
    }


async def test_a_capability_retry_declares_in_an_envelope_of_its_own():
    """``-32021`` naming the tasks extension: the retry declares it in an envelope of its own."""
    from trio_mcp import RpcError
    from trio_mcp._core.tasks import EXTENSION

    refused = RpcError(
        -32021,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )
    session = ScriptedSession(refused, {"ok": True}, {"ok": True})
    requests = settled_requests(session)
    assert await requests.request("x/run", {"a": 1}, for_input=True) == {"ok": True}
    await requests.request("x/run", {"a": 2}, for_input=True)
    (_, first, _), (_, retry, _), (_, later, _) = session.sent
    assert first["_meta"][CLIENT_CAPABILITIES] == {}
    assert retry["_meta"][CLIENT_CAPABILITIES] == {"extensions": {EXTENSION: {}}}
    assert later["_meta"][CLIENT_CAPABILITIES] == {}
