"""Server cards and their catalogs, read and checked without I/O (experimental: the format is a draft).

The rules of server-card discovery, as pure functions over values: where a
domain's catalog is (`catalog_urls`), which URLs may be followed and which
redirects taken (`check_url`, `follow_redirect`), what a response must look
like (`check_media_type`, `decode_document`), the catalog and the card read
into frozen models (`parse_catalog`, `parse_server_card`), a card's remote
turned into a URL and headers (`resolve_remote`), and a card compared with
what the server says once connected (`compare_card`). The Trio edge in
`trio_mcp.server_cards` only carries bytes and time.

The format followed is the draft of the Server Card extension (SEP-2127,
extension ``io.modelcontextprotocol/server-card``): the schema
``https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json``
and the discovery rules of its ``docs/discovery.md`` (revision of
2026-07-24), which find cards through an AI Catalog at
``/.well-known/ai-catalog.json``; the earlier revision's MCP Catalog at
``/.well-known/mcp/catalog.json`` is read too, as a fallback. Every error is
a `ServerCardError`.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias
from urllib.parse import urljoin, urlsplit, urlunsplit

import attrs

from .._errors import ServerCardError
from .kinds import json_kind

__all__ = [
    "CARD_MEDIA_TYPE",
    "CARD_SCHEMA",
    "CATALOG_MEDIA_TYPE",
    "CATALOG_PATHS",
    "KNOWN_TRANSPORTS",
    "MAX_CARDS",
    "MAX_DOCUMENT_BYTES",
    "MAX_REDIRECTS",
    "CardMismatch",
    "Catalog",
    "CatalogEntry",
    "HeaderInput",
    "Icon",
    "Input",
    "Remote",
    "Repository",
    "ResolvedRemote",
    "ServerCard",
    "catalog_urls",
    "check_media_type",
    "check_url",
    "compare_card",
    "decode_document",
    "follow_redirect",
    "is_loopback",
    "origin_of",
    "parse_catalog",
    "parse_server_card",
    "pick_remote",
    "resolve_remote",
    "shown",
]

#: The media type of a server card, asked for in ``Accept`` and expected back.
CARD_MEDIA_TYPE: Final = "application/mcp-server-card+json"
#: The media type of an AI Catalog.
CATALOG_MEDIA_TYPE: Final = "application/ai-catalog+json"
#: The one ``$schema`` a card of the draft's ``v1`` family carries.
CARD_SCHEMA: Final = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
#: Where a domain's catalog is looked for, in order: the AI Catalog of the
#: current draft, then the MCP Catalog of the revision before it (tried only
#: when the first is not there: 404 or 410).
CATALOG_PATHS: Final = ("/.well-known/ai-catalog.json", "/.well-known/mcp/catalog.json")
#: The remote transports a card may name that a client can open.
KNOWN_TRANSPORTS: Final = ("streamable-http", "sse")
#: The default bound on one document's body, in bytes.
MAX_DOCUMENT_BYTES: Final = 256 * 1024
#: The default bound on the card entries of one catalog.
MAX_CARDS: Final = 100
#: Redirects followed for one document (same origin only).
MAX_REDIRECTS: Final = 5

_MAX_REMOTES: Final = 64
_MAX_ITEMS: Final = 256
_NAME: Final = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
_REMOTE_URL: Final = re.compile(r"(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)")
_VARIABLE: Final = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}")
_VERSION_RANGE: Final = re.compile(r"^\s*[\^~<>=]|(^|\.)[xX*](\.|$)")
_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_FORMATS: Final = ("string", "number", "boolean", "filepath")

Origin: TypeAlias = tuple[str, str, int]
"""Where a URL points: scheme, host (lower case), port."""


def shown(url: str) -> str:
    """A URL as messages show it: no user info, no query, no fragment (they may hold secrets)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "<an unreadable URL>"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine: ``localhost`` or a loopback address."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def origin_of(url: str) -> Origin:
    """The origin of an absolute ``http``/``https`` URL (the default port made explicit)."""
    parts = urlsplit(url)
    port = parts.port
    scheme = parts.scheme.lower()
    return (
        scheme,
        (parts.hostname or "").lower(),
        port if port is not None else (443 if scheme == "https" else 80),
    )


def _error(message: str, reason: str, url: str = "", **more: Any) -> ServerCardError:
    return ServerCardError(message, reason=reason, url=shown(url) if url else "", **more)


