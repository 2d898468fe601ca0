"""The models and their wire format (``trio_mcp._models``: ``types`` and ``codec``).

* Round trip: wire -> model -> wire is the identity for a representative
  message of every model, with unknown keys and ``_meta`` at every level,
  and for the official schema examples (up to the documented normalizations:
  ``resultType`` is consumed, ``isError`` is always written).
* What `unstructure` writes is valid against the official schema definition
  of the same name, in revisions 2026-07-28 and 2025-11-25.
* Bad shapes are one `ProtocolError` whose message names the model and the
  path of the bad field; never a cattrs error or an ExceptionGroup.
* The special rules: unknown content types, ``ttlMs`` clamping (the cache's
  rule), defaults for missing fields, the ``mode`` and ``text``/``blob``
  discriminators.
* The models stand apart from the converter: importing them loads no cattrs.
* Properties (Hypothesis): whatever JSON object comes in, `structure` gives a
  model or a `ProtocolError`, and a model survives unstructure/structure.

The schemas are read from ``mcp-schema/`` in the folder beside the repository
(``../shared/mcp-schema``), or from the folder named by ``MCP_SCHEMA_DIR``;
without them the schema tests are skipped, saying why.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import ast_support
import attrs
import pytest
from hypothesis import given, strategies as st
from schema_support import NO_SCHEMAS, SCHEMA_DIR, defs, validator

from trio_mcp import ProtocolError, _models as models
from trio_mcp._core.cache import TtlCache, clamp_ttl
from trio_mcp._models import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    CompleteResult,
    Completion,
    ContentBlock,
    CreateMessageParams,
    CreateMessageResult,
    DiscoverResult,
    ElicitFormParams,
    ElicitRequestParams,
    ElicitResult,
    ElicitUrlParams,
    EmbeddedResource,
    GetPromptResult,
    Icon,
    ImageContent,
    Implementation,
    InitializeResult,
    InputRequest,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ListToolsResult,
    ModelHint,
    ModelPreferences,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceLink,
    ResourceTemplate,
    Root,
    SamplingMessage,
    ServerCapabilities,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
    UnknownContent,
    codec,
    structure,
    to_wire,
    types as model_types,
    unstructure,
)
from trio_mcp._models.codec import _wire_name

REVISIONS = ("2026-07-28", "2025-11-25")
EXAMPLES = SCHEMA_DIR / "examples" / "2026-07-28"

#: Schema definitions named differently from the model.
DEFINITION = {
    ElicitFormParams: "ElicitRequestFormParams",
    ElicitUrlParams: "ElicitRequestURLParams",
    CreateMessageParams: "CreateMessageRequestParams",
}

#: Every model class (UnknownContent is tested on its own: no schema has it).
MODEL_CLASSES = model_types.MODELS


def test_every_public_model_is_registered():
    """A model class missing from the registry would escape every test below."""
    public = {getattr(models, name) for name in models.__all__}
    classes = {obj for obj in public if isinstance(obj, type) and attrs.has(obj)}
    assert classes - {UnknownContent} == set(MODEL_CLASSES)


RESULTS = (
    CallToolResult,
    ListToolsResult,
    GetPromptResult,
    ListPromptsResult,
    ReadResourceResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    CompleteResult,
    DiscoverResult,
    InitializeResult,
    InputRequiredResult,
)


# ------------------------------------------------------------ representative messages


def wire(fields: dict) -> dict:
    """A wire object with a ``_meta`` and a key from the future, beside ``fields``."""
    return {
        **fields,
        "_meta": {"com.example/trace": "t-1", "com.example/n": [1, 2.5, None, True]},
        "xFutureField": {"since": "2027-01-01", "values": ["a", {"b": None}]},
    }


ICON = wire(
    {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}
)
ANNOTATIONS = wire(
    {"audience": ["user", "assistant"], "priority": 0.7, "lastModified": "2025-05-03T14:30:00Z"}
)
IMPLEMENTATION = wire(
    {
        "name": "ExampleServer",
        "version": "1.0.0",
        "title": "Example Server",
        "description": "Weather and files",
        "websiteUrl": "https://example.com",
        "icons": [ICON],
    }
)
TEXT_CONTENTS = wire({"uri": "file:///example.txt", "mimeType": "text/plain", "text": "Resource content"})
BLOB_CONTENTS = wire({"uri": "file:///example.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="})
TEXT = wire({"type": "text", "text": "Current weather in New York: 72F", "annotations": ANNOTATIONS})
IMAGE = wire(
    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "annotations": {"priority": 1}}
)
AUDIO = wire({"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"})
RESOURCE_LINK = wire(
    {
        "type": "resource_link",
        "uri": "file:///project/src/main.rs",
        "name": "main.rs",
        "title": "Main file",
        "description": "Primary application entry point",
        "mimeType": "text/x-rust",
        "size": 1024,
        "icons": [ICON],
        "annotations": ANNOTATIONS,
    }
)
EMBEDDED_TEXT = wire({"type": "resource", "resource": TEXT_CONTENTS, "annotations": ANNOTATIONS})
EMBEDDED_BLOB = wire({"type": "resource", "resource": BLOB_CONTENTS})
TOOL_USE = wire({"type": "tool_use", "id": "call_abc123", "name": "get_weather", "input": {"city": "Paris"}})
TOOL_RESULT = wire(
    {
        "type": "tool_result",
        "toolUseId": "call_abc123",
        "content": [TEXT, IMAGE],
        "structuredContent": {"temperature": 18},
        "isError": False,
    }
)
TOOL_ANNOTATIONS = wire(
    {
        "title": "Weather",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
)
TOOL = wire(
    {
        "name": "get_weather",
        "title": "Weather Information Provider",
        "description": "Get current weather information for a location",
        "inputSchema": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "City name or zip code"}},
            "required": ["location"],
        },
        "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}},
        "annotations": TOOL_ANNOTATIONS,
        "icons": [ICON],
        "execution": {"taskSupport": "optional"},
    }
)
CALL_TOOL_RESULT = wire(
    {
        "content": [TEXT, IMAGE, AUDIO, RESOURCE_LINK, EMBEDDED_TEXT, EMBEDDED_BLOB],
        "structuredContent": {"temperature": 22.5, "conditions": "Partly cloudy"},
        "isError": False,
    }
)
PROMPT_ARGUMENT = wire(
    {"name": "code", "title": "Code", "description": "The code to review", "required": True}
)
PROMPT = wire(
    {
        "name": "code_review",
        "title": "Request Code Review",
        "description": "Asks the LLM to analyze code quality",
        "arguments": [PROMPT_ARGUMENT],
        "icons": [ICON],
    }
)
PROMPT_MESSAGE = wire({"role": "user", "content": TEXT})
GET_PROMPT_RESULT = wire(
    {
        "description": "Code review prompt",
        "messages": [PROMPT_MESSAGE, wire({"role": "assistant", "content": EMBEDDED_TEXT})],
    }
)
RESOURCE = wire(
    {
        "uri": "file:///project/README.md",
        "name": "README.md",
        "title": "Project Documentation",
        "description": "The read-me",
        "mimeType": "text/markdown",
        "size": 2048,
        "annotations": ANNOTATIONS,
        "icons": [ICON],
    }
)
RESOURCE_TEMPLATE = wire(
    {
        "uriTemplate": "file:///{path}",
        "name": "Project Files",
        "title": "Project Files",
        "description": "Access files in the project directory",
        "mimeType": "application/octet-stream",
        "annotations": ANNOTATIONS,
        "icons": [ICON],
    }
)
CACHE = {"ttlMs": 600000, "cacheScope": "public"}
LIST_TOOLS_RESULT = wire(
    {"tools": [TOOL, {"name": "noop", "inputSchema": {"type": "object"}}], "nextCursor": "p2", **CACHE}
)
LIST_PROMPTS_RESULT = wire({"prompts": [PROMPT], "nextCursor": "", **CACHE})
LIST_RESOURCES_RESULT = wire({"resources": [RESOURCE], "nextCursor": "eyJwYWdlIjogM30=", **CACHE})
LIST_RESOURCE_TEMPLATES_RESULT = wire({"resourceTemplates": [RESOURCE_TEMPLATE], **CACHE})
READ_RESOURCE_RESULT = wire(
    {"contents": [TEXT_CONTENTS, BLOB_CONTENTS], "ttlMs": 60000, "cacheScope": "private"}
)
COMPLETION = wire({"values": ["python", "pytorch", "pyside"], "total": 10, "hasMore": True})
COMPLETE_RESULT = wire({"completion": COMPLETION})
ROOT = wire({"uri": "file:///home/user/projects/myproject", "name": "My Project"})
LIST_ROOTS_RESULT = wire({"roots": [ROOT, {"uri": "file:///srv/shared"}]})
ELICIT_FORM = wire(
    {
        "mode": "form",
        "message": "Please provide your contact information",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Your full name"},
                "age": {"type": "number", "minimum": 18},
            },
            "required": ["name"],
        },
    }
)
ELICIT_URL = wire(
    {
        "mode": "url",
        "message": "Please provide your API key to continue.",
        "url": "https://mcp.example.com/ui/set_api_key",
        "elicitationId": "e-42",
    }
)
ELICIT_RESULT = wire({"action": "accept", "content": {"name": "Monalisa Octocat", "age": 30, "tags": ["a"]}})
SAMPLING_MESSAGE = wire({"role": "user", "content": TEXT})
SAMPLING_MESSAGE_LIST = wire(
    {"role": "user", "content": [TOOL_RESULT, wire({**TOOL_RESULT, "toolUseId": "c2"})]}
)
MODEL_HINT = wire({"name": "claude-3-sonnet"})
MODEL_PREFERENCES = wire(
    {
        "hints": [MODEL_HINT, {"name": "claude"}],
        "costPriority": 0.3,
        "speedPriority": 1,
        "intelligencePriority": 0.5,
    }
)
TOOL_CHOICE = wire({"mode": "required"})
CREATE_MESSAGE_PARAMS = wire(
    {
        "messages": [
            SAMPLING_MESSAGE,
            wire({"role": "assistant", "content": [TOOL_USE]}),
            SAMPLING_MESSAGE_LIST,
        ],
        "maxTokens": 1000,
        "modelPreferences": MODEL_PREFERENCES,
        "systemPrompt": "You are a helpful assistant.",
        "includeContext": "none",
        "temperature": 0.5,
        "stopSequences": ["\n\nHuman:"],
        "metadata": {"provider": {"top_k": 3}},
        "tools": [TOOL],
        "toolChoice": {"mode": "auto"},
    }
)
CREATE_MESSAGE_RESULT = wire(
    {"role": "assistant", "content": TEXT, "model": "claude-3-sonnet-20240307", "stopReason": "endTurn"}
)
CREATE_MESSAGE_RESULT_LIST = wire(
    {"role": "assistant", "content": [TOOL_USE, TOOL_USE], "model": "m", "stopReason": "toolUse"}
)
SERVER_CAPABILITIES = wire(
    {
        "experimental": {"com.example/beta": {"on": True}},
        "logging": {},
        "completions": {},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": False},
        "tasks": {"list": {}, "cancel": {}},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }
)
DISCOVER_RESULT = {
    **wire(
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": SERVER_CAPABILITIES,
            "instructions": "Prefer get_weather for forecasts.",
            "ttlMs": 3600000,
            "cacheScope": "public",
        }
    ),
    "_meta": {"io.modelcontextprotocol/serverInfo": IMPLEMENTATION, "com.example/x": 1},
}
INITIALIZE_RESULT = wire(
    {
        "protocolVersion": "2025-11-25",
        "capabilities": SERVER_CAPABILITIES,
        "serverInfo": IMPLEMENTATION,
        "instructions": "Be nice.",
    }
)
INPUT_REQUEST = wire({"method": "elicitation/create", "params": ELICIT_FORM})
INPUT_REQUIRED_RESULT = wire(
    {
        "inputRequests": {
            "github_login": INPUT_REQUEST,
            "capital_of_france": {"method": "sampling/createMessage", "params": CREATE_MESSAGE_PARAMS},
            "roots": {"method": "roots/list"},
        },
        "requestState": "eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0",
    }
)

MESSAGES = [
    (Annotations, ANNOTATIONS),
    (Icon, ICON),
    (Implementation, IMPLEMENTATION),
    (TextResourceContents, TEXT_CONTENTS),
    (BlobResourceContents, BLOB_CONTENTS),
    (TextContent, TEXT),
    (ImageContent, IMAGE),
    (AudioContent, AUDIO),
    (ResourceLink, RESOURCE_LINK),
    (EmbeddedResource, EMBEDDED_TEXT),
    (EmbeddedResource, EMBEDDED_BLOB),
    (ToolUseContent, TOOL_USE),
    (ToolResultContent, TOOL_RESULT),
    (ToolAnnotations, TOOL_ANNOTATIONS),
    (Tool, TOOL),
    (CallToolResult, CALL_TOOL_RESULT),
    (ListToolsResult, LIST_TOOLS_RESULT),
    (PromptArgument, PROMPT_ARGUMENT),
    (Prompt, PROMPT),
    (PromptMessage, PROMPT_MESSAGE),
    (GetPromptResult, GET_PROMPT_RESULT),
    (ListPromptsResult, LIST_PROMPTS_RESULT),
    (Resource, RESOURCE),
    (ResourceTemplate, RESOURCE_TEMPLATE),
    (ReadResourceResult, READ_RESOURCE_RESULT),
    (ListResourcesResult, LIST_RESOURCES_RESULT),
    (ListResourceTemplatesResult, LIST_RESOURCE_TEMPLATES_RESULT),
    (Completion, COMPLETION),
    (CompleteResult, COMPLETE_RESULT),
    (Root, ROOT),
    (ListRootsResult, LIST_ROOTS_RESULT),
    (ElicitFormParams, ELICIT_FORM),
    (ElicitUrlParams, ELICIT_URL),
    (ElicitResult, ELICIT_RESULT),
    (SamplingMessage, SAMPLING_MESSAGE),
    (SamplingMessage, SAMPLING_MESSAGE_LIST),
    (ModelHint, MODEL_HINT),
    (ModelPreferences, MODEL_PREFERENCES),
    (ToolChoice, TOOL_CHOICE),
    (CreateMessageParams, CREATE_MESSAGE_PARAMS),
    (CreateMessageResult, CREATE_MESSAGE_RESULT),
    (CreateMessageResult, CREATE_MESSAGE_RESULT_LIST),
    (InputRequest, INPUT_REQUEST),
    (InputRequiredResult, INPUT_REQUIRED_RESULT),
    (ServerCapabilities, SERVER_CAPABILITIES),
    (DiscoverResult, DISCOVER_RESULT),
    (InitializeResult, INITIALIZE_RESULT),
]
MESSAGE_PARAMS = [
    pytest.param(cls, message, id=f"{cls.__name__}-{i}") for i, (cls, message) in enumerate(MESSAGES)
]


def test_every_model_has_a_representative_message():
    assert {cls for cls, _ in MESSAGES} == set(MODEL_CLASSES)


# ------------------------------------------------------------ round trips


@pytest.mark.parametrize(("cls", "message"), MESSAGE_PARAMS)
def test_round_trip_is_the_identity(cls, message):
    """Wire -> model -> wire gives back the same object, unknown keys and ``_meta`` included."""
    original = copy.deepcopy(message)
    model = structure(message, cls)
    assert isinstance(model, cls)
    assert unstructure(model) == original
    assert message == original  # structuring does not modify its input


@pytest.mark.parametrize(("cls", "message"), MESSAGE_PARAMS)
def test_unknown_keys_land_in_extra_and_meta_in_meta(cls, message):
    model = structure(message, cls)
    assert model.extra.keys() >= {"xFutureField"}
    if "meta" in attrs.fields_dict(cls):
        assert model.meta == message["_meta"]
        assert "_meta" not in model.extra
    else:
        assert model.extra["_meta"] == message["_meta"]


def test_nested_models_keep_their_unknown_keys():
    result = structure(CALL_TOOL_RESULT, CallToolResult)
    text = result.content[0]
    assert isinstance(text, TextContent)
    assert text.meta == TEXT["_meta"]
    assert text.extra == {"xFutureField": TEXT["xFutureField"]}
    assert text.annotations is not None
    assert text.annotations.extra == {
        "_meta": ANNOTATIONS["_meta"],
        "xFutureField": ANNOTATIONS["xFutureField"],
    }
    embedded = result.content[4]
    assert isinstance(embedded, EmbeddedResource)
    assert isinstance(embedded.resource, TextResourceContents)
    assert embedded.resource.extra == {"xFutureField": TEXT_CONTENTS["xFutureField"]}


def test_attributes_are_snake_case_and_wire_names_camel_case():
    tool = structure(TOOL, Tool)
    assert tool.input_schema == TOOL["inputSchema"]
    assert tool.output_schema == TOOL["outputSchema"]
    assert tool.annotations == ToolAnnotations(
        title="Weather",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=True,
        extra={"_meta": TOOL_ANNOTATIONS["_meta"], "xFutureField": TOOL_ANNOTATIONS["xFutureField"]},
    )
    link = structure(RESOURCE_LINK, ResourceLink)
    assert link.mime_type == "text/x-rust"
    assert link.size == 1024
    assert structure(IMPLEMENTATION, Implementation).website_url == "https://example.com"


@pytest.mark.parametrize("cls", RESULTS)
def test_result_type_is_consumed(cls):
    message = dict(next(message for c, message in MESSAGES if c is cls))
    message["resultType"] = "input_required" if cls is InputRequiredResult else "complete"
    model = structure(message, cls)
    assert "resultType" not in model.extra
    assert "resultType" not in unstructure(model)


def test_a_model_built_in_python_unstructures_to_minimal_wire():
    assert unstructure(TextContent(text="hi")) == {"type": "text", "text": "hi"}
    assert unstructure(CallToolResult()) == {"content": [], "isError": False}
    assert unstructure(ListToolsResult(tools=[])) == {"tools": [], "ttlMs": 0, "cacheScope": "private"}
    assert unstructure(ElicitFormParams(message="m", requested_schema={"type": "object"})) == {
        "message": "m",
        "requestedSchema": {"type": "object"},
        "mode": "form",
    }
    assert unstructure(Root(uri="file:///", meta={"k": 1})) == {"uri": "file:///", "_meta": {"k": 1}}


def test_known_fields_win_over_extra_on_the_wire():
    block = TextContent(text="real", extra={"text": "shadow", "x": 1})
    assert unstructure(block) == {"type": "text", "text": "real", "x": 1}


# ------------------------------------------------------------ the official examples


def _examples():
    classes = {DEFINITION.get(cls, cls.__name__): cls for cls in MODEL_CLASSES}
    if not EXAMPLES.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=NO_SCHEMAS), id="no-schemas")]
    return [
        pytest.param(classes[folder.name], path, id=f"{folder.name}/{path.stem}")
        for folder in sorted(EXAMPLES.iterdir())
        if folder.name in classes
        for path in sorted(folder.glob("*.json"))
    ]


@pytest.mark.parametrize(("cls", "path"), _examples())
def test_schema_examples_round_trip(cls, path):
    """The spec's own examples survive wire -> model -> wire, up to the documented normalizations."""
    example = json.loads(path.read_text(encoding="utf-8"))
    expected = {key: value for key, value in example.items() if key != "resultType"}
    if cls is CallToolResult:
        expected.setdefault("isError", False)
    out = unstructure(structure(example, cls))
    assert out == expected
    if "resultType" in example:
        out = {**out, "resultType": example["resultType"]}
    check(out, "2026-07-28", path.parent.name)


