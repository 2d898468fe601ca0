"""The stored records of the authorization flow, and the in-memory storage."""

from __future__ import annotations

import pytest

from trio_mcp.auth import ClientInfo, MemoryTokenStorage, Tokens, TokenStorage


def test_reprs_show_no_secret():
    client = ClientInfo("cid", "s3cret-value", "client_secret_basic", ["http://127.0.0.1/cb"], "https://as")
    tokens = Tokens("access-XYZ", "Bearer", "refresh-ABC", "read", 12.0)
    assert "s3cret-value" not in repr(client)
    assert "access-XYZ" not in repr(tokens)
    assert "refresh-ABC" not in repr(tokens)
    assert client.redirect_uris == ("http://127.0.0.1/cb",)


def test_extra_is_read_only():
    client = ClientInfo("cid", extra={"client_name": "x"})
    with pytest.raises(TypeError):
        client.extra["client_name"] = "y"  # type: ignore[index]


async def test_memory_storage_keys_by_resource_issuer_and_client():
    storage = MemoryTokenStorage()
    assert isinstance(storage, TokenStorage)
    client = ClientInfo("cid", issuer="https://as1")
    await storage.set_client("https://mcp/a", "https://as1", client)
    assert await storage.get_client("https://mcp/a", "https://as1") == client
    assert await storage.get_client("https://mcp/a", "https://as2") is None
    assert await storage.get_client("https://mcp/b", "https://as1") is None

    t1 = Tokens("t1")
    await storage.set_tokens("https://mcp/a", "https://as1", "cid", t1)
    await storage.set_tokens("https://mcp/a", "https://as2", "cid", Tokens("t2"))
    assert await storage.get_tokens("https://mcp/a", "https://as1", "cid") == t1
    assert await storage.get_tokens("https://mcp/a", "https://as1", "other") is None
    assert "t1" not in repr(storage)

    await storage.forget("https://mcp/a", "https://as2")
    assert await storage.get_tokens("https://mcp/a", "https://as2", "cid") is None
    assert await storage.get_tokens("https://mcp/a", "https://as1", "cid") == t1
    await storage.forget("https://mcp/a")
    assert await storage.get_client("https://mcp/a", "https://as1") is None
    assert await storage.get_tokens("https://mcp/a", "https://as1", "cid") is None
