"""A scripted MCP stdio server for the client tests (standard library only).

Usage: ``python mcp_server.py [--era modern|legacy|dual] [OPTION...]``

This is a test double, not a demo: every behaviour a client test needs to
provoke is one flag or one tool away, and everything the client wrote can be
read back. It is single-threaded and event driven (a reader thread only feeds
stdin lines to a queue), so it keeps reading while a request is pending: a
tool may wait for the client's answer to a request of the server's, a listen
stream stays open across other calls, and ``hang`` never answers.

Eras (``--era``):

``modern``
    2026-07-28: every request must carry ``params._meta`` with
    ``io.modelcontextprotocol/protocolVersion`` and ``.../clientCapabilities``
    (else ``-32602``); a version outside ``--supported`` gets ``-32022``
    ``{supported, requested}``, ``initialize`` included. Input is asked for
    with ``input_required`` results (MRTR).
``legacy``
    The initialize era: ``initialize`` (answered with the offered version if
    it is an initialize-era one, else ``2025-11-25``, or ``--init-version``),
    then server-to-client requests for input. Requests before ``initialize``
    other than ``ping`` get ``-32600``; ``server/discover`` follows
    ``--discover`` (default ``-32601``).
``dual``
    Both. ``initialize`` locks the legacy era; a modern request other than
    ``server/discover`` (a stateless description) that passes the version
    check locks the modern era. Afterwards the other era's requests are
    refused (``initialize`` with ``-32022``, ``server/discover`` with
    ``-32601``).

Options:

``--supported V,V``
    Versions a modern request may carry (default ``2026-07-28``).
``--discover-versions V,V``
    The ``supportedVersions`` of the ``DiscoverResult`` (default: ``--supported``).
``--discover MODE``
    What the first ``server/discover`` gets. ``answer`` (the era's normal
    handling), an integer error code (``-32601``, ``-32602``, ``-32004``,
    ``-32021``...), ``silence`` (never answered), ``late`` (modern: answered
    after ``--discover-delay`` seconds; legacy: answered with ``-32600``
    right after ``initialize``), ``exit`` (exit with status 3),
    ``close-stdout`` (close stdout, keep reading), ``null-id`` (an error
    response with ``"id": null``).
``--chatty-probe``
    Before reacting to the first ``server/discover``, send the client a
    ``ping`` request and a ``notifications/message``.
``--init-version V``
    The version ``initialize`` answers with, whatever was offered.
``--init-delay S``
    Answer ``initialize`` after S seconds.
``--page-size N``
    Page size of every list (default 0: one page).
``--cursor-loop``
    Every page's ``nextCursor`` is ``"loop"``, which names the second page.
``--empty-cursor``
    The second page's cursor is ``""``.
``--ttl MS``
    ``ttlMs`` of discover, list and read results (modern; default 0).
``--listen-refuse KEY``
    Leave KEY out of every listen acknowledgement (repeatable).
``--listen-no-ack``
    Never acknowledge a listen request.
``--instructions TEXT``
    The server's instructions.
``--record PATH``
    Append every line read to PATH (raw, flushed at once), after a
    ``#start PID`` marker line for this process.

Tools (``tools/call``; both eras unless noted):

* ``echo {text}``, ``add {a, b}`` (also ``structuredContent {sum}``),
  ``fail`` (``isError``), ``odd`` (unknown content type and unknown fields).
* ``lines``: every line read so far (this one included), as
  ``structuredContent {"lines": [str, ...]}``.
* ``stats``: how many requests of each method arrived, as ``structuredContent``.
* ``slow {steps}``: a ``notifications/progress`` per step (when the request
  carries a ``progressToken``), then the result.
* ``log {level, message}``: one ``notifications/message`` (modern: only when
  the request's ``_meta`` sets ``logLevel`` at or below ``level``; legacy: at
  or above ``logging/setLevel``).
* ``hang``: never answered (one progress notification first, when asked for).
* ``exit {code}``: answered, then the process exits.
* ``ask {mode, state, withdraw}``: an elicitation (form, or url); modern: an
  ``input_required`` with key ``name`` (plus ``requestState`` with
  ``state``); legacy: an ``elicitation/create`` request. The result reports
  the answer in ``structuredContent`` (``answer``, or ``error`` in the legacy
  era). With ``withdraw`` (legacy), the request waits for the ``withdraw``
  tool instead.
* ``withdraw``: send ``notifications/cancelled`` for each request of a
  ``withdraw`` ask, whose call then answers ``withdrawn``.
* ``sample {tools, choice, turn}``: the same with ``sampling/createMessage``
  (key ``llm``; with ``tools``, the request offers the model a tool,
  ``calc``, with ``toolChoice`` mode ``choice`` (default ``auto``); with
  ``turn``, the conversation already holds the model's ``tool_use`` and the
  user's ``tool_result``).
* ``roots``: the same with ``roots/list`` (key ``roots``).
* ``two``: an elicitation (key ``e``) and a sampling request (key ``s``) at once.
* ``needs {cap}``: ``-32021`` unless the request declares capability ``cap``
  (modern).
* ``weird`` (``resultType`` ``"task"``), ``empty`` (``resultType``
  ``"input_required"`` with neither field); both eras, although only the
  modern era gives ``resultType`` a meaning.
* modern only: ``multi {plan}`` (one round per plan item: ``"ask"`` asks for
  key ``q<round>`` plus state, ``"state"`` sends only ``requestState``),
  ``endless {ask}`` (``input_required`` forever), ``unlisten {how}`` (end
  every listen stream with its ``result`` or with
  ``notifications/cancelled``), ``violate`` (send the client an
  ``elicitation/create`` request, forbidden in this era), ``violate_ping``
  (the same with ``ping``).
* ``touch {tools, prompts, resources, uri, stray}``: modern: the matching
  notifications on every listen stream that asked for them (``stray``: a
  ``tools/list_changed`` without subscription id, first); legacy:
  unsolicited list-changed notifications, and ``resources/updated`` when
  ``uri`` was subscribed to. Answered after the notifications.

Other methods: ``prompts/list``, ``prompts/get`` (``greet {name}``; ``mrtr``
asks for a name first), ``resources/list``, ``resources/templates/list``,
``resources/read`` (``mem://a``, ``mem://blob``, ``mem://dir``; ``mem://ask``
asks for a name first; others: ``-32602`` modern, ``-32002`` legacy),
``completion/complete`` (names starting with the argument's value; the
prompt ``input`` gets an ``input_required``, which that method may not
have), ``subscriptions/listen`` (modern), ``x/needs {cap, always}`` (like
the tool; with ``always``, ``-32021`` whatever is declared),
and in the legacy era ``ping``, ``logging/setLevel``,
``resources/subscribe`` and ``resources/unsubscribe``.

Server-to-client request ids are integers from 1, the same numbers the
client uses for its own ids. The server exits with status 0 when stdin ends.
"""