def check_url(url: str, *, base: str | None = None, what: str = "document") -> str:
    """An absolute URL that may be fetched: ``https``, or ``http`` to a loopback host.

    ``url`` is resolved against ``base`` first (a catalog entry may be
    relative to its catalog). The fragment is dropped.

    Raises:
        ServerCardError: ``"invalid"`` for a URL that is not ``http(s)`` with
            a host, that holds user info, or whitespace, control or
            unprintable characters;
            ``"insecure"`` for ``http`` to a host that is not loopback.
    """
    if not url.isprintable() or any(char.isspace() for char in url):
        raise _error(
            f"the {what} URL holds whitespace, control or unprintable characters", "invalid", base or ""
        )
    try:
        absolute = urljoin(base, url) if base is not None else url
        parts = urlsplit(absolute)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError as exc:
        raise _error(f"the {what} URL cannot be read ({exc})", "invalid", base or "") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise _error(
            f"the {what} URL is not an http(s) URL with a host: {shown(absolute)!r}", "invalid", base or ""
        )
    if "@" in parts.netloc:
        raise _error(
            f"the {what} URL {shown(absolute)!r} holds user info (credentials have no place in a URL here)",
            "invalid",
            base or "",
        )
    if scheme == "http" and not is_loopback(parts.hostname):
        raise _error(
            f"the {what} URL {shown(absolute)!r} is plain http to a host that is not loopback "
            "(https is required, http only for local use)",
            "insecure",
            absolute,
        )
    return urlunsplit((scheme, parts.netloc, parts.path or "/", parts.query, ""))


def catalog_urls(domain: str) -> tuple[str, ...]:
    """The catalog URLs of a domain, in the order they are tried.

    ``domain`` is a host name (``example.com``), a host and port
    (``example.com:8443``), or an origin (``https://example.com``,
    ``http://127.0.0.1:8000``); a bare name means ``https``. Plain ``http``
    is accepted for a loopback host only.

    Raises:
        TypeError: ``domain`` is not a string.
        ValueError: it is empty, has a path, query, fragment or user info,
            or asks for ``http`` to a host that is not loopback.
    """
    if not isinstance(domain, str):
        raise TypeError(f"domain must be a str, not {type(domain).__name__}")
    text = domain.strip()
    origin = text if "://" in text else f"https://{text}"
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018
    except ValueError as exc:
        raise ValueError(f"not a domain or an origin: {domain!r} ({exc})") from None
    if not parts.hostname or parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"not a domain or an origin: {domain!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError(f"a domain or an origin has no path, query or user info: {domain!r}")
    if parts.scheme.lower() == "http" and not is_loopback(parts.hostname):
        raise ValueError(f"plain http is allowed for a loopback host only, not {domain!r}: use https")
    root = urlunsplit((parts.scheme.lower(), parts.netloc, "", "", ""))
    return tuple(root + path for path in CATALOG_PATHS)


def follow_redirect(
    url: str, status: int, location: str | None, visited: Sequence[str], *, avoid: Sequence[str] = ()
) -> str:
    """The URL a redirect leads to, if it may be followed.

    Only to the same origin, at most `MAX_REDIRECTS` times in a row, never
    back to a URL already visited (``visited``: the URLs of this fetch so
    far, the first one asked for first) nor to one of ``avoid`` (such as the
    catalog a card was listed in).

    Raises:
        ServerCardError: ``"redirect"`` (no ``Location``, another origin, too
            many) or ``"loop"``.
    """
    if location is None:
        raise _error(f"HTTP {status} without a Location from {shown(url)}", "redirect", url, status=status)
    try:
        target = check_url(location, base=url, what="redirect")
    except ServerCardError as exc:
        raise _error(f"HTTP {status} from {shown(url)}: {exc}", "redirect", url, status=status) from None
    if origin_of(target) != origin_of(url):
        raise _error(
            f"HTTP {status} from {shown(url)} redirects to another origin ({shown(target)}): not followed",
            "redirect",
            url,
            status=status,
        )
    if target in visited or target in avoid:
        raise _error(f"redirect loop: {shown(url)} leads back to {shown(target)}", "loop", url, status=status)
    if len(visited) > MAX_REDIRECTS:
        raise _error(
            f"more than {MAX_REDIRECTS} redirects from {shown(visited[0])}", "redirect", url, status=status
        )
    return target


