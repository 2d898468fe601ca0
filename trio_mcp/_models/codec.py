"""The wire format of the models: one cattrs converter, built on first use.

The converter is built the first time a model is converted, not at import:
``import trio_mcp`` does not load cattrs (``tests/test_exports.py`` checks
this). The models themselves are in `trio_mcp._models.types`.

Three functions are the interface to the rest of the package:

* `structure` turns a decoded JSON object from the server into a model. It is
  strict about types (a number where a string belongs is an error, ``true`` is
  not an integer, an integer is a fine number) and lenient about absence: a
  JSON ``null`` for a field that has a default means the default. Whatever
  the shape of the input, it returns a model or raises `ProtocolError` whose
  message names the model and the path of the bad field; no cattrs exception
  or `ExceptionGroup` escapes.
* `unstructure` turns a model back into a wire dict. Fields whose value is
  `None` are left out; every other field is written.
* `to_wire` accepts a model or a wire dict from the caller (hooks may return
  either) and returns the wire dict, raising `TypeError` for anything that
  does not have the model's shape.

Rules that hold for every model:

* Wire names are derived from attribute names (``mime_type`` is
  ``mimeType``); ``_WIRE_NAMES`` lists the exceptions (``meta`` is
  ``_meta``). A field whose wire value needs its own rule names the rule in
  its metadata; `_field_hook` carries it out.
* Keys the model does not know are kept in ``extra`` and written back by
  `unstructure`, so data from a newer revision survives a round trip. The
  exceptions are ``resultType`` on results, which the client consumes, and
  the ``type`` discriminator of content blocks, which is implied by the class.
* Content blocks are told apart by ``type``; a ``type`` the models do not
  know becomes `UnknownContent`, which keeps the whole object. Resource
  contents are told apart by ``text`` or ``blob``, elicitation parameters by
  ``mode`` (missing means form).
* ``ttlMs`` becomes a non-negative integer whatever arrives, by the rule the
  cache uses (`trio_mcp._core.cache.clamp_ttl`: missing, negative or not a
  number is 0, a fraction is floored, anything above 2**62 is 2**62);
  ``cacheScope`` defaults to ``"private"``.

Speed: the generated cattrs functions do the work, with ``detailed
validation`` on (which costs nothing measurable here and tells which field
failed). `structure` looks its hook up in a plain dict, so the hot path,
a `CallToolResult` with one text block, is a handful of function calls; the
commonest of all, text blocks only, is built without the converter.
"""

from __future__ import annotations

import functools
from types import UnionType
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar, overload

import attrs
import orjson

