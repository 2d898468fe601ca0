"""Which redirects are followed (`trio_mcp._core.redirects`): the same origin only, bounded."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from trio_mcp._core.http_wire import same_origin
from trio_mcp._core.redirects import MAX_REDIRECTS, Follow, NotFollowed, follow

URL = "https://h.example:8443/mcp?key=s3cr3t"


@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_307_and_308_to_the_same_origin_are_followed_for_every_method(status, method):
    assert follow(URL, method, status, "/mcp/", 0) == Follow("https://h.example:8443/mcp/", 1)


@pytest.mark.parametrize("status", [301, 302, 303])
def test_301_302_303_only_for_get(status):
    assert follow(URL, "GET", status, "/other", 2) == Follow("https://h.example:8443/other", 3)
    step = follow(URL, "POST", status, "/other", 0)
    assert isinstance(step, NotFollowed)
    assert not step.unusable
    assert "without its body" in step.reason


@pytest.mark.parametrize(
    "location",
    ["http://h.example:8443/mcp", "https://other.example:8443/mcp", "https://h.example/mcp", "//evil/x"],
)
def test_another_origin_is_never_followed_and_its_path_is_not_shown(location):
    step = follow(URL, "POST", 307, location + "?token=t0p", 0)
    assert isinstance(step, NotFollowed)
    assert not step.unusable
    assert "another origin" in step.reason
    assert "t0p" not in step.reason
    assert "/mcp" not in step.reason


def test_the_number_of_redirects_is_bounded():
    assert isinstance(follow(URL, "POST", 307, "/a", MAX_REDIRECTS - 1), Follow)
    step = follow(URL, "POST", 307, "/a", MAX_REDIRECTS)
    assert isinstance(step, NotFollowed)
    assert f"more than {MAX_REDIRECTS}" in step.reason
    assert isinstance(follow(URL, "GET", 302, "/a", 1, limit=1), NotFollowed)


@pytest.mark.parametrize(
    "location", ["http://", "ftp://h.example/x", "https://h.example:99999/x", "/a b\x7f"]
)
def test_an_unusable_location_says_so(location):
    step = follow(URL, "GET", 307, location, 0)
    assert isinstance(step, NotFollowed)
    assert step.unusable


@pytest.mark.parametrize("status", [200, 202, 300, 304, 400, 404])
def test_anything_else_is_no_redirect(status):
    assert follow(URL, "POST", status, "/x", 0) is None
    assert follow(URL, "POST", 307, None, 0) is None


@given(
    status=st.integers(100, 599),
    method=st.sampled_from(["GET", "POST", "DELETE", "HEAD"]),
    location=st.one_of(st.none(), st.text(max_size=40)),
    hops=st.integers(0, 10),
)
def test_whatever_the_answer_a_followed_redirect_stays_on_the_origin_and_counts(
    status, method, location, hops
):
    step = follow(URL, method, status, location, hops)
    if isinstance(step, Follow):
        assert same_origin(URL, step.url)
        assert step.hops == hops + 1 <= MAX_REDIRECTS
        assert status in (307, 308) or method in ("GET", "HEAD")


def test_same_origin_reads_a_scheme_in_any_case_and_refuses_an_unreadable_url():
    # The default port of a scheme written in capitals is still its own.
    assert same_origin("HTTPS://h.example/mcp", "https://h.example:443/other")
    assert same_origin("http://h.example:80/", "HTTP://h.example/")
    # An unreadable URL (a bracket left open, a port out of range) shares no origin: no exception.
    assert not same_origin("http://[::1/mcp", "http://[::1]/mcp")
    assert not same_origin("http://h.example:99999/", "http://h.example/")
