"""Paginated listings as async iterators."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Generic, Self, TypeVar

import trio

from .._errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["MAX_PAGES", "Pages"]

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