from .._core.cache import clamp_ttl
from .._core.eras import SERVER_INFO
from .._errors import ProtocolError
from .types import (
    CONTENT_CLASSES,
    MODELS,
    RESULTS,
    WIRE_RULE,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    DiscoverResult,
    ElicitFormParams,
    ElicitRequestParams,
    ElicitUrlParams,
    Implementation,
    ServerCapabilities,
    TextContent,
    TextResourceContents,
    UnknownContent,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from cattrs import Converter

__all__ = ["structure", "structure_tool_result", "to_wire", "unstructure"]


_T = TypeVar("_T")

#: Wire keys that are not the camelCase of the attribute name.
_WIRE_NAMES: Final = {"meta": "_meta"}


# --------------------------------------------------------------------- errors


def _show(value: Any) -> str:
    """A short rendering of a wire value for an error message."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Bad(Exception):
    """A value of the wrong shape; ``at`` is a path below the value, if any."""

    def __init__(self, message: str, at: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.at = at

    @classmethod
    def expected(cls, what: str, value: Any, at: str = "") -> _Bad:
        return cls(f"expected {what}, got {_show(value)}", at)


class _At(Exception):
    """The element ``segment`` (``[3]``, ``["key"]``) of a list or object failed."""

    def __init__(self, segment: str, cause: BaseException) -> None:
        super().__init__(segment)
        self.segment = segment
        self.cause = cause


def _explain(exc: BaseException) -> str:
    """Turn the failure of a structure hook into ``"path: what is wrong"``."""
    from cattrs.errors import AttributeValidationNote, ClassValidationError

    path: list[str] = []
    while True:
        if isinstance(exc, _At):
            path.append(exc.segment)
            exc = exc.cause
        elif isinstance(exc, ClassValidationError) and exc.exceptions:
            inner = exc.exceptions[0]
            for note in getattr(inner, "__notes__", ()):
                if isinstance(note, AttributeValidationNote):
                    path.append("." + _wire_name_of(exc.cl, note.name))
                    break
            exc = inner
        else:
            break
    if isinstance(exc, _Bad):
        path.append(exc.at)
        message = exc.message
    elif isinstance(exc, KeyError):
        # The generated code reads ``o["key"]`` for a required field.
        message = "required field missing"
    elif isinstance(exc, RecursionError):
        message = "nested too deeply"
    else:  # pragma: no cover - a bug in a hook; say what it was
        message = f"{type(exc).__name__}: {exc}"
    where = "".join(path).lstrip(".")
    return f"{where}: {message}" if where else message


# --------------------------------------------------------------------- field helpers


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _wire_name(field: attrs.Attribute[Any]) -> str:
    wire = _WIRE_NAMES.get(field.name)
    return wire if wire is not None else _camel(field.name)


def _wire_name_of(cls: type, name: str) -> str:
    try:
        return _wire_name(attrs.fields_dict(cls)[name])
    except (KeyError, TypeError):  # pragma: no cover - not one of our fields
        return name


def _structure_ttl(value: Any, _: Any) -> int:
    """``ttlMs``: the cache's rule, so that what is kept is what the cache can hold."""
    return clamp_ttl(value)


def _constant(expected: Any) -> Callable[[Any, Any], Any]:
    def structure_constant(value: Any, _: Any) -> Any:
        if value is None or value == expected:
            return expected
        raise _Bad.expected(_show(expected), value)

    return structure_constant


def _field_hook(field: attrs.Attribute[Any]) -> Callable[[Any, Any], Any] | None:
    """The structure hook of the wire rule ``field`` names in its metadata, if any."""
    rule = field.metadata.get(WIRE_RULE)
    if rule is None:
        return None
    if rule == "ttl":
        return _structure_ttl
    if rule == "constant":
        return _constant(field.default)
    if rule == "server-info":
        return None
    raise ValueError(f"{field.name}: unknown wire rule {rule!r}")  # pragma: no cover - a typo in types


# --------------------------------------------------------------------- what converts

_MODEL_SET: Final = frozenset(MODELS)
#: What `structure` and `unstructure` take: the model classes, `UnknownContent`
#: (whose hooks are written by hand) and a few unions.
_CONVERTIBLE: Final = _MODEL_SET | {UnknownContent}

#: Unions that annotations spell out, each with a structure hook of its own.
_ResourceContents: TypeAlias = TextResourceContents | BlobResourceContents
_SamplingContent: TypeAlias = ContentBlock | list[ContentBlock]

#: The unions `structure` accepts besides the model classes, by name.
_UNIONS: Final[dict[Any, str]] = {
    ContentBlock: "ContentBlock",
    ElicitRequestParams: "ElicitRequestParams",
    _ResourceContents: "TextResourceContents | BlobResourceContents",
}


# --------------------------------------------------------------------- the converter


def _structure_str(value: Any, _: Any) -> str:
    if type(value) is str:
        return value
    raise _Bad.expected("a string", value)


def _structure_int(value: Any, _: Any) -> int:
    if type(value) is int:
        return value
    raise _Bad.expected("an integer", value)


def _structure_float(value: Any, _: Any) -> float:
    if type(value) is float or type(value) is int:
        return value
    raise _Bad.expected("a number", value)


def _structure_bool(value: Any, _: Any) -> bool:
    if type(value) is bool:
        return value
    raise _Bad.expected("a boolean", value)


def _structure_object(value: Any, _: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    raise _Bad.expected("an object", value)


#: What each primitive field accepts (by exact type: ``True`` is not an integer).
_PRIMITIVES: Final[dict[type, tuple[str, frozenset[type]]]] = {
    str: ("a string", frozenset({str})),
    int: ("an integer", frozenset({int})),
    float: ("a number", frozenset({float, int})),
    bool: ("a boolean", frozenset({bool})),
}


def _identity(value: Any) -> Any:
    return value


def _origin(t: Any) -> Any:
    return getattr(t, "__origin__", None)


@functools.cache
def _converter() -> Converter:
    """Build the one converter, on first use (cattrs is not imported before)."""
    import cattrs

    c = cattrs.Converter(detailed_validation=True)
    for primitive, hook in (
        (str, _structure_str),
        (int, _structure_int),
        (float, _structure_float),
        (bool, _structure_bool),
    ):
        c.register_structure_hook(primitive, hook)
    c.register_structure_hook_factory(_is_optional, lambda t: _optional_hook(c, t))
    c.register_structure_hook_factory(lambda t: _origin(t) is list, lambda t: _list_hook(c, t))
    c.register_structure_hook_factory(lambda t: _origin(t) is dict, lambda t: _dict_hook(c, t))
    c.register_structure_hook_func(lambda t: t == ContentBlock, _content_hook(c))
    c.register_structure_hook_func(lambda t: t == _SamplingContent, _sampling_content_hook(c))
    c.register_structure_hook_func(lambda t: t == _ResourceContents, _resource_contents_hook(c))
    c.register_structure_hook_func(lambda t: t == ElicitRequestParams, _elicit_params_hook(c))
    c.register_structure_hook(UnknownContent, _structure_unknown_content)
    c.register_structure_hook_factory(lambda t: t in _MODEL_SET, lambda t: _model_structure_hook(c, t))

    # JSON values are written back as they are: no copying, no walking.
    c.register_unstructure_hook_func(lambda t: t is Any or t == dict[str, Any], _identity)
    c.register_unstructure_hook(UnknownContent, lambda content: content.raw)
    c.register_unstructure_hook_factory(lambda t: t in _MODEL_SET, lambda t: _model_unstructure_hook(c, t))
    return c


def _is_optional(t: Any) -> bool:
    return isinstance(t, UnionType) and len(t.__args__) == 2 and type(None) in t.__args__


def _optional_hook(c: Converter, t: Any) -> Callable[[Any, Any], Any]:
    # cattrs' own hook looks the inner hook up on every call.
    (inner_type,) = (arg for arg in t.__args__ if arg is not type(None))
    if inner_type in _PRIMITIVES:
        what, allowed = _PRIMITIVES[inner_type]

        def structure_optional_primitive(value: Any, _: Any) -> Any:
            if value is None or type(value) in allowed:
                return value
            raise _Bad.expected(what, value)

        return structure_optional_primitive
    inner_hook = c.get_structure_hook(inner_type)

    def structure_optional(value: Any, _: Any) -> Any:
        return None if value is None else inner_hook(value, inner_type)

    return structure_optional


def _list_hook(c: Converter, t: Any) -> Callable[[Any, Any], list[Any]]:
    (item_type,) = t.__args__
    item_hook = c.get_structure_hook(item_type)

    def structure_list(value: Any, _: Any) -> list[Any]:
        if type(value) is not list:
            raise _Bad.expected("an array", value)
        out: list[Any] = []
        append = out.append
        try:
            for item in value:
                append(item_hook(item, item_type))
        except Exception as exc:
            raise _At(f"[{len(out)}]", exc) from None
        return out

    return structure_list


def _dict_hook(c: Converter, t: Any) -> Callable[[Any, Any], dict[str, Any]]:
    _, value_type = t.__args__
    if value_type is Any:
        return _structure_object
    value_hook = c.get_structure_hook(value_type)

    def structure_dict(value: Any, _: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        out: dict[str, Any] = {}
        key = None
        try:
            for key, item in value.items():
                out[key] = value_hook(item, value_type)
        except Exception as exc:
            raise _At(f"[{_show(key)}]", exc) from None
        return out

    return structure_dict


def _content_hook(c: Converter) -> Callable[[Any, Any], Any]:
    by_type = {cls.type: cls for cls in CONTENT_CLASSES}
    hooks: dict[str, Callable[[Any, Any], Any]] = {}

    def structure_content(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        kind = value.get("type")
        hook = hooks.get(kind) if type(kind) is str else None
        if hook is not None:
            return hook(value, None)
        if type(kind) is not str:
            if "type" not in value:
                raise _Bad("required field missing", at=".type")
            raise _Bad.expected("a string", kind, at=".type")
        cls = by_type.get(kind)
        if cls is None:
            return UnknownContent(type=kind, raw=value)
        hook = hooks[kind] = c.get_structure_hook(cls)
        return hook(value, cls)

    return structure_content


def _sampling_content_hook(c: Converter) -> Callable[[Any, Any], Any]:
    one = c.get_structure_hook(ContentBlock)
    many = c.get_structure_hook(list[ContentBlock])

    def structure_sampling_content(value: Any, _: Any) -> Any:
        if type(value) is list:
            return many(value, None)
        return one(value, None)

    return structure_sampling_content


def _resource_contents_hook(c: Converter) -> Callable[[Any, Any], Any]:
    def structure_resource_contents(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        if "text" in value:
            return c.get_structure_hook(TextResourceContents)(value, TextResourceContents)
        if "blob" in value:
            return c.get_structure_hook(BlobResourceContents)(value, BlobResourceContents)
        raise _Bad('resource contents need a "text" or a "blob" member')

    return structure_resource_contents


def _elicit_params_hook(c: Converter) -> Callable[[Any, Any], Any]:
    def structure_elicit_params(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        mode = value.get("mode")
        if mode is None or mode == "form":
            return c.get_structure_hook(ElicitFormParams)(value, ElicitFormParams)
        if mode == "url":
            return c.get_structure_hook(ElicitUrlParams)(value, ElicitUrlParams)
        raise _Bad.expected('"form" or "url"', mode, at=".mode")

    return structure_elicit_params


def _structure_unknown_content(value: Any, _: Any) -> UnknownContent:
    if not isinstance(value, dict):
        raise _Bad.expected("an object", value)
    kind = value.get("type")
    if type(kind) is not str:
        raise _Bad.expected("a string", kind, at=".type")
    return UnknownContent(type=kind, raw=value)


def _null_means_default(hook: Callable[[Any, Any], Any], default: Any) -> Callable[[Any, Any], Any]:
    make: Callable[[], Any] = default.factory if isinstance(default, attrs.Factory) else lambda: default  # type: ignore[arg-type]

    def structure_or_default(value: Any, t: Any) -> Any:
        return make() if value is None else hook(value, t)

    return structure_or_default


def _server_info(meta: Any) -> Implementation | None:
    """The ``Implementation`` a ``_meta`` object names, or `None` when absent or malformed."""
    if not isinstance(meta, dict) or SERVER_INFO not in meta:
        return None
    try:
        return structure(meta[SERVER_INFO], Implementation)
    except ProtocolError:
        return None


def _model_structure_hook(c: Converter, cls: type) -> Callable[[Any, Any], Any]:
    from cattrs.gen import make_dict_structure_fn, override

    attrs.resolve_types(cls)
    overrides: dict[str, Any] = {}
    known = set()
    kind: str | None = getattr(cls, "type", None) if cls in CONTENT_CLASSES else None
    if kind is not None:
        known.add("type")
    if cls in RESULTS:
        known.add("resultType")
    derived = False
    for field in attrs.fields(cls):
        if field.name == "extra":
            overrides[field.name] = override(omit=True)
            continue
        if field.metadata.get(WIRE_RULE) == "server-info":
            overrides[field.name] = override(omit=True)
            derived = True
            continue
        wire = _wire_name(field)
        known.add(wire)
        hook = _field_hook(field)
        if hook is None and field.default is not None and field.default is not attrs.NOTHING:
            hook = _null_means_default(c.get_structure_hook(field.type), field.default)
        overrides[field.name] = override(rename=wire, struct_hook=hook)
    generated: Callable[[Any, Any], Any] = make_dict_structure_fn(
        cls, c, _cattrs_forbid_extra_keys=False, _cattrs_detailed_validation=True, **overrides
    )
    known_keys = frozenset(known)

    def structure_model(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad.expected("an object", value)
        obj = generated(value, cls)
        if not known_keys.issuperset(value):
            # Frozen, but not yet seen by anyone: fill in the unknown keys.
            object.__setattr__(obj, "extra", {k: v for k, v in value.items() if k not in known_keys})
        if derived:
            object.__setattr__(obj, "server_info", _server_info(value.get("_meta")))
        return obj

    if kind is None:
        return structure_model

    def structure_content_block(value: Any, _: Any) -> Any:
        if isinstance(value, dict) and value.get("type") != kind:
            if "type" not in value:
                raise _Bad("required field missing", at=".type")
            raise _Bad.expected(_show(kind), value["type"], at=".type")
        return structure_model(value, _)

    return structure_content_block


def _model_unstructure_hook(c: Converter, cls: type) -> Callable[[Any], dict[str, Any]]:
    from cattrs.gen import make_dict_unstructure_fn, override

    attrs.resolve_types(cls)
    overrides: dict[str, Any] = {}
    for field in attrs.fields(cls):
        if field.name == "extra" or field.metadata.get(WIRE_RULE) == "server-info":
            overrides[field.name] = override(omit=True)
        else:
            overrides[field.name] = override(rename=_wire_name(field), omit_if_default=field.default is None)
    generated: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(cls, c, **overrides)
    kind: str | None = getattr(cls, "type", None) if cls in CONTENT_CLASSES else None

    def unstructure_model(obj: Any) -> dict[str, Any]:
        wire: dict[str, Any] = generated(obj) if kind is None else {"type": kind, **generated(obj)}
        for key, value in obj.extra.items():
            wire.setdefault(key, value)
        return wire

    return unstructure_model


# --------------------------------------------------------------------- the interface

_structurers: dict[Any, Callable[[Any, Any], Any]] = {}
_unstructurers: dict[type, Callable[[Any], dict[str, Any]]] = {}


def _name(cls: Any) -> str:
    name = _UNIONS.get(cls)
    return name if name is not None else getattr(cls, "__name__", repr(cls))


def _structurer(cls: Any) -> Callable[[Any, Any], Any]:
    hook = _structurers.get(cls)
    if hook is None:
        if cls not in _CONVERTIBLE and cls not in _UNIONS:
            raise TypeError(f"{cls!r} is not a trio_mcp model")
        hook = _structurers[cls] = _converter().get_structure_hook(cls)
    return hook


@overload
def structure(data: Any, cls: type[_T]) -> _T: ...
@overload
def structure(data: Any, cls: Any) -> Any: ...
def structure(data: Any, cls: Any) -> Any:
    """Build the model ``cls`` from ``data``, a decoded JSON object from the server.

    ``cls`` is a model class or one of the unions `ContentBlock` and
    `ElicitRequestParams`. Raises `ProtocolError` if ``data`` does not have
    the model's shape, naming the model and the path of the bad field, and
    `TypeError` if ``cls`` is not a model.
    """
    if cls is CallToolResult and DIRECT_TOOL_RESULTS:
        fast = _plain_call_tool_result(data)
        if fast is not None:
            return fast
    elif cls is DiscoverResult:
        found = _plain_discover_result(data)
        if found is not None:
            return found
    try:
        hook = _structurers[cls]
    except KeyError:
        hook = _structurer(cls)
    try:
        return hook(data, cls)
    except Exception as exc:
        raise ProtocolError(f"bad {_name(cls)} from the server: {_explain(exc)}") from None


_PLAIN_RESULT_KEYS: Final = frozenset({"content", "resultType", "isError", "structuredContent", "_meta"})
_PLAIN_DISCOVER_KEYS: Final = frozenset(
    {"supportedVersions", "capabilities", "instructions", "ttlMs", "cacheScope", "_meta", "resultType"}
)
_CAPABILITY_KEYS: Final = {
    "experimental": "experimental",
    "logging": "logging",
    "completions": "completions",
    "prompts": "prompts",
    "resources": "resources",
    "tools": "tools",
    "tasks": "tasks",
    "extensions": "extensions",
}
_PLAIN_IMPLEMENTATION_KEYS: Final = frozenset({"name", "version", "title", "description", "websiteUrl"})


def _plain_discover_result(data: Any) -> DiscoverResult | None:
    """The common ``DiscoverResult``, built without the converter (which costs a
    noticeable share of a short program's start to load).

    Returns `None` for anything else (the converter then does the work and
    the checking): unknown keys, icons, fields of the wrong type.
    """
    if type(data) is not dict or not _PLAIN_DISCOVER_KEYS.issuperset(data):
        return None
    versions = data.get("supportedVersions")
    capabilities = data.get("capabilities")
    if (
        type(versions) is not list
        or any(type(v) is not str for v in versions)
        or type(capabilities) is not dict
    ):
        return None
    caps: dict[str, Any] = {}
    for key, value in capabilities.items():
        name = _CAPABILITY_KEYS.get(key)
        if name is None or (value is not None and type(value) is not dict):
            return None
        caps[name] = value
    instructions = data.get("instructions")
    cache_scope = data.get("cacheScope", "private")
    meta = data.get("_meta")
    if (
        (instructions is not None and type(instructions) is not str)
        or type(cache_scope) is not str
        or (meta is not None and type(meta) is not dict)
    ):
        return None
    info: Implementation | None = None
    if meta is not None and SERVER_INFO in meta:
        raw = meta[SERVER_INFO]
        if (
            type(raw) is not dict
            or not _PLAIN_IMPLEMENTATION_KEYS.issuperset(raw)
            or not all(type(v) is str for v in raw.values())
            or "name" not in raw
            or "version" not in raw
        ):
            return None
        info = Implementation(
            name=raw["name"],
            version=raw["version"],
            title=raw.get("title"),
            description=raw.get("description"),
            website_url=raw.get("websiteUrl"),
        )
    return DiscoverResult(
        supported_versions=versions,
        capabilities=ServerCapabilities(**caps),
        instructions=instructions,
        ttl_ms=clamp_ttl(data.get("ttlMs", 0)),
        cache_scope=cache_scope,
        meta=meta,
        server_info=info,
    )


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...] | None:
    """The setters of the slots of ``cls``, whose fields must be exactly ``names`` (in order)
    with nothing to run when one is set; `None` when they are not.

    With them, an instance is built field by field, as the generated
    ``__init__`` does, without the cost of a call with keyword arguments.
    """
    fields = attrs.fields(cls)
    if (
        tuple(field.name for field in fields) != names
        or any(field.validator is not None or field.converter is not None for field in fields)
        or hasattr(cls, "__attrs_pre_init__")
        or hasattr(cls, "__attrs_post_init__")
    ):
        return None
    slots: list[Any] = [cls.__dict__.get(name) for name in names]
    if not all(type(slot).__name__ == "member_descriptor" for slot in slots):
        return None
    return tuple(slot.__set__ for slot in slots)


_new = object.__new__
_TEXT_SETTERS: Final = _slot_setters(TextContent, ("text", "annotations", "meta", "extra"))
_RESULT_SETTERS: Final = _slot_setters(
    CallToolResult, ("content", "structured_content", "is_error", "meta", "extra")
)
#: Whether the plain tool result is built slot by slot (`_slot_setters`); a test keeps it so.
DIRECT_TOOL_RESULTS: Final = _TEXT_SETTERS is not None and _RESULT_SETTERS is not None
if DIRECT_TOOL_RESULTS:
    assert _TEXT_SETTERS is not None
    assert _RESULT_SETTERS is not None
    _set_text, _set_annotations, _set_text_meta, _set_text_extra = _TEXT_SETTERS
    _set_content, _set_structured, _set_is_error, _set_meta, _set_extra = _RESULT_SETTERS


def structure_tool_result(data: Any) -> CallToolResult:
    """`structure` of a `CallToolResult`: the common one, text blocks only, without the converter."""
    fast = _plain_call_tool_result(data) if DIRECT_TOOL_RESULTS else None
    return fast if fast is not None else structure(data, CallToolResult)


def _plain_call_tool_result(data: Any) -> CallToolResult | None:
    """The common tool result, text blocks only, built without the converter.

    Returns `None` for anything else (the converter then does the work and
    the checking): unknown keys, other blocks, fields of the wrong type.
    The models are built slot by slot (see `_slot_setters`), with the same
    values their ``__init__`` would set.
    """
    if type(data) is not dict or not _PLAIN_RESULT_KEYS.issuperset(data):
        return None
    content = data.get("content", ())
    if type(content) is not list:
        return None
    blocks: list[ContentBlock] = []
    for block in content:
        if type(block) is not dict or len(block) != 2 or block.get("type") != "text":
            return None
        text = block.get("text")
        if type(text) is not str:
            return None
        new = _new(TextContent)
        _set_text(new, text)
        _set_annotations(new, None)
        _set_text_meta(new, None)
        _set_text_extra(new, {})
        blocks.append(new)
    is_error = data.get("isError")
    meta = data.get("_meta")
    if (is_error is not None and type(is_error) is not bool) or (meta is not None and type(meta) is not dict):
        return None
    result = _new(CallToolResult)
    _set_content(result, blocks)
    _set_structured(result, data.get("structuredContent"))
    _set_is_error(result, is_error is True)
    _set_meta(result, meta)
    _set_extra(result, {})
    return result


def _unstructurer(cls: type) -> Callable[[Any], dict[str, Any]]:
    hook = _unstructurers.get(cls)
    if hook is None:
        if cls not in _CONVERTIBLE:
            raise TypeError(f"{cls.__name__} is not a trio_mcp model")
        hook = _unstructurers[cls] = _converter().get_unstructure_hook(cls)
    return hook


def unstructure(obj: Any) -> dict[str, Any]:
    """The wire dict of the model ``obj``; raises `TypeError` for anything else.

    JSON values held by the model (``_meta``, schemas, ``extra`` values) are
    shared with the result, not copied.
    """
    try:
        hook = _unstructurers[type(obj)]
    except KeyError:
        hook = _unstructurer(type(obj))
    return hook(obj)


def to_wire(value: Any, cls: Any) -> dict[str, Any]:
    """The wire dict of ``value``: a model of ``cls``, or a wire dict of its shape.

    A dict is checked by structuring it as ``cls`` and returned as given. A
    bad shape, or a value of any other type, raises `TypeError` naming
    ``cls``: the value comes from the caller, not from the server.
    """
    hook = _structurer(cls)
    if isinstance(value, dict):
        try:
            hook(value, cls)
        except Exception as exc:
            raise TypeError(f"not a valid {_name(cls)}: {_explain(exc)}") from None
        return value
    if isinstance(value, cls):
        return unstructure(value)
    raise TypeError(f"expected a model or wire dict of {_name(cls)}, got {type(value).__name__}")
