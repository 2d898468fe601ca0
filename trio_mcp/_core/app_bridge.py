"""The MCP Apps bridge between a host and one view, as a pure machine: messages in, actions out.

A view (the app's HTML, in a sandboxed frame) speaks JSON-RPC with its host.
`BridgeMachine` holds the order the MCP Apps specification gives that
conversation, and nothing else: no I/O, no clock, no task. Feed it what the
view sent (`BridgeMachine.receive`) and what the host wants to tell the view
(`tool_input`, `tool_result`, `host_context_changed`, `teardown`); carry out
the actions it returns:

* `Send`: a message for the view;
* `Work`: a request of the view the host must carry out (a proxied
  ``tools/call``, ``resources/read``, ``tools/list``; a host callback for
  ``ui/message``, ``ui/open-link``, ``ui/update-model-context``,
  ``ui/request-display-mode``); answer it with `BridgeMachine.answer` or
  `BridgeMachine.fail`;
* `Abandon`: the view withdrew a request in `Work` (its
  ``notifications/cancelled``): stop it, and answer nothing;
* `Event`: something the host is told (the view is initialized, its size
  changed, it logged a line);
* `Closed`: the conversation is over (the view answered
  ``ui/resource-teardown``).

The rules: the view starts with ``ui/initialize``, answered with the host's
capabilities, identity and context; the host sends the view nothing before
``ui/notifications/initialized`` (what it asks to send earlier is queued, in
order); requests the host cannot serve get ``-32601``; a display mode is
granted only when both sides list it; after teardown starts, nothing new is
accepted.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final, Literal, TypeAlias

import attrs

__all__ = [
    "APPS_PROTOCOL_VERSIONS",
    "Abandon",
    "BridgeMachine",
    "Closed",
    "Event",
    "Send",
    "Work",
]

JSON: TypeAlias = Any

#: The MCP Apps revisions the bridge speaks, newest first.
APPS_PROTOCOL_VERSIONS: Final = ("2026-01-26",)

INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602

#: View requests proxied to the server, and the host capability each needs.
PROXIED: Final = {
    "tools/call": "serverTools",
    "tools/list": "serverTools",
    "resources/read": "serverResources",
    "resources/list": "serverResources",
    "resources/templates/list": "serverResources",
}
#: View requests a host callback answers, and the host capability each needs (`None`: none).
CALLBACKS: Final[dict[str, str | None]] = {
    "ui/open-link": "openLinks",
    "ui/message": None,
    "ui/update-model-context": None,
    "ui/request-display-mode": None,
}
DISPLAY_MODES: Final = ("inline", "fullscreen", "pip")

_MISSING: Final = object()

State: TypeAlias = Literal["waiting", "initializing", "ready", "tearing_down", "closed"]


@attrs.frozen
class Send:
    """Send ``message`` to the view."""

    message: dict[str, JSON]


@attrs.frozen
class Work:
    """Carry out the view's request ``id`` (``method``, ``params``), then answer it."""

    id: int | str
    method: str
    params: dict[str, JSON]


@attrs.frozen
class Abandon:
    """The view withdrew its request ``id``: stop the work, answer nothing."""

    id: int | str


@attrs.frozen
class Event:
    """Tell the host: ``"initialized"``, ``"size-changed"``, ``"log"``, ``"ignored"`` (with why)."""

    kind: str
    params: dict[str, JSON]


@attrs.frozen
class Closed:
    """The conversation is over."""


Action: TypeAlias = Send | Work | Abandon | Event | Closed


def _error(id: int | str | None, code: int, message: str) -> Send:
    return Send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


