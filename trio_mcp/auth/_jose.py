"""Signed JWTs for ``private_key_jwt`` client assertions and DPoP proofs, on `cryptography` alone.

Only what the client signs: a compact JWS over a JSON header and claims,
and the public JWK of a key. The algorithms (RFC 7518, RFC 8037): ES256,
ES384, ES512 (P-256, P-384, P-521); RS256, RS384, RS512, PS256, PS384,
PS512 (RSA of 2048 bits or more, RFC 7518 §3.3); Ed25519 (RFC 9864), or
its older name EdDSA (RFC 8037). Nothing
here verifies a token: the client never needs to.

This module needs the ``auth`` extra (``pip install trio-mcp[auth]``); it is
imported only when a flow signs something, never by the plain HTTP path.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, Final, TypeAlias

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

__all__ = ["ALGORITHMS", "Signer", "SigningKey", "generate_ec_key", "load_private_key", "sign_with"]

#: A function of the JWS signing input that returns the signature, in JWS form.
Signer: TypeAlias = Callable[[bytes], bytes]

#: The smallest RSA key accepted, in bits (RFC 7518 §3.3).
MIN_RSA_BITS: Final = 2048

_CURVES: dict[str, tuple[type[ec.EllipticCurve], Any, int]] = {
    "ES256": (ec.SECP256R1, hashes.SHA256, 32),
    "ES384": (ec.SECP384R1, hashes.SHA384, 48),
    "ES512": (ec.SECP521R1, hashes.SHA512, 66),
}
_CURVE_NAMES = {
    "secp256r1": ("P-256", "ES256"),
    "secp384r1": ("P-384", "ES384"),
    "secp521r1": ("P-521", "ES512"),
}
_RSA_HASHES: dict[str, Any] = {
    "RS256": hashes.SHA256,
    "RS384": hashes.SHA384,
    "RS512": hashes.SHA512,
    "PS256": hashes.SHA256,
    "PS384": hashes.SHA384,
    "PS512": hashes.SHA512,
}
#: Every algorithm a key can sign with here.
ALGORITHMS: Final = (*_CURVES, *_RSA_HASHES, "Ed25519", "EdDSA")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int_b64(value: int, length: int | None = None) -> str:
    size = length if length is not None else max(1, (value.bit_length() + 7) // 8)
    return _b64(value.to_bytes(size, "big"))


def _signing_input(alg: str, claims: dict[str, Any], header: dict[str, Any]) -> bytes:
    protected = {"alg": alg, **{k: v for k, v in header.items() if v is not None}}
    return (
        _b64(json.dumps(protected, separators=(",", ":")).encode())
        + "."
        + _b64(json.dumps(claims, separators=(",", ":")).encode())
    ).encode("ascii")


PrivateKey: TypeAlias = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey


class SigningKey:
    """A private key that signs JWTs with one algorithm. Its ``repr`` shows the algorithm and ``kid`` only."""

    def __init__(self, key: PrivateKey, alg: str, kid: str | None = None) -> None:
        self._key = key
        self.alg = alg
        self.kid = kid

    def __repr__(self) -> str:
        return f"<SigningKey {self.alg}{f' {self.kid!r}' if self.kid else ''}>"

    def public_jwk(self) -> dict[str, str]:
        """The public half as a JWK (RFC 7517, RFC 8037): never the private part."""
        if isinstance(self._key, ec.EllipticCurvePrivateKey):
            numbers = self._key.public_key().public_numbers()
            crv, _ = _CURVE_NAMES[self._key.curve.name]
            size = (self._key.curve.key_size + 7) // 8
            return {"kty": "EC", "crv": crv, "x": _int_b64(numbers.x, size), "y": _int_b64(numbers.y, size)}
        if isinstance(self._key, ed25519.Ed25519PrivateKey):
            raw = self._key.public_key().public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw
            )
            return {"kty": "OKP", "crv": "Ed25519", "x": _b64(raw)}
        rsa_numbers = self._key.public_key().public_numbers()
        return {"kty": "RSA", "n": _int_b64(rsa_numbers.n), "e": _int_b64(rsa_numbers.e)}

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        """A compact JWS of ``claims``, with ``alg``, the key's ``kid`` and any other ``header`` fields."""
        if self.kid is not None:
            header.setdefault("kid", self.kid)
        return sign_with(self._raw_sign, self.alg, claims, **header)

    def _raw_sign(self, signing_input: bytes) -> bytes:
        key = self._key
        if isinstance(key, ec.EllipticCurvePrivateKey):
            _, hash_type, size = _CURVES[self.alg]
            der = key.sign(signing_input, ec.ECDSA(hash_type()))
            r, s = decode_dss_signature(der)
            return r.to_bytes(size, "big") + s.to_bytes(size, "big")
        if isinstance(key, ed25519.Ed25519PrivateKey):
            return key.sign(signing_input)
        hash_type = _RSA_HASHES[self.alg]
        if self.alg.startswith("PS"):
            return key.sign(
                signing_input,
                padding.PSS(mgf=padding.MGF1(hash_type()), salt_length=hash_type.digest_size),
                hash_type(),
            )
        return key.sign(signing_input, padding.PKCS1v15(), hash_type())


