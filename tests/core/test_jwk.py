"""`explorer.core.jwk`: public JWKs and JWS signature checks, against the RFCs' own examples and
against two independent implementations (joserfc, which the demo agents sign with, and PyJWT,
which the official a2a-sdk signs with).

The RFC vectors are the published ones: RFC 7515 appendix A.3 (ES256) and A.4 (ES512), RFC 8037
appendix A.3/A.4 (Ed25519 key, thumbprint and signature), RFC 7638 section 3.1 (the RSA
thumbprint example). Every refusal a hostile key set can provoke is a `JwkError` with a reason,
never another exception.
"""

from __future__ import annotations

import base64
import warnings
from typing import Any

import jwt as pyjwt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joserfc import jws
from joserfc.jwk import ECKey, OKPKey, RSAKey
from joserfc.jws import JWSRegistry

from explorer.core import jwk
from explorer.core.signatures import ALLOWED_ALGS


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# RFC 7515 appendix A.3: ES256 over the A.1 payload.
A3_KEY = {
    "kty": "EC",
    "crv": "P-256",
    "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
}
A3_INPUT = (
    b"eyJhbGciOiJFUzI1NiJ9."
    b"eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
)
A3_SIGNATURE = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

# RFC 7515 appendix A.4: ES512 over "Payload".
A4_KEY = {
    "kty": "EC",
    "crv": "P-521",
    "x": "AekpBQ8ST8a8VcfVOTNl353vSrDCLLJXmPk06wTjxrrjcBpXp5EOnYG_NjFZ6OvLFV1jSfS9tsz4qUxcWceqwQGk",
    "y": "ADSmRA43Z1DSNx_RvcLI87cdL07l6jQyyBXMoxVg_l2Th-x3S1WDhjDly79ajL4Kkd0AZMaZmh9ubmf63e3kyMj2",
}
A4_INPUT = b"eyJhbGciOiJFUzUxMiJ9.UGF5bG9hZA"
A4_SIGNATURE = (
    "AdwMgeerwtHoh-l192l60hp9wAHZFVJbLfD_UxMi70cwnZOYaRI1bKPWROc-mZZqwqT2SI-KGDKB34XO0aw_7XdtAG8GaSwFKdCA"
    "PZgoXD2YBJZCPEX3xKpRwcdOO8KpEHwJjyqOgzDO7iKvU8vcnwNrmxYbSW9ERBXukOXolLzeO_Jn"
)