import argparse
import base64
import heapq
import itertools
import json
import os
import queue
import sys
import threading
import time

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {"name": "mcp-test-server", "version": "1.2.3"}
INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUB_KEY = "io.modelcontextprotocol/subscriptionId"
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

#: An opaque requestState that a careless client could mangle: quotes,
#: backslashes, separators that str.splitlines() would split on, non-ASCII.
STATE = 'opaque:"q"\\b\u2028\u0085 é ☃ \U0001f389 ' + base64.b64encode(bytes(range(48))).decode()

CAPABILITIES = {
    "tools": {"listChanged": True},
    "prompts": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "completions": {},
    "logging": {},
}

TOOL_NAMES = [
    "echo",
    "add",
    "fail",
    "odd",
    "lines",
    "stats",
    "slow",
    "log",
    "hang",
    "exit",
    "ask",
    "sample",
    "roots",
    "two",
    "withdraw",
    "needs",
    "multi",
    "endless",
    "weird",
    "empty",
    "touch",
    "unlisten",
    "violate",
    "violate_ping",
]


def tool_list():
    tools = [
        {"name": name, "description": f"the {name} tool", "inputSchema": {"type": "object"}}
        for name in TOOL_NAMES
    ]
    tools[0]["title"] = "Echo"
    tools[0]["inputSchema"] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    tools[1]["annotations"] = {"title": "Adder", "readOnlyHint": True}
    tools[1]["x-vendor"] = {"kept": True}
    return tools


PROMPTS = [
    {"name": "greet", "description": "say hello", "arguments": [{"name": "name", "required": True}]},
    {"name": "mrtr", "description": "asks for a name first"},
    {"name": "p3"},
    {"name": "p4"},
    {"name": "p5", "x-vendor": 5},
]
RESOURCES = [
    {"uri": "mem://a", "name": "a", "mimeType": "text/plain"},
    {"uri": "mem://blob", "name": "blob", "mimeType": "application/octet-stream"},
    {"uri": "mem://dir", "name": "dir"},
    {"uri": "mem://ask", "name": "ask"},
    {"uri": "mem://e", "name": "e"},
]
TEMPLATES = [
    {"uriTemplate": "mem://items/{id}", "name": "items"},
    {"uriTemplate": "mem://users/{name}", "name": "users"},
    {"uriTemplate": "mem://x/{y}", "name": "x"},
]
NAMES = ["alice", "alfred", "albert", "bob"]