# ------------------------------------------------------------ the official schemas


def _definition(revision: str, cls: type) -> dict | None:
    return defs(revision).get(DEFINITION.get(cls, cls.__name__))


def _with_schemas(cases):
    """``cases()`` as parameters, or one skipped parameter saying why there are none."""
    if not SCHEMA_DIR.is_dir():
        return [pytest.param(*(None,) * 3, marks=pytest.mark.skip(reason=NO_SCHEMAS), id="no-schemas")]
    return cases()


def check(instance: dict, revision: str, name: str) -> None:
    """Validate ``instance`` against the definition ``name`` of one revision's schema."""
    pytest.importorskip("jsonschema")
    validator(revision, name).validate(instance)


def _schema_cases():
    # Only where the revision has the definition: Completion and InputRequest
    # are not separate definitions, DiscoverResult and InputRequiredResult are
    # modern only, InitializeResult is legacy only.
    return [
        pytest.param(cls, message, revision, id=f"{param.id}-{revision}")
        for param, (cls, message) in zip(MESSAGE_PARAMS, MESSAGES, strict=True)
        for revision in REVISIONS
        if _definition(revision, cls) is not None
    ]


@pytest.mark.parametrize(("cls", "message", "revision"), _with_schemas(_schema_cases))
def test_unstructured_models_match_the_schema(cls, message, revision):
    definition = _definition(revision, cls)
    out = unstructure(structure(message, cls))
    if "resultType" in definition.get("required", ()):
        # The model leaves resultType to the client; the envelope adds it.
        out = {**out, "resultType": "input_required" if cls is InputRequiredResult else "complete"}
    check(out, revision, DEFINITION.get(cls, cls.__name__))


