"""OpenClasp: terms hash vector, platform attestation, card consistency, references, trust envelope."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from explorer.core.openclasp import (
    OPENCLASP_URI,
    attestation_digest,
    check_envelope,
    classify_reference,
    consistency_problems,
    is_openclasp_extension,
    public_key_document,
    resolution_card,
    sign_attestation,
    terms_hash,
    verify_attestation,
)

CONTRACT = Path(__file__).resolve().parent / "vectors" / "openclasp" / "contract.json"
KNOWN_HASH = "zGeGrDYC8Gj0zfubZHgOeaxSs3Ke62uZNincR1Zc3qM"
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
        "transports": [{"protocol": "A2A/1.0", "protocolBinding": "JSONRPC",
                        "endpoint": "https://agent.example/a2a", "managedBy": "agent"}],
        "slug": "ledger-reconciler",
        "profileUrl": f"{BASE}/a/ledger-reconciler",
        "cardUrl": f"{BASE}/agents/{AGENT}/card.json",
        "a2aAgentCardUrl": f"{BASE}/agents/{AGENT}/a2a-agent-card.json",
        "extensionUri": OPENCLASP_URI,
        "verification": {"status": "verified", "method": "openclasp_oauth_account",
                         "verifiedAt": "2026-08-01T00:00:00.000Z",
                         "verificationKeyUrl": f"{BASE}/.well-known/openclasp-session-key"},
        "publishedAt": "2026-08-01T00:00:00.000Z",
        "updatedAt": "2026-08-02T00:00:00.000Z",
    }


def _a2a_card(public: dict[str, Any]) -> dict[str, Any]:
    """Shaped like the platform's toA2AAgentCard output."""
    return {
        "name": public["name"],
        "description": public["description"],
        "supportedInterfaces": [{"url": t["endpoint"], "protocolBinding": t["protocolBinding"],
                                 "protocolVersion": "1.0", "tenant": ""} for t in public["transports"]],
        "version": public["agentVersion"],
        "documentationUrl": public["cardUrl"],
        "capabilities": {"extensions": [{
            "uri": public["extensionUri"], "description": "OpenClasp trust", "required": False,
            "params": {"agentId": public["agentId"], "openClaspCardUrl": public["cardUrl"]},
        }]},
        "skills": [],
        "signatures": [],
    }


@pytest.fixture(scope="module")
def platform_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture()
def attested(platform_key: Ed25519PrivateKey) -> dict[str, Any]:
    return sign_attestation(_public_card(), platform_key, "key-2026")


# --- terms hash -------------------------------------------------------------------------------


def test_terms_hash_vector() -> None:
    contract = json.loads(CONTRACT.read_bytes())
    assert terms_hash(contract) == KNOWN_HASH
    assert len(KNOWN_HASH) == 43


def test_terms_hash_covers_every_member_including_signatures() -> None:
    contract = json.loads(CONTRACT.read_bytes())
    contract["signatures"] = {"agent_a": {"algorithm": "Ed25519", "keyId": "k", "value": "v"}}
    assert terms_hash(contract) != KNOWN_HASH
    contract = json.loads(CONTRACT.read_bytes())
    contract["retentionDays"] = 31
    assert terms_hash(contract) != KNOWN_HASH


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
    der = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        Encoding.DER, PublicFormat.SubjectPublicKeyInfo
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


# --- trust envelope -----------------------------------------------------------------------------


def _contract() -> dict[str, Any]:
    return json.loads(CONTRACT.read_bytes())


def _message(**overrides: Any) -> dict[str, Any]:
    envelope = {"interactionId": "3f1c2a9e-8b7d-4e21-9c55-0a6b7e4d2f10", "termsHash": KNOWN_HASH,
                "initiatorAgentId": "agent_a", "responderAgentId": "agent_b", **overrides}
    return {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}],
            "extensions": [OPENCLASP_URI], "metadata": {OPENCLASP_URI: envelope}}