class Failure(Exception):
    """Answer the request being handled with a JSON-RPC error."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Call:
    """A client request being handled; answered once, unless cancelled."""

    def __init__(self, server, msg, era):
        self.server = server
        self.id = msg["id"]
        self.method = msg["method"]
        params = msg.get("params")
        self.params = params if isinstance(params, dict) else {}
        meta = self.params.get("_meta")
        self.meta = meta if isinstance(meta, dict) else {}
        self.era = era
        self.cancelled = False
        self.answered = False

    @property
    def token(self):
        return self.meta.get("progressToken")

    def result(self, result):
        if self.era == "modern":
            result = {"resultType": "complete", **result}
            result.setdefault("_meta", {INFO_KEY: SERVER_INFO})
        self._send({"jsonrpc": "2.0", "id": self.id, "result": result})

    def error(self, code, message, data=None):
        error = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._send({"jsonrpc": "2.0", "id": self.id, "error": error})

    def _send(self, message):
        if self.answered or self.cancelled:
            return
        self.answered = True
        self.server.pending.pop(key(self.id), None)
        self.server.send(message)


def key(request_id):
    return (type(request_id).__name__, request_id)


def text_result(text, **extra):
    return {"content": [{"type": "text", "text": text}], **extra}


def elicit_params(mode, version):
    if mode == "url":
        params = {"mode": "url", "message": "Sign in", "url": "https://example.com/auth?x=1"}
        if version == "2025-11-25":
            params["elicitationId"] = "el-1"
        return params
    params = {
        "message": "What is your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name"}},
            "required": ["name"],
        },
    }
    if version >= "2025-11-25":
        params["mode"] = "form"
    return params


SAMPLING_PARAMS = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
    "maxTokens": 5,
    "systemPrompt": "Be brief.",
    "modelPreferences": {"hints": [{"name": "small"}], "speedPriority": 0.9},
}


def describe_answer(method, answer):
    """The text a tool answers with, for the client's answer to one input request."""
    if method == "elicitation/create":
        if answer.get("action") == "accept":
            return f"hello {(answer.get('content') or {}).get('name')}"
        return f"action {answer.get('action')}"
    if method == "sampling/createMessage":
        content = answer.get("content")
        if isinstance(content, list):
            content = content[0] if content else {}
        return f"model {answer.get('model')} said {(content or {}).get('text')}"
    return "roots " + ",".join(root.get("uri", "?") for root in answer.get("roots", []))


