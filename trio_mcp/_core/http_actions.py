"""What the pure HTTP cores decide, as values: deliver a message, log, fail a call.

Shared by `trio_mcp._core.streamable_http` and `trio_mcp._core.http_sse`,
with the bounded tables of ids both keep and the reconnection delay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

if TYPE_CHECKING:
    from collections import OrderedDict

    from .._errors import MCPError

__all__ = ["RETRY_BOUNDS", "Action", "Deliver", "DeliveredCall", "Fail", "Log", "remember", "retry_delay"]

#: The server's ``retry`` is taken within these bounds, in seconds.
RETRY_BOUNDS: Final = (0.0, 60.0)


class DeliveredCall(Protocol):
    """What the I/O loop reads of the call a `Deliver` answers (a core's own call record)."""

    @property
    def request_id(self) -> int | str: ...

    @property
    def parked(self) -> bool: ...


class Deliver:
    """Hand ``data`` (one JSON-RPC message) to the session; ``call``: the call it answers, if any.

    ``ends_exchange``: the answer came on another stream than the exchange
    still carrying ``call`` (the GET stream, while its POST is open): that
    exchange is over, close it.
    """

    __slots__ = ("call", "data", "ends_exchange")

    def __init__(
        self, data: bytes, call: DeliveredCall | None = None, *, ends_exchange: bool = False
    ) -> None:
        self.data = data
        self.call = call
        self.ends_exchange = ends_exchange

    def __repr__(self) -> str:
        return f"Deliver({self.data[:60]!r})"


class Log:
    """A diagnostic for the connection's log."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Log({self.text!r})"


class Fail:
    """The call fails with ``error`` (the connection lives on).

    ``out_of_step``: the HTTP connection that carried the exchange is out of
    step with its requests (it delivered the answer to another request, a
    stale one left behind by a server): it must carry nothing more.
    """

    __slots__ = ("error", "out_of_step")

    def __init__(self, error: MCPError, out_of_step: bool = False) -> None:
        self.error = error
        self.out_of_step = out_of_step

    def __repr__(self) -> str:
        return f"Fail({self.error!r})"


Action: TypeAlias = Deliver | Log | Fail


def remember(table: OrderedDict[Any, None], key: object, limit: int) -> None:
    """Put ``key`` last in ``table`` (a bounded LRU set), dropping the oldest beyond ``limit``."""
    table[key] = None
    table.move_to_end(key)
    while len(table) > limit:
        table.popitem(last=False)


def retry_delay(retry_ms: int | None, attempt: int) -> float:
    """Seconds to wait before reconnecting: the server's ``retry`` (clamped), else 1 s x 1.5^n up to 30 s."""
    if retry_ms is not None:
        low, high = RETRY_BOUNDS
        return min(high, max(low, retry_ms / 1000))
    return float(min(30.0, 1.5 ** max(0, attempt - 1)))
