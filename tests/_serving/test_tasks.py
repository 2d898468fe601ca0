"""Tasks as the demo server serves them, spoken to in raw JSON lines (a real process).

The serving side alone, without the client: what ``trio_mcp._serving.tasks``
answers in each era, exactly as the wire says.

* 2025-11-25: the ``tasks`` capability, ``execution.taskSupport``, a
  ``tools/call`` with ``params.task``, ``tasks/get``, the blocking
  ``tasks/result`` (the original result with the related-task ``_meta``, or
  the original JSON-RPC error), ``tasks/list`` and its pages,
  ``tasks/cancel``, ``notifications/tasks/status``, progress under the
  call's token, and the elicitation sent only while a ``tasks/result`` is
  open. Every line is checked against the official schema.
* 2026-07-28 with the ``io.modelcontextprotocol/tasks`` extension: the
  flat ``CreateTaskResult``, ``tasks/get`` with ``result``, ``error`` or
  ``inputRequests``, ``tasks/update``, the ``tasks/cancel`` acknowledgement,
  ``-32021`` for a client without the extension.
* Both: ``-32602`` for an unknown or expired task.

The pure rules (`trio_mcp._serving.task_rules`) are checked without a process.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import ast_support
import pytest
import trio
from schema_support import validator

from tests.demo.test_demo import (
    SCHEMA_PROBLEM,
    RawDemo,
    check_server_lines,
    initialized,
    modern_params,
    raw_demo,
    text_of,
)
from trio_mcp import RpcError
from trio_mcp._serving import task_rules

#: Seconds any one test may take before it counts as hung.
LIMIT = 30

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
WITH_TASKS = {"extensions": {EXTENSION: {}}, "elicitation": {"form": {}}}
TERMINAL = ("completed", "failed", "cancelled")
ISO = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"


# ----------------------------------------------------------------- helpers


async def legacy_demo(demo: RawDemo, version: str = "2025-11-25") -> dict[str, Any]:
    return await initialized(demo, version, {"elicitation": {"form": {}}})


async def poll(
    demo: RawDemo, task_id: str, until: tuple[str, ...], *, modern: bool = False
) -> dict[str, Any]:
    """Poll ``tasks/get`` every 50 ms until the task's status is one of ``until``."""
    while True:
        params: dict[str, Any] = {"taskId": task_id}
        task = await demo.result("tasks/get", modern_params(params, WITH_TASKS) if modern else params)
        if task["status"] in until:
            return task
        assert task["status"] in ("working", "input_required"), task
        await trio.sleep(0.05)


def check_legacy(demo: RawDemo) -> None:
    """Every line against the 2025-11-25 schema; the answers of task-augmented calls as CreateTaskResult."""
    if SCHEMA_PROBLEM is not None:
        return
    task_calls = {m["id"] for m in demo.sent if m.get("method") == "tools/call" and "task" in m["params"]}
    plain = []
    for line, message in zip(demo.lines, demo.messages, strict=True):
        if "method" not in message and message.get("id") in task_calls and "result" in message:
            validator("2025-11-25", "CreateTaskResult").validate(message["result"])
        else:
            plain.append(line)
    check_server_lines(
        plain,
        "2025-11-25",
        {(type(m["id"]).__name__, m["id"]): m["method"] for m in demo.sent if "id" in m and "method" in m},
    )


def check_modern_task(task: dict[str, Any], *, created: bool = False) -> None:
    """The fields every task of the extension carries (a flat CreateTaskResult, or a DetailedTask)."""
    assert task["resultType"] == ("task" if created else "complete"), task
    assert isinstance(task["taskId"], str)
    assert task["taskId"]
    assert task["status"] in ("working", "input_required", *TERMINAL)
    assert "task" not in task
    assert "ttl" not in task
    assert "pollInterval" not in task
    assert task["ttlMs"] == 300_000
    assert task["pollIntervalMs"] == 200
    for key in ("createdAt", "lastUpdatedAt"):
        assert re.match(ISO, task[key]), task[key]


# ------------------------------------------------------------ 2025-11-25