def test_valid_envelope_with_matching_contract() -> None:
    result = check_envelope(_message(), _contract())
    assert result.ok and result.hash_match is True and result.computed_hash == KNOWN_HASH
    assert result.problems == () and result.warnings == ()
    assert result.location == "/metadata/https:~1~1openclasp.vercel.app~1extensions~1trust~1v0.1"
    assert result.to_json()["terms_hash_match"] is True


def test_envelope_inside_a_jsonrpc_request() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": _message()}}
    result = check_envelope(request)
    assert result.ok and result.hash_match is None
    assert result.location is not None and result.location.startswith("/params/message/metadata/")
    request["method"] = "tasks/get"
    assert check_envelope(request).warnings


def test_hash_mismatch_is_invalid() -> None:
    contract = _contract()
    contract["retentionDays"] = 365
    result = check_envelope(_message(), contract)
    assert not result.ok and result.hash_match is False
    assert any("does not match" in p for p in result.problems)


def test_contract_interaction_id_must_match() -> None:
    contract = _contract()
    contract["interactionId"] = "00000000-0000-4000-8000-000000000000"
    message = _message(termsHash=terms_hash(contract))
    result = check_envelope(message, contract)
    assert result.hash_match is True and not result.ok
    assert any("interactionId" in p for p in result.problems)


def test_agents_outside_the_contract_parties_are_a_warning() -> None:
    result = check_envelope(_message(responderAgentId="agent_z"), _contract())
    assert result.ok and any("agent_z" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"interactionId": "not-a-uuid"}, "not a UUID"),
        ({"termsHash": KNOWN_HASH + "="}, "43 base64url"),
        ({"termsHash": "sha256:" + "a" * 64}, "43 base64url"),
        ({"initiatorAgentId": 7}, "must be a string"),
        ({"responderAgentId": ""}, "responderAgentId is empty"),
    ],
)
def test_member_problems(overrides: dict[str, Any], expected: str) -> None:
    result = check_envelope(_message(**overrides))
    assert not result.ok and any(expected in p for p in result.problems)


def test_missing_members_and_extra_members() -> None:
    message = _message(note="hello")
    del message["metadata"][OPENCLASP_URI]["termsHash"]
    result = check_envelope(message)
    assert "termsHash is missing" in result.problems
    assert any("note" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (5, "expected an A2A message object"),
        ({"role": "user", "parts": []}, "no metadata"),
        ({"metadata": []}, "not an object"),
        ({"metadata": {"https://openclasp.vercel.app/extensions/trust/v0.2": {}}}, "v0.2"),
        ({"metadata": {OPENCLASP_URI: "x"}}, "trust envelope is a JSON string"),
    ],
)
def test_messages_without_a_usable_envelope(message: Any, expected: str) -> None:
    result = check_envelope(message)
    assert not result.ok and expected in " ".join(result.problems)


def test_custom_uri_and_unlisted_extension() -> None:
    uri = "https://clasp.internal/trust"
    message = _message()
    message["metadata"] = {uri: message["metadata"][OPENCLASP_URI]}
    assert not check_envelope(message).ok
    result = check_envelope(message, uri=uri)
    assert result.ok and any("extensions list" in w for w in result.warnings)


def test_same_agent_on_both_sides_is_a_warning() -> None:
    result = check_envelope(_message(responderAgentId="agent_a"))
    assert result.ok and any("same agent" in w for w in result.warnings)


def test_unhashable_contract_is_reported() -> None:
    result = check_envelope(_message(), {"n": float("nan")})
    assert not result.ok and any("canonical" in p for p in result.problems)


def test_the_envelope_is_returned_as_sent() -> None:
    message = _message()
    original = copy.deepcopy(message)
    result = check_envelope(message, _contract())
    assert message == original
    assert result.envelope == original["metadata"][OPENCLASP_URI]
