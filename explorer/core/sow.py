"""Agent SoW standing proposals: digest, nkey, provider signature, standing, clause grades.

A card's terms extension commits to proposals by `sha256:<hex>` over the JCS bytes of the whole
document (signatures included). The provider signature is not JWS: it is Ed25519 over
`agent-sow-v1\\n` + JCS(document minus `signatures`), with the public key written as a NATS nkey
(base32 of prefix byte 'U' + 32-byte key + CRC-16/XMODEM). See docs/PROTOCOL.md section 5 and
`tests/vectors/sow/README.md`.

`check_proposal` is pure: the network layer hands it the bytes it fetched (or the reason it could
not), and it returns a `ProposalCheck` with every step it took, so a screen can show why an entry
was rejected and the report can carry exactly the ProposalResult shape. All steps run even after
one fails (a digest mismatch with a valid signature tells a different story from one with a broken
signature); `status` names the first failure. Grades are reported exactly as written, never
upgraded or normalised. The signing half (`sign_proposal`, `encode_nkey`, `nkey_seed_keypair`) is
here too because the demo agents must produce exactly what the verifier checks. `cryptography`
is imported where a key is used, not with the module: a card that commits to no proposal never
pays for it.
"""

from __future__ import annotations

import base64
import binascii
import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from explorer.core.canonical import CanonicalError, canonicalize, digest
from explorer.core.findings import Finding, finding
from explorer.core.pointer import members
from explorer.core.strict_json import StrictJsonError, describe_type, lossy_integers, parse

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

SIGNING_PREFIX = b"agent-sow-v1\n"
NKEY_USER_PREFIX = 20 << 3  # the 'U' in a user public key
_NKEY_PREFIXES = {  # first base32 letter of other nkey kinds, for a precise wrong-prefix message
    0 << 3: "A (account)",
    2 << 3: "C (cluster)",
    13 << 3: "N (server)",
    14 << 3: "O (operator)",
    15 << 3: "P (private key)",
    18 << 3: "S (seed)",
    23 << 3: "X (curve)",
}
_NKEY_LENGTH = 56  # base32 of 35 bytes, which needs no padding
_BASE32 = re.compile(r"[A-Z2-7]*")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")

Status = Literal["verified", "unreachable", "digest_mismatch", "unsigned", "signature_invalid", "invalid"]
Step = tuple[str, bool, str]


class SowError(ValueError):
    """A key, signature or document that cannot be used; the message says exactly why."""