def _property_cases():
    cases = []
    for cls in MODEL_CLASSES:
        properties: set[str] = set()
        for revision in REVISIONS:
            properties |= set((_definition(revision, cls) or {}).get("properties", ()))
        if properties:
            cases.append(pytest.param(cls, properties, None, id=cls.__name__))
    return cases


@pytest.mark.parametrize(("cls", "properties", "_"), _with_schemas(_property_cases))
def test_wire_names_match_the_schema_properties(cls, properties, _):
    """Every field's wire key is a property of the schema definition, and every property is a field."""
    wire_names = {
        _wire_name(field)
        for field in attrs.fields(cls)
        # Fields read from _meta (DiscoverResult.server_info) have no wire key.
        if field.name != "extra" and field.metadata.get(model_types.WIRE_RULE) != "server-info"
    }
    assert wire_names <= properties
    # Consumed by the client, implied by the class, or a 2025-11-25 task option (kept in extra).
    assert properties - wire_names <= {"resultType", "type", "task"}


def test_the_schema_check_can_fail():
    if not SCHEMA_DIR.is_dir():
        pytest.skip(NO_SCHEMAS)
    jsonschema = pytest.importorskip("jsonschema")
    with pytest.raises(jsonschema.ValidationError):
        check({"content": [{"type": "text", "text": 3}]}, "2025-11-25", "CallToolResult")


