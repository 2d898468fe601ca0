"""The client's protocol decisions, without I/O: eras, versions, envelopes, rounds, caching.

Everything here is pure and synchronous, so that the rules of PROTOCOL
negotiation can be tested (and fuzzed) without a process or a clock:

* `judge_probe` reads the answer to the ``server/discover`` probe and says
  which era the server speaks (the stdio probe rules of the 2026-07-28
  revision: a ``DiscoverResult`` or a ``-32022`` means modern, anything else,
  silence included, means the initialize era);
* `check_initialize` checks the version a legacy server chose;
* `capabilities` and `modern_meta` build what a request declares;
* `result_type` reads a modern result's ``resultType``;
* `retry_params` builds the next round of a multi round-trip request;
* `TtlCache` keeps ``ttlMs``-fresh results, with the time passed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import attrs

from ._errors import ProtocolError, RpcError, VersionMismatch

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "Legacy",
    "Modern",
    "TtlCache",
    "capabilities",
    "check_initialize",
    "judge_probe",
    "modern_meta",
    "result_type",
    "retry_params",
]

JSON: TypeAlias = Any
Era: TypeAlias = Literal["modern", "legacy"]

#: The stateless revisions this client speaks, newest first.
MODERN_VERSIONS: Final = ("2026-07-28",)
#: The initialize-era revisions this client speaks, newest first.
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

#: The logging levels, least severe first.
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
MISSING_CLIENT_CAPABILITY: Final = -32021
HEADER_MISMATCH: Final = -32020

#: Methods whose modern results may be ``input_required``.
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: The input request methods, and the hook that answers each.
INPUT_HOOKS: Final = {
    "elicitation/create": "on_elicitation",
    "sampling/createMessage": "on_sampling",
    "roots/list": "on_roots",
}


# ------------------------------------------------------------- negotiation


@attrs.frozen
class Modern:
    """The server speaks the 2026-07-28 era, at ``version``.

    ``discover`` is its ``DiscoverResult`` when the probe got one. ``retry``
    says the probe must be sent again at ``version`` (the server refused the
    first version with ``-32022``).
    """

    version: str
    discover: dict[str, JSON] | None = None
    retry: bool = False


@attrs.frozen
class Legacy:
    """The server speaks the initialize era: send ``initialize`` offering ``version``."""

    version: str
    why: str


def _shared(listed: object, ours: tuple[str, ...]) -> str | None:
    """The newest of ``ours`` that ``listed`` (the server's list) names too."""
    if not isinstance(listed, list):
        return None
    names = {item for item in listed if isinstance(item, str)}
    for version in ours:
        if version in names:
            return version
    return None


def _listed(value: object) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(item for item in value if isinstance(item, str))
    return ()


def _legacy_overlap(listed: object, said: str) -> Legacy:
    """`Legacy` at the newest initialize-era version the server listed too, else `VersionMismatch`."""
    legacy = _shared(listed, LEGACY_VERSIONS)
    if legacy is not None:
        return Legacy(legacy, f"the server's supported versions share only {legacy} with us")
    ours = MODERN_VERSIONS + LEGACY_VERSIONS
    raise VersionMismatch(
        f"{said} {list(_listed(listed))}; this client speaks {list(ours)}",
        offered=ours,
        answered=_listed(listed),
    )


def judge_probe(
    result: dict[str, JSON] | None,
    error: RpcError | None,
    *,
    requested: str,
    legacy_offer: str = LEGACY_VERSIONS[0],
) -> Modern | Legacy:
    """Decide the era from the answer to the ``server/discover`` probe.

    Args:
        result: The probe's result, or `None`.
        error: The probe's error answer, or `None`. Both `None` means no
            answer came within the probe timeout.
        requested: The modern version the probe carried.
        legacy_offer: The version to offer in ``initialize`` when the server
            turns out to be legacy.

    Raises:
        VersionMismatch: The server speaks the modern era but lists no
            version this client speaks, in either era.
    """
    if result is not None:
        listed = result.get("supportedVersions")
        version = _shared(listed, MODERN_VERSIONS)
        if version is not None:
            return Modern(version, result)
        # A dual-era server whose only overlap with us is legacy accepts
        # initialize at that version.
        return _legacy_overlap(listed, "the server supports")
    if error is None:
        return Legacy(legacy_offer, "no answer to server/discover within the probe timeout")
    if error.code == UNSUPPORTED_PROTOCOL_VERSION:
        data = error.data if isinstance(error.data, dict) else {}
        listed = data.get("supported")
        version = _shared(listed, MODERN_VERSIONS)
        if version is not None and version != requested:
            return Modern(version, None, retry=True)
        return _legacy_overlap(listed, f"the server refused protocol version {requested} and supports")
    if error.code in (MISSING_CLIENT_CAPABILITY, HEADER_MISMATCH):
        # Recognised modern errors: the server is modern, even though it
        # would not describe itself.
        return Modern(requested, None)
    return Legacy(legacy_offer, f"server/discover failed with error {error.code} ({error.message})")


def check_initialize(result: dict[str, JSON], offered: str) -> str:
    """Return the version a legacy server chose in its ``InitializeResult``.

    Raises:
        VersionMismatch: It chose a version this client does not speak in
            the initialize era (``2026-07-28`` included).
        ProtocolError: ``protocolVersion`` is missing or not a string.
    """
    version = result.get("protocolVersion")
    if not isinstance(version, str):
        raise ProtocolError(f"the initialize result has no protocolVersion string: {version!r}")
    if version not in LEGACY_VERSIONS:
        raise VersionMismatch(
            f"the server answered initialize with protocol version {version!r}; this client offered"
            f" {offered} and speaks {list(LEGACY_VERSIONS)} in the initialize era",
            offered=(offered,),
            answered=(version,),
        )
    return version


# ------------------------------------------------------------ what we send


@attrs.frozen
class Hooks:
    """Which input hooks the client was given."""

    elicitation: bool = False
    sampling: bool = False
    roots: bool = False


def capabilities(hooks: Hooks, version: str, *, for_input: bool = True) -> dict[str, JSON]:
    """The ``ClientCapabilities`` object to declare at ``version``.

    Args:
        hooks: Which hooks exist (giving a hook declares its capability).
        version: The negotiated (or offered) protocol version.
        for_input: In the modern era, whether this request may be answered
            with input requests (``tools/call``, ``prompts/get``,
            ``resources/read``); other requests declare nothing.
    """
    caps: dict[str, JSON] = {}
    modern = version in MODERN_VERSIONS
    if modern and not for_input:
        return caps
    if hooks.roots:
        caps["roots"] = {} if modern else {"listChanged": False}
    if hooks.sampling:
        caps["sampling"] = {}
    if hooks.elicitation and version >= "2025-06-18":
        caps["elicitation"] = {} if version == "2025-06-18" else {"form": {}, "url": {}}
    return caps


def modern_meta(
    version: str,
    caps: dict[str, JSON],
    client_info: dict[str, JSON],
    *,
    log_level: str | None = None,
    progress_token: int | str | None = None,
    extra: Mapping[str, JSON] | None = None,
) -> dict[str, JSON]:
    """The ``_meta`` object every 2026-07-28 request carries."""
    meta: dict[str, JSON] = dict(extra) if extra else {}
    meta[PROTOCOL_VERSION] = version
    meta[CLIENT_CAPABILITIES] = caps
    meta[CLIENT_INFO] = client_info
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    if progress_token is not None:
        meta["progressToken"] = progress_token
    return meta


def result_type(method: str, result: dict[str, JSON]) -> Literal["complete", "input_required"]:
    """Read the ``resultType`` of a 2026-07-28 result.

    A missing ``resultType`` means complete.

    Raises:
        ProtocolError: The value is unknown, or ``input_required`` on a
            method that may not ask for input.
    """
    kind = result.get("resultType", "complete")
    if kind == "complete":
        return "complete"
    if kind == "input_required":
        if method not in MRTR_METHODS:
            raise ProtocolError(
                f"the server answered {method} with input_required, which only {sorted(MRTR_METHODS)} allow"
            )
        return "input_required"
    raise ProtocolError(f"the server answered {method} with an unknown resultType {kind!r}")


def retry_params(
    params: dict[str, JSON],
    input_responses: dict[str, JSON] | None,
    request_state: str | None,
) -> dict[str, JSON]:
    """The params of the next round: the original ones plus this round's answers.

    ``requestState`` is passed back unchanged, and only when the server sent
    one; answers from earlier rounds are never carried over.
    """
    out = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    if input_responses:
        out["inputResponses"] = input_responses
    if request_state is not None:
        out["requestState"] = request_state
    return out


def input_problem(method: object, params: object, hooks: Hooks, version: str) -> str | None:
    """Why an input request cannot be answered, or `None` when a hook can take it.

    Returns the reason as a sentence naming the missing hook.
    """
    if not isinstance(method, str) or method not in INPUT_HOOKS:
        return f"the server asked for {method!r}, which is not an input request this client knows"
    if not getattr(hooks, method.split("/")[0]):
        return f"the server asked for {method} but the client has no {INPUT_HOOKS[method]} hook"
    if method == "elicitation/create" and version < "2025-06-18":
        return f"the server asked for elicitation, which protocol version {version} does not have"
    if (
        method == "sampling/createMessage"
        and isinstance(params, dict)
        and (params.get("tools") is not None or params.get("toolChoice") is not None)
    ):
        return "the server asked for sampling with tools, which the client did not declare (sampling.tools)"
    if method == "elicitation/create" and isinstance(params, dict):
        mode = params.get("mode", "form")
        if mode not in ("form", "url") or (mode == "url" and version < "2025-11-25"):
            return f"the server asked for elicitation in {mode!r} mode, which the client did not declare"
    return None


# ------------------------------------------------------------------ cache


def clamp_ttl(value: object) -> int:
    """``ttlMs`` as milliseconds >= 0: missing, negative or non-numbers are 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if value != value or value <= 0:  # NaN, or nothing to keep
        return 0
    if value > 2**62:  # infinity included
        return 2**62
    return int(value)


class TtlCache:
    """Results kept while their ``ttlMs`` lasts, keyed by method and params.

    Time is passed in (seconds, any monotonic origin), so this is pure.
    `invalidate` drops entries as list-changed and updated notifications say.
    """

    def __init__(self, max_entries: int = 1024) -> None:
        self._entries: dict[tuple[str, str], tuple[float, object]] = {}
        self._max = max_entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, method: str, key: str, now: float) -> object | None:
        """The fresh entry for ``(method, key)``, or `None`."""
        entry = self._entries.get((method, key))
        if entry is None:
            return None
        if now >= entry[0]:
            del self._entries[(method, key)]
            return None
        return entry[1]

    def put(self, method: str, key: str, value: object, ttl_ms: int, now: float) -> None:
        """Keep ``value`` for ``ttl_ms`` milliseconds from ``now`` (0: not at all)."""
        if ttl_ms <= 0:
            self._entries.pop((method, key), None)
            return
        if (method, key) not in self._entries and len(self._entries) >= self._max:
            for stale in [k for k, (until, _) in self._entries.items() if until <= now]:
                del self._entries[stale]
            if len(self._entries) >= self._max:
                del self._entries[next(iter(self._entries))]
        self._entries[(method, key)] = (now + ttl_ms / 1000, value)

    def invalidate(self, note: dict[str, JSON]) -> None:
        """Drop what a server notification says has changed."""
        method = note.get("method")
        if method == "notifications/tools/list_changed":
            self._drop("tools/list")
        elif method == "notifications/prompts/list_changed":
            self._drop("prompts/list")
        elif method == "notifications/resources/list_changed":
            self._drop("resources/list")
            self._drop("resources/templates/list")
        elif method == "notifications/resources/updated":
            params = note.get("params")
            uri = params.get("uri") if isinstance(params, dict) else None
            if isinstance(uri, str):
                for key in [k for k in self._entries if k[0] == "resources/read" and k[1].startswith(uri)]:
                    del self._entries[key]
            else:
                self._drop("resources/read")

    def _drop(self, method: str) -> None:
        for key in [k for k in self._entries if k[0] == method]:
            del self._entries[key]

    def clear(self) -> None:
        """Forget everything."""
        self._entries.clear()
