"""What an MCP server answers by the rules of each era, without I/O.

Pure functions shared by the servers of this package (the demo server and
the fake server of `trio_mcp.testing`): the handshake answers of both eras,
the marks a 2026-07-28 result carries, and which log messages a client asked
for. Nothing here imports Trio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from .._core.eras import LEGACY_VERSIONS, LOG_LEVELS, SERVER_INFO, UNSUPPORTED_PROTOCOL_VERSION
from .._core.jsonrpc import INVALID_PARAMS, SUBSCRIPTION_ID
from .._errors import RpcError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "INVALID_REQUEST",
    "LISTEN",
    "Era",
    "cache_fields",
    "checked_log_level",
    "discover_result",
    "initialize_refused",
    "initialize_result",
    "legacy_version",
    "log_wanted",
    "stamp",
    "unsupported_version",
]

JSON: TypeAlias = Any
Era: TypeAlias = Literal["modern", "legacy"]

INVALID_REQUEST: Final = -32600
#: The one request whose result and notifications carry a subscription id.
LISTEN: Final = "subscriptions/listen"


# --------------------------------------------------------------- results


def stamp(
    result: dict[str, JSON],
    *,
    era: Era | None,
    method: str,
    request_id: int | str,
    meta: Mapping[str, JSON] | None = None,
) -> dict[str, JSON]:
    """Mark a result as its era wants it, in place, and return it.

    2026-07-28 era: ``"resultType": "complete"`` unless it has a
    ``resultType``, the subscription id in the ``_meta`` of a
    ``subscriptions/listen`` result, and ``meta`` (a server's own ``_meta``
    keys, such as its ``serverInfo``). Initialize era: unchanged.
    """
    if era != "modern":
        return result
    result.setdefault("resultType", "complete")
    extra: dict[str, JSON] = dict(meta) if meta else {}
    if method == LISTEN:
        extra[SUBSCRIPTION_ID] = request_id
    if extra:
        own = result.get("_meta")
        result["_meta"] = {**(own if isinstance(own, dict) else {}), **extra}
    return result


def cache_fields(ttl_ms: int) -> dict[str, JSON]:
    """The caching fields of a 2026-07-28 result: fresh for ``ttl_ms``, the same for every client."""
    return {"ttlMs": ttl_ms, "cacheScope": "public"}


# ------------------------------------------------------------- handshake


def unsupported_version(requested: object, supported: Sequence[str], message: str | None = None) -> RpcError:
    """The ``-32022`` error for a version the server does not speak.

    Its data, ``{"supported": [...], "requested": "..."}``, tells the client
    what to offer instead (``requested`` is ``""`` when no version was
    given).
    """
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        message if message is not None else f"unsupported protocol version {requested!r}",
        {"supported": list(supported), "requested": requested if isinstance(requested, str) else ""},
    )


def discover_result(
    supported: Sequence[str],
    capabilities: Mapping[str, JSON],
    server_info: Mapping[str, JSON],
    instructions: str | None = None,
) -> dict[str, JSON]:
    """A ``DiscoverResult`` (2026-07-28 era), the server's name and version in ``_meta``."""
    result: dict[str, JSON] = {
        "supportedVersions": list(supported),
        "capabilities": dict(capabilities),
        "_meta": {SERVER_INFO: dict(server_info)},
    }
    if instructions is not None:
        result["instructions"] = instructions
    return result


def legacy_version(offered: object, pinned: str | None = None) -> str:
    """The version ``initialize`` answers with: ``pinned``, else the one offered when known, else the newest."""
    if pinned is not None:
        return pinned
    if isinstance(offered, str) and offered in LEGACY_VERSIONS:
        return offered
    return LEGACY_VERSIONS[0]


def initialize_result(
    version: str,
    capabilities: Mapping[str, JSON],
    server_info: Mapping[str, JSON],
    instructions: str | None = None,
) -> dict[str, JSON]:
    """An ``InitializeResult`` at ``version``."""
    result: dict[str, JSON] = {
        "protocolVersion": version,
        "capabilities": dict(capabilities),
        "serverInfo": dict(server_info),
    }
    if instructions is not None:
        result["instructions"] = instructions
    return result


def initialize_refused(offered: object, supported: Sequence[str]) -> RpcError:
    """What a server of the 2026-07-28 era answers to ``initialize``: ``-32022``, naming its versions."""
    return unsupported_version(
        offered,
        supported,
        f"this server speaks protocol version {', '.join(supported)}, which has no initialize",
    )


# --------------------------------------------------------------- logging


def checked_log_level(value: object) -> str:
    """A log level a client asked for (``logging/setLevel``, ``_meta`` logLevel).

    Raises:
        RpcError: ``-32602``, the value is not a log level.
    """
    if not isinstance(value, str) or value not in LOG_LEVELS:
        raise RpcError(INVALID_PARAMS, f"unknown log level {value!r}; use one of {list(LOG_LEVELS)}")
    return value


def log_wanted(level: str, threshold: object, *, default: bool) -> bool:
    """Whether a log message at ``level`` goes to a client that asked for ``threshold``.

    ``threshold`` is the least severe level wanted: the request's logLevel
    (2026-07-28 era) or the session's ``logging/setLevel`` (initialize era).
    Without one (or with a value that is no level), ``default`` decides.
    """
    if not isinstance(threshold, str) or threshold not in LOG_LEVELS:
        return default
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)
