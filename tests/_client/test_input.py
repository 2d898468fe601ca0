"""Input requests, against real processes of ``tests/servers/mcp_server.py``.

2026-07-28: multi round-trip requests (``input_required`` results answered
through the hooks, concurrently, and the call sent again with
``inputResponses`` and the ``requestState`` byte for byte), their limits and
failures, and manual mode. Initialize era: the same hooks answer the
server's own requests (``elicitation/create``, ``sampling/createMessage``,
``roots/list``), and a missing or failing hook becomes an error answer.

Every test uses the real clock, bounded by ``trio.fail_after(LIMIT)``; no test
asserts speed.
"""

from __future__ import annotations

import pytest
import trio
from client_support import (
    ALL_HOOK_CAPS,
    CLIENT_CAPABILITIES,
    LIMIT,
    TRICKY,
    open_client,
    requests,
    responses,
    stats,
    tool_calls,
    wire,
)

from trio_mcp import InputRequestFailed, ProtocolError, RequestTimeout, RpcError
from trio_mcp.types import (
    CallToolResult,
    CreateMessageParams,
    CreateMessageResult,
    ElicitFormParams,
    ElicitResult,
    ElicitUrlParams,
    GetPromptResult,
    InputRequiredResult,
    ReadResourceResult,
    Root,
    TextContent,
)

ERAS = pytest.mark.parametrize("era", ["modern", "legacy"])


class Recorder:
    """Hooks that answer and remember what they were asked."""

    def __init__(self, *, as_dict: bool = False) -> None:
        self.as_dict = as_dict
        self.elicitations: list[ElicitFormParams | ElicitUrlParams] = []
        self.samplings: list[CreateMessageParams] = []
        self.roots_calls = 0

    async def on_elicitation(self, params):
        self.elicitations.append(params)
        if self.as_dict:
            return {"action": "accept", "content": {"name": "Ann"}}
        return ElicitResult(action="accept", content={"name": "Ann"})

    async def on_sampling(self, params):
        self.samplings.append(params)
        if self.as_dict:
            return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m1"}
        return CreateMessageResult(
            role="assistant", content=TextContent(text="4"), model="m1", stop_reason="endTurn"
        )

    async def on_roots(self):
        self.roots_calls += 1
        if self.as_dict:
            return {"roots": [{"uri": "file:///b", "name": "b"}]}
        return [Root(uri="file:///a", name="a")]

    def hooks(self):
        return {
            "on_elicitation": self.on_elicitation,
            "on_sampling": self.on_sampling,
            "on_roots": self.on_roots,
        }


# ----------------------------------------------------------------- modern


@pytest.mark.parametrize("as_dict", [False, True])
async def test_mrtr_elicitation_round_trip(as_dict):
    """``input_required``: the hook answers, the same call goes again under a new id with the answers."""
    hooks = Recorder(as_dict=as_dict)
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **hooks.hooks()) as client:
            result = await client.call_tool("ask", {"mode": "form"})
            sent = await wire(client)
    assert isinstance(result, CallToolResult)
    assert result.text == "hello Ann"
    (asked,) = hooks.elicitations
    assert isinstance(asked, ElicitFormParams)
    assert asked.message == "What is your name?"
    assert asked.requested_schema["required"] == ["name"]
    first, second = tool_calls(sent, "ask")
    assert first["id"] != second["id"]
    assert "inputResponses" not in first["params"]
    assert second["params"]["inputResponses"] == {"name": {"action": "accept", "content": {"name": "Ann"}}}
    # No requestState came, so none goes back.
    assert "requestState" not in second["params"]
    assert second["params"]["arguments"] == first["params"]["arguments"] == {"mode": "form"}
    assert second["params"]["_meta"][CLIENT_CAPABILITIES] == ALL_HOOK_CAPS


async def test_mrtr_request_state_goes_back_byte_for_byte():
    hooks = Recorder()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **hooks.hooks()) as client:
            asked = await client.call_tool("ask", {"state": True}, manual=True)
            result = await client.call_tool("ask", {"state": True})
            sent = await wire(client)
    assert isinstance(asked, InputRequiredResult)
    state = asked.request_state
    assert state is not None
    assert all(char in state for char in TRICKY)
    # The server checks it too, and echoes what it got.
    assert result.structured_content["state"] == state
    rounds = tool_calls(sent, "ask")
    assert [r["params"].get("requestState") for r in rounds] == [None, None, state]


