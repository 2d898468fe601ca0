"""MCP Apps (``io.modelcontextprotocol/ui``), the host's side.

A server attaches an interactive HTML view to a tool: the tool's
``_meta.ui.resourceUri`` names a ``ui://`` resource served as
``text/html;profile=mcp-app``, which the host renders in a sandboxed frame.
This module gives a Trio host what it needs around that view:

* `apps_extension`: declare the extension (with the MIME types you render)
  in `trio_mcp.ClientOptions.extensions`; servers then list their UI tools;
* `tool_ui`: a tool's UI, typed (resource, visibility);
* `fetch_app`: a tool's app: its HTML, its metadata (the content's winning
  over the listing's), the Content-Security-Policy to serve it with (built
  from the declared domains only) and the frame's ``allow`` list;
* `model_tools`: the tools a model may be offered (app-only tools left out);
* `AppServer`: the server as a view may use it: tool calls refused for
  tools whose visibility lacks ``"app"`` or that are not this server's.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

from .._core.apps import (
    APP_MIME_TYPE,
    EXTENSION_ID,
    RESOURCE_URI_META_KEY,
    Csp,
    Permissions,
    ToolUi,
    UiResourceMeta,
    allow_attribute,
    app_callable,
    content_security_policy,
    is_app_mime_type,
    merge_ui_meta,
    model_visible,
    tool_ui as _tool_ui,
)
from .._core.extensions import Extension
from .._errors import AppCallRefused, RpcError, UIResourceError, UnknownName
from ..types import BlobResourceContents, ReadResourceResult, TextResourceContents, Tool
from ._bridge import AppBridge, AppServer, ViewChannel, open_app_bridge

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from .._client import Client

__all__ = [
    "APP_MIME_TYPE",
    "EXTENSION_ID",
    "RESOURCE_URI_META_KEY",
    "AppBridge",
    "AppCallRefused",
    "AppResource",
    "AppServer",
    "Csp",
    "Permissions",
    "ToolUi",
    "UIResourceError",
    "UiResourceMeta",
    "ViewChannel",
    "allow_attribute",
    "app_callable",
    "app_from_read",
    "apps_extension",
    "content_security_policy",
    "fetch_app",
    "model_tools",
    "model_visible",
    "open_app_bridge",
    "tool_ui",
]

JSON: TypeAlias = Any


def apps_extension(mime_types: Iterable[str] = (APP_MIME_TYPE,)) -> Extension:
    """The MCP Apps extension, declaring the MIME types you render.

    Give it to the client::

        options = trio_mcp.ClientOptions(extensions=[apps_extension()])

    It is declared as ``{"io.modelcontextprotocol/ui": {"mimeTypes": [...]}}``
    in ``initialize`` and on every 2026-07-28 request (``tools/list`` too,
    where servers decide whether to list their UI tools).

    Raises:
        TypeError, ValueError: ``mime_types`` is empty or holds something
            other than strings.
    """
    if isinstance(mime_types, str):
        raise TypeError("mime_types must be a collection of MIME types, not a single string")
    types: list[object] = list(dict.fromkeys(mime_types))
    if not types:
        raise ValueError("mime_types must name at least one MIME type")
    for item in types:
        if not isinstance(item, str) or not item:
            raise TypeError(f"mime_types holds non-empty strings, not {item!r}")
    return Extension(identifier=EXTENSION_ID, settings={"mimeTypes": types})


def tool_ui(tool: Tool) -> ToolUi | None:
    """A tool's UI (resource URI, visibility), or `None` when it has none.

    The nested ``_meta.ui.resourceUri`` wins over the deprecated flat
    ``_meta["ui/resourceUri"]`` key (`ToolUi.deprecated_key` says which).

    Raises:
        UIResourceError: The tool names a resource that is not a ``ui://`` URI.
    """
    return _tool_ui(tool.meta)


@attrs.frozen
class AppResource:
    """A tool's app, ready to render.

    Serve `html` with `csp` as its Content-Security-Policy (a header, or the
    ``csp`` attribute of the frame, or both) in a sandboxed frame whose
    ``allow`` attribute is `allow`.

    Attributes:
        uri: The ``ui://`` resource.
        html: The HTML document.
        mime_type: Its MIME type, as the server gave it.
        meta: The resource's ``_meta.ui``, typed: the content's members
            win over the listing's.
        csp: The Content-Security-Policy: the restrictive default plus the
            declared origins, nothing else.
        allow: The frame's ``allow`` attribute (``""`` when no permission
            was asked for).
        refused_sources: Declared CSP sources left out for not being plain
            origins (a bare ``*``, a scheme alone, a keyword): worth a log
            line.
        tool: The tool whose app this is.
    """

    uri: str
    html: str
    mime_type: str
    meta: UiResourceMeta
    csp: str
    allow: str
    refused_sources: tuple[str, ...]
    tool: Tool | None = None


async def _find_tool(client: Client, name: str) -> Tool:
    for tool in await client.list_tools():
        if tool.name == name:
            return tool
    raise UnknownName(f"{client.name} lists no tool named {name!r}", name=name, kind="tool")


async def _listing_meta(client: Client, uri: str) -> tuple[Mapping[str, JSON] | None, str | None]:
    """The ``_meta`` and MIME type of ``uri`` in the server's resource listing (servers may leave UI resources out)."""
    if client.server_capabilities.resources is None:
        return None, None
    try:
        async for resource in client.iter_resources():
            if resource.uri == uri:
                return resource.meta, resource.mime_type
    except RpcError:
        pass
    return None, None


