"""Agent SoW proposals: the signed vector verifies, and every way of breaking it is caught and named."""

from __future__ import annotations

import base64
import copy
import json
import re
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from explorer.core.canonical import digest
from explorer.core.pointer import members
from explorer.core.sow import (
    SowError,
    check_proposal,
    clauses,
    decode_nkey,
    encode_nkey,
    is_valid_digest,
    nkey_seed_keypair,
    proposal_digest,
    public_nkey,
    sign_proposal,
    signing_bytes,
)
from tests.support.paths import VECTORS

VECTOR = VECTORS / "sow" / "reconcile-statement.sow.json"
KNOWN_DIGEST = "sha256:078355014bf9a87852e4ca580395ffe123920ae243700c7e8dc5a2853f85d54d"
VECTOR_KEY = "UBMBH4BK6EIHQFVMHLSABFSQXB3JXUFZOXVZQTIERO33AD4HHAI3D7QP"
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
URL = "https://stonework.example/terms/reconcile-statement.sow.json"


@pytest.fixture(scope="module")
def raw() -> bytes:
    return VECTOR.read_bytes()


@pytest.fixture()
def doc(raw: bytes) -> dict[str, Any]:
    return json.loads(raw)


def _bytes(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def _codes(check: Any) -> list[str]:
    return [f.code for f in check.findings]


def _mutated(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    return "x"  # null


def _leaves(doc: Any) -> list[str]:
    return [p for p, v in members(doc) if not isinstance(v, dict | list)]


def _set(doc: Any, pointer: str, value: Any) -> None:
    *parents, last = pointer[1:].split("/")
    node = doc
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node[token]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def _fresh_signed(doc: dict[str, Any], key: Ed25519PrivateKey | None = None) -> tuple[dict[str, Any], str]:
    key = key or Ed25519PrivateKey.generate()
    doc = copy.deepcopy(doc)
    doc["parties"]["provider"]["agent"] = public_nkey(key)
    signed = sign_proposal(doc, key, signed_at="2026-09-01T00:00:00Z")
    return signed, public_nkey(key)


# --- the vector -----------------------------------------------------------------------------


def test_vector_digest_is_the_known_answer(doc: dict[str, Any]) -> None:
    assert proposal_digest(doc) == KNOWN_DIGEST


def test_vector_verifies_as_a_standing_proposal(raw: bytes) -> None:
    check = check_proposal(
        raw,
        url=URL,
        committed_digest=KNOWN_DIGEST,
        sow="sow_a7j1nccrnc0rb2kj",
        offering="reconcile-statement",
    )
    assert check.status == "verified"
    assert check.computed_digest == KNOWN_DIGEST
    assert check.signer == VECTOR_KEY
    assert check.standing is True
    assert check.findings == ()
    assert [step for step, ok, _ in check.steps] == ["fetched", "parsed", "digest", "signature", "standing"]
    assert all(ok for _, ok, _ in check.steps)


def test_vector_result_has_the_proposal_result_shape(raw: bytes) -> None:
    check = check_proposal(raw, url=URL, committed_digest=KNOWN_DIGEST, offering="reconcile-statement")
    out = check.to_json()
    assert set(out) == {
        "url",
        "digest",
        "sow",
        "offering",
        "status",
        "computed_digest",
        "standing",
        "signer",
        "steps",
        "clauses",
    }
    assert out["offering"] == "reconcile-statement" and out["sow"] is None
    assert all(set(s) == {"step", "ok", "detail"} for s in out["steps"])
    json.dumps(out)  # JSON-safe


def test_vector_clauses_and_grades_exactly_as_written(doc: dict[str, Any]) -> None:
    assert clauses(doc) == [
        ("/parties", "evidence"),
        ("/scope", "enforced"),
        ("/price", "enforced"),
        ("/volume", "enforced"),
        ("/change_control", "enforced"),
        ("/termination", "enforced"),
        ("/disputes", "evidence"),
        ("/confidentiality/transport", "enforced"),
        ("/confidentiality/retention", "enforced"),
        ("/confidentiality/promises", "recorded"),
    ]


def test_unknown_grades_are_reported_literally_never_upgraded(doc: dict[str, Any]) -> None:
    doc["price"]["grade"] = "Enforced"
    doc["volume"]["grade"] = "guaranteed"
    doc["disputes"]["grade"] = 5
    doc["scope"]["examples"]["grade"] = None
    doc["signatures"][0]["grade"] = "enforced"  # signatures are not clauses
    found = dict(clauses(doc))
    assert found["/price"] == "Enforced"
    assert found["/volume"] == "guaranteed"
    assert found["/disputes"] == 5
    assert found["/scope/examples"] is None
    assert "/signatures/0" not in found
    out = check_proposal(_bytes(doc), url=URL, committed_digest=proposal_digest(doc)).to_json()
    assert {"member": "/volume", "grade": "guaranteed"} in out["clauses"]


# --- negative variants derived from the vector ----------------------------------------------


def test_changing_any_member_changes_the_digest(doc: dict[str, Any]) -> None:
    leaves = _leaves(doc)
    assert len(leaves) > 30
    for pointer in leaves:
        changed = copy.deepcopy(doc)
        _set(changed, pointer, _mutated(dict(members(doc))[pointer]))
        check = check_proposal(_bytes(changed), url=URL, committed_digest=KNOWN_DIGEST)
        assert check.computed_digest != KNOWN_DIGEST, pointer
        assert check.status == "digest_mismatch", pointer
        assert "proposal_digest_mismatch" in _codes(check), pointer


def test_changing_any_member_but_signatures_breaks_the_signature(doc: dict[str, Any]) -> None:
    values = dict(members(doc))
    for pointer in _leaves(doc):
        if pointer.startswith("/signatures/"):
            continue
        changed = copy.deepcopy(doc)
        _set(changed, pointer, _mutated(values[pointer]))
        # commit to the changed bytes, so only the signature can object
        check = check_proposal(_bytes(changed), url=URL, committed_digest=proposal_digest(changed))
        assert check.status == "signature_invalid", pointer
        assert "proposal_signature_invalid" in _codes(check), pointer


def test_signature_metadata_is_outside_the_signed_bytes(doc: dict[str, Any]) -> None:
    doc["signatures"][0]["signed_at"] = "2030-01-01T00:00:00Z"
    check = check_proposal(_bytes(doc), url=URL, committed_digest=KNOWN_DIGEST)
    assert check.status == "digest_mismatch"  # the digest covers signatures ...
    assert "proposal_signature_invalid" not in _codes(check)  # ... the signature does not


def test_signature_decoding_is_tolerant_of_padding_and_alphabet(doc: dict[str, Any]) -> None:
    sig = base64.urlsafe_b64decode(doc["signatures"][0]["sig"] + "==")
    doc["signatures"][0]["sig"] = base64.b64encode(sig).decode()  # padded, +/ alphabet
    check = check_proposal(_bytes(doc), url=URL, committed_digest=proposal_digest(doc))
    assert check.status == "verified"


@pytest.mark.parametrize(
    ("sig", "expected"),
    [("AAAA", "64 bytes"), ("not base64!", "alphabet"), (12, "expected a base64url string")],
)
def test_malformed_sig_is_a_named_signature_failure(doc: dict[str, Any], sig: Any, expected: str) -> None:
    doc["signatures"][0]["sig"] = sig
    check = check_proposal(_bytes(doc), url=URL, committed_digest=proposal_digest(doc))
    assert check.status == "signature_invalid"
    [bad] = [f for f in check.findings if f.code == "proposal_signature_invalid"]
    assert expected in bad.detail and bad.member == "/signatures/0"


def test_dropping_signatures_makes_it_unsigned(doc: dict[str, Any]) -> None:
    del doc["signatures"]
    check = check_proposal(_bytes(doc), url=URL, committed_digest=proposal_digest(doc))
    assert check.status == "unsigned"
    assert _codes(check) == ["proposal_unsigned"]
    assert check.signer is None


def test_empty_signatures_or_no_provider_role_is_unsigned(doc: dict[str, Any]) -> None:
    doc["signatures"] = []
    assert check_proposal(_bytes(doc), url=URL, committed_digest=proposal_digest(doc)).status == "unsigned"
    doc["signatures"] = [{"role": "client", "key": VECTOR_KEY, "signed_at": "x", "sig": "AA"}]
    check = check_proposal(_bytes(doc), url=URL, committed_digest=proposal_digest(doc))
    assert check.status == "unsigned"
    assert "proposal_not_standing" in _codes(check)


def test_signatures_that_are_not_a_list_are_invalid(doc: dict[str, Any]) -> None:
    doc["signatures"] = {"provider": "x"}
    check = check_proposal(_bytes(doc), url=URL, committed_digest=proposal_digest(doc))
    assert check.status == "signature_invalid"
    assert "must be a list" in check.findings[0].detail


def test_a_bad_nkey_in_the_signature_is_named(doc: dict[str, Any]) -> None:
    key = doc["signatures"][0]["key"]
    doc["signatures"][0]["key"] = key[:-1] + ("A" if key[-1] != "A" else "B")
    check = check_proposal(_bytes(doc), url=URL, committed_digest=proposal_digest(doc))
    assert check.status == "signature_invalid"
    assert "checksum" in check.findings[0].detail


def test_a_valid_signature_by_someone_other_than_the_provider_fails(doc: dict[str, Any]) -> None:
    intruder = Ed25519PrivateKey.generate()
    signed = sign_proposal(doc, intruder, signed_at="2026-09-01T00:00:00Z")  # provider.agent unchanged
    check = check_proposal(_bytes(signed), url=URL, committed_digest=proposal_digest(signed))
    assert check.status == "signature_invalid"
    assert "parties.provider.agent" in check.findings[0].detail


@pytest.mark.parametrize(
    "bad",
    [
        KNOWN_DIGEST.upper().replace("SHA256", "sha256"),
        "sha512:" + KNOWN_DIGEST[7:],
        KNOWN_DIGEST[7:],
        KNOWN_DIGEST + "\n",
        KNOWN_DIGEST[:-1],
        "SHA256:" + KNOWN_DIGEST[7:],
        None,
        5,
    ],
)
def test_malformed_committed_digests_are_invalid(raw: bytes, bad: Any) -> None:
    assert not is_valid_digest(bad)
    check = check_proposal(raw, url=URL, committed_digest=bad)
    assert check.status == "invalid"
    assert "terms_entry_invalid" in _codes(check)
    assert check.computed_digest == KNOWN_DIGEST  # still shown, for the user to compare


def test_valid_digest_format() -> None:
    assert is_valid_digest(KNOWN_DIGEST)
    assert is_valid_digest(digest({"a": 1}))


# --- standing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "member"),
    [
        (lambda d: d["parties"].__setitem__("client", {"agent": "UCLIENT"}), "/parties/client"),
        (lambda d: d.__setitem__("starts_at", "2026-09-01T00:00:00Z"), "/starts_at"),
        (lambda d: d["parties"].__setitem__("offered_to", "buyer@example.org"), "/parties/offered_to"),
    ],
)
def test_not_standing_is_a_warning_on_an_otherwise_verified_proposal(
    doc: dict[str, Any], change: Any, member: str
) -> None:
    change(doc)
    signed, _ = _fresh_signed(doc)
    check = check_proposal(_bytes(signed), url=URL, committed_digest=proposal_digest(signed))
    assert check.status == "verified"
    assert check.standing is False
    [warning] = check.findings
    assert (warning.code, warning.severity, warning.member) == ("proposal_not_standing", "warning", member)
    assert URL in warning.detail


def test_a_second_signature_means_not_standing(doc: dict[str, Any]) -> None:
    signed, _ = _fresh_signed(doc)
    signed["signatures"].append({"role": "client", "key": VECTOR_KEY, "signed_at": "x", "sig": "AA"})
    check = check_proposal(_bytes(signed), url=URL, committed_digest=proposal_digest(signed))
    assert check.status == "verified"
    assert {f.member for f in check.findings} == {"/signatures", "/signatures/1/role"}


# --- fetch and parse failures -----------------------------------------------------------------


def test_fetch_failure_is_unreachable() -> None:
    check = check_proposal(None, url=URL, committed_digest=KNOWN_DIGEST, fetch_error="timeout")
    assert check.status == "unreachable"
    assert _codes(check) == ["proposal_unreachable"]
    assert check.steps == (("fetched", False, "timeout"),)
    assert check.to_json()["computed_digest"] is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"not json", "not usable JSON"),
        (b'{"a":1,"a":2}', "duplicate"),
        (b"[1,2]", "array"),
        (b"\xff\xfe", "JSON"),
        (b'{"n": NaN}', "JSON"),
    ],
)
def test_unparsable_bodies_are_invalid_with_a_reason(body: bytes, expected: str) -> None:
    check = check_proposal(body, url=URL, committed_digest=KNOWN_DIGEST)
    assert check.status == "invalid"
    assert _codes(check) == ["proposal_unreachable"]
    assert expected in check.findings[0].detail