def check_media_type(content_type: str | None, accepted: Sequence[str], url: str, status: int) -> None:
    """Refuse a response whose ``Content-Type`` is not one of ``accepted`` (parameters ignored).

    Raises:
        ServerCardError: ``"content_type"``.
    """
    given = (content_type or "").split(";", 1)[0].strip().lower()
    if given not in accepted:
        raise _error(
            f"{shown(url)} answered with content type {given or 'none'!r}, not one of {', '.join(accepted)}",
            "content_type",
            url,
            status=status,
        )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_document(body: bytes, url: str, what: str = "document") -> dict[str, Any]:
    """A JSON object from a UTF-8 body.

    Raises:
        ServerCardError: ``"not_json"`` for bytes that are not UTF-8 JSON
            (``NaN`` and infinities included, and nesting too deep to
            read), ``"invalid"`` for JSON that is not an object.
    """
    try:
        text = body.decode("utf-8")
        value = json.loads(text, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = type(exc).__name__ if isinstance(exc, RecursionError) else str(exc)[:200]
        raise _error(f"the {what} at {shown(url)} is not JSON ({reason})", "not_json", url) from None
    if not isinstance(value, dict):
        raise _error(
            f"the {what} at {shown(url)} is JSON but not an object ({json_kind(value)})",
            "invalid",
            url,
            field="$",
        )
    return value


class _Reader:
    """Typed reads of one document's members, each failure naming its JSON path."""

    def __init__(self, url: str, what: str) -> None:
        self.url = url
        self.what = what

    def fail(self, path: str, message: str) -> ServerCardError:
        where = f" at {shown(self.url)}" if self.url else ""
        return ServerCardError(
            f"the {self.what}{where} is broken: {path}: {message}",
            reason="invalid",
            url=shown(self.url) if self.url else "",
            field=path,
        )

    def string(
        self,
        obj: Mapping[str, Any],
        key: str,
        path: str,
        *,
        required: bool = False,
        min_length: int = 0,
        max_length: int | None = None,
    ) -> str | None:
        here = f"{path}.{key}"
        if key not in obj:
            if required:
                raise self.fail(here, "is missing")
            return None
        value = obj[key]
        if not isinstance(value, str):
            raise self.fail(here, f"must be a string, not {json_kind(value)}")
        if len(value) < min_length:
            raise self.fail(here, f"must have at least {min_length} characters")
        if max_length is not None and len(value) > max_length:
            raise self.fail(here, f"must have at most {max_length} characters")
        return value

    def boolean(self, obj: Mapping[str, Any], key: str, path: str) -> bool:
        value = obj.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(f"{path}.{key}", f"must be true or false, not {json_kind(value)}")
        return value

    def obj(self, value: object, path: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"must be an object, not {json_kind(value)}")
        return value

    def array(self, obj: Mapping[str, Any], key: str, path: str, *, limit: int = _MAX_ITEMS) -> list[Any]:
        value = obj.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"{path}.{key}", f"must be an array, not {json_kind(value)}")
        if len(value) > limit:
            raise self.fail(f"{path}.{key}", f"has {len(value)} items, more than the {limit} read")
        return value

    def strings(self, obj: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        items = self.array(obj, key, path)
        for index, item in enumerate(items):
            if not isinstance(item, str):
                raise self.fail(f"{path}.{key}[{index}]", f"must be a string, not {json_kind(item)}")
        return tuple(items)


def _frozen(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    from types import MappingProxyType

    return MappingProxyType(dict(value or {}))


def _frozen_errors(value: Mapping[int, ServerCardError] | None) -> Mapping[int, ServerCardError]:
    from types import MappingProxyType

    return MappingProxyType(dict(value or {}))


@attrs.frozen
class Input:
    """A value a remote needs (a URL variable, or a header): how to ask for it, and its defaults.

    Attributes:
        description: What it is, for a person.
        is_required: Whether the connection needs it.
        is_secret: Whether it is a secret (a password, a token): never
            shown, never logged.
        format: ``"string"``, ``"number"``, ``"boolean"`` or ``"filepath"``.
        default: The value used when none is given.
        placeholder: An example, for a form.
        value: A value set by the card, not meant to be changed; may hold
            ``{variables}``.
        choices: The values allowed, when the card restricts them.
    """

    description: str | None = None
    is_required: bool = False
    is_secret: bool = False
    format: str | None = None
    default: str | None = None
    placeholder: str | None = None
    value: str | None = None
    choices: tuple[str, ...] | None = None


@attrs.frozen
class HeaderInput(Input):
    """An HTTP header a remote needs or accepts (wire ``KeyValueInput``).

    Attributes:
        name: The header's name.
        variables: The variables its ``value`` refers to as ``{name}``.
    """

    name: str = ""
    variables: Mapping[str, Input] = attrs.field(factory=dict, converter=_frozen)


@attrs.frozen
class Remote:
    """One endpoint of a card: where and how the server is reached.

    Attributes:
        type: The transport: ``"streamable-http"`` or ``"sse"`` (anything
            else is kept as written, and refused when a target is made).
        url: The endpoint, a template whose ``{variables}`` are filled in
            when a target is made.
        headers: The headers it needs or accepts.
        variables: The variables of `url` (and of header values).
        supported_protocol_versions: The protocol revisions it says it
            speaks, or `None` when it does not say.
    """

    type: str
    url: str
    headers: tuple[HeaderInput, ...] = ()
    variables: Mapping[str, Input] = attrs.field(factory=dict, converter=_frozen)
    supported_protocol_versions: tuple[str, ...] | None = None

    @property
    def known(self) -> bool:
        """Whether its transport is one a client can open."""
        return self.type in KNOWN_TRANSPORTS


@attrs.frozen
class Repository:
    """Where the server's source is (wire ``Repository``)."""

    url: str
    source: str
    subfolder: str | None = None
    id: str | None = None


@attrs.frozen
class Icon:
    """An icon to show next to the server (wire ``Icon``)."""

    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] | None = None
    theme: str | None = None


@attrs.frozen
class ServerCard:
    """A server's card: what it says about itself before anyone connects. Advisory only.

    Nothing here is verified: compare it with what the server says once
    connected (`trio_mcp.server_cards.check_card`), and never grant or deny
    anything on its strength.

    Attributes:
        name: The server's name in reverse-DNS form (``com.example/weather``).
        version: Its version.
        description: What it does.
        title: A name for display, or `None`.
        website_url: Its home page, or `None`.
        repository: Where its source is, or `None`.
        icons: Icons to show next to it.
        remotes: Its endpoints, in the card's order.
        meta: The card's ``_meta`` (vendor data), as written.
        tools: Tool names, when the card lists tools (the current draft
            leaves tools out; an earlier revision listed them), else `None`.
        url: Where the card was read, or `None` (inline in a catalog, or
            given as a value).
        extra: Members the draft does not define, kept as written.
    """

    name: str
    version: str
    description: str
    title: str | None = None
    website_url: str | None = None
    repository: Repository | None = None
    icons: tuple[Icon, ...] = ()
    remotes: tuple[Remote, ...] = ()
    meta: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen, eq=False)
    tools: tuple[str, ...] | None = None
    url: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen, eq=False)

    @property
    def short_name(self) -> str:
        """The part of `name` after the slash (``weather`` for ``com.example/weather``)."""
        return self.name.rsplit("/", 1)[-1]


