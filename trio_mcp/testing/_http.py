"""A `FakeServer` over Streamable HTTP, in memory: an httpx2 transport into the package's HTTP front.

`serve_fake_http` runs a `~trio_mcp._serving.http.HTTPFront` whose
connections are the fake's, and gives an `trio_mcp.HTTPTarget` whose httpx2
client sends its requests to that front through `FakeHTTPTransport`: no
socket, no port, and every task in the test's own Trio run (virtual time
included). This module imports httpx2 (the ``http`` extra); the rest of
`trio_mcp.testing` does not.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx2
import trio

from .._serving.http import FrontGone, HTTPFront, HTTPRequest, HTTPResponse
from .._targets import HTTPTarget

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from .._serving.http import Connect

__all__ = ["FakeHTTPTransport", "serve_fake_http"]


class _EventBody(httpx2.AsyncByteStream):
    """The body of an event-stream answer, event by event as the front gives them."""

    def __init__(self, response: HTTPResponse, request: httpx2.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            try:
                chunk = await self._response.receive()
            except FrontGone as exc:
                raise httpx2.RemoteProtocolError(
                    "peer closed connection without sending complete message body", request=self._request
                ) from exc
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        self._response.close()
        await trio.lowlevel.checkpoint()


class FakeHTTPTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that hands each request to an `HTTPFront` in the same Trio run."""

    def __init__(self, front: HTTPFront) -> None:
        self._front = front

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers.raw]
        try:
            response = await self._front.handle(HTTPRequest(request.method, request.url.path, headers, body))
        except FrontGone as exc:
            raise httpx2.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            ) from exc
        except RuntimeError as exc:  # the front is not running: the block was left
            raise httpx2.ConnectError(f"the fake server is not serving: {exc}", request=request) from exc
        if response.streaming:
            return httpx2.Response(
                response.status,
                headers=response.headers,
                stream=_EventBody(response, request),
                request=request,
            )
        return httpx2.Response(
            response.status, headers=response.headers, content=response.body, request=request
        )


@asynccontextmanager
async def serve_fake_http(
    connect: Connect,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
) -> AsyncIterator[HTTPTarget]:
    """Serve a fake's connections (``connect``) over HTTP in memory while the block runs; yield the
    target that reaches it."""
    front = HTTPFront(connect, path=urlsplit(url).path or "/")
    failure: BaseException | None = None
    async with trio.open_nursery() as nursery:
        await nursery.start(front.run)
        try:
            async with httpx2.AsyncClient(transport=FakeHTTPTransport(front)) as client:
                yield HTTPTarget(url, headers=headers, auth=auth, http_client=client)
        except BaseException as exc:
            # Raised after the nursery, as it is: no ExceptionGroup reaches the test.
            failure = exc
        finally:
            nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