def _crc16_xmodem(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def encode_nkey(public_key: bytes) -> str:
    """A 32-byte Ed25519 public key as a NATS user nkey ('U...', 56 characters)."""
    if not isinstance(public_key, bytes | bytearray) or len(public_key) != 32:
        raise SowError("an Ed25519 public key is exactly 32 bytes")
    raw = bytes([NKEY_USER_PREFIX]) + bytes(public_key)
    raw += _crc16_xmodem(raw).to_bytes(2, "little")
    return base64.b32encode(raw).decode("ascii").rstrip("=")


def decode_nkey(key: Any) -> bytes:
    """The 32-byte Ed25519 public key inside a NATS user nkey; SowError says what is wrong."""
    if not isinstance(key, str):
        raise SowError(f"nkey must be a string, got {type(key).__name__}")
    if len(key) != _NKEY_LENGTH:
        raise SowError(f"nkey must be {_NKEY_LENGTH} characters, got {len(key)}")
    if not _BASE32.fullmatch(key):
        raise SowError("nkey must use only the base32 alphabet A-Z and 2-7 (uppercase, no padding)")
    raw = base64.b32decode(key)
    if raw[0] != NKEY_USER_PREFIX:
        kind = _NKEY_PREFIXES.get(raw[0] & 0xF8, "an unknown kind")
        raise SowError(f"nkey has the wrong prefix: {kind}, expected U (user public key)")
    body, crc = raw[:33], int.from_bytes(raw[33:], "little")
    if _crc16_xmodem(body) != crc:
        raise SowError("nkey checksum (CRC-16/XMODEM) does not match: the key is mistyped or altered")
    return body[1:]


def nkey_seed_keypair(seed: bytes) -> tuple[Ed25519PrivateKey, str]:
    """A private key from a 32-byte Ed25519 seed, with its public key as an nkey."""
    if not isinstance(seed, bytes | bytearray) or len(seed) != 32:
        raise SowError("an Ed25519 seed is exactly 32 bytes")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private_key = Ed25519PrivateKey.from_private_bytes(bytes(seed))
    return private_key, public_nkey(private_key)


def public_nkey(private_key: Ed25519PrivateKey) -> str:
    """The nkey of a private key's public half."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return encode_nkey(raw)


def is_valid_digest(text: Any) -> bool:
    """Exactly `sha256:` + 64 lowercase hex digits (what a terms entry must commit to)."""
    return isinstance(text, str) and _DIGEST.fullmatch(text) is not None


def proposal_digest(doc: Any) -> str:
    """`sha256:<hex>` over the JCS bytes of the whole document, signatures included."""
    return digest(doc)


def _unsigned(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "signatures"}


def signing_bytes(doc: Mapping[str, Any]) -> bytes:
    """What the provider signs: `agent-sow-v1\\n` + JCS(document minus `signatures`)."""
    if not isinstance(doc, Mapping):
        raise SowError("a proposal must be a JSON object")
    return SIGNING_PREFIX + canonicalize(_unsigned(doc))


def encode_b64url(data: bytes) -> str:
    """Unpadded base64url, the form signatures and keys travel in."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def decode_b64url(text: Any) -> bytes:
    """Tolerant base64url: padded or not, `-_` or `+/`; anything else is a SowError."""
    if not isinstance(text, str):
        raise SowError(f"expected a base64url string, got {type(text).__name__}")
    body = text.rstrip("=").replace("+", "-").replace("/", "_")
    if len(body) % 4 == 1:
        raise SowError("not base64url: impossible length")
    try:
        return base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise SowError("not base64url: characters outside the alphabet") from None


def sign_proposal(
    doc: Mapping[str, Any], private_key: Ed25519PrivateKey, *, signed_at: str
) -> dict[str, Any]:
    """A copy of `doc` with exactly one provider signature (any previous ones are dropped).

    The verifier also requires `parties.provider.agent`, when present, to be this key's nkey
    (see `public_nkey`); set it before signing.
    """
    unsigned = copy.deepcopy(_unsigned(doc))
    sig = private_key.sign(signing_bytes(unsigned))
    entry = {
        "role": "provider",
        "key": public_nkey(private_key),
        "signed_at": signed_at,
        "sig": encode_b64url(sig),
    }
    return {**unsigned, "signatures": [entry]}


def clauses(doc: Any) -> list[tuple[str, Any]]:
    """(pointer, grade) for every member, at any depth, that carries a `grade` member.

    Document order; `signatures` is not searched. The grade is the literal value as written
    (normally a string; anything else is returned as is, so it is shown as is, never upgraded).
    """
    found: list[tuple[str, Any]] = []
    for pointer, value in members(doc):
        if pointer == "/signatures" or pointer.startswith("/signatures/"):
            continue
        if isinstance(value, Mapping) and "grade" in value:
            found.append((pointer, value["grade"]))
    return found


def clause_members(doc: Mapping[str, Any]) -> list[str]:
    """Top-level members holding a graded clause, in document order (`/confidentiality` once)."""
    seen: list[str] = []
    for member, _grade in clauses(doc):
        top = "/" + member.split("/")[1]
        if top not in seen:
            seen.append(top)
    return seen


@dataclass(frozen=True)
class ProposalCheck:
    """Everything known about one committed proposal after verification."""

    url: str
    committed_digest: Any
    status: Status
    computed_digest: str | None = None
    document: Any = None
    signer: str | None = None
    standing: bool | None = None
    steps: tuple[Step, ...] = ()
    clauses: tuple[tuple[str, Any], ...] = ()
    findings: tuple[Finding, ...] = ()
    sow: Any = None
    offering: Any = None

    @property
    def verified(self) -> bool:
        return self.status == "verified"

    def to_json(self) -> dict[str, Any]:
        """The ProposalResult shape of docs/ARCHITECTURE.md."""
        return {
            "url": self.url,
            "digest": self.committed_digest,
            "sow": self.sow,
            "offering": self.offering,
            "status": self.status,
            "computed_digest": self.computed_digest,
            "standing": self.standing,
            "signer": self.signer,
            "steps": [{"step": s, "ok": ok, "detail": d} for s, ok, d in self.steps],
            "clauses": [{"member": m, "grade": g} for m, g in self.clauses],
        }


@dataclass
class _Checker:
    url: str
    steps: list[Step] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    failures: list[Status] = field(default_factory=list)

    def step(self, name: str, ok: bool, detail: str) -> None:
        self.steps.append((name, ok, detail))

    def fail(self, status: Status, code: str, detail: str, member: str | None = None) -> None:
        self.failures.append(status)
        self.findings.append(finding(code, f"{self.url}: {detail}", member=member))


def check_proposal(
    body: bytes | None,
    *,
    url: str,
    committed_digest: Any,
    fetch_error: str | None = None,
    sow: Any = None,
    offering: Any = None,
) -> ProposalCheck:
    """Verify fetched proposal bytes against the digest a card committed to (docs/PROTOCOL.md section 5).

    `body` is the raw response body (None when the fetch failed, with `fetch_error` saying why).
    `sow` and `offering` are copied from the card entry into the result for display.
    """
    c = _Checker(url)
    extra = {"url": url, "committed_digest": committed_digest, "sow": sow, "offering": offering}
    if fetch_error is not None or body is None:
        reason = fetch_error or "no body received"
        c.step("fetched", False, reason)
        c.fail("unreachable", "proposal_unreachable", f"could not fetch the proposal: {reason}")
        return _result(c, extra)
    c.step("fetched", True, f"{len(body)} bytes")
    try:
        doc = parse(body)
    except StrictJsonError as exc:
        c.step("parsed", False, str(exc))
        c.fail("invalid", "proposal_unreachable", f"the proposal is not usable JSON: {exc}")
        return _result(c, extra)
    if not isinstance(doc, dict):
        c.step("parsed", False, f"expected a JSON object, got {describe_type(doc)}")
        kind = describe_type(doc)
        c.fail("invalid", "proposal_unreachable", f"the proposal is a JSON {kind}, not an object")
        return _result(c, extra, document=doc)
    c.step("parsed", True, "a JSON object")

    try:
        computed = proposal_digest(doc)
    except CanonicalError as exc:  # unreachable after a strict parse; kept for hand-made documents
        c.step("digest", False, str(exc))
        c.fail("invalid", "proposal_unreachable", f"the proposal has no canonical form: {exc}")
        return _result(c, extra, document=doc)
    _check_digest(c, committed_digest, computed, lossy_integers(doc))
    signer = _check_signatures(c, doc)
    standing = _check_standing(c, doc)
    return _result(
        c,
        extra,
        document=doc,
        computed_digest=computed,
        signer=signer,
        standing=standing,
        clauses=tuple(clauses(doc)),
    )


def _result(c: _Checker, extra: dict[str, Any], **values: Any) -> ProposalCheck:
    status: Status = c.failures[0] if c.failures else "verified"
    return ProposalCheck(status=status, steps=tuple(c.steps), findings=tuple(c.findings), **extra, **values)


def _check_digest(c: _Checker, committed: Any, computed: str, lossy: list[str]) -> None:
    if not is_valid_digest(committed):
        c.step("digest", False, f"the committed digest {committed!r} is not sha256: + 64 lowercase hex")
        c.fail("invalid", "terms_entry_invalid", f"committed digest {committed!r} is malformed")
    elif committed != computed:
        c.step("digest", False, f"computed {computed}, committed {committed}")
        c.fail(
            "digest_mismatch",
            "proposal_digest_mismatch",
            f"the fetched document hashes to {computed}, the card committed to {committed}",
        )
    else:
        c.step("digest", True, f"{computed} matches the committed digest")
    if lossy:
        where = ", ".join(lossy[:5]) + (" ..." if len(lossy) > 5 else "")
        c.step("digest", True, f"note: integers beyond 2^53 are hashed as doubles (at {where})")


def _check_signatures(c: _Checker, doc: dict[str, Any]) -> str | None:
    sigs = doc.get("signatures")
    if sigs is None or sigs == []:
        c.step("signature", False, "no signatures")
        c.fail("unsigned", "proposal_unsigned", "the proposal carries no signatures", member="/signatures")
        return None
    if not isinstance(sigs, list):
        c.step("signature", False, f"signatures is a JSON {describe_type(sigs)}, not a list")
        c.fail(
            "signature_invalid",
            "proposal_signature_invalid",
            f"signatures must be a list, got a JSON {describe_type(sigs)}",
            member="/signatures",
        )
        return None
    providers = [i for i, s in enumerate(sigs) if isinstance(s, dict) and s.get("role") == "provider"]
    if not providers:
        c.step("signature", False, "no signature with role provider")
        c.fail("unsigned", "proposal_unsigned", "no signature has role provider", member="/signatures")
        return None
    payload = signing_bytes(doc)
    expected = _provider_agent(doc)
    signer: str | None = None
    for index in providers:
        entry = sigs[index]
        member = f"/signatures/{index}"
        problem = _verify_entry(entry, payload, expected)
        if problem is not None:
            c.step("signature", False, f"{member}: {problem}")
            c.fail("signature_invalid", "proposal_signature_invalid", problem, member=member)
        else:
            c.step("signature", True, f"{member}: Ed25519 signature by {entry['key']} verifies")
            signer = signer or entry["key"]
    return signer


def _provider_agent(doc: dict[str, Any]) -> str | None:
    parties = doc.get("parties")
    provider = parties.get("provider") if isinstance(parties, dict) else None
    agent = provider.get("agent") if isinstance(provider, dict) else None
    return agent if isinstance(agent, str) else None


def _verify_entry(entry: dict[str, Any], payload: bytes, expected: str | None) -> str | None:
    """None when the entry verifies, else why not."""
    try:
        public = decode_nkey(entry.get("key"))
    except SowError as exc:
        return f"key: {exc}"
    try:
        sig = decode_b64url(entry.get("sig"))
    except SowError as exc:
        return f"sig: {exc}"
    if len(sig) != 64:
        return f"sig: an Ed25519 signature is 64 bytes, got {len(sig)}"
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public).verify(sig, payload)
    except (InvalidSignature, ValueError):
        return "the Ed25519 signature does not verify over the document (it was changed after signing)"
    if expected is not None and entry["key"] != expected:
        return f"signed by {entry['key']}, but parties.provider.agent is {expected}"
    return None