# ------------------------------------------------------------ bad shapes


@pytest.mark.parametrize(
    ("cls", "data", "message"),
    [
        (
            CallToolResult,
            {"content": [{"type": "text", "text": 3}]},
            "bad CallToolResult from the server: content[0].text: expected a string, got 3",
        ),
        (CallToolResult, [], "bad CallToolResult from the server: expected an object, got []"),
        (CallToolResult, None, "bad CallToolResult from the server: expected an object, got null"),
        (CallToolResult, {"content": "hi"}, 'content: expected an array, got "hi"'),
        (CallToolResult, {"content": {"type": "text"}}, "content: expected an array"),
        (CallToolResult, {"content": [1]}, "content[0]: expected an object, got 1"),
        (CallToolResult, {"content": [{"text": "x"}]}, "content[0].type: required field missing"),
        (CallToolResult, {"content": [{"type": 5}]}, "content[0].type: expected a string, got 5"),
        (
            CallToolResult,
            {"content": [{"type": "image", "data": "x"}]},
            "content[0].mimeType: required field missing",
        ),
        (CallToolResult, {"isError": 1}, "isError: expected a boolean, got 1"),
        (CallToolResult, {"isError": "false"}, 'isError: expected a boolean, got "false"'),
        (
            CallToolResult,
            {"content": [{"type": "resource", "resource": {"uri": "file:///x"}}]},
            'content[0].resource: resource contents need a "text" or a "blob" member',
        ),
        (
            CallToolResult,
            {"content": [{"type": "resource", "resource": "file:///x"}]},
            'content[0].resource: expected an object, got "file:///x"',
        ),
        (
            CallToolResult,
            {"content": [{"type": "text", "text": "x", "_meta": []}]},
            "content[0]._meta: expected an object",
        ),
        (
            ResourceLink,
            {"type": "resource_link", "uri": "u", "name": "n", "size": True},
            "size: expected an integer, got true",
        ),
        (
            ResourceLink,
            {"type": "resource_link", "uri": "u", "name": "n", "size": 1.5},
            "size: expected an integer, got 1.5",
        ),
        (TextContent, {"type": "image", "text": "x"}, 'type: expected "text", got "image"'),
        (TextContent, {"text": "x"}, "type: required field missing"),
        (Tool, {"name": "t"}, "bad Tool from the server: inputSchema: required field missing"),
        (Tool, {"name": "t", "inputSchema": "object"}, 'inputSchema: expected an object, got "object"'),
        (ListToolsResult, {"tools": [{"inputSchema": {}}]}, "tools[0].name: required field missing"),
        (ListToolsResult, {"tools": [], "cacheScope": 1}, "cacheScope: expected a string, got 1"),
        (ListToolsResult, {"tools": [], "nextCursor": 5}, "nextCursor: expected a string, got 5"),
        (ListToolsResult, {}, "tools: required field missing"),
        (
            ListToolsResult,
            {"tools": [{"name": "t", "inputSchema": {}, "icons": [{"src": None}]}]},
            "tools[0].icons[0].src: expected a string, got null",
        ),
        (Completion, {"values": ["a", 2]}, "values[1]: expected a string, got 2"),
        (Completion, {"values": [], "total": 1.5}, "total: expected an integer, got 1.5"),
        (ModelPreferences, {"costPriority": "high"}, 'costPriority: expected a number, got "high"'),
        (ModelPreferences, {"costPriority": False}, "costPriority: expected a number, got false"),
        (
            ElicitRequestParams,
            {"mode": "phone", "message": "m"},
            'mode: expected "form" or "url", got "phone"',
        ),
        (ElicitRequestParams, {"mode": "form", "message": "m"}, "requestedSchema: required field missing"),
        (ElicitRequestParams, {"mode": "url", "message": "m"}, "url: required field missing"),
        (
            ElicitFormParams,
            {"mode": "url", "message": "m", "requestedSchema": {}},
            'mode: expected "form", got "url"',
        ),
        (
            InputRequiredResult,
            {"inputRequests": {"k1": {"params": {}}}},
            'bad InputRequiredResult from the server: inputRequests["k1"].method: required field missing',
        ),
        (InputRequiredResult, {"inputRequests": []}, "inputRequests: expected an object, got []"),
        (
            SamplingMessage,
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text"}]},
            "content[1].text: required field missing",
        ),
        (SamplingMessage, {"role": "user", "content": 5}, "content: expected an object, got 5"),
        (
            GetPromptResult,
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]},
            "messages[0].content: expected an object",
        ),
        (
            DiscoverResult,
            {"supportedVersions": "2026-07-28", "capabilities": {}},
            "supportedVersions: expected an array",
        ),
        (
            InitializeResult,
            {"protocolVersion": "x", "capabilities": {}, "serverInfo": {"name": "s"}},
            "serverInfo.version: required field missing",
        ),
    ],
)
def test_bad_shapes_are_protocol_errors_naming_the_path(cls, data, message):
    with pytest.raises(ProtocolError) as caught:
        structure(data, cls)
    assert message in str(caught.value)
    assert str(caught.value).startswith("bad ")
    assert not isinstance(caught.value, BaseExceptionGroup)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


