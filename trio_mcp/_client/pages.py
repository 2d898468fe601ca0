"""Paginated listings: one generic listing for tools, prompts, resources and templates.

`Listings` fetches one page of any listing (from the cache while it is
fresh), and gives every page as a `Pages` async iterator or as one list;
what a page of tools teaches the rest of the client (output schemas, task
support, ``x-mcp-header`` parameters) is handed on as it arrives.
`ToolHeaders` keeps those parameters for the ``Mcp-Param-*`` headers of
``tools/call``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Generic, Literal, Self, TypeAlias, TypeVar

import attrs
import trio

from .._core.param_headers import param_headers, screen_tools
from .._errors import ProtocolError
from .._models import (
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from .._core.cache import TtlCache
    from .._core.outputs import OutputSchemas
    from .._core.param_headers import HeaderParam
    from .._models import Tool
    from .._options import NotificationCallback

__all__ = ["LISTS", "MAX_PAGES", "Listings", "Pages", "ToolHeaders"]

JSON: TypeAlias = Any

T = TypeVar("T")

#: The most pages a listing follows before it gives up.
MAX_PAGES: Final = 10_000


class Pages(Generic[T]):
    """An async iterator over every item of a paginated list.

    Returned by `Client.iter_tools` and its siblings. It fetches a page when
    the previous one is used up, following ``nextCursor`` until the server
    sends none. Breaking out of the loop early is fine: nothing is left open.

    Raises:
        ProtocolError: The server sent the same cursor twice (a pagination
            loop), or more than 10,000 pages.
    """

    def __init__(self, fetch: Callable[[str | None], Awaitable[Any]], method: str, attribute: str) -> None:
        self._fetch = fetch
        self._method = method
        self._attribute = attribute
        self._items: list[T] = []
        self._index = 0
        self._cursor: str | None = None
        self._seen: set[str] = set()
        self._pages = 0
        self._done = False
        self._error: ProtocolError | None = None

    def __aiter__(self) -> Self:
        return self

    async def aclose(self) -> None:
        """Stop early (optional: nothing is held open between pages)."""
        await trio.lowlevel.checkpoint()
        self._done = True
        self._items = []

    async def _next_page(self) -> None:
        """Fetch the next page into ``_items`` (or mark the end)."""
        if self._pages >= MAX_PAGES:
            raise ProtocolError(f"{self._method}: more than {MAX_PAGES} pages")
        page = await self._fetch(self._cursor)
        self._pages += 1
        self._items = getattr(page, self._attribute)
        self._index = 0
        cursor = page.next_cursor
        if cursor is None:
            self._done = True
        elif cursor in self._seen:
            # This page's items still count; the loop ends the listing.
            self._done = True
            self._error = ProtocolError(
                f"{self._method}: the server sent the cursor {cursor!r} twice (a pagination loop)"
            )
        else:
            self._seen.add(cursor)
            self._cursor = cursor

    async def __anext__(self) -> T:
        if self._index < len(self._items):
            await trio.lowlevel.checkpoint()
        while self._index >= len(self._items):
            if self._done:
                await trio.lowlevel.checkpoint()
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            await self._next_page()
        item = self._items[self._index]
        self._index += 1
        return item

    async def collect(self) -> list[T]:
        """Every remaining item, as a list (one checkpoint per page, not per item).

        Raises:
            ProtocolError: As iterating would.
        """
        items = self._items[self._index :]
        self._index = len(self._items)
        if self._done:
            await trio.lowlevel.checkpoint()
        while not self._done:
            await self._next_page()
            items.extend(self._items)
            self._index = len(self._items)
        if self._error is not None:
            raise self._error
        return items


#: Each listing: its result model, and the attribute that holds its items.
LISTS: Final[dict[str, tuple[type, str]]] = {
    "tools/list": (ListToolsResult, "tools"),
    "prompts/list": (ListPromptsResult, "prompts"),
    "resources/list": (ListResourcesResult, "resources"),
    "resources/templates/list": (ListResourceTemplatesResult, "resource_templates"),
}


class ToolHeaders:
    """The ``x-mcp-header`` parameters of each tool, from its latest listing (2026-07-28 era, SEP-2243).

    Args:
        server: Who the server is, as messages name it.
        log: Reports a diagnostic.
    """

    def __init__(self, server: str, log: Callable[[str], None]) -> None:
        self._params: dict[str, tuple[HeaderParam, ...]] = {}
        self._server = server
        self._log = log

    def screen(self, page: ListToolsResult) -> ListToolsResult:
        """Leave out the tools whose ``x-mcp-header`` annotations are invalid, saying why; learn the others'."""
        kept, params, dropped = screen_tools(page.tools, lambda tool: (tool.name, tool.input_schema))
        for tool in page.tools:
            self._params.pop(tool.name, None)
        self._params.update(params)
        for tool, error in dropped:
            self._log(
                f"tool {tool.name!r} of {self._server} is left out of the listing, as it cannot be"
                f" called: its x-mcp-header breaks the rule {error.rule!r} ({error})"
            )
        return attrs.evolve(page, tools=kept) if dropped else page

    def of(self, params: Mapping[str, JSON]) -> tuple[tuple[str, str], ...]:
        """The ``Mcp-Param-*`` headers of a ``tools/call`` with these params; none for a tool never listed."""
        found = self._params
        if not found:
            return ()
        name = params.get("name")
        mine = found.get(name) if isinstance(name, str) else None
        return tuple(param_headers(mine, params.get("arguments"))) if mine else ()