def _check_standing(c: _Checker, doc: dict[str, Any]) -> bool:
    reasons: list[tuple[str, str]] = []
    parties = doc.get("parties")
    if isinstance(parties, dict):
        if parties.get("client") is not None:
            reasons.append(("/parties/client", "the client seat is filled"))
        if parties.get("offered_to") is not None:
            reasons.append(("/parties/offered_to", "it is offered to a named party (offered_to)"))
    if doc.get("starts_at") is not None:
        reasons.append(("/starts_at", "starts_at is set"))
    sigs = doc.get("signatures")
    if isinstance(sigs, list):
        if len(sigs) > 1:
            reasons.append(("/signatures", f"it carries {len(sigs)} signatures, a standing proposal has one"))
        for index, entry in enumerate(sigs):
            role = entry.get("role") if isinstance(entry, dict) else None
            if role != "provider":
                why = f"signature {index} has role {role!r}, not provider"
                reasons.append((f"/signatures/{index}/role", why))
    for member, reason in reasons:
        c.findings.append(
            finding("proposal_not_standing", f"{c.url}: not a standing proposal: {reason}", member=member)
        )
    if reasons:
        c.step("standing", False, "; ".join(reason for _, reason in reasons))
    else:
        c.step("standing", True, "a standing proposal: provider signature only, client seat open")
    return not reasons
