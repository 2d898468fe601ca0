"""Client extensions as data, and the rules that fold them into what a client sends: no I/O.

An extension (SEP-2133) is named by an identifier with a prefix
(``io.modelcontextprotocol/ui``, ``com.example/notes``) and declared under
``capabilities.extensions`` with its settings. What it adds to a client:

* its declaration: in ``initialize`` (initialize era), and on every
  2026-07-28 request whose method it names (all of them by default,
  listings included, so that a server can tailor ``tools/list`` to it);
* `ResultClaim`: a ``resultType`` of its own on ``tools/call``,
  ``prompts/get`` or ``resources/read`` (2026-07-28 era), and the resolver
  that turns such a result into the method's ordinary one;
* `NotificationBinding`: the notifications of a method it observes;
* `RequestBinding`: server-to-client requests of a method it answers
  (initialize era: the 2026-07-28 era has no server requests).

`ExtensionSet` folds the extensions of one client, refusing clashes as the
options are built, and answers the client's questions (what to declare on
this request, who claims this result, who takes this notification).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final, TypeAlias

import attrs

__all__ = [
    "ClaimContext",
    "Extension",
    "ExtensionSet",
    "NotificationBinding",
    "RequestBinding",
    "ResultClaim",
    "check_identifier",
    "merge_declarations",
]

JSON: TypeAlias = Any

#: ``resultType`` values the protocol itself owns (``task`` is the tasks extension's, built in).
CORE_RESULT_TYPES: Final = frozenset({"complete", "input_required", "task"})
#: The methods a claim may attach to: those whose 2026-07-28 results may be other than complete.
CLAIM_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Extensions the client runs itself.
BUILT_IN: Final = frozenset({"io.modelcontextprotocol/tasks"})

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_IDENTIFIER = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}/{_NAME}")


def check_identifier(identifier: object) -> str:
    """Check an extension identifier: a ``_meta`` key with a prefix (``com.example/name``).

    Returns:
        The identifier.

    Raises:
        TypeError: Not a string.
        ValueError: Not ``prefix/name`` by the ``_meta`` key rules.
    """
    if not isinstance(identifier, str):
        raise TypeError(f"an extension identifier must be a string, not {type(identifier).__name__}")
    if not _IDENTIFIER.fullmatch(identifier):
        raise ValueError(
            f"{identifier!r} is not an extension identifier: it must be a prefix and a name, such as"
            " 'com.example/notes' (dot-separated labels, a slash, a name)"
        )
    return identifier


@attrs.frozen(kw_only=True)
class ClaimContext:
    """What a claim's resolver is given besides the result.

    Attributes:
        method: The request's method (``"tools/call"``, ...).
        params: The request's params, without ``_meta``.
        request: Sends a follow-up request to the same server, as
            `trio_mcp.Client.request` does (with the 2026-07-28 envelope, this
            extension declared): ``await ctx.request(method, params)``.
    """

    method: str
    params: Mapping[str, JSON]
    request: Callable[[str, Mapping[str, JSON]], Awaitable[dict[str, JSON]]]


Resolver: TypeAlias = Callable[[dict[str, JSON], ClaimContext], Awaitable[dict[str, JSON]]]
"""``async (result, ctx) -> result``: turns a claimed result into the method's ordinary one."""


def _claim_methods(value: Iterable[str]) -> frozenset[str]:
    methods = frozenset(value)
    if not methods or not methods <= CLAIM_METHODS:
        raise ValueError(f"a claim attaches to some of {sorted(CLAIM_METHODS)}, not {sorted(methods)}")
    return methods


def _result_type(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"result_type must be a non-empty string, not {value!r}")
    if value in CORE_RESULT_TYPES:
        raise ValueError(f"resultType {value!r} belongs to the protocol and cannot be claimed")


def _callable(name: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: object) -> None:
        if not callable(value):
            raise TypeError(f"{name} must be callable, not {type(value).__name__}")

    return check


@attrs.frozen(kw_only=True)
class ResultClaim:
    """A ``resultType`` an extension adds to some methods, and how to finish such a result.

    In the 2026-07-28 era a result whose ``resultType`` is unknown is a
    protocol error; one an extension claims goes to its ``resolve``, whose
    answer stands for the result (and is read as any result is: it must be
    complete or ask for input). Claims do nothing in the initialize era,
    where ``resultType`` is not read.
    """

    result_type: str = attrs.field(validator=_result_type)
    """The wire ``resultType`` claimed, e.g. ``"com.example/deferred"``."""
    resolve: Resolver = attrs.field(validator=_callable("resolve"))
    """``async (result, ctx) -> result``; see `ClaimContext`."""
    methods: frozenset[str] = attrs.field(default=frozenset({"tools/call"}), converter=_claim_methods)
    """The methods whose results may carry it."""


@attrs.frozen(kw_only=True)
class NotificationBinding:
    """Notifications of one method, delivered to an extension instead of ``on_notification``.

    The handler gets the notification's params (a dict, ``{}`` when it had
    none), sync or async, one at a time; an exception it raises is reported
    through ``on_log`` and the connection carries on. Notifications that name
    a call of yours (its progress) go to that call, as always.
    """

    method: str
    handler: Callable[[dict[str, JSON]], object] = attrs.field(validator=_callable("handler"))


@attrs.frozen(kw_only=True)
class RequestBinding:
    """Server-to-client requests of one method, answered by an extension (initialize era).

    The handler gets the params and returns the result (a dict), sync or
    async; raise `trio_mcp.RpcError` to answer with an error.
    """

    method: str
    handler: Callable[[JSON], object] = attrs.field(validator=_callable("handler"))


def _settings(value: Mapping[str, JSON] | None) -> dict[str, JSON]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"an extension's settings must be a mapping, not {type(value).__name__}")
    return dict(value)