async def test_legacy_announces_tasks_and_the_tools_that_take_them():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            result = await legacy_demo(demo)
            assert result["capabilities"]["tasks"] == {
                "list": {},
                "cancel": {},
                "requests": {"tools": {"call": {}}},
            }
            tools = {tool["name"]: tool for tool in (await demo.result("tools/list"))["tools"]}
            assert tools["report"]["execution"] == {"taskSupport": "optional"}
            assert tools["batch"]["execution"] == {"taskSupport": "required"}
            assert "execution" not in tools["echo"]
            check_legacy(demo)


async def test_before_2025_11_25_there_are_no_tasks():
    """An older revision: no capability, no execution, params.task ignored, tasks/* unknown."""
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            result = await legacy_demo(demo, "2025-06-18")
            assert "tasks" not in result["capabilities"]
            tools = (await demo.result("tools/list"))["tools"]
            assert all("execution" not in tool for tool in tools)
            args = {"steps": 1, "delay": 0}
            done = await demo.result("tools/call", {"name": "report", "arguments": args, "task": {}})
            assert text_of(done) == "Report ready: 1 step."
            done = await demo.result("tools/call", {"name": "batch", "arguments": {"items": 2, "delay": 0}})
            assert text_of(done) == "Processed 2 items."
            assert (await demo.error("tasks/get", {"taskId": "x"}))["code"] == -32601


async def test_legacy_lifecycle_progress_status_and_the_blocking_result():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await legacy_demo(demo)
            params = {
                "name": "report",
                "arguments": {"steps": 3, "delay": 0.2},
                "task": {"ttl": 60_000},
                "_meta": {"progressToken": "tok"},
            }
            created = (await demo.result("tools/call", params))["task"]
            assert created["status"] == "working"
            assert created["ttl"] == 60_000
            assert created["pollInterval"] == 200
            task_id = created["taskId"]
            got = await demo.result("tasks/get", {"taskId": task_id})
            assert got["taskId"] == task_id
            assert got["status"] in ("working", "completed")
            # tasks/result blocks until the end, then returns the call's result.
            ask = await demo.request("tasks/result", {"taskId": task_id})
            answer = await demo.answer(ask)
            result = answer["result"]
            assert text_of(result) == "Report ready: 3 steps."
            assert result["_meta"][RELATED] == {"taskId": task_id}
            progress = demo.notes("notifications/progress")
            assert [note["params"]["progress"] for note in progress] == [1, 2, 3]
            for note in progress:
                assert note["params"]["progressToken"] == "tok"
                assert note["params"]["_meta"][RELATED] == {"taskId": task_id}
            statuses = [note["params"]["status"] for note in demo.notes("notifications/tasks/status")]
            assert statuses == ["completed"]
            final = await demo.result("tasks/get", {"taskId": task_id})
            assert final["status"] == "completed"
            assert final["createdAt"] == created["createdAt"]
            # The result stays: a second tasks/result answers at once.
            again = await demo.result("tasks/result", {"taskId": task_id})
            assert text_of(again) == "Report ready: 3 steps."
            check_legacy(demo)


async def test_legacy_question_is_asked_only_while_tasks_result_is_open():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await legacy_demo(demo)
            args = {"steps": 2, "delay": 0.05, "ask": True}
            created = (await demo.result("tools/call", {"name": "report", "arguments": args, "task": {}}))[
                "task"
            ]
            task_id = created["taskId"]
            waiting = await poll(demo, task_id, ("input_required",))
            assert waiting["statusMessage"] == "Who is the report for?"
            await trio.sleep(0.3)
            await demo.result("tasks/get", {"taskId": task_id})
            assert not any(m.get("method") == "elicitation/create" for m in demo.messages)
            result_id = await demo.request("tasks/result", {"taskId": task_id})
            while True:
                message = await demo.read()
                assert message is not None
                if message.get("method") == "elicitation/create":
                    break
            assert message["params"]["_meta"][RELATED] == {"taskId": task_id}
            assert message["params"]["message"] == "Who is the report for?"
            await demo.send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"action": "accept", "content": {"name": "Ada"}},
                }
            )
            result = (await demo.answer(result_id))["result"]
            assert text_of(result) == "Report ready: 2 steps, for Ada."
            statuses = [note["params"]["status"] for note in demo.notes("notifications/tasks/status")]
            assert statuses == ["input_required", "working", "completed"]
            check_legacy(demo)


