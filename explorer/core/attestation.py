"""A run's signature (DSSE over an in-toto statement) and the standing it earns (CONTRACT.md).

The interview extension, section 8: a result an agent ran against itself is a claim; one an
independent party or a platform recorded is evidence. `--as independent` alone is a label
anyone can type, so a runner signs its result and whoever receives it checks three things before
calling it evidence:

1. the role is `independent` or `platform`;
2. the DSSE envelope verifies under a runner key the reader trusts (Ed25519 over the DSSE
   pre-authentication encoding; `keyid` is the key's RFC 7638 thumbprint, an unauthenticated
   hint only: every trusted key is tried, and the thumbprint reported is the verifying key's);
3. the `transcript` subject's digest matches the transcript in hand, and the signing key does
   not also sign the agent's own card (then the "independent" runner is the agent: self-attested).

Anything else is a claim, and `assess` says which condition failed, in the words the
`evidence_unverified` finding and every surface use. The envelope is securesystemslib's DSSE
implementation, not hand-written code; keys are handled by `cryptography`, thumbprints by
`explorer.core.jwk`. Both are imported when a signature is actually made or checked, so an unsigned run
never pays for them. Pure: no I/O; private keys enter only `sign_statement` and are never kept.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from explorer.core.findings import finding
from explorer.core.intoto import (
    ROLE_FIELD,
    RUNNER_FIELD,
    StatementError,
    predicate_text,
    statement_problems,
    transcript_sha256,
    transcript_subject_digest,
)
from explorer.core.jsonshape import mapping_of
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.core.view import ReportView

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PAYLOAD_TYPE = "application/vnd.in-toto+json"
MAX_ENVELOPE_BYTES = 1024 * 1024
MAX_SIGNATURES = 8  # each is tried with every trusted key: a received envelope cannot make that long
Status = Literal["verified", "invalid", "unknown_signer", "unsigned"]
STATUSES: tuple[str, ...] = ("verified", "invalid", "unknown_signer", "unsigned")

# Why a result that presents itself as evidence is only a claim (the finding's words).
UNSIGNED = "unsigned"
UNKNOWN_SIGNER = "unknown signer"
BAD_SIGNATURE = "bad signature"
ALTERED = "altered transcript"
SELF_ATTESTED = "self-attested"


# --- keys ---------------------------------------------------------------------------------------


def public_jwk(private_key: Ed25519PrivateKey) -> dict[str, Any]:
    """The public half as a JWK whose `kid` is its RFC 7638 thumbprint."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    jwk: dict[str, Any] = {"kty": "OKP", "crv": "Ed25519", "x": _b64url(raw)}
    return {**jwk, "kid": thumbprint(jwk), "alg": "EdDSA", "use": "sig"}


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 thumbprint (SHA-256, base64url) of an Ed25519 JWK. ValueError for another key."""
    if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not isinstance(jwk.get("x"), str):
        raise ValueError("not an Ed25519 public JWK (kty OKP, crv Ed25519, x)")
    from explorer.core import jwk as jwks

    public = {"kty": "OKP", "crv": "Ed25519", "x": jwk["x"]}
    try:
        jwks.import_public(public)  # refuses an x that is not 32 bytes of base64url
    except jwks.JwkError as exc:
        raise ValueError(f"not a usable Ed25519 key: {exc}") from None
    return jwks.thumbprint(public)


def runner_keys(jwks: Mapping[str, Any] | None) -> dict[str, bytes]:
    """Thumbprint -> raw public key of every Ed25519 key of a JWKS; other keys are skipped."""
    out: dict[str, bytes] = {}
    keys = mapping_of(jwks).get("keys")
    for jwk in keys if isinstance(keys, list) else []:
        if not isinstance(jwk, Mapping):
            continue
        try:
            tp = thumbprint(jwk)
            raw = _b64url_decode(jwk["x"])
        except (ValueError, binascii.Error):
            continue
        if len(raw) == 32:
            out[tp] = raw
    return out


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- DSSE ---------------------------------------------------------------------------------------


def statement_payload(statement: Mapping[str, Any]) -> bytes:
    """The statement as the envelope's payload: compact UTF-8 JSON."""
    return json.dumps(statement, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding, as securesystemslib computes it for signing."""
    from securesystemslib.dsse import Envelope

    return Envelope(payload, payload_type, {}).pae()


def sign_statement(statement: Mapping[str, Any], private_key: Ed25519PrivateKey) -> dict[str, Any]:
    """A DSSE envelope (JSON form) over the statement, one Ed25519 signature, keyid = thumbprint."""
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner, SSlibKey

    keyid = public_jwk(private_key)["kid"]
    signer = CryptoSigner(private_key, SSlibKey.from_crypto(private_key.public_key(), keyid=keyid))
    envelope = Envelope(statement_payload(statement), PAYLOAD_TYPE, {})
    envelope.sign(signer)
    return envelope.to_dict()


@dataclass(frozen=True)
class Opened:
    """What an envelope says and whether a trusted key signed it."""

    status: Status  # verified | invalid | unknown_signer (never unsigned: there is an envelope)
    keyid: str | None  # the verifying key's thumbprint, else the first signature's keyid hint
    statement: Mapping[str, Any] | None  # parsed payload (also when not verified, for display)
    detail: str


def _b64any(text: Any) -> bytes:
    """DSSE allows standard or URL-safe base64; verifiers must accept either."""
    if not isinstance(text, str):
        raise binascii.Error("not a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        return base64.b64decode(text, altchars=b"-_", validate=True)


def open_envelope(envelope: Any, trusted: Mapping[str, bytes]) -> Opened:
    """Check a DSSE envelope against trusted runner keys (thumbprint -> raw Ed25519 key).

    Every signature is tried with every trusted key (the keyid is only a hint). Never raises."""
    if not isinstance(envelope, Mapping):
        return Opened("invalid", None, None, "the attestation is not a DSSE envelope object")
    sigs = envelope.get("signatures")
    if not isinstance(sigs, list) or not sigs or not all(isinstance(s, Mapping) for s in sigs):
        return Opened("invalid", None, None, "the envelope carries no signatures")
    if len(sigs) > MAX_SIGNATURES:
        return Opened("invalid", None, None, f"the envelope carries more than {MAX_SIGNATURES} signatures")
    hint = next((s.get("keyid") for s in sigs if isinstance(s.get("keyid"), str)), None)
    try:
        payload = _b64any(envelope.get("payload"))
        signatures = [
            (s.get("keyid") if isinstance(s.get("keyid"), str) else "", _b64any(s.get("sig"))) for s in sigs
        ]
    except (binascii.Error, ValueError):
        return Opened("invalid", hint, None, "the envelope's payload or a signature is not base64")
    statement = _parse_statement(payload)
    payload_type = envelope.get("payloadType")
    if payload_type != PAYLOAD_TYPE:
        return Opened("invalid", hint, statement, f"payloadType is not {PAYLOAD_TYPE}")
    for keyid, sig in signatures:
        for tp, raw in sorted(trusted.items(), key=lambda item: item[0] != keyid):
            if _verifies(payload, sig, raw):
                if statement is None:
                    return Opened("invalid", tp, None, "the signed payload is not a JSON statement")
                problems = statement_problems(statement)
                if problems:
                    detail = "the signed statement is malformed: " + problems[0]
                    return Opened("invalid", tp, statement, detail)
                return Opened("verified", tp, statement, "signed by a trusted runner key")
    if any(keyid in trusted for keyid, _ in signatures):
        detail = "the signature does not verify under the trusted key it names"
        return Opened("invalid", hint, statement, detail)
    return Opened("unknown_signer", hint, statement, "no trusted runner key verifies the signature")


def _verifies(payload: bytes, sig: bytes, raw_key: bytes) -> bool:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import VerificationError
    from securesystemslib.signer import Signature, SSlibKey

    key = SSlibKey.from_crypto(Ed25519PublicKey.from_public_bytes(raw_key), keyid="k")
    envelope = Envelope(payload, PAYLOAD_TYPE, {"k": Signature("k", sig.hex())})
    try:
        envelope.verify([key], 1)
    except (VerificationError, ValueError):
        return False
    return True


def _parse_statement(payload: bytes) -> Mapping[str, Any] | None:
    try:
        value = strict_parse(payload, max_bytes=MAX_ENVELOPE_BYTES)
    except StrictJsonError:
        return None
    return value if isinstance(value, Mapping) else None


# --- the standing rule --------------------------------------------------------------------------


@dataclass(frozen=True)
class Assessment:
    """A run's `run_attestation` and the standing it earns."""

    status: Status
    keyid: str | None
    runner: str | None
    role: str
    standing: Literal["claim", "evidence"]
    reason: str | None  # why a result presented as evidence is a claim (None when it is not)
    detail: str = ""

    @property
    def trusted(self) -> bool:
        return self.status == "verified" and self.reason not in (ALTERED, BAD_SIGNATURE)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "keyid": self.keyid,
            "runner": self.runner,
            "role": self.role,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        if self.detail:
            out["detail"] = self.detail
        return out


def _role_of(report: Mapping[str, Any]) -> tuple[str, str | None]:
    view = ReportView.of(report)
    return view.role, view.runner


def unsigned(report: Mapping[str, Any], *, live: bool) -> Assessment:
    """An unsigned run. Live, the standing follows the role as before (the runner is here,
    running it); read back from a transcript, an unsigned `independent` is only a label."""
    role, name = _role_of(report)
    if role == "self":
        return Assessment("unsigned", None, name, role, "claim", None)
    if live:
        return Assessment("unsigned", None, name, role, "evidence", None)
    return Assessment(
        "unsigned",
        None,
        name,
        role,
        "claim",
        UNSIGNED,
        "the transcript carries no run attestation, so its role is only a label",
    )


def assess(
    transcript: Mapping[str, Any],
    trusted: Mapping[str, bytes],
    card_signed_by: Any = None,
) -> Assessment:
    """The standing of a JSON transcript by the CONTRACT rule.

    `card_signed_by(raw_key) -> bool` says whether a key also signs the agent's own card (the
    self-attestation check); None skips it."""
    report = mapping_of(transcript.get("report"))
    envelope = transcript.get("run_attestation")
    if envelope is None:
        return unsigned(report, live=False)
    role, name = _role_of(report)
    opened = open_envelope(envelope, trusted)
    statement = opened.statement or {}
    runner = predicate_text(statement, RUNNER_FIELD) or name
    signed_role = predicate_text(statement, ROLE_FIELD)
    if signed_role in ("self", "independent", "platform") and signed_role != role:
        role = "self" if "self" in (signed_role, role) else role
    keyid = opened.keyid

    def claim(status: Status, reason: str | None, detail: str) -> Assessment:
        return Assessment(
            status,
            keyid=keyid,
            runner=runner,
            role=role,
            standing="claim",
            reason=None if role == "self" else reason,
            detail=detail,
        )

    if opened.status == "unknown_signer":
        return claim("unknown_signer", UNKNOWN_SIGNER, opened.detail)
    if opened.status == "invalid":
        return claim("invalid", BAD_SIGNATURE, opened.detail)
    try:
        actual = transcript_sha256(transcript)
    except StatementError as exc:
        return claim("invalid", ALTERED, str(exc))
    if transcript_subject_digest(statement) != actual:
        return claim("invalid", ALTERED, "the transcript's digest differs from the one that was signed")
    if (
        card_signed_by is not None
        and keyid is not None
        and keyid in trusted
        and card_signed_by(trusted[keyid])
    ):
        return claim("verified", SELF_ATTESTED, "the runner key also signs the agent's own card")
    if role == "self":
        return claim("verified", None, "signed, but a self-run result is a claim whatever the signature")
    return Assessment(
        "verified",
        keyid=keyid,
        runner=runner,
        role=role,
        standing="evidence",
        reason=None,
        detail=opened.detail,
    )


def apply(report: Mapping[str, Any], assessment: Assessment) -> dict[str, Any]:
    """The report with `run_attestation`, `standing` and the `evidence_unverified` finding set
    from the assessment (any earlier ones replaced). The verdict is never touched."""
    out = dict(report)
    out["run_attestation"] = assessment.to_json()
    out["standing"] = assessment.standing
    out["standing_signed"] = assessment.status == "verified"
    findings = [
        f
        for f in report.get("findings") or []
        if not (isinstance(f, Mapping) and f.get("code") == "evidence_unverified")
    ]
    if assessment.reason is not None and assessment.role != "self":
        detail = f"{assessment.reason}: {assessment.detail}" if assessment.detail else assessment.reason
        findings.append(finding("evidence_unverified", detail).to_json())
    out["findings"] = findings
    return out


def key_label(keyid: str | None) -> str:
    """`abc123…`: the first characters of a thumbprint, enough to recognise a key."""
    return f"{keyid[:6]}…" if keyid else "no key"


def card_signer_check(card_docs: Sequence[Mapping[str, Any]]) -> Any:
    """`card_signed_by(raw_key) -> bool`: does this Ed25519 key verify any signature of any of
    these card documents (whatever `kid` the card's signatures name)?"""
    from explorer.core.signatures import verify_card

    def signed_by(raw_key: bytes) -> bool:
        x = _b64url(raw_key)
        for doc in card_docs:
            sigs = mapping_of(doc).get("signatures")
            # Only an EdDSA signature can be the runner's (Ed25519) key: the others are never tried,
            # so a large card signed with ES256 costs nothing here.
            entries = [s for s in sigs if isinstance(s, Mapping)] if isinstance(sigs, list) else []
            kids = {_kid_of(s) for s in entries if _alg_of(s) in ("EdDSA", "Ed25519")}
            for kid in kids:
                if kid is None:
                    continue  # a signature without a kid cannot be checked by anyone
                jwk = {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid}
                if verify_card(doc, {"keys": [jwk]}).status == "verified":
                    return True
        return False

    return signed_by


def _protected(signature: Mapping[str, Any]) -> Mapping[str, Any]:
    protected = signature.get("protected")
    if not isinstance(protected, str) or len(protected) > 64 * 1024:
        return {}
    try:
        decoded = json.loads(_b64url_decode(protected))
    except (ValueError, binascii.Error):
        return {}
    return mapping_of(decoded)


def _kid_of(signature: Mapping[str, Any]) -> str | None:
    kid = _protected(signature).get("kid")
    return kid if isinstance(kid, str) else None


def _alg_of(signature: Mapping[str, Any]) -> str | None:
    alg = _protected(signature).get("alg")
    return alg if isinstance(alg, str) else None