def _input(reader: _Reader, value: object, path: str) -> dict[str, Any]:
    obj = reader.obj(value, path)
    fmt = reader.string(obj, "format", path)
    if fmt is not None and fmt not in _FORMATS:
        raise reader.fail(f"{path}.format", f"must be one of {', '.join(_FORMATS)}")
    choices = reader.strings(obj, "choices", path) if "choices" in obj else None
    return {
        "description": reader.string(obj, "description", path),
        "is_required": reader.boolean(obj, "isRequired", path),
        "is_secret": reader.boolean(obj, "isSecret", path),
        "format": fmt,
        "default": reader.string(obj, "default", path),
        "placeholder": reader.string(obj, "placeholder", path),
        "value": reader.string(obj, "value", path),
        "choices": choices,
    }


def _variables(reader: _Reader, obj: Mapping[str, Any], path: str) -> dict[str, Input]:
    if "variables" not in obj:
        return {}
    table = reader.obj(obj["variables"], f"{path}.variables")
    if len(table) > _MAX_ITEMS:
        raise reader.fail(f"{path}.variables", f"has more than {_MAX_ITEMS} variables")
    return {
        str(name): Input(**_input(reader, value, f"{path}.variables.{name}")) for name, value in table.items()
    }


def _remote(reader: _Reader, value: object, path: str) -> Remote:
    obj = reader.obj(value, path)
    kind = reader.string(obj, "type", path, required=True)
    url = reader.string(obj, "url", path, required=True)
    assert kind is not None
    assert url is not None
    if not _REMOTE_URL.fullmatch(url):
        raise reader.fail(
            f"{path}.url", "must start with http://, https:// or a {variable}, without whitespace"
        )
    headers: list[HeaderInput] = []
    for index, item in enumerate(reader.array(obj, "headers", path)):
        here = f"{path}.headers[{index}]"
        fields = _input(reader, item, here)
        header = reader.obj(item, here)
        name = reader.string(header, "name", here, required=True, min_length=1)
        assert name is not None
        if not _TOKEN.fullmatch(name):
            raise reader.fail(f"{here}.name", "is not an HTTP header name")
        headers.append(HeaderInput(**fields, name=name, variables=_variables(reader, header, here)))
    versions = (
        reader.strings(obj, "supportedProtocolVersions", path) if "supportedProtocolVersions" in obj else None
    )
    return Remote(
        type=kind,
        url=url,
        headers=tuple(headers),
        variables=_variables(reader, obj, path),
        supported_protocol_versions=versions,
    )


