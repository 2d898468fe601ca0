"""Tests of `trio_mcp._core.cache`: ``ttlMs`` clamping and the TTL cache of list and read results.

Covered: edge case 33 of PROTOCOL.md section 22 (missing, negative,
fractional and non-number ``ttlMs``), freshness to the millisecond,
invalidation by list-change and update notifications, and the bound on the
cache's size. The stateful properties (marked ``property``) check that
`TtlCache` agrees with a plain dict model under any sequence of puts, gets,
notifications and clock moves.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from trio_mcp._core.cache import TtlCache, clamp_ttl

CACHEABLE = (
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)


# ------------------------------------------------------------- strategies


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


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