def test_a_long_bad_value_is_shortened_in_the_message():
    with pytest.raises(ProtocolError) as caught:
        structure({"content": "x" * 10_000}, CallToolResult)
    assert len(str(caught.value)) < 200


def test_a_model_is_not_a_wire_dict():
    with pytest.raises(ProtocolError, match="expected an object"):
        structure(TextContent(text="hi"), TextContent)


def test_deep_nesting_is_a_protocol_error():
    block: dict = {"type": "text", "text": "bottom"}
    for _ in range(5000):
        block = {"type": "tool_result", "toolUseId": "t", "content": [block]}
    with pytest.raises(ProtocolError, match="nested too deeply"):
        structure({"content": [block]}, CallToolResult)


def test_structure_and_unstructure_refuse_non_models():
    with pytest.raises(TypeError):
        structure({}, dict)
    with pytest.raises(TypeError):
        unstructure({"type": "text", "text": "x"})


# ------------------------------------------------------------ defaults and leniency


def test_missing_fields_take_their_defaults():
    result = structure({}, CallToolResult)
    assert result == CallToolResult(content=[], structured_content=None, is_error=False)
    assert result.meta is None
    assert result.extra == {}
    page = structure({"tools": []}, ListToolsResult)
    assert (page.next_cursor, page.ttl_ms, page.cache_scope) == (None, 0, "private")


def test_null_means_absent():
    result = structure(
        {"content": None, "isError": None, "structuredContent": None, "_meta": None}, CallToolResult
    )
    assert result == CallToolResult()
    page = structure(
        {"resources": [], "nextCursor": None, "ttlMs": None, "cacheScope": None}, ListResourcesResult
    )
    assert (page.next_cursor, page.ttl_ms, page.cache_scope) == (None, 0, "private")


def test_an_integer_is_a_number_and_stays_an_integer():
    prefs = structure({"costPriority": 1, "speedPriority": 0.5}, ModelPreferences)
    assert prefs.cost_priority == 1
    assert type(prefs.cost_priority) is int
    assert unstructure(prefs) == {"costPriority": 1, "speedPriority": 0.5}


def test_structured_content_may_be_any_json_value():
    for value in ([1, 2], "text", 0, False, {"a": [None]}):
        result = structure({"content": [], "structuredContent": value}, CallToolResult)
        assert result.structured_content == value
        assert unstructure(result)["structuredContent"] == value


@pytest.mark.parametrize(
    ("wire_ttl", "ttl"),
    [
        (None, 0),
        (0, 0),
        (1, 1),
        (3600000, 3600000),
        (-1, 0),
        (-5000.5, 0),
        (1.9, 1),
        (0.5, 0),
        (1e20, 2**62),
        (2**62 + 1, 2**62),
        pytest.param(10**400, 2**62, id="10**400"),
        ("600", 0),
        (True, 0),
        ([1], 0),
        ({"ms": 1}, 0),
        (math.inf, 2**62),
        (-math.inf, 0),
        (math.nan, 0),
    ],
)
@pytest.mark.parametrize("cls", [ListToolsResult, ReadResourceResult, DiscoverResult])
def test_ttl_is_a_non_negative_integer(cls, wire_ttl, ttl):
    required = {
        ListToolsResult: {"tools": []},
        ReadResourceResult: {"contents": []},
        DiscoverResult: {"supportedVersions": [], "capabilities": {}},
    }[cls]
    model = structure({**required, "ttlMs": wire_ttl}, cls)
    assert model.ttl_ms == ttl
    assert type(model.ttl_ms) is int
    assert "ttlMs" not in model.extra