class Server:
    def __init__(self, options):
        self.o = options
        self.lines = []
        self.counts = {}
        self.record = open(options.record, "a", encoding="utf-8") if options.record else None  # noqa: SIM115
        if self.record:
            self.record.write(f"#start {os.getpid()}\n")
            self.record.flush()
        self.inbox = queue.Queue()
        self.timers = []
        self.timer_seq = itertools.count()
        self.pending = {}  # client requests not yet answered, by key(id)
        self.asked = {}  # our requests to the client: id -> callback(reply)
        self.server_ids = itertools.count(1)
        self.withdrawable = []  # (our request id, the tools/call waiting on it)
        self.stdout_closed = False
        self.first_discover = True
        self.locked = None if options.era == "dual" else options.era
        self.version = None
        self.late_probe = None
        self.log_level = None
        self.subscribed = set()
        self.subs = {}  # modern listen streams: key(id) -> (id, acknowledged filter)
        self.supported = options.supported.split(",")
        self.discover_versions = (
            options.discover_versions.split(",") if options.discover_versions else self.supported
        )

    # ------------------------------------------------------------ plumbing

    def send(self, message):
        if self.stdout_closed:
            return
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except (BrokenPipeError, OSError):
            self.stdout_closed = True

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def ask_client(self, method, params, callback):
        request_id = next(self.server_ids)
        self.asked[request_id] = callback
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def later(self, delay, fn):
        heapq.heappush(self.timers, (time.monotonic() + delay, next(self.timer_seq), fn))

    def close_stdout(self):
        sys.stdout.buffer.flush()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        self.stdout_closed = True

    def read_stdin(self):
        for line in sys.stdin.buffer:
            self.inbox.put(line)
        self.inbox.put(None)

    def run(self):
        threading.Thread(target=self.read_stdin, daemon=True).start()
        while True:
            timeout = None
            if self.timers:
                timeout = max(0.0, self.timers[0][0] - time.monotonic())
            try:
                line = self.inbox.get(timeout=timeout)
            except queue.Empty:
                line = b""
            if line is None:
                return
            if line:
                self.receive(line)
            while self.timers and self.timers[0][0] <= time.monotonic():
                heapq.heappop(self.timers)[2]()

    def receive(self, raw):
        text = raw.decode("utf-8", "replace").rstrip("\n")
        self.lines.append(text)
        if self.record:
            self.record.write(text + "\n")
            self.record.flush()
        try:
            msg = json.loads(text)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        if "method" in msg and "id" in msg:
            self.counts[msg["method"]] = self.counts.get(msg["method"], 0) + 1
            self.request(msg)
        elif "method" in msg:
            self.notification(msg)
        elif msg.get("id") in self.asked:
            self.asked.pop(msg["id"])(msg)

    def notification(self, msg):
        params = msg.get("params") or {}
        if msg["method"] == "notifications/cancelled":
            request_id = params.get("requestId")
            self.subs.pop(key(request_id), None)
            call = self.pending.pop(key(request_id), None)
            if call is not None:
                call.cancelled = True

    # ------------------------------------------------------------- routing

    def request(self, msg):
        method = msg["method"]
        params = msg.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        modern_shaped = isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta
        era = self.locked
        if era is None:
            era = "legacy" if method == "initialize" or not modern_shaped else "modern"
        call = Call(self, msg, era)
        self.pending[key(call.id)] = call
        if method == "server/discover" and self.first_discover:
            self.first_discover = False
            if self.probe(call):
                return
        try:
            if era == "modern":
                self.modern(call)
            else:
                self.legacy(call)
        except Failure as exc:
            call.error(exc.code, exc.message, exc.data)

    def probe(self, call):
        """React to the first server/discover per --discover; True when handled."""
        mode = self.o.discover
        if self.o.chatty_probe:
            self.ask_client("ping", None, lambda reply: None)
            self.notify("notifications/message", {"level": "info", "data": "probe seen"})
        if mode == "answer":
            return False
        if mode == "silence":
            return True
        if mode == "exit":
            sys.stdout.buffer.flush()
            os._exit(3)
        if mode == "close-stdout":
            self.close_stdout()
            return True
        if mode == "null-id":
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad request"}})
            return True
        if mode == "late":
            if call.era == "modern":

                def answer():
                    call.cancelled = False
                    call.answered = False
                    self.modern(call)

                self.later(self.o.discover_delay, answer)
            else:
                self.late_probe = call
            return True
        code = int(mode)
        data = None
        if code == -32021:
            data = {"requiredCapabilities": {"sampling": {}}}
        call.error(code, f"probe refused with {code}", data)
        return True

    # -------------------------------------------------------------- modern

    def modern(self, call):
        meta = call.meta
        version = meta.get("io.modelcontextprotocol/protocolVersion")
        if call.method == "initialize":
            version = call.params.get("protocolVersion")
            raise Failure(
                -32022, "Unsupported protocol version", {"supported": self.supported, "requested": version}
            )
        if not isinstance(version, str) or not isinstance(
            meta.get("io.modelcontextprotocol/clientCapabilities"), dict
        ):
            raise Failure(-32602, "missing _meta protocolVersion or clientCapabilities")
        if version not in self.supported:
            raise Failure(
                -32022, "Unsupported protocol version", {"supported": self.supported, "requested": version}
            )
        if self.locked is None and call.method != "server/discover":
            self.locked = "modern"
        handler = MODERN_METHODS.get(call.method)
        if handler is None:
            raise Failure(-32601, f"Method not found: {call.method}")
        handler(self, call)

    def ttl(self):
        return {"ttlMs": self.o.ttl, "cacheScope": "public"}

    def m_discover(self, call):
        result = {
            "supportedVersions": self.discover_versions,
            "capabilities": CAPABILITIES,
            "_meta": {INFO_KEY: SERVER_INFO},
            "calls": self.counts.get("server/discover", 0),
            "x-vendor": {"kept": True},
            **self.ttl(),
        }
        if self.o.instructions is not None:
            result["instructions"] = self.o.instructions
        call.result(result)

    def m_listen(self, call):
        wanted = call.params.get("notifications")
        wanted = wanted if isinstance(wanted, dict) else {}
        ack = {k: v for k, v in wanted.items() if v and k not in self.o.listen_refuse}
        self.subs[key(call.id)] = (call.id, ack)
        if self.o.listen_no_ack:
            return
        self.notify(
            "notifications/subscriptions/acknowledged",
            {"notifications": ack, "_meta": {SUB_KEY: call.id}},
        )

    def m_needs(self, call):
        cap = call.params.get("cap", "sampling")
        if cap not in call.meta.get("io.modelcontextprotocol/clientCapabilities", {}) or call.params.get(
            "always"
        ):
            raise Failure(-32021, "Missing required client capability", {"requiredCapabilities": {cap: {}}})
        call.result({"ok": True})

    # -------------------------------------------------------------- legacy

    def legacy(self, call):
        method = call.method
        if method == "initialize":
            self.initialize(call)
            return
        if method == "ping":
            call.result({})
            return
        if method == "server/discover":
            raise Failure(-32601, "Method not found: server/discover")
        if self.version is None:
            raise Failure(-32600, "not initialized")
        handler = LEGACY_METHODS.get(method)
        if handler is None:
            raise Failure(-32601, f"Method not found: {method}")
        handler(self, call)

    def initialize(self, call):
        offered = call.params.get("protocolVersion")
        self.locked = "legacy"
        version = self.o.init_version or (offered if offered in LEGACY else LEGACY[0])
        self.version = version
        result = {
            "protocolVersion": version,
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
        }
        if self.o.instructions is not None:
            result["instructions"] = self.o.instructions

        def answer():
            call.result(result)
            if self.late_probe is not None:
                probe, self.late_probe = self.late_probe, None
                probe.cancelled = False
                probe.answered = False
                probe.error(-32600, "server/discover before initialize")

        if self.o.init_delay:
            self.later(self.o.init_delay, answer)
        else:
            answer()

    def l_set_level(self, call):
        level = call.params.get("level")
        if level not in LEVELS:
            raise Failure(-32602, f"bad level {level!r}")
        self.log_level = level
        call.result({})

    def l_subscribe(self, call):
        self.subscribed.add(call.params.get("uri"))
        call.result({})

    def l_unsubscribe(self, call):
        self.subscribed.discard(call.params.get("uri"))
        call.result({})

    # ----------------------------------------------------------- shared

    def page(self, call, items, field):
        size = self.o.page_size or len(items) or 1
        pages = [items[i : i + size] for i in range(0, len(items), size)] or [[]]
        cursors = ["", *[f"c{k}" for k in range(1, len(pages))]]
        if self.o.empty_cursor and len(pages) > 1:
            cursors[1] = ""
        cursor = call.params.get("cursor")
        if cursor is None:
            index = 0
        elif self.o.cursor_loop and cursor == "loop":
            index = 1
        elif cursor in cursors[1:]:
            index = cursors.index(cursor, 1)
        else:
            raise Failure(-32602, f"bad cursor {cursor!r}")
        result = {field: pages[index], "calls": self.counts[call.method]}
        if self.o.cursor_loop and len(pages) > 1:
            result["nextCursor"] = "loop"
        elif index + 1 < len(pages):
            result["nextCursor"] = cursors[index + 1]
        if call.era == "modern":
            result.update(self.ttl())
        call.result(result)

    def tools_list(self, call):
        self.page(call, tool_list(), "tools")

    def prompts_list(self, call):
        self.page(call, PROMPTS, "prompts")

    def resources_list(self, call):
        self.page(call, RESOURCES, "resources")

    def templates_list(self, call):
        self.page(call, TEMPLATES, "resourceTemplates")

    def input_round(self, call, requests, state=None):
        """Ask for input: an input_required result (modern) or requests to the client (legacy).

        Returns the answers by key when this round carries them (modern), else
        None (the call is answered by now, or will be by the callback).
        """
        responses = call.params.get("inputResponses")
        if call.era == "modern":
            if isinstance(responses, dict) and all(k in responses for k in requests):
                if state is not None and call.params.get("requestState") != state:
                    raise Failure(-32602, f"requestState changed: {call.params.get('requestState')!r}")
                return responses
            result = {
                "resultType": "input_required",
                "inputRequests": {
                    k: ({"method": m} if p is None else {"method": m, "params": p})
                    for k, (m, p) in requests.items()
                },
            }
            if state is not None:
                result["requestState"] = state
            call.result(result)
            return None
        replies = {}

        def got(name, reply):
            replies[name] = reply
            if len(replies) < len(requests):
                return
            answers = {k: r.get("result") for k, r in replies.items() if "result" in r}
            errors = {k: r.get("error") for k, r in replies.items() if "error" in r}
            self.finish_input(call, requests, answers, errors)

        for name, (method, params) in requests.items():
            self.ask_client(method, params, lambda reply, name=name: got(name, reply))
        return None

    def finish_input(self, call, requests, answers, errors):
        if call.method == "tools/call":
            if errors:
                text = "; ".join(f"{k}: error {e.get('code')}: {e.get('message')}" for k, e in errors.items())
                call.result(text_result(text, isError=True, structuredContent={"error": errors}))
                return
            text = "; ".join(describe_answer(requests[k][0], a) for k, a in sorted(answers.items()))
            structured = (
                {"answer": answers[next(iter(requests))]} if len(requests) == 1 else {"answers": answers}
            )
            structured["state"] = call.params.get("requestState")
            call.result(text_result(text, structuredContent=structured))
        elif errors:
            call.error(-32603, f"input failed: {errors}")
        elif call.method == "prompts/get":
            text = describe_answer("elicitation/create", answers["name"])
            call.result({"messages": [{"role": "user", "content": {"type": "text", "text": text}}]})
        else:
            text = describe_answer("elicitation/create", answers["name"])
            call.result({"contents": [{"uri": "mem://ask", "text": text}]})

    def tools_call(self, call):
        name = call.params.get("name")
        args = call.params.get("arguments") or {}
        handler = TOOLS.get(name)
        if handler is None or (call.era == "legacy" and name in MODERN_ONLY_TOOLS):
            raise Failure(-32602, f"Unknown tool: {name}")
        handler(self, call, args)

    def prompts_get(self, call):
        name = call.params.get("name")
        args = call.params.get("arguments") or {}
        if name == "greet":
            if "name" not in args:
                raise Failure(-32602, "missing argument name")
            call.result(
                {
                    "description": "a greeting",
                    "messages": [
                        {"role": "user", "content": {"type": "text", "text": f"Hello {args['name']}"}}
                    ],
                }
            )
        elif name == "mrtr":
            version = self.version if call.era == "legacy" else MODERN
            answers = self.input_round(call, {"name": ("elicitation/create", elicit_params("form", version))})
            if answers is not None:
                self.finish_input(call, {"name": ("elicitation/create", None)}, answers, {})
        elif name in ("p3", "p4", "p5"):
            call.result({"messages": []})
        else:
            raise Failure(-32602, f"Unknown prompt: {name}")

    def resources_read(self, call):
        uri = call.params.get("uri")
        counts = self.counts.setdefault("reads", {})
        counts[uri] = counts.get(uri, 0) + 1
        extra = self.ttl() if call.era == "modern" else {}
        if uri == "mem://a":
            call.result({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "alpha"}], **extra})
        elif uri == "mem://blob":
            blob = base64.b64encode(b"\x00\x01\xff").decode()
            call.result({"contents": [{"uri": uri, "blob": blob}], **extra})
        elif uri == "mem://dir":
            call.result(
                {
                    "contents": [
                        {"uri": "mem://dir/1", "text": "one"},
                        {"uri": "mem://dir/2", "text": "two"},
                    ],
                    **extra,
                }
            )
        elif uri == "mem://ask":
            version = self.version if call.era == "legacy" else MODERN
            answers = self.input_round(call, {"name": ("elicitation/create", elicit_params("form", version))})
            if answers is not None:
                self.finish_input(call, {"name": ("elicitation/create", None)}, answers, {})
        elif call.era == "modern":
            raise Failure(-32602, "Resource not found", {"uri": uri})
        else:
            raise Failure(-32002, "Resource not found", {"uri": uri})

    def complete(self, call):
        ref = call.params.get("ref") or {}
        argument = call.params.get("argument") or {}
        if ref.get("name") == "input" and call.era == "modern":
            call.result({"resultType": "input_required", "requestState": "x"})
            return
        prefix = argument.get("value", "")
        values = [n for n in NAMES if n.startswith(prefix)]
        context = call.params.get("context")
        call.result(
            {"completion": {"values": values, "total": len(values), "hasMore": False, "x-context": context}}
        )

    # ------------------------------------------------------------- tools

    def t_echo(self, call, args):
        call.result(text_result(args.get("text", "")))

    def t_add(self, call, args):
        total = args.get("a", 0) + args.get("b", 0)
        call.result(text_result(str(total), structuredContent={"sum": total}))

    def t_fail(self, call, args):
        call.result(text_result("boom", isError=True))

    def t_odd(self, call, args):
        call.result(
            {
                "content": [
                    {"type": "text", "text": "plain", "x-block": 1},
                    {"type": "hologram", "payload": {"depth": 3}},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                ],
                "structuredContent": {"n": 1},
                "x-top": {"kept": True},
            }
        )

    def t_lines(self, call, args):
        call.result(text_result(f"{len(self.lines)} lines", structuredContent={"lines": list(self.lines)}))

    def t_stats(self, call, args):
        call.result(text_result("stats", structuredContent=json.loads(json.dumps(self.counts))))

    def t_slow(self, call, args):
        steps = args.get("steps", 3)
        if call.token is not None:
            for step in range(1, steps + 1):
                self.notify(
                    "notifications/progress",
                    {
                        "progressToken": call.token,
                        "progress": step,
                        "total": steps,
                        "message": f"step {step}",
                    },
                )
        call.result(text_result(f"{steps} steps"))

    def t_log(self, call, args):
        level = args.get("level", "info")
        threshold = (
            call.meta.get("io.modelcontextprotocol/logLevel")
            if call.era == "modern"
            else self.log_level or "debug"
        )
        sent = threshold in LEVELS and LEVELS.index(level) >= LEVELS.index(threshold)
        if sent:
            self.notify(
                "notifications/message",
                {"level": level, "logger": "mcp-test-server", "data": args.get("message", "hi")},
            )
        call.result(text_result("logged" if sent else "not logged"))

    def t_hang(self, call, args):
        if call.token is not None:
            self.notify("notifications/progress", {"progressToken": call.token, "progress": 0})

    def t_exit(self, call, args):
        call.result(text_result("bye"))
        sys.stdout.buffer.flush()
        os._exit(args.get("code", 0))

    def t_ask(self, call, args):
        version = self.version if call.era == "legacy" else MODERN
        requests = {"name": ("elicitation/create", elicit_params(args.get("mode", "form"), version))}
        if call.era == "legacy" and args.get("withdraw"):
            request_id = self.ask_client(*requests["name"], lambda reply: None)
            self.withdrawable.append((request_id, call))
            return
        state = STATE if args.get("state") else None
        answers = self.input_round(call, requests, state)
        if answers is not None:
            self.finish_input(call, requests, answers, {})

    def t_withdraw(self, call, args):
        withdrawn = []
        for request_id, asking in self.withdrawable:
            self.asked.pop(request_id, None)
            self.notify("notifications/cancelled", {"requestId": request_id, "reason": "withdrawn"})
            asking.result(text_result("withdrawn", structuredContent={"withdrawn": request_id}))
            withdrawn.append(request_id)
        self.withdrawable.clear()
        call.result(text_result(f"withdrew {withdrawn}", structuredContent={"withdrawn": withdrawn}))

    def t_sample(self, call, args):
        params = dict(SAMPLING_PARAMS)
        if args.get("tools"):
            params["tools"] = [
                {
                    "name": "calc",
                    "description": "Adds two numbers.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    },
                }
            ]
            params["toolChoice"] = {"mode": args.get("choice", "auto")}
        if args.get("turn"):
            params["messages"] = [
                *SAMPLING_PARAMS["messages"],
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "u1", "name": "calc", "input": {"a": 2, "b": 2}}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "toolUseId": "u1",
                            "content": [{"type": "text", "text": "4"}],
                            "structuredContent": {"sum": 4},
                        }
                    ],
                },
            ]
        requests = {"llm": ("sampling/createMessage", params)}
        answers = self.input_round(call, requests)
        if answers is not None:
            self.finish_input(call, requests, answers, {})

    def t_roots(self, call, args):
        requests = {"roots": ("roots/list", None)}
        answers = self.input_round(call, requests)
        if answers is not None:
            self.finish_input(call, requests, answers, {})

    def t_two(self, call, args):
        version = self.version if call.era == "legacy" else MODERN
        requests = {
            "e": ("elicitation/create", elicit_params("form", version)),
            "s": ("sampling/createMessage", SAMPLING_PARAMS),
        }
        answers = self.input_round(call, requests)
        if answers is not None:
            self.finish_input(call, requests, answers, {})

    def t_needs(self, call, args):
        caps = call.meta.get("io.modelcontextprotocol/clientCapabilities", {})
        if call.era == "modern" and args.get("cap", "sampling") not in caps:
            raise Failure(
                -32021, "Missing required client capability", {"requiredCapabilities": {args.get("cap"): {}}}
            )
        call.result(text_result("ok"))

    def t_multi(self, call, args):
        plan = args.get("plan", ["ask", "state"])
        state = call.params.get("requestState")
        index = 0
        if isinstance(state, str) and state.startswith("round="):
            head, _, rest = state.partition(";")
            if rest != STATE:
                raise Failure(-32602, f"requestState changed: {state!r}")
            index = int(head[len("round=") :])
        if index >= len(plan):
            keys = sorted((call.params.get("inputResponses") or {}).keys())
            call.result(text_result(f"done after {index} rounds", structuredContent={"keys": keys}))
            return
        result = {"resultType": "input_required", "requestState": f"round={index + 1};{STATE}"}
        if plan[index] == "ask":
            result["inputRequests"] = {
                f"q{index}": {"method": "elicitation/create", "params": elicit_params("form", MODERN)}
            }
        call.result(result)

    def t_endless(self, call, args):
        result = {"resultType": "input_required", "requestState": "again"}
        if args.get("ask"):
            result["inputRequests"] = {
                "q": {"method": "elicitation/create", "params": elicit_params("form", MODERN)}
            }
        call.result(result)

    def t_weird(self, call, args):
        call.result({"resultType": "task", "task": {"taskId": "t1"}, **text_result("weird")})

    def t_empty(self, call, args):
        call.result({"resultType": "input_required"})

    def t_touch(self, call, args):
        sent = 0
        if call.era == "legacy":
            for flag, method in (
                ("tools", "notifications/tools/list_changed"),
                ("prompts", "notifications/prompts/list_changed"),
                ("resources", "notifications/resources/list_changed"),
            ):
                if args.get(flag):
                    self.notify(method, {})
                    sent += 1
            uri = args.get("uri")
            if uri is not None and uri in self.subscribed:
                self.notify("notifications/resources/updated", {"uri": uri})
                sent += 1
            call.result(text_result(f"sent {sent}"))
            return
        if args.get("stray"):
            self.notify("notifications/tools/list_changed", {})
        for sub_id, ack in list(self.subs.values()):
            meta = {"_meta": {SUB_KEY: sub_id}}
            for flag, field, method in (
                ("tools", "toolsListChanged", "notifications/tools/list_changed"),
                ("prompts", "promptsListChanged", "notifications/prompts/list_changed"),
                ("resources", "resourcesListChanged", "notifications/resources/list_changed"),
            ):
                if args.get(flag) and ack.get(field):
                    self.notify(method, dict(meta))
                    sent += 1
            uri = args.get("uri")
            if uri is not None and any(uri.startswith(u) for u in ack.get("resourceSubscriptions", [])):
                self.notify("notifications/resources/updated", {"uri": uri, **meta})
                sent += 1
        call.result(text_result(f"sent {sent}"))

    def t_unlisten(self, call, args):
        how = args.get("how", "result")
        for sub_id, _ in list(self.subs.values()):
            listen = self.pending.get(key(sub_id))
            if how == "result" and listen is not None:
                listen.result({"_meta": {SUB_KEY: sub_id}})
            else:
                self.pending.pop(key(sub_id), None)
                self.notify("notifications/cancelled", {"requestId": sub_id, "reason": "server shutdown"})
        self.subs.clear()
        call.result(text_result("unlistened"))

    def t_violate(self, call, args):
        request_id = self.ask_client("elicitation/create", elicit_params("form", MODERN), lambda reply: None)
        call.result(text_result("violated", structuredContent={"id": request_id}))

    def t_violate_ping(self, call, args):
        request_id = self.ask_client("ping", None, lambda reply: None)
        call.result(text_result("violated", structuredContent={"id": request_id}))


