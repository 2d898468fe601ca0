"""What a failure in one of the package's nurseries means for the caller.

The package's background tasks expect their failures and turn them into
state; what still reaches a nursery is a bug (or a ``KeyboardInterrupt``).
These rules turn such a group into one exception, and let the caller's own
exception win over it: no `ExceptionGroup` reaches the user.
"""

from __future__ import annotations

import trio

from .._errors import TrioMCPInternalError

__all__ = ["first_cancelled", "reraise", "unexpected"]


def first_cancelled(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first `trio.Cancelled` of a group made only of cancellations."""
    leaf: BaseException = group
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    return leaf


def unexpected(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """Turn a group from one of our nurseries into one exception for the caller.

    Returns `None` when the group holds nothing but cancellations; a
    `KeyboardInterrupt` or `SystemExit` inside is returned as it is;
    anything else is a bug of ours, a `TrioMCPInternalError`.
    """
    leaves: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        elif not isinstance(exc, trio.Cancelled):
            leaves.append(exc)

    walk(group)
    if not leaves:
        return None
    for leaf in leaves:
        if isinstance(leaf, KeyboardInterrupt | SystemExit):
            return leaf
    return TrioMCPInternalError(f"a trio_mcp background task failed: {leaves!r}; please report this bug")


def reraise(group: BaseExceptionGroup[BaseException], exc: BaseException | None) -> None:
    """Raise what a nursery's group means for the caller; the caller's own exception wins.

    Called while the caller's ``exc`` (or `None`) is on its way out. Only a
    `KeyboardInterrupt` or `SystemExit` beats it; an internal failure is
    attached to it (as a note, and as its context when it has none).
    """
    failure = unexpected(group)
    if failure is None:
        if exc is None:
            # Only a cancellation of the caller's: let it through.
            raise first_cancelled(group) from None
        return
    if exc is None or isinstance(failure, KeyboardInterrupt | SystemExit):
        raise failure from group
    failure.__cause__ = group
    exc.add_note(f"(meanwhile, inside trio_mcp: {failure})")
    if exc.__context__ is None:
        exc.__context__ = failure
