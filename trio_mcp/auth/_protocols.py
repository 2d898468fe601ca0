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

from collections.abc import Iterable, Mapping
from contextlib import AbstractAsyncContextManager  # noqa: TC003 (the docs resolve the annotation)
from types import MappingProxyType
from typing import Protocol, runtime_checkable

import attrs
import trio

__all__ = [
    "ClientInfo",
    "MemoryTokenStorage",
    "PendingRedirect",
    "RedirectHandler",
    "TokenStorage",
    "Tokens",
]


def _string_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _frozen_mapping(value: Mapping[str, object]) -> Mapping[str, object]:
    return MappingProxyType(dict(value))


@attrs.frozen
class ClientInfo:
    """A client's registration at one authorization server.

    Attributes:
        client_id: The client identifier (for a Client ID Metadata Document,
            the document's HTTPS URL).
        client_secret: The client secret, or `None` for a public client.
            Never shown in the ``repr``.
        token_endpoint_auth_method: How the client authenticates at the token
            endpoint: ``"none"``, ``"client_secret_basic"``,
            ``"client_secret_post"`` or ``"private_key_jwt"``.
        redirect_uris: The redirect URIs registered for the client.
        issuer: The issuer of the authorization server the registration
            belongs to.
        extra: Any other fields the registration response carried (values
            the server substituted or added, RFC 7591 §3.2.1).
    """

    client_id: str
    client_secret: str | None = attrs.field(default=None, repr=False)
    token_endpoint_auth_method: str = "none"
    redirect_uris: tuple[str, ...] = attrs.field(default=(), converter=_string_tuple)
    issuer: str = ""
    extra: Mapping[str, object] = attrs.field(
        factory=dict, converter=_frozen_mapping, repr=False, eq=False, hash=False
    )


@attrs.frozen
class Tokens:
    """What a token endpoint granted.

    Attributes:
        access_token: The access token. Never shown in the ``repr``.
        token_type: ``"Bearer"`` or ``"DPoP"``.
        refresh_token: The refresh token, or `None`. Never shown in the ``repr``.
        scope: The scope granted (space-separated), or `None` when the server
            did not say (then it is the scope requested).
        expires_at: When the access token expires, in seconds since the epoch
            (wall clock, absolute), or `None` when the server did not say.
    """

    access_token: str = attrs.field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = attrs.field(default=None, repr=False)
    scope: str | None = None
    expires_at: float | None = None


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

    async def forget(self, resource: str, issuer: str | None = None) -> None:
        """Drop what is kept for ``resource`` (at ``issuer`` alone, if given)."""
        await trio.lowlevel.checkpoint()
        for key in [k for k in self._clients if k[0] == resource and issuer in (None, k[1])]:
            del self._clients[key]
        for tkey in [k for k in self._tokens if k[0] == resource and issuer in (None, k[1])]:
            del self._tokens[tkey]
