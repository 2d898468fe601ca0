"""Server cards: find a domain's MCP servers before connecting. **Experimental.**

.. warning::

   The server-card format is a draft of the MCP Server Card extension
   (SEP-2127), not a settled part of MCP. This module follows the draft of
   2026-07-24 (the v1 card schema, discovery through an AI Catalog) and
   will change with it, without the deprecation period the rest of
   ``trio_mcp`` keeps. See :doc:`server-cards`.

A domain publishes a catalog at ``/.well-known/ai-catalog.json`` (or, in the
earlier revision of the draft, ``/.well-known/mcp/catalog.json``); each of
its server-card entries points to a card (or holds one inline); a card names
the server and its remote endpoints. `discover` reads all of it, every
document bounded in size and time, and hands back the cards;
`card_target` and `card_spec` turn a card's remote into a target to open or
a configuration entry for a group; `check_card` compares a card with what
the server itself says once connected.

A card is advisory. It is fetched before anyone connects, from wherever
the domain says, and nothing in it is verified: use the server's own word
(its ``serverInfo``, its listings) once connected, and never grant or deny
anything because a card says so.

::

    from trio_mcp import server_cards

    found = await server_cards.discover("example.com")
    for identifier, card in found.cards.items():
        target = server_cards.card_target(card, headers={"Authorization": "Bearer ..."})
        async with trio_mcp.open_client(target) as client:
            for mismatch in await server_cards.check_card(card, client):
                print("card and server disagree:", mismatch.message)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs
import trio

from ._core.server_cards import (
    CARD_MEDIA_TYPE,
    CARD_SCHEMA,
    CATALOG_MEDIA_TYPE,
    CATALOG_PATHS,
    KNOWN_TRANSPORTS,
    MAX_CARDS,
    MAX_DOCUMENT_BYTES,
    CardMismatch,
    Catalog,
    CatalogEntry,
    HeaderInput,
    Icon,
    Input,
    Remote,
    Repository,
    ResolvedRemote,
    ServerCard,
    catalog_urls,
    check_media_type,
    check_url,
    compare_card,
    decode_document,
    follow_redirect,
    parse_catalog,
    parse_server_card,
    pick_remote,
    resolve_remote,
    shown,
)
from ._errors import ConnectionFailed, MCPError, ServerCardError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    import httpx2

    from ._client import Client
    from ._config import ServerSpec
    from ._targets import HTTPTarget

__all__ = [
    "CARD_MEDIA_TYPE",
    "CARD_SCHEMA",
    "CATALOG_PATHS",
    "KNOWN_TRANSPORTS",
    "MAX_CARDS",
    "MAX_DOCUMENT_BYTES",
    "CardMismatch",
    "Catalog",
    "CatalogEntry",
    "Discovery",
    "HeaderInput",
    "Icon",
    "Input",
    "Remote",
    "Repository",
    "ResolvedRemote",
    "ServerCard",
    "ServerCardError",
    "card_spec",
    "card_target",
    "check_card",
    "compare_card",
    "discover",
    "fetch_catalog",
    "fetch_server_card",
    "parse_catalog",
    "parse_server_card",
    "pick_remote",
    "resolve_remote",
]

_T = TypeVar("_T")

#: Seconds one document (with its redirects) may take, by default.
TIMEOUT: Final = 10.0
#: Cards fetched at once, by default.
CONCURRENCY: Final = 8

_CATALOG_ACCEPT: Final = f"{CATALOG_MEDIA_TYPE}, application/json;q=0.9"
_CATALOG_TYPES: Final = (CATALOG_MEDIA_TYPE, "application/json")
_CARD_TYPES: Final = (CARD_MEDIA_TYPE, "application/json")


@attrs.frozen
class Discovery:
    """What `discover` found on a domain.

    Attributes:
        catalog: The catalog read.
        cards: The cards read, by their entry's identifier, in catalog order.
        failures: The entries that gave no card, by their position in the
            catalog's ``entries``, each with its error: the catalog's
            invalid entries, and the cards that could not be fetched or
            read. A bad entry never hides the good ones.
    """

    catalog: Catalog
    cards: Mapping[str, ServerCard]
    failures: Mapping[int, MCPError]


def _require_http() -> None:
    """Raise an `ImportError` that says what to install when httpx2 is missing."""
    try:
        import httpx2  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            "server cards are read over HTTP with httpx2: install the http extra (pip install 'trio-mcp[http]')"
        ) from exc


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check_limits(max_bytes: object, timeout: object) -> None:
    if not _positive_int(max_bytes):
        raise ValueError(f"max_bytes must be a positive integer, not {max_bytes!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
        raise ValueError(f"document_timeout must be a positive, finite number of seconds, not {timeout!r}")


class _Fetcher:
    """The documents of one discovery: one client, the same bounds for each document."""

    def __init__(self, client: httpx2.AsyncClient, max_bytes: int, timeout: float) -> None:
        self.client = client
        self.max_bytes = max_bytes
        self.timeout = timeout

    async def document(
        self, url: str, *, accept: str, types: Sequence[str], what: str, avoid: Sequence[str] = ()
    ) -> tuple[str, dict[str, Any]]:
        """The JSON object at ``url`` (after same-origin redirects) and the URL it came from."""
        from ._transports.http_get import get_bounded

        visited = [url]
        current = url
        with trio.move_on_after(self.timeout) as scope:
            while True:
                got = await get_bounded(self.client, current, accept=accept, max_bytes=self.max_bytes)
                if got.status in (301, 302, 303, 307, 308):
                    current = follow_redirect(current, got.status, got.location, visited, avoid=avoid)
                    visited.append(current)
                    continue
                break
        if scope.cancelled_caught:
            raise ServerCardError(
                f"the {what} at {shown(url)} took more than {self.timeout:g} s (timeout)",
                reason="timeout",
                url=shown(url),
            )
        if got.status != 200:
            raise ServerCardError(
                f"the {what} at {shown(current)} answered HTTP {got.status}",
                reason="status",
                url=shown(current),
                status=got.status,
            )
        if got.too_large:
            raise ServerCardError(
                f"the {what} at {shown(current)} is longer than {self.max_bytes} bytes (max_bytes)",
                reason="too_large",
                url=shown(current),
                status=got.status,
            )
        check_media_type(got.content_type, types, current, got.status)
        return current, decode_document(got.body, current, what)


async def _with_client(
    http_client: httpx2.AsyncClient | None,
    trust_env: bool,
    work: Callable[[httpx2.AsyncClient], Awaitable[_T]],
) -> _T:
    """Run ``work`` with the caller's client, or with one made and closed here."""
    _require_http()
    if http_client is not None:
        from ._http_objects import require_httpx2

        require_httpx2(http_client, "http_client", "AsyncClient")
        return await work(http_client)
    from ._transports.http_get import make_get_client

    async with make_get_client(trust_env=trust_env) as client:
        return await work(client)