SHARED_METHODS = {
    "tools/list": Server.tools_list,
    "tools/call": Server.tools_call,
    "prompts/list": Server.prompts_list,
    "prompts/get": Server.prompts_get,
    "resources/list": Server.resources_list,
    "resources/templates/list": Server.templates_list,
    "resources/read": Server.resources_read,
    "completion/complete": Server.complete,
}
MODERN_METHODS = {
    **SHARED_METHODS,
    "server/discover": Server.m_discover,
    "subscriptions/listen": Server.m_listen,
    "x/needs": Server.m_needs,
}
LEGACY_METHODS = {
    **SHARED_METHODS,
    "logging/setLevel": Server.l_set_level,
    "resources/subscribe": Server.l_subscribe,
    "resources/unsubscribe": Server.l_unsubscribe,
}
TOOLS = {name: getattr(Server, "t_" + name) for name in TOOL_NAMES}
MODERN_ONLY_TOOLS = {"multi", "endless", "unlisten", "violate", "violate_ping"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--era", choices=["modern", "legacy", "dual"], default="modern")
    parser.add_argument("--supported", default=MODERN)
    parser.add_argument("--discover-versions", default=None)
    parser.add_argument("--discover", default="answer")
    parser.add_argument("--discover-delay", type=float, default=1.0)
    parser.add_argument("--chatty-probe", action="store_true")
    parser.add_argument("--init-version", default=None)
    parser.add_argument("--init-delay", type=float, default=0.0)
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--cursor-loop", action="store_true")
    parser.add_argument("--empty-cursor", action="store_true")
    parser.add_argument("--ttl", type=int, default=0)
    parser.add_argument("--listen-refuse", action="append", default=[])
    parser.add_argument("--listen-no-ack", action="store_true")
    parser.add_argument("--instructions", default=None)
    parser.add_argument("--record", default=None)
    Server(parser.parse_args()).run()


if __name__ == "__main__":
    main()
