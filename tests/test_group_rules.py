"""The pure rules of a server group: the restart policy's arithmetic and the catalogue's names.

Both live in the core and take time as a number: no process, no clock, no
Trio. Hypothesis drives them with arbitrary histories and names.
"""

from __future__ import annotations

import hashlib
import random
import re

import pytest
from hypothesis import given, strategies as st

from trio_mcp import RestartPolicy, ServerEvent, ServerSpec, UnknownName
from trio_mcp._core.naming import MAX_LENGTH, SEPARATOR, assign_names, exposed_name, is_hashed, is_valid_name
from trio_mcp._core.restart import RestartTracker
from trio_mcp._group.catalogue import Catalogue
from trio_mcp._group.members import Listing, Member
from trio_mcp._group.records import EventFeed
from trio_mcp._models import Tool

LLM_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

policies = st.builds(
    RestartPolicy,
    mode=st.sampled_from(["always", "on-failure"]),
    initial_delay=st.floats(0.01, 5),
    max_delay=st.floats(5, 60),
    jitter=st.sampled_from(["decorrelated", "full", "none"]),
    reset_after=st.floats(0, 120),
    max_restarts=st.integers(0, 8),
    window=st.floats(1, 600),
    max_start_failures=st.integers(0, 8),
)

#: One life of a server: how long it ran before it stopped, and whether it became ready first.
lives = st.lists(st.tuples(st.floats(0, 200), st.booleans(), st.booleans()), max_size=40)


def _run(policy: RestartPolicy, history: list[tuple[float, bool, bool]], seed: int = 0):
    """Play a history; yield (stop time, decision) for each stop, stopping at the first refusal."""
    tracker = RestartTracker(policy, random.Random(seed))
    now = 0.0
    for ran, became_ready, clean in history:
        if became_ready:
            tracker.ready(now)
        now += ran
        decision = tracker.stopped(now, clean=clean)
        yield now, decision
        if not decision.restart:
            return
        now += decision.delay


# ------------------------------------------------------------ restart policy


@pytest.mark.property
@given(policies, lives)
def test_restarts_within_any_window_never_exceed_the_limit(policy: RestartPolicy, history) -> None:
    granted = [now + decision.delay for now, decision in _run(policy, history) if decision.restart]
    for start in granted:
        inside = [t for t in granted if start <= t < start + policy.window]
        assert len(inside) <= policy.max_restarts


@pytest.mark.property
@given(policies, lives)
def test_delays_stay_between_their_bounds(policy: RestartPolicy, history) -> None:
    for _, decision in _run(policy, history):
        if not decision.restart:
            assert decision.reason
            continue
        assert 0 <= decision.delay <= policy.max_delay
        if policy.jitter == "decorrelated":
            assert decision.delay >= policy.initial_delay


@pytest.mark.property
@given(policies, lives)
def test_failed_starts_in_a_row_stop_the_restarts(policy: RestartPolicy, history) -> None:
    in_a_row = 0
    for (_, became_ready, _), (_, decision) in zip(history, _run(policy, history), strict=False):
        in_a_row = 0 if became_ready else in_a_row + 1
        if policy.max_start_failures and in_a_row >= policy.max_start_failures:
            assert not decision.restart


@pytest.mark.property
@given(policies, lives, st.integers())
def test_the_same_seed_gives_the_same_delays(policy: RestartPolicy, history, seed: int) -> None:
    assert list(_run(policy, history, seed)) == list(_run(policy, history, seed))


def test_without_jitter_the_delays_double_up_to_the_cap() -> None:
    policy = RestartPolicy(
        jitter="none", initial_delay=1, max_delay=30, max_restarts=100, window=1000, max_start_failures=0
    )
    tracker = RestartTracker(policy)
    delays = [tracker.stopped(float(t), clean=False).delay for t in range(8)]
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]


def test_the_delays_start_over_after_a_stable_period() -> None:
    policy = RestartPolicy(jitter="none", initial_delay=1, reset_after=60, max_restarts=100, window=10)
    tracker = RestartTracker(policy)
    assert [tracker.stopped(t, clean=False).delay for t in (0.0, 1.0, 2.0)] == [1, 2, 4]
    tracker.ready(10.0)
    assert tracker.stopped(69.0, clean=False).delay == 8  # ready for 59 s: not yet stable
    tracker.ready(80.0)
    assert tracker.stopped(140.0, clean=False).delay == 1  # ready for 60 s: start over


def test_decorrelated_jitter_spreads_servers_that_crash_together() -> None:
    policy = RestartPolicy()
    delays = [
        RestartTracker(policy, random.Random(seed)).stopped(0.0, clean=False).delay for seed in range(50)
    ]
    assert all(policy.initial_delay <= delay <= 3 * policy.initial_delay for delay in delays)
    assert len(set(delays)) == len(delays)
    assert max(delays) - min(delays) > policy.initial_delay


