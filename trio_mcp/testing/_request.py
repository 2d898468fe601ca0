"""`FakeRequest`: one request the client sent to a fake server, and the means to answer it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import attrs
import trio

from .._core.eras import LOG_LEVEL, LOG_LEVELS
from .._core.jsonrpc import SUBSCRIPTION_ID
from .._models import InputRequiredResult, unstructure
from .._serving.rules import LISTEN

if TYPE_CHECKING:
    from .._serving.server import Request, Server

__all__ = ["FakeRequest", "Link", "result_body", "wire_dict"]

JSON: TypeAlias = Any


class Link(Protocol):
    """What a `FakeRequest` needs of the connection it came in on."""

    @property
    def era(self) -> Literal["modern", "legacy"]:
        """The era of the fake the connection belongs to."""
        ...

    @property
    def core(self) -> Server:
        """The server core serving the connection."""
        ...

    def notify(self, method: str, params: Mapping[str, JSON] | None, related: Request | None = None) -> None:
        """Send the client a notification (that belongs to ``related``'s exchange over HTTP)."""
        ...

    async def wait_cancelled(self, request: Request) -> None:
        """Wait until the client cancels ``request`` (at once if it did)."""
        ...


def wire_dict(value: object, what: str) -> dict[str, JSON]:
    """A wire dict from a mapping or a trio_mcp model."""
    if isinstance(value, Mapping):
        return dict(value)
    if attrs.has(type(value)):
        try:
            return unstructure(value)
        except TypeError:
            pass
    raise TypeError(f"{what} must be a dict or a trio_mcp model, not {type(value).__name__}")


def result_body(result: object) -> dict[str, JSON]:
    """The wire form of a result: a dict, a trio_mcp model, or an `InputRequiredResult`."""
    if isinstance(result, InputRequiredResult):
        return {**unstructure(result), "resultType": "input_required"}
    return {} if result is None else wire_dict(result, "the result")


class FakeRequest:
    """One request the client sent to a `FakeServer`, and the means to answer it.

    Every request becomes one, whether a handler, the fake's own rules or your
    test answers it; the ones left for the test come from
    `FakeServer.receive_request`. Answer each once, with `respond`, `error` or
    (2026-07-28 era) `input_required`; before that, `progress`, `log` and
    `notify` send notifications that belong to it.

    Every method that sends raises `trio.BrokenResourceError` once the
    client has disconnected (or the server has "exited", `FakeServer.exit`),
    like a write to a closed pipe.

    Attributes:
        id: The JSON-RPC id the client gave it.
        method: The method, for example ``"tools/call"``.
        params: The params object (empty when the client sent none).
        message: The whole message, as decoded.
    """

    def __init__(self, connection: Link, request: Request, message: dict[str, JSON]) -> None:
        # (Made by the fake server only: ``connection`` is one connection of
        # the fake, ``request`` the server core's record of the request.)
        self._link = connection
        self._request = request
        self.message = message
        self.id: int | str = request.id
        self.method: str = request.method
        self.params: dict[str, JSON] = request.params

    def __repr__(self) -> str:
        name = self.name
        what = f" {name!r}" if isinstance(name, str) else ""
        return f"<FakeRequest {self.id!r} {self.method}{what}>"

    # ------------------------------------------------------------- reading

    @property
    def meta(self) -> dict[str, JSON]:
        """The ``_meta`` of the params (empty when there is none)."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str | None:
        """``params["name"]``: the tool of a ``tools/call``, the prompt of a ``prompts/get``."""
        name = self.params.get("name")
        return name if isinstance(name, str) else None

    @property
    def arguments(self) -> dict[str, JSON]:
        """``params["arguments"]`` (empty when there are none)."""
        arguments = self.params.get("arguments")
        return arguments if isinstance(arguments, dict) else {}

    @property
    def input_responses(self) -> dict[str, JSON] | None:
        """The answers to the previous round's input requests (2026-07-28 era), or `None`."""
        answers = self.params.get("inputResponses")
        return answers if isinstance(answers, dict) else None

    @property
    def request_state(self) -> str | None:
        """The ``requestState`` sent back from the previous round (2026-07-28 era), or `None`."""
        state = self.params.get("requestState")
        return state if isinstance(state, str) else None

    @property
    def progress_token(self) -> int | str | None:
        """The ``progressToken`` the client asked progress under, or `None`."""
        token = self.meta.get("progressToken")
        return token if isinstance(token, int | str) and not isinstance(token, bool) else None

    @property
    def log_level(self) -> str | None:
        """The log level this request asked for (2026-07-28 era), or `None`."""
        level = self.meta.get(LOG_LEVEL)
        return level if isinstance(level, str) else None

    @property
    def response(self) -> dict[str, JSON] | None:
        """The response sent to it (the whole message), or `None`."""
        return self._request.response

    @property
    def answered(self) -> bool:
        """Whether a response was sent."""
        return self._request.answered

    @property
    def cancelled(self) -> bool:
        """Whether the client sent ``notifications/cancelled`` for this request."""
        return self._request.cancelled

    async def wait_cancelled(self) -> None:
        """Wait until the client cancels this request (a timeout, a cancel scope, ...)."""
        await self._link.wait_cancelled(self._request)

    # ------------------------------------------------------------- answers

    async def respond(self, result: Mapping[str, JSON] | object = None) -> None:
        """Answer with a result: a dict or a trio_mcp model (`None`: an empty result).

        In the 2026-07-28 era ``"resultType": "complete"`` is added when the
        result has no ``resultType``, and the closing result of a
        ``subscriptions/listen`` gets its subscription id.

        Raises:
            RuntimeError: The request was answered already.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._respond_now(result)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def error(self, code: int, message: str, data: JSON = None) -> None:
        """Answer with a JSON-RPC error (the client raises `trio_mcp.RpcError`).

        Raises:
            RuntimeError: The request was answered already.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._error_now(code, message, data)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def input_required(
        self,
        input_requests: Mapping[str, Mapping[str, JSON] | object] | None = None,
        *,
        request_state: str | None = None,
    ) -> None:
        """Answer with an ``input_required`` result (2026-07-28 era).

        The client answers every input request (through its hooks, or your
        code in manual mode) and sends the request again, with the answers in
        `input_responses` and ``request_state`` unchanged; that round is a
        new `FakeRequest`. ::

            await request.input_required(
                {
                    "name": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "Your name?",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                        },
                    }
                },
                request_state="step-1",
            )

        Args:
            input_requests: By key, each ``{"method": ..., "params": ...}``
                (``elicitation/create``, ``sampling/createMessage`` or
                ``roots/list``), or an `trio_mcp.types.InputRequest`.
            request_state: Opaque state the client must send back unchanged.

        Raises:
            RuntimeError: The server speaks the initialize era (servers ask
                with `FakeServer.send_request` there), or the request was
                answered already.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._link.era != "modern":
            raise RuntimeError(
                "input_required belongs to the 2026-07-28 era; an initialize-era server asks"
                " with FakeServer.send_request"
            )
        result: dict[str, JSON] = {"resultType": "input_required"}
        if input_requests is not None:
            result["inputRequests"] = {
                key: wire_dict(value, "each input request") for key, value in input_requests.items()
            }
        if request_state is not None:
            result["requestState"] = request_state
        self._respond_now(result)
        await trio.lowlevel.cancel_shielded_checkpoint()

    # ------------------------------------------------------- notifications

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Send ``notifications/progress`` for this request, if the client asked for progress.

        Returns whether it was sent: like a real server, the fake sends none
        when the request carries no ``progressToken`` (the client passed no
        ``on_progress``).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        token = self.progress_token
        sent = token is not None
        if sent:
            params: dict[str, JSON] = {"progressToken": token, "progress": progress}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            self._link.notify("notifications/progress", params, self._request)
        await trio.lowlevel.cancel_shielded_checkpoint()
        return sent

    async def log(self, level: str, data: JSON, *, logger: str | None = None) -> bool:
        """Send a log message (``notifications/message``), if the client asked for it.

        As the protocol says: in the 2026-07-28 era only when this request
        asked for logs (the client's ``log_level``) at ``level`` or below; in
        the initialize era unless the client set a more severe level with
        ``logging/setLevel``. Returns whether it was sent.

        Raises:
            ValueError: ``level`` is not one of ``"debug"``, ``"info"``,
                ``"notice"``, ``"warning"``, ``"error"``, ``"critical"``,
                ``"alert"``, ``"emergency"``.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; the levels are {list(LOG_LEVELS)}")
        sent = self._link.core.log_wanted(self._request, level)
        if sent:
            params: dict[str, JSON] = {"level": level, "data": data}
            if logger is not None:
                params["logger"] = logger
            self._link.notify("notifications/message", params, self._request)
        await trio.lowlevel.cancel_shielded_checkpoint()
        return sent

    async def notify(self, method: str, params: Mapping[str, JSON] | None = None) -> None:
        """Send a notification that belongs to this request.

        For a ``subscriptions/listen`` request the notification carries the
        subscription id in ``_meta``, as the client expects of a listen
        stream (``notifications/tools/list_changed``, ...). Otherwise it is
        sent as given (the client gives it to this request's callback while
        it is the only request in flight).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        body = dict(params) if params is not None else {}
        if self.method == LISTEN:
            body["_meta"] = {**body.get("_meta", {}), SUBSCRIPTION_ID: self.id}
        self._link.notify(method, body if body or params is not None else None, self._request)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def acknowledge(self, notifications: Mapping[str, JSON] | None = None) -> None:
        """Acknowledge a ``subscriptions/listen`` request (2026-07-28 era).

        Args:
            notifications: The filter the server will honour; by default the
                one the client asked for.
        """
        if self.method != LISTEN:
            raise RuntimeError(f"only a subscriptions/listen request is acknowledged, not {self.method}")
        wanted = self.params.get("notifications")
        honoured = dict(notifications) if notifications is not None else (wanted or {})
        await self.notify("notifications/subscriptions/acknowledged", {"notifications": honoured})

    # ------------------------------------------------------------ internals

    def _respond_now(self, result: object) -> None:
        body = result_body(result)
        self._check_unanswered()
        # Stamped for the era by the server core: resultType, and the
        # subscription id of a subscriptions/listen result.
        self._link.core.respond(self._request, body)

    def _error_now(self, code: int, message: str, data: JSON = None) -> None:
        self._check_unanswered()
        self._link.core.respond_error(self._request, code, message, data)

    def _check_unanswered(self) -> None:
        if self.answered:
            raise RuntimeError(f"{self!r} was answered already")
