"""Era negotiation, without I/O: which protocol era a server speaks.

* `judge_probe` reads the answer to the ``server/discover`` probe and says
  which era the server speaks (the stdio probe rules of the 2026-07-28
  revision: a ``DiscoverResult`` or a ``-32022`` means modern, anything else,
  silence included, means the initialize era);
* `check_initialize` checks the version a legacy server chose.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

from .._errors import ProtocolError, RpcError, VersionMismatch
from .eras import (
    HEADER_MISMATCH,
    LEGACY_VERSIONS,
    MISSING_CLIENT_CAPABILITY,
    MODERN_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
)

__all__ = ["Legacy", "Modern", "check_initialize", "judge_probe"]

JSON: TypeAlias = Any


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
