"""MCP Apps (``io.modelcontextprotocol/ui``), the host's rules: no I/O.

What a host reads from a server and decides without waiting:

* a tool's ``_meta.ui`` (`ToolUi`): the ``ui://`` resource that renders it
  (the deprecated flat ``_meta["ui/resourceUri"]`` key too) and its
  visibility: ``"model"`` (the model may choose it), ``"app"`` (a view of
  the same server may call it), both by default;
* a UI resource's ``_meta.ui`` (`UiResourceMeta`): the domains its
  Content-Security-Policy may name, the permissions it asks for, a dedicated
  domain, a border preference; the content's values win over the listing's
  (`merge_ui_meta`);
* the Content-Security-Policy (`content_security_policy`), built from the
  declared domains only, restrictive by default and never loosened: a
  declared source that is not a plain ``scheme://host`` origin (a bare
  ``*``, a scheme alone, a keyword, anything that could end the directive)
  is refused and reported, never copied; and the iframe's ``allow`` list
  (`allow_attribute`).

The rules follow the MCP Apps specification (SEP-1865, stable revision
2026-01-26).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

import attrs

from .._errors import UIResourceError

__all__ = [
    "APP_MIME_TYPE",
    "EXTENSION_ID",
    "RESOURCE_URI_META_KEY",
    "Csp",
    "Permissions",
    "ToolUi",
    "UiResourceMeta",
    "allow_attribute",
    "app_callable",
    "content_security_policy",
    "is_app_mime_type",
    "merge_ui_meta",
    "model_visible",
    "tool_ui",
    "visibility",
]

JSON: TypeAlias = Any

#: The extension's identifier.
EXTENSION_ID: Final = "io.modelcontextprotocol/ui"
#: The MIME type of an HTML app, the only one the specification defines.
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
#: The deprecated flat ``_meta`` key of a tool's UI resource.
RESOURCE_URI_META_KEY: Final = "ui/resourceUri"
#: The visibility of a tool that says nothing.
DEFAULT_VISIBILITY: Final = ("model", "app")


# ------------------------------------------------------------------ tools


def visibility(meta: Mapping[str, JSON] | None) -> tuple[str, ...]:
    """A tool's visibility, from its ``_meta``: ``("model", "app")`` when it says nothing.

    Unknown entries are kept (a later revision may add some); a value that
    is not a list of strings counts as saying nothing.
    """
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    value = ui.get("visibility") if isinstance(ui, Mapping) else None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return DEFAULT_VISIBILITY
    return tuple(value)


def model_visible(meta: Mapping[str, JSON] | None) -> bool:
    """Whether a model may be offered the tool: its visibility includes ``"model"``."""
    return "model" in visibility(meta)


def app_callable(meta: Mapping[str, JSON] | None) -> bool:
    """Whether a view of the tool's own server may call it: its visibility includes ``"app"``."""
    return "app" in visibility(meta)


@attrs.frozen
class ToolUi:
    """A tool's ``_meta.ui``, typed.

    Attributes:
        resource_uri: The ``ui://`` resource that renders the tool's results.
        visibility: Who may use the tool: ``"model"``, ``"app"``, or both.
        deprecated_key: The URI came from the deprecated flat
            ``_meta["ui/resourceUri"]`` key.
    """

    resource_uri: str
    visibility: tuple[str, ...] = DEFAULT_VISIBILITY
    deprecated_key: bool = False

    @property
    def model_visible(self) -> bool:
        """Whether a model may be offered the tool."""
        return "model" in self.visibility

    @property
    def app_callable(self) -> bool:
        """Whether a view of the same server may call the tool."""
        return "app" in self.visibility

    @property
    def app_only(self) -> bool:
        """Whether the tool is for views alone, hidden from the model."""
        return not self.model_visible and self.app_callable


