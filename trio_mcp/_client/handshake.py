"""Era negotiation over a session: the Trio side of `trio_mcp._core.negotiation`.

`negotiate` runs the pure `Negotiator` against a live session: it sends what
the negotiator asks for, bounds each step with the client's own clocks (the
probe timeout for the ``auto`` probe, the handshake timeout otherwise:
steps the library runs itself), and reports what happened, until the era is
settled. A server that died on the probe comes back as `Restart`, for the
opener that can start it again.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import trio

from .._core.eras import modern_meta
from .._core.negotiation import (
    Fail,
    Negotiated,
    Negotiator,
    Restart,
    SendInitialize,
    SendProbe,
)
from .._errors import ProtocolError, RpcError, ServerGone
from .._models import DiscoverResult, InitializeResult, structure
from .._session import RequestTimeout, stray_lines_hint

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._session import Session

__all__ = ["Outcome", "ServerDiedOnProbe", "negotiate"]

JSON: TypeAlias = Any


class ServerDiedOnProbe(Exception):
    """The server died on the ``server/discover`` probe: it may be an
    initialize-era server that cannot cope with an unknown method. Start it
    again and negotiate with ``restarted=True``.

    Attributes:
        gone: How it died.
    """

    def __init__(self, gone: ServerGone) -> None:
        super().__init__(str(gone))
        self.gone = gone


@attrs.frozen
class Outcome:
    """The settled era, with the server's self-description, typed."""

    negotiated: Negotiated
    discover: DiscoverResult | None
    initialize: InitializeResult | None


async def negotiate(
    session: Session,
    *,
    protocol: str,
    client_info: dict[str, JSON],
    declare: Callable[[str], dict[str, JSON]],
    probe_timeout: float,
    handshake_timeout: float | None,
    restarted: bool = False,
) -> Outcome:
    """Settle the protocol era with the server on ``session``.

    Args:
        session: The connection.
        protocol: The client's ``protocol`` option.
        client_info: The ``Implementation`` to send, as a dict.
        declare: The ``ClientCapabilities`` to declare at a version.
        probe_timeout: How long an ``auto`` probe waits for an answer.
        handshake_timeout: The budget of ``initialize`` and of a pinned
            probe (`None`: none).
        restarted: The server was started again after it died on the probe.

    Raises:
        ServerDiedOnProbe: The server died on the probe; start it again and
            call again with ``restarted=True``.
        VersionMismatch: No protocol version in common.
        RequestTimeout: The handshake ran out of time.
        ServerGone: The server died.
        RpcError, ProtocolError: ``initialize`` failed.
    """
    negotiator = Negotiator(protocol, restarted=restarted)
    step = negotiator.start()
    discover: DiscoverResult | None = None
    # One budget for the whole handshake, the probe included.
    deadline = math.inf if handshake_timeout is None else trio.current_time() + handshake_timeout
    while True:
        if isinstance(step, SendProbe):
            probe_deadline = min(trio.current_time() + probe_timeout, deadline) if step.timed else deadline
            probe: dict[str, JSON] = {"_meta": modern_meta(step.version, {}, client_info)}
            try:
                with trio.move_on_at(probe_deadline) as scope:
                    result = await session.request("server/discover", probe)
            except (RpcError, ProtocolError) as exc:
                step = negotiator.probe_failed(exc)
                continue
            except ServerGone as exc:
                step = negotiator.probe_killed_server(exc)
                if isinstance(step, Restart):
                    raise ServerDiedOnProbe(exc) from exc
                continue
            if scope.cancelled_caught:
                if step.timed and probe_deadline < deadline:
                    step = negotiator.probe_timed_out()
                    continue
                raise _timed_out(session, "server/discover", handshake_timeout)
            try:
                discover = structure(result, DiscoverResult)
            except ProtocolError as exc:
                step = negotiator.probe_failed(exc)
                continue
            step = negotiator.probe_answered(result)
        elif isinstance(step, SendInitialize):
            params: dict[str, JSON] = {
                "protocolVersion": step.version,
                "capabilities": declare(step.version),
                "clientInfo": client_info,
            }
            try:
                with trio.move_on_at(deadline) as scope:
                    # MCP forbids cancelling initialize: a timeout withdraws
                    # it without telling the server.
                    result = await session.request("initialize", params, cancel_on_abandon=False)
            except (RpcError, ProtocolError) as exc:
                step = negotiator.initialize_failed(exc)
                continue
            if scope.cancelled_caught:
                raise _timed_out(session, "initialize", handshake_timeout)
            step = negotiator.initialize_answered(result)
            if isinstance(step, Negotiated):
                return Outcome(step, None, structure(result, InitializeResult))
        elif isinstance(step, Negotiated):
            return Outcome(step, discover if step.discover is not None else None, None)
        else:
            assert isinstance(step, Fail)
            raise step.error


def _timed_out(session: Session, method: str, handshake_timeout: float | None) -> RequestTimeout:
    """The handshake ran out of its budget: say what the server wrote instead of answering."""
    budget = handshake_timeout or 0.0
    return RequestTimeout(
        f"{session.name} did not answer {method} within {budget:g} s (handshake_timeout)"
        + stray_lines_hint(session),
        method=method,
        timeout=budget,
        server=session.name,
    )
