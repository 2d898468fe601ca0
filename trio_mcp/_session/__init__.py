"""The session: one JSON-RPC connection over a channel, and what delivers its messages.

* `session`: `Session`, the Trio loop over the pure JSON-RPC connection
  (`trio_mcp._core.jsonrpc`): correlation, deadlines, cancellation, closing.
* `delivery`: where answers and notifications wait for the task that takes
  them (a mailbox per request, the connection-wide sink, `NotificationStream`).
* `server_requests`: the server's own requests, each in a task, bounded, and
  cancelled as the session closes.

The rest of the package imports these names from here.
"""

from __future__ import annotations

from .._public import publish
from .delivery import NotificationStream, call_maybe_async
from .session import (
    Attachment,
    Observer,
    RequestTimeout,
    Session,
    SessionStatistics,
    attach,
    new_session,
    next_request_id,
    observer_of,
    report,
    start_in,
    start_soon,
    stop_serving_requests,
    stray_lines_hint,
)

__all__ = [
    "Attachment",
    "NotificationStream",
    "Observer",
    "RequestTimeout",
    "Session",
    "SessionStatistics",
    "attach",
    "call_maybe_async",
    "new_session",
    "next_request_id",
    "observer_of",
    "report",
    "start_in",
    "start_soon",
    "stop_serving_requests",
    "stray_lines_hint",
]


publish(globals())