def _html_of(content: TextResourceContents | BlobResourceContents, uri: str) -> str:
    if isinstance(content, TextResourceContents):
        return content.text
    try:
        return base64.b64decode(content.blob, validate=True).decode("utf-8")
    except (binascii.Error, ValueError) as exc:
        raise UIResourceError(
            f"the UI resource {uri} is a blob that is not base64 UTF-8 HTML: {exc}", uri=uri
        ) from exc


def app_from_read(
    uri: str,
    result: ReadResourceResult,
    *,
    listing_meta: Mapping[str, JSON] | None = None,
    listing_mime_type: str | None = None,
    tool: Tool | None = None,
) -> AppResource:
    """An `AppResource` from a ``resources/read`` result of ``uri`` (and its listing, when known).

    Raises:
        UIResourceError: ``uri`` is not a ``ui://`` URI, the result has no
            content, or its MIME type is not ``text/html;profile=mcp-app``.
    """
    if not uri.startswith("ui://"):
        raise UIResourceError(f"{uri!r} is not a ui:// URI: only ui:// resources are apps", uri=uri)
    contents = list(result.contents)
    if not contents:
        raise UIResourceError(f"reading the UI resource {uri} returned no content", uri=uri)
    content = next((item for item in contents if item.uri == uri), contents[0])
    mime_type = content.mime_type if content.mime_type is not None else listing_mime_type
    if not is_app_mime_type(mime_type):
        raise UIResourceError(
            f"the UI resource {uri} is {mime_type!r}, not {APP_MIME_TYPE!r}: it is not rendered", uri=uri
        )
    assert mime_type is not None
    html = _html_of(content, uri)
    meta = UiResourceMeta.from_ui(merge_ui_meta(listing_meta, content.meta))
    policy, refused = content_security_policy(meta.csp)
    return AppResource(uri, html, mime_type, meta, policy, allow_attribute(meta.permissions), refused, tool)


async def fetch_app(client: Client, tool: Tool | str) -> AppResource:
    """Fetch the app of a tool (a `trio_mcp.types.Tool`, or its name) from its server.

    Reads the tool's ``ui://`` resource (``resources/read``), and its entry
    in the server's resource listing when there is one, for the metadata
    the content does not give.

    Raises:
        UIResourceError: The tool has no UI, names a resource that is not
            ``ui://``, or the resource is not ``text/html;profile=mcp-app``
            HTML.
        UnknownName: The server lists no tool by that name.
        RpcError: The server could not read the resource.
    """
    found = tool if isinstance(tool, Tool) else await _find_tool(client, tool)
    ui = _tool_ui(found.meta)
    if ui is None:
        raise UIResourceError(f"the tool {found.name!r} of {client.name} has no UI resource")
    result = await client.read_resource(ui.resource_uri)
    listing_meta, listing_mime = await _listing_meta(client, ui.resource_uri)
    return app_from_read(
        ui.resource_uri, result, listing_meta=listing_meta, listing_mime_type=listing_mime, tool=found
    )


async def model_tools(client: Client) -> list[Tool]:
    """The tools a model may be offered: every tool but those for views alone.

    A tool whose ``_meta.ui.visibility`` lacks ``"model"`` (``["app"]``) is
    left out, as the MCP Apps specification requires of what a model sees.
    `trio_mcp.ServerGroup.tools` (the group's catalogue) leaves them out too.
    """
    return [tool for tool in await client.list_tools() if model_visible(tool.meta)]


for _name in (
    "AppBridge",
    "ViewChannel",
    "open_app_bridge",
    "AppResource",
    "AppServer",
    "Csp",
    "Permissions",
    "ToolUi",
    "UiResourceMeta",
    "allow_attribute",
    "app_callable",
    "app_from_read",
    "apps_extension",
    "content_security_policy",
    "fetch_app",
    "model_tools",
    "model_visible",
    "tool_ui",
):
    globals()[_name].__module__ = __name__
del _name