async def _catalog(fetcher: _Fetcher, domain: str, allow_other_origins: bool, max_cards: int) -> Catalog:
    urls = catalog_urls(domain)
    for index, url in enumerate(urls):
        try:
            where, value = await fetcher.document(
                url, accept=_CATALOG_ACCEPT, types=_CATALOG_TYPES, what="catalog"
            )
        except ServerCardError as exc:
            if exc.reason == "status" and exc.status in (404, 410):
                if index + 1 < len(urls):
                    continue
                raise ServerCardError(
                    f"no catalog on {domain!r}: {' and '.join(shown(u) for u in urls)} are not there",
                    reason="no_catalog",
                    url=shown(urls[0]),
                    status=exc.status,
                ) from None
            raise
        return parse_catalog(value, url=where, allow_other_origins=allow_other_origins, max_cards=max_cards)
    raise AssertionError("unreachable")  # pragma: no cover


async def fetch_catalog(
    domain: str,
    *,
    http_client: httpx2.AsyncClient | None = None,
    trust_env: bool = True,
    allow_other_origins: bool = False,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_cards: int = MAX_CARDS,
    document_timeout: float = TIMEOUT,
) -> Catalog:
    """Read a domain's catalog, without following its entries. **Experimental.**

    ``https://DOMAIN/.well-known/ai-catalog.json`` is tried first, then
    (when that is not there: 404 or 410)
    ``https://DOMAIN/.well-known/mcp/catalog.json``. See `discover` for the
    arguments and the errors.
    """
    _check_limits(max_bytes, document_timeout)

    async def work(client: httpx2.AsyncClient) -> Catalog:
        return await _catalog(
            _Fetcher(client, max_bytes, document_timeout), domain, allow_other_origins, max_cards
        )

    return await _with_client(http_client, trust_env, work)


async def fetch_server_card(
    url: str,
    *,
    http_client: httpx2.AsyncClient | None = None,
    trust_env: bool = True,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    document_timeout: float = TIMEOUT,
) -> ServerCard:
    """Read one server card from its URL, with ``Accept: application/mcp-server-card+json``. **Experimental.**

    The URL must be ``https`` (``http`` only to a loopback host); redirects
    are followed to the same origin only. See `discover` for the arguments
    and the errors.
    """
    _check_limits(max_bytes, document_timeout)
    checked = check_url(url, what="server card")

    async def work(client: httpx2.AsyncClient) -> ServerCard:
        return await _card(_Fetcher(client, max_bytes, document_timeout), checked, ())

    return await _with_client(http_client, trust_env, work)


