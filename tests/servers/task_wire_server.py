"""A scripted stdio server that runs tool calls as tasks, in either era (standard library only).

Usage: ``python task_wire_server.py [--era modern|legacy]``

``modern`` (the default) speaks 2026-07-28 with the
``io.modelcontextprotocol/tasks`` extension: a task is created only for a
``tools/call`` that declares the extension
(``_meta[clientCapabilities].extensions``); the reply is the flat
``{"resultType": "task", "taskId", "status", "ttlMs", "pollIntervalMs"}``;
``tasks/get`` inlines ``result``, ``error`` or ``inputRequests``;
``tasks/update`` takes ``inputResponses`` and ``tasks/cancel`` is an empty
acknowledgement; a ``tasks/*`` request without the extension gets ``-32021``
and an unknown task ``-32602``.

``legacy`` speaks 2025-11-25 (``initialize``; ``tasks.requests.tools.call``)
for what server-everything cannot show: a failed task, and a server request
that asks the client for a task (``params.task``) of its own.

A task's state is computed from the clock when it is polled: a tool's
``seconds`` argument says when it ends. Tools (modern):

* ``slow {seconds}``: completes with the text ``done``;
* ``fail``: fails with the JSON-RPC error ``-32050 job failed``;
* ``tool_error``: completes with an ``isError`` result;
* ``ask``: asks for an elicitation (``inputRequests``), then completes with
  the answer; ``ask_two`` asks for an elicitation and the roots at once;
* ``quick``: answers at once, even when the extension is declared;
* ``needs_task``: ``-32021`` unless the extension is declared, then as ``slow``;
* ``mrtr_then_task``: first an ``input_required`` round (before any task),
  then a task that completes with the answer;
* ``forever``: never ends (until cancelled); with ``{"finish": true}`` a
  cancel is acknowledged but the task completes anyway;
* ``vanish``: the second ``tasks/get`` gets ``-32602`` (expired);
* ``dump``: answers at once with ``structuredContent.lines``, every line read.

Legacy tools: ``legacy_fail`` (``tasks/result`` answers ``-32050``; a
``progressToken`` gets a progress notification at each ``tasks/get``),
``legacy_error`` (``isError`` result, status ``failed``), ``vanish`` (the
first ``tasks/get`` gets ``-32602``), ``elicit_task``
(the server asks ``elicitation/create`` with ``params.task``; answers with
what came back).
"""

from __future__ import annotations

import json
import sys
import time
import uuid

EXT = "io.modelcontextprotocol/tasks"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
RELATED = "io.modelcontextprotocol/related-task"
ERA = "legacy" if "--era" in sys.argv and sys.argv[sys.argv.index("--era") + 1] == "legacy" else "modern"
POLL_MS = 100

lines: list[str] = []
tasks: dict[str, dict] = {}
pending: dict[str, object] = {}  # our requests to the client: id -> the tools/call id waiting on it


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id: object, result: dict) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def fail(request_id: object, code: int, message: str, data: object = None) -> None:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    send({"jsonrpc": "2.0", "id": request_id, "error": error})


def text(value: str, is_error: bool = False) -> dict:
    result: dict = {"content": [{"type": "text", "text": value}]}
    if is_error:
        result["isError"] = True
    return result


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def wire_task(task: dict) -> dict:
    out = {
        "taskId": task["id"],
        "status": task["status"],
        "createdAt": task["created"],
        "lastUpdatedAt": now(),
    }
    if task.get("message"):
        out["statusMessage"] = task["message"]
    if ERA == "modern":
        out.update(ttlMs=60000, pollIntervalMs=POLL_MS)
    else:
        out.update(ttl=60000, pollInterval=POLL_MS)
    return out


def new_task(tool: str, arguments: dict) -> dict:
    task = {
        "id": uuid.uuid4().hex,
        "tool": tool,
        "args": arguments,
        "status": "working",
        "created": now(),
        "start": time.monotonic(),
        "answers": {},
        "updates": 0,
        "polls": 0,
    }
    tasks[task["id"]] = task
    return task


