"""Public JSON Web Keys for checking signatures: import, RFC 7638 thumbprint, JWS verify.

Every signature the explorer checks with a JWK (a card's `signatures[]`, RFC 7515 with a
detached payload) is verified here; `cryptography` does the arithmetic, as it does under every
JOSE library. What is left for this module is small and fixed by the RFCs:

- a JWK's public members to a `cryptography` key: EC (RFC 7518 section 6.2.1: `crv`, `x`,
  `y`), RSA (section 6.3.1: `n`, `e`) and OKP (RFC 8037 section 2: `crv`, `x`). Private members
  are never read. cryptography refuses a point that is not on its curve and an RSA modulus or
  exponent that cannot be one; sizes are capped before any arithmetic;
- an algorithm to its key type, curve, hash and padding: ES256/384/512 (RFC 7518 section 3.4,
  with the raw `r || s` signature of exactly twice the coordinate size), RS*/PS* (sections 3.3
  and 3.5, PSS with MGF1 and a salt as long as the hash), EdDSA (RFC 8037 section 3.1) and the
  fully specified Ed25519/Ed448 (RFC 9864). HMAC and `none` are not here at all, so no caller
  can be talked into them;
- the key's own limits: `alg` when it names one, `use` when present must be `sig`, and
  `key_ops` when present must include `verify` (RFC 7517 section 4).

Why not joserfc, which the explorer still uses to *sign* (the demo agents, keygen, tests)?
Importing its key module pulls in cryptography's X.509 machinery for certificates the explorer
never reads: about 25 ms, a sixth of a whole `verify` process, and the largest single import of
the interview child the TUI starts (bench/startup.py, bench/open_to_verdict.py). Verifying with
one implementation what another signed is also a standing cross-check: the tests verify here
what joserfc and the official a2a-sdk (PyJWT) signed, and compare thumbprints with joserfc's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "JwkError",
    "PublicJwk",
    "b64url_decode",
    "import_public",
    "thumbprint",
    "usable_with",
    "verify_jws",
]

MAX_RSA_BITS = 16384  # OpenSSL's own ceiling for RSA public operations
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_EC_SIZES = {"P-256": 32, "P-384": 48, "P-521": 66}
_OKP_SIZES = {"Ed25519": 32, "Ed448": 57}
_REQUIRED = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}

# alg -> (kty, the curves it takes or None for any RSA key, hash name or None, padding)
_ALGS: dict[str, tuple[str, tuple[str, ...] | None, str | None, str | None]] = {
    "ES256": ("EC", ("P-256",), "SHA256", None),
    "ES384": ("EC", ("P-384",), "SHA384", None),
    "ES512": ("EC", ("P-521",), "SHA512", None),
    "RS256": ("RSA", None, "SHA256", "pkcs1v15"),
    "RS384": ("RSA", None, "SHA384", "pkcs1v15"),
    "RS512": ("RSA", None, "SHA512", "pkcs1v15"),
    "PS256": ("RSA", None, "SHA256", "pss"),
    "PS384": ("RSA", None, "SHA384", "pss"),
    "PS512": ("RSA", None, "SHA512", "pss"),
    "EdDSA": ("OKP", ("Ed25519", "Ed448"), None, None),
    "Ed25519": ("OKP", ("Ed25519",), None, None),
    "Ed448": ("OKP", ("Ed448",), None, None),
}


class JwkError(ValueError):
    """A key that cannot be imported, or cannot be used with the algorithm asked for."""


class PublicJwk:
    """A JWK's public key, the members it was given with, and its RFC 7638 thumbprint."""

    __slots__ = ("crv", "kty", "members", "native")

    def __init__(self, members: Mapping[str, Any], kty: str, crv: str | None, native: Any) -> None:
        self.members = dict(members)
        self.kty = kty
        self.crv = crv
        self.native = native  # a cryptography public key

    def get(self, name: str) -> Any:
        return self.members.get(name)

    def thumbprint(self) -> str:
        return thumbprint(self.members)

    def __repr__(self) -> str:
        return f"PublicJwk(kty={self.kty!r}, crv={self.crv!r}, kid={self.members.get('kid')!r})"


def b64url_decode(text: str) -> bytes:
    """Strict unpadded base64url (RFC 7515 section 2): only `A-Z a-z 0-9 - _`, a possible
    length. JwkError (a ValueError) says which rule it broke."""
    if _B64URL.fullmatch(text) is None:
        raise JwkError("it is not base64url (only A-Z a-z 0-9 - _ and no padding)")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise JwkError(f"it is not valid base64url ({exc})") from None


def _b64(members: Mapping[str, Any], name: str, most: int) -> bytes:
    text = members.get(name)
    if not isinstance(text, str):
        raise JwkError(f"member {name!r} is missing or not a string")
    if len(text) > most * 4 // 3 + 4:
        raise JwkError(f"member {name!r} is not base64url of a usable length ({len(text)} characters)")
    try:
        data = b64url_decode(text)
    except JwkError as exc:
        raise JwkError(f"member {name!r}: {exc}") from None
    if not data:
        raise JwkError(f"member {name!r} is empty")
    return data


def _uint(data: bytes) -> int:
    return int.from_bytes(data, "big")


