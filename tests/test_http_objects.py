"""An HTTPTarget takes httpx2's client and auth, and refuses the old httpx line's by name."""

from __future__ import annotations

import pytest

import trio_mcp

httpx2 = pytest.importorskip("httpx2")

URL = "http://127.0.0.1:1/mcp"


async def test_httpx2_objects_are_taken():
    class Token(httpx2.Auth):
        def auth_flow(self, request):
            yield request

    async with httpx2.AsyncClient() as http:
        target = trio_mcp.HTTPTarget(URL, http_client=http, auth=Token())
        assert target.http_client is http


async def test_an_old_httpx_client_is_a_type_error_naming_httpx2_and_the_migration():
    httpx = pytest.importorskip("httpx", reason="the old httpx line is not installed")
    async with httpx.AsyncClient() as http:
        with pytest.raises(
            TypeError, match=r"http_client is an httpx\.AsyncClient of the old httpx line"
        ) as caught:
            trio_mcp.HTTPTarget(URL, http_client=http)
    assert "httpx2" in str(caught.value)
    assert "From httpx to httpx2" in str(caught.value)


def test_an_old_httpx_auth_is_a_type_error_even_in_a_subclass_of_yours():
    httpx = pytest.importorskip("httpx", reason="the old httpx line is not installed")

    class Token(httpx.Auth):
        def auth_flow(self, request):
            yield request

    with pytest.raises(TypeError, match=r"auth is an httpx\.Auth of the old httpx line, not an httpx2\.Auth"):
        trio_mcp.HTTPTarget(URL, auth=Token())


@pytest.mark.parametrize(("field", "value"), [("http_client", object()), ("auth", "Bearer s3cr3t")])
def test_anything_else_is_a_type_error(field, value):
    kind = "AsyncClient" if field == "http_client" else "Auth"
    with pytest.raises(TypeError, match=rf"{field} must be an httpx2\.{kind}, not "):
        trio_mcp.HTTPTarget(URL, **{field: value})
