"""``subscriptions/listen`` (2026-07-28), against real processes of ``tests/servers/mcp_server.py``.

The acknowledgement and the filter it grants, delivery by subscription id,
several streams at once, the end of a stream from either side (the client's
``notifications/cancelled``; the server's listen result or its
``notifications/cancelled``), and the server's death ending iteration with
`ServerGone`. The server's ``touch`` tool sends the notifications, before
its own result, so they have arrived when ``touch`` returns.

Every test uses the real clock, bounded by ``trio.fail_after(LIMIT)``; no test
asserts speed.
"""

from __future__ import annotations

import pytest
import trio
from client_support import (
    CLIENT_CAPABILITIES,
    LIMIT,
    MODERN,
    PROTOCOL_VERSION,
    SUBSCRIPTION_ID,
    notifications,
    open_client,
    requests,
    wire,
)

from trio_mcp import RequestTimeout, ServerGone


async def hook(*args):
    raise AssertionError("no input expected")


async def test_acknowledgement_and_delivery():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", on_elicitation=hook) as client:
            async with client.listen(tools=True, prompts=True) as sub:
                assert sub.acknowledged == {"toolsListChanged": True, "promptsListChanged": True}
                assert (await client.call_tool("touch", {"tools": True, "prompts": True})).text == "sent 2"
                first = await anext(sub)
                second = await anext(sub)
            sent = await wire(client)
    (listen,) = requests(sent, "subscriptions/listen")
    assert listen["params"]["notifications"] == {"toolsListChanged": True, "promptsListChanged": True}
    meta = listen["params"]["_meta"]
    assert meta[PROTOCOL_VERSION] == MODERN
    assert meta[CLIENT_CAPABILITIES] == {}
    assert first["method"] == "notifications/tools/list_changed"
    assert second["method"] == "notifications/prompts/list_changed"
    for note in (first, second):
        assert note["params"]["_meta"][SUBSCRIPTION_ID] == listen["id"]


async def test_acknowledgement_may_be_narrower():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--listen-refuse", "promptsListChanged") as client:
            async with client.listen(tools=True, prompts=True, resources=True) as sub:
                assert sub.acknowledged == {"toolsListChanged": True, "resourcesListChanged": True}
                await client.call_tool("touch", {"tools": True, "prompts": True, "resources": True})
                await client.call_tool("unlisten")
                got = [note["method"] async for note in sub]
    assert got == ["notifications/tools/list_changed", "notifications/resources/list_changed"]


async def test_resource_subscriptions():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            async with client.listen(resource_uris=["mem://dir", "mem://a"]) as sub:
                assert sub.acknowledged == {"resourceSubscriptions": ["mem://dir", "mem://a"]}
                await client.call_tool("touch", {"uri": "mem://dir/1"})
                await client.call_tool("touch", {"uri": "mem://blob"})
                await client.call_tool("touch", {"uri": "mem://a"})
                await client.call_tool("unlisten")
                got = [note["params"]["uri"] async for note in sub]
            with pytest.raises(TypeError):
                async with client.listen(resource_uris="mem://a"):
                    pytest.fail("listening")  # pragma: no cover
    assert got == ["mem://dir/1", "mem://a"]


async def test_leaving_the_block_cancels_the_stream():
    """The client ends a stream with ``notifications/cancelled`` naming the listen id; nothing else follows."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            async with client.listen(tools=True):
                pass
            assert (await client.call_tool("touch", {"tools": True})).text == "sent 0"
            sent = await wire(client)
    (listen,) = requests(sent, "subscriptions/listen")
    (cancel,) = notifications(sent, "notifications/cancelled")
    assert cancel["params"]["requestId"] == listen["id"]


@pytest.mark.parametrize("how", ["result", "cancelled"])
async def test_server_ends_the_stream(how):
    """The server's listen result or its ``notifications/cancelled`` ends iteration cleanly (edge 30)."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            async with client.listen(tools=True) as sub:
                await client.call_tool("touch", {"tools": True})
                await client.call_tool("unlisten", {"how": how})
                got = [note["method"] async for note in sub]
            assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"
    assert got == ["notifications/tools/list_changed"]


