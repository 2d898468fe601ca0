"""`FakeServer`: the scripted fake's API, what a test writes against, and the fake's own rules.

Each connection's plumbing is in `._connection`; the openers that connect the
real client to a fake (`open_fake_client`, `open_fake_transport`, the
fake as a target) are in `._openers` and `._connection`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import trio

from .._core.eras import MODERN_VERSIONS, PROTOCOL_VERSION
from .._core.jsonrpc import METHOD_NOT_FOUND, SUBSCRIPTION_ID, encode
from .._errors import RpcError
from .._serving.rules import (
    LISTEN,
    cache_fields,
    discover_result,
    initialize_refused,
    initialize_result,
    legacy_version,
    unsupported_version,
)
from .._version import __version__
from ._connection import Connection, FakeTarget, HTTPProcess
from ._pids import next_fake_pid
from ._request import FakeRequest, wire_dict

if TYPE_CHECKING:
    import httpx2

    from .._models import Implementation
    from .._serving.server import Admission, Server
    from .._targets import HTTPTarget, Target
    from .._transports.memory import MemoryChannel


__all__ = ["FakeServer"]

JSON: TypeAlias = Any

#: How long `FakeServer.receive_request` waits by default (virtual seconds under a MockClock).
RECEIVE_TIMEOUT = 60.0
#: The ``subscriptions/listen`` filter flag of each list.
_LIST_FLAGS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}
#: What a real server answers to a name it does not have.
INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002


def _described(items: Sequence[object] | None, what: str, key: str) -> list[dict[str, JSON]] | None:
    if items is None:
        return None
    if isinstance(items, str | bytes | Mapping):
        raise TypeError(f"{what} must be a sequence")
    out: list[dict[str, JSON]] = []
    for item in items:
        if isinstance(item, str):
            entry: dict[str, JSON] = {key: item, "name": item}
            if key == "name" and what == "tools":
                entry["inputSchema"] = {"type": "object"}
            out.append(entry)
        else:
            out.append(wire_dict(item, f"each of {what}"))
    return out


class FakeServer:
    """A scripted MCP server in memory, for testing the code that uses a `trio_mcp.Client`.

    Connect a client with `open_fake_client` (or a session with
    `open_fake_transport`). A fake serves one connection at a time, and may
    be connected again after one ends (a restarted server); `received` and
    `requests` span every connection.

    Answered by the fake itself (a handler registered for the same request
    takes precedence):

    * the handshake: ``server/discover`` (2026-07-28 era: a
      ``DiscoverResult``; initialize era: ``-32601``) and ``initialize``
      (initialize era: an ``InitializeResult`` at the version the client
      offered; 2026-07-28 era: ``-32022``), unless ``handshake=False``;
    * initialize era: ``ping`` and ``logging/setLevel``;
    * ``tools/list``, ``prompts/list``, ``resources/list`` and
      ``resources/templates/list``, in one page (or pages of ``page_size``),
      when the constructor was given `tools`, `prompts`, `resources` or
      `resource_templates` (lists you may change during the test, with
      `list_changed` or by assigning them);
    * ``subscriptions/listen`` (2026-07-28 era): acknowledged, and kept
      open for `list_changed` and `resource_updated`.

    Other requests are answered by the handlers registered with `on_tool`
    and `on_request`. A call of a tool, prompt or resource the fake lists
    but no handler answers waits for the test (`receive_request`). Anything
    else is answered as a real server would: an unknown tool or prompt with
    ``-32602``, an unknown resource with ``-32002``, an unknown method with
    ``-32601``, so that no call of the application waits forever. With
    ``manual=True`` every request that no handler or rule answers (a
    ``subscriptions/listen`` too) waits for the test instead.

    Args:
        era: ``"modern"`` (2026-07-28) or ``"legacy"`` (the initialize era).
        tools: Tools for ``tools/list``: names, wire dicts or
            `trio_mcp.types.Tool` objects (a name alone gets an empty object
            schema).
        prompts: Prompts for ``prompts/list``: names, dicts or `trio_mcp.types.Prompt`.
        resources: Resources for ``resources/list``: URIs, dicts or
            `trio_mcp.types.Resource`.
        resource_templates: For ``resources/templates/list``: URI
            templates, dicts or `trio_mcp.types.ResourceTemplate`.
        capabilities: The ``ServerCapabilities`` to declare, as a dict or
            `trio_mcp.types.ServerCapabilities`. By default they follow from the
            description and the handlers: ``tools``, ``prompts``,
            ``resources`` when there is something of the kind, and
            ``logging`` in the initialize era.
        server_info: ``(name, version)``, a dict or an `trio_mcp.types.Implementation`.
        instructions: The server's instructions, if any.
        protocol_version: The version the server speaks. 2026-07-28 era:
            its only supported version (default ``"2026-07-28"``); initialize
            era: the version ``initialize`` answers with (default: the one the
            client offered, when it is an initialize-era version, else
            ``"2025-11-25"``).
        ttl_ms: The ``ttlMs`` of the fake's own discover and list results
            (2026-07-28 era); 0, the default, means the client caches nothing.
        handshake: Answer the handshake automatically. With `False`,
            ``server/discover`` and ``initialize`` come to the test like any
            other request (run the script in a task of its own, since the
            client's ``async with`` waits for the handshake).
        manual: Let every request that no handler or rule answers wait for
            the test, instead of answering unknown names and methods with
            an error and acknowledging ``subscriptions/listen``.
        page_size: Answer the lists in pages of this many items (with a
            ``nextCursor``), as servers with long lists do; `None`, the
            default, answers each list in one page.
        receive_timeout: How many seconds `receive_request` waits for a
            request before it fails the test (virtual seconds under a
            `trio.testing.MockClock`); ``math.inf`` for no limit.

    Attributes:
        era: ``"modern"`` or ``"legacy"``.
        received: Every message the client sent, decoded, in order (requests,
            notifications, answers to `send_request`).
        requests: Every request the client sent, as `FakeRequest` objects,
            in order, whoever answered them.
    """

    def __init__(
        self,
        *,
        era: Literal["modern", "legacy"] = "modern",
        tools: Sequence[str | Mapping[str, JSON] | object] | None = None,
        prompts: Sequence[str | Mapping[str, JSON] | object] | None = None,
        resources: Sequence[str | Mapping[str, JSON] | object] | None = None,
        resource_templates: Sequence[str | Mapping[str, JSON] | object] | None = None,
        capabilities: Mapping[str, JSON] | object | None = None,
        server_info: tuple[str, str] | Mapping[str, JSON] | Implementation = ("fake-server", __version__),
        instructions: str | None = None,
        protocol_version: str | None = None,
        ttl_ms: int = 0,
        handshake: bool = True,
        manual: bool = False,
        page_size: int | None = None,
        receive_timeout: float = RECEIVE_TIMEOUT,
    ) -> None:
        if era not in ("modern", "legacy"):
            raise ValueError(f"era must be 'modern' or 'legacy', not {era!r}")
        if page_size is not None and (isinstance(page_size, bool) or not isinstance(page_size, int)):
            raise TypeError(f"page_size must be an int or None, not {type(page_size).__name__}")
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.era: Literal["modern", "legacy"] = era
        self._tools = _described(tools, "tools", "name")
        self._prompts = _described(prompts, "prompts", "name")
        self._resources = _described(resources, "resources", "uri")
        self._resource_templates = _described(resource_templates, "resource_templates", "uriTemplate")
        self.manual = manual
        """Whether requests that nothing answers wait for the test (see the constructor)."""
        self.page_size = page_size
        """The size of the pages of the lists, or `None` for one page."""
        if isinstance(receive_timeout, bool) or not isinstance(receive_timeout, int | float):
            raise TypeError(
                f"receive_timeout must be a number of seconds, not {type(receive_timeout).__name__}"
            )
        if not receive_timeout > 0:
            raise ValueError("receive_timeout must be a positive number of seconds (math.inf: no limit)")
        self.receive_timeout = receive_timeout
        """How long `receive_request` waits for a request before failing the test."""
        # The acknowledged subscriptions/listen streams, each with its connection.
        self._listens: list[tuple[Connection, FakeRequest]] = []
        self._capabilities = None if capabilities is None else wire_dict(capabilities, "capabilities")
        if isinstance(server_info, tuple):
            name, version = server_info
            info: dict[str, JSON] = {"name": name, "version": version}
        else:
            info = wire_dict(server_info, "server_info")
        self.server_info = info
        """The server's ``Implementation``, as a dict."""
        self.instructions = instructions
        """The server's instructions, or `None`."""
        self._version = protocol_version
        self.ttl_ms = ttl_ms
        """The ``ttlMs`` of the fake's own results (2026-07-28 era)."""
        self.handshake = handshake
        """Whether the fake answers ``server/discover`` and ``initialize`` itself."""

        self.received: list[JSON] = []
        self.requests: list[FakeRequest] = []
        self.handler_errors: list[Exception] = []
        """What the handlers raised (taken for bugs of the test), over every connection."""
        self._tool_handlers: dict[str, Callable[[FakeRequest], Any]] = {}
        self._handlers: dict[str, Callable[[FakeRequest], Any]] = {}
        self._queue: deque[FakeRequest] = deque()
        self._arrivals = trio.lowlevel.ParkingLot()
        self._connection: Connection | None = None
        self._last_connection: Connection | None = None
        self._last_log_level: str | None = None

    def __repr__(self) -> str:
        state = "connected" if self.connected else "not connected"
        return f"<FakeServer {self.server_info.get('name')!r} era={self.era} {state}>"

    @property
    def name(self) -> str:
        """The server's name (from ``server_info``)."""
        name = self.server_info.get("name")
        return name if isinstance(name, str) else "fake-server"

    @property
    def connected(self) -> bool:
        """Whether a client is connected (and the server has not exited)."""
        return self._connection is not None and self._connection.alive

    @property
    def tools(self) -> list[dict[str, JSON]] | None:
        """The tools ``tools/list`` answers with (wire dicts), or `None` to leave ``tools/list`` to the test.

        Assign names, dicts or models, as to the constructor; `list_changed`
        also tells the client.
        """
        return self._tools

    @tools.setter
    def tools(self, value: Sequence[str | Mapping[str, JSON] | object] | None) -> None:
        self._tools = _described(value, "tools", "name")

    @property
    def prompts(self) -> list[dict[str, JSON]] | None:
        """The prompts ``prompts/list`` answers with, or `None` (assign as `tools`)."""
        return self._prompts

    @prompts.setter
    def prompts(self, value: Sequence[str | Mapping[str, JSON] | object] | None) -> None:
        self._prompts = _described(value, "prompts", "name")

    @property
    def resources(self) -> list[dict[str, JSON]] | None:
        """The resources ``resources/list`` answers with, or `None` (assign URIs, dicts or models)."""
        return self._resources

    @resources.setter
    def resources(self, value: Sequence[str | Mapping[str, JSON] | object] | None) -> None:
        self._resources = _described(value, "resources", "uri")

    @property
    def resource_templates(self) -> list[dict[str, JSON]] | None:
        """The templates ``resources/templates/list`` answers with, or `None`."""
        return self._resource_templates

    @resource_templates.setter
    def resource_templates(self, value: Sequence[str | Mapping[str, JSON] | object] | None) -> None:
        self._resource_templates = _described(value, "resource_templates", "uriTemplate")

    @property
    def pid(self) -> int | None:
        """The process id of the current connection (`None` when none), a new one for each connection, as a real server's.

        It names no real process on any system (see `trio_mcp.testing.is_fake_pid`):
        ``os.kill`` with it raises `ProcessLookupError`. A test kills the fake
        with `exit` (``await server.exit(signal=signal.SIGKILL)``).
        """
        connection = self._connection
        return connection.pid if connection is not None and connection.alive else None

    @property
    def stderr_tail(self) -> str:
        """The end of what the server wrote to stderr (`write_stderr`), on its current or last connection."""
        connection = self._connection or self._last_connection
        return connection.channel.stderr_tail if connection is not None else ""

    @property
    def log_level(self) -> str | None:
        """The level the client set with ``logging/setLevel`` (initialize era), or `None`."""
        if self._connection is not None:
            return self._connection.core.log_level
        return self._last_log_level

    @property
    def capabilities(self) -> dict[str, JSON]:
        """The ``ServerCapabilities`` the handshake declares (see the constructor)."""
        if self._capabilities is not None:
            return dict(self._capabilities)
        caps: dict[str, JSON] = {}
        if self.tools is not None or self._tool_handlers or "tools/call" in self._handlers:
            caps["tools"] = {}
        if self.prompts is not None or "prompts/get" in self._handlers:
            caps["prompts"] = {}
        if (
            self.resources is not None
            or self.resource_templates is not None
            or "resources/read" in self._handlers
        ):
            caps["resources"] = {}
        if "completion/complete" in self._handlers:
            caps["completions"] = {}
        if self.era == "legacy":
            caps["logging"] = {}
        return caps

    # ---------------------------------------------------------- handlers

    def target(
        self, *, on_stderr: Callable[[str], object] | None = None, stderr_tail_bytes: int = 8 * 1024
    ) -> Target:
        """This fake as a `trio_mcp.Target`, for code that opens its servers itself.

        ::

            config = [trio_mcp.ServerSpec(name="weather", target=server.target())]
            async with trio_mcp.open_servers(config) as servers:
                ...

        Each opening connects the fake anew, as a process is started anew:
        `trio_mcp.open_client`, `trio_mcp.connect_client`, a server group's
        entry (`trio_mcp.ServerSpec.target`), which restarts it after
        `exit` like any server. As with a process, a fake that dies on the
        ``server/discover`` probe is connected again and sent
        ``initialize``. What a handler raises reaches the client as a
        ``-32603`` error and `handler_errors`; `open_fake_client` raises
        it too.

        Args:
            on_stderr: As `trio_mcp.ProcessTarget.on_stderr`.
            stderr_tail_bytes: As `trio_mcp.ProcessTarget.stderr_tail_bytes`.
        """
        return FakeTarget(self, on_stderr=on_stderr, stderr_tail_bytes=stderr_tail_bytes)

    @asynccontextmanager
    async def http_target(
        self,
        url: str = "http://fake-server.test/mcp",
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
    ) -> AsyncIterator[HTTPTarget]:
        """This fake as a remote server: an `trio_mcp.HTTPTarget` whose requests it serves in memory.

        ::

            async with server.http_target() as target:
                async with trio_mcp.open_client(target) as client:
                    ...

        The target's httpx2 client has a transport into the fake (no socket,
        no port): the client's real HTTP transport, the package's
        Streamable HTTP front and the fake's server core run in the test's
        Trio run, so virtual time (``autojump_clock``) works as over
        memory streams. The fake serves the era it was made for as a real
        server does over HTTP (see :ref:`testing-http`); the block's tasks
        serve it, and leaving the block ends them. Needs the ``http`` extra.

        Args:
            url: The URL the application is given; only its path matters
                (other paths get 404).
            headers: As `trio_mcp.HTTPTarget.headers`.
            auth: As `trio_mcp.HTTPTarget.auth`.
        """
        from ._http import serve_fake_http

        async with serve_fake_http(self.serve_http_connection, url, headers=headers, auth=auth) as target:
            yield target

    def on_tool(self, name: str, handler: Callable[[FakeRequest], Any]) -> None:
        """Answer every ``tools/call`` of tool ``name`` with ``handler``.

        ``handler(request)`` is a function or an async function, run in a
        task of its own for each call. What it returns is the result: a
        dict, a `trio_mcp.types.CallToolResult`, or a string (a result with that
        one text block). It may instead answer with the request's methods
        (for example `FakeRequest.input_required`) and return `None`, and
        it may send progress and logs first. Raise `trio_mcp.RpcError` to
        answer with an error. Any other exception is taken for a bug in the
        test: the client gets a ``-32603`` error, and the exception is raised
        again when the fake client's ``async with`` block ends.

        The client's ``notifications/cancelled`` for the request cancels the
        handler (a handler that waits on `trio.sleep_forever` is a tool that
        never finishes).
        """
        self._tool_handlers[name] = handler

    def on_request(self, method: str, handler: Callable[[FakeRequest], Any]) -> None:
        """Answer every request of ``method`` with ``handler``, as `on_tool` does.

        Takes precedence over the fake's own answers (the handshake, lists),
        but not over `on_tool` for the tools it names.
        """
        self._handlers[method] = handler

    # ---------------------------------------------------------- scripting

    async def receive_request(self) -> FakeRequest:
        """Wait for the next request that no handler or rule answered, and return it.

        Requests arrive in the order the client sent them. A request that
        never comes fails the test after `receive_timeout` seconds (60 by
        default), which under an autojumping `trio.testing.MockClock` pass
        at once: a test that waits for the wrong thing ends instead of
        hanging. Your own cancel scopes bound the wait too.

        Raises:
            AssertionError: No request came within `receive_timeout` seconds.
        """
        await trio.lowlevel.checkpoint()
        timeout = self.receive_timeout
        with trio.move_on_after(timeout):
            while not self._queue:
                await self._arrivals.park()
            return self._queue.popleft()
        seen = ", ".join(f"{request.method}" for request in self.requests[-5:]) or "none"
        raise AssertionError(
            f"no request came for the test within {timeout:g} s (the last requests: {seen});"
            " a request that a handler or the fake's own rules answer never comes here"
        )

    async def expect_request(self, method: str, *, name: str | None = None) -> FakeRequest:
        """`receive_request`, asserting what comes.

        Raises:
            AssertionError: The next request is not of ``method`` (or, with
                ``name``, not for that tool or prompt), or none came within
                `receive_timeout` seconds.
        """
        request = await self.receive_request()
        if request.method != method or (name is not None and request.name != name):
            wanted = method if name is None else f"{method} {name!r}"
            raise AssertionError(f"expected a {wanted} request, got {request!r}: {request.params!r}")
        return request

    async def notify(self, method: str, params: Mapping[str, JSON] | None = None) -> None:
        """Send the client a notification.

        Raises:
            trio.BrokenResourceError: No client is connected.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._live().notify(method, params)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def list_changed(
        self,
        kind: Literal["tools", "prompts", "resources"],
        items: Sequence[str | Mapping[str, JSON] | object] | Literal["unchanged"] | None = "unchanged",
    ) -> None:
        """Change a list (when ``items`` is given) and tell the client, in either era.

        ::

            await server.list_changed("tools", ["search", "fetch"])

        Items are given as to the constructor (names, dicts or models). The
        client is told as a real server would tell it: in the 2026-07-28 era
        on each ``subscriptions/listen`` stream the fake acknowledged that
        asked for that list (none open: nobody is told), in the initialize
        era with a ``notifications/KIND/list_changed`` notification (when a
        client is connected).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if kind not in _LIST_FLAGS:
            raise ValueError(f"kind must be 'tools', 'prompts' or 'resources', not {kind!r}")
        if not isinstance(items, str) or items != "unchanged":
            setattr(self, kind, items)
        method = f"notifications/{kind}/list_changed"
        self._announce(method, None, lambda wanted: bool(wanted.get(_LIST_FLAGS[kind])))
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def resource_updated(self, uri: str) -> None:
        """Tell the client that the resource ``uri`` changed (``notifications/resources/updated``), in either era.

        2026-07-28 era: on each acknowledged ``subscriptions/listen`` stream
        that asked for ``uri``; initialize era: as a notification.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._announce(
            "notifications/resources/updated",
            {"uri": uri},
            lambda wanted: uri in (wanted.get("resourceSubscriptions") or ()),
        )
        await trio.lowlevel.cancel_shielded_checkpoint()

    def _announce(
        self, method: str, params: dict[str, JSON] | None, wanted: Callable[[dict[str, JSON]], bool]
    ) -> None:
        connection = self._connection
        if connection is None or not connection.alive:
            return
        if self.era == "legacy":
            connection.notify(method, params)
            return
        for _, listen in list(self._listens):
            asked = listen.params.get("notifications")
            if isinstance(asked, dict) and wanted(asked):
                connection.notify(method, {**(params or {}), "_meta": {SUBSCRIPTION_ID: listen.id}})

    async def send_request(self, method: str, params: Mapping[str, JSON] | object = None) -> dict[str, JSON]:
        """Send the client a request and return its answer (initialize era).

        This is how initialize-era servers ask for input: the client answers
        ``elicitation/create``, ``sampling/createMessage`` and ``roots/list``
        through its hooks (or with an error when it has none). ``ping`` is
        answered by the client's session. ::

            answer = await server.send_request(
                "elicitation/create",
                {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {}}},
            )

        Cancelling the call withdraws the request: the client is sent
        ``notifications/cancelled`` and sends no answer.

        Args:
            method: The method.
            params: The params: a dict or a trio_mcp model (such as
                `trio_mcp.types.ElicitFormParams`), or `None` for none.

        Raises:
            trio_mcp.RpcError: The client answered with an error.
            trio.BrokenResourceError: No client is connected, or it
                disconnected before answering.
            RuntimeError: The server speaks the 2026-07-28 era, where servers
                send no requests (use `FakeRequest.input_required`).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self.era == "modern":
            raise RuntimeError(
                "servers send no requests in the 2026-07-28 era; ask for input with"
                " FakeRequest.input_required"
            )
        connection = self._live()
        body = None if params is None else wire_dict(params, "params")
        return await connection.core.request(method, body, withdraw="withdrawn by the server")

    async def send_message(self, message: Mapping[str, JSON]) -> None:
        """Send the client any JSON-RPC message, as given (for testing odd servers)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        self._live().send(encode(dict(message)))
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def send_raw(self, data: bytes) -> None:
        """Write ``data`` to the client as the server's stdout, byte for byte, after what was sent before.

        For testing garbage: a banner line, half a message, a line over
        ``max_message_bytes``. Messages end with ``b"\\n"``.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._live().send(bytes(data))
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def write_stderr(self, text: str) -> None:
        """Write lines to the server's stderr (the client's ``on_stderr``, `trio_mcp.ServerGone`'s tail)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        connection = self._live()
        for line in text.removesuffix("\n").split("\n"):
            connection.channel.stderr_line(line)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def exit(self, code: int | None = 1, *, signal: int | None = None) -> None:
        """Make the server die, with exit status ``code`` or killed by ``signal``.

        Handlers stop, and the requests of this connection can no longer be
        answered. What the server wrote before is written out, then its end
        of the stream is closed, as a process's stdout closes when it dies:
        every request in flight, and every later one, fails with
        `trio_mcp.ServerGone` (its ``exit_code``, ``signal`` and
        ``stderr_tail`` as given). The fake may then be connected again, as
        a restarted server. A handler that calls this dies with its server
        (it is cancelled).

        Raises:
            trio.BrokenResourceError: No client is connected.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        connection = self._live()
        connection.exit(None if signal is not None else code, signal)
        await connection.finished.wait()

    # ------------------------------------------------------------ internals

    def _live(self) -> Connection:
        connection = self._connection
        if connection is None or not connection.alive:
            raise trio.BrokenResourceError("no client is connected to the fake server")
        return connection

    def serve_channel(self, channel: MemoryChannel, stream: trio.abc.Stream) -> Connection:
        """Serve the client whose channel is ``channel``, over ``stream`` (the other end of its stream).

        What `open_fake_client` and `open_fake_transport` do; use those.

        :meta private:
        """
        if self._connection is not None and self._connection.alive:
            raise RuntimeError("this FakeServer already has a client; it serves one at a time")
        connection = self._connection = Connection(
            self, channel, stream, admit=self._admit, disconnected=self._disconnected, pid=next_fake_pid()
        )
        return connection

    async def serve_http_connection(
        self, make_server: Callable[..., Server], stream: trio.abc.Stream
    ) -> None:
        """Serve one connection of the HTTP front of `http_target` (a `trio_mcp._serving.http.Connect`).

        One at a time, as a fake serves: a new connection (an
        ``initialize``, or a 2026-07-28 request after the last connection
        ended) ends the one before.

        :meta private:
        """
        previous = self._connection
        if previous is not None and previous.alive:
            previous.disconnect("a new connection replaced it")
        connection = self._connection = Connection(
            self,
            HTTPProcess(),
            stream,
            admit=self._admit,
            disconnected=self._disconnected,
            pid=next_fake_pid(),
            make_server=make_server,
        )
        await connection.run()

    def _disconnected(self, connection: Connection) -> None:
        # Requests nobody took are void: they can no longer be answered.
        void = {id(request) for request in connection.requests.values()}
        self._queue = deque(request for request in self._queue if id(request) not in void)
        self._listens = [listen for listen in self._listens if listen[0] is not connection]
        if self._connection is connection:
            self._last_log_level = connection.core.log_level
            self._last_connection = connection
            self._connection = None

    def _admit(self, connection: Connection, request: FakeRequest) -> Admission:
        """How ``request`` is served: by a handler, by the fake's own rules, or by the test."""
        handler = None
        if request.method == "tools/call" and request.name is not None:
            handler = self._tool_handlers.get(request.name)
        if handler is None:
            handler = self._handlers.get(request.method)
        if handler is not None:
            return connection.handler(handler, request)
        rule = self._rule(connection, request)
        if rule is not None:
            return rule(request)
        if not self.manual:
            if request.method == LISTEN and self.era == "modern":
                return connection.handler(lambda listen: self._serve_listen(connection, listen), request)
            self._refuse_unscripted(request)
        self._queue.append(request)
        self._arrivals.unpark_all()
        return None

    def _refuse_unscripted(self, request: FakeRequest) -> None:
        """Answer as a real server would a request for something the fake does not have (raise its error).

        A call of something the fake lists, and a list it was not given,
        wait for the test: return.
        """
        method = request.method
        lists = {"tools/list": self.tools, "prompts/list": self.prompts, "resources/list": self.resources}
        lists["resources/templates/list"] = self.resource_templates
        if method in lists or method in ("server/discover", "initialize"):
            return  # left to the test (no list given, handshake=False)
        if method == "tools/call":
            if request.name in {tool.get("name") for tool in self.tools or ()}:
                return
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {request.name}")
        if method == "prompts/get":
            if request.name in {prompt.get("name") for prompt in self.prompts or ()}:
                return
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {request.name}")
        if method == "resources/read":
            uri = request.params.get("uri")
            if self.resource_templates or uri in {resource.get("uri") for resource in self.resources or ()}:
                return
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri})
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    async def _serve_listen(self, connection: Connection, request: FakeRequest) -> None:
        """A ``subscriptions/listen``: acknowledged, then open until the client ends it."""
        await request.acknowledge()
        self._listens.append((connection, request))
        try:
            await trio.sleep_forever()
        finally:
            with suppress(ValueError):
                self._listens.remove((connection, request))

    def _rule(
        self, connection: Connection, request: FakeRequest
    ) -> Callable[[FakeRequest], dict[str, JSON]] | None:
        method = request.method
        if self.handshake and method == "server/discover":
            return self._discover
        if self.handshake and method == "initialize":
            return self._initialize
        if self.era == "legacy" and method == "ping":
            return lambda _: {}
        if self.era == "legacy" and method == "logging/setLevel":
            return connection.set_log_level
        listed = {
            "tools/list": ("tools", self.tools),
            "prompts/list": ("prompts", self.prompts),
            "resources/list": ("resources", self.resources),
            "resources/templates/list": ("resourceTemplates", self.resource_templates),
        }.get(method)
        if listed is None or listed[1] is None:
            return None
        key, items = listed[0], listed[1]
        size = self.page_size

        def answer_list(request: FakeRequest) -> dict[str, JSON]:
            if size is None:
                return {key: list(items), **self._cache_fields()}
            cursor = request.params.get("cursor")
            start = 0
            if cursor is not None:
                if not isinstance(cursor, str) or not cursor.isdigit() or int(cursor) > len(items):
                    raise RpcError(INVALID_PARAMS, "Invalid cursor")
                start = int(cursor)
            page: dict[str, JSON] = {key: list(items[start : start + size]), **self._cache_fields()}
            if start + size < len(items):
                page["nextCursor"] = str(start + size)
            return page

        return answer_list

    def _cache_fields(self) -> dict[str, JSON]:
        return cache_fields(self.ttl_ms) if self.era == "modern" else {}

    def _discover(self, request: FakeRequest) -> dict[str, JSON]:
        if self.era == "legacy":
            raise RpcError(METHOD_NOT_FOUND, "Method not found: server/discover")
        supported = [self._version or MODERN_VERSIONS[0]]
        requested = request.meta.get(PROTOCOL_VERSION)
        if requested not in supported:
            raise unsupported_version(requested, supported)
        result = discover_result(supported, self.capabilities, self.server_info, self.instructions)
        return {**result, **self._cache_fields()}

    def _initialize(self, request: FakeRequest) -> dict[str, JSON]:
        offered = request.params.get("protocolVersion")
        if self.era == "modern":
            raise initialize_refused(offered, [self._version or MODERN_VERSIONS[0]])
        version = legacy_version(offered, self._version)
        return initialize_result(version, self.capabilities, self.server_info, self.instructions)
