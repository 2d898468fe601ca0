"""The ``ttlMs`` cache of 2026-07-28 results, without I/O: time is passed in."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["TtlCache", "clamp_ttl"]

JSON: TypeAlias = Any


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
