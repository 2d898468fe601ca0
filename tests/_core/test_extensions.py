"""The pure rules of client extensions (`trio_mcp._core.extensions`): identifiers, folding, declarations."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import trio_mcp
from trio_mcp._core.extensions import ExtensionSet, merge_declarations
from trio_mcp.extensions import Extension, NotificationBinding, RequestBinding, ResultClaim, check_identifier


async def _resolve(result, ctx):
    return result


@pytest.mark.parametrize(
    "identifier", ["io.modelcontextprotocol/ui", "com.example/notes", "example/x", "a.b-c.d9/n_a.m-e"]
)
def test_identifiers_with_a_prefix_are_taken(identifier: str) -> None:
    assert check_identifier(identifier) == identifier


@pytest.mark.parametrize(
    "identifier",
    ["ui", "/ui", "com.example/", "com..example/x", "9com/x", "com.example/x/y", "com.-x/y", " a/b"],
)
def test_identifiers_without_a_prefix_or_with_a_bad_label_are_refused(identifier: str) -> None:
    with pytest.raises(ValueError, match="not an extension identifier"):
        check_identifier(identifier)


def test_an_identifier_must_be_a_string() -> None:
    with pytest.raises(TypeError):
        check_identifier(3)


@pytest.mark.property
@given(st.text(max_size=30))
def test_an_accepted_identifier_has_one_slash_and_no_space(text: str) -> None:
    try:
        check_identifier(text)
    except ValueError:
        return
    assert text.count("/") == 1
    assert not any(ch.isspace() for ch in text)


def test_an_extension_keeps_its_settings_as_given() -> None:
    ext = Extension(identifier="com.example/notes", settings={"v": [1, 2]})
    assert ext.settings == {"v": [1, 2]}
    assert ext.methods is None


def test_the_tasks_extension_is_the_clients_own() -> None:
    with pytest.raises(ValueError, match="run by the client itself"):
        Extension(identifier="io.modelcontextprotocol/tasks")


@pytest.mark.parametrize("kind", ["complete", "input_required", "task"])
def test_core_result_types_cannot_be_claimed(kind: str) -> None:
    with pytest.raises(ValueError, match="belongs to the protocol"):
        ResultClaim(result_type=kind, resolve=_resolve)


def test_claims_attach_to_methods_that_may_answer_otherwise_than_complete() -> None:
    with pytest.raises(ValueError, match="a claim attaches"):
        ResultClaim(result_type="com.example/later", resolve=_resolve, methods={"tools/list"})
    claim = ResultClaim(
        result_type="com.example/later", resolve=_resolve, methods={"tools/call", "prompts/get"}
    )
    assert claim.methods == {"tools/call", "prompts/get"}


def test_two_extensions_may_not_share_an_identifier_a_result_type_or_a_method() -> None:
    a = Extension(identifier="com.example/a", claims=[ResultClaim(result_type="x", resolve=_resolve)])
    with pytest.raises(ValueError, match="given twice"):
        ExtensionSet([a, Extension(identifier="com.example/a")])
    b = Extension(identifier="com.example/b", claims=[ResultClaim(result_type="x", resolve=_resolve)])
    with pytest.raises(
        ValueError, match=r"'com\.example/a' and 'com\.example/b' both take the resultType 'x'"
    ):
        ExtensionSet([a, b])
    c = Extension(
        identifier="com.example/c", notifications=[NotificationBinding(method="n", handler=print)] * 2
    )
    with pytest.raises(ValueError, match="takes the notification 'n' twice"):
        ExtensionSet([c])
    d = Extension(identifier="com.example/d", requests=[RequestBinding(method="r", handler=print)])
    e = Extension(identifier="com.example/e", requests=[RequestBinding(method="r", handler=print)])
    with pytest.raises(ValueError, match="server request 'r'"):
        ExtensionSet([d, e])


def test_client_options_refuse_clashes_and_wrong_items_before_anything_starts() -> None:
    a = Extension(identifier="com.example/a")
    with pytest.raises(ValueError, match="given twice"):
        trio_mcp.ClientOptions(extensions=[a, a])
    with pytest.raises(TypeError, match="Extension items"):
        trio_mcp.ClientOptions(extensions=[{"com.example/a": {}}])
    with pytest.raises(TypeError, match="sequence of Extension"):
        trio_mcp.ClientOptions(extensions={"com.example/a": {}})
    with pytest.raises(TypeError, match="capabilities\\['extensions'\\]"):
        trio_mcp.ClientOptions(capabilities={"extensions": ["com.example/a"]})


def test_what_each_request_declares() -> None:
    everywhere = Extension(identifier="com.example/all", settings={"k": 1})
    some = Extension(identifier="com.example/some", methods={"tools/list"})
    folded = ExtensionSet([everywhere, some], raw={"org.raw/x": {"y": True}})
    assert folded.declared == {"org.raw/x": {"y": True}, "com.example/all": {"k": 1}, "com.example/some": {}}
    assert folded.for_method("tools/list") == {
        "org.raw/x": {"y": True},
        "com.example/all": {"k": 1},
        "com.example/some": {},
    }
    assert folded.for_method("prompts/list") == {"org.raw/x": {"y": True}, "com.example/all": {"k": 1}}
    assert not ExtensionSet()
    assert ExtensionSet().for_method("tools/list") == {}


def test_a_typed_extension_wins_over_a_raw_declaration_of_the_same_identifier() -> None:
    folded = ExtensionSet(
        [Extension(identifier="com.example/a", settings={"typed": 1})], raw={"com.example/a": {}}
    )
    assert folded.declared == {"com.example/a": {"typed": 1}}
    assert folded.for_method("tools/list") == {"com.example/a": {"typed": 1}}


def test_a_claim_is_found_by_result_type_and_method() -> None:
    claim = ResultClaim(result_type="com.example/later", resolve=_resolve)
    folded = ExtensionSet([Extension(identifier="com.example/a", claims=[claim])])
    assert folded.claim("tools/call", {"resultType": "com.example/later"}) is claim
    assert folded.owner_of_claim(claim) == "com.example/a"
    assert folded.claim("prompts/get", {"resultType": "com.example/later"}) is None
    assert folded.claim("tools/call", {"resultType": "complete"}) is None
    assert folded.claim("tools/call", {}) is None
    assert folded.claim("tools/call", {"resultType": "other"}) is None


def test_declarations_merge_into_capabilities_without_changing_them() -> None:
    caps = {"sampling": {}, "extensions": {"a/b": {}}}
    merged = merge_declarations(caps, {"c/d": {"x": 1}})
    assert merged == {"sampling": {}, "extensions": {"a/b": {}, "c/d": {"x": 1}}}
    assert caps == {"sampling": {}, "extensions": {"a/b": {}}}
    assert merge_declarations(caps, {}) == caps
