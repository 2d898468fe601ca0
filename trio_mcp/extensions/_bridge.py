"""The Trio app bridge: one view's conversation with its host, over any message channel.

The order of the conversation is `trio_mcp._core.app_bridge.BridgeMachine`'s;
this module carries its actions out: messages to the view, the view's
requests to the server (through `AppServer`, under the visibility rule) or to
the host's callbacks, each in a task of the view's own nursery, withdrawn
when the view cancels them, all of it ended when the view is torn down.
"""

from __future__ import annotations

import logging
import math
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import trio

from .._core.app_bridge import Abandon, BridgeMachine, Closed, Event, Send, Work
from .._core.apps import app_callable
from .._errors import AppCallRefused, MCPError, RpcError
from .._models import CallToolResult, ReadResourceResult, Tool, unstructure
from .._session import call_maybe_async
from .._version import __version__

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping, Sequence

    from .._client import Client

__all__ = ["AppBridge", "AppServer", "ViewChannel", "open_app_bridge"]

JSON: TypeAlias = Any

_logger = logging.getLogger("trio_mcp.apps")


class AppServer:
    """One server, as a view of its own may use it.

    A view may call the tools of the server that rendered it whose
    visibility includes ``"app"``, read its resources and list those tools;
    nothing else. Give each view the `AppServer` of the server whose tool
    it renders.

    Args:
        client: The connection to that server.
    """

    def __init__(self, client: Client) -> None:
        self.client = client

    async def _tool(self, name: str) -> Tool:
        for tool in await self.client.list_tools():
            if tool.name == name:
                return tool
        raise AppCallRefused(
            f"a view of {self.client.name} asked for the tool {name!r}, which that server does not list"
            " (a view may call its own server's tools only)",
            tool=name,
            reason="not a tool of this server",
        )

    async def check_call(self, name: str) -> Tool:
        """The tool a view may call by ``name``.

        Raises:
            AppCallRefused: The server lists no such tool, or its visibility
                lacks ``"app"``.
        """
        tool = await self._tool(name)
        if not app_callable(tool.meta):
            raise AppCallRefused(
                f"a view asked for the tool {name!r} of {self.client.name}, whose visibility lacks 'app'",
                tool=name,
                reason="visibility lacks 'app'",
            )
        return tool

    async def call_tool(self, name: str, arguments: Mapping[str, JSON] | None = None) -> CallToolResult:
        """Call a tool on a view's behalf.

        Raises:
            AppCallRefused: The tool is not this server's, or its visibility
                lacks ``"app"``; nothing is sent.
        """
        await self.check_call(name)
        result: CallToolResult = await self.client.call_tool(name, arguments)
        return result

    async def list_tools(self) -> list[Tool]:
        """The tools a view of this server may call (visibility includes ``"app"``)."""
        return [tool for tool in await self.client.list_tools() if app_callable(tool.meta)]

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read one of this server's resources on a view's behalf."""
        result = await self.client.read_resource(uri)
        assert isinstance(result, ReadResourceResult)
        return result


INTERNAL_ERROR = -32603
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


class ViewChannel(Protocol):
    """How the bridge talks to one view: any transport that carries JSON-RPC objects.

    A websocket, a Qt WebChannel, a Jupyter comm, a pair of Trio memory
    channels: wrap it in an object with these two methods. ``receive``
    raises `trio.EndOfChannel` (or `trio.ClosedResourceError`) once the view
    is gone.
    """

    async def send(self, message: dict[str, JSON]) -> None:
        """Send one message (a JSON-RPC object) to the view."""

    async def receive(self) -> object:
        """The next message from the view (decoded JSON)."""


class AppBridge:
    """The host's end of one view (get one from `open_app_bridge`).

    Attributes:
        app_info: The view's ``appInfo`` from ``ui/initialize``, or `None`.
        app_capabilities: Its ``appCapabilities``, or `None` before then.
        model_context: What the view last gave with
            ``ui/update-model-context`` (for the model's next turn), or `None`.
        host_context: The host context the view was given, as it stands.
    """

    def __init__(
        self,
        machine: BridgeMachine,
        view: ViewChannel,
        nursery: trio.Nursery,
        server: AppServer | None,
        callbacks: dict[str, Callable[..., object] | None],
        teardown_timeout: float,
    ) -> None:
        self._machine = machine
        self._view = view
        self._nursery = nursery
        self._server = server
        self._callbacks = callbacks
        self._teardown_timeout = teardown_timeout
        self._send_lock = trio.StrictFIFOLock()
        self._scopes: dict[int | str, trio.CancelScope] = {}
        self._initialized = trio.Event()
        self._closed = trio.Event()
        self.model_context: dict[str, JSON] | None = None

    @property
    def app_info(self) -> dict[str, JSON] | None:
        return self._machine.app_info

    @property
    def app_capabilities(self) -> dict[str, JSON] | None:
        return self._machine.app_capabilities

    @property
    def host_context(self) -> dict[str, JSON]:
        return self._machine.host_context

    @property
    def closed(self) -> bool:
        """Whether the conversation is over."""
        return self._closed.is_set()

    # ------------------------------------------------------------ running

    async def _apply(self, actions: Sequence[object]) -> None:
        for action in actions:
            if isinstance(action, Send):
                async with self._send_lock:
                    try:
                        await self._view.send(action.message)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        self._closed.set()
            elif isinstance(action, Work):
                scope = trio.CancelScope()
                self._scopes[action.id] = scope
                self._nursery.start_soon(self._work, action, scope)
            elif isinstance(action, Abandon):
                found = self._scopes.pop(action.id, None)
                if found is not None:
                    found.cancel()
            elif isinstance(action, Event):
                await self._event(action)
            elif isinstance(action, Closed):
                self._closed.set()

    async def _event(self, event: Event) -> None:
        if event.kind == "initialized":
            self._initialized.set()
            return
        callback = {
            "size-changed": self._callbacks.get("on_size_change"),
            "log": self._callbacks.get("on_log"),
        }.get(event.kind)
        if callback is not None:
            try:
                await call_maybe_async(callback, event.params)
            except Exception as exc:
                _logger.warning("the host's %s callback raised %r", event.kind, exc)
        elif event.kind == "ignored":
            _logger.debug("a view's message was ignored: %s", event.params.get("why"))

    async def _read(self) -> None:
        while not self._closed.is_set():
            try:
                message = await self._view.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError, trio.BrokenResourceError):
                await self._apply(self._machine.close())
                return
            await self._apply(self._machine.receive(message))

    async def _work(self, work: Work, scope: trio.CancelScope) -> None:
        with scope:
            try:
                result = await self._carry_out(work)
            except RpcError as exc:
                actions = self._machine.fail(work.id, exc.code, exc.message, exc.data)
            except AppCallRefused as exc:
                actions = self._machine.fail(work.id, INVALID_PARAMS, str(exc))
            except MCPError as exc:
                actions = self._machine.fail(work.id, INTERNAL_ERROR, str(exc))
            except Exception as exc:
                _logger.warning("the host failed a view's %s: %r", work.method, exc)
                actions = self._machine.fail(
                    work.id, INTERNAL_ERROR, f"the host could not carry out {work.method}"
                )
            else:
                actions = self._machine.answer(work.id, result)
            self._scopes.pop(work.id, None)
            await self._apply(actions)

    async def _carry_out(self, work: Work) -> dict[str, JSON]:
        method, params = work.method, work.params
        server = self._server
        if method == "tools/call":
            assert server is not None
            name = params.get("name")
            arguments = params.get("arguments")
            if not isinstance(name, str) or (arguments is not None and not isinstance(arguments, dict)):
                raise RpcError(INVALID_PARAMS, "tools/call needs a tool name and an arguments object")
            return unstructure(await server.call_tool(name, arguments))
        if method == "tools/list":
            assert server is not None
            return {"tools": [unstructure(tool) for tool in await server.list_tools()]}
        if method == "resources/read":
            assert server is not None
            uri = params.get("uri")
            if not isinstance(uri, str):
                raise RpcError(INVALID_PARAMS, "resources/read needs a uri")
            result = unstructure(await server.read_resource(uri))
            result.pop("ttlMs", None)
            result.pop("cacheScope", None)
            return result
        if method in ("resources/list", "resources/templates/list"):
            assert server is not None
            client = server.client
            if method == "resources/list":
                return {"resources": [unstructure(item) for item in await client.list_resources()]}
            return {
                "resourceTemplates": [unstructure(item) for item in await client.list_resource_templates()]
            }
        if method == "ui/update-model-context":
            self.model_context = params
            callback = self._callbacks.get("on_model_context")
            if callback is not None:
                await call_maybe_async(callback, params)
            else:
                await trio.lowlevel.checkpoint()
            return {}
        if method == "ui/request-display-mode":
            callback = self._callbacks.get("on_display_mode")
            mode = params["mode"]
            if callback is None:
                await trio.lowlevel.checkpoint()
                return {"mode": self._machine.host_context.get("displayMode", "inline")}
            granted = await call_maybe_async(callback, mode)
            settled = mode if granted is None or granted is True else granted
            if settled is False:
                settled = self._machine.host_context.get("displayMode", "inline")
            self._machine.host_context["displayMode"] = settled
            return {"mode": settled}
        key = {"ui/message": "on_message", "ui/open-link": "on_open_link"}[method]
        callback = self._callbacks.get(key)
        if callback is None:
            raise RpcError(METHOD_NOT_FOUND, f"this host does not take {method}")
        answer = await call_maybe_async(callback, params)
        if answer is None or answer is True:
            return {}
        if answer is False:
            return {"isError": True}
        if not isinstance(answer, dict):
            raise TypeError(
                f"the {key} callback returned a {type(answer).__name__}, not a dict, a bool or None"
            )
        return answer

    # ------------------------------------------------------- host to view

    async def wait_initialized(self) -> None:
        """Wait until the view sent ``ui/notifications/initialized`` (or the conversation ended)."""
        async with trio.open_nursery() as nursery:

            async def closed() -> None:
                await self._closed.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(closed)
            await self._initialized.wait()
            nursery.cancel_scope.cancel()

    async def wait_closed(self) -> None:
        """Wait until the conversation is over (the view answered the teardown, or went away)."""
        await self._closed.wait()

    @property
    def initialized(self) -> bool:
        """Whether the view finished its handshake."""
        return self._initialized.is_set()

    async def send_tool_input(self, arguments: Mapping[str, JSON], *, partial: bool = False) -> None:
        """Give the view the arguments of the tool call it renders (queued until it is initialized).

        Raises:
            RuntimeError: The view is being torn down.
        """
        await self._apply(self._machine.tool_input(dict(arguments), partial=partial))
        await trio.lowlevel.checkpoint()

    async def send_tool_result(self, result: CallToolResult | Mapping[str, JSON]) -> None:
        """Give the view the tool's result (queued until it is initialized)."""
        wire = unstructure(result) if isinstance(result, CallToolResult) else dict(result)
        await self._apply(self._machine.tool_result(wire))
        await trio.lowlevel.checkpoint()

    async def send_tool_cancelled(self, reason: str | None = None) -> None:
        """Tell the view the tool call was cancelled."""
        await self._apply(self._machine.tool_cancelled(reason))
        await trio.lowlevel.checkpoint()

    async def set_host_context(self, **changes: JSON) -> None:
        """Change the host context (``theme="dark"``, ``displayMode="fullscreen"``, ...) and tell the view.

        The keys are the wire names of ``McpUiHostContext``; only the members
        that differ are sent, and nothing when none does.
        """
        await self._apply(self._machine.host_context_changed(changes))
        await trio.lowlevel.checkpoint()

    async def send_list_changed(self, kind: Literal["tools", "resources", "prompts"]) -> None:
        """Tell the view the server's list of ``kind`` changed (pass on the server's ``list_changed``)."""
        await self._apply(self._machine.list_changed(kind))
        await trio.lowlevel.checkpoint()

    async def teardown(self) -> None:
        """Tear the view down: ``ui/resource-teardown``, waiting for its answer at most ``teardown_timeout``.

        Idempotent. The view's requests still in progress are withdrawn.
        """
        await self._apply(self._machine.teardown())
        with trio.move_on_after(self._teardown_timeout):
            await self._closed.wait()
        await self._apply(self._machine.close())


@asynccontextmanager
async def open_app_bridge(
    view: ViewChannel,
    server: AppServer | None = None,
    *,
    host_info: tuple[str, str] = ("trio-mcp", __version__),
    host_context: Mapping[str, JSON] | None = None,
    on_message: Callable[[dict[str, JSON]], object] | None = None,
    on_open_link: Callable[[dict[str, JSON]], object] | None = None,
    on_model_context: Callable[[dict[str, JSON]], object] | None = None,
    on_display_mode: Callable[[str], object] | None = None,
    on_size_change: Callable[[dict[str, JSON]], object] | None = None,
    on_log: Callable[[dict[str, JSON]], object] | None = None,
    teardown_timeout: float = 5.0,
) -> AsyncIterator[AppBridge]:
    """Run the host's end of one view: ``async with open_app_bridge(view, AppServer(client)) as bridge:``.

    The bridge reads the view's messages from ``view`` in a nursery of its
    own, answers ``ui/initialize`` (with the host's capabilities, identity
    and ``host_context``), sends the view nothing before it says it is
    initialized, and carries out its requests: ``tools/call``,
    ``tools/list``, ``resources/read`` (and the resource listings) go to
    ``server`` under the visibility rule (`AppServer`), the ``ui/*``
    requests to the callbacks below, each in a task of its own, cancelled
    when the view withdraws it. Leaving the block tears the view down
    (``ui/resource-teardown``, waited for at most ``teardown_timeout``
    seconds) and ends every task of the view.

    Callbacks may be sync or async:

    * ``on_message(params)``: ``ui/message`` (a message for the
      conversation); return `None` or a result dict, `False` for
      ``{"isError": true}``. Without it the view gets ``-32601``.
    * ``on_open_link(params)``: ``ui/open-link`` (``params["url"]``); as
      ``on_message``. Giving it declares ``openLinks``.
    * ``on_model_context(params)``: ``ui/update-model-context`` (kept in
      `AppBridge.model_context` in any case).
    * ``on_display_mode(mode)``: a mode both sides list was asked for;
      return `None`/`True` to grant it, `False` to refuse, or the mode set.
    * ``on_size_change(params)``: ``ui/notifications/size-changed``.
    * ``on_log(params)``: the view's ``notifications/message``.

    Args:
        view: The channel to the view.
        server: The server whose tool the view renders (`None`: the view
            gets no server access).
        host_info: ``(name, version)`` of the host.
        host_context: The view's initial ``hostContext`` (wire names:
            ``theme``, ``displayMode``, ``availableDisplayModes``,
            ``toolInfo``, ``containerDimensions``, ...).
        teardown_timeout: How long leaving the block waits for the view to
            answer ``ui/resource-teardown``.
    """
    if not (teardown_timeout >= 0 and teardown_timeout != math.inf):
        raise ValueError("teardown_timeout must be a finite number of seconds >= 0")
    capabilities: dict[str, JSON] = {"logging": {}}
    if server is not None:
        # What the server has, the view may reach (through the visibility rule for tools).
        offered = server.client.server_capabilities
        if offered.tools is not None:
            capabilities["serverTools"] = {"listChanged": bool(offered.tools.get("listChanged"))}
        if offered.resources is not None:
            capabilities["serverResources"] = {"listChanged": bool(offered.resources.get("listChanged"))}
    if on_open_link is not None:
        capabilities["openLinks"] = {}
    name, version = host_info
    machine = BridgeMachine({"name": name, "version": version}, capabilities, dict(host_context or {}))
    callbacks: dict[str, Callable[..., object] | None] = {
        "on_message": on_message,
        "on_open_link": on_open_link,
        "on_model_context": on_model_context,
        "on_display_mode": on_display_mode,
        "on_size_change": on_size_change,
        "on_log": on_log,
    }
    async with trio.open_nursery() as nursery:
        bridge = AppBridge(machine, view, nursery, server, callbacks, teardown_timeout)
        nursery.start_soon(bridge._read)
        try:
            yield bridge
        finally:
            with trio.CancelScope(shield=True):
                await bridge.teardown()
            nursery.cancel_scope.cancel()
