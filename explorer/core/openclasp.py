"""The OpenClasp extension: platform attestation, card consistency, references a user may paste.

What the public aryaamin/OpenClasp repository (packages/protocol, packages/sidecar, apps/api)
shows, and what this module relies on:

- The public card `/agents/{agentId}/card.json` (PublicAgentCardSchema) has `protocolVersion`
  "0.1", `agentId`, `name`, `description`, `framework`, `agentVersion`, `capabilities`,
  `limitations`, `assurance`, `agentMode`, `transports[{protocol: "A2A/1.0", protocolBinding,
  endpoint, managedBy}]`, optional `slug` (`^[a-z0-9]+(?:-[a-z0-9]+)*$`) and `profileUrl`
  (`{base}/a/{slug}`), `cardUrl` (`{base}/agents/{encodeURIComponent(agentId)}/card.json`),
  `a2aAgentCardUrl` (`.../a2a-agent-card.json`), `extensionUri`, optional `presence` and
  `verification{status, method, verifiedAt, verificationKeyUrl}`, `publishedAt`, `updatedAt` and
  optional `platformAttestation{algorithm: "Ed25519", keyId, value, digest}` (a strict object,
  `digest` 43 base64url characters).
- Attestation (verifyRecordAttestation): digest = base64url(SHA-256(JCS(card without
  `platformAttestation`))), it must equal `digest`, and `value` is an Ed25519 signature over the
  ASCII bytes of that digest string, checked with the key from the key endpoint.
- The key endpoint `/.well-known/openclasp-session-key` answers `{algorithm: "Ed25519", keyId,
  publicKey: base64url DER SPKI, previousKeys?: [{algorithm, keyId, publicKey}]}`; the
  attestation's `keyId` picks the key (rotated keys stay listed in `previousKeys`).
- The A2A card (toA2AAgentCard) is a v1.0 card with `supportedInterfaces[].url` copied from
  `transports[].endpoint`, `documentationUrl` = `cardUrl`, `signatures: []`, and one extension
  `{uri: card.extensionUri, required: false, params: {agentId, openClaspCardUrl: cardUrl}}`.
- Resolution (`/directory/resolve?reference=...`, docs/PROTOCOL.md section 7) returns AgentResolutionSchema
  `{reference, matchedBy: agent_id|slug|profile_url|card_url|a2a_card_url, verified, card,
  resolvedAt}`.
- Contracts are hashed whole (signatures member included) into an unpadded base64url
  `termsHash`; messages carry `{interactionId, termsHash, initiatorAgentId, responderAgentId}`
  under the extension URI in `message.metadata` (docs/A2A_EXTENSION.md); that check is
  `explorer.core.envelope`, used by the `envelope` command only.

Everything here is pure and tolerant of hostile input: wrong types give a result or a message
that says what was wrong, never an exception. `cryptography` is imported where a key is used,
not with the module: a card that declares no OpenClasp entry never pays for it.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, unquote, urlsplit

from explorer.core.canonical import CanonicalError, canonicalize
from explorer.core.card import OPENCLASP_URI
from explorer.core.jsonshape import mapping_of
from explorer.core.sow import SowError, decode_b64url, encode_b64url
from explorer.core.strict_json import describe_type
from explorer.core.text import safe_text
from explorer.core.urls import same_origin

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY_PATH = "/.well-known/openclasp-session-key"
RESOLVE_PATH = "/directory/resolve"

# An unpadded base64url SHA-256: attestation digests and contract terms hashes.
HASH_FORM = re.compile(r"[A-Za-z0-9_-]{43}")
_PROFILE = re.compile(r"(?P<prefix>.*)/a/(?P<slug>[^/]+)/?")
_PUBLIC_CARD = re.compile(r"(?P<prefix>.*)/agents/(?P<id>[^/]+)/card\.json")
_A2A_CARD = re.compile(r"(?P<prefix>.*)/agents/(?P<id>[^/]+)/a2a-agent-card\.json")
_BARE = re.compile(r"[A-Za-z0-9_-]{1,128}")  # slugs and agent ids; a host name has a dot


def show(value: Any, limit: int = 120) -> str:
    """A hostile value, short and printable, for a message (strings as they are, others by repr)."""
    return safe_text(value if isinstance(value, str) else repr(value), limit=limit)


def jcs_hash(value: Any) -> str:
    """Unpadded base64url SHA-256 over the JCS bytes of `value` (43 characters).

    Raises CanonicalError when the value is not representable as JSON.
    """
    return encode_b64url(hashlib.sha256(canonicalize(value)).digest())


# --- attestation -------------------------------------------------------------------------------


def attestation_digest(public_card: Mapping[str, Any]) -> str:
    """base64url(SHA-256(JCS(card without platformAttestation))), 43 characters."""
    return jcs_hash({k: v for k, v in public_card.items() if k != "platformAttestation"})


AttestationStatus = Literal["verified", "invalid", "missing", "bad_key"]


@dataclass(frozen=True)
class AttestationResult:
    """The outcome of checking a public card's platform attestation."""

    ok: bool
    status: AttestationStatus
    detail: str
    digest: str | None = None
    key_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "status": self.status,
            "detail": self.detail,
            "digest": self.digest,
            "key_id": self.key_id,
        }


