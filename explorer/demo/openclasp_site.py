"""A miniature OpenClasp platform for the `openclasp` demo agents (the OpenClasp extension).

OpenClasp publishes an agent as three documents and two lookups, all unauthenticated: the A2A
card (`/agents/{agentId}/a2a-agent-card.json`, a v1.0 card with `signatures: []` and the trust
extension entry), the OpenClasp public card (`/agents/{agentId}/card.json`, carrying an Ed25519
`platformAttestation` and `verification.verificationKeyUrl`), the platform key
(`/.well-known/openclasp-session-key`), a profile page (`/a/{slug}`) and a resolver
(`/directory/resolve?reference=...`) that accepts the profile URL, either card URL, the slug or
the agent id. The demo serves them from the agent's own origin, which is what a verifier sees
when it follows the references.

The attestation is produced by `explorer.core.openclasp.sign_attestation`, the counterpart of the
check the verifier runs; the forged variant signs with a key other than the one published. Every
lookup here is an exact match in a dict built at start-up: a reference that is not one of the
known strings gets 404, and nothing from the request is interpreted.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from explorer.core.openclasp import KEY_PATH, OPENCLASP_URI, public_key_document, sign_attestation
from explorer.demo.jsonrpc import dumps
from explorer.demo.variants import Variant

PUBLISHED_AT = "2026-08-11T09:00:00Z"


@dataclass(frozen=True)
class OpenClaspUrls:
    base: str
    agent_id: str
    slug: str

    @property
    def public_card(self) -> str:
        return f"{self.base}/agents/{self.agent_id}/card.json"

    @property
    def a2a_card(self) -> str:
        return f"{self.base}/agents/{self.agent_id}/a2a-agent-card.json"

    @property
    def profile(self) -> str:
        return f"{self.base}/a/{self.slug}"

    @property
    def key(self) -> str:
        return self.base + KEY_PATH


def urls(base: str, name: str) -> OpenClaspUrls:
    return OpenClaspUrls(base, f"agt_{name.replace('-', '_')}", f"stonework-{name}")


def extension_entry(base: str, name: str) -> dict[str, Any]:
    u = urls(base, name)
    return {
        "uri": OPENCLASP_URI,
        "required": False,
        "params": {"agentId": u.agent_id, "openClaspCardUrl": u.public_card},
    }


@dataclass(frozen=True)
class Site:
    files: dict[str, bytes]  # GET path -> JSON body
    a2a_card_path: str
    resolutions: dict[str, bytes]  # exact reference -> resolve response body
    profile_path: str
    profile_html: bytes


def public_card(u: OpenClaspUrls, jsonrpc_url: str, a2a_card: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenClasp public card, before attestation."""
    return {
        "protocolVersion": "0.1",
        "agentId": u.agent_id,
        "slug": u.slug,
        "name": a2a_card["name"],
        "description": a2a_card["description"],
        "framework": "custom",
        "agentVersion": a2a_card["version"],
        "capabilities": [s["name"] for s in a2a_card["skills"]],
        "limitations": ["A demo agent on loopback: it answers interviews and performs no work."],
        "assurance": "pseudonymous",
        "agentMode": "persistent_runtime",
        "transports": [
            {
                "protocol": "A2A/1.0",
                "protocolBinding": "JSONRPC",
                "endpoint": jsonrpc_url,
                "managedBy": "agent",
            }
        ],
        "profileUrl": u.profile,
        "cardUrl": u.public_card,
        "a2aAgentCardUrl": u.a2a_card,
        "extensionUri": OPENCLASP_URI,
        "verification": {
            "status": "verified",
            "method": "oauth_account",
            "verifiedAt": PUBLISHED_AT,
            "verificationKeyUrl": u.key,
        },
        "publishedAt": PUBLISHED_AT,
        "updatedAt": PUBLISHED_AT,
    }


def _profile(u: OpenClaspUrls, name: str) -> bytes:
    shown = html.escape(name)
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{shown} on OpenClasp (demo)</title>"
        f'<link rel="alternate" type="application/json" href="{html.escape(u.public_card)}">'
        f'<link rel="alternate" type="application/json" href="{html.escape(u.a2a_card)}">'
        f"</head><body><h1>{shown}</h1><p>Agent id {html.escape(u.agent_id)}.</p></body></html>"
    ).encode()


def build(
    variant: Variant,
    base: str,
    jsonrpc_url: str,
    a2a_card: Mapping[str, Any],
    platform: Ed25519PrivateKey,
    stranger: Ed25519PrivateKey,
) -> Site:
    """Everything the platform serves for one published agent."""
    u = urls(base, variant.name)
    key_id = f"openclasp-demo-{variant.name}"
    signer = stranger if variant.openclasp == "forged" else platform
    card = sign_attestation(public_card(u, jsonrpc_url, a2a_card), signer, key_id)
    a2a_path = u.a2a_card.removeprefix(base)
    files = {
        u.public_card.removeprefix(base): dumps(card),
        KEY_PATH: dumps(public_key_document(platform, key_id)),
    }
    references = {
        u.agent_id: "agent_id",
        u.slug: "slug",
        u.profile: "profile_url",
        u.public_card: "card_url",
        u.a2a_card: "a2a_card_url",
    }
    resolutions = {
        reference: dumps(
            {
                "reference": reference,
                "matchedBy": matched_by,
                "verified": True,
                "agentId": u.agent_id,
                "slug": u.slug,
                "profileUrl": u.profile,
                "cardUrl": u.public_card,
                "a2aCardUrl": u.a2a_card,
                "card": card,
                "resolvedAt": PUBLISHED_AT,
            }
        )
        for reference, matched_by in references.items()
    }
    return Site(files, a2a_path, resolutions, u.profile.removeprefix(base), _profile(u, card["name"]))