async def _card(fetcher: _Fetcher, url: str, avoid: Sequence[str]) -> ServerCard:
    where, value = await fetcher.document(
        url, accept=CARD_MEDIA_TYPE, types=_CARD_TYPES, what="server card", avoid=avoid
    )
    return parse_server_card(value, url=where)


async def discover(
    domain: str,
    *,
    http_client: httpx2.AsyncClient | None = None,
    trust_env: bool = True,
    allow_other_origins: bool = False,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_cards: int = MAX_CARDS,
    document_timeout: float = TIMEOUT,
    concurrency: int = CONCURRENCY,
) -> Discovery:
    """Find the MCP servers a domain publishes: its catalog, then each server card. **Experimental.**

    Reads the catalog (`fetch_catalog`), then follows each server-card
    entry with ``Accept: application/mcp-server-card+json`` (at most
    ``concurrency`` at once; an entry holding its card inline is read as
    it is; two entries with the same URL cost one fetch) and checks every
    card against the draft. What a card says is not verified: see
    `check_card`.

    Args:
        domain: A host (``example.com``), host and port, or origin
            (``https://example.com``); ``http://`` only for a loopback host
            (``http://127.0.0.1:8000``), for tests and local use.
        http_client: An `httpx2.AsyncClient` of yours (proxies, TLS), used as
            it is and not closed; redirects are never followed by it.
            Without one, a client is made and closed here.
        trust_env: Whether the client made here reads the environment's
            proxy and TLS settings, as httpx2 does.
        allow_other_origins: Follow entries whose card is on another origin
            than the catalog (the draft allows a catalog to list cards
            hosted elsewhere). Off by default: such an entry fails with
            ``reason="off_origin"``.
        max_bytes: The most bytes read of any one document.
        max_cards: The most server-card entries a catalog may list.
        document_timeout: The most seconds any one document may take,
            redirects included. The whole call is yours to bound too, with
            `trio.fail_after` around it.
        concurrency: How many cards are fetched at once.

    Returns:
        The catalog, the cards read (by entry identifier) and the entries
        that failed (by position, each with its error).

    Raises:
        ServerCardError: The catalog itself could not be read:
            ``"no_catalog"`` (neither location is there), ``"status"``,
            ``"content_type"``, ``"not_json"``, ``"too_large"``,
            ``"redirect"``, ``"loop"``, ``"timeout"``, ``"invalid"``,
            ``"too_many"``. A card's failure is in `Discovery.failures`
            instead.
        ConnectionFailed: The catalog's server could not be reached.
        ValueError: ``domain`` is not a domain or an origin, or asks for
            plain http to a host that is not loopback; a bound is not
            positive.
        TypeError: ``http_client`` is not an `httpx2.AsyncClient` (an
            ``httpx.AsyncClient`` of the old line, say).
    """
    _check_limits(max_bytes, document_timeout)
    if not _positive_int(concurrency):
        raise ValueError(f"concurrency must be a positive integer, not {concurrency!r}")
    catalog_urls(domain)  # a bad domain is the caller's ValueError, before any I/O

    async def work(client: httpx2.AsyncClient) -> Discovery:
        fetcher = _Fetcher(client, max_bytes, document_timeout)
        catalog = await _catalog(fetcher, domain, allow_other_origins, max_cards)
        return await _follow(fetcher, catalog, concurrency)

    return await _with_client(http_client, trust_env, work)


async def _follow(fetcher: _Fetcher, catalog: Catalog, concurrency: int) -> Discovery:
    from ._trio.nursery import first_cancelled, unexpected

    results: dict[str, ServerCard | MCPError] = {}
    limiter = trio.CapacityLimiter(concurrency)
    avoid = (catalog.url,)

    async def fetch(url: str) -> None:
        async with limiter:
            try:
                results[url] = await _card(fetcher, url, avoid)
            except (ServerCardError, ConnectionFailed) as exc:
                results[url] = exc

    urls = list(dict.fromkeys(entry.url for entry in catalog.entries if entry.url is not None))
    try:
        async with trio.open_nursery() as nursery:
            for url in urls:
                nursery.start_soon(fetch, url)
    except BaseExceptionGroup as group:
        failure = unexpected(group)
        raise (failure if failure is not None else first_cancelled(group)) from None

    cards: dict[str, ServerCard] = {}
    failures: dict[int, MCPError] = dict(catalog.invalid)
    for entry in catalog.entries:
        got: ServerCard | MCPError | None = (
            entry.card if entry.card is not None else results.get(entry.url or "")
        )
        if isinstance(got, MCPError):
            failures[entry.index] = got
        elif got is None:  # pragma: no cover - every URL was fetched
            continue
        elif entry.identifier in cards:
            failures[entry.index] = ServerCardError(
                f"entry {entry.index} repeats the identifier {entry.identifier!r}: only the first is kept",
                reason="invalid",
                url=shown(catalog.url),
                field=f"$.entries[{entry.index}].identifier",
            )
        else:
            cards[entry.identifier] = got
    return Discovery(
        catalog=catalog,
        cards=MappingProxyType(cards),
        failures=MappingProxyType(dict(sorted(failures.items()))),
    )