def advance(task: dict) -> None:
    """Move a task on, from the clock and the answers it got."""
    if task["status"] in ("completed", "failed", "cancelled"):
        return
    tool, args = task["tool"], task["args"]
    elapsed = time.monotonic() - task["start"]
    if task.get("cancel_at") is not None:
        task["status"] = "completed" if args.get("finish") else "cancelled"
        task["result"] = text("finished anyway")
        return
    if tool in ("ask", "ask_two"):
        wanted = {f"{task['id']}:name"} | ({f"{task['id']}:roots"} if tool == "ask_two" else set())
        if wanted <= set(task["answers"]):
            task["status"] = "completed"
            task["result"] = text(json.dumps(task["answers"], sort_keys=True))
        else:
            task["status"] = "input_required"
        return
    if tool == "forever" or elapsed < float(args.get("seconds", 0.3)):
        task["message"] = f"step {int(elapsed * 10)}"
        return
    if tool == "fail":
        task["status"] = "failed"
        task["error"] = {"code": -32050, "message": "job failed", "data": {"why": "scripted"}}
    elif tool == "tool_error":
        task["status"] = "completed"
        task["result"] = text("bad input", is_error=True)
    elif tool == "legacy_fail":
        task["status"] = "failed"
    elif tool == "legacy_error":
        task["status"] = "failed"
        task["result"] = text("bad input", is_error=True)
    else:
        task["status"] = "completed"
        task["result"] = text(task["args"].get("say", "done"))


def input_requests(task: dict) -> dict:
    asked = {}
    if f"{task['id']}:name" not in task["answers"]:
        asked[f"{task['id']}:name"] = {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        }
    if task["tool"] == "ask_two" and f"{task['id']}:roots" not in task["answers"]:
        asked[f"{task['id']}:roots"] = {"method": "roots/list", "params": {}}
    return asked


# ------------------------------------------------------------------ modern


def declared(params: dict) -> bool:
    caps = params.get("_meta", {}).get(CAPS_KEY, {})
    return isinstance(caps, dict) and EXT in (caps.get("extensions") or {})


def modern(message: dict) -> None:
    request_id, method = message["id"], message["method"]
    params = message.get("params") or {}
    meta = params.get("_meta")
    if not isinstance(meta, dict) or meta.get(VERSION_KEY) != "2026-07-28":
        fail(request_id, -32602, "missing _meta protocolVersion")
        return
    if method == "server/discover":
        answer(
            request_id,
            {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "extensions": {EXT: {}}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "task-wire", "version": "1"}},
            },
        )
        return
    if method.startswith("tasks/") and not declared(params):
        fail(
            request_id,
            -32021,
            "Missing required client capability",
            {"requiredCapabilities": {"extensions": {EXT: {}}}},
        )
        return
    if method == "tools/call":
        tools_call(request_id, params)
        return
    if method in ("tasks/result", "tasks/list"):
        fail(request_id, -32601, f"Method not found: {method}")
        return
    task = tasks.get(params.get("taskId"))
    if method not in ("tasks/get", "tasks/update", "tasks/cancel"):
        fail(request_id, -32601, f"Method not found: {method}")
    elif task is None or task.get("gone"):
        fail(request_id, -32602, f"Unknown task: {params.get('taskId')}")
    elif method == "tasks/get":
        task["polls"] += 1
        if task["tool"] == "vanish" and task["polls"] >= 2:
            task["gone"] = True
            fail(request_id, -32602, "Task expired")
            return
        advance(task)
        out = {"resultType": "complete", **wire_task(task)}
        if task["status"] == "completed":
            out["result"] = task["result"]
        elif task["status"] == "failed":
            out["error"] = task["error"]
        elif task["status"] == "input_required":
            out["inputRequests"] = input_requests(task)
        answer(request_id, out)
    elif method == "tasks/update":
        task["updates"] += 1
        responses = params.get("inputResponses") or {}
        for key, value in responses.items():
            if key in task["answers"]:
                task.setdefault("repeats", []).append(key)
            task["answers"][key] = value
        answer(request_id, {})
    else:
        if task["status"] not in ("completed", "failed", "cancelled"):
            task["cancel_at"] = time.monotonic()
        answer(request_id, {})


def tools_call(request_id: object, params: dict) -> None:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name == "dump":
        answer(request_id, {"content": [], "structuredContent": {"lines": lines}})
        return
    if name == "quick":
        answer(request_id, {"resultType": "complete", **text("at once")})
        return
    if name == "needs_task" and not declared(params):
        fail(
            request_id,
            -32021,
            "Missing required client capability",
            {"requiredCapabilities": {"extensions": {EXT: {}}}},
        )
        return
    if name == "mrtr_then_task" and not params.get("inputResponses"):
        answer(
            request_id,
            {
                "resultType": "input_required",
                "inputRequests": {"pre": {"method": "roots/list", "params": {}}},
                "requestState": "s1",
            },
        )
        return
    if not declared(params):
        answer(request_id, text(f"{name} ran without a task"))
        return
    if name == "mrtr_then_task":
        arguments = {**arguments, "say": json.dumps(params["inputResponses"], sort_keys=True)}
    task = new_task(name, arguments)
    answer(request_id, {"resultType": "task", **wire_task(task)})