def import_public(members: Any) -> PublicJwk:
    """The public key of an EC, RSA or OKP signature JWK. JwkError says why one is refused."""
    if not isinstance(members, Mapping):
        raise JwkError("a key is not a JSON object")
    kty = members.get("kty")
    if kty not in _REQUIRED:
        raise JwkError(f"key type {kty!r} is not EC, OKP or RSA")
    if members.get("use") not in (None, "sig"):
        raise JwkError(f"the key's use is {members.get('use')!r}, not 'sig'")
    key_ops = members.get("key_ops")
    if key_ops is not None and not (isinstance(key_ops, list) and all(isinstance(op, str) for op in key_ops)):
        raise JwkError("the key's key_ops is not a list of strings")
    alg = members.get("alg")
    if alg is not None and not isinstance(alg, str):
        raise JwkError("the key's alg is not a string")
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    crv = members.get("crv")
    try:
        if kty == "EC":
            if not isinstance(crv, str) or crv not in _EC_SIZES:
                raise JwkError(f"EC curve {crv!r} is not P-256, P-384 or P-521")
            size = _EC_SIZES[crv]
            x, y = _b64(members, "x", size), _b64(members, "y", size)
            if len(x) > size or len(y) > size:
                raise JwkError(f"a {crv} coordinate is longer than {size} bytes")
            curves: dict[str, ec.EllipticCurve] = {
                "P-256": ec.SECP256R1(),
                "P-384": ec.SECP384R1(),
                "P-521": ec.SECP521R1(),
            }
            curve = curves[crv]
            native: Any = ec.EllipticCurvePublicNumbers(_uint(x), _uint(y), curve).public_key()
        elif kty == "RSA":
            crv = None
            n = _b64(members, "n", MAX_RSA_BITS // 8)
            e = _b64(members, "e", 16)
            if _uint(n).bit_length() > MAX_RSA_BITS:
                raise JwkError(f"the RSA modulus is over {MAX_RSA_BITS} bits")
            native = rsa.RSAPublicNumbers(_uint(e), _uint(n)).public_key()
        else:
            if not isinstance(crv, str) or crv not in _OKP_SIZES:
                raise JwkError(f"OKP curve {crv!r} is not a signature curve (Ed25519 or Ed448)")
            size = _OKP_SIZES[crv]
            x = _b64(members, "x", size)
            if len(x) != size:
                raise JwkError(f"an {crv} key is {size} bytes, this one is {len(x)}")
            okp = ed25519.Ed25519PublicKey if crv == "Ed25519" else ed448.Ed448PublicKey
            native = okp.from_public_bytes(x)
    except JwkError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # cryptography's refusal of the numbers
        raise JwkError(f"not a valid {kty} public key: {exc}") from None
    return PublicJwk(members, kty, crv, native)  # crv: checked above (None for RSA)


def thumbprint(members: Mapping[str, Any]) -> str:
    """RFC 7638 thumbprint (SHA-256, base64url): the required members, sorted, no whitespace."""
    required = _REQUIRED.get(members.get("kty"))  # type: ignore[arg-type]
    if required is None:
        raise JwkError(f"key type {members.get('kty')!r} has no thumbprint here")
    picked = {}
    for name in required:
        value = members.get(name)
        if not isinstance(value, str):
            raise JwkError(f"member {name!r} is missing or not a string")
        picked[name] = value
    text = json.dumps(picked, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    digest = hashlib.sha256(text.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def usable_with(key: PublicJwk, alg: str) -> str:
    """Why `key` may not verify an `alg` signature, or "" when it may."""
    spec = _ALGS.get(alg)
    if spec is None:
        return f"algorithm {alg!r} is not one this verifier implements"
    kty, curves, _hash, _padding = spec
    if key.kty != kty:
        return f"{alg} needs an {kty} key, the key is {key.kty}"
    if curves is not None and key.crv not in curves:
        return f"{alg} needs a key on {' or '.join(curves)}, the key is on {key.crv}"
    own_alg = key.get("alg")
    if isinstance(own_alg, str) and own_alg != alg:
        return f"the key is for {own_alg}, the signature says {alg}"
    key_ops = key.get("key_ops")
    if isinstance(key_ops, list) and "verify" not in key_ops:
        return "the key's key_ops do not include verify"
    return ""


def verify_jws(alg: str, signing_input: bytes, signature: bytes, key: PublicJwk) -> bool:
    """Whether `signature` is `key`'s `alg` signature over `signing_input` (RFC 7515 section 5.2).

    False for a signature that does not verify; JwkError when the key cannot be used with `alg`
    at all (another key type or curve, another `alg` of its own, `key_ops` without verify).
    """
    why = usable_with(key, alg)
    if why:
        raise JwkError(why)
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding, utils

    kty, _curves, hash_name, scheme = _ALGS[alg]
    try:
        if kty == "OKP":
            key.native.verify(signature, signing_input)
            return True
        digest = getattr(hashes, hash_name or "")()
        if kty == "EC":
            size = _EC_SIZES[key.crv or ""]
            if len(signature) != 2 * size:
                return False
            der = utils.encode_dss_signature(_uint(signature[:size]), _uint(signature[size:]))
            key.native.verify(der, signing_input, ec.ECDSA(digest))
            return True
        pad = (
            padding.PKCS1v15()
            if scheme == "pkcs1v15"
            else padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size)
        )
        key.native.verify(signature, signing_input, pad, digest)
        return True
    except InvalidSignature:
        return False
