"""OpenClasp (explorer.core.openclasp): platform attestation, card consistency, references.

The trust envelope and the terms hash are tested in test_envelope_check.py.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from explorer.core.openclasp import (
    OPENCLASP_URI,
    attestation_digest,
    classify_reference,
    consistency_problems,
    is_openclasp_extension,
    public_key_document,
    resolution_card,
    sign_attestation,
    verify_attestation,
)

BASE = "https://openclasp.example"
AGENT = "agt_7Hq2"


def _public_card() -> dict[str, Any]:
    """Shaped like the platform's PublicAgentCardSchema."""
    return {
        "protocolVersion": "0.1",
        "agentId": AGENT,
        "name": "Ledger Reconciler",
        "description": "Reconciles statements",
        "framework": "custom",
        "agentVersion": "1.2.0",
        "capabilities": ["Reconcile statements"],
        "limitations": ["No tax filings"],
        "assurance": "oauth_authenticated",
        "agentMode": "persistent_runtime",
        "transports": [
            {
                "protocol": "A2A/1.0",
                "protocolBinding": "JSONRPC",
                "endpoint": "https://agent.example/a2a",
                "managedBy": "agent",
            }
        ],
        "slug": "ledger-reconciler",
        "profileUrl": f"{BASE}/a/ledger-reconciler",
        "cardUrl": f"{BASE}/agents/{AGENT}/card.json",
        "a2aAgentCardUrl": f"{BASE}/agents/{AGENT}/a2a-agent-card.json",
        "extensionUri": OPENCLASP_URI,
        "verification": {
            "status": "verified",
            "method": "openclasp_oauth_account",
            "verifiedAt": "2026-08-01T00:00:00.000Z",
            "verificationKeyUrl": f"{BASE}/.well-known/openclasp-session-key",
        },
        "publishedAt": "2026-08-01T00:00:00.000Z",
        "updatedAt": "2026-08-02T00:00:00.000Z",
    }


def _a2a_card(public: dict[str, Any]) -> dict[str, Any]:
    """Shaped like the platform's toA2AAgentCard output."""
    return {
        "name": public["name"],
        "description": public["description"],
        "supportedInterfaces": [
            {
                "url": t["endpoint"],
                "protocolBinding": t["protocolBinding"],
                "protocolVersion": "1.0",
                "tenant": "",
            }
            for t in public["transports"]
        ],
        "version": public["agentVersion"],
        "documentationUrl": public["cardUrl"],
        "capabilities": {
            "extensions": [
                {
                    "uri": public["extensionUri"],
                    "description": "OpenClasp trust",
                    "required": False,
                    "params": {"agentId": public["agentId"], "openClaspCardUrl": public["cardUrl"]},
                }
            ]
        },
        "skills": [],
        "signatures": [],
    }


@pytest.fixture(scope="module")
def platform_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture()
def attested(platform_key: Ed25519PrivateKey) -> dict[str, Any]:
    return sign_attestation(_public_card(), platform_key, "key-2026")


# --- attestation ------------------------------------------------------------------------------


def test_sign_then_verify_attestation(attested: dict[str, Any], platform_key: Ed25519PrivateKey) -> None:
    att = attested["platformAttestation"]
    assert att["algorithm"] == "Ed25519" and att["keyId"] == "key-2026"
    assert att["digest"] == attestation_digest(attested) and len(att["digest"]) == 43
    result = verify_attestation(attested, public_key_document(platform_key, "key-2026"))
    assert (result.ok, result.status, result.key_id) == (True, "verified", "key-2026")
    assert result.digest == att["digest"]


def test_signing_does_not_modify_the_input(platform_key: Ed25519PrivateKey) -> None:
    card = _public_card()
    sign_attestation(card, platform_key, "k")
    assert "platformAttestation" not in card


def test_key_document_is_base64url_der_spki(platform_key: Ed25519PrivateKey) -> None:
    doc = public_key_document(platform_key)
    der = base64.urlsafe_b64decode(doc["publicKey"] + "==")
    assert der == platform_key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    assert "=" not in doc["publicKey"] and doc["algorithm"] == "Ed25519"


def test_a_card_changed_after_attestation_is_invalid(
    attested: dict[str, Any], platform_key: Ed25519PrivateKey
) -> None:
    attested["transports"][0]["endpoint"] = "https://evil.example/a2a"
    result = verify_attestation(attested, public_key_document(platform_key))
    assert (result.ok, result.status) == (False, "invalid")
    assert "changed after it was attested" in result.detail


def test_a_recomputed_digest_without_the_platform_key_is_invalid(
    attested: dict[str, Any], platform_key: Ed25519PrivateKey
) -> None:
    attested["name"] = "Someone Else"
    attested["platformAttestation"]["digest"] = attestation_digest(attested)
    result = verify_attestation(attested, public_key_document(platform_key))
    assert result.status == "invalid" and "does not verify" in result.detail