@pytest.mark.property
@given(
    value=st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.none()
    | st.text(max_size=5)
)
def test_ttl_follows_the_cache_rule(value):
    """One rule for ``ttlMs``: the model keeps what `clamp_ttl` makes of it."""
    assert structure({"tools": [], "ttlMs": value}, ListToolsResult).ttl_ms == clamp_ttl(value)


def test_every_ttl_a_model_keeps_can_go_into_the_cache():
    cache = TtlCache()
    for wire_ttl in (10**400, math.inf, 1e300):
        page = structure({"tools": [], "ttlMs": wire_ttl}, ListToolsResult)
        cache.put("tools/list", "", page, page.ttl_ms, 0.0)
        assert cache.get("tools/list", "", 10.0**9) is page


def test_missing_ttl_is_zero_and_scope_private():
    model = structure({"contents": []}, ReadResourceResult)
    assert (model.ttl_ms, model.cache_scope) == (0, "private")
    assert unstructure(model) == {"contents": [], "ttlMs": 0, "cacheScope": "private"}


def test_an_unknown_cache_scope_is_kept():
    assert structure({"tools": [], "cacheScope": "shared"}, ListToolsResult).cache_scope == "shared"


# ------------------------------------------------------------ discriminators


def test_unknown_content_type_is_kept_whole():
    video = {"type": "video", "url": "https://example.com/v.mp4", "_meta": {"k": "v"}, "duration": 3.5}
    result = structure({"content": [TEXT, video], "isError": False}, CallToolResult)
    block = result.content[1]
    assert block == UnknownContent(type="video", raw=video)
    assert unstructure(result) == {"content": [TEXT, video], "isError": False}
    assert result.text == TEXT["text"]


def test_unknown_content_on_its_own():
    raw = {"type": "hologram", "layers": [1, 2]}
    block = structure(raw, UnknownContent)
    assert block.type == "hologram"
    assert unstructure(block) == raw
    assert structure(raw, ContentBlock) == block
    with pytest.raises(ProtocolError, match="type: expected a string"):
        structure({"layers": []}, UnknownContent)


def test_unknown_content_in_every_place_content_goes():
    odd = {"type": "x-new", "v": 1}
    assert structure({"role": "user", "content": odd}, PromptMessage).content == UnknownContent(
        type="x-new", raw=odd
    )
    sampled = structure({"role": "user", "content": [odd]}, SamplingMessage)
    assert sampled.content == [UnknownContent(type="x-new", raw=odd)]
    nested = structure({"type": "tool_result", "toolUseId": "t", "content": [odd]}, ToolResultContent)
    assert nested.content == [UnknownContent(type="x-new", raw=odd)]


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        (TEXT, TextContent),
        (IMAGE, ImageContent),
        (AUDIO, AudioContent),
        (RESOURCE_LINK, ResourceLink),
        (EMBEDDED_TEXT, EmbeddedResource),
        (TOOL_USE, ToolUseContent),
        (TOOL_RESULT, ToolResultContent),
    ],
)
def test_content_type_picks_the_class(data, cls):
    block = structure(data, ContentBlock)
    assert type(block) is cls
    assert cls.type == data["type"]
    assert unstructure(block)["type"] == data["type"]


def test_resource_contents_are_told_apart_by_text_or_blob():
    text = structure({"type": "resource", "resource": {"uri": "u", "text": "t"}}, EmbeddedResource)
    blob = structure({"type": "resource", "resource": {"uri": "u", "blob": "YQ=="}}, EmbeddedResource)
    assert text.resource == TextResourceContents(uri="u", text="t")
    assert blob.resource == BlobResourceContents(uri="u", blob="YQ==")
    read = structure({"contents": [{"uri": "a", "text": ""}, {"uri": "b", "blob": ""}]}, ReadResourceResult)
    assert [type(item) for item in read.contents] == [TextResourceContents, BlobResourceContents]
    with pytest.raises(ProtocolError, match=r'contents\[0\]: resource contents need a "text" or a "blob"'):
        structure({"contents": [{"uri": "a"}]}, ReadResourceResult)


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"message": "m", "requestedSchema": {"type": "object"}}, ElicitFormParams),
        ({"mode": None, "message": "m", "requestedSchema": {"type": "object"}}, ElicitFormParams),
        ({"mode": "form", "message": "m", "requestedSchema": {"type": "object"}}, ElicitFormParams),
        ({"mode": "url", "message": "m", "url": "https://x"}, ElicitUrlParams),
    ],
)
def test_elicitation_mode_picks_the_class(data, cls):
    params = structure(data, ElicitRequestParams)
    assert type(params) is cls
    assert params.mode == ("url" if cls is ElicitUrlParams else "form")
    assert unstructure(params)["mode"] == params.mode


def test_url_elicitation_of_2025_11_25_keeps_its_id():
    params = structure(ELICIT_URL, ElicitRequestParams)
    assert isinstance(params, ElicitUrlParams)
    assert params.elicitation_id == "e-42"
    assert structure({"mode": "url", "message": "m", "url": "u"}, ElicitUrlParams).elicitation_id is None


def test_input_request_params_stay_wire_objects():
    result = structure(INPUT_REQUIRED_RESULT, InputRequiredResult)
    assert result.input_requests is not None
    asked = result.input_requests["github_login"]
    assert asked.method == "elicitation/create"
    assert asked.params == ELICIT_FORM
    assert result.input_requests["roots"] == InputRequest(method="roots/list")
    assert result.request_state == INPUT_REQUIRED_RESULT["requestState"]
    assert structure({"requestState": "s"}, InputRequiredResult).input_requests is None


# ------------------------------------------------------------ properties of models


def test_display_name_prefers_title_then_annotation_title_then_name():
    assert (
        Tool(name="n", input_schema={}, title="T", annotations=ToolAnnotations(title="A")).display_name == "T"
    )
    assert Tool(name="n", input_schema={}, annotations=ToolAnnotations(title="A")).display_name == "A"
    assert Tool(name="n", input_schema={}, title="", annotations=ToolAnnotations()).display_name == "n"
    assert Tool(name="n", input_schema={}).display_name == "n"