def tool_ui(meta: Mapping[str, JSON] | None) -> ToolUi | None:
    """The UI of a tool, from its ``_meta``, or `None` when it has none.

    The nested ``_meta.ui.resourceUri`` wins over the deprecated flat
    ``_meta["ui/resourceUri"]``.

    Raises:
        UIResourceError: The tool names a resource that is not a ``ui://`` URI.
    """
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, Mapping) else None
    deprecated = False
    if uri is None:
        uri = meta.get(RESOURCE_URI_META_KEY)
        deprecated = uri is not None
    if uri is None:
        return None
    if not isinstance(uri, str) or not uri.startswith("ui://"):
        raise UIResourceError(f"the tool's UI resource {uri!r} is not a ui:// URI", uri=str(uri))
    return ToolUi(uri, visibility(meta), deprecated)


# -------------------------------------------------------------- resources


@attrs.frozen
class Csp:
    """The origins a UI resource declares, by use (``_meta.ui.csp``)."""

    connect_domains: tuple[str, ...] = ()
    """Origins for fetch, XHR and WebSocket (``connect-src``)."""
    resource_domains: tuple[str, ...] = ()
    """Origins for scripts, styles, images, fonts and media."""
    frame_domains: tuple[str, ...] = ()
    """Origins of nested frames (``frame-src``)."""
    base_uri_domains: tuple[str, ...] = ()
    """Origins allowed as the document's base URI (``base-uri``)."""


@attrs.frozen
class Permissions:
    """The browser permissions a UI resource asks for (``_meta.ui.permissions``)."""

    camera: bool = False
    microphone: bool = False
    geolocation: bool = False
    clipboard_write: bool = False


@attrs.frozen
class UiResourceMeta:
    """A UI resource's ``_meta.ui``, typed.

    Attributes:
        csp: The declared origins, or `None` when it declares none (the
            restrictive default policy then applies).
        permissions: The permissions asked for, or `None`.
        domain: The dedicated origin asked for (its format is the host's
            to define), or `None`.
        prefers_border: ``True``/``False`` for a visible border and
            background or none; `None` leaves it to the host.
        problems: What was malformed and left out, one sentence each.
    """

    csp: Csp | None = None
    permissions: Permissions | None = None
    domain: str | None = None
    prefers_border: bool | None = None
    problems: tuple[str, ...] = ()

    @classmethod
    def from_ui(cls, ui: Mapping[str, JSON] | None) -> UiResourceMeta:
        """Read a ``_meta.ui`` object; malformed members are left out and named in `problems`."""
        if not isinstance(ui, Mapping):
            return cls()
        problems: list[str] = []
        csp = None
        raw_csp = ui.get("csp")
        if isinstance(raw_csp, Mapping):
            lists = {}
            for wire, field in _CSP_FIELDS.items():
                value = raw_csp.get(wire)
                if value is None:
                    lists[field] = ()
                elif isinstance(value, list) and all(isinstance(item, str) for item in value):
                    lists[field] = tuple(value)
                else:
                    problems.append(f"csp.{wire} is not a list of strings")
                    lists[field] = ()
            csp = Csp(**lists)
        elif raw_csp is not None:
            problems.append("csp is not an object")
        permissions = None
        raw_permissions = ui.get("permissions")
        if isinstance(raw_permissions, Mapping):
            permissions = Permissions(
                **{
                    field: isinstance(raw_permissions.get(wire), Mapping)
                    for wire, field in _PERMISSIONS.items()
                }
            )
        elif raw_permissions is not None:
            problems.append("permissions is not an object")
        domain = ui.get("domain")
        if domain is not None and not isinstance(domain, str):
            problems.append("domain is not a string")
            domain = None
        border = ui.get("prefersBorder")
        if border is not None and not isinstance(border, bool):
            problems.append("prefersBorder is not a boolean")
            border = None
        return cls(csp, permissions, domain, border, tuple(problems))


_CSP_FIELDS: Final = {
    "connectDomains": "connect_domains",
    "resourceDomains": "resource_domains",
    "frameDomains": "frame_domains",
    "baseUriDomains": "base_uri_domains",
}
_PERMISSIONS: Final = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard_write",
}


