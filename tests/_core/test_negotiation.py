"""Tests of `trio_mcp._core.negotiation`: the era negotiation as a pure state machine, and its rules.

`Negotiator`: each test feeds it what a server did and checks what it says
to do next; the properties drive it with any sequence of outcomes and check
that it always ends, within four steps, with a decision (`Negotiated`,
`Fail` or `Restart`), and never with an exception of its own.

The rules it is built on: what the answer to a ``server/discover`` probe
means (`judge_probe`: PROTOCOL.md sections 3 and 4.4, edge cases 14-26 of
section 22) and the initialize version check (`check_initialize`). Their
properties check that the legacy fallback never depends on one error code,
and that the version chosen follows the intersection of the lists.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

from trio_mcp._core.eras import (
    HEADER_MISMATCH,
    LEGACY_VERSIONS,
    MISSING_CLIENT_CAPABILITY,
    MODERN_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from trio_mcp._core.negotiation import (
    Fail,
    Legacy,
    Modern,
    Negotiated,
    Negotiator,
    Restart,
    SendInitialize,
    SendProbe,
    check_initialize,
    judge_probe,
)
from trio_mcp._errors import ProtocolError, RpcError, ServerGone, VersionMismatch

MODERN = MODERN_VERSIONS[0]
NEWEST_LEGACY = LEGACY_VERSIONS[0]
ALL_OURS = MODERN_VERSIONS + LEGACY_VERSIONS
MODERN_ERRORS = (UNSUPPORTED_PROTOCOL_VERSION, MISSING_CLIENT_CAPABILITY, HEADER_MISMATCH)
UNKNOWN_VERSIONS = (
    "2099-01-01",
    "2026-07-29",
    "2025-11-24",
    "2024-11-04",
    "2026-07-28 ",
    "",
    "draft",
    "latest",
)


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


# ============================================================== the rules
#
# The pure functions the Negotiator is built on: judge_probe (what the
# answer to a server/discover probe means) and check_initialize.

# ------------------------------------------------------- helpers of the rules


def discover_result(versions: Any = (MODERN,), **extra: Any) -> dict[str, Any]:
    """A ``DiscoverResult`` listing ``versions`` (given as is when not a tuple)."""
    listed = list(versions) if isinstance(versions, tuple) else versions
    return {"resultType": "complete", "supportedVersions": listed, "capabilities": {}, **extra}


def unsupported_error(supported: Any, requested: str = MODERN) -> RpcError:
    """A ``-32022`` error answer naming ``supported``."""
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "unsupported protocol version",
        {"supported": supported, "requested": requested},
    )


def newest_shared(listed: Any, ours: tuple[str, ...]) -> str | None:
    """The spec's rule, stated independently: the highest version in (their list ∩ ours).

    Version strings order lexically as they do chronologically; items that are
    not strings name no version; a value that is not a list names nothing.
    """
    if not isinstance(listed, list):
        return None
    names = {item for item in listed if isinstance(item, str)}
    return max((v for v in ours if v in names), default=None)


def judged(*args: Any, **kwargs: Any) -> Modern | Legacy | VersionMismatch:
    """`judge_probe`'s verdict, or the `VersionMismatch` it raised."""
    try:
        return judge_probe(*args, **kwargs)
    except VersionMismatch as exc:
        return exc


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
version_strings = st.sampled_from(ALL_OURS + UNKNOWN_VERSIONS) | st.text(max_size=12)
version_items = version_strings | json_values
version_lists = st.lists(version_items, max_size=6)
# What a server may put where a version list belongs: usually a list, sometimes not.
listed_values = version_lists | json_values


# =============================================================== judge_probe


# ------------------------------------------------------ DiscoverResult


def test_discover_result_with_our_modern_version_is_modern() -> None:
    result = discover_result((MODERN,))
    verdict = judge_probe(result, None, requested=MODERN)
    assert verdict == Modern(MODERN, result, retry=False)
    assert verdict.discover is result


def test_discover_result_listing_both_eras_is_modern() -> None:
    result = discover_result(("2025-06-18", MODERN, NEWEST_LEGACY, "2099-01-01"))
    assert judge_probe(result, None, requested=MODERN) == Modern(MODERN, result)