def test_the_breaker_counts_restarts_in_the_window() -> None:
    policy = RestartPolicy(jitter="none", initial_delay=1, max_delay=1, max_restarts=5, window=300)
    tracker = RestartTracker(policy)
    for t in range(5):
        tracker.ready(t * 10.0)
        assert tracker.stopped(t * 10.0 + 5, clean=False).restart
    tracker.ready(50.0)
    decision = tracker.stopped(55.0, clean=False)
    assert not decision.restart
    assert decision.reason == "it was restarted 5 times within 300 s"
    # Once the restarts leave the window, restarts are allowed again.
    tracker.ready(390.0)
    assert tracker.stopped(400.0, clean=False).restart


@pytest.mark.parametrize(
    ("policy", "clean", "retryable", "restart"),
    [
        (RestartPolicy(mode="never"), False, True, False),
        (RestartPolicy(mode="on-failure"), True, True, False),
        (RestartPolicy(mode="on-failure"), False, True, True),
        (RestartPolicy(mode="always"), True, True, True),
        (RestartPolicy(mode="always"), False, False, False),
    ],
)
def test_modes_and_hopeless_errors(
    policy: RestartPolicy, clean: bool, retryable: bool, restart: bool
) -> None:
    decision = RestartTracker(policy).stopped(0.0, clean=clean, retryable=retryable)
    assert decision.restart is restart
    assert bool(decision.reason) is not restart


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"initial_delay": -1}, ValueError),
        ({"initial_delay": float("nan")}, ValueError),
        ({"max_delay": float("inf")}, ValueError),
        ({"initial_delay": 5, "max_delay": 1}, ValueError),
        ({"max_restarts": -1}, ValueError),
        ({"max_restarts": 1.5}, TypeError),
        ({"window": "5"}, TypeError),
        ({"mode": "sometimes"}, ValueError),
        ({"jitter": "lots"}, ValueError),
    ],
)
def test_a_bad_policy_is_refused(fields: dict, error: type[Exception]) -> None:
    with pytest.raises(error):
        RestartPolicy(**fields)


# ------------------------------------------------------------------ names

names = st.text(max_size=80)


@pytest.mark.property
@given(names, names)
def test_every_exposed_name_is_accepted_by_llm_apis(server: str, item: str) -> None:
    name = exposed_name(server, item)
    assert LLM_NAME.match(name), name
    assert is_valid_name(name)
    assert exposed_name(server, item) == name


@pytest.mark.property
@given(st.lists(st.tuples(names, names), unique=True, max_size=60))
def test_different_pairs_get_different_names(pairs: list[tuple[str, str]]) -> None:
    exposed = [exposed_name(server, item) for server, item in pairs]
    assert len(set(exposed)) == len(exposed)


plain_servers = st.from_regex(r"[A-Za-z0-9-]{1,8}(_[A-Za-z0-9-]{1,8}){0,2}", fullmatch=True)
plain_items = st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)


@pytest.mark.property
@given(plain_servers, plain_items)
def test_plain_pairs_read_as_they_are(server: str, item: str) -> None:
    assert exposed_name(server, item) == f"{server}__{item}"


@pytest.mark.property
@given(st.lists(st.tuples(plain_servers, plain_items), unique=True, max_size=60))
def test_plain_names_never_collide(pairs: list[tuple[str, str]]) -> None:
    # Unlike the hashed names, these are unique by construction, not by chance.
    exposed = {exposed_name(server, item) for server, item in pairs}
    assert len(exposed) == len(pairs)


@pytest.mark.parametrize(
    ("server", "item", "head"),
    [
        ("io.github.upstash/context7", "resolve", "io_github_upstash_context7__resolve_"),
        ("files", "admin.tools.list", "files__admin_tools_list_"),
        ("a__b", "c", "a__b__c_"),
        ("a", "b__c", None),
        ("", "x", "__x_"),
        ("files", "x" * 70, "files__" + "x" * 48 + "_"),
    ],
)
def test_names_that_are_not_plain_get_a_hash(server: str, item: str, head: str | None) -> None:
    name = exposed_name(server, item)
    if head is None:
        assert name == f"{server}__{item}"
        return
    assert name.startswith(head)
    assert re.fullmatch(r"_[0-9a-f]{8}", name[len(head) - 1 :])
    assert len(name) <= MAX_LENGTH


# Names built to collide: every pair comes with the pair that reads its name
# back as SERVER__TOOL (the first "__" ending the server's part), which is
# how a server "a_b" with a tool "x_c6f9c73b" met server "a.b"'s tool "x".
tricky = st.text(alphabet="ab._-/ _0123456789cdef", max_size=12)


def read_back(name: str) -> tuple[str, str] | None:
    server, found, item = name.partition(SEPARATOR)
    return (server, item) if found else None