def test_the_wrong_key_does_not_verify(attested: dict[str, Any]) -> None:
    result = verify_attestation(attested, public_key_document(Ed25519PrivateKey.generate()))
    assert result.status == "invalid" and "does not verify" in result.detail


def test_rotated_keys_are_found_by_key_id(attested: dict[str, Any], platform_key: Ed25519PrivateKey) -> None:
    current = public_key_document(Ed25519PrivateKey.generate(), "key-2027")
    current["previousKeys"] = [public_key_document(platform_key, "key-2026")]
    result = verify_attestation(attested, current)
    assert result.ok and result.key_id == "key-2026"


def test_missing_attestation() -> None:
    result = verify_attestation(_public_card(), {"publicKey": "x"})
    assert (result.ok, result.status) == (False, "missing")


def _ec_key_doc() -> dict[str, Any]:
    der = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    )
    return {"publicKey": base64.urlsafe_b64encode(der).decode().rstrip("=")}


@pytest.mark.parametrize(
    ("key_doc", "expected"),
    [
        (None, "not an object"),
        ([1, 2], "not an object"),
        ("MCowBQYDK2VwAyEA", "not an object"),
        ({}, "no publicKey string"),
        ({"publicKey": 5}, "no publicKey string"),
        ({"publicKey": "!!!"}, "alphabet"),
        ({"publicKey": "AAAA"}, "not a DER SubjectPublicKeyInfo"),
        (_ec_key_doc(), "not an Ed25519 key"),
    ],
)
def test_hostile_key_documents_are_bad_key(attested: dict[str, Any], key_doc: Any, expected: str) -> None:
    result = verify_attestation(attested, key_doc)
    assert (result.ok, result.status) == (False, "bad_key")
    assert expected in result.detail


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda a: a.__setitem__("algorithm", "none"), "algorithm must be Ed25519"),
        (lambda a: a.__setitem__("value", 7), "value must be a non-empty string"),
        (lambda a: a.__setitem__("digest", "sha256:abc"), "43 base64url"),
        (lambda a: a.pop("keyId"), "keyId must be"),
        (lambda a: a.__setitem__("value", "%%%"), "value is not base64url"),
    ],
)
def test_malformed_attestations_are_invalid(
    attested: dict[str, Any], platform_key: Ed25519PrivateKey, change: Any, expected: str
) -> None:
    change(attested["platformAttestation"])
    result = verify_attestation(attested, public_key_document(platform_key))
    assert result.status == "invalid" and expected in result.detail


@pytest.mark.parametrize("card", [None, [], "card", {"platformAttestation": "x"}])
def test_hostile_cards_are_invalid(card: Any, platform_key: Ed25519PrivateKey) -> None:
    result = verify_attestation(card, public_key_document(platform_key))
    assert result.status == "invalid" and not result.ok


# --- the extension entry and consistency --------------------------------------------------------


def test_extension_matched_by_uri_or_by_params() -> None:
    params = {"agentId": AGENT, "openClaspCardUrl": f"{BASE}/agents/{AGENT}/card.json"}
    assert is_openclasp_extension(OPENCLASP_URI, None)
    assert is_openclasp_extension("https://clasp.internal/ext/trust/v0.1", params)
    encoded = {"agentId": "a/b", "openClaspCardUrl": f"{BASE}/agents/a%2Fb/card.json"}
    assert is_openclasp_extension("urn:x", encoded)
    assert not is_openclasp_extension("https://agentsow.com/extensions/a2a-terms/v1", {"proposals": []})
    assert not is_openclasp_extension("urn:x", {**params, "agentId": "other"})
    assert not is_openclasp_extension("urn:x", {"agentId": AGENT, "openClaspCardUrl": 5})
    assert not is_openclasp_extension(None, "params")


def test_consistent_cards_have_no_problems() -> None:
    public = _public_card()
    a2a = _a2a_card(public)
    params = a2a["capabilities"]["extensions"][0]["params"]
    assert consistency_problems(a2a, params, public, a2a_card_url=public["a2aAgentCardUrl"]) == []


def test_the_same_card_at_the_well_known_path_is_consistent() -> None:
    public = _public_card()
    a2a = _a2a_card(public)
    params = a2a["capabilities"]["extensions"][0]["params"]
    well_known = f"{BASE}/.well-known/agent-card.json"
    assert consistency_problems(a2a, params, public, a2a_card_url=well_known) == []


