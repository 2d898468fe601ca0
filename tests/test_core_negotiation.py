"""The era negotiation as a pure state machine: `trio_mcp._core.negotiation.Negotiator`.

Each test feeds the negotiator what a server did and checks what it says to
do next; the properties drive it with any sequence of outcomes and check
that it always ends, within four steps, with a decision (`Negotiated`,
`Fail` or `Restart`), and never with an exception of its own.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

from trio_mcp._core.eras import LEGACY_VERSIONS, MODERN_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION
from trio_mcp._core.negotiation import (
    Fail,
    Negotiated,
    Negotiator,
    Restart,
    SendInitialize,
    SendProbe,
)
from trio_mcp._errors import ProtocolError, RpcError, ServerGone, VersionMismatch

MODERN = MODERN_VERSIONS[0]
NEWEST_LEGACY = LEGACY_VERSIONS[0]


def discover(*versions: str) -> dict[str, Any]:
    return {"supportedVersions": list(versions), "capabilities": {}}


def initialize(version: str = NEWEST_LEGACY) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}


def unsupported(*versions: str) -> RpcError:
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {"supported": list(versions)}
    )


# ----------------------------------------------------------------- start


def test_auto_starts_with_a_timed_probe_at_the_newest_modern_version():
    assert Negotiator("auto").start() == SendProbe(MODERN, timed=True)


def test_pinned_modern_starts_with_an_untimed_probe():
    assert Negotiator(MODERN).start() == SendProbe(MODERN, timed=False)


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_pinned_legacy_starts_with_initialize_at_that_version(version):
    assert Negotiator(version).start() == SendInitialize(version)


def test_a_restarted_server_gets_initialize_at_once():
    assert Negotiator("auto", restarted=True).start() == SendInitialize(NEWEST_LEGACY)


def test_an_unknown_protocol_is_refused():
    with pytest.raises(ValueError, match="protocol"):
        Negotiator("2099-01-01")


def test_reports_out_of_order_are_bugs_of_the_caller():
    negotiator = Negotiator("auto")
    with pytest.raises(RuntimeError):
        negotiator.initialize_answered(initialize())
    negotiator.start()
    with pytest.raises(RuntimeError):
        negotiator.start()
    with pytest.raises(RuntimeError):
        negotiator.initialize_failed(RpcError(-32601, "x"))


# ------------------------------------------------------------ auto: probe


def test_a_discover_result_settles_the_modern_era():
    negotiator = Negotiator("auto")
    negotiator.start()
    result = discover(MODERN, NEWEST_LEGACY)
    assert negotiator.probe_answered(result) == Negotiated("modern", MODERN, discover=result)
    assert negotiator.state == "done"


@pytest.mark.parametrize(
    "answer",
    [
        RpcError(-32601, "Method not found"),
        RpcError(-32602, "Invalid params"),
        ProtocolError("the error for request 1 is a str, not an object"),
        ProtocolError("the error for request 1 has a non-integer code '-32601': 'x'"),
        ProtocolError("the error for request 1 (code -32601) has no message"),
        RpcError(UNSUPPORTED_PROTOCOL_VERSION, "no list", None),
    ],
)
def test_any_error_that_is_no_usable_answer_means_initialize(answer):
    """Issue 4.2: malformed error answers fall back, as well-formed ones do."""
    negotiator = Negotiator("auto")
    negotiator.start()
    assert negotiator.probe_failed(answer) == SendInitialize(NEWEST_LEGACY)
    result = initialize("2025-06-18")
    assert negotiator.initialize_answered(result) == Negotiated("legacy", "2025-06-18", initialize=result)


@pytest.mark.parametrize(
    "result", [{}, {"supportedVersions": "2026-07-28"}, {"supportedVersions": [1, None]}]
)
def test_a_result_that_is_no_usable_discover_result_means_initialize(result):
    negotiator = Negotiator("auto")
    negotiator.start()
    assert negotiator.probe_answered(result) == SendInitialize(NEWEST_LEGACY)


def test_silence_means_initialize():
    negotiator = Negotiator("auto")
    negotiator.start()
    assert negotiator.probe_timed_out() == SendInitialize(NEWEST_LEGACY)


def test_a_legacy_overlap_initializes_at_the_shared_version():
    negotiator = Negotiator("auto")
    negotiator.start()
    assert negotiator.probe_answered(discover("2099-01-01", "2025-03-26")) == SendInitialize("2025-03-26")


def test_sharing_nothing_fails_with_a_version_mismatch():
    negotiator = Negotiator("auto")
    negotiator.start()
    step = negotiator.probe_answered(discover("2099-01-01"))
    assert isinstance(step, Fail)
    assert isinstance(step.error, VersionMismatch)
    assert step.error.answered == ("2099-01-01",)


def test_a_refused_version_is_probed_once_more_at_a_shared_one(monkeypatch):
    monkeypatch.setattr("trio_mcp._core.negotiation.MODERN_VERSIONS", ("2027-01-01", MODERN))
    negotiator = Negotiator("auto")
    assert negotiator.start() == SendProbe("2027-01-01", timed=True)
    assert negotiator.probe_failed(unsupported(MODERN)) == SendProbe(MODERN, timed=True)
    result = discover(MODERN)
    assert negotiator.probe_answered(result) == Negotiated("modern", MODERN, discover=result)


def test_a_server_that_dies_on_the_probe_is_restarted_in_auto_mode():
    negotiator = Negotiator("auto")
    negotiator.start()
    assert negotiator.probe_killed_server(ServerGone("died")) == Restart()


def test_a_restarted_server_that_dies_again_is_not_restarted_twice():
    negotiator = Negotiator("auto", restarted=True)
    negotiator.start()
    gone = ServerGone("died again")
    assert negotiator.initialize_failed(gone) == Fail(gone)


# ------------------------------------------------------- auto: initialize


def test_initialize_refused_naming_a_modern_version_switches_to_modern():
    """A modern server taken for legacy (slow on the probe) says so when asked to initialize."""
    negotiator = Negotiator("auto")
    negotiator.start()
    negotiator.probe_timed_out()
    assert negotiator.initialize_failed(unsupported(MODERN, "2099-01-01")) == SendProbe(MODERN, timed=False)
    assert negotiator.state == "switching"
    result = discover(MODERN)
    assert negotiator.probe_answered(result) == Negotiated("modern", MODERN, discover=result)


def test_switching_then_no_description_fails_with_what_the_server_said():
    negotiator = Negotiator("auto")
    negotiator.start()
    negotiator.probe_timed_out()
    negotiator.initialize_failed(unsupported(MODERN))
    error = RpcError(-32601, "Method not found")
    assert negotiator.probe_failed(error) == Fail(error)


def test_initialize_refused_listing_nothing_shared_is_a_mismatch():
    negotiator = Negotiator("auto")
    negotiator.start()
    negotiator.probe_timed_out()
    refusal = unsupported("2099-01-01")
    step = negotiator.initialize_failed(refusal)
    assert isinstance(step, Fail)
    assert isinstance(step.error, VersionMismatch)
    assert step.error.__cause__ is refusal


def test_initialize_answered_at_a_version_we_do_not_speak_is_a_mismatch():
    negotiator = Negotiator("auto", restarted=True)
    negotiator.start()
    step = negotiator.initialize_answered(initialize(MODERN))
    assert isinstance(step, Fail)
    assert isinstance(step.error, VersionMismatch)


def test_initialize_answered_without_a_version_is_a_protocol_error():
    negotiator = Negotiator("auto", restarted=True)
    negotiator.start()
    step = negotiator.initialize_answered({"capabilities": {}})
    assert isinstance(step, Fail)
    assert isinstance(step.error, ProtocolError)


def test_other_initialize_errors_fail_as_they_are():
    negotiator = Negotiator("2025-11-25")
    negotiator.start()
    error = RpcError(-32603, "boom")
    assert negotiator.initialize_failed(error) == Fail(error)


# ---------------------------------------------------------------- pinned


def test_pinned_modern_turns_an_initialize_era_answer_into_a_mismatch():
    negotiator = Negotiator(MODERN)
    negotiator.start()
    step = negotiator.probe_failed(RpcError(-32601, "Method not found"))
    assert isinstance(step, Fail)
    assert isinstance(step.error, VersionMismatch)
    assert MODERN in str(step.error)


def test_pinned_modern_does_not_restart_a_dying_server():
    negotiator = Negotiator(MODERN)
    negotiator.start()
    gone = ServerGone("died")
    assert negotiator.probe_killed_server(gone) == Fail(gone)


def test_pinned_legacy_does_not_switch_to_modern():
    negotiator = Negotiator("2025-06-18")
    negotiator.start()
    step = negotiator.initialize_failed(unsupported(MODERN))
    assert isinstance(step, Fail)
    assert isinstance(step.error, VersionMismatch)


# ------------------------------------------------------------ properties

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
versions = st.sampled_from((*MODERN_VERSIONS, *LEGACY_VERSIONS, "2099-01-01", "")) | st.text(max_size=12)
version_lists = st.lists(versions | json_scalars, max_size=4) | json_scalars
results = st.fixed_dictionaries(
    {}, optional={"supportedVersions": version_lists, "protocolVersion": versions}
)
errors = st.builds(
    RpcError,
    st.sampled_from((UNSUPPORTED_PROTOCOL_VERSION, -32021, -32020, -32601, -32602, -32603)) | st.integers(),
    st.text(max_size=10),
    st.none() | st.fixed_dictionaries({}, optional={"supported": version_lists}) | json_scalars,
) | st.builds(ProtocolError, st.text(max_size=10))

outcomes = st.one_of(
    st.tuples(st.just("answered"), results),
    st.tuples(st.just("failed"), errors),
    st.tuples(st.just("silence"), st.none()),
    st.tuples(st.just("died"), st.none()),
)


@pytest.mark.property
@given(
    protocol=st.sampled_from(("auto", *MODERN_VERSIONS, *LEGACY_VERSIONS)),
    restarted=st.booleans(),
    script=st.lists(outcomes, min_size=4, max_size=4),
)
def test_any_server_behaviour_ends_in_a_decision_within_four_steps(protocol, restarted, script):
    negotiator = Negotiator(protocol, restarted=restarted)
    step = negotiator.start()
    for kind, value in script:
        if isinstance(step, Negotiated | Fail | Restart):
            break
        if isinstance(step, SendProbe):
            if kind == "answered":
                step = negotiator.probe_answered(value)
            elif kind == "failed":
                step = negotiator.probe_failed(value)
            elif kind == "silence" and step.timed:
                step = negotiator.probe_timed_out()
            else:
                step = negotiator.probe_killed_server(ServerGone("died"))
        else:
            assert isinstance(step, SendInitialize)
            assert step.version in LEGACY_VERSIONS
            if kind == "answered":
                step = negotiator.initialize_answered(value)
            elif kind == "failed":
                step = negotiator.initialize_failed(value)
            else:
                step = negotiator.initialize_failed(ServerGone("died"))
    assert isinstance(step, Negotiated | Fail | Restart)
    assert negotiator.state == "done"
    if isinstance(step, Restart):
        assert protocol == "auto"
        assert not restarted
    if isinstance(step, Negotiated):
        assert step.version in (MODERN_VERSIONS if step.era == "modern" else LEGACY_VERSIONS)
        if protocol in LEGACY_VERSIONS:
            assert step.era == "legacy"
        if protocol in MODERN_VERSIONS:
            assert step.era == "modern"
    if isinstance(step, Fail):
        assert isinstance(step.error, Exception)
