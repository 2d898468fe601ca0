"""The JWTs the flow signs (trio_mcp.auth._jose): verified here with cryptography's own verifiers."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from trio_mcp.auth._jose import generate_ec_key, load_private_key


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def split(token: str):
    head, body, sig = token.split(".")
    return json.loads(b64d(head)), json.loads(b64d(body)), f"{head}.{body}".encode(), b64d(sig)


def pem(key) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.mark.parametrize(
    ("alg", "curve", "hash_type", "size"),
    [("ES256", ec.SECP256R1, hashes.SHA256, 32), ("ES384", ec.SECP384R1, hashes.SHA384, 48)],
)
def test_ec_signature_verifies_with_the_public_jwk(alg, curve, hash_type, size):
    key = generate_ec_key(alg)
    jwk = key.public_jwk()
    assert "d" not in jwk
    token = key.sign({"jti": "j", "htm": "POST"}, typ="dpop+jwt", jwk=jwk)
    header, claims, signed, signature = split(token)
    assert header == {"alg": alg, "typ": "dpop+jwt", "jwk": jwk}
    assert claims == {"jti": "j", "htm": "POST"}
    assert len(signature) == 2 * size
    x, y = (int.from_bytes(b64d(jwk[c]), "big") for c in "xy")
    public = ec.EllipticCurvePublicNumbers(x, y, curve()).public_key()
    der = encode_dss_signature(
        int.from_bytes(signature[:size], "big"), int.from_bytes(signature[size:], "big")
    )
    public.verify(der, signed, ec.ECDSA(hash_type()))  # raises if wrong


def test_pem_ec_key_signs_es256():
    private = ec.generate_private_key(ec.SECP256R1())
    key = load_private_key(pem(private))
    assert key.alg == "ES256"
    assert "ES256" in repr(key)
    assert "PRIVATE" not in repr(key)
    _, _, signed, signature = split(key.sign({"iss": "c"}))
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    private.public_key().verify(der, signed, ec.ECDSA(hashes.SHA256()))


@pytest.mark.parametrize("alg", ["RS256", "PS256"])
def test_rsa_key_signs(alg):
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key = load_private_key(pem(private).encode(), alg if alg != "RS256" else None)
    assert key.alg == alg
    jwk = key.public_jwk()
    assert jwk["kty"] == "RSA"
    assert set(jwk) == {"kty", "n", "e"}
    _, _, signed, signature = split(key.sign({"iss": "c"}))
    if alg == "RS256":
        private.public_key().verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    else:
        private.public_key().verify(
            signature, signed, padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32), hashes.SHA256()
        )


def test_mismatched_algorithms_are_refused():
    with pytest.raises(ValueError, match="ES256"):
        load_private_key(pem(ec.generate_private_key(ec.SECP256R1())), "RS256")
    with pytest.raises(ValueError, match="RSA"):
        load_private_key(pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)), "ES256")
    with pytest.raises(ValueError, match="curve"):
        load_private_key(pem(ec.generate_private_key(ec.SECP224R1())))