def _tools(value: object) -> tuple[str, ...] | None:
    """The tool names of an earlier revision's ``tools`` member, or `None` when it is not such a list."""
    if not isinstance(value, list) or len(value) > 10_000:
        return None
    names: list[str] = []
    for item in value:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str):
            return None
        names.append(name)
    return tuple(names)


_CARD_KEYS: Final = frozenset(
    {
        "$schema",
        "name",
        "version",
        "description",
        "title",
        "websiteUrl",
        "repository",
        "icons",
        "remotes",
        "_meta",
    }
)


def parse_server_card(value: object, *, url: str | None = None) -> ServerCard:
    """A card read from its decoded JSON, checked against the draft's schema.

    Required: ``$schema`` (the ``v1`` server-card schema URL), ``name``
    (reverse-DNS, one slash, 3 to 200 characters), ``version`` (at most 255
    characters, not a range such as ``^1.2``), ``description`` (1 to 100
    characters). Every optional member is checked for its type when present;
    members the draft does not define are kept in `ServerCard.extra`.

    Raises:
        ServerCardError: ``"invalid"``, with the JSON path at fault.
    """
    reader = _Reader(url or "", "server card")
    obj = reader.obj(value, "$")
    schema = reader.string(obj, "$schema", "$", required=True)
    if schema != CARD_SCHEMA:
        raise reader.fail("$.$schema", f"must be {CARD_SCHEMA}")
    name = reader.string(obj, "name", "$", required=True, min_length=3, max_length=200)
    assert name is not None
    if not _NAME.fullmatch(name):
        raise reader.fail("$.name", "must be a reverse-DNS name with exactly one slash (com.example/weather)")
    version = reader.string(obj, "version", "$", required=True, max_length=255)
    assert version is not None
    if _VERSION_RANGE.search(version):
        raise reader.fail("$.version", "must be one version, not a range")
    description = reader.string(obj, "description", "$", required=True, min_length=1, max_length=100)
    assert description is not None
    title = reader.string(obj, "title", "$", min_length=1, max_length=100)
    website = reader.string(obj, "websiteUrl", "$")
    repository = None
    if "repository" in obj:
        repo = reader.obj(obj["repository"], "$.repository")
        repo_url = reader.string(repo, "url", "$.repository", required=True)
        source = reader.string(repo, "source", "$.repository", required=True)
        assert repo_url is not None
        assert source is not None
        repository = Repository(
            url=repo_url,
            source=source,
            subfolder=reader.string(repo, "subfolder", "$.repository"),
            id=reader.string(repo, "id", "$.repository"),
        )
    icons: list[Icon] = []
    for index, item in enumerate(reader.array(obj, "icons", "$")):
        here = f"$.icons[{index}]"
        icon = reader.obj(item, here)
        src = reader.string(icon, "src", here, required=True)
        assert src is not None
        theme = reader.string(icon, "theme", here)
        if theme is not None and theme not in ("light", "dark"):
            raise reader.fail(f"{here}.theme", "must be 'light' or 'dark'")
        icons.append(
            Icon(
                src=src,
                mime_type=reader.string(icon, "mimeType", here),
                sizes=reader.strings(icon, "sizes", here) if "sizes" in icon else None,
                theme=theme,
            )
        )
    remotes = tuple(
        _remote(reader, item, f"$.remotes[{index}]")
        for index, item in enumerate(reader.array(obj, "remotes", "$", limit=_MAX_REMOTES))
    )
    meta = reader.obj(obj["_meta"], "$._meta") if "_meta" in obj else {}
    extra = {key: item for key, item in obj.items() if key not in _CARD_KEYS}
    return ServerCard(
        name=name,
        version=version,
        description=description,
        title=title,
        website_url=website,
        repository=repository,
        icons=tuple(icons),
        remotes=remotes,
        meta=meta,
        tools=_tools(extra.get("tools")) if "tools" in extra else None,
        url=url,
        extra=extra,
    )