def test_call_tool_result_text_joins_the_text_blocks():
    result = structure(
        {"content": [{"type": "text", "text": "a"}, IMAGE, {"type": "text", "text": "b"}]}, CallToolResult
    )
    assert result.text == "a\nb"
    assert CallToolResult().text == ""


def test_discover_result_server_info():
    found = structure(DISCOVER_RESULT, DiscoverResult)
    assert found.server_info == structure(IMPLEMENTATION, Implementation)
    assert found.capabilities.tools == {"listChanged": False}
    assert found.capabilities.extensions == {"io.modelcontextprotocol/tasks": {}}
    bare = structure({"supportedVersions": [], "capabilities": {}}, DiscoverResult)
    assert bare.server_info is None
    odd = DiscoverResult(
        supported_versions=[],
        capabilities=ServerCapabilities(),
        meta={"io.modelcontextprotocol/serverInfo": {"name": 3}},
    )
    assert odd.server_info is None


def test_models_are_frozen():
    block = TextContent(text="x")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        block.text = "y"


# ------------------------------------------------------------ to_wire


def test_to_wire_of_a_model_unstructures_it():
    assert to_wire(Root(uri="file:///a"), Root) == {"uri": "file:///a"}
    url = ElicitUrlParams(message="m", url="https://x")
    assert to_wire(url, ElicitRequestParams) == {"message": "m", "url": "https://x", "mode": "url"}


def test_to_wire_of_a_valid_dict_returns_it_as_given():
    answer = {"action": "accept", "content": {"name": "octocat"}, "resultType": "complete"}
    assert to_wire(answer, ElicitResult) is answer


@pytest.mark.parametrize(
    ("value", "cls", "message"),
    [
        ({"action": 1}, ElicitResult, "not a valid ElicitResult: action: expected a string, got 1"),
        (
            {"roots": [{"name": "r"}]},
            ListRootsResult,
            "not a valid ListRootsResult: roots[0].uri: required field missing",
        ),
        ("accept", ElicitResult, "expected a model or wire dict of ElicitResult, got str"),
        (Root(uri="u"), ElicitResult, "got Root"),
        (None, CreateMessageResult, "got NoneType"),
    ],
)
def test_to_wire_refuses_bad_values_with_type_error(value, cls, message):
    with pytest.raises(TypeError) as caught:
        to_wire(value, cls)
    assert message in str(caught.value)
    assert not isinstance(caught.value, BaseExceptionGroup)


# ------------------------------------------------------------ import weight


def test_the_models_do_not_import_cattrs():
    """``trio_mcp._models.types`` holds the classes; cattrs is the codec's alone."""
    code = """
import json, sys
import trio_mcp._models.types
print(json.dumps(sorted(sys.modules)))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    loaded = {name.partition(".")[0] for name in json.loads(proc.stdout.strip().splitlines()[-1])}
    assert "cattrs" not in loaded
    # Nor anywhere in the module, inside functions included.
    tree = ast_support.parse(Path(model_types.__file__).read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert [name for name in imported if name.partition(".")[0] == "cattrs"] == []


def test_cattrs_is_imported_on_first_use_only():
    code = """
import sys
import trio_mcp
from trio_mcp._models import CallToolResult, ListToolsResult, structure
assert "cattrs" not in sys.modules, "cattrs imported too early"
structure({"content": [{"type": "text", "text": "plain"}]}, CallToolResult)
assert "cattrs" not in sys.modules, "the plain tool result needs no converter"
structure({"tools": []}, ListToolsResult)
assert "cattrs" in sys.modules
print("ok")
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# ------------------------------------------------------------ properties

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
#: Keys the models know, so that arbitrary objects often reach real fields.
wire_keys = st.sampled_from(
    sorted(
        {
            "type",
            "text",
            "content",
            "isError",
            "structuredContent",
            "_meta",
            "resultType",
            "resource",
            "uri",
            "blob",
            "mimeType",
            "data",
            "name",
            "inputSchema",
            "tools",
            "annotations",
            "icons",
            "src",
            "ttlMs",
            "cacheScope",
            "nextCursor",
            "mode",
            "message",
            "url",
            "requestedSchema",
            "inputRequests",
            "method",
            "params",
            "role",
            "messages",
            "maxTokens",
            "toolUseId",
            "id",
            "input",
            "values",
            "completion",
            "supportedVersions",
            "capabilities",
        }
    )
) | st.text(max_size=6)
content_types = st.sampled_from(
    ["text", "image", "audio", "resource_link", "resource", "tool_use", "tool_result", "new"]
)
json_values = st.recursive(
    json_scalars | content_types,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(wire_keys, children, max_size=5),
    max_leaves=25,
)
json_objects = st.dictionaries(wire_keys, json_values, max_size=8)
TARGETS = [*MODEL_CLASSES, UnknownContent, ContentBlock, ElicitRequestParams]


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replace(value, path, new):
    if not path:
        return new
    copied = copy.copy(value)
    copied[path[0]] = _replace(value[path[0]], path[1:], new)
    return copied


def _structure_or_protocol_error(data, cls):
    try:
        model = structure(data, cls)
    except ProtocolError as exc:
        error = str(exc)
    else:
        # Whatever structured survives the way back.
        assert structure(unstructure(model), cls) == model
        return
    assert error.startswith("bad ")


@pytest.mark.property
@given(cls=st.sampled_from(TARGETS), data=json_objects | json_values)
def test_any_json_structures_or_is_a_protocol_error(cls, data):
    _structure_or_protocol_error(data, cls)


@pytest.mark.property
@given(case=st.sampled_from(MESSAGES), data=st.data(), new=json_values)
def test_a_damaged_message_structures_or_is_a_protocol_error(case, data, new):
    """Replace one node anywhere in a valid message by arbitrary JSON."""
    cls, message = case
    path = data.draw(st.sampled_from(list(_paths(message))))
    _structure_or_protocol_error(_replace(message, path, new), cls)


@pytest.mark.property
@given(data=json_objects)
def test_to_wire_of_any_dict_returns_it_or_raises_type_error(data):
    try:
        out = to_wire(data, CallToolResult)
    except TypeError as exc:
        error = str(exc)
    else:
        assert out is data
        return
    assert "CallToolResult" in error