def test_each_inconsistency_is_named() -> None:
    public = _public_card()
    a2a = _a2a_card(public)
    a2a["supportedInterfaces"].append({"url": "https://elsewhere.example/a2a", "protocolBinding": "JSONRPC"})
    params = {"agentId": "agt_other", "openClaspCardUrl": f"{BASE}/agents/agt_other/card.json"}
    problems = consistency_problems(a2a, params, public, a2a_card_url="https://x.example/card.json")
    text = "\n".join(problems)
    assert len(problems) == 4
    assert "params.agentId is agt_other" in text
    assert "openClaspCardUrl" in text
    assert "https://elsewhere.example/a2a is not an endpoint" in text
    assert "a2aAgentCardUrl" not in text and "names https://openclasp.example" in text


def test_card_url_checked_by_path_when_the_public_card_lacks_cardurl() -> None:
    public = _public_card()
    a2a = _a2a_card(public)
    del public["cardUrl"]
    params = {"agentId": AGENT, "openClaspCardUrl": f"{BASE}/agents/{AGENT}/card.json"}
    assert consistency_problems(a2a, params, public) == []
    params["openClaspCardUrl"] = f"{BASE}/agents/someone/card.json"
    assert consistency_problems(a2a, params, public) != []


def test_undeclared_extension_uri_and_missing_interfaces() -> None:
    public = _public_card()
    a2a = _a2a_card(public)
    params = a2a["capabilities"]["extensions"][0]["params"]
    a2a["capabilities"]["extensions"][0]["uri"] = "urn:other"
    del a2a["supportedInterfaces"]
    problems = consistency_problems(a2a, params, public)
    assert any("extensionUri" in p for p in problems)
    assert "the A2A card declares no interface URL" in problems


@pytest.mark.parametrize(
    ("a2a", "params", "public"),
    [
        (None, {}, {}),
        ({}, [], {}),
        ({}, {}, "card"),
        ({"supportedInterfaces": "x"}, {"agentId": 1}, {"agentId": 2}),
    ],
)
def test_hostile_inputs_give_problems_not_exceptions(a2a: Any, params: Any, public: Any) -> None:
    problems = consistency_problems(a2a, params, public)
    assert problems and all(isinstance(p, str) for p in problems)


def test_hostile_values_in_problems_are_printable() -> None:
    public = _public_card()
    a2a = _a2a_card(public)
    params = {"agentId": "\x1b]52;c;x\x07" + "A" * 10_000, "openClaspCardUrl": public["cardUrl"]}
    [problem] = consistency_problems(a2a, params, public)
    assert "\x1b" not in problem and len(problem) < 400


# --- references ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "base", "agent_id", "slug"),
    [
        (f"{BASE}/a/ledger-reconciler", "profile", BASE, None, "ledger-reconciler"),
        (f" {BASE}/a/ledger-reconciler/ ", "profile", BASE, None, "ledger-reconciler"),
        (f"{BASE}/agents/{AGENT}/card.json", "public_card", BASE, AGENT, None),
        (f"{BASE}/agents/{AGENT}/a2a-agent-card.json", "a2a_card", BASE, AGENT, None),
        ("https://h.example/o/agents/a%2Fb/card.json?x=1", "public_card", "https://h.example/o", "a/b", None),
        ("ledger-reconciler", "slug_or_id", None, None, None),
        (AGENT, "slug_or_id", None, None, None),
        ("https://agent.example/.well-known/agent-card.json", "other", None, None, None),
        ("agent.example", "other", None, None, None),
        ("", "other", None, None, None),
        ("ftp://x/a/slug", "other", None, None, None),
    ],
)
def test_classify_reference(
    text: str, kind: str, base: str | None, agent_id: str | None, slug: str | None
) -> None:
    ref = classify_reference(text)
    assert (ref.kind, ref.base_url, ref.agent_id, ref.slug) == (kind, base, agent_id, slug)


def test_reference_urls() -> None:
    ref = classify_reference(f"{BASE}/agents/{AGENT}/a2a-agent-card.json")
    assert ref.card_url == f"{BASE}/agents/{AGENT}/card.json"
    assert ref.resolve_url() == f"{BASE}/directory/resolve?reference=" + (
        "https%3A%2F%2Fopenclasp.example%2Fagents%2Fagt_7Hq2%2Fa2a-agent-card.json"
    )
    bare = classify_reference("ledger-reconciler")
    assert bare.resolve_url() is None and bare.card_url is None
    assert bare.resolve_url(BASE + "/") == f"{BASE}/directory/resolve?reference=ledger-reconciler"
    assert classify_reference(12).kind == "other"


def test_resolution_card() -> None:
    card = _public_card()
    doc = {"reference": "x", "matchedBy": "slug", "verified": True, "card": card, "resolvedAt": "t"}
    assert resolution_card(doc) == (card, None)
    assert resolution_card([])[0] is None
    assert resolution_card({"card": "x"})[1] == "the resolve response has no card object"
