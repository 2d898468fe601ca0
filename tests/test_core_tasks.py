"""The pure rules of MCP tasks (`trio_mcp._core.tasks`): both eras' wire, the state machine, polling, input."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from trio_mcp import ProtocolError, RpcError, Task, TaskCancelled, TaskFailed, TaskGone, TaskRef
from trio_mcp._core import tasks
from trio_mcp._core.eras import result_type

STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL = {"completed", "failed", "cancelled"}


# ------------------------------------------------------------------ reading


def test_a_legacy_creation_reply_is_read_from_its_task_wrapper() -> None:
    reply = {
        "task": {
            "taskId": "abc",
            "status": "working",
            "statusMessage": "Gathering sources...",
            "createdAt": "2026-12-01T00:00:00Z",
            "lastUpdatedAt": "2026-12-01T00:00:00Z",
            "ttl": 300000,
            "pollInterval": 1000,
        }
    }
    task = tasks.created_task(reply, "legacy")
    assert task == Task(
        task_id="abc",
        status="working",
        status_message="Gathering sources...",
        created_at="2026-12-01T00:00:00Z",
        last_updated_at="2026-12-01T00:00:00Z",
        ttl_ms=300000,
        poll_interval_ms=1000,
    )
    assert not task.terminal


def test_a_modern_creation_reply_is_flat() -> None:
    reply = {
        "resultType": "task",
        "taskId": "t1",
        "status": "working",
        "ttlMs": 900000,
        "pollIntervalMs": 5000,
        "vendor": 1,
        "_meta": {"x": 1},
    }
    task = tasks.created_task(reply, "modern")
    assert task is not None
    assert (task.ttl_ms, task.poll_interval_ms, task.extra) == (900000, 5000, {"vendor": 1})


@pytest.mark.parametrize(
    ("reply", "era"),
    [
        ({"content": [], "isError": False}, "legacy"),
        ({"resultType": "complete", "content": []}, "modern"),
        ({"content": []}, "modern"),
        ({"resultType": "input_required", "inputRequests": {}}, "modern"),
    ],
)
def test_a_reply_without_a_task_is_the_result_itself(reply: dict[str, object], era: str) -> None:
    assert tasks.created_task(reply, era) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad",
    [None, [], {"status": "working"}, {"taskId": "", "status": "working"}, {"taskId": 3, "status": "working"},
     {"taskId": "a"}, {"taskId": "a", "status": 7}],
)  # fmt: skip
def test_a_malformed_task_is_a_protocol_error(bad: object) -> None:
    with pytest.raises(ProtocolError):
        tasks.decode_task(bad, "legacy")


def test_optional_fields_of_the_wrong_type_are_left_out() -> None:
    task = tasks.decode_task(
        {"taskId": "a", "status": "working", "ttl": "soon", "pollInterval": True, "statusMessage": 5},
        "legacy",
    )
    assert (task.ttl_ms, task.poll_interval_ms, task.status_message) == (None, None, None)
    # A null ttl is an unlimited one.
    assert tasks.decode_task({"taskId": "a", "status": "working", "ttl": None}, "legacy").ttl_ms is None


def test_an_unknown_status_is_kept_and_is_not_terminal() -> None:
    task = tasks.decode_task({"taskId": "a", "status": "paused"}, "modern")
    assert task.status == "paused"
    assert not task.terminal


def test_a_modern_poll_inlines_the_result_error_or_input_requests() -> None:
    done = tasks.decode_polled(
        {"resultType": "complete", "taskId": "a", "status": "completed", "result": {"content": []}}, "modern"
    )
    assert done.result == {"content": []}
    failed = tasks.decode_polled(
        {"taskId": "a", "status": "failed", "error": {"code": -32000, "message": "boom"}}, "modern"
    )
    assert failed.error == {"code": -32000, "message": "boom"}
    asking = tasks.decode_polled(
        {
            "taskId": "a",
            "status": "input_required",
            "inputRequests": {"k1": {"method": "elicitation/create", "params": {"message": "?"}}},
        },
        "modern",
    )
    assert list(asking.input_requests) == ["k1"]
    # Input requests count only while the task asks for input.
    working = tasks.decode_polled(
        {"taskId": "a", "status": "working", "inputRequests": {"k1": {"method": "roots/list"}}}, "modern"
    )
    assert working.input_requests == {}


@pytest.mark.parametrize(
    "reply",
    [
        {"taskId": "a", "status": "completed"},
        {"taskId": "a", "status": "input_required", "inputRequests": []},
        {"taskId": "a", "status": "input_required", "inputRequests": {"k": {"params": {}}}},
    ],
)
def test_a_broken_modern_poll_is_a_protocol_error(reply: dict[str, object]) -> None:
    with pytest.raises(ProtocolError):
        tasks.decode_polled(reply, "modern")


def test_a_legacy_list_page() -> None:
    page = tasks.decode_list({"tasks": [{"taskId": "a", "status": "working"}], "nextCursor": "n"})
    assert [task.task_id for task in page.tasks] == ["a"]
    assert page.next_cursor == "n"
    assert tasks.decode_list({"tasks": [], "nextCursor": 7}).next_cursor is None
    with pytest.raises(ProtocolError):
        tasks.decode_list({})


def test_a_failure_names_the_task_and_keeps_the_error() -> None:
    error = tasks.failure("t9", {"code": -32001, "message": "disk full", "data": {"free": 0}})
    assert isinstance(error, TaskFailed)
    assert (error.task_id, error.code, error.message, error.data) == ("t9", -32001, "disk full", {"free": 0})
    assert "t9" in str(error)
    assert "disk full" in str(error)
    assert tasks.failure("t9", None).code == -32603


# -------------------------------------------------------------- the machine


def snapshot(status: str, message: str | None = None, task_id: str = "t") -> Task:
    return Task(task_id=task_id, status=status, status_message=message)


def test_the_first_terminal_snapshot_wins() -> None:
    state = tasks.TaskState("t")
    assert state.observe(snapshot("working")) == (True, None)
    assert state.observe(snapshot("working")) == (False, None)
    assert state.observe(snapshot("working", "stage 2"))[0]
    assert state.observe(snapshot("cancelled"))[0]
    news, problem = state.observe(snapshot("completed"))
    assert not news
    assert problem is not None
    assert "cancelled" in problem
    assert state.final is not None
    assert state.final.status == "cancelled"


def test_a_snapshot_of_another_task_is_ignored() -> None:
    state = tasks.TaskState("t")
    news, problem = state.observe(snapshot("completed", task_id="u"))
    assert not news
    assert problem is not None
    assert state.final is None


@pytest.mark.property
@given(
    st.lists(st.sampled_from(STATUSES), max_size=30), st.lists(st.none() | st.text(max_size=3), max_size=30)
)
def test_the_state_machine_never_leaves_a_terminal_state(
    statuses: list[str], messages: list[str | None]
) -> None:
    state = tasks.TaskState("t")
    first_terminal = next((status for status in statuses if status in TERMINAL), None)
    published: list[Task] = []
    for index, status in enumerate(statuses):
        message = messages[index] if index < len(messages) else None
        news, _ = state.observe(snapshot(status, message))
        if news:
            published.append(snapshot(status, message))
    assert (state.final.status if state.final else None) == first_terminal
    # What is published never repeats itself back to back, and ends at the first terminal one.
    for before, after in itertools.pairwise(published):
        assert (before.status, before.status_message) != (after.status, after.status_message)
    if first_terminal is not None:
        assert published[-1].status == first_terminal
        assert sum(task.status in TERMINAL for task in published) == 1


# ------------------------------------------------------------------ polling


def test_the_poll_interval_is_the_servers_within_bounds() -> None:
    assert tasks.poll_delay(1000) == 1.0
    assert tasks.poll_delay(10) == tasks.POLL_FLOOR
    assert tasks.poll_delay(10**9) == tasks.POLL_CAP
    assert tasks.poll_delay(None) == tasks.DEFAULT_POLL_MS / 1000
    assert tasks.poll_delay(0) == tasks.DEFAULT_POLL_MS / 1000


@pytest.mark.property
@given(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=3)
    | st.integers(min_value=10**20, max_value=10**400)
)
def test_the_poll_delay_is_always_between_the_floor_and_the_cap(interval: object) -> None:
    delay = tasks.poll_delay(interval)
    assert tasks.POLL_FLOOR <= delay <= tasks.POLL_CAP
    assert tasks.POLL_FLOOR >= 0.1


# -------------------------------------------------------------------- input


def test_each_input_request_is_answered_once() -> None:
    ledger = tasks.InputLedger()
    assert ledger.take({"a": 1, "b": 2}) == {"a": 1, "b": 2}
    assert ledger.take({"a": 1, "b": 2, "c": 3}) == {"c": 3}
    ledger.release(["b"])
    assert ledger.take({"a": 1, "b": 2}) == {"b": 2}
    assert "a" in ledger
    assert len(ledger) == 3


@pytest.mark.property
@given(st.lists(st.lists(st.sampled_from("abcdef"), max_size=4), max_size=10))
def test_no_key_is_taken_twice(polls: list[list[str]]) -> None:
    ledger = tasks.InputLedger()
    taken: list[str] = []
    for keys in polls:
        taken.extend(ledger.take(dict.fromkeys(keys)))
    assert len(taken) == len(set(taken))
    assert set(taken) == {key for keys in polls for key in keys}


def test_related_task_ids() -> None:
    params = tasks.with_related_task({"message": "?"}, "t1")
    assert tasks.related_task_id(params) == "t1"
    # A request that names its task already keeps it.
    assert tasks.related_task_id(tasks.with_related_task(params, "t2")) == "t1"
    assert tasks.related_task_id({"message": "?"}) is None

    from trio_mcp.types import ElicitFormParams

    hook_params = ElicitFormParams(
        message="?", requested_schema={}, meta={tasks.RELATED_TASK: {"taskId": "t3"}}
    )
    assert tasks.related_task_id(hook_params) == "t3"


# ------------------------------------------------------- asking for a task


@pytest.mark.parametrize(
    ("caps", "execution", "expected"),
    [
        ({"requests": {"tools": {"call": {}}}}, {"taskSupport": "required"}, "required"),
        ({"requests": {"tools": {"call": {}}}}, {"taskSupport": "optional"}, "optional"),
        ({"requests": {"tools": {"call": {}}}}, {"taskSupport": "forbidden"}, "forbidden"),
        ({"requests": {"tools": {"call": {}}}}, None, "forbidden"),
        ({"requests": {"tools": {"call": {}}}}, {"taskSupport": "sometimes"}, "forbidden"),
        # No tasks.requests.tools.call: never, whatever the tool says.
        (None, {"taskSupport": "required"}, "forbidden"),
        ({"list": {}}, {"taskSupport": "optional"}, "forbidden"),
        ({"requests": {"tools": {}}}, {"taskSupport": "optional"}, "forbidden"),
    ],
)
def test_when_a_legacy_call_is_sent_as_a_task(caps: object, execution: object, expected: str) -> None:
    assert tasks.legacy_support(caps, execution) == expected  # type: ignore[arg-type]


def test_declaring_the_extension_keeps_what_else_is_declared() -> None:
    caps = {"elicitation": {}, "extensions": {"other/ext": {"v": 1}}}
    declared = tasks.declare_extension(caps)
    assert declared == {"elicitation": {}, "extensions": {"other/ext": {"v": 1}, tasks.EXTENSION: {}}}
    assert caps == {"elicitation": {}, "extensions": {"other/ext": {"v": 1}}}


def test_a_missing_capability_error_that_asks_for_the_extension() -> None:
    assert tasks.needs_extension({"requiredCapabilities": {"extensions": {tasks.EXTENSION: {}}}})
    assert not tasks.needs_extension({"requiredCapabilities": {"elicitation": {}}})
    assert not tasks.needs_extension(None)


def test_a_task_result_type_needs_the_extension_declared() -> None:
    reply = {"resultType": "task", "taskId": "a", "status": "working"}
    with pytest.raises(ProtocolError):
        result_type("tools/call", reply)
    assert result_type("tools/call", reply, tasks=True) == "task"
    with pytest.raises(ProtocolError):
        result_type("prompts/get", reply, tasks=True)


# ------------------------------------------------------------------- models


def test_a_task_ref_goes_through_json() -> None:
    ref = TaskRef(task_id="t", tool="report", era="legacy", protocol_version="2025-11-25", server="s")
    assert TaskRef.from_json(ref.to_json()) == ref


@pytest.mark.parametrize(
    "bad",
    [None, [], {"taskId": "t"}, {"taskId": "t", "tool": "x", "era": "old", "protocolVersion": "v"},
     {"taskId": "t", "tool": "x", "era": "modern", "protocolVersion": "v", "server": 3}],
)  # fmt: skip
def test_a_bad_task_ref_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="task reference"):
        TaskRef.from_json(bad)


def test_tasks_requests_name_their_task_in_mcp_name() -> None:
    from trio_mcp._core.http_wire import modern_headers

    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"taskId": "t-1\u00e9"}}
        headers = modern_headers(message, "2026-07-28")
        assert headers["mcp-method"] == method
        assert headers["mcp-name"] == "=?base64?dC0xw6k=?="
    assert "mcp-name" not in modern_headers({"method": "tasks/get", "params": {}}, "2026-07-28")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
TASK_KEYS = st.sampled_from(
    ["taskId", "status", "statusMessage", "createdAt", "ttl", "ttlMs", "pollInterval", "pollIntervalMs",
     "result", "error", "inputRequests", "resultType", "task", "tasks", "nextCursor"]
)  # fmt: skip
TASKISH = st.dictionaries(TASK_KEYS, JSON_VALUES | st.sampled_from(STATUSES), max_size=10)


@pytest.mark.property
@given(TASKISH, st.sampled_from(["modern", "legacy"]))
def test_any_reply_is_read_or_refused_with_a_protocol_error(reply: dict[str, object], era: str) -> None:
    """Whatever a server sends, the readers give a model or raise ProtocolError, nothing else."""
    for read in (
        lambda: tasks.created_task(reply, era),  # type: ignore[arg-type]
        lambda: tasks.decode_polled(reply, era),  # type: ignore[arg-type]
        lambda: tasks.decode_list(reply),
    ):
        try:
            found = read()
        except ProtocolError:
            continue
        if isinstance(found, tasks.Polled):
            assert isinstance(found.task.task_id, str)
            assert found.task.task_id
            assert found.task.ttl_ms is None or found.task.ttl_ms >= 0
            assert all(isinstance(asked.get("method"), str) for asked in found.input_requests.values())
    tasks.failure("t", reply.get("error"))


# ----------------------------------------------------------------- the follower

FLOOR = tasks.POLL_FLOOR


def wire(status: str, era: str, **extra: object) -> dict[str, object]:
    """A ``tasks/get`` reply of either era."""
    reply: dict[str, object] = {"taskId": "t", "status": status, **extra}
    if era == "modern" and status == "completed" and "result" not in reply:
        reply["result"] = {"content": [{"type": "text", "text": "done"}]}
    return reply


def follower(era: str, status: str = "working", interval: int | None = None) -> tasks.Follower:
    f = tasks.Follower("t", "tool", era)  # type: ignore[arg-type]
    f.snapshot(tasks.Task(task_id="t", status=status, poll_interval_ms=interval))
    return f


def test_the_first_poll_waits_for_the_interval_the_server_suggested() -> None:
    f = follower("modern", interval=2000)
    assert f.next(10.0) == tasks.SleepUntil(12.0)
    assert f.next(12.0) == tasks.Poll()
    f.polled(wire("working", "modern", pollIntervalMs=500), 12.0)
    assert f.next(12.0) == tasks.SleepUntil(12.5)


def test_a_modern_task_asking_for_input_is_polled_at_once_and_each_request_answered_once() -> None:
    f = follower("modern", "input_required")
    assert f.next(0.0) == tasks.Poll()
    asked = {"q": {"method": "elicitation/create", "params": {"message": "?"}}}
    f.polled(wire("input_required", "modern", inputRequests=asked), 0.0)
    action = f.next(0.0)
    assert isinstance(action, tasks.AnswerInput)
    assert action.requests["q"]["params"]["_meta"] == {tasks.RELATED_TASK: {"taskId": "t"}}
    # Polling goes on while the hooks answer, and the same request is not asked again.
    assert f.next(0.0) == tasks.SleepUntil(1.0)
    assert f.next(1.0) == tasks.Poll()
    f.polled(wire("input_required", "modern", inputRequests=asked), 1.0)
    assert not isinstance(f.next(1.0), tasks.AnswerInput)
    f.answered(["q"], {"q": {"action": "accept"}})
    assert f.next(1.5) == tasks.SendUpdate({"q": {"action": "accept"}})
    f.update_sent(1.5)
    # After tasks/update: the next poll at the floor.
    assert f.next(1.5) == tasks.SleepUntil(1.5 + FLOOR)


def test_a_modern_outcome_is_inlined_in_the_poll() -> None:
    f = follower("modern")
    f.next(0.0)
    assert f.next(1.0) == tasks.Poll()
    f.polled(wire("completed", "modern", result={"content": [], "isError": True}), 1.0)
    assert f.next(1.0) == tasks.Finish(result={"content": [], "isError": True})
    f = follower("modern")
    f.next(0.0)
    f.next(1.0)
    f.polled(wire("failed", "modern", statusMessage="broke"), 1.0)
    outcome = f.next(1.0)
    assert isinstance(outcome, tasks.Finish)
    assert isinstance(outcome.error, TaskFailed)
    assert "broke" in str(outcome.error)


def test_a_completed_modern_task_whose_result_never_comes_is_a_protocol_error() -> None:
    f = follower("modern")
    f.snapshot(tasks.Task(task_id="t", status="completed"))
    now = 0.0
    for _ in range(tasks.POLLS_AFTER_END):
        action = f.next(now)
        if isinstance(action, tasks.SleepUntil):
            now = action.deadline
            action = f.next(now)
        assert action == tasks.Poll()
        f.polled(wire("working", "modern"), now)
    outcome = f.next(now)
    assert isinstance(outcome, tasks.Finish)
    assert isinstance(outcome.error, ProtocolError)


def test_a_legacy_task_opens_its_result_when_it_asks_for_input_or_ends() -> None:
    f = follower("legacy")
    assert isinstance(f.next(0.0), tasks.SleepUntil)
    f.snapshot(tasks.Task(task_id="t", status="input_required"))
    assert f.next(0.1) == tasks.OpenResult()
    f.snapshot(tasks.Task(task_id="t", status="completed"))
    # Ended: tasks/result, open, gives the outcome; no more polls.
    assert f.next(5.0) == tasks.SleepUntil(float("inf"))
    f.result_arrived({"content": []})
    assert f.next(5.0) == tasks.Finish(result={"content": []})


def test_a_legacy_result_before_any_final_snapshot_is_confirmed_by_a_poll() -> None:
    f = follower("legacy", "input_required")
    assert f.next(0.0) == tasks.OpenResult()
    f.result_arrived({"content": []})
    assert f.next(0.0) == tasks.Poll()
    f.polled(wire("completed", "legacy"), 0.0)
    assert f.next(0.0) == tasks.Finish(result={"content": []})
    # ... or by a notification that comes first.
    f = follower("legacy", "input_required")
    f.next(0.0)
    f.result_arrived({"content": []})
    f.snapshot(tasks.Task(task_id="t", status="completed"))
    assert f.next(0.0) == tasks.Finish(result={"content": []})


@pytest.mark.parametrize("flagged", [False, True])
def test_a_failed_legacy_task_never_gives_a_success(flagged: bool) -> None:
    f = follower("legacy")
    f.snapshot(tasks.Task(task_id="t", status="failed", status_message="it raised"))
    assert f.next(0.0) == tasks.OpenResult()
    result: dict[str, object] = {"content": []}
    if flagged:
        result["isError"] = True
    f.result_arrived(result)
    outcome = f.next(0.0)
    assert isinstance(outcome, tasks.Finish)
    if flagged:
        # A tool that ran and failed: its result, flagged.
        assert outcome.result == result
    else:
        assert isinstance(outcome.error, TaskFailed)
        assert "it raised" in str(outcome.error)


def test_invalid_params_means_gone_except_for_cancel() -> None:
    for method in ("tasks/get", "tasks/result", "tasks/update"):
        f = follower("legacy")
        f.failed(method, RpcError(-32602, "unknown task"))
        outcome = f.next(0.0)
        assert isinstance(outcome, tasks.Finish)
        assert isinstance(outcome.error, TaskGone)
        assert "tool 'tool'" in str(outcome.error)
    f = follower("legacy")
    f.failed("tasks/cancel", RpcError(-32602, "terminal"))
    assert f.next(0.0) == tasks.Poll()
    # The same rule for a request by id, outside any follower.
    found = tasks.gone("t", RpcError(-32602, "no such task"))
    assert isinstance(found, TaskGone)
    assert str(found) == "the server does not know task t: no such task"
    assert tasks.gone("t", RpcError(-32603, "broke")) is None
    assert tasks.unknown_task(RpcError(-32602, "no such task"))
    assert not tasks.unknown_task(RpcError(-32603, "broke"))


def test_a_cancel_stops_the_hooks_and_polls_as_soon_as_the_floor_allows() -> None:
    f = follower("modern", "input_required")
    assert f.next(0.0) == tasks.Poll()
    asked = {"q": {"method": "elicitation/create", "params": {}}}
    f.polled(wire("input_required", "modern", inputRequests=asked), 0.0)
    assert isinstance(f.next(0.0), tasks.AnswerInput)
    f.cancel_requested({})
    assert f.next(0.01) == tasks.StopInput()
    assert f.next(0.01) == tasks.SleepUntil(FLOOR)
    f.answered(["q"], {"q": {"action": "accept"}})
    # No answer goes to a cancelled task.
    assert f.next(FLOOR) == tasks.Poll()
    f.polled(wire("cancelled", "modern"), FLOOR)
    outcome = f.next(FLOOR)
    assert isinstance(outcome, tasks.Finish)
    assert isinstance(outcome.error, TaskCancelled)
    assert "tool 'tool'" in str(outcome.error)


def _behaviour(era: str) -> st.SearchStrategy[dict[str, object]]:
    """One thing a server may answer to a request about the task."""
    interval = st.none() | st.integers(min_value=-5, max_value=10**13)
    keys = st.lists(st.sampled_from("abcd"), min_size=1, max_size=3)
    # Mostly a task that goes on (so that input is asked, and asked again), sometimes an end.
    status = st.sampled_from(
        ("working", "input_required", "input_required", "input_required", *STATUSES, "paused")
    )
    error = st.builds(lambda code: {"error": code}, st.sampled_from((-32602, -32603, -32000)))
    return st.integers(0, 9).flatmap(
        lambda roll: (
            error
            if roll == 0
            else st.builds(
                lambda s, i, k, flagged, broken: {
                    "status": s,
                    "interval": i,
                    "keys": k,
                    "isError": flagged,
                    "broken": broken,
                },
                status,
                interval,
                keys,
                st.booleans(),
                st.integers(0, 4).map(lambda roll: era == "modern" and roll == 0),
            )
        )
    )


def _reply(era: str, said: dict[str, object]) -> dict[str, object]:
    status = str(said["status"])
    extra: dict[str, object] = {}
    if said["interval"] is not None:
        extra["pollIntervalMs" if era == "modern" else "pollInterval"] = said["interval"]
    if era == "modern":
        if status == "input_required":
            extra["inputRequests"] = {
                key: {"method": "elicitation/create", "params": {}}
                for key in said["keys"]  # type: ignore[attr-defined]
            }
        if status == "completed" and not said["broken"]:
            extra["result"] = {"content": [], "isError": said["isError"]}
        if status == "failed" and not said["broken"]:
            extra["error"] = {"code": -32000, "message": "it broke"}
    return (
        wire(status, era, **extra)
        if not said["broken"] or status != "completed"
        else {
            "taskId": "t",
            "status": status,
        }
    )


@pytest.mark.property
@given(st.sampled_from(["legacy", "modern"]), st.data())
def test_the_follower_always_ends_within_its_rules(era: str, data: st.DataObject) -> None:
    """Whatever a server says, in whatever order: the follower ends, never polls faster
    than its floor, never answers an input twice, and a failed task never gives a success."""
    f = follower(era, data.draw(st.sampled_from(STATUSES[:2])))
    budget = data.draw(st.integers(min_value=0, max_value=30))
    behaviour = _behaviour(era)
    now = 0.0
    polls: list[float] = []
    answered: list[str] = []
    answering: list[list[str]] = []
    result_open = False
    result_pending = False
    final: str | None = None

    def server() -> dict[str, object] | None:
        """What the server says next; once its budget is spent, it has forgotten the task."""
        nonlocal budget
        if budget <= 0:
            return None
        budget -= 1
        return data.draw(behaviour)

    def answer(method: str) -> None:
        said = server()
        if said is None or "error" in said:
            code = -32602 if said is None else said["error"]
            f.failed(method, RpcError(code, "no"))  # type: ignore[arg-type]
        elif method == "tasks/get":
            f.polled(_reply(era, said), now)
        elif method == "tasks/result":
            result: dict[str, object] = {"content": []}
            if said["isError"]:
                result["isError"] = True
            f.result_arrived(result)
        else:
            f.update_sent(now)

    for _step in range(400):
        if f.outcome is not None:
            # Decided (by an error, say): what arrives afterwards changes nothing.
            break
        # Things that happen between steps: a status notification, a cancel, the hooks' answers.
        if era == "legacy" and data.draw(st.integers(0, 5)) == 0:
            f.snapshot(tasks.Task(task_id="t", status=data.draw(st.sampled_from(STATUSES))))
        if data.draw(st.integers(0, 20)) == 0:
            f.cancel_requested(
                {"taskId": "t", "status": data.draw(st.sampled_from(STATUSES))} if era == "legacy" else {}
            )
        if answering and data.draw(st.booleans()):
            keys = answering.pop(0)
            f.answered(keys, {key: {"action": "accept"} for key in keys})
        if f.state.final is not None:
            if final is None:
                final = f.state.final.status
            assert f.state.final.status == final
        action = f.next(now)
        if isinstance(action, tasks.Finish):
            break
        if isinstance(action, tasks.Poll):
            polls.append(now)
            answer("tasks/get")
            now += 0.001
        elif isinstance(action, tasks.OpenResult):
            assert era == "legacy"
            assert not result_open
            result_open = result_pending = True
        elif isinstance(action, tasks.AnswerInput):
            assert era == "modern"
            answered.extend(action.requests)
            answering.append(list(action.requests))
        elif isinstance(action, tasks.StopInput):
            answering.clear()
        elif isinstance(action, tasks.SendUpdate):
            answer("tasks/update")
            now += 0.001
        else:
            assert isinstance(action, tasks.SleepUntil)
            assert action.deadline > now
            if result_pending and (action.deadline == float("inf") or data.draw(st.booleans())):
                result_pending = False
                answer("tasks/result")
            elif answering and action.deadline == float("inf"):
                keys = answering.pop(0)
                f.answered(keys, {})
            else:
                assert action.deadline < float("inf"), "sleeps for ever with nothing to wait for"
                now = action.deadline
    else:
        raise AssertionError("the follower never ended")
    ended = f.state.final.status if f.state.final is not None else None
    outcome = f.next(now)
    assert isinstance(outcome, tasks.Finish)
    assert f.next(now + 1) is outcome
    assert (outcome.result is None) != (outcome.error is None)
    # Never faster than the floor.
    for before, after in itertools.pairwise(polls):
        assert after - before >= FLOOR - 1e-9
    # Each input answered once.
    assert len(answered) == len(set(answered))
    # A failed or cancelled task never gives a success.
    if ended == "cancelled":
        assert isinstance(outcome.error, TaskCancelled)
    if ended == "failed" and outcome.result is not None:
        assert outcome.result.get("isError") is True
    if outcome.result is not None:
        assert ended in (None, "completed", "failed")
