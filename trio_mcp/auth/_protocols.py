"""What the authorization flow stores and what it asks of the application.

* `ClientInfo`: a client's registration at one authorization server
  (pre-registered, a Client ID Metadata Document, or dynamic registration);
* `Tokens`: what a token endpoint granted, with an absolute expiry;
* `TokenStorage`: where registrations and tokens live between requests,
  processes and restarts (`MemoryTokenStorage` keeps them for the life of the
  object);
* `RedirectHandler` and `PendingRedirect`: the user's part of the
  authorization code flow, that is, sending the user to the authorization
  URL and bringing back the parameters of the redirect.

Registrations and tokens are keyed by the protected resource and the issuer
of the authorization server, so that credentials from one authorization
server are never offered to another; tokens are also keyed by the client
they were issued to.

None of these objects shows a secret, a token or a code in its ``repr``.
"""

from __future__ import annotations

from collections.abc import Mapping  # noqa: TC003 (the docs resolve the annotation)
from contextlib import AbstractAsyncContextManager  # noqa: TC003 (the docs resolve the annotation)
from typing import Protocol, runtime_checkable

import trio

from .._core.oauth import ClientInfo as ClientInfo, Tokens as Tokens

__all__ = [
    "ClientInfo",
    "MemoryTokenStorage",
    "PendingRedirect",
    "RedirectHandler",
    "TokenStorage",
    "Tokens",
]


@runtime_checkable
class TokenStorage(Protocol):
    """Where the flow keeps registrations and tokens.

    Keys are the protected resource (the canonical URI of the MCP server)
    and the issuer of its authorization server; tokens are also keyed by the
    client they were issued to. An implementation may be shared by many
    clients and, for a persistent one, by many processes.
    """

    async def get_client(self, resource: str, issuer: str) -> ClientInfo | None:
        """The registration for ``resource`` at ``issuer``, or `None`."""
        ...

    async def set_client(self, resource: str, issuer: str, client: ClientInfo) -> None:
        """Keep ``client`` as the registration for ``resource`` at ``issuer``."""
        ...

    async def get_tokens(self, resource: str, issuer: str, client_id: str) -> Tokens | None:
        """The tokens ``issuer`` granted ``client_id`` for ``resource``, or `None`."""
        ...

    async def set_tokens(self, resource: str, issuer: str, client_id: str, tokens: Tokens) -> None:
        """Keep ``tokens`` (replacing any earlier ones) for ``resource``, ``issuer`` and ``client_id``."""
        ...

    async def forget(self, resource: str, issuer: str | None = None) -> None:
        """Drop the registrations and tokens of ``resource`` (at ``issuer`` alone, if given): a logout."""
        ...


@runtime_checkable
class PendingRedirect(Protocol):
    """A redirect being waited for: the URI the authorization server must send the user back to."""

    @property
    def redirect_uri(self) -> str:
        """The redirect URI, registered with the authorization server and sent in the authorization and token requests."""
        ...

    async def complete(self, authorization_url: str) -> Mapping[str, str]:
        """Send the user to ``authorization_url``; return the query parameters of the redirect back.

        The parameters are those of the callback (``code``, ``state``,
        ``iss``, or ``error``, ``error_description``); the flow checks them.
        """
        ...


@runtime_checkable
class RedirectHandler(Protocol):
    """The user's part of the authorization code flow.

    ``listen`` prepares to receive one redirect (binding a loopback listener,
    say) and gives a `PendingRedirect`; leaving the context, normally or by
    cancellation, stops listening.
    """

    def listen(self) -> AbstractAsyncContextManager[PendingRedirect]:
        """Prepare to receive one redirect; stop on leaving the context."""
        ...


class MemoryTokenStorage:
    """A `TokenStorage` that keeps everything in memory, for the life of the object.

    The default: nothing is written anywhere, and every new process logs in
    again. Share one instance between clients to share their logins.
    """

    def __init__(self) -> None:
        self._clients: dict[tuple[str, str], ClientInfo] = {}
        self._tokens: dict[tuple[str, str, str], Tokens] = {}

    def __repr__(self) -> str:
        return f"<MemoryTokenStorage: {len(self._clients)} clients, {len(self._tokens)} tokens>"

    async def get_client(self, resource: str, issuer: str) -> ClientInfo | None:
        """The registration for ``resource`` at ``issuer``, or `None`."""
        await trio.lowlevel.checkpoint()
        return self._clients.get((resource, issuer))

    async def set_client(self, resource: str, issuer: str, client: ClientInfo) -> None:
        """Keep ``client`` as the registration for ``resource`` at ``issuer``."""
        await trio.lowlevel.checkpoint()
        self._clients[(resource, issuer)] = client

    async def get_tokens(self, resource: str, issuer: str, client_id: str) -> Tokens | None:
        """The tokens ``issuer`` granted ``client_id`` for ``resource``, or `None`."""
        await trio.lowlevel.checkpoint()
        return self._tokens.get((resource, issuer, client_id))

    async def set_tokens(self, resource: str, issuer: str, client_id: str, tokens: Tokens) -> None:
        """Keep ``tokens`` for ``resource``, ``issuer`` and ``client_id``."""
        await trio.lowlevel.checkpoint()
        self._tokens[(resource, issuer, client_id)] = tokens

    async def resources(self) -> list[tuple[str, str]]:
        """The ``(resource, issuer)`` pairs that have a registration or tokens kept."""
        await trio.lowlevel.checkpoint()
        pairs = [*self._clients, *((r, i) for r, i, _ in self._tokens)]
        return list(dict.fromkeys(pairs))

    async def forget(self, resource: str, issuer: str | None = None) -> None:
        """Drop what is kept for ``resource`` (at ``issuer`` alone, if given)."""
        await trio.lowlevel.checkpoint()
        for key in [k for k in self._clients if k[0] == resource and issuer in (None, k[1])]:
            del self._clients[key]
        for tkey in [k for k in self._tokens if k[0] == resource and issuer in (None, k[1])]:
            del self._tokens[tkey]