def _pick_key(key_doc: Any, key_id: Any) -> tuple[str | None, str | None, str]:
    """(publicKey text, its keyId, note) from the key document; publicKey None means unusable."""
    if not isinstance(key_doc, Mapping):
        return None, None, f"the key document is a JSON {describe_type(key_doc)}, not an object"
    entries = [key_doc]
    previous = key_doc.get("previousKeys")
    if isinstance(previous, list):
        entries += [e for e in previous if isinstance(e, Mapping)]
    for entry in entries:
        if isinstance(key_id, str) and entry.get("keyId") == key_id:
            return _key_text(entry), key_id, f"key {show(key_id)}"
    note = "the key endpoint's current key"
    if isinstance(key_id, str) and isinstance(key_doc.get("keyId"), str):
        offered = show(key_doc["keyId"])
        note += f" (the attestation names keyId {show(key_id)}, the endpoint offers {offered})"
    current_id = key_doc.get("keyId") if isinstance(key_doc.get("keyId"), str) else None
    return _key_text(key_doc), current_id, note


def _key_text(entry: Mapping[str, Any]) -> str | None:
    value = entry.get("publicKey")
    return value if isinstance(value, str) else None


def _load_key(text: str | None) -> Ed25519PublicKey | str:
    """The Ed25519 public key, or a message saying why there is none."""
    if text is None:
        return "the key document has no publicKey string"
    try:
        der = decode_b64url(text)
    except SowError as exc:
        return f"publicKey is {exc}"
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_der_public_key

    try:
        key = load_der_public_key(der)
    except (ValueError, UnsupportedAlgorithm, TypeError):
        return "publicKey is not a DER SubjectPublicKeyInfo"
    if not isinstance(key, Ed25519PublicKey):
        return f"publicKey is not an Ed25519 key ({type(key).__name__})"
    return key


def verify_attestation(public_card: Any, key_doc: Any) -> AttestationResult:
    """Check `platformAttestation` of an OpenClasp public card with the platform's key document."""
    if not isinstance(public_card, Mapping):
        return AttestationResult(False, "invalid", f"the public card is a JSON {describe_type(public_card)}")
    att = public_card.get("platformAttestation")
    if att is None:
        return AttestationResult(False, "missing", "the public card carries no platformAttestation")
    if not isinstance(att, Mapping):
        return AttestationResult(False, "invalid", f"platformAttestation is a JSON {describe_type(att)}")
    try:
        computed = attestation_digest(public_card)
    except CanonicalError as exc:
        return AttestationResult(False, "invalid", f"the public card cannot be canonicalized: {exc}")
    problem = _attestation_shape(att)
    if problem is not None:
        return AttestationResult(False, "invalid", problem, computed)
    if att["digest"] != computed:
        return AttestationResult(
            False,
            "invalid",
            f"the card changed after it was attested: digest {show(att['digest'])}, computed {computed}",
            computed,
        )
    key_text, key_id, note = _pick_key(key_doc, att.get("keyId"))
    key = _load_key(key_text) if isinstance(key_doc, Mapping) else note
    if isinstance(key, str):
        return AttestationResult(False, "bad_key", key, computed, key_id)
    try:
        signature = decode_b64url(att["value"])
    except SowError as exc:
        return AttestationResult(False, "invalid", f"value is {exc}", computed, key_id)
    from cryptography.exceptions import InvalidSignature  # loaded already, with the key

    try:
        key.verify(signature, computed.encode("ascii"))
    except InvalidSignature:
        return AttestationResult(
            False, "invalid", f"the Ed25519 attestation does not verify with {note}", computed, key_id
        )
    detail = f"attested by the platform; verified with {note}"
    return AttestationResult(True, "verified", detail, computed, key_id)