def _methods(value: Iterable[str] | None) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise TypeError("methods must be a collection of method names, not a single string")
    return frozenset(value)


@attrs.frozen(kw_only=True)
class Extension:
    """A client extension: its identifier, its settings, and what it adds.

    Give extensions to the client in `trio_mcp.ClientOptions.extensions`::

        notes = Extension(identifier="com.example/notes", settings={"version": 2})
        options = trio_mcp.ClientOptions(extensions=[notes])

    The declaration ``{"extensions": {identifier: settings}}`` goes into the
    client capabilities of ``initialize`` (initialize era) and, in the
    2026-07-28 era, onto every request whose method is in ``methods`` (every
    request when ``methods`` is `None`, the default).
    """

    identifier: str = attrs.field(converter=check_identifier)
    """The extension's identifier, ``prefix/name``."""
    settings: dict[str, JSON] = attrs.field(factory=dict, converter=_settings)
    """Its settings, declared as they are."""
    methods: frozenset[str] | None = attrs.field(default=None, converter=_methods)
    """The 2026-07-28 requests that declare it (`None`: every one)."""
    claims: tuple[ResultClaim, ...] = attrs.field(default=(), converter=tuple)
    """The result types it claims."""
    notifications: tuple[NotificationBinding, ...] = attrs.field(default=(), converter=tuple)
    """The notifications it observes."""
    requests: tuple[RequestBinding, ...] = attrs.field(default=(), converter=tuple)
    """The server requests it answers (initialize era)."""

    def __attrs_post_init__(self) -> None:
        if self.identifier in BUILT_IN:
            raise ValueError(f"{self.identifier!r} is run by the client itself and cannot be given again")
        for kind, items, expected in (
            ("claims", self.claims, ResultClaim),
            ("notifications", self.notifications, NotificationBinding),
            ("requests", self.requests, RequestBinding),
        ):
            for item in items:
                if not isinstance(item, expected):
                    raise TypeError(f"{kind} holds {expected.__name__} items, not {type(item).__name__}")


def merge_declarations(caps: Mapping[str, JSON], extensions: Mapping[str, JSON]) -> dict[str, JSON]:
    """``caps`` (not changed) with ``extensions`` added to its ``extensions`` object."""
    out = dict(caps)
    if not extensions:
        return out
    have = out.get("extensions")
    out["extensions"] = {**(have if isinstance(have, dict) else {}), **extensions}
    return out


class ExtensionSet:
    """The extensions of one client, folded: what to declare, who claims, who observes.

    Args:
        extensions: The `Extension` items.
        raw: The ``extensions`` object of the raw ``capabilities`` option,
            declared on every request as the extensions are (the typed ones
            win on a shared identifier).

    Raises:
        ValueError: Two extensions share an identifier, a result type, a
            notification method or a request method.
    """

    def __init__(self, extensions: Iterable[Extension] = (), raw: Mapping[str, JSON] | None = None) -> None:
        self.extensions = tuple(extensions)
        self.raw = dict(raw) if raw else {}
        self.claims: dict[str, tuple[str, ResultClaim]] = {}
        self.notifications: dict[str, tuple[str, NotificationBinding]] = {}
        self.requests: dict[str, tuple[str, RequestBinding]] = {}
        seen: set[str] = set()
        for extension in self.extensions:
            if not isinstance(extension, Extension):
                raise TypeError(f"extensions holds Extension items, not {type(extension).__name__}")
            name = extension.identifier
            if name in seen:
                raise ValueError(f"the extension {name!r} is given twice")
            seen.add(name)
            for claim in extension.claims:
                _take(self.claims, claim.result_type, name, claim, "resultType")
            for note in extension.notifications:
                _take(self.notifications, note.method, name, note, "notification")
            for request in extension.requests:
                _take(self.requests, request.method, name, request, "server request")
        self.declared: dict[str, JSON] = {**self.raw}
        self.declared.update({ext.identifier: ext.settings for ext in self.extensions})
        everywhere = {**self.raw}
        everywhere.update({ext.identifier: ext.settings for ext in self.extensions if ext.methods is None})
        self._everywhere = everywhere
        self._some = tuple(ext for ext in self.extensions if ext.methods is not None)
        self._by_method: dict[str, dict[str, JSON]] = {}

    def __bool__(self) -> bool:
        return bool(self.declared)

    def for_method(self, method: str) -> dict[str, JSON]:
        """The ``extensions`` object a 2026-07-28 request of ``method`` declares (shared: never mutate)."""
        found = self._by_method.get(method)
        if found is None:
            found = dict(self._everywhere)
            for ext in self._some:
                assert ext.methods is not None
                if method in ext.methods:
                    found[ext.identifier] = ext.settings
            self._by_method[method] = found
        return found

    def claim(self, method: str, result: Mapping[str, JSON]) -> ResultClaim | None:
        """The claim of ``result``'s ``resultType`` on ``method``, or `None` (then it is read as usual)."""
        kind = result.get("resultType")
        if not isinstance(kind, str) or kind in CORE_RESULT_TYPES:
            return None
        found = self.claims.get(kind)
        if found is None or method not in found[1].methods:
            return None
        return found[1]

    def owner_of_claim(self, claim: ResultClaim) -> str:
        """The identifier of the extension that made ``claim``."""
        return self.claims[claim.result_type][0]


def _take(table: dict[str, tuple[str, Any]], key: str, owner: str, item: object, what: str) -> None:
    if key in table:
        other = table[key][0]
        if other == owner:
            raise ValueError(f"the extension {owner!r} takes the {what} {key!r} twice")
        raise ValueError(
            f"the extensions {other!r} and {owner!r} both take the {what} {key!r}; one owner each"
        )
    table[key] = (owner, item)
