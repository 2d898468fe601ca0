"""Tests of `trio_mcp._core.eras`: what a request declares and what a result may say, in each era.

Covered: the capabilities a request declares (per era and version), the
2026-07-28 ``_meta`` envelope, ``resultType``, the params of a multi
round-trip retry, and the checks of the server's input requests. The rules
come from PROTOCOL.md sections 4.4, 6.1, 10 and 13 and the edge cases of
section 22.

Unit tests pin down one rule at a time. The properties (marked ``property``)
check what must hold for *every* input: capabilities declare only the hooks
given, retries never carry stale input, and an input request is accepted or
refused with a sentence, never an exception.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

from trio_mcp._core.eras import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LEGACY_VERSIONS,
    LOG_LEVEL,
    MODERN_VERSIONS,
    MRTR_METHODS,
    PROTOCOL_VERSION,
    Hooks,
    capabilities,
    input_problem,
    modern_meta,
    result_type,
    retry_params,
)
from trio_mcp._errors import ProtocolError

MODERN = "2026-07-28"
NEWEST_LEGACY = "2025-11-25"
ALL_OURS = MODERN_VERSIONS + LEGACY_VERSIONS
INPUT_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")
ALL_HOOKS = Hooks(elicitation=True, sampling=True, roots=True)


# ---------------------------------------------------------------- helpers


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
hooks_st = st.builds(Hooks, elicitation=st.booleans(), sampling=st.booleans(), roots=st.booleans())


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
