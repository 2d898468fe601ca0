"""The MCP client over a session: typed methods, the handshake, input, notifications."""

from .._public import publish
from .client import (
    Client as Client,
    handshake as handshake,
    make_client as make_client,
    release as release,
    start_beside as start_beside,
)
from .handshake import ServerDiedOnProbe as ServerDiedOnProbe
from .listen import Subscription as Subscription
from .notes import ProgressCallback as ProgressCallback
from .pages import Pages as Pages
from .tasks import ToolTask as ToolTask

__all__ = [
    "Client",
    "Pages",
    "ProgressCallback",
    "ServerDiedOnProbe",
    "Subscription",
    "ToolTask",
    "handshake",
    "make_client",
    "release",
    "start_beside",
]


publish(globals())