@attrs.frozen
class CatalogEntry:
    """One server-card entry of a catalog.

    Attributes:
        identifier: The entry's logical identifier
            (``urn:air:example.com:mcp:weather``).
        url: Where the card is, made absolute, or `None` for an inline card.
        card: The inline card (the entry's ``data``), or `None`.
        index: The entry's position in the catalog's ``entries``.
    """

    identifier: str
    url: str | None = None
    card: ServerCard | None = None
    index: int = 0


@attrs.frozen
class Catalog:
    """A domain's catalog: its server-card entries, and what was left out.

    Attributes:
        url: Where it was read.
        spec_version: Its ``specVersion``, or `None` when it has none.
        entries: The server-card entries that can be followed, in order.
        invalid: The entries that cannot, by position, each with its error
            (a bad entry never hides the good ones).
        skipped: How many entries are of other types (agent cards, other
            catalogs): not server cards, not read.
    """

    url: str
    spec_version: str | None = None
    entries: tuple[CatalogEntry, ...] = ()
    invalid: Mapping[int, ServerCardError] = attrs.field(factory=dict, converter=_frozen_errors, eq=False)
    skipped: int = 0


def _entry(
    reader: _Reader, value: object, index: int, catalog_url: str, allow_other_origins: bool
) -> CatalogEntry | None:
    path = f"$.entries[{index}]"
    obj = reader.obj(value, path)
    kind = reader.string(obj, "type", path, required=True)
    if kind is None or kind.split(";", 1)[0].strip().lower() != CARD_MEDIA_TYPE:
        return None
    identifier = reader.string(obj, "identifier", path, required=True, min_length=1)
    assert identifier is not None
    has_url, has_data = "url" in obj, "data" in obj
    if has_url == has_data:
        raise reader.fail(path, "must have exactly one of url and data")
    if has_data:
        card = parse_server_card(obj["data"], url=None)
        return CatalogEntry(identifier=identifier, card=card, index=index)
    raw = reader.string(obj, "url", path, required=True)
    assert raw is not None
    try:
        url = check_url(raw, base=catalog_url, what="server card")
    except ServerCardError as exc:
        raise ServerCardError(
            f"{path}.url: {exc}", reason=exc.reason, url=shown(catalog_url), field=f"{path}.url"
        ) from None
    if url == check_url(catalog_url):
        raise ServerCardError(
            f"{path}.url points back at the catalog {shown(catalog_url)}",
            reason="loop",
            url=shown(catalog_url),
            field=f"{path}.url",
        )
    if not allow_other_origins and origin_of(url) != origin_of(catalog_url):
        raise ServerCardError(
            f"{path}.url points to another origin ({shown(url)}) than the catalog's "
            f"({shown(catalog_url)}): not followed unless allow_other_origins is set",
            reason="off_origin",
            url=shown(catalog_url),
            field=f"{path}.url",
        )
    return CatalogEntry(identifier=identifier, url=url, index=index)


def parse_catalog(
    value: object, *, url: str, allow_other_origins: bool = False, max_cards: int = MAX_CARDS
) -> Catalog:
    """A catalog read from its decoded JSON: an AI Catalog, or the MCP Catalog of the earlier draft.

    Entries whose ``type`` is not `CARD_MEDIA_TYPE` are counted in
    `Catalog.skipped`. A server-card entry needs an ``identifier`` and
    exactly one of ``url`` (resolved against the catalog's URL; same origin
    as the catalog unless ``allow_other_origins``; never the catalog itself)
    and ``data`` (an inline card, checked as any card); a broken entry goes
    to `Catalog.invalid` with its error.

    Raises:
        ServerCardError: ``"invalid"`` when the document is not a catalog
            (no ``entries`` array, a ``specVersion`` that is not a string),
            ``"too_many"`` when it lists more than ``max_cards`` server
            cards.
    """
    reader = _Reader(url, "catalog")
    obj = reader.obj(value, "$")
    spec_version = reader.string(obj, "specVersion", "$")
    if "entries" not in obj:
        raise reader.fail("$.entries", "is missing")
    items = obj["entries"]
    if not isinstance(items, list):
        raise reader.fail("$.entries", f"must be an array, not {json_kind(items)}")
    entries: list[CatalogEntry] = []
    invalid: dict[int, ServerCardError] = {}
    skipped = 0
    for index, item in enumerate(items):
        try:
            entry = _entry(reader, item, index, url, allow_other_origins)
        except ServerCardError as exc:
            invalid[index] = exc
        else:
            if entry is None:
                skipped += 1
                continue
            entries.append(entry)
        if len(entries) + len(invalid) > max_cards:
            raise ServerCardError(
                f"the catalog at {shown(url)} lists more than {max_cards} server cards (max_cards)",
                reason="too_many",
                url=shown(url),
                field="$.entries",
            )
    return Catalog(
        url=url, spec_version=spec_version, entries=tuple(entries), invalid=invalid, skipped=skipped
    )


