"""Many servers at once: a supervised group, its restart policy, and one catalogue."""

from __future__ import annotations

from .._core.naming import exposed_name as exposed_name
from .._core.restart import RestartPolicy as RestartPolicy, RestartTracker as RestartTracker
from .._public import publish
from .connect import open_server as open_server
from .group import (
    ServerGroup as ServerGroup,
    connect_servers as connect_servers,
    open_servers as open_servers,
)
from .records import (
    Listed as Listed,
    ServerEvent as ServerEvent,
    ServerState as ServerState,
    ServerStatus as ServerStatus,
    UnknownName as UnknownName,
)

__all__ = [
    "Listed",
    "RestartPolicy",
    "RestartTracker",
    "ServerEvent",
    "ServerGroup",
    "ServerState",
    "ServerStatus",
    "UnknownName",
    "connect_servers",
    "exposed_name",
    "open_server",
    "open_servers",
]


publish(globals())
