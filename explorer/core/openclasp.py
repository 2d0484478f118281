"""OpenClasp (the second seed): platform attestation, card consistency, references, trust envelope.

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
- Resolution (`/directory/resolve?reference=...`, per PROTOCOL.md) returns AgentResolutionSchema
  `{reference, matchedBy: agent_id|slug|profile_url|card_url|a2a_card_url, verified, card,
  resolvedAt}`.
- Contracts are hashed whole (signatures member included) into an unpadded base64url
  `termsHash`; messages carry `{interactionId, termsHash, initiatorAgentId, responderAgentId}`
  under the extension URI in `message.metadata` (docs/A2A_EXTENSION.md).

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
from explorer.core.pointer import escape
from explorer.core.sow import SowError, decode_b64url, encode_b64url
from explorer.core.strict_json import describe_type
from explorer.core.text import safe_text
from explorer.core.urls import same_origin

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY_PATH = "/.well-known/openclasp-session-key"
RESOLVE_PATH = "/directory/resolve"
ENVELOPE_MEMBERS: tuple[str, ...] = ("interactionId", "termsHash", "initiatorAgentId", "responderAgentId")

_HASH = re.compile(r"[A-Za-z0-9_-]{43}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PROFILE = re.compile(r"(?P<prefix>.*)/a/(?P<slug>[^/]+)/?")
_PUBLIC_CARD = re.compile(r"(?P<prefix>.*)/agents/(?P<id>[^/]+)/card\.json")
_A2A_CARD = re.compile(r"(?P<prefix>.*)/agents/(?P<id>[^/]+)/a2a-agent-card\.json")
_BARE = re.compile(r"[A-Za-z0-9_-]{1,128}")  # slugs and agent ids; a host name has a dot


def _show(value: Any, limit: int = 120) -> str:
    """A hostile value, short and printable, for a message."""
    return safe_text(value if isinstance(value, str) else repr(value), limit=limit)


def _hash(value: Any) -> str:
    return encode_b64url(hashlib.sha256(canonicalize(value)).digest())


# --- attestation -------------------------------------------------------------------------------


def attestation_digest(public_card: Mapping[str, Any]) -> str:
    """base64url(SHA-256(JCS(card without platformAttestation))), 43 characters."""
    return _hash({k: v for k, v in public_card.items() if k != "platformAttestation"})


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
        return {"ok": self.ok, "status": self.status, "detail": self.detail,
                "digest": self.digest, "key_id": self.key_id}


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
            return _key_text(entry), key_id, f"key {_show(key_id)}"
    note = "the key endpoint's current key"
    if isinstance(key_id, str) and isinstance(key_doc.get("keyId"), str):
        offered = _show(key_doc["keyId"])
        note += f" (the attestation names keyId {_show(key_id)}, the endpoint offers {offered})"
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
            False, "invalid",
            f"the card changed after it was attested: digest {_show(att['digest'])}, computed {computed}",
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
        return f"algorithm must be Ed25519, got {_show(att.get('algorithm'))}"
    for name in ("keyId", "value", "digest"):
        if not isinstance(att.get(name), str) or not att.get(name):
            return f"{name} must be a non-empty string"
    if not _HASH.fullmatch(att["digest"]):
        return f"digest must be 43 base64url characters, got {_show(att['digest'])}"
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
    caps = a2a_card.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, Mapping) else None
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
        problems.append(f"params.agentId is {_show(params.get('agentId'))}, the public card's agentId is "
                        f"{_show(agent_id)}")
    card_url = params.get("openClaspCardUrl")
    own_url = public_card.get("cardUrl")
    if not isinstance(card_url, str):
        problems.append("params.openClaspCardUrl is missing or not a string")
    elif isinstance(own_url, str):
        if card_url != own_url:
            problems.append(f"params.openClaspCardUrl is {_show(card_url)}, the public card's cardUrl is "
                            f"{_show(own_url)}")
    elif not _card_path_matches(card_url, agent_id, "card.json"):
        problems.append(f"params.openClaspCardUrl {_show(card_url)} is not /agents/{{agentId}}/card.json "
                        "for the public card's agentId")
    own_a2a = public_card.get("a2aAgentCardUrl")
    # The same card is commonly also served at the origin's well-known path; only a card read
    # from another origin than the one the platform names is a real disagreement.
    if (a2a_card_url is not None and isinstance(own_a2a, str)
            and not same_origin(own_a2a, a2a_card_url)):
        problems.append(f"the A2A card was read from {_show(a2a_card_url)}, the public card names "
                        f"{_show(own_a2a)}")
    problems += _transport_problems(a2a_card, public_card)
    ext_uri = public_card.get("extensionUri")
    if isinstance(ext_uri, str) and ext_uri not in _extension_uris(a2a_card):
        problems.append(f"the public card's extensionUri {_show(ext_uri)} is not declared by the A2A card")
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
        f"interface URL {_show(url)} is not an endpoint in the public card's transports"
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
        return OpenClaspRef("other", _show(text))
    ref = text.strip()
    parts = urlsplit(ref)
    if parts.scheme in ("http", "https") and parts.netloc:
        origin = f"{parts.scheme}://{parts.netloc}"
        for kind, pattern in (("public_card", _PUBLIC_CARD), ("a2a_card", _A2A_CARD)):
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


# --- terms hash and the trust envelope in message metadata -------------------------------------


def terms_hash(contract: Any) -> str:
    """Unpadded base64url SHA-256 over the JCS of the whole contract (43 characters).

    Raises CanonicalError when the contract is not representable as JSON.
    """
    return _hash(contract)


@dataclass(frozen=True)
class EnvelopeResult:
    """The trust envelope found in a message, what is wrong with it, and the terms-hash check."""

    ok: bool
    uri: str
    envelope: dict[str, Any] | None
    location: str | None
    problems: tuple[str, ...]
    warnings: tuple[str, ...]
    computed_hash: str | None = None
    hash_match: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.ok,
            "uri": self.uri,
            "location": self.location,
            "envelope": self.envelope,
            "problems": list(self.problems),
            "warnings": list(self.warnings),
            "computed_terms_hash": self.computed_hash,
            "terms_hash_match": self.hash_match,
        }


def _unwrap(message: Any, warnings: list[str]) -> tuple[Any, str]:
    """The A2A message inside a JSON-RPC request (params.message) or a send request (message)."""
    if isinstance(message, Mapping) and isinstance(message.get("params"), Mapping):
        method = message.get("method")
        if method not in ("message/send", "message/stream", "SendMessage", "SendStreamingMessage"):
            warnings.append(f"the JSON-RPC method is {_show(method)}, not message/send or message/stream")
        return message["params"].get("message"), "/params/message"
    wrapped = isinstance(message, Mapping) and "metadata" not in message
    if wrapped and isinstance(message.get("message"), Mapping):
        return message["message"], "/message"
    return message, ""


def check_envelope(message: Any, contract: Any | None = None, *, uri: str = OPENCLASP_URI) -> EnvelopeResult:
    """Validate the OpenClasp trust envelope of an A2A message; with a contract, check its hash."""
    problems: list[str] = []
    warnings: list[str] = []
    msg, base = _unwrap(message, warnings)
    envelope, location = _find_envelope(msg, base, uri, problems, warnings)
    computed: str | None = None
    match: bool | None = None
    if envelope is not None:
        _check_members(envelope, problems, warnings)
    if contract is not None:
        try:
            computed = terms_hash(contract)
        except CanonicalError as exc:
            problems.append(f"the contract cannot be canonicalized: {exc}")
        if computed is not None and envelope is not None:
            match = envelope.get("termsHash") == computed
            if not match:
                sent = _show(envelope.get("termsHash"))
                problems.append(f"termsHash {sent} does not match the contract's hash {computed}")
            _check_contract(contract, envelope, problems, warnings)
    return EnvelopeResult(
        ok=not problems, uri=uri, envelope=envelope, location=location, problems=tuple(problems),
        warnings=tuple(warnings), computed_hash=computed, hash_match=match,
    )


def _find_envelope(
    msg: Any, base: str, uri: str, problems: list[str], warnings: list[str]
) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(msg, Mapping):
        problems.append(f"expected an A2A message object, got a JSON {describe_type(msg)}")
        return None, None
    extensions = msg.get("extensions")
    if isinstance(extensions, list) and uri not in extensions:
        warnings.append("the message's extensions list does not name the extension URI")
    metadata = msg.get("metadata")
    if metadata is None:
        problems.append("the message has no metadata, so no trust envelope")
        return None, None
    if not isinstance(metadata, Mapping):
        problems.append(f"message.metadata is a JSON {describe_type(metadata)}, not an object")
        return None, None
    location = f"{base}/metadata/{escape(uri)}"
    if uri not in metadata:
        others = [k for k in metadata if "openclasp" in str(k).lower()]
        hint = f" (metadata has {', '.join(_show(k) for k in others[:3])})" if others else ""
        problems.append(f"no trust envelope under {_show(uri)} in message.metadata{hint}")
        return None, None
    envelope = metadata[uri]
    if not isinstance(envelope, dict):
        problems.append(f"the trust envelope is a JSON {describe_type(envelope)}, not an object")
        return None, location
    return envelope, location


def _check_members(envelope: Mapping[str, Any], problems: list[str], warnings: list[str]) -> None:
    for name in ENVELOPE_MEMBERS:
        value = envelope.get(name)
        if name not in envelope:
            problems.append(f"{name} is missing")
        elif not isinstance(value, str):
            problems.append(f"{name} must be a string, got a JSON {describe_type(value)}")
        elif name == "interactionId" and not _UUID.fullmatch(value):
            problems.append(f"interactionId {_show(value)} is not a UUID")
        elif name == "termsHash" and not _HASH.fullmatch(value):
            problems.append(f"termsHash {_show(value)} is not 43 base64url characters (unpadded SHA-256)")
        elif not value:
            problems.append(f"{name} is empty")
    extra = [k for k in envelope if k not in ENVELOPE_MEMBERS]
    if extra:
        names = ", ".join(_show(k) for k in extra)
        warnings.append(f"members beyond the four the extension defines: {names}")
    initiator, responder = envelope.get("initiatorAgentId"), envelope.get("responderAgentId")
    if isinstance(initiator, str) and initiator and initiator == responder:
        warnings.append("initiatorAgentId and responderAgentId are the same agent")


def _check_contract(
    contract: Any, envelope: Mapping[str, Any], problems: list[str], warnings: list[str]
) -> None:
    if not isinstance(contract, Mapping):
        warnings.append(f"the contract is a JSON {describe_type(contract)}, not an object")
        return
    sent = envelope.get("interactionId")
    if isinstance(sent, str) and "interactionId" in contract and contract.get("interactionId") != sent:
        problems.append(f"the contract's interactionId {_show(contract.get('interactionId'))} differs from "
                        f"the envelope's {_show(sent)}")
    parties = contract.get("parties")
    if isinstance(parties, list):
        for name in ("initiatorAgentId", "responderAgentId"):
            agent = envelope.get(name)
            if isinstance(agent, str) and agent not in parties:
                warnings.append(f"{name} {_show(agent)} is not among the contract's parties")
