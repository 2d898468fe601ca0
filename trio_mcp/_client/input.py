"""Input from the client: the hooks, and the multi round-trip requests of 2026-07-28.

A server may need something from the client's side to finish a request: a
person's answer (elicitation), a language model's reply (sampling), the
client's roots. Both eras ask through the same three hooks, and `InputHandler.answer`
is the one place that calls them:

* initialize era: the server sends a request of its own
  (``elicitation/create``, ...); `InputHandler.serve_request` answers it;
* 2026-07-28 era: the server answers ``input_required`` with input
  requests; `InputHandler.run_rounds` answers them all (concurrently) and
  sends the request again with the answers, until the result is complete,
  within ``max_rounds`` requests (and ``input_timeout``, when set).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

import trio

from .._core.eras import (
    INPUT_HOOKS,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    Hooks,
    input_problem,
    result_type,
    retry_params,
    sampling_answer_problem,
)
from .._core.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND
from .._errors import InputRequestFailed, NotSupported, ProtocolError, RpcError
from .._models import (
    CreateMessageParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    InputRequest,
    InputRequiredResult,
    ListRootsResult,
    Root,
    structure,
    to_wire,
)
from .._session import RequestTimeout, call_maybe_async

if TYPE_CHECKING:
    from .._models import ElicitFormParams, ElicitUrlParams
    from .._options import ClientOptions

__all__ = ["InputHandler"]

JSON: TypeAlias = Any
M = TypeVar("M")

Resolve: TypeAlias = Callable[[str, dict[str, JSON], dict[str, JSON]], Awaitable[dict[str, JSON]]]
"""``(method, params, result) -> result``: resolves a result an extension claims."""

#: The ``resultType`` values the rounds read themselves.
_PLAIN: Final = (None, "complete", "input_required")

SendRound: TypeAlias = Callable[[dict[str, JSON]], Awaitable[dict[str, JSON]]]
"""Sends one round of a request (its params) and returns the raw result."""


class InputHandler:
    """The client's hooks, and the rounds of requests that need them.

    Args:
        options: The client's options (the hooks, ``max_rounds``,
            ``input_timeout``).
        server: Who the requests go to, as errors name it.
    """

    def __init__(
        self,
        options: ClientOptions,
        *,
        server: str = "",
        requests: Mapping[str, Callable[[JSON], object]] | None = None,
        resolve: Resolve | None = None,
    ) -> None:
        self.server = server
        self.requests = dict(requests) if requests else {}
        """The extensions' handlers of server requests, by method (initialize era)."""
        self.resolve = resolve
        """Turns a result whose ``resultType`` an extension claims into an ordinary one, or `None`."""
        self.on_elicitation = options.on_elicitation
        self.on_sampling = options.on_sampling
        self.on_roots = options.on_roots
        self.hooks = Hooks(
            elicitation=options.on_elicitation is not None,
            sampling=options.on_sampling is not None,
            roots=options.on_roots is not None,
            sampling_tools=options.sampling_tools,
        )
        self.max_rounds = options.max_rounds
        """The most requests one multi round-trip operation may take."""
        self.input_timeout = options.input_timeout
        """The budget, in seconds, of one whole multi round-trip operation, or `None`."""
        self.version: str | None = None
        """The negotiated protocol version (set once the client has connected)."""

    # --------------------------------------------------------------- hooks

    async def answer(self, method: str, params: JSON) -> dict[str, JSON]:
        """Answer one input request through its hook; the one decision point of both eras."""
        if method == "elicitation/create":
            assert self.on_elicitation is not None
            typed: ElicitFormParams | ElicitUrlParams = structure(params or {}, ElicitRequestParams)
            return to_wire(await call_maybe_async(self.on_elicitation, typed), ElicitResult)
        if method == "sampling/createMessage":
            assert self.on_sampling is not None
            sampling = structure(params or {}, CreateMessageParams)
            reply = to_wire(await call_maybe_async(self.on_sampling, sampling), CreateMessageResult)
            problem = sampling_answer_problem(params, reply, self.version or MODERN_VERSIONS[0])
            if problem is not None:
                raise ValueError(f"on_sampling answered wrongly: {problem}")
            return reply
        assert method == "roots/list"
        assert self.on_roots is not None
        roots: object = await call_maybe_async(self.on_roots)
        if isinstance(roots, Mapping):
            return to_wire(dict(roots), ListRootsResult)
        if not isinstance(roots, Sequence) or isinstance(roots, str | bytes):
            raise TypeError(f"on_roots must return a list of Root or a dict, not {type(roots).__name__}")
        return {"roots": [to_wire(root, Root) for root in roots]}

    async def serve_request(self, method: str, params: JSON) -> dict[str, JSON]:
        """Answer a server-to-client request (initialize era; the session drops them in the other).

        Raises:
            RpcError: The request cannot be answered (an unknown method, a
                missing hook, invalid params): its error answer.
        """
        handler = self.requests.get(method) if self.requests else None
        if handler is not None:
            answer = await call_maybe_async(handler, params)
            if not isinstance(answer, Mapping):
                raise TypeError(f"the handler of {method} returned a {type(answer).__name__}, not a dict")
            return dict(answer)
        version = self.version or LEGACY_VERSIONS[0]
        hooks = self.hooks
        problem = input_problem(method, params, hooks, version)
        if problem is not None:
            # Invalid params for a request we could take in another shape
            # (an undeclared elicitation mode, sampling with tools);
            # otherwise the method is unknown to us.
            known = (method == "elicitation/create" and hooks.elicitation and version >= "2025-06-18") or (
                method == "sampling/createMessage" and hooks.sampling
            )
            raise RpcError(INVALID_PARAMS if known else METHOD_NOT_FOUND, problem)
        try:
            return await self.answer(method, params)
        except ProtocolError as exc:
            raise RpcError(INVALID_PARAMS, f"invalid params: {exc}") from exc

    async def answer_all(self, requests: Mapping[str, InputRequest]) -> dict[str, JSON]:
        """Answer every input request of one round, concurrently.

        Raises:
            InputRequestFailed: One cannot be answered (then none is).
        """
        version = self.version or MODERN_VERSIONS[0]
        for key, asked in requests.items():
            problem = input_problem(asked.method, asked.params, self.hooks, version)
            if problem is not None:
                raise InputRequestFailed(problem, method=asked.method, key=key)
        answers: dict[str, JSON] = {}
        failure: tuple[str, str, BaseException] | None = None

        async def answer(key: str, asked: InputRequest, cancel_scope: trio.CancelScope) -> None:
            nonlocal failure
            try:
                answers[key] = await self.answer(asked.method, asked.params)
            except Exception as exc:
                if failure is None:
                    failure = (key, asked.method, exc)
                cancel_scope.cancel()

        if len(requests) == 1:
            ((key, asked),) = requests.items()
            await answer(key, asked, trio.CancelScope())
        else:
            async with trio.open_nursery() as nursery:
                for key, asked in requests.items():
                    nursery.start_soon(answer, key, asked, nursery.cancel_scope)
        if failure is not None:
            key, method, exc = failure
            if isinstance(exc, ProtocolError):
                message = f"input request {key!r} ({method}) is malformed: {exc}"
            else:
                message = f"the {INPUT_HOOKS[method]} hook failed on input request {key!r}: {exc!r}"
            raise InputRequestFailed(message, method=method, key=key) from exc
        return answers

    # -------------------------------------------------------------- rounds

    def first_round(
        self, params: dict[str, JSON], input_responses: Mapping[str, JSON] | None, request_state: str | None
    ) -> tuple[dict[str, JSON], float]:
        """The params of a request's first round (with the answers of a manual round before it),
        and when the operation started (for ``input_timeout``). Send them, then give the answer
        to `run_rounds`."""
        round_params = (
            retry_params(params, dict(input_responses) if input_responses else None, request_state)
            if input_responses is not None or request_state is not None
            else params
        )
        return round_params, trio.current_time() if self.input_timeout is not None else 0.0

    def complete(self, method: str, model: type[M], result: dict[str, JSON]) -> M | None:
        """``result`` as ``model`` when it is complete as it came (by far the common answer),
        else `None`: `run_rounds` then takes it from there (input asked for, an extension's
        claim, a ``resultType`` to refuse).

        Raises:
            ProtocolError: The result does not have the model's shape.
        """
        if result.get("resultType", "complete") == "complete":
            return structure(result, model)
        return None

    async def run_rounds(
        self,
        method: str,
        params: dict[str, JSON],
        model: type[M],
        send: SendRound,
        result: dict[str, JSON],
        start: float,
        manual: bool = False,
    ) -> tuple[M | InputRequiredResult, int]:
        """Run a request of the 2026-07-28 era to completion from its first answer, answering its
        input requests.

        The first round is the caller's (see `first_round`): the common
        answer, complete at once, costs no round trip through here but this
        call. Returns the typed result (or, in manual mode, the first
        `InputRequiredResult`) and the number of requests it took.

        Raises:
            InputRequestFailed: An input request could not be answered, or
                the server still asked after ``max_rounds`` requests.
            RequestTimeout: ``input_timeout`` ran out.
            ProtocolError: The server asked for nothing, or sent an unknown
                ``resultType``.
        """
        budget = self.input_timeout
        rounds = 1
        resolve = self.resolve
        if resolve is not None and result.get("resultType") not in _PLAIN:
            result = await resolve(method, params, result)
        if result_type(method, result) == "complete":
            return structure(result, model), rounds
        deadline = start + budget if budget is not None else math.inf
        # Input is needed: from here on the whole operation, hooks included,
        # runs against input_timeout (no cancel scope is paid for when the
        # first answer is complete, by far the common case).
        with trio.move_on_at(deadline) as scope:
            while True:
                asked = structure(result, InputRequiredResult)
                if manual:
                    return asked, rounds
                if not asked.input_requests and asked.request_state is None:
                    raise ProtocolError(
                        f"the server answered {method} with input_required but asked for nothing"
                        " (no inputRequests, no requestState)"
                    )
                if rounds >= self.max_rounds:
                    raise InputRequestFailed(
                        f"{method} still asked for input after {rounds} rounds (max_rounds={self.max_rounds})"
                    )
                answers: dict[str, JSON] | None = None
                if asked.input_requests:
                    answers = await self.answer_all(asked.input_requests)
                elif rounds > 1:
                    # Rounds that carry only state: back off a little.
                    await trio.sleep(min(0.01 * 2 ** (rounds - 2), 1.0))
                result = await send(retry_params(params, answers, asked.request_state))
                rounds += 1
                if resolve is not None and result.get("resultType") not in _PLAIN:
                    result = await resolve(method, params, result)
                if result_type(method, result) == "complete":
                    return structure(result, model), rounds
        assert scope.cancelled_caught
        raise RequestTimeout(
            f"{method} to {self.server} did not complete within input_timeout={self.input_timeout} s"
            f" ({rounds} rounds)",
            method=method,
            timeout=self.input_timeout or 0.0,
            server=self.server,
        )

    @staticmethod
    def refuse_legacy_rounds(method: str, input_responses: object, request_state: object) -> None:
        """Raise `NotSupported` for round arguments in the initialize era."""
        if input_responses is not None or request_state is not None:
            raise NotSupported(
                "input_responses and request_state belong to the 2026-07-28 era", method=method, era="legacy"
            )
