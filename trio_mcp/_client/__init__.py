"""The MCP client over a session: typed methods, the handshake, input, notifications."""

from .client import Client as Client
from .handshake import ServerDiedOnProbe as ServerDiedOnProbe
from .listen import Subscription as Subscription
from .notes import ProgressCallback as ProgressCallback
from .pages import Pages as Pages

__all__ = ["Client", "Pages", "ProgressCallback", "ServerDiedOnProbe", "Subscription"]
