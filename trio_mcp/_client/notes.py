"""Who gets which notification, at the client level.

Three rules, short enough to remember:

1. A notification that names one of your calls (the progress token the
   client gave it) goes to that call's ``on_progress`` (or, without one, its
   ``on_notification``).
2. A notification of a ``listen`` stream (its subscription id) goes to that
   `Subscription`.
3. Everything else (log messages, list changes, resource updates, unknown
   methods) goes to the client's ``on_notification``, after the cache has
   seen it. Without one, log messages go to the ``trio_mcp.server`` logger.

The session underneath has routing rules of its own (a lone request in
flight gets what names nothing); the per-call callbacks made here send what
does not name their call on to rule 3, so that a call's callback never
becomes connection-wide and connection-wide notifications never depend on
what else is in flight.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeAlias

from .._session import call_maybe_async

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .._options import NotificationCallback

__all__ = ["NotificationRouter", "ProgressCallback"]

JSON: TypeAlias = Any

ProgressCallback: TypeAlias = "Callable[[float, float | None, str | None], object]"
"""``(progress, total, message)`` for each progress notification of a call; may be sync or async."""

_server_logger = logging.getLogger("trio_mcp.server")


class NotificationRouter:
    """Routes the notifications a client receives (see the module's rules).

    Args:
        on_notification: The client-wide callback, or `None`.
        invalidate: Told of every such notification first, to drop what it
            says has changed (the client's cache and output schemas), or `None`.
        log: Where an exception of ``on_notification`` is reported (it is
            otherwise ignored, wherever the notification was routed from).
    """

    def __init__(
        self,
        on_notification: NotificationCallback | None,
        invalidate: Callable[[dict[str, JSON]], None] | None,
        log: Callable[[str], object],
        bindings: Mapping[str, Callable[[dict[str, JSON]], object]] | None = None,
    ) -> None:
        self.on_notification = on_notification
        self.invalidate = invalidate
        self.log = log
        self.bindings = dict(bindings) if bindings else {}
        """The extensions' observers, by method: they take those notifications instead of ``on_notification``."""

    async def connection_note(self, note: dict[str, JSON]) -> None:
        """Rule 3: a notification that names no call of ours."""
        if self.invalidate is not None:
            self.invalidate(note)
        if self.bindings:
            method = note.get("method")
            bound = self.bindings.get(method) if isinstance(method, str) else None
            if bound is not None:
                params = note.get("params")
                try:
                    await call_maybe_async(bound, params if isinstance(params, dict) else {})
                except Exception as exc:
                    self.log(f"the extension's handler of {method!r} raised {exc!r}")
                return
        if self.on_notification is not None:
            await call_maybe_async(self.on_notification, note)
        elif note.get("method") == "notifications/message":
            _server_logger.debug("server log: %s", note.get("params"))

    def for_call(
        self,
        token: int | None,
        on_progress: Callable[[float, float | None, str | None], object] | None,
        on_notification: NotificationCallback | None,
    ) -> NotificationCallback | None:
        """The session-level callback of one call that gave ``token`` as its progress token.

        `None` when the call has neither callback (the session then keeps
        its notifications for the connection-wide sink).
        """
        if on_progress is None and on_notification is None:
            return None

        async def deliver(note: dict[str, JSON]) -> None:
            params = note.get("params")
            if (
                note.get("method") == "notifications/progress"
                and isinstance(params, dict)
                and params.get("progressToken") == token
            ):
                if on_progress is not None:
                    progress = params.get("progress")
                    total = params.get("total")
                    message = params.get("message")
                    await call_maybe_async(
                        on_progress,
                        progress if isinstance(progress, int | float) else 0.0,
                        total if isinstance(total, int | float) else None,
                        message if isinstance(message, str) else None,
                    )
                else:
                    assert on_notification is not None
                    await call_maybe_async(on_notification, note)
                return
            # It names no call of ours: it only reached this call for being
            # alone in flight. The client's callback failing is no failure
            # of this call: report it, as the session's sink task does.
            try:
                await self.connection_note(note)
            except Exception as exc:
                self.log(f"the client's notification handler raised {exc!r} for {note.get('method')!r}")

        return deliver