class Listings:
    """The client's listings: a page, every page, and what a page of tools teaches.

    Args:
        typed: Sends a listing request and gives its typed result
            (``(method, params, model, on_notification)``).
        era: The connection's era.
        cache: The client's cache, or `None`.
        outputs: The output schemas (a tools listing feeds them).
        headers: The tools' header parameters (a 2026-07-28 tools listing feeds them).
        saw_tools: Told of every page of tools of the initialize era (which take tasks).
    """

    def __init__(
        self,
        *,
        typed: Callable[[str, dict[str, JSON], type, NotificationCallback | None], Awaitable[Any]],
        era: Callable[[], Literal["modern", "legacy"] | None],
        cache: TtlCache | None,
        outputs: OutputSchemas,
        headers: ToolHeaders,
        saw_tools: Callable[[Sequence[Tool]], None],
    ) -> None:
        self._typed = typed
        self._era = era
        self._cache = cache
        self._outputs = outputs
        self._headers = headers
        self._saw_tools = saw_tools

    async def page(
        self, method: str, cursor: str | None, on_notification: NotificationCallback | None = None
    ) -> Any:
        """One page of ``method`` (``tools/list``, ...) from ``cursor``; cached while fresh, without a callback."""
        params: dict[str, JSON] = {} if cursor is None else {"cursor": cursor}
        cache = self._cache if on_notification is None else None
        key = "" if cursor is None else "\0" + cursor
        if cache is not None:
            hit = cache.get(method, key, trio.current_time())
            if hit is not None:
                await trio.lowlevel.checkpoint()
                if isinstance(hit, ListToolsResult):
                    self._outputs.saw_page(hit, hit.tools, first=cursor is None)
                return hit
        page: Any = await self._typed(method, params, LISTS[method][0], on_notification)
        era = self._era()
        tools = method == "tools/list"
        if tools and era == "modern":
            page = self._headers.screen(page)
        if cache is not None and era == "modern":
            cache.put(method, key, page, page.ttl_ms, trio.current_time())
        if tools:
            self._outputs.saw_page(page, page.tools, first=cursor is None)
            if era == "legacy":
                self._saw_tools(page.tools)
        return page

    def pages(self, method: str) -> Pages[Any]:
        """Every item of ``method``'s listing, page after page, as an async iterator."""

        async def fetch(cursor: str | None) -> Any:
            return await self.page(method, cursor)

        return Pages(fetch, method, LISTS[method][1])

    async def all(self, method: str) -> list[Any]:
        """Every item of ``method``'s listing, following ``nextCursor`` to the end."""
        return await self.pages(method).collect()

    async def relist_tools(self) -> None:
        """List the tools afresh, past the cache (their headers changed under us)."""
        if self._cache is not None:
            self._cache.invalidate({"method": "notifications/tools/list_changed"})
        await self.all("tools/list")
