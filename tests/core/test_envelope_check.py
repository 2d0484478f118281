"""The OpenClasp trust envelope check (explorer.core.envelope) and the terms hash, without the CLI.

The terms hash is checked against the published vector in tests/vectors/openclasp/; the envelope
tests build messages the way OpenClasp parties send them and change one thing at a time.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from explorer.core.card import OPENCLASP_URI
from explorer.core.envelope import check_envelope, terms_hash
from tests.support.paths import VECTORS

CONTRACT = VECTORS / "openclasp" / "contract.json"
KNOWN_HASH = "zGeGrDYC8Gj0zfubZHgOeaxSs3Ke62uZNincR1Zc3qM"


# --- terms hash ---------------------------------------------------------------------------------


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


# --- trust envelope -----------------------------------------------------------------------------


def _contract() -> dict[str, Any]:
    return json.loads(CONTRACT.read_bytes())


def _message(**overrides: Any) -> dict[str, Any]:
    envelope = {
        "interactionId": "3f1c2a9e-8b7d-4e21-9c55-0a6b7e4d2f10",
        "termsHash": KNOWN_HASH,
        "initiatorAgentId": "agent_a",
        "responderAgentId": "agent_b",
        **overrides,
    }
    return {
        "role": "ROLE_USER",
        "messageId": "m1",
        "parts": [{"text": "hi"}],
        "extensions": [OPENCLASP_URI],
        "metadata": {OPENCLASP_URI: envelope},
    }


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