def sign_with(
    signer: Signer, alg: str, claims: dict[str, Any], *, kid: str | None = None, **header: Any
) -> str:
    """A compact JWS of ``claims``, signed by ``signer`` (a function of the signing input) with ``alg``."""
    if alg not in ALGORITHMS:
        raise ValueError(f"unsupported algorithm {alg!r}: one of {', '.join(ALGORITHMS)}")
    if kid is not None:
        header.setdefault("kid", kid)
    signing_input = _signing_input(alg, claims, header)
    signature = signer(signing_input)
    if not isinstance(signature, bytes | bytearray):
        raise TypeError("a signer returns the signature as bytes")
    return signing_input.decode("ascii") + "." + _b64(bytes(signature))


def generate_ec_key(alg: str = "ES256") -> SigningKey:
    """A fresh key for ``alg`` (ES256, ES384 or ES512): the DPoP key of a flow."""
    curve, _, _ = _CURVES[alg]
    return SigningKey(ec.generate_private_key(curve()), alg)


def load_private_key(pem: str | bytes, alg: str | None = None, *, kid: str | None = None) -> SigningKey:
    """A PEM private key (PKCS#8 or traditional) and its algorithm.

    By default ES256, ES384 or ES512 by curve, RS256 for RSA, Ed25519 for
    an Ed25519 key (or its older name, EdDSA); ``alg`` chooses another the
    key can sign with. An RSA key
    under 2048 bits is refused (RFC 7518 §3.3), as is an algorithm the key
    cannot sign with (`ValueError`).
    """
    data = pem.encode() if isinstance(pem, str) else pem
    key = serialization.load_pem_private_key(data, password=None)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        names = _CURVE_NAMES.get(key.curve.name)
        if names is None:
            raise ValueError(f"unsupported curve {key.curve.name}")
        if alg is not None and alg != names[1]:
            raise ValueError(f"a {names[0]} key signs {names[1]}, not {alg}")
        return SigningKey(key, names[1], kid)
    if isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < MIN_RSA_BITS:
            raise ValueError(f"an RSA key of {key.key_size} bits is too small: {MIN_RSA_BITS} or more")
        if alg is not None and alg not in _RSA_HASHES:
            raise ValueError(f"an RSA key signs {', '.join(_RSA_HASHES)}, not {alg}")
        return SigningKey(key, alg or "RS256", kid)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        if alg not in (None, "Ed25519", "EdDSA"):
            raise ValueError(f"an Ed25519 key signs Ed25519 (or EdDSA), not {alg}")
        return SigningKey(key, alg or "Ed25519", kid)
    raise ValueError("unsupported key type: give an EC (P-256, P-384, P-521), RSA or Ed25519 private key")
