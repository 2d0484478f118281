"""The OpenClasp trust envelope in an A2A message, and the terms hash of its contract.

OpenClasp parties put `{interactionId, termsHash, initiatorAgentId, responderAgentId}` under the
extension URI in `message.metadata`; `termsHash` is the unpadded base64url SHA-256 over the JCS
bytes of the whole interaction contract (its `signatures` member included). `check_envelope`
finds the envelope in a message (bare, wrapped as `{message}`, or inside a JSON-RPC
`message/send` request), checks its four members and, given the contract, its hash.

Only the `envelope` command uses this; an interview never does, which is why it lives apart from
`explorer.core.openclasp` (attestation, card consistency, references). Pure and tolerant of
hostile input: every problem is a sentence in the result, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from explorer.core.canonical import CanonicalError
from explorer.core.card import OPENCLASP_URI
from explorer.core.openclasp import HASH_FORM, jcs_hash, show
from explorer.core.pointer import escape
from explorer.core.strict_json import describe_type

ENVELOPE_MEMBERS: tuple[str, ...] = ("interactionId", "termsHash", "initiatorAgentId", "responderAgentId")

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def terms_hash(contract: Any) -> str:
    """Unpadded base64url SHA-256 over the JCS of the whole contract (43 characters).

    Raises CanonicalError when the contract is not representable as JSON.
    """
    return jcs_hash(contract)


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
            warnings.append(f"the JSON-RPC method is {show(method)}, not message/send or message/stream")
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
                sent = show(envelope.get("termsHash"))
                problems.append(f"termsHash {sent} does not match the contract's hash {computed}")
            _check_contract(contract, envelope, problems, warnings)
    return EnvelopeResult(
        ok=not problems,
        uri=uri,
        envelope=envelope,
        location=location,
        problems=tuple(problems),
        warnings=tuple(warnings),
        computed_hash=computed,
        hash_match=match,
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
        hint = f" (metadata has {', '.join(show(k) for k in others[:3])})" if others else ""
        problems.append(f"no trust envelope under {show(uri)} in message.metadata{hint}")
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
            problems.append(f"interactionId {show(value)} is not a UUID")
        elif name == "termsHash" and not HASH_FORM.fullmatch(value):
            problems.append(f"termsHash {show(value)} is not 43 base64url characters (unpadded SHA-256)")
        elif not value:
            problems.append(f"{name} is empty")
    extra = [k for k in envelope if k not in ENVELOPE_MEMBERS]
    if extra:
        names = ", ".join(show(k) for k in extra)
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
        problems.append(
            f"the contract's interactionId {show(contract.get('interactionId'))} differs from "
            f"the envelope's {show(sent)}"
        )
    parties = contract.get("parties")
    if isinstance(parties, list):
        for name in ("initiatorAgentId", "responderAgentId"):
            agent = envelope.get(name)
            if isinstance(agent, str) and agent not in parties:
                warnings.append(f"{name} {show(agent)} is not among the contract's parties")
