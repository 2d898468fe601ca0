"""The HTTP+SSE transport of 2024-11-05, without I/O: the fallback's state.

A server of that transport is reached with a GET that opens an event stream;
its first event, ``endpoint``, names the URL to POST every message to, and
every message of the server (answers included) comes on that stream. The
HTTP channel falls back to it when ``initialize`` is refused without an MCP
answer. `HttpSse` decides:

* whether the ``endpoint`` event names a usable URL on the server's own
  origin (`endpoint`): anything else is a typed `HTTPError`, naming what was
  wrong, never an exception of the URL parser;
* what each later event carries (`event`): messages for the session, with
  the server's requests recognised by JSON-RPC id, so that a replayed one is
  never served (and answered) twice; an answer is handed over only for a
  request of ours in flight, once.

Memory is bounded: the ids remembered are kept in bounded tables.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, TypeAlias

from .._errors import HTTPError
from .codec import UnreadableJSON, decode
from .http_actions import Action, Deliver, Log
from .http_wire import BadLocation, redirect_target, same_origin
from .sse import BadEncoding, Event, EventTooLarge, Item
from .streamable_http import MEMORY

__all__ = ["HttpSse"]

JSON: TypeAlias = Any


class HttpSse:
    """The state of one HTTP+SSE (2024-11-05) connection.

    Args:
        name: Who the server is, for messages.
        url: The URL the GET stream was opened on (the base of the endpoint).
        shown: The URL as messages show it (no secrets).
    """

    def __init__(self, name: str, url: str, shown: str) -> None:
        self.name = name
        self.url = url
        self.shown = shown
        self.endpoint_url: str | None = None
        """The URL to POST to, once the ``endpoint`` event named it."""
        self._pending: dict[int, None] = {}
        self._served: OrderedDict[tuple[bool, object], None] = OrderedDict()

    def endpoint(self, item: Item) -> str | HTTPError | None:
        """An item of the stream before the endpoint is known: the URL to POST to, an error, or
        `None` (not the ``endpoint`` event: wait for it)."""
        if not isinstance(item, Event) or item.type != "endpoint":
            return None
        where = item.data.strip()
        try:
            target = redirect_target(self.url, where)
        except BadLocation as exc:
            return HTTPError(
                f"{self.name} named an endpoint that is not a usable URL: {exc}",
                url=self.shown,
                body=where[:1024],
            )
        if not same_origin(self.url, target):
            return HTTPError(
                f"{self.name} named an endpoint on another origin ({where!r}); refused",
                url=self.shown,
                body=where[:1024],
            )
        self.endpoint_url = target
        return target

    def sent(self, request_id: int) -> None:
        """Our request ``request_id`` went out: its answer may come."""
        self._pending[request_id] = None

    def withdrawn(self, request_id: int) -> None:
        """Our request ``request_id`` is over (answered elsewhere, failed, or withdrawn)."""
        self._pending.pop(request_id, None)

    def event(self, item: Item) -> list[Action]:
        """An item of the stream once the endpoint is known."""
        if isinstance(item, EventTooLarge):
            return [Log(f"{self.name} sent an event over the limit of {item.limit} bytes; skipped")]
        if isinstance(item, BadEncoding):
            return [Log(f"{self.name} sent an event whose {item.field} is not UTF-8; skipped")]
        if not isinstance(item, Event):
            return []
        if item.type != "message":
            return [Log(f"{self.name} sent an event of type {item.type!r}; ignored")]
        data = item.data.encode("utf-8", "surrogatepass")
        try:
            message = decode(data)
        except UnreadableJSON:
            return [Log(f"{self.name} sent an event whose data is not JSON: {data[:80]!r}; skipped")]
        if not isinstance(message, dict):
            return [
                Log(f"{self.name} sent an event that is not one JSON-RPC message: {data[:80]!r}; skipped")
            ]
        if "method" in message:
            raw = message.get("id")
            key = (True, raw) if isinstance(raw, str) else (False, raw) if type(raw) is int else None
            if "id" in message and key is not None:
                if key in self._served:
                    return [Log(f"{self.name} sent its request {raw!r} again (a replay); dropped")]
                self._served[key] = None
                while len(self._served) > MEMORY:
                    self._served.popitem(last=False)
            return [Deliver(data)]
        answer_id = message.get("id")
        if type(answer_id) is int and answer_id in self._pending:
            del self._pending[answer_id]
            return [Deliver(data)]
        return [Log(f"{self.name} sent an answer for id {answer_id!r}, which awaits none; dropped")]