@st.composite
def colliding_pairs(draw: st.DrawFn) -> list[tuple[str, str]]:
    pairs = draw(st.lists(st.tuples(st.one_of(names, tricky), st.one_of(names, tricky)), max_size=30))
    out: list[tuple[str, str]] = []
    for pair in pairs:
        out.append(pair)
        back = read_back(exposed_name(*pair))
        if back is not None:
            out.append(back)
    return out


def test_the_collision_that_was_found_is_gone() -> None:
    digest = hashlib.sha256(b"a.b\0x").hexdigest()[:8]
    first, second = exposed_name("a.b", "x"), exposed_name("a_b", f"x_{digest}")
    assert first == f"a_b__x_{digest}"  # the hashed form, as before
    assert second != first
    assert is_hashed(second)  # a plain-looking name that ends as a hashed one is hashed


@pytest.mark.property
@given(colliding_pairs())
def test_no_two_pairs_ever_share_a_name(pairs: list[tuple[str, str]]) -> None:
    # exposed_name alone: a plain name and a hashed one never meet.
    for pair in pairs:
        name = exposed_name(*pair)
        back = read_back(name)
        if back is not None and back != pair:
            assert exposed_name(*back) != name, (pair, back)
    # assign_names: one name per pair, whatever the pairs, in any order.
    names = assign_names(pairs)
    assert set(names) == set(pairs)
    assert len(set(names.values())) == len(names)
    assert all(is_valid_name(name) for name in names.values())
    assert names == {pair: exposed_name(*pair) for pair in names}  # no hashes met: no salt used


@pytest.mark.property
@given(st.lists(st.tuples(st.one_of(names, tricky), st.one_of(names, tricky)), max_size=30))
def test_when_hashes_meet_the_earlier_pair_keeps_its_name(pairs: list[tuple[str, str]]) -> None:
    # A naming rule whose "hashes" always meet at salt 0: assign_names still
    # gives each pair its own name, and the first pair keeps the contested one.
    def clashing(server: str, item: str, salt: int) -> str:
        return "same" if salt == 0 else exposed_name(server, item, salt)

    names = assign_names(pairs, name=clashing)
    assert len(set(names.values())) == len(names) == len(set(pairs))
    if pairs:
        assert names[pairs[0]] == "same"


# ------------------------------------------- the catalogue and the event feed, in memory


def _member(name: str, index: int, **fields: object) -> Member:
    return Member(ServerSpec(name=name, command="unused", **fields), index, RestartTracker(RestartPolicy()))


def _listing(*tools: str) -> Listing:
    return Listing(tools=[Tool(name=tool, input_schema={"type": "object"}) for tool in tools])


async def test_a_name_once_listed_still_routes_to_its_server_which_says_the_tool_is_gone() -> None:
    events: list[ServerEvent] = []
    a, b = _member("a", 0), _member("b", 1)
    catalogue = Catalogue([b, a], events.append)
    catalogue.publish(a, _listing("x", "y"), announce=False)
    catalogue.publish(b, _listing("x"), announce=False)
    assert [entry.name for entry in Catalogue.tools([a, b])] == ["a__x", "a__y", "b__x"]
    assert catalogue.tool_route("a__y") == ("a", "y")
    assert events == []  # a first listing is no event
    catalogue.publish(a, _listing("x"), announce=True)
    assert [event.catalogue for event in events] == [True]
    assert catalogue.tool_route("a__y") == ("a", "y")
    with pytest.raises(UnknownName, match="server 'a' no longer offers the tool 'y'"):
        Catalogue.check_offered(a, "y", "a__y")
    Catalogue.check_offered(a, "x", "a__x")
    with pytest.raises(UnknownName, match="no tool named 'c__x'"):
        catalogue.tool_route("c__x")
    with pytest.raises(UnknownName, match="no prompt named 'a__x'"):
        catalogue.prompt_route("a__x")


def test_the_catalogue_applies_the_entrys_lists_and_keeps_the_first_of_two_equal_names() -> None:
    a = _member("a", 0, tools_deny=["secret"])
    catalogue = Catalogue([a], lambda event: None)
    catalogue.publish(a, _listing("open", "secret", "open"), announce=False)
    assert [entry.item.name for entry in a.tools] == ["open"]


async def test_the_event_feed_never_waits_and_ends_every_channel() -> None:
    seen: list[ServerEvent] = []

    def on_event(event: ServerEvent) -> None:
        seen.append(event)
        raise RuntimeError("a callback's own bug")

    feed = EventFeed(on_event)
    roomy, tight = feed.subscribe(8), feed.subscribe(1)
    events = [ServerEvent("a", "ready", "starting", 0.0), ServerEvent("a", "stopped", "ready", 1.0)]
    for event in events:
        feed.emit(event)  # the callback's error is logged, never raised
    assert seen == events
    assert feed.dropped == 1
    feed.close()
    assert [event async for event in roomy] == events
    assert [event async for event in tight] == events[:1]
    assert [event async for event in feed.subscribe(8)] == []
