"""A group's one catalogue: every server's tools, prompts and resources, named group-wide, and routing by name.

The supervisor hands each listing of a server to `Catalogue.publish`; the
catalogue keeps what the server's entry allows, names every item
(``SERVER__ITEM``, `trio_mcp._core.naming`), and remembers each name's
server and item, so that a call by name finds its server, even while that
server restarts.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from .._core.apps import model_visible
from .._core.naming import assign_names, exposed_name
from .records import Listed, ServerEvent, UnknownName

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .._models import Prompt, Resource, ResourceTemplate, Tool
    from .members import Listing, Member

__all__ = ["Catalogue"]

_logger = logging.getLogger("trio_mcp.group")

_Item = TypeVar("_Item", "Resource", "ResourceTemplate")


class Catalogue:
    """The names of every server's tools and prompts, and the way back from a name to its server.

    Args:
        members: Every server of the group, in the configuration's order.
        emit: Announces an event (a server's catalogue changed).
    """

    def __init__(self, members: Iterable[Member], emit: Callable[[ServerEvent], None]) -> None:
        self._members = sorted(members, key=lambda member: member.index)
        self._emit = emit
        self._tool_routes: dict[str, tuple[str, str]] = {}
        self._prompt_routes: dict[str, tuple[str, str]] = {}

    # -------------------------------------------------------------- listings

    def publish(self, member: Member, listing: Listing, *, announce: bool) -> None:
        """Take a server's new listing: filter it, name it; ``announce`` it as an event."""
        spec = member.spec
        # Tools for MCP Apps views alone (visibility without "model") are
        # never offered where a model chooses tools.
        listing.tools = _unique(
            member, [t for t in listing.tools if spec.allows_tool(t.name) and model_visible(t.meta)]
        )
        listing.prompts = _unique(member, listing.prompts)
        member.listing = listing
        self._name_all()
        if announce:
            self._emit(
                ServerEvent(
                    member.name,
                    member.state,
                    member.state,
                    trio.current_time(),
                    restarts=member.tracker.restarts,
                    catalogue=True,
                )
            )

    def _name_all(self) -> None:
        """Name every server's tools and prompts again: no two (server, item) pairs share a name.

        Names follow the configuration's order, so that in the (32-bit hash)
        event of two names meeting, the earlier server keeps its name,
        whichever listed first; every other name depends on its pair alone.
        A server's last listing stays named while it restarts.
        """
        members = self._members
        tools = assign_names((m.name, tool.name) for m in members for tool in m.listing.tools)
        prompts = assign_names((m.name, prompt.name) for m in members for prompt in m.listing.prompts)
        for member in members:
            member.tools = [Listed(tools[member.name, t.name], member.name, t) for t in member.listing.tools]
            member.prompts = [
                Listed(prompts[member.name, p.name], member.name, p) for p in member.listing.prompts
            ]
        # Names once listed stay known (a call then says the tool is gone).
        self._tool_routes.update({name: pair for pair, name in tools.items()})
        self._prompt_routes.update({name: pair for pair, name in prompts.items()})

    # ---------------------------------------------------------- what is shown

    @staticmethod
    def tools(ready: Iterable[Member]) -> list[Listed[Tool]]:
        """The tools of the ``ready`` servers, in their order."""
        return [entry for member in ready for entry in member.tools]

    @staticmethod
    def prompts(ready: Iterable[Member]) -> list[Listed[Prompt]]:
        """The prompts of the ``ready`` servers, in their order."""
        return [entry for member in ready for entry in member.prompts]

    @staticmethod
    def resources(ready: Iterable[Member]) -> list[Listed[Resource]]:
        """The resources of the ``ready`` servers, in their order."""
        return [_exposed(member, item) for member in ready for item in member.listing.resources]

    @staticmethod
    def templates(ready: Iterable[Member]) -> list[Listed[ResourceTemplate]]:
        """The resource templates of the ``ready`` servers, in their order."""
        return [_exposed(member, item) for member in ready for item in member.listing.templates]

    # --------------------------------------------------------------- routing

    def tool_route(self, name: str) -> tuple[str, str]:
        """The server and the server's own name of a tool's group-wide name.

        Raises:
            UnknownName: No tool was ever listed under that name.
        """
        return _route(self._tool_routes, name, "tool")

    @staticmethod
    def check_offered(member: Member, tool: str, name: str) -> None:
        """Refuse a tool its server no longer lists (or its entry leaves out).

        Raises:
            UnknownName: The server's last listing has no such tool.
        """
        if tool not in {entry.item.name for entry in member.tools}:
            raise UnknownName(
                f"server {member.name!r} no longer offers the tool {tool!r}", name=name, kind="tool"
            )

    def prompt_route(self, name: str) -> tuple[str, str]:
        """The server and the server's own name of a prompt's group-wide name.

        Raises:
            UnknownName: No prompt was ever listed under that name.
        """
        return _route(self._prompt_routes, name, "prompt")


def _exposed(member: Member, item: _Item) -> Listed[_Item]:
    """A resource or template of a server, under a group-wide name (reading one goes by server and URI)."""
    return Listed(exposed_name(member.name, item.name), member.name, item)


def _route(routes: dict[str, tuple[str, str]], name: str, kind: str) -> tuple[str, str]:
    route = routes.get(name)
    if route is None:
        raise UnknownName(f"the group has no {kind} named {name!r}", name=name, kind=kind)
    return route


def _unique(member: Member, items: list[Any]) -> list[Any]:
    """The items of one listing, each name once (the first one is kept)."""
    seen: set[str] = set()
    kept: list[Any] = []
    for item in items:
        if item.name in seen:
            _logger.warning("server %r lists %r twice; the first one is kept", member.name, item.name)
            continue
        seen.add(item.name)
        kept.append(item)
    return kept