def card_target(
    card: ServerCard,
    *,
    remote: Remote | None = None,
    variables: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
    http_client: httpx2.AsyncClient | None = None,
    trust_env: bool = True,
) -> HTTPTarget:
    """The `~trio_mcp.HTTPTarget` of one of a card's remotes. **Experimental.**

    ``remote`` defaults to `pick_remote` (the first Streamable HTTP remote,
    else the first HTTP+SSE one: an `~trio_mcp.HTTPTarget` reaches both). Its URL and
    headers are made by `resolve_remote`: ``variables`` fill the card's
    ``{variables}``, ``headers`` give or override header values (a token,
    say). The card decides where to connect, so only pass it headers meant
    for that server. ``auth``, ``http_client`` and ``trust_env`` are the
    target's own.

    Raises:
        ServerCardError: ``"no_remote"``, ``"transport"`` (a remote of an
            unknown transport), ``"variable"``, ``"header"``,
            ``"insecure"`` or ``"invalid"``.
    """
    from ._targets import HTTPTarget

    chosen = remote if remote is not None else pick_remote(card)
    made = resolve_remote(chosen, variables=variables, headers=headers, card_url=card.url or "")
    return HTTPTarget(
        made.url,
        headers=dict(made.headers) or None,
        auth=auth,
        http_client=http_client,
        trust_env=trust_env,
    )


def card_spec(
    card: ServerCard,
    *,
    name: str | None = None,
    remote: Remote | None = None,
    variables: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> ServerSpec:
    """A configuration entry (`trio_mcp.ServerSpec`) for one of a card's remotes. **Experimental.**

    For a server group, as if the entry had been written in a file: its
    ``name`` defaults to the part of the card's name after the slash, its
    ``transport`` is ``"http"`` or ``"sse"``, its ``url`` and ``headers``
    are made as in `card_target`, and its ``source`` names the card
    (dialect ``"server-card"``, path the card's URL).

    Raises:
        ServerCardError: As `card_target`.
    """
    from ._config import ConfigSource, ServerSpec

    chosen = remote if remote is not None else pick_remote(card)
    made = resolve_remote(chosen, variables=variables, headers=headers, card_url=card.url or "")
    return ServerSpec(
        name=name if name is not None else card.short_name,
        transport=made.transport,
        url=made.url,
        headers=dict(made.headers),
        source=ConfigSource(path=card.url, dialect="server-card"),
    )


async def check_card(
    card: ServerCard, client: Client, *, remote: Remote | None = None
) -> tuple[CardMismatch, ...]:
    """Every way a card disagrees with the server it describes, once connected. **Experimental.**

    Compares the card's name, version, title and description with the
    server's ``serverInfo``, the negotiated protocol version with the
    remote's ``supportedProtocolVersions`` (``remote`` defaults to
    `pick_remote`'s choice, when the card has a remote a client can open),
    and, when the card lists tools (an earlier revision of the draft did),
    those names with the server's listing (one ``tools/list``, followed to
    its end). See `compare_card` for the rules. An empty tuple means they
    agree.

    The result is advice for a person or a log. Where the two disagree,
    the server's word is the one to use; never make an access decision on
    either.
    """
    if remote is None and any(item.known for item in card.remotes):
        remote = pick_remote(card)
    names: list[str] | None = None
    if card.tools is not None:
        names = [tool.name for tool in await client.list_tools()]
    else:
        await trio.lowlevel.checkpoint()
    info = client.server_info
    return compare_card(
        card,
        server_name=info.name if info is not None else None,
        server_version=info.version if info is not None else None,
        server_title=info.title if info is not None else None,
        server_description=info.description if info is not None else None,
        protocol_version=client.protocol_version,
        remote=remote,
        tool_names=names,
    )
