"""Era negotiation, without I/O: which protocol era a server speaks.

MCP has two eras. The 2026-07-28 revision is stateless: every request carries
its ``_meta`` envelope, and a client may describe the server with
``server/discover``. The initialize-era revisions (2025-11-25 and older) open
with an ``initialize`` handshake. A client that speaks both sends
``server/discover`` first (the "probe") and reads the answer, as the stdio
transport of 2026-07-28 says:

* a usable ``DiscoverResult`` (its ``supportedVersions`` lists versions)
  means the 2026-07-28 era when it lists ours, an ``initialize`` at the
  newest shared initialize-era version when only those are shared, and a
  `VersionMismatch` when nothing is;
* a ``-32022`` error that lists the supported versions is read the same way
  (and the probe is sent once more at a newer 2026-07-28 version we share);
* a ``-32021`` or ``-32020`` error, which only 2026-07-28 servers send, means
  that era;
* anything else (any other error code, a malformed error, a result that is
  not a usable ``DiscoverResult``, silence for the probe timeout) means the
  initialize era: ``initialize`` follows, and its answer decides. The
  fallback never hangs on one error code or one shape of answer.

A server that dies on the probe may be an initialize-era server that cannot
cope with an unknown method: it is started again and sent ``initialize``
straight away. A ``-32022`` answer to ``initialize`` naming a 2026-07-28
version we speak switches to that era after all (a modern server that was
slow to answer the probe).

`Negotiator` is that procedure as a state machine: the caller reports what
happened (an answer, an error, a timeout, a death) and the negotiator says
what to do next (`SendProbe`, `SendInitialize`, `Restart`), until it says
`Negotiated` or `Fail`. `judge_probe` and `check_initialize` are its two
rules, usable on their own.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from .._errors import MCPError, ProtocolError, RpcError, VersionMismatch
from .eras import (
    HEADER_MISMATCH,
    LEGACY_VERSIONS,
    MISSING_CLIENT_CAPABILITY,
    MODERN_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
)

__all__ = [
    "Fail",
    "Legacy",
    "Modern",
    "Negotiated",
    "Negotiator",
    "Restart",
    "SendInitialize",
    "SendProbe",
    "Step",
    "check_initialize",
    "judge_probe",
]

JSON: TypeAlias = Any


# ------------------------------------------------------------ the rules


@attrs.frozen
class Modern:
    """The server speaks the 2026-07-28 era, at ``version``.

    ``discover`` is its ``DiscoverResult`` when the probe got one. ``retry``
    says the probe must be sent again at ``version`` (the server refused the
    first version with ``-32022``).
    """

    version: str
    discover: dict[str, JSON] | None = None
    retry: bool = False


@attrs.frozen
class Legacy:
    """The server speaks the initialize era: send ``initialize`` offering ``version``."""

    version: str
    why: str


def _strings(value: object) -> tuple[str, ...] | None:
    """The strings of a version list, or `None` when it names no version at all (unusable)."""
    if not isinstance(value, list):
        return None
    names = tuple(item for item in value if isinstance(item, str))
    return names or None


def _newest_shared(listed: tuple[str, ...], ours: tuple[str, ...]) -> str | None:
    names = set(listed)
    for version in ours:
        if version in names:
            return version
    return None


def _legacy_overlap(listed: tuple[str, ...], said: str) -> Legacy:
    """`Legacy` at the newest initialize-era version the server listed too, else `VersionMismatch`."""
    legacy = _newest_shared(listed, LEGACY_VERSIONS)
    if legacy is not None:
        return Legacy(legacy, f"the server's supported versions share only {legacy} with us")
    ours = MODERN_VERSIONS + LEGACY_VERSIONS
    raise VersionMismatch(
        f"{said} {list(listed)}; this client speaks {list(ours)}",
        offered=ours,
        answered=listed,
    )


def judge_probe(
    result: dict[str, JSON] | None,
    error: MCPError | None,
    *,
    requested: str,
    legacy_offer: str = LEGACY_VERSIONS[0],
) -> Modern | Legacy:
    """Decide the era from the answer to the ``server/discover`` probe.

    Args:
        result: The probe's result, or `None`.
        error: The probe's error: an `RpcError` for a well-formed error
            answer, a `ProtocolError` for a broken one; or `None`. Both `None`
            means no answer came within the probe timeout.
        requested: The 2026-07-28-era version the probe carried.
        legacy_offer: The version to offer in ``initialize`` when the server
            turns out to speak the initialize era.

    Raises:
        VersionMismatch: The server listed the versions it speaks, and none
            is one this client speaks, in either era.
    """
    if result is not None:
        listed = _strings(result.get("supportedVersions"))
        if listed is None:
            return Legacy(legacy_offer, "server/discover answered without a list of supported versions")
        version = _newest_shared(listed, MODERN_VERSIONS)
        if version is not None:
            return Modern(version, result)
        # A dual-era server whose only overlap with us is legacy accepts
        # initialize at that version.
        return _legacy_overlap(listed, "the server supports")
    if error is None:
        return Legacy(legacy_offer, "no answer to server/discover within the probe timeout")
    if not isinstance(error, RpcError):
        return Legacy(legacy_offer, f"server/discover got a broken answer ({error})")
    if error.code == UNSUPPORTED_PROTOCOL_VERSION:
        data = error.data if isinstance(error.data, dict) else {}
        listed = _strings(data.get("supported"))
        if listed is None:
            return Legacy(
                legacy_offer, "server/discover was refused (-32022) without a list of supported versions"
            )
        version = _newest_shared(listed, MODERN_VERSIONS)
        if version is not None and version != requested:
            return Modern(version, None, retry=True)
        if requested in listed:
            # Refused the very version it lists (the transport asked again once).
            said = f"the server refused protocol version {requested}, which it lists among those it supports"
            return _legacy_overlap(listed, said)
        return _legacy_overlap(listed, f"the server refused protocol version {requested} and supports")
    if error.code in (MISSING_CLIENT_CAPABILITY, HEADER_MISMATCH):
        # Errors only a 2026-07-28 server sends: the server is modern, even
        # though it would not describe itself.
        return Modern(requested, None)
    return Legacy(legacy_offer, f"server/discover failed with error {error.code} ({error.message})")


def check_initialize(result: dict[str, JSON], offered: str) -> str:
    """Return the version a legacy server chose in its ``InitializeResult``.

    Raises:
        VersionMismatch: It chose a version this client does not speak in
            the initialize era (``2026-07-28`` included).
        ProtocolError: ``protocolVersion`` is missing or not a string.
    """
    version = result.get("protocolVersion")
    if not isinstance(version, str):
        raise ProtocolError(f"the initialize result has no protocolVersion string: {version!r}")
    if version not in LEGACY_VERSIONS:
        raise VersionMismatch(
            f"the server answered initialize with protocol version {version!r}; this client offered"
            f" {offered} and speaks {list(LEGACY_VERSIONS)} in the initialize era",
            offered=(offered,),
            answered=(version,),
        )
    return version


# ------------------------------------------------------- the procedure


@attrs.frozen
class SendProbe:
    """Send ``server/discover`` carrying ``version``.

    ``timed``: bound it by the probe timeout, and report silence with
    `Negotiator.probe_timed_out`; otherwise it gets the handshake's budget.
    """

    version: str
    timed: bool


@attrs.frozen
class SendInitialize:
    """Send ``initialize`` offering ``version`` (never cancel it)."""

    version: str


@attrs.frozen
class Restart:
    """The server died on the probe: start it again, and negotiate with a new
    `Negotiator` made with ``restarted=True`` (which sends ``initialize`` at once)."""


@attrs.frozen
class Negotiated:
    """Done: the era, the version, and the answer that settled it.

    ``discover`` is the ``DiscoverResult`` of the 2026-07-28 era (`None` when
    the server would not describe itself); ``initialize`` the
    ``InitializeResult`` of the initialize era.
    """

    era: Literal["modern", "legacy"]
    version: str
    discover: dict[str, JSON] | None = None
    initialize: dict[str, JSON] | None = None


@attrs.frozen
class Fail:
    """Give up, raising ``error``."""

    error: BaseException


Step: TypeAlias = SendProbe | SendInitialize | Restart | Negotiated | Fail

_State: TypeAlias = Literal["new", "probing", "initializing", "switching", "done"]


class Negotiator:
    """The era negotiation as a state machine: what happened in, what to do out.

    Call `start`, do what the step says, and report its outcome with the
    method that matches (`probe_answered`, `probe_failed`, ...), until a step
    is `Negotiated` or `Fail`. Reporting something the negotiator did not ask
    for raises `RuntimeError` (a bug of the caller's).

    Args:
        protocol: ``"auto"``, a 2026-07-28-era version (probe only), or an
            initialize-era version (``initialize`` only).
        restarted: The server was started again after it died on the probe:
            skip the probe (``auto`` only: a pinned era never restarts).
    """

    def __init__(self, protocol: str, *, restarted: bool = False) -> None:
        if protocol != "auto" and protocol not in MODERN_VERSIONS + LEGACY_VERSIONS:
            raise ValueError(f"unknown protocol {protocol!r}")
        self.protocol = protocol
        self.restarted = restarted
        self._state: _State = "new"
        self._probe_version = MODERN_VERSIONS[0] if protocol in ("auto", *LEGACY_VERSIONS) else protocol
        self._offer = LEGACY_VERSIONS[0]
        self._probes = 0

    @property
    def state(self) -> str:
        """``"new"``, ``"probing"``, ``"initializing"``, ``"switching"`` or ``"done"``."""
        return self._state

    def _expect(self, *states: _State) -> None:
        if self._state not in states:
            raise RuntimeError(f"the negotiation is {self._state}, not {' or '.join(states)}")

    def _probe(self, version: str) -> SendProbe:
        self._state = "probing" if self._state != "switching" else "switching"
        self._probe_version = version
        self._probes += 1
        return SendProbe(version, timed=self.protocol == "auto" and self._state == "probing")

    def _initialize(self, version: str) -> SendInitialize:
        self._state = "initializing"
        self._offer = version
        return SendInitialize(version)

    def _done(self, step: Negotiated | Fail) -> Negotiated | Fail:
        self._state = "done"
        return step

    def start(self) -> Step:
        """The first step."""
        self._expect("new")
        if self.protocol in LEGACY_VERSIONS:
            return self._initialize(self.protocol)
        if self.restarted and self.protocol == "auto":
            return self._initialize(LEGACY_VERSIONS[0])
        return self._probe(self._probe_version)

    # ------------------------------------------------------------- probe

    def probe_answered(self, result: dict[str, JSON]) -> Step:
        """The probe got a result (the caller checks it parses as a ``DiscoverResult``;
        if it does not, report `probe_failed` with the `ProtocolError` instead)."""
        self._expect("probing", "switching")
        return self._judge(result, None)

    def probe_failed(self, error: MCPError) -> Step:
        """The probe got an error answer (`RpcError`), or a broken one (`ProtocolError`)."""
        self._expect("probing", "switching")
        return self._judge(None, error)

    def probe_timed_out(self) -> Step:
        """No answer to a timed probe within the probe timeout."""
        self._expect("probing")
        return self._judge(None, None)

    def probe_killed_server(self, error: MCPError) -> Step:
        """The server died (``error``, a `ServerGone`) while the probe was unanswered."""
        self._expect("probing", "switching")
        if self.protocol == "auto" and self._state == "probing" and not self.restarted:
            self._state = "done"
            return Restart()
        return self._done(Fail(error))

    def _judge(self, result: dict[str, JSON] | None, error: MCPError | None) -> Step:
        switching = self._state == "switching"
        requested = self._probe_version
        try:
            verdict = judge_probe(result, error, requested=requested)
        except VersionMismatch as exc:
            return self._done(Fail(exc))
        if isinstance(verdict, Modern):
            if verdict.retry and self._probes < 2:
                return self._probe(verdict.version)
            if verdict.retry:
                return self._done(
                    Fail(
                        VersionMismatch(
                            f"the server refused protocol version {verdict.version} too",
                            offered=MODERN_VERSIONS,
                            answered=(),
                        )
                    )
                )
            return self._done(Negotiated("modern", verdict.version, discover=verdict.discover))
        # The initialize era.
        if switching:
            # The server refused initialize as a 2026-07-28 server, then would
            # not describe itself either.
            why = error if error is not None else ProtocolError(f"server/discover: {verdict.why}")
            return self._done(Fail(why))
        if self.protocol != "auto":
            return self._done(
                Fail(
                    VersionMismatch(
                        f"the server does not speak protocol version {self.protocol}: {verdict.why}",
                        offered=(self.protocol,),
                    )
                )
            )
        return self._initialize(verdict.version)

    # -------------------------------------------------------- initialize

    def initialize_answered(self, result: dict[str, JSON]) -> Step:
        """``initialize`` got a result."""
        self._expect("initializing")
        try:
            version = check_initialize(result, self._offer)
        except (VersionMismatch, ProtocolError) as exc:
            return self._done(Fail(exc))
        return self._done(Negotiated("legacy", version, initialize=result))

    def initialize_failed(self, error: MCPError) -> Step:
        """``initialize`` got an error answer (or a broken one, or the server died)."""
        self._expect("initializing")
        if not isinstance(error, RpcError):
            return self._done(Fail(error))
        data = error.data if isinstance(error.data, dict) else {}
        listed = _strings(data.get("supported"))
        if error.code == UNSUPPORTED_PROTOCOL_VERSION and self.protocol == "auto" and listed is not None:
            # A modern server taken for legacy (it was slow to answer the
            # probe, say): it says so now.
            modern = _newest_shared(listed, MODERN_VERSIONS)
            if modern is not None:
                self._state = "switching"
                return self._probe(modern)
        if listed is not None:
            mismatch = VersionMismatch(
                f"the server refused initialize at {self._offer} ({error.message}); it supports {list(listed)}",
                offered=(self._offer,),
                answered=listed,
            )
            mismatch.__cause__ = error
            return self._done(Fail(mismatch))
        return self._done(Fail(error))