def _attestation_shape(att: Mapping[str, Any]) -> str | None:
    if att.get("algorithm") != "Ed25519":
        return f"algorithm must be Ed25519, got {show(att.get('algorithm'))}"
    for name in ("keyId", "value", "digest"):
        if not isinstance(att.get(name), str) or not att.get(name):
            return f"{name} must be a non-empty string"
    if not HASH_FORM.fullmatch(att["digest"]):
        return f"digest must be 43 base64url characters, got {show(att['digest'])}"
    return None


def sign_attestation(
    public_card: Mapping[str, Any], private_key: Ed25519PrivateKey, key_id: str
) -> dict[str, Any]:
    """A copy of the card with a fresh platformAttestation (for the demo platform)."""
    card = copy.deepcopy({k: v for k, v in public_card.items() if k != "platformAttestation"})
    digest = attestation_digest(card)
    value = encode_b64url(private_key.sign(digest.encode("ascii")))
    card["platformAttestation"] = {"algorithm": "Ed25519", "keyId": key_id, "value": value, "digest": digest}
    return card


def public_key_document(private_key: Ed25519PrivateKey, key_id: str | None = None) -> dict[str, Any]:
    """What the key endpoint serves: `{algorithm, keyId?, publicKey: base64url DER SPKI}`."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    der = private_key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    doc: dict[str, Any] = {"algorithm": "Ed25519"}
    if key_id is not None:
        doc["keyId"] = key_id
    doc["publicKey"] = encode_b64url(der)
    return doc


# --- the A2A card's extension entry and its consistency with the public card -------------------


def _card_path_matches(url: Any, agent_id: Any, suffix: str) -> bool:
    if not isinstance(url, str) or not isinstance(agent_id, str) or not agent_id:
        return False
    path = urlsplit(url).path
    return path.endswith(f"/agents/{quote(agent_id, safe='')}/{suffix}") or unquote(path).endswith(
        f"/agents/{agent_id}/{suffix}"
    )


def is_openclasp_extension(ext_uri: Any, params: Any) -> bool:
    """An OpenClasp trust entry: the default URI, or (for a configured URI) the params' shape."""
    if ext_uri == OPENCLASP_URI:
        return True
    if not isinstance(params, Mapping):
        return False
    return _card_path_matches(params.get("openClaspCardUrl"), params.get("agentId"), "card.json")


def _interface_urls(a2a_card: Mapping[str, Any]) -> list[Any]:
    urls: list[Any] = []
    for name in ("supportedInterfaces", "additionalInterfaces"):
        entries = a2a_card.get(name)
        if isinstance(entries, list):
            urls += [e.get("url") for e in entries if isinstance(e, Mapping)]
    if "supportedInterfaces" not in a2a_card and "url" in a2a_card:
        urls.append(a2a_card.get("url"))
    return urls


def _extension_uris(a2a_card: Mapping[str, Any]) -> list[Any]:
    exts = mapping_of(a2a_card.get("capabilities")).get("extensions")
    return [e.get("uri") for e in exts if isinstance(e, Mapping)] if isinstance(exts, list) else []