async def test_legacy_failures_rpc_error_and_is_error():
    """A JSON-RPC error fails the task and is what tasks/result answers; so does an isError result."""
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await legacy_demo(demo)
            args = {"items": 3, "delay": 0.01, "fail_at": 2}
            task_id = (await demo.result("tools/call", {"name": "batch", "arguments": args, "task": {}}))[
                "task"
            ]["taskId"]
            failed = await poll(demo, task_id, TERMINAL)
            assert failed["status"] == "failed"
            assert failed["statusMessage"] == "item 2 of 3 failed"
            error = await demo.error("tasks/result", {"taskId": task_id})
            assert error == {"code": -32603, "message": "item 2 of 3 failed", "data": {"item": 2}}
            bad = {"name": "report", "arguments": {"steps": "many"}, "task": {}}
            task_id = (await demo.result("tools/call", bad))["task"]["taskId"]
            assert (await poll(demo, task_id, TERMINAL))["status"] == "failed"
            result = await demo.result("tasks/result", {"taskId": task_id})
            assert result["isError"] is True
            assert "'steps' must be an integer" in text_of(result)
            check_legacy(demo)


async def test_legacy_cancel_mid_task_and_after():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await legacy_demo(demo)
            args = {"items": 100, "delay": 0.5}
            task_id = (await demo.result("tools/call", {"name": "batch", "arguments": args, "task": {}}))[
                "task"
            ]["taskId"]
            blocked = await demo.request("tasks/result", {"taskId": task_id})
            cancelled = await demo.result("tasks/cancel", {"taskId": task_id})
            assert cancelled["taskId"] == task_id
            assert cancelled["status"] == "cancelled"
            # The open tasks/result ends: a cancelled task has no result.
            assert (await demo.answer(blocked))["error"]["code"] == -32602
            assert (await demo.result("tasks/get", {"taskId": task_id}))["status"] == "cancelled"
            error = await demo.error("tasks/cancel", {"taskId": task_id})
            assert error["code"] == -32602
            assert "terminal status: cancelled" in error["message"]
            assert [t["taskId"] for t in (await demo.result("tasks/list"))["tasks"]] == [task_id]
            await trio.sleep(0.6)
            assert not demo.notes("notifications/progress")
            assert (await demo.result("tasks/get", {"taskId": task_id}))["status"] == "cancelled"
            check_legacy(demo)


async def test_legacy_refusals_unknown_ids_pages_and_expiry():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await legacy_demo(demo)
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                error = await demo.error(method, {"taskId": "nope"})
                assert error["code"] == -32602, method
                assert "not found" in error["message"], method
            assert (await demo.error("tasks/get", {}))["code"] == -32602
            error = await demo.error("tools/call", {"name": "batch", "arguments": {}})
            assert error["code"] == -32601
            assert "must be called as a task" in error["message"]
            error = await demo.error("tools/call", {"name": "echo", "arguments": {"text": "x"}, "task": {}})
            assert error["code"] == -32601
            assert (await demo.error("tools/call", {"name": "report", "task": {"ttl": -1}}))["code"] == -32602
            assert (await demo.error("tasks/list", {"cursor": "bogus"}))["code"] == -32602
            ids = []
            for _ in range(51):
                created = await demo.result(
                    "tools/call", {"name": "batch", "arguments": {"delay": 0}, "task": {"ttl": 1}}
                )
                assert created["task"]["ttl"] == 1000  # the shortest time to live granted
                ids.append(created["task"]["taskId"])
            first = await demo.result("tasks/list")
            assert len(first["tasks"]) == 50
            second = await demo.result("tasks/list", {"cursor": first["nextCursor"]})
            assert "nextCursor" not in second
            assert [t["taskId"] for t in first["tasks"] + second["tasks"]] == ids
            await trio.sleep(1.2)
            error = await demo.error("tasks/get", {"taskId": ids[0]})
            assert error["code"] == -32602
            assert (await demo.result("tasks/list"))["tasks"] == []
            check_legacy(demo)


# ------------------------------------------------------------ 2026-07-28