async def test_server_death_ends_iteration_with_server_gone():
    """EOF ends every stream: iteration raises `ServerGone`, not an ExceptionGroup."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            async with client.listen(tools=True) as sub:
                await client.call_tool("touch", {"tools": True})
                await client.call_tool("exit")
                first = await anext(sub)
                with pytest.raises(ServerGone):
                    await anext(sub)
    assert first["method"] == "notifications/tools/list_changed"


async def test_iterating_in_a_task_while_calling():
    got = []
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            async with client.listen(prompts=True) as sub:
                async with trio.open_nursery() as nursery:

                    async def consume():
                        got.extend([note["method"] async for note in sub])

                    nursery.start_soon(consume)
                    for _ in range(3):
                        await client.call_tool("touch", {"prompts": True})
                    await client.call_tool("unlisten")
    assert got == ["notifications/prompts/list_changed"] * 3


async def test_several_streams_are_told_apart_by_subscription_id():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            async with client.listen(tools=True) as tools, client.listen(prompts=True) as prompts:
                await client.call_tool("touch", {"tools": True, "prompts": True})
                await client.call_tool("touch", {"tools": True})
                await client.call_tool("unlisten")
                got_tools = [note async for note in tools]
                got_prompts = [note async for note in prompts]
            sent = await wire(client)
    first, second = requests(sent, "subscriptions/listen")
    assert [n["method"] for n in got_tools] == ["notifications/tools/list_changed"] * 2
    assert [n["method"] for n in got_prompts] == ["notifications/prompts/list_changed"]
    assert {n["params"]["_meta"][SUBSCRIPTION_ID] for n in got_tools} == {first["id"]}
    assert {n["params"]["_meta"][SUBSCRIPTION_ID] for n in got_prompts} == {second["id"]}


@pytest.mark.slow
async def test_unacknowledged_listen_times_out_and_is_cancelled():
    """No acknowledgement within the request timeout: `RequestTimeout`, and the listen is cancelled."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--listen-no-ack", request_timeout=1.0) as client:
            with pytest.raises(RequestTimeout):
                async with client.listen(tools=True):
                    pytest.fail("listening")  # pragma: no cover
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
            sent = await wire(client)
    (listen,) = requests(sent, "subscriptions/listen")
    (cancel,) = notifications(sent, "notifications/cancelled")
    assert cancel["params"]["requestId"] == listen["id"]


# ------------------------------------------------------- the initialize era


async def test_listen_in_the_initialize_era_picks_the_servers_own_notifications():
    """No ``subscriptions/listen`` there: the stream takes the list changes the server sends
    on its own, and subscribes to the resources asked for (unsubscribing as it ends)."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy") as client:
            async with client.listen(tools=True, resource_uris=["file:///a"]) as sub:
                assert sub.acknowledged == {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
                await client.call_tool("touch", {"tools": True, "prompts": True, "uri": "file:///a"})
                got = [await anext(sub), await anext(sub)]
            sent = await wire(client)
    assert sorted(note["method"] for note in got) == [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ]
    assert not requests(sent, "subscriptions/listen")
    assert [m["params"]["uri"] for m in requests(sent, "resources/subscribe")] == ["file:///a"]
    assert [m["params"]["uri"] for m in requests(sent, "resources/unsubscribe")] == ["file:///a"]


async def test_listen_in_the_initialize_era_ends_with_server_gone_when_the_server_dies():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy") as client:
            async with client.listen(tools=True) as sub:
                await client.call_tool("touch", {"tools": True})
                await client.call_tool("exit")
                first = await anext(sub)
                with pytest.raises(ServerGone):
                    await anext(sub)
    assert first["method"] == "notifications/tools/list_changed"