def consistency_problems(
    a2a_card: Any, params: Any, public_card: Any, *, a2a_card_url: str | None = None
) -> list[str]:
    """What disagrees between an A2A card, its OpenClasp entry's params and the public card.

    An empty list means consistent. `a2a_card_url`, when the A2A card was fetched from a URL,
    is also compared with the public card's `a2aAgentCardUrl`.
    """
    if not isinstance(a2a_card, Mapping):
        return [f"the A2A card is a JSON {describe_type(a2a_card)}, not an object"]
    if not isinstance(params, Mapping):
        return [f"the OpenClasp extension params are a JSON {describe_type(params)}, not an object"]
    if not isinstance(public_card, Mapping):
        return [f"the OpenClasp public card is a JSON {describe_type(public_card)}, not an object"]
    problems: list[str] = []
    agent_id = public_card.get("agentId")
    if not isinstance(agent_id, str) or not agent_id:
        problems.append("the public card has no agentId string")
    elif params.get("agentId") != agent_id:
        problems.append(
            f"params.agentId is {show(params.get('agentId'))}, the public card's agentId is {show(agent_id)}"
        )
    card_url = params.get("openClaspCardUrl")
    own_url = public_card.get("cardUrl")
    if not isinstance(card_url, str):
        problems.append("params.openClaspCardUrl is missing or not a string")
    elif isinstance(own_url, str):
        if card_url != own_url:
            problems.append(
                f"params.openClaspCardUrl is {show(card_url)}, the public card's cardUrl is {show(own_url)}"
            )
    elif not _card_path_matches(card_url, agent_id, "card.json"):
        problems.append(
            f"params.openClaspCardUrl {show(card_url)} is not /agents/{{agentId}}/card.json "
            "for the public card's agentId"
        )
    own_a2a = public_card.get("a2aAgentCardUrl")
    # The same card is commonly also served at the origin's well-known path; only a card read
    # from another origin than the one the platform names is a real disagreement.
    if a2a_card_url is not None and isinstance(own_a2a, str) and not same_origin(own_a2a, a2a_card_url):
        problems.append(
            f"the A2A card was read from {show(a2a_card_url)}, the public card names {show(own_a2a)}"
        )
    problems += _transport_problems(a2a_card, public_card)
    ext_uri = public_card.get("extensionUri")
    if isinstance(ext_uri, str) and ext_uri not in _extension_uris(a2a_card):
        problems.append(f"the public card's extensionUri {show(ext_uri)} is not declared by the A2A card")
    return problems


def _transport_problems(a2a_card: Mapping[str, Any], public_card: Mapping[str, Any]) -> list[str]:
    transports = public_card.get("transports")
    endpoints = {
        t.get("endpoint")
        for t in (transports if isinstance(transports, list) else [])
        if isinstance(t, Mapping) and isinstance(t.get("endpoint"), str)
    }
    urls = _interface_urls(a2a_card)
    if not urls:
        return ["the A2A card declares no interface URL"]
    return [
        f"interface URL {show(url)} is not an endpoint in the public card's transports"
        for url in urls
        if url not in endpoints
    ]


# --- references a user may paste ---------------------------------------------------------------

RefKind = Literal["profile", "public_card", "a2a_card", "slug_or_id", "other"]


@dataclass(frozen=True)
class OpenClaspRef:
    """What a pasted OpenClasp reference is. `base_url` is set for the URL kinds."""

    kind: RefKind
    reference: str
    base_url: str | None = None
    agent_id: str | None = None
    slug: str | None = None

    @property
    def card_url(self) -> str | None:
        """The public card URL when the reference names an agent id on a known platform."""
        if self.base_url is None or self.agent_id is None:
            return None
        return f"{self.base_url}/agents/{quote(self.agent_id, safe='')}/card.json"

    def resolve_url(self, base_url: str | None = None) -> str | None:
        """The platform's resolve endpoint for this reference (`base_url` for bare slugs/ids)."""
        base = (base_url or self.base_url or "").rstrip("/")
        if not base or self.kind == "other":
            return None
        return f"{base}{RESOLVE_PATH}?reference={quote(self.reference, safe='')}"


def classify_reference(text: Any) -> OpenClaspRef:
    """Profile URL `/a/{slug}`, public card URL, A2A card URL, bare slug or id, or other."""
    if not isinstance(text, str):
        return OpenClaspRef("other", show(text))
    ref = text.strip()
    parts = urlsplit(ref)
    if parts.scheme in ("http", "https") and parts.netloc:
        origin = f"{parts.scheme}://{parts.netloc}"
        card_urls: tuple[tuple[RefKind, re.Pattern[str]], ...] = (
            ("public_card", _PUBLIC_CARD),
            ("a2a_card", _A2A_CARD),
        )
        for kind, pattern in card_urls:
            match = pattern.fullmatch(parts.path)
            if match:
                return OpenClaspRef(kind, ref, origin + match["prefix"], agent_id=unquote(match["id"]))
        match = _PROFILE.fullmatch(parts.path)
        if match:
            return OpenClaspRef("profile", ref, origin + match["prefix"], slug=unquote(match["slug"]))
        return OpenClaspRef("other", ref)
    if _BARE.fullmatch(ref):
        return OpenClaspRef("slug_or_id", ref)
    return OpenClaspRef("other", ref)


def resolution_card(doc: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(public card, None) from a resolve endpoint response, or (None, why not)."""
    if not isinstance(doc, Mapping):
        return None, f"the resolve response is a JSON {describe_type(doc)}, not an object"
    card = doc.get("card")
    if not isinstance(card, dict):
        return None, "the resolve response has no card object"
    return card, None