# ------------------------------------------------------------------ legacy


def legacy(message: dict) -> None:
    request_id, method = message["id"], message["method"]
    params = message.get("params") or {}
    if method == "initialize":
        answer(
            request_id,
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {
                    "tools": {},
                    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
                },
                "serverInfo": {"name": "task-wire", "version": "1"},
            },
        )
    elif method == "tools/list":
        schema = {"type": "object"}
        answer(
            request_id,
            {
                "tools": [
                    {"name": "legacy_fail", "inputSchema": schema, "execution": {"taskSupport": "required"}},
                    {"name": "legacy_error", "inputSchema": schema, "execution": {"taskSupport": "optional"}},
                    {"name": "elicit_task", "inputSchema": schema},
                    {"name": "vanish", "inputSchema": schema, "execution": {"taskSupport": "optional"}},
                    {"name": "dump", "inputSchema": schema},
                ]
            },
        )
    elif method == "tools/call":
        name = params.get("name")
        if name == "dump":
            answer(request_id, {"content": [], "structuredContent": {"lines": lines}})
        elif name == "elicit_task":
            pending["e1"] = request_id
            send(
                {
                    "jsonrpc": "2.0",
                    "id": "e1",
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Your name?",
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                        "task": {"ttl": 60000},
                    },
                }
            )
        elif "task" in params:
            task = new_task(name, params.get("arguments") or {})
            task["token"] = (params.get("_meta") or {}).get("progressToken")
            send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": wire_task(task)})
            answer(request_id, {"task": wire_task(task)})
        else:
            answer(request_id, text(f"{name} ran without a task"))
    elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
        task = tasks.get(params.get("taskId"))
        if task is None or task.get("gone"):
            fail(request_id, -32602, "Unknown task")
            return
        if task["tool"] == "vanish" and method == "tasks/get":
            task["gone"] = True
            fail(request_id, -32602, "Task expired")
            return
        advance(task)
        if method == "tasks/get":
            if task.get("token") is not None:
                # Progress goes on after the call's reply, with the call's token.
                task["polls"] += 1
                progress = {"progressToken": task["token"], "progress": task["polls"], "message": "polled"}
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
            answer(request_id, wire_task(task))
        elif method == "tasks/cancel":
            if task["status"] in ("completed", "failed", "cancelled"):
                fail(request_id, -32602, f"Cannot cancel task in terminal status: {task['status']}")
            else:
                task["status"] = "cancelled"
                answer(request_id, wire_task(task))
        elif task["status"] not in ("completed", "failed", "cancelled"):
            task.setdefault("waiting", []).append(request_id)
        else:
            task_result(task, request_id)
    elif method == "ping":
        answer(request_id, {})
    else:
        fail(request_id, -32601, f"Method not found: {method}")


def task_result(task: dict, request_id: object) -> None:
    if "result" in task:
        answer(request_id, {**task["result"], "_meta": {RELATED: {"taskId": task["id"]}}})
    else:
        fail(request_id, -32050, "job failed", {"why": "scripted"})


def wake_waiting() -> None:
    for task in tasks.values():
        if task.get("waiting"):
            advance(task)
            if task["status"] in ("completed", "failed", "cancelled"):
                for request_id in task.pop("waiting"):
                    task_result(task, request_id)


def main() -> None:
    import queue
    import threading

    inbox: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for raw in sys.stdin.buffer:
            inbox.put(raw.decode())
        inbox.put(None)

    threading.Thread(target=read, daemon=True).start()
    while True:
        try:
            line = inbox.get(timeout=0.05)
        except queue.Empty:
            wake_waiting()
            continue
        if line is None:
            return
        lines.append(line)
        message = json.loads(line)
        if "method" not in message:
            waiting = pending.pop(message.get("id"), None)
            if waiting is not None:
                answer(
                    waiting, text(json.dumps(message.get("result") or message.get("error"), sort_keys=True))
                )
            continue
        if "id" not in message:
            continue
        (legacy if ERA == "legacy" else modern)(message)
        wake_waiting()


if __name__ == "__main__":
    main()
