"""A scripted MCP server for the state transitions of tasks, in both eras.

The first request chooses the era: ``initialize`` gives 2025-11-25 (core
tasks: ``params.task``, ``tasks/get``, the blocking ``tasks/result``,
``tasks/list``, ``tasks/cancel``, ``notifications/tasks/status``),
``server/discover`` (or any request with the ``_meta`` envelope) gives
2026-07-28 with the ``io.modelcontextprotocol/tasks`` extension (the flat
``CreateTaskResult``, ``tasks/get`` with ``result``/``error``/``inputRequests``,
``tasks/update``, the ``tasks/cancel`` acknowledgement).

Each tool scripts one transition (all ``taskSupport: optional`` unless
said; ``seconds`` sets how long the work takes where it applies):

* ``quick {seconds}``: working, then completed ("quick done").
* ``flow``: working → input_required (an elicitation asking for a name) →
  working → completed ("Hello, NAME!"). 2025-11-25: the elicitation is sent
  while a ``tasks/result`` is open, with the related-task ``_meta``.
* ``rpc_fail``: failed with a JSON-RPC error (-32000 "the job broke").
* ``is_error``: a tool result with ``isError`` (2025-11-25: failed;
  2026-07-28: completed).
* ``quiet_fail``: the work raises, as the official Python SDK v1 reports it:
  ``failed`` with the exception in ``statusMessage``, and a ``tasks/result``
  (2025-11-25) that carries neither an error nor ``isError``; no ``error``
  in ``tasks/get`` (2026-07-28).
* ``long``: works until cancelled (status message "tick N").
* ``vanish``: the task is forgotten after the first ``tasks/get``: the next
  answers -32602.
* ``expire``: a time to live of 500 ms, overriding the one asked; then
  -32602 "Task has expired".
* ``intervals``: each answer suggests another polling interval (400, 100,
  300 ms, ...); completes after ``seconds`` (default 1.5) with the number of
  ``tasks/get`` it saw ("polls: N").
* ``early``: 2025-11-25: the status notifications (working, completed) are
  written *before* the reply that creates the task.
* ``dups``: 2025-11-25: every status notification is written twice.
* ``sync``: runs within the call, never as a task ("ran synchronously").
* ``needs_task`` (``taskSupport: required``): without a task, -32601
  (2025-11-25) or -32021 (2026-07-28).
* ``durable {seconds}``: its tasks are kept in the ``--state`` file, so a
  new process (a restarted server) still answers for them; done ``seconds``
  (default 1.5) after creation.
* ``whoami`` (forbidden as a task): the tag and the process id; ``die``:
  exits with status 3 at once, answering nothing.

Flags: ``--state PATH`` (where ``durable`` tasks live), ``--log PATH``
(append every message received, one JSON line each), ``--no-tasks``
(2025-11-25: declare no ``tasks`` capability and ignore ``params.task``, as
fastmcp-tasks does), ``--tag TEXT`` (named in ``whoami``'s answer),
``--list-pages repeat|endless`` (2025-11-25: every ``tasks/list`` page names
the same next cursor, or a new one for ever), ``--dash-ids`` (``durable``
task ids begin with ``-``, as fastmcp-tasks's sometimes do).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from datetime import UTC, datetime

import trio

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
ENVELOPE = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
TERMINAL = ("completed", "failed", "cancelled")
LIFETIME = 300.0

TOOLS = {
    "quick": "optional",
    "flow": "optional",
    "rpc_fail": "optional",
    "is_error": "optional",
    "quiet_fail": "optional",
    "long": "optional",
    "vanish": "optional",
    "expire": "optional",
    "intervals": "optional",
    "early": "optional",
    "dups": "optional",
    "sync": "optional",
    "needs_task": "required",
    "durable": "optional",
    "whoami": "forbidden",
    "die": "forbidden",
}
INTERVALS = (400, 100, 300, 200, 500)


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def text(value: str, *, error: bool = False) -> dict:
    result: dict = {"content": [{"type": "text", "text": value}]}
    if error:
        result["isError"] = True
    return result


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def body(self) -> dict:
        body = {"code": self.code, "message": self.message}
        if self.data is not None:
            body["data"] = self.data
        return body


class Task:
    def __init__(self, server: Server, tool: str, ttl: int | None, poll: int) -> None:
        self.server = server
        self.id = secrets.token_hex(8)
        self.tool = tool
        self.status = "working"
        self.message: str | None = None
        self.created = time.time()
        self.updated = self.created
        self.ttl = ttl
        self.poll = poll
        self.result: dict | None = None
        self.error: RpcError | None = None
        self.changed = trio.Event()
        self.readers = 0
        self.reader = trio.Event()
        self.questions: dict[str, dict] = {}
        self.answers: dict[str, object] = {}
        self.scope = trio.CancelScope()
        self.polls = 0
        self.deadline = trio.current_time() + ttl / 1000 if ttl is not None else None
        self.cancel_asked = False

    def wire(self, detailed: bool = False) -> dict:
        task = {"taskId": self.id, "status": self.status}
        if self.message is not None:
            task["statusMessage"] = self.message
        task["createdAt"] = iso(self.created)
        task["lastUpdatedAt"] = iso(self.updated)
        if self.server.era == "legacy":
            task["ttl"] = self.ttl
            task["pollInterval"] = self.poll
        else:
            task["ttlMs"] = self.ttl
            task["pollIntervalMs"] = self.poll
        if detailed:
            if self.status == "completed" and self.result is not None:
                task["result"] = {"resultType": "complete", **self.result}
            elif self.status == "failed" and self.error is not None:
                task["error"] = self.error.body()
            elif self.status == "input_required":
                task["inputRequests"] = dict(self.questions)
        return task

    async def set(self, status: str, message: str | None = None) -> None:
        if self.status in TERMINAL:
            return
        self.status = status
        self.message = message
        self.updated = time.time()
        self.changed.set()
        self.changed = trio.Event()
        if self.server.era == "legacy":
            copies = 2 if self.tool == "dups" else 1
            for _ in range(copies):
                await self.server.notify("notifications/tasks/status", self.wire())

    async def ask(self, params: dict) -> object:
        await self.set("input_required", "waiting for a name")
        if self.server.era == "legacy":
            await self.reader.wait()
            meta = {RELATED: {"taskId": self.id}}
            answer = await self.server.request("elicitation/create", {**params, "_meta": meta})
        else:
            self.questions["name-1"] = {"method": "elicitation/create", "params": params}
            while "name-1" not in self.answers:
                await self.changed.wait()
            answer = self.answers.pop("name-1")
        await self.set("working", "got a name")
        return answer


class Server:
    def __init__(self, options: argparse.Namespace, stdout: trio.lowlevel.FdStream) -> None:
        self.options = options
        self.stdout = stdout
        self.era: str | None = None
        self.version = "2025-11-25"
        self.tasks: dict[str, Task] = {}
        self.replies: dict[int, tuple[trio.Event, list]] = {}
        self.next_id = 0
        self.nursery: trio.Nursery | None = None
        self.write_lock = trio.Lock()

    # ------------------------------------------------------------ output

    async def write(self, message: dict) -> None:
        async with self.write_lock:
            await self.stdout.send_all(json.dumps(message).encode() + b"\n")

    async def notify(self, method: str, params: dict) -> None:
        await self.write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: dict) -> object:
        self.next_id += 1
        request_id = self.next_id
        event, box = trio.Event(), []
        self.replies[request_id] = (event, box)
        await self.write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        await event.wait()
        return box[0]

    def stamp(self, result: dict) -> dict:
        if self.era == "modern":
            result.setdefault("resultType", "complete")
        return result

    # ------------------------------------------------------------- input

    def log(self, message: object) -> None:
        if self.options.log:
            with open(self.options.log, "a", encoding="utf-8") as record:
                record.write(json.dumps(message) + "\n")

    async def serve(self, stdin: trio.lowlevel.FdStream) -> None:
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            buffer = b""
            while True:
                data = await stdin.receive_some()
                if not data:
                    break
                buffer += data
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        await self.receive(json.loads(line))
            nursery.cancel_scope.cancel()

    async def receive(self, message: dict) -> None:
        self.log(message)
        if "method" not in message:
            waiting = self.replies.pop(message.get("id"), None)
            if waiting is not None:
                waiting[1].append(message.get("result", {"error": message.get("error")}))
                waiting[0].set()
            return
        if "id" not in message:
            return
        params = message.get("params") or {}
        if self.era is None:
            if message["method"] == "initialize":
                self.era = "legacy"
            elif ENVELOPE in (params.get("_meta") or {}):
                self.era = "modern"
        assert self.nursery is not None
        self.nursery.start_soon(self.answer, message["id"], message["method"], params)

    async def answer(self, request_id: object, method: str, params: dict) -> None:
        try:
            result = await self.dispatch(method, params)
        except RpcError as exc:
            await self.write({"jsonrpc": "2.0", "id": request_id, "error": exc.body()})
        else:
            if result is not None:
                await self.write({"jsonrpc": "2.0", "id": request_id, "result": self.stamp(result)})

    # ----------------------------------------------------------- methods

    async def dispatch(self, method: str, params: dict) -> dict | None:
        await trio.lowlevel.checkpoint()
        if method == "initialize":
            self.version = "2025-11-25"
            caps: dict = {"tools": {}}
            if not self.options.no_tasks:
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            return {
                "protocolVersion": self.version,
                "capabilities": caps,
                "serverInfo": {"name": "task-server", "version": "1"},
            }
        if method == "server/discover":
            return {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "extensions": {EXTENSION: {}}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "task-server", "version": "1"}},
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            tools = []
            for name, support in TOOLS.items():
                tool: dict = {"name": name, "inputSchema": {"type": "object"}}
                if self.era == "legacy":
                    tool["execution"] = {"taskSupport": support}
                tools.append(tool)
            return {"tools": tools}
        if method == "tools/call":
            return await self.call(params)
        if method.startswith("tasks/"):
            return await self.task_method(method, params)
        raise RpcError(-32601, f"method not found: {method}")

    def declared(self, params: dict) -> bool:
        caps = (params.get("_meta") or {}).get(CAPS) or {}
        return isinstance(caps.get("extensions"), dict) and EXTENSION in caps["extensions"]

    async def call(self, params: dict) -> dict:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if name not in TOOLS:
            raise RpcError(-32602, f"unknown tool {name!r}")
        if name == "whoami":
            return text(f"{self.options.tag} {os.getpid()}")
        if name == "die":
            sys.stderr.write(f"{self.options.tag}: dying as asked\n")
            sys.stderr.flush()
            os._exit(3)
        support = TOOLS[name]
        if self.era == "legacy":
            as_task = "task" in params and not self.options.no_tasks
            if not as_task and support == "required" and not self.options.no_tasks:
                raise RpcError(-32601, f"the tool {name!r} must be called as a task")
            ttl = (params.get("task") or {}).get("ttl") or 60_000
        else:
            as_task = self.declared(params)
            if not as_task and support == "required":
                raise RpcError(
                    -32021,
                    "missing required client capability",
                    {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
                )
            ttl = 60_000
        if name == "sync" or not as_task:
            await trio.sleep(float(arguments.get("seconds", 0.05)))
            return text("ran synchronously" if name == "sync" else f"{name} ran without a task")
        if name == "expire":
            ttl = 500
        if name == "durable":
            return self.create_durable(float(arguments.get("seconds", 1.5)), ttl)
        task = Task(self, name, ttl, INTERVALS[0] if name == "intervals" else 100)
        self.tasks[task.id] = task
        created = {"task": task.wire()} if self.era == "legacy" else {"resultType": "task", **task.wire()}
        if name == "early" and self.era == "legacy":
            await self.notify("notifications/tasks/status", task.wire())
            task.result = text("early done")
            await task.set("completed")
            return created
        assert self.nursery is not None
        self.nursery.start_soon(self.run, task, arguments)
        return created

    async def run(self, task: Task, arguments: dict) -> None:
        seconds = float(arguments.get("seconds", 0.3))
        with task.scope:
            try:
                if task.tool == "flow":
                    await trio.sleep(0.2)
                    answer = await task.ask(
                        {
                            "mode": "form",
                            "message": "Your name?",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                        }
                    )
                    await trio.sleep(0.2)
                    name = (answer.get("content") or {}).get("name") if isinstance(answer, dict) else None
                    task.result = text(f"Hello, {name}!" if name else f"no name: {answer}")
                elif task.tool == "rpc_fail":
                    await trio.sleep(0.2)
                    raise RpcError(-32000, "the job broke", {"why": "scripted"})
                elif task.tool == "quiet_fail":
                    await trio.sleep(0.2)
                    task.result = {"content": []}
                    await task.set("failed", "ValueError: the work raised")
                    return
                elif task.tool == "is_error":
                    await trio.sleep(0.2)
                    task.result = text("tool said no", error=True)
                    await task.set("failed" if self.era == "legacy" else "completed", "tool said no")
                    return
                elif task.tool == "long":
                    for tick in range(1, 600):
                        await trio.sleep(0.1)
                        task.message = f"tick {tick}"
                elif task.tool == "intervals":
                    await trio.sleep(float(arguments.get("seconds", 1.5)))
                    task.result = text(f"polls: {task.polls}")
                elif task.tool in ("vanish", "expire"):
                    await trio.sleep(30)
                else:
                    await trio.sleep(seconds)
                    task.result = text(f"{task.tool} done")
                await task.set("completed")
            except RpcError as exc:
                task.error = exc
                await task.set("failed", exc.message)

    # -------------------------------------------------------- durable tasks

    def load(self) -> dict:
        if not self.options.state or not os.path.exists(self.options.state):
            return {}
        with open(self.options.state, encoding="utf-8") as saved:
            return json.load(saved)

    def create_durable(self, seconds: float, ttl: int) -> dict:
        if not self.options.state:
            raise RpcError(-32603, "durable needs --state")
        state = self.load()
        task_id = ("-" if self.options.dash_ids else "") + "durable-" + secrets.token_hex(8)
        now = time.time()
        state[task_id] = {"created": now, "done": now + seconds, "ttl": ttl, "by": os.getpid()}
        with open(self.options.state, "w", encoding="utf-8") as saved:
            json.dump(state, saved)
        wire = self.durable_wire(task_id, state[task_id])
        return {"task": wire} if self.era == "legacy" else {"resultType": "task", **wire}

    def durable_wire(self, task_id: str, record: dict, detailed: bool = False) -> dict:
        done = time.time() >= record["done"]
        task: dict = {
            "taskId": task_id,
            "status": "completed" if done else "working",
            "createdAt": iso(record["created"]),
            "lastUpdatedAt": iso(record["done"] if done else record["created"]),
        }
        result = text(f"durable done (started by {record['by']}, answered by {os.getpid()})")
        if self.era == "legacy":
            task.update(ttl=record["ttl"], pollInterval=100)
        else:
            task.update(ttlMs=record["ttl"], pollIntervalMs=100)
            if detailed and done:
                task["result"] = {"resultType": "complete", **result}
        return task

    # ------------------------------------------------------------- tasks/*

    def find(self, params: dict) -> Task:
        task_id = params.get("taskId")
        task = self.tasks.get(task_id)  # type: ignore[arg-type]
        if task is not None and task.deadline is not None and trio.current_time() >= task.deadline:
            del self.tasks[task.id]
            task.scope.cancel()
            raise RpcError(-32602, "Failed to retrieve task: Task has expired")
        if task is None:
            raise RpcError(-32602, "Failed to retrieve task: Task not found")
        return task

    async def task_method(self, method: str, params: dict) -> dict | None:
        if self.era == "modern":
            if not self.declared(params):
                raise RpcError(
                    -32021,
                    "missing required client capability",
                    {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
                )
            if method not in ("tasks/get", "tasks/update", "tasks/cancel"):
                raise RpcError(-32601, f"method not found: {method}")
        elif self.options.no_tasks:
            raise RpcError(-32601, f"method not found: {method}")
        task_id = params.get("taskId")
        if isinstance(task_id, str) and task_id.lstrip("-").startswith("durable-"):
            record = self.load().get(task_id)
            if record is None:
                raise RpcError(-32602, "Failed to retrieve task: Task not found")
            if method == "tasks/result":
                await trio.sleep(max(0.0, record["done"] - time.time()))
                return {
                    **text(f"durable done (started by {record['by']}, answered by {os.getpid()})"),
                    "_meta": {RELATED: {"taskId": task_id}},
                }
            if method == "tasks/cancel":
                raise RpcError(-32602, "durable tasks cannot be cancelled")
            return self.durable_wire(task_id, record, detailed=self.era == "modern")
        if method == "tasks/list":
            kept = [self.durable_wire(task_id, record) for task_id, record in self.load().items()]
            page = {"tasks": kept + [task.wire() for task in self.tasks.values()]}
            pages = self.options.list_pages
            if pages == "repeat":
                # Every page points back at the same one: a pagination loop.
                page["nextCursor"] = "again"
            elif pages == "endless":
                page["nextCursor"] = str(int(params.get("cursor") or 0) + 1)
            return page
        task = self.find(params)
        if method == "tasks/get":
            task.polls += 1
            if task.tool == "intervals":
                task.poll = INTERVALS[task.polls % len(INTERVALS)]
            if task.tool == "long" and task.cancel_asked and task.status not in TERMINAL:
                await task.set("cancelled", "cancelled on request")
            wire = task.wire(detailed=self.era == "modern")
            if task.tool == "vanish":
                del self.tasks[task.id]
                task.scope.cancel()
            return wire
        if method == "tasks/update":
            answers = params.get("inputResponses") or {}
            for key, value in answers.items():
                if key in task.questions:
                    del task.questions[key]
                    task.answers[key] = value
            task.changed.set()
            task.changed = trio.Event()
            return {}
        if method == "tasks/cancel":
            if self.era == "modern":
                # Eventually consistent: the next tasks/get says cancelled.
                task.cancel_asked = True
                task.scope.cancel()
                if task.tool != "long":
                    await task.set("cancelled", "cancelled on request")
                return {}
            if task.status in TERMINAL:
                raise RpcError(-32602, f"Cannot cancel task in terminal status: {task.status}")
            task.scope.cancel()
            await task.set("cancelled", "cancelled on request")
            return task.wire()
        # tasks/result (2025-11-25): block until the end.
        task.readers += 1
        task.reader.set()
        try:
            while task.status not in TERMINAL:
                await task.changed.wait()
        finally:
            task.readers -= 1
        if task.status == "cancelled":
            raise RpcError(-32602, "the task was cancelled")
        if task.error is not None:
            raise task.error
        assert task.result is not None
        return {**task.result, "_meta": {RELATED: {"taskId": task.id}}}


async def amain(options: argparse.Namespace) -> None:
    stdin = trio.lowlevel.FdStream(os.dup(0))
    stdout = trio.lowlevel.FdStream(os.dup(1))
    with trio.move_on_after(LIFETIME):
        await Server(options, stdout).serve(stdin)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--state", default=None)
    parser.add_argument("--log", default=None)
    parser.add_argument("--no-tasks", action="store_true")
    parser.add_argument("--tag", default="tasks")
    parser.add_argument("--list-pages", choices=("one", "repeat", "endless"), default="one")
    parser.add_argument("--dash-ids", action="store_true")
    options = parser.parse_args()
    trio.run(amain, options)


if __name__ == "__main__":
    sys.exit(main())