def merge_ui_meta(listing: Mapping[str, JSON] | None, content: Mapping[str, JSON] | None) -> dict[str, JSON]:
    """One ``_meta.ui`` object from the listing's and the content's: each member the content has wins.

    Args:
        listing: The ``_meta`` of the resource in ``resources/list``, or `None`.
        content: The ``_meta`` of the content ``resources/read`` returned, or `None`.
    """
    merged: dict[str, JSON] = {}
    for meta in (listing, content):
        ui = meta.get("ui") if isinstance(meta, Mapping) else None
        if isinstance(ui, Mapping):
            merged.update(ui)
    return merged


def is_app_mime_type(mime_type: object) -> bool:
    """Whether a MIME type is ``text/html;profile=mcp-app`` (case and spaces around ``;`` aside)."""
    if not isinstance(mime_type, str):
        return False
    parts = [part.strip() for part in mime_type.lower().split(";")]
    return parts == ["text/html", "profile=mcp-app"] or parts == ["text/html", 'profile="mcp-app"']


# ---------------------------------------------------------------- the CSP

# An origin and nothing else: scheme, host (its first label may be "*"), an
# optional port and path; nothing that could end a directive or name a
# keyword, a bare scheme or every host.
_SOURCE: Final = re.compile(
    r"(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::(?:[0-9]{1,5}|\*))?(?:/[A-Za-z0-9._~%!$&()*+=:@/-]*)?"
)


def safe_source(source: str) -> bool:
    """Whether a declared origin may go into a policy as it is (a plain ``scheme://host[:port][/path]``)."""
    return bool(_SOURCE.fullmatch(source))


#: The restrictive policy of a resource that declares no domains (the specification's default,
#: with the directives it names elsewhere: no frames, no plugins, base URI of its own).
DEFAULT_POLICY: Final = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline';"
    " img-src 'self' data:; font-src 'self'; media-src 'self' data:; connect-src 'none';"
    " frame-src 'none'; object-src 'none'; base-uri 'self'"
)


def content_security_policy(csp: Csp | None) -> tuple[str, tuple[str, ...]]:
    """The Content-Security-Policy of a view, and the declared sources refused.

    Only the declared origins are added to the restrictive default: static
    resources to ``script-src``, ``style-src``, ``img-src``, ``font-src`` and
    ``media-src``; connections to ``connect-src`` (else ``'none'``); nested
    frames to ``frame-src`` (else ``'none'``); base URIs to ``base-uri``
    (else ``'self'``). ``default-src`` and ``object-src`` stay ``'none'``.
    A source that is not a plain origin is left out and returned in the
    second item (log it: the specification asks hosts to keep an audit trail).
    """
    if csp is None:
        return DEFAULT_POLICY, ()
    refused: list[str] = []

    def kept(sources: tuple[str, ...]) -> list[str]:
        out = []
        for source in sources:
            if safe_source(source):
                if source not in out:
                    out.append(source)
            elif source not in refused:
                refused.append(source)
        return out

    resources = kept(csp.resource_domains)
    connect = kept(csp.connect_domains)
    frames = kept(csp.frame_domains)
    bases = kept(csp.base_uri_domains)

    def directive(name: str, base: list[str], extra: list[str], empty: str | None = None) -> str:
        values = base + extra
        if not values and empty is not None:
            values = [empty]
        return " ".join([name, *values])

    policy = "; ".join(
        [
            "default-src 'none'",
            directive("script-src", ["'self'", "'unsafe-inline'"], resources),
            directive("style-src", ["'self'", "'unsafe-inline'"], resources),
            directive("img-src", ["'self'", "data:"], resources),
            directive("font-src", ["'self'"], resources),
            directive("media-src", ["'self'", "data:"], resources),
            directive("connect-src", [], connect, "'none'"),
            directive("frame-src", [], frames, "'none'"),
            "object-src 'none'",
            directive("base-uri", [], bases, "'self'"),
        ]
    )
    return policy, tuple(refused)


def allow_attribute(permissions: Permissions | None) -> str:
    """The iframe's ``allow`` attribute for the permissions asked for (``""`` for none)."""
    if permissions is None:
        return ""
    granted = [
        feature
        for feature, wanted in (
            ("camera", permissions.camera),
            ("microphone", permissions.microphone),
            ("geolocation", permissions.geolocation),
            ("clipboard-write", permissions.clipboard_write),
        )
        if wanted
    ]
    return "; ".join(granted)