@ERAS
async def test_hooks_are_called_concurrently(era):
    """Two input requests in one round: each hook waits for the other to have started."""
    elicitation_started = trio.Event()
    sampling_started = trio.Event()

    async def on_elicitation(params):
        elicitation_started.set()
        await sampling_started.wait()
        return {"action": "accept", "content": {"name": "Zed"}}

    async def on_sampling(params):
        sampling_started.set()
        await elicitation_started.wait()
        return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}

    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", era, on_elicitation=on_elicitation, on_sampling=on_sampling
        ) as client:
            result = await client.call_tool("two")
            sent = await wire(client)
    assert result.text == "hello Zed; model m said 4"
    if era == "modern":
        _, retry = tool_calls(sent, "two")
        assert set(retry["params"]["inputResponses"]) == {"e", "s"}
        assert "resultType" not in retry["params"]["inputResponses"]["s"]


async def test_answers_are_not_carried_across_rounds():
    """Each round sends only that round's answers; ``requestState`` only when the server sent one."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **Recorder().hooks()) as client:
            result = await client.call_tool("multi", {"plan": ["ask", "ask", "state"]})
            sent = await wire(client)
    assert result.text == "done after 3 rounds"
    rounds = tool_calls(sent, "multi")
    assert len(rounds) == 4
    assert [sorted(r["params"].get("inputResponses", {})) for r in rounds] == [[], ["q0"], ["q1"], []]
    states = [r["params"].get("requestState") for r in rounds]
    assert states[0] is None
    assert [s.split(";")[0] for s in states[1:]] == ["round=1", "round=2", "round=3"]
    assert len({r["id"] for r in rounds}) == 4


async def test_state_only_rounds_need_no_hook():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            result = await client.call_tool("multi", {"plan": ["state", "state"]})
            sent = await wire(client)
    assert result.text == "done after 2 rounds"
    assert len(tool_calls(sent, "multi")) == 3


@pytest.mark.parametrize("ask", [True, False])
async def test_max_rounds(ask):
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", max_rounds=3, **Recorder().hooks()) as client:
            with pytest.raises(InputRequestFailed, match="max_rounds=3") as caught:
                await client.call_tool("endless", {"ask": ask})
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
            sent = await wire(client)
    assert caught.value.method == ""
    assert len(tool_calls(sent, "endless")) == 3


@pytest.mark.parametrize(
    ("tool", "method", "key", "hook"),
    [
        ("ask", "elicitation/create", "name", "on_elicitation"),
        ("sample", "sampling/createMessage", "llm", "on_sampling"),
        ("roots", "roots/list", "roots", "on_roots"),
    ],
)
async def test_missing_hook_fails_naming_it(tool, method, key, hook):
    hooks = {name: fn for name, fn in Recorder().hooks().items() if name != hook}
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **hooks) as client:
            with pytest.raises(InputRequestFailed) as caught:
                await client.call_tool(tool)
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
            sent = await wire(client)
    assert hook in str(caught.value)
    assert caught.value.method == method
    assert caught.value.key == key
    assert len(tool_calls(sent, tool)) == 1


async def test_hook_exception_is_the_cause():
    async def on_elicitation(params):
        raise ValueError("the user walked away")

    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", on_elicitation=on_elicitation) as client:
            with pytest.raises(InputRequestFailed) as caught:
                await client.call_tool("ask")
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
    assert isinstance(caught.value.__cause__, ValueError)
    assert caught.value.method == "elicitation/create"
    assert caught.value.key == "name"
    assert "on_elicitation" in str(caught.value)


async def test_failing_hook_cancels_its_sibling():
    """One of two concurrent hooks raises: the other is cancelled, one InputRequestFailed (no group)."""
    cancelled = trio.Event()

    async def on_elicitation(params):
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.set()
            raise

    async def on_sampling(params):
        await trio.lowlevel.checkpoint()
        raise RuntimeError("no model")

    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "modern", on_elicitation=on_elicitation, on_sampling=on_sampling
        ) as client:
            with pytest.raises(InputRequestFailed) as caught:
                await client.call_tool("two")
            assert cancelled.is_set()
    assert caught.value.key == "s"
    assert isinstance(caught.value.__cause__, RuntimeError)


async def test_input_timeout():
    async def on_elicitation(params):
        await trio.sleep_forever()

    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", on_elicitation=on_elicitation, input_timeout=0.5) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("ask")
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"


async def test_manual_mode():
    hooks = Recorder()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **hooks.hooks()) as client:
            asked = await client.call_tool("ask", manual=True)
            assert isinstance(asked, InputRequiredResult)
            assert asked.request_state is None
            (key,) = asked.input_requests
            assert key == "name"
            assert asked.input_requests[key].method == "elicitation/create"
            assert asked.input_requests[key].params["message"] == "What is your name?"
            done = await client.call_tool(
                "ask", manual=True, input_responses={"name": {"action": "accept", "content": {"name": "Man"}}}
            )
            assert isinstance(done, CallToolResult)
            assert done.text == "hello Man"
            stated = await client.call_tool("ask", {"state": True}, manual=True)
            declined = await client.call_tool(
                "ask",
                {"state": True},
                manual=True,
                input_responses={"name": {"action": "decline"}},
                request_state=stated.request_state,
            )
            complete = await client.call_tool("echo", {"text": "plain"}, manual=True)
    assert hooks.elicitations == []
    assert declined.text == "action decline"
    assert isinstance(complete, CallToolResult)


@pytest.mark.parametrize(("tool", "what"), [("weird", "unknown resultType"), ("empty", "asked for nothing")])
async def test_bad_input_required_results_are_protocol_errors(tool, what):
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **Recorder().hooks()) as client:
            with pytest.raises(ProtocolError, match=what):
                await client.call_tool(tool)
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"


async def test_legacy_result_type_is_not_interpreted():
    """``resultType`` means nothing in the initialize era: such results are plain results."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", **Recorder().hooks()) as client:
            weird = await client.call_tool("weird")
            empty = await client.call_tool("empty")
    assert isinstance(weird, CallToolResult)
    assert weird.text == "weird"
    assert isinstance(empty, CallToolResult)
    assert empty.content == []