# RFC 8037 appendix A: the Ed25519 key, its thumbprint (A.3) and the EdDSA example (A.4).
ED_KEY = {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
ED_THUMBPRINT = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
ED_INPUT = b"eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"
ED_SIGNATURE = "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"

# RFC 7638 section 3.1.
RSA_7638 = {
    "kty": "RSA",
    "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_B"
    "JECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2Q"
    "vzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZ"
    "u0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
    "e": "AQAB",
    "alg": "RS256",
    "kid": "2011-04-29",
}


@pytest.mark.parametrize(
    ("alg", "key", "signing_input", "signature"),
    [
        ("ES256", A3_KEY, A3_INPUT, A3_SIGNATURE),
        ("ES512", A4_KEY, A4_INPUT, A4_SIGNATURE),
        ("EdDSA", ED_KEY, ED_INPUT, ED_SIGNATURE),
        ("Ed25519", ED_KEY, ED_INPUT, ED_SIGNATURE),  # RFC 9864's fully specified name, same bytes
    ],
)
def test_the_rfc_examples_verify_and_any_changed_byte_does_not(
    alg: str, key: dict[str, str], signing_input: bytes, signature: str
) -> None:
    public = jwk.import_public(key)
    raw = unb64(signature)
    assert jwk.verify_jws(alg, signing_input, raw, public) is True
    assert jwk.verify_jws(alg, signing_input + b" ", raw, public) is False
    flipped = bytes([raw[0] ^ 1]) + raw[1:]
    assert jwk.verify_jws(alg, signing_input, flipped, public) is False
    assert jwk.verify_jws(alg, signing_input, raw[:-1], public) is False  # a short signature is no signature


def test_the_rfc_thumbprints() -> None:
    assert jwk.thumbprint(RSA_7638) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    assert jwk.import_public(RSA_7638).thumbprint() == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    assert jwk.thumbprint(ED_KEY) == ED_THUMBPRINT
    assert jwk.thumbprint({**ED_KEY, "kid": "any", "use": "sig", "d": "private"}) == ED_THUMBPRINT


_REGISTRY = JWSRegistry(algorithms=list(ALLOWED_ALGS))


def _joserfc_key(alg: str) -> Any:
    if alg.startswith("ES"):
        return ECKey.generate_key({"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}[alg], private=True)
    if alg in ("EdDSA", "Ed25519"):
        return OKPKey.generate_key("Ed25519", private=True)
    return RSAKey.generate_key(2048, private=True)


_KEYS: dict[str, Any] = {}


def _key_for(alg: str) -> Any:
    family = "RSA" if alg[:2] in ("RS", "PS") else alg
    if family not in _KEYS:
        _KEYS[family] = _joserfc_key(alg)
    return _KEYS[family]


@settings(max_examples=60, deadline=None)
@given(alg=st.sampled_from(ALLOWED_ALGS), payload=st.binary(max_size=300))
def test_what_joserfc_signs_verifies_here_with_the_same_thumbprint(alg: str, payload: bytes) -> None:
    key = _key_for(alg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # joserfc calls EdDSA deprecated (RFC 9864)
        token = jws.serialize_compact({"alg": alg}, payload, key, registry=_REGISTRY)
    protected, encoded, signature = token.split(".")
    public = jwk.import_public(key.as_dict(private=False))
    assert public.thumbprint() == key.thumbprint()
    signing_input = f"{protected}.{encoded}".encode("ascii")
    assert jwk.verify_jws(alg, signing_input, unb64(signature), public) is True
    assert jwk.verify_jws(alg, signing_input + b"x", unb64(signature), public) is False


@pytest.mark.parametrize("alg", ["ES256", "ES384", "ES512", "RS256", "RS512", "PS256", "PS384", "EdDSA"])
def test_what_pyjwt_signs_as_the_a2a_sdk_does_verifies_here(alg: str) -> None:
    key = _key_for(alg)
    pem = key.as_pem(private=True)
    token = pyjwt.encode({"card": "bytes"}, pem, algorithm=alg, headers={"kid": "k"})
    protected, encoded, signature = token.split(".")
    public = jwk.import_public(key.as_dict(private=False))
    assert jwk.verify_jws(alg, f"{protected}.{encoded}".encode(), unb64(signature), public) is True


def test_a_key_is_never_used_with_another_algorithm_than_its_own() -> None:
    es256 = jwk.import_public(A3_KEY)
    with pytest.raises(jwk.JwkError, match="ES384 needs a key on P-384"):
        jwk.verify_jws("ES384", A3_INPUT, unb64(A3_SIGNATURE), es256)
    with pytest.raises(jwk.JwkError, match="RS256 needs an RSA key, the key is EC"):
        jwk.verify_jws("RS256", A3_INPUT, unb64(A3_SIGNATURE), es256)
    with pytest.raises(jwk.JwkError, match="not one this verifier implements"):
        jwk.verify_jws("HS256", A3_INPUT, unb64(A3_SIGNATURE), es256)  # a public key is no MAC secret
    with pytest.raises(jwk.JwkError, match="not one this verifier implements"):
        jwk.verify_jws("none", A3_INPUT, b"", es256)
    pinned = jwk.import_public({**A3_KEY, "alg": "ES384"})
    with pytest.raises(jwk.JwkError, match="the key is for ES384"):
        jwk.verify_jws("ES256", A3_INPUT, unb64(A3_SIGNATURE), pinned)
    encrypting_only = jwk.import_public({**A3_KEY, "key_ops": ["encrypt"]})
    with pytest.raises(jwk.JwkError, match="key_ops do not include verify"):
        jwk.verify_jws("ES256", A3_INPUT, unb64(A3_SIGNATURE), encrypting_only)
    allowed = jwk.import_public({**A3_KEY, "key_ops": ["verify"], "use": "sig", "alg": "ES256"})
    assert jwk.verify_jws("ES256", A3_INPUT, unb64(A3_SIGNATURE), allowed) is True


@pytest.mark.parametrize(
    ("members", "reason"),
    [
        ("not an object", "not a JSON object"),
        ({"kty": "oct", "k": "c2VjcmV0"}, "not EC, OKP or RSA"),
        ({**A3_KEY, "use": "enc"}, "not 'sig'"),
        ({**A3_KEY, "key_ops": "verify"}, "key_ops is not a list"),
        ({**A3_KEY, "crv": "P-192"}, "not P-256, P-384 or P-521"),
        ({**A3_KEY, "crv": "secp256k1"}, "not P-256, P-384 or P-521"),
        ({**A3_KEY, "x": 12}, "'x' is missing or not a string"),
        ({**A3_KEY, "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU="}, "not base64url"),
        ({**A3_KEY, "x": "f83O+3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"}, "not base64url"),
        ({**A3_KEY, "x": b64(b"\x01" * 33)}, "not base64url|longer than 32 bytes"),
        ({**A3_KEY, "y": b64(b"\x01" * 32)}, "not a valid EC public key"),  # not on the curve
        ({**A3_KEY, "x": ""}, "'x' is empty"),
        ({"kty": "OKP", "crv": "X25519", "x": ED_KEY["x"]}, "not a signature curve"),
        ({**ED_KEY, "x": b64(b"\x01" * 31)}, "32 bytes, this one is 31"),
        ({"kty": "RSA", "n": RSA_7638["n"], "e": "AQ"}, "not a valid RSA public key"),  # e = 1
        ({"kty": "RSA", "n": "AQAB", "e": "AQAB"}, "not a valid RSA public key"),
        ({"kty": "RSA", "n": b64(b"\xff" * 2049), "e": "AQAB"}, "not base64url|over 16384 bits"),
        ({"kty": "RSA", "e": "AQAB"}, "'n' is missing"),
    ],
)
def test_a_hostile_or_unusable_key_is_refused_with_a_reason(members: Any, reason: str) -> None:
    with pytest.raises(jwk.JwkError, match=reason):
        jwk.import_public(members)


def test_private_members_are_never_read_and_a_private_jwk_still_gives_its_public_key() -> None:
    private = _key_for("ES256").as_dict(private=True)
    public = jwk.import_public({**private, "d": "not even base64url!"})
    assert public.thumbprint() == _key_for("ES256").thumbprint()


def test_a_thumbprint_needs_the_required_members() -> None:
    with pytest.raises(jwk.JwkError, match="'y' is missing"):
        jwk.thumbprint({"kty": "EC", "crv": "P-256", "x": "abc"})
    with pytest.raises(jwk.JwkError, match="no thumbprint here"):
        jwk.thumbprint({"kty": "oct", "k": "abc"})
