"""``subscriptions/listen``: the change notifications of the 2026-07-28 era, as a stream."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import trio

from .._core.jsonrpc import SUBSCRIPTION_ID
from .._errors import MCPError, RpcError
from .._session import NotificationStream, RequestTimeout, call_maybe_async, report, start_soon

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._options import NotificationCallback
    from .._session import Session

__all__ = ["Subscription", "open_legacy_subscription", "open_subscription", "subscription_filter"]

JSON: TypeAlias = Any

#: Sends the listen request: ``(params, callback)``; returns its final result.
SendListen: TypeAlias = Callable[[dict[str, JSON], "NotificationCallback"], Awaitable[dict[str, JSON]]]


class Subscription(NotificationStream):
    """The notifications of one ``subscriptions/listen`` stream (2026-07-28).

    Made by `Client.listen`. Iterate over it with ``async for`` to get each
    notification (a dict, as the server sent it). Iteration ends when the
    server ends the stream, and raises the connection's error (for example
    `ServerGone`) when the connection is lost.

    Attributes:
        acknowledged: The filter the server agreed to honour (the
            ``notifications`` of its ``notifications/subscriptions/acknowledged``),
            which may be narrower than the one asked for.
        dropped: How many notifications were dropped because the consumer
            fell more than ``buffer`` notifications behind.
    """

    def __init__(self, buffer: int) -> None:
        super().__init__(buffer)
        self.acknowledged: dict[str, JSON] = {}
        self._acknowledged_by_server = False
        self._acked = trio.Event()
        self._finished = trio.Event()
        self._scope = trio.CancelScope()

    def end(self, error: MCPError | None) -> None:
        super().end(error)
        self._acked.set()


def subscription_filter(
    tools: bool, prompts: bool, resources: bool, resource_uris: Sequence[str]
) -> dict[str, JSON]:
    """What a ``listen`` block asks for, as the filter of ``subscriptions/listen`` (both eras use it).

    Raises:
        TypeError: ``resource_uris`` is a single string.
    """
    wanted: dict[str, JSON] = {}
    if tools:
        wanted["toolsListChanged"] = True
    if prompts:
        wanted["promptsListChanged"] = True
    if resources:
        wanted["resourcesListChanged"] = True
    if resource_uris:
        if isinstance(resource_uris, str):
            raise TypeError("resource_uris must be a sequence of URIs, not a single string")
        wanted["resourceSubscriptions"] = list(resource_uris)
    return wanted


@asynccontextmanager
async def open_subscription(
    session: Session,
    send: SendListen,
    wanted: dict[str, JSON],
    buffer: int,
    elsewhere: NotificationCallback,
) -> AsyncIterator[Subscription]:
    """Open a listen stream on ``session``; the block owns it.

    Entering waits for the server's acknowledgement (bound it with a cancel
    scope of your own; the client's ``request_timeout``, when set, applies
    too). Leaving withdraws the listen request, whatever ends the block.

    Args:
        session: The connection (the listen request runs in its nursery).
        send: Sends the listen request with its per-request callback.
        wanted: The ``SubscriptionFilter``.
        buffer: How many notifications may wait for the consumer.
        elsewhere: Where notifications that are not this stream's go.
    """
    sub = Subscription(buffer)

    async def deliver(note: dict[str, JSON]) -> None:
        method = note.get("method")
        params = note.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if method == "notifications/cancelled":
            sub.end(None)
            return
        if not (isinstance(meta, dict) and SUBSCRIPTION_ID in meta):
            # Not ours (it only reached us for being alone in flight).
            try:
                await call_maybe_async(elsewhere, note)
            except Exception as exc:
                report(session, f"the on_notification callback raised {exc!r} for {method!r}")
            return
        if method == "notifications/subscriptions/acknowledged":
            filt = params.get("notifications") if isinstance(params, dict) else None
            sub.acknowledged = filt if isinstance(filt, dict) else {}
            sub._acknowledged_by_server = True
            sub._acked.set()
            return
        sub.publish(note)

    async def run() -> None:
        try:
            with sub._scope:
                await send({"notifications": wanted}, deliver)
        except MCPError as exc:
            sub.end(exc)
        finally:
            sub.end(None)
            sub._finished.set()

    start_soon(session, run, name="listen")
    try:
        budget = session.request_timeout
        with trio.move_on_after(math.inf if budget is None else budget):
            await sub._acked.wait()
        if not sub._acked.is_set():
            raise RequestTimeout(
                f"subscriptions/listen was not acknowledged by {session.name} within {budget} s (request_timeout)",
                method="subscriptions/listen",
                timeout=budget or 0.0,
                server=session.name,
            )
        if sub.error is not None and not sub._acknowledged_by_server:
            raise sub.error
        yield sub
    finally:
        # However the block ends (the caller's cancellation included), the
        # listen request is withdrawn before we leave.
        sub._scope.cancel()
        with trio.CancelScope(shield=True):
            await sub._finished.wait()


@asynccontextmanager
async def open_legacy_subscription(
    session: Session,
    wanted: dict[str, JSON],
    buffer: int,
    subscribe: Callable[[str], Awaitable[None]],
    unsubscribe: Callable[[str], Awaitable[None]],
) -> AsyncIterator[Subscription]:
    """The initialize era's `Subscription`: the server's own notifications, picked by method.

    The URIs of ``wanted["resourceSubscriptions"]`` are subscribed to with
    ``subscribe`` first (one the server refuses is reported and left out of
    `Subscription.acknowledged`), and unsubscribed from as the block ends.
    """
    methods = {method for key, method in _LEGACY_METHODS.items() if wanted.get(key)}
    sub = Subscription(buffer)
    stream = session.notifications(buffer=buffer)
    acknowledged = {key: value for key, value in wanted.items() if key != "resourceSubscriptions"}
    subscribed: list[str] = []
    try:
        for uri in wanted.get("resourceSubscriptions", ()):
            try:
                await subscribe(uri)
            except RpcError as exc:
                report(session, f"cannot subscribe to {uri!r}: {exc}")
            else:
                subscribed.append(uri)
        if subscribed:
            methods.add("notifications/resources/updated")
            acknowledged["resourceSubscriptions"] = list(subscribed)
        sub.acknowledged = acknowledged
        sub._acknowledged_by_server = True
        sub._acked.set()

        async def run() -> None:
            try:
                with sub._scope:
                    async for note in stream:
                        if note.get("method") in methods:
                            sub.publish(note)
            except MCPError as exc:
                sub.end(exc)
            finally:
                sub.end(None)
                sub._finished.set()

        start_soon(session, run, name="listen")
        try:
            yield sub
        finally:
            sub._scope.cancel()
            with trio.CancelScope(shield=True):
                await sub._finished.wait()
    finally:
        stream.end(None)
        if subscribed and session.failure is None:
            with trio.CancelScope(shield=True), trio.move_on_after(_UNSUBSCRIBE_GRACE):
                for uri in subscribed:
                    await unsubscribe(uri)


#: The initialize era's change notifications, by the ``SubscriptionFilter`` key that asks for them.
_LEGACY_METHODS: Final = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}

#: How long leaving a subscription waits for the server to take back its resource subscriptions.
_UNSUBSCRIBE_GRACE: Final = 2.0
