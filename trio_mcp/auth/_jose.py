"""Signed JWTs for ``private_key_jwt`` client assertions and DPoP proofs, on `cryptography` alone.

Only what the client signs: a compact JWS over a JSON header and claims
with ES256 (P-256), ES384 (P-384) or RS256/PS256 (RSA), and the public JWK of
a key. Nothing here verifies a token: the client never needs to.

This module needs the ``auth`` extra (``pip install trio-mcp[auth]``); it is
imported only when a flow signs something, never by the plain HTTP path.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

__all__ = ["SigningKey", "generate_ec_key", "load_private_key"]

_CURVES: dict[str, tuple[type[ec.EllipticCurve], Any, int]] = {
    "ES256": (ec.SECP256R1, hashes.SHA256, 32),
    "ES384": (ec.SECP384R1, hashes.SHA384, 48),
}
_CURVE_NAMES = {"secp256r1": ("P-256", "ES256"), "secp384r1": ("P-384", "ES384")}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int_b64(value: int, length: int | None = None) -> str:
    size = length if length is not None else max(1, (value.bit_length() + 7) // 8)
    return _b64(value.to_bytes(size, "big"))


class SigningKey:
    """A private key that signs JWTs with one algorithm. Its ``repr`` shows the algorithm only."""

    def __init__(self, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey, alg: str) -> None:
        self._key = key
        self.alg = alg

    def __repr__(self) -> str:
        return f"<SigningKey {self.alg}>"

    def public_jwk(self) -> dict[str, str]:
        """The public half as a JWK (RFC 7517): never the private part."""
        if isinstance(self._key, ec.EllipticCurvePrivateKey):
            numbers = self._key.public_key().public_numbers()
            crv, _ = _CURVE_NAMES[self._key.curve.name]
            size = (self._key.curve.key_size + 7) // 8
            return {"kty": "EC", "crv": crv, "x": _int_b64(numbers.x, size), "y": _int_b64(numbers.y, size)}
        rsa_numbers = self._key.public_key().public_numbers()
        return {"kty": "RSA", "n": _int_b64(rsa_numbers.n), "e": _int_b64(rsa_numbers.e)}

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        """A compact JWS of ``claims``, with ``alg`` and any other ``header`` fields."""
        protected = {"alg": self.alg, **header}
        signing_input = (
            _b64(json.dumps(protected, separators=(",", ":")).encode())
            + "."
            + _b64(json.dumps(claims, separators=(",", ":")).encode())
        ).encode("ascii")
        if isinstance(self._key, ec.EllipticCurvePrivateKey):
            _, hash_type, size = _CURVES[self.alg]
            der = self._key.sign(signing_input, ec.ECDSA(hash_type()))
            r, s = decode_dss_signature(der)
            signature = r.to_bytes(size, "big") + s.to_bytes(size, "big")
        elif self.alg == "PS256":
            signature = self._key.sign(
                signing_input,
                padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32),
                hashes.SHA256(),
            )
        else:
            signature = self._key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        return signing_input.decode("ascii") + "." + _b64(signature)


def generate_ec_key(alg: str = "ES256") -> SigningKey:
    """A fresh key for ``alg`` (ES256 or ES384): the DPoP key of a flow."""
    curve, _, _ = _CURVES[alg]
    return SigningKey(ec.generate_private_key(curve()), alg)


def load_private_key(pem: str | bytes, alg: str | None = None) -> SigningKey:
    """A PEM private key (PKCS#8 or traditional) and its algorithm, ES256 for P-256 and RS256 for RSA by default."""
    data = pem.encode() if isinstance(pem, str) else pem
    key = serialization.load_pem_private_key(data, password=None)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        names = _CURVE_NAMES.get(key.curve.name)
        if names is None:
            raise ValueError(f"unsupported curve {key.curve.name}")
        if alg is not None and alg != names[1]:
            raise ValueError(f"a {names[0]} key signs {names[1]}, not {alg}")
        return SigningKey(key, names[1])
    if isinstance(key, rsa.RSAPrivateKey):
        if alg not in (None, "RS256", "PS256"):
            raise ValueError(f"an RSA key signs RS256 or PS256, not {alg}")
        return SigningKey(key, alg or "RS256")
    raise ValueError("unsupported key type: give an EC (P-256, P-384) or RSA private key")
