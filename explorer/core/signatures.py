"""Agent Card signatures (A2A v1.0 section 8.4): verify every entry under every payload form; sign.

Each `signatures[]` entry is a JWS with a detached payload. Which bytes that payload is depends
on who signed (see `explorer.core.card_forms`), so every entry is tried under every form (its
`forms`), and the report names the first form that matched, the served members that form leaves
unsigned, and the client stacks whose own verifiers accept the card (`accepted_by`, with the
members they disagree on: `card_forms.stacks`).

Verification refuses by construction what JWS verifiers get wrong: the algorithm allow-list is
explicit (never `none`, never HMAC, so a public key can never double as a MAC secret), symmetric
`oct` keys are never used, keys are looked up by `kid` only among keys the caller supplied (or a
jku set the caller chose to fetch, reported as such), sizes are capped before decoding, headers
are parsed strictly (duplicate members are refused, not last-wins), and every failure becomes a
status with a readable detail, never an exception. An unknown key or algorithm is
`unverifiable`; only a known key that does not verify under any form is `invalid`.

Keys are imported and signatures checked by `explorer.core.jwk` (cryptography underneath; no
HMAC, no `none` in it at all). Signing (the demo agents and the tests) uses joserfc, always with
an explicit `JWSRegistry`: its default one silently allows HS256 and refuses EdDSA. So what the
tests sign, one implementation, the verifier checks with another.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import functools
import hashlib
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from explorer.core import jwk
from explorer.core.card_forms import stacks
from explorer.core.card_forms.forms import (
    FORMS,
    member_is_signed,
    payload_bytes,
    payload_bytes_cached,
    payload_bytes_fast,
    unsigned_members,
)
from explorer.core.card_forms.stacks import STACK_FORM, STACKS, Disagreement
from explorer.core.card_forms.tracked import FormError
from explorer.core.jsonshape import mapping_of
from explorer.core.strict_json import StrictJsonError, describe_type
from explorer.core.strict_json import parse as strict_parse

if TYPE_CHECKING:
    from joserfc.jws import JWSRegistry

__all__ = [
    "ALLOWED_ALGS",
    "FORMS",
    "STACKS",
    "Disagreement",
    "FormError",
    "SignatureCheck",
    "SignatureReport",
    "generate_key",
    "jku_urls",
    "member_is_signed",
    "payload_bytes",
    "public_jwks",
    "sign_card",
    "signature_kids",
    "unsigned_members",
    "verify_card",
]

ALLOWED_ALGS: tuple[str, ...] = (
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
    "Ed25519",
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
)
MAX_PROTECTED_CHARS = 8 * 1024
MAX_SIGNATURE_CHARS = 4 * 1024
MAX_KEYS = 256

Status = Literal["verified", "invalid", "unverifiable", "unsigned"]
CheckStatus = Literal["verified", "invalid", "unverifiable"]
KeySource = Literal["user", "jku"]

# Forms no client stack verifies and that share no tree with one: tried only for a signature no
# other form verifies (on a catalogue of thousands of skills each tree costs a third of a second).
_ONLY_AS_A_LAST_RESORT = frozenset({"sdk-0.3"})
_KEY_TYPES = frozenset({"EC", "OKP", "RSA"})


# --------------------------------------------------------------------------------------------
# Keys.


def _import_key(data: Any) -> tuple[jwk.PublicJwk | None, str]:
    """A public-key-capable JWK from untrusted JSON, or None and why not."""
    if not isinstance(data, Mapping):
        return None, f"a key entry is {describe_type(data)}, not an object"
    kty = data.get("kty")
    if kty == "oct":
        return None, "a symmetric (oct) key is never used to verify a card"
    if kty not in _KEY_TYPES:
        return None, f"key type {kty!r} is not EC, OKP or RSA"
    if data.get("use") not in (None, "sig"):
        return None, "a key whose use is not 'sig' is not used for signatures"
    try:
        return jwk.import_public(data), ""
    except jwk.JwkError as exc:
        return None, f"a key could not be imported: {exc}"


class _KeyStore:
    """Keys by kid, with where each came from. Bad entries are skipped, never fatal."""

    def __init__(self) -> None:
        self.by_kid: dict[str, list[tuple[jwk.PublicJwk, KeySource]]] = {}
        self.skipped: list[str] = []

    def add_set(self, jwks: Any, source: KeySource) -> None:
        keys = mapping_of(jwks).get("keys")
        if not isinstance(keys, list):
            self.skipped.append("a key set is not a JWKS object with a keys array")
            return
        for entry in keys[:MAX_KEYS]:
            key, why = _import_key(entry)
            if key is None:
                self.skipped.append(why)
                continue
            kid = entry.get("kid")
            if isinstance(kid, str):
                self.by_kid.setdefault(kid, []).append((key, source))

    def find(self, kid: str) -> list[tuple[jwk.PublicJwk, KeySource]]:
        return list(self.by_kid.get(kid, ()))


@functools.cache
def _registry() -> JWSRegistry:
    from joserfc.jws import JWSRegistry
    from joserfc.registry import JWS_HEADER_REGISTRY, HeaderParameter

    # The header was already parsed and checked strictly; optional members only need to be
    # tolerated (PyJWT, under a2a-sdk, writes "jku": null when the signer passes None).
    lenient = {
        name: HeaderParameter(param.description, lambda _v: None)
        for name, param in JWS_HEADER_REGISTRY.items()
        if name not in ("alg", "crit", "b64")
    }
    registry = JWSRegistry(header_registry=lenient, algorithms=list(ALLOWED_ALGS), strict_check_header=False)
    registry.max_header_length = MAX_PROTECTED_CHARS
    registry.max_payload_length = 1 << 30
    registry.max_signature_length = MAX_SIGNATURE_CHARS
    return registry


def _verify(alg: str, protected: str, signature: bytes, payload: bytes, key: jwk.PublicJwk) -> bool:
    """RFC 7515 section 5.2 over the detached payload: the signing input is `protected.payload`."""
    encoded = base64.urlsafe_b64encode(payload).rstrip(b"=")
    return jwk.verify_jws(alg, protected.encode("ascii") + b"." + encoded, signature, key)


# --------------------------------------------------------------------------------------------
# Verification.


@dataclass(frozen=True)
class SignatureCheck:
    """The outcome of one `signatures[]` entry."""

    index: int
    alg: str | None
    kid: str | None
    status: CheckStatus
    form: str | None
    detail: str
    key_source: KeySource | None = None
    thumbprint: str | None = None  # RFC 7638 thumbprint of the key it verified under, when verified
    forms: tuple[str, ...] = ()  # every form it verifies under with that key (`form` is the first)
    accepted_by: tuple[str, ...] = ()  # the client stacks whose verifier takes this signature

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "alg": self.alg,
            "kid": self.kid,
            "status": self.status,
            "form": self.form,
            "forms": list(self.forms),
            "accepted_by": list(self.accepted_by),
            "detail": self.detail,
            "key_source": self.key_source,
            "thumbprint": self.thumbprint,
        }


@dataclass(frozen=True)
class SignatureReport:
    """The card's signature status: the best of its entries (verified > invalid > unverifiable)."""

    status: Status
    form: str | None
    alg: str | None
    kid: str | None
    key_source: KeySource | None
    checks: tuple[SignatureCheck, ...]
    unsigned_members: tuple[str, ...] = ()
    detail: str = ""
    accepted_by: tuple[str, ...] = ()
    disagreements: tuple[Disagreement, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The report's `card.signature` object (docs/ARCHITECTURE.md, docs/CONTRACT.md)."""
        return {
            "status": self.status,
            "form": self.form,
            "alg": self.alg,
            "kid": self.kid,
            "key_source": self.key_source,
            "detail": self.detail,
            "signatures": [c.to_json() for c in self.checks],
            "unsigned_members": list(self.unsigned_members),
            "accepted_by": list(self.accepted_by),
            "disagreements": [d.to_json() for d in self.disagreements],
        }


class _Bad(Exception):
    """One entry is unusable; `status` says whether that is its fault or ours."""

    def __init__(self, status: CheckStatus, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _header(protected: Any) -> dict[str, Any]:
    if not isinstance(protected, str):
        raise _Bad("invalid", f"protected is {describe_type(protected)}, not a base64url string")
    if len(protected) > MAX_PROTECTED_CHARS:
        # Refusing to read it is a limit of ours, not proof of tampering: no key was tried.
        raise _Bad(
            "unverifiable",
            f"the protected header is {len(protected)} characters, over the "
            f"{MAX_PROTECTED_CHARS} accepted, so it was not checked",
        )
    try:
        raw = jwk.b64url_decode(protected)
    except jwk.JwkError as exc:
        raise _Bad("invalid", f"the protected header: {exc}") from None
    try:
        header = strict_parse(raw, max_bytes=MAX_PROTECTED_CHARS, max_depth=8)
    except StrictJsonError as exc:
        raise _Bad("invalid", f"the protected header is not valid JSON: {exc}") from None
    if not isinstance(header, dict):
        raise _Bad("invalid", f"the protected header is {describe_type(header)}, not an object")
    return header


def _alg_refusal(alg: str) -> str:
    if alg.lower() == "none":
        return "alg 'none' is never accepted"
    if alg.upper().startswith("HS"):
        return f"HMAC algorithm {alg} is never accepted for a card (a public key is not a secret)"
    return f"algorithm {alg!r} is not in the allow-list ({', '.join(ALLOWED_ALGS)})"


class _Payloads:
    """Payload bytes per form, computed on first use; None where the form cannot apply.

    The SDK forms of a card are kept for the last few cards seen (keyed by the digest of its
    served form and its signatures in JCS), because one run verifies the same card once per
    attempt and a catalogue of thousands of skills costs about a second per SDK form, against
    tens of milliseconds for its JCS."""

    def __init__(self, card: Mapping[str, Any]) -> None:
        self.card = card
        self._cache: dict[str, bytes | None] = {}
        self._trees: dict[Any, Any] = {}
        self.why_not: dict[str, str] = {}
        self._key: bytes | None = None

    def _seen(self) -> dict[str, bytes | str] | None:
        if self._key is None:
            from explorer.core.canonical import CanonicalError, canonicalize

            served = self.get("served")  # the card without signatures, in JCS
            if served is None:
                return None
            try:
                signed_by = canonicalize(self.card.get("signatures"))
            except (CanonicalError, TypeError, ValueError, RecursionError):
                return None
            self._key = hashlib.sha256(served + b"\0" + signed_by).digest()
        with _SEEN_LOCK:
            if self._key not in _SEEN:
                _SEEN[self._key] = {}
                while len(_SEEN) > _SEEN_CARDS:
                    _SEEN.popitem(last=False)
            _SEEN.move_to_end(self._key)
            return _SEEN[self._key]

    def get(self, form: str) -> bytes | None:
        if form not in self._cache:
            seen = self._seen() if form != "served" else None
            known = seen.get(form) if seen is not None else None
            if isinstance(known, bytes):
                self._cache[form] = known
            elif isinstance(known, str):
                self._cache[form] = None
                self.why_not[form] = known
            else:
                self._build(form)
                if seen is not None:
                    payload = self._cache[form]
                    seen[form] = payload if payload is not None else self.why_not[form]
        return self._cache[form]

    def _build(self, form: str) -> None:
        try:
            payload = payload_bytes_cached(self.card, form, self._trees)
            # Forms often give the same bytes (a v1.0 card's three SDK forms): keep one copy.
            self._cache[form] = next((p for p in self._cache.values() if p == payload), payload)
        except FormError as exc:
            self._cache[form] = None
            self.why_not[form] = str(exc)
        except Exception as exc:  # a normalizer bug must cost one form, never the whole check
            self._cache[form] = None
            self.why_not[form] = f"internal error building this form: {type(exc).__name__}: {exc}"


_SEEN_CARDS = 4
_SEEN: OrderedDict[bytes, dict[str, bytes | str]] = OrderedDict()
_SEEN_LOCK = threading.Lock()


def _check(
    index: int,
    entry: Any,
    payloads: _Payloads,
    store: _KeyStore,
    jku_store: Callable[[str], _KeyStore | None],
) -> SignatureCheck:
    alg: str | None = None
    kid: str | None = None
    try:
        if not isinstance(entry, Mapping):
            raise _Bad("invalid", f"the entry is {describe_type(entry)}, not an object")
        header = _header(entry.get("protected"))
        alg = header.get("alg") if isinstance(header.get("alg"), str) else None
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        # The allow-list comes first: an algorithm we refuse (alg none, HMAC) is unverifiable,
        # whatever its signature member looks like, never "tampered".
        if alg is None:
            raise _Bad("invalid", "the protected header has no alg string")
        if alg not in ALLOWED_ALGS:
            raise _Bad("unverifiable", _alg_refusal(alg))
        signature = entry.get("signature")
        if not isinstance(signature, str) or not signature:
            what = "empty" if signature == "" else describe_type(signature)
            raise _Bad("invalid", f"signature is {what}, not a base64url string")
        try:
            raw_signature = jwk.b64url_decode(signature) if len(signature) <= MAX_SIGNATURE_CHARS else None
        except jwk.JwkError:
            raw_signature = None
        if raw_signature is None:
            raise _Bad("invalid", "signature is not base64url of a plausible length")
        if "crit" in header or "b64" in header:
            raise _Bad("unverifiable", "the protected header uses crit or b64, not used by card signatures")
        if "kid" not in header:
            raise _Bad("unverifiable", "the protected header has no kid, so no key can be chosen")
        if kid is None:
            raise _Bad("unverifiable", f"kid is {describe_type(header['kid'])}, not a string")
        candidates = store.find(kid)
        jku = header.get("jku")
        if isinstance(jku, str):
            fetched = jku_store(jku)
            if fetched is not None:
                candidates += fetched.find(kid)
        if not candidates:
            where = f"; the card points to jku {jku}" if isinstance(jku, str) else ""
            raise _Bad("unverifiable", f"no trusted key has kid {kid!r}{where}")
        return _try_keys(index, alg, kid, entry["protected"], raw_signature, candidates, payloads)
    except _Bad as bad:
        return SignatureCheck(index, alg, kid, bad.status, None, bad.detail)


def _try_keys(
    index: int,
    alg: str,
    kid: str,
    protected: str,
    signature: bytes,
    candidates: list[tuple[jwk.PublicJwk, KeySource]],
    payloads: _Payloads,
) -> SignatureCheck:
    reasons: list[str] = []
    for key, source in candidates:
        unusable = jwk.usable_with(key, alg)  # its type, curve, own alg or key_ops rule it out
        if unusable:
            reasons.append(f"{unusable} (kid {kid!r})")
            continue
        verified: list[str] = []
        for form in FORMS:
            if verified and form in _ONLY_AS_A_LAST_RESORT:
                continue
            payload = payloads.get(form)
            if payload is None:
                continue
            try:
                if _verify(alg, protected, signature, payload, key):
                    verified.append(form)
            except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
                reasons.append(f"cannot verify: {exc}")
                break
        if verified:
            origin = "a key you supplied" if source == "user" else "the key from the card's own jku"
            return SignatureCheck(
                index,
                alg,
                kid,
                "verified",
                verified[0],
                f"verified with {origin} over the {verified[0]} payload",
                source,
                key.thumbprint(),
                tuple(verified),
            )
    tried = ", ".join(f for f in FORMS if payloads.get(f) is not None)
    detail = f"does not verify with the key for kid {kid!r} under any payload form ({tried})"
    if reasons:
        detail += "; " + "; ".join(dict.fromkeys(reasons))
    if payloads.why_not:
        detail += "; not applicable: " + "; ".join(f"{f} ({why})" for f, why in payloads.why_not.items())
    return SignatureCheck(index, alg, kid, "invalid", None, detail[:2000], candidates[0][1])


def verify_card(
    card_doc: Mapping[str, Any],
    keys: Mapping[str, Any] | None = None,
    *,
    jku_keys: Mapping[str, Mapping[str, Any]] | None = None,
) -> SignatureReport:
    """Check every signature of a card against the supplied keys, under every payload form.

    `keys` is the user's JWKS ({"keys": [...]}); `jku_keys` maps a jku URL to the JWKS the caller
    fetched from it. Never raises for anything inside the card or the key sets."""
    if not isinstance(card_doc, Mapping):
        return SignatureReport("unsigned", None, None, None, None, (), (), "not a card object")
    sigs = card_doc.get("signatures")
    if sigs is None or sigs == []:
        return SignatureReport("unsigned", None, None, None, None, (), (), "the card carries no signatures")
    if not isinstance(sigs, list):
        return SignatureReport(
            "invalid", None, None, None, None, (), (), f"signatures is {describe_type(sigs)}, not an array"
        )
    store = _KeyStore()
    if keys is not None:
        store.add_set(keys, "user")
    jku_stores: dict[str, _KeyStore] = {}

    def jku_store(url: str) -> _KeyStore | None:
        if jku_keys is None or url not in jku_keys:
            return None
        if url not in jku_stores:
            jku_stores[url] = _KeyStore()
            jku_stores[url].add_set(jku_keys[url], "jku")
        return jku_stores[url]

    payloads = _Payloads(card_doc)
    checks, refused = _stack_checks(sigs, payloads, store, jku_store)
    accepted_by = tuple(s for s in STACKS if any(s in c.accepted_by for c in checks))

    def accepted_after(other: Mapping[str, Any]) -> tuple[str, ...]:
        again, _ = _stack_checks(sigs, _Payloads(other), store, jku_store)
        return tuple(s for s in STACKS if any(s in c.accepted_by for c in again))

    disagreements = stacks.explain(card_doc, accepted_by, refused, payloads.why_not, accepted_after)
    for status in ("verified", "invalid", "unverifiable"):
        best = next((c for c in checks if c.status == status), None)
        if best is None:
            continue
        unsigned: tuple[str, ...] = ()
        if best.form is not None:
            unsigned = unsigned_members(card_doc, best.form)
        detail = f"signature {best.index}: {best.detail}"
        return SignatureReport(
            best.status,
            best.form,
            best.alg,
            best.kid,
            best.key_source,
            checks,
            unsigned,
            detail,
            accepted_by,
            disagreements,
        )
    raise AssertionError("unreachable: every check has a status")


def _stack_checks(
    sigs: list[Any],
    payloads: _Payloads,
    store: _KeyStore,
    jku_store: Callable[[str], _KeyStore | None],
) -> tuple[tuple[SignatureCheck, ...], dict[str, tuple[int, str]]]:
    """Every entry checked under every form, with the client stacks that take it; and for each
    stack whose form a signature verified under but whose verifier refuses its header, which
    signature and why."""
    checks: list[SignatureCheck] = []
    refused: dict[str, tuple[int, str]] = {}
    for index, entry in enumerate(sigs):
        check = _check(index, entry, payloads, store, jku_store)
        if check.status == "verified":
            header = _header(entry["protected"])  # it parsed once already
            takes: list[str] = []
            for stack in STACKS:
                if STACK_FORM[stack] not in check.forms:
                    continue
                why = stacks.header_refusal(stack, header, entry)
                if why is None and stack == "a2a-python" and payloads.get(STACK_FORM[stack]) == b"null":
                    why = "the Python SDK's payload for this card is null, which PyJWT refuses as a payload"
                if why is None:
                    takes.append(stack)
                else:
                    refused.setdefault(stack, (index, why))
            check = dataclasses.replace(check, accepted_by=tuple(takes))
        checks.append(check)
    return tuple(checks), refused


def _protected_headers(card_doc: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The readable protected headers of the card's signatures, in order."""
    sigs = mapping_of(card_doc).get("signatures")
    for entry in sigs if isinstance(sigs, list) else ():
        if not isinstance(entry, Mapping):
            continue
        try:
            yield _header(entry.get("protected"))
        except _Bad:
            continue


def _distinct(card_doc: Mapping[str, Any], member: str) -> list[str]:
    found: list[str] = []
    for header in _protected_headers(card_doc):
        value = header.get(member)
        if isinstance(value, str) and value not in found:
            found.append(value)
    return found


def jku_urls(card_doc: Mapping[str, Any]) -> list[str]:
    """The distinct `jku` URLs named by the card's protected headers, in order."""
    return _distinct(card_doc, "jku")


def signature_kids(card_doc: Mapping[str, Any]) -> list[str]:
    """The distinct `kid`s named by the card's protected headers, in order."""
    return _distinct(card_doc, "kid")


# --------------------------------------------------------------------------------------------
# Signing (the demo agents and the tests).

_CURVES = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}


def generate_key(alg: str = "ES256", *, kid: str | None = None) -> Any:
    """A new private key for `alg`, with `alg`, `use: sig` and `kid` (default: its thumbprint)."""
    if alg not in ALLOWED_ALGS:
        raise ValueError(f"cannot generate a key for {alg!r}; choose one of {', '.join(ALLOWED_ALGS)}")
    from joserfc.jwk import ECKey, KeyParameters, OKPKey, RSAKey

    params: KeyParameters = {"alg": alg, "use": "sig"}
    if kid is not None:
        params["kid"] = kid
    key: Any
    if alg in _CURVES:
        key = ECKey.generate_key(_CURVES[alg], parameters=params, private=True)
    elif alg in ("EdDSA", "Ed25519"):
        key = OKPKey.generate_key("Ed25519", parameters=params, private=True)
    else:
        key = RSAKey.generate_key(2048, parameters=params, private=True)
    key.ensure_kid()
    return key


def public_jwks(*keys: Any) -> dict[str, Any]:
    """A JWKS with the public halves of the given keys."""
    return {"keys": [key.as_dict(private=False) for key in keys]}


def sign_card(
    card_doc: Mapping[str, Any],
    key: Any,
    *,
    kid: str,
    alg: str = "ES256",
    jku: str | None = None,
    form: str = "served",
) -> dict[str, Any]:
    """A copy of the card with one more signature over its `form` payload."""
    from joserfc import jws

    header: dict[str, Any] = {"alg": alg, "kid": kid, "typ": "JOSE"}
    if jku is not None:
        header["jku"] = jku
    payload = payload_bytes_fast(card_doc, form)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        token = jws.serialize_compact(header, payload, key, registry=_registry())
    protected, _, signature = token.split(".")
    signed = copy.deepcopy(dict(card_doc))
    existing = signed.get("signatures")
    signed["signatures"] = [
        *(existing if isinstance(existing, list) else []),
        {"protected": protected, "signature": signature},
    ]
    return signed