class BridgeMachine:
    """One view's conversation with its host (see the module's rules).

    Args:
        host_info: The host's ``Implementation`` (``{"name", "version"}``).
        host_capabilities: What the host offers the view (``serverTools``,
            ``serverResources``, ``openLinks``, ``logging``, ...).
        host_context: The context the view starts with (theme, display
            mode, available display modes, tool info, ...).
    """

    def __init__(
        self,
        host_info: dict[str, JSON],
        host_capabilities: dict[str, JSON],
        host_context: dict[str, JSON] | None = None,
    ) -> None:
        self.host_info = host_info
        self.host_capabilities = host_capabilities
        self.host_context: dict[str, JSON] = dict(host_context or {})
        self.state: State = "waiting"
        self.app_info: dict[str, JSON] | None = None
        self.app_capabilities: dict[str, JSON] | None = None
        self.protocol_version: str | None = None
        self._queue: deque[dict[str, JSON]] = deque()
        self._working: set[int | str] = set()
        self._teardown_id: int | None = None
        self._ids = 0

    # ------------------------------------------------------ from the view

    def receive(self, message: object) -> list[Action]:
        """What to do about one message from the view."""
        if self.state == "closed":
            return [Event("ignored", {"why": "the view is closed", "message": message})]
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return [Event("ignored", {"why": "not a JSON-RPC 2.0 object", "message": message})]
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                return self._request(message.get("id"), method, message.get("params"))
            return self._notification(method, message.get("params"))
        if "id" in message and ("result" in message or "error" in message):
            return self._response(message)
        return [
            Event("ignored", {"why": "neither a request, a notification nor a response", "message": message})
        ]

    def _request(self, id: object, method: str, params: object) -> list[Action]:
        if isinstance(id, bool) or not isinstance(id, int | str):
            return [Event("ignored", {"why": f"a request with an invalid id {id!r}", "method": method})]
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return [_error(id, INVALID_PARAMS, f"the params of {method} must be an object")]
        if id in self._working:
            return [_error(id, INVALID_REQUEST, f"the request id {id!r} is already in use")]
        if self.state in ("tearing_down", "closed"):
            return [_error(id, INVALID_REQUEST, "the view is being torn down")]
        if method == "ping":
            return [Send({"jsonrpc": "2.0", "id": id, "result": {}})]
        if method == "ui/initialize":
            return self._initialize(id, params)
        if self.state == "waiting":
            return [_error(id, INVALID_REQUEST, f"{method} before ui/initialize")]
        if method in PROXIED:
            if PROXIED[method] not in self.host_capabilities:
                return [_error(id, METHOD_NOT_FOUND, f"this host does not offer {method}")]
            return self._work(id, method, params)
        if method in CALLBACKS:
            needed = CALLBACKS[method]
            if needed is not None and needed not in self.host_capabilities:
                return [_error(id, METHOD_NOT_FOUND, f"this host does not offer {method}")]
            if method == "ui/request-display-mode":
                return self._display_mode(id, params)
            return self._work(id, method, params)
        return [_error(id, METHOD_NOT_FOUND, f"unknown method {method}")]

    def _work(self, id: int | str, method: str, params: dict[str, JSON]) -> list[Action]:
        self._working.add(id)
        return [Work(id, method, params)]

    def _initialize(self, id: int | str, params: dict[str, JSON]) -> list[Action]:
        if self.state != "waiting":
            return [_error(id, INVALID_REQUEST, "ui/initialize was already received")]
        info = params.get("appInfo")
        caps = params.get("appCapabilities")
        self.app_info = info if isinstance(info, dict) else None
        self.app_capabilities = caps if isinstance(caps, dict) else {}
        asked = params.get("protocolVersion")
        self.protocol_version = asked if asked in APPS_PROTOCOL_VERSIONS else APPS_PROTOCOL_VERSIONS[0]
        self.state = "initializing"
        result = {
            "protocolVersion": self.protocol_version,
            "hostCapabilities": self.host_capabilities,
            "hostInfo": self.host_info,
            "hostContext": self.host_context,
        }
        return [Send({"jsonrpc": "2.0", "id": id, "result": result})]

    def _display_mode(self, id: int | str, params: dict[str, JSON]) -> list[Action]:
        mode = params.get("mode")
        current = self.host_context.get("displayMode", "inline")
        host_modes = self.host_context.get("availableDisplayModes", ["inline"])
        app_modes = (self.app_capabilities or {}).get("availableDisplayModes")
        granted = (
            mode in DISPLAY_MODES
            and isinstance(host_modes, list)
            and mode in host_modes
            and (not isinstance(app_modes, list) or mode in app_modes)
        )
        if not granted or mode == current:
            return [Send({"jsonrpc": "2.0", "id": id, "result": {"mode": current}})]
        return self._work(id, "ui/request-display-mode", params)

    def _notification(self, method: str, params: object) -> list[Action]:
        body = params if isinstance(params, dict) else {}
        if method == "ui/notifications/initialized":
            if self.state != "initializing":
                return [Event("ignored", {"why": f"initialized while {self.state}"})]
            self.state = "ready"
            actions: list[Action] = [Event("initialized", body)]
            while self._queue:
                actions.append(Send(self._queue.popleft()))
            return actions
        if method == "notifications/cancelled":
            request = body.get("requestId")
            if isinstance(request, int | str) and not isinstance(request, bool) and request in self._working:
                self._working.discard(request)
                return [Abandon(request)]
            return []
        if self.state == "waiting":
            return [Event("ignored", {"why": f"{method} before ui/initialize"})]
        if method == "ui/notifications/size-changed":
            return [Event("size-changed", body)]
        if method == "notifications/message":
            return [Event("log", body)]
        return [Event("ignored", {"why": f"unknown notification {method}"})]

    def _response(self, message: dict[str, JSON]) -> list[Action]:
        if self._teardown_id is not None and message.get("id") == self._teardown_id:
            self.state = "closed"
            return [Closed()]
        return [Event("ignored", {"why": "an answer to no request of the host", "message": message})]

    # ------------------------------------------------------ from the host

    def answer(self, id: int | str, result: dict[str, JSON]) -> list[Action]:
        """The host carried out `Work` ``id``: its result for the view (dropped if withdrawn)."""
        if id not in self._working:
            return []
        self._working.discard(id)
        if self.state == "closed":
            return []
        return [Send({"jsonrpc": "2.0", "id": id, "result": result})]

    def fail(self, id: int | str, code: int, message: str, data: JSON = None) -> list[Action]:
        """The host could not carry out `Work` ``id``: the error for the view."""
        if id not in self._working:
            return []
        self._working.discard(id)
        if self.state == "closed":
            return []
        error: dict[str, JSON] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return [Send({"jsonrpc": "2.0", "id": id, "error": error})]

    def _notify(self, method: str, params: dict[str, JSON]) -> list[Action]:
        if self.state in ("tearing_down", "closed"):
            raise RuntimeError(f"cannot send {method}: the view is being torn down")
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if self.state != "ready":
            self._queue.append(message)
            return []
        return [Send(message)]

    def tool_input(self, arguments: dict[str, JSON], *, partial: bool = False) -> list[Action]:
        """Give the view the tool call's arguments (``ui/notifications/tool-input``, or ``-partial``)."""
        method = "ui/notifications/tool-input-partial" if partial else "ui/notifications/tool-input"
        return self._notify(method, {"arguments": arguments})

    def tool_result(self, result: dict[str, JSON]) -> list[Action]:
        """Give the view the tool's result (``ui/notifications/tool-result``)."""
        return self._notify("ui/notifications/tool-result", result)

    def tool_cancelled(self, reason: str | None = None) -> list[Action]:
        """Tell the view the tool call was cancelled (``ui/notifications/tool-cancelled``)."""
        return self._notify("ui/notifications/tool-cancelled", {} if reason is None else {"reason": reason})

    def host_context_changed(self, changes: dict[str, JSON]) -> list[Action]:
        """Change the host context and tell the view what changed (``ui/notifications/host-context-changed``).

        Only the members whose values differ are sent; nothing is, when none does.
        """
        changed = {
            key: value for key, value in changes.items() if self.host_context.get(key, _MISSING) != value
        }
        if not changed:
            return []
        self.host_context.update(changed)
        return self._notify("ui/notifications/host-context-changed", changed)

    def list_changed(self, kind: Literal["tools", "resources", "prompts"]) -> list[Action]:
        """Pass a server's list change on to the view (``notifications/KIND/list_changed``)."""
        if kind not in ("tools", "resources", "prompts"):
            raise ValueError(f"kind must be 'tools', 'resources' or 'prompts', not {kind!r}")
        return self._notify(f"notifications/{kind}/list_changed", {})

    def teardown(self) -> list[Action]:
        """Start tearing the view down: ``ui/resource-teardown``, then `Closed` on its answer.

        A view that never finished initializing is closed at once (the host
        sends nothing before ``ui/notifications/initialized``).
        """
        if self.state in ("tearing_down", "closed"):
            return []
        abandoned: list[Action] = [Abandon(withdrawn) for withdrawn in sorted(self._working, key=str)]
        self._working.clear()
        self._queue.clear()
        if self.state != "ready":
            self.state = "closed"
            return [*abandoned, Closed()]
        self.state = "tearing_down"
        self._ids += 1
        self._teardown_id = self._ids
        request = {"jsonrpc": "2.0", "id": self._teardown_id, "method": "ui/resource-teardown", "params": {}}
        return [*abandoned, Send(request)]

    def close(self) -> list[Action]:
        """End the conversation without waiting for the view (it did not answer the teardown in time)."""
        if self.state == "closed":
            return []
        self.state = "closed"
        abandoned: list[Action] = [Abandon(withdrawn) for withdrawn in sorted(self._working, key=str)]
        self._working.clear()
        return [*abandoned, Closed()]