def test_discover_result_never_asks_for_a_retry() -> None:
    """The probe was answered: the result is usable whatever version the probe carried."""
    result = discover_result((MODERN,))
    verdict = judge_probe(result, None, requested="2099-01-01")
    assert isinstance(verdict, Modern)
    assert verdict.version == MODERN
    assert verdict.retry is False


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        ((NEWEST_LEGACY,), NEWEST_LEGACY),
        (("2024-11-05", "2025-06-18", "2099-01-01"), "2025-06-18"),
        (("2024-11-05",), "2024-11-05"),
        (("2025-03-26", "2024-11-05", "2030-01-01"), "2025-03-26"),
    ],
)
def test_discover_result_with_only_legacy_overlap_is_legacy_at_the_newest(
    listed: tuple[str, ...], expected: str
) -> None:
    """Edge case 19: a dual-era server sharing only legacy versions is initialized at the newest."""
    verdict = judge_probe(discover_result(listed), None, requested=MODERN, legacy_offer="2024-11-05")
    assert isinstance(verdict, Legacy)
    assert verdict.version == expected
    assert verdict.why


def test_discover_result_sharing_nothing_is_a_version_mismatch() -> None:
    with pytest.raises(VersionMismatch) as caught:
        judge_probe(discover_result(("2099-01-01", "2027-01-01")), None, requested=MODERN)
    assert caught.value.offered == ALL_OURS
    assert caught.value.answered == ("2099-01-01", "2027-01-01")
    assert "2099-01-01" in str(caught.value)
    assert MODERN in str(caught.value)


@pytest.mark.parametrize(
    "listed",
    [
        MODERN,  # a string, not a list: not a list of one-character versions
        {MODERN: True},
        None,
        42,
        [],
        [[MODERN]],
        [{"version": MODERN}],
        [1, 2.5, None, True],
    ],
)
def test_discover_result_with_malformed_versions_is_not_usable_so_legacy(listed: Any) -> None:
    """Issue 4.2: a ``supportedVersions`` that names no version is not a usable DiscoverResult:
    ``initialize`` follows (whose answer decides), never an error."""
    verdict = judge_probe(discover_result(listed), None, requested=MODERN, legacy_offer="2025-06-18")
    assert isinstance(verdict, Legacy)
    assert verdict.version == "2025-06-18"


def test_discover_result_without_versions_is_legacy() -> None:
    verdict = judge_probe({"resultType": "complete", "capabilities": {}}, None, requested=MODERN)
    assert isinstance(verdict, Legacy)
    assert "supported versions" in verdict.why


def test_discover_result_ignores_non_string_items() -> None:
    result = discover_result([None, 5, {"v": 1}, [NEWEST_LEGACY], MODERN, True])
    assert judge_probe(result, None, requested=MODERN) == Modern(MODERN, result)
    result = discover_result([None, 5, {"v": MODERN}, [MODERN], "2025-06-18"])
    verdict = judge_probe(result, None, requested=MODERN)
    assert isinstance(verdict, Legacy)
    assert verdict.version == "2025-06-18"
    with pytest.raises(VersionMismatch) as caught:
        judge_probe(discover_result([None, "2099-01-01", 7, "x"]), None, requested=MODERN)
    assert caught.value.answered == ("2099-01-01", "x")


# ------------------------------------------------------ silence


@pytest.mark.parametrize("offer", LEGACY_VERSIONS)
def test_no_answer_within_the_timeout_is_legacy(offer: str) -> None:
    verdict = judge_probe(None, None, requested=MODERN, legacy_offer=offer)
    assert isinstance(verdict, Legacy)
    assert verdict.version == offer
    assert "timeout" in verdict.why


def test_no_answer_defaults_to_the_newest_legacy_offer() -> None:
    verdict = judge_probe(None, None, requested=MODERN)
    assert isinstance(verdict, Legacy)
    assert verdict.version == NEWEST_LEGACY == LEGACY_VERSIONS[0]


# ------------------------------------------------------ -32022


def test_unsupported_version_with_another_shared_modern_version_retries() -> None:
    verdict = judge_probe(
        None, unsupported_error([MODERN, NEWEST_LEGACY], "2099-01-01"), requested="2099-01-01"
    )
    assert verdict == Modern(MODERN, None, retry=True)


def test_unsupported_version_retry_ignores_order_and_junk() -> None:
    error = unsupported_error(["2099-01-01", None, NEWEST_LEGACY, 3, MODERN], "2027-01-01")
    assert judge_probe(None, error, requested="2027-01-01") == Modern(MODERN, None, retry=True)


@pytest.mark.parametrize(
    ("supported", "expected"),
    [
        ([NEWEST_LEGACY], NEWEST_LEGACY),
        (["2099-01-01", "2025-06-18", "2024-11-05"], "2025-06-18"),
        (["2024-11-05", "2025-03-26"], "2025-03-26"),
    ],
)
def test_unsupported_version_with_only_legacy_overlap_is_legacy_at_that_version(
    supported: list[str], expected: str
) -> None:
    """Edge case 19: initialize at the shared legacy version (not at ``legacy_offer``)."""
    verdict = judge_probe(None, unsupported_error(supported), requested=MODERN, legacy_offer="2024-11-05")
    assert isinstance(verdict, Legacy)
    assert verdict.version == expected


