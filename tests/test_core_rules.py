"""Tests of the pure protocol rules in `trio_mcp._core`: eras, negotiation, the cache.

Covered: the era probe (`judge_probe`), the initialize version check, the
capabilities and ``_meta`` a request declares, ``resultType``, the params of
a multi round-trip retry, input request checks, ``ttlMs`` clamping and the
TTL cache. The rules come from PROTOCOL.md sections 3, 4.4, 6.1, 10 and 13
and edge cases 14-26 and 33 of section 22.

Unit tests pin down one rule at a time. The properties (marked ``property``)
check what must hold for *every* input: the legacy fallback never depends on
one error code, version choice follows the intersection of the lists,
retries never carry stale input, and `TtlCache` agrees with a plain dict
model under any sequence of puts, gets, notifications and clock moves.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from trio_mcp._core.cache import TtlCache, clamp_ttl
from trio_mcp._core.eras import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    HEADER_MISMATCH,
    LEGACY_VERSIONS,
    LOG_LEVEL,
    MISSING_CLIENT_CAPABILITY,
    MODERN_VERSIONS,
    MRTR_METHODS,
    PROTOCOL_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    Hooks,
    capabilities,
    input_problem,
    modern_meta,
    result_type,
    retry_params,
)
from trio_mcp._core.negotiation import Legacy, Modern, check_initialize, judge_probe
from trio_mcp._errors import ProtocolError, RpcError, VersionMismatch

MODERN = "2026-07-28"
NEWEST_LEGACY = "2025-11-25"
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
INPUT_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")
ALL_HOOKS = Hooks(elicitation=True, sampling=True, roots=True)

CACHEABLE = (
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)


# ---------------------------------------------------------------- helpers


def discover(versions: Any = (MODERN,), **extra: Any) -> dict[str, Any]:
    """A ``DiscoverResult`` listing ``versions`` (given as is when not a tuple)."""
    listed = list(versions) if isinstance(versions, tuple) else versions
    return {"resultType": "complete", "supportedVersions": listed, "capabilities": {}, **extra}


def unsupported(supported: Any, requested: str = MODERN) -> RpcError:
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
hooks_st = st.builds(Hooks, elicitation=st.booleans(), sampling=st.booleans(), roots=st.booleans())


# =============================================================== judge_probe


# ------------------------------------------------------ DiscoverResult


def test_discover_result_with_our_modern_version_is_modern() -> None:
    result = discover((MODERN,))
    verdict = judge_probe(result, None, requested=MODERN)
    assert verdict == Modern(MODERN, result, retry=False)
    assert verdict.discover is result


def test_discover_result_listing_both_eras_is_modern() -> None:
    result = discover(("2025-06-18", MODERN, NEWEST_LEGACY, "2099-01-01"))
    assert judge_probe(result, None, requested=MODERN) == Modern(MODERN, result)


def test_discover_result_never_asks_for_a_retry() -> None:
    """The probe was answered: the result is usable whatever version the probe carried."""
    result = discover((MODERN,))
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
    verdict = judge_probe(discover(listed), None, requested=MODERN, legacy_offer="2024-11-05")
    assert isinstance(verdict, Legacy)
    assert verdict.version == expected
    assert verdict.why


def test_discover_result_sharing_nothing_is_a_version_mismatch() -> None:
    with pytest.raises(VersionMismatch) as caught:
        judge_probe(discover(("2099-01-01", "2027-01-01")), None, requested=MODERN)
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
    verdict = judge_probe(discover(listed), None, requested=MODERN, legacy_offer="2025-06-18")
    assert isinstance(verdict, Legacy)
    assert verdict.version == "2025-06-18"


def test_discover_result_without_versions_is_legacy() -> None:
    verdict = judge_probe({"resultType": "complete", "capabilities": {}}, None, requested=MODERN)
    assert isinstance(verdict, Legacy)
    assert "supported versions" in verdict.why


def test_discover_result_ignores_non_string_items() -> None:
    result = discover([None, 5, {"v": 1}, [NEWEST_LEGACY], MODERN, True])
    assert judge_probe(result, None, requested=MODERN) == Modern(MODERN, result)
    result = discover([None, 5, {"v": MODERN}, [MODERN], "2025-06-18"])
    verdict = judge_probe(result, None, requested=MODERN)
    assert isinstance(verdict, Legacy)
    assert verdict.version == "2025-06-18"
    with pytest.raises(VersionMismatch) as caught:
        judge_probe(discover([None, "2099-01-01", 7, "x"]), None, requested=MODERN)
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
    verdict = judge_probe(None, unsupported([MODERN, NEWEST_LEGACY], "2099-01-01"), requested="2099-01-01")
    assert verdict == Modern(MODERN, None, retry=True)


def test_unsupported_version_retry_ignores_order_and_junk() -> None:
    error = unsupported(["2099-01-01", None, NEWEST_LEGACY, 3, MODERN], "2027-01-01")
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
    verdict = judge_probe(None, unsupported(supported), requested=MODERN, legacy_offer="2024-11-05")
    assert isinstance(verdict, Legacy)
    assert verdict.version == expected


def test_unsupported_version_sharing_nothing_is_a_version_mismatch_naming_both_sides() -> None:
    with pytest.raises(VersionMismatch) as caught:
        judge_probe(None, unsupported(["2099-01-01", 5, "2030-02-02"]), requested=MODERN)
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
        judge_probe(None, unsupported([MODERN]), requested=MODERN)
    assert caught.value.answered == (MODERN,)


def test_unsupported_version_listing_the_refused_version_falls_to_shared_legacy() -> None:
    verdict = judge_probe(None, unsupported([MODERN, "2025-06-18"]), requested=MODERN)
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
    verdict = judged(None, unsupported(supported, requested), requested=requested, legacy_offer=offer)
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


# ============================================================== capabilities


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_no_elicitation_before_2025_06_18(version: str) -> None:
    caps = capabilities(ALL_HOOKS, version)
    assert "elicitation" not in caps
    assert caps == {"roots": {"listChanged": False}, "sampling": {}}


def test_elicitation_at_2025_06_18_is_an_empty_object() -> None:
    assert capabilities(Hooks(elicitation=True), "2025-06-18") == {"elicitation": {}}


@pytest.mark.parametrize("version", [NEWEST_LEGACY, MODERN])
def test_elicitation_declares_form_and_url_from_2025_11_25(version: str) -> None:
    assert capabilities(Hooks(elicitation=True), version) == {"elicitation": {"form": {}, "url": {}}}


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_legacy_roots_shape(version: str) -> None:
    assert capabilities(Hooks(roots=True), version) == {"roots": {"listChanged": False}}


def test_modern_roots_shape_has_no_list_changed() -> None:
    assert capabilities(Hooks(roots=True), MODERN) == {"roots": {}}


@pytest.mark.parametrize("version", ALL_OURS)
def test_sampling_is_an_empty_object(version: str) -> None:
    """Never ``sampling.tools`` or ``sampling.context``: the client supports neither."""
    assert capabilities(Hooks(sampling=True), version) == {"sampling": {}}


@pytest.mark.parametrize("version", ALL_OURS)
def test_no_hooks_declare_nothing(version: str) -> None:
    assert capabilities(Hooks(), version) == {}
    assert capabilities(Hooks(), version, for_input=False) == {}


def test_modern_requests_that_take_no_input_declare_nothing() -> None:
    assert capabilities(ALL_HOOKS, MODERN, for_input=False) == {}
    assert capabilities(ALL_HOOKS, MODERN, for_input=True) == {
        "roots": {},
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
    }


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_legacy_capabilities_are_per_session_not_per_request(version: str) -> None:
    assert capabilities(ALL_HOOKS, version, for_input=False) == capabilities(ALL_HOOKS, version)


def test_capabilities_are_fresh_objects() -> None:
    first = capabilities(ALL_HOOKS, MODERN)
    first["elicitation"]["form"]["x"] = 1
    first["roots"]["y"] = 2
    assert capabilities(ALL_HOOKS, MODERN) == {
        "roots": {},
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
    }


@pytest.mark.property
@given(hooks=hooks_st, version=st.sampled_from(ALL_OURS), for_input=st.booleans())
def test_capabilities_declare_only_given_hooks(hooks: Hooks, version: str, for_input: bool) -> None:
    caps = capabilities(hooks, version, for_input=for_input)
    if version in MODERN_VERSIONS and not for_input:
        assert caps == {}
        return
    assert ("roots" in caps) == hooks.roots
    assert ("sampling" in caps) == hooks.sampling
    assert ("elicitation" in caps) == (hooks.elicitation and version >= "2025-06-18")
    assert set(caps) <= {"roots", "sampling", "elicitation"}


# =============================================================== modern_meta


def test_modern_meta_carries_the_required_keys() -> None:
    caps = {"sampling": {}}
    info = {"name": "c", "version": "1"}
    assert modern_meta(MODERN, caps, info) == {
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: caps,
        CLIENT_INFO: info,
    }
    assert PROTOCOL_VERSION == "io.modelcontextprotocol/protocolVersion"
    assert CLIENT_CAPABILITIES == "io.modelcontextprotocol/clientCapabilities"
    assert CLIENT_INFO == "io.modelcontextprotocol/clientInfo"
    assert LOG_LEVEL == "io.modelcontextprotocol/logLevel"


def test_modern_meta_declares_empty_capabilities() -> None:
    """``{}`` is required even when nothing optional is declared."""
    meta = modern_meta(MODERN, {}, {"name": "c", "version": "1"})
    assert meta[CLIENT_CAPABILITIES] == {}


def test_modern_meta_optional_keys() -> None:
    info = {"name": "c", "version": "1"}
    meta = modern_meta(MODERN, {}, info, log_level="debug", progress_token=7)
    assert meta[LOG_LEVEL] == "debug"
    assert meta["progressToken"] == 7
    meta = modern_meta(MODERN, {}, info, progress_token=0)
    assert meta["progressToken"] == 0
    assert LOG_LEVEL not in meta
    meta = modern_meta(MODERN, {}, info, progress_token="")
    assert meta["progressToken"] == ""
    meta = modern_meta(MODERN, {}, info)
    assert "progressToken" not in meta
    assert LOG_LEVEL not in meta


def test_modern_meta_extra_keys_cannot_override_required_ones() -> None:
    extra = {
        PROTOCOL_VERSION: "2099-01-01",
        CLIENT_CAPABILITIES: {"x": {}},
        CLIENT_INFO: {},
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
    }
    before = dict(extra)
    meta = modern_meta(MODERN, {}, {"name": "c", "version": "1"}, extra=extra)
    assert meta[PROTOCOL_VERSION] == MODERN
    assert meta[CLIENT_CAPABILITIES] == {}
    assert meta[CLIENT_INFO] == {"name": "c", "version": "1"}
    assert meta["traceparent"] == extra["traceparent"]
    assert extra == before


# =============================================================== result_type


@pytest.mark.parametrize(
    "method", [*sorted(MRTR_METHODS), "tools/list", "server/discover", "completion/complete"]
)
def test_missing_result_type_is_complete(method: str) -> None:
    assert result_type(method, {}) == "complete"
    assert result_type(method, {"content": []}) == "complete"
    assert result_type(method, {"resultType": "complete"}) == "complete"


def test_input_required_is_allowed_on_exactly_three_methods() -> None:
    assert sorted(MRTR_METHODS) == ["prompts/get", "resources/read", "tools/call"]
    for method in MRTR_METHODS:
        assert result_type(method, {"resultType": "input_required"}) == "input_required"


@pytest.mark.parametrize(
    "method",
    [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "server/discover",
        "completion/complete",
        "subscriptions/listen",
        "Tools/call",
        "",
    ],
)
def test_input_required_elsewhere_is_a_protocol_error(method: str) -> None:
    with pytest.raises(ProtocolError):
        result_type(method, {"resultType": "input_required"})


@pytest.mark.parametrize(
    "kind",
    ["task", "Complete", "complete ", "INPUT_REQUIRED", "", None, 0, 1, True, [], {}, ["complete"]],
)
def test_unknown_result_type_is_a_protocol_error(kind: Any) -> None:
    """Edge case 22: e.g. ``task`` without the tasks extension."""
    for method in ("tools/call", "tools/list"):
        with pytest.raises(ProtocolError):
            result_type(method, {"resultType": kind})


@pytest.mark.property
@given(method=st.sampled_from((*sorted(MRTR_METHODS), "tools/list")) | st.text(max_size=15), kind=json_values)
def test_result_type_is_complete_input_required_or_a_protocol_error(method: str, kind: Any) -> None:
    try:
        verdict = result_type(method, {"resultType": kind})
    except ProtocolError:
        assert kind != "complete"
        assert kind != "input_required" or method not in MRTR_METHODS
    else:
        assert verdict == kind
        assert kind == "complete" or method in MRTR_METHODS


# ============================================================== retry_params


def test_retry_adds_this_rounds_answers_and_state() -> None:
    params = {"name": "t", "arguments": {"a": 1}}
    out = retry_params(params, {"k": {"action": "accept"}}, "opaque")
    assert out == {
        "name": "t",
        "arguments": {"a": 1},
        "inputResponses": {"k": {"action": "accept"}},
        "requestState": "opaque",
    }
    assert params == {"name": "t", "arguments": {"a": 1}}


def test_retry_never_carries_earlier_answers_or_state() -> None:
    """Edge case 26 and section 10: answers of earlier rounds are not accumulated."""
    params = {"name": "t", "inputResponses": {"old": {}}, "requestState": "old-state"}
    assert retry_params(params, None, None) == {"name": "t"}
    assert retry_params(params, {"new": {"action": "decline"}}, None) == {
        "name": "t",
        "inputResponses": {"new": {"action": "decline"}},
    }
    assert retry_params(params, None, "new-state") == {"name": "t", "requestState": "new-state"}
    assert params == {"name": "t", "inputResponses": {"old": {}}, "requestState": "old-state"}


def test_retry_without_state_has_no_request_state() -> None:
    assert "requestState" not in retry_params({"uri": "file:///x"}, {"k": {}}, None)


def test_retry_passes_even_an_empty_request_state() -> None:
    """``""`` is a state the server sent: it goes back unchanged."""
    assert retry_params({"name": "t"}, None, "")["requestState"] == ""


@pytest.mark.parametrize(
    "state", ["  padded  ", "a\nb\r\n", "\u2028\u0085", "é\x00\ud7ff", '{"json": true}', "x" * 10_000]
)
def test_retry_passes_request_state_byte_for_byte(state: str) -> None:
    out = retry_params({"name": "t"}, None, state)
    assert out["requestState"] == state
    assert out["requestState"].encode("utf-8", "surrogatepass") == state.encode("utf-8", "surrogatepass")


@pytest.mark.property
@given(
    params=st.dictionaries(
        st.sampled_from(["name", "arguments", "uri", "_meta", "inputResponses", "requestState"])
        | st.text(max_size=6),
        json_values,
        max_size=6,
    ),
    responses=st.none() | st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=3),
    state=st.none() | st.text(),
)
def test_retry_params_property(
    params: dict[str, Any], responses: dict[str, Any] | None, state: str | None
) -> None:
    before = dict(params)
    out = retry_params(params, responses, state)
    assert params == before
    for key, value in params.items():
        if key not in ("inputResponses", "requestState"):
            assert out[key] == value
    assert set(out) - {"inputResponses", "requestState"} == set(params) - {"inputResponses", "requestState"}
    if responses is None:
        assert "inputResponses" not in out
    else:
        assert out["inputResponses"] == responses
    if state is None:
        assert "requestState" not in out
    else:
        assert type(out["requestState"]) is str
        assert out["requestState"] == state
        assert len(out["requestState"]) == len(state)


# ============================================================= input_problem


@pytest.mark.parametrize(
    "method", ["ping", "tasks/get", "elicitation/complete", "roots", "", None, 5, ["roots/list"]]
)
def test_unknown_input_methods_are_refused(method: Any) -> None:
    problem = input_problem(method, {}, ALL_HOOKS, MODERN)
    assert problem is not None
    assert repr(method) in problem


@pytest.mark.parametrize(
    ("method", "hook"),
    [
        ("elicitation/create", "on_elicitation"),
        ("sampling/createMessage", "on_sampling"),
        ("roots/list", "on_roots"),
    ],
)
def test_input_without_its_hook_is_refused_naming_the_hook(method: str, hook: str) -> None:
    for version in (MODERN, NEWEST_LEGACY):
        problem = input_problem(method, {}, Hooks(), version)
        assert problem is not None
        assert hook in problem
    given_hook = Hooks(**{method.split("/")[0]: True})
    assert (
        input_problem(method, {"message": "m", "requestedSchema": {"type": "object"}}, given_hook, MODERN)
        is None
    )


@pytest.mark.parametrize("version", [MODERN, NEWEST_LEGACY, "2025-06-18"])
@pytest.mark.parametrize("params", [{"message": "m"}, {"mode": "form", "message": "m"}, None])
def test_form_elicitation_is_accepted(version: str, params: Any) -> None:
    assert input_problem("elicitation/create", params, ALL_HOOKS, version) is None


@pytest.mark.parametrize("version", [MODERN, NEWEST_LEGACY])
def test_url_elicitation_is_accepted_where_declared(version: str) -> None:
    params = {"mode": "url", "message": "m", "url": "https://example.com"}
    assert input_problem("elicitation/create", params, ALL_HOOKS, version) is None


def test_url_elicitation_is_refused_at_2025_06_18() -> None:
    """``elicitation: {}`` at 2025-06-18 means form only."""
    params = {"mode": "url", "message": "m", "url": "https://example.com"}
    problem = input_problem("elicitation/create", params, ALL_HOOKS, "2025-06-18")
    assert problem is not None
    assert "url" in problem


@pytest.mark.parametrize("mode", ["URL", "popup", "", 1, ["form"], {"url": {}}])
def test_unknown_elicitation_modes_are_refused(mode: Any) -> None:
    problem = input_problem("elicitation/create", {"mode": mode, "message": "m"}, ALL_HOOKS, MODERN)
    assert problem is not None


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_elicitation_is_refused_before_2025_06_18(version: str) -> None:
    """Edge cases 24, 35 and 38: no elicitation before 2025-06-18, where it was never declared."""
    assert "elicitation" not in capabilities(ALL_HOOKS, version)
    assert input_problem("elicitation/create", {"message": "m"}, ALL_HOOKS, version) is not None


@pytest.mark.parametrize(
    "params",
    [
        {"messages": [], "maxTokens": 10, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
        {"messages": [], "maxTokens": 10, "toolChoice": {"mode": "auto"}},
    ],
)
def test_sampling_with_tools_is_refused_without_sampling_tools(params: dict[str, Any]) -> None:
    assert "tools" not in capabilities(ALL_HOOKS, MODERN)["sampling"]
    assert input_problem("sampling/createMessage", params, ALL_HOOKS, MODERN) is not None


@pytest.mark.property
@given(
    method=st.sampled_from(INPUT_METHODS) | json_values,
    params=json_values,
    hooks=hooks_st,
    version=st.sampled_from(ALL_OURS),
)
def test_input_problem_is_a_sentence_or_none(method: Any, params: Any, hooks: Hooks, version: str) -> None:
    problem = input_problem(method, params, hooks, version)
    if method not in INPUT_METHODS or not getattr(hooks, method.split("/")[0]):
        assert isinstance(problem, str)
        assert problem
    else:
        assert problem is None or isinstance(problem, str)


# ================================================================ clamp_ttl


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 0),
        (0, 0),
        (1, 1),
        (3_600_000, 3_600_000),
        (-1, 0),
        (-3_600_000, 0),
        (0.0, 0),
        (-0.0, 0),
        (0.4, 0),
        (0.999, 0),
        (1.5, 1),
        (1000.9, 1000),
        (-0.5, 0),
        (-1e300, 0),
        (math.nan, 0),
        (-math.nan, 0),
        (-math.inf, 0),
        (True, 0),
        (False, 0),
        ("1000", 0),
        ("", 0),
        ("inf", 0),
        ([1000], 0),
        ({"ms": 1000}, 0),
    ],
)
def test_clamp_ttl(value: Any, expected: int) -> None:
    """Edge case 33: missing, negative, fractional and non-numbers become a non-negative int."""
    clamped = clamp_ttl(value)
    assert clamped == expected
    assert type(clamped) is int


def test_clamp_ttl_of_infinity_is_a_large_int_the_cache_can_use() -> None:
    clamped = clamp_ttl(math.inf)
    assert type(clamped) is int
    assert clamped >= 10**12  # more than 30 years
    cache = TtlCache()
    cache.put("tools/list", "", "v", clamped, 100.0)
    assert cache.get("tools/list", "", 100.0 + 10**9) == "v"


def test_every_clamped_ttl_can_be_stored() -> None:
    cache = TtlCache()
    cache.put("tools/list", "", "v", clamp_ttl(10**400), 0.0)
    assert cache.get("tools/list", "", 1.0) == "v"


@pytest.mark.property
@given(
    value=st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.none()
    | st.text(max_size=5)
    | json_values
)
def test_clamp_ttl_is_a_non_negative_int(value: Any) -> None:
    clamped = clamp_ttl(value)
    assert type(clamped) is int
    assert clamped >= 0
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) or value <= 0:
        assert clamped == 0
    elif math.isfinite(value) and value <= 2**62:
        assert clamped == math.floor(value)
    else:
        assert clamped == 2**62  # about 146 million years


# ================================================================== TtlCache


def test_fresh_until_exactly_t_plus_ttl() -> None:
    """Section 13: fresh ⇔ now < t_received + ttlMs."""
    cache = TtlCache()
    cache.put("tools/list", "", "page", 1000, 10.0)
    assert cache.get("tools/list", "", 10.0) == "page"
    assert cache.get("tools/list", "", 10.999) == "page"
    assert cache.get("tools/list", "", math.nextafter(11.0, 0.0)) == "page"
    assert cache.get("tools/list", "", 11.0) is None
    assert len(cache) == 0


@pytest.mark.parametrize("ttl", [250, 500, 2000])
def test_stale_entries_stay_stale(ttl: int) -> None:
    cache = TtlCache()
    cache.put("resources/read", "file:///a", "r", ttl, 4.0)
    assert cache.get("resources/read", "file:///a", 4.0 + ttl / 1000 - 0.001) == "r"
    assert cache.get("resources/read", "file:///a", 4.0 + ttl / 1000) is None
    assert cache.get("resources/read", "file:///a", 4.0 + ttl / 1000 + 100) is None


@pytest.mark.parametrize("ttl", [0, -1, -1000])
def test_zero_or_negative_ttl_is_not_stored(ttl: int) -> None:
    cache = TtlCache()
    cache.put("tools/list", "", "page", ttl, 1.0)
    assert len(cache) == 0
    assert cache.get("tools/list", "", 1.0) is None


def test_an_uncacheable_answer_replaces_a_cached_one() -> None:
    """The newest answer says "don't keep": the older one must not be served either."""
    cache = TtlCache()
    cache.put("tools/list", "", "old", 10_000, 1.0)
    cache.put("tools/list", "", "new", 0, 2.0)
    assert cache.get("tools/list", "", 2.0) is None


def test_a_newer_answer_replaces_the_older_one() -> None:
    cache = TtlCache()
    cache.put("tools/list", "", "old", 10_000, 1.0)
    cache.put("tools/list", "", "new", 500, 2.0)
    assert cache.get("tools/list", "", 2.25) == "new"
    assert cache.get("tools/list", "", 2.5) is None
    assert len(cache) == 0


def test_entries_are_keyed_by_method_and_key() -> None:
    cache = TtlCache()
    cache.put("tools/list", "", "tools", 1000, 0.0)
    cache.put("prompts/list", "", "prompts", 1000, 0.0)
    cache.put("tools/list", "c1", "tools page 2", 1000, 0.0)
    assert cache.get("tools/list", "", 0.5) == "tools"
    assert cache.get("prompts/list", "", 0.5) == "prompts"
    assert cache.get("tools/list", "c1", 0.5) == "tools page 2"
    assert cache.get("resources/list", "", 0.5) is None
    assert cache.get("tools/list", "c2", 0.5) is None


def filled() -> TtlCache:
    cache = TtlCache()
    for method in CACHEABLE:
        cache.put(method, "", method, 60_000, 0.0)
        cache.put(method, "c1", f"{method} c1", 60_000, 0.0)
    for uri in ("file:///a", "file:///a/b", "file:///ab", "mem://x"):
        cache.put("resources/read", uri, uri, 60_000, 0.0)
    return cache


def present(cache: TtlCache) -> set[tuple[str, str]]:
    keys = [(m, k) for m in CACHEABLE for k in ("", "c1")]
    keys += [("resources/read", u) for u in ("file:///a", "file:///a/b", "file:///ab", "mem://x")]
    return {key for key in keys if cache.get(*key, 1.0) is not None}


ALL_KEYS = present(filled())


@pytest.mark.parametrize(
    ("method", "dropped"),
    [
        ("notifications/tools/list_changed", {"tools/list"}),
        ("notifications/prompts/list_changed", {"prompts/list"}),
        ("notifications/resources/list_changed", {"resources/list", "resources/templates/list"}),
    ],
)
def test_list_changed_drops_every_page_of_its_list(method: str, dropped: set[str]) -> None:
    cache = filled()
    cache.invalidate({"jsonrpc": "2.0", "method": method})
    assert present(cache) == {key for key in ALL_KEYS if key[0] not in dropped}


@pytest.mark.parametrize(
    ("uri", "dropped"),
    [
        ("file:///a/b", {"file:///a/b"}),
        ("file:///a", {"file:///a", "file:///a/b", "file:///ab"}),
        ("mem://x", {"mem://x"}),
        ("mem://y", set()),
        ("", {"", "c1", "file:///a", "file:///a/b", "file:///ab", "mem://x"}),
    ],
)
def test_resources_updated_drops_reads_by_uri_prefix(uri: str, dropped: set[str]) -> None:
    cache = filled()
    cache.invalidate({"method": "notifications/resources/updated", "params": {"uri": uri}})
    assert present(cache) == ALL_KEYS - {("resources/read", key) for key in dropped}


@pytest.mark.parametrize("params", [None, {}, {"uri": None}, {"uri": 5}, [], "file:///a"])
def test_resources_updated_without_a_uri_drops_every_read(params: Any) -> None:
    """Edge case 28 spirit: when in doubt, invalidate globally."""
    cache = filled()
    note: dict[str, Any] = {"method": "notifications/resources/updated"}
    if params is not None:
        note["params"] = params
    cache.invalidate(note)
    assert present(cache) == {key for key in ALL_KEYS if key[0] != "resources/read"}


@pytest.mark.parametrize(
    "note",
    [
        {},
        {"method": "notifications/message", "params": {"level": "info", "data": "x"}},
        {"method": "notifications/progress"},
        {"method": "notifications/tools/list_changed/extra"},
        {"method": None},
        {"method": 5},
        {"method": "notifications/roots/list_changed"},
        {"method": "notifications/subscriptions/acknowledged", "params": {}},
    ],
)
def test_other_notifications_drop_nothing(note: dict[str, Any]) -> None:
    cache = filled()
    cache.invalidate(note)
    assert present(cache) == ALL_KEYS


def test_clear_forgets_everything() -> None:
    cache = filled()
    cache.clear()
    assert len(cache) == 0
    assert present(cache) == set()


def test_size_is_bounded_and_the_newest_entry_kept() -> None:
    cache = TtlCache(max_entries=3)
    for i in range(10):
        cache.put("resources/read", f"u{i}", i, 60_000, float(i))
        assert len(cache) <= 3
        assert cache.get("resources/read", f"u{i}", float(i)) == i
    assert len(cache) == 3


def test_stale_entries_are_evicted_before_fresh_ones() -> None:
    cache = TtlCache(max_entries=3)
    cache.put("tools/list", "a", "a", 60_000, 0.0)
    cache.put("tools/list", "b", "b", 1_000, 0.0)
    cache.put("tools/list", "c", "c", 60_000, 0.0)
    cache.put("tools/list", "d", "d", 60_000, 5.0)
    assert len(cache) == 3
    assert [cache.get("tools/list", k, 5.0) for k in "abcd"] == ["a", None, "c", "d"]


def test_refreshing_a_stored_key_at_capacity_evicts_nothing() -> None:
    cache = TtlCache(max_entries=2)
    cache.put("tools/list", "a", "a", 60_000, 0.0)
    cache.put("tools/list", "b", "b1", 60_000, 0.0)
    cache.put("tools/list", "b", "b2", 60_000, 1.0)
    assert cache.get("tools/list", "b", 2.0) == "b2"
    assert cache.get("tools/list", "a", 2.0) == "a"


# ------------------------------------------------------ cache machine

CACHE_KEYS = ("", "c1", "file:///a", "file:///a/b", "file:///ab")
NOTES = [
    {"method": "notifications/tools/list_changed"},
    {"method": "notifications/prompts/list_changed"},
    {"method": "notifications/resources/list_changed"},
    {"method": "notifications/resources/updated", "params": {"uri": "file:///a"}},
    {"method": "notifications/resources/updated", "params": {"uri": "file:///a/b"}},
    {"method": "notifications/resources/updated", "params": {"uri": "file:///abc"}},
    {"method": "notifications/resources/updated", "params": {}},
    {"method": "notifications/message", "params": {"level": "info", "data": 1}},
    {},
]
LIST_CHANGED = {
    "notifications/tools/list_changed": {"tools/list"},
    "notifications/prompts/list_changed": {"prompts/list"},
    "notifications/resources/list_changed": {"resources/list", "resources/templates/list"},
}
HORIZON = 1e6
raw_ttls = (
    st.integers(-2_000, 5_000)
    | st.sampled_from([0, 1, 250, 500, 1000])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.none()
    | st.booleans()
    | st.text(max_size=3)
)


class CacheMachine(RuleBasedStateMachine):
    """`TtlCache` against a dict from (method, key) to (expiry, value).

    The model keeps expired entries until they are read (so it can bound the
    cache's length from both sides) and answers `get` by the spec's rule:
    fresh while ``now < received + ttlMs``. The clock only moves forwards,
    sometimes exactly onto an entry's expiry.
    """

    MAX = 1024  # never reached (30 keys at most): the model is exact

    def __init__(self) -> None:
        super().__init__()
        self.cache = TtlCache(max_entries=self.MAX)
        self.model: dict[tuple[str, str], tuple[float, int]] = {}
        self.now = 0.0
        self.counter = 0

    def fresh(self) -> dict[tuple[str, str], int]:
        return {k: v for k, (until, v) in self.model.items() if self.now < until}

    def lost(self, key: tuple[str, str]) -> None:
        """The cache may forget an entry (only the bounded variant allows it)."""
        raise AssertionError(f"{key} was forgotten while fresh")

    @rule(method=st.sampled_from(CACHEABLE), key=st.sampled_from(CACHE_KEYS), raw=raw_ttls)
    def put(self, method: str, key: str, raw: Any) -> None:
        self.counter += 1
        ttl = clamp_ttl(raw)
        self.cache.put(method, key, self.counter, ttl, self.now)
        if ttl > 0:
            self.model[(method, key)] = (self.now + ttl / 1000, self.counter)
            assert self.cache.get(method, key, self.now) == self.counter
        else:
            self.model.pop((method, key), None)
            assert self.cache.get(method, key, self.now) is None

    @rule(method=st.sampled_from(CACHEABLE), key=st.sampled_from(CACHE_KEYS))
    def get(self, method: str, key: str) -> None:
        got = self.cache.get(method, key, self.now)
        expected = self.fresh().get((method, key))
        if got is None and expected is not None:
            self.lost((method, key))
        else:
            assert got == expected
        if got is None:
            self.model.pop((method, key), None)

    @rule(delta=st.sampled_from([0.0, 0.001, 0.1, 0.25, 0.5, 1.0, 3.0]) | st.floats(0, 10))
    def tick(self, delta: float) -> None:
        self.now += delta

    def ahead(self) -> list[float]:
        # Expiries a monotonic clock can reach (within about 11 days): far out,
        # a float clock has no millisecond resolution left (an inf ttlMs
        # expires some 146,000 years from now).
        return sorted(until for until, _ in self.model.values() if self.now < until < HORIZON)

    @precondition(lambda self: bool(self.ahead()))
    @rule(index=st.integers(0, 100))
    def jump_to_an_expiry(self, index: int) -> None:
        ahead = self.ahead()
        self.now = ahead[index % len(ahead)]

    @rule(note=st.sampled_from(NOTES))
    def notify(self, note: dict[str, Any]) -> None:
        self.cache.invalidate(note)
        method = note.get("method")
        if method in LIST_CHANGED:
            gone = [k for k in self.model if k[0] in LIST_CHANGED[method]]
        elif method == "notifications/resources/updated":
            uri = note["params"].get("uri")
            gone = [
                k for k in self.model if k[0] == "resources/read" and (uri is None or k[1].startswith(uri))
            ]
        else:
            gone = []
        for key in gone:
            del self.model[key]
            assert self.cache.get(*key, self.now) is None

    @rule()
    def clear(self) -> None:
        self.cache.clear()
        self.model.clear()
        assert len(self.cache) == 0

    @invariant()
    def length_is_bounded(self) -> None:
        assert len(self.fresh()) <= len(self.cache) <= len(self.model)


class BoundedCacheMachine(CacheMachine):
    """The same model with room for only three entries.

    The cache may now forget an entry, but only one that was stored when a
    later ``put`` found the cache full; it never serves a wrong or stale
    value, and never holds more than ``MAX`` entries.
    """

    MAX = 3

    def __init__(self) -> None:
        super().__init__()
        self.at_risk: set[tuple[str, str]] = set()

    @rule(method=st.sampled_from(CACHEABLE), key=st.sampled_from(CACHE_KEYS), raw=raw_ttls)
    def put(self, method: str, key: str, raw: Any) -> None:
        if len(self.cache) >= self.MAX:
            self.at_risk |= set(self.model)
        super().put(method, key, raw)
        self.at_risk.discard((method, key))

    def lost(self, key: tuple[str, str]) -> None:
        assert key in self.at_risk, f"{key} was forgotten while fresh, though no put found the cache full"

    @invariant()
    def length_is_bounded(self) -> None:
        assert len(self.cache) <= self.MAX


TestCache = pytest.mark.property(CacheMachine.TestCase)
TestBoundedCache = pytest.mark.property(BoundedCacheMachine.TestCase)