async def test_sampling_and_roots_hooks_get_typed_params():
    hooks = Recorder()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **hooks.hooks()) as client:
            sampled = await client.call_tool("sample")
            rooted = await client.call_tool("roots")
            sent = await wire(client)
    assert sampled.text == "model m1 said 4"
    assert rooted.text == "roots file:///a"
    (params,) = hooks.samplings
    assert params.max_tokens == 5
    assert params.system_prompt == "Be brief."
    assert params.messages[0].content.text == "What is 2+2?"
    assert params.model_preferences.hints[0].name == "small"
    _, retry = tool_calls(sent, "sample")
    assert retry["params"]["inputResponses"]["llm"] == {
        "role": "assistant",
        "content": {"type": "text", "text": "4"},
        "model": "m1",
        "stopReason": "endTurn",
    }
    _, retry = tool_calls(sent, "roots")
    assert retry["params"]["inputResponses"]["roots"] == {"roots": [{"uri": "file:///a", "name": "a"}]}


async def test_url_elicitation():
    hooks = Recorder()
    seen = []

    async def on_elicitation(params):
        seen.append(params)
        return ElicitResult(action="accept")

    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", on_elicitation=on_elicitation) as client:
            result = await client.call_tool("ask", {"mode": "url"})
    assert hooks.elicitations == []
    (params,) = seen
    assert isinstance(params, ElicitUrlParams)
    assert params.url == "https://example.com/auth?x=1"
    assert result.structured_content["answer"] == {"action": "accept"}


@ERAS
async def test_prompts_and_reads_ask_for_input(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, "--ttl", "60000", **Recorder().hooks()) as client:
            prompt = await client.get_prompt("mrtr")
            read = await client.read_resource("mem://ask")
            again = await client.read_resource("mem://ask")
            counted = await stats(client)
    assert isinstance(prompt, GetPromptResult)
    assert prompt.messages[0].content.text == "hello Ann"
    assert isinstance(read, ReadResourceResult)
    assert read.contents[0].text == "hello Ann"
    assert again == read
    # A result that took input is never cached.
    assert counted["reads"]["mem://ask"] == (4 if era == "modern" else 2)