@pytest.mark.property
@given(
    texts=st.lists(st.text(max_size=8), max_size=4),
    is_error=st.none() | st.booleans() | st.integers(0, 1),
    meta=st.none() | st.dictionaries(st.text(max_size=4), json_scalars, max_size=2) | st.integers(),
    structured=st.none() | json_scalars,
    result_type=st.sampled_from([None, "complete"]),
    odd_block=st.none()
    | st.sampled_from(
        [
            {"type": "text"},
            {"type": "text", "text": 1},
            {"type": "image", "data": "", "mimeType": "m"},
            {"type": "text", "text": "t", "x": 1},
            "text",
        ]
    ),
)
def test_plain_tool_results_take_the_fast_path_with_the_same_outcome(
    texts, is_error, meta, structured, result_type, odd_block
):
    """The converter-free path for text-only tool results agrees with the converter, errors included."""
    content = [{"type": "text", "text": text} for text in texts]
    if odd_block is not None:
        content.append(odd_block)
    optional = {
        "isError": is_error,
        "_meta": meta,
        "structuredContent": structured,
        "resultType": result_type,
    }
    data = {"content": content, **{key: value for key, value in optional.items() if value is not None}}
    hook = codec._converter().get_structure_hook(CallToolResult)
    try:
        expected = hook(data, CallToolResult)
    except Exception:
        expected = None
    fast = codec._plain_call_tool_result(data)
    if fast is not None:
        assert fast == expected
    try:
        got = structure(data, CallToolResult)
    except ProtocolError:
        assert expected is None
    else:
        assert got == expected


def test_plain_tool_results_are_built_slot_by_slot_into_whole_models() -> None:
    """The fast path builds the models field by field: the same objects as their constructors make."""
    assert codec.DIRECT_TOOL_RESULTS, "the tool result models changed: update codec._slot_setters' names"
    data = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "isError": True}
    result = codec.structure_tool_result(data)
    expected = CallToolResult(content=[TextContent(text="a"), TextContent(text="b")], is_error=True)
    assert result == expected
    assert repr(result) == repr(expected)
    assert attrs.asdict(result) == attrs.asdict(expected)
    assert attrs.evolve(result, is_error=False) == attrs.evolve(expected, is_error=False)
    assert result.text == "a\nb"
    # Each model has its own extra, as its constructor's factory would give it.
    assert result.extra == {}
    assert result.extra is not result.content[0].extra
    assert result.content[0].extra is not result.content[1].extra
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.is_error = False  # type: ignore[misc]
    assert codec.structure_tool_result({"content": [{"type": "image", "data": "", "mimeType": "m"}]}) == (
        structure({"content": [{"type": "image", "data": "", "mimeType": "m"}]}, CallToolResult)
    )
    with pytest.raises(ProtocolError, match="bad CallToolResult"):
        codec.structure_tool_result({"content": [{"type": "text", "text": 3}]})


def test_the_slot_by_slot_path_declines_models_it_does_not_fit() -> None:
    """A class with other fields, a validator or a post-init hook is left to its constructor."""

    @attrs.frozen(kw_only=True)
    class Checked:
        text: str = attrs.field(validator=attrs.validators.instance_of(str))

    @attrs.frozen(kw_only=True)
    class Hooked:
        text: str

        def __attrs_post_init__(self) -> None:
            pass

    @attrs.define(kw_only=True, slots=False)
    class Unslotted:
        text: str

    assert codec._slot_setters(TextContent, ("text", "annotations", "meta", "extra")) is not None
    assert codec._slot_setters(TextContent, ("text", "annotations", "meta")) is None
    assert codec._slot_setters(Checked, ("text",)) is None
    assert codec._slot_setters(Hooked, ("text",)) is None
    assert codec._slot_setters(Unslotted, ("text",)) is None


@pytest.mark.property
@given(
    versions=st.lists(st.text(max_size=10), max_size=3) | json_scalars,
    capabilities=st.dictionaries(
        st.sampled_from(
            ["tools", "prompts", "resources", "logging", "completions", "tasks", "extensions", "other"]
        ),
        st.none() | st.dictionaries(st.text(max_size=4), json_scalars, max_size=2) | json_scalars,
        max_size=4,
    )
    | json_scalars,
    instructions=st.none() | st.text(max_size=6) | st.integers(),
    ttl=st.none() | st.integers(-5, 10**6) | st.floats(allow_nan=False) | st.text(max_size=2),
    cache_scope=st.none() | st.sampled_from(["public", "private"]) | st.integers(),
    info=st.none()
    | st.fixed_dictionaries(
        {"name": st.text(max_size=4), "version": st.text(max_size=4)},
        optional={
            "title": st.text(max_size=4) | st.integers(),
            "websiteUrl": st.text(max_size=4),
            "icons": st.just([]),
        },
    )
    | json_scalars,
    extra=st.dictionaries(st.sampled_from(["x", "resultType"]), st.just("complete"), max_size=1),
)
def test_plain_discover_results_take_the_fast_path_with_the_same_outcome(
    versions, capabilities, instructions, ttl, cache_scope, info, extra
):
    """The converter-free path for the common DiscoverResult agrees with the converter, errors included."""
    optional = {"instructions": instructions, "ttlMs": ttl, "cacheScope": cache_scope}
    data = {
        "supportedVersions": versions,
        "capabilities": capabilities,
        **extra,
        **{key: value for key, value in optional.items() if value is not None},
    }
    if info is not None:
        data["_meta"] = {"io.modelcontextprotocol/serverInfo": info}
    hook = codec._converter().get_structure_hook(DiscoverResult)
    try:
        expected = hook(data, DiscoverResult)
    except Exception:
        expected = None
    fast = codec._plain_discover_result(data)
    if fast is not None:
        assert fast == expected
    try:
        got = structure(data, DiscoverResult)
    except ProtocolError:
        assert expected is None
    else:
        assert got == expected


def test_the_common_discover_result_takes_the_fast_path():
    """What servers send (no icons, no unknown keys) is built without the converter."""
    common = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": True}, "logging": {}},
        "instructions": "Use echo.",
        "ttlMs": 60000,
        "cacheScope": "public",
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1", "title": "S"}},
    }
    found = codec._plain_discover_result(common)
    assert found is not None
    assert found == codec._converter().get_structure_hook(DiscoverResult)(common, DiscoverResult)
    assert found.server_info == Implementation(name="s", version="1", title="S")
    # With icons, the converter does it.
    assert codec._plain_discover_result(DISCOVER_RESULT) is None