def test_unsupported_version_sharing_nothing_is_a_version_mismatch_naming_both_sides() -> None:
    with pytest.raises(VersionMismatch) as caught:
        judge_probe(None, unsupported_error(["2099-01-01", 5, "2030-02-02"]), requested=MODERN)
    exc = caught.value
    assert exc.offered == ALL_OURS
    assert exc.answered == ("2099-01-01", "2030-02-02")
    text = str(exc)
    assert "2099-01-01" in text
    assert "2030-02-02" in text
    assert MODERN in text


@pytest.mark.parametrize(
    "data",
    [None, "text", 5, [MODERN], {}, {"supported": MODERN}, {"supported": None}, {"requested": MODERN}],
)
def test_unsupported_version_with_malformed_data_is_legacy(data: Any) -> None:
    """Issue 4.2: a ``-32022`` without a usable list of versions is no usable answer: initialize."""
    error = RpcError(UNSUPPORTED_PROTOCOL_VERSION, "unsupported", data)
    verdict = judge_probe(None, error, requested=MODERN, legacy_offer="2024-11-05")
    assert isinstance(verdict, Legacy)
    assert verdict.version == "2024-11-05"


@pytest.mark.parametrize(
    "error",
    [
        ProtocolError("the error for request 1 is a str, not an object"),
        ProtocolError("the error for request 1 has a non-integer code '-32601': 'Method not found'"),
        ProtocolError("the error for request 1 (code -32601) has no message"),
    ],
)
def test_a_broken_error_answer_is_legacy(error: ProtocolError) -> None:
    """Issue 4.2: a malformed error answer to the probe means initialize, never an abort."""
    verdict = judge_probe(None, error, requested=MODERN)
    assert isinstance(verdict, Legacy)
    assert verdict.version == NEWEST_LEGACY


def test_unsupported_version_listing_only_the_refused_version_is_a_mismatch() -> None:
    """Retrying the very version the server refused would loop: nothing is shared."""
    with pytest.raises(VersionMismatch) as caught:
        judge_probe(None, unsupported_error([MODERN]), requested=MODERN)
    assert caught.value.answered == (MODERN,)


def test_unsupported_version_listing_the_refused_version_falls_to_shared_legacy() -> None:
    verdict = judge_probe(None, unsupported_error([MODERN, "2025-06-18"]), requested=MODERN)
    assert isinstance(verdict, Legacy)
    assert verdict.version == "2025-06-18"


# ------------------------------------------------------ other errors


@pytest.mark.parametrize("code", [MISSING_CLIENT_CAPABILITY, HEADER_MISMATCH])
def test_other_recognised_modern_errors_are_modern_at_the_requested_version(code: int) -> None:
    verdict = judge_probe(None, RpcError(code, "x", {"requiredCapabilities": {}}), requested=MODERN)
    assert verdict == Modern(MODERN, None, retry=False)


@pytest.mark.parametrize(
    "code",
    [
        -32601,  # method not found
        -32602,  # invalid params (also "not initialized")
        -32600,
        -32603,
        -32700,
        -32000,
        -32002,
        -32001,  # pre-release numbering of -32020 (edge case 20)
        -32003,  # pre-release numbering of -32021
        -32004,  # pre-release numbering of -32022
        -32019,
        -32023,
        -32042,
        -32099,
        -1,
        0,
        1,
        32022,
        2**63,
    ],
)
def test_any_other_error_is_legacy(code: int) -> None:
    """Section 3: the fallback must not depend on one specific error code."""
    error = RpcError(code, "whatever", {"supported": [MODERN], "requested": MODERN})
    verdict = judge_probe(None, error, requested=MODERN, legacy_offer="2025-06-18")
    assert isinstance(verdict, Legacy)
    assert verdict.version == "2025-06-18"
    assert str(code) in verdict.why


@pytest.mark.property
@given(
    code=(st.integers(-32768, -32000) | st.integers()).filter(lambda c: c not in MODERN_ERRORS),
    message=st.text(max_size=20),
    data=json_values | st.fixed_dictionaries({"supported": version_lists, "requested": version_strings}),
    requested=version_strings,
    offer=st.sampled_from(LEGACY_VERSIONS),
)
def test_every_unrecognised_error_code_falls_back_to_legacy(
    code: int, message: str, data: Any, requested: str, offer: str
) -> None:
    verdict = judge_probe(None, RpcError(code, message, data), requested=requested, legacy_offer=offer)
    assert isinstance(verdict, Legacy)
    assert verdict.version == offer