async def test_missing_capability_is_declared_and_retried_once():
    """``-32021`` for a capability we have: one retry, new id, capability declared (edge 32)."""
    hooks = Recorder()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", on_sampling=hooks.on_sampling) as client:
            assert await client.request("x/needs", {"cap": "sampling"}) == {
                "resultType": "complete",
                "ok": True,
                "_meta": {
                    "io.modelcontextprotocol/serverInfo": {"name": "mcp-test-server", "version": "1.2.3"}
                },
            }
            with pytest.raises(RpcError) as always:
                await client.request("x/needs", {"cap": "sampling", "always": True})
            with pytest.raises(RpcError) as lacking:
                await client.request("x/needs", {"cap": "roots"})
            sent = await wire(client)
    assert always.value.code == lacking.value.code == -32021
    first, retry, bug, bug_retry, lack = requests(sent, "x/needs")
    assert first["params"]["_meta"][CLIENT_CAPABILITIES] == {}
    assert retry["params"]["_meta"][CLIENT_CAPABILITIES] == {"sampling": {}}
    assert retry["id"] != first["id"]
    assert bug_retry["id"] != bug["id"]
    assert lack["params"]["cap"] == "roots"


# ----------------------------------------------------------------- legacy


@pytest.mark.parametrize("as_dict", [False, True])
async def test_legacy_server_requests_go_to_the_same_hooks(as_dict):
    hooks = Recorder(as_dict=as_dict)
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", **hooks.hooks()) as client:
            asked = await client.call_tool("ask")
            sampled = await client.call_tool("sample")
            rooted = await client.call_tool("roots")
            sent = await wire(client)
    assert asked.text == "hello Ann"
    assert sampled.text == "model m1 said 4"
    assert rooted.text == ("roots file:///b" if as_dict else "roots file:///a")
    (elicitation,) = hooks.elicitations
    assert isinstance(elicitation, ElicitFormParams)
    assert elicitation.message == "What is your name?"
    (sampling,) = hooks.samplings
    assert isinstance(sampling, CreateMessageParams)
    assert sampling.max_tokens == 5
    assert hooks.roots_calls == 1
    answers = responses(sent)
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[0]["result"] == {"action": "accept", "content": {"name": "Ann"}}
    assert answers[1]["result"]["model"] == "m1"
    assert "roots" in answers[2]["result"]


@pytest.mark.parametrize("tool", ["ask", "sample", "roots"])
async def test_legacy_request_without_a_hook_is_method_not_found(tool):
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy") as client:
            result = await client.call_tool(tool)
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
    assert result.is_error
    (error,) = result.structured_content["error"].values()
    assert error["code"] == -32601


async def test_legacy_hook_raising_is_an_error_answer_and_the_connection_keeps_working():
    async def on_sampling(params):
        raise RuntimeError("no model today")

    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", on_sampling=on_sampling) as client:
            result = await client.call_tool("sample")
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
            assert (await client.call_tool("sample")).is_error
    assert result.is_error
    (error,) = result.structured_content["error"].values()
    assert error["code"] == -32603


async def test_legacy_url_elicitation_not_declared_at_2025_06_18():
    """URL mode did not exist in 2025-06-18: -32602, the hook is not called."""
    hooks = Recorder()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", protocol="2025-06-18", **hooks.hooks()) as client:
            url = await client.call_tool("ask", {"mode": "url"})
            form = await client.call_tool("ask")
    assert url.is_error
    assert next(iter(url.structured_content["error"].values()))["code"] == -32602
    assert form.text == "hello Ann"
    (params,) = hooks.elicitations
    assert isinstance(params, ElicitFormParams)


async def test_legacy_url_elicitation_at_2025_11_25():
    seen = []

    async def on_elicitation(params):
        seen.append(params)
        return {"action": "accept"}

    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", on_elicitation=on_elicitation) as client:
            result = await client.call_tool("ask", {"mode": "url"})
    (params,) = seen
    assert isinstance(params, ElicitUrlParams)
    assert params.elicitation_id == "el-1"
    assert result.structured_content["answer"] == {"action": "accept"}