@attrs.frozen
class ResolvedRemote:
    """A remote made concrete: its transport, URL and headers, every variable filled in.

    Attributes:
        transport: ``"http"`` (Streamable HTTP) or ``"sse"`` (HTTP+SSE), as
            configuration entries name them.
        url: The endpoint.
        headers: The headers to send (values may be secrets: never shown).
    """

    transport: Literal["http", "sse"]
    url: str
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen, repr=False)


def pick_remote(card: ServerCard) -> Remote:
    """The remote a client should use: the first Streamable HTTP one, else the first HTTP+SSE one.

    Raises:
        ServerCardError: ``"no_remote"`` when the card has none,
            ``"transport"`` when none has a transport a client can open.
    """
    url = card.url or ""
    if not card.remotes:
        raise _error(f"the server card {card.name!r} has no remotes: nothing to connect to", "no_remote", url)
    for kind in KNOWN_TRANSPORTS:
        for remote in card.remotes:
            if remote.type == kind:
                return remote
    types = ", ".join(sorted({repr(remote.type) for remote in card.remotes}))
    raise _error(
        f"the server card {card.name!r} has no remote of a known transport ({types}; "
        f"known: {', '.join(KNOWN_TRANSPORTS)})",
        "transport",
        url,
    )


def _fill(
    template: str,
    declared: Mapping[str, Input],
    given: Mapping[str, str],
    where: str,
    card_url: str,
) -> str:
    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        spec = declared.get(name)
        if name in given:
            value = given[name]
        elif spec is not None and spec.value is not None and not _VARIABLE.search(spec.value):
            value = spec.value
        elif spec is not None and spec.default is not None:
            value = spec.default
        else:
            required = "a required" if spec is not None and spec.is_required else "a"
            declared_text = "" if spec is not None else " (the card does not declare it)"
            raise _error(
                f"{where} needs {required} value for the variable {{{name}}}{declared_text}: pass it in variables",
                "variable",
                card_url,
            )
        if not isinstance(value, str):
            raise TypeError(f"variables must be strings, not {type(value).__name__} for {name!r}")
        if spec is not None and spec.choices is not None and value not in spec.choices:
            raise _error(
                f"{where}: the value of {{{name}}} is not one of the card's choices", "variable", card_url
            )
        return value

    return _VARIABLE.sub(value_of, template)