async def test_modern_announces_the_extension_and_asks_for_it():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            found = await demo.result("server/discover", modern_params())
            assert found["capabilities"]["extensions"] == {EXTENSION: {}}
            tools = (await demo.result("tools/list", modern_params()))["tools"]
            assert all("execution" not in tool for tool in tools)
            # Without the extension: report runs within the call, batch cannot, tasks/* refuse.
            plain = await demo.result(
                "tools/call", modern_params({"name": "report", "arguments": {"steps": 1, "delay": 0}})
            )
            assert plain["resultType"] == "complete"
            assert text_of(plain) == "Report ready: 1 step."
            error = await demo.error("tools/call", modern_params({"name": "batch", "arguments": {}}))
            assert error["code"] == -32021
            assert error["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
            for method in ("tasks/get", "tasks/update", "tasks/cancel"):
                assert (await demo.error(method, modern_params({"taskId": "x"})))["code"] == -32021, method
            # Only the initialize era has tasks/result and tasks/list.
            for method in ("tasks/result", "tasks/list"):
                assert (await demo.error(method, modern_params({"taskId": "x"}, WITH_TASKS)))[
                    "code"
                ] == -32601
            assert (await demo.error("tasks/get", modern_params({"taskId": "x"}, WITH_TASKS)))[
                "code"
            ] == -32602


async def test_modern_lifecycle_with_input_requests():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            args = {"steps": 2, "delay": 0.05, "ask": True}
            created = await demo.result(
                "tools/call", modern_params({"name": "report", "arguments": args}, WITH_TASKS)
            )
            check_modern_task(created, created=True)
            task_id = created["taskId"]
            waiting = await poll(demo, task_id, ("input_required",), modern=True)
            check_modern_task(waiting)
            (key,) = waiting["inputRequests"]
            request = waiting["inputRequests"][key]
            assert request["method"] == "elicitation/create"
            assert request["params"]["message"] == "Who is the report for?"
            # A snapshot: the same question, under the same key, until answered.
            again = await demo.result("tasks/get", modern_params({"taskId": task_id}, WITH_TASKS))
            assert again["inputRequests"] == waiting["inputRequests"]
            answers = {
                key: {"action": "accept", "content": {"name": "Bob"}},
                "never-asked": {"action": "decline"},
            }
            ack = await demo.result(
                "tasks/update", modern_params({"taskId": task_id, "inputResponses": answers}, WITH_TASKS)
            )
            assert set(ack) == {"resultType", "_meta"}
            assert ack["resultType"] == "complete"
            done = await poll(demo, task_id, TERMINAL, modern=True)
            check_modern_task(done)
            assert done["status"] == "completed"
            assert "inputRequests" not in done
            assert done["result"]["resultType"] == "complete"
            assert text_of(done["result"]) == "Report ready: 2 steps, for Bob."
            assert not demo.notes("notifications/tasks/status")
            assert not demo.notes("notifications/progress")
            bad = modern_params({"taskId": task_id, "inputResponses": []}, WITH_TASKS)
            assert (await demo.error("tasks/update", bad))["code"] == -32602


async def test_modern_failed_is_an_rpc_error_and_is_error_completes():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            args = {"items": 2, "delay": 0, "fail_at": 1}
            task_id = (
                await demo.result(
                    "tools/call", modern_params({"name": "batch", "arguments": args}, WITH_TASKS)
                )
            )["taskId"]
            failed = await poll(demo, task_id, TERMINAL, modern=True)
            assert failed["status"] == "failed"
            assert "result" not in failed
            assert failed["error"] == {"code": -32603, "message": "item 1 of 2 failed", "data": {"item": 1}}
            bad = modern_params({"name": "report", "arguments": {"steps": 0}}, WITH_TASKS)
            task_id = (await demo.result("tools/call", bad))["taskId"]
            done = await poll(demo, task_id, TERMINAL, modern=True)
            assert done["status"] == "completed"
            assert done["result"]["isError"] is True


async def test_modern_cancel_is_an_acknowledgement():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            args = {"items": 100, "delay": 0.5}
            task_id = (
                await demo.result(
                    "tools/call", modern_params({"name": "batch", "arguments": args}, WITH_TASKS)
                )
            )["taskId"]
            ack = await demo.result("tasks/cancel", modern_params({"taskId": task_id}, WITH_TASKS))
            assert set(ack) == {"resultType", "_meta"}
            got = await demo.result("tasks/get", modern_params({"taskId": task_id}, WITH_TASKS))
            assert got["status"] == "cancelled"
            # Cancelling an ended task is acknowledged too; an unknown one is not.
            assert (await demo.result("tasks/cancel", modern_params({"taskId": task_id}, WITH_TASKS)))[
                "resultType"
            ] == "complete"
            assert (await demo.error("tasks/cancel", modern_params({"taskId": "nope"}, WITH_TASKS)))[
                "code"
            ] == -32602


# ------------------------------------------------------------ pure rules


@pytest.mark.parametrize(
    ("support", "asked", "expected"),
    [
        ("forbidden", False, False),
        ("forbidden", True, -32601),
        ("optional", False, False),
        ("optional", True, True),
        ("required", False, -32601),
        ("required", True, True),
    ],
)
def test_legacy_task_rules(support, asked, expected):
    params = {"task": {}} if asked else {}
    decide = lambda version: task_rules.wants_task(  # noqa: E731
        era="legacy", version=version, tool="t", support=support, params=params
    )
    if isinstance(expected, int) and not isinstance(expected, bool):
        with pytest.raises(RpcError) as caught:
            decide("2025-11-25")
        assert caught.value.code == expected
    else:
        assert decide("2025-11-25") is expected
    assert decide("2025-06-18") is False


@pytest.mark.parametrize(
    ("support", "declared", "expected"),
    [
        ("forbidden", True, False),
        ("optional", False, False),
        ("optional", True, True),
        ("required", False, -32021),
        ("required", True, True),
    ],
)
def test_modern_task_rules(support, declared, expected):
    caps = {"extensions": {EXTENSION: {}}} if declared else {"extensions": {"other/x": {}}}
    decide = lambda: task_rules.wants_task(  # noqa: E731
        era="modern", version="2026-07-28", tool="t", support=support, params={"task": {}}, capabilities=caps
    )
    if isinstance(expected, int) and not isinstance(expected, bool):
        with pytest.raises(RpcError) as caught:
            decide()
        assert caught.value.code == expected
        assert caught.value.data == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    else:
        assert decide() is expected


def test_iso_time():
    assert task_rules.iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert task_rules.iso_time(1.5) == "1970-01-01T00:00:01.500Z"


def test_the_task_rules_import_no_trio():
    path = Path(task_rules.__file__)
    for node in ast.walk(ast_support.parse(path.read_text())):
        if isinstance(node, ast.Import):
            assert all(alias.name.split(".")[0] != "trio" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            assert (node.module or "").split(".")[0] != "trio"
        elif isinstance(node, ast.ImportFrom):
            assert node.module in ("_core.eras", "_core.jsonrpc", "_errors", "rules"), node.module


async def test_start_soon_refuses_a_connection_not_served():
    from trio_mcp._serving.server import Server

    class App:
        pass

    server = Server(App())  # type: ignore[arg-type]
    with pytest.raises(trio.BrokenResourceError):
        server.start_soon(trio.sleep, 0, name="x")
    await trio.lowlevel.checkpoint()


async def test_a_modern_question_is_in_place_before_the_status_says_input_required():
    # What a tasks/get served at any point sees: never input_required without its question.
    from trio_mcp._serving.tasks import ServedTask, TaskContext, Tasks

    tasks = Tasks(server=None)  # type: ignore[arg-type]  # the 2026-07-28 era notifies nobody
    task = ServedTask("t1", "modern", 1, ttl_ms=None, poll_interval_ms=100, progress_token=None)
    seen = []

    class Watching(trio.abc.Instrument):
        def after_task_step(self, _task: trio.lowlevel.Task) -> None:
            if task.status == "input_required":
                seen.append(task.detailed()["inputRequests"])

    async def answer():
        while not task.input_requests:
            await task.wait_changed()
        (key,) = task.input_requests
        assert task.take_answers({key: {"action": "decline"}, "never-asked": {}}) == [key]
        assert task.status == "working"

    trio.lowlevel.add_instrument(Watching())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer)
        assert await TaskContext(tasks, task).ask("elicitation/create", {"message": "?"}) == {
            "action": "decline"
        }
    assert seen
    assert all(seen)
    assert task.status == "working"