@pytest.mark.property
@given(
    code=st.sampled_from((MISSING_CLIENT_CAPABILITY, HEADER_MISMATCH)),
    data=json_values,
    requested=version_strings,
)
def test_recognised_non_version_errors_are_always_modern(code: int, data: Any, requested: str) -> None:
    assert judge_probe(None, RpcError(code, "m", data), requested=requested) == Modern(requested, None)


@pytest.mark.property
@given(supported=listed_values, requested=version_strings, offer=st.sampled_from(LEGACY_VERSIONS))
def test_unsupported_version_follows_the_intersection(supported: Any, requested: str, offer: str) -> None:
    """-32022: retry at a new shared modern version, else initialize at shared legacy, else mismatch."""
    modern = newest_shared(supported, MODERN_VERSIONS)
    legacy = newest_shared(supported, LEGACY_VERSIONS)
    verdict = judged(None, unsupported_error(supported, requested), requested=requested, legacy_offer=offer)
    named = [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []
    if not named:
        # No usable list: initialize decides.
        assert verdict == Legacy(offer, verdict.why)
    elif isinstance(verdict, VersionMismatch):
        assert modern is None or modern == requested
        assert legacy is None
        assert verdict.offered == ALL_OURS
        assert list(verdict.answered) == named
    elif modern is not None and modern != requested:
        assert verdict == Modern(modern, None, retry=True)
    else:
        assert isinstance(verdict, Legacy)
        assert legacy is not None
        assert verdict.version == legacy


@pytest.mark.property
@given(
    listed=listed_values,
    requested=version_strings,
    extra=st.dictionaries(st.text(max_size=5), json_values, max_size=3),
)
def test_discover_result_follows_the_intersection(listed: Any, requested: str, extra: dict[str, Any]) -> None:
    result = {**extra, "supportedVersions": listed}
    modern = newest_shared(listed, MODERN_VERSIONS)
    legacy = newest_shared(listed, LEGACY_VERSIONS)
    verdict = judged(result, None, requested=requested)
    named = [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []
    if not named:
        # Not a usable DiscoverResult: initialize decides.
        assert verdict == Legacy(LEGACY_VERSIONS[0], verdict.why)
    elif isinstance(verdict, VersionMismatch):
        assert modern is None
        assert legacy is None
        assert verdict.offered == ALL_OURS
        assert list(verdict.answered) == named
    elif modern is not None:
        assert verdict == Modern(modern, result, retry=False)
    else:
        assert isinstance(verdict, Legacy)
        assert verdict.version == legacy


# ========================================================== check_initialize


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
@pytest.mark.parametrize("offered", LEGACY_VERSIONS)
def test_check_initialize_accepts_every_legacy_version(version: str, offered: str) -> None:
    """A server may answer with another version than offered; any legacy one we speak is fine."""
    assert check_initialize({"protocolVersion": version, "capabilities": {}}, offered) == version


def test_check_initialize_accepts_exactly_four_versions() -> None:
    assert set(LEGACY_VERSIONS) == {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}


@pytest.mark.parametrize("version", [MODERN, *UNKNOWN_VERSIONS, "2025-11-25T00:00:00", "2025-6-18"])
def test_check_initialize_refuses_other_versions(version: str) -> None:
    """Edge case 21: including the modern revision, which has no initialize."""
    with pytest.raises(VersionMismatch) as caught:
        check_initialize({"protocolVersion": version}, NEWEST_LEGACY)
    assert caught.value.offered == (NEWEST_LEGACY,)
    assert caught.value.answered == (version,)


@pytest.mark.parametrize("value", [None, 20251125, ["2025-11-25"], {"v": "2025-11-25"}, True])
def test_check_initialize_without_a_version_string_is_a_protocol_error(value: Any) -> None:
    with pytest.raises(ProtocolError):
        check_initialize({"protocolVersion": value}, NEWEST_LEGACY)
    with pytest.raises(ProtocolError):
        check_initialize({}, NEWEST_LEGACY)


@pytest.mark.property
@given(version=version_strings, offered=st.sampled_from(LEGACY_VERSIONS))
def test_check_initialize_accepts_a_string_iff_it_is_legacy(version: str, offered: str) -> None:
    if version in LEGACY_VERSIONS:
        assert check_initialize({"protocolVersion": version}, offered) == version
    else:
        with pytest.raises(VersionMismatch):
            check_initialize({"protocolVersion": version}, offered)