# --- signing ----------------------------------------------------------------------------------


def test_sign_then_verify_round_trip_with_a_fresh_key(doc: dict[str, Any]) -> None:
    original = copy.deepcopy(doc)
    signed, nkey = _fresh_signed(doc)
    assert doc == original  # the input is not modified
    [entry] = signed["signatures"]
    assert entry["role"] == "provider" and entry["key"] == nkey and "=" not in entry["sig"]
    assert entry["signed_at"] == "2026-09-01T00:00:00Z"
    check = check_proposal(_bytes(signed), url=URL, committed_digest=proposal_digest(signed))
    assert check.status == "verified" and check.signer == nkey and check.standing is True


def test_signing_bytes_exclude_signatures_and_carry_the_domain_prefix(doc: dict[str, Any]) -> None:
    data = signing_bytes(doc)
    assert data.startswith(b"agent-sow-v1\n{")
    assert b"signatures" not in data
    with pytest.raises(SowError):
        signing_bytes([1, 2])  # type: ignore[arg-type]


def test_seed_keypair_is_deterministic() -> None:
    key, nkey = nkey_seed_keypair(bytes(range(32)))
    again, nkey2 = nkey_seed_keypair(bytes(range(32)))
    assert nkey == nkey2 == public_nkey(again) and nkey.startswith("U")
    assert key.sign(b"m") == again.sign(b"m")
    with pytest.raises(SowError, match="32 bytes"):
        nkey_seed_keypair(b"short")


