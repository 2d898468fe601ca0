"""Every JWT the flows sign, verified by an independent JOSE library (joserfc), not by our conventions.

Each algorithm a client key can sign with is reached through the public
API (``private_key=`` with ``alg=`` and ``kid=``, or a ``signer``), and the
client assertion a flow sends is checked as an authorization server would:
signature, ``alg`` and ``kid`` in the header, RFC 7523 claims.
"""

from __future__ import annotations

import time
import warnings
from urllib.parse import parse_qsl

import httpx2
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from joserfc import jwt
from joserfc.errors import SecurityWarning
from joserfc.jwk import ECKey, OKPKey, RSAKey

from trio_mcp.auth import AuthorizationFailed, ClientCredentials
from trio_mcp.auth._jose import ALGORITHMS, load_private_key, sign_with

MCP = "https://mcp.example.com/mcp"
ISSUER = "https://as.example.com"


def pem_of(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def public_pem(key) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def key_for(alg: str):
    if alg == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if alg == "ES384":
        return ec.generate_private_key(ec.SECP384R1())
    if alg == "ES512":
        return ec.generate_private_key(ec.SECP521R1())
    if alg in ("Ed25519", "EdDSA"):
        return ed25519.Ed25519PrivateKey.generate()
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def decode(token: str, key, alg: str):
    """joserfc's verification; EdDSA is an old name (RFC 9864), allowed here on purpose."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        return jwt.decode(token, key, algorithms=[alg])


def verifier_for(alg: str, key):
    """The public key as joserfc reads it from PEM: nothing of our JWK code."""
    if alg.startswith("ES"):
        return ECKey.import_key(public_pem(key))
    if alg in ("Ed25519", "EdDSA"):
        return OKPKey.import_key(public_pem(key))
    return RSAKey.import_key(public_pem(key))


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_every_algorithm_signs_what_joserfc_verifies(alg):
    key = key_for(alg)
    signing = load_private_key(pem_of(key), alg, kid="key-7")
    token = signing.sign({"iss": "c", "sub": "c", "aud": ISSUER, "exp": 4102444800}, typ="JWT")
    verified = decode(token, verifier_for(alg, key), alg)
    assert verified.header["alg"] == alg
    assert verified.header["kid"] == "key-7"
    assert verified.claims["aud"] == ISSUER
    # Our public JWK is the same key, as joserfc reads it.
    imported = {"EC": ECKey, "OKP": OKPKey, "RSA": RSAKey}[signing.public_jwk()["kty"]].import_key(
        signing.public_jwk()
    )
    assert imported.thumbprint() == verifier_for(alg, key).thumbprint()


@pytest.mark.parametrize("bits", [1024, 1536, 2040])
def test_rsa_keys_under_2048_bits_are_refused(bits):
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    with pytest.raises(ValueError, match="2048"):
        load_private_key(pem_of(key))
    with pytest.raises(ValueError, match="2048"):
        ClientCredentials(MCP, client_id="c", private_key=pem_of(key))


def test_an_algorithm_the_key_cannot_sign_is_refused():
    with pytest.raises(ValueError, match="Ed25519"):
        load_private_key(pem_of(ed25519.Ed25519PrivateKey.generate()), "ES256")
    with pytest.raises(ValueError, match="RSA"):
        load_private_key(pem_of(key_for("RS256")), "ES512")


@pytest.mark.parametrize("alg", ["ES256", "PS384", "Ed25519"])
def test_a_signer_callable_for_a_key_kept_elsewhere(alg):
    key = key_for(alg)

    def signer(data: bytes) -> bytes:  # a key store's "sign these bytes"
        if alg == "ES256":
            r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
            return r.to_bytes(32, "big") + s.to_bytes(32, "big")
        if alg in ("Ed25519", "EdDSA"):
            return key.sign(data)
        return key.sign(data, padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=48), hashes.SHA384())

    token = sign_with(signer, alg, {"iss": "c"}, kid="hsm-1", typ="JWT")
    verified = decode(token, verifier_for(alg, key), alg)
    assert verified.header["kid"] == "hsm-1"
    with pytest.raises(ValueError, match="unsupported algorithm"):
        sign_with(signer, "HS256", {"iss": "c"})


def test_a_signer_needs_its_algorithm():
    with pytest.raises(ValueError, match="alg"):
        ClientCredentials(MCP, client_id="c", signer=lambda data: b"")


@pytest.mark.parametrize(
    ("alg", "use_signer"), [("PS256", False), ("ES384", False), ("Ed25519", True), ("EdDSA", False)]
)
async def test_the_client_assertion_a_flow_sends_verifies_as_rfc_7523_says(alg, use_signer):
    key = key_for(alg)
    sent: list[dict[str, str]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if path == "/mcp":
            if request.headers.get("authorization") == "Bearer AT":
                return httpx2.Response(200, json={})
            return httpx2.Response(401, headers={"www-authenticate": 'Bearer scope="read"'})
        if path == "/.well-known/oauth-protected-resource/mcp":
            return httpx2.Response(200, json={"resource": MCP, "authorization_servers": [ISSUER]})
        if path == "/.well-known/oauth-authorization-server":
            return httpx2.Response(
                200,
                json={
                    "issuer": ISSUER,
                    "token_endpoint": f"{ISSUER}/token",
                    "token_endpoint_auth_methods_supported": ["private_key_jwt"],
                    "grant_types_supported": ["client_credentials"],
                },
            )
        if path == "/token":
            sent.append(dict(parse_qsl(request.content.decode())))
            return httpx2.Response(200, json={"access_token": "AT", "token_type": "Bearer", "expires_in": 60})
        return httpx2.Response(404)

    transport = httpx2.MockTransport(handler)
    if use_signer:
        auth = ClientCredentials(
            MCP,
            client_id="robot",
            signer=key.sign,
            alg=alg,
            kid="k1",
            http_client=httpx2.AsyncClient(transport=transport),
        )
    else:
        auth = ClientCredentials(
            MCP,
            client_id="robot",
            private_key=pem_of(key),
            alg=alg,
            kid="k1",
            http_client=httpx2.AsyncClient(transport=transport),
        )
    async with httpx2.AsyncClient(transport=transport, auth=auth) as http:
        assert (await http.post(MCP, json={})).status_code == 200
    (form,) = sent
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert "client_id" not in form
    verified = decode(form["client_assertion"], verifier_for(alg, key), alg)
    assert verified.header["kid"] == "k1"
    claims = verified.claims
    assert claims["iss"] == claims["sub"] == "robot"
    assert claims["aud"] == ISSUER
    assert claims["exp"] > time.time()
    assert claims["jti"]


async def test_a_refused_assertion_is_a_typed_failure():
    key = key_for("ES256")

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/mcp":
            return httpx2.Response(401, headers={"www-authenticate": "Bearer"})
        if request.url.path == "/.well-known/oauth-protected-resource/mcp":
            return httpx2.Response(200, json={"resource": MCP, "authorization_servers": [ISSUER]})
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx2.Response(200, json={"issuer": ISSUER, "token_endpoint": f"{ISSUER}/token"})
        return httpx2.Response(401, json={"error": "invalid_client"})

    transport = httpx2.MockTransport(handler)
    auth = ClientCredentials(
        MCP,
        client_id="robot",
        private_key=pem_of(key),
        method="private_key_jwt",
        http_client=httpx2.AsyncClient(transport=transport),
    )
    async with httpx2.AsyncClient(transport=transport, auth=auth) as http:
        with pytest.raises(AuthorizationFailed) as info:
            await http.post(MCP, json={})
    assert info.value.error == "invalid_client"