def resolve_remote(
    remote: Remote,
    *,
    variables: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    card_url: str = "",
) -> ResolvedRemote:
    """The URL and headers of a remote, its ``{variables}`` filled in.

    A variable takes, in order: its value in ``variables``, the card's fixed
    ``value``, its ``default``; one with none of them is an error. A header
    takes its value in ``headers`` (matched without regard to case), else
    the card's ``value`` (its ``{variables}`` filled in from the header's own
    and the remote's declarations), else its ``default``; a required header
    with none is an error, an optional one is left out. Headers in
    ``headers`` the card does not name are sent too. The URL made must be
    ``https`` (or ``http`` to a loopback host).

    Raises:
        ServerCardError: ``"transport"`` for a transport no client can open,
            ``"variable"``, ``"header"`` (a required header without a value,
            or a value holding a line break), ``"insecure"`` or ``"invalid"``
            for the URL made.
    """
    if not remote.known:
        raise _error(
            f"unknown transport {remote.type!r} (known: {', '.join(KNOWN_TRANSPORTS)})", "transport", card_url
        )
    given = dict(variables or {})
    url = _fill(remote.url, remote.variables, given, "the remote's URL", card_url)
    try:
        url = check_url(url, what="remote")
    except ServerCardError as exc:
        raise ServerCardError(str(exc), reason=exc.reason, url=shown(card_url) if card_url else "") from None
    supplied = {name.lower(): (name, value) for name, value in (headers or {}).items()}
    out: dict[str, str] = {}
    for header in remote.headers:
        key = header.name.lower()
        if key in supplied:
            value: str | None = supplied.pop(key)[1]
        elif header.value is not None:
            declared = {**remote.variables, **header.variables}
            value = _fill(header.value, declared, given, f"the header {header.name!r}", card_url)
        else:
            value = header.default
        if value is None:
            if header.is_required:
                raise _error(
                    f"the remote needs the header {header.name!r}: pass it in headers (or its variables)",
                    "header",
                    card_url,
                )
            continue
        out[header.name] = value
    out.update(dict(supplied.values()))
    for name, value in out.items():
        if not _TOKEN.fullmatch(name):
            raise _error(f"{name!r} is not an HTTP header name", "header", card_url)
        if not value.isascii() or any(char in value for char in "\r\n\0"):
            raise _error(
                f"the value of the header {name!r} holds a line break, a NUL or a character that is not ASCII",
                "header",
                card_url,
            )
    return ResolvedRemote(
        transport="http" if remote.type == "streamable-http" else "sse", url=url, headers=out
    )


@attrs.frozen
class CardMismatch:
    """One way a card disagrees with its server. The server's word is the one to use.

    Attributes:
        field: What disagrees: ``"name"``, ``"version"``, ``"title"``,
            ``"description"``, ``"protocol_version"``, ``"tools"`` or
            ``"server_info"``.
        card: What the card says.
        server: What the server says.
        message: The disagreement in words.
    """

    field: str
    card: Any
    server: Any
    message: str


def compare_card(
    card: ServerCard,
    *,
    server_name: str | None,
    server_version: str | None,
    server_title: str | None = None,
    server_description: str | None = None,
    protocol_version: str | None = None,
    remote: Remote | None = None,
    tool_names: Sequence[str] | None = None,
) -> tuple[CardMismatch, ...]:
    """Every way ``card`` disagrees with what its server says once connected.

    The name matches when the server's is the card's whole name or the part
    after its slash (``weather`` for ``com.example/weather``); the version
    must be equal; title and description are compared when both sides give
    one; the negotiated protocol version must be among the remote's
    ``supportedProtocolVersions`` when it lists them; the tools, when the
    card lists some and ``tool_names`` is given, must be the same set.
    ``server_name`` `None` means the server described itself not at all.
    """
    found: list[CardMismatch] = []
    if server_name is None:
        found.append(CardMismatch("server_info", card.name, None, "the server does not say who it is"))
    else:
        if server_name not in (card.name, card.short_name):
            found.append(
                CardMismatch(
                    "name",
                    card.name,
                    server_name,
                    f"the card names {card.name!r}, the server {server_name!r}",
                )
            )
        if server_version != card.version:
            found.append(
                CardMismatch(
                    "version",
                    card.version,
                    server_version,
                    f"the card says version {card.version!r}, the server {server_version!r}",
                )
            )
    if card.title is not None and server_title is not None and card.title != server_title:
        found.append(
            CardMismatch(
                "title",
                card.title,
                server_title,
                f"the card's title {card.title!r}, the server's {server_title!r}",
            )
        )
    if server_description is not None and card.description != server_description:
        found.append(
            CardMismatch("description", card.description, server_description, "the descriptions differ")
        )
    declared = remote.supported_protocol_versions if remote is not None else None
    if declared is not None and protocol_version is not None and protocol_version not in declared:
        found.append(
            CardMismatch(
                "protocol_version",
                declared,
                protocol_version,
                f"the server speaks {protocol_version}, which the card's remote does not list "
                f"({', '.join(declared) or 'none'})",
            )
        )
    if card.tools is not None and tool_names is not None:
        listed, served = set(card.tools), set(tool_names)
        if listed != served:
            missing = sorted(listed - served)
            unlisted = sorted(served - listed)
            parts = []
            if missing:
                parts.append(f"not served: {', '.join(missing)}")
            if unlisted:
                parts.append(f"not on the card: {', '.join(unlisted)}")
            found.append(
                CardMismatch(
                    "tools",
                    tuple(sorted(listed)),
                    tuple(sorted(served)),
                    "the tools differ (" + "; ".join(parts) + ")",
                )
            )
    return tuple(found)