# --- nkeys --------------------------------------------------------------------------------------


def test_vector_nkey_round_trips() -> None:
    raw = decode_nkey(VECTOR_KEY)
    assert len(raw) == 32
    assert encode_nkey(raw) == VECTOR_KEY


def _with_prefix(prefix_byte: int, raw: bytes) -> str:
    from explorer.core.sow import _crc16_xmodem

    body = bytes([prefix_byte]) + raw
    return base64.b32encode(body + _crc16_xmodem(body).to_bytes(2, "little")).decode()


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (VECTOR_KEY[:-1] + ("Q" if VECTOR_KEY[-1] != "Q" else "R"), "checksum"),
        (_with_prefix(18 << 3, bytes(32)), "wrong prefix: S (seed)"),
        (_with_prefix(13 << 3, bytes(32)), "wrong prefix: N (server)"),
        (VECTOR_KEY[:-2], "56 characters"),
        (VECTOR_KEY.lower(), "alphabet"),
        (VECTOR_KEY[:-1] + "1", "alphabet"),
        (42, "must be a string"),
        (None, "must be a string"),
    ],
)
def test_bad_nkeys_give_precise_errors(key: Any, message: str) -> None:
    with pytest.raises(SowError, match=re.escape(message)):
        decode_nkey(key)


def test_encode_nkey_refuses_wrong_sizes() -> None:
    with pytest.raises(SowError):
        encode_nkey(bytes(31))


@given(st.binary(min_size=32, max_size=32))
def test_nkey_round_trip_for_any_key(raw: bytes) -> None:
    key = encode_nkey(raw)
    assert len(key) == 56 and key.startswith("U")
    assert decode_nkey(key) == raw


@given(st.binary(min_size=32, max_size=32), st.integers(0, 55), st.sampled_from(BASE32))
def test_any_single_character_typo_is_caught(raw: bytes, index: int, char: str) -> None:
    key = encode_nkey(raw)
    typo = key[:index] + char + key[index + 1 :]
    if typo == key:
        return
    with pytest.raises(SowError):
        decode_nkey(typo)
