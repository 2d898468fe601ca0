"""OpenTelemetry: what a connection reports, by the semantic conventions for MCP.

Everything lives in this package; the rest of the library has a few named
hooks:

* `make_session` (the openers): a plain `Session`, or, when the application
  has set up OpenTelemetry, a traced one (`trio_mcp._telemetry.otel`), whose
  `Session.request` and `Session.notify` make a span each, in the caller's
  own task;
* the session's `Observer` (``notifications/cancelled``, which the session
  sends by itself, and the server's requests, each served under a span);
* `negotiated` (the client, after the handshake): the protocol revision, and
  the ``Mcp-Session-Id`` of an initialize-era HTTP connection;
* `restarting` (a server group) and `token_refreshed` (a login): events for a
  reader of a trace.

OpenTelemetry is imported only when the application has imported it first:
a program that does not use it pays nothing, not even the import. With the
API alone (no SDK's provider set), nothing is recorded and the session is a
plain one, so that the API costs nothing either.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .._session import Session, new_session, observer_of

if TYPE_CHECKING:
    from .._channel import Channel
    from .._options import ConnectionOptions
    from .._targets import Target

__all__ = ["configured", "make_session", "negotiated", "restarting", "token_refreshed"]

#: The API's own provider classes (its proxies and no-ops) live in these modules: they record nothing.
_API_MODULES = ("opentelemetry.trace", "opentelemetry.metrics")


def configured() -> bool:
    """Whether the application has set a tracer or meter provider that records (an SDK's).

    False when OpenTelemetry was never imported (then nothing can have been
    set up), and when the global providers are still the API's proxies or
    no-ops.
    """
    if "opentelemetry.trace" not in sys.modules and "opentelemetry.metrics" not in sys.modules:
        return False
    try:
        from opentelemetry import metrics, trace
    except ImportError:  # pragma: no cover - a half-installed OpenTelemetry
        return False
    return any(
        not type(provider).__module__.startswith(_API_MODULES)
        for provider in (trace.get_tracer_provider(), metrics.get_meter_provider())
    )


def make_session(channel: Channel, options: ConnectionOptions, target: Target) -> Session:
    """The session over ``channel``: a traced one when telemetry is on and configured."""
    if options.telemetry and configured():
        from .otel import Telemetry, TracedSession

        return new_session(channel, options, observer=Telemetry(target, channel), kind=TracedSession)
    return new_session(channel, options)


def negotiated(session: Session, version: str) -> None:
    """The handshake chose protocol revision ``version``: every later span and metric carries it."""
    observer = observer_of(session)
    if observer is not None:
        from .otel import Telemetry

        if isinstance(observer, Telemetry):
            observer.negotiated(version)


def restarting(server: str, restarts: int, reason: BaseException, delay: float) -> None:
    """A server group starts its member ``server`` again, in ``delay`` seconds: a span of its own.

    A root span (the group's supervisor has no caller whose trace it could
    join) named ``trio_mcp.server.restart``, with the member's name, how
    many restarts it has had, the delay and the class of the failure (never
    its message, which may quote the server's stderr).
    """
    if not configured():
        return
    from .otel import restart_span

    restart_span(server, restarts, reason, delay)


def token_refreshed(issuer: str) -> None:
    """A login refreshed its access token: an event on the current span (the request's), if one records.

    Only the authorization server's address: never a token, a client
    secret, a code or a header.
    """
    if "opentelemetry.trace" not in sys.modules:
        return
    from .otel import add_event, safe_url

    add_event("trio_mcp.auth.token_refresh", {"trio_mcp.auth.issuer": safe_url(issuer)})
