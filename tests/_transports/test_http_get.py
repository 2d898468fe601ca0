"""The one bounded GET of the server-card reader (``trio_mcp._transports.http_get``), over httpx's mock transport.

The socket side is tested with a real site in tests/test_server_cards.py;
here, what httpx2 hands over: a declared length over the bound, a body that
streams past it, a redirect returned as it came, a body that breaks off, a
URL httpx2 refuses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
import trio

from trio_mcp._errors import ConnectionFailed, ServerCardError
from trio_mcp._transports.http_get import get_bounded

URL = "https://example.com/card"


class Chunks(httpx2.AsyncByteStream):
    """A body of ``count`` chunks, then (optionally) a network error; counts the chunks taken."""

    def __init__(self, chunk: bytes, count: int, *, fail: bool = False) -> None:
        self.chunk = chunk
        self.count = count
        self.fail = fail
        self.taken = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for _ in range(self.count):
            # As a socket does: each chunk is a checkpoint, where a cancelled read stops.
            await trio.lowlevel.checkpoint()
            self.taken += 1
            yield self.chunk
        if self.fail:
            raise httpx2.ReadError("connection reset")


def client(handler) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


async def test_a_body_within_the_bound_is_read_whole_with_the_accept_asked():
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.headers["accept"])
        return httpx2.Response(200, headers={"Content-Type": "application/json"}, content=b'{"a": 1}')

    async with client(handler) as http:
        got = await get_bounded(http, URL, accept="application/mcp-server-card+json", max_bytes=8)
    assert seen == ["application/mcp-server-card+json"]
    assert (got.status, got.content_type, got.body, got.too_large) == (
        200,
        "application/json",
        b'{"a": 1}',
        False,
    )


async def test_a_declared_length_over_the_bound_is_not_read():
    body = Chunks(b"x" * 1000, 1000)

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"Content-Length": "1000000"}, stream=body)

    async with client(handler) as http:
        got = await get_bounded(http, URL, accept="*/*", max_bytes=4096)
    assert got.too_large
    assert got.body == b""
    assert body.taken == 0


async def test_a_streamed_body_is_dropped_at_the_bound():
    body = Chunks(b"x" * 1000, 1_000_000)

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, stream=body)

    async with client(handler) as http:
        got = await get_bounded(http, URL, accept="*/*", max_bytes=4096)
    assert got.too_large
    assert body.taken <= 6


async def test_a_redirect_is_returned_not_followed():
    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/card"
        return httpx2.Response(302, headers={"Location": "https://elsewhere.example/"})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler), follow_redirects=True) as http:
        got = await get_bounded(http, URL, accept="*/*", max_bytes=10)
    assert (got.status, got.location) == (302, "https://elsewhere.example/")


async def test_a_body_that_breaks_off_is_a_connection_failure():
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, stream=Chunks(b"{", 3, fail=True))

    async with client(handler) as http:
        with pytest.raises(ConnectionFailed, match="broke off") as info:
            await get_bounded(http, URL, accept="*/*", max_bytes=100)
    assert info.value.status == 200
    assert isinstance(info.value.__cause__, httpx2.ReadError)


async def test_no_response_is_a_connection_failure():
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused")

    async with client(handler) as http:
        with pytest.raises(ConnectionFailed, match="cannot connect") as info:
            await get_bounded(http, URL + "?token=secret", accept="*/*", max_bytes=100)
    assert "secret" not in str(info.value)


async def test_a_url_httpx_refuses_is_invalid():
    async with client(lambda request: httpx2.Response(200)) as http:
        with pytest.raises(ServerCardError) as info:
            await get_bounded(http, "https://\u2603.example/", accept="*/*", max_bytes=100)
    assert info.value.reason == "invalid"
