"""Where each public name is defined, and how its objects come to say ``trio_mcp.X``.

As in trio, the objects of the public surface live in private modules and
report the public one as theirs (``trio_mcp.Client``, ``trio_mcp.types.Tool``):
tracebacks, reprs, pickles and the docs show the name a user imports. Trio
does it once at ``import trio`` (``trio._util.fixup_module_metadata``); here
most of the package is imported on first use, so each module that defines
public names ends with ``publish(globals())``, and the names say where they
belong from the moment they exist, whatever was imported first.

This module imports nothing, so that any module may use it, the pure core
included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ROOT", "TYPES", "fixup_module_metadata", "publish"]

#: The names ``trio_mcp`` imports on first use, each with the module (under
#: ``trio_mcp``) that defines it or a package holding it. The exceptions
#: (``trio_mcp._errors``) are imported with the package.
ROOT: Final[Mapping[str, str]] = {
    "Client": "_client",
    "Pages": "_client",
    "Subscription": "_client",
    "ToolTask": "_client",
    "Listed": "_group",
    "RestartPolicy": "_group",
    "ServerEvent": "_group",
    "ServerGroup": "_group",
    "ServerStatus": "_group",
    "connect_servers": "_group",
    "open_server": "_group",
    "open_servers": "_group",
    "connect_client": "_open",
    "connect_session": "_open",
    "open_client": "_open",
    "open_http_client": "_open",
    "open_session": "_open",
    "open_stdio_client": "_open",
    "ClientOptions": "_options",
    "SessionOptions": "_options",
    "HTTPTarget": "_targets",
    "ProcessTarget": "_targets",
    "StreamTarget": "_targets",
    "Target": "_targets",
    "ConfigSource": "_config",
    "DiscoveredConfig": "_config",
    "LoadedConfig": "_config",
    "ServerSpec": "_config",
    "discover_configs": "_config",
    "load_config": "_config",
    "parse_config": "_config",
    "NotificationStream": "_session",
    "RequestTimeout": "_session",
    "Session": "_session",
    "SessionStatistics": "_session",
    "Task": "_core.tasks",
    "TaskRef": "_core.tasks",
}

#: The names of ``trio_mcp.types``, all defined in ``trio_mcp._models.types``.
TYPES: Final = frozenset(
    {
        "Annotations", "AudioContent", "BlobResourceContents", "CallToolResult", "CompleteResult",
        "Completion", "ContentBlock", "CreateMessageParams", "CreateMessageResult", "DiscoverResult",
        "ElicitFormParams", "ElicitRequestParams", "ElicitResult", "ElicitUrlParams", "EmbeddedResource",
        "GetPromptResult", "Icon", "ImageContent", "Implementation", "InitializeResult", "InputRequest",
        "InputRequiredResult", "ListPromptsResult", "ListResourcesResult", "ListResourceTemplatesResult",
        "ListRootsResult", "ListToolsResult", "ModelHint", "ModelPreferences", "Prompt", "PromptArgument",
        "PromptMessage", "ReadResourceResult", "Resource", "ResourceLink", "ResourceTemplate", "Root",
        "SamplingMessage", "ServerCapabilities", "TextContent", "TextResourceContents", "Tool",
        "ToolAnnotations", "ToolChoice", "ToolResultContent", "ToolUseContent", "UnknownContent",
    }
)  # fmt: skip

_PACKAGE: Final = "trio_mcp"


def _homes(name: str) -> tuple[str, str] | None:
    """``(public module, home)`` of a public name, or `None` for any other name."""
    if name in TYPES:
        return f"{_PACKAGE}.types", f"{_PACKAGE}._models.types"
    home = ROOT.get(name)
    return None if home is None else (_PACKAGE, f"{_PACKAGE}.{home}")


def publish(namespace: Mapping[str, object]) -> None:
    """Give the public objects in ``namespace`` their public module; call it with ``globals()``.

    Only a name of the public surface is touched, and only if its object is
    defined in its home (the module the tables above name, or one inside
    that package) or ``namespace`` is its home's own (a package that
    re-exports it, as ``_group`` does `RestartPolicy`): a private object that
    shares a public name keeps its module. Calling it again, from another
    module holding the same objects, changes nothing.
    """
    here = namespace.get("__name__")
    for name, obj in namespace.items():
        homes = _homes(name)
        module = getattr(obj, "__module__", None)
        if homes is None or not isinstance(module, str):
            continue
        public, home = homes
        if here == home or module == home or module.startswith(home + "."):
            fixup_module_metadata(public, {name: obj})


def fixup_module_metadata(module_name: str, namespace: Mapping[str, object]) -> None:
    """Say ``module_name`` in the ``__module__`` of each object of the package in ``namespace``.

    As ``trio._util.fixup_module_metadata``: the classes' own methods and
    nested classes too, so that they read as members of the public class.
    """
    seen: set[int] = set()

    def fix(obj: object, qualname: str) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        module = getattr(obj, "__module__", None)
        if not isinstance(module, str) or not module.startswith(_PACKAGE + "."):
            return
        obj.__module__ = module_name
        if isinstance(obj, type):
            for member in vars(obj).values():
                # Only what the class itself defines: not an object it merely refers to.
                if getattr(member, "__qualname__", "").startswith(qualname + "."):
                    fix(member, member.__qualname__)

    for name, obj in namespace.items():
        if not name.startswith("_"):
            fix(obj, getattr(obj, "__qualname__", name))