async def test_legacy_elicitation_at_2025_03_26_is_refused():
    """Elicitation was not declared (it did not exist in 2025-03-26): refused, the hook not called."""
    hooks = Recorder()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", protocol="2025-03-26", **hooks.hooks()) as client:
            result = await client.call_tool("ask")
    assert result.is_error
    (error,) = result.structured_content["error"].values()
    assert error["code"] == -32601
    assert hooks.elicitations == []


async def test_legacy_server_withdraws_its_request():
    """The server cancels its own request: the hook is cancelled and nothing is answered (edge 36)."""
    started = trio.Event()
    cancelled = trio.Event()

    async def on_elicitation(params):
        started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.set()
            raise

    results = {}
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", on_elicitation=on_elicitation) as client:
            async with trio.open_nursery() as nursery:

                async def ask():
                    results["ask"] = await client.call_tool("ask", {"withdraw": True})

                nursery.start_soon(ask)
                await started.wait()
                withdrawn = (await client.call_tool("withdraw")).structured_content["withdrawn"]
            await cancelled.wait()
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"
            sent = await wire(client)
    assert results["ask"].text == "withdrawn"
    (request_id,) = withdrawn
    assert [m for m in responses(sent) if m["id"] == request_id] == []


@ERAS
async def test_hook_returning_a_malformed_answer(era):
    """A hook's answer that is not an ElicitResult fails the input request, never the connection."""

    async def on_elicitation(params):
        return {"content": {"name": "no action"}}

    with trio.fail_after(LIMIT):
        async with open_client("--era", era, on_elicitation=on_elicitation) as client:
            if era == "modern":
                with pytest.raises(InputRequestFailed) as caught:
                    await client.call_tool("ask")
                assert caught.value.key == "name"
            else:
                assert (await client.call_tool("ask")).is_error
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"


async def test_sampling_with_tools_is_not_declared():
    """Sampling with ``tools`` needs ``sampling.tools``, which the client does not declare."""
    hooks = Recorder()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **hooks.hooks()) as client:
            with pytest.raises(InputRequestFailed, match=r"sampling\.tools") as caught:
                await client.call_tool("sample", {"tools": True})
        async with open_client("--era", "legacy", **hooks.hooks()) as client:
            result = await client.call_tool("sample", {"tools": True})
    assert caught.value.method == "sampling/createMessage"
    assert caught.value.key == "llm"
    assert result.is_error
    (error,) = result.structured_content["error"].values()
    assert error["code"] == -32602
    assert hooks.samplings == []


# ------------------------------------------------------- the complete answer


@pytest.mark.parametrize(
    "result",
    [
        {"content": [{"type": "text", "text": "a"}]},
        {"content": [{"type": "text", "text": "a"}], "resultType": "complete"},
    ],
)
def test_a_complete_answer_is_typed_without_the_rounds(result):
    """`InputHandler.complete` types the common answer itself, as `run_rounds` would have."""
    from trio_mcp import ClientOptions
    from trio_mcp._client.input import InputHandler

    handler = InputHandler(ClientOptions(), server="server 's'")
    assert handler.complete("tools/call", CallToolResult, result) == CallToolResult(
        content=[TextContent(text="a")]
    )


@pytest.mark.parametrize("kind", ["input_required", None, "task", "weird"])
def test_any_other_answer_is_left_to_the_rounds(kind):
    """Input asked for, a claim of an extension's, a ``resultType`` to refuse (even null): all
    go to `run_rounds`, which answers, resolves or refuses them."""
    from trio_mcp import ClientOptions
    from trio_mcp._client.input import InputHandler

    handler = InputHandler(ClientOptions(), server="server 's'")
    assert handler.complete("tools/call", CallToolResult, {"content": [], "resultType": kind}) is None


def test_a_complete_answer_of_a_bad_shape_is_a_protocol_error():
    from trio_mcp import ClientOptions
    from trio_mcp._client.input import InputHandler

    handler = InputHandler(ClientOptions(), server="server 's'")
    with pytest.raises(ProtocolError, match="CallToolResult"):
        handler.complete("tools/call", CallToolResult, {"content": "not a list"})
